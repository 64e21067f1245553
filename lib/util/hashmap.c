/* hashmap.c - uint64 -> uint64 hash map and FNV-1a hashing.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "ptw/error.h"

static size_t ptw_map_index(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull; /* murmur3 finaliser */
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

void ptw_map_free(struct ptw_map *m)
{
	if (!m)
		return;
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}

void ptw_map_clear(struct ptw_map *m)
{
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->count = 0;
}

static struct ptw_map_slot *ptw_map_find(struct ptw_map_slot *s,
					       size_t cap, uint64_t key)
{
	size_t i = ptw_map_index(key, cap);
	while (s[i].used && s[i].key != key)
		i = (i + 1) & (cap - 1);
	return &s[i];
}

int ptw_map_get(const struct ptw_map *m, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return 0;
	const struct ptw_map_slot *s = ptw_map_find(m->slots, m->cap, key);
	if (!s->used)
		return 0;
	*val = s->val;
	return 1;
}

int ptw_map_put(struct ptw_map *m, uint64_t key, uint64_t val)
{
	if ((m->count + 1) * 2 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 64;
		struct ptw_map_slot *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return PTW_ERR_NOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].used)
				*ptw_map_find(ns, nc, m->slots[i].key) =
					m->slots[i];
		free(m->slots);
		m->slots = ns;
		m->cap = nc;
	}
	struct ptw_map_slot *s = ptw_map_find(m->slots, m->cap, key);
	if (!s->used) {
		s->used = 1;
		s->key = key;
		m->count++;
	}
	s->val = val;
	return 0;
}

int ptw_map_del(struct ptw_map *m, uint64_t key)
{
	if (!m->cap)
		return 0;
	struct ptw_map_slot *s = ptw_map_find(m->slots, m->cap, key);
	if (!s->used)
		return 0;
	size_t mask = m->cap - 1;
	size_t hole = (size_t)(s - m->slots);
	size_t i = hole;
	for (;;) {
		i = (i + 1) & mask;
		if (!m->slots[i].used)
			break;
		size_t home = ptw_map_index(m->slots[i].key, m->cap);
		/* Move slot i into the hole unless its home lies cyclically
		 * in (hole, i]. */
		int stays = hole <= i ? (home > hole && home <= i)
				      : (home > hole || home <= i);
		if (!stays) {
			m->slots[hole] = m->slots[i];
			hole = i;
		}
	}
	m->slots[hole].used = 0;
	m->count--;
	return 1;
}

uint64_t ptw_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
