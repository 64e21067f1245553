/* test_ring.c - SPSC ring: full/empty, wrap-around, multi-slot records,
 * the producer's prefetch distance, and two-thread sequence-number stress
 * tests, with and without the prefetch (run under TSan too).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptw/error.h"
#include "lib/tracer/ring.h"

static uint64_t scale_count(uint64_t full, uint64_t small)
{
	const char *s = getenv("PTW_TEST_SCALE");
	return (s && strcmp(s, "small") == 0) ? small : full;
}

Test(ring, rejects_bad_sizes)
{
	struct ptw_ring r;
	uint64_t mem[64];
	cr_assert_eq(ptw_ring_memsize(24, 8), 0);
	cr_assert_eq(ptw_ring_memsize(16, 12), 0);
	cr_assert_eq(ptw_ring_memsize(4, 8), 0);
	cr_assert_eq(ptw_ring_memsize(16, 1), 0);
	cr_assert_eq(ptw_ring_memsize(16, 8), 128);
	cr_assert_eq(ptw_ring_init(&r, mem, 24, 8, 0), PTW_ERR_INVALID);
	cr_assert_eq(ptw_ring_init(&r, NULL, 16, 8, 0), PTW_ERR_INVALID);
	cr_assert_null(ptw_ring_create(16, 3));
}

Test(ring, push_fails_when_full_and_pop_fails_when_empty)
{
	struct ptw_ring *r = ptw_ring_create(8, 4);
	cr_assert_not_null(r);
	uint64_t v = 0, out = 0;
	cr_assert_eq(ptw_ring_pop(r, &out), 0);
	for (v = 1; v <= 4; v++)
		cr_assert_eq(ptw_ring_push(r, &v), 1);
	cr_assert_eq(ptw_ring_size(r), 4);
	cr_assert_eq(ptw_ring_push(r, &v), 0, "a full ring refuses a push");
	cr_assert_eq(ptw_ring_size(r), 4, "a failed push changes nothing");
	for (uint64_t want = 1; want <= 4; want++) {
		cr_assert_eq(ptw_ring_pop(r, &out), 1);
		cr_assert_eq(out, want);
	}
	cr_assert_eq(ptw_ring_pop(r, &out), 0);
	cr_assert_eq(ptw_ring_size(r), 0);
	ptw_ring_destroy(r);
	ptw_ring_destroy(NULL);
}

Test(ring, reserve_of_more_than_free_fails_without_effect)
{
	struct ptw_ring *r = ptw_ring_create(16, 8);
	uint64_t i;
	cr_assert_eq(ptw_ring_reserve(r, 9, &i), 0);
	cr_assert_eq(ptw_ring_reserve(r, 8, &i), 1);
	ptw_ring_commit(r, i + 5);
	cr_assert_eq(ptw_ring_reserve(r, 4, &i), 0);
	cr_assert_eq(ptw_ring_reserve(r, 3, &i), 1);
	cr_assert_eq(i, 5);
	cr_assert_eq(ptw_ring_size(r), 5);
	ptw_ring_destroy(r);
}

/* Indices start just below 2^64 so they wrap during the test; records of
 * 1..3 slots straddle the end of the slot array many times. */
Test(ring, multi_slot_records_survive_index_and_array_wrap)
{
	struct ptw_ring r;
	uint64_t mem[8 * 2];
	cr_assert_eq(ptw_ring_init(&r, mem, 16, 8, UINT64_MAX - 20), 0);
	uint64_t next_w = 0, next_r = 0;
	for (int round = 0; round < 200; round++) {
		uint64_t n = 1 + (uint64_t)(round % 3), i;
		while (!ptw_ring_reserve(&r, n, &i)) {
			/* drain one record */
			uint64_t h;
			cr_assert_gt(ptw_ring_peek(&r, &h), 0);
			const uint64_t *s = ptw_ring_slot(&r, h);
			uint64_t len = s[1];
			for (uint64_t k = 0; k < len; k++) {
				const uint64_t *sk = ptw_ring_slot(&r, h + k);
				cr_assert_eq(sk[0], next_r * 10 + k);
			}
			next_r++;
			ptw_ring_release(&r, h + len);
		}
		for (uint64_t k = 0; k < n; k++) {
			uint64_t *s = ptw_ring_slot_producer(&r, i + k);
			s[0] = next_w * 10 + k;
			s[1] = n;
		}
		next_w++;
		ptw_ring_commit(&r, i + n);
	}
	uint64_t h;
	while (ptw_ring_peek(&r, &h) > 0) {
		const uint64_t *s = ptw_ring_slot(&r, h);
		cr_assert_eq(s[0], next_r * 10);
		next_r++;
		ptw_ring_release(&r, h + s[1]);
	}
	cr_assert_eq(next_r, next_w);
	cr_assert_lt(atomic_load(&r.tail), (uint64_t)1000,
		     "the free-running index wrapped past 2^64");
}

/* The commit prefetches PTW_RING_PREFETCH_BYTES ahead, in slots, at
 * least one, and not at all when that is a lap or more (or the CPU cannot
 * prefetch for writing). */
Test(ring, prefetch_distance_follows_slot_size_and_capacity)
{
	static const struct {
		uint32_t slot_size;
		uint64_t capacity;
		uint32_t ahead;
	} c[] = {
		{32, 32768, PTW_RING_PREFETCH_BYTES / 32},
		{16, 256, PTW_RING_PREFETCH_BYTES / 16},
		{16, PTW_RING_PREFETCH_BYTES / 16, 0}, /* a whole lap */
		{32, 2, 0},
		{4096, 4, 1},
		{4096, 1, 0}, /* rejected below */
	};
	int ok = ptw_ring_prefetch_ok();
	cr_assert_eq(ok, ptw_ring_prefetch_ok(), "asked once, same answer");
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		struct ptw_ring *r = ptw_ring_create(c[k].slot_size,
						     c[k].capacity);
		if (c[k].capacity < 2) {
			cr_assert_null(r);
			continue;
		}
		cr_assert_not_null(r);
		cr_assert_eq(r->p_ahead, ok ? c[k].ahead : 0,
			     "slot %u x %llu: %u slots ahead", c[k].slot_size,
			     (unsigned long long)c[k].capacity, r->p_ahead);
		ptw_ring_destroy(r);
	}
}

struct stress {
	struct ptw_ring *r;
	uint64_t n;
	uint64_t full_seen;
};

/* Records of 1..3 slots (slot k of a record has k in its top byte), so
 * that commits, and the prefetches behind them, land anywhere in a line;
 * one-slot records go in by ptw_ring_push. */
static uint64_t stress_len(uint64_t seq) { return 1 + seq % 3; }

static void *producer(void *arg)
{
	struct stress *st = arg;
	for (uint64_t seq = 0; seq < st->n;) {
		uint64_t len = stress_len(seq), i;
		if (len == 1) {
			uint64_t rec[2] = {seq, ~seq};
			if (ptw_ring_push(st->r, rec))
				seq++;
			else
				st->full_seen++;
			continue;
		}
		if (!ptw_ring_reserve(st->r, len, &i)) {
			st->full_seen++;
			continue;
		}
		for (uint64_t k = 0; k < len; k++) {
			uint64_t *s = ptw_ring_slot_producer(st->r, i + k);
			s[0] = seq + (k << 56);
			s[1] = ~s[0];
		}
		ptw_ring_commit(st->r, i + len);
		seq++;
	}
	return NULL;
}

/* One producer thread, the test as consumer: every record arrives once,
 * in order, intact. */
static void stress_run(uint64_t capacity)
{
	struct stress st = {ptw_ring_create(16, capacity),
			    scale_count(2000000, 100000), 0};
	cr_assert_not_null(st.r);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, producer, &st), 0);
	uint64_t want = 0, k = 0;
	while (want < st.n) {
		uint64_t h, n = ptw_ring_peek(st.r, &h);
		for (uint64_t j = 0; j < n; j++) {
			const uint64_t *rec = ptw_ring_slot(st.r, h + j);
			uint64_t exp = want + (k << 56);
			if (rec[0] != exp || rec[1] != ~exp)
				cr_assert_fail("slot %llu: got %llx, want %llx",
					       (unsigned long long)(h + j),
					       (unsigned long long)rec[0],
					       (unsigned long long)exp);
			if (++k == stress_len(want)) {
				k = 0;
				want++;
			}
		}
		if (n)
			ptw_ring_release(st.r, h + n);
	}
	pthread_join(th, NULL);
	cr_assert_eq(ptw_ring_size(st.r), 0);
	cr_assert_eq(want, st.n);
	ptw_ring_destroy(st.r);
}

Test(ring, two_threads_deliver_every_sequence_number_once_in_order)
{
	stress_run(PTW_RING_PREFETCH_BYTES / 16); /* no prefetch */
}

/* The producer prefetches a quarter lap ahead, often into slots the
 * consumer is still reading: a hint only, nothing may change. */
Test(ring, prefetch_ahead_of_the_producer_changes_no_record)
{
	stress_run(4 * PTW_RING_PREFETCH_BYTES / 16);
}
