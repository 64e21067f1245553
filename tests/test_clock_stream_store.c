/* test_clock_stream_store.c - the bounded record store (ordering, capacity,
 * metadata ownership) and the metadata encoding.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock_stream/clock_stream_meta.h"
#include "lib/clock_stream/clock_stream_store.h"
#include "ptw/error.h"

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static const char *const NAMES[] = { "bus", "cpu0", "cpu1", "acc" };

/* A record of stream 'st' at cycle 'c' of a domain of st+1 GHz * 3 / 4
 * (so exact times often collide within one nanosecond). */
static struct ptw_clock_rec make_rec(uint32_t st, uint64_t seq, uint64_t c,
				     uint64_t phase, uint32_t name)
{
	static const uint64_t hz[] = { 750000000ull, 1500000000ull,
				       2250000000ull, 3000000000ull };
	struct ptw_clock_rate r;
	struct ptw_clock_rec rec;
	memset(&rec, 0, sizeof(rec));
	cr_assert_eq(ptw_clock_rate_init(&r, hz[st], 1, 0, 0), 0);
	cr_assert_eq(ptw_clock_rate_convert(&r, c, &rec.t), 0);
	rec.phase = phase;
	rec.ordinal = seq;
	rec.seq = seq;
	rec.cycle = c;
	rec.track = st + 1;
	rec.track_name = NAMES[name];
	rec.stream = st;
	rec.kind = 1;
	return rec;
}

static uint8_t META[PTW_CLOCK_STORE_MAX_META];
static uint8_t OUT[PTW_CLOCK_STORE_MAX_META];

/* Metadata of a record is derived from its (stream, seq): checkable. */
static uint32_t fill_meta(uint8_t *m, uint32_t st, uint64_t seq)
{
	uint32_t len = (uint32_t)((seq * 37 + st * 11) % 300);
	for (uint32_t i = 0; i < len; i++)
		m[i] = (uint8_t)(st * 31 + seq + i);
	return len;
}

struct rec_list {
	struct ptw_clock_rec *r;
	size_t n;
};

static struct rec_list make_set(size_t n, uint64_t seed)
{
	struct rec_list l = { calloc(n, sizeof(struct ptw_clock_rec)), n };
	cr_assert_not_null(l.r);
	uint64_t s = seed, seqs[4] = { 0 };
	for (size_t i = 0; i < n; i++) {
		uint32_t st = (uint32_t)(rng_next(&s) % 4);
		uint64_t c = rng_next(&s) % 64;
		uint64_t phase = rng_next(&s) % 3 == 0 ? 1 : 0;
		uint32_t name = (uint32_t)(rng_next(&s) % 4);
		l.r[i] = make_rec(st, seqs[st]++, c, phase, name);
		if (rng_next(&s) % 5 == 0)
			l.r[i].ordinal = rng_next(&s) % 4;
	}
	return l;
}

static void insert_all(struct ptw_clock_store *s, const struct rec_list *l,
		       const size_t *order)
{
	for (size_t i = 0; i < l->n; i++) {
		struct ptw_clock_rec r = l->r[order ? order[i] : i];
		r.meta_len = fill_meta(META, r.stream, r.seq);
		cr_assert_eq(ptw_clock_store_insert(s, &r, META), 0);
	}
}

/* Pops everything below 'below' into 'out'; checks metadata and order. */
static size_t drain(struct ptw_clock_store *s, uint64_t below,
		    struct ptw_clock_rec *out)
{
	size_t n = 0;
	struct ptw_clock_rec r;
	while (ptw_clock_store_pop_below(s, below, &r, OUT)) {
		uint32_t len = fill_meta(META, r.stream, r.seq);
		cr_assert_eq(r.meta_len, len);
		cr_assert_eq(memcmp(OUT, META, len), 0, "metadata changed");
		cr_assert_lt(r.t.ns, below);
		if (n)
			cr_assert_lt(ptw_clock_rec_cmp(&out[n - 1], &r), 0,
				     "popped out of order at %zu", n);
		out[n++] = r;
	}
	return n;
}

Test(clock_store, pop_order_is_independent_of_insertion_order)
{
	size_t n = 3000;
	struct rec_list l = make_set(n, 7);
	size_t *perm = malloc(n * sizeof(*perm));
	struct ptw_clock_rec *a = calloc(n, sizeof(*a));
	struct ptw_clock_rec *b = calloc(n, sizeof(*b));
	cr_assert(perm && a && b);
	for (size_t i = 0; i < n; i++)
		perm[i] = n - 1 - i;
	uint64_t s = 99;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = rng_next(&s) % (i + 1);
		size_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}

	struct ptw_clock_store s1, s2;
	ptw_clock_store_init(&s1, 100000, 1ull << 30);
	ptw_clock_store_init(&s2, 100000, 1ull << 30);
	insert_all(&s1, &l, NULL);
	insert_all(&s2, &l, perm);
	cr_assert_eq(drain(&s1, UINT64_MAX, a), n);
	cr_assert_eq(drain(&s2, UINT64_MAX, b), n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(a[i].stream, b[i].stream);
		cr_assert_eq(a[i].seq, b[i].seq);
	}
	cr_assert_eq(s1.n_recs, 0);
	cr_assert_eq(s1.bytes, 0);
	ptw_clock_store_free(&s1);
	ptw_clock_store_free(&s2);
	free(perm);
	free(a);
	free(b);
	free(l.r);
}

Test(clock_store, simultaneous_records_sort_by_phase_name_ordinal)
{
	struct ptw_clock_store s;
	ptw_clock_store_init(&s, 64, 1 << 20);
	/* All at exactly 4 ns: 750 MHz cycle 3 and 3 GHz cycle 12. */
	struct ptw_clock_rec r[6];
	r[0] = make_rec(0, 0, 3, 1, 0);  /* phase 1, "bus" */
	r[1] = make_rec(3, 0, 12, 0, 1); /* phase 0, "cpu0" */
	r[2] = make_rec(3, 1, 12, 0, 0); /* phase 0, "bus", ordinal 1 */
	r[3] = make_rec(0, 1, 3, 0, 0);  /* phase 0, "bus", ordinal 1, stream 0 */
	r[4] = make_rec(0, 2, 3, 0, 0);  /* phase 0, "bus", ordinal 0 */
	r[4].ordinal = 0;
	r[5] = make_rec(3, 2, 11, 5, 3); /* 3.67 ns: first whatever the keys */
	for (int i = 0; i < 6; i++)
		cr_assert_eq(ptw_clock_store_insert(&s, &r[i], NULL), 0);
	int want[6][2] = { { 3, 2 }, { 0, 2 }, { 0, 1 }, { 3, 1 },
			   { 3, 0 }, { 0, 0 } }; /* (stream, seq) */
	for (int i = 0; i < 6; i++) {
		struct ptw_clock_rec o;
		cr_assert_eq(ptw_clock_store_pop_below(&s, 5, &o, OUT), 1);
		cr_assert_eq(o.stream, (uint32_t)want[i][0], "at %d", i);
		cr_assert_eq(o.seq, (uint64_t)want[i][1], "at %d", i);
	}
	ptw_clock_store_free(&s);
}

Test(clock_store, records_at_the_bound_stay_buffered)
{
	struct ptw_clock_store s;
	ptw_clock_store_init(&s, 64, 1 << 20);
	struct ptw_clock_rec a = make_rec(3, 0, 30, 0, 0); /* 10 ns */
	struct ptw_clock_rec b = make_rec(3, 1, 32, 0, 0); /* 10.67 ns */
	struct ptw_clock_rec c = make_rec(3, 2, 29, 0, 0); /* 9.67 ns */
	cr_assert_eq(ptw_clock_store_insert(&s, &a, NULL), 0);
	cr_assert_eq(ptw_clock_store_insert(&s, &b, NULL), 0);
	cr_assert_eq(ptw_clock_store_insert(&s, &c, NULL), 0);
	struct ptw_clock_rec o;
	cr_assert_eq(ptw_clock_store_pop_below(&s, 10, &o, OUT), 1);
	cr_assert_eq(o.seq, 2);
	cr_assert_eq(ptw_clock_store_pop_below(&s, 10, &o, OUT), 0);
	cr_assert_eq(s.n_recs, 2);
	cr_assert_eq(ptw_clock_store_min(&s)->seq, 0);
	cr_assert_eq(ptw_clock_store_pop_below(&s, 11, &o, OUT), 1);
	cr_assert_eq(o.seq, 0);
	cr_assert_eq(ptw_clock_store_pop_below(&s, 11, &o, OUT), 1);
	cr_assert_eq(o.seq, 1);
	cr_assert_null(ptw_clock_store_min(&s));
	ptw_clock_store_free(&s);
}

Test(clock_store, full_record_capacity_rejects_and_keeps_contents)
{
	struct ptw_clock_store s;
	ptw_clock_store_init(&s, 4, 1 << 20);
	for (uint64_t i = 0; i < 4; i++) {
		struct ptw_clock_rec r = make_rec(1, i, 10 - i, 0, 1);
		r.meta_len = fill_meta(META, 1, i);
		cr_assert_eq(ptw_clock_store_insert(&s, &r, META), 0);
	}
	uint64_t bytes = s.bytes;
	struct ptw_clock_rec r = make_rec(1, 4, 1, 0, 1);
	r.meta_len = fill_meta(META, 1, 4);
	cr_assert_eq(ptw_clock_store_insert(&s, &r, META), PTW_ERR_LIMIT);
	cr_assert_eq(s.n_recs, 4);
	cr_assert_eq(s.bytes, bytes);
	struct ptw_clock_rec out[4];
	cr_assert_eq(drain(&s, UINT64_MAX, out), 4);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(out[i].seq, (uint64_t)(3 - i));
	cr_assert_eq(s.peak_records, 4);
	cr_assert_eq(s.peak_bytes, bytes);
	/* Room again once drained. */
	cr_assert_eq(ptw_clock_store_insert(&s, &r, META), 0);
	ptw_clock_store_free(&s);
}

Test(clock_store, full_byte_capacity_rejects_and_keeps_contents)
{
	struct ptw_clock_store s;
	uint64_t one = ptw_clock_store_rec_bytes(1000);
	ptw_clock_store_init(&s, 1000, 2 * one + 10);
	memset(META, 0xab, 1000);
	struct ptw_clock_rec r = make_rec(2, 0, 5, 0, 2);
	r.meta_len = 1000;
	cr_assert_eq(ptw_clock_store_insert(&s, &r, META), 0);
	r.seq = 1;
	cr_assert_eq(ptw_clock_store_insert(&s, &r, META), 0);
	r.seq = 2;
	cr_assert_eq(ptw_clock_store_insert(&s, &r, META), PTW_ERR_LIMIT);
	r.meta_len = 0; /* a bare record needs more than the 10 spare bytes */
	cr_assert_eq(ptw_clock_store_insert(&s, &r, META), PTW_ERR_LIMIT);
	cr_assert_eq(s.n_recs, 2);
	cr_assert_eq(s.bytes, 2 * one);
	struct ptw_clock_rec o;
	cr_assert_eq(ptw_clock_store_pop_below(&s, UINT64_MAX, &o, OUT), 1);
	cr_assert_eq(o.meta_len, 1000);
	for (int i = 0; i < 1000; i++)
		cr_assert_eq(OUT[i], 0xab);
	ptw_clock_store_free(&s);
}

Test(clock_store, metadata_over_64k_is_a_limit_error)
{
	struct ptw_clock_store s;
	ptw_clock_store_init(&s, 10, 1ull << 30);
	struct ptw_clock_rec r = make_rec(0, 0, 1, 0, 0);
	r.meta_len = PTW_CLOCK_STORE_MAX_META + 1;
	cr_assert_eq(ptw_clock_store_insert(&s, &r, META), PTW_ERR_LIMIT);
	r.meta_len = PTW_CLOCK_STORE_MAX_META;
	for (uint32_t i = 0; i < r.meta_len; i++)
		META[i] = (uint8_t)(i * 7);
	cr_assert_eq(ptw_clock_store_insert(&s, &r, META), 0);
	struct ptw_clock_rec o;
	cr_assert_eq(ptw_clock_store_pop_below(&s, UINT64_MAX, &o, OUT), 1);
	cr_assert_eq(memcmp(OUT, META, PTW_CLOCK_STORE_MAX_META), 0);
	ptw_clock_store_free(&s);
}

Test(clock_store, interleaved_inserts_and_watermarks_reuse_memory)
{
	/* Sliding window: insert ahead, pop behind; every popped record keeps
	 * its own metadata although chunks are recycled constantly. */
	struct ptw_clock_store s;
	ptw_clock_store_init(&s, 5000, 1ull << 30);
	uint64_t seq[4] = { 0 }, rs = 5, popped = 0;
	struct ptw_clock_rec *out = calloc(20000, sizeof(*out));
	cr_assert_not_null(out);
	for (uint64_t round = 0; round < 40; round++) {
		for (int i = 0; i < 500; i++) {
			uint32_t st = (uint32_t)(rng_next(&rs) % 4);
			uint64_t ns_lo = round * 100;
			/* cycles mapping to [round*100, round*100 + 300) ns */
			uint64_t hz_ghz4 = 3 * (st + 1); /* hz in units of 250 MHz */
			uint64_t c = (ns_lo + 2 + rng_next(&rs) % 298) * hz_ghz4 / 4;
			struct ptw_clock_rec r = make_rec(st, seq[st]++, c, 0, st);
			r.meta_len = fill_meta(META, st, r.seq);
			cr_assert_eq(ptw_clock_store_insert(&s, &r, META), 0);
		}
		size_t n = drain(&s, (round + 1) * 100, out);
		for (size_t i = 0; i < n; i++)
			cr_assert_geq(out[i].t.ns, round * 100);
		popped += n;
	}
	popped += drain(&s, UINT64_MAX, out);
	cr_assert_eq(popped, 40 * 500);
	cr_assert_eq(s.bytes, 0);
	cr_assert_eq(s.n_free_chunks, s.cap_chunks);
	cr_assert_leq(s.peak_records, 5000);
	free(out);
	ptw_clock_store_free(&s);
}

/* ---- metadata encoding ------------------------------------------------ */

Test(clock_meta, round_trip_of_every_field)
{
	static uint8_t buf[PTW_CLOCK_STREAMS_MAX_META];
	uint64_t flows[2] = { 7, UINT64_MAX }, term[1] = { 99 };
	struct ptw_arg args[7] = {
		{ .name = "b", .type = PTW_ARG_TYPE_BOOL, .v.b = 5 },
		{ .name = "i", .type = PTW_ARG_TYPE_INT, .v.i = -5 },
		{ .name = "phase", .type = PTW_ARG_TYPE_UINT, .v.u = 3 },
		{ .name = "d", .type = PTW_ARG_TYPE_DOUBLE, .v.d = 2.5 },
		{ .name = "s", .type = PTW_ARG_TYPE_STRING, .v.s = "hello" },
		{ .name = "p", .type = PTW_ARG_TYPE_POINTER, .v.u = 0xdead },
		{ .name = "ordinal", .type = PTW_ARG_TYPE_UINT, .v.u = 12 },
	};
	struct ptw_clock_streams_event ev = {
		.category = "cat", .name = "work", .flow_ids = flows,
		.n_flow_ids = 2, .terminating_flow_ids = term,
		.n_terminating_flow_ids = 1, .args = args, .n_args = 7,
	};
	uint32_t len = 0;
	struct ptw_clock_meta_keys k;
	const char *why = NULL;
	cr_assert_eq(ptw_clock_meta_encode(&ev, 1, buf, &len, &k, &why), 0);
	cr_assert_eq(k.phase, 3);
	cr_assert_eq(k.has_ordinal, 1);
	cr_assert_eq(k.ordinal, 12);

	struct ptw_event out;
	uint64_t of[PTW_MAX_FLOWS], ot[PTW_MAX_FLOWS];
	struct ptw_arg oa[PTW_MAX_ANNOTATIONS];
	memset(&out, 0, sizeof(out));
	cr_assert_eq(ptw_clock_meta_decode(buf, len, &out, of, ot, oa), 0);
	cr_assert_str_eq(out.category, "cat");
	cr_assert_str_eq(out.name, "work");
	cr_assert_eq(out.n_flow_ids, 2);
	cr_assert_eq(out.flow_ids[0], 7);
	cr_assert_eq(out.flow_ids[1], UINT64_MAX);
	cr_assert_eq(out.n_terminating_flow_ids, 1);
	cr_assert_eq(out.terminating_flow_ids[0], 99);
	cr_assert_eq(out.n_args, 7);
	cr_assert_eq(oa[0].v.b, 1);
	cr_assert_eq(oa[1].v.i, -5);
	cr_assert_eq(oa[2].v.u, 3);
	cr_assert(oa[3].v.d == 2.5);
	cr_assert_str_eq(oa[4].v.s, "hello");
	cr_assert_eq(oa[5].type, PTW_ARG_TYPE_POINTER);
	cr_assert_eq(oa[5].v.u, 0xdead);
	for (int i = 0; i < 7; i++) {
		cr_assert_str_eq(oa[i].name, args[i].name);
		cr_assert_eq(oa[i].type, args[i].type);
	}

	/* Without names (slice end): category and name dropped. */
	cr_assert_eq(ptw_clock_meta_encode(&ev, 0, buf, &len, &k, &why), 0);
	cr_assert_eq(ptw_clock_meta_decode(buf, len, &out, of, ot, oa), 0);
	cr_assert_null(out.category);
	cr_assert_null(out.name);
	cr_assert_eq(out.n_args, 7);

	/* Truncated input is caught. */
	cr_assert_eq(ptw_clock_meta_decode(buf, len - 1, &out, of, ot, oa),
		     PTW_ERR_FORMAT);
}

Test(clock_meta, static_strings_are_kept_by_pointer)
{
	static uint8_t buf[PTW_CLOCK_STREAMS_MAX_META];
	static const char name[] = "literal-name", cat[] = "literal-cat";
	struct ptw_clock_streams_event ev = { .name = name, .category = cat,
				      .flags = PTW_EV_STATIC_STRINGS };
	uint32_t len = 0;
	struct ptw_clock_meta_keys k;
	const char *why = NULL;
	cr_assert_eq(ptw_clock_meta_encode(&ev, 1, buf, &len, &k, &why), 0);
	cr_assert_lt(len, sizeof(name) + sizeof(cat), "strings were copied");
	struct ptw_event out;
	uint64_t of[PTW_MAX_FLOWS], ot[PTW_MAX_FLOWS];
	struct ptw_arg oa[PTW_MAX_ANNOTATIONS];
	memset(&out, 0, sizeof(out));
	cr_assert_eq(ptw_clock_meta_decode(buf, len, &out, of, ot, oa), 0);
	cr_assert_eq(out.name, name);
	cr_assert_eq(out.category, cat);
	cr_assert_eq(out.flags, PTW_EV_STATIC_STRINGS);
	/* Without the flag: copies, and no flag for the writer. */
	ev.flags = 0;
	cr_assert_eq(ptw_clock_meta_encode(&ev, 1, buf, &len, &k, &why), 0);
	cr_assert_eq(ptw_clock_meta_decode(buf, len, &out, of, ot, oa), 0);
	cr_assert_neq(out.name, name);
	cr_assert_str_eq(out.name, name);
	cr_assert_eq(out.flags, 0);
}

Test(clock_meta, bad_sort_key_annotations_are_invalid)
{
	static uint8_t buf[PTW_CLOCK_STREAMS_MAX_META];
	struct ptw_arg a[2] = {
		{ .name = "phase", .type = PTW_ARG_TYPE_INT, .v.i = 1 },
		{ .name = "phase", .type = PTW_ARG_TYPE_UINT, .v.u = 1 },
	};
	struct ptw_clock_streams_event ev = { .name = "x", .args = a, .n_args = 1 };
	uint32_t len;
	struct ptw_clock_meta_keys k;
	const char *why = NULL;
	cr_assert_eq(ptw_clock_meta_encode(&ev, 1, buf, &len, &k, &why),
		     PTW_ERR_INVALID);
	cr_assert_not_null(why);
	a[0].type = PTW_ARG_TYPE_UINT;
	ev.n_args = 2;
	cr_assert_eq(ptw_clock_meta_encode(&ev, 1, buf, &len, &k, &why),
		     PTW_ERR_INVALID);
	ev.n_args = 1;
	cr_assert_eq(ptw_clock_meta_encode(&ev, 1, buf, &len, &k, &why), 0);
	ev.n_flow_ids = PTW_MAX_FLOWS + 1;
	cr_assert_eq(ptw_clock_meta_encode(&ev, 1, buf, &len, &k, &why),
		     PTW_ERR_INVALID);
}

Test(clock_meta, oversized_metadata_is_a_limit_error)
{
	static uint8_t buf[PTW_CLOCK_STREAMS_MAX_META];
	size_t big = 40000;
	char *s = malloc(big + 1);
	cr_assert_not_null(s);
	memset(s, 'x', big);
	s[big] = '\0';
	struct ptw_arg a = { .name = "blob", .type = PTW_ARG_TYPE_STRING, .v.s = s };
	struct ptw_clock_streams_event ev = { .name = s, .args = &a, .n_args = 1 };
	uint32_t len;
	struct ptw_clock_meta_keys k;
	const char *why = NULL;
	/* Each string is within PTW_MAX_STRING_LEN, together over 64 KiB. */
	cr_assert_eq(ptw_clock_meta_encode(&ev, 1, buf, &len, &k, &why),
		     PTW_ERR_LIMIT);
	ev.n_args = 0;
	cr_assert_eq(ptw_clock_meta_encode(&ev, 1, buf, &len, &k, &why), 0);
	cr_assert_gt(len, big);
	free(s);
}
