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
 * (ptw_em_short_counter, as ptw_em_counter would write it).
 *
 * In X form the short path also prepares the packet of the item it queues
 * (ptw_em_prep_make); releasing it is then a copy through the writer's
 * framing (ptw_em_prep_write). In a batch, events on threads the short
 * path already serves go through the lane (ptw_em_lane), which does the
 * same with fewer checks; its assumptions hold while the emitter's epoch
 * has not moved (emit_internal.h). */
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

/* The X-form lane keeps, per thread, the iids of the names its events
 * used (th->lane_slot: sym << 8 | iid, for iids below 128) and of the
 * category (lane_ci, for lane_scat), valid for the sequence's cp_gen
 * lane_gen. Forgets them when the generation or the category changes. */
static inline void ptw_em_lane_sync(struct ptw_em_thread *th,
				    const struct ptw_seq *s, const char *scat,
				    uint64_t ci)
{
	if (th->lane_gen == s->cp_gen && th->lane_scat == scat &&
	    th->lane_ci == ci)
		return;
	memset(th->lane_slot, 0, sizeof(th->lane_slot));
	th->lane_gen = s->cp_gen;
	th->lane_scat = scat;
	th->lane_ci = (uint8_t)ci;
}

/* Prepares the packet of X-form item 'it' (phase 'ph', name number
 * 'sym'), just queued by the short path on a thread with a sequence of
 * its own: the TrackEvent body with the iids its names have now. Without
 * them (a name not yet interned in this generation) nothing is
 * prepared, and the item is released as any other. Also opens the
 * thread's lane (ptw_em_lane) for this epoch. */
static inline __attribute__((always_inline)) void
ptw_em_prep_make(struct ptw_emit *em, struct ptw_em_thread *th,
		 const struct ptw_em_item *it, char ph, uint64_t sym)
{
	struct ptw_em_prep *pp = &th->prep;
	pp->id = 0;
	/* what ptw_em_write_simple requires of the thread, fixed until
	 * the epoch changes */
	if (!th->own_seq || !th->uuid || th->n_next_in)
		return;
	struct ptw_seq *s = th->seq;
	uint64_t ci = 0, ni = 0;
	int type = PTW_TE_TYPE_SLICE_END;
	pp->depth_d = -1;
	if (ph != 'E') {
		ni = ptw_intern_get_ptr(s->names, it->sname);
		if (it->scat)
			ci = ptw_intern_get_ptr(s->cats, it->scat);
		if (!ni || (it->scat && !ci))
			return;
		type = ph == 'B' ? PTW_TE_TYPE_SLICE_BEGIN : PTW_TE_TYPE_INSTANT;
		pp->depth_d = ph == 'B';
		if (ni < 128 && ci < 128 && sym && sym < (1ull << 56)) {
			ptw_em_lane_sync(th, s, it->scat, ci);
			struct ptw_em_lane_slot *sl =
				&th->lane_slot[sym & (PTW_EM_LANE_SLOTS - 1)];
			sl->key = sym << 8 | ni;
			sl->sname = it->sname;
		}
	}
	pp->body_len = (uint8_t)ptw_seq_body_prepare(pp->body, type, ci, ni);
	pp->id = it->id;
	th->lane_epoch = em->epoch;
}

/* 1 if the queued item 'q' can be released through its prepared packet
 * now, as ptw_em_write_simple would write it. Changes nothing. */
static inline __attribute__((always_inline)) int
ptw_em_prep_ok(const struct ptw_emit *em, const struct ptw_em_thread *th,
	       const struct ptw_em_item *q, int lane)
{
	const struct ptw_em_prep *pp = &th->prep;
	const struct ptw_seq *s = th->seq;
	/* the lane checked lane_epoch already; the short core has not */
	if (pp->id != q->id || (!lane && th->lane_epoch != em->epoch) ||
	    !ptw_seq_fast_ready(s))
		return 0;
	/* room to push the model (any kind: ptw_em_prep_write's store is
	 * unconditional) */
	size_t mn = th->model_n;
	if (__builtin_expect(mn == th->model_cap, 0))
		return 0;
	/* An end must close an open slice without flows. Tested without a
	 * branch on the item's kind: the kinds come in random order, and
	 * such a branch mispredicts. model[0] is set once the model has
	 * room (its first push). */
	const struct ptw_track *tr = &s->w->tracks.v[th->uuid - 1];
	const struct ptw_em_open *top = &th->model[mn - (mn != 0)];
	uint64_t flows;
	memcpy(&flows, &top->n_out, sizeof(flows)); /* n_out and n_in */
	unsigned end_bad = (tr->depth == 0) | (mn == 0) | (flows != 0);
	return !__builtin_expect((pp->depth_d < 0) & end_bad, 0);
}

/* Writes the queued item 'q' through its prepared packet (after
 * ptw_em_prep_ok): the packet, the track's depth, the model and the
 * counts, as ptw_em_write_simple. Returns the writer's code. */
static inline __attribute__((always_inline)) int
ptw_em_prep_write(struct ptw_emit *em, struct ptw_em_thread *th,
		  const struct ptw_em_item *q)
{
	const struct ptw_em_prep *pp = &th->prep;
	struct ptw_seq *s = th->seq;
	int d = pp->depth_d;
	size_t mn = th->model_n;
	int r = ptw_seq_write_body(s, (uint64_t)q->ts, pp->body, pp->body_len);
	s->w->tracks.v[th->uuid - 1].depth += (uint32_t)d;
	struct ptw_em_open *o = &th->model[mn]; /* a begin's, else unused */
	o->name_h = o->cat_h = 0;
	o->n_out = o->n_in = 0;
	th->model_n = mn + (size_t)d;
	if (__builtin_expect(r != 0, 0))
		th->model_n -= d > 0; /* as ptw_em_write_simple: no push */
	return r;
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
		if (ptw_em_prep_ok(em, th, q, 0)) {
			*rc = ptw_em_prep_write(em, th, q);
			em->st.open_slices += th->prep.depth_d > 0;
			em->st.instants += th->prep.depth_d == 0;
			*rc = *rc ? ptw_em_writer_fail(em, *rc, err) : 0;
		} else if (ptw_em_write_simple(em, th, q, rc))
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
	if (xform)
		ptw_em_prep_make(em, th, it, ph, name_sym);
	if (em->st.max_queue < 1)
		em->st.max_queue = 1;
	return 1;
}

/* The lane builds packet bytes in little-endian words. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PTW_EM_LANE_HOST 1
#else
#define PTW_EM_LANE_HOST 0
#endif

/* What stays fixed during one batch, for the lane, and the counts the
 * lane keeps locally until the batch ends (ptw_em_lane_tally). */
struct ptw_em_lane_ctx {
	int64_t shift_ns, ts_in_max;
	const char *scat;   /* the batch's stable category (NULL: none) */
	uint32_t pid;
	int tid0_own;       /* pid != 0: raw tid 0 has a LIFO stack of its own */
	uint64_t by_b, by_e, by_i, open_slices, instants, dropped, lane;
};

/* The X-form lane: the short path again, for a batch event (B, E or i) on
 * a thread whose last event the short path took in this epoch
 * (lane_epoch), whose queued item, if any, is prepared, and whose name
 * iid is in the thread's lane slots (a slot exists only for a name the
 * short core found non-empty and stable: within an input a number
 * always stands for the same text). It does what ptw_em_short_core does
 * for such an event, in fewer steps and without branching on the queued
 * item's kind: every check first, then the queued item's packet, then the
 * new item and its prepared packet.
 *
 * What it relies on, from lane_epoch == em->epoch: since the short core
 * last queued an item on th in this epoch, only the short core and the
 * lane touched th (a general-path call, flush or input change moves the
 * epoch); so th->head is 0, the arena and compaction mark are reset, the
 * sequence has not been checkpointed between an item's preparation and
 * its release (fast_left covers the release itself), and q[0] holds an
 * item whose constant fields (no payload, flows or duration, stable
 * names) the short core or the lane set: only the varying ones are
 * written. Returns 1 with *rc set if it took the event, else 0 having
 * changed nothing (the short core then decides). */
static inline __attribute__((always_inline)) int
ptw_em_lane(struct ptw_emit *em, struct ptw_em_lane_ctx *c,
	    const struct ptw_cv_simple *e, int *rc, struct ptw_error *err)
{
	uint32_t raw_tid = e->tid;
	uint32_t tid = raw_tid ? raw_tid : c->pid;
	struct ptw_em_thread *th = em->th_cache[ptw_em_th_slot(tid)];
	if (!th || th->lane_epoch != em->epoch || th->pid != c->pid ||
	    th->tid != tid)
		return 0;
	/* the short core took an event on th: has_last, last_ts >= 0 */
	int64_t ts = e->ts_ns + c->shift_ns;
	if (e->ts_ns > c->ts_in_max || ts <= th->last_ts)
		return 0;
	char ph = e->ph;
	struct ptw_em_lifo *l = th->lifo + ((raw_tid == 0) & c->tid0_own);
	const struct ptw_seq *s = th->seq;
	const char *sname = ptw_em_empty, *icat = NULL;
	uint64_t body = PTW_PB_TAG(PTW_F_TE_TYPE, PTW_PB_WT_VARINT) |
			(uint64_t)PTW_TE_TYPE_SLICE_END << 8;
	unsigned blen = 2;
	int d = -1;
	if (ph != 'E') {
		uint64_t sym = e->name_sym;
		const struct ptw_em_lane_slot *sl =
			&th->lane_slot[sym & (PTW_EM_LANE_SLOTS - 1)];
		uint64_t key = sl->key;
		if ((key >> 8) != sym || !(key & 0xFF) ||
		    th->lane_gen != s->cp_gen || th->lane_scat != c->scat ||
		    (ph == 'B' && l->n == l->cap))
			return 0;
		sname = sl->sname;
		icat = c->scat;
		d = ph == 'B';
		body = ptw_seq_body_small(d ? PTW_TE_TYPE_SLICE_BEGIN
					    : PTW_TE_TYPE_INSTANT,
					  th->lane_ci, key & 0xFF, &blen);
	}
	size_t queued = th->n; /* head is 0 */
	const struct ptw_em_item *q = &th->q[0];
	if (queued > 1 || (queued && !ptw_em_prep_ok(em, th, q, 1)))
		return 0;

	/* From here on the event is ours. */
	th->last_ts = ts;
	*rc = 0;
	c->lane++;
	if (queued) {
		const struct ptw_em_prep *pp = &th->prep;
		int r = ptw_em_prep_write(em, th, q);
		c->open_slices += pp->depth_d > 0;
		c->instants += pp->depth_d == 0;
		if (r) {
			*rc = ptw_em_writer_fail(em, r, err);
			return 1;
		}
	}
	uint64_t seq = ++em->next_seq;
	if (ph == 'B') {
		c->by_b++;
	} else if (ph == 'E') {
		c->by_e++;
		if (!l->n) {
			th->n = 0;
			c->dropped++; /* unmatched E */
			return 1;
		}
	} else {
		c->by_i++;
	}
	struct ptw_em_item *it = &th->q[0];
	uint64_t id = ++em->next_item;
	it->ts = ts;
	it->sname = sname;
	it->scat = icat;
	it->seq = seq;
	it->id = id;
	it->state = 0; /* PTW_EM_UNRESOLVED for a begin; unused otherwise */
	if (ph == 'B') {
		it->kind = PTW_EM_BEGIN;
		l->b[l->n].id = id;
		l->b[l->n++].ts = ts;
	} else if (ph == 'E') {
		it->kind = PTW_EM_END;
		l->n--; /* its B was released: a nameless end */
	} else {
		it->kind = PTW_EM_INSTANT;
	}
	th->n = 1;
	struct ptw_em_prep *pp = &th->prep;
	memcpy(pp->body, &body, sizeof(body));
	pp->body_len = (uint8_t)blen;
	pp->depth_d = (int8_t)d;
	pp->id = id;
	return 1;
}

/* Adds the lane's counts to the statistics. */
static void ptw_em_lane_tally(struct ptw_emit *em, struct ptw_em_lane_ctx *c)
{
	em->st.by_phase['B'] += c->by_b;
	em->st.by_phase['E'] += c->by_e;
	em->st.by_phase['i'] += c->by_i;
	em->st.open_slices += c->open_slices;
	em->st.instants += c->instants;
	em->st.dropped += c->dropped;
	em->st.lane += c->lane;
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

/* 1 if key[0, key_n) is the last counter arg key (em->ctr_key), the one
 * the counter short path knows tracks for. */
static inline int ptw_em_ctr_key_is(const struct ptw_emit *em, const char *key,
				    size_t key_n)
{
	return em->ctr_key && key_n == em->ctr_key_n &&
	       memcmp(key, em->ctr_key, key_n) == 0;
}

/* A counter sample (C with one numeric argument whose key is em->ctr_key:
 * key_ok, see ptw_em_ctr_key_is) on a process whose track is written and
 * whose counter track for this name and key is cached (as ptw_em_counter
 * finds it): written straight away. 'batch' as for ptw_em_short_core.
 * Returns 1 with *rc set if it took the event, else 0 having changed
 * nothing. */
static inline __attribute__((always_inline)) int
ptw_em_short_counter_core(struct ptw_emit *em, int batch, uint32_t pid,
			  int64_t ts_ns, int has_name, uint64_t name_sym,
			  int key_ok, int is_int, int64_t iv, double dv,
			  int *rc, struct ptw_error *err)
{
	if (!key_ok || ts_ns < 0 || ts_ns > em->ts_in_max || !em->last_proc ||
	    em->last_pid != pid)
		return 0;
	int64_t ts = ts_ns + em->shift_ns;
	uint64_t parent = em->procs[em->last_proc - 1].uuid;
	const char *sn = has_name ? ptw_em_fast_sym(em, name_sym) : NULL;
	if (ts < 0 || !parent || !sn)
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
		ptw_em_ctr_key_is(em, a->key.p ? a->key.p : "",
				  a->key.p ? a->key.n : 0),
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
	/* the batch's stable category, for the lane (none found: no lane) */
	struct ptw_em_lane_ctx c = {
		.shift_ns = em->shift_ns,
		.ts_in_max = em->ts_in_max, .pid = b->pid,
		.tid0_own = b->pid != 0,
		.scat = cat_n ? ptw_em_fast_sym(em, b->cat_sym) : NULL};
	int lane = PTW_EM_LANE_HOST && (!cat_n || c.scat);
	/* the batch's one value key; no general path runs in a batch, so
	 * em->ctr_key cannot change during it */
	int key_ok = ptw_em_ctr_key_is(em, key, key_n);
	int rc = 0;
	for (i = 0; i < b->n; i++) {
		const struct ptw_cv_simple *e = &b->ev[i];
		int took = e->ph == 'C'
			? ptw_em_short_counter_core(
				  em, 1, b->pid, e->ts_ns, 1, e->name_sym,
				  key_ok, e->is_int, e->i, e->d, &rc, err)
			: (lane && ptw_em_lane(em, &c, e, &rc, err)) ||
				  ptw_em_short_core(em, 1, 1, e->ph, b->pid,
						    e->tid, e->ts_ns, e->name.n,
						    e->name_sym, cat_n,
						    b->cat_sym, NULL, &rc, err);
		if (!took)
			break;
		if (rc) {
			i++; /* taken, and failed */
			break;
		}
	}
	ptw_em_lane_tally(em, &c);
	*taken = i;
	em->st.events_in += i;
	em->st.short_path += i;
	em->st.batched += i;
	return rc;
}
