/* pkt_encode.h - the writer's event packet encoder: the bytes of a fast
 * event packet, with no writer state (seq_fast.h and seq_lane.h write
 * them into the writer's buffer). Private to lib/.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A fast packet - no annotations or flows, strings already interned in
 * this generation, no checkpoint due - goes straight into the pending
 * buffer after one space check. Packet and TrackEvent are known to be
 * under 128 bytes, so both lengths are single bytes:
 *
 *   0A len | 40 ts [D0 03 41] | seq id + flags | 5A len | 48 type
 *          | [58 track] [18 cat] [50 name] [F0 01 value | E1 02 double]
 */
#ifndef PTW_PKT_ENCODE_H
#define PTW_PKT_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/encode/pb.h"
#include "lib/encode/pb_fields.h"
#define PTW_EV_FAST_MAX 96u

/* A prepared TrackEvent body (type, category, name; default track) takes
 * at most 14 bytes; it is stored and copied as 16. */
#define PTW_SEQ_BODY_MAX 16u

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
 * (*base, then moved to ts), or, time going back, absolute on the
 * sequence's absolute clock (s->abs_clock: clock 65, 1:1 with BOOTTIME,
 * or BOOTTIME itself on a converter's sequences; the base stays). The
 * known bytes start with the sequence's header (s->hdr: sequence id, flags, machine id), and are
 * whatever the caller knew before the timestamp: the header alone (the
 * general path adds interned data, then the TrackEvent), the header and
 * the TrackEvent tag (ptw_seq_fast_write adds the TrackEvent's length and
 * fields), or all of it (a prepared event, struct ptw_seq_prep; a
 * converter's lane, seq_lane.h, adds a body word). ptw_pkt_put() writes up to the
 * known bytes' end, ptw_pkt_end() the length byte once the packet is
 * whole: a fast packet is under 128 bytes. */

/* Writes the timestamp field(s) of an event packet at p (room reserved)
 * against the delta base *base, absolute on clock abs_clock when time
 * goes back; returns the end. small_steps (a
 * constant): deltas are mostly below 2^14 (the tracer's), written in two
 * stores. Either form may write up to 4 bytes past the end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_put_ts(uint8_t *p, uint64_t ts, uint64_t *base, unsigned abs_clock,
	   const int small_steps)
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
		if (abs_clock) /* (0: the sequence's defaults say BOOTTIME) */
			p = ptw_pb_write_varint_field(
				p, PTW_F_PKT_TIMESTAMP_CLOCK_ID, abs_clock);
	}
	return p;
}

/* Starts an event packet at p (PTW_EV_FAST_MAX bytes of room): the
 * record's tag, its length byte (left for ptw_pkt_end), the timestamp
 * (ptw_put_ts) and known[0, n). 'copy' (a constant, 16 or 32, >= n) is
 * how many bytes of 'known' are readable: they are copied whole. Returns
 * the end of the known bytes. */
static inline __attribute__((always_inline)) uint8_t *
ptw_pkt_put(uint8_t *p, uint64_t ts, uint64_t *base, unsigned abs_clock,
	    const uint8_t *known, size_t n, const size_t copy,
	    const int small_steps)
{
	uint8_t *q = ptw_put_ts(p + 2, ts, base, abs_clock, small_steps);
	p[0] = PTW_PB_TAG(PTW_F_TRACE_PACKET, PTW_PB_WT_LEN);
	memcpy(q, known, copy); /* room: PTW_EV_FAST_MAX */
	return q + n;
}

/* ptw_pkt_put() and ptw_pkt_end() at once for a packet whose known bytes
 * are all of it (n <= 32 of 'known', 32 readable) and whose time step
 * (ts - *base, the delta form) is below 2^14, for loops that write many:
 * tag, length and timestamp are one word, head[two] from
 * ptw_pkt_step_head(n, two) for a one- (two = 0) or two-byte step (two =
 * 1), with the step's bits added. The same bytes (test_writer_prep.c);
 * the caller moves the base. Returns the packet's end. */
static inline uint64_t ptw_pkt_step_head(size_t n, unsigned two)
{
	/* 0A len 40, and the step's continuation bit (bit 7 of byte 3) */
	return PTW_PB_TAG(PTW_F_TRACE_PACKET, PTW_PB_WT_LEN) |
	       (uint64_t)(n + 2u + two) << 8 |
	       (uint64_t)PTW_PB_TAG(PTW_F_PKT_TIMESTAMP, PTW_PB_WT_VARINT) << 16 |
	       (uint64_t)two << 31;
}

static inline __attribute__((always_inline)) uint8_t *
ptw_pkt_put_step(uint8_t *p, uint64_t step, const uint64_t head[2],
		 const uint8_t known[32], size_t n)
{
	uint64_t hi = step & ~(uint64_t)0x7Fu;
	size_t two = hi != 0; /* a two-byte step (no branch: steps vary) */
	uint64_t w = head[two];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* step + hi: the low 7 bits in byte 0, the high ones in byte 1 */
	w |= (step + hi) << 24;
	memcpy(p, &w, 8);
#else
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(w >> (8 * i));
	p[3] |= (uint8_t)(step & 0x7Fu);
	p[4] = (uint8_t)(step >> 7);
#endif
	p += two;
	memcpy(p + 4, known, 32); /* room: PTW_EV_FAST_MAX */
	return p + 4 + n;
}

/* (The tracer backend keeps ptw_pkt_put_step, above: this form's word,
 * a bit scan and two table loads, cost its runs 6-10% of their events a
 * second; docs/writer.md.)
 * ptw_pkt_put() and ptw_pkt_end() at once for a packet whose known bytes
 * are a prefix (pre, pre_len bytes, 16 readable) and a body (n bytes of
 * the little-endian word 'body'), whose time step (ts - *base, the delta
 * form) is below PTW_PKT_STEP21_MAX, for the converters' lane
 * (seq_lane.h): their steps often take 3 bytes. Tag, length, timestamp
 * tag and the 1-3 byte step are one word: head, from
 * ptw_pkt_step21_head(pre_len + n), plus the step's bits. The same bytes
 * (test_writer_prep.c); the caller moves the base. Returns the packet's
 * end. */
#define PTW_PKT_STEP21_MAX (1u << 21)

static inline uint64_t ptw_pkt_step21_head(size_t n)
{
	/* 0A len 40, the length that of a 1-byte step */
	return PTW_PB_TAG(PTW_F_TRACE_PACKET, PTW_PB_WT_LEN) |
	       (uint64_t)(n + 2u) << 8 |
	       (uint64_t)PTW_PB_TAG(PTW_F_PKT_TIMESTAMP, PTW_PB_WT_VARINT) << 16;
}

static inline __attribute__((always_inline)) uint8_t *
ptw_pkt_put_step21(uint8_t *p, uint64_t step, uint64_t head,
		   const uint8_t pre[16], size_t pre_len, uint64_t body,
		   size_t n)
{
	/* by the step's top bit (0-20): its bytes past the first, and what
	 * they add to the head (the length, the continuation bits) */
	static const uint8_t more_n[21] = {0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
					   1, 1, 1, 2, 2, 2, 2, 2, 2, 2};
#define PTW_STEP21_1 (1ull << 8 | 0x80ull << 24)
#define PTW_STEP21_2 (2ull << 8 | 0x80ull << 24 | 0x80ull << 32)
	static const uint64_t more_w[21] = {
		0, 0, 0, 0, 0, 0, 0,
		PTW_STEP21_1, PTW_STEP21_1, PTW_STEP21_1, PTW_STEP21_1,
		PTW_STEP21_1, PTW_STEP21_1, PTW_STEP21_1,
		PTW_STEP21_2, PTW_STEP21_2, PTW_STEP21_2, PTW_STEP21_2,
		PTW_STEP21_2, PTW_STEP21_2, PTW_STEP21_2};
#undef PTW_STEP21_1
#undef PTW_STEP21_2
	unsigned top = 63u ^ (unsigned)__builtin_clzll(step | 1u);
	/* the step's 7-bit groups one a byte: bits 7-13 move up 1, bits
	 * 14-20 up 2 */
	uint64_t groups = step + (step & ~(uint64_t)0x7Fu) +
			  2u * (step & ~(uint64_t)0x3FFFu);
	uint64_t w = head + more_w[top] + (groups << 24);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &w, 8);
#else
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(w >> (8 * i));
#endif
	uint8_t *q = p + 4 + more_n[top];
	memcpy(q, pre, 16); /* room: PTW_EV_FAST_MAX */
	memcpy(q + pre_len, &body, sizeof(body));
	return q + pre_len + n;
}

/* Ends the packet ptw_pkt_put() started at p, whole up to q (under 128
 * bytes): its length byte. Returns q. */
static inline __attribute__((always_inline)) uint8_t *
ptw_pkt_end(uint8_t *p, uint8_t *q)
{
	p[1] = (uint8_t)(q - p - 2);
	return q;
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
 * sequence's delta base, absolute clock and header: hdr is the sequence's (s->hdr, 16
 * bytes: the header's hdr_len then the TrackEvent's tag). Room for
 * PTW_EV_FAST_MAX bytes is reserved, the iids are still valid (the
 * sequence's cp_gen unchanged). Counts nothing; returns the packet's
 * end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_put_body_packet(uint8_t *p, uint64_t ts, uint64_t *base,
		    unsigned abs_clock, const uint8_t hdr[16], size_t hdr_len,
		    const uint8_t body[PTW_SEQ_BODY_MAX], size_t n)
{
	uint8_t *q = ptw_pkt_put(p, ts, base, abs_clock, hdr, hdr_len + 1u,
				 16, 0);
	*q++ = (uint8_t)n;
	memcpy(q, body, PTW_SEQ_BODY_MAX); /* fits: PTW_EV_FAST_MAX room */
	return ptw_pkt_end(p, q + n);
}

#endif /* PTW_PKT_ENCODE_H */
