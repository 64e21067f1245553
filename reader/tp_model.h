/* tp_model.h - the rows trace_processor would show for a loaded trace.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A small model of trace_processor's parsing pass (perfetto-wire.md 3.1,
 * 3.7-3.11) over the events of trace_read.h: events are sorted by
 * (ts, file order), stable; then per track a slice stack:
 *   - BEGIN pushes a slice (dur -1, depth = stack size, parent = top);
 *   - END closes the innermost open slice whose name and category match
 *     (NULL on the END matches anything); an unmatched END is ignored;
 *     annotations on the END are appended to the slice's args;
 *   - INSTANT is a dur-0 slice at the current depth;
 *   - COMPLETE (legacy_event phase 'X', duration_us) is a slice with its
 *     duration from the start (SliceTracker::Scoped), on a thread's
 *     track only; one that starts inside a complete slice and ends after
 *     it is dropped (slice_drop_overlapping_complete_event);
 *   - completed slices are popped once a later event starts after their
 *     end (slice_tracker.cc MaybeCloseStack), so depths match TP;
 *   - slices still open at the end keep dur -1.
 * Counter samples become counter rows (value as double, after the
 * descriptor's multiplier/incremental handling). Flows follow
 * flow_tracker.cc as trace_processor's protobuf importer drives it: on a
 * slice's event, legacy bind_id (v2: out begins, in+out steps, in ends
 * without closing), then flow_ids (an active id steps from its slice to
 * this one, another begins), then terminating_flow_ids (link and free);
 * typeless legacy s/t/f events (v1, ids scoped by (id, category, name))
 * bind to the top of their track's stack, 'f' without bind_to_enclosing
 * to the next slice pushed there. Step and End rows go from the earlier
 * slice (by ts) to the later one.
 * Thread time (extra counter values on a "thread_time" counter track)
 * sets slice.thread_ts / thread_dur on thread tracks.
 * Thread and process rows come from the descriptors. Each track resolves
 * its owner (thread, process or global) through its parent chain.
 *
 * Tracks that are neither process, thread nor counter tracks (and
 * undescribed uuids) are merged as trace_processor merges them by default
 * (SIBLING_MERGE_BEHAVIOR_BY_TRACK_NAME, track_event_tracker.cc
 * InternDescriptorTrackImpl): siblings with the same parent and name form
 * a set (the name is the descriptor's, or the first event's), and
 * track_compressor.cc spreads the set's uuids over as few tracks as it
 * can: BEGIN / END / INSTANT on a uuid are Begin / End / Begin+End with
 * the uuid as cookie (GetOrCreateTrackForCookie: the cookie's track, else
 * the first track with no open Begin, else a new one). An instant with
 * a legacy_event of scope GLOBAL / PROCESS goes to the one legacy global
 * instant track / its process's legacy instant track (no name).
 *
 * Events on a track whose parent chain is broken are dropped
 * (track_hierarchy_missing_uuid). Events on an undescribed uuid go to a
 * global track named after the first such event. */
#ifndef PTW_TP_MODEL_H
#define PTW_TP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ptw/error.h"
#include "trace_read.h"

enum ptw_tp_owner {
	PTW_TP_OWNER_GLOBAL = 0,
	PTW_TP_OWNER_THREAD,  /* thread track or descendant of one */
	PTW_TP_OWNER_PROCESS, /* process track or descendant of one */
};

/* Owner of a track, resolved through parent_uuid. */
struct ptw_tp_track_owner {
	uint64_t uuid;
	enum ptw_tp_owner owner;
	int32_t pid;          /* process/thread owner */
	int64_t tid;          /* thread owner */
	int broken;           /* parent chain missing, looping or too deep */
};

struct ptw_tp_slice {
	uint32_t id;          /* index in the slice array */
	int64_t ts;
	int64_t dur;          /* -1: never ended */
	uint64_t track_uuid;  /* the event's track (descriptor uuid) */
	/* trace_processor's track of the slice: the uuid's own track, one of
	 * the tracks its merge set was split into, or a legacy instant
	 * track (see ptw_tp_model_build); slices nest per tp_track. */
	uint64_t tp_track;
	const char *track_name; /* that track's name (NULL: none) */
	struct ptw_tp_track_owner owner; /* that track's owner */
	const char *name;     /* may be NULL */
	const char *category; /* may be NULL */
	uint32_t depth;
	int64_t parent_id;    /* -1: none */
	int is_instant;
	/* slice.thread_ts / thread_dur (track_event_event_importer.h): on a
	 * thread's track, the BEGIN's or INSTANT's thread time (the value
	 * of its extra counter on a track named "thread_time"); thread_dur
	 * is the END's thread time minus thread_ts when not 0, and 0 for an
	 * instant. has_*: not NULL. */
	int has_thread_ts, has_thread_dur;
	int64_t thread_ts, thread_dur;
	const struct ptw_trace_event *begin; /* the BEGIN/INSTANT event */
	const struct ptw_trace_event *end;   /* the END event, or NULL */
	uint32_t n_args;      /* begin's args then end's args */
	const struct ptw_trace_arg *const *args;
};

struct ptw_tp_counter {
	int64_t ts;
	uint64_t track_uuid;
	double value;
	const struct ptw_trace_event *event;
};

struct ptw_tp_flow {
	uint32_t slice_out;   /* ptw_tp_slice.id of the source */
	uint32_t slice_in;    /* ... of the destination */
	uint64_t flow_id;
};

struct ptw_tp_thread {
	int64_t tid;
	int32_t pid;
	const char *name;     /* NULL if none */
	uint64_t track_uuid;
};

struct ptw_tp_process {
	int32_t pid;
	const char *name;
	uint64_t track_uuid;
};


/* An END that closed nothing, or that closed a slice while slices inside
 * it were still open (improper nesting): for the checker. */
struct ptw_tp_problem {
	const struct ptw_trace_event *event;
	const char *msg;      /* static */
};

struct ptw_tp_model {
	struct ptw_tp_slice *slices;     size_t n_slices;   /* by (ts, order) */
	struct ptw_tp_counter *counters; size_t n_counters; /* by (ts, order) */
	struct ptw_tp_flow *flows;       size_t n_flows;
	struct ptw_tp_thread *threads;   size_t n_threads;  /* descriptor order */
	struct ptw_tp_process *processes; size_t n_processes;
	/* ENDs trace_processor ignores or that nest improperly, in TP order */
	struct ptw_tp_problem *unmatched_ends; size_t n_unmatched_ends;
	uint64_t misplaced_end_event;    /* TP stat */
	uint64_t slice_drop_overlapping_complete_event; /* TP stat */
	uint64_t track_hierarchy_missing_uuid; /* events dropped */
	/* flow_tracker.cc stats */
	uint64_t flow_end_without_start;
	uint64_t flow_step_without_start;
	uint64_t flow_duplicate_id;
	uint64_t flow_no_enclosing_slice;
	uint64_t flow_without_direction;
	uint64_t flow_invalid_id;        /* legacy s/t/f without unscoped_id */
	void *priv_;                     /* internal allocations */
};

/* Builds the model. Returns NULL with *err on allocation failure. The
 * model points into 't', which must outlive it. */
struct ptw_tp_model *ptw_tp_model_build(const struct ptw_trace *t,
					struct ptw_error *err);

void ptw_tp_model_free(struct ptw_tp_model *m);

/* Owner of a track uuid (a uuid never described is global). */
struct ptw_tp_track_owner ptw_tp_model_owner(const struct ptw_trace *t,
					     uint64_t uuid);

#endif /* PTW_TP_MODEL_H */
