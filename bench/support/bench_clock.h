/* bench_clock.h - what the benchmarks time with: a clock in nanoseconds
 * or seconds (wall time: CLOCK_MONOTONIC; CPU time: the calling
 * thread's), and the comparison that sorts samples for medians. C and
 * C++.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_BENCH_CLOCK_H
#define PTW_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Clock 'c' (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...) in ns. */
static inline uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wall time (CLOCK_MONOTONIC) in ns and in seconds. */
static inline uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline double now_s(void)
{
	return (double)now_ns() * 1e-9;
}

/* The calling thread's CPU time in ns and in seconds. */
static inline uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline double cpu_s(void)
{
	return (double)cpu_ns() * 1e-9;
}

/* qsort's comparison of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#endif /* PTW_BENCH_CLOCK_H */
