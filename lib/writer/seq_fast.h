/* seq_fast.h - the writer's fast path on its own state: one event packet
 * (event.c), a batch of prepared ones (the tracer backend). Private to
 * lib/; the converters write theirs through seq_lane.h.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Every fast packet is written by ptw_pkt_put() (pkt_encode.h, the one
 * packet encoder); the general path (event.c), which frames packets of
 * any size, shares its timestamp and TrackEvent fields.
 */
#ifndef PTW_SEQ_FAST_H
#define PTW_SEQ_FAST_H

#include <string.h>

#include "pkt_encode.h"
#include "writer_internal.h"
#include "writer_state.h"

/* 1 if the fast path may write one event on 's' now: no checkpoint,
 * first packet or drop report due, no sticky error, room in the buffer. */
static inline __attribute__((always_inline)) int
ptw_seq_fast_ready(const struct ptw_seq *s)
{
	const struct ptw_writer *w = s->w;
	return __builtin_expect(s->fast_left != 0, 1) &
	       __builtin_expect(w->sticky == 0, 1) &
	       __builtin_expect(w->pend.cap - w->pend.len >= PTW_EV_FAST_MAX, 1);
}

/* How many fast packets a run may write on s from now (the fast path
 * being ready: ptw_seq_fast_ready): each has PTW_EV_FAST_MAX bytes of
 * room and starts below the flush threshold (one starting at or past it,
 * the single path would not write: it flushes first), and there are at
 * most fast_left of them. 0: none. */
static inline uint32_t ptw_seq_fast_fit(const struct ptw_seq *s)
{
	const struct ptw_writer *w = s->w;
	/* (fast_ready: lim does not wrap) */
	size_t len = w->pend.len, lim = w->pend.cap - PTW_EV_FAST_MAX;
	if (w->flush_at < lim)
		lim = w->flush_at;
	size_t fit = len < lim ? (lim - 1 - len) / PTW_EV_FAST_MAX + 1 : 0;
	return fit < s->fast_left ? (uint32_t)fit : s->fast_left;
}

/* The timestamp and header of an event packet of sequence s at p (room
 * reserved), for packets framed otherwise (the general path: any size);
 * returns the end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_seq_put_ts_hdr(struct ptw_seq *s, uint8_t *p, uint64_t ts)
{
	p = ptw_put_ts(p, ts, &s->base, s->abs_clock, 0);
	memcpy(p, s->hdr, sizeof(s->hdr)); /* room: 13 + 16 bytes */
	return p + s->hdr_len;
}

/* Counts n fast packets that end at p in the pending buffer, the last
 * of them starting at offset 'last': the buffer's length, the sequence's
 * and the writer's counts; flushes past the threshold. Every fast packet
 * (one by one, a batch, a converter's lane: seq_lane.c) is counted here.
 * Returns 0 or the writer's sticky error. */
static inline __attribute__((always_inline)) int
ptw_seq_fast_commit(struct ptw_seq *s, uint8_t *p, size_t last, uint32_t n)
{
	struct ptw_writer *w = s->w;
	struct ptw_pb_buf *b = &w->pend;
	ptw_w_grp_note(w, b->len, (size_t)(p - b->data), s->id, n);
	w->last_pkt = last;
	b->len = (size_t)(p - b->data);
	s->since_cp += n;
	s->fast_left -= n;
	w->stats.packets += n;
	w->stats.events += n;
	w->pend_has_event = 1;
	if (__builtin_expect(b->len >= w->flush_at, 0))
		return ptw_w_flush(w);
	return 0;
}

/* Returns the track if the fast path may write an event of kind
 * 'counter' (a counter track or not) on it now, else NULL (the slow path
 * then reports any misuse). */
static inline __attribute__((always_inline)) struct ptw_track *
ptw_seq_fast_track(struct ptw_seq *s, uint64_t track, int counter)
{
	if (!ptw_seq_fast_ready(s))
		return NULL;
	struct ptw_track *tr = ptw_tracks_get(&s->w->tracks, track);
	if (__builtin_expect(!tr || (tr->kind == PTW_TRACK_COUNTER) != counter, 0))
		return NULL;
	return tr;
}

/* The iids of a simple event's category and name (NULL: none, iid 0)
 * in sequence s's current generation, found by their pointers (static
 * strings that the slow path interned). Returns 1, or 0 if either is not
 * interned now: the slow path then interns it. Every fast path looks its
 * strings up here. */
static inline __attribute__((always_inline)) int
ptw_seq_iids(const struct ptw_seq *s, const char *cat, const char *name,
	     uint64_t *cat_iid, uint64_t *name_iid)
{
	*cat_iid = *name_iid = 0;
	if (cat && !(*cat_iid = ptw_intern_get_ptr(s->cats, cat)))
		return 0;
	if (name && !(*name_iid = ptw_intern_get_ptr(s->names, name)))
		return 0;
	return 1;
}

/* Writes one fast packet: a TrackEvent of 'type' on 'track' with the
 * given iids (0: none) and value_kind 1 (ival) or 2 (dval) for counters.
 * The caller checked ptw_seq_fast_track(). 0 or the sticky error. */
static inline __attribute__((always_inline)) int
ptw_seq_fast_write(struct ptw_seq *s, uint64_t ts, int type, uint64_t track,
		   uint64_t cat_iid, uint64_t name_iid, int value_kind,
		   int64_t ival, double dval)
{
	struct ptw_pb_buf *b = &s->w->pend;
	size_t at = b->len;
	uint8_t *p = b->data + at;
	/* known: the header and the TrackEvent's tag (s->hdr) */
	uint8_t *te = ptw_pkt_put(p, ts, &s->base, s->abs_clock, s->hdr,
				  s->hdr_len + 1u, sizeof(s->hdr), 0);
	uint8_t *q = ptw_seq_te_fields(te + 1, type,
				       track != s->default_track ? track : 0,
				       0, cat_iid, name_iid);
	q = ptw_seq_te_value(q, value_kind, ival, dval);
	*te = (uint8_t)(q - te - 1);
	return ptw_seq_fast_commit(s, ptw_pkt_end(p, q), at, 1);
}

/* A counter sample on the fast path, if it may take it now: returns 1
 * with *rc set, else 0 having written nothing. track 0: the sequence's
 * default track. */
static inline __attribute__((always_inline)) int
ptw_seq_fast_counter(struct ptw_seq *s, uint64_t track, uint64_t ts,
		     int is_int, int64_t ival, double dval, int *rc)
{
	if (__builtin_expect(!s, 0) || ts > (uint64_t)INT64_MAX)
		return 0;
	track = track ? track : s->default_track;
	if (!ptw_seq_fast_track(s, track, 1))
		return 0;
	*rc = ptw_seq_fast_write(s, ts, PTW_TE_TYPE_COUNTER, track, 0, 0,
				 is_int ? 1 : 2, ival, dval);
	return 1;
}

/* A batch of events prepared by ptw_i_seq_prepare(), written with the
 * writer's state held in a struct ptw_seq_batch (locals of the caller):
 *
 *     struct ptw_seq_batch b;
 *     if (ptw_seq_batch_begin(s, &b)) {
 *         while (more && !ptw_seq_batch_full(&b) &&
 *                ptw_seq_batch_put(&b, ts, prep))
 *             ...;
 *         rc = ptw_seq_batch_end(s, &b);
 *     }
 *
 * Each event gets the same checks and bytes as ptw_seq_simple() one by one
 * (ptw_ev_fast_simple, event.c); each packet is
 *   0A len 40 <ts delta> <prepared tail>
 * as ptw_pkt_put() writes it. A batch is full when
 * a checkpoint is due, the buffer's room for a fast packet is used up or
 * the last packet reached the flush threshold: end it (which flushes then,
 * as the single path does) and begin another. A loop may instead ask
 * ptw_seq_batch_sure() how many events the batch takes before it can be full
 * and check fullness once per that many. 'prep' must come from a
 * ptw_i_seq_prepare() that returned 1. */
struct ptw_seq_batch {
	uint8_t *data;
	size_t len, last, flush_at;
	uint64_t base;
	uint32_t gen;
	uint32_t depth;          /* the default track's open slices */
	uint32_t n, max;         /* events written, at most */
	struct ptw_track *tr;
};

/* Begins a batch on s; 0 if the fast path cannot take an event now, or s
 * has no default track (nothing was prepared for it): the single path
 * then takes the next one. */
static inline __attribute__((always_inline)) int
ptw_seq_batch_begin(struct ptw_seq *s, struct ptw_seq_batch *r)
{
	if (!ptw_seq_fast_ready(s))
		return 0;
	struct ptw_writer *w = s->w;
	if (!(r->tr = ptw_tracks_get(&w->tracks, s->default_track)))
		return 0;
	struct ptw_pb_buf *b = &w->pend;
	/* every packet of the batch has PTW_EV_FAST_MAX bytes of room */
	size_t room = (b->cap - b->len) / PTW_EV_FAST_MAX;
	r->max = room < s->fast_left ? (uint32_t)room : s->fast_left;
	r->n = 0;
	r->data = b->data;
	r->len = b->len;
	r->last = w->last_pkt;
	r->flush_at = w->flush_at;
	r->base = s->base;
	r->gen = s->cp_gen;
	r->depth = r->tr->depth;
	return 1;
}

/* 1 when the batch must end before its next event. */
static inline __attribute__((always_inline)) int
ptw_seq_batch_full(const struct ptw_seq_batch *r)
{
	return r->n == r->max || r->len >= r->flush_at;
}

/* The longest packet of a batch: tags and length, the time step, the
 * prepared tail. */
#define PTW_SEQ_BATCH_PKT_MAX (3u + PTW_PB_VARINT_MAX + PTW_SEQ_PREP_TAIL)
_Static_assert(PTW_SEQ_BATCH_PKT_MAX <= PTW_EV_FAST_MAX,
	       "each packet of a batch has its room");

/* How many more events the batch takes before ptw_seq_batch_full() can be
 * true (0: it is full): every packet is at most PTW_SEQ_BATCH_PKT_MAX
 * bytes, and one that starts below the flush threshold is written. */
static inline uint32_t ptw_seq_batch_sure(const struct ptw_seq_batch *r)
{
	if (ptw_seq_batch_full(r))
		return 0;
	size_t k = (r->flush_at - r->len + PTW_SEQ_BATCH_PKT_MAX - 1) /
		   PTW_SEQ_BATCH_PKT_MAX;
	uint32_t left = r->max - r->n;
	return k < left ? (uint32_t)k : left;
}

/* Writes prepared event p at ts (the batch is not full). Returns 1, or 0
 * if the batch does not take this event (stale iids, END with no open
 * slice, time going back or past INT64_MAX): the single path takes it. */
static inline __attribute__((always_inline)) int
ptw_seq_batch_put(struct ptw_seq_batch *r, uint64_t ts,
		  const struct ptw_seq_prep *p)
{
	if (__builtin_expect(p->gen != r->gen, 0) || ts < r->base ||
	    ts > (uint64_t)INT64_MAX || (p->depth_d < 0 && !r->depth))
		return 0;
	uint8_t *q = r->data + r->len;
	/* (ts >= r->base: the delta form) */
	uint8_t *e = ptw_pkt_put(q, ts, &r->base, PTW_CLOCK_SEQ_ABS, p->tail,
				 0, PTW_SEQ_PREP_TAIL, 1);
	/* (p->len added after the copy: read before, it would take a
	 * register through the timestamp's stores) */
	e = ptw_pkt_end(q, e + p->len);
	r->last = r->len;
	r->len += (size_t)(e - q);
	r->depth += (uint32_t)(int32_t)p->depth_d;
	r->n++;
	return 1;
}

/* A loop of the tracer backend (ptw_tr_batch_gen) writes runs of packets
 * itself, on locals: each packet by ptw_pkt_put_step() at r->data + len,
 * for prepared events of the batch's generation (p->gen == r->gen), no
 * END of no open slice, time steps from 'base' below PTW_SEQ_STEP_MAX,
 * with ptw_seq_batch_steps_ok() true for the run and at most
 * ptw_seq_batch_sure() events; then ptw_seq_batch_took() counts them:
 * the same bytes as ptw_seq_batch_put() one by one. */
#define PTW_SEQ_STEP_MAX (1u << 14)

/* 1 if k events of steps below PTW_SEQ_STEP_MAX from now cannot take the
 * time past INT64_MAX (k below 2^40). */
static inline int ptw_seq_batch_steps_ok(const struct ptw_seq_batch *r,
					 uint64_t k)
{
	return r->base <= (uint64_t)INT64_MAX - k * PTW_SEQ_STEP_MAX;
}

/* Counts n such packets, which end at offset len, the last at 'last', at
 * time 'base', and changed the default track's open slices by depth_d. */
static inline void ptw_seq_batch_took(struct ptw_seq_batch *r, size_t len,
				      size_t last, uint64_t base, uint32_t n,
				      int32_t depth_d)
{
	if (!n)
		return;
	r->len = len;
	r->last = last;
	r->base = base;
	r->n += n;
	r->depth += (uint32_t)depth_d;
}

/* Ends a batch: the writer's state and counts (ptw_seq_fast_commit), and
 * the flush the last packet called for. Returns 0 or the flush's error. */
static inline __attribute__((always_inline)) int
ptw_seq_batch_end(struct ptw_seq *s, const struct ptw_seq_batch *r)
{
	if (!r->n)
		return 0;
	s->base = r->base;
	r->tr->depth = r->depth;
	return ptw_seq_fast_commit(s, r->data + r->len, r->last, r->n);
}

#endif /* PTW_SEQ_FAST_H */
