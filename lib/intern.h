/* intern.h - per-sequence string tables assigning interning ids (iids).
 * SPDX-License-Identifier: Apache-2.0
 *
 * One table per InternedData field of a sequence. Strings are keyed by
 * content (hash + bytes copied into the table's arena); iids are 1, 2, 3...
 * in insertion order and restart at 1 after ptw_intern_reset() (a
 * checkpoint). A second, pointer-keyed cache maps the address of a string
 * the caller promised never to change (PTW_EV_STATIC_STRINGS) to its iid,
 * so hot callers skip strlen and hashing. All storage is allocated at
 * create time and grows by doubling on the insert path only. */
#ifndef PTW_INTERN_H
#define PTW_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct ptw_intern;

/* 'expected' sizes the initial tables (strings before the first growth).
 * NULL on allocation failure. */
struct ptw_intern *ptw_intern_create(uint32_t expected);
void ptw_intern_destroy(struct ptw_intern *t);

/* Forgets every string: the next new string gets iid 1. */
void ptw_intern_reset(struct ptw_intern *t);

/* Number of strings in the current generation. */
uint32_t ptw_intern_count(const struct ptw_intern *t);

/* Looks 's' (of 'len' bytes) up; if absent inserts it. Returns its iid
 * (> 0) and sets *is_new, or 0 on allocation failure. */
uint64_t ptw_intern_get(struct ptw_intern *t, const char *s, size_t len,
			int *is_new);

/* The iid cached for pointer 'p' in this generation, or 0. */
uint64_t ptw_intern_get_ptr(const struct ptw_intern *t, const void *p);
/* Remembers 'p' -> 'iid' (best effort: the cache may forget entries). */
void ptw_intern_put_ptr(struct ptw_intern *t, const void *p, uint64_t iid);

/* The bytes of entry 'iid' (valid until the next reset or insert). */
const char *ptw_intern_str(const struct ptw_intern *t, uint64_t iid,
			   size_t *len);

#endif /* PTW_INTERN_H */
