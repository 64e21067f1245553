/* smb_route.c - routers: a writer's TracePackets into the chunks of one
 * writer id per sequence, without the fields only the service writes,
 * fragmented across chunks, dropped and marked when no chunk is free
 * (smb.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "lib/encode/pb.h"
#include "lib/encode/pb_fields.h"
#include "lib/util/grow.h"
#include "lib/util/hashmap.h"
#include "ptw/error.h"
#include "smb_internal.h"

/* Kept runs of one packet: ptw's packets strip one to three fields. */
#define PTW_SMB_SEQ_CACHE 64u
#define PTW_SMB_MAX_SEGS 32u
/* A packet is begun in the open chunk only if this much room is left
 * (the SDK's kPacketHeaderSize + 8): less would make a tiny fragment. */
#define PTW_SMB_MIN_BEGIN 12u
/* Header of a fragment that continues in the next chunk: a redundant
 * 4-byte varint, so that it can still be turned into the drop size. */
#define PTW_SMB_PART_HDR 4u

/* TracePacket fields this side must not write (PacketStreamValidator's
 * kReservedFieldIds): the service's own, stamped per writer id... */
#define F_TRUSTED_UID 3u
#define F_TRUSTED_SEQ 10u
#define F_TRUSTED_PID 79u
#define F_MACHINE_ID 98u
/* ...and those that make it drop the packet. */
static const uint32_t ptw_smb_refused[] = {
	33,  /* trace_config */
	35,  /* trace_stats */
	36,  /* synchronization_marker */
	50,  /* compressed_packets */
	69,  /* service_event */
	124, /* trace_provenance */
	125, /* protovms */
	133, /* zstd_compressed_packets */
};
#define F_INCREMENTAL_STATE_CLEARED 41u /* deprecated bool */

/* The fields below 64 that the parser looks at (bit per field). */
#define PTW_SMB_SPECIAL_LOW                                                   \
	((1ull << F_TRUSTED_UID) | (1ull << F_TRUSTED_SEQ) |                  \
	 (1ull << PTW_F_PKT_SEQUENCE_FLAGS) |                                 \
	 (1ull << F_INCREMENTAL_STATE_CLEARED) |                              \
	 (1ull << PTW_F_PKT_PREVIOUS_PACKET_DROPPED) | (1ull << 33) |         \
	 (1ull << 35) | (1ull << 36) | (1ull << 50))

static int ptw_smb_is_refused(uint64_t field)
{
	for (size_t i = 0;
	     i < sizeof(ptw_smb_refused) / sizeof(ptw_smb_refused[0]); i++)
		if (field == ptw_smb_refused[i])
			return 1;
	return 0;
}

struct ptw_smb_seq {
	uint32_t seq_id;
	uint32_t writer_id;     /* 0: none was left */
	uint32_t next_chunk_id;
	uint8_t lossy;          /* lost a packet: NEEDS packets left out
				 * until one clears the state */
	uint8_t mark;           /* a loss that no written packet carried */
	uint8_t any;            /* a packet was written on it */
	struct ptw_smb_chunk ch;
};

struct ptw_smb_router {
	struct ptw_smb *smb;
	uint32_t target_buffer;
	struct ptw_smb_hooks hooks;
	struct ptw_map map;           /* seq_id -> index + 1 in seqs */
	struct ptw_smb_seq **seqs;
	size_t n_seqs, seqs_cap;
	/* recent sequences by the low bits of their id (the writer's output
	 * interleaves them packet by packet) */
	struct ptw_smb_seq *cache[PTW_SMB_SEQ_CACHE];
	struct ptw_smb_router *next;  /* in smb->routers */
};

/* One packet as it will be written: the kept runs of its bytes, then
 * (mark_len > 0) a previous_packet_dropped field. */
struct ptw_smb_pkt {
	const uint8_t *seg[PTW_SMB_MAX_SEGS];
	size_t seg_len[PTW_SMB_MAX_SEGS];
	uint32_t nseg;
	size_t len;              /* bytes in all, mark included */
	uint32_t seq_id;         /* 0: none */
	uint32_t seq_flags;      /* sequence_flags */
	uint32_t dropped;        /* its own previous_packet_dropped */
	int cleared;             /* clears the sequence's state */
	int refused;
	uint8_t mark[16];
	uint32_t mark_len;
};

/* ---- parsing ---------------------------------------------------------- */

static inline int ptw_smb_varint(const uint8_t **pp, const uint8_t *end,
				 uint64_t *v)
{
	const uint8_t *p = *pp;
	if (__builtin_expect(p < end && *p < 0x80u, 1)) { /* most of them */
		*v = *p;
		*pp = p + 1;
		return 0;
	}
	uint64_t x = 0;
	for (unsigned sh = 0; sh < 64 && p < end; sh += 7) {
		uint8_t b = *p++;
		x |= (uint64_t)(b & 0x7fu) << sh;
		if (!(b & 0x80u)) {
			*v = x;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

static int ptw_smb_keep(struct ptw_smb_pkt *k, const uint8_t *from,
			const uint8_t *to)
{
	if (from == to)
		return 0;
	if (k->nseg && k->seg[k->nseg - 1] + k->seg_len[k->nseg - 1] == from) {
		k->seg_len[k->nseg - 1] += (size_t)(to - from);
	} else {
		if (k->nseg == PTW_SMB_MAX_SEGS)
			return -1;
		k->seg[k->nseg] = from;
		k->seg_len[k->nseg++] = (size_t)(to - from);
	}
	k->len += (size_t)(to - from);
	return 0;
}

/* Reads the top-level fields of a TracePacket into k. 0, or -1 if it is
 * not a well-formed message (or strips more runs than k holds). */
static int ptw_smb_parse(const uint8_t *p, size_t n, struct ptw_smb_pkt *k)
{
	const uint8_t *end = p + n;
	/* field by field: the runs' arrays are written as they fill */
	k->nseg = 0;
	k->len = 0;
	k->seq_id = k->seq_flags = k->dropped = k->mark_len = 0;
	k->cleared = k->refused = 0;
	while (p < end) {
		const uint8_t *f = p;
		uint64_t tag, v = 0;
		if (ptw_smb_varint(&p, end, &tag))
			return -1;
		uint64_t field = tag >> 3;
		switch (tag & 7u) {
		case PTW_PB_WT_VARINT:
			if (ptw_smb_varint(&p, end, &v))
				return -1;
			break;
		case PTW_PB_WT_FIXED64:
			if ((size_t)(end - p) < 8)
				return -1;
			p += 8;
			break;
		case PTW_PB_WT_LEN:
			if (ptw_smb_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return -1;
			p += v;
			break;
		case PTW_PB_WT_FIXED32:
			if ((size_t)(end - p) < 4)
				return -1;
			p += 4;
			break;
		default:
			return -1;
		}
		int strip = 0;
		/* Most fields are none of those below: one test passes them. */
		if (field < 64 && !((PTW_SMB_SPECIAL_LOW >> field) & 1u))
			goto keep;
		if (field == F_TRUSTED_SEQ) { /* every packet: no jump table */
			k->seq_id = (uint32_t)v;
			continue;
		}
		switch (field) {
		case F_TRUSTED_UID:
		case F_TRUSTED_PID:
		case F_MACHINE_ID:
			strip = 1;
			break;
		case PTW_F_PKT_PREVIOUS_PACKET_DROPPED:
			/* written again with ours OR-ed in */
			k->dropped |= (uint32_t)v;
			strip = 1;
			break;
		case PTW_F_PKT_SEQUENCE_FLAGS:
			k->seq_flags = (uint32_t)v;
			if (v & PTW_SEQ_INCREMENTAL_STATE_CLEARED)
				k->cleared = 1;
			break;
		case F_INCREMENTAL_STATE_CLEARED:
			if (v)
				k->cleared = 1;
			break;
		default:
			if (field >= 33) /* the refused ones, none below */
				k->refused |= ptw_smb_is_refused(field);
		}
		if (strip)
			continue;
keep:
		if (ptw_smb_keep(k, f, p))
			return -1;
	}
	return 0;
}

/* Adds previous_packet_dropped = 'value' at the end of k. */
static void ptw_smb_add_mark(struct ptw_smb_pkt *k, uint32_t value)
{
	uint8_t *q = ptw_pb_write_varint(
		k->mark, PTW_PB_TAG(PTW_F_PKT_PREVIOUS_PACKET_DROPPED,
				    PTW_PB_WT_VARINT));
	q = ptw_pb_write_varint(q, value);
	k->mark_len = (uint32_t)(q - k->mark);
	k->len += k->mark_len;
}

/* memcpy for the few bytes of most runs, without a call: two
 * overlapping 8- or 4-byte moves cover 4 to 16 bytes. */
static inline void ptw_smb_copy_small(uint8_t *d, const uint8_t *p, size_t n)
{
	if (n > 16) {
		memcpy(d, p, n);
	} else if (n >= 8) {
		memcpy(d, p, 8);
		memcpy(d + n - 8, p + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, p, 4);
		memcpy(d + n - 4, p + n - 4, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = p[i];
	}
}

/* Copies n bytes of k from offset off on into dst. */
static void ptw_smb_copy(const struct ptw_smb_pkt *k, size_t off, uint8_t *dst,
			 size_t n)
{
	for (uint32_t i = 0; i < k->nseg && n; i++) {
		size_t l = k->seg_len[i];
		if (off >= l) {
			off -= l;
			continue;
		}
		size_t c = l - off < n ? l - off : n;
		memcpy(dst, k->seg[i] + off, c);
		dst += c;
		n -= c;
		off = 0;
	}
	if (n) /* the rest is in the mark */
		memcpy(dst, k->mark + off, n);
}

/* ---- writing ------------------------------------------------------------ */

/* Payload bytes of the next fragment of a packet with 'rem' bytes left in
 * 'room' bytes of a chunk (>= PTW_SMB_MIN_BEGIN), and its header size. */
static size_t ptw_smb_frag(uint32_t room, size_t rem, uint32_t *hdr)
{
	unsigned h = ptw_pb_varint_size(rem);
	if (rem + h <= room) {
		*hdr = h;
		return rem;
	}
	*hdr = PTW_SMB_PART_HDR;
	return room - PTW_SMB_PART_HDR;
}

static void ptw_smb_put_redundant(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v | 0x80u);
	p[1] = (uint8_t)((v >> 7) | 0x80u);
	p[2] = (uint8_t)((v >> 14) | 0x80u);
	p[3] = (uint8_t)((v >> 21) & 0x7fu);
}

static void ptw_smb_complete_seq(struct ptw_smb_router *r,
				 struct ptw_smb_seq *s)
{
	if (s->ch.base &&
	    ptw_smb_complete(r->smb, &s->ch, r->target_buffer) &&
	    r->hooks.commit_due)
		r->hooks.commit_due(r->hooks.ctx);
}

/* Takes s's next chunk into *c (its chunk id then counts). */
static int ptw_smb_take(struct ptw_smb_router *r, struct ptw_smb_seq *s,
			uint32_t flags, struct ptw_smb_chunk *c)
{
	if (!ptw_smb_acquire(r->smb, s->writer_id, s->next_chunk_id, flags, c))
		return 0;
	s->next_chunk_id++;
	return 1;
}

/* Writes k on s's writer, whole or not at all. Returns 1, or 0 if there
 * were not enough free chunks (nothing of it will be read). */
static int ptw_smb_try_put(struct ptw_smb_router *r, struct ptw_smb_seq *s,
			   const struct ptw_smb_pkt *k)
{
	struct ptw_smb *smb = r->smb;
	struct ptw_smb_chunk *c = &s->ch, next;
	uint32_t room = c->base ? c->size - c->used : 0;
	if (room > k->len + 2 && c->count < PTW_SMB_MAX_PACKETS_PER_CHUNK &&
	    k->len < 128 - 2) {
		/* the common case: a small packet that fits */
		uint8_t *d = c->base + c->used;
		*d++ = (uint8_t)k->len;
		for (uint32_t i = 0; i < k->nseg; i++) {
			ptw_smb_copy_small(d, k->seg[i], k->seg_len[i]);
			d += k->seg_len[i];
		}
		ptw_smb_copy_small(d, k->mark, k->mark_len);
		c->used += 1 + (uint32_t)k->len;
		c->count++;
		ptw_smb_chunk_publish(c);
		return 1;
	}
	int here = c->base && c->count < PTW_SMB_MAX_PACKETS_PER_CHUNK &&
		   room >= PTW_SMB_MIN_BEGIN;
	/* New chunks it takes: the same steps as the writing below. */
	size_t rem = k->len;
	uint32_t need = 0, h;
	if (here)
		rem -= ptw_smb_frag(room, rem, &h);
	while (rem) {
		need++;
		rem -= ptw_smb_frag(smb->chunk_size - PTW_SMB_CHUNK_HDR, rem,
				    &h);
	}
	/* A packet begun must be finished: unless its one new chunk is
	 * taken before anything is written, the chunks it needs are counted
	 * first. Only this thread takes chunks, so those counted free stay
	 * free. */
	if (need > (here ? 0u : 1u) && ptw_smb_free_chunks(smb, need) < need)
		return 0;
	if (!here) {
		if (!ptw_smb_take(r, s, 0, &next))
			return 0;
		ptw_smb_complete_seq(r, s);
		*c = next;
	}
	size_t off = 0;
	for (;;) {
		room = c->size - c->used;
		size_t f = ptw_smb_frag(room, k->len - off, &h);
		uint8_t *d = c->base + c->used;
		int last = off + f == k->len;
		if (last)
			ptw_pb_write_varint(d, f);
		else
			ptw_smb_put_redundant(d, (uint32_t)f);
		ptw_smb_copy(k, off, d + h, f);
		off += f;
		c->used += h + (uint32_t)f;
		c->count++;
		if (last) {
			ptw_smb_chunk_publish(c);
			break;
		}
		if (!ptw_smb_take(r, s, PTW_SMB_FIRST_CONTINUES, &next)) {
			/* Cannot happen while one thread writes (counted
			 * above). If it did: the size that tells the service
			 * to drop the packet begun (kPacketSizeDropPacket,
			 * as the SDK's TraceWriter aborts one). */
			ptw_smb_put_redundant(d, PTW_SMB_DROP_PACKET_SIZE);
			ptw_smb_complete_seq(r, s);
			return 0;
		}
		c->flags |= PTW_SMB_LAST_CONTINUES;
		ptw_smb_complete_seq(r, s);
		*c = next;
		smb->st.fragments++;
	}
	return 1;
}

/* Completes every chunk that the routers of smb hold open, so that a
 * commit can hand them all to the service. */
static void ptw_smb_complete_open(struct ptw_smb *smb)
{
	for (struct ptw_smb_router *r = smb->routers; r; r = r->next)
		for (size_t i = 0; i < r->n_seqs; i++)
			ptw_smb_complete_seq(r, r->seqs[i]);
}

/* ptw_smb_try_put; when it finds no room and 'may_stall', as long as
 * hooks.stall says it made room likely, completes the open chunks and
 * tries again. */
static int ptw_smb_put(struct ptw_smb_router *r, struct ptw_smb_seq *s,
		       const struct ptw_smb_pkt *k, int may_stall)
{
	for (unsigned attempt = 0;; attempt++) {
		if (ptw_smb_try_put(r, s, k)) {
			s->any = 1;
			return 1;
		}
		if (!may_stall || !r->hooks.stall)
			return 0;
		ptw_smb_complete_open(r->smb);
		if (!r->hooks.stall(r->hooks.ctx, attempt))
			return 0;
	}
}

/* A packet of a loss mark alone (previous_packet_dropped). */
static int ptw_smb_put_mark(struct ptw_smb_router *r, struct ptw_smb_seq *s,
			    int may_stall)
{
	struct ptw_smb_pkt k;
	memset(&k, 0, sizeof(k));
	ptw_smb_add_mark(&k, PTW_SMB_LOSS_MARK);
	return ptw_smb_put(r, s, &k, may_stall);
}

/* ---- sequences ------------------------------------------------------------ */

static struct ptw_smb_seq *ptw_smb_seq_get(struct ptw_smb_router *r,
					   uint32_t seq_id)
{
	struct ptw_smb_seq **slot = &r->cache[seq_id % PTW_SMB_SEQ_CACHE];
	if (*slot && (*slot)->seq_id == seq_id)
		return *slot;
	uint64_t i;
	if (ptw_map_get(&r->map, seq_id, &i))
		return *slot = r->seqs[i - 1];
	if (r->n_seqs == r->seqs_cap) {
		size_t cap = r->seqs_cap ? r->seqs_cap * 2 : 16;
		void *p = ptw_realloc_array(r->seqs, cap, sizeof(*r->seqs));
		if (!p)
			return NULL;
		r->seqs = p;
		r->seqs_cap = cap;
	}
	struct ptw_smb_seq *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (ptw_map_put(&r->map, seq_id, r->n_seqs + 1)) {
		free(s);
		return NULL;
	}
	s->seq_id = seq_id;
	struct ptw_smb *smb = r->smb;
	if (smb->next_writer_id <= PTW_SMB_MAX_WRITER_ID) {
		s->writer_id = smb->next_writer_id++;
		if (r->hooks.writer)
			r->hooks.writer(r->hooks.ctx, s->writer_id,
					r->target_buffer, 1);
	}
	r->seqs[r->n_seqs++] = s;
	return *slot = s;
}

/* Completes s's chunk, gives back its writer id and frees it. */
static void ptw_smb_seq_end(struct ptw_smb_router *r, struct ptw_smb_seq *s)
{
	ptw_smb_complete_seq(r, s);
	if (s->writer_id && r->hooks.writer)
		r->hooks.writer(r->hooks.ctx, s->writer_id, r->target_buffer, 0);
	struct ptw_smb_seq **slot = &r->cache[s->seq_id % PTW_SMB_SEQ_CACHE];
	if (*slot == s)
		*slot = NULL;
	free(s);
}

/* ---- routers ------------------------------------------------------------- */

struct ptw_smb_router *ptw_smb_router_create(struct ptw_smb *smb,
					     uint32_t target_buffer,
					     const struct ptw_smb_hooks *hooks)
{
	struct ptw_smb_router *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->smb = smb;
	r->target_buffer = target_buffer;
	if (hooks)
		r->hooks = *hooks;
	r->next = smb->routers;
	smb->routers = r;
	return r;
}

void ptw_smb_router_destroy(struct ptw_smb_router *r)
{
	if (!r)
		return;
	ptw_smb_router_flush(r);
	for (size_t i = 0; i < r->n_seqs; i++)
		ptw_smb_seq_end(r, r->seqs[i]);
	free(r->seqs);
	ptw_map_free(&r->map);
	struct ptw_smb_router **pp = &r->smb->routers;
	while (*pp != r)
		pp = &(*pp)->next;
	*pp = r->next;
	free(r);
}

void ptw_smb_destroy(struct ptw_smb *smb)
{
	if (!smb)
		return;
	while (smb->routers)
		ptw_smb_router_destroy(smb->routers);
	free(smb->commits);
	free(smb->slot);
	free(smb);
}

/* Writes k, or drops it and puts its sequence in loss. */
static void ptw_smb_write(struct ptw_smb_router *r, struct ptw_smb_seq *s,
			  struct ptw_smb_pkt *k)
{
	struct ptw_smb_stats *st = &r->smb->st;
	if (s->lossy && !k->cleared &&
	    (k->seq_flags & PTW_SEQ_NEEDS_INCREMENTAL_STATE)) {
		st->skipped++;
		return;
	}
	uint32_t mark = k->dropped | (s->mark ? PTW_SMB_LOSS_MARK : 0);
	if (mark)
		ptw_smb_add_mark(k, mark);
	if (!k->len)
		return; /* nothing but the service's fields */
	/* trace_processor ignores the mark on a sequence's first packet
	 * (the service marks every first packet): a mark alone goes first */
	if (s->mark && !s->any)
		(void)ptw_smb_put_mark(r, s, 1);
	if (ptw_smb_put(r, s, k, 1)) {
		st->packets++;
		st->bytes += k->len;
		if (k->cleared)
			s->lossy = 0;
		if (s->mark) {
			s->mark = 0;
			st->loss_marks++;
		}
		return;
	}
	st->dropped++;
	st->dropped_bytes += k->len - k->mark_len;
	/* A loss begins, or the packet that would have ended one is lost:
	 * the writer is asked for (another) state-clearing packet. */
	int ask = !s->lossy || k->cleared;
	s->lossy = 1;
	s->mark = 1;
	if (ask && r->hooks.loss)
		r->hooks.loss(r->hooks.ctx, s->seq_id);
}

int ptw_smb_route_packet(struct ptw_smb_router *r, const uint8_t *pkt,
			 size_t n)
{
	struct ptw_smb_stats *st = &r->smb->st;
	struct ptw_smb_pkt k;
	if (ptw_smb_parse(pkt, n, &k)) {
		st->malformed++;
		return PTW_ERR_INVALID;
	}
	if (k.refused) {
		st->refused++;
		return 0;
	}
	struct ptw_smb_seq *s = ptw_smb_seq_get(r, k.seq_id);
	if (!s)
		return PTW_ERR_NOMEM;
	if (!s->writer_id) {
		st->malformed++;
		return 0;
	}
	ptw_smb_write(r, s, &k);
	return 0;
}

/* ---- the writer's usual packets ----------------------------------------- */

/* Most packets a ptw writer writes (an event each) have one shape:
 * [timestamp] trusted_packet_sequence_id [sequence_flags], then one
 * length-delimited field with a one-byte tag and size that ends the
 * packet (track_event). 'head' bytes from p are kept, then the sequence
 * id is left out, then the rest from 'rest' on is kept. */
struct ptw_smb_usual {
	size_t head;
	const uint8_t *rest;
	uint32_t seq_id;
	uint32_t flags;
};

/* 1 if the TracePacket p[0..n) has that shape (u filled), else 0. */
static inline int ptw_smb_usual_shape(const uint8_t *p, const uint8_t *end,
				      struct ptw_smb_usual *u)
{
	const uint8_t *q = p;
	uint64_t v;
	if (end - q >= 2 &&
	    *q == PTW_PB_TAG(PTW_F_PKT_TIMESTAMP, PTW_PB_WT_VARINT)) {
		q++;
		if (ptw_smb_varint(&q, end, &v))
			return 0;
	}
	u->head = (size_t)(q - p);
	if (end - q < 2 || *q++ != PTW_PB_TAG(F_TRUSTED_SEQ, PTW_PB_WT_VARINT) ||
	    ptw_smb_varint(&q, end, &v) || v > UINT32_MAX)
		return 0;
	u->seq_id = (uint32_t)v;
	u->rest = q;
	u->flags = 0;
	if (end - q >= 2 &&
	    *q == PTW_PB_TAG(PTW_F_PKT_SEQUENCE_FLAGS, PTW_PB_WT_VARINT) &&
	    q[1] < 0x80u) {
		u->flags = q[1];
		q += 2;
	}
	/* the last field: one the parser would keep as it is (below 16,
	 * not in PTW_SMB_SPECIAL_LOW), its size running to the end */
	return end - q >= 2 && q[0] < 0x80u &&
	       (q[0] & 7u) == PTW_PB_WT_LEN &&
	       !((PTW_SMB_SPECIAL_LOW >> (q[0] >> 3)) & 1u) && q[1] < 0x80u &&
	       (size_t)(end - q) == 2u + q[1];
}

/* The end of ptw_smb_route_usual's run on sequence s (NULL: none): its
 * chunk's used bytes and packet count, published if it took any. */
static inline void ptw_smb_usual_run_end(struct ptw_smb_seq *s, uint32_t used,
					 uint32_t count)
{
	if (!s || count == s->ch.count)
		return;
	s->ch.used = used;
	s->ch.count = count;
	ptw_smb_chunk_publish(&s->ch);
	s->any = 1;
}

/* Writes the records from p on straight into their sequences' open
 * chunks, as long as each is a usual packet that the general path
 * (ptw_smb_route_packet) would copy in whole: a known sequence with
 * nothing to mark or leave out, and room in its chunk. The bytes written
 * are the same (tests/test_shmem_usual.c compares both paths); this
 * one skips the field-by-field parse and the packet's copy list. State
 * that makes the general path treat a packet otherwise (s->lossy,
 * s->mark, ...) must stop it here too. Returns where it stopped: the
 * end, or a record the general path takes. */
static const uint8_t *ptw_smb_route_usual(struct ptw_smb_router *r,
					  const uint8_t *p, const uint8_t *end)
{
	/* The chunk of the current run of one sequence's packets, its used
	 * bytes and packet count in locals (the writer writes a thread's
	 * events in runs): stored back, and the count published, when the
	 * run ends, before anything else can read the chunk (the system
	 * thread commits it after this call). */
	struct ptw_smb_seq *s = NULL;
	struct ptw_smb_chunk *c = NULL;
	uint32_t used = 0, count = 0;
	uint64_t packets = 0, bytes = 0;
	while (end - p >= 2 &&
	       p[0] == PTW_PB_TAG(PTW_F_TRACE_PACKET, PTW_PB_WT_LEN) &&
	       p[1] < 0x80u && (size_t)(end - p) - 2u >= p[1]) {
		const uint8_t *pkt = p + 2, *pend = pkt + p[1];
		struct ptw_smb_usual u;
		if (!ptw_smb_usual_shape(pkt, pend, &u))
			break;
		if (!s || s->seq_id != u.seq_id) {
			ptw_smb_usual_run_end(s, used, count);
			s = r->cache[u.seq_id % PTW_SMB_SEQ_CACHE];
			if (!s || s->seq_id != u.seq_id || !s->writer_id ||
			    s->lossy || s->mark || !s->ch.base) {
				s = NULL;
				break;
			}
			c = &s->ch;
			used = c->used;
			count = c->count;
		}
		size_t tail = (size_t)(pend - u.rest), len = u.head + tail;
		/* ptw_smb_try_put's first case */
		if (c->size - used <= len + 2 ||
		    count >= PTW_SMB_MAX_PACKETS_PER_CHUNK)
			break;
		uint8_t *d = c->base + used;
		/* the chunk's next lines, for writing: the buffer is large
		 * and the service's CPU read it last (bench_system: about
		 * 8% more events a second) */
		__builtin_prefetch((const void *)((uintptr_t)d + 512), 1);
		*d++ = (uint8_t)len;
		ptw_smb_copy_small(d, pkt, u.head);
		ptw_smb_copy_small(d + u.head, u.rest, tail);
		used += 1 + (uint32_t)len;
		count++;
		packets++;
		bytes += len;
		p = pend;
	}
	ptw_smb_usual_run_end(s, used, count);
	struct ptw_smb_stats *st = &r->smb->st;
	st->packets += packets;
	st->bytes += bytes;
	return p;
}

int ptw_smb_route(struct ptw_smb_router *r, const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	int bad = 0;
	while ((p = ptw_smb_route_usual(r, p, end)) < end) {
		uint64_t tag, len;
		if (ptw_smb_varint(&p, end, &tag) ||
		    tag != PTW_PB_TAG(PTW_F_TRACE_PACKET, PTW_PB_WT_LEN) ||
		    ptw_smb_varint(&p, end, &len) ||
		    len > (uint64_t)(end - p)) {
			r->smb->st.malformed++;
			return PTW_ERR_INVALID;
		}
		int rc = ptw_smb_route_packet(r, p, (size_t)len);
		if (rc == PTW_ERR_INVALID)
			bad = rc; /* counted; the records after it are fine */
		else if (rc)
			return rc;
		p += len;
	}
	return bad;
}

/* Completes every open chunk of r and writes the marks still due, each
 * a packet of the mark alone (two on a sequence that has no packet yet,
 * see ptw_smb_write); with 'may_stall' a mark that finds no chunk waits
 * for room through hooks.stall, else (or if it gives up) it stays due. */
static void ptw_smb_flush_marks(struct ptw_smb_router *r, int may_stall)
{
	for (size_t i = 0; i < r->n_seqs; i++) {
		struct ptw_smb_seq *s = r->seqs[i];
		if (s->mark && s->writer_id &&
		    (s->any || ptw_smb_put_mark(r, s, may_stall)) &&
		    ptw_smb_put_mark(r, s, may_stall)) {
			s->mark = 0;
			r->smb->st.loss_marks++;
		}
		ptw_smb_complete_seq(r, s);
	}
}

void ptw_smb_router_flush(struct ptw_smb_router *r)
{
	ptw_smb_flush_marks(r, 0);
}

void ptw_smb_router_settle(struct ptw_smb_router *r)
{
	/* before each wait every open chunk is completed (ptw_smb_put),
	 * so the hook commits all that is written while the marks wait */
	ptw_smb_flush_marks(r, 1);
}

void ptw_smb_router_forget(struct ptw_smb_router *r, uint32_t seq_id)
{
	uint64_t i;
	if (!ptw_map_get(&r->map, seq_id, &i))
		return;
	struct ptw_smb_seq *s = r->seqs[i - 1];
	struct ptw_smb_seq *moved = r->seqs[--r->n_seqs];
	r->seqs[i - 1] = moved;
	ptw_map_del(&r->map, seq_id);
	if (moved != s)
		(void)ptw_map_put(&r->map, moved->seq_id, i); /* no growth:
								* replaces */
	ptw_smb_seq_end(r, s);
}
