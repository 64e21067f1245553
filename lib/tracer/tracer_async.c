/* tracer_async.c - which track each ASYNC_BEGIN / ASYNC_END goes on.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The backend drains one ring at a time, so the events of one async id
 * logged by several threads reach it out of timestamp order: thread A's
 * BEGIN(t1), BEGIN(t3) may come before thread B's END(t2), END(t4).
 * Pairing them here would have to guess. Instead every event of an id
 * goes on one track for as long as the id is live, and trace_processor,
 * which sorts each track's events by timestamp, pairs them as they
 * happened: [t1, t2] and [t3, t4].
 *
 * An id is live while its BEGINs outnumber its ENDs, and for two more
 * full backend passes after that: a late event of the id (logged before
 * the balance reached zero, still in a ring not drained yet) then still
 * finds the same track. After that the track goes to a free list and may
 * carry another id of the same name, but only from a BEGIN that is not
 * earlier than the last event on the track, so two ids never interleave
 * on one track.
 *
 * The writer refuses an END on a track without an open BEGIN, so an END
 * drained before any BEGIN of its id waits in a bounded list and is
 * written after that BEGIN. Nothing else is buffered.
 *
 * A "soft" END is one whose category was off at some time in the session
 * (tracer_internal.h, PTW_TR_SOFT_END): its BEGIN may have been skipped.
 * It pairs only with a BEGIN that is not later than itself; one never
 * paired is no error, and a full wait list makes room by dropping one.
 *
 * Backend thread only. */
#include "tracer_internal.h"

#include "lib/util/grow.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define PTW_TR_ASYNC_GRACE 2u        /* passes a zero-balance id stays */
#define PTW_TR_ASYNC_MAX_PENDING 4096u /* ENDs waiting for their BEGIN */
#define PTW_TR_ASYNC_MAX_FREE 1024u  /* idle tracks kept for reuse */

/* Map keys must be non-zero: the key of an id is id + 1, and the one id
 * without a key (UINT64_MAX) keeps its entry index in a field. */
static struct ptw_tr_async_ent *ptw_tr_async_find(struct ptw_tr_async *a,
						  uint64_t id)
{
	uint64_t ix;
	if (id == UINT64_MAX)
		ix = a->max_id_ix;
	else if (!ptw_map_get(&a->ix, id + 1, &ix))
		ix = 0;
	return ix ? &a->v[ix - 1] : NULL;
}

static int ptw_tr_async_index(struct ptw_tr_async *a, uint64_t id, uint64_t ix)
{
	if (id == UINT64_MAX) {
		a->max_id_ix = ix;
		return 0;
	}
	return ix ? ptw_map_put(&a->ix, id + 1, ix) : ptw_map_del(&a->ix, id + 1);
}

/* Queues 'e' to be released once its balance stayed zero long enough. */
static int ptw_tr_async_zeroed(struct ptw_tr_async *a, struct ptw_tr_async_ent *e)
{
	e->zero_pass = a->pass;
	if (a->zq_n == a->zq_cap) {
		if (a->zq_head) { /* slide the live part to the front */
			memmove(a->zq, a->zq + a->zq_head,
				(a->zq_n - a->zq_head) * sizeof(*a->zq));
			a->zq_n -= a->zq_head;
			a->zq_head = 0;
		}
		void *np = ptw_grow(a->zq, &a->zq_cap, a->zq_n + 1, 64,
				    sizeof(*a->zq));
		if (!np)
			return PTW_ERR_NOMEM;
		a->zq = np;
	}
	a->zq[a->zq_n].ix = (uint32_t)(e - a->v);
	a->zq[a->zq_n].gen = e->gen;
	a->zq[a->zq_n++].pass = a->pass;
	return 0;
}

/* A free track of this name whose last event is not after 'ts'. */
static uint64_t ptw_tr_async_reuse(struct ptw_tr_async *a, const char *name,
				   uint64_t ts)
{
	for (size_t i = a->n_free; i-- > 0;) {
		if (a->free[i].name == name && a->free[i].last_ts <= ts) {
			uint64_t uuid = a->free[i].track;
			a->free[i] = a->free[--a->n_free];
			return uuid;
		}
	}
	return 0;
}

uint64_t ptw_tr_async_track(struct ptw_tr_async *a, struct ptw_writer *w,
			    uint64_t parent, uint64_t id, const char *name,
			    uint64_t ts)
{
	struct ptw_tr_async_ent *e = ptw_tr_async_find(a, id);
	if (e)
		return e->track;
	size_t ix;
	if (a->n_unused) {
		ix = a->unused[--a->n_unused];
	} else {
		if (a->n == a->cap) {
			/* v and unused share cap: each grows on its own */
			size_t nc = ptw_grow_cap(a->cap, a->n + 1, 64,
						 sizeof(*a->v));
			struct ptw_tr_async_ent *nv =
				ptw_realloc_array(a->v, nc, sizeof(*nv));
			size_t *nu = ptw_realloc_array(a->unused, nc, sizeof(*nu));
			if (nv)
				a->v = nv;
			if (nu)
				a->unused = nu;
			if (!nv || !nu)
				return 0;
			a->cap = nc;
		}
		ix = a->n++;
		a->v[ix].gen = 0;
		a->v[ix].bal = 0;
	}
	uint64_t track = ptw_tr_async_reuse(a, name, ts);
	if (!track)
		track = ptw_writer_add_track(w, name, parent, -1);
	if (!track) {
		a->unused[a->n_unused++] = ix;
		return 0;
	}
	e = &a->v[ix];
	e->id = id;
	e->track = track;
	e->name = name;
	e->bal = 0;
	e->last_ts = ts;
	e->gen++;
	if (ptw_tr_async_index(a, id, ix + 1) ||
	    ptw_tr_async_zeroed(a, e)) { /* released if no BEGIN is written */
		ptw_tr_async_index(a, id, 0);
		a->unused[a->n_unused++] = ix;
		return 0;
	}
	return track;
}

void ptw_tr_async_begun(struct ptw_tr_async *a, uint64_t id, uint64_t ts)
{
	struct ptw_tr_async_ent *e = ptw_tr_async_find(a, id);
	if (!e)
		return;
	if (e->bal++ == 0 || ts < e->open_ts)
		e->open_ts = ts;
	if (ts > e->last_ts)
		e->last_ts = ts;
}

/* One END of a live id with an open BEGIN: count it, track in *track. */
static void ptw_tr_async_take(struct ptw_tr_async *a, struct ptw_tr_async_ent *e,
			      uint64_t ts, uint64_t *track)
{
	*track = e->track;
	if (ts > e->last_ts)
		e->last_ts = ts;
	if (--e->bal == 0 && ptw_tr_async_zeroed(a, e))
		e->zero_pass = 0; /* no memory to queue it: kept till stop */
}

/* A slot in the wait list: a new one, or (full) that of a soft END, which
 * is dropped. -1 if there is none. */
static ptrdiff_t ptw_tr_async_pend_slot(struct ptw_tr_async *a)
{
	if (a->n_pend == a->cap_pend) {
		size_t nc = ptw_grow_cap(a->cap_pend, a->n_pend + 1, 16,
					 sizeof(*a->pend));
		void *np = nc <= PTW_TR_ASYNC_MAX_PENDING
				   ? ptw_realloc_array(a->pend, nc, sizeof(*a->pend))
				   : NULL;
		if (np) {
			a->pend = np;
			a->cap_pend = nc;
		}
	}
	if (a->n_pend < a->cap_pend)
		return (ptrdiff_t)a->n_pend++;
	for (size_t i = 0; i < a->n_pend; i++)
		if (a->pend[i].soft)
			return (ptrdiff_t)i;
	return -1;
}

int ptw_tr_async_end(struct ptw_tr_async *a, uint64_t id, uint64_t ts,
		     int soft, uint64_t *track)
{
	struct ptw_tr_async_ent *e = ptw_tr_async_find(a, id);
	if (e && e->bal > 0 && (!soft || ts >= e->open_ts)) {
		ptw_tr_async_take(a, e, ts, track);
		return 1;
	}
	ptrdiff_t i = ptw_tr_async_pend_slot(a);
	if (i < 0)
		return -1;
	a->pend[i].id = id;
	a->pend[i].ts = ts;
	a->pend[i].soft = soft;
	return 0;
}

int ptw_tr_async_pending_end(struct ptw_tr_async *a, uint64_t id,
			     uint64_t begin_ts, uint64_t *ts, uint64_t *track)
{
	struct ptw_tr_async_ent *e = ptw_tr_async_find(a, id);
	if (!e || e->bal == 0)
		return 0;
	for (size_t i = 0; i < a->n_pend; i++) {
		if (a->pend[i].id == id &&
		    (!a->pend[i].soft || a->pend[i].ts >= begin_ts)) {
			*ts = a->pend[i].ts;
			a->pend[i] = a->pend[--a->n_pend];
			ptw_tr_async_take(a, e, *ts, track);
			return 1;
		}
	}
	return 0;
}

void ptw_tr_async_pass(struct ptw_tr_async *a)
{
	a->pass++;
	while (a->zq_head < a->zq_n &&
	       a->zq[a->zq_head].pass + PTW_TR_ASYNC_GRACE <= a->pass) {
		struct ptw_tr_async_ent *e = &a->v[a->zq[a->zq_head].ix];
		uint32_t gen = a->zq[a->zq_head++].gen;
		if (e->gen != gen || e->bal != 0 ||
		    e->zero_pass + PTW_TR_ASYNC_GRACE > a->pass)
			continue; /* reused, live again, or zeroed later */
		ptw_tr_async_index(a, e->id, 0);
		e->gen++;
		a->unused[a->n_unused++] = (size_t)(e - a->v);
		/* (no name: forgotten at an unload, tracer_unload.c) */
		if (e->name && a->n_free < PTW_TR_ASYNC_MAX_FREE) {
			a->free[a->n_free].track = e->track;
			a->free[a->n_free].name = e->name;
			a->free[a->n_free++].last_ts = e->last_ts;
		}
	}
	if (a->zq_head == a->zq_n)
		a->zq_head = a->zq_n = 0;
}

uint64_t ptw_tr_async_unmatched(const struct ptw_tr_async *a)
{
	uint64_t n = 0;
	for (size_t i = 0; i < a->n_pend; i++)
		n += !a->pend[i].soft; /* a soft one may end a skipped BEGIN */
	for (size_t i = 0; i < a->n; i++)
		n += (uint64_t)a->v[i].bal; /* 0 for released entries */
	return n;
}

int ptw_tr_async_init(struct ptw_tr_async *a)
{
	memset(a, 0, sizeof(*a));
	a->free = malloc(PTW_TR_ASYNC_MAX_FREE * sizeof(*a->free));
	return a->free ? 0 : PTW_ERR_NOMEM;
}

void ptw_tr_async_free(struct ptw_tr_async *a)
{
	ptw_map_free(&a->ix);
	free(a->v);
	free(a->unused);
	free(a->zq);
	free(a->pend);
	free(a->free);
	memset(a, 0, sizeof(*a));
}
