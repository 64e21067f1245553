/* emit_fast.c - the emitter's short path for the bulk of an AppleTrace run:
 * a B or E with no arguments, on a thread seen before, whose queue holds
 * at most one event older than it.
 * SPDX-License-Identifier: Apache-2.0
 *
 * It does exactly what the general path (emit.c ptw_em_thread_event, then
 * emit_thread.c) does for such an event, without its generality: the one
 * queued event is released (written) because a later timestamp arrived,
 * a B is queued open and pushed on the thread's LIFO stack, an E pops the
 * stack and is queued as a nameless end (its B was written already: it
 * had an older timestamp). Everything else returns 0 before changing any
 * state, and the caller takes the general path. */
#include <string.h>

#include "emit_internal.h"

#define PTW_EM_FAST_FLAGS (PTW_CV_HAS_PID | PTW_CV_HAS_TID | PTW_CV_HAS_TS)

/* The stable string of a reader number, if cached (else NULL). */
static inline const char *ptw_em_fast_sym(const struct ptw_emit *em,
					  uint64_t sym)
{
	const struct ptw_em_sym_slot *sl =
		&em->sym_cache[ptw_em_sym_index(sym)];
	return sym && sl->sym == sym ? sl->s : NULL;
}

int ptw_em_xform_fast(struct ptw_emit *em, const struct ptw_cv_event *ev,
		      int *rc, struct ptw_error *err)
{
	/* em->fast_ok: an AppleTrace run, no pid/tid remapping */
	if ((ev->ph != 'B' && ev->ph != 'E') || ev->flags != PTW_EM_FAST_FLAGS ||
	    ev->n_args || ev->ts_ns < 0 ||
	    ev->ts_ns > INT64_MAX - (em->shift_ns > 0 ? em->shift_ns : 0))
		return 0;
	int64_t ts = ev->ts_ns + em->shift_ns;
	/* tid 0 is the pid's main thread, with a LIFO stack of its own */
	int raw_tid0 = ev->tid == 0 && ev->pid != 0;
	uint32_t tid = ev->tid ? ev->tid : ev->pid;
	struct ptw_em_thread *th = em->th_cache[ptw_em_th_slot(tid)];
	if (ts < 0 || !th || th->pid != ev->pid || th->tid != tid ||
	    (th->has_last && ts <= th->last_ts))
		return 0;
	size_t queued = th->n - th->head;
	if (queued > 1 || (queued == 1 && th->q[th->head].ts >= ts))
		return 0;
	const char *sname = NULL, *scat = NULL;
	struct ptw_em_lifo *l = &th->lifo[raw_tid0];
	if (ev->ph == 'B') {
		if (!ev->name.n || !(sname = ptw_em_fast_sym(em, ev->name_sym)) ||
		    (ev->cat.n && !(scat = ptw_em_fast_sym(em, ev->cat_sym))) ||
		    l->n == l->cap || th->cap == 0)
			return 0;
	}

	/* From here on the event is ours. */
	em->st.events_in++;
	em->st.by_phase[(unsigned char)ev->ph]++;
	em->st.short_path++;
	th->last_ts = ts;
	th->has_last = 1;
	if (queued) {
		*rc = ptw_em_write_item(em, th, &th->q[th->head], err);
		if (*rc)
			return 1;
	}
	th->head = th->n = 0;
	th->arena.len = 0;
	th->compact_at = 0;
	uint64_t seq = ++em->next_seq;
	if (ev->ph == 'E' && !l->n) {
		em->st.dropped++; /* unmatched E */
		*rc = 0;
		return 1;
	}
	struct ptw_em_item *it = &th->q[0];
	memset(it, 0, sizeof(*it));
	it->ts = ts;
	it->seq = seq;
	it->id = ++em->next_item;
	it->stable = 1;
	if (ev->ph == 'B') {
		it->kind = PTW_EM_BEGIN;
		it->state = PTW_EM_UNRESOLVED;
		it->sname = sname;
		it->scat = scat;
		l->b[l->n].id = it->id;
		l->b[l->n++].ts = ts;
	} else {
		/* Its B is not queued (older ts, released): a nameless end. */
		l->n--;
		it->kind = PTW_EM_END;
		it->sname = ptw_em_empty;
	}
	th->n = 1;
	if (em->st.max_queue < 1)
		em->st.max_queue = 1;
	*rc = 0;
	return 1;
}
