/* test_hashmap.c - the shared uint64 -> uint64 map (lib/util/hashmap.h: the
 * tracer's backend tables, the converters' tables) against a plain array,
 * under random insert/overwrite/delete.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "lib/util/hashmap.h"

Test(hashmap, matches_a_reference_under_random_operations)
{
	enum { KEYS = 512, OPS = 200000 };
	static uint64_t ref[KEYS];
	static int present[KEYS];
	struct ptw_map m;
	memset(&m, 0, sizeof(m));
	uint64_t x = 88172645463325252ull;
	for (int op = 0; op < OPS; op++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t k = x % KEYS;
		uint64_t key = k * 0x100000000ull; /* key 0 included */
		uint64_t v;
		switch ((x >> 20) % 3) {
		case 0:
			cr_assert_eq(ptw_map_put(&m, key, x), 0);
			ref[k] = x;
			present[k] = 1;
			break;
		case 1:
			cr_assert_eq(ptw_map_del(&m, key), present[k]);
			present[k] = 0;
			break;
		default:
			cr_assert_eq(ptw_map_get(&m, key, &v), present[k]);
			if (present[k])
				cr_assert_eq(v, ref[k]);
		}
	}
	size_t n = 0;
	for (int k = 0; k < KEYS; k++) {
		uint64_t v;
		n += present[k];
		cr_assert_eq(ptw_map_get(&m, (uint64_t)k * 0x100000000ull, &v),
			     present[k]);
	}
	cr_assert_eq(m.count, n);
	ptw_map_free(&m);
	cr_assert_eq(m.count, 0);
}
