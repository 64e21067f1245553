/* clock_stream_math.c - exact cycle -> nanosecond conversion (128-bit).
 * SPDX-License-Identifier: Apache-2.0 */
#include "clock_stream_math.h"

#include "ptw/error.h"


int ptw_clock_rate_init(struct ptw_clock_rate *r, uint64_t hz_num,
			uint64_t hz_den, uint64_t offset, uint64_t offset_ns)
{
	if (hz_num == 0)
		return PTW_ERR_INVALID;
	r->hz_num = hz_num;
	r->hz_den = hz_den ? hz_den : 1;
	r->offset = offset;
	r->offset_ns = offset_ns;
	return 0;
}

int ptw_clock_rate_convert(const struct ptw_clock_rate *r, uint64_t cycle,
			   struct ptw_clock_time *out)
{
	/* x = c * 10^9 + offset < 2^64 * 2^30 + 2^64 < 2^95 */
	unsigned __int128 x = (unsigned __int128)cycle * 1000000000u + r->offset;
	uint64_t num = r->hz_num, den = r->hz_den;
	uint64_t ns, rem;

	if (den == 1) {
		/* Integer Hz: one 128-by-64 division. */
		unsigned __int128 q = x / num;
		if (q > PTW_CLOCK_MAX_NS)
			return PTW_ERR_LIMIT;
		ns = (uint64_t)q;
		rem = (uint64_t)(x % num);
	} else {
		/* x * den / num without forming x * den (up to 2^159):
		 * x = q * num + s  =>  x * den / num = q * den + s * den / num,
		 * and s * den < num * den < 2^128. */
		unsigned __int128 q = x / num;
		uint64_t s = (uint64_t)(x % num);
		if (q > PTW_CLOCK_MAX_NS)
			return PTW_ERR_LIMIT; /* den >= 1 */
		unsigned __int128 hi = q * den; /* < 2^63 * 2^64 */
		unsigned __int128 t = (unsigned __int128)s * den;
		unsigned __int128 total = hi + t / num;
		if (total > PTW_CLOCK_MAX_NS)
			return PTW_ERR_LIMIT;
		ns = (uint64_t)total;
		rem = (uint64_t)(t % num);
	}
	if (ns > PTW_CLOCK_MAX_NS - r->offset_ns)
		return PTW_ERR_LIMIT;
	out->ns = ns + r->offset_ns;
	out->rem = rem;
	out->den = num;
	return 0;
}

int ptw_clock_time_cmp(const struct ptw_clock_time *a,
		       const struct ptw_clock_time *b)
{
	if (a->ns != b->ns)
		return a->ns < b->ns ? -1 : 1;
	/* rem_a / den_a <=> rem_b / den_b; each product < 2^128. */
	unsigned __int128 l = (unsigned __int128)a->rem * b->den;
	unsigned __int128 g = (unsigned __int128)b->rem * a->den;
	return (l > g) - (l < g);
}
