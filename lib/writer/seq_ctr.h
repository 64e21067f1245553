/* seq_ctr.h - runs of counter samples on one sequence, for lib/'s
 * converters (the emitter's batch path, converters/emit/emit_fast.c):
 * a counter track's known bytes are made once, and each sample is then
 * a timestamp, those bytes and its value, written by the one packet
 * encoder (pkt_encode.h); the writer's state is read when a run begins
 * and stored when it ends (seq_ctr.c). Private to lib/ and its
 * converters; not installed.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A counter packet holds no interned string, so its known bytes stay
 * valid across checkpoints: they depend only on the sequence (its
 * header) and the track. A run:
 *
 *     struct ptw_seq_ctr_run r;
 *     if (ptw_seq_ctr_begin(s, &r)) {
 *         uint8_t *p = r.p, *last = NULL;
 *         uint64_t base = r.base;
 *         ...at most r.max packets, each:
 *             last = p;
 *             p = ptw_seq_ctr_put(p, ts, &base, &known, is_int, iv, dv);
 *         r.p = p; r.last = last; r.base = base; r.n = packets;
 *         rc = ptw_seq_ctr_end(s, &r);
 *     }
 *
 * (p and base are locals of the caller, as for seq_lane.h.) Timestamps
 * are at most INT64_MAX; one before the base is written absolute. Nothing
 * else may write on the writer during a run. Each packet is byte for byte
 * the one ptw_seq_counter_int() or ptw_seq_counter_double() would write
 * for the same sample (tests/test_writer_ctr.c). */
#ifndef PTW_SEQ_CTR_H
#define PTW_SEQ_CTR_H

#include <stddef.h>
#include <stdint.h>

#include "pkt_encode.h"
#include "ptw/writer.h"

/* The bytes of a counter track's packets known before the timestamp:
 * the sequence's header, the TrackEvent's tag and length (that of a
 * double's), its type and track (b[0, n), 32 readable); te_tail bytes
 * follow the length byte. */
struct ptw_seq_ctr_known {
	uint8_t b[32];
	uint8_t n, te_tail;
	uint8_t abs_clock; /* the sequence's (pkt_encode.h ptw_put_ts) */
};

/* Makes *k for samples on counter track 'track' (not 0) written on s.
 * Returns 1, or 0 if track is not a counter track of s's writer. */
int ptw_seq_ctr_known(const struct ptw_seq *s, uint64_t track,
		      struct ptw_seq_ctr_known *k);

/* A run of counter samples on one sequence. */
struct ptw_seq_ctr_run {
	/* set by ptw_seq_ctr_begin */
	uint8_t *p;          /* where the first packet goes */
	uint64_t base;       /* the sequence's delta base */
	uint32_t max;        /* packets the run may write (> 0) */
	/* set by the caller before ptw_seq_ctr_end */
	uint8_t *last;       /* where the newest packet starts */
	uint32_t n;          /* packets written */
};

/* Begins a run on s. Returns 1 if the fast path may take samples now
 * (no checkpoint, first packet or drop report due, no sticky error),
 * with *r set: up to r->max packets of at most PTW_EV_FAST_MAX bytes
 * each have room from r->p on, and none of them starts past the writer's
 * flush threshold or a checkpoint's due point. Else 0: the caller writes
 * the sample through ptw_seq_counter_int() or _double(). Changes nothing:
 * a run that wrote nothing needs no end. */
int ptw_seq_ctr_begin(struct ptw_seq *s, struct ptw_seq_ctr_run *r);

/* Ends a run: the sequence's delta base (r->base), the buffer's length
 * (r->p) and the counts of r->n packets, the newest at r->last; flushes
 * past the threshold. Returns 0 or the writer's sticky error. */
int ptw_seq_ctr_end(struct ptw_seq *s, const struct ptw_seq_ctr_run *r);

/* One sample of a run at p (room: ptw_seq_ctr_begin), at ts against the
 * delta base *base, on the track of k: an integer iv if is_int, else the
 * double dv. Returns the packet's end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_seq_ctr_put(uint8_t *p, uint64_t ts, uint64_t *base,
		const struct ptw_seq_ctr_known *k, int is_int, int64_t iv,
		double dv)
{
	uint8_t *q = ptw_pkt_put(p, ts, base, k->abs_clock, k->b, k->n, 32, 0);
	uint8_t *e;
	if (is_int) {
		e = ptw_seq_te_value(q, 1, iv, 0);
		/* the TrackEvent's length: its known fields and the value */
		q[-(ptrdiff_t)k->te_tail - 1] = (uint8_t)(e - q + k->te_tail);
	} else {
		e = ptw_seq_te_value(q, 2, 0, dv); /* (length known) */
	}
	return ptw_pkt_end(p, e);
}

#endif /* PTW_SEQ_CTR_H */
