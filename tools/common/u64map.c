/* u64map.c - open-addressing hash map from uint64 keys to pointers.
 * SPDX-License-Identifier: Apache-2.0 */
#include "u64map.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(uint64_t key, size_t cap)
{
	/* splitmix64 finaliser: iids and uuids are often small and dense */
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ull;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebull;
	key ^= key >> 31;
	return (size_t)key & (cap - 1);
}

static long find(const struct ptw_u64map *m, uint64_t key)
{
	if (!m->cap)
		return -1;
	size_t i = slot_of(key, m->cap);
	while (m->used[i]) {
		if (m->keys[i] == key)
			return (long)i;
		i = (i + 1) & (m->cap - 1);
	}
	return -1;
}

void *ptw_u64map_get(const struct ptw_u64map *m, uint64_t key)
{
	long i = find(m, key);
	return i < 0 ? NULL : m->vals[i];
}

static int grow(struct ptw_u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	void **vals = calloc(cap, sizeof(*vals));
	unsigned char *used = calloc(cap, 1);
	if (!keys || !vals || !used) {
		free(keys);
		free(vals);
		free(used);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		size_t j = slot_of(m->keys[i], cap);
		while (used[j])
			j = (j + 1) & (cap - 1);
		used[j] = 1;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	free(m->used);
	m->keys = keys;
	m->vals = vals;
	m->used = used;
	m->cap = cap;
	return 0;
}

static int insert(struct ptw_u64map *m, uint64_t key, void *val, int replace)
{
	long f = find(m, key);
	if (f >= 0) {
		if (replace)
			m->vals[f] = val;
		return 0;
	}
	if ((m->count + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return -1;
	size_t i = slot_of(key, m->cap);
	while (m->used[i])
		i = (i + 1) & (m->cap - 1);
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->count++;
	return 1;
}

int ptw_u64map_add(struct ptw_u64map *m, uint64_t key, void *val)
{
	return insert(m, key, val, 0);
}

int ptw_u64map_put(struct ptw_u64map *m, uint64_t key, void *val)
{
	return insert(m, key, val, 1) < 0 ? -1 : 0;
}

void ptw_u64map_clear(struct ptw_u64map *m)
{
	if (m->cap)
		memset(m->used, 0, m->cap);
	m->count = 0;
}

void ptw_u64map_free(struct ptw_u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}
