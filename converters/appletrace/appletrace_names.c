/* appletrace_names.c - the id -> string table of an APLTRC01 run.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Open addressing (linear probing) on the 32-bit id, grown at half load.
 * Ids can be sparse and anywhere in uint32, so no direct indexing. Each
 * string is its own allocation: definitions are rare next to events, and
 * a redefinition replaces the string in place. */
#include <stdlib.h>
#include <string.h>

#include "appletrace.h"

struct ptw_at_slot {
	uint32_t id;
	uint32_t used;
	size_t n;
	char *s; /* n bytes + NUL */
	uint64_t sym; /* number of this definition */
};

struct ptw_appletrace_names {
	struct ptw_at_slot *slots;
	size_t cap; /* power of two */
	size_t count;
	uint64_t next_sym;
	/* small ids (producers number names from 0 or 1), directly indexed */
	struct ptw_appletrace_dense dense[PTW_APPLETRACE_DENSE];
};

static size_t ptw_at_hash(uint32_t id, size_t cap)
{
	uint32_t h = id * 0x9E3779B1u; /* Fibonacci hashing */
	h ^= h >> 15;
	return (size_t)h & (cap - 1);
}

struct ptw_appletrace_names *ptw_appletrace_names_create(void)
{
	struct ptw_appletrace_names *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->cap = 64;
	t->next_sym = PTW_APPLETRACE_FIRST_SYM;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void ptw_appletrace_names_destroy(struct ptw_appletrace_names *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].s);
	free(t->slots);
	free(t);
}

static struct ptw_at_slot *ptw_at_probe(struct ptw_at_slot *slots, size_t cap,
					uint32_t id)
{
	size_t i = ptw_at_hash(id, cap);
	for (;;) {
		struct ptw_at_slot *s = &slots[i];
		if (!s->used || s->id == id)
			return s;
		i = (i + 1) & (cap - 1);
	}
}

static struct ptw_at_slot *ptw_at_find(const struct ptw_appletrace_names *t,
				       uint32_t id)
{
	return ptw_at_probe(t->slots, t->cap, id);
}

static int ptw_at_grow(struct ptw_appletrace_names *t)
{
	size_t ncap = t->cap * 2;
	struct ptw_at_slot *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return PTW_ERR_NOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].used)
			*ptw_at_probe(ns, ncap, t->slots[i].id) = t->slots[i];
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

int ptw_appletrace_names_define(struct ptw_appletrace_names *t, uint32_t id,
				const void *s, size_t n)
{
	if (!t || (n && !s))
		return PTW_ERR_INVALID;
	if ((t->count + 1) * 2 > t->cap && ptw_at_grow(t))
		return PTW_ERR_NOMEM;
	char *copy = malloc(n + 1);
	if (!copy)
		return PTW_ERR_NOMEM;
	if (n)
		memcpy(copy, s, n);
	copy[n] = '\0';
	struct ptw_at_slot *sl = ptw_at_find(t, id);
	if (sl->used) {
		free(sl->s);
	} else {
		sl->used = 1;
		sl->id = id;
		t->count++;
	}
	sl->s = copy;
	sl->n = n;
	sl->sym = t->next_sym++;
	if (id < PTW_APPLETRACE_DENSE) {
		t->dense[id].s.p = copy;
		t->dense[id].s.n = n;
		t->dense[id].sym = sl->sym;
	}
	return 0;
}

struct ptw_cv_str ptw_appletrace_names_lookup(
	const struct ptw_appletrace_names *t, uint32_t id, uint64_t *sym)
{
	struct ptw_cv_str r = {NULL, 0};
	if (!t)
		return r;
	if (id < PTW_APPLETRACE_DENSE) {
		*sym = t->dense[id].sym;
		return t->dense[id].s;
	}
	const struct ptw_at_slot *sl = ptw_at_find(t, id);
	if (sl->used) {
		r.p = sl->s;
		r.n = sl->n;
		*sym = sl->sym;
	}
	return r;
}

struct ptw_cv_str ptw_appletrace_names_get(const struct ptw_appletrace_names *t,
					   uint32_t id)
{
	uint64_t sym;
	return ptw_appletrace_names_lookup(t, id, &sym);
}

const struct ptw_appletrace_dense *
ptw_appletrace_names_dense(const struct ptw_appletrace_names *t)
{
	return t ? t->dense : NULL;
}

size_t ptw_appletrace_names_count(const struct ptw_appletrace_names *t)
{
	return t ? t->count : 0;
}
