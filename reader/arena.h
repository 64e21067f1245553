/* arena.h - bump allocator owning a loaded trace's strings and arrays.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Memory never moves (chunks are chained, never reallocated), so pointers
 * into it stay valid until ptw_arena_free(). Not thread-safe. */
#ifndef PTW_ARENA_H
#define PTW_ARENA_H

#include <stddef.h>

struct ptw_arena_chunk;

struct ptw_arena {
	struct ptw_arena_chunk *head;
	size_t used, cap; /* in head */
	size_t total;     /* bytes handed out */
};

/* Returns 'n' bytes aligned for any type, or NULL when out of memory. */
void *ptw_arena_alloc(struct ptw_arena *a, size_t n);
/* Copies 'n' bytes and appends a NUL. NULL when out of memory. */
char *ptw_arena_strndup(struct ptw_arena *a, const char *s, size_t n);
char *ptw_arena_strdup(struct ptw_arena *a, const char *s);
void ptw_arena_free(struct ptw_arena *a);

#endif /* PTW_ARENA_H */
