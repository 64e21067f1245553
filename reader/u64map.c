/* u64map.c - pointers in the shared uint64 map.
 * SPDX-License-Identifier: Apache-2.0 */
#include "u64map.h"

void *ptw_u64map_get(const struct ptw_u64map *m, uint64_t key)
{
	uint64_t v;
	return ptw_map_get(&m->m, key, &v) ? (void *)(uintptr_t)v : NULL;
}

int ptw_u64map_add(struct ptw_u64map *m, uint64_t key, void *val)
{
	uint64_t v;
	if (ptw_map_get(&m->m, key, &v))
		return 0;
	return ptw_map_put(&m->m, key, (uint64_t)(uintptr_t)val) ? -1 : 1;
}

int ptw_u64map_put(struct ptw_u64map *m, uint64_t key, void *val)
{
	return ptw_map_put(&m->m, key, (uint64_t)(uintptr_t)val) ? -1 : 0;
}

void ptw_u64map_clear(struct ptw_u64map *m)
{
	ptw_map_clear(&m->m);
}

void ptw_u64map_free(struct ptw_u64map *m)
{
	ptw_map_free(&m->m);
}
