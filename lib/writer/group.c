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

/* Distinct sequences one batch may have; a batch with more is written in
 * the order it was made (a converter has at most 16 thread sequences and
 * a few others). */
#define PTW_GROUP_MAX 64u

static int ptw_g_varint(const uint8_t *p, const uint8_t *end,
			const uint8_t **next, uint64_t *v)
{
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
static int ptw_g_record(const uint8_t **p, const uint8_t *end, uint64_t *seq)
{
	const uint8_t *q = *p;
	uint64_t tag, len;
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

struct ptw_g_groups {
	uint64_t seq[PTW_GROUP_MAX];
	size_t at[PTW_GROUP_MAX]; /* bytes, then where the group goes */
	uint32_t n, last;         /* groups; the last one found */
};

/* The group of sequence 'seq' (made at its first packet); -1 if there
 * are too many. */
static int ptw_g_find(struct ptw_g_groups *g, uint64_t seq)
{
	if (g->n && g->seq[g->last] == seq)
		return (int)g->last;
	for (uint32_t i = 0; i < g->n; i++)
		if (g->seq[i] == seq)
			return (int)(g->last = i);
	if (g->n == PTW_GROUP_MAX)
		return -1;
	g->seq[g->n] = seq;
	g->at[g->n] = 0;
	return (int)(g->last = g->n++);
}

int ptw_w_group_by_seq(struct ptw_writer *w, const uint8_t **data,
		       size_t *last)
{
	const uint8_t *src = w->pend.data, *end = src + w->pend.len, *p;
	struct ptw_g_groups g;
	g.n = g.last = 0;
	uint64_t seq;
	for (p = src; p < end;) {
		const uint8_t *rec = p;
		int k;
		if (!ptw_g_record(&p, end, &seq) || (k = ptw_g_find(&g, seq)) < 0)
			return 0;
		g.at[k] += (size_t)(p - rec);
	}
	if (g.n < 2)
		return 0;
	struct ptw_pb_buf *b = &w->grp;
	b->len = 0;
	if (!ptw_pb_reserve(b, w->pend.len)) {
		b->oom = 0; /* (the batch goes out as made) */
		return 0;
	}
	size_t off = 0, newest = 0;
	for (uint32_t i = 0; i < g.n; i++) {
		size_t n = g.at[i];
		g.at[i] = off;
		off += n;
	}
	for (p = src; p < end;) {
		const uint8_t *rec = p;
		ptw_g_record(&p, end, &seq);
		int k = ptw_g_find(&g, seq);
		size_t n = (size_t)(p - rec);
		memcpy(b->data + g.at[k], rec, n);
		if (g.at[k] > newest)
			newest = g.at[k];
		g.at[k] += n;
	}
	b->len = w->pend.len;
	*data = b->data;
	*last = newest;
	return 1;
}
