/* tracer_map.c - the backend's u64 -> u64 hash map (open addressing,
 * linear probing, backward-shift deletion): counter, async and name tables.
 * SPDX-License-Identifier: Apache-2.0 */
#include "tracer_internal.h"

#include <stdlib.h>
#include <string.h>

static size_t ptw_tr_hash(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & mask;
}

static int ptw_tr_map_grow(struct ptw_tr_map *m)
{
	size_t nc = m->cap ? 2 * m->cap : 64;
	uint64_t *nk = calloc(nc, sizeof(*nk));
	uint64_t *nv = calloc(nc, sizeof(*nv));
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return PTW_ERR_NOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = ptw_tr_hash(m->keys[i], nc - 1);
		while (nk[j])
			j = (j + 1) & (nc - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = nc;
	return 0;
}

int ptw_tr_map_put(struct ptw_tr_map *m, uint64_t key, uint64_t val)
{
	if (!key)
		return PTW_ERR_INVALID;
	if ((m->n + 1) * 2 > m->cap && ptw_tr_map_grow(m))
		return PTW_ERR_NOMEM;
	size_t j = ptw_tr_hash(key, m->cap - 1);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j])
		m->n++;
	m->keys[j] = key;
	m->vals[j] = val;
	return 0;
}

int ptw_tr_map_get(const struct ptw_tr_map *m, uint64_t key, uint64_t *val)
{
	if (!m->cap || !key)
		return 0;
	size_t j = ptw_tr_hash(key, m->cap - 1);
	while (m->keys[j]) {
		if (m->keys[j] == key) {
			*val = m->vals[j];
			return 1;
		}
		j = (j + 1) & (m->cap - 1);
	}
	return 0;
}

int ptw_tr_map_del(struct ptw_tr_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return 0;
	size_t mask = m->cap - 1, j = ptw_tr_hash(key, mask);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & mask;
	if (!m->keys[j])
		return 0;
	/* Backward-shift deletion keeps probe chains intact. */
	size_t hole = j;
	for (size_t k = (j + 1) & mask; m->keys[k]; k = (k + 1) & mask) {
		size_t home = ptw_tr_hash(m->keys[k], mask);
		if (((k - home) & mask) >= ((k - hole) & mask)) {
			m->keys[hole] = m->keys[k];
			m->vals[hole] = m->vals[k];
			hole = k;
		}
	}
	m->keys[hole] = 0;
	m->n--;
	return 1;
}

void ptw_tr_map_free(struct ptw_tr_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
