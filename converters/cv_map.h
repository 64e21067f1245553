/* cv_map.h - a small uint64 -> uint64 hash map for the converters' track
 * and name tables (open addressing, linear probing, grown at half load).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_CV_MAP_H
#define PTW_CV_MAP_H

#include <stddef.h>
#include <stdint.h>

struct ptw_cv_map_slot {
	uint64_t key;
	uint64_t val;
	int used;
};

struct ptw_cv_map {
	struct ptw_cv_map_slot *slots;
	size_t cap; /* power of two, or 0 before the first put */
	size_t count;
};

/* A zeroed struct is an empty map. */
void ptw_cv_map_free(struct ptw_cv_map *m);
/* Returns 1 and *val if 'key' is present, else 0. */
int ptw_cv_map_get(const struct ptw_cv_map *m, uint64_t key, uint64_t *val);
/* Inserts or replaces. Returns 0 or PTW_ERR_NOMEM. */
int ptw_cv_map_put(struct ptw_cv_map *m, uint64_t key, uint64_t val);

/* Removes 'key' if present (backward-shift deletion, no tombstones). */
void ptw_cv_map_del(struct ptw_cv_map *m, uint64_t key);

/* FNV-1a over bytes, continuing from 'h' (start with PTW_CV_FNV_INIT). */
#define PTW_CV_FNV_INIT 0xcbf29ce484222325ull
uint64_t ptw_cv_hash(uint64_t h, const void *p, size_t n);

#endif /* PTW_CV_MAP_H */
