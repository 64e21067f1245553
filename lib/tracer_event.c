/* tracer_event.c - the producer's enabled path for one-slot events (BEGIN,
 * END, INSTANT, counters): the macros inline only the enable check and
 * call this, so a disabled macro costs a load and a branch and leaves the
 * caller's code small (bench_tracer: producer_ns_per_event_disabled_16sites).
 * SPDX-License-Identifier: Apache-2.0 */
#include "ptw/tracer.h"
#include "tracer_internal.h"

/* Resolves site and thread, then writes one slot (see tracer.h). */
int ptw_i_ev1_gen(struct ptw_i_site *site, uint32_t g, uint32_t kind,
		  const char *name, uint64_t val)
{
	uint32_t s = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
	struct ptw_i_thread *t = ptw_i_self;
	if (__builtin_expect(s != g || !t || t->gen != g, 0)) {
		if (s == ~g)
			return 0; /* category disabled (cached) */
		if (!(t = ptw_i_thread_slow(site, g)))
			return 0;
	}
	uint64_t ts = ptw_i_now(t->gen);
	if (kind == PTW_I_K_END && ptw_tr_end_was_lost(t))
		return 1;
	struct ptw_ring *r = &t->ring;
	/* Producer-only check against the cached head; the slow path also
	 * handles pending drop notes, full rings and the overflow policy. */
	uint64_t i = atomic_load_explicit(&r->tail, memory_order_relaxed);
	if (__builtin_expect(i - r->head_cache >= r->p_mask + 1, 0) &&
	    !ptw_i_reserve_slow(t, kind, 1, &i))
		return kind == PTW_I_K_BEGIN;
	if (kind == PTW_I_K_BEGIN)
		t->depth++;
	struct ptw_i_rec *rec = ptw_ring_slot_producer(r, i);
	rec->ts = ts;
	rec->kind = (uint8_t)kind;
	rec->nargs = 0;
	rec->name_len = 0;
	rec->extra = 0;
	rec->name = name;
	if (kind <= PTW_I_K_INSTANT)
		rec->v.cat = site->cat;
	else
		rec->v.u = val;
	ptw_ring_commit(r, i + 1);
	return 1;
}

