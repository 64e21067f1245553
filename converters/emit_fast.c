/* emit_fast.c - the emitter's short path for the bulk of a trace: a B, E
 * or thread-scoped instant with no arguments, ids or flows, on a thread
 * seen before, whose queue holds at most one event, older than this one.
 * SPDX-License-Identifier: Apache-2.0
 *
 * It does exactly what the general path (emit.c ptw_em_thread_event, then
 * emit_thread.c) does for such an event, without its generality: the one
 * queued event is released (written) because a later timestamp arrived,
 * and the new event becomes the only queued one. For an AppleTrace run (X
 * form), a B is queued open and pushed on the thread's LIFO stack, and an
 * E pops the stack and is queued as a nameless end (its B was written
 * already: it had an older timestamp). An instant, and for Chrome input a
 * B or E, is queued as the general path queues it. Anything else returns
 * 0 before changing any state, and the caller takes the general path; the
 * tests compare the two paths' output byte for byte.
 *
 * Two more doors share it: ptw_emit_simple_batch() takes runs of such
 * events from the APLTRC01 reader in one call (same core, no struct
 * ptw_cv_event per event), and a counter sample (C with one numeric
 * argument) whose process and counter track are known is written at once
 * (ptw_em_short_counter, as ptw_em_counter would write it). */
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

/* The stable name and category a Chrome event is queued with (as
 * ptw_em_thread_event and ptw_em_queue choose them); 0 if they cannot be
 * stored (then the general path packs them). */
static int ptw_em_fast_chrome_names(struct ptw_emit *em,
				    const struct ptw_cv_event *ev,
				    const char **sname, const char **scat)
{
	const char *nm = ev->name.p ? ev->name.p : "";
	size_t nn = ev->name.p ? ev->name.n : 0;
	if (ev->ph != 'E' && !nn) {
		nm = PTW_EM_NO_NAME; /* shown as trace_processor shows it */
		nn = sizeof(PTW_EM_NO_NAME) - 1;
	}
	*sname = ptw_em_strs_get(&em->strs, nm, nn);
	*scat = NULL;
	if (*sname && ev->cat.p && ev->cat.n)
		*scat = ptw_em_strs_get(&em->strs, ev->cat.p, ev->cat.n);
	return *sname && (!ev->cat.p || !ev->cat.n || *scat);
}

/* The short path once the event's fields are known: 'ph' is B, E or a
 * thread-scoped instant, with pid, tid, a timestamp and no arguments,
 * ids or flows; ts_ns >= 0. 'xform' is em->mode == PTW_EMIT_XFORM; 'ev'
 * gives a Chrome event's names (unused in X form, where names are found
 * by their numbers). 'batch': the caller counts the events it took in
 * events_in and short_path. Returns 1 with *rc set (0 or an error) if it
 * took the event, else 0 having changed nothing. */
static inline __attribute__((always_inline)) int
ptw_em_short_core(struct ptw_emit *em, int xform, int batch, char ph,
		  uint32_t pid, uint32_t raw_tid, int64_t ts_ns, size_t name_n,
		  uint64_t name_sym, size_t cat_n, uint64_t cat_sym,
		  const struct ptw_cv_event *ev, int *rc, struct ptw_error *err)
{
	if (ts_ns > em->ts_in_max)
		return 0;
	int64_t ts = ts_ns + em->shift_ns;
	/* tid 0 is the pid's main thread (X form: with a LIFO stack of its
	 * own) */
	int raw_tid0 = raw_tid == 0 && pid != 0;
	uint32_t tid = raw_tid ? raw_tid : pid;
	struct ptw_em_thread *th = em->th_cache[ptw_em_th_slot(tid)];
	if (ts < 0 || !th || th->pid != pid || th->tid != tid ||
	    (th->has_last && ts <= th->last_ts) || th->cap == 0)
		return 0;
	size_t queued = th->n - th->head;
	if (queued > 1 || (queued == 1 && th->q[th->head].ts >= ts))
		return 0;
	const char *sname = ptw_em_empty, *scat = NULL;
	struct ptw_em_lifo *l = &th->lifo[raw_tid0];
	if (!xform) {
		if (!ptw_em_fast_chrome_names(em, ev, &sname, &scat))
			return 0;
	} else if (ph != 'E') {
		if (!name_n || !(sname = ptw_em_fast_sym(em, name_sym)) ||
		    (cat_n && !(scat = ptw_em_fast_sym(em, cat_sym))) ||
		    (ph == 'B' && l->n == l->cap))
			return 0;
	}

	/* From here on the event is ours. */
	if (!batch) {
		em->st.events_in++;
		em->st.short_path++;
	}
	em->st.by_phase[(unsigned char)ph]++;
	th->last_ts = ts;
	th->has_last = 1;
	if (queued) {
		const struct ptw_em_item *q = &th->q[th->head];
		if (ptw_em_write_simple(em, th, q, rc))
			*rc = *rc ? ptw_em_writer_fail(em, *rc, err) : 0;
		else
			*rc = ptw_em_write_item(em, th, q, err);
		if (*rc)
			return 1;
	}
	th->head = th->n = 0;
	th->arena.len = 0;
	th->compact_at = 0;
	uint64_t seq = ++em->next_seq;
	*rc = 0;
	if (xform && ph == 'E' && !l->n) {
		em->st.dropped++; /* unmatched E */
		return 1;
	}
	/* every field set (no memset: see ptw_em_fast_write) */
	struct ptw_em_item *it = &th->q[0];
	it->ts = ts;
	it->sname = sname;
	it->scat = scat;
	it->dur = 0;
	it->seq = seq;
	it->id = ++em->next_item;
	it->flow_id = 0;
	it->data = it->data_len = 0;
	it->state = 0;
	it->flow_ph = it->raw_end = it->e_late = it->cls = 0;
	it->stable = 1;
	if (ph == 'B') {
		it->kind = PTW_EM_BEGIN;
		if (xform) {
			it->state = PTW_EM_UNRESOLVED;
			l->b[l->n].id = it->id;
			l->b[l->n++].ts = ts;
		} else {
			it->state = PTW_EM_RAW;
		}
	} else if (ph == 'E') {
		it->kind = PTW_EM_END;
		if (xform) {
			/* Its B is not queued (older ts, released): a
			 * nameless end. */
			l->n--;
		} else {
			/* matched by name and category when written */
			it->raw_end = 1;
			it->e_late = !em->seen_x;
		}
	} else {
		it->kind = PTW_EM_INSTANT;
	}
	th->n = 1;
	if (em->st.max_queue < 1)
		em->st.max_queue = 1;
	return 1;
}

/* Takes the event if it fits the short path: returns 1 with *rc set (0 or
 * an error), else 0 having changed nothing. */
static inline int ptw_em_short_path(struct ptw_emit *em,
				    const struct ptw_cv_event *ev, int *rc,
				    struct ptw_error *err)
{
	/* em->fast_ok: no pid/tid remapping */
	int instant = (ev->ph == 'i' || ev->ph == 'I') && ev->scope != 'g' &&
		      ev->scope != 'p';
	if ((ev->ph != 'B' && ev->ph != 'E' && !instant) ||
	    ev->flags != PTW_EM_FAST_FLAGS || ev->n_args || ev->ts_ns < 0)
		return 0;
	return ptw_em_short_core(em, em->mode == PTW_EMIT_XFORM, 0, ev->ph,
				 ev->pid, ev->tid, ev->ts_ns, ev->name.n,
				 ev->name_sym, ev->cat.n, ev->cat_sym, ev, rc,
				 err);
}

/* A counter sample (C with one numeric argument, named key[0, key_n)) on
 * a process whose track is written and whose counter track for this name
 * and key is cached (as ptw_em_counter finds it): written straight away.
 * 'batch' as for ptw_em_short_core. Returns 1 with *rc set if it took the
 * event, else 0 having changed nothing. */
static inline __attribute__((always_inline)) int
ptw_em_short_counter_core(struct ptw_emit *em, int batch, uint32_t pid,
			  int64_t ts_ns, int has_name, uint64_t name_sym,
			  const char *key, size_t key_n, int is_int, int64_t iv,
			  double dv, int *rc, struct ptw_error *err)
{
	if (ts_ns < 0 || ts_ns > em->ts_in_max || !em->last_proc ||
	    em->last_pid != pid)
		return 0;
	int64_t ts = ts_ns + em->shift_ns;
	uint64_t parent = em->procs[em->last_proc - 1].uuid;
	const char *sn = has_name ? ptw_em_fast_sym(em, name_sym) : NULL;
	if (ts < 0 || !parent || !sn || !em->ctr_key ||
	    key_n != em->ctr_key_n || memcmp(key, em->ctr_key, key_n) != 0)
		return 0;
	const struct ptw_em_ctr_slot *cs =
		ptw_em_ctr_slot(em->ctr_cache, parent, sn, em->ctr_key);
	if (cs->parent != parent || cs->name != sn || cs->key != em->ctr_key)
		return 0;
	if (!batch) {
		em->st.events_in++;
		em->st.short_path++;
	}
	em->st.by_phase['C']++;
	*rc = ptw_em_counter_sample(em, cs->track, ts, is_int, iv, dv, err);
	return 1;
}

/* The same for a struct ptw_cv_event. */
static inline int ptw_em_short_counter(struct ptw_emit *em,
				       const struct ptw_cv_event *ev, int *rc,
				       struct ptw_error *err)
{
	const struct ptw_cv_arg *a = ev->args;
	if (ev->flags != PTW_EM_FAST_FLAGS || ev->n_args != 1 ||
	    (a->type != PTW_CV_VAL_INT && a->type != PTW_CV_VAL_DOUBLE))
		return 0;
	return ptw_em_short_counter_core(
		em, 0, ev->pid, ev->ts_ns, ev->name.p != NULL, ev->name_sym,
		a->key.p ? a->key.p : "", a->key.p ? a->key.n : 0,
		a->type == PTW_CV_VAL_INT, a->i, a->d, rc, err);
}

/* The emitter's front door lives here so that the short path is inlined
 * into it; the general path is a call away (emit.c). */
int ptw_emit_event(void *ctx, const struct ptw_cv_event *ev,
		   struct ptw_error *err)
{
	struct ptw_emit *em = ctx;
	if (__builtin_expect(!em || !ev || !em->in_input, 0))
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "emit: event outside an input");
	int rc;
	if (em->fast_ok && (ev->ph == 'C' ? ptw_em_short_counter(em, ev, &rc, err)
					  : ptw_em_short_path(em, ev, &rc, err)))
		return rc;
	return ptw_em_general_event(em, ev, err);
}

int ptw_emit_simple_batch(void *ctx, const struct ptw_cv_batch *b,
			  size_t *taken, struct ptw_error *err)
{
	struct ptw_emit *em = ctx;
	*taken = 0;
	if (!em || !b || !em->in_input || !em->fast_ok ||
	    em->mode != PTW_EMIT_XFORM)
		return 0; /* each event then goes to ptw_emit_event */
	size_t cat_n = b->cat.p ? b->cat.n : 0, i;
	const char *key = b->value_key.p ? b->value_key.p : "";
	size_t key_n = b->value_key.p ? b->value_key.n : 0;
	int rc = 0;
	for (i = 0; i < b->n; i++) {
		const struct ptw_cv_simple *e = &b->ev[i];
		int took = e->ph == 'C'
			? ptw_em_short_counter_core(
				  em, 1, b->pid, e->ts_ns, 1, e->name_sym, key,
				  key_n, e->is_int, e->i, e->d, &rc, err)
			: ptw_em_short_core(em, 1, 1, e->ph, b->pid, e->tid,
					    e->ts_ns, e->name.n, e->name_sym,
					    cat_n, b->cat_sym, NULL, &rc, err);
		if (!took)
			break;
		if (rc) {
			i++; /* taken, and failed */
			break;
		}
	}
	*taken = i;
	em->st.events_in += i;
	em->st.short_path += i;
	em->st.batched += i;
	return rc;
}
