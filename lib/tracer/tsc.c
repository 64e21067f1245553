/* tsc.c - the CPU's time counter as the trace clock (PTW_CLOCK_TSC and
 * _FASTEST): the x86-64 time-stamp counter or the ARM generic timer
 * (lib/arch/), its frequency (stated by the CPU, or measured against
 * CLOCK_MONOTONIC), and the anchor of the fixed-point conversion of ticks
 * to ns.
 * SPDX-License-Identifier: Apache-2.0 */
#include "tracer_internal.h"

#include <time.h>

#include "lib/arch/arch.h"

/* Calibration window. The frequency error is about the clock-read jitter
 * (~100 ns) over this window, i.e. ~10 ppm. */
#define PTW_TSC_CAL_NS 10000000u

static uint64_t ptw_tsc_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One (ticks, mono) pair, taken where the two reads are closest together. */
static void ptw_tsc_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t a = ptw_arch_counter();
		uint64_t m = ptw_tsc_mono();
		uint64_t b = ptw_arch_counter();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*mono = m;
		}
	}
}

int ptw_tr_tsc_calibrate(struct ptw_tr_tsc *c)
{
	if (!ptw_arch_counter_usable())
		return PTW_ERR_INVALID;
	uint64_t t0, m0, t1, m1;
	ptw_tsc_pair(&t0, &m0);
	uint64_t hz = ptw_arch_counter_hz();
	if (hz == 0) {
		/* not stated by the CPU: measured over PTW_TSC_CAL_NS */
		struct timespec ts = {0, PTW_TSC_CAL_NS};
		nanosleep(&ts, NULL);
		ptw_tsc_pair(&t1, &m1);
		if (t1 <= t0 || m1 <= m0)
			return PTW_ERR_INVALID;
		unsigned __int128 f = (unsigned __int128)(t1 - t0) *
				      1000000000u / (m1 - m0);
		hz = f > ((unsigned __int128)1 << 40) ? 0 : (uint64_t)f;
		t0 = t1;
		m0 = m1;
	}
	return ptw_tr_tsc_set(c, hz, t0, m0);
}

int ptw_tr_tsc_set(struct ptw_tr_tsc *c, uint64_t hz, uint64_t tsc0,
		   uint64_t mono0)
{
	if (hz < 1000000u || hz > ((uint64_t)1 << 40))
		return PTW_ERR_INVALID;
	c->hz = hz;
	/* ns per tick in 32.32 fixed point */
	c->mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / hz);
	c->tsc0 = tsc0;
	c->mono0 = mono0;
	return 0;
}
