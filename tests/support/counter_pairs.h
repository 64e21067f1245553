/* counter_pairs.h - counters of one name in two categories, "a" and "b",
 * for the tests that check that an output of one category gets exactly
 * its own samples (test_tracer_sink, test_system_multi).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TEST_COUNTER_PAIRS_H
#define PTW_TEST_COUNTER_PAIRS_H

#include "ptw/tracer.h"

/* Round N: the literal names "queue" and "level" (each one string once
 * the compiler merges equal literals), the copied names 'dyn' (_DYN) and
 * "fqueue" (_FMT), and a sample on 'track' (of ptw_counter_track_new), in
 * "a" and then in "b". In "a" the values are 10, 0.5, 110, 310.5 and 410
 * plus N; in "b" 20, 0.25, 120, 320.5 and 420 plus N. */
#define PTW_TEST_COUNTER_PAIRS(N, dyn, track)                                \
	do {                                                                 \
		PTW_COUNTER_INT("a", "queue", 10 + (N));                     \
		PTW_COUNTER_INT("b", "queue", 20 + (N));                     \
		PTW_COUNTER_DOUBLE("a", "level", 0.5 + (N));                 \
		PTW_COUNTER_DOUBLE("b", "level", 0.25 + (N));                \
		PTW_COUNTER_INT_DYN("a", (dyn), 110 + (N));                  \
		PTW_COUNTER_INT_DYN("b", (dyn), 120 + (N));                  \
		PTW_COUNTER_DOUBLE_FMT("a", 310.5 + (N), "f%s", "queue");    \
		PTW_COUNTER_DOUBLE_FMT("b", 320.5 + (N), "f%s", "queue");    \
		PTW_TRACK_COUNTER_INT("a", (track), 410 + (N));              \
		PTW_TRACK_COUNTER_INT("b", (track), 420 + (N));              \
	} while (0)

#endif /* PTW_TEST_COUNTER_PAIRS_H */
