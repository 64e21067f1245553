/* group.c - a converter's batch of packets written sequence by sequence
 * (ptw_i_writer_converted, docs/convert.md "Loading in trace_processor").
 *
 * trace_processor converts each packet's timestamp from its sequence's
 * clock to trace time through a cache of 8 conversions
 * (ClockSynchronizer::cache_, random replacement): a converter's thread
 * sequences each have a clock of their own (their deltas), so with more
 * than 8 of them, packets interleaved one by one in time order missed
 * the cache on most packets. Written in one run per sequence within each
 * batch, a sequence's packets miss about once per batch. The order within
 * each sequence is kept (its deltas, interning and checkpoints depend on
 * it); trace_processor sorts packets of different sequences by time.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "lib/encode/pb_fields.h"
#include "writer_state.h"

/* Sequence ids a batch may have (a converter numbers its sequences
 * from 3 on, new ones for each input's threads), and distinct sequences
 * in one batch; a batch with others is written in the order it was
 * made. */
#define PTW_GROUP_IDS 4096u
#define PTW_GROUP_MAX 255u

/* Slots of trace_processor's clock conversion cache: when no more
 * sequences with a clock of their own (not abs_only) write a batch,
 * every clock keeps its slot and the batch goes out as made. */
#define PTW_TP_CLOCK_CACHE 8u
/* The first records of a batch tell whether it is in runs already (the
 * APLTRC01 batches, one thread at a time): a switch of sequence at most
 * every PTW_GROUP_RUN of them, and the batch goes out as made. */
#define PTW_GROUP_PROBE 256u
#define PTW_GROUP_RUN 16u

static inline int ptw_g_varint(const uint8_t *p, const uint8_t *end,
			       const uint8_t **next, uint64_t *v)
{
	if (__builtin_expect(p < end && !(*p & 0x80), 1)) {
		*v = *p;
		*next = p + 1;
		return 1;
	}
	uint64_t x = 0;
	for (unsigned sh = 0; p < end && sh < 64; sh += 7) {
		uint8_t b = *p++;
		x |= (uint64_t)(b & 0x7F) << sh;
		if (!(b & 0x80)) {
			*v = x;
			*next = p;
			return 1;
		}
	}
	return 0;
}

/* The record at *p (a Trace.packet field): its end in *p and its
 * trusted_packet_sequence_id in *seq (0: none found). 0 if it is not a
 * whole Trace.packet record. */
static inline __attribute__((always_inline)) int
ptw_g_record(const uint8_t **p, const uint8_t *end, uint64_t *seq)
{
	const uint8_t *q = *p;
	uint64_t tag, len;
	/* most packets: 0A len 40 <ts> 50 <seq> ... (pkt_encode.h) */
	if (__builtin_expect(end - q >= 2 && q[0] == 0x0A && q[1] < 0x80 &&
			     q[1] <= end - q - 2 && q[2] == 0x40, 1)) {
		const uint8_t *be = q + 2 + q[1], *r = q + 3;
		while (r < be && (*r & 0x80))
			r++;
		if (be - r >= 3 && r[1] == 0x50 && r[2] < 0x80) {
			*seq = r[2];
			*p = be;
			return 1;
		}
	}
	if (!ptw_g_varint(q, end, &q, &tag) ||
	    tag != PTW_PB_TAG(PTW_F_TRACE_PACKET, PTW_PB_WT_LEN) ||
	    !ptw_g_varint(q, end, &q, &len) || len > (uint64_t)(end - q))
		return 0;
	const uint8_t *body_end = q + len;
	*p = body_end;
	*seq = 0;
	/* the sequence id follows the timestamp (and its clock) in the
	 * writer's packets: a few fields at most */
	while (q < body_end) {
		uint64_t v;
		if (!ptw_g_varint(q, body_end, &q, &tag))
			return 1;
		unsigned wt = (unsigned)(tag & 7);
		if (wt == PTW_PB_WT_VARINT) {
			if (!ptw_g_varint(q, body_end, &q, &v))
				return 1;
			if (tag >> 3 == PTW_F_PKT_SEQUENCE_ID) {
				*seq = v;
				return 1;
			}
		} else if (wt == PTW_PB_WT_LEN) {
			if (!ptw_g_varint(q, body_end, &q, &v) ||
			    v > (uint64_t)(body_end - q))
				return 1;
			q += v;
		} else if (wt == 1) {
			q += 8;
		} else if (wt == 5) {
			q += 4;
		} else {
			return 1;
		}
	}
	return 1;
}

/* 16 bytes from s to d */
static inline void ptw_g_copy16(uint8_t *d, const uint8_t *s)
{
	uint64_t a, b;
	memcpy(&a, s, 8);
	memcpy(&b, s + 8, 8);
	memcpy(d, &a, 8);
	memcpy(d + 8, &b, 8);
}

/* memcpy for the short runs of an interleaved batch (often one packet of
 * 5-60 bytes): fixed-size moves, overlapping, instead of a call. */
static inline void ptw_g_copy(uint8_t *d, const uint8_t *s, size_t n)
{
	if (n > 64) {
		memcpy(d, s, n);
	} else if (n > 32) {
		ptw_g_copy16(d, s);
		ptw_g_copy16(d + 16, s + 16);
		ptw_g_copy16(d + n - 32, s + n - 32);
		ptw_g_copy16(d + n - 16, s + n - 16);
	} else if (n >= 16) {
		ptw_g_copy16(d, s);
		ptw_g_copy16(d + n - 16, s + n - 16);
	} else if (n >= 8) {
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

/* 1 if the batch is better written as made, judging by its first
 * PTW_GROUP_PROBE records: they are in runs of PTW_GROUP_RUN records of
 * one sequence or longer on average (the APLTRC01 batches, a thread at
 * a time), or no more than PTW_TP_CLOCK_CACHE sequences with a clock of
 * their own (not abs_only) write them (each keeps its cache slot); or
 * they are not as the writer frames them. */
static int ptw_g_as_made(const struct ptw_writer *w, const uint8_t *p,
			 const uint8_t *end)
{
	uint8_t seen[PTW_GROUP_IDS];
	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 0; i < w->n_seqs; i++)
		if (w->seqs[i]->abs_only && w->seqs[i]->id < PTW_GROUP_IDS)
			seen[w->seqs[i]->id] = 1;
	uint64_t seq, prev = UINT64_MAX;
	uint32_t runs = 0, clocks = 0;
	for (uint32_t i = 0; i < PTW_GROUP_PROBE && p < end; i++) {
		if (!ptw_g_record(&p, end, &seq) || seq >= PTW_GROUP_IDS)
			return 1;
		runs += seq != prev;
		prev = seq;
		clocks += !seen[seq];
		seen[seq] = 1;
	}
	return runs * PTW_GROUP_RUN <= PTW_GROUP_PROBE ||
	       clocks <= PTW_TP_CLOCK_CACHE;
}

int ptw_w_group_by_seq(struct ptw_writer *w, const uint8_t **data,
		       size_t *last)
{
	/* The newest record stays last (the last of its sequence anyway):
	 * a compressed batch past its limit is split there (ptw_w_emit). */
	const uint8_t *src = w->pend.data, *end = src + w->last_pkt, *p;
	if (ptw_g_as_made(w, src, end))
		return 0;
	/* group + 1 of each sequence id (0: none yet), numbered in the
	 * order of the sequences' first packets; each group's bytes (then
	 * where it goes) */
	uint8_t grp_of[PTW_GROUP_IDS];
	size_t at[PTW_GROUP_MAX];
	uint32_t n_grp = 0;
	memset(grp_of, 0, sizeof(grp_of));
	/* the runs of records of one sequence: group, offset (5 bytes) */
	struct ptw_pb_buf *ix = &w->grp_ix;
	ix->len = 0;
	uint8_t prev = 0;
	for (p = src; p < end;) {
		const uint8_t *rec = p;
		uint64_t seq;
		if (!ptw_g_record(&p, end, &seq) || seq >= PTW_GROUP_IDS)
			return 0;
		uint8_t k = grp_of[seq];
		if (__builtin_expect(!k, 0)) {
			if (n_grp == PTW_GROUP_MAX)
				return 0;
			k = grp_of[seq] = (uint8_t)++n_grp;
			at[k - 1] = 0;
		}
		if (k != prev) {
			if (!ptw_pb_reserve(ix, 5)) {
				ix->oom = 0; /* (the batch goes out as made) */
				return 0;
			}
			uint32_t o = (uint32_t)(rec - src);
			ix->data[ix->len] = k;
			memcpy(ix->data + ix->len + 1, &o, 4);
			ix->len += 5;
			prev = k;
		}
		at[k - 1] += (size_t)(p - rec);
	}
	if (n_grp < 2)
		return 0;
	struct ptw_pb_buf *b = &w->grp;
	b->len = 0;
	if (!ptw_pb_reserve(b, w->pend.len)) {
		b->oom = 0;
		return 0;
	}
	size_t off = 0;
	for (uint32_t i = 0; i < n_grp; i++) {
		size_t n = at[i];
		at[i] = off;
		off += n;
	}
	for (size_t i = 0; i < ix->len; i += 5) {
		uint32_t from, to = (uint32_t)w->last_pkt;
		memcpy(&from, ix->data + i + 1, 4);
		if (i + 5 < ix->len)
			memcpy(&to, ix->data + i + 6, 4);
		size_t *dst = &at[ix->data[i] - 1];
		ptw_g_copy(b->data + *dst, src + from, to - from);
		*dst += to - from;
	}
	memcpy(b->data + w->last_pkt, end, w->pend.len - w->last_pkt);
	b->len = w->pend.len;
	*data = b->data;
	*last = w->last_pkt;
	return 1;
}
