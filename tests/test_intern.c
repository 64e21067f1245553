/* test_intern.c - the interning tables' pointer cache against a model:
 * random puts, look-ups and resets (new generations), enough pointers to
 * make the cache grow and, past its limit, forget; a look-up may miss
 * (it is a cache) but never returns another pointer's iid, a previous
 * generation's iid, or anything for NULL.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "lib/writer/intern.h"

#define NPTR 20000

Test(intern, pointer_cache_never_answers_wrong)
{
	static char objs[NPTR];
	static uint32_t model[NPTR]; /* iid put in this generation, 0: none */
	struct ptw_intern *t = ptw_intern_create(16);
	cr_assert(t);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	uint32_t next_iid = 1, hits = 0;
	for (int op = 0; op < 400000; op++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* mostly a few hot pointers (as a converter's category), some
		 * from a wide range */
		uint32_t k = x % 8 < 6 ? (uint32_t)(x >> 8) % 8
				       : (uint32_t)(x >> 8) % NPTR;
		uint32_t r = (uint32_t)(x >> 40) % 1000;
		if (r < 2) {
			ptw_intern_reset(t);
			memset(model, 0, sizeof(model));
			next_iid = 1;
		} else if (r < 400) {
			if (!model[k])
				model[k] = next_iid++;
			ptw_intern_put_ptr(t, &objs[k], model[k]);
		} else {
			uint64_t got = ptw_intern_get_ptr(t, &objs[k]);
			cr_assert(got == 0 || got == model[k],
				  "op %d: pointer %u gave iid %llu, put %u", op,
				  k, (unsigned long long)got, model[k]);
			hits += got != 0;
		}
		cr_assert_eq(ptw_intern_get_ptr(t, NULL), 0u);
	}
	cr_expect_gt(hits, 100000u, "the cache answered %u look-ups", hits);
	ptw_intern_destroy(t);
}
