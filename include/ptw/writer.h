/* writer.h - single-threaded Perfetto trace writer.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Turns tracks and events into Perfetto TracePackets written to a file: track
 * descriptors, TrackEvents with interned names, categories and annotation
 * names (InternedData), incremental sequence clocks (ClockSnapshot +
 * TracePacketDefaults, varint deltas), periodic checkpoints
 * (SEQ_INCREMENTAL_STATE_CLEARED) and optional zlib deflate
 * (TracePacket.compressed_packets) or zstd (zstd_compressed_packets).
 * The output opens in ui.perfetto.dev and trace_processor; it needs no footer, so a file cut by a crash stays
 * readable up to the last complete packet or batch.
 *
 * Events go to a *sequence* (struct ptw_seq): a packet stream with its own
 * interning tables and incremental clock. A writer starts with two: the
 * simulation sequence (ptw_writer_sim_seq, timestamps in caller-defined
 * ticks shown as 1 tick = 1 ns) and the wall-clock sequence
 * (ptw_writer_wall_seq, nanoseconds since the writer's base time, see
 * ptw_writer_now_ns). Callers may create more (one per producer thread).
 * Every sequence maps its clock 1:1 to trace time.
 *
 * Thread rule: a writer and all its sequences belong to one thread at a
 * time. Nothing here locks.
 *
 * Structs that grow (the rule for every ptw header): the options, config
 * and stats structs (struct ptw_writer_options, ptw_writer_stats,
 * ptw_config, ptw_stats, ptw_clock_streams_options, _stats) only ever gain
 * fields at their end, and a zero field always means its default. Start
 * from a zeroed struct (= {0} or memset) and set what you need. The calls
 * that take or fill one are static inline wrappers that pass sizeof(the
 * struct) as this header knows it to an exported ..._sized function (call
 * the wrappers). The library reads min(that size, its own) bytes and treats
 * the rest as zero, so a program built against an older header runs on a
 * newer library with defaults for the new fields; on an older library, a
 * struct with a non-zero field that library does not know is refused with
 * PTW_ERR_INVALID. Stats are filled up to the smaller of both sizes (fields
 * the library does not know are 0). The SONAME changes when a release
 * breaks this (0.x: every minor release, libptw.so.0.MINOR). */
#ifndef PTW_WRITER_H
#define PTW_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "ptw/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- defaults of struct ptw_writer_options -------------------------- */
#define PTW_DEFAULT_CHECKPOINT_PACKETS 16384u /* packets per sequence */
#define PTW_DEFAULT_MAX_INTERNED 4096u        /* strings per table */
#define PTW_DEFAULT_FLUSH_BYTES (256u * 1024u)
#define PTW_DEFAULT_COMPRESS_LEVEL 6       /* deflate */
#define PTW_DEFAULT_ZSTD_LEVEL 3           /* zstd (libzstd's own default) */
#define PTW_MAX_STRING_LEN (64u * 1024u)      /* longest name/value, bytes */
#define PTW_MAX_ANNOTATIONS 64u               /* per event (top level) */
#define PTW_MAX_ARG_DEPTH 16u  /* levels of non-empty dicts/arrays below
				* a top-level annotation */
#define PTW_MAX_ARG_NODES 1024u /* dict entries + array values, per event */
#define PTW_MAX_FLOWS 8u                      /* flow ids per event, each list */

struct ptw_writer;
struct ptw_seq;

/* Zeroed (or a NULL pointer) means all defaults. */
struct ptw_writer_options {
	/* Checkpoint every N packets of a sequence. 0: default 16384. */
	uint32_t checkpoint_packets;
	/* Checkpoint when a sequence's intern table (names, categories or
	 * annotation names) holds this many strings. 0: default 4096. */
	uint32_t max_interned;
	/* Write buffered packets once this many bytes are pending.
	 * 0: default 256 KiB. With compression each flushed batch becomes one
	 * compressed_packets packet; batches are split to stay under 512 KB. */
	uint32_t flush_bytes;
	/* PTW_COMPRESS_NONE (0): plain packets; PTW_COMPRESS_DEFLATE (1):
	 * each batch zlib-deflated into compressed_packets (every Perfetto
	 * version reads it); PTW_COMPRESS_ZSTD (2): each batch one zstd
	 * frame in zstd_compressed_packets (trace_processor and UI v58 and
	 * later only; smaller and faster). Other values: PTW_ERR_INVALID. */
	int compress;
	/* Level when compress is set: deflate 1..9 (as zlib's; 0: default
	 * 6), zstd 1..19 (0: default 3). */
	int compress_level;
	/* With ptw_writer_open_fd: non-zero to close the fd on writer close. */
	int close_fd;
	/* ---- machines (docs/writer.md, "Several machines") ----------------
	 * Non-zero: every packet carries TracePacket.machine_id = machine_id,
	 * so that trace_processor keeps this trace's processes, threads and
	 * tracks on a machine of their own when several traces are opened
	 * together (one TAR or ZIP). Give each machine its own id. 0: none
	 * (nothing changes). */
	uint32_t machine_id;
	/* Non-NULL: a SystemInfo packet with machine_name (trace_processor's
	 * machine.name). Copied at open. NULL: none. */
	const char *machine_name;
	/* Non-zero: that SystemInfo packet (written even without a name)
	 * also carries utsname from uname(2): for traces of the host the
	 * program runs on, not for converted ones. */
	int machine_uname;
	/* Non-zero: ClockSnapshot packets relate trace time to the host's
	 * CLOCK_REALTIME, for the wall-clock sequence (trace time =
	 * ptw_writer_now_ns): one at open and one at each flush at least
	 * 50 ms after the previous one, so that traces of several machines
	 * line up by wall-clock time. Leave 0 when trace time is not the
	 * wall sequence's (simulation ticks, converted traces). */
	int wall_realtime;
};

/* Values of struct ptw_writer_options.compress. */
#define PTW_COMPRESS_NONE 0
#define PTW_COMPRESS_DEFLATE 1
#define PTW_COMPRESS_ZSTD 2

/* Annotation value types (DebugAnnotation). */
enum ptw_arg_type {
	PTW_ARG_TYPE_BOOL = 1,
	PTW_ARG_TYPE_INT,    /* int64_t  v.i */
	PTW_ARG_TYPE_UINT,   /* uint64_t v.u */
	PTW_ARG_TYPE_DOUBLE, /* double   v.d */
	PTW_ARG_TYPE_STRING, /* const char *v.s, NUL-terminated, copied */
	PTW_ARG_TYPE_POINTER,/* uint64_t v.u, shown as hex */
	PTW_ARG_TYPE_DICT,   /* v.nested: named entries (DebugAnnotation
			 * dict_entries) */
	PTW_ARG_TYPE_ARRAY,  /* v.nested: values, names ignored (array_values) */
};

/* A typed debug annotation. A top-level annotation's name is interned per
 * sequence; the names and string values of nested ones (the entries of a
 * PTW_ARG_TYPE_DICT, the values of a PTW_ARG_TYPE_ARRAY, at any depth) are written
 * inline. trace_processor shows a dict entry as "debug.<name>.<entry>"
 * and an array value as "debug.<name>[i]" in its args table, replacing
 * '.', '[' and ']' in every name with '_'. An array value that shows no
 * row (an empty dict or array, or one holding only such) uses up no index
 * i. Limits per event: PTW_MAX_ARG_DEPTH levels below a top-level
 * annotation and PTW_MAX_ARG_NODES nested annotations in all (more:
 * PTW_ERR_INVALID). The tracer (tracer.h) and clock streams do not carry
 * nested annotations: the tracer drops them (counted in
 * ptw_get_stats().invalid), clock streams refuse them. */
struct ptw_arg {
	const char *name; /* NULL allowed only for array values */
	enum ptw_arg_type type;
	union {
		int b;
		int64_t i;
		uint64_t u;
		double d;
		const char *s;
		struct {
			const struct ptw_arg *items; /* n entries/values */
			uint32_t n;                  /* 0: shows nothing */
		} nested;
	} v;
};

/* Flags of struct ptw_event. */
#define PTW_EV_STATIC_STRINGS 1u /* name/category are never freed or changed
				  * while the writer lives: intern by pointer
				  * (the fast path: no strlen, no hashing) */
#define PTW_EV_STATIC_ARG_NAMES 2u /* the same promise for every args[i].name */
#define PTW_EV_THREAD_TIME 4u /* thread_time is set: written as the value of
			       * thread_time_track (extra counter), which
			       * trace_processor shows as the slice's
			       * thread_ts (BEGIN, INSTANT) or uses for its
			       * thread_dur (END) */
/* ptw_seq_slice_end only: write the END's name and category too (NULL:
 * none), so that trace_processor closes the innermost open slice on the
 * track whose name and category match them (an END without a name or
 * category matches any), as Chrome JSON 'e' events do; and accept an END
 * when no slice is open on the track (trace_processor ignores an END
 * that matches nothing; the writer's count of open slices stays 0, as
 * trace_processor's count of open slices per track uuid does). */
#define PTW_EV_NAMED_END 8u
/* ev->source and its strings never change while the writer lives:
 * interned by the struct's address (PTW_EV_STATIC_STRINGS implies it). */
#define PTW_EV_STATIC_SOURCE 16u

/* Direction of a Chrome JSON v2 flow (LegacyEvent.FlowDirection). */
enum ptw_flow_dir {
	PTW_FLOW_NONE = 0,  /* no bind_id */
	PTW_FLOW_IN = 1,    /* "flow_in": the flow ends here */
	PTW_FLOW_OUT = 2,   /* "flow_out": the flow starts here */
	PTW_FLOW_INOUT = 3, /* both: a step */
};

/* TrackEvent.legacy_event, for events converted from Chrome JSON:
 * trace_processor gives them the JSON import's semantics
 * (track_event_event_importer.h). On a BEGIN, INSTANT or END: a v2 flow
 * (bind_id and its direction) bound to that event's slice
 * (MaybeParseFlowEventV2). With ptw_seq_legacy_flow(): a v1 flow event
 * (phase 's', 't' or 'f', the JSON "id" as unscoped_id; the event's name
 * and category scope the id, as in JSON; ParseFlowEventV1). On an
 * INSTANT: instant_scope 'g' / 'p' writes phase 'I' with
 * instant_event_scope GLOBAL / PROCESS, which trace_processor shows on
 * its legacy global instant track (one per trace, no name) / on the
 * process's legacy instant track (no name), as it shows Chrome JSON
 * "s":"g" / "s":"p" instants, whatever track the event names ('p': the
 * track must be a process track). With ptw_seq_legacy_flow() and phase
 * 'b', 'e' or 'n': a Chrome JSON async begin / end / instant, with 'id'
 * as unscoped_id, or as local_id (an id of the process of the event's
 * track) if local_id is set; trace_processor puts it on its
 * legacy_async_global_slice / legacy_async_process_slice tracks, as
 * for JSON (the event's track only gives the process: use a process
 * track, so that no thread is attached to the event). */
struct ptw_legacy {
	char phase;              /* 's', 't', 'f', 'b', 'e', 'n'
				  * (ptw_seq_legacy_flow); else 0 */
	int bind_to_enclosing;   /* 'f' with "bp":"e" */
	uint64_t id;             /* phase s/t/f/b/e/n: LegacyEvent.unscoped_id */
	int local_id;            /* phase b/e/n: write id as local_id */
	enum ptw_flow_dir flow_dir; /* PTW_FLOW_NONE: no bind_id written */
	uint64_t bind_id;
	char instant_scope;      /* INSTANT only: 'g', 'p', or 0 (none) */
};

/* ---- callstacks -------------------------------------------------------
 * How the program got to an event (TrackEvent.callstack / callstack_iid):
 * trace_processor puts it in track_event_callstacks (slice_id, callsite_id;
 * an END's in end_callsite_id), whose callsite leads through
 * stack_profile_callsite (parent_id, depth 0 = outermost) to
 * stack_profile_frame (name, rel_pc, mapping) and stack_profile_mapping
 * (name, build_id, start, end, exact_offset, load_bias). */
#define PTW_MAX_FRAMES 256u /* frames per callstack */

/* A loaded object (ELF file) a frame's pc lies in: InternedData.mappings,
 * which keeps an unnamed frame symbolizable later (build id + rel_pc). */
struct ptw_mapping {
	const char *path;         /* NULL: none */
	const uint8_t *build_id;  /* raw bytes (NT_GNU_BUILD_ID); NULL: none */
	uint32_t build_id_len;    /* at most 64 */
	uint64_t start, end;      /* the mapped address range */
	uint64_t exact_offset;    /* file offset of 'start' */
	uint64_t load_bias;       /* p_vaddr - p_offset of its segment */
};

/* One frame. Strings NUL-terminated UTF-8, copied or interned. */
struct ptw_frame {
	const char *function;     /* NULL: unnamed */
	const char *file;         /* source file; NULL: none */
	uint32_t line;            /* 0: none */
	/* Interned form only: the mapping (NULL: none) and the pc relative
	 * to the object's ELF addresses (pc - load address). */
	const struct ptw_mapping *mapping;
	uint64_t rel_pc;
};

/* Flags of struct ptw_callstack. */
#define PTW_CS_INLINE 1u /* write the frames inline (TrackEvent.callstack:
			  * function, file and line only; no interning).
			  * Default: interned per sequence (InternedData
			  * function_names, source_paths, build_ids,
			  * mapping_paths, mappings, frames, callstacks), so
			  * that a stack seen again since the sequence's
			  * last checkpoint costs one callstack_iid field */

struct ptw_callstack {
	const struct ptw_frame *frames; /* outermost (main) first */
	uint32_t n_frames;              /* 1..PTW_MAX_FRAMES; 0: no stack */
	uint32_t flags;                 /* PTW_CS_* */
};

/* Where an event was logged: TrackEvent.source_location_iid, interned
 * per sequence (InternedData.source_locations, keyed by the three values;
 * with PTW_EV_STATIC_STRINGS also by the struct's address, which must
 * then never change nor its strings). trace_processor shows it as the
 * slice's args source.file_name, source.function_name and
 * source.line_number. NULL strings are written as empty ones. */
struct ptw_source_location {
	const char *file;     /* e.g. __FILE__ */
	const char *function; /* e.g. __func__ */
	uint32_t line;        /* e.g. __LINE__ */
};

/* Priorities of a log message (LogMessage.Priority, which
 * trace_processor maps to Android's: its android_logs.prio). */
enum ptw_log_prio {
	PTW_LOG_PRIO_UNSPECIFIED = 0, /* no prio written: shown as INFO (4) */
	PTW_LOG_PRIO_VERBOSE = 2,
	PTW_LOG_PRIO_DEBUG = 3,
	PTW_LOG_PRIO_INFO = 4,
	PTW_LOG_PRIO_WARN = 5,
	PTW_LOG_PRIO_ERROR = 6,
	PTW_LOG_PRIO_FATAL = 7,
};

/* One event. Strings are NUL-terminated UTF-8 and copied (or interned)
 * before the call returns. */
struct ptw_event {
	uint64_t track;          /* track uuid; 0: the sequence's default track */
	uint64_t ts;             /* in the sequence's time domain */
	const char *category;    /* NULL: none */
	const char *name;        /* NULL: none (allowed for SLICE_END) */
	const uint64_t *flow_ids;            /* flows leaving/continuing here */
	uint32_t n_flow_ids;                 /* at most PTW_MAX_FLOWS */
	uint32_t n_terminating_flow_ids;     /* at most PTW_MAX_FLOWS */
	const uint64_t *terminating_flow_ids;/* flows ending here */
	const struct ptw_arg *args;          /* debug annotations */
	uint32_t n_args;                     /* at most PTW_MAX_ANNOTATIONS */
	uint32_t flags;                      /* PTW_EV_* */
	/* With PTW_EV_THREAD_TIME: the thread's CPU time at this event, in
	 * ns, on a track of ptw_writer_add_thread_time_track(). */
	int64_t thread_time;
	uint64_t thread_time_track;
	const struct ptw_legacy *legacy;     /* NULL: none */
	const struct ptw_callstack *callstack; /* NULL: none */
	/* Where the event was logged (BEGIN, INSTANT, END, log messages;
	 * ignored by ptw_seq_legacy_flow). NULL: none. */
	const struct ptw_source_location *source;
};

struct ptw_writer_stats {
	uint64_t events;            /* TrackEvents written (a complete slice counts 2) */
	uint64_t packets;           /* TracePackets encoded (before compression) */
	uint64_t bytes_written;     /* bytes of completely successful writes */
	uint64_t checkpoints;       /* CLEARED packets of event sequences (each
				     * sequence's first packet counts) */
	uint64_t interned_strings;  /* interned entries emitted, all sequences */
	uint64_t first_output_ns;   /* open to first event-carrying write; 0: none yet */
	uint64_t compressed_batches;/* compressed_packets packets written */
	uint64_t clock_peak_records;/* clock streams: peak buffered records */
	uint64_t clock_peak_bytes;  /* clock streams: peak buffered bytes */
	uint64_t first_clock_output_ns; /* clock streams: open to first output */
};

/* ---- open / close ---------------------------------------------------- */

/* Creates (truncates) 'path' and returns a writer, or NULL with *err filled.
 * 'opt' may be NULL for defaults. Nothing is written until the first packet.
 * A regular file of the writer's own on disk has its space reserved ahead of
 * the writes (its size is always what was written) and its large writes end
 * on 64 KiB boundaries, the rest waiting for the next write;
 * ptw_writer_flush and close write everything and give back the space not
 * used (docs/writer.md, "Output to a file on disk"). */
static inline struct ptw_writer *
ptw_writer_open(const char *path, const struct ptw_writer_options *opt,
		struct ptw_error *err);

/* Same on an open, writable fd (a file, pipe or socket). The fd is closed by
 * ptw_writer_close() only if opt->close_fd is set. */
static inline struct ptw_writer *
ptw_writer_open_fd(int fd, const struct ptw_writer_options *opt,
		   struct ptw_error *err);

/* Writes all buffered packets to the fd. Returns 0 or the sticky error. */
int ptw_writer_flush(struct ptw_writer *w);

/* Completes the trace without freeing the writer: emits what clock streams
 * still buffer, flushes, and closes the file (if owned). Returns 0 or the
 * first error the writer hit (also copied into 'err' if not NULL). After
 * it, every call that would write (events, tracks, flush) returns
 * PTW_ERR_STATE and writes nothing, while ptw_writer_get_stats() and
 * ptw_writer_error() still answer; a second finish returns the same
 * result. Free the writer with ptw_writer_close(). NULL: PTW_ERR_INVALID. */
int ptw_writer_finish(struct ptw_writer *w, struct ptw_error *err);

/* Finishes the writer (if ptw_writer_finish() was not called) and frees it
 * and its sequences. Returns 0 or the first error the writer hit (errno is
 * kept in the error record, which is lost with the writer: read
 * ptw_writer_error() first, or pass 'err'). NULL is a no-op returning 0. */
int ptw_writer_close(struct ptw_writer *w, struct ptw_error *err);

/* The writer's error record: the most recent failure, code 0 if none yet.
 * A sticky error (PTW_ERR_NOMEM, PTW_ERR_IO) stays in it: later misuse does
 * not overwrite it. NULL 'w' gives a static PTW_ERR_INVALID record. */
const struct ptw_error *ptw_writer_error(const struct ptw_writer *w);

/* Fills *out (zeroed for a NULL writer). */
static inline void ptw_writer_get_stats(const struct ptw_writer *w,
					struct ptw_writer_stats *out);

/* Nanoseconds of CLOCK_MONOTONIC since the writer was opened: the time base
 * of the wall-clock sequence. */
uint64_t ptw_writer_now_ns(const struct ptw_writer *w);

/* ---- tracks ------------------------------------------------------------
 * Each returns a new non-zero track uuid, or 0 on error (see
 * ptw_writer_error). Its TrackDescriptor is queued and written at the next
 * flush of pending packets (flush_bytes reached, ptw_writer_flush, close),
 * ahead of those packets: so before any event that can use it, and late
 * enough that a parent whose children have a rank is written with
 * child_ordering = EXPLICIT. Create ranked children before the parent's
 * first flush (in practice: before its events); a rank given later is
 * still written, but trace_processor keeps the ordering of a track's
 * first descriptor. Strings are copied. Write errors surface at the flush. */

uint64_t ptw_writer_add_process_track(struct ptw_writer *w, int32_t pid,
				      const char *name);
uint64_t ptw_writer_add_thread_track(struct ptw_writer *w, int32_t pid,
				     int64_t tid, const char *name);
/* A named track, under 'parent_uuid' (0: a global root track; else an
 * existing non-counter track); 'rank' >= 0 is written as
 * sibling_order_rank (and makes the parent's child ordering EXPLICIT, see
 * above), < 0 means none. Ranks order tracks only under a parent made by
 * ptw_writer_add_track: trace_processor and its UI order root tracks, and
 * tracks under process or thread tracks, by name (docs/writer.md). 'name'
 * may be NULL: the descriptor then has no name and trace_processor names
 * the track after the first event it sees on it (NULL if that event has no
 * name). trace_processor merges sibling tracks of the same name (same
 * parent) into as few tracks as their overlapping slices allow. */
uint64_t ptw_writer_add_track(struct ptw_writer *w, const char *name,
			      uint64_t parent_uuid, int32_t rank);
/* A counter track; 'unit_name' may be NULL. */
uint64_t ptw_writer_add_counter_track(struct ptw_writer *w, const char *name,
				      const char *unit_name,
				      uint64_t parent_uuid, int32_t rank);

/* A track under 'parent_uuid' (an existing non-counter track) that
 * trace_processor never merges with its siblings
 * (sibling_merge_behavior = NONE): its slices keep their own nesting, as
 * on a second track of the parent's thread or process. 'name' may be
 * NULL (trace_processor then names it after its first event). */
uint64_t ptw_writer_add_separate_track(struct ptw_writer *w, const char *name,
				       uint64_t parent_uuid);
/* The thread-time counter track of a thread (CounterDescriptor type
 * COUNTER_THREAD_TIME_NS, no name: trace_processor calls it
 * "thread_time"), under 'parent_uuid' (the thread's track, or 0). Events
 * refer to it with PTW_EV_THREAD_TIME. trace_processor adds a counter row
 * on it for each such event. */
uint64_t ptw_writer_add_thread_time_track(struct ptw_writer *w,
					  uint64_t parent_uuid);

/* Renames a process or thread track (writes an updated descriptor; the
 * later name wins in trace_processor). Other tracks: PTW_ERR_INVALID. */
int ptw_writer_rename_track(struct ptw_writer *w, uint64_t track,
			    const char *name);

/* Gives a process or thread track a sibling_order_rank ('rank', any
 * int32; the last call wins), which orders processes (threads of a
 * process) in trace_processor and its UI, lowest first, as Chrome JSON
 * process_sort_index / thread_sort_index do. The rank goes into the
 * track's first descriptor, so call this before the track's first flush
 * (right after creating it, or before its first event in practice); the
 * flush also writes a descriptor of the default track (uuid 0) with
 * process_ordering / thread_ordering = EXPLICIT, without which ranks of
 * processes / threads are ignored. Returns 0; PTW_ERR_STATE if the
 * descriptor was already written (trace_processor keeps the first one, a
 * rank in a later one would be ignored; nothing is changed); for other
 * tracks PTW_ERR_INVALID (give named and counter tracks their rank when
 * creating them). Neither error is sticky. */
int ptw_writer_set_track_rank(struct ptw_writer *w, uint64_t track,
			      int32_t rank);

/* ---- sequences ------------------------------------------------------ */

/* The writer's two built-in sequences (trusted_packet_sequence_id 3 and
 * 4; 2 carries the track descriptors). Neither has a default track. A
 * sequence writes nothing until its first event. NULL if 'w' is NULL. */
struct ptw_seq *ptw_writer_sim_seq(struct ptw_writer *w);
struct ptw_seq *ptw_writer_wall_seq(struct ptw_writer *w);

/* A new sequence (ids 5, 6, ... in call order) whose events default to
 * 'default_track' (0: none; events must then name a track; a counter
 * track is refused). Events on the default track carry no track_uuid.
 * NULL on error (see ptw_writer_error). Freed at writer close. */
struct ptw_seq *ptw_writer_add_seq(struct ptw_writer *w, uint64_t default_track);

/* Ends a sequence (its packets already written stay valid) and frees its
 * tables. The handle stays allocated until ptw_writer_close(): later
 * events on it return PTW_ERR_STATE. NULL or a second call: no-op. */
void ptw_seq_destroy(struct ptw_seq *s);

/* Records that 'n' events of this sequence were lost before the next one
 * (ring overflow): the next packet is a checkpoint (CLEARED, so the
 * sequence stays valid for readers) with previous_packet_dropped set.
 * n == 0 or NULL: no-op. */
void ptw_seq_mark_dropped(struct ptw_seq *s, uint64_t n);

/* ---- events ------------------------------------------------------------
 * All return 0 or a negative PTW_ERR_*. Timestamps may go backwards: such
 * an event is written with an absolute timestamp and the incremental clock
 * is left alone. Misuse (unknown track, END without BEGIN on that track,
 * string over PTW_MAX_STRING_LEN, counter on a non-counter track, a
 * timestamp above INT64_MAX, which trace_processor cannot represent)
 * returns PTW_ERR_INVALID and writes nothing. */

/* Events on a sequence after ptw_seq_destroy() return PTW_ERR_STATE; after
 * a write or allocation failure every call returns that sticky error.
 * Names, categories, annotation names and string values up to 256 bytes
 * are interned per sequence; longer values are written inline. */

int ptw_seq_slice_begin(struct ptw_seq *s, const struct ptw_event *ev);
/* Closes the innermost open slice on 'track' (0: default track). The
 * event's name/category are ignored (unless PTW_EV_NAMED_END); args and
 * flows are written. */
int ptw_seq_slice_end(struct ptw_seq *s, const struct ptw_event *ev);
/* BEGIN at ev->ts and END at ev->ts + dur. */
int ptw_seq_slice_complete(struct ptw_seq *s, const struct ptw_event *ev,
			   uint64_t dur);
int ptw_seq_instant(struct ptw_seq *s, const struct ptw_event *ev);
/* A TrackEvent without a type whose legacy_event (ev->legacy, phase 's',
 * 't' or 'f') makes it a Chrome JSON v1 flow event: trace_processor binds
 * it to the slice open on the event's track when it reads it (or, for
 * 'f' without bind_to_enclosing, to the next slice that begins there).
 * Phase 'b', 'e' or 'n': a Chrome JSON async event (struct ptw_legacy). */
int ptw_seq_legacy_flow(struct ptw_seq *s, const struct ptw_event *ev);
/* A line of text on a thread's track: an INSTANT (ev's name, category,
 * args, flows, source; Chrome names it "LogMessage" in category "log")
 * carrying TrackEvent.log_message with 'msg' (interned per sequence in
 * InternedData.log_message_body), 'prio' (enum ptw_log_prio) and
 * ev->source. trace_processor lists it in its android_logs table (ts,
 * utid of the thread, prio, tag "file:line" of ev->source or NULL, msg)
 * and the UI in its log panel. ev->track must be a thread track
 * (trace_processor keeps no log line of other tracks); 'msg' at most
 * PTW_MAX_STRING_LEN bytes; else PTW_ERR_INVALID. */
int ptw_seq_log(struct ptw_seq *s, const struct ptw_event *ev, int prio,
		const char *msg);
int ptw_seq_counter_int(struct ptw_seq *s, uint64_t track, uint64_t ts,
			int64_t value);
int ptw_seq_counter_double(struct ptw_seq *s, uint64_t track, uint64_t ts,
			   double value);

/* The common event in one call, without building a struct ptw_event:
 * exactly ptw_seq_slice_begin / ptw_seq_slice_end / ptw_seq_instant with
 * { track, ts, category, name } and PTW_EV_STATIC_STRINGS (so name and
 * category must be static in that sense; both are ignored for END), no
 * annotations and no flows. For hot loops such as converters. */
enum ptw_simple_type {
	PTW_SIMPLE_BEGIN = 1,
	PTW_SIMPLE_END,
	PTW_SIMPLE_INSTANT,
};
int ptw_seq_simple(struct ptw_seq *s, enum ptw_simple_type type,
		   uint64_t track, uint64_t ts, const char *category,
		   const char *name);

/* ---- the sized entry points behind the wrappers (see the rule on top) - */

struct ptw_writer *ptw_writer_open_sized(const char *path,
					 const struct ptw_writer_options *opt,
					 size_t opt_size, struct ptw_error *err);
struct ptw_writer *ptw_writer_open_fd_sized(int fd,
					    const struct ptw_writer_options *opt,
					    size_t opt_size,
					    struct ptw_error *err);
void ptw_writer_get_stats_sized(const struct ptw_writer *w,
				struct ptw_writer_stats *out, size_t out_size);

static inline struct ptw_writer *
ptw_writer_open(const char *path, const struct ptw_writer_options *opt,
		struct ptw_error *err)
{
	return ptw_writer_open_sized(path, opt,
				     sizeof(struct ptw_writer_options), err);
}
static inline struct ptw_writer *
ptw_writer_open_fd(int fd, const struct ptw_writer_options *opt,
		   struct ptw_error *err)
{
	return ptw_writer_open_fd_sized(fd, opt,
					sizeof(struct ptw_writer_options), err);
}
static inline void ptw_writer_get_stats(const struct ptw_writer *w,
					struct ptw_writer_stats *out)
{
	ptw_writer_get_stats_sized(w, out, sizeof(struct ptw_writer_stats));
}

#ifdef __cplusplus
}
#endif

#endif /* PTW_WRITER_H */
