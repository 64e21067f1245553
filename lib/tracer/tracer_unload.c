/* tracer_unload.c - unloading a library that logged (dlclose), safely.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The macros keep names and categories as pointers to the caller's string
 * literals: the producer writes the pointers into its ring, the backend
 * reads the strings when it drains the ring, and the session keeps some of
 * the addresses for its whole length (the writer's interning by address,
 * the prepared events of each thread, the counter tracks' map, the async
 * tracks' names, and in ring mode the open slices that a snapshot begins
 * again by name). When a library that logged is unloaded, its literals go
 * away (reading them then is a SIGSEGV), and a library loaded later may
 * put other strings at the same addresses (the trace would then show the
 * old names).
 *
 * So every translation unit that includes ptw/tracer.h has a destructor,
 * ptw_i_unload_hook, that runs when its object is unloaded, after the
 * object's other destructors and C++ static destructors (priority 101:
 * the fini array runs it last), and calls ptw_i_unload() below. When a
 * session runs and anything was logged since the last unload, that makes
 * the backend drain every ring (everything logged before the unload is
 * written, while the literals are still mapped) and then forget every
 * address it kept: all of them, not just the object's (unloads are rare;
 * afterwards each string is looked up by content once again); the open
 * slices' strings are copied. The call returns when that is done.
 *
 * Why a destructor per translation unit rather than one __cxa_atexit(fn,
 * arg, &__dso_handle) registered per object on its first event: a
 * destructor needs no change to the call sites or to the producer's slow
 * path, and priority 101 makes it run after everything else the object
 * runs at its unload (C++ static destructors, also those registered after
 * the object's first event, which __cxa_finalize would run after a
 * callback registered then). The price is one small function and one fini
 * array entry per translation unit; a hook whose object logged nothing
 * new costs a mutex and a look at each thread's ring tail (docs/tracer.md,
 * "Libraries that are unloaded", has the figures). */
#include "lib/stack/stack.h"
#include "tracer_internal.h"

#include "lib/util/grow.h"
#include "sites.h"

#include <stdlib.h>
#include <string.h>

#define PTW_TR_SLOT PTW_TRACER_SLOT_SIZE

/* ---- the hook's side (any thread) ------------------------------------ */

/* Under mu: did anything reach the backend, or may it yet, that was
 * logged after the last unload was served? (A thread's ring holds
 * nothing new when its tail is where that unload's drain left it.) */
static int ptw_tr_unload_needed_locked(const struct ptw_tracer *tr)
{
	if (tr->unl.dirty)
		return 1;
	for (size_t i = 0; i < tr->n_threads; i++) {
		const struct ptw_tr_thread *th = tr->threads[i];
		if (atomic_load_explicit(&th->pub.ring.tail,
					 memory_order_relaxed) != th->unload_mark)
			return 1;
	}
	return 0;
}

void ptw_i_unload(const void *where)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	struct ptw_obj_range obj;
	/* The object's call sites leave the list of sites (sites.h), with or
	 * without a session: the list must never point into unmapped memory.
	 * A look-up of the loader's list and a lock (the mutex is statically
	 * initialised) per translation unit at unload and at exit. */
	int have_obj = ptw_obj_range_of(where, &obj) == 0;
	pthread_mutex_lock(&c->mu);
	if (have_obj)
		ptw_tr_sites_forget_range(obj.lo, obj.hi);
	for (;;) {
		struct ptw_tracer *tr = c->tr;
		if (!tr)
			break;
		uint64_t session = tr->session;
		if (c->stopping) {
			/* the stop drains every ring before the session ends */
			while (c->tr && c->tr->session == session)
				pthread_cond_wait(&c->done, &c->mu);
			continue;
		}
		if (!ptw_tr_unload_needed_locked(tr))
			break;
		/* the object's other translation units' hooks follow this
		 * one, while other threads may go on logging: one drain is
		 * enough for the object */
		if (have_obj && tr->unl.have_last &&
		    ptw_obj_range_same(&tr->unl.last, &obj))
			break;
		uint64_t req = ++tr->unl.req;
		pthread_cond_signal(&c->wake);
		/* the backend answers every request before it exits; a
		 * session that ended drained every ring first */
		while (c->tr && c->tr->session == session && tr->unl.done < req)
			pthread_cond_wait(&c->done, &c->mu);
		if (c->tr && c->tr->session == session) {
			tr->unl.last = obj;
			tr->unl.have_last = have_obj;
		}
		break;
	}
	pthread_mutex_unlock(&c->mu);
}

/* ---- the backend's side ------------------------------------------------ */

/* The session's copy of 's' (one per content), or NULL if out of memory. */
static const char *ptw_tr_own(struct ptw_tracer *tr, const char *s)
{
	struct ptw_tr_unload *u = &tr->unl;
	size_t len = strlen(s);
	uint64_t h = ptw_fnv1a(PTW_FNV_INIT, s, len), ix;
	if (ptw_map_get(&u->strs_ix, h, &ix) && strcmp(u->strs[ix - 1], s) == 0)
		return u->strs[ix - 1];
	char **ns = ptw_grow(u->strs, &u->cap_strs, u->n_strs + 1, 16,
			     sizeof(*ns));
	if (!ns)
		return NULL;
	u->strs = ns;
	char *copy = malloc(len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len + 1);
	/* a hash taken by another string: this one is kept unindexed */
	if (!ptw_map_get(&u->strs_ix, h, &ix) &&
	    ptw_map_put(&u->strs_ix, h, u->n_strs + 1)) {
		free(copy);
		return NULL;
	}
	u->strs[u->n_strs++] = copy;
	return copy;
}

/* Replaces *p (a string or NULL) by the session's copy. 0 or
 * PTW_ERR_NOMEM (then *p is "", never a dangling pointer). */
static int ptw_tr_own_at(struct ptw_tracer *tr, const char **p)
{
	if (!*p)
		return 0;
	const char *o = ptw_tr_own(tr, *p);
	*p = o ? o : "";
	return o ? 0 : PTW_ERR_NOMEM;
}

/* Slots of a copied string of 'len' bytes as ptw_tr_decode_at reads it. */
static uint64_t ptw_tr_str_slots(size_t len)
{
	if (len > PTW_TRACER_MAX_NAME)
		len = PTW_TRACER_MAX_NAME;
	return (len + 1 + PTW_TR_SLOT - 1) / PTW_TR_SLOT;
}

/* The strings of a BEGIN copied whole (tracer_open.c) whose record,
 * arguments and copied strings are the slots at 'p': its name, category
 * and argument names become the session's copies (the copied name and
 * string values are in the slots already). 0 or PTW_ERR_NOMEM. It walks
 * the slots as ptw_tr_decode_at (tracer_backend.c) reads them: a change
 * of the record layout changes both. Only BEGINs are copied (a slice's,
 * an async one's or a track's: ptw_tr_open_copy's callers), and their
 * records carry the category in v (a counter's would hold its value). */
static int ptw_tr_own_copied(struct ptw_tracer *tr, unsigned char *p)
{
	struct ptw_i_rec rec;
	memcpy(&rec, p, sizeof(rec));
	if (rec.name_len)
		rec.name = NULL; /* the site (ptw_tr_rec_site), going away */
	int rc = ptw_tr_own_at(tr, &rec.name);
	rc |= ptw_tr_own_at(tr, &rec.v.cat);
	memcpy(p, &rec, sizeof(rec));
	/* the layout ptw_tr_decode_at reads */
	uint64_t k = 1, end = 1 + (uint64_t)rec.extra;
	if (rec.name_len)
		k += ptw_tr_str_slots(rec.name_len - 1u);
	switch (rec.kind) {
	case PTW_I_K_ASYNC_BEGIN: case PTW_I_K_ASYNC_END:
	case PTW_I_K_FLOW_START: case PTW_I_K_FLOW_STEP: case PTW_I_K_FLOW_END:
	case PTW_I_K_LOG:
	case PTW_I_K_TRACK_BEGIN: case PTW_I_K_TRACK_END:
	case PTW_I_K_TRACK_INSTANT: case PTW_I_K_TRACK_COUNTER_INT:
	case PTW_I_K_TRACK_COUNTER_DOUBLE:
		k++;
		break;
	default:
		break;
	}
	uint32_t n = rec.nargs < PTW_TRACER_MAX_ARGS ? rec.nargs
						      : PTW_TRACER_MAX_ARGS;
	for (uint32_t a = 0; a < n && k < end; a++) {
		struct ptw_i_arg_rec ar;
		unsigned char *q = p + k++ * PTW_TR_SLOT;
		memcpy(&ar, q, sizeof(ar));
		rc |= ptw_tr_own_at(tr, &ar.name);
		memcpy(q, &ar, sizeof(ar));
		if (ar.type == PTW_ARG_TYPE_STRING ||
		    ar.type == PTW_I_ARG_STACK)
			k += ptw_tr_str_slots(ar.str_len);
	}
	return rc ? PTW_ERR_NOMEM : 0;
}

/* Levels 0..depth-1 of st: their strings become the session's copies. */
static int ptw_tr_own_stack(struct ptw_tracer *tr, struct ptw_tr_ostack *st,
			    uint32_t depth)
{
	int rc = 0;
	for (uint32_t d = 0; d < depth && d < st->cap; d++) {
		struct ptw_tr_open *lv = &st->lv[d];
		if (lv->name) {
			rc |= ptw_tr_own_at(tr, &lv->name);
			rc |= ptw_tr_own_at(tr, &lv->u.cat);
		} else {
			rc |= ptw_tr_own_copied(tr, st->buf + lv->u.off);
		}
	}
	return rc ? PTW_ERR_NOMEM : 0;
}

/* Forgets the addresses kept by the backend's own tables. */
static int ptw_tr_forget_backend(struct ptw_tracer *tr, size_t n)
{
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct ptw_tr_thread *th = tr->snap[i];
		if (!th)
			continue; /* retired in this pass */
		/* prepared events are keyed by name and category address */
		for (size_t k = 0; k < PTW_TR_PREP_SLOTS; k++)
			th->prep[k].word = 0;
		th->hot_ok = 0;
		if (tr->ring)
			rc |= ptw_tr_own_stack(tr, &th->open, th->depth);
	}
	for (size_t i = 0; i < tr->n_otracks; i++)
		rc |= ptw_tr_own_stack(tr, &tr->otracks[i].st,
				       tr->otracks[i].depth);
	/* counter tracks: found by content again (counter_names) */
	ptw_map_clear(&tr->counters);
	/* An async track goes back to a free list under its first BEGIN's
	 * name address, and a later BEGIN of the same address takes it. Those
	 * addresses are forgotten: the tracks in use are not listed when
	 * their ids end, and the idle ones are not taken again (a new track
	 * is). */
	for (size_t i = 0; i < tr->async.n; i++)
		tr->async.v[i].name = NULL;
	tr->async.n_free = 0;
	return rc ? PTW_ERR_NOMEM : 0;
}

void ptw_tr_unload_serve(struct ptw_tracer *tr, uint64_t req, size_t n)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	ptw_i_writer_forget_addresses(tr->w);
	if (ptw_tr_forget_backend(tr, n)) {
		/* a slice a snapshot would begin with "" as its name: the
		 * session fails, as when an open slice cannot be kept */
		int rc = ptw_i_writer_fail(tr->w, PTW_ERR_NOMEM, 0,
					   "tracer: out of memory copying the "
					   "names of open slices at an unload");
		if (!tr->rc) {
			tr->rc = rc;
			tr->err = *ptw_writer_error(tr->w);
		}
	}
	/* the sinks keep addresses alike (no open stacks: no ring mode) */
	for (uint32_t k = 0; k < PTW_TR_MAX_SINKS; k++) {
		struct ptw_tracer *sk = tr->sinks[k];
		if (!sk)
			continue;
		ptw_i_writer_forget_addresses(sk->w);
		for (size_t i = 0; i < n; i++) {
			struct ptw_tr_thread *sh = tr->snap[i] ? tr->snap[i]->sh[k]
							       : NULL;
			if (!sh)
				continue;
			for (size_t j = 0; j < PTW_TR_PREP_SLOTS; j++)
				sh->prep[j].word = 0;
			sh->hot_ok = 0;
		}
		ptw_map_clear(&sk->counters);
		ptw_map_clear(&sk->want_cat);
		for (size_t i = 0; i < sk->async.n; i++)
			sk->async.v[i].name = NULL;
		sk->async.n_free = 0;
	}
	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < n; i++)
		if (tr->snap[i])
			tr->snap[i]->unload_mark = atomic_load_explicit(
				&tr->snap[i]->pub.ring.head,
				memory_order_relaxed);
	tr->unl.dirty = 0;
	tr->unl.done = req;
	pthread_cond_broadcast(&c->done);
	pthread_mutex_unlock(&c->mu);
}

void ptw_tr_unload_free(struct ptw_tracer *tr)
{
	struct ptw_tr_unload *u = &tr->unl;
	for (size_t i = 0; i < u->n_strs; i++)
		free(u->strs[i]);
	free(u->strs);
	ptw_map_free(&u->strs_ix);
	u->strs = NULL;
	u->n_strs = u->cap_strs = 0;
}
