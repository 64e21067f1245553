/* trace_read.h - loads a Perfetto trace and resolves it the way
 * trace_processor's tokenizer does.
 * SPDX-License-Identifier: Apache-2.0
 *
 * This is ptw's in-house stand-in for trace_processor (which is not
 * available here). ptw_trace_load_file()/ptw_trace_load_mem() walk the
 * Trace.packet records of a .pftrace in file order, inflate
 * compressed_packets batches, decode every TracePacket with protobuf-c
 * (proto/ptw_trace.proto) and keep per-sequence state exactly as
 * trace_processor does (perfetto-wire.md sections 1-4):
 *
 *   - CLEARED / NEEDS incremental-state validity (NEEDS packets before the
 *     first CLEARED, or after previous_packet_dropped, are dropped);
 *   - interning per (sequence, table, generation), first definition wins;
 *   - TracePacketDefaults (clock id, default track uuid);
 *   - ClockSnapshots, sequence-scoped and incremental clocks (deltas in file
 *     order, unit_multiplier_ns), absolute timestamps with an explicit
 *     timestamp_clock_id, conversion to trace time;
 *   - TrackDescriptors (the track table) and counter values converted at
 *     tokenization (descriptor must precede the first sample in the file).
 *
 * Every TrackEvent that trace_processor would keep becomes one plain
 * struct ptw_trace_event with absolute trace-time nanoseconds and every
 * string resolved. Anything trace_processor would drop or count is counted
 * in struct ptw_trace_stats (same names as TP's stats table) and recorded
 * as a diagnostic with its byte offset (ptw_trace_diags), which the checker
 * (trace_check.h) and the model (tp_model.h) use.
 *
 * A whole file compressed with gzip (gzip trace.pftrace) is inflated first,
 * as trace_processor does; offsets then refer to the inflated bytes.
 *
 * Byte offsets: for a packet in the file body, the offset of its record
 * (the 0x0A tag byte). For a packet inside a compressed batch, the offset
 * of the outer compressed record, with 'inner_offset' the record's offset
 * inside the inflated batch.
 *
 * Errors: loading fails (NULL + *err) only on I/O or memory errors and on
 * input that is not a proto trace at all (empty, or first byte not 0x0A).
 * Everything trace_processor treats as fatal for the whole import (wire
 * types 3/4/6/7 at top level, a complete record that does not decode, a bad
 * compressed batch, NEEDS with sequence id 0, ...) stops the walk at that
 * point and is reported by ptw_trace_fatal(); what was read before it stays
 * available. A truncated final record is not an error (trace_processor
 * drops it silently): ptw_trace_truncated() reports it.
 *
 * A loaded trace is immutable; several threads may read it concurrently.
 * All strings and arrays are owned by the trace and live until
 * ptw_trace_free(). */
#ifndef PTW_TRACE_READ_H
#define PTW_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "ptw/error.h"

/* ---- resolved events ------------------------------------------------ */

/* Values of TrackEvent.Type (perfetto track_event.proto). */
enum ptw_trace_event_type {
	/* No type: a v1 flow event given by legacy_event.phase 's', 't' or
	 * 'f' (ptw_trace_event.legacy_phase); the only typeless events kept */
	PTW_TRACE_LEGACY_FLOW = 0,
	PTW_TRACE_SLICE_BEGIN = 1,
	PTW_TRACE_SLICE_END = 2,
	PTW_TRACE_INSTANT = 3,
	PTW_TRACE_COUNTER = 4,
	PTW_TRACE_STATE = 5,
	/* Not a TrackEvent type: a typeless event whose legacy_event has
	 * phase 'X' and duration_us, a complete slice (ptw_trace_event.dur;
	 * trace_processor's ParseThreadCompleteEvent) */
	PTW_TRACE_COMPLETE = 16,
};

enum ptw_trace_arg_type {
	PTW_TRACE_ARG_BOOL = 1, /* v.b */
	PTW_TRACE_ARG_INT,      /* v.i */
	PTW_TRACE_ARG_UINT,     /* v.u */
	PTW_TRACE_ARG_DOUBLE,   /* v.d */
	PTW_TRACE_ARG_STRING,   /* v.s (also interned string values) */
	PTW_TRACE_ARG_POINTER,  /* v.u */
	PTW_TRACE_ARG_JSON,     /* v.s, legacy_json_value */
	PTW_TRACE_ARG_NESTED,   /* no value this reader decodes (none,
				 * proto_value, nested_value): no row */
	PTW_TRACE_ARG_DICT,     /* v.nested: dict_entries, named */
	PTW_TRACE_ARG_ARRAY,    /* v.nested: array_values (names NULL) */
	PTW_TRACE_ARG_BAD,      /* a nested annotation whose name or
				 * interned string value does not resolve:
				 * trace_processor stops parsing its
				 * top-level annotation there */
};

/* One debug annotation with its name resolved. Top-level annotations
 * whose name (or interned string value) does not resolve are dropped, as
 * trace_processor does (stat track_event_parser_errors). Dict entries and
 * array values are decoded too (v.nested), up to PTW_TRACE_ARG_MAX_DEPTH
 * levels (deeper ones are PTW_TRACE_ARG_BAD). */
struct ptw_trace_arg {
	const char *name; /* as written: not yet "debug."-prefixed; NULL
			   * for array values */
	enum ptw_trace_arg_type type;
	union {
		int b;
		int64_t i;
		uint64_t u;
		double d;
		const char *s;
		struct {
			const struct ptw_trace_arg *items;
			uint32_t n;
		} nested;
	} v;
};

#define PTW_TRACE_ARG_MAX_DEPTH 64

/* ---- args table ---------------------------------------------------------
 * The rows trace_processor's args table gets from debug annotations
 * (track_event_event_importer.h ParseTrackEventArgs: a "debug" dictionary;
 * proto_to_args_parser.cc ParseDebugAnnotation): key "debug.<name>", dict
 * entries ".<entry>", array values "[i]" (flat_key leaves out the
 * "[i]"), '.', '[' and ']' in every name replaced by '_'. An array's index
 * is kept per key for the whole table and advances only past a value that
 * added a row (or is a dict with entries). A key seen again replaces the
 * earlier row's value in place (ArgsInserter::AddArg, kAddOrUpdate). A
 * legacy_json_value is one PTW_TRACE_ARG_JSON row (trace_processor would
 * parse the JSON into rows; this reader has no JSON parser). */
struct ptw_trace_arg_row {
	char *flat_key;
	char *key;
	enum ptw_trace_arg_type type; /* BOOL .. JSON */
	union {
		int b;
		int64_t i;
		uint64_t u;
		double d;
		const char *s; /* owned by the annotations' owner */
	} v;
};

struct ptw_trace_args_table {
	struct ptw_trace_arg_row *rows;
	size_t n, cap;
	struct ptw_trace_args_index *idx; /* next index per array key */
	size_t n_idx, idx_cap;
};

/* Zeroed is empty; free with ptw_trace_args_free(). */
/* Adds one event's annotations. For a slice, add its BEGIN's, then its
 * END's: trace_processor adds both through the slice's one inserter
 * (slice_tracker.cc GetArgsInserter), so indexes go on and keys merge.
 * Returns 0 or PTW_ERR_NOMEM (the table then holds part of the rows). */
int ptw_trace_args_add(struct ptw_trace_args_table *t,
		       const struct ptw_trace_arg *args, uint32_t n);
/* The row with this key, or NULL. */
const struct ptw_trace_arg_row *
ptw_trace_args_find(const struct ptw_trace_args_table *t, const char *key);
void ptw_trace_args_free(struct ptw_trace_args_table *t);

enum ptw_trace_counter_kind {
	PTW_TRACE_COUNTER_NONE = 0,
	PTW_TRACE_COUNTER_INT,    /* counter_value */
	PTW_TRACE_COUNTER_DOUBLE, /* double_counter_value */
};

/* A TrackEvent that survived tokenization. */
/* An event's callstack: its frames' function names, outermost first
 * ("" for an unnamed frame). */
struct ptw_trace_stack {
	uint32_t n;
	const char *frames[];
};

struct ptw_trace_event {
	uint64_t offset;       /* byte offset of the record (see top) */
	uint64_t inner_offset; /* offset inside the inflated batch, or 0 */
	uint32_t batch;        /* 1-based compressed batch number; 0: none */
	uint32_t seq_id;       /* trusted_packet_sequence_id */
	uint64_t packet_index; /* 0-based index of the packet, file order,
				* counting packets inside batches */
	int64_t ts;            /* absolute trace time, ns */
	enum ptw_trace_event_type type;
	uint64_t track_uuid;   /* explicit, else the sequence default, else
				* the sequence's thread track, else 0 */
	int track_explicit;    /* 1 if the event carried track_uuid */
	const char *name;      /* NULL: none or unresolved */
	const char *category;  /* categories joined with ","; NULL: none */
	const uint64_t *flow_ids;
	uint32_t n_flow_ids;
	uint32_t n_terminating_flow_ids;
	const uint64_t *terminating_flow_ids;
	const struct ptw_trace_arg *args;
	uint32_t n_args;
	/* TrackEvent.callstack_iid or inline callstack; NULL: none (or an
	 * iid not interned) */
	const struct ptw_trace_stack *stack;
	/* legacy_event.phase (0: none) and, for an instant phase ('i'/'I'),
	 * its instant_event_scope: 'g' global, 'p' process, 0 otherwise
	 * (trace_processor then puts the instant on its legacy global /
	 * process instant track, track_event_event_importer.h) */
	char legacy_phase;
	char legacy_scope;
	/* PTW_TRACE_COMPLETE: legacy_event.duration_us in ns (as
	 * trace_processor computes it, duration_us * 1000) */
	int64_t dur;
	enum ptw_trace_counter_kind counter_kind;
	int64_t counter_int;   /* raw value as written (counter_value) */
	double counter_double; /* raw value (double_counter_value) */
	/* For TYPE_COUNTER: the value trace_processor stores, after the
	 * descriptor's unit_multiplier and is_incremental were applied. */
	double counter_value;
	/* extra_counter_values / extra_double_counter_values, resolved to
	 * their tracks (from the event or the sequence defaults); values
	 * after unit_multiplier/is_incremental, as doubles. */
	const uint64_t *extra_counter_tracks;
	const double *extra_counter_values;
	uint32_t n_extra_counters;
	/* TrackEvent.legacy_event, the fields trace_processor's flow import
	 * reads: a v1 flow event (legacy_phase, its unscoped_id, and for 'f'
	 * bind_to_enclosing) or a v2 flow on a slice (bind_id with
	 * flow_direction: 1 in, 2 out, 3 in and out; 0 none); legacy_phase
	 * and legacy_scope are above. */
	int has_legacy_id;     /* unscoped_id present (global/local ids are
				* not flow ids for trace_processor) */
	uint64_t legacy_id;
	int bind_to_enclosing;
	int has_bind_id;
	uint64_t bind_id;
	int flow_direction;
};

/* ---- tracks ---------------------------------------------------------- */

/* Branch priority as in trace_processor: thread > process > counter >
 * state > plain (track_event_tokenizer.cc). */
enum ptw_trace_track_kind {
	PTW_TRACE_TRACK_PLAIN = 0,
	PTW_TRACE_TRACK_PROCESS,
	PTW_TRACE_TRACK_THREAD,
	PTW_TRACE_TRACK_COUNTER,
	PTW_TRACE_TRACK_STATE,
};

/* One reserved TrackDescriptor (the first accepted one for its uuid;
 * identical re-descriptions are merged, conflicting ones are ignored with
 * track_descriptor_conflicting_reservation). */
struct ptw_trace_track {
	uint64_t uuid;
	uint64_t parent_uuid;  /* 0 if none (ignored for process/thread) */
	int has_parent;
	enum ptw_trace_track_kind kind;
	const char *name;      /* first non-NULL name; thread/process: the
				* thread_name/process_name if set */
	int32_t pid;           /* process and thread tracks */
	int64_t tid;           /* thread tracks */
	const char *unit;      /* counter: "ns", "count", "bytes", unit_name,
				* or NULL */
	int64_t unit_multiplier; /* counter; 0 if unset */
	int is_incremental;      /* counter */
	int has_rank;
	int32_t rank;          /* sibling_order_rank */
	int child_ordering;    /* ChildTracksOrdering value */
	int merge_behavior;    /* SiblingMergeBehavior value (2: NONE, the
				* track is never merged with its siblings) */
	uint64_t offset;       /* first accepted descriptor */
	uint32_t seq_id;       /* sequence of that descriptor (0: none) */
	uint32_t n_descriptors;/* descriptors seen for this uuid */
	/* 1: no descriptor, the track trace_processor makes for legacy async
	 * events (legacy_event phase b/e/n with unscoped_id, global_id or
	 * local_id), one per id (and category, and process for local_id),
	 * named after the id's first event, under the process for local_id
	 * (the model then merges same-name siblings as trace_processor's
	 * track compressor does); offset: that first event */
	int legacy_async;
	const char *scope;     /* legacy_async: the id scope, the events'
				* category (NULL: none), part of the merge
				* set with parent and name */
};

/* ---- statistics ------------------------------------------------------ */

#define PTW_TRACE_MAX_BUFFERS 8

/* Counts of the whole file. The second block carries trace_processor's
 * stat names (perfetto-wire.md 3.13): a trace ptw writes keeps them all 0. */
struct ptw_trace_stats {
	uint64_t bytes;             /* input size (inflated, for gzip) */
	uint64_t gzip_bytes;        /* whole-file gzip: compressed size; 0 if
				     * the file was not gzip */
	uint64_t records;           /* top-level Trace.packet records */
	uint64_t packets;           /* TracePackets, inner ones included */
	uint64_t batches;           /* compressed_packets and
				     * zstd_compressed_packets records */
	uint64_t zstd_batches;      /* of which zstd_compressed_packets */
	uint64_t batch_packets;     /* packets inside batches */
	uint64_t inflated_bytes;    /* sum of inflated batch sizes */
	uint64_t skipped_fields;    /* top-level non-packet fields skipped */
	uint64_t empty_records;     /* zero-length records skipped */
	uint64_t checkpoints;       /* packets with CLEARED (incl. deprecated) */
	uint64_t sequences;         /* distinct non-zero sequence ids */
	uint64_t track_events;      /* TrackEvents in the file */
	uint64_t events;            /* TrackEvents kept (ptw_trace_events) */
	uint64_t track_descriptors; /* TrackDescriptor packets */
	uint64_t clock_snapshots;   /* ClockSnapshot packets (valid or not) */
	uint64_t interned_entries;  /* interned entries accepted */
	uint64_t defaults;          /* trace_packet_defaults accepted */
	uint64_t absolute_timestamps; /* packets with explicit non-incremental
				       * timestamp_clock_id */

	uint64_t packet_skipped_seq_needs_incremental_state_invalid;
	uint64_t interned_data_skipped_incremental_state_invalid;
	uint64_t interned_data_tokenizer_errors;
	uint64_t interned_data_missing_sequence_id;
	uint64_t trace_packet_defaults_missing_sequence_id;
	uint64_t incremental_state_cleared_missing_sequence_id;
	uint64_t previous_packet_dropped_missing_sequence_id;
	uint64_t previous_packet_dropped; /* packets with a loss flag */
	uint64_t track_event_missing_sequence_id;
	uint64_t track_event_missing_timestamp;
	uint64_t track_event_invalid_timestamp;
	uint64_t track_event_parser_errors;
	uint64_t track_descriptor_missing_uuid;
	uint64_t track_descriptor_thread_missing_pid_tid;
	uint64_t track_descriptor_process_missing_pid;
	uint64_t track_descriptor_conflicting_reservation;
	uint64_t track_descriptor_invalid_child_ordering;
	uint64_t track_descriptor_default_track_with_parent;
	uint64_t track_event_counter_missing_track_uuid;
	uint64_t track_event_counter_missing_value;
	uint64_t track_event_counter_invalid_track_uuid;
	uint64_t invalid_clock_snapshots;
	uint64_t clock_sync_failure_unknown_source_clock;
	uint64_t clock_sync_failure_no_path;
	uint64_t trace_sorter_negative_timestamp_dropped;
	uint64_t packed_repeated_fields; /* ptw: packed encoding of a repeated
					  * field TP reads unpacked */

	/* TraceStats packets, read as ProtoTraceReader::ParseTraceStats
	 * reads them (each packet sets the values again: the last wins).
	 * Index = buffer number (buffer_stats order, WriterStats.buffer);
	 * buffers past PTW_TRACE_MAX_BUFFERS are not modelled. */
	uint64_t trace_stats_packets;
	uint32_t n_buffers;         /* buffer_stats entries of the last one */
	struct ptw_trace_buf_stats {
		uint64_t buffer_size;
		uint64_t bytes_written;
		uint64_t bytes_overwritten;
		uint64_t chunks_written;
		uint64_t chunks_overwritten;
		/* traced_buf_trace_writer_packet_loss (severity data_loss) */
		uint64_t trace_writer_packet_loss;
		/* traced_buf_sequence_packet_loss (data_loss): the loss
		 * flags seen so far, in file order, on the sequences the
		 * WriterStats name for this buffer, each sequence's first
		 * packet not counted */
		uint64_t sequence_packet_loss;
		int has_sequence_stats; /* a WriterStats named this buffer */
	} buf[PTW_TRACE_MAX_BUFFERS];
};

/* ---- diagnostics ----------------------------------------------------- */

/* What a diagnostic is about. Kinds below PTW_TRACE_DIAG_NOTE_ are
 * violations of the rules `ptw-dump --check` enforces (trace_check.h). */
enum ptw_trace_diag_kind {
	PTW_TRACE_DIAG_FATAL = 1,          /* TP would refuse the whole file */
	PTW_TRACE_DIAG_NO_SEQUENCE,        /* packet without sequence id */
	PTW_TRACE_DIAG_FIRST_NOT_CLEARED,  /* first packet of a sequence lacks
					    * CLEARED */
	PTW_TRACE_DIAG_NEEDS_INVALID,      /* NEEDS packet while state invalid */
	PTW_TRACE_DIAG_INTERNED_INVALID,   /* interned_data while state invalid */
	PTW_TRACE_DIAG_UNKNOWN_IID,        /* iid not defined (yet) in its
					    * generation */
	PTW_TRACE_DIAG_BAD_INTERNED,       /* interned entry without iid */
	PTW_TRACE_DIAG_TIMESTAMP,          /* missing/negative/unconvertible */
	PTW_TRACE_DIAG_CLOCK_SNAPSHOT,     /* snapshot rejected */
	PTW_TRACE_DIAG_COUNTER_TRACK,      /* counter on undescribed/non-counter
					    * track, or without value/track */
	PTW_TRACE_DIAG_TRACK_DESCRIPTOR,   /* descriptor dropped or conflicting */
	PTW_TRACE_DIAG_TRACK_HIERARCHY,    /* parent never described */
	PTW_TRACE_DIAG_EVENT,              /* TrackEvent dropped otherwise (no
					    * type, bad annotation, ...) */
	PTW_TRACE_DIAG_PACKED,             /* packed repeated field */
	PTW_TRACE_DIAG_DATA_LOSS,          /* previous_packet_dropped set */
	PTW_TRACE_DIAG_PAYLOAD,            /* more than one payload in a packet,
					    * or a payload next to a snapshot */
	PTW_TRACE_DIAG_MACHINE_ID,         /* machine_id differs from the
					    * first packet's */
	PTW_TRACE_DIAG_OTHER_FORMAT,       /* trace_processor takes the file
					    * for a format it reads without
					    * an error (systrace text): it
					    * shows none of its packets */
	PTW_TRACE_DIAG_NOTE_,              /* ---- informational below ---- */
	PTW_TRACE_DIAG_TRUNCATED,          /* partial final record */
	PTW_TRACE_DIAG_SKIPPED_FIELD,      /* top-level non-packet field */
};

struct ptw_trace_diag {
	enum ptw_trace_diag_kind kind;
	uint64_t offset;       /* as for events */
	uint64_t inner_offset;
	uint32_t batch;
	uint32_t seq_id;
	const char *msg;       /* complete sentence, no offset prefix */
};

/* ---- loading --------------------------------------------------------- */

struct ptw_trace;

/* Per-packet callback for tools that print every packet (ptw-dump).
 * Called in file order once per TracePacket after it was tokenized.
 * 'pkt' is a Perfetto__Protos__TracePacket (declared void to keep
 * protobuf-c out of this header), NULL if the record did not decode.
 * Returning non-zero stops the walk (ptw_trace_load_* then fail with
 * PTW_ERR_INVALID). */
struct ptw_trace_packet_info {
	uint64_t offset;
	uint64_t inner_offset;
	uint32_t batch;        /* 0: top level */
	uint32_t size;         /* bytes of the TracePacket (without header) */
	uint64_t packet_index;
	int has_ts;            /* the packet had a timestamp it could convert */
	int64_t ts;            /* converted trace time if has_ts */
	int dropped;           /* 1 if TP would drop the packet's payload */
	const char *drop_reason;  /* why (static string), or NULL */
	const struct ptw_trace_event *event; /* the resolved event, or NULL;
				* valid only during the callback */
	int is_batch;          /* the record is a compressed batch; its inner
				* packets follow with batch != 0 */
	uint64_t inflated_size;/* for is_batch */
};

struct ptw_trace_options {
	int (*on_packet)(void *ctx, const struct ptw_trace_packet_info *info,
			 const void *pkt);
	void *ctx;
	/* Stop collecting diagnostics after this many (the counts in stats
	 * go on). 0: PTW_TRACE_DEFAULT_MAX_DIAGS. */
	uint32_t max_diags;
};

#define PTW_TRACE_DEFAULT_MAX_DIAGS 10000u

/* Loads a whole file. 'opt' may be NULL. Returns NULL with *err filled on
 * I/O or memory failure or when the file is not a proto trace; err->input
 * is set to 'path' (which must outlive the error record). */
struct ptw_trace *ptw_trace_load_file(const char *path,
				      const struct ptw_trace_options *opt,
				      struct ptw_error *err);

/* Same on a memory buffer (not retained). 'name' (may be NULL) is used in
 * messages. */
struct ptw_trace *ptw_trace_load_mem(const void *data, size_t len,
				     const char *name,
				     const struct ptw_trace_options *opt,
				     struct ptw_error *err);

/* Frees the trace and everything it owns. NULL is a no-op. */
void ptw_trace_free(struct ptw_trace *t);

/* ---- results --------------------------------------------------------- */

/* Resolved events, in file order. */
const struct ptw_trace_event *ptw_trace_events(const struct ptw_trace *t,
					       size_t *n);
/* Tracks in order of their first accepted descriptor. */
const struct ptw_trace_track *ptw_trace_tracks(const struct ptw_trace *t,
					       size_t *n);
/* The track with that uuid, or NULL if it was never described. */
const struct ptw_trace_track *ptw_trace_find_track(const struct ptw_trace *t,
						   uint64_t uuid);
const struct ptw_trace_stats *ptw_trace_get_stats(const struct ptw_trace *t);
/* Diagnostics in file order (at most max_diags). */
const struct ptw_trace_diag *ptw_trace_diags(const struct ptw_trace *t,
					     size_t *n);

/* Returns 1 and the offset of the partial final record if the input ends
 * inside a record, else 0. */
int ptw_trace_truncated(const struct ptw_trace *t, uint64_t *offset);

/* Returns the error that stopped the walk (code PTW_ERR_FORMAT, offset and
 * message set) or NULL if the whole input was read. */
const struct ptw_error *ptw_trace_fatal(const struct ptw_trace *t);

/* Trace-time clock chosen by the first ClockSnapshot (BuiltinClock value,
 * e.g. 6 = BOOTTIME), or 0 if none: timestamps were taken verbatim. */
uint32_t ptw_trace_clock(const struct ptw_trace *t);

/* The input name given at load ("<memory>" if none). */
const char *ptw_trace_name(const struct ptw_trace *t);

/* Human-readable names of enum values (static strings). */
const char *ptw_trace_event_type_name(int type);
const char *ptw_trace_track_kind_name(int kind);

#endif /* PTW_TRACE_READ_H */
