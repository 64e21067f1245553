/* track.h - the writer's track table: uuid -> kind, identity and
 * open-slice depth. uuids are small sequential numbers (1, 2, 3...) so
 * they encode as 1-byte varints and index the table directly.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TRACK_H
#define PTW_TRACK_H

#include <stddef.h>
#include <stdint.h>

enum ptw_track_kind {
	PTW_TRACK_PROCESS = 1,
	PTW_TRACK_THREAD,
	PTW_TRACK_NAMED,
	PTW_TRACK_COUNTER,
};

struct ptw_track {
	uint8_t kind;   /* enum ptw_track_kind */
	/* A child with a sibling_order_rank exists: the descriptor carries
	 * child_ordering = EXPLICIT (if not yet written, see track.c). */
	uint8_t explicit_children;
	uint8_t has_rank;  /* rank is written as sibling_order_rank */
	uint8_t written;   /* the first descriptor has been encoded */
	uint32_t depth; /* open slices (BEGIN without END) */
	int32_t pid;
	int32_t rank;
	int64_t tid;
	uint8_t style;  /* PTW_TRACK_STYLE_* */
};

#define PTW_TRACK_STYLE_SEPARATE 1u    /* sibling_merge_behavior NONE */
#define PTW_TRACK_STYLE_THREAD_TIME 2u /* COUNTER_THREAD_TIME_NS counter */

/* A descriptor waiting for the next flush: strings are offsets into
 * ptw_tracks.str (name: TrackDescriptor.name, or process_name /
 * thread_name for those kinds). */
struct ptw_track_rec {
	uint64_t uuid;
	uint64_t parent;
	size_t name_off, unit_off;
	uint32_t name_len, unit_len;
	uint8_t has_name, has_unit;
};

struct ptw_tracks {
	struct ptw_track *v; /* v[uuid - 1] */
	uint64_t n;
	size_t cap;
	/* Descriptors not yet encoded, in call order (see track.c). */
	struct ptw_track_rec *pend;
	size_t n_pend, pend_cap;
	char *str;
	size_t str_len, str_cap;
	/* PTW_TRACK_ORDER_* bits: process / thread tracks have a rank
	 * (want), the uuid-0 descriptor saying so was written (done). */
	uint8_t order_want, order_done;
	/* Flight-recorder mode only (recorder.c): every track's current
	 * descriptor, to describe it again at the start of each piece
	 * (strings are offsets into 'keep'; renames append). */
	struct ptw_track_rec *last; /* last[uuid - 1]; has_name etc. as queued */
	size_t last_cap;
	char *keep;
	size_t keep_len, keep_cap;
};

#define PTW_TRACK_ORDER_PROCESS 1u
#define PTW_TRACK_ORDER_THREAD 2u

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
