/* clock_stream_math.h - exact cycle -> nanosecond conversion for clock
 * streams. Private to lib/ (and its tests), not installed.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A clock domain runs at hz = hz_num / hz_den cycles per second. A local
 * cycle count c is at the exact trace time
 *
 *     t = (c * 10^9 + offset) / hz + offset_ns        nanoseconds
 *       = (c * 10^9 + offset) * hz_den / hz_num + offset_ns
 *
 * which we keep as  ns = floor(t)  plus the fraction  rem / hz_num  with
 * 0 <= rem < hz_num. Two exact times in the same nanosecond compare by
 * cross-multiplying their fractions, rem_a * num_b <=> rem_b * num_a, which
 * fits in 128 bits because both factors fit in 64. No floating point; no
 * intermediate overflows for any 64-bit cycle count (c * 10^9 + offset
 * < 2^94). */
#ifndef PTW_CLOCK_STREAM_MATH_H
#define PTW_CLOCK_STREAM_MATH_H

#include <stdint.h>

/* Largest converted time: trace_processor reads packet timestamps as int64
 * and drops negative ones, so anything above INT64_MAX is unusable. */
#define PTW_CLOCK_MAX_NS ((uint64_t)INT64_MAX)

struct ptw_clock_rate {
	uint64_t hz_num;    /* >= 1 */
	uint64_t hz_den;    /* >= 1 */
	uint64_t offset;    /* added to c * 10^9 before the division */
	uint64_t offset_ns; /* added after it */
};

/* An exact time: ns + rem / den, 0 <= rem < den. */
struct ptw_clock_time {
	uint64_t ns;
	uint64_t rem;
	uint64_t den; /* the domain's hz_num */
};

/* Fills *r from a frequency (hz_den 0 means 1) and the offsets. Returns 0,
 * or PTW_ERR_INVALID if hz_num is 0. */
int ptw_clock_rate_init(struct ptw_clock_rate *r, uint64_t hz_num,
			uint64_t hz_den, uint64_t offset, uint64_t offset_ns);

/* Converts 'cycle' exactly. Returns 0, or PTW_ERR_LIMIT (and leaves *out
 * alone) if the time is above PTW_CLOCK_MAX_NS. */
int ptw_clock_rate_convert(const struct ptw_clock_rate *r, uint64_t cycle,
			   struct ptw_clock_time *out);

/* -1, 0 or 1 as a is earlier than, equal to or later than b (exactly). */
int ptw_clock_time_cmp(const struct ptw_clock_time *a,
		       const struct ptw_clock_time *b);

#endif /* PTW_CLOCK_STREAM_MATH_H */
