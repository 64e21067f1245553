/* writer_internal.h - hooks of the writer for other lib/ modules (clock
 * streams, tracer backend). Not installed, not API.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_WRITER_INTERNAL_H
#define PTW_WRITER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ptw/writer.h"

/* Which kind of timestamps a writer carries. Host-time events (the sim and
 * wall sequences, ptw_writer_add_seq sequences) and clock streams cannot
 * share one writer: the first event or stream fixes the mode, and the other
 * kind then gets PTW_ERR_INVALID. */
enum ptw_i_mode {
	PTW_I_MODE_NONE = 0,
	PTW_I_MODE_HOST,
	PTW_I_MODE_CLOCK,
};

/* Sets the mode, or returns PTW_ERR_INVALID if the writer is in the other
 * mode (and records that misuse in the writer's error record). */
int ptw_i_writer_set_mode(struct ptw_writer *w, enum ptw_i_mode mode);

/* A sequence for clock-stream output: its events do not claim HOST mode.
 * Same semantics as ptw_writer_add_seq otherwise. */
struct ptw_seq *ptw_i_writer_add_clock_seq(struct ptw_writer *w,
					   uint64_t default_track);

/* A module that buffers events (clock streams) registers a hook that
 * ptw_writer_close() calls first, before the final flush, to emit what
 * remains; then 'free_fn(ctx)' at the end of close. One hook per writer;
 * a second registration returns PTW_ERR_INVALID. */
int ptw_i_writer_set_close_hook(struct ptw_writer *w,
				int (*close_fn)(void *ctx),
				void (*free_fn)(void *ctx), void *ctx);

/* Clock-stream buffering figures, reported by ptw_writer_get_stats(). */
void ptw_i_writer_note_clock_peak(struct ptw_writer *w, uint64_t records,
				  uint64_t bytes);

/* ---- converted traces (converters/emit) --------------------------- */

/* w writes a converted trace, which trace_processor should load fast
 * (docs/convert.md, "Loading in trace_processor"); for converters only,
 * the tracer's output does not change:
 * - w's sequences, those of now and those added later, write a timestamp
 *   that cannot be a delta (time going back) on BOOTTIME, the trace
 *   clock, instead of the sequence-scoped clock 65: the same time (their
 *   clock snapshots make 65 equal to BOOTTIME), which trace_processor
 *   reads without a clock conversion. Each sequence-scoped clock it
 *   converts from takes one of the 8 slots of its conversion cache
 *   (ClockSynchronizer::cache_): with more in use, about one conversion
 *   in six missed on a converted Chrome trace (clock_sync_cache_miss),
 *   and a miss is a path search.
 * - Uncompressed output gets a top-level field 2 (varint 0, 2 bytes;
 *   not Trace.packet, which trace_processor skips) after its first
 *   batch of packets. Guessing the format, trace_processor tries pprof's
 *   sniffer before proto's, and that one reads top-level fields for as
 *   long as they may be a pprof Profile's: every Trace.packet is field 1
 *   (Profile.sample_type), so it walked the whole input (80-210 ms of
 *   guess_trace_type_duration_ns for 42 MB); field 2 as a varint stops
 *   it.
 * - Each batch of packets (flush_bytes) is written sequence by sequence,
 *   each sequence's packets in their order (group.c): a thread
 *   sequence's clock then stays in that cache for a run of packets
 *   instead of one, which matters with more than 8 sequences. Not in
 *   flight-recorder or system mode. */
void ptw_i_writer_converted(struct ptw_writer *w);
/* Tests: a converter's batches are regrouped from their records read
 * back, not from the runs noted as they were written (the two ways must
 * write the same bytes). */
void ptw_i_writer_group_readback(struct ptw_writer *w);

/* Every timestamp of s is written absolute, on BOOTTIME (from its next
 * checkpoint on, its first packet's if it has none yet, the defaults'
 * timestamp clock: no clock field in its packets), its clock 64 unused:
 * for a sequence whose events interleave several timelines (a
 * converter's shared sequence: counters of every process), whose deltas
 * are few and would cost trace_processor a clock of its own in that
 * cache. */
void ptw_i_seq_abs_only(struct ptw_seq *s);

/* ---- flight-recorder mode and TraceStats (recorder.c) ------------ */

struct ptw_pb_buf;

/* What a TraceStats packet reports besides the writer's own figures. */
struct ptw_i_trace_stats {
	uint64_t packet_loss; /* events lost (BufferStats.trace_writer_packet_loss) */
};

/* Turns a freshly opened writer (no tracks, no events yet) into a flight
 * recorder: output goes into a ring of 'ring_bytes' (>= 64 KiB) instead of
 * the fd. Returns 0, PTW_ERR_STATE, PTW_ERR_INVALID or PTW_ERR_NOMEM. */
int ptw_i_writer_recorder_enable(struct ptw_writer *w, uint64_t ring_bytes);
/* A writer without an fd, in flight-recorder mode from the start. NULL
 * with *err filled on failure. */
struct ptw_writer *ptw_i_writer_open_recorder(const struct ptw_writer_options *opt,
					      uint64_t ring_bytes,
					      struct ptw_error *err);
int ptw_i_writer_is_recorder(const struct ptw_writer *w);
/* Flushes into the ring and prepares the snapshot prefix. */
int ptw_i_writer_recorder_prepare(struct ptw_writer *w);
/* Writes the window (prefix, pieces, with 'pend' the pending packets, and
 * a TraceStats packet if 'st') to fd, with write() only: callable from
 * the crash handler while the writer is not in use. 0 or PTW_ERR_IO
 * (EPIPE, no SIGPIPE, on a pipe or socket whose reader has gone: here and
 * in ptw_i_writer_write_pending). */
int ptw_i_writer_write_window(struct ptw_writer *w, int fd,
			      const struct ptw_i_trace_stats *st, int pend);
/* Stream mode: writes the packets not yet written (and a TraceStats
 * packet) to fd, with write() only (the crash handler). */
int ptw_i_writer_write_pending(struct ptw_writer *w, int fd,
			       const struct ptw_i_trace_stats *st);
/* Between passes of the backend, with a crash handler installed: writes
 * the queued track descriptors and (ring mode) brings the snapshot prefix
 * up to date, so that the handler only has bytes to write. */
int ptw_i_writer_crash_ready(struct ptw_writer *w);
/* Ring mode: fn(ctx, b) describes the slices open when a new piece
 * begins, one ptw_i_writer_recorder_open_add() each (a track's outermost
 * first), and returns 0 or PTW_ERR_NOMEM. It is called before the first
 * event of each piece (within whichever writer call writes that event):
 * it must describe the slices begun by the events written so far. */
void ptw_i_writer_recorder_set_open_fn(struct ptw_writer *w,
				       int (*fn)(void *ctx, struct ptw_pb_buf *b),
				       void *ctx);
/* Appends to 'b' the BEGIN of an open slice on 'track' as the snapshot
 * prefix writes it: category, name and arguments inline (scalars and
 * strings; nested arguments are left out). Out of memory sets b->oom. */
void ptw_i_writer_recorder_open_add(const struct ptw_writer *w,
				    struct ptw_pb_buf *b, uint64_t track,
				    const char *cat, const char *name,
				    const struct ptw_arg *args, uint32_t n_args);
/* Trace metadata, once per writer: trace_processor puts each entry into
 * its metadata table as "cr-<name>" (ChromeEventBundle.metadata, the one
 * key/value list a TrackEvent trace can carry there; no slice, track or
 * arg of the trace shows it). Stream mode: a packet on 's' at 'ts', now;
 * ring mode: a packet at the start of every snapshot. */
struct ptw_i_meta {
	const char *name;
	const char *str;   /* string value, or NULL: 'i' */
	int64_t i;
};
int ptw_i_writer_metadata(struct ptw_writer *w, struct ptw_seq *s, uint64_t ts,
			  const struct ptw_i_meta *m, size_t n);
/* Ring mode: events as early as 'ts' were just written (the snapshot
 * prefix begins open slices no later than the earliest event held). */
void ptw_i_writer_recorder_note_ts(struct ptw_writer *w, uint64_t ts);
/* ptw_i_writer_recorder_prepare + ptw_i_writer_write_window (no error in the
 * writer's record when the fd fails: the ring goes on). */
int ptw_i_writer_snapshot(struct ptw_writer *w, int fd,
			  const struct ptw_i_trace_stats *st);
/* Appends a TraceStats packet (loss, buffer figures, one WriterStats per
 * sequence, so that trace_processor counts each sequence's loss flags) to
 * the pending packets. */
int ptw_i_writer_trace_stats(struct ptw_writer *w,
			     const struct ptw_i_trace_stats *st);
/* The same packet into 'b', or (b NULL) to fd with write() only. */
int ptw_i_writer_put_trace_stats(const struct ptw_writer *w,
				 const struct ptw_i_trace_stats *st, int fd,
				 struct ptw_pb_buf *b);

/* A simple event (BEGIN, END or INSTANT with static strings, no args) on
 * the default track of its sequence, encoded ahead of time so that writing
 * it again skips the track and string lookups (the tracer backend keeps
 * these per thread): everything of its packet after the timestamp, the
 * sequence's header and the TrackEvent with its iids. Valid while the
 * sequence's cp_gen is 'gen': a checkpoint forgets the iids in it.
 * len 0: nothing prepared. */
#define PTW_SEQ_PREP_TAIL 32u
struct ptw_seq_prep {
	uint32_t gen;
	int8_t depth_d;   /* +1 BEGIN, -1 END, 0 INSTANT */
	uint8_t len;      /* bytes of tail used */
	uint8_t tail[PTW_SEQ_PREP_TAIL];
};

/* Prepares *p for events like one of 'type' (PTW_SIMPLE_*) with these
 * strings, which ptw_seq_simple() wrote just before on 's' (so they are
 * interned). Returns 1, or 0 if they cannot take the prepared way (no
 * default track, strings not interned now). ptw_seq_batch_put()
 * (seq_fast.h) writes it, byte for byte as ptw_seq_simple() would. */
int ptw_i_seq_prepare(struct ptw_seq *s, enum ptw_simple_type type,
		      const char *category, const char *name,
		      struct ptw_seq_prep *p);
/* The same for a BEGIN or INSTANT written just before with
 * ev->source = loc and static strings (so loc is interned by address):
 * the body then ends with its source_location_iid. */
int ptw_i_seq_prepare_loc(struct ptw_seq *s, enum ptw_simple_type type,
			  const char *category, const char *name,
			  const struct ptw_source_location *loc,
			  struct ptw_seq_prep *p);

/* REALTIME snapshots (writer_machine.c) on trace time read by 'now'
 * (the tracer's event clock, in trace ns): writes one at once, then
 * ptw_i_writer_realtime_tick() writes one when at least 50 ms of trace
 * time went by (or 'force'); flushes also do. 0 or the sticky error. */
int ptw_i_writer_set_realtime(struct ptw_writer *w,
			      uint64_t (*now)(const void *ctx), const void *ctx);
int ptw_i_writer_realtime_tick(struct ptw_writer *w, int force);

/* Forgets which string addresses (PTW_EV_STATIC_STRINGS,
 * PTW_EV_STATIC_ARG_NAMES) were interned as what, on every sequence: the
 * strings may be gone (the tracer calls it when a library that logged is
 * unloaded, tracer_unload.c) and another may come to live at the same
 * address. Iids stay valid (the tables keep the contents), so no
 * checkpoint is needed: the next use of an address interns it by content. */
void ptw_i_writer_forget_addresses(struct ptw_writer *w);

/* ---- system mode (lib/shmem/smb.h) ---------------------------------- */

/* The writer's output, whole Trace.packet records as they would go to
 * its file, goes to fn(ctx, p, n) instead (e.g. ptw_smb_route); fn
 * returns 0 or a PTW_ERR_* code, which becomes the writer's error (NOMEM
 * and IO sticky). Only on a fresh writer (nothing written yet) without
 * compression or flight recorder: else PTW_ERR_INVALID. A TraceStats
 * packet (ptw_i_writer_trace_stats) must not be asked of such a writer:
 * only the service writes those. */
int ptw_i_writer_set_output(struct ptw_writer *w,
			    int (*fn)(void *ctx, const uint8_t *p, size_t n),
			    void *ctx);
/* A writer without a file whose output goes to fn (as above). Options
 * as ptw_writer_open's; compress must be 0. NULL with *err on failure. */
struct ptw_writer *
ptw_i_writer_open_output(const struct ptw_writer_options *opt,
			 int (*fn)(void *ctx, const uint8_t *p, size_t n),
			 void *ctx, struct ptw_error *err);
/* The next event on sequence 'seq_id' (a trusted_packet_sequence_id the
 * writer gave; 0: every sequence) first clears the sequence's
 * incremental state: a checkpoint (SEQ_INCREMENTAL_STATE_CLEARED, clock
 * snapshot, interning anew). For a lost packet (ptw_smb_hooks.loss) and
 * the service's ClearIncrementalState. It only marks the sequences, so it
 * may be called from inside the writer's own output hook (the router's
 * loss hook runs there): the writer is between packets whenever it
 * writes its output. */
void ptw_i_writer_clear_incremental(struct ptw_writer *w, uint32_t seq_id);

/* Records an error in the writer's error record (code, errno, message) and
 * returns code; NOMEM and IO become sticky. */
int ptw_i_writer_fail(struct ptw_writer *w, int code, int sys_errno,
		      const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

#endif /* PTW_WRITER_INTERNAL_H */
