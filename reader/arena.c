/* arena.c - bump allocator owning a loaded trace's strings and arrays.
 * SPDX-License-Identifier: Apache-2.0 */
#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Chunks hold many small strings; big requests get a chunk of their own. */
#define ARENA_CHUNK 65536u

struct ptw_arena_chunk {
	struct ptw_arena_chunk *next;
	alignas(max_align_t) unsigned char data[];
};

void *ptw_arena_alloc(struct ptw_arena *a, size_t n)
{
	const size_t al = alignof(max_align_t);
	size_t need = (n + al - 1) & ~(al - 1);
	if (need < n)
		return NULL;
	if (!a->head || a->cap - a->used < need) {
		size_t cap = need > ARENA_CHUNK ? need : ARENA_CHUNK;
		if (cap > SIZE_MAX - sizeof(struct ptw_arena_chunk))
			return NULL;
		struct ptw_arena_chunk *c =
			malloc(sizeof(struct ptw_arena_chunk) + cap);
		if (!c)
			return NULL;
		if (a->head && need > ARENA_CHUNK && a->cap - a->used > 0) {
			/* keep filling the current chunk: link the big one
			 * behind it */
			c->next = a->head->next;
			a->head->next = c;
			a->total += need;
			return c->data;
		}
		c->next = a->head;
		a->head = c;
		a->used = 0;
		a->cap = cap;
	}
	void *p = a->head->data + a->used;
	a->used += need;
	a->total += need;
	return p;
}

char *ptw_arena_strndup(struct ptw_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *d = ptw_arena_alloc(a, n + 1);
	if (!d)
		return NULL;
	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *ptw_arena_strdup(struct ptw_arena *a, const char *s)
{
	return ptw_arena_strndup(a, s, strlen(s));
}

void ptw_arena_free(struct ptw_arena *a)
{
	struct ptw_arena_chunk *c = a->head;
	while (c) {
		struct ptw_arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	memset(a, 0, sizeof(*a));
}
