/* track.h - the writer's track table: uuid -> kind, identity and
 * open-slice depth. uuids are small sequential numbers (1, 2, 3...) so
 * they encode as 1-byte varints and index the table directly.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TRACK_H
#define PTW_TRACK_H

#include <stdint.h>

enum ptw_track_kind {
	PTW_TRACK_PROCESS = 1,
	PTW_TRACK_THREAD,
	PTW_TRACK_NAMED,
	PTW_TRACK_COUNTER,
};

struct ptw_track {
	uint8_t kind;   /* enum ptw_track_kind */
	uint32_t depth; /* open slices (BEGIN without END) */
	int32_t pid;
	int64_t tid;
};

struct ptw_tracks {
	struct ptw_track *v; /* v[uuid - 1] */
	uint64_t n;
	uint64_t cap;
};

void ptw_tracks_free(struct ptw_tracks *t);
/* Appends a track; returns its uuid, or 0 on allocation failure. */
uint64_t ptw_tracks_add(struct ptw_tracks *t, enum ptw_track_kind kind);

/* The track with 'uuid', or NULL if there is none. */
static inline struct ptw_track *ptw_tracks_get(struct ptw_tracks *t,
					       uint64_t uuid)
{
	return uuid - 1 < t->n ? &t->v[uuid - 1] : (struct ptw_track *)0;
}

#endif /* PTW_TRACK_H */
