/* test_shmem_usual.c - ptw_smb_route writes a ptw writer's usual packets
 * ([timestamp] sequence id [flags] track_event) straight into their
 * chunks, without the general parser: the same packets routed one by one
 * through the general path (ptw_smb_route_packet) must leave the same
 * bytes in the buffer, the same counts and the same commit list, also
 * for packets that only look usual, chunks that fill (bytes or the
 * 1023-packet count), a full buffer and the losses it begins.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shmem/smb.h"
#include "lib/writer/writer_internal.h"
#include "ptw/error.h"
#include "ptw/writer.h"
#include "support/smb_service.h"

/* ---- packets ------------------------------------------------------------- */

static uint64_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

static uint8_t *put_tag(uint8_t *p, uint32_t field, uint32_t wt)
{
	return svc_put_varint(p, (uint64_t)field << 3 | wt);
}

static uint8_t *put_bytes(uint8_t *p, uint32_t field, size_t n)
{
	p = put_tag(p, field, 2);
	p = svc_put_varint(p, n);
	for (size_t i = 0; i < n; i++)
		*p++ = (uint8_t)rnd(256);
	return p;
}

/* One TracePacket into p: mostly the usual shape, often a near miss
 * (another field order, a field the router strips, marks or refuses, a
 * two-byte size, one more field, a truncated varint). Returns its end. */
static uint8_t *make_packet(uint8_t *p)
{
	static const uint64_t seqs[] = {1, 2, 3, 65, 129, 300, 0x7fffffffu,
					(1ull << 32) + 1};
	static const uint32_t last[] = {11, 11, 11, 11, 12, 6, 0, 3, 10, 13,
					42};
	uint64_t seq = seqs[rnd(rnd(8) ? 3 : 8)];
	int ts_first = rnd(8) != 0;
	uint64_t ts = rnd(4) ? rnd(1u << 20) : ((uint64_t)rnd(1u << 30) << 30);
	if (rnd(10) && ts_first) {
		p = put_tag(p, 8, 0);
		p = svc_put_varint(p, ts);
	}
	if (rnd(40)) {
		p = put_tag(p, 10, 0);
		p = svc_put_varint(p, seq);
	}
	if (!ts_first) {
		p = put_tag(p, 8, 0);
		p = svc_put_varint(p, ts);
	}
	switch (rnd(12)) {
	case 0:
		break;
	case 1: /* clears the incremental state */
		p = put_tag(p, 13, 0);
		*p++ = 1;
		break;
	case 2: /* a two-byte flags varint */
		p = put_tag(p, 13, 0);
		p = svc_put_varint(p, 130);
		break;
	case 3:
		p = put_tag(p, 3, 0); /* trusted_uid: stripped */
		p = svc_put_varint(p, 1000);
		break;
	case 4: /* previous_packet_dropped: written again, marked */
		p = put_tag(p, 42, 0);
		*p++ = 1;
		break;
	case 5:
		if (!rnd(4)) { /* trace_stats: refused */
			p = put_bytes(p, 35, 2);
			break;
		}
		/* fall through */
	default:
		p = put_tag(p, 13, 0);
		*p++ = 2; /* needs the incremental state */
	}
	uint32_t f = last[rnd(rnd(3) ? 4 : 11)];
	size_t n = rnd(8) ? rnd(12) : rnd(rnd(4) ? 128 : 300);
	p = put_bytes(p, f, n);
	switch (rnd(30)) {
	case 0: /* one more field after it */
		p = put_tag(p, 8, 0);
		*p++ = 5;
		break;
	case 1: /* a truncated varint: malformed */
		*p++ = 8 << 3;
		*p++ = 0x80;
		break;
	}
	return p;
}

/* 'count' Trace.packet records into buf (large enough); returns bytes. */
static size_t make_records(uint8_t *buf, size_t count, uint64_t seed)
{
	static uint8_t pkt[1024];
	rnd_state = seed;
	uint8_t *q = buf;
	for (size_t i = 0; i < count; i++) {
		size_t n = (size_t)(make_packet(pkt) - pkt);
		*q++ = 0x0a;
		q = svc_put_varint(q, n);
		memcpy(q, pkt, n);
		q += n;
	}
	return (size_t)(q - buf);
}

/* ---- both paths ------------------------------------------------------------ */

struct side {
	uint8_t *mem;
	struct ptw_smb *smb;
	struct ptw_smb_router *r;
};

static void side_open(struct side *s, size_t size, uint32_t page,
		      uint32_t per)
{
	s->mem = aligned_alloc(4096, size);
	cr_assert_not_null(s->mem);
	memset(s->mem, 0, size);
	s->smb = ptw_smb_create(s->mem, size, page, per, NULL);
	cr_assert_not_null(s->smb);
	s->r = ptw_smb_router_create(s->smb, 3, NULL);
	cr_assert_not_null(s->r);
}

static void side_close(struct side *s)
{
	ptw_smb_destroy(s->smb);
	free(s->mem);
}

/* The record at p: its packet in *pkt, *len bytes; returns its end. */
static const uint8_t *next_record(const uint8_t *p, const uint8_t **pkt,
				  size_t *len)
{
	uint64_t n = 0;
	p++; /* the tag: 0x0a */
	for (unsigned sh = 0;; sh += 7) {
		n |= (uint64_t)(*p & 0x7f) << sh;
		if (!(*p++ & 0x80))
			break;
	}
	*pkt = p;
	*len = (size_t)n;
	return p + n;
}

/* Routes the records buf[0..n) in batches of random sizes (cut at record
 * boundaries) through ptw_smb_route. */
static void route_batches(struct side *s, const uint8_t *buf, size_t n)
{
	const uint8_t *p = buf, *end = buf + n, *from = buf, *pkt;
	size_t len;
	while (p < end) {
		p = next_record(p, &pkt, &len);
		if (p == end || !rnd(50)) {
			(void)ptw_smb_route(s->r, from, (size_t)(p - from));
			from = p;
		}
	}
}

/* Routes them one TracePacket at a time through the general path. */
static void route_singly(struct side *s, const uint8_t *buf, size_t n)
{
	const uint8_t *p = buf, *end = buf + n, *pkt;
	size_t len;
	while (p < end) {
		p = next_record(p, &pkt, &len);
		(void)ptw_smb_route_packet(s->r, pkt, len);
	}
}

static void expect_same(struct side *a, struct side *b, size_t size)
{
	ptw_smb_router_flush(a->r);
	ptw_smb_router_flush(b->r);
	struct ptw_smb_stats sa, sb;
	ptw_smb_get_stats(a->smb, &sa);
	ptw_smb_get_stats(b->smb, &sb);
	cr_assert_eq(sa.packets, sb.packets, "packets %llu vs %llu",
		     (unsigned long long)sa.packets,
		     (unsigned long long)sb.packets);
	cr_assert(memcmp(&sa, &sb, sizeof(sa)) == 0, "the counts differ");
	for (size_t i = 0; i < size; i++)
		cr_assert_eq(a->mem[i], b->mem[i],
			     "byte %zu of the buffer: %u vs %u", i, a->mem[i],
			     b->mem[i]);
	static struct ptw_smb_commit ca[4096], cb[4096];
	size_t na = ptw_smb_take_commits(a->smb, ca, 4096);
	size_t nb = ptw_smb_take_commits(b->smb, cb, 4096);
	cr_assert_eq(na, nb);
	cr_assert(memcmp(ca, cb, na * sizeof(ca[0])) == 0,
		  "the commit lists differ");
}

static void compare(size_t count, size_t size, uint32_t page, uint32_t per,
		    uint64_t seed, uint64_t min_written, int want_drops)
{
	static uint8_t buf[8u << 20];
	size_t n = make_records(buf, count, seed);
	cr_assert_lt(n, sizeof(buf));
	struct side a, b;
	side_open(&a, size, page, per);
	side_open(&b, size, page, per);
	rnd_state = seed * 7 + 1;
	route_batches(&a, buf, n);
	route_singly(&b, buf, n);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(b.smb, &st);
	cr_assert_geq(st.packets, min_written, "only %llu packets written",
		      (unsigned long long)st.packets);
	if (want_drops)
		cr_assert_gt(st.dropped, 0, "the buffer never filled");
	expect_same(&a, &b, size);
	side_close(&a);
	side_close(&b);
}

Test(shmem_usual, the_fast_path_writes_what_the_general_path_writes)
{
	for (uint64_t seed = 1; seed <= 4; seed++)
		compare(60000, 4u << 20, 32768, 2, seed, 50000, 0);
}

Test(shmem_usual, the_same_in_small_chunks_and_with_full_chunk_counts)
{
	for (uint64_t seed = 11; seed <= 14; seed++) {
		compare(60000, 2u << 20, 4096, 7, seed, 50000, 0);
		compare(60000, 4u << 20, 16384, 1, seed, 50000, 0);
	}
}

Test(shmem_usual, the_same_when_the_buffer_fills_and_packets_are_lost)
{
	for (uint64_t seed = 21; seed <= 24; seed++)
		compare(60000, 64u << 10, 4096, 2, seed, 1000, 1);
}

/* ---- a ptw writer's own output ---------------------------------------------- */

Test(shmem_usual, a_writers_events_come_out_the_same_both_ways)
{
	/* the writer's file, uncompressed: the records system mode routes
	 * (and a TraceStats packet, refused by both paths) */
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	struct ptw_writer_options o;
	memset(&o, 0, sizeof(o));
	o.compress = PTW_COMPRESS_NONE;
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open_fd(fileno(f), &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	struct ptw_seq *seq[3];
	for (int i = 0; i < 3; i++)
		seq[i] = ptw_writer_add_seq(
			w, ptw_writer_add_thread_track(w, 1, 2 + i, "t"));
	uint64_t ts = 100;
	for (int i = 0; i < 20000; i++, ts += 7) {
		struct ptw_seq *s = seq[i % 3];
		/* on each sequence: BEGIN BEGIN INSTANT END END INSTANT */
		static const enum ptw_simple_type kinds[6] = {
			PTW_SIMPLE_BEGIN, PTW_SIMPLE_BEGIN, PTW_SIMPLE_INSTANT,
			PTW_SIMPLE_END,   PTW_SIMPLE_END,   PTW_SIMPLE_INSTANT};
		enum ptw_simple_type kind = kinds[(i / 3) % 6];
		cr_assert_eq(ptw_seq_simple(s, kind, 0, ts, "cat",
					    i % 7 ? "name" : "other"),
			     0);
		if (i % 5000 == 4999)
			ptw_i_writer_clear_incremental(w, 0);
	}
	cr_assert_eq(ptw_writer_close(w, &err), 0);
	static uint8_t buf[4u << 20];
	rewind(f);
	size_t n = fread(buf, 1, sizeof(buf), f);
	cr_assert(n > 0 && n < sizeof(buf));
	fclose(f);
	struct side a, b;
	side_open(&a, 4u << 20, 32768, 2);
	side_open(&b, 4u << 20, 32768, 2);
	rnd_state = 5;
	route_batches(&a, buf, n);
	route_singly(&b, buf, n);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(b.smb, &st);
	cr_assert_geq(st.packets, 20000);
	expect_same(&a, &b, 4u << 20);
	side_close(&a);
	side_close(&b);
}
