/* intern.h - per-sequence string tables assigning interning ids (iids).
 * SPDX-License-Identifier: Apache-2.0
 *
 * One table per InternedData field of a sequence. Strings are keyed by
 * content (hash + bytes copied into the table's arena; strings up to 16
 * bytes are compared by two key words held in the entry, so the lookup,
 * inline below, needs no loop or memcmp for them); iids are 1, 2, 3...
 * in insertion order and restart at 1 after ptw_intern_reset() (a
 * checkpoint). A second, pointer-keyed cache maps the address of a string
 * the caller promised never to change (PTW_EV_STATIC_STRINGS) to its iid,
 * so hot callers skip strlen and hashing. All storage is allocated at
 * create time and grows by doubling on the insert path only. Slots carry a
 * generation number, so a reset is O(1) instead of clearing the arrays. */
#ifndef PTW_INTERN_H
#define PTW_INTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Content index slot: entry index + 1, valid iff gen == table gen. */
struct ptw_intern_slot {
	uint32_t idx;
	uint32_t gen;
};

/* Pointer cache slot, valid iff gen == table pgen. */
struct ptw_intern_pslot {
	const void *ptr;
	uint32_t iid;
	uint32_t gen;
};

/* w0/w1 are the key words of ptw_intern_get(): for strings up to 16
 * bytes they hold every byte, so equal (len, w0, w1) means equal strings
 * without reading the arena. */
struct ptw_intern_entry {
	uint64_t hash;
	uint64_t w0, w1;
	size_t off; /* bytes in the arena */
	size_t len;
	uint32_t used; /* the caller's stamp of its last use (0 at insert) */
};

/* Visible for the inline pointer lookup; use the functions. */
struct ptw_intern {
	struct ptw_intern_slot *slots; /* open addressing, load <= 1/2 */
	uint32_t mask;
	uint32_t gen;
	struct ptw_intern_entry *entries; /* entries[iid - 1] */
	uint32_t count;
	uint32_t entries_cap;
	char *arena;
	size_t arena_len;
	size_t arena_cap;
	struct ptw_intern_pslot *pslots;
	uint32_t pmask;
	uint32_t pgen;
	uint32_t pcount;
	/* The pointer cache's newest entry, checked before the probe: a
	 * table that sees one string again and again (a converter's single
	 * category) then needs no probe. NULL after the cache forgets. */
	const void *last_ptr;
	uint32_t last_iid;
};

/* 'expected' sizes the initial tables (strings before the first growth).
 * NULL on allocation failure. */
struct ptw_intern *ptw_intern_create(uint32_t expected);
void ptw_intern_destroy(struct ptw_intern *t);

/* Forgets every string: the next new string gets iid 1. */
void ptw_intern_reset(struct ptw_intern *t);

/* Number of strings in the current generation. */
static inline uint32_t ptw_intern_count(const struct ptw_intern *t)
{
	return t->count;
}

/* Looks 's' (of 'len' bytes) up; if absent inserts it. Returns its iid
 * (> 0) and sets *is_new, or 0 on allocation failure. Inline below. */
static inline uint64_t ptw_intern_get(struct ptw_intern *t, const char *s,
				      size_t len, int *is_new);

/* The insert half of ptw_intern_get() (slow path, not API): adds a string
 * known to be absent, with its hash and key words. Returns the iid or 0. */
uint64_t ptw_intern_insert(struct ptw_intern *t, const char *s, size_t len,
			   uint64_t h, uint64_t w0, uint64_t w1);

/* Forgets every pointer of the pointer cache (the content table and its
 * iids stay): the next look-up of a string by address misses and goes by
 * content. For strings whose memory went away (an unloaded library's
 * literals): another string may come to live at the same address. */
void ptw_intern_forget_ptrs(struct ptw_intern *t);

/* Remembers 'p' -> 'iid' (best effort: the cache may forget entries). */
void ptw_intern_put_ptr(struct ptw_intern *t, const void *p, uint64_t iid);

/* The bytes of entry 'iid' (valid until the next reset or insert). */
const char *ptw_intern_str(const struct ptw_intern *t, uint64_t iid,
			   size_t *len);

static inline uint32_t ptw_intern_ptr_slot(const void *p, uint32_t mask)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15u;
	return (uint32_t)(h >> 40) & mask;
}

/* The iid cached for pointer 'p' in this generation, or 0. */
static inline __attribute__((always_inline)) uint64_t
ptw_intern_get_ptr(const struct ptw_intern *t, const void *p)
{
	if (p == t->last_ptr)
		return t->last_iid;
	uint32_t j = ptw_intern_ptr_slot(p, t->pmask);
	for (;;) {
		const struct ptw_intern_pslot *ps = &t->pslots[j];
		if (ps->gen != t->pgen)
			return 0;
		if (ps->ptr == p)
			return ps->iid;
		j = (j + 1) & t->pmask;
	}
}

/* ---- inline implementation, not API -------------------------------- */

/* Strings up to this length are compared by their key words alone. */
#define PTW_INTERN_SHORT 16u

/* The key words of 's': two loads that together cover every byte of a
 * string up to 16 bytes (overlapping when shorter than 16), so short
 * strings hash and compare without a loop or a memcmp call. Loads never
 * leave [s, s + len). */
static inline void ptw_intern_words(const char *s, size_t len, uint64_t *w0,
				    uint64_t *w1)
{
	if (len >= 8) {
		memcpy(w0, s, 8);
		memcpy(w1, s + len - 8, 8);
	} else if (len >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + len - 4, 4);
		*w0 = (uint64_t)a | (uint64_t)b << 32;
		*w1 = 0;
	} else if (len) {
		const uint8_t *u = (const uint8_t *)s;
		*w0 = (uint64_t)u[0] | (uint64_t)u[len / 2] << 8 |
		      (uint64_t)u[len - 1] << 16;
		*w1 = 0;
	} else {
		*w0 = *w1 = 0;
	}
}

static inline uint64_t ptw_intern_hash(const char *s, size_t len,
				       uint64_t w0, uint64_t w1)
{
	/* Multiply-xorshift mixing; only needs to spread well, not resist
	 * attack (tables are private to one writer). Long strings add their
	 * leading 8-byte words first; the key words cover the tail. */
	uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)len;
	if (__builtin_expect(len > PTW_INTERN_SHORT, 0)) {
		for (size_t i = 0; i + 8 < len; i += 8) {
			uint64_t v;
			memcpy(&v, s + i, 8);
			h = (h ^ v) * 0xff51afd7ed558ccdu;
			h ^= h >> 32;
		}
	}
	h = (h ^ w0) * 0xff51afd7ed558ccdu;
	h ^= h >> 32;
	h = (h ^ w1) * 0xc4ceb9fe1a85ec53u;
	h ^= h >> 29;
	return h;
}

/* The iid of 's' if the table holds it, else 0; either way its hash and
 * key words in *h, *w0, *w1 (for ptw_intern_insert). */
static inline uint64_t ptw_intern_find(const struct ptw_intern *t,
				       const char *s, size_t len, uint64_t *h,
				       uint64_t *w0, uint64_t *w1)
{
	ptw_intern_words(s, len, w0, w1);
	*h = ptw_intern_hash(s, len, *w0, *w1);
	uint32_t j = (uint32_t)*h & t->mask;
	while (t->slots[j].gen == t->gen) {
		const struct ptw_intern_entry *en = &t->entries[t->slots[j].idx - 1];
		if (en->hash == *h && en->len == len && en->w0 == *w0 &&
		    en->w1 == *w1 &&
		    (len <= PTW_INTERN_SHORT ||
		     memcmp(t->arena + en->off, s, len) == 0))
			return t->slots[j].idx;
		j = (j + 1) & t->mask;
	}
	return 0;
}

static inline uint64_t ptw_intern_get(struct ptw_intern *t, const char *s,
				      size_t len, int *is_new)
{
	uint64_t h, w0, w1;
	uint64_t iid = ptw_intern_find(t, s, len, &h, &w0, &w1);
	*is_new = !iid;
	return iid ? iid : ptw_intern_insert(t, s, len, h, w0, w1);
}

#endif /* PTW_INTERN_H */
