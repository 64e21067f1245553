/* test_shmem.c - lib/shmem: packets written into a shared memory buffer
 * in plain memory, read back by the tests' stand-in for the service
 * (support/smb_service.c: chunks moved out, fragments reassembled by
 * writer id and chunk id) and compared byte for byte with what was
 * routed: fragments over several chunks, a full buffer (loss counted and
 * marked), more sequences than chunks, chunks freed and taken again, a
 * service freeing chunks from another thread, the fields only the
 * service may write.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/shmem/smb.h"
#include "lib/shmem/smb_abi.h"
#include "lib/writer/writer_internal.h"
#include "ptw/error.h"
#include "ptw/writer.h"
#include "support/smb_service.h"

/* ---- packets ------------------------------------------------------------- */

/* A test packet: what is routed (with the service's fields) and what the
 * service must read (without them). */
struct tpkt {
	uint8_t in[70000];
	size_t in_len;
	uint8_t out[70000];
	size_t out_len;
};

/* Appends a field to both sides, or only to 'in' (stripped). */
static void add_varint(struct tpkt *k, uint32_t field, uint64_t v, int strip)
{
	uint8_t b[24], *q = svc_put_varint(b, (uint64_t)field << 3);
	q = svc_put_varint(q, v);
	memcpy(k->in + k->in_len, b, (size_t)(q - b));
	k->in_len += (size_t)(q - b);
	if (!strip) {
		memcpy(k->out + k->out_len, b, (size_t)(q - b));
		k->out_len += (size_t)(q - b);
	}
}

/* A bytes field (for_testing, 900) of n bytes that tell 'tag' apart. */
static void add_body(struct tpkt *k, uint32_t tag, size_t n)
{
	uint8_t b[24], *q = svc_put_varint(b, 900u << 3 | 2);
	q = svc_put_varint(q, n);
	size_t h = (size_t)(q - b);
	memcpy(k->in + k->in_len, b, h);
	memcpy(k->out + k->out_len, b, h);
	for (size_t i = 0; i < n; i++)
		k->in[k->in_len + h + i] = k->out[k->out_len + h + i] =
			(uint8_t)(tag * 131u + i * 7u);
	k->in_len += h + n;
	k->out_len += h + n;
}

#define SEQ_CLEARED 1u
#define SEQ_NEEDS 2u

/* A packet of sequence 'seq' with sequence_flags 'flags' (0: none), its
 * body n bytes. */
static void make_pkt(struct tpkt *k, uint32_t seq, uint32_t flags,
		     uint32_t tag, size_t n)
{
	k->in_len = k->out_len = 0;
	add_varint(k, 10, seq, 1); /* trusted_packet_sequence_id */
	if (flags)
		add_varint(k, 13, flags, 0);
	add_varint(k, 8, 1000 + tag, 0); /* timestamp */
	add_body(k, tag, n);
}

/* Routes k as a Trace.packet record. */
static int route(struct ptw_smb_router *r, const struct tpkt *k)
{
	static uint8_t rec[70016];
	uint8_t *q = rec;
	*q++ = 0x0a;
	q = svc_put_varint(q, k->in_len);
	memcpy(q, k->in, k->in_len);
	return ptw_smb_route(r, rec, (size_t)(q - rec) + k->in_len);
}

static uint8_t *smb_mem(size_t size)
{
	uint8_t *m = aligned_alloc(4096, size);
	cr_assert_not_null(m);
	memset(m, 0, size);
	return m;
}

static void expect_pkt(const struct svc *s, size_t i, uint32_t writer,
		       const uint8_t *p, size_t n)
{
	cr_assert_lt(i, s->n_pkts, "packet %zu not read back", i);
	cr_assert_eq(s->pkts[i].writer_id, writer, "packet %zu: writer %u",
		     i, s->pkts[i].writer_id);
	cr_assert_eq(s->pkts[i].len, n, "packet %zu: %zu bytes, want %zu", i,
		     s->pkts[i].len, n);
	cr_assert(memcmp(s->pkts[i].data, p, n) == 0, "packet %zu differs", i);
}

static struct tpkt K;

/* A shared memory buffer with its router and the service's stand-in. */
struct rig {
	uint8_t *m;
	struct ptw_smb *smb;
	struct ptw_smb_router *r;
	struct svc s;
};

/* A zeroed buffer of 'size' bytes in 4 KiB pages of 'per' chunks, with
 * a router for target buffer 'target' (hooks h, NULL: none) and the
 * service's stand-in on it. */
static void rig_open(struct rig *g, size_t size, uint32_t per, uint32_t target,
		     const struct ptw_smb_hooks *h)
{
	g->m = smb_mem(size);
	g->smb = ptw_smb_create(g->m, size, 4096, per, NULL);
	cr_assert_not_null(g->smb);
	g->r = ptw_smb_router_create(g->smb, target, h);
	cr_assert_not_null(g->r);
	svc_init(&g->s, g->m, size, 4096);
}

static void rig_close(struct rig *g)
{
	svc_free(&g->s);
	ptw_smb_destroy(g->smb);
	free(g->m);
}

/* The router's chunks committed and read by the service, as the IPC
 * and the service do between two rounds; the commits read. */
static size_t rig_sync(struct rig *g)
{
	ptw_smb_router_flush(g->r);
	return svc_drain(&g->s, g->smb);
}

/* ---- geometry ------------------------------------------------------------ */

Test(shmem, refuses_what_the_service_would_not_map)
{
	uint8_t *m = smb_mem(64 * 1024);
	int err = 0;
	cr_assert_null(ptw_smb_create(m, 64 * 1024, 3000, 0, &err));
	cr_assert_eq(err, PTW_ERR_INVALID);
	cr_assert_null(ptw_smb_create(m, 48 * 1024, 12 * 1024, 0, &err));
	cr_assert_null(ptw_smb_create(m, 64 * 1024, 64 * 1024, 0, &err));
	cr_assert_null(ptw_smb_create(m, 10000, 4096, 0, &err));
	cr_assert_null(ptw_smb_create(m, 64 * 1024, 4096, 3, &err));
	cr_assert_null(ptw_smb_create(m + 8, 32 * 1024, 4096, 0, &err));
	struct ptw_smb *smb = ptw_smb_create(m, 64 * 1024, 8192, 7, &err);
	cr_assert_not_null(smb);
	cr_assert_eq(ptw_smb_num_pages(smb), 8);
	cr_assert_eq(ptw_smb_chunks_per_page(smb), 7);
	cr_assert_eq(ptw_smb_chunk_size(smb), ((8192 - 8) / 7) & ~3u);
	ptw_smb_destroy(smb);
	free(m);
}

/* ---- round trips --------------------------------------------------------- */

Test(shmem, packets_of_three_sequences_come_back_byte_for_byte)
{
	size_t size = 64 * 4096;
	struct rig g;
	rig_open(&g, size, 0, 0, NULL);
	/* 3 sequences interleaved; writer ids in order of first packet */
	static struct tpkt want[300];
	for (uint32_t i = 0; i < 300; i++) {
		uint32_t seq = 5 + i % 3;
		make_pkt(&want[i], seq, SEQ_NEEDS, i, 1 + (i * 37) % 300);
		cr_assert_eq(route(g.r, &want[i]), 0);
		if (i % 50 == 49)
			rig_sync(&g);
	}
	rig_sync(&g);
	svc_reassemble(&g.s);
	cr_assert_eq(g.s.n_pkts, 300);
	size_t at = 0;
	for (uint32_t w = 1; w <= 3; w++)
		for (uint32_t i = w - 1; i < 300; i += 3)
			expect_pkt(&g.s, at++, w, want[i].out, want[i].out_len);
	cr_assert_eq(g.s.chunk_gaps + g.s.orphans + g.s.abi_errors +
			     g.s.writer_drops,
		     0);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.packets, 300);
	cr_assert_eq(st.dropped + st.skipped + st.refused + st.malformed, 0);
	/* every chunk read and freed: every page free again */
	for (size_t p = 0; p < size / 4096; p++)
		cr_assert_eq(*(uint32_t *)(void *)(g.m + p * 4096), 0);
	rig_close(&g);
}

Test(shmem, a_packet_larger_than_a_chunk_spans_several)
{
	size_t size = 16 * 4096;
	struct rig g;
	rig_open(&g, size, 0, 3, NULL);
	uint32_t cs = ptw_smb_chunk_size(g.smb);
	static struct tpkt a, b, c;
	make_pkt(&a, 7, 0, 1, 100);
	make_pkt(&b, 7, 0, 2, cs * 3 + cs / 2); /* over 4 or 5 chunks */
	make_pkt(&c, 7, 0, 3, 50);
	cr_assert_eq(route(g.r, &a), 0);
	cr_assert_eq(route(g.r, &b), 0);
	cr_assert_eq(route(g.r, &c), 0);
	ptw_smb_router_flush(g.r);
	struct ptw_smb_commit list[32];
	size_t n = ptw_smb_take_commits(g.smb, list, 32);
	cr_assert_geq(n, 4);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(list[i].target_buffer, 3);
	cr_assert_eq(svc_commit(&g.s, list, n), n);
	/* the chunks as the service sees them: one writer, ids 0.., the
	 * middle ones a single fragment continuing both ways */
	for (size_t i = 0; i < g.s.n_chunks; i++) {
		cr_assert_eq(g.s.chunks[i].writer_id, 1);
		cr_assert_eq(g.s.chunks[i].chunk_id, i);
		uint32_t f = g.s.chunks[i].flags;
		cr_assert_eq(f & PTW_SMB_NEEDS_PATCHING, 0);
		cr_assert_eq(!!(f & PTW_SMB_FIRST_CONTINUES), i > 0);
		cr_assert_eq(!!(f & PTW_SMB_LAST_CONTINUES),
			     i + 1 < g.s.n_chunks);
		if (i > 0 && i + 1 < g.s.n_chunks)
			cr_assert_eq(g.s.chunks[i].count, 1);
	}
	svc_reassemble(&g.s);
	cr_assert_eq(g.s.n_pkts, 3);
	expect_pkt(&g.s, 0, 1, a.out, a.out_len);
	expect_pkt(&g.s, 1, 1, b.out, b.out_len);
	expect_pkt(&g.s, 2, 1, c.out, c.out_len);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.fragments, g.s.n_chunks - 1);
	rig_close(&g);
}

Test(shmem, a_packet_longer_than_the_buffer_is_dropped_whole)
{
	size_t size = 4 * 4096;
	uint8_t *m = smb_mem(size);
	struct ptw_smb *smb = ptw_smb_create(m, size, 4096, 0, NULL);
	struct ptw_smb_router *r = ptw_smb_router_create(smb, 0, NULL);
	static struct tpkt big;
	make_pkt(&big, 3, 0, 1, 5 * 4096);
	cr_assert_eq(route(r, &big), 0);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(smb, &st);
	cr_assert_eq(st.dropped, 1);
	cr_assert_eq(st.packets, 0);
	/* nothing of it was begun: every page still free */
	for (size_t p = 0; p < 4; p++)
		cr_assert_eq(*(uint32_t *)(void *)(m + p * 4096), 0);
	ptw_smb_destroy(smb);
	free(m);
}

/* ---- loss ------------------------------------------------------------------ */

struct loss_log {
	uint32_t seq[16];
	int n;
};

static void on_loss(void *ctx, uint32_t seq)
{
	struct loss_log *l = ctx;
	if (l->n < 16)
		l->seq[l->n] = seq;
	l->n++;
}

Test(shmem, a_full_buffer_drops_counts_and_marks_the_next_packet)
{
	size_t size = 2 * 4096; /* two chunks */
	struct loss_log log = { .n = 0 };
	struct ptw_smb_hooks h = { .ctx = &log, .loss = on_loss };
	struct rig g;
	rig_open(&g, size, 0, 0, &h);
	static struct tpkt first[40];
	uint32_t i = 0;
	struct ptw_smb_stats st;
	/* fill both chunks: 1000-byte packets, 4 a chunk */
	for (;; i++) {
		cr_assert_lt(i, 40);
		make_pkt(&first[i], 9, i ? SEQ_NEEDS : SEQ_CLEARED, i, 1000);
		cr_assert_eq(route(g.r, &first[i]), 0);
		ptw_smb_get_stats(g.smb, &st);
		if (st.dropped)
			break;
	}
	uint32_t written = i;
	cr_assert_eq(st.packets, written);
	cr_assert_eq(log.n, 1);
	cr_assert_eq(log.seq[0], 9);
	/* packets needing the lost state are left out until one clears it,
	 * even once chunks are free again (the service reads the chunk
	 * completed when a packet went on into the next one) */
	make_pkt(&K, 9, SEQ_NEEDS, 100, 10);
	cr_assert_eq(route(g.r, &K), 0);
	cr_assert_eq(svc_drain(&g.s, g.smb), 1);
	cr_assert_eq(route(g.r, &K), 0);
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.skipped, 2);
	cr_assert_eq(st.dropped, 1);
	cr_assert_eq(log.n, 1);
	static struct tpkt clr, after;
	make_pkt(&clr, 9, SEQ_CLEARED, 200, 20);
	make_pkt(&after, 9, SEQ_NEEDS, 201, 20);
	cr_assert_eq(route(g.r, &clr), 0);
	cr_assert_eq(route(g.r, &after), 0);
	rig_sync(&g);
	svc_reassemble(&g.s);
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.loss_marks, 1);
	cr_assert_eq(g.s.n_pkts, written + 2);
	for (uint32_t j = 0; j < written; j++)
		expect_pkt(&g.s, j, 1, first[j].out, first[j].out_len);
	/* the clearing packet carries previous_packet_dropped =
	 * DATA_LOSS_PRESENT | DATA_LOSS_SMB_FULL (257) at its end */
	uint8_t marked[128];
	memcpy(marked, clr.out, clr.out_len);
	memcpy(marked + clr.out_len, "\xd0\x02\x81\x02", 4);
	expect_pkt(&g.s, written, 1, marked, clr.out_len + 4);
	expect_pkt(&g.s, written + 1, 1, after.out, after.out_len);
	rig_close(&g);
}

Test(shmem, a_loss_at_the_end_is_marked_by_a_packet_of_its_own)
{
	size_t size = 1 * 4096;
	struct rig g;
	rig_open(&g, size, 0, 0, NULL);
	/* 4 packets of 1018 bytes (2-byte size) fill the chunk's 4080 */
	for (uint32_t i = 0; i < 6; i++) {
		make_pkt(&K, 4, 0, i, 1011);
		cr_assert_eq(K.out_len, 1018);
		cr_assert_eq(route(g.r, &K), 0);
	}
	struct ptw_smb_stats st;
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.packets, 4);
	cr_assert_eq(st.dropped, 2);
	/* the only chunk is complete and unread: no room for the mark */
	ptw_smb_router_flush(g.r);
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.loss_marks, 0);
	svc_drain(&g.s, g.smb);
	ptw_smb_router_flush(g.r); /* now it has room */
	svc_drain(&g.s, g.smb);
	svc_reassemble(&g.s);
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.loss_marks, 1);
	cr_assert_eq(g.s.n_pkts, 5);
	expect_pkt(&g.s, 4, 1, (const uint8_t *)"\xd0\x02\x81\x02", 4);
	rig_close(&g);
}

/* ---- many writers, reuse ------------------------------------------------- */

Test(shmem, more_sequences_than_chunks)
{
	size_t size = 4 * 4096;
	struct rig g;
	rig_open(&g, size, 2, 0, NULL);
	/* 40 sequences, 8 chunks: each round of one packet per sequence is
	 * flushed and read before the next, as the backend and the service
	 * take turns */
	static struct tpkt want[40 * 5];
	for (uint32_t round = 0; round < 5; round++) {
		for (uint32_t q = 0; q < 40; q++) {
			uint32_t i = round * 40 + q;
			make_pkt(&want[i], 100 + q, 0, i, 20 + q);
			cr_assert_eq(route(g.r, &want[i]), 0);
			if (q % 8 == 7) { /* 8 open chunks: all taken */
				rig_sync(&g);
			}
		}
	}
	svc_reassemble(&g.s);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(g.s.n_pkts, 200);
	size_t at = 0;
	for (uint32_t q = 0; q < 40; q++)
		for (uint32_t round = 0; round < 5; round++) {
			uint32_t i = round * 40 + q;
			expect_pkt(&g.s, at++, q + 1, want[i].out,
				   want[i].out_len);
		}
	cr_assert_eq(g.s.chunk_gaps + g.s.orphans + g.s.abi_errors, 0);

	/* without a reader: the 9th sequence finds no chunk, and every
	 * packet is accounted for */
	svc_free(&g.s);
	svc_init(&g.s, g.m, size, 4096);
	struct ptw_smb_stats before = st;
	for (uint32_t q = 0; q < 40; q++) {
		make_pkt(&K, 200 + q, 0, q, 20);
		cr_assert_eq(route(g.r, &K), 0);
	}
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.packets - before.packets, 8);
	cr_assert_eq(st.dropped - before.dropped, 32);
	rig_close(&g);
}

Test(shmem, chunks_freed_by_the_service_are_taken_again)
{
	size_t size = 2 * 4096;
	struct rig g;
	rig_open(&g, size, 0, 0, NULL);
	static struct tpkt want[200];
	for (uint32_t i = 0; i < 200; i++) {
		make_pkt(&want[i], 3 + i % 2, 0, i, 1500);
		cr_assert_eq(route(g.r, &want[i]), 0);
		cr_assert_eq(rig_sync(&g), 1);
	}
	svc_reassemble(&g.s);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.chunks, 200);
	/* the two chunks were used 100 times each; each writer's chunk ids
	 * count up by one */
	cr_assert_eq(g.s.chunk_gaps, 0);
	for (size_t i = 0; i < g.s.n_chunks; i++)
		cr_assert_eq(g.s.chunks[i].chunk_id, i / 2);
	for (uint32_t i = 0; i < 100; i++) {
		expect_pkt(&g.s, i, 1, want[2 * i].out, want[2 * i].out_len);
		expect_pkt(&g.s, 100 + i, 2, want[2 * i + 1].out,
			   want[2 * i + 1].out_len);
	}
	rig_close(&g);
}

Test(shmem, a_chunk_completed_twice_before_a_commit_is_listed_once)
{
	size_t size = 1 * 4096;
	struct rig g;
	rig_open(&g, size, 0, 0, NULL);
	make_pkt(&K, 3, 0, 1, 10);
	route(g.r, &K);
	ptw_smb_router_flush(g.r);
	/* the service scrapes it before the commit comes (as it may on a
	 * flush), then the producer uses it again */
	cr_assert_eq(svc_scan(&g.s), 1);
	route(g.r, &K);
	ptw_smb_router_flush(g.r);
	cr_assert_eq(ptw_smb_pending_commits(g.smb), 1);
	cr_assert_eq(svc_drain(&g.s, g.smb), 1);
	rig_close(&g);
}

/* ---- a service on another thread ----------------------------------------- */

struct svc_thread {
	struct svc s;
	atomic_int stop;
};

static void *svc_loop(void *arg)
{
	struct svc_thread *t = arg;
	while (!atomic_load(&t->stop))
		svc_scan(&t->s);
	svc_scan(&t->s);
	return NULL;
}

Test(shmem, the_service_frees_chunks_while_packets_are_written)
{
	size_t size = 8 * 4096;
	uint8_t *m = smb_mem(size);
	struct ptw_smb *smb = ptw_smb_create(m, size, 4096, 4, NULL);
	struct ptw_smb_router *r = ptw_smb_router_create(smb, 0, NULL);
	static struct svc_thread t;
	svc_init(&t.s, m, size, 4096);
	atomic_store(&t.stop, 0);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, svc_loop, &t), 0);
	const char *sc = getenv("PTW_TEST_SCALE");
	uint32_t total = sc && !strcmp(sc, "small") ? 3000 : 30000;
	uint64_t drops = 0;
	for (uint32_t i = 0; i < total; i++) {
		/* each packet's body says which it is: i in its timestamp */
		make_pkt(&K, 3 + i % 5, 0, i, 10 + (i * 13) % 2000);
		cr_assert_eq(route(r, &K), 0);
		if (i % 16 == 15) {
			ptw_smb_router_flush(r);
			struct ptw_smb_stats st;
			ptw_smb_get_stats(smb, &st);
			if (st.dropped != drops) /* let the reader run */
				sched_yield();
			drops = st.dropped;
		}
	}
	ptw_smb_router_flush(r);
	atomic_store(&t.stop, 1);
	cr_assert_eq(pthread_join(th, NULL), 0);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(smb, &st);
	cr_assert_eq(st.packets + st.dropped, total);
	svc_reassemble(&t.s);
	cr_assert_eq(t.s.chunk_gaps + t.s.orphans + t.s.abi_errors, 0);
	/* each writer's packets are in order, each as it was routed; the
	 * others are marks of a loss */
	uint32_t last[6] = { 0 };
	int any[6] = { 0 };
	uint64_t got = 0, marks = 0;
	for (size_t j = 0; j < t.s.n_pkts; j++) {
		const struct svc_packet *p = &t.s.pkts[j];
		if (p->len == 4 && !memcmp(p->data, "\xd0\x02\x81\x02", 4)) {
			marks++;
			continue;
		}
		got++;
		size_t len = p->len;
		/* timestamp field: 1000 + i */
		cr_assert_eq(p->data[0], 8 << 3);
		const uint8_t *q = p->data + 1;
		uint64_t ts = 0;
		for (unsigned sh = 0;; sh += 7) {
			ts |= (uint64_t)(*q & 0x7f) << sh;
			if (!(*q++ & 0x80))
				break;
		}
		uint32_t i = (uint32_t)(ts - 1000);
		uint32_t want_writer = 1 + i % 5;
		cr_assert_eq(p->writer_id, want_writer);
		cr_assert(!any[p->writer_id] || i > last[p->writer_id]);
		any[p->writer_id] = 1;
		last[p->writer_id] = i;
		make_pkt(&K, 3 + i % 5, 0, i, 10 + (i * 13) % 2000);
		if (len == K.out_len + 4) { /* marked: a loss before it */
			cr_assert(!memcmp(p->data + K.out_len,
					  "\xd0\x02\x81\x02", 4));
			len -= 4;
		}
		cr_assert_eq(len, K.out_len);
		cr_assert(memcmp(p->data, K.out, K.out_len) == 0);
	}
	cr_assert_eq(got, st.packets);
	cr_assert_eq(marks + got, t.s.n_pkts);
	cr_assert_leq(marks, 2 * st.loss_marks); /* 2: see below */
	cr_assert_eq(!!st.dropped, !!st.loss_marks);
	svc_free(&t.s);
	ptw_smb_destroy(smb);
	free(m);
}

/* ---- fields ----------------------------------------------------------------- */

Test(shmem, the_services_fields_are_stripped_or_the_packet_refused)
{
	size_t size = 4 * 4096;
	struct rig g;
	rig_open(&g, size, 0, 0, NULL);
	/* trusted_uid, _pid, machine_id anywhere; previous_packet_dropped
	 * kept (moved to the end) */
	K.in_len = K.out_len = 0;
	add_varint(&K, 8, 5, 0);
	add_varint(&K, 3, 1000, 1);
	add_body(&K, 1, 30);
	add_varint(&K, 10, 12, 1);
	add_varint(&K, 79, 4242, 1);
	add_varint(&K, 42, 1, 1);
	add_varint(&K, 13, 2, 0);
	add_varint(&K, 98, 7, 1);
	memcpy(K.out + K.out_len, "\xd0\x02\x01", 3);
	K.out_len += 3;
	cr_assert_eq(route(g.r, &K), 0);
	/* a TraceStats packet: the service's own */
	static struct tpkt ts;
	ts.in_len = ts.out_len = 0;
	add_varint(&ts, 10, 12, 1);
	memcpy(ts.in + ts.in_len, "\x9a\x02\x02\x08\x01", 5); /* 35: {1: 1} */
	ts.in_len += 5;
	cr_assert_eq(route(g.r, &ts), 0);
	/* not a Trace.packet record; a truncated packet (in a record
	 * between two good ones, which go in) */
	cr_assert_eq(ptw_smb_route(g.r, (const uint8_t *)"\x12\x01\x00", 3),
		     PTW_ERR_INVALID);
	static uint8_t three[300];
	uint8_t *q = three;
	*q++ = 0x0a;
	*q++ = (uint8_t)K.in_len;
	memcpy(q, K.in, K.in_len);
	q += K.in_len;
	memcpy(q, "\x0a\x03\x0a\x05\x01", 5);
	q += 5;
	*q++ = 0x0a;
	*q++ = (uint8_t)K.in_len;
	memcpy(q, K.in, K.in_len);
	q += K.in_len;
	cr_assert_eq(ptw_smb_route(g.r, three, (size_t)(q - three)),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_smb_route_packet(g.r, (const uint8_t *)"\x0a\x05\x01",
					  3),
		     PTW_ERR_INVALID);
	rig_sync(&g);
	svc_reassemble(&g.s);
	cr_assert_eq(g.s.n_pkts, 3);
	for (size_t i = 0; i < 3; i++)
		expect_pkt(&g.s, i, 1, K.out, K.out_len);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.refused, 1);
	cr_assert_eq(st.malformed, 3);
	rig_close(&g);
}

struct writer_log {
	uint32_t id[8];
	int added[8];
	uint32_t buf[8];
	int n;
};

static void on_writer(void *ctx, uint32_t id, uint32_t buf, int added)
{
	struct writer_log *l = ctx;
	cr_assert_lt(l->n, 8);
	l->id[l->n] = id;
	l->buf[l->n] = buf;
	l->added[l->n++] = added;
}

Test(shmem, writer_ids_are_announced_and_given_back)
{
	size_t size = 4 * 4096;
	uint8_t *m = smb_mem(size);
	struct ptw_smb *smb = ptw_smb_create(m, size, 4096, 0, NULL);
	struct writer_log log = { .n = 0 };
	struct ptw_smb_hooks h = { .ctx = &log, .writer = on_writer };
	struct ptw_smb_router *r = ptw_smb_router_create(smb, 6, &h);
	make_pkt(&K, 3, 0, 1, 10);
	route(r, &K);
	route(r, &K);
	make_pkt(&K, 4, 0, 1, 10);
	route(r, &K);
	ptw_smb_router_forget(r, 3);
	make_pkt(&K, 3, 0, 1, 10);
	route(r, &K); /* a new writer id: ids are not reused */
	ptw_smb_router_destroy(r);
	cr_assert_eq(log.n, 6);
	uint32_t id[6] = { 1, 2, 1, 3, 2, 3 };
	int added[6] = { 1, 1, 0, 1, 0, 0 };
	for (int i = 0; i < 6; i++) {
		cr_assert_eq(log.id[i], id[i], "event %d", i);
		cr_assert_eq(log.added[i], added[i], "event %d", i);
		cr_assert_eq(log.buf[i], 6);
	}
	ptw_smb_destroy(smb);
	free(m);
}

/* ---- a sequence's first packets lost; waiting for room ------------------- */

Test(shmem, a_loss_before_the_first_packet_is_marked_twice)
{
	size_t size = 1 * 4096;
	struct rig g;
	rig_open(&g, size, 0, 0, NULL);
	make_pkt(&K, 3, SEQ_CLEARED, 1, 100); /* takes the only chunk */
	cr_assert_eq(route(g.r, &K), 0);
	static struct tpkt b;
	make_pkt(&b, 4, SEQ_CLEARED, 2, 100); /* finds none */
	cr_assert_eq(route(g.r, &b), 0);
	rig_sync(&g);
	cr_assert_eq(route(g.r, &b), 0);
	rig_sync(&g);
	svc_reassemble(&g.s);
	/* trace_processor ignores previous_packet_dropped on a sequence's
	 * first packet: a mark alone goes first, then the marked packet */
	cr_assert_eq(g.s.n_pkts, 3);
	expect_pkt(&g.s, 0, 1, K.out, K.out_len);
	expect_pkt(&g.s, 1, 2, (const uint8_t *)"\xd0\x02\x81\x02", 4);
	uint8_t marked[256];
	memcpy(marked, b.out, b.out_len);
	memcpy(marked + b.out_len, "\xd0\x02\x81\x02", 4);
	expect_pkt(&g.s, 2, 2, marked, b.out_len + 4);
	rig_close(&g);
}

struct staller {
	struct ptw_smb *smb;
	struct svc *s;
	unsigned calls;
	unsigned give_up_at;   /* attempt at which it says no */
	size_t open_seen;      /* commits pending when called */
};

static int on_stall(void *ctx, unsigned attempt)
{
	struct staller *t = ctx;
	t->calls++;
	t->open_seen += ptw_smb_pending_commits(t->smb);
	if (attempt >= t->give_up_at)
		return 0;
	if (attempt == 1) /* the "IPC" sends the commits, the service reads */
		svc_drain(t->s, t->smb);
	return 1;
}

/* rig_open with the stall hook on_stall (t's smb and svc set). */
static void rig_stall(struct rig *g, size_t size, struct staller *t)
{
	struct ptw_smb_hooks h = { .ctx = t, .stall = on_stall };
	rig_open(g, size, 0, 0, &h);
	t->smb = g->smb;
	t->s = &g->s;
}

Test(shmem, the_stall_hook_waits_for_room_instead_of_dropping)
{
	struct staller t = { .give_up_at = 5 };
	struct rig g;
	rig_stall(&g, 2 * 4096, &t);
	/* three sequences, two chunks: the third waits until the open
	 * chunks were completed, committed and read */
	static struct tpkt want[3];
	for (uint32_t i = 0; i < 3; i++) {
		make_pkt(&want[i], 3 + i, SEQ_CLEARED, i, 100);
		cr_assert_eq(route(g.r, &want[i]), 0);
	}
	cr_assert_eq(t.calls, 2); /* attempt 0: no room; 1: read; then ok */
	cr_assert_eq(t.open_seen, 4); /* both chunks completed before */
	rig_sync(&g);
	svc_reassemble(&g.s);
	cr_assert_eq(g.s.n_pkts, 3);
	for (uint32_t i = 0; i < 3; i++)
		expect_pkt(&g.s, i, i + 1, want[i].out, want[i].out_len);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.dropped, 0);

	/* a hook that gives up: the packet is dropped as without one */
	t.give_up_at = 0;
	t.calls = 0;
	for (uint32_t i = 0; i < 3; i++) {
		make_pkt(&K, 10 + i, 0, i, 100);
		cr_assert_eq(route(g.r, &K), 0);
	}
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.dropped, 1);
	cr_assert_eq(t.calls, 1);
	rig_close(&g);
}

/* A sequence whose every packet found no chunk: a flush that finds none
 * either leaves its mark due; the settle at a session's end waits for
 * room through the stall hook and writes it (twice: the first packet of
 * a sequence is not counted by trace_processor). */
Test(shmem, the_settle_at_the_end_waits_for_room_for_the_marks_due)
{
	struct staller t = { .give_up_at = 0 };
	struct rig g;
	rig_stall(&g, 1 * 4096, &t);
	make_pkt(&K, 3, SEQ_CLEARED, 1, 100); /* takes the only chunk */
	cr_assert_eq(route(g.r, &K), 0);
	static struct tpkt b;
	make_pkt(&b, 4, SEQ_CLEARED, 2, 100); /* finds none: dropped */
	cr_assert_eq(route(g.r, &b), 0);
	ptw_smb_router_flush(g.r); /* no chunk free: the mark stays due */
	ptw_smb_router_settle(g.r); /* a hook that gives up: the same */
	struct ptw_smb_stats st;
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.dropped, 1);
	cr_assert_eq(st.loss_marks, 0);
	t.give_up_at = 5; /* the service reads the chunk at attempt 1 */
	t.calls = 0;
	ptw_smb_router_settle(g.r);
	cr_assert_eq(t.calls, 2);
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.loss_marks, 1);
	ptw_smb_router_settle(g.r); /* nothing due: no wait */
	cr_assert_eq(t.calls, 2);
	svc_drain(&g.s, g.smb);
	svc_reassemble(&g.s);
	cr_assert_eq(g.s.n_pkts, 3);
	expect_pkt(&g.s, 0, 1, K.out, K.out_len);
	expect_pkt(&g.s, 1, 2, (const uint8_t *)"\xd0\x02\x81\x02", 4);
	expect_pkt(&g.s, 2, 2, (const uint8_t *)"\xd0\x02\x81\x02", 4);
	rig_close(&g);
}

/* ---- the writer's hooks for system mode ------------------------------------ */

struct capture {
	uint8_t *p;
	size_t n, cap;
	int fail; /* return this from the next call */
};

static int capture_out(void *ctx, const uint8_t *p, size_t n)
{
	struct capture *c = ctx;
	if (c->fail)
		return c->fail;
	if (c->n + n > c->cap) {
		c->cap = (c->n + n) * 2;
		c->p = realloc(c->p, c->cap);
		cr_assert_not_null(c->p);
	}
	memcpy(c->p + c->n, p, n);
	c->n += n;
	return 0;
}

/* Packets of sequence 'seq' in the captured records with sequence_flags
 * SEQ_INCREMENTAL_STATE_CLEARED. */
static int count_cleared(const struct capture *c, uint32_t seq)
{
	int n = 0;
	const uint8_t *p = c->p, *end = c->p + c->n;
	while (p < end) {
		cr_assert_eq(*p++, 0x0a);
		uint64_t len = 0;
		for (unsigned sh = 0;; sh += 7) {
			len |= (uint64_t)(*p & 0x7f) << sh;
			if (!(*p++ & 0x80))
				break;
		}
		/* ptw's packets begin with the sequence id, then the flags */
		if (p[0] == 10 << 3 && p[1] == seq && p[2] == 13 << 3 &&
		    (p[3] & SEQ_CLEARED))
			n++;
		p += len;
	}
	return n;
}

Test(shmem_writer, clear_incremental_makes_the_next_event_a_checkpoint)
{
	static struct capture c;
	memset(&c, 0, sizeof(c));
	struct ptw_error err;
	struct ptw_writer *w = ptw_i_writer_open_output(NULL, capture_out, &c,
							&err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t t1 = ptw_writer_add_thread_track(w, 1, 2, "a");
	uint64_t t2 = ptw_writer_add_thread_track(w, 1, 3, "b");
	struct ptw_seq *a = ptw_writer_add_seq(w, t1); /* sequence 5 */
	struct ptw_seq *b = ptw_writer_add_seq(w, t2); /* sequence 6 */
	uint64_t ts = 100;
	for (int i = 0; i < 3; i++, ts += 10) {
		cr_assert_eq(ptw_seq_simple(a, PTW_SIMPLE_INSTANT, 0, ts, "c",
					    "x"), 0);
		cr_assert_eq(ptw_seq_simple(b, PTW_SIMPLE_INSTANT, 0, ts, "c",
					    "x"), 0);
	}
	cr_assert_eq(ptw_writer_flush(w), 0);
	cr_assert_eq(count_cleared(&c, 5), 1); /* the first packet */
	cr_assert_eq(count_cleared(&c, 6), 1);
	ptw_i_writer_clear_incremental(w, 5);
	for (int i = 0; i < 2; i++, ts += 10) {
		cr_assert_eq(ptw_seq_simple(a, PTW_SIMPLE_INSTANT, 0, ts, "c",
					    "x"), 0);
		cr_assert_eq(ptw_seq_simple(b, PTW_SIMPLE_INSTANT, 0, ts, "c",
					    "x"), 0);
	}
	cr_assert_eq(ptw_writer_flush(w), 0);
	cr_assert_eq(count_cleared(&c, 5), 2);
	cr_assert_eq(count_cleared(&c, 6), 1);
	ptw_i_writer_clear_incremental(w, 0); /* every sequence */
	cr_assert_eq(ptw_seq_simple(a, PTW_SIMPLE_INSTANT, 0, ts, "c", "x"), 0);
	cr_assert_eq(ptw_seq_simple(b, PTW_SIMPLE_INSTANT, 0, ts, "c", "x"), 0);
	cr_assert_eq(ptw_writer_flush(w), 0);
	cr_assert_eq(count_cleared(&c, 5), 3);
	cr_assert_eq(count_cleared(&c, 6), 2);
	/* the hook's error is the writer's */
	c.fail = PTW_ERR_IO;
	cr_assert_eq(ptw_seq_simple(a, PTW_SIMPLE_INSTANT, 0, ts, "c", "x"), 0);
	cr_assert_eq(ptw_writer_flush(w), PTW_ERR_IO);
	cr_assert_neq(ptw_writer_close(w, &err), 0);
	free(c.p);
}

Test(shmem_writer, an_output_hook_takes_no_compression)
{
	static struct capture c;
	struct ptw_writer_options o = { .compress = PTW_COMPRESS_DEFLATE };
	struct ptw_error err;
	cr_assert_null(ptw_i_writer_open_output(&o, capture_out, &c, &err));
	cr_assert_eq(err.code, PTW_ERR_INVALID);
	char path[] = "/tmp/ptw-smb-hook-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	struct ptw_writer *w = ptw_writer_open_fd(fd, &o, &err);
	cr_assert_not_null(w);
	cr_assert_eq(ptw_i_writer_set_output(w, capture_out, &c),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_writer_close(w, &err), 0);
	close(fd);
	unlink(path);
}

/* ---- a service that breaks the rules ------------------------------------ */

Test(shmem, a_hostile_service_cannot_make_it_write_outside_its_chunks)
{
	/* The service changes page words and chunk headers at random (any
	 * layout, reserved ones too, any states) between packets: the
	 * router must keep writing only inside chunks it took (ASan checks
	 * the buffer's bounds), never crash, and account for every packet. */
	size_t size = 8 * 4096;
	struct rig g;
	rig_open(&g, size, 4, 0, NULL);
	uint64_t x = 88172645463325252ull; /* xorshift */
	uint32_t routed = 0;
	for (uint32_t i = 0; i < 3000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t page = (uint32_t)(x % 8);
		uint8_t *pg = g.m + (size_t)page * 4096;
		switch ((x >> 8) % 4) {
		case 0: /* any word */
			atomic_store(ptw_smb_page_word(pg), (uint32_t)(x >> 16));
			break;
		case 1: /* a chunk header anywhere in the page */
			memcpy(pg + 8 + ((x >> 20) % 4000), &x, 8);
			break;
		default: /* frees chunks the honest way */
			svc_scan(&g.s);
		}
		make_pkt(&K, 3 + (uint32_t)((x >> 32) % 20),
			 (x >> 40) % 3 ? SEQ_NEEDS : SEQ_CLEARED, i,
			 1 + (size_t)((x >> 44) % 9000));
		cr_assert_eq(route(g.r, &K), 0);
		routed++;
		if (i % 10 == 9) {
			ptw_smb_router_flush(g.r);
			struct ptw_smb_commit c[64];
			size_t n;
			while ((n = ptw_smb_take_commits(g.smb, c, 64)) > 0)
				for (size_t j = 0; j < n; j++) {
					cr_assert_lt(c[j].page, 8);
					cr_assert_lt(c[j].chunk, 14);
				}
		}
	}
	struct ptw_smb_stats st;
	ptw_smb_get_stats(g.smb, &st);
	cr_assert_eq(st.packets + st.dropped + st.skipped, routed);
	cr_assert_gt(st.packets, 0);
	rig_close(&g);
}

/* The loss hook runs inside the writer's output: it may ask the writer
 * for a checkpoint right there (the next event is one). */
struct inner {
	struct capture c;
	struct ptw_writer *w;
	int asked;
};

static int inner_out(void *ctx, const uint8_t *p, size_t n)
{
	struct inner *in = ctx;
	if (!in->asked) {
		in->asked = 1;
		ptw_i_writer_clear_incremental(in->w, 5);
	}
	return capture_out(&in->c, p, n);
}

Test(shmem_writer, clear_incremental_from_inside_the_output)
{
	static struct inner in;
	memset(&in, 0, sizeof(in));
	struct ptw_error err;
	struct ptw_writer_options o = { .flush_bytes = 4096 };
	in.w = ptw_i_writer_open_output(&o, inner_out, &in, &err);
	cr_assert_not_null(in.w);
	uint64_t t = ptw_writer_add_thread_track(in.w, 1, 2, "a");
	struct ptw_seq *a = ptw_writer_add_seq(in.w, t); /* sequence 5 */
	/* enough events for several flushes inside ptw_seq_simple, the
	 * first of which asks for the checkpoint */
	for (uint64_t i = 0; i < 2000; i++)
		cr_assert_eq(ptw_seq_simple(a, PTW_SIMPLE_INSTANT, 0, 100 + i,
					    "c", "x"), 0);
	cr_assert_eq(ptw_writer_flush(in.w), 0);
	cr_assert_eq(in.asked, 1);
	cr_assert_eq(count_cleared(&in.c, 5), 2);
	cr_assert_eq(ptw_writer_close(in.w, &err), 0);
	free(in.c.p);
}
