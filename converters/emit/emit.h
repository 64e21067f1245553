/* emit.h - turns legacy trace events (struct ptw_cv_event) into Perfetto
 * protobuf through the ptw writer, so that trace_processor shows the same
 * tables as it does for the equivalent Chrome JSON.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Usage: create an emitter on an open writer; for every input call
 * ptw_emit_begin_input(), feed its events to ptw_emit_event() (it has the
 * ptw_cv_event_fn signature, so readers can call it directly), then
 * ptw_emit_end_input(); finally ptw_emit_finish() and ptw_writer_close().
 *
 * Semantics (corpus README section 5, perfetto-wire.md 6.2):
 *  - PTW_EMIT_XFORM inputs (AppleTrace runs) are read as the exporter's "X
 *    form": B/E are paired LIFO per thread whatever their names, each pair
 *    being a complete slice placed at its E; unmatched E's are dropped; B's
 *    still open at the end of the input stay open (dur -1), placed after
 *    everything else at their timestamp. An E earlier than its B drops
 *    the pair while the B is still queued; once the B was written (a later
 *    event released it), the E ends it at the B's time (backward_ends).
 *  - The first PTW_EM_THREAD_SEQS threads of an input write on sequences
 *    of their own (the thread's track as default track: delta timestamps,
 *    no track uuid); other events go on the writer's simulation
 *    sequence.
 *  - PTW_EMIT_CHROME inputs keep Chrome semantics: B and E are separate
 *    (an E closes the innermost open slice with its name and category), X
 *    is a complete slice; s/t/f flows, bind_id/flow_in/flow_out,
 *    i/I with scope t/p/g, b/e/n async (global, or per process with
 *    id2.local), C counters ("<name> <key>", "<name> id: <id> <key>"),
 *    M process_name/thread_name.
 *  - trace_processor sorts JSON events by ts and, at equal ts, puts E
 *    first, then X by decreasing dur, then everything else in file order.
 *    Protobuf keeps file order at equal ts, so each thread's events wait
 *    in a small queue until no event at the same ts can come any more
 *    (an event with a later ts arrived on the thread), then go out in
 *    that order: ends, begins of longer slices first, instants, open B's.
 *    Zero-duration slices are written as instants, ends without names.
 *    The queue only holds events at the thread's latest ts (plus future
 *    ends of complete X events, and, when an open B shares its ts with
 *    other events, the events after it until the B is closed, at most
 *    PTW_EMIT_MAX_HELD; beyond that the B is assumed to be closed later).
 *  - tid 0 is the pid (AppleTrace's main thread). Empty names become
 *    "[No name]" where trace_processor shows that.
 *  - Inputs are merged in order; a pid already used by an earlier input
 *    is kept apart as a separate process (its own process and thread
 *    tracks, same pid number) unless remapped.
 *
 * Thread rule: one thread at a time, like the writer. */
#ifndef PTW_EMIT_H
#define PTW_EMIT_H

#include <stdint.h>

#include "converters/common/cv_event.h"
#include "ptw/error.h"
#include "ptw/writer.h"

/* Events one thread's queue may hold while an open B decides their order
 * before it gives up waiting for the B's end. */
#define PTW_EMIT_MAX_HELD 65536u

/* Writer option checkpoint_packets for converted traces (the writer's
 * default is 16384): a converted file is read whole, and every checkpoint
 * makes each sequence write its interned strings again (2 MB of a 37 MB
 * conversion of bench_convert's chrome.json). The intern tables stay
 * bounded by max_interned, which still forces a checkpoint when full. */
#define PTW_EMIT_CHECKPOINT_PACKETS (1u << 20)

enum ptw_emit_mode {
	PTW_EMIT_CHROME = 0, /* Chrome JSON semantics */
	PTW_EMIT_XFORM = 1,  /* AppleTrace run: B/E paired LIFO (X form) */
};

/* An id rewrite: events with 'from' get 'to'. */
struct ptw_emit_remap {
	uint32_t from;
	uint32_t to;
};

/* Per-input settings; zeroed means Chrome semantics, no shift, no remap. */
struct ptw_emit_input {
	enum ptw_emit_mode mode;
	int64_t shift_ns;                   /* added to every timestamp */
	const struct ptw_emit_remap *pids;  /* pid rewrites (copied) */
	uint32_t n_pids;
	const struct ptw_emit_remap *tids;  /* tid rewrites, any process */
	uint32_t n_tids;
	/* Events a thread's queue may hold for an open B; 0: default
	 * PTW_EMIT_MAX_HELD. */
	uint32_t max_held;
	/* Non-zero: every event takes the general path, none the short path
	 * for plain B/E/instant events (emit_fast.c). The output is the same
	 * byte for byte; tests compare the two. */
	int general_path_only;
};

struct ptw_emit_stats {
	uint64_t events_in;          /* events received */
	uint64_t by_phase[128];      /* events received per phase letter */
	uint64_t dropped;            /* not representable (no ts, negative ts,
				      * unmatched end, no id, ...) */
	uint64_t slices;             /* complete slices written */
	uint64_t open_slices;        /* B's left open (X form: at their ts;
				      * Chrome: on their thread's track) */
	uint64_t instants;
	uint64_t counters;
	uint64_t flows;              /* flow events written: v1 s/t/f, and
				      * slices carrying a v2 bind_id */
	uint64_t pid_collisions;     /* pids kept apart across inputs */
	uint64_t forced_releases;    /* queues released at max_held */
	uint64_t max_queue;          /* longest thread queue seen */
	uint64_t sort_index_late;    /* M *_sort_index after the track's
				      * descriptor was written: not written */
	uint64_t backward_ends;      /* X-form E's earlier than their B, which
				      * was already written: ended at the B's
				      * ts (a zero-length slice) */
	uint64_t short_path;         /* events taken by the short path */
	uint64_t batched;            /* of those, handed over in batches */
	uint64_t lane;               /* of those, taken by the X-form lane
				      * (released through prepared packets) */
	uint64_t spilled;            /* X slices partly overlapping an X of
				      * their thread, written on an overlap
				      * track (trace_processor's stat
				      * slice_spill_overlapping_complete_event) */
	uint64_t args_renamed;       /* args whose key has a '[' or ']':
				      * trace_processor's protobuf import
				      * shows them with '_' instead */
	uint64_t args_dropped;       /* arg values beyond the writer's
				      * PTW_MAX_ARG_NODES / _DEPTH, and args
				      * past PTW_MAX_ANNOTATIONS: left out */
	uint64_t thread_times;       /* events written with thread time (tts):
				      * each is also a thread_time counter
				      * row in trace_processor */
	uint64_t out_of_order;       /* Chrome events earlier than an event
				      * read before them on their thread (or,
				      * for async events, than an async event
				      * read before them): written in file
				      * order, where trace_processor would
				      * sort them (put them in order first:
				      * cv_sort.h) */
	uint64_t unwritten_by_phase[128]; /* events of a phase the converter
				      * does not write (e.g. "Q"): only their
				      * process and thread exist */
	uint64_t x_without_dur;      /* X events without a "dur": dropped
				      * (also in 'dropped'), as
				      * trace_processor drops them */
	/* Chrome JSON callstacks (sf/esf ids, stack/estack arrays) */
	uint64_t stacks;             /* events written with a callstack */
	uint64_t stack_unknown;      /* sf/esf ids not in "stackFrames":
				      * written without a callstack */
	uint64_t stack_cycles;       /* stacks whose parent links loop:
				      * written without a callstack */
	uint64_t stack_truncated;    /* stacks deeper than PTW_MAX_FRAMES:
				      * their innermost frames kept */
	uint64_t stack_invalid;      /* stack/estack not an array of
				      * strings: ignored */
	uint64_t stack_ignored;      /* stacks on events that are not
				      * thread slices or instants (async,
				      * counters, flows): not written */
};

struct ptw_emit;
struct ptw_cv_stacks;

/* The emitter's callstack frames (converters/chrome_json/cv_stacks.h),
 * created on first use (NULL: out of memory): a Chrome JSON reader fills
 * it from "stackFrames" (ptw_cv_json_read_opts.stacks; call
 * ptw_cv_stacks_next_input first for each input), and the emitter finds
 * the events' "sf" / "esf" ids in it. */
struct ptw_cv_stacks *ptw_emit_stacks(struct ptw_emit *em);

/* Creates an emitter writing to 'w' (on its simulation sequence, ts in
 * ns). Returns NULL with *err on allocation failure. The writer must
 * outlive the emitter, and gets events from this one emitter only: the
 * emitter hands the writer names it owns as PTW_EV_STATIC_STRINGS (interned
 * by pointer), so after ptw_emit_destroy() the writer may only be closed
 * (a later emitter's strings could reuse those addresses). */
struct ptw_emit *ptw_emit_create(struct ptw_writer *w, struct ptw_error *err);

/* Default names (like Catapult's add_process_metadata): used unless the
 * trace's own M events name the process/thread. 'name' is copied. */
int ptw_emit_name_process(struct ptw_emit *em, uint32_t pid, const char *name);
int ptw_emit_name_thread(struct ptw_emit *em, uint32_t pid, uint32_t tid,
			 const char *name);

/* Starts the next input. Returns 0, PTW_ERR_INVALID (an input is already
 * open) or PTW_ERR_NOMEM. */
int ptw_emit_begin_input(struct ptw_emit *em, const struct ptw_emit_input *in,
			 struct ptw_error *err);

/* Consumes one event ('em' is the struct ptw_emit). Returns 0 or a
 * negative PTW_ERR_* (writer errors, memory) with *err filled. */
int ptw_emit_event(void *em, const struct ptw_cv_event *ev,
		   struct ptw_error *err);
/* The batch form of ptw_emit_event() for readers that offer one
 * (ptw_cv_batch_fn): takes the simple events (B, E, i, C) of an
 * AppleTrace input while they fit the short paths; the rest go to
 * ptw_emit_event(). The output is byte for byte that of ptw_emit_event()
 * alone. */
int ptw_emit_simple_batch(void *em, const struct ptw_cv_batch *b,
			  size_t *taken, struct ptw_error *err);

/* Takes only the M process_sort_index / thread_sort_index events of the
 * current input and ignores the rest: a first pass over
 * an input whose sort indexes may come after their process's or thread's
 * first events (Chrome writes its metadata last). A track's rank must be in
 * its first descriptor, written when the track is first used; a rank that
 * arrives later is only counted (sort_index_late). Call it for every event
 * of the input after ptw_emit_begin_input(), then ptw_emit_event() for
 * every event as usual. Same signature and returns as ptw_emit_event(). */
int ptw_emit_sort_index_event(void *em, const struct ptw_cv_event *ev,
			      struct ptw_error *err);

/* Ends the current input: flushes its queues; X-form B's still open are
 * written as slices that never end. */
int ptw_emit_end_input(struct ptw_emit *em, struct ptw_error *err);

/* Writes the final process/thread names. Call once, after the last input
 * and before ptw_writer_close(). */
int ptw_emit_finish(struct ptw_emit *em, struct ptw_error *err);

void ptw_emit_get_stats(const struct ptw_emit *em, struct ptw_emit_stats *out);

/* Frees the emitter (not the writer). NULL is a no-op. */
void ptw_emit_destroy(struct ptw_emit *em);

#endif /* PTW_EMIT_H */
