/* test_seq_fast.c - the writer's prepared TrackEvent bodies (seq_fast.h):
 * the loop-free small form the converter's lane builds equals the general
 * encoder's bytes, for every event type and every iid below 128.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "lib/writer/seq_fast.h"

Test(seq_fast, small_body_equals_the_general_body)
{
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	cr_skip_test("the small body is a little-endian word (the lane is "
		     "compiled only there)");
#endif
	static const int types[] = {PTW_TE_TYPE_SLICE_BEGIN,
				    PTW_TE_TYPE_SLICE_END,
				    PTW_TE_TYPE_INSTANT};
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (uint64_t ci = 0; ci < 128; ci++) {
			for (uint64_t ni = 1; ni < 128; ni++) {
				uint8_t want[PTW_SEQ_BODY_MAX];
				size_t n = ptw_seq_body_prepare(want, types[t],
								ci, ni);
				unsigned len;
				uint64_t w = ptw_seq_body_small(types[t], ci,
								ni, &len);
				uint8_t got[8];
				memcpy(got, &w, sizeof(got));
				cr_assert_eq(len, n, "type %d cat %llu name %llu",
					     types[t], (unsigned long long)ci,
					     (unsigned long long)ni);
				cr_assert(memcmp(got, want, n) == 0,
					  "type %d cat %llu name %llu",
					  types[t], (unsigned long long)ci,
					  (unsigned long long)ni);
				/* nothing beyond the body */
				for (size_t k = n; k < sizeof(got); k++)
					cr_assert_eq(got[k], 0);
			}
		}
	}
}
