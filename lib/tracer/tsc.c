/* tsc.c - the CPU's time counter as the trace clock (PTW_CLOCK_TSC and
 * _FASTEST): the x86-64 time-stamp counter or the ARM generic timer
 * (lib/arch/), its frequency (stated by the CPU, or measured against
 * the anchor clock), and the anchor of the fixed-point conversion of
 * ticks to ns: CLOCK_MONOTONIC, fixed at ptw_start (file mode), or
 * CLOCK_BOOTTIME (system mode), re-anchored by the backend every pass
 * and slewed so that it follows BOOTTIME over a session of any length.
 * SPDX-License-Identifier: Apache-2.0 */
#include "tracer_internal.h"

#include <string.h>
#include <time.h>

#include "lib/arch/arch.h"

/* Calibration window. The frequency error is about the clock-read jitter
 * (~100 ns) over this window, i.e. ~10 ppm. */
#define PTW_TSC_CAL_NS 10000000u

/* Re-anchoring: at most every 1/PTW_TSC_SLEW_DIV s (the pair's ~50 ns
 * of jitter is then ~1 ppm of slope), a slope at most PTW_TSC_SLEW_PPM
 * from the nominal one, a step forward when BOOTTIME is ahead by more
 * than PTW_TSC_STEP_NS (a suspend: too far to slew). */
#define PTW_TSC_SLEW_DIV 50u
#define PTW_TSC_SLEW_PPM 2000u
#define PTW_TSC_STEP_NS 1000000u

static uint64_t ptw_tsc_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One (ticks, ns of clock 'id') pair, taken where the two reads are
 * closest together. */
static void ptw_tsc_pair(clockid_t id, uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;
	*tsc = *mono = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t a = ptw_arch_counter();
		uint64_t m = ptw_tsc_clock(id);
		uint64_t b = ptw_arch_counter();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*mono = m;
		}
	}
}

int ptw_tr_tsc_calibrate(struct ptw_tr_tsc *c, int boot)
{
	if (!ptw_arch_counter_usable())
		return PTW_ERR_INVALID;
	clockid_t id = boot ? CLOCK_BOOTTIME : CLOCK_MONOTONIC;
	uint64_t t0, m0, t1, m1;
	ptw_tsc_pair(id, &t0, &m0);
	uint64_t hz = ptw_arch_counter_hz();
	/* Not stated by the CPU, or anchored to BOOTTIME (where the stated
	 * rate's error, tens of ppm, would move the events of the first
	 * interval by microseconds): measured over PTW_TSC_CAL_NS. */
	if (hz == 0 || boot) {
		struct timespec ts = {0, PTW_TSC_CAL_NS};
		nanosleep(&ts, NULL);
		ptw_tsc_pair(id, &t1, &m1);
		if (t1 <= t0 || m1 <= m0)
			return PTW_ERR_INVALID;
		unsigned __int128 f = (unsigned __int128)(t1 - t0) *
				      1000000000u / (m1 - m0);
		hz = f > ((unsigned __int128)1 << 40) ? 0 : (uint64_t)f;
		t0 = t1;
		m0 = m1;
	}
	int rc = ptw_tr_tsc_set(c, hz, t0, m0);
	if (!rc)
		c->boot = boot;
	return rc;
}

int ptw_tr_tsc_set(struct ptw_tr_tsc *c, uint64_t hz, uint64_t tsc0,
		   uint64_t mono0)
{
	if (hz < 1000000u || hz > ((uint64_t)1 << 40))
		return PTW_ERR_INVALID;
	c->hz = hz;
	/* ns per tick in 32.32 fixed point */
	c->mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / hz);
	c->mult_nominal = c->mult;
	c->tsc0 = tsc0;
	c->mono0 = mono0;
	c->last_t = tsc0;
	c->last_b = mono0;
	c->n_old = 0;
	return 0;
}

uint64_t ptw_tr_tsc_to_ns_old(const struct ptw_tr_tsc *c, uint64_t ticks)
{
	uint32_t i = 0;
	while (i + 1 < c->n_old && ticks < c->old[i].t0)
		i++;
	const struct ptw_tr_tsc_seg *s = &c->old[i];
	return ptw_tr_tsc_seg_ns(s->t0, s->y0, s->mult, ticks);
}

/* The slope over the next interval: the rate the last interval
 * measured (db ns over dt ticks) plus the error 'b - y' spread over as
 * many ticks, so that the mapping meets BOOTTIME again one interval on
 * if the rate holds; within PTW_TSC_SLEW_PPM of the nominal one. */
static uint64_t ptw_tsc_slope(const struct ptw_tr_tsc *c, uint64_t dt,
			      uint64_t db, uint64_t b, uint64_t y)
{
	__int128 num = (__int128)db + (__int128)b - (__int128)y;
	uint64_t room = c->mult_nominal / (1000000u / PTW_TSC_SLEW_PPM);
	uint64_t lo = c->mult_nominal - room, hi = c->mult_nominal + room;
	if (num <= 0)
		return lo;
	unsigned __int128 m = ((unsigned __int128)num << 32) / dt;
	return m < lo ? lo : m > hi ? hi : (uint64_t)m;
}

int ptw_tr_tsc_slew(struct ptw_tr_tsc *c, uint64_t ticks, uint64_t boot_ns)
{
	if (ticks <= c->last_t || ticks - c->last_t < c->hz / PTW_TSC_SLEW_DIV ||
	    boot_ns <= c->last_b)
		return 0;
	/* ticks >= tsc0 (last_t is): the newest piece */
	uint64_t y = ptw_tr_tsc_seg_ns(c->tsc0, c->mono0, c->mult, ticks);
	if (boot_ns > y && boot_ns - y > PTW_TSC_STEP_NS)
		y = boot_ns; /* forward only: times never go back */
	uint64_t mult = ptw_tsc_slope(c, ticks - c->last_t,
				      boot_ns - c->last_b, boot_ns, y);
	memmove(&c->old[1], &c->old[0], (PTW_TR_TSC_OLD - 1) * sizeof(c->old[0]));
	c->old[0] = (struct ptw_tr_tsc_seg){c->tsc0, c->mono0, c->mult};
	if (c->n_old < PTW_TR_TSC_OLD)
		c->n_old++;
	c->tsc0 = ticks;
	c->mono0 = y;
	c->mult = mult;
	c->last_t = ticks;
	c->last_b = boot_ns;
	return 1;
}

void ptw_tr_tsc_reanchor(struct ptw_tr_tsc *c)
{
	if (!c->boot)
		return;
	uint64_t t, b;
	ptw_tsc_pair(CLOCK_BOOTTIME, &t, &b);
	ptw_tr_tsc_slew(c, t, b);
}
