/* writer_state.h - the writer's and sequences' private state, shared by
 * the lib/ files that implement include/ptw/writer.h. Not installed.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_WRITER_STATE_H
#define PTW_WRITER_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "deflate.h"
#include "intern.h"
#include "lib/encode/pb.h"
#include "ptw/writer.h"
#include "lib/recorder/window.h"
#include "sink.h"
#include "track.h"
#include "writer_internal.h"

/* Sequence ids: 1 is the tracing service's own; the writer's track
 * descriptors use 2, the simulation and wall-clock sequences 3 and 4,
 * ptw_writer_add_seq() sequences 5, 6, ... */
#define PTW_SEQ_ID_SERVICE 1u
#define PTW_SEQ_ID_DESCRIPTORS 2u
#define PTW_SEQ_ID_FIRST_EVENT 3u

/* String annotation values up to this length are interned
 * (debug_annotation_string_values); longer ones are written inline. */
#define PTW_INTERN_VALUE_MAX 256u
/* An interned string value not written for more than this many packets
 * of its sequence is written inline once (event.c ptw_ev_value_inline). */
#define PTW_INTERN_VALUE_GAP 1000u
/* The same on a converter's writer (ptw_i_writer_converted): more values
 * inline, paid with the bytes its shared sequence's clock and its
 * packets' missing SEQ_NEEDS_INCREMENTAL_STATE save (docs/convert.md,
 * "Loading in trace_processor"). */
#define PTW_CONV_VALUE_GAP 400u
/* Slots remembering string values used once (a power of 2). */
#define PTW_SV_SEEN 512u

struct ptw_seq {
	struct ptw_writer *w;
	uint32_t id;
	uint64_t default_track;  /* 0: none */
	uint64_t base;           /* running value of clock 64 (last delta base);
				  * UINT64_MAX on an abs_only sequence */
	uint64_t snap;           /* reading of its newest clock snapshot */
	uint32_t since_cp;       /* packets since the last checkpoint */
	uint8_t started;         /* first (CLEARED) packet written */
	uint8_t need_cp;         /* an intern table reached its cap */
	uint8_t is_clock;        /* clock-stream sequence: no HOST mode claim */
	uint8_t destroyed;       /* ptw_seq_destroy() called: events fail */
	/* The clock of timestamps written absolute (pkt_encode.h
	 * ptw_put_ts): PTW_CLOCK_SEQ_ABS, or PTW_CLOCK_BOOTTIME on the
	 * sequences of a writer a converter set up (ptw_i_writer_converted),
	 * which trace_processor reads without a clock conversion; 0 (no
	 * clock field) on an abs_only sequence once its defaults say
	 * BOOTTIME. */
	uint8_t abs_clock;
	/* Every timestamp absolute (ptw_i_seq_abs_only): clock 64 unused. */
	uint8_t abs_only;
	/* A string value goes by iid only if written within this many
	 * packets before (event.c ptw_ev_intern_value): PTW_INTERN_VALUE_GAP,
	 * PTW_CONV_VALUE_GAP on a converter's writer. */
	uint32_t value_gap;
	uint64_t dropped;        /* events lost since the last packet */
	/* Packets the event fast path may still write before the slow path
	 * must run (checkpoint due, first packet, drops to report, destroyed,
	 * intern cap): kept by ptw_seq_fast_update(), so the fast path tests
	 * one counter instead of five fields. */
	uint32_t fast_left;
	/* Interning generation: counts checkpoints (which forget every
	 * iid), so a caller holding iids knows they are still valid. */
	uint32_t cp_gen;
	/* Encoded trusted_packet_sequence_id + sequence_flags (NEEDS) +
	 * machine_id of every event packet (hdr_len bytes, at most 15), then
	 * the TrackEvent's tag (hdr[hdr_len]): copied in by every event
	 * packet (seq_fast.h ptw_pkt_put). */
	uint8_t hdr[16];
	uint8_t hdr_len;
	struct ptw_intern *names;  /* InternedData.event_names */
	struct ptw_intern *cats;   /* InternedData.event_categories */
	struct ptw_intern *anames; /* InternedData.debug_annotation_names */
	struct ptw_intern *svals;  /* InternedData.debug_annotation_string_values */
	/* String values seen once but not interned yet (event.c
	 * ptw_ev_intern_value): direct-mapped by hash, valid for generation
	 * 'gen' (cp_gen). */
	struct ptw_sv_seen {
		uint64_t hash;
		uint32_t used, gen;
	} *sv_seen; /* PTW_SV_SEEN slots; NULL until the first string value
		     * (a thread's sequence that logs none costs nothing) */
	struct ptw_stk *stk;       /* callstack tables (callstack.c); NULL
				    * until the sequence's first stack */
	/* InternedData.source_locations, keyed by file NUL function NUL
	 * line (4 bytes); and log_message_body. Created on first use. */
	struct ptw_intern *locs;
	struct ptw_intern *bodies;
	char *lkey;              /* a source location's key, built here */
	size_t lkey_cap;
};

/* A run of records of one sequence in the pending batch (group.c). */
struct ptw_grp_run {
	uint32_t off, end;             /* its records' bytes in pend */
	uint16_t seq;                  /* trusted_packet_sequence_id, at
					* most PTW_GRP_SEQ_BIG */
	uint16_t n;                    /* its records */
};
/* (a sequence id this big or bigger: the batch goes out as made) */
#define PTW_GRP_SEQ_BIG 4096u

struct ptw_writer {
	struct ptw_sink sink;
	struct ptw_writer_options opt; /* resolved: no zero means-default */
	struct ptw_error err;
	int sticky;                    /* PTW_ERR_NOMEM/IO once hit; STATE
					* after finish (nothing is written
					* then); else 0 */
	int finished;                  /* ptw_writer_finish() ran */
	int finish_rc;                 /* what it returned */

	/* Encoded, not yet written packet records. last_pkt is the offset of
	 * the newest record (deflate splits batches there). */
	struct ptw_pb_buf pend;
	size_t last_pkt;
	size_t flush_at;               /* write once pend.len reaches this */
	int pend_has_event;            /* pend holds a TrackEvent packet */
	struct ptw_deflate *defl;      /* NULL: raw output */

	uint64_t open_ns;              /* CLOCK_MONOTONIC at open */
	struct ptw_writer_stats stats;

	struct ptw_tracks tracks;
	int desc_started;              /* descriptor sequence has CLEARED */
	struct ptw_pb_buf dbuf;        /* descriptors being flushed (track.c) */

	struct ptw_seq **seqs;         /* every sequence, freed at close */
	uint32_t n_seqs, seqs_cap;
	uint32_t next_seq_id;
	struct ptw_seq *sim, *wall;
	uint8_t conv_clocks;           /* ptw_i_writer_converted() called */
	uint8_t sniff_stop;            /* 1: the field that stops pprof's
					* sniffer is due after the next batch
					* (ptw_i_writer_converted) */
	uint8_t conv_group;            /* write each batch sequence by
					* sequence (group.c) */
	struct ptw_pb_buf grp;         /* the batch so reordered */
	/* The pending records' runs of one sequence, noted as they are
	 * written while grp_on (group.c): they cover pend up to grp_end,
	 * unless grp_bad (the batch's records are then read back instead).
	 * Once they hold more than the records a batch is judged by, the
	 * batch is judged (grp_probed): if it goes out as made (grp_as_made)
	 * the rest is not noted. Until then, each new run goes through
	 * ptw_w_grp_add (grp_room 0). */
	struct ptw_grp_run *grp_runs;
	uint32_t grp_n, grp_cap, grp_room;
	uint32_t grp_probe_i, grp_recs; /* runs and records counted */
	uint8_t grp_on, grp_bad, grp_probed, grp_as_made;
	uint8_t grp_readback;          /* tests: the records read back */
	size_t grp_end;

	/* The largest BOOTTIME reading of any ClockSnapshot written so far
	 * (the flight recorder's time of a cut, recorder.c). */
	uint64_t last_snapshot;

	/* Flight-recorder mode (recorder.c): output goes into this store
	 * instead of the sink. NULL: stream to the fd. */
	struct ptw_window *rs;
	uint32_t prefix_seq_id;        /* sequence of the snapshot prefix */
	int ring_discard;              /* drop output until the next cut */
	int ring_cut_due;              /* start a new piece after this flush */
	int ring_open_pending;         /* the new piece's open slices are
					* noted at its first checkpoint */
	/* who describes the open slices of a new piece (the tracer), see
	 * ptw_i_writer_recorder_set_open_fn; NULL: a placeholder per slice */
	int (*ring_open_fn)(void *ctx, struct ptw_pb_buf *b);
	void *ring_open_ctx;
	struct ptw_pb_buf ring_meta;   /* metadata packet for the prefix */

	/* Machine options (writer_machine.c): the encoded machine_id field
	 * that every packet carries (mid_len 0: none), and the SystemInfo
	 * message written whenever the descriptor sequence (re)starts
	 * (sysinfo NULL: none). */
	uint8_t mid[8];
	uint8_t mid_len;
	uint8_t *sysinfo;
	size_t sysinfo_len;
	int sysinfo_due;               /* written at the next flush */
	/* REALTIME snapshots: the trace clock's reading now (NULL: none),
	 * and the trace time of the newest snapshot written. */
	uint64_t (*rt_now)(const void *ctx);
	const void *rt_ctx;
	uint64_t rt_last;
	int rt_any;
	/* Timestamp of descriptor packets: 0, or with REALTIME snapshots the
	 * first one's trace time. Merged with a trace of another machine,
	 * time 0 (its boot, for the tracer) may fall before the merged
	 * timeline's start, and trace_processor drops what lies there. */
	uint64_t desc_ts;

	/* System mode (ptw_i_writer_set_output): output goes to out_fn
	 * instead of the sink. NULL: the sink (or the recorder's ring). */
	int (*out_fn)(void *ctx, const uint8_t *p, size_t n);
	void *out_ctx;

	enum ptw_i_mode mode;
	int (*close_fn)(void *ctx);
	void (*free_fn)(void *ctx);
	void *hook_ctx;
};

/* Recomputes s->fast_left after any change to the fields it stands for. */
static inline void ptw_seq_fast_update(struct ptw_seq *s)
{
	uint32_t cp = s->w->opt.checkpoint_packets;
	s->fast_left = s->started && !s->need_cp && !s->dropped &&
				       !s->destroyed && s->since_cp < cp
			       ? cp - s->since_cp
			       : 0;
}

/* ---- writer.c: packet framing and output ---------------------------- */

/* Starts a Trace.packet record in w->pend; returns its mark. */
size_t ptw_w_packet_begin(struct ptw_writer *w);
/* Closes the record; counts it, checks for allocation failure and flushes
 * past the threshold. 'is_event' marks a TrackEvent packet. Returns 0 or
 * the sticky error. */
int ptw_w_packet_end(struct ptw_writer *w, size_t mark, int is_event);
/* Writes every pending record (descriptors first). Returns 0 or the
 * sticky error. */
int ptw_w_flush(struct ptw_writer *w);
/* Writes 'len' bytes of whole packet records (raw, or deflated batches
 * split at 'last', the offset of the newest record). Returns 0 or the
 * sticky error. */
int ptw_w_emit(struct ptw_writer *w, const uint8_t *data, size_t len,
	       size_t last);

/* ---- group.c: a converter's batches ------------------------------ */

/* The pending batch with the packets of each sequence together, in the
 * order each sequence's first packet came (and in their order within
 * each sequence; the newest packet stays last), in w->grp: sets *data to
 * it and *last to its newest record and returns 1; 0 (nothing set) if the batch goes out as made:
 * one sequence only, more than the groups counted, records not as the
 * writer frames them, or no memory for the copy. */
int ptw_w_group_by_seq(struct ptw_writer *w, const uint8_t **data,
		       size_t *last);

/* Notes the n records of sequence 'seq' at offsets at..end of w->pend
 * (only for a converter's writer: grp_on); ptw_w_grp_add when a new run
 * starts before the batch is judged, the runs need more room or cannot
 * take them. */
void ptw_w_grp_add(struct ptw_writer *w, size_t at, size_t end, uint16_t seq,
		   uint32_t n);
static inline __attribute__((always_inline)) void
ptw_w_grp_note(struct ptw_writer *w, size_t at, size_t end, uint64_t seq,
	       uint32_t n)
{
	if (__builtin_expect(!w->grp_on, 1))
		return;
	uint16_t q = seq < PTW_GRP_SEQ_BIG ? (uint16_t)seq : PTW_GRP_SEQ_BIG;
	uint32_t k = w->grp_n;
	if (__builtin_expect(at == w->grp_end && end <= UINT32_MAX, 1)) {
		if (k && w->grp_runs[k - 1].seq == q &&
		    w->grp_runs[k - 1].n <= UINT16_MAX - n) {
			w->grp_runs[k - 1].n = (uint16_t)(w->grp_runs[k - 1].n + n);
			w->grp_runs[k - 1].end = (uint32_t)end;
			w->grp_end = end;
			return;
		}
		if (k < w->grp_room && n <= UINT16_MAX) {
			w->grp_runs[k] = (struct ptw_grp_run){
				(uint32_t)at, (uint32_t)end, q, (uint16_t)n};
			w->grp_n = k + 1;
			w->grp_end = end;
			return;
		}
	}
	ptw_w_grp_add(w, at, end, q, n);
}

/* Notes the record just ended at w->last_pkt..w->pend.len, reading its
 * sequence id. */
void ptw_w_grp_note_record(struct ptw_writer *w);

/* A new batch: no runs. */
static inline void ptw_w_grp_reset(struct ptw_writer *w)
{
	w->grp_n = 0;
	w->grp_end = 0;
	w->grp_room = 0;
	w->grp_probe_i = 0;
	w->grp_recs = 0;
	w->grp_on = w->conv_group;
	w->grp_bad = 0;
	w->grp_probed = 0;
	w->grp_as_made = 0;
}

/* ---- recorder.c: flight-recorder mode ----------------------------- */

/* Stores 'n' output bytes in the ring (instead of writing them). */
int ptw_w_rec_write(struct ptw_writer *w, const uint8_t *p, size_t n);
/* After each flush: starts a new piece when the current one is full. */
int ptw_w_rec_after_flush(struct ptw_writer *w);
/* A checkpoint for an event at 'ts' goes into the current piece. */
void ptw_w_rec_note_checkpoint(struct ptw_writer *w, uint64_t ts);
/* Notes the slices open at the start of the current piece. */
void ptw_w_rec_note_open(struct ptw_writer *w);

/* ---- track.c: descriptors ------------------------------------------- */

/* Encodes and writes the queued descriptors (called first by
 * ptw_w_flush). Returns 0 or the sticky error. */
int ptw_w_flush_tracks(struct ptw_writer *w);
/* Flight recorder: queues the current descriptor of every track again
 * (a new piece describes every track). Returns 0 or the sticky error. */
int ptw_w_requeue_tracks(struct ptw_writer *w);

/* ---- seq.c: sequence state ------------------------------------------ */

struct ptw_seq *ptw_w_seq_create(struct ptw_writer *w, uint64_t default_track,
				 int is_clock);
void ptw_w_seq_free(struct ptw_seq *s);
/* Writes the sequence's first packet or a due checkpoint before an event
 * at 'ts'. Returns 0 or an error (nothing written on INVALID). */
int ptw_w_seq_prepare(struct ptw_seq *s, uint64_t ts);
/* The body of a checkpoint packet (CLEARED, defaults, clock snapshot at
 * x), appended to 'b' inside an open packet. def_clock: the defaults'
 * timestamp clock (PTW_CLOCK_SEQ_INCR, or PTW_CLOCK_BOOTTIME on an
 * abs_only sequence). */
void ptw_w_encode_checkpoint(const struct ptw_writer *w, struct ptw_pb_buf *b,
			     uint32_t seq_id, int first, int dropped,
			     uint64_t default_track, uint32_t def_clock,
			     uint64_t x);

/* ---- writer_machine.c: machine options -------------------------------- */

/* Sets up w->mid, w->sysinfo and (wall_realtime) the REALTIME snapshots
 * from w->opt. 0 or PTW_ERR_NOMEM. */
int ptw_w_machine_init(struct ptw_writer *w);
void ptw_w_machine_free(struct ptw_writer *w);
/* Appends the machine_id field (if any) to an open packet in 'b'. */
static inline void ptw_w_put_mid(const struct ptw_writer *w,
				 struct ptw_pb_buf *b)
{
	ptw_pb_append_raw(b, w->mid, w->mid_len);
}
/* Appends the SystemInfo packet (if any) to 'b' (at the first flush, and
 * in flight-recorder mode at each piece's). */
void ptw_w_put_sysinfo(const struct ptw_writer *w, struct ptw_pb_buf *b);
/* Appends a ClockSnapshot of trace time and CLOCK_REALTIME to the
 * pending packets if REALTIME snapshots are on and 'force' or one is
 * due (ptw_w_realtime_due: none yet, or the last one at least
 * PTW_RT_PERIOD_NS old). 0 or the sticky error. */
int ptw_w_realtime_snapshot(struct ptw_writer *w, int force);
int ptw_w_realtime_due(const struct ptw_writer *w);
/* Appends (if REALTIME snapshots are on) a REALTIME snapshot packet for
 * trace time t, with the offset to REALTIME measured now, to 'b': the
 * flight recorder's prefix, so that a window's events come after one in
 * the file (trace_processor converts them as it reads them). t must not
 * exceed any REALTIME snapshot after it in the file. */
void ptw_w_put_realtime_at(const struct ptw_writer *w, struct ptw_pb_buf *b,
			   uint64_t t);

#endif /* PTW_WRITER_STATE_H */
