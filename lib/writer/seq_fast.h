/* seq_fast.h - the writer's event packet encoder. Private: lib/writer/event.c
 * writes its events with it, the tracer backend its prepared batches, and
 * the converter's emitter the events it prepared ahead of time
 * (converters/emit/emit_fast.c), so all produce the same bytes.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Every fast packet is written by ptw_pkt_put() (see "the one packet
 * encoder" below); the general path (event.c), which frames packets of
 * any size, shares its timestamp and TrackEvent fields. The fast path's
 * packet - no annotations or flows,
 * strings already interned in this generation, no checkpoint due - goes
 * straight into the pending buffer after one space check. Packet and
 * TrackEvent are known to be under 128 bytes, so both lengths are single
 * bytes:
 *
 *   0A len | 40 ts [D0 03 41] | seq id + flags | 5A len | 48 type
 *          | [58 track] [18 cat] [50 name] [F0 01 value | E1 02 double]
 */
#ifndef PTW_SEQ_FAST_H
#define PTW_SEQ_FAST_H

#include <string.h>

#include "lib/encode/pb_fields.h"
#include "writer_internal.h"
#include "writer_state.h"

#define PTW_EV_FAST_MAX 96u

/* A prepared TrackEvent body (type, category, name; default track) takes
 * at most 14 bytes; it is stored and copied as 16. */
#define PTW_SEQ_BODY_MAX 16u

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

/* Encodes TrackEvent type (0: none, a legacy phase gives the kind),
 * track (not written if it is the sequence's default, dflt), category
 * and name iids (0: none) at p; returns the end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_seq_te_fields(uint8_t *p, int type, uint64_t track, uint64_t dflt,
		  uint64_t cat_iid, uint64_t name_iid)
{
	if (type)
		p = ptw_pb_write_varint_field(p, PTW_F_TE_TYPE, (uint64_t)type);
	if (track != dflt)
		p = ptw_pb_write_varint_field(p, PTW_F_TE_TRACK_UUID, track);
	if (cat_iid)
		p = ptw_pb_write_varint_field(p, PTW_F_TE_CATEGORY_IIDS, cat_iid);
	if (name_iid)
		p = ptw_pb_write_varint_field(p, PTW_F_TE_NAME_IID, name_iid);
	return p;
}

/* Encodes a counter's value at p: value_kind 1 ival, 2 dval, 0 none;
 * returns the end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_seq_te_value(uint8_t *p, int value_kind, int64_t ival, double dval)
{
	if (value_kind == 1) {
		p = ptw_pb_write_varint_field(p, PTW_F_TE_COUNTER_VALUE,
					      (uint64_t)ival);
	} else if (value_kind == 2) {
		uint64_t bits;
		memcpy(&bits, &dval, sizeof(bits));
		p = ptw_pb_write_fixed64_field(p, PTW_F_TE_DOUBLE_COUNTER_VALUE,
					       bits);
	}
	return p;
}

/* ---- the one packet encoder -------------------------------------------
 * Every event packet of a sequence is
 *
 *   0A len | timestamp | known bytes | [what the caller adds]
 *
 * with the timestamp a delta on clock 64 against the sequence's base
 * (*base, then moved to ts), or, time going back, absolute on clock 65
 * (1:1 with BOOTTIME; the base stays). The known bytes start with the
 * sequence's header (s->hdr: sequence id, flags, machine id), and are
 * whatever the caller knew before the timestamp: the header alone (the
 * general path adds interned data, then the TrackEvent), the header and
 * the TrackEvent tag (ptw_seq_fast_write adds the TrackEvent's length and
 * fields), or all of it (a prepared event, struct ptw_seq_prep; the
 * converter's lane adds a body word). ptw_pkt_put() writes up to the
 * known bytes' end, ptw_pkt_end() the length byte once the packet is
 * whole: a fast packet is under 128 bytes. */

/* Writes the timestamp field(s) of an event packet at p (room reserved)
 * against the delta base *base; returns the end. small_steps (a
 * constant): deltas are mostly below 2^14 (the tracer's), written in two
 * stores. Either form may write up to 4 bytes past the end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_put_ts(uint8_t *p, uint64_t ts, uint64_t *base, const int small_steps)
{
	uint64_t b = *base;
	if (__builtin_expect(ts >= b, 1)) {
		/* always written, even 0: a TrackEvent packet without a
		 * timestamp is dropped by trace_processor */
		*p++ = PTW_PB_TAG(PTW_F_PKT_TIMESTAMP, PTW_PB_WT_VARINT);
		p = small_steps ? ptw_pb_write_varint_2b(p, ts - b)
				: ptw_pb_write_varint_nb(p, ts - b);
		*base = ts;
	} else {
		p = ptw_pb_write_varint_field(p, PTW_F_PKT_TIMESTAMP, ts);
		p = ptw_pb_write_varint_field(p, PTW_F_PKT_TIMESTAMP_CLOCK_ID,
					      PTW_CLOCK_SEQ_ABS);
	}
	return p;
}

/* Starts an event packet at p (PTW_EV_FAST_MAX bytes of room): the
 * record's tag, its length byte (left for ptw_pkt_end), the timestamp
 * (ptw_put_ts) and known[0, n). 'copy' (a constant, 16 or 32, >= n) is
 * how many bytes of 'known' are readable: they are copied whole. Returns
 * the end of the known bytes. */
static inline __attribute__((always_inline)) uint8_t *
ptw_pkt_put(uint8_t *p, uint64_t ts, uint64_t *base, const uint8_t *known,
	    size_t n, const size_t copy, const int small_steps)
{
	uint8_t *q = ptw_put_ts(p + 2, ts, base, small_steps);
	p[0] = PTW_PB_TAG(PTW_F_TRACE_PACKET, PTW_PB_WT_LEN);
	memcpy(q, known, copy); /* room: PTW_EV_FAST_MAX */
	return q + n;
}

/* Ends the packet ptw_pkt_put() started at p, whole up to q (under 128
 * bytes): its length byte. Returns q. */
static inline __attribute__((always_inline)) uint8_t *
ptw_pkt_end(uint8_t *p, uint8_t *q)
{
	p[1] = (uint8_t)(q - p - 2);
	return q;
}

/* The timestamp and header of an event packet of sequence s at p (room
 * reserved), for packets framed otherwise (the general path: any size);
 * returns the end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_seq_put_ts_hdr(struct ptw_seq *s, uint8_t *p, uint64_t ts)
{
	p = ptw_put_ts(p, ts, &s->base, 0);
	memcpy(p, s->hdr, sizeof(s->hdr)); /* room: 13 + 16 bytes */
	return p + s->hdr_len;
}

/* Counts n fast packets that end at p in the pending buffer, the last
 * of them starting at offset 'last': the buffer's length, the sequence's
 * and the writer's counts; flushes past the threshold. Every fast packet
 * (one by one, a batch, the converter's lane) is counted here. Returns 0 or
 * the writer's sticky error. */
static inline __attribute__((always_inline)) int
ptw_seq_fast_commit(struct ptw_seq *s, uint8_t *p, size_t last, uint32_t n)
{
	struct ptw_writer *w = s->w;
	struct ptw_pb_buf *b = &w->pend;
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
	uint8_t *te = ptw_pkt_put(p, ts, &s->base, s->hdr, s->hdr_len + 1u,
				  sizeof(s->hdr), 0);
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

/* Prepares the body of a simple event (type; category and name iids
 * valid in the sequence's current generation, 0: none) on the default
 * track of its sequence; returns its length. */
static inline size_t ptw_seq_body_prepare(uint8_t body[PTW_SEQ_BODY_MAX],
					  int type, uint64_t cat_iid,
					  uint64_t name_iid)
{
	return (size_t)(ptw_seq_te_fields(body, type, 0, 0, cat_iid,
					  name_iid) - body);
}

/* The same body for iids below 128 (cat_iid 0: none; name_iid > 0),
 * as a little-endian word of *len bytes, built without a loop. */
static inline uint64_t ptw_seq_body_small(int type, uint64_t cat_iid,
					  uint64_t name_iid, unsigned *len)
{
	uint64_t w = PTW_PB_TAG(PTW_F_TE_TYPE, PTW_PB_WT_VARINT) |
		     (uint64_t)type << 8;
	unsigned n = 2;
	if (cat_iid) {
		w |= (PTW_PB_TAG(PTW_F_TE_CATEGORY_IIDS, PTW_PB_WT_VARINT) |
		      cat_iid << 8) << 16;
		n = 4;
	}
	w |= (PTW_PB_TAG(PTW_F_TE_NAME_IID, PTW_PB_WT_VARINT) | name_iid << 8)
	     << (8 * n);
	*len = n + 2;
	return w;
}

/* Writes a whole packet of an event whose body ptw_seq_body_prepare()
 * made (PTW_SEQ_BODY_MAX bytes readable, n used) at p, at ts, with a
 * sequence's delta base and header: hdr is s->hdr (16 bytes, the header's
 * hdr_len then the TrackEvent's tag). Room for PTW_EV_FAST_MAX bytes is
 * reserved, the iids are still valid (the sequence's cp_gen unchanged).
 * Counts nothing (ptw_seq_fast_commit does); returns the packet's end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_put_body_packet(uint8_t *p, uint64_t ts, uint64_t *base,
		    const uint8_t hdr[16], size_t hdr_len,
		    const uint8_t body[PTW_SEQ_BODY_MAX], size_t n)
{
	uint8_t *q = ptw_pkt_put(p, ts, base, hdr, hdr_len + 1u, 16, 0);
	*q++ = (uint8_t)n;
	memcpy(q, body, PTW_SEQ_BODY_MAX); /* fits: PTW_EV_FAST_MAX room */
	return ptw_pkt_end(p, q + n);
}

/* The same packet at the end of the pending buffer, counted; the caller
 * checked ptw_seq_fast_ready() and keeps the track's depth. 0 or the
 * sticky error. */
static inline __attribute__((always_inline)) int
ptw_seq_write_body(struct ptw_seq *s, uint64_t ts,
		   const uint8_t body[PTW_SEQ_BODY_MAX], size_t n)
{
	struct ptw_pb_buf *b = &s->w->pend;
	size_t at = b->len;
	uint8_t *p = ptw_put_body_packet(b->data + at, ts, &s->base, s->hdr,
					 s->hdr_len, body, n);
	return ptw_seq_fast_commit(s, p, at, 1);
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
	uint8_t *e = ptw_pkt_put(q, ts, &r->base, p->tail, 0,
				 PTW_SEQ_PREP_TAIL, 1);
	/* (p->len added after the copy: read before, it would take a
	 * register through the timestamp's stores) */
	e = ptw_pkt_end(q, e + p->len);
	r->last = r->len;
	r->len += (size_t)(e - q);
	r->depth += (uint32_t)(int32_t)p->depth_d;
	r->n++;
	return 1;
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
