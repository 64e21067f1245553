/* test_arch.c - the CPU's time counter (lib/arch/) as the tracer's clock:
 * its ticks map to CLOCK_MONOTONIC, and the fixed-point conversion of
 * tsc.c is exact, or below by at most one ns plus one per 2^32 ticks, at
 * the frequencies ARM generic timers and x86 TSCs run at. Single-threaded,
 * so that it also runs under qemu-aarch64 (tools/test-cross.sh).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
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
	if (ptw_tr_tsc_calibrate(&c, 0) != 0)
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

/* A simulated counter whose rate is off the stated one by 50 ppm and
 * drifts by +-20 ppm more (temperature), read against a BOOTTIME with
 * +-40 ns of jitter per pair, re-anchored at uneven intervals of 20-80 ms
 * over 10 s (tsc.c's slewing, as the backend of a system session does
 * every pass): every event converts to within 1 us of its true time from
 * the third interval on, converts the same after later re-anchors, and
 * times never go back or jump at a re-anchor. A fixed multiplier is off
 * by 500 us after 10 s. */
Test(arch, boottime_slewing_follows_a_drifting_counter)
{
	const uint64_t hz = 3000000000u;
	const uint64_t boot0 = 5000000000000ull, tick0 = 77777777777ull;
	struct ptw_tr_tsc c;
	memset(&c, 0, sizeof(c));
	cr_assert_eq(ptw_tr_tsc_set(&c, hz, tick0, boot0), 0);
	c.boot = 1;
	uint32_t rnd = 12345;
	long double b = (long double)boot0, t = (long double)tick0;
	uint64_t prev_ns = 0, n_events = 0;
	long double worst = 0;
	for (int k = 0; b < boot0 + 10e9L; k++) {
		/* the interval to the next pass: its rate, length, events */
		long double ppm = 50 + 20 * sinl(k / 15.0L);
		long double rate = hz * (1 + ppm * 1e-6L) / 1e9L; /* ticks/ns */
		rnd = rnd * 1103515245u + 12345u;
		long double len = 20e6L + (rnd >> 8) % 60000000u;
		struct {
			uint64_t tick;
			long double at;
		} ev[64];
		for (int i = 0; i < 64; i++) {
			long double at = b + len * i / 64;
			ev[i].tick = (uint64_t)(t + (at - b) * rate);
			ev[i].at = at;
		}
		t += len * rate;
		b += len;
		/* the pass: a pair read with jitter, then the drain converts
		 * the interval's events (logged before the pair) */
		rnd = rnd * 1103515245u + 12345u;
		uint64_t pt = (uint64_t)t;
		uint64_t pb = (uint64_t)b + (rnd >> 8) % 81u - 40u;
		uint64_t before = ptw_tr_tsc_to_ns(&c, pt - 1);
		cr_assert_eq(ptw_tr_tsc_slew(&c, pt, pb), 1);
		uint64_t at_pt = ptw_tr_tsc_to_ns(&c, pt);
		cr_assert(at_pt >= before && at_pt - before <= 1,
			  "re-anchor %d: %llu ns, the tick before %llu", k,
			  (unsigned long long)at_pt, (unsigned long long)before);
		for (int i = 0; i < 64; i++) {
			uint64_t ns = ptw_tr_tsc_to_ns(&c, ev[i].tick);
			cr_assert_geq(ns, prev_ns, "interval %d event %d", k, i);
			prev_ns = ns;
			long double err = (long double)ns - ev[i].at;
			err = err < 0 ? -err : err;
			if (k >= 2 && err > worst)
				worst = err;
			n_events++;
		}
		cr_assert_leq(prev_ns, at_pt);
	}
	cr_log_info("%llu events, worst error %.0Lf ns",
		    (unsigned long long)n_events, worst);
	cr_assert_lt(worst, 1000.0L, "%.0Lf ns off BOOTTIME", worst);
}

/* Events still in the rings after several re-anchors convert with the
 * piece of the mapping they fall in: the same times as right after their
 * interval, increasing over the pieces kept. */
Test(arch, boottime_pieces_convert_older_ticks_as_before)
{
	const uint64_t hz = 2400000000u;
	struct ptw_tr_tsc c;
	memset(&c, 0, sizeof(c));
	cr_assert_eq(ptw_tr_tsc_set(&c, hz, 1000000, 1000000000), 0);
	c.boot = 1;
	uint64_t ticks[PTW_TR_TSC_OLD][16], ns[PTW_TR_TSC_OLD][16];
	uint64_t t = 1000000, b = 1000000000;
	for (int k = 0; k < PTW_TR_TSC_OLD; k++) {
		for (int i = 0; i < 16; i++)
			ticks[k][i] = t + (uint64_t)i * 6000000u;
		t += 96000000;                       /* 40 ms of ticks */
		b += 40000000 + (k & 1 ? 3000 : -2500); /* a rate that wobbles */
		cr_assert_eq(ptw_tr_tsc_slew(&c, t, b), 1);
		for (int i = 0; i < 16; i++)
			ns[k][i] = ptw_tr_tsc_to_ns(&c, ticks[k][i]);
	}
	uint64_t prev = 0;
	for (int k = 0; k < PTW_TR_TSC_OLD; k++)
		for (int i = 0; i < 16; i++) {
			uint64_t now = ptw_tr_tsc_to_ns(&c, ticks[k][i]);
			cr_assert_eq(now, ns[k][i], "interval %d tick %d", k, i);
			cr_assert_gt(now, prev);
			prev = now;
		}
}
