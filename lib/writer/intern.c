/* intern.c - content- and pointer-keyed string tables for interning.
 * SPDX-License-Identifier: Apache-2.0 */
#include "intern.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

/* The pointer cache only needs to hold the distinct literal strings a
 * program passes: it doubles up to this many slots, then forgets
 * everything whenever it is half full. */
#define PTW_INTERN_PCACHE_MAX 8192u
/* Strings a new table holds before its first growth. */
#define PTW_INTERN_INITIAL 64u

static uint32_t ptw_intern_pow2(uint32_t n)
{
	uint32_t c = 16;
	while (c < n && c < (1u << 30))
		c *= 2;
	return c;
}

struct ptw_intern *ptw_intern_create(uint32_t expected)
{
	struct ptw_intern *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (expected < 16)
		expected = 16;
	/* Start small (a writer may own many sequences, each with four
	 * tables); tables double on the insert path as strings arrive. */
	if (expected > PTW_INTERN_INITIAL)
		expected = PTW_INTERN_INITIAL;
	uint32_t cap = ptw_intern_pow2(expected * 2);
	uint32_t pcap = cap;
	t->slots = calloc(cap, sizeof(*t->slots));
	t->mask = cap - 1;
	t->gen = 1;
	t->entries_cap = expected;
	t->entries = malloc((size_t)expected * sizeof(*t->entries));
	t->arena_cap = (size_t)expected * 32;
	t->arena = malloc(t->arena_cap);
	t->pslots = calloc(pcap, sizeof(*t->pslots));
	t->pmask = pcap - 1;
	t->pgen = 1;
	if (!t->slots || !t->entries || !t->arena || !t->pslots) {
		ptw_intern_destroy(t);
		return NULL;
	}
	return t;
}

void ptw_intern_destroy(struct ptw_intern *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t->entries);
	free(t->arena);
	free(t->pslots);
	free(t);
}

static void ptw_intern_pcache_clear(struct ptw_intern *t)
{
	if (++t->pgen == 0) { /* wrapped: stale tags could match again */
		memset(t->pslots, 0, ((size_t)t->pmask + 1) * sizeof(*t->pslots));
		t->pgen = 1;
	}
	t->pcount = 0;
	t->last_ptr = NULL;
	t->last_iid = 0; /* a NULL look-up finds nothing */
}

void ptw_intern_forget_ptrs(struct ptw_intern *t)
{
	if (t->pcount)
		ptw_intern_pcache_clear(t);
}

void ptw_intern_reset(struct ptw_intern *t)
{
	if (t->count && ++t->gen == 0) {
		memset(t->slots, 0, ((size_t)t->mask + 1) * sizeof(*t->slots));
		t->gen = 1;
	}
	if (t->pcount)
		ptw_intern_pcache_clear(t);
	t->count = 0;
	t->arena_len = 0;
}

/* Doubles the index and rehashes every entry (slow path). */
static int ptw_intern_grow_index(struct ptw_intern *t)
{
	uint32_t cap = (t->mask + 1) * 2;
	if (cap == 0 || cap > (1u << 30))
		return -1;
	struct ptw_intern_slot *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (uint32_t i = 0; i < t->count; i++) {
		uint32_t j = (uint32_t)t->entries[i].hash & (cap - 1);
		while (slots[j].gen == 1)
			j = (j + 1) & (cap - 1);
		slots[j].idx = i + 1;
		slots[j].gen = 1;
	}
	free(t->slots);
	t->slots = slots;
	t->mask = cap - 1;
	t->gen = 1;
	return 0;
}

static int ptw_intern_reserve(struct ptw_intern *t, size_t len)
{
	if (t->count == t->entries_cap) {
		if (t->entries_cap > UINT32_MAX / 2)
			return -1;
		uint32_t ncap = t->entries_cap * 2;
		void *p = ptw_realloc_array(t->entries, ncap,
					    sizeof(*t->entries));
		if (!p)
			return -1;
		t->entries = p;
		t->entries_cap = ncap;
	}
	if ((size_t)(t->count + 1) * 2 > (size_t)t->mask + 1 &&
	    ptw_intern_grow_index(t) != 0)
		return -1;
	if (t->arena_cap - t->arena_len < len) {
		char *p = ptw_grow_by(t->arena, &t->arena_cap, t->arena_len,
				      len, 1024, 1);
		if (!p)
			return -1;
		t->arena = p;
	}
	return 0;
}

uint64_t ptw_intern_insert(struct ptw_intern *t, const char *s, size_t len,
			   uint64_t h, uint64_t w0, uint64_t w1)
{
	/* May grow, which moves the probe position. */
	if (ptw_intern_reserve(t, len) != 0)
		return 0;
	uint32_t j = (uint32_t)h & t->mask;
	while (t->slots[j].gen == t->gen)
		j = (j + 1) & t->mask;
	struct ptw_intern_entry *en = &t->entries[t->count];
	en->hash = h;
	en->w0 = w0;
	en->w1 = w1;
	en->off = t->arena_len;
	en->len = len;
	en->used = 0;
	if (len)
		memcpy(t->arena + t->arena_len, s, len);
	t->arena_len += len;
	t->count++;
	t->slots[j].idx = t->count;
	t->slots[j].gen = t->gen;
	return t->count;
}

/* Doubles the pointer cache, keeping its entries (slow path). */
static int ptw_intern_pcache_grow(struct ptw_intern *t)
{
	uint32_t cap = (t->pmask + 1) * 2;
	struct ptw_intern_pslot *ps = calloc(cap, sizeof(*ps));
	if (!ps)
		return -1;
	for (uint32_t i = 0; i <= t->pmask; i++) {
		const struct ptw_intern_pslot *o = &t->pslots[i];
		if (o->gen != t->pgen)
			continue;
		uint32_t j = ptw_intern_ptr_slot(o->ptr, cap - 1);
		while (ps[j].gen == 1)
			j = (j + 1) & (cap - 1);
		ps[j].ptr = o->ptr;
		ps[j].iid = o->iid;
		ps[j].gen = 1;
	}
	free(t->pslots);
	t->pslots = ps;
	t->pmask = cap - 1;
	t->pgen = 1;
	return 0;
}

void ptw_intern_put_ptr(struct ptw_intern *t, const void *p, uint64_t iid)
{
	/* A cache, not a table: past its size limit (or if growing fails)
	 * it forgets everything; callers then take the content path. */
	if ((size_t)(t->pcount + 1) * 2 > (size_t)t->pmask + 1) {
		if (t->pmask + 1 >= PTW_INTERN_PCACHE_MAX ||
		    ptw_intern_pcache_grow(t) != 0)
			ptw_intern_pcache_clear(t);
	}
	uint32_t j = ptw_intern_ptr_slot(p, t->pmask);
	while (t->pslots[j].gen == t->pgen) {
		if (t->pslots[j].ptr == p)
			return;
		j = (j + 1) & t->pmask;
	}
	t->pslots[j].ptr = p;
	t->pslots[j].iid = (uint32_t)iid;
	t->pslots[j].gen = t->pgen;
	t->pcount++;
	t->last_ptr = p;
	t->last_iid = (uint32_t)iid;
}

const char *ptw_intern_str(const struct ptw_intern *t, uint64_t iid,
			   size_t *len)
{
	if (iid == 0 || iid > t->count)
		return NULL;
	const struct ptw_intern_entry *en = &t->entries[iid - 1];
	*len = en->len;
	return t->arena + en->off;
}
