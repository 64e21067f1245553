/* test_clock_stream_math.c - exact cycle -> ns conversion and comparison.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "lib/clock_stream/clock_stream_math.h"
#include "ptw/error.h"

static struct ptw_clock_time conv(uint64_t num, uint64_t den, uint64_t off,
				  uint64_t off_ns, uint64_t cycle)
{
	struct ptw_clock_rate r;
	struct ptw_clock_time t = { 0, 0, 0 };
	cr_assert_eq(ptw_clock_rate_init(&r, num, den, off, off_ns), 0);
	cr_assert_eq(ptw_clock_rate_convert(&r, cycle, &t), 0,
		     "cycle %llu at %llu/%llu Hz failed",
		     (unsigned long long)cycle, (unsigned long long)num,
		     (unsigned long long)den);
	return t;
}

static int conv_rc(uint64_t num, uint64_t den, uint64_t cycle)
{
	struct ptw_clock_rate r;
	struct ptw_clock_time t = { 7, 7, 7 };
	cr_assert_eq(ptw_clock_rate_init(&r, num, den, 0, 0), 0);
	int rc = ptw_clock_rate_convert(&r, cycle, &t);
	if (rc)
		cr_assert(t.ns == 7 && t.rem == 7 && t.den == 7,
			  "failed conversion wrote its output");
	return rc;
}

Test(clock_math, one_hz_is_a_second_per_cycle)
{
	struct ptw_clock_time t = conv(1, 0, 0, 0, 5);
	cr_assert_eq(t.ns, 5000000000ull);
	cr_assert_eq(t.rem, 0);
	/* INT64_MAX / 1e9 = 9223372036.85...: the last cycle that fits. */
	t = conv(1, 1, 0, 0, 9223372036ull);
	cr_assert_eq(t.ns, 9223372036000000000ull);
	cr_assert_eq(conv_rc(1, 1, 9223372037ull), PTW_ERR_LIMIT);
}

Test(clock_math, three_hz_floors_and_keeps_the_fraction)
{
	struct ptw_clock_time t = conv(3, 0, 0, 0, 1);
	cr_assert_eq(t.ns, 333333333ull);
	cr_assert_eq(t.rem, 1); /* 1e9 mod 3 */
	cr_assert_eq(t.den, 3);
	t = conv(3, 0, 0, 0, 2);
	cr_assert_eq(t.ns, 666666666ull);
	cr_assert_eq(t.rem, 2);
	t = conv(3, 0, 0, 0, 3);
	cr_assert_eq(t.ns, 1000000000ull);
	cr_assert_eq(t.rem, 0);
}

Test(clock_math, two_and_a_half_ghz_integer_and_rational_agree)
{
	/* 2.5 GHz: 5 cycles = 2 ns. */
	struct ptw_clock_time a = conv(2500000000ull, 0, 0, 0, 5);
	cr_assert_eq(a.ns, 2);
	cr_assert_eq(a.rem, 0);
	a = conv(2500000000ull, 0, 0, 0, 1); /* 0.4 ns */
	struct ptw_clock_time b = conv(5000000000ull, 2, 0, 0, 1);
	cr_assert_eq(a.ns, 0);
	cr_assert_eq(b.ns, 0);
	cr_assert_eq(ptw_clock_time_cmp(&a, &b), 0, "0.4 ns != 0.4 ns");

	/* 2^64-1 cycles: (2^64-1) * 2 / 5 is an integer. */
	a = conv(2500000000ull, 0, 0, 0, UINT64_MAX);
	cr_assert_eq(a.ns, 7378697629483820646ull);
	cr_assert_eq(a.rem, 0);
	b = conv(5000000000ull, 2, 0, 0, UINT64_MAX);
	cr_assert_eq(b.ns, 7378697629483820646ull);
	cr_assert_eq(b.rem, 0);
	/* 2^64-2 cycles: 7378697629483820645.6 ns */
	a = conv(2500000000ull, 0, 0, 0, UINT64_MAX - 1);
	cr_assert_eq(a.ns, 7378697629483820645ull);
	cr_assert_eq(a.rem, 1500000000ull);
	b = conv(5000000000ull, 2, 0, 0, UINT64_MAX - 1);
	cr_assert_eq(b.ns, 7378697629483820645ull);
	cr_assert_eq(b.rem, 3000000000ull);
	cr_assert_eq(ptw_clock_time_cmp(&a, &b), 0);
}

Test(clock_math, one_third_ghz_rational)
{
	/* 1/3 GHz: a cycle is exactly 3 ns. */
	struct ptw_clock_time t = conv(1000000000ull, 3, 0, 0, 7);
	cr_assert_eq(t.ns, 21);
	cr_assert_eq(t.rem, 0);
	t = conv(1000000000ull, 3, 0, 0, 1ull << 61);
	cr_assert_eq(t.ns, 3ull << 61);
	/* 3 * (2^64-1) ns does not fit in int64. */
	cr_assert_eq(conv_rc(1000000000ull, 3, UINT64_MAX), PTW_ERR_LIMIT);
	/* 3 GHz: 1/3 ns per cycle, 2^64-1 divisible by 3. */
	t = conv(3000000000ull, 0, 0, 0, UINT64_MAX);
	cr_assert_eq(t.ns, 6148914691236517205ull);
	cr_assert_eq(t.rem, 0);
}

Test(clock_math, max_cycles_at_one_ghz_is_a_limit_error)
{
	cr_assert_eq(conv_rc(1000000000ull, 0, UINT64_MAX), PTW_ERR_LIMIT);
	cr_assert_eq(conv_rc(1, 0, UINT64_MAX), PTW_ERR_LIMIT);
	/* The exact boundary: INT64_MAX ns at 1 GHz. */
	struct ptw_clock_time t = conv(1000000000ull, 0, 0, 0, INT64_MAX);
	cr_assert_eq(t.ns, (uint64_t)INT64_MAX);
	cr_assert_eq(conv_rc(1000000000ull, 0, (uint64_t)INT64_MAX + 1),
		     PTW_ERR_LIMIT);
	/* Huge denominators take the rational path without overflow. */
	t = conv(UINT64_MAX, UINT64_MAX, 0, 0, 1ull << 30);
	cr_assert_eq(t.ns, (1ull << 30) * 1000000000ull);
	cr_assert_eq(t.rem, 0);
}

Test(clock_math, offsets_shift_exactly)
{
	/* offset is added to cycle * 1e9 before dividing: 3 Hz, offset 2:
	 * (1e9 + 2) / 3 = 333333334 exactly. */
	struct ptw_clock_time t = conv(3, 0, 2, 0, 1);
	cr_assert_eq(t.ns, 333333334ull);
	cr_assert_eq(t.rem, 0);
	/* offset_ns is whole nanoseconds after the conversion. */
	t = conv(1000000000ull, 0, 0, 1000, 5);
	cr_assert_eq(t.ns, 1005);
	/* 1.2 GHz, cycle 0 with offset = 600 MHz-cycles-worth: 0.5 ns. */
	t = conv(1200000000ull, 0, 600000000ull, 0, 0);
	cr_assert_eq(t.ns, 0);
	cr_assert_eq(t.rem, 600000000ull);
	/* offset_ns pushing past INT64_MAX is a limit error. */
	struct ptw_clock_rate r;
	struct ptw_clock_time o;
	cr_assert_eq(ptw_clock_rate_init(&r, 1000000000ull, 0, 0,
					 (uint64_t)INT64_MAX), 0);
	cr_assert_eq(ptw_clock_rate_convert(&r, 0, &o), 0);
	cr_assert_eq(o.ns, (uint64_t)INT64_MAX);
	cr_assert_eq(ptw_clock_rate_convert(&r, 1, &o), PTW_ERR_LIMIT);
}

Test(clock_math, zero_hz_is_rejected)
{
	struct ptw_clock_rate r;
	cr_assert_eq(ptw_clock_rate_init(&r, 0, 1, 0, 0), PTW_ERR_INVALID);
}

Test(clock_math, simultaneous_instants_in_different_domains_compare_equal)
{
	/* 1.2 GHz cycle 6 = 5 ns = 800 MHz cycle 4 = 1.5 GHz cycle 7.5 (not a
	 * cycle), and 3 GHz cycle 1 = 1/3 ns = 6 GHz cycle 2. */
	struct ptw_clock_time cpu = conv(1200000000ull, 0, 0, 0, 6);
	struct ptw_clock_time bus = conv(800000000ull, 0, 0, 0, 4);
	cr_assert_eq(cpu.ns, 5);
	cr_assert_eq(ptw_clock_time_cmp(&cpu, &bus), 0);
	struct ptw_clock_time a = conv(3000000000ull, 0, 0, 0, 1);
	struct ptw_clock_time b = conv(6000000000ull, 0, 0, 0, 2);
	struct ptw_clock_time c = conv(6000000000ull, 0, 0, 0, 1);
	cr_assert_eq(a.ns, 0);
	cr_assert_eq(ptw_clock_time_cmp(&a, &b), 0);
	cr_assert_eq(ptw_clock_time_cmp(&c, &a), -1);
	cr_assert_eq(ptw_clock_time_cmp(&a, &c), 1);
	/* 1.5 GHz cycle 7 = 4.666.. ns < 5 ns; cycle 8 = 5.333.. ns */
	struct ptw_clock_time acc7 = conv(1500000000ull, 0, 0, 0, 7);
	struct ptw_clock_time acc8 = conv(1500000000ull, 0, 0, 0, 8);
	cr_assert_eq(acc7.ns, 4);
	cr_assert_eq(acc8.ns, 5);
	cr_assert_eq(ptw_clock_time_cmp(&acc8, &cpu), 1);
}

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

Test(clock_math, matches_direct_128_bit_reference_when_it_fits)
{
	/* With den < 2^32 and cycle < 2^40, (cycle*1e9 + off)*den < 2^112:
	 * the reference computes it directly. */
	uint64_t s = 42;
	for (int i = 0; i < 20000; i++) {
		uint64_t num = rng_next(&s) % 4000000000000ull + 1;
		uint64_t den = rng_next(&s) % 0xffffffffu + 1;
		uint64_t off = rng_next(&s) % 1000000000000ull;
		uint64_t cycle = rng_next(&s) & ((1ull << 40) - 1);
		unsigned __int128 x = ((unsigned __int128)cycle * 1000000000u + off) * den;
		unsigned __int128 q = x / num;
		struct ptw_clock_rate r;
		struct ptw_clock_time t;
		cr_assert_eq(ptw_clock_rate_init(&r, num, den, off, 0), 0);
		int rc = ptw_clock_rate_convert(&r, cycle, &t);
		if (q > (uint64_t)INT64_MAX) {
			cr_assert_eq(rc, PTW_ERR_LIMIT);
			continue;
		}
		cr_assert_eq(rc, 0);
		cr_assert_eq(t.ns, (uint64_t)q, "i=%d", i);
		cr_assert_eq(t.rem, (uint64_t)(x % num), "i=%d", i);
		cr_assert_eq(t.den, num);
	}
}
