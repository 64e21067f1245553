/* track.c - the track table and TrackDescriptor packets (the public
 * ptw_writer_add_*_track calls).
 * SPDX-License-Identifier: Apache-2.0
 *
 * Descriptors are not encoded when a track is added: they wait in a list
 * until the next flush of the pending packets, and are written just before
 * those packets. By then the writer knows whether a track has children
 * with a sibling_order_rank, so the parent's (first) descriptor can carry
 * child_ordering = EXPLICIT: trace_processor keeps the first descriptor of
 * a uuid and ignores the ordering of later ones. Order stays sound:
 * every descriptor still precedes, in file order, each event added after
 * its track (counter descriptors must precede their first sample), and a
 * file cut inside a batch loses the batch's events with its descriptors.
 *
 * The same delay lets ptw_writer_set_track_rank put a rank into a process
 * or thread track's first descriptor. Such ranks only order processes
 * (threads) if the default track, uuid 0, has a descriptor with
 * process_ordering (thread_ordering) = EXPLICIT: the flush writes one
 * ahead of the first ranked descriptor, and again, with both orderings,
 * if threads get ranks after processes did (or the reverse). */
#include "track.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"
#include "lib/util/utf8.h"
#include "lib/encode/pb_fields.h"
#include "writer_state.h"

void ptw_tracks_free(struct ptw_tracks *t)
{
	free(t->last);
	free(t->keep);
	free(t->v);
	free(t->pend);
	free(t->str);
	memset(t, 0, sizeof(*t));
}

uint64_t ptw_tracks_add(struct ptw_tracks *t, enum ptw_track_kind kind)
{
	if (t->n == t->cap) {
		void *p = ptw_grow(t->v, &t->cap, t->cap + 1, 64, sizeof(*t->v));
		if (!p)
			return 0;
		t->v = p;
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
	const char *name; /* name, or process_name / thread_name */
	int32_t rank;     /* < 0: none */
	const char *unit_name;
	uint8_t style;    /* PTW_TRACK_STYLE_* (new tracks) */
};

/* Encoded bytes of a queued descriptor besides its strings (packet and
 * descriptor framing, sequence id, uuid, parent, rank, pid, tid): an
 * estimate used to bound the queue. */
#define PTW_TRACK_REC_BYTES 32u

/* Copies n bytes into an arena; returns 0 or -1. */
static int ptw_track_arena_put(char **arena, size_t *alen, size_t *acap,
			       const char *str, size_t n, size_t *off,
			       uint32_t *len)
{
	if (*acap - *alen < n) {
		char *p = ptw_grow_by(*arena, acap, *alen, n, 1024, 1);
		if (!p)
			return -1;
		*arena = p;
	}
	if (n) /* an empty first name leaves the arena NULL: no memcpy from/to NULL */
		memcpy(*arena + *alen, str, n);
	*off = *alen;
	*len = (uint32_t)n;
	*alen += n;
	return 0;
}

/* Copies 'str' into the pending-string arena; returns 0 or -1. */
static int ptw_track_put_str(struct ptw_tracks *t, const char *str,
			     size_t *off, uint32_t *len)
{
	/* strlen checked <= PTW_MAX_STRING_LEN; what is not UTF-8 is kept
	 * as U+FFFD, as event names are (event.c) */
	size_t n = strlen(str);
	int fix;
	size_t fixed = ptw_utf8_fixed_len(str, n, &fix);
	if (!fix)
		return ptw_track_arena_put(&t->str, &t->str_len, &t->str_cap,
					   str, n, off, len);
	if (t->str_cap - t->str_len < fixed) {
		char *p = ptw_grow_by(t->str, &t->str_cap, t->str_len, fixed,
				      1024, 1);
		if (!p)
			return -1;
		t->str = p;
	}
	*off = t->str_len;
	ptw_utf8_fix(t->str + t->str_len, str, n);
	t->str_len += fixed;
	*len = (uint32_t)fixed;
	return 0;
}

/* Flight recorder: remembers the descriptor just queued as the track's
 * current one. Returns 0 or -1. */
static int ptw_track_keep(struct ptw_tracks *t, const struct ptw_track_rec *r)
{
	if (r->uuid > t->last_cap) {
		size_t old = t->last_cap;
		/* uuid <= tracks.n, itself below the size_t capacity of v */
		struct ptw_track_rec *p = ptw_grow(t->last, &t->last_cap,
						   (size_t)r->uuid, 64, sizeof(*p));
		if (!p)
			return -1;
		memset(p + old, 0, (t->last_cap - old) * sizeof(*p));
		t->last = p;
	}
	struct ptw_track_rec *k = &t->last[r->uuid - 1];
	uint64_t parent = k->uuid ? k->parent : r->parent; /* renames: none */
	struct ptw_track_rec n = *r;
	n.parent = parent;
	if (r->has_name &&
	    ptw_track_arena_put(&t->keep, &t->keep_len, &t->keep_cap,
				t->str ? t->str + r->name_off : "", r->name_len,
				&n.name_off, &n.name_len))
		return -1;
	if (!r->has_unit && k->uuid) {
		n.has_unit = k->has_unit;
		n.unit_off = k->unit_off;
		n.unit_len = k->unit_len;
	} else if (r->has_unit &&
		   ptw_track_arena_put(&t->keep, &t->keep_len, &t->keep_cap,
				       t->str ? t->str + r->unit_off : "",
				       r->unit_len, &n.unit_off, &n.unit_len)) {
		return -1;
	}
	*k = n;
	return 0;
}

/* The next free record of the pending descriptor queue (n_pend not yet
 * counted), or NULL with *rc (a flush error, or NOMEM, sticky). Bounded
 * like the event packets: a program that creates many tracks before any
 * event flushes once they would fill a batch. Checked before queuing, so
 * that a new track stays queued until the caller's next write
 * (ptw_writer_set_track_rank right after creating it always works). */
static struct ptw_track_rec *ptw_track_pend_slot(struct ptw_writer *w, int *rc)
{
	struct ptw_tracks *t = &w->tracks;
	if (__builtin_expect(t->n_pend * PTW_TRACK_REC_BYTES + t->str_len >=
				     w->flush_at, 0) &&
	    (*rc = ptw_w_flush(w)) != 0)
		return NULL;
	if (t->n_pend == t->pend_cap) {
		void *p = ptw_grow(t->pend, &t->pend_cap, t->n_pend + 1, 16,
				   sizeof(*t->pend));
		if (!p) {
			*rc = ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0,
						"track table: out of memory");
			return NULL;
		}
		t->pend = p;
	}
	return &t->pend[t->n_pend];
}

int ptw_w_requeue_tracks(struct ptw_writer *w)
{
	struct ptw_tracks *t = &w->tracks;
	for (uint64_t i = 0; i < t->n && i < t->last_cap; i++) {
		const struct ptw_track_rec *k = &t->last[i];
		if (!k->uuid)
			continue;
		int rc;
		struct ptw_track_rec *r = ptw_track_pend_slot(w, &rc);
		if (!r)
			return rc;
		*r = *k;
		if (k->has_name &&
		    ptw_track_arena_put(&t->str, &t->str_len, &t->str_cap,
					t->keep ? t->keep + k->name_off : "",
					k->name_len, &r->name_off, &r->name_len))
			goto nomem;
		if (k->has_unit &&
		    ptw_track_arena_put(&t->str, &t->str_len, &t->str_cap,
					t->keep ? t->keep + k->unit_off : "",
					k->unit_len, &r->unit_off, &r->unit_len))
			goto nomem;
		t->n_pend++;
		w->stats.packets++;
	}
	return 0;
nomem:
	return ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0, "track table: out of memory");
}

/* Queues a descriptor for the next flush. Returns 0 or NOMEM (sticky). */
static int ptw_track_defer(struct ptw_writer *w, const struct ptw_track_desc *d)
{
	if (w->sticky)
		return w->sticky;
	struct ptw_tracks *t = &w->tracks;
	int rc;
	struct ptw_track_rec *r = ptw_track_pend_slot(w, &rc);
	if (!r)
		return rc;
	memset(r, 0, sizeof(*r));
	r->uuid = d->uuid;
	r->parent = d->parent;
	if (d->name) {
		if (ptw_track_put_str(t, d->name, &r->name_off, &r->name_len))
			goto nomem;
		r->has_name = 1;
	}
	if (d->unit_name) {
		if (ptw_track_put_str(t, d->unit_name, &r->unit_off, &r->unit_len))
			goto nomem;
		r->has_unit = 1;
	}
	if (w->rs && ptw_track_keep(t, r))
		goto nomem;
	t->n_pend++;
	w->stats.packets++; /* counted when queued: it will be written */
	return 0;
nomem:
	return ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0, "track table: out of memory");
}

/* Starts a packet on the descriptor sequence (the first one clears its
 * state); returns its mark. */
static size_t ptw_track_packet_begin(struct ptw_writer *w, struct ptw_pb_buf *b)
{
	size_t mark = ptw_pb_begin_nested(b, PTW_F_TRACE_PACKET);
	ptw_pb_append_varint_field(b, PTW_F_PKT_TIMESTAMP, w->desc_ts);
	ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_ID,
				   PTW_SEQ_ID_DESCRIPTORS);
	ptw_w_put_mid(w, b);
	if (!w->desc_started) {
		ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_FLAGS,
					   PTW_SEQ_INCREMENTAL_STATE_CLEARED);
		ptw_pb_append_varint_field(b, PTW_F_PKT_FIRST_PACKET_ON_SEQUENCE, 1);
		w->desc_started = 1;
	}
	return mark;
}

/* The stored string at 'off'. Empty strings take no storage, so the table
 * may still have none: never offset a NULL pointer. */
static const char *ptw_track_str(const struct ptw_tracks *t, size_t off)
{
	return t->str ? t->str + off : "";
}

/* One packet on the descriptor sequence: explicit timestamp 0 (w->desc_ts:
 * with REALTIME snapshots, the first one's time) and no clock id (trace
 * default clock), so it never touches any sequence's incremental clock
 * and precedes every event in trace time. */
static void ptw_track_encode(struct ptw_writer *w, struct ptw_pb_buf *b,
			     const struct ptw_track_rec *r)
{
	const struct ptw_tracks *t = &w->tracks;
	const struct ptw_track *tr = &t->v[r->uuid - 1];
	size_t mark = ptw_track_packet_begin(w, b);
	const char *name = r->has_name ? ptw_track_str(t, r->name_off) : NULL;
	size_t td = ptw_pb_begin_nested(b, PTW_F_PKT_TRACK_DESCRIPTOR);
	ptw_pb_append_varint_field(b, PTW_F_TD_UUID, r->uuid);
	if (r->parent)
		ptw_pb_append_varint_field(b, PTW_F_TD_PARENT_UUID, r->parent);
	if (r->has_name && tr->kind != PTW_TRACK_PROCESS &&
	    tr->kind != PTW_TRACK_THREAD)
		ptw_pb_append_bytes_field(b, PTW_F_TD_NAME, name, r->name_len);
	if (tr->explicit_children)
		ptw_pb_append_varint_field(b, PTW_F_TD_CHILD_ORDERING,
					   PTW_CHILD_ORDERING_EXPLICIT);
	if (tr->has_rank)
		ptw_pb_append_int64_field(b, PTW_F_TD_SIBLING_ORDER_RANK, tr->rank);
	if (tr->style == PTW_TRACK_STYLE_SEPARATE)
		ptw_pb_append_varint_field(b, PTW_F_TD_SIBLING_MERGE_BEHAVIOR,
					   PTW_TD_SIBLING_MERGE_NONE);
	if (tr->kind == PTW_TRACK_PROCESS) {
		size_t m = ptw_pb_begin_nested(b, PTW_F_TD_PROCESS);
		ptw_pb_append_int64_field(b, PTW_F_PD_PID, tr->pid);
		if (r->has_name)
			ptw_pb_append_bytes_field(b, PTW_F_PD_PROCESS_NAME, name,
						  r->name_len);
		ptw_pb_end_nested(b, m);
	} else if (tr->kind == PTW_TRACK_THREAD) {
		size_t m = ptw_pb_begin_nested(b, PTW_F_TD_THREAD);
		ptw_pb_append_int64_field(b, PTW_F_THD_PID, tr->pid);
		ptw_pb_append_int64_field(b, PTW_F_THD_TID, tr->tid);
		if (r->has_name)
			ptw_pb_append_bytes_field(b, PTW_F_THD_THREAD_NAME, name,
						  r->name_len);
		ptw_pb_end_nested(b, m);
	} else if (tr->kind == PTW_TRACK_COUNTER) {
		size_t m = ptw_pb_begin_nested(b, PTW_F_TD_COUNTER);
		if (tr->style == PTW_TRACK_STYLE_THREAD_TIME)
			ptw_pb_append_varint_field(b, PTW_F_CD_TYPE,
						   PTW_CD_TYPE_THREAD_TIME_NS);
		if (r->has_unit)
			ptw_pb_append_bytes_field(b, PTW_F_CD_UNIT_NAME,
						  ptw_track_str(t, r->unit_off), r->unit_len);
		ptw_pb_end_nested(b, m);
	}
	ptw_pb_end_nested(b, td);
	ptw_pb_end_nested(b, mark);
	t->v[r->uuid - 1].written = 1;
}

/* The default track's descriptor (uuid 0, no parent) with the orderings
 * ranked process / thread tracks need. */
static void ptw_track_encode_ordering(struct ptw_writer *w, struct ptw_pb_buf *b)
{
	struct ptw_tracks *t = &w->tracks;
	size_t mark = ptw_track_packet_begin(w, b);
	size_t td = ptw_pb_begin_nested(b, PTW_F_PKT_TRACK_DESCRIPTOR);
	ptw_pb_append_varint_field(b, PTW_F_TD_UUID, 0);
	if (t->order_want & PTW_TRACK_ORDER_PROCESS)
		ptw_pb_append_varint_field(b, PTW_F_TD_PROCESS_ORDERING,
					   PTW_PROCESS_ORDERING_EXPLICIT);
	if (t->order_want & PTW_TRACK_ORDER_THREAD)
		ptw_pb_append_varint_field(b, PTW_F_TD_THREAD_ORDERING,
					   PTW_THREAD_ORDERING_EXPLICIT);
	ptw_pb_end_nested(b, td);
	ptw_pb_end_nested(b, mark);
	t->order_done = t->order_want;
	w->stats.packets++;
}

int ptw_w_flush_tracks(struct ptw_writer *w)
{
	struct ptw_tracks *t = &w->tracks;
	struct ptw_pb_buf *b = &w->dbuf;
	size_t last = 0;
	int rc = 0;
	b->len = 0;
	if (w->sysinfo_due) {
		ptw_w_put_sysinfo(w, b);
		w->sysinfo_due = 0;
	}
	if (t->order_want != t->order_done && t->n_pend)
		ptw_track_encode_ordering(w, b);
	for (size_t i = 0; i < t->n_pend && !rc; i++) {
		last = b->len;
		ptw_track_encode(w, b, &t->pend[i]);
		if (b->oom) {
			rc = ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0,
					       "descriptor buffer: out of memory");
			break;
		}
		/* Same batching as the event packets (writer.c). */
		if (b->len >= w->flush_at) {
			rc = ptw_w_emit(w, b->data, b->len, last);
			b->len = 0;
		}
	}
	if (!rc && b->len)
		rc = ptw_w_emit(w, b->data, b->len, last);
	b->len = 0;
	t->n_pend = 0;
	t->str_len = 0;
	return rc;
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
	tr->style = d->style;
	d->uuid = uuid;
	if (d->rank >= 0) {
		tr->rank = d->rank;
		tr->has_rank = 1;
		if (d->parent)
			ptw_tracks_get(&w->tracks, d->parent)->explicit_children = 1;
	}
	if (ptw_track_defer(w, d) != 0)
		return 0;
	return uuid;
}

uint64_t ptw_writer_add_process_track(struct ptw_writer *w, int32_t pid,
				      const char *name)
{
	if (!w || w->sticky || ptw_track_check_str(w, name, 0, "name"))
		return 0;
	struct ptw_track_desc d = {.rank = -1, .name = name};
	return ptw_track_new(w, PTW_TRACK_PROCESS, &d, pid, 0);
}

uint64_t ptw_writer_add_thread_track(struct ptw_writer *w, int32_t pid,
				     int64_t tid, const char *name)
{
	if (!w || w->sticky || ptw_track_check_str(w, name, 0, "name"))
		return 0;
	struct ptw_track_desc d = {.rank = -1, .name = name};
	return ptw_track_new(w, PTW_TRACK_THREAD, &d, pid, tid);
}

uint64_t ptw_writer_add_track(struct ptw_writer *w, const char *name,
			      uint64_t parent_uuid, int32_t rank)
{
	if (!w || w->sticky || ptw_track_check_str(w, name, 0, "name") ||
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
				   .unit_name = unit_name};
	return ptw_track_new(w, PTW_TRACK_COUNTER, &d, 0, 0);
}

uint64_t ptw_writer_add_separate_track(struct ptw_writer *w, const char *name,
				       uint64_t parent_uuid)
{
	if (!w || w->sticky || ptw_track_check_str(w, name, 0, "name"))
		return 0;
	if (!parent_uuid) {
		ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
				  "separate track without a parent");
		return 0;
	}
	if (ptw_track_check_parent(w, parent_uuid))
		return 0;
	struct ptw_track_desc d = {.parent = parent_uuid, .name = name,
				   .rank = -1,
				   .style = PTW_TRACK_STYLE_SEPARATE};
	return ptw_track_new(w, PTW_TRACK_NAMED, &d, 0, 0);
}

uint64_t ptw_writer_add_thread_time_track(struct ptw_writer *w,
					  uint64_t parent_uuid)
{
	if (!w || w->sticky || ptw_track_check_parent(w, parent_uuid))
		return 0;
	struct ptw_track_desc d = {.parent = parent_uuid, .rank = -1,
				   .style = PTW_TRACK_STYLE_THREAD_TIME};
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
	struct ptw_track_desc d = {.uuid = track, .rank = -1, .name = name};
	return ptw_track_defer(w, &d);
}

int ptw_writer_set_track_rank(struct ptw_writer *w, uint64_t track,
			      int32_t rank)
{
	if (!w)
		return PTW_ERR_INVALID;
	if (w->sticky)
		return w->sticky;
	struct ptw_track *tr = ptw_tracks_get(&w->tracks, track);
	if (!tr || (tr->kind != PTW_TRACK_PROCESS && tr->kind != PTW_TRACK_THREAD))
		return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
					 "set rank: %llu is not a process or thread track",
					 (unsigned long long)track);
	if (tr->written)
		return ptw_i_writer_fail(w, PTW_ERR_STATE, 0,
					 "set rank: the descriptor of track %llu "
					 "was already written",
					 (unsigned long long)track);
	tr->rank = rank;
	tr->has_rank = 1;
	w->tracks.order_want |= tr->kind == PTW_TRACK_PROCESS
					? PTW_TRACK_ORDER_PROCESS
					: PTW_TRACK_ORDER_THREAD;
	return 0;
}
