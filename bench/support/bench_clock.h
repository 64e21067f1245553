/* bench_clock.h - what the benchmarks time with: CLOCK_MONOTONIC in
 * nanoseconds, and the comparison that sorts samples for medians.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_BENCH_CLOCK_H
#define PTW_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* qsort's comparison of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#endif /* PTW_BENCH_CLOCK_H */
