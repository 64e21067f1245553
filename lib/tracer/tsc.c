/* tsc.c - x86-64 time-stamp counter: availability, calibration against
 * CLOCK_MONOTONIC, and the fixed-point conversion of ticks to ns.
 * SPDX-License-Identifier: Apache-2.0 */
#include "tracer_internal.h"

#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* Calibration window. The frequency error is about the clock-read jitter
 * (~100 ns) over this window, i.e. ~10 ppm. */
#define PTW_TSC_CAL_NS 10000000u

static uint64_t ptw_tsc_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
/* One (tsc, mono) pair, taken where the two reads are closest together. */
static void ptw_tsc_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t a = __builtin_ia32_rdtsc();
		uint64_t m = ptw_tsc_mono();
		uint64_t b = __builtin_ia32_rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*mono = m;
		}
	}
}
#endif

int ptw_tr_tsc_calibrate(struct ptw_tr_tsc *c)
{
#if defined(__x86_64__)
	unsigned a, b, cx, d;
	/* CPUID 0x80000007 EDX bit 8: invariant TSC (constant rate, runs in
	 * every C/P-state), the condition for using it as a clock. */
	if (!__get_cpuid(0x80000007, &a, &b, &cx, &d) || !(d & (1u << 8)))
		return PTW_ERR_INVALID;
	uint64_t t0, m0, t1, m1;
	ptw_tsc_pair(&t0, &m0);
	struct timespec ts = {0, PTW_TSC_CAL_NS};
	nanosleep(&ts, NULL);
	ptw_tsc_pair(&t1, &m1);
	if (t1 <= t0 || m1 <= m0)
		return PTW_ERR_INVALID;
	unsigned __int128 hz = (unsigned __int128)(t1 - t0) * 1000000000u /
			       (m1 - m0);
	if (hz < 1000000u || hz > ((unsigned __int128)1 << 40))
		return PTW_ERR_INVALID;
	c->hz = (uint64_t)hz;
	/* ns per tick in 32.32 fixed point */
	c->mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / c->hz);
	c->tsc0 = t1;
	c->mono0 = m1;
	return 0;
#else
	(void)c;
	return PTW_ERR_INVALID;
#endif
}
