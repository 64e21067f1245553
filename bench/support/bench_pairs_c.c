/* bench_pairs_c.c - the C loop bench_tracer_cxx compares its C++ loops with:
 * the same PTW_BEGIN/PTW_END pairs, compiled as C, in the same process.
 * SPDX-License-Identifier: Apache-2.0 */
#include "bench_pairs_c.h"

#include <time.h>

#include "ptw/tracer.h"

uint64_t ptw_bench_c_pairs(unsigned pairs)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned i = 0; i < pairs; i++) {
		PTW_BEGIN("bench", "pair");
		PTW_END("bench");
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u +
	       (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
}
