/* u64map.h - hash map from uint64 keys to pointers, for the trace
 * reader's intern tables (iid -> string) and track lookup (uuid -> track):
 * the shared uint64 map (lib/util/hashmap.h) holding pointers. Any key is
 * allowed (including 0). Not thread-safe.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_U64MAP_H
#define PTW_U64MAP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/util/hashmap.h"

struct ptw_u64map {
	struct ptw_map m; /* values are pointers */
};

/* Returns the value for 'key' or NULL. */
void *ptw_u64map_get(const struct ptw_u64map *m, uint64_t key);
/* Inserts key -> val if absent. Returns 1 inserted, 0 already present
 * (value untouched: first definition wins), -1 out of memory. */
int ptw_u64map_add(struct ptw_u64map *m, uint64_t key, void *val);
/* Inserts or replaces. Returns 0 or -1 out of memory. */
int ptw_u64map_put(struct ptw_u64map *m, uint64_t key, void *val);
void ptw_u64map_clear(struct ptw_u64map *m);
void ptw_u64map_free(struct ptw_u64map *m);

#endif /* PTW_U64MAP_H */
