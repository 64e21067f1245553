/* tracer_tracks.c - tracks of the program's own (ptw_track_new,
 * ptw_counter_track_new): a process-wide list of what each handle is,
 * and, per session, the writer track the backend made for it on its
 * first event.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Entries are appended under ptw_tr_ctl.mu and never change or go away
 * (handle h is entry h - 1); the backend reads one with an acquire load,
 * without the mutex. */
#include <stdlib.h>
#include <string.h>

#include "ptw/tracer.h"
#include "tracer_internal.h"

struct ptw_tr_trk {
	char *name;
	char *unit;       /* counter unit, or NULL */
	uint64_t parent;  /* handle, 0: the process */
	int counter;
	int per_thread;
};

static struct ptw_tr_trk *_Atomic ptw_tr_trks[PTW_MAX_TRACKS];
static uint32_t ptw_tr_n_trks; /* under ptw_tr_ctl.mu */

static const struct ptw_tr_trk *ptw_tr_trk_get(uint64_t h)
{
	if (!h || h > PTW_MAX_TRACKS)
		return NULL;
	return atomic_load_explicit(&ptw_tr_trks[h - 1], memory_order_acquire);
}

static uint64_t ptw_tr_trk_add(const char *name, const char *unit,
			       uint64_t parent, int counter, int per_thread)
{
	if (!name || (per_thread && parent))
		return 0;
	ptw_tr_ctl_init_once();
	struct ptw_tr_trk *e = calloc(1, sizeof(*e));
	if (!e)
		return 0;
	e->name = strdup(name);
	e->unit = unit ? strdup(unit) : NULL;
	e->parent = parent;
	e->counter = counter;
	e->per_thread = per_thread;
	uint64_t h = 0;
	if (e->name && (!unit || e->unit)) {
		pthread_mutex_lock(&ptw_tr_ctl.mu);
		const struct ptw_tr_trk *p = ptw_tr_trk_get(parent);
		if (ptw_tr_n_trks < PTW_MAX_TRACKS &&
		    (!parent || (p && !p->counter))) {
			atomic_store_explicit(&ptw_tr_trks[ptw_tr_n_trks], e,
					      memory_order_release);
			h = ++ptw_tr_n_trks;
		}
		pthread_mutex_unlock(&ptw_tr_ctl.mu);
	}
	if (!h) {
		free(e->name);
		free(e->unit);
		free(e);
	}
	return h;
}

uint64_t ptw_track_new(const char *name, uint64_t parent)
{
	return ptw_tr_trk_add(name, NULL, parent, 0, 0);
}

uint64_t ptw_counter_track_new(const char *name, const char *unit_name,
			       uint64_t parent, int per_thread)
{
	return ptw_tr_trk_add(name, unit_name, parent, 1, per_thread != 0);
}

/* Map keys: a handle, or for a per-thread counter the thread's track
 * uuid and the handle (above PTW_MAX_TRACKS, so they never meet). */
#define PTW_TR_TRK_SHIFT 12
_Static_assert((1u << PTW_TR_TRK_SHIFT) >= PTW_MAX_TRACKS,
	       "handles fit below the shift");

uint64_t ptw_tr_track_uuid(struct ptw_tracer *tr, uint64_t thread_track,
			   uint64_t h, int counter)
{
	const struct ptw_tr_trk *e = ptw_tr_trk_get(h);
	if (!e || e->counter != counter)
		return 0;
	uint64_t key = e->per_thread ? thread_track << PTW_TR_TRK_SHIFT | h : h;
	uint64_t uuid;
	if (ptw_map_get(&tr->trks, key, &uuid))
		return uuid;
	uint64_t parent = tr->proc_track;
	if (e->per_thread)
		parent = thread_track;
	else if (e->parent && !(parent = ptw_tr_track_uuid(tr, 0, e->parent,
							    0)))
		return 0;
	uuid = counter ? ptw_writer_add_counter_track(tr->w, e->name, e->unit,
						      parent, -1)
		       : ptw_writer_add_track(tr->w, e->name, parent, -1);
	if (uuid && ptw_map_put(&tr->trks, key, uuid) != 0)
		return 0;
	return uuid;
}
