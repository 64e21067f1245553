/* tp_model.c - the rows trace_processor would show for a loaded trace.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Follows slice_tracker.cc (stack per track, MaybeCloseStack, matching
 * END by name/category), flow_tracker.cc (Begin/Step/End) and
 * track_event_event_importer.h (flows attach to the slice an event
 * created or closed). */
#include "tp_model.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "lib/util/hashmap.h"
#include "trace_internal.h"
#include "u64map.h"

#define MAX_TRACK_DEPTH 100 /* track_event_tracker.cc */
#define MAX_SLICE_DEPTH 512 /* slice_tracker.h kMaxDepth */

struct stack {
	uint32_t *ids;
	size_t n, cap;
};

/* track_compressor.cc: one merge set (parent, name) and its tracks. */
struct cstate {
	uint64_t cookie;   /* the uuid the track is associated with */
	uint32_t nest;     /* Begins not yet Ended for that cookie */
	uint64_t tp_track; /* its key in 'stacks' */
};

struct cset {
	const char *name;
	struct cstate *v;
	size_t n, cap;
};

/* A v1 flow key (id, category, name) and the flow id it was given
 * (flow_tracker.cc GetFlowIdForV1Event), chained by hash. */
struct v1key {
	uint64_t id;
	const char *cat, *name;
	uint64_t flow_id;
	struct v1key *next;
};

/* Flow ids of 'f' events without bind_to_enclosing waiting for the next
 * slice on a track (flow_tracker.cc pending_flow_ids_map_). */
struct pending {
	uint64_t *ids;
	size_t n, cap;
};

struct priv {
	struct ptw_arena arena;
	struct ptw_u64map stacks; /* tp track -> struct stack * */
	struct ptw_u64map sets;   /* hash(parent, name) -> struct cset * */
	struct ptw_u64map uuid_set; /* uuid -> its struct cset * */
	void **all_sets;          /* struct cset *, to free */
	size_t n_sets, cap_sets;
	uint64_t next_tp_track;
	struct ptw_u64map flows;  /* flow id -> slice id + 1; NULL: inactive */
	struct ptw_u64map v1keys; /* hash -> struct v1key * chain */
	struct ptw_u64map pending;/* tp track -> struct pending * */
	void **all_pending;       /* struct pending *, to free */
	size_t n_pending, cap_pending;
	uint64_t v1_counter;      /* next v1 flow id */
	void **all_stacks;        /* struct stack *, to free */
	size_t n_stacks, cap_stacks;
	size_t cap_slices, cap_counters, cap_flows, cap_unmatched;
};


struct ptw_tp_track_owner ptw_tp_model_owner(const struct ptw_trace *t,
					     uint64_t uuid)
{
	struct ptw_tp_track_owner o;
	memset(&o, 0, sizeof(o));
	o.uuid = uuid;
	const struct ptw_trace_track *tr = ptw_trace_find_track(t, uuid);
	/* an undescribed uuid is a global root track named after its first
	 * event (track_event_tracker.cc) */
	for (int depth = 0; tr; depth++) {
		if (depth > MAX_TRACK_DEPTH) {
			o.broken = 1; /* loop or too deep */
			return o;
		}
		if (tr->kind == PTW_TRACE_TRACK_THREAD) {
			o.owner = PTW_TP_OWNER_THREAD;
			o.pid = tr->pid;
			o.tid = tr->tid;
			return o;
		}
		if (tr->kind == PTW_TRACE_TRACK_PROCESS) {
			o.owner = PTW_TP_OWNER_PROCESS;
			o.pid = tr->pid;
			return o;
		}
		if (!tr->has_parent)
			return o;
		const struct ptw_trace_track *p =
			ptw_trace_find_track(t, tr->parent_uuid);
		if (!p) {
			/* track_hierarchy_missing_uuid */
			o.broken = 1;
			return o;
		}
		tr = p;
	}
	return o;
}

/* The zeroed object of 'size' bytes that 'map' holds for 'key', made on
 * first use and listed in *all (n, cap) to be freed. NULL out of memory. */
static void *map_object(struct ptw_u64map *map, uint64_t key, size_t size,
			void ***all, size_t *n, size_t *cap)
{
	void *o = ptw_u64map_get(map, key);
	if (o)
		return o;
	o = calloc(1, size);
	void *grown = o ? ptw_grow(*all, cap, *n + 1, 64, sizeof(**all)) : NULL;
	if (grown)
		*all = grown;
	if (!grown || ptw_u64map_put(map, key, o) < 0) {
		free(o);
		return NULL;
	}
	(*all)[(*n)++] = o;
	return o;
}

static struct stack *get_stack(struct ptw_tp_model *m, uint64_t uuid)
{
	struct priv *pv = m->priv_;
	return map_object(&pv->stacks, uuid, sizeof(struct stack),
			  &pv->all_stacks, &pv->n_stacks,
			  &pv->cap_stacks);
}

/* slice_tracker.cc MaybeCloseStack: pops slices that ended before
 * 'ts' (or at it, unless both are instants) and truncates slices left
 * open inside a slice that already ended (misplaced_end_event). Returns
 * 1 when a new slice of duration 'dur' (>= 0) starts inside a complete
 * slice and ends after it (trace_processor then drops the new slice,
 * slice_drop_overlapping_complete_event), else 0. */
static int maybe_close_stack(struct ptw_tp_model *m, struct stack *st,
			     int64_t ts, int64_t dur)
{
	int incomplete_descendant = 0;
	for (long i = (long)st->n - 1; i >= 0; i--) {
		if ((size_t)i >= st->n)
			continue; /* popped below us */
		struct ptw_tp_slice *s = &m->slices[st->ids[i]];
		if (s->dur == -1) {
			incomplete_descendant = 1;
			continue;
		}
		int64_t end_ts = s->ts + s->dur;
		if (incomplete_descendant) {
			if (ts <= end_ts)
				continue;
			m->misplaced_end_event++;
			while (st->n > (size_t)i + 1) {
				struct ptw_tp_slice *c =
					&m->slices[st->ids[st->n - 1]];
				c->dur = end_ts - c->ts;
				st->n--;
			}
			st->n--; /* the slice itself */
			incomplete_descendant = 0;
			continue;
		}
		int ends_before = end_ts < ts;
		int ends_same = end_ts == ts && !(s->dur == 0 && dur == 0);
		if (ends_before || ends_same) {
			st->n--; /* StackPop pops the back, as TP does */
			continue;
		}
		if (dur != -1 && ts < end_ts && dur > end_ts - ts)
			return 1;
	}
	return 0;
}

/* MatchingIncompleteSliceIndex: innermost open slice whose category and
 * name match; NULL on the END matches anything, a NULL slice name
 * matches any END name. */
static long match_open(const struct ptw_tp_model *m, const struct stack *st,
		       const char *name, const char *cat)
{
	for (long i = (long)st->n - 1; i >= 0; i--) {
		const struct ptw_tp_slice *s = &m->slices[st->ids[i]];
		if (s->dur != -1)
			continue;
		if (cat && (!s->category || strcmp(cat, s->category) != 0))
			continue;
		if (name && s->name && strcmp(name, s->name) != 0)
			continue;
		return i;
	}
	return -1;
}

/* Keys of trace_processor tracks that are not a uuid's own track. */
#define TP_LEGACY_GLOBAL (1ull << 63)
#define TP_LEGACY_PROCESS (1ull << 62) /* | the process track's uuid */
#define TP_MERGED (3ull << 62)         /* | a counter */

/* Does trace_processor merge this track with its same-name siblings?
 * (not a process, thread or counter track, nor one with
 * sibling_merge_behavior NONE (track_event_tracker.cc); undescribed uuids
 * get a reservation with no parent and no name, so they are merged too) */
static int mergeable(const struct ptw_trace_track *tr)
{
	return !tr || (tr->kind == PTW_TRACE_TRACK_PLAIN &&
		       tr->merge_behavior != 2);
}

/* The merge set of a mergeable uuid, found on its first event (whose
 * name names the set when the descriptor has none, as
 * InternDescriptorTrackImpl's event_name does). NULL out of memory. */
static struct cset *uuid_set(struct ptw_tp_model *m,
			     const struct ptw_trace_track *tr, uint64_t uuid,
			     const char *event_name)
{
	struct priv *pv = m->priv_;
	struct cset *cs = ptw_u64map_get(&pv->uuid_set, uuid);
	if (cs)
		return cs;
	const char *name = tr ? tr->name : NULL;
	if (!name)
		name = uuid == 0 ? "Default Track" : event_name;
	uint64_t parent = tr && tr->has_parent ? tr->parent_uuid : 0;
	uint64_t h = ptw_fnv1a(PTW_FNV_INIT, &parent, sizeof(parent));
	h = name ? ptw_fnv1a(ptw_fnv1a(h, "s", 1), name, strlen(name))
		 : ptw_fnv1a(h, "n", 1);
	/* a legacy async set: (process, scope, name), apart from descriptor
	 * tracks (track_compressor.cc InternLegacyAsyncTrack) */
	if (tr && tr->legacy_async)
		h = tr->scope ? ptw_fnv1a(ptw_fnv1a(h, "a", 1), tr->scope,
					  strlen(tr->scope) + 1)
			      : ptw_fnv1a(h, "A", 1);
	cs = map_object(&pv->sets, h, sizeof(*cs), &pv->all_sets,
			&pv->n_sets, &pv->cap_sets);
	if (!cs)
		return NULL;
	if (!cs->name)
		cs->name = name;
	if (ptw_u64map_put(&pv->uuid_set, uuid, cs) < 0)
		return NULL;
	return cs;
}

/* GetOrCreateTrackForCookie: the cookie's track, else the first track
 * without an open Begin (adopted for the cookie), else a new one.
 * Returns its index, or -1 out of memory. */
static long cookie_track(struct ptw_tp_model *m, struct cset *cs,
			 uint64_t cookie)
{
	struct priv *pv = m->priv_;
	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i].cookie == cookie)
			return (long)i;
	for (size_t i = 0; i < cs->n; i++) {
		if (cs->v[i].nest == 0) {
			cs->v[i].cookie = cookie;
			return (long)i;
		}
	}
	void *grown = ptw_grow(cs->v, &cs->cap, cs->n + 1, 64, sizeof(*cs->v));
	if (!grown)
		return -1;
	cs->v = grown;
	cs->v[cs->n].cookie = cookie;
	cs->v[cs->n].nest = 0;
	cs->v[cs->n].tp_track = TP_MERGED | pv->next_tp_track++;
	return (long)cs->n++;
}

/* The trace_processor track of a slice event, with its name and owner
 * (see tp_model.h). Returns 0, or -1 out of memory. */
static int tp_track_of(struct ptw_tp_model *m, const struct ptw_trace *t,
		       const struct ptw_trace_event *ev, uint64_t *key,
		       const char **name, struct ptw_tp_track_owner *owner)
{
	const struct ptw_trace_track *tr =
		ptw_trace_find_track(t, ev->track_uuid);
	*key = ev->track_uuid;
	*name = tr ? tr->name : NULL;
	*owner = ptw_tp_model_owner(t, ev->track_uuid);
	if (mergeable(tr)) {
		struct cset *cs = uuid_set(m, tr, ev->track_uuid, ev->name);
		if (!cs)
			return -1;
		long i = cookie_track(m, cs, ev->track_uuid);
		if (i < 0)
			return -1;
		if (ev->type == PTW_TRACE_SLICE_BEGIN)
			cs->v[i].nest++;
		else if (ev->type == PTW_TRACE_SLICE_END && cs->v[i].nest)
			cs->v[i].nest--;
		*key = cs->v[i].tp_track;
		*name = cs->name;
	}
	if (ev->type == PTW_TRACE_INSTANT && ev->legacy_scope == 'g') {
		*key = TP_LEGACY_GLOBAL;
		*name = NULL;
		memset(owner, 0, sizeof(*owner));
		owner->uuid = ev->track_uuid;
	} else if (ev->type == PTW_TRACE_INSTANT && ev->legacy_scope == 'p' &&
		   owner->owner != PTW_TP_OWNER_GLOBAL) {
		/* kChromeProcessInstantBlueprint: one per process */
		owner->owner = PTW_TP_OWNER_PROCESS;
		owner->tid = 0;
		*key = TP_LEGACY_PROCESS | (uint32_t)owner->pid;
		*name = NULL;
	}
	return 0;
}

/* flow_tracker.cc InsertFlow: a flow row. */
static int insert_flow(struct ptw_tp_model *m, uint32_t out, uint32_t in,
		       uint64_t id)
{
	struct priv *pv = m->priv_;
	void *grown = ptw_grow(m->flows, &pv->cap_flows, m->n_flows + 1, 64,
			       sizeof(*m->flows));
	if (!grown)
		return -1;
	m->flows = grown;
	m->flows[m->n_flows].slice_out = out;
	m->flows[m->n_flows].slice_in = in;
	m->flows[m->n_flows].flow_id = id;
	m->n_flows++;
	return 0;
}

/* A row between the flow's current slice and 'slice', the earlier one
 * (by ts) as the source (flow_tracker.cc Step and End). */
static int link_by_ts(struct ptw_tp_model *m, uint32_t prev, uint32_t slice,
		      uint64_t id)
{
	int64_t pts = m->slices[prev].ts, nts = m->slices[slice].ts;
	return insert_flow(m, pts > nts ? slice : prev,
			   pts <= nts ? slice : prev, id);
}

/* The slice a flow id points at (+1), 0 if the id is not active. */
static uint32_t flow_get(const struct ptw_tp_model *m, uint64_t id)
{
	const struct priv *pv = m->priv_;
	return (uint32_t)(uintptr_t)ptw_u64map_get(&pv->flows, id);
}

static int flow_set(struct ptw_tp_model *m, uint64_t id, uint32_t plus1)
{
	struct priv *pv = m->priv_;
	return ptw_u64map_put(&pv->flows, id, (void *)(uintptr_t)plus1) < 0
		       ? -1
		       : 0;
}

/* flow_tracker.cc Begin(SliceId): a second Begin on an active id is
 * ignored (flow_duplicate_id), the id keeps its slice. */
static int flow_begin(struct ptw_tp_model *m, uint32_t slice, uint64_t id)
{
	if (flow_get(m, id)) {
		m->flow_duplicate_id++;
		return 0;
	}
	return flow_set(m, id, slice + 1);
}

/* Step(SliceId): links the id's slice to this one, which it moves to. */
static int flow_step(struct ptw_tp_model *m, uint32_t slice, uint64_t id)
{
	uint32_t prev = flow_get(m, id);
	if (!prev) {
		m->flow_step_without_start++;
		return 0;
	}
	if (link_by_ts(m, prev - 1, slice, id))
		return -1;
	return flow_set(m, id, slice + 1);
}

/* End(SliceId, close): links the id's slice to this one; the id stays
 * where it was (and active) unless 'close'. */
static int flow_end(struct ptw_tp_model *m, uint32_t slice, uint64_t id,
		    int close)
{
	uint32_t prev = flow_get(m, id);
	if (!prev) {
		m->flow_end_without_start++;
		return 0;
	}
	if (close && flow_set(m, id, 0))
		return -1;
	return link_by_ts(m, prev - 1, slice, id);
}

/* The slice on top of a track's stack (SliceTracker::
 * GetTopmostSliceOnTrack: the last one pushed and not popped, which may
 * have ended already), or -1. */
static long topmost(struct ptw_tp_model *m, uint64_t track)
{
	struct priv *pv = m->priv_;
	const struct stack *st = ptw_u64map_get(&pv->stacks, track);
	return st && st->n ? (long)st->ids[st->n - 1] : -1;
}

static int str_same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static uint64_t str_hash(uint64_t h, const char *s)
{
	if (!s)
		return ptw_fnv1a(h, "\xff", 1); /* NULL differs from "" */
	return ptw_fnv1a(ptw_fnv1a(h, s, strlen(s)), "", 1);
}

/* flow_tracker.cc GetFlowIdForV1Event: (id, category, name) get flow ids
 * 0, 1, 2, ... in the order they are first seen; the same space as v2
 * bind ids and flow_ids. */
static int v1_flow_id(struct ptw_tp_model *m, uint64_t id, const char *cat,
		      const char *name, uint64_t *out)
{
	struct priv *pv = m->priv_;
	uint64_t h = ptw_fnv1a(PTW_FNV_INIT, &id, sizeof(id));
	h = str_hash(str_hash(h, cat), name);
	struct v1key *head = ptw_u64map_get(&pv->v1keys, h);
	for (struct v1key *k = head; k; k = k->next) {
		if (k->id == id && str_same(k->cat, cat) &&
		    str_same(k->name, name)) {
			*out = k->flow_id;
			return 0;
		}
	}
	struct v1key *k = ptw_arena_alloc(&pv->arena, sizeof(*k));
	if (!k)
		return -1;
	k->id = id;
	k->cat = cat;
	k->name = name;
	k->flow_id = pv->v1_counter++;
	k->next = head;
	*out = k->flow_id;
	return ptw_u64map_put(&pv->v1keys, h, k) < 0 ? -1 : 0;
}

/* End(TrackId, id, bind_enclosing = false): waits for the next slice
 * that begins on the track. */
static int pend_flow(struct ptw_tp_model *m, uint64_t track, uint64_t id)
{
	struct priv *pv = m->priv_;
	struct pending *p = map_object(&pv->pending, track, sizeof(*p),
				       &pv->all_pending,
				       &pv->n_pending, &pv->cap_pending);
	if (!p)
		return -1;
	void *grown = ptw_grow(p->ids, &p->cap, p->n + 1, 64, sizeof(*p->ids));
	if (!grown)
		return -1;
	p->ids = grown;
	p->ids[p->n++] = id;
	return 0;
}

/* flow_tracker.cc ClosePendingEventsOnTrack, run when a slice is pushed
 * on a track: each waiting id links its slice to the new one (no ts
 * ordering). The id's slice is read with FlatHashMap::operator[], which
 * makes an inactive id active at slice 0 (a value-initialised SliceId):
 * the row then leaves the trace's first slice. */
static int close_pending(struct ptw_tp_model *m, uint64_t track,
			 uint32_t slice)
{
	struct priv *pv = m->priv_;
	struct pending *p = ptw_u64map_get(&pv->pending, track);
	if (!p)
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		uint32_t prev = flow_get(m, p->ids[i]);
		if (!prev) {
			prev = 1;
			if (flow_set(m, p->ids[i], prev))
				return -1;
		}
		if (insert_flow(m, prev - 1, slice, p->ids[i]))
			return -1;
	}
	p->n = 0;
	return 0;
}

/* track_event_event_importer.h MaybeParseFlowEventV2: the event's
 * legacy bind_id, bound to its slice. */
static int flows_v2(struct ptw_tp_model *m, const struct ptw_trace_event *ev,
		    uint32_t slice)
{
	if (!ev->has_bind_id)
		return 0;
	switch (ev->flow_direction) {
	case 2: /* FLOW_OUT */
		return flow_begin(m, slice, ev->bind_id);
	case 3: /* FLOW_INOUT */
		return flow_step(m, slice, ev->bind_id);
	case 1: /* FLOW_IN */
		return flow_end(m, slice, ev->bind_id, 0);
	default:
		m->flow_without_direction++;
		return 0;
	}
}

/* MaybeParseFlowEvents: v2 first, then flow_ids (an active id steps,
 * another begins), then terminating_flow_ids (an active id ends and is
 * freed; an inactive one is ignored). */
static int do_flows(struct ptw_tp_model *m, const struct ptw_trace_event *ev,
		    uint32_t slice)
{
	if (flows_v2(m, ev, slice))
		return -1;
	for (uint32_t i = 0; i < ev->n_flow_ids; i++) {
		uint64_t id = ev->flow_ids[i];
		int rc = flow_get(m, id) ? flow_step(m, slice, id)
					 : flow_begin(m, slice, id);
		if (rc)
			return -1;
	}
	for (uint32_t i = 0; i < ev->n_terminating_flow_ids; i++) {
		uint64_t id = ev->terminating_flow_ids[i];
		if (flow_get(m, id) && flow_end(m, slice, id, 1))
			return -1;
	}
	return 0;
}

/* track_event_event_importer.h ParseFlowEventV1: a typeless event with
 * legacy phase s, t or f, bound to the top of its track's stack when
 * trace_processor reads it (f without bind_to_enclosing: to the next
 * slice pushed there). */
static int legacy_flow(struct ptw_tp_model *m, const struct ptw_trace_event *ev)
{
	if (!ev->has_legacy_id) {
		m->flow_invalid_id++;
		return 0;
	}
	uint64_t id;
	if (v1_flow_id(m, ev->legacy_id, ev->category, ev->name, &id))
		return -1;
	if (ev->legacy_phase == 'f' && !ev->bind_to_enclosing)
		return pend_flow(m, ev->track_uuid, id);
	long top = topmost(m, ev->track_uuid);
	if (top < 0) {
		m->flow_no_enclosing_slice++;
		return 0;
	}
	switch (ev->legacy_phase) {
	case 's':
		return flow_begin(m, (uint32_t)top, id);
	case 't':
		return flow_step(m, (uint32_t)top, id);
	default:
		return flow_end(m, (uint32_t)top, id, 0);
	}
}

static int set_args(struct ptw_tp_model *m, struct ptw_tp_slice *s)
{
	struct priv *pv = m->priv_;
	uint32_t n = s->begin->n_args + (s->end ? s->end->n_args : 0);
	s->n_args = n;
	s->args = NULL;
	if (!n)
		return 0;
	const struct ptw_trace_arg **a =
		ptw_arena_alloc(&pv->arena, n * sizeof(*a));
	if (!a)
		return -1;
	uint32_t k = 0;
	for (uint32_t i = 0; i < s->begin->n_args; i++)
		a[k++] = &s->begin->args[i];
	for (uint32_t i = 0; s->end && i < s->end->n_args; i++)
		a[k++] = &s->end->args[i];
	s->args = a;
	return 0;
}

static int add_problem(struct ptw_tp_model *m, const struct ptw_trace_event *ev,
		       const char *msg)
{
	struct priv *pv = m->priv_;
	void *grown = ptw_grow(m->unmatched_ends, &pv->cap_unmatched,
			       m->n_unmatched_ends + 1, 64,
			       sizeof(*m->unmatched_ends));
	if (!grown)
		return -1;
	m->unmatched_ends = grown;
	m->unmatched_ends[m->n_unmatched_ends].event = ev;
	m->unmatched_ends[m->n_unmatched_ends].msg = msg;
	m->n_unmatched_ends++;
	return 0;
}

/* The event's thread time: AddExtraCounterValue takes the value of each
 * extra counter whose track is named "thread_time" (a CounterDescriptor
 * of type COUNTER_THREAD_TIME_NS without a name is named so), the last
 * one winning, cast to int64. Returns 1 with *out set, else 0. */
static int thread_time(const struct ptw_trace *t,
		       const struct ptw_trace_event *ev, int64_t *out)
{
	int found = 0;
	for (uint32_t i = 0; i < ev->n_extra_counters; i++) {
		const struct ptw_trace_track *tr =
			ptw_trace_find_track(t, ev->extra_counter_tracks[i]);
		double v = ev->extra_counter_values[i];
		if (!tr || !tr->name || strcmp(tr->name, "thread_time") != 0 ||
		    !(v > -9.2e18 && v < 9.2e18))
			continue;
		*out = (int64_t)v;
		found = 1;
	}
	return found;
}

/* The slice stack of ev's track as trace_processor keys it (with the
 * track's name and owner), after the slices that ended before ev closed
 * (dur: ev's duration, -1 for an END). NULL on error. */
static struct stack *stack_at(struct ptw_tp_model *m, const struct ptw_trace *t,
			      const struct ptw_trace_event *ev, int64_t dur,
			      uint64_t *key, const char **tname,
			      struct ptw_tp_track_owner *owner, int *overlap)
{
	if (tp_track_of(m, t, ev, key, tname, owner))
		return NULL;
	struct stack *st = get_stack(m, *key);
	if (st && maybe_close_stack(m, st, ev->ts, dur) && overlap)
		*overlap = 1;
	return st;
}

static int start_slice(struct ptw_tp_model *m, const struct ptw_trace *t,
		       const struct ptw_trace_event *ev, int64_t dur)
{
	struct priv *pv = m->priv_;
	uint64_t key;
	const char *tname;
	struct ptw_tp_track_owner owner;
	int overlap = 0;
	struct stack *st = stack_at(m, t, ev, dur, &key, &tname, &owner,
				    &overlap);
	if (!st)
		return -1;
	if (overlap) {
		m->slice_drop_overlapping_complete_event++;
		return 0;
	}
	if (st->n >= MAX_SLICE_DEPTH)
		return 0; /* slice_max_depth_exceeded: dropped */
	void *grown = ptw_grow(m->slices, &pv->cap_slices, m->n_slices + 1, 64,
			       sizeof(*m->slices));
	if (!grown)
		return -1;
	m->slices = grown;
	if (!(grown = ptw_grow(st->ids, &st->cap, st->n + 1, 64,
			       sizeof(*st->ids))))
		return -1;
	st->ids = grown;
	uint32_t id = (uint32_t)m->n_slices;
	struct ptw_tp_slice *s = &m->slices[m->n_slices++];
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->ts = ev->ts;
	s->dur = dur;
	s->track_uuid = ev->track_uuid;
	s->tp_track = key;
	s->track_name = tname;
	s->owner = owner;
	s->name = ev->name;
	s->category = ev->category;
	s->depth = (uint32_t)st->n;
	s->parent_id = st->n ? (int64_t)st->ids[st->n - 1] : -1;
	s->is_instant = ev->type == PTW_TRACE_INSTANT;
	/* ParseThreadBeginEvent / ParseThreadInstantEvent (utid_ set);
	 * ParseThreadCompleteEvent sets thread_dur from legacy_event's
	 * thread_duration_us, which is not read here (0) */
	if (owner.owner == PTW_TP_OWNER_THREAD &&
	    thread_time(t, ev, &s->thread_ts)) {
		s->has_thread_ts = 1;
		s->has_thread_dur = s->is_instant ||
				    ev->type == PTW_TRACE_COMPLETE;
	}
	s->begin = ev;
	st->ids[st->n++] = id;
	if (set_args(m, s))
		return -1;
	/* StackPush's callback first, then the event's own flows */
	if (close_pending(m, ev->track_uuid, id))
		return -1;
	return do_flows(m, ev, id);
}

static int end_slice(struct ptw_tp_model *m, const struct ptw_trace *t,
		     const struct ptw_trace_event *ev)
{
	uint64_t key;
	const char *tname;
	struct ptw_tp_track_owner owner;
	struct stack *st = stack_at(m, t, ev, -1, &key, &tname, &owner, NULL);
	if (!st)
		return -1;
	long i = st->n ? match_open(m, st, ev->name, ev->category) : -1;
	if (i < 0) {
		/* ignored by TP without any stat */
		return add_problem(m, ev,
				   st->n ? "SLICE_END matches no open slice "
					   "(name or category differ)"
					 : "SLICE_END without an open slice on "
					   "its track");
	}
	uint32_t id = st->ids[i];
	struct ptw_tp_slice *s = &m->slices[id];
	/* closing a slice with open slices inside it: TP truncates them
	 * later (misplaced_end_event); the checker calls it unbalanced */
	for (size_t k = (size_t)i + 1; k < st->n; k++) {
		if (m->slices[st->ids[k]].dur == -1) {
			if (add_problem(m, ev,
					"SLICE_END closes a slice that "
					"still has open slices inside it"))
				return -1;
			break;
		}
	}
	s->dur = ev->ts - s->ts;
	s->end = ev;
	/* ParseThreadEndEvent: thread_dur only when the delta is not 0 */
	int64_t tt, d;
	if (s->has_thread_ts && thread_time(t, ev, &tt) &&
	    !__builtin_sub_overflow(tt, s->thread_ts, &d) && d != 0) {
		s->thread_dur = d;
		s->has_thread_dur = 1;
	}
	if (set_args(m, s))
		return -1;
	if ((size_t)i == st->n - 1)
		st->n--;
	return do_flows(m, ev, id);
}

static int add_counter(struct ptw_tp_model *m, const struct ptw_trace_event *ev,
		       uint64_t track, double v)
{
	struct priv *pv = m->priv_;
	void *grown = ptw_grow(m->counters, &pv->cap_counters,
			       m->n_counters + 1, 64, sizeof(*m->counters));
	if (!grown)
		return -1;
	m->counters = grown;
	struct ptw_tp_counter *c = &m->counters[m->n_counters++];
	c->ts = ev->ts;
	c->track_uuid = track;
	c->value = v;
	c->event = ev;
	return 0;
}

struct order {
	int64_t ts;
	size_t idx;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int build(struct ptw_tp_model *m, const struct ptw_trace *t)
{
	size_t n;
	const struct ptw_trace_event *evs = ptw_trace_events(t, &n);
	struct order *ord = malloc((n ? n : 1) * sizeof(*ord));
	if (!ord)
		return -1;
	for (size_t i = 0; i < n; i++) {
		ord[i].ts = evs[i].ts;
		ord[i].idx = i;
	}
	/* TP's sorter: (ts, insertion order) */
	qsort(ord, n, sizeof(*ord), cmp_order);
	int rc = 0;
	for (size_t k = 0; k < n && rc == 0; k++) {
		const struct ptw_trace_event *ev = &evs[ord[k].idx];
		struct ptw_tp_track_owner o =
			ptw_tp_model_owner(t, ev->track_uuid);
		if (o.broken) {
			m->track_hierarchy_missing_uuid++;
			continue;
		}
		switch (ev->type) {
		case PTW_TRACE_SLICE_BEGIN:
			rc = start_slice(m, t, ev, -1);
			break;
		case PTW_TRACE_INSTANT:
			rc = start_slice(m, t, ev, 0);
			break;
		case PTW_TRACE_COMPLETE:
			/* ParseThreadCompleteEvent: on a thread only */
			if (o.owner != PTW_TP_OWNER_THREAD)
				rc = add_problem(m, ev, "TrackEvent with phase "
						 "X without thread association");
			else
				rc = start_slice(m, t, ev, ev->dur);
			break;
		case PTW_TRACE_SLICE_END:
			rc = end_slice(m, t, ev);
			break;
		case PTW_TRACE_COUNTER:
			rc = add_counter(m, ev, ev->track_uuid,
					 ev->counter_value);
			break;
		case PTW_TRACE_LEGACY_FLOW:
			rc = legacy_flow(m, ev);
			break;
		default:
			break;
		}
		for (uint32_t i = 0; rc == 0 && i < ev->n_extra_counters; i++)
			rc = add_counter(m, ev, ev->extra_counter_tracks[i],
					 ev->extra_counter_values[i]);
	}
	free(ord);
	if (rc)
		return -1;

	/* threads and processes, in descriptor order */
	size_t nt;
	const struct ptw_trace_track *tr = ptw_trace_tracks(t, &nt);
	size_t nth = 0, npr = 0;
	for (size_t i = 0; i < nt; i++) {
		nth += tr[i].kind == PTW_TRACE_TRACK_THREAD;
		npr += tr[i].kind == PTW_TRACE_TRACK_PROCESS;
	}
	m->threads = calloc(nth ? nth : 1, sizeof(*m->threads));
	m->processes = calloc(npr ? npr : 1, sizeof(*m->processes));
	if (!m->threads || !m->processes)
		return -1;
	for (size_t i = 0; i < nt; i++) {
		if (tr[i].kind == PTW_TRACE_TRACK_THREAD) {
			struct ptw_tp_thread *th = &m->threads[m->n_threads++];
			th->tid = tr[i].tid;
			th->pid = tr[i].pid;
			th->name = tr[i].name;
			th->track_uuid = tr[i].uuid;
		} else if (tr[i].kind == PTW_TRACE_TRACK_PROCESS) {
			struct ptw_tp_process *p =
				&m->processes[m->n_processes++];
			p->pid = tr[i].pid;
			p->name = tr[i].name;
			p->track_uuid = tr[i].uuid;
		}
	}
	return 0;
}

struct ptw_tp_model *ptw_tp_model_build(const struct ptw_trace *t,
					struct ptw_error *err)
{
	struct ptw_tp_model *m = calloc(1, sizeof(*m));
	struct priv *pv = calloc(1, sizeof(*pv));
	if (!m || !pv) {
		free(m);
		free(pv);
		ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	m->priv_ = pv;
	if (build(m, t)) {
		ptw_tp_model_free(m);
		ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	return m;
}

void ptw_tp_model_free(struct ptw_tp_model *m)
{
	if (!m)
		return;
	struct priv *pv = m->priv_;
	if (pv) {
		for (size_t i = 0; i < pv->n_stacks; i++) {
			free(((struct stack *)pv->all_stacks[i])->ids);
			free(pv->all_stacks[i]);
		}
		free(pv->all_stacks);
		for (size_t i = 0; i < pv->n_sets; i++) {
			free(((struct cset *)pv->all_sets[i])->v);
			free(pv->all_sets[i]);
		}
		free(pv->all_sets);
		ptw_u64map_free(&pv->sets);
		ptw_u64map_free(&pv->uuid_set);
		ptw_u64map_free(&pv->stacks);
		ptw_u64map_free(&pv->flows);
		ptw_u64map_free(&pv->v1keys);
		ptw_u64map_free(&pv->pending);
		for (size_t i = 0; i < pv->n_pending; i++) {
			free(((struct pending *)pv->all_pending[i])->ids);
			free(pv->all_pending[i]);
		}
		free(pv->all_pending);
		ptw_arena_free(&pv->arena);
		free(pv);
	}
	free(m->slices);
	free(m->counters);
	free(m->flows);
	free(m->threads);
	free(m->processes);
	free(m->unmatched_ends);
	free(m);
}
