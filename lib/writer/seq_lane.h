/* seq_lane.h - runs of prepared simple events, for lib/'s converters (the
 * emitter's lane, converters/emit/emit_fast.c): the writer's state is
 * read when a run begins and stored when it ends (seq_lane.c), the
 * packets between are the caller's, written by the one packet encoder
 * (pkt_encode.h). Private to lib/ and its converters; not installed.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A prepared item is what a caller encoded ahead of time for one kind of
 * event (type, category, name) on one track of a sequence of its own: a
 * prefix (ptw_seq_lane_prefix: the sequence's header, the TrackEvent's tag
 * and length) and a body (pkt_encode.h ptw_seq_body_small, or
 * ptw_seq_body_prepare). Its iids are valid while the sequence's interning
 * generation (ptw_seq_lane_gen) is the one it was made in: a checkpoint
 * forgets every iid. A run:
 *
 *     struct ptw_seq_lane r;
 *     if (ptw_seq_lane_begin(s, track, gen, &r)) {
 *         uint8_t *p = r.p, *last = NULL;
 *         uint64_t base = r.base;
 *         ...at most r.max packets, each:
 *             last = p;
 *             p = ptw_seq_lane_put(p, ts, &base, r.abs_clock, head,
 *                                  pre, pre_len, body, n);
 *         ...an end only while r.depth > 0; a begin adds 1 to it, an end
 *            takes 1
 *         r.p = p; r.last = last; r.base = base; r.n = packets;
 *         rc = ptw_seq_lane_end(s, &r);
 *     }
 *
 * (p and base are locals of the caller: stores into the packet bytes may
 * alias a struct's fields, so a loop on r.p would reload them.) Timestamps
 * are at most INT64_MAX; one before the base is written absolute, as
 * ptw_seq_simple writes it. Nothing else may write on the sequence during
 * a run. Each packet is byte for byte the one ptw_seq_simple() would
 * write for the same event (tests/test_emit_fast.c). */
#ifndef PTW_SEQ_LANE_H
#define PTW_SEQ_LANE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pkt_encode.h"
#include "ptw/writer.h"

struct ptw_track;

/* A run on one track of one sequence. */
struct ptw_seq_lane {
	/* set by ptw_seq_lane_begin */
	uint8_t *p;          /* where the first packet goes */
	uint64_t base;       /* the sequence's delta base */
	uint32_t max;        /* packets the run may write (> 0) */
	uint32_t depth;      /* the track's open slices; kept by the caller */
	uint8_t hdr[16];     /* the sequence's header, then the TrackEvent's
			      * tag (ptw_put_body_packet's hdr) */
	uint8_t hdr_len;
	uint8_t abs_clock;   /* the sequence's (pkt_encode.h ptw_put_ts) */
	/* set by the caller before ptw_seq_lane_end */
	uint8_t *last;       /* where the newest packet starts */
	uint32_t n;          /* packets written */
	/* the writer's */
	struct ptw_seq *s;
	struct ptw_track *tr;
};

/* Begins a run of events on 'track' (a slice track of s, which has a
 * sequence of its own: s's default track) whose prepared items were made
 * in generation 'gen'. Returns 1 if the fast path may take them now (no
 * checkpoint, first packet or drop report due, no sticky error, the
 * track known, gen current), with *r set: up to r->max packets of at
 * most PTW_EV_FAST_MAX bytes each have room from r->p on, and none of
 * them starts past the writer's flush threshold or a checkpoint's due
 * point. Else 0: the caller writes the event through ptw_seq_simple().
 * Changes nothing: a run that wrote nothing needs no end. */
int ptw_seq_lane_begin(struct ptw_seq *s, uint64_t track, uint32_t gen,
		       struct ptw_seq_lane *r);

/* Ends a run: the sequence's delta base (r->base), the track's depth
 * (r->depth), the buffer's length (r->p) and the counts of r->n packets,
 * the newest at r->last; flushes past the threshold. Returns 0 or the
 * writer's sticky error. */
int ptw_seq_lane_end(struct ptw_seq *s, const struct ptw_seq_lane *r);

/* One packet of a run at p (room: ptw_seq_lane_begin), at ts against the
 * delta base *base (or absolute on abs_clock, r.abs_clock): the prepared prefix (pre_len bytes, 16 readable) and
 * body (n bytes of the little-endian word 'body'); head is
 * ptw_pkt_step21_head(pre_len + n). A step below PTW_PKT_STEP21_MAX takes
 * the one-word head (ptw_pkt_put_step21), anything else (time going back,
 * a longer step) ptw_pkt_put(). Returns its end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_seq_lane_put(uint8_t *p, uint64_t ts, uint64_t *base, unsigned abs_clock,
		 uint64_t head, const uint8_t pre[16], size_t pre_len,
		 uint64_t body, size_t n)
{
	uint64_t step = ts - *base; /* (time going back: a huge step) */
	if (__builtin_expect(step < PTW_PKT_STEP21_MAX, 1)) {
		*base = ts;
		return ptw_pkt_put_step21(p, step, head, pre, pre_len, body,
					  n);
	}
	uint8_t *q = ptw_pkt_put(p, ts, base, abs_clock, pre, pre_len, 16, 0);
	memcpy(q, &body, sizeof(body)); /* room: PTW_EV_FAST_MAX */
	return ptw_pkt_end(p, q + n);
}

/* A run of one: writes an event on 'track' of s with the body that
 * ptw_seq_body_prepare() made in generation 'gen' (n bytes,
 * PTW_SEQ_BODY_MAX readable), depth_d +1 a begin, -1 an end, 0 an
 * instant. Returns 1 with *rc set (0 or the writer's sticky error), or 0
 * having written nothing if ptw_seq_lane_begin() would refuse, or the
 * event is an end and the track has no open slice. */
int ptw_seq_lane_put_one(struct ptw_seq *s, uint64_t track, uint32_t gen,
			 uint64_t ts, const uint8_t body[PTW_SEQ_BODY_MAX],
			 size_t n, int depth_d, int *rc);

/* Writes the first packet of s (its checkpoint: a clock snapshot at ts),
 * or a checkpoint due, as before an event at ts; nothing if neither is
 * due. A trace without any event still has a clock snapshot so (the
 * converters' empty input). 0 or an error. */
int ptw_seq_lane_start(struct ptw_seq *s, uint64_t ts);

/* The interning generation of s now (see above). */
uint32_t ptw_seq_lane_gen(const struct ptw_seq *s);

/* The iids in s's current generation of a category and a name (NULL:
 * none, iid 0), found by their pointers: static strings that
 * ptw_seq_simple() interned. Returns 1, or 0 if either is not interned
 * now. */
int ptw_seq_lane_iids(const struct ptw_seq *s, const char *cat,
		      const char *name, uint64_t *cat_iid, uint64_t *name_iid);

/* The prefix of s's packets whose TrackEvent body is body_len bytes, into
 * pre (16 bytes, the rest zero); returns its length, or 0 if it does not
 * fit (a machine id too long: no prepared items then). */
size_t ptw_seq_lane_prefix(const struct ptw_seq *s, uint8_t pre[16],
			   size_t body_len);

#endif /* PTW_SEQ_LANE_H */
