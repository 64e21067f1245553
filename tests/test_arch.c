/* test_arch.c - the CPU's time counter (lib/arch/) as the tracer's clock:
 * its ticks map to CLOCK_MONOTONIC, and the fixed-point conversion of
 * tsc.c is exact, or below by at most one ns plus one per 2^32 ticks, at
 * the frequencies ARM generic timers and x86 TSCs run at. Single-threaded,
 * so that it also runs under qemu-aarch64 (tools/test-cross.sh).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <time.h>

#include "lib/arch/arch.h"
#include "lib/tracer/tracer_internal.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

Test(arch, counter_ticks_map_to_monotonic_nanoseconds)
{
	struct ptw_tr_tsc c;
	if (ptw_tr_tsc_calibrate(&c) != 0)
		cr_skip_test("no usable CPU counter here");
#if defined(__aarch64__)
	/* the generic timer's frequency is the one CNTFRQ_EL0 states */
	cr_assert_eq(c.hz, ptw_arch_counter_hz());
#endif
	cr_assert_eq(c.mult,
		     (uint64_t)(((unsigned __int128)1000000000u << 32) / c.hz));
	for (int i = 0; i < 100; i++) {
		uint64_t lo = mono_ns();
		uint64_t t = ptw_arch_counter();
		uint64_t hi = mono_ns();
		uint64_t ns = ptw_tr_tsc_to_ns(&c, t);
		/* calibration error allowance: 1 ms (a check of the
		 * mapping, not of timing) */
		cr_assert_geq(ns + 1000000, lo, "tick %llu", (unsigned long long)t);
		cr_assert_leq(ns, hi + 1000000, "tick %llu", (unsigned long long)t);
	}
}

/* floor(k * 1e9 / hz) exactly */
static uint64_t exact_ns(uint64_t k, uint64_t hz)
{
	return (uint64_t)((unsigned __int128)k * 1000000000u / hz);
}

Test(arch, conversion_is_exact_within_a_tick_per_2_32)
{
	/* generic timers: 19.2, 24, 25, 50, 62.5 (qemu), 100 MHz, 1 GHz
	 * (ARMv8.6); TSCs: 2.5, 3.0, 2.1999 GHz */
	static const uint64_t hzs[] = {19200000,   24000000,   25000000,
				       50000000,   62500000,   100000000,
				       1000000000, 2500000000, 3000000000,
				       2199900000};
	static const uint64_t tsc0 = 123456789012345ull, mono0 = 987654321ull;
	for (size_t h = 0; h < sizeof(hzs) / sizeof(hzs[0]); h++) {
		uint64_t hz = hzs[h];
		struct ptw_tr_tsc c;
		cr_assert_eq(ptw_tr_tsc_set(&c, hz, tsc0, mono0), 0);
		/* exact when ns per tick is a whole multiple of 2^-32 */
		int whole = ((unsigned __int128)1000000000u << 32) % hz == 0;
		uint64_t prev = 0;
		/* up to a day of ticks, with every small step */
		for (uint64_t k = 0; k < hz * 86400; k = k < 4096 ? k + 1 : k * 3 + 7) {
			uint64_t want = mono0 + exact_ns(k, hz);
			uint64_t got = ptw_tr_tsc_to_ns(&c, tsc0 + k);
			uint64_t slack = whole ? 0 : 1 + (k >> 32);
			cr_assert_leq(got, want, "%llu Hz, tick %llu",
				      (unsigned long long)hz, (unsigned long long)k);
			cr_assert_leq(want - got, slack, "%llu Hz, tick %llu: %llu ns, want %llu",
				      (unsigned long long)hz, (unsigned long long)k,
				      (unsigned long long)got, (unsigned long long)want);
			cr_assert_geq(got, prev, "monotonic");
			prev = got;
			/* before the anchor: mirrored */
			if (k > 0 && k <= tsc0) {
				uint64_t back = ptw_tr_tsc_to_ns(&c, tsc0 - k);
				uint64_t d = exact_ns(k, hz);
				uint64_t wb = d < mono0 ? mono0 - d : 0;
				cr_assert_geq(back, wb);
				cr_assert_leq(back - wb, slack);
			}
		}
	}
	struct ptw_tr_tsc c;
	cr_assert_neq(ptw_tr_tsc_set(&c, 999999, 0, 0), 0, "below 1 MHz");
}
