/* track.c - the track table and TrackDescriptor packets (the public
 * ptw_writer_add_*_track calls).
 * SPDX-License-Identifier: Apache-2.0 */
#include "track.h"

#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "writer_state.h"

void ptw_tracks_free(struct ptw_tracks *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

uint64_t ptw_tracks_add(struct ptw_tracks *t, enum ptw_track_kind kind)
{
	if (t->n == t->cap) {
		uint64_t cap = t->cap ? t->cap * 2 : 64;
		if (cap > SIZE_MAX / sizeof(*t->v))
			return 0;
		void *p = realloc(t->v, (size_t)cap * sizeof(*t->v));
		if (!p)
			return 0;
		t->v = p;
		t->cap = cap;
	}
	struct ptw_track *tr = &t->v[t->n++];
	memset(tr, 0, sizeof(*tr));
	tr->kind = (uint8_t)kind;
	return t->n;
}

/* Checks an optional string argument; 'what' names it in the message. */
static int ptw_track_check_str(struct ptw_writer *w, const char *s,
			       int required, const char *what)
{
	if (!s) {
		if (!required)
			return 0;
		return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
					 "track %s is NULL", what);
	}
	size_t n = strnlen(s, PTW_MAX_STRING_LEN + 1);
	if (n > PTW_MAX_STRING_LEN)
		return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
					 "track %s longer than %u bytes", what,
					 PTW_MAX_STRING_LEN);
	return 0;
}

/* Everything a descriptor may carry; NULL/0 fields are left out. */
struct ptw_track_desc {
	uint64_t uuid;
	uint64_t parent;
	const char *name;
	int32_t rank; /* < 0: none */
	int is_counter;
	const char *unit_name;
	const struct ptw_track *tr; /* process/thread identity */
	const char *pt_name;        /* process_name / thread_name */
};

/* One packet on the descriptor sequence: explicit timestamp 0 and no
 * clock id (trace default clock), so it never touches any sequence's
 * incremental clock and precedes every event in trace time. */
static int ptw_track_emit(struct ptw_writer *w, const struct ptw_track_desc *d)
{
	if (w->sticky)
		return w->sticky;
	struct ptw_pb_buf *b = &w->pend;
	size_t mark = ptw_w_packet_begin(w);
	ptw_pb_append_varint_field(b, PTW_F_PKT_TIMESTAMP, 0);
	ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_ID,
				   PTW_SEQ_ID_DESCRIPTORS);
	if (!w->desc_started) {
		ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_FLAGS,
					   PTW_SEQ_INCREMENTAL_STATE_CLEARED);
		ptw_pb_append_varint_field(b, PTW_F_PKT_FIRST_PACKET_ON_SEQUENCE, 1);
		w->desc_started = 1;
	}
	size_t td = ptw_pb_begin_nested(b, PTW_F_PKT_TRACK_DESCRIPTOR);
	ptw_pb_append_varint_field(b, PTW_F_TD_UUID, d->uuid);
	if (d->parent)
		ptw_pb_append_varint_field(b, PTW_F_TD_PARENT_UUID, d->parent);
	if (d->name)
		ptw_pb_append_string_field(b, PTW_F_TD_NAME, d->name);
	if (d->rank >= 0)
		ptw_pb_append_int64_field(b, PTW_F_TD_SIBLING_ORDER_RANK, d->rank);
	if (d->tr && d->tr->kind == PTW_TRACK_PROCESS) {
		size_t m = ptw_pb_begin_nested(b, PTW_F_TD_PROCESS);
		ptw_pb_append_int64_field(b, PTW_F_PD_PID, d->tr->pid);
		if (d->pt_name)
			ptw_pb_append_string_field(b, PTW_F_PD_PROCESS_NAME,
						   d->pt_name);
		ptw_pb_end_nested(b, m);
	} else if (d->tr && d->tr->kind == PTW_TRACK_THREAD) {
		size_t m = ptw_pb_begin_nested(b, PTW_F_TD_THREAD);
		ptw_pb_append_int64_field(b, PTW_F_THD_PID, d->tr->pid);
		ptw_pb_append_int64_field(b, PTW_F_THD_TID, d->tr->tid);
		if (d->pt_name)
			ptw_pb_append_string_field(b, PTW_F_THD_THREAD_NAME,
						   d->pt_name);
		ptw_pb_end_nested(b, m);
	} else if (d->is_counter) {
		size_t m = ptw_pb_begin_nested(b, PTW_F_TD_COUNTER);
		if (d->unit_name)
			ptw_pb_append_string_field(b, PTW_F_CD_UNIT_NAME,
						   d->unit_name);
		ptw_pb_end_nested(b, m);
	}
	ptw_pb_end_nested(b, td);
	return ptw_w_packet_end(w, mark, 0);
}

/* Validates a parent uuid: 0 or an existing non-counter track. */
static int ptw_track_check_parent(struct ptw_writer *w, uint64_t parent)
{
	if (!parent)
		return 0;
	struct ptw_track *p = ptw_tracks_get(&w->tracks, parent);
	if (!p)
		return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
					 "unknown parent track %llu",
					 (unsigned long long)parent);
	if (p->kind == PTW_TRACK_COUNTER)
		return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
					 "parent track %llu is a counter track",
					 (unsigned long long)parent);
	return 0;
}

static uint64_t ptw_track_new(struct ptw_writer *w, enum ptw_track_kind kind,
			      struct ptw_track_desc *d, int32_t pid,
			      int64_t tid)
{
	uint64_t uuid = ptw_tracks_add(&w->tracks, kind);
	if (!uuid) {
		ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0, "track table: out of memory");
		return 0;
	}
	struct ptw_track *tr = ptw_tracks_get(&w->tracks, uuid);
	tr->pid = pid;
	tr->tid = tid;
	d->uuid = uuid;
	if (kind == PTW_TRACK_PROCESS || kind == PTW_TRACK_THREAD)
		d->tr = tr;
	if (ptw_track_emit(w, d) != 0)
		return 0;
	return uuid;
}

uint64_t ptw_writer_add_process_track(struct ptw_writer *w, int32_t pid,
				      const char *name)
{
	if (!w || w->sticky || ptw_track_check_str(w, name, 0, "name"))
		return 0;
	struct ptw_track_desc d = {.rank = -1, .pt_name = name};
	return ptw_track_new(w, PTW_TRACK_PROCESS, &d, pid, 0);
}

uint64_t ptw_writer_add_thread_track(struct ptw_writer *w, int32_t pid,
				     int64_t tid, const char *name)
{
	if (!w || w->sticky || ptw_track_check_str(w, name, 0, "name"))
		return 0;
	struct ptw_track_desc d = {.rank = -1, .pt_name = name};
	return ptw_track_new(w, PTW_TRACK_THREAD, &d, pid, tid);
}

uint64_t ptw_writer_add_track(struct ptw_writer *w, const char *name,
			      uint64_t parent_uuid, int32_t rank)
{
	if (!w || w->sticky || ptw_track_check_str(w, name, 1, "name") ||
	    ptw_track_check_parent(w, parent_uuid))
		return 0;
	struct ptw_track_desc d = {.parent = parent_uuid, .name = name,
				   .rank = rank < 0 ? -1 : rank};
	return ptw_track_new(w, PTW_TRACK_NAMED, &d, 0, 0);
}

uint64_t ptw_writer_add_counter_track(struct ptw_writer *w, const char *name,
				      const char *unit_name,
				      uint64_t parent_uuid, int32_t rank)
{
	if (!w || w->sticky || ptw_track_check_str(w, name, 1, "name") ||
	    ptw_track_check_str(w, unit_name, 0, "unit name") ||
	    ptw_track_check_parent(w, parent_uuid))
		return 0;
	struct ptw_track_desc d = {.parent = parent_uuid, .name = name,
				   .rank = rank < 0 ? -1 : rank,
				   .is_counter = 1, .unit_name = unit_name};
	return ptw_track_new(w, PTW_TRACK_COUNTER, &d, 0, 0);
}

int ptw_writer_rename_track(struct ptw_writer *w, uint64_t track,
			    const char *name)
{
	if (!w)
		return PTW_ERR_INVALID;
	if (w->sticky)
		return w->sticky;
	int rc = ptw_track_check_str(w, name, 1, "name");
	if (rc)
		return rc;
	struct ptw_track *tr = ptw_tracks_get(&w->tracks, track);
	if (!tr || (tr->kind != PTW_TRACK_PROCESS && tr->kind != PTW_TRACK_THREAD))
		return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
					 "rename: %llu is not a process or thread track",
					 (unsigned long long)track);
	struct ptw_track_desc d = {.uuid = track, .rank = -1, .tr = tr,
				   .pt_name = name};
	return ptw_track_emit(w, &d);
}
