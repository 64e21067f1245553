/* hashmap.h - a small uint64 -> uint64 hash map (open addressing, linear
 * probing, grown at half load, backward-shift deletion), shared by the
 * tracer's backend tables, the converters' track and name tables and the
 * trace reader. Internal: not part of the public API.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_HASHMAP_H
#define PTW_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct ptw_map_slot {
	uint64_t key;
	uint64_t val;
	int used;
};

struct ptw_map {
	struct ptw_map_slot *slots;
	size_t cap; /* power of two, or 0 before the first put */
	size_t count;
};

/* A zeroed struct is an empty map. */
void ptw_map_free(struct ptw_map *m);
/* Returns 1 and *val if 'key' is present, else 0. */
int ptw_map_get(const struct ptw_map *m, uint64_t key, uint64_t *val);
/* Inserts or replaces. Returns 0 or PTW_ERR_NOMEM. */
int ptw_map_put(struct ptw_map *m, uint64_t key, uint64_t val);

/* Empties the map, keeping its storage. */
void ptw_map_clear(struct ptw_map *m);
/* Removes 'key' if present (backward-shift deletion, no tombstones).
 * Returns 1 if it was present, else 0. */
int ptw_map_del(struct ptw_map *m, uint64_t key);

/* FNV-1a over bytes, continuing from 'h' (start with PTW_FNV_INIT). */
#define PTW_FNV_INIT 0xcbf29ce484222325ull
uint64_t ptw_fnv1a(uint64_t h, const void *p, size_t n);

#endif /* PTW_HASHMAP_H */
