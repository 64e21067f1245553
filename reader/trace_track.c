/* trace_track.c - reserves TrackDescriptors like trace_processor's
 * track_event_tokenizer.cc / track_event_tracker.cc (perfetto-wire.md 3.7).
 * SPDX-License-Identifier: Apache-2.0 */
#include "trace_internal.h"

#include <stdint.h>
#include <string.h>

#include "lib/util/hashmap.h"

struct ptw_trace_track *ptw_i_trace_find_track(const struct ptw_trace *t,
					       uint64_t uuid)
{
	uintptr_t i = (uintptr_t)ptw_u64map_get(&t->track_idx, uuid);
	return i ? &t->tracks[i - 1] : NULL;
}

/* ---- legacy async tracks ------------------------------------------------- */

/* The process track of the event's track: itself, or a thread's process
 * (by pid); 0 if none. */
static uint64_t owner_process(const struct ptw_trace *t, uint64_t uuid)
{
	const struct ptw_trace_track *tr = ptw_i_trace_find_track(t, uuid);
	if (tr && tr->kind == PTW_TRACE_TRACK_PROCESS)
		return tr->uuid;
	if (!tr || tr->kind != PTW_TRACE_TRACK_THREAD)
		return 0;
	for (size_t i = 0; i < t->n_tracks; i++)
		if (t->tracks[i].kind == PTW_TRACE_TRACK_PROCESS &&
		    t->tracks[i].pid == tr->pid)
			return t->tracks[i].uuid;
	return 0;
}

/* A root name of NULL is kept as this. */
static const char no_root_name[] = "";

uint64_t ptw_i_trace_legacy_async_track(struct ptw_trace *t,
					const struct ptw_trace_event *ev,
					int local, uint64_t id,
					const char **why)
{
	/* track_event_event_importer.h ParseTrackAssociationInternal */
	uint64_t proc = owner_process(t, ev->track_uuid);
	if (local && !proc) {
		*why = "TrackEvent with local_id without process association";
		return 0;
	}
	uint64_t k[3] = {(uint64_t)local, local ? proc : 0, id};
	uint64_t key = ptw_fnv1a(PTW_FNV_INIT, k, sizeof(k));
	/* the set is named after the id's first event */
	const char *root = ptw_u64map_get(&t->async_root, key);
	if (!root) {
		root = ev->name ? ev->name : no_root_name;
		if (ptw_u64map_put(&t->async_root, key, (void *)(uintptr_t)root)) {
			t->nomem = 1;
			*why = "out of memory";
			return 0;
		}
	}
	/* ids are scoped by category (id_scope) */
	uint64_t uuid = ptw_fnv1a(key, ev->category ? ev->category : "",
				  ev->category ? strlen(ev->category) + 1 : 0);
	uuid |= 1ull << 63;
	if (ptw_i_trace_find_track(t, uuid))
		return uuid;
	struct ptw_trace_track nt;
	memset(&nt, 0, sizeof(nt));
	nt.uuid = uuid;
	nt.has_parent = local;
	nt.parent_uuid = local ? proc : 0;
	nt.name = root == no_root_name ? NULL : root;
	nt.offset = ev->offset;
	nt.legacy_async = 1;
	nt.scope = ev->category;
	void *grown = ptw_grow(t->tracks, &t->cap_tracks, t->n_tracks + 1, 64,
			       sizeof(*t->tracks));
	if (grown)
		t->tracks = grown;
	if (!grown || ptw_u64map_put(&t->track_idx, nt.uuid,
				     (void *)(uintptr_t)(t->n_tracks + 1)) < 0) {
		t->nomem = 1;
		*why = "out of memory";
		return 0;
	}
	t->tracks[t->n_tracks++] = nt;
	return uuid;
}

/* ---- track descriptors -------------------------------------------------- */

static const char *counter_unit(const Perfetto__Protos__CounterDescriptor *c)
{
	/* track_event_tokenizer.cc: the enum wins, then unit_name; builtin
	 * counter types imply their unit */
	switch (c->has_unit ? (int)c->unit : 0) {
	case 1:
		return "ns";
	case 2:
		return "count";
	case 3:
		return "bytes";
	default:
		break;
	}
	if (c->unit_name)
		return c->unit_name;
	if (c->has_type && c->type == 1)
		return "ns";
	if (c->has_type && c->type == 2)
		return "count";
	return NULL;
}

/* A descriptor trace_processor drops whatever its kind: no uuid, an
 * invalid child_ordering, a default track (uuid 0) with a parent.
 * Returns 1 (with its stat and diagnostic) if d is one. */
static int descriptor_invalid(struct ptw_trace *t, const struct pos *at,
			      uint32_t seq_id,
			      const Perfetto__Protos__TrackDescriptor *d)
{
	if (!d->has_uuid) {
		t->stats.track_descriptor_missing_uuid++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_TRACK_DESCRIPTOR, at, seq_id,
				 "TrackDescriptor without uuid is dropped");
		return 1;
	}
	if (d->has_child_ordering &&
	    (d->child_ordering < 0 || d->child_ordering > 3)) {
		t->stats.track_descriptor_invalid_child_ordering++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_TRACK_DESCRIPTOR, at, seq_id,
				 "track %llu: invalid child_ordering %d, "
				 "descriptor dropped",
				 (unsigned long long)d->uuid,
				 (int)d->child_ordering);
		return 1;
	}
	if (d->uuid == 0 && d->has_parent_uuid) {
		t->stats.track_descriptor_default_track_with_parent++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_TRACK_DESCRIPTOR, at, seq_id,
				 "descriptor of the default track (uuid 0) has "
				 "a parent");
		return 1;
	}
	return 0;
}

/* The track's kind and what goes with it (pid, tid, counter settings);
 * *name becomes the thread's or process's name if it has one, or a
 * nameless counter's default name. Branch priority: thread > process >
 * counter > state > plain. Returns 1 if the descriptor is dropped. */
static int read_kind(struct ptw_trace *t, const struct pos *at,
		     uint32_t seq_id, const Perfetto__Protos__TrackDescriptor *d,
		     struct ptw_trace_track *nt, const char **name)
{
	if (d->thread) {
		if (!d->thread->has_pid || !d->thread->has_tid) {
			t->stats.track_descriptor_thread_missing_pid_tid++;
			ptw_i_trace_diag(
				t, PTW_TRACE_DIAG_TRACK_DESCRIPTOR, at, seq_id,
				"track %llu: thread descriptor without pid and "
				"tid is dropped",
				(unsigned long long)d->uuid);
			return 1;
		}
		nt->kind = PTW_TRACE_TRACK_THREAD;
		nt->pid = d->thread->pid;
		nt->tid = d->thread->tid;
		if (d->thread->thread_name)
			*name = d->thread->thread_name;
	} else if (d->process) {
		if (!d->process->has_pid) {
			t->stats.track_descriptor_process_missing_pid++;
			ptw_i_trace_diag(
				t, PTW_TRACE_DIAG_TRACK_DESCRIPTOR, at, seq_id,
				"track %llu: process descriptor without pid is "
				"dropped",
				(unsigned long long)d->uuid);
			return 1;
		}
		nt->kind = PTW_TRACE_TRACK_PROCESS;
		nt->pid = d->process->pid;
		if (d->process->process_name)
			*name = d->process->process_name;
	} else if (d->counter) {
		nt->kind = PTW_TRACE_TRACK_COUNTER;
		nt->unit = counter_unit(d->counter);
		nt->unit_multiplier = d->counter->has_unit_multiplier
					      ? d->counter->unit_multiplier
					      : 0;
		nt->is_incremental = d->counter->has_is_incremental &&
				     d->counter->is_incremental;
		if (!*name && d->counter->has_type && d->counter->type == 1)
			*name = "thread_time";
		if (!*name && d->counter->has_type && d->counter->type == 2)
			*name = "thread_instruction_count";
	} else if (d->state) {
		nt->kind = PTW_TRACE_TRACK_STATE;
	}
	return 0;
}

/* A track described again (track_event_tracker.cc Reserve): an identical
 * reservation is fine, a conflicting one is ignored. */
static void describe_again(struct ptw_trace *t, const struct pos *at,
			   uint32_t seq_id, struct ptw_trace_track *old,
			   const struct ptw_trace_track *nt, const char *name)
{
	const char *why = NULL;
	if (old->kind != nt->kind)
		why = "kind";
	else if (old->has_parent != nt->has_parent ||
		 old->parent_uuid != nt->parent_uuid)
		why = "parent";
	else if (old->pid != nt->pid || old->tid != nt->tid)
		why = "pid/tid";
	else if (nt->kind == PTW_TRACE_TRACK_COUNTER &&
		 (old->is_incremental != nt->is_incremental ||
		  old->unit_multiplier != nt->unit_multiplier))
		why = "counter settings";
	if (why) {
		t->stats.track_descriptor_conflicting_reservation++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_TRACK_DESCRIPTOR, at, seq_id,
				 "track %llu described again with a different "
				 "%s; the new descriptor is ignored",
				 (unsigned long long)nt->uuid, why);
		return;
	}
	old->n_descriptors++;
	/* Track names: the first non-NULL one wins. Process and thread
	 * names are updated by every descriptor at parse time, so the last
	 * one wins (file order here). */
	if (name && (!old->name || nt->kind == PTW_TRACE_TRACK_THREAD ||
		     nt->kind == PTW_TRACE_TRACK_PROCESS)) {
		old->name = ptw_arena_strdup(&t->arena, name);
		if (!old->name)
			t->nomem = 1;
	}
}

/* Appends a new track (its name and unit copied into the arena). */
static void add_track(struct ptw_trace *t, struct ptw_trace_track *nt,
		      const char *name)
{
	if (name) {
		nt->name = ptw_arena_strdup(&t->arena, name);
		if (!nt->name) {
			t->nomem = 1;
			return;
		}
	}
	if (nt->unit) {
		nt->unit = ptw_arena_strdup(&t->arena, nt->unit);
		if (!nt->unit) {
			t->nomem = 1;
			return;
		}
	}
	void *grown = ptw_grow(t->tracks, &t->cap_tracks, t->n_tracks + 1, 64,
			       sizeof(*t->tracks));
	if (grown)
		t->tracks = grown;
	if (!grown ||
	    ptw_u64map_put(&t->track_idx, nt->uuid,
			   (void *)(uintptr_t)(t->n_tracks + 1)) < 0) {
		t->nomem = 1;
		return;
	}
	t->tracks[t->n_tracks++] = *nt;
}

void ptw_i_trace_add_descriptor(struct ptw_trace *t, const struct pos *at,
				uint32_t seq_id, struct seq *s,
				const Perfetto__Protos__TrackDescriptor *d)
{
	if (descriptor_invalid(t, at, seq_id, d))
		return;
	struct ptw_trace_track nt;
	memset(&nt, 0, sizeof(nt));
	nt.uuid = d->uuid;
	const char *name = NULL;
	if (d->static_or_dynamic_name_case !=
	    PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME__NOT_SET)
		name = d->name; /* all three members alias one char * */
	if (read_kind(t, at, seq_id, d, &nt, &name))
		return;
	/* parent_uuid is ignored for process and thread tracks
	 * (track_descriptor.proto) */
	if (d->has_parent_uuid && nt.kind != PTW_TRACE_TRACK_THREAD &&
	    nt.kind != PTW_TRACE_TRACK_PROCESS) {
		nt.has_parent = 1;
		nt.parent_uuid = d->parent_uuid;
	}
	nt.has_rank = d->has_sibling_order_rank;
	nt.rank = d->sibling_order_rank;
	nt.child_ordering = d->has_child_ordering ? (int)d->child_ordering : 0;
	nt.merge_behavior = d->has_sibling_merge_behavior
				    ? (int)d->sibling_merge_behavior
				    : 0;
	nt.offset = at->offset;
	nt.seq_id = seq_id;
	nt.n_descriptors = 1;

	/* The sequence's thread association (track_event_tokenizer.cc) */
	if (nt.kind == PTW_TRACE_TRACK_THREAD && s) {
		s->has_thread_track = 1;
		s->thread_track = nt.uuid;
	}
	struct ptw_trace_track *old = ptw_i_trace_find_track(t, nt.uuid);
	if (old)
		describe_again(t, at, seq_id, old, &nt, name);
	else
		add_track(t, &nt, name);
}
