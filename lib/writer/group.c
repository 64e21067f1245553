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
#include <stdlib.h>
#include <string.h>

#include "lib/encode/pb_fields.h"
#include "writer_internal.h"
#include "writer_state.h"

/* Sequence ids a batch may have (a converter numbers its sequences
 * from 3 on, new ones for each input's threads), and distinct sequences
 * in one batch; a batch with others is written in the order it was
 * made. */
#define PTW_GROUP_IDS PTW_GRP_SEQ_BIG
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

static int ptw_g_as_made(const struct ptw_writer *w);

void ptw_w_grp_add(struct ptw_writer *w, size_t at, size_t end, uint16_t seq,
		   uint32_t n)
{
	/* (not every record noted, offsets or counts too big for a run:
	 * the records are read back, ptw_g_runs) */
	if (w->grp_bad || at != w->grp_end || end > UINT32_MAX ||
	    n > UINT16_MAX) {
		w->grp_bad = 1;
		return;
	}
	if (!w->grp_probed) {
		/* the records of the runs before this one, which are whole */
		while (w->grp_probe_i < w->grp_n)
			w->grp_recs += w->grp_runs[w->grp_probe_i++].n;
		if (w->grp_recs > PTW_GROUP_PROBE) {
			/* (the newest record is not among the first ones) */
			w->grp_probed = 1;
			if (ptw_g_as_made(w)) {
				w->grp_as_made = 1;
				w->grp_on = 0;
				return;
			}
			w->grp_room = w->grp_cap;
		}
	}
	if (w->grp_n == w->grp_cap) {
		uint32_t cap = w->grp_cap ? 2 * w->grp_cap : 4096;
		void *r = cap > w->grp_cap
				  ? realloc(w->grp_runs, cap * sizeof(*w->grp_runs))
				  : NULL;
		if (!r) {
			w->grp_bad = 1;
			return;
		}
		w->grp_runs = r;
		w->grp_cap = cap;
		if (w->grp_probed)
			w->grp_room = cap;
	}
	w->grp_runs[w->grp_n++] =
		(struct ptw_grp_run){(uint32_t)at, (uint32_t)end, seq, (uint16_t)n};
	w->grp_end = end;
}

void ptw_w_grp_note_record(struct ptw_writer *w)
{
	const uint8_t *p = w->pend.data + w->last_pkt,
		      *end = w->pend.data + w->pend.len;
	uint64_t seq;
	if (!ptw_g_record(&p, end, &seq) || p != end) {
		w->grp_bad = 1;
		return;
	}
	ptw_w_grp_note(w, w->last_pkt, w->pend.len, seq, 1);
}

/* The runs of the records before the newest one (at w->last_pkt) in
 * w->grp_runs: those noted as they were written, else read back from
 * the records. 0 if they are not as the writer frames them or there is
 * no memory for the runs. */
static int ptw_g_runs(struct ptw_writer *w)
{
	struct ptw_grp_run *r = w->grp_n ? &w->grp_runs[w->grp_n - 1] : NULL;
	/* (the newest record is the last run's last) */
	if (!w->grp_bad && !w->grp_readback && w->grp_end == w->pend.len &&
	    r && (r->n > 1 ? r->off < w->last_pkt : r->off == w->last_pkt)) {
		if (!--r->n)
			w->grp_n--;
		else
			r->end = (uint32_t)w->last_pkt;
		return 1;
	}
	ptw_w_grp_reset(w);
	const uint8_t *src = w->pend.data, *end = src + w->last_pkt;
	for (const uint8_t *p = src; p < end;) {
		const uint8_t *rec = p;
		uint64_t seq;
		if (!ptw_g_record(&p, end, &seq))
			return 0;
		ptw_w_grp_note(w, (size_t)(rec - src), (size_t)(p - src), seq,
			       1);
		if (w->grp_bad || w->grp_as_made)
			return 0;
	}
	return 1;
}

/* 1 if the batch is better written as made, judging by its first
 * PTW_GROUP_PROBE records: they are in runs of PTW_GROUP_RUN records of
 * one sequence or longer on average (the APLTRC01 batches, a thread at
 * a time), or no more than PTW_TP_CLOCK_CACHE sequences with a clock of
 * their own (not abs_only) write them (each keeps its cache slot). */
static int ptw_g_as_made(const struct ptw_writer *w)
{
	uint8_t seen[PTW_GROUP_IDS];
	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 0; i < w->n_seqs; i++)
		if (w->seqs[i]->abs_only && w->seqs[i]->id < PTW_GROUP_IDS)
			seen[w->seqs[i]->id] = 1;
	uint32_t runs = 0, clocks = 0, recs = 0;
	/* (next to each other, runs are of different sequences) */
	for (uint32_t i = 0; i < w->grp_n && recs < PTW_GROUP_PROBE; i++) {
		uint64_t seq = w->grp_runs[i].seq;
		if (seq >= PTW_GROUP_IDS)
			return 1;
		runs++;
		clocks += !seen[seq];
		seen[seq] = 1;
		recs += w->grp_runs[i].n;
	}
	return runs * PTW_GROUP_RUN <= PTW_GROUP_PROBE ||
	       clocks <= PTW_TP_CLOCK_CACHE;
}

int ptw_w_group_by_seq(struct ptw_writer *w, const uint8_t **data,
		       size_t *last)
{
	/* The newest record stays last (the last of its sequence anyway):
	 * a compressed batch past its limit is split there (ptw_w_emit). */
	if (w->grp_as_made || !ptw_g_runs(w) || ptw_g_as_made(w))
		return 0;
	/* group + 1 of each sequence id (0: none yet), numbered in the
	 * order of the sequences' first packets; each group's bytes (then
	 * where it goes) */
	uint8_t grp_of[PTW_GROUP_IDS];
	size_t at[PTW_GROUP_MAX];
	uint32_t n_grp = 0;
	memset(grp_of, 0, sizeof(grp_of));
	const struct ptw_grp_run *runs = w->grp_runs;
	uint32_t n_runs = w->grp_n;
	for (uint32_t i = 0; i < n_runs; i++) {
		uint64_t seq = runs[i].seq;
		if (seq >= PTW_GROUP_IDS)
			return 0;
		uint8_t k = grp_of[seq];
		if (__builtin_expect(!k, 0)) {
			if (n_grp == PTW_GROUP_MAX)
				return 0;
			k = grp_of[seq] = (uint8_t)++n_grp;
			at[k - 1] = 0;
		}
		at[k - 1] += runs[i].end - runs[i].off;
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
	const uint8_t *src = w->pend.data;
	for (uint32_t i = 0; i < n_runs; i++) {
		size_t from = runs[i].off, to = runs[i].end;
		size_t *dst = &at[grp_of[runs[i].seq] - 1];
		ptw_g_copy(b->data + *dst, src + from, to - from);
		*dst += to - from;
	}
	memcpy(b->data + w->last_pkt, src + w->last_pkt,
	       w->pend.len - w->last_pkt);
	b->len = w->pend.len;
	*data = b->data;
	*last = w->last_pkt;
	return 1;
}

void ptw_i_writer_group_readback(struct ptw_writer *w)
{
	w->grp_readback = 1;
}
