/* tracer_event.c - the producer's enabled path for one-slot events (BEGIN,
 * END, INSTANT, counters): the macros inline only the site's word check
 * and call this with the site (name and kind are in it), so a disabled
 * macro costs a load, a compare and a branch and leaves the caller's code
 * small (bench_tracer: producer_ns_per_macro_d0_peer_loop and _d1_).
 * SPDX-License-Identifier: Apache-2.0 */
#include "ptw/tracer.h"
#include "tracer_internal.h"

/* Resolves site and thread, then writes one slot (see tracer.h). */
static inline __attribute__((always_inline)) int
ptw_tr_ev1(struct ptw_i_site *site, uint64_t val)
{
	uint32_t g = __atomic_load_n(&ptw_i_gen, __ATOMIC_RELAXED);
	uint32_t s = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
	struct ptw_i_thread *t = ptw_i_self;
	if (__builtin_expect(s != g || !t || t->gen != g, 0)) {
		/* stopped (the site's word is set to 0 for its next calls),
		 * or the category found off in this generation (a change
		 * raced ahead of the site's word) */
		if (!(g & PTW_I_GEN_ON)) {
			ptw_i_site_stopped(site);
			return 0;
		}
		if (s == ~g)
			return 0;
		if ((s != PTW_TR_ST_ALT(g) && s != PTW_TR_ST_STACK(g)) || !t ||
		    t->gen != g)
			if (!(t = ptw_i_thread_slow(site, site->kind, g, &s)))
				return 0;
		if (s == PTW_TR_ST_STACK(t->gen)) /* (ptw_i_ev resolves it) */
			return ptw_i_emit_stack(site, PTW_I_K_BEGIN, site->name);
		if (s != t->gen) { /* PTW_TR_ST_ALT (tracer_internal.h) */
			if (site->kind == PTW_I_K_BEGIN)
				return ptw_tr_note_skip(t, site->cat);
			if (!ptw_tr_end_belongs(t, site->cat))
				return 0;
		}
	}
	uint32_t kind = site->kind;
	uint64_t ts = ptw_i_now(t->gen);
	if (kind == PTW_I_K_END && ptw_tr_end_was_lost(t))
		return 1;
	struct ptw_ring *r = &t->ring;
	/* Producer-only check against the cached head; the slow path also
	 * handles pending drop notes, full rings and the overflow policy. */
	uint64_t i = atomic_load_explicit(&r->tail, memory_order_relaxed);
	if (__builtin_expect(i - r->head_cache >= r->p_mask + 1, 0) &&
	    !ptw_i_reserve_slow(t, kind, 1, &i))
		return kind == PTW_I_K_BEGIN &&
		       ptw_tr_lost_cat(t, site->cat);
	if (kind == PTW_I_K_BEGIN)
		ptw_tr_push_cat(t, site->cat);
	struct ptw_i_rec *rec = ptw_ring_slot_producer(r, i);
	rec->ts = ts;
	rec->kind = (uint8_t)kind;
	rec->nargs = 0;
	rec->name_len = 0;
	rec->extra = 0;
	if (kind <= PTW_I_K_INSTANT) {
		rec->name = site->name;
		rec->v.cat = site->cat;
	} else {
		/* a counter: its site (with the name and the category,
		 * ptw_tr_rec_site), and its value */
		rec->name = (const char *)(const void *)site;
		rec->v.u = val;
	}
	ptw_ring_commit(r, i + 1);
	return 1;
}

/* A site's state in generation g, looked up (and the thread registered)
 * out of line, so that ptw_i_ev holds no local whose address escapes. */
static __attribute__((noinline, cold)) uint32_t
ptw_tr_ev_state(struct ptw_i_site *site, uint32_t g)
{
	uint32_t s = g;
	if (!ptw_i_thread_slow(site, site->kind, g, &s))
		return ~g;
	return s;
}

static __attribute__((noinline)) int ptw_tr_ev1_call(struct ptw_i_site *site,
						    uint64_t val)
{
	return ptw_tr_ev1(site, val);
}

/* ptw_i_ev for a site whose state is not the generation: a BEGIN of a
 * category of cfg.stack_categories (PTW_TR_ST_STACK) goes to the _STACK
 * path by a sibling call, so that the stack it captures starts at the
 * macro's function, as a _STACK macro's does (where the compiler makes no
 * sibling call, the backend leaves the tracer's frames out). Neither
 * function holds a local whose address escapes: that would forbid the
 * sibling calls. */
static __attribute__((noinline)) int ptw_tr_ev_other(struct ptw_i_site *site,
						     uint32_t g, uint32_t s)
{
	if (site->kind == PTW_I_K_BEGIN && (g & PTW_I_GEN_ON)) {
		if (s != PTW_TR_ST_STACK(g) && s != ~g &&
		    s != PTW_TR_ST_ALT(g))
			s = ptw_tr_ev_state(site, g); /* not known yet */
		if (s == PTW_TR_ST_STACK(g))
			return ptw_i_emit_stack(site, PTW_I_K_BEGIN, site->name);
	}
	return ptw_tr_ev1_call(site, 0);
}

int ptw_i_ev(struct ptw_i_site *site)
{
	uint32_t g = __atomic_load_n(&ptw_i_gen, __ATOMIC_RELAXED);
	uint32_t s = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
	if (__builtin_expect(s != g, 0))
		return ptw_tr_ev_other(site, g, s);
	return ptw_tr_ev1_call(site, 0);
}

int ptw_i_ev_val(struct ptw_i_site *site, uint64_t val)
{
	return ptw_tr_ev1(site, val);
}
