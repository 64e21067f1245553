/* bench_pairs_c.h - a timed loop of C tracer macros (bench_pairs_c.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_BENCH_PAIRS_C_H
#define PTW_BENCH_PAIRS_C_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nanoseconds taken by 'pairs' PTW_BEGIN/PTW_END pairs, compiled as C. */
uint64_t ptw_bench_c_pairs(unsigned pairs);

#ifdef __cplusplus
}
#endif

#endif
