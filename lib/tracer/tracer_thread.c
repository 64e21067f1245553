/* tracer_thread.c - producer slow paths: thread registration, full rings
 * (drop or wait), multi-slot records, thread names and thread exit.
 * SPDX-License-Identifier: Apache-2.0 */
#include "lib/stack/stack.h"
#include "tracer_internal.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/os/os_thread.h"
#include "lib/util/grow.h"
#include "lib/util/utf8.h"
#include "ring_mem.h"
#include "sites.h"

#define PTW_TR_SLOT PTW_TRACER_SLOT_SIZE
/* A producer waiting for ring space yields for this long before it
 * sleeps: the backend frees space every PTW_TR_RELEASE_EVERY slots (a few
 * microseconds when it keeps up), and a sleep lasts tens of them. */
#define PTW_TR_YIELD_NS 200000u

static struct ptw_tr_thread *ptw_tr_me(void)
{
	return (struct ptw_tr_thread *)ptw_i_self;
}

void ptw_tr_thread_unref(struct ptw_tr_thread *t)
{
	if (!t)
		return;
	/* acq_rel: the last owner must see every write the other owner made
	 * before dropping its reference, and only then free. */
	if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) {
		ptw_tr_ring_mem_put(t->ring_mem, t->ring_bytes, t->ring_warm);
		free(t);
	}
}

static struct ptw_tr_thread *ptw_tr_thread_alloc(uint32_t slots)
{
	size_t sz = (sizeof(struct ptw_tr_thread) + PTW_RING_CACHELINE - 1) &
		    ~(size_t)(PTW_RING_CACHELINE - 1);
	struct ptw_tr_thread *t = aligned_alloc(PTW_RING_CACHELINE, sz);
	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	if (slots) {
		/* Default rings are reserved, not touched: a page takes memory
		 * when the ring reaches it, and the backend faults in the rest
		 * of a busy thread's ring (ring_mem.h). A program that asks for
		 * larger rings wants room for bursts at full speed: those are
		 * touched whole now, not on the producer's hot path. */
		size_t bytes = ptw_ring_memsize(PTW_TR_SLOT, slots);
		t->ring_mem = ptw_tr_ring_mem_get(bytes, &t->ring_warm);
		if (!t->ring_mem) {
			free(t);
			return NULL;
		}
		if (slots > PTW_DEFAULT_RING_SLOTS && !t->ring_warm) {
			memset(t->ring_mem, 0, bytes);
			t->ring_warm = 1;
		}
		t->ring_bytes = bytes;
		ptw_ring_init(&t->pub.ring, t->ring_mem, PTW_TR_SLOT, slots, 0);
	}
	atomic_init(&t->refs, 1);
	atomic_init(&t->exited, 0);
	atomic_init(&t->pub.dropped, 0);
	atomic_init(&t->waits, 0);
	return t;
}

/* The tracer-owned part of registration, under mu. Returns 0 or NOMEM. */
static int ptw_tr_list_add_locked(struct ptw_tracer *tr, struct ptw_tr_thread *t)
{
	struct ptw_tr_thread **nt = ptw_grow(tr->threads, &tr->cap_threads,
					     tr->n_threads + 1, 16,
					     sizeof(*nt));
	if (!nt)
		return PTW_ERR_NOMEM;
	tr->threads = nt;
	tr->threads[tr->n_threads++] = t;
	tr->n_registered++;
	return 0;
}

struct ptw_i_thread *ptw_i_thread_slow(struct ptw_i_site *site, uint32_t kind,
				       uint32_t g, uint32_t *st)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	struct ptw_tr_thread *fresh = NULL;
	uint32_t slots = 0;
	for (;;) {
		pthread_mutex_lock(&c->mu);
		struct ptw_tracer *tr = c->tr;
		/* A category change since the caller read the generation:
		 * go on with the current one (same session or a new one). */
		g = c->gen;
		if (!(g & PTW_I_GEN_ON) || !tr || c->stopping) {
			if (site)
				ptw_tr_sites_settle(site, 0, 0);
			pthread_mutex_unlock(&c->mu);
			if (fresh)
				ptw_tr_thread_unref(fresh);
			return NULL;
		}
		uint32_t s = g;
		struct ptw_tr_thread *t = ptw_tr_me();
		int mine = t && t->session == tr->session;
		if (site) {
			s = ptw_tr_site_state(site->cat, kind, g);
			__atomic_store_n(&site->state, s, __ATOMIC_RELAXED);
			/* Off: the macros skip the site inline until the next
			 * generation (tracer.h, ptw_i_live; sites.h). A BEGIN
			 * to note as skipped or an END to check, on a thread
			 * with nothing written yet in this session: no level
			 * is open. */
			ptw_tr_sites_settle(site, 1, s != ~g);
			if (s == ~g || (ptw_tr_st_plain(s, g) != g && !mine &&
					(kind == PTW_I_K_BEGIN ||
					 kind == PTW_I_K_END))) {
				pthread_mutex_unlock(&c->mu);
				if (fresh)
					ptw_tr_thread_unref(fresh);
				return NULL;
			}
		}
		if (st)
			*st = s;
		if (mine) {
			t->pub.gen = g;
			pthread_mutex_unlock(&c->mu);
			if (fresh)
				ptw_tr_thread_unref(fresh);
			return &t->pub;
		}
		if (fresh && slots == tr->ring_slots) {
			/* Publish: the session becomes the second owner. */
			if (ptw_tr_list_add_locked(tr, fresh)) {
				pthread_mutex_unlock(&c->mu);
				ptw_tr_thread_unref(fresh);
				return NULL;
			}
			fresh->session = tr->session;
			fresh->wait = tr->wait;
			atomic_store_explicit(&fresh->refs, 2, memory_order_relaxed);
			fresh->pub.gen = g;
			pthread_mutex_unlock(&c->mu);
			/* the previous record (older session or name-only) */
			if (t) {
				memcpy(fresh->carry_name, t->carry_name,
				       sizeof(fresh->carry_name));
				ptw_tr_thread_unref(t);
			}
			ptw_i_self = &fresh->pub;
			pthread_setspecific(c->key, fresh);
			return &fresh->pub;
		}
		slots = tr->ring_slots;
		pthread_mutex_unlock(&c->mu);

		/* Allocate outside the lock, then try again. */
		if (fresh)
			ptw_tr_thread_unref(fresh);
		fresh = ptw_tr_thread_alloc(slots);
		if (!fresh)
			return NULL;
		fresh->tid = ptw_os_thread_id();
		if (t && t->carry_name[0])
			memcpy(fresh->init_name, t->carry_name,
			       sizeof(fresh->init_name));
		else
			ptw_os_thread_name(fresh->init_name,
					   sizeof(fresh->init_name));
		fresh->init_name[PTW_TR_NAME_MAX - 1] = '\0';
	}
}

void ptw_i_site_stopped(struct ptw_i_site *site)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	if (!(c->gen & PTW_I_GEN_ON))
		ptw_tr_sites_settle(site, 0, 0);
	pthread_mutex_unlock(&c->mu);
}

/* Counts one lost event and makes the next event take the slow path,
 * which announces the loss in the ring before that event. */
static void ptw_tr_count_drop(struct ptw_i_thread *t)
{
	struct ptw_ring *r = &t->ring;
	t->pending_drops++;
	/* Single writer: a relaxed load + store is exact; the backend and
	 * ptw_get_stats() read it with acquire/seq_cst loads. */
	atomic_store_explicit(&t->dropped,
			      atomic_load_explicit(&t->dropped,
						   memory_order_relaxed) + 1,
			      memory_order_release);
	/* Pretend the ring is full (head_cache may lag the real head, never
	 * lead it), so the inline fast path calls ptw_i_reserve_slow. */
	r->head_cache = atomic_load_explicit(&r->tail, memory_order_relaxed) -
			r->p_mask - 1;
}

int ptw_i_end_lost(struct ptw_i_thread *t)
{
	uint64_t bit = (uint64_t)1 << t->depth;
	t->lost_levels &= ~bit;
	if (t->skip_levels & bit)
		t->skip_levels &= ~bit; /* skipped, not lost: not counted */
	else
		ptw_tr_count_drop(t);
	return 1;
}

/* Is the thread's session still the running one? (slow; takes mu) */
static int ptw_tr_session_alive(struct ptw_tr_thread *tt)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	int alive = c->tr && !c->stopping && c->tr->session == tt->session;
	if (alive)
		pthread_cond_signal(&c->wake); /* and wake the backend */
	pthread_mutex_unlock(&c->mu);
	return alive;
}

int ptw_i_reserve_slow(struct ptw_i_thread *t, uint32_t kind, uint64_t n,
		       uint64_t *idx)
{
	struct ptw_tr_thread *tt = (struct ptw_tr_thread *)t;
	struct ptw_ring *r = &t->ring;
	uint64_t cap = r->p_mask + 1;
	int waited = 0;
	uint64_t wait_start = 0;
	for (unsigned spin = 0;; spin++) {
		uint64_t tail = atomic_load_explicit(&r->tail,
						     memory_order_relaxed);
		/* Acquire pairs with the backend's release of head: slots
		 * below it are no longer read and may be overwritten. */
		r->head_cache = atomic_load_explicit(&r->head,
						     memory_order_acquire);
		uint64_t space = cap - (tail - r->head_cache);
		if (t->pending_drops && space >= 1) {
			/* Announce the losses first, in order, even if the
			 * event itself must still wait or be dropped. */
			struct ptw_i_rec *m = ptw_ring_slot_producer(r, tail);
			memset(m, 0, sizeof(*m));
			m->ts = ptw_i_now(t->gen);
			m->kind = PTW_I_K_DROPPED;
			m->v.u = t->pending_drops;
			t->pending_drops = 0;
			tail++;
			space--;
			ptw_ring_commit(r, tail);
		}
		if (n <= space) {
			*idx = tail;
			return 1;
		}
		/* Full. The END of a recorded slice, and a BEGIN too deep to
		 * be remembered as lost, wait instead of dropping, so the
		 * nesting in the trace stays exact (a thread name is not an
		 * event: it waits too). */
		int must_wait = tt->wait || kind == PTW_I_K_END ||
				kind == PTW_I_K_THREAD_NAME ||
				(kind == PTW_I_K_BEGIN && t->depth >= 64);
		if (n > cap)
			must_wait = 0;
		if (must_wait && (spin & 63) == 0 && !ptw_tr_session_alive(tt))
			must_wait = 0;
		if (!must_wait) {
			if (kind == PTW_I_K_BEGIN) {
				if (t->depth < 64)
					t->lost_levels |= (uint64_t)1 << t->depth;
				t->depth++;
			}
			ptw_tr_count_drop(t);
			return 0;
		}
		if (!waited) {
			waited = 1;
			atomic_fetch_add_explicit(&tt->waits, 1,
						  memory_order_relaxed);
			wait_start = ptw_i_now_slow(PTW_I_GEN_ON);
		}
		if (spin < 16 || ptw_i_now_slow(PTW_I_GEN_ON) - wait_start <
					 PTW_TR_YIELD_NS)
			sched_yield();
		else {
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
		}
	}
}

/* ---- multi-slot records ------------------------------------------------ */

static uint64_t ptw_tr_str_slots(size_t len)
{
	return (len + 1 + PTW_TR_SLOT - 1) / PTW_TR_SLOT;
}

/* Copies len bytes + NUL into slots k, k+1, ... */
static void ptw_tr_put_bytes(struct ptw_ring *r, uint64_t *k, const char *s,
			     size_t len)
{
	size_t done = 0;
	while (done <= len) {
		unsigned char *slot = ptw_ring_slot_producer(r, (*k)++);
		size_t chunk = len + 1 - done;
		if (chunk > PTW_TR_SLOT)
			chunk = PTW_TR_SLOT;
		if (done + chunk > len) {
			/* last chunk carries the NUL */
			memcpy(slot, s + done, chunk - 1);
			slot[chunk - 1] = '\0';
		} else {
			memcpy(slot, s + done, chunk);
		}
		done += chunk;
	}
}

static int ptw_tr_kind_has_id(uint32_t kind)
{
	return kind == PTW_I_K_ASYNC_BEGIN || kind == PTW_I_K_ASYNC_END ||
	       kind == PTW_I_K_FLOW_START || kind == PTW_I_K_FLOW_STEP ||
	       kind == PTW_I_K_FLOW_END || kind == PTW_I_K_LOG ||
	       (kind >= PTW_I_K_TRACK_BEGIN &&
		kind <= PTW_I_K_TRACK_COUNTER_DOUBLE);
}

/* A copied string's length: at most PTW_TRACER_MAX_NAME bytes, never
 * ending inside a UTF-8 character. */
static size_t ptw_tr_clip(const char *s)
{
	return s ? ptw_utf8_prefix(s, PTW_TRACER_MAX_NAME) : 0;
}

/* Writes one record of 'kind' for thread t (tracing runs, site enabled);
 * a counter's value is 'val' (the id slot, for kinds that have one,
 * holds 'id'). */
static int ptw_tr_write_n(struct ptw_i_thread *t,
			  const struct ptw_i_site *site, const char *cat,
			  uint32_t kind, const char *name, const char *dyn,
			  uint64_t id, uint64_t val, const struct ptw_arg *args,
			  size_t nargs)
{
	uint64_t ts = ptw_i_now(t->gen);
	if (nargs > PTW_TRACER_MAX_ARGS)
		nargs = PTW_TRACER_MAX_ARGS;
	size_t dyn_len = dyn ? ptw_tr_clip(dyn) : 0;
	uint64_t total = 1;
	if (dyn)
		total += ptw_tr_str_slots(dyn_len);
	if (ptw_tr_kind_has_id(kind))
		total++;
	for (size_t a = 0; a < nargs; a++) {
		total++;
		if (args[a].type == PTW_ARG_TYPE_STRING)
			total += ptw_tr_str_slots(ptw_tr_clip(args[a].v.s));
		else if (ptw_stk_is_arg(&args[a]))
			total += ptw_tr_str_slots(8u * args[a].v.nested.n);
	}
	struct ptw_ring *r = &t->ring;
	if (kind == PTW_I_K_END) {
		if (ptw_tr_end_was_lost(t))
			return 1;
		if (total > r->p_mask + 1) {
			/* An END never drops: without room for its arguments
			 * it goes out bare. */
			total = 1;
			nargs = 0;
		}
	}
	uint64_t i = atomic_load_explicit(&r->tail, memory_order_relaxed);
	if ((i - r->head_cache) + total > r->p_mask + 1 &&
	    !ptw_i_reserve_slow(t, kind, total, &i))
		return kind == PTW_I_K_BEGIN && ptw_tr_lost_cat(t, cat);
	if (kind == PTW_I_K_BEGIN)
		ptw_tr_push_cat(t, cat);
	struct ptw_i_rec *rec = ptw_ring_slot_producer(r, i);
	rec->ts = ts;
	rec->kind = (uint8_t)kind;
	rec->nargs = (uint8_t)nargs;
	rec->name_len = dyn ? (uint16_t)(dyn_len + 1) : 0;
	rec->extra = (uint32_t)(total - 1);
	/* a copied name's record keeps its site there (ptw_tr_rec_site) */
	rec->name = dyn ? (const char *)(const void *)site : name;
	if (ptw_tr_kind_is_counter(kind))
		rec->v.u = val; /* the value: a counter has no category */
	else
		rec->v.cat = cat;
	uint64_t k = i + 1;
	if (dyn)
		ptw_tr_put_bytes(r, &k, dyn, dyn_len);
	if (ptw_tr_kind_has_id(kind)) {
		uint64_t *slot = ptw_ring_slot_producer(r, k++);
		slot[0] = id;
	}
	for (size_t a = 0; a < nargs; a++) {
		struct ptw_i_arg_rec *ar = ptw_ring_slot_producer(r, k++);
		memset(ar, 0, sizeof(*ar));
		ar->name = args[a].name;
		ar->type = (uint8_t)args[a].type;
		switch ((int)args[a].type) {
		case PTW_ARG_TYPE_BOOL: ar->val = (uint64_t)(args[a].v.b != 0); break;
		case PTW_ARG_TYPE_INT: ar->val = (uint64_t)args[a].v.i; break;
		case PTW_ARG_TYPE_UINT: ar->val = args[a].v.u; break;
		case PTW_ARG_TYPE_POINTER: ar->val = args[a].v.u; break;
		case PTW_ARG_TYPE_DOUBLE: ar->val = ptw_i_dbl_bits(args[a].v.d); break;
		case PTW_I_ARG_FLOW: case PTW_I_ARG_TERMINATING_FLOW:
			ar->val = args[a].v.u;
			break;
		case PTW_ARG_TYPE_STRING: {
			const char *s = args[a].v.s ? args[a].v.s : "";
			size_t len = ptw_tr_clip(s);
			ar->str_len = (uint32_t)len;
			ptw_tr_put_bytes(r, &k, s, len);
			break;
		}
		default:
			if (ptw_stk_is_arg(&args[a])) { /* lib/stack/ */
				ar->type = PTW_I_ARG_STACK;
				ar->str_len = 8u * args[a].v.nested.n;
				ptw_tr_put_bytes(r, &k, (const char *)(const void *)
						 args[a].v.nested.items,
						 ar->str_len);
				break;
			}
			/* Not a type the ring carries: the backend drops the
			 * argument and counts it (ptw_get_stats().invalid) rather
			 * than write a value that was never logged. */
			ar->type = PTW_I_ARG_UNKNOWN;
			break;
		}
	}
	ptw_ring_commit(r, i + total);
	return 1;
}

/* The calling thread, ready to write an event of 'kind' at 'site'; NULL
 * if tracing is stopped or the event is skipped. *alt: the site is in
 * PTW_TR_ST_ALT (see tracer_internal.h). */
static struct ptw_i_thread *ptw_tr_resolve(struct ptw_i_site *site,
					   uint32_t kind, int *alt)
{
	uint32_t g = __atomic_load_n(&ptw_i_gen, __ATOMIC_RELAXED);
	if (!(g & PTW_I_GEN_ON)) {
		ptw_i_site_stopped(site);
		return NULL;
	}
	uint32_t s = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
	struct ptw_i_thread *t = ptw_i_self;
	if (s != g || !t || t->gen != g) {
		if (s == ~g)
			return NULL;
		if ((s != PTW_TR_ST_ALT(g) && s != PTW_TR_ST_STACK(g)) || !t ||
		    t->gen != g)
			t = ptw_i_thread_slow(site, kind, g, &s);
	}
	*alt = t && ptw_tr_st_plain(s, t->gen) != t->gen;
	return t;
}

/* An event of a site in PTW_TR_ST_ALT: 1 with *ret when it is not to be
 * written (a BEGIN noted as skipped, an END of another level). */
static int ptw_tr_alt_done(struct ptw_i_thread *t, const char *cat,
			   uint32_t kind, int *ret)
{
	if (kind == PTW_I_K_BEGIN) {
		*ret = ptw_tr_note_skip(t, cat);
		return 1;
	}
	*ret = 0;
	return kind == PTW_I_K_END && !ptw_tr_end_belongs(t, cat);
}

/* The calling thread if the site is on in its current generation (the
 * common case, no call), else NULL: then ptw_tr_resolve. */
static inline struct ptw_i_thread *ptw_tr_ready(const struct ptw_i_site *site)
{
	uint32_t g = __atomic_load_n(&ptw_i_gen, __ATOMIC_RELAXED);
	struct ptw_i_thread *t = ptw_i_self;
	if (__builtin_expect(__atomic_load_n(&site->state, __ATOMIC_RELAXED) ==
				     g && t && t->gen == g, 1))
		return t;
	return NULL;
}

int ptw_i_emit_n(struct ptw_i_site *site, uint32_t kind, const char *name,
		 const char *dyn_name, uint64_t id,
		 const struct ptw_arg *args, size_t nargs)
{
	struct ptw_i_thread *t = ptw_tr_ready(site);
	if (__builtin_expect(!t, 0)) {
		int alt, ret;
		if (!(t = ptw_tr_resolve(site, kind, &alt)))
			return 0;
		if (alt) {
			if (ptw_tr_alt_done(t, site->cat, kind, &ret))
				return ret;
			if (kind == PTW_I_K_ASYNC_END)
				name = ptw_tr_soft_end;
		}
	}
	/* a counter's record has its site in place of a literal name
	 * (tracer_internal.h): a name that is not the site's is copied */
	if (name && !dyn_name &&
	    (kind == PTW_I_K_COUNTER_INT || kind == PTW_I_K_COUNTER_DOUBLE)) {
		dyn_name = name;
		name = NULL;
	}
	if (!name && !dyn_name &&
	    (kind == PTW_I_K_BEGIN || kind == PTW_I_K_INSTANT ||
	     kind == PTW_I_K_COUNTER_INT || kind == PTW_I_K_COUNTER_DOUBLE ||
	     kind == PTW_I_K_LOG || kind == PTW_I_K_TRACK_BEGIN ||
	     kind == PTW_I_K_TRACK_INSTANT))
		dyn_name = "";
	return ptw_tr_write_n(t, site, site->cat, kind, name, dyn_name, id, id,
			      args,
			      nargs);
}

int ptw_i_emit_val(struct ptw_i_site *site, uint32_t kind, uint64_t track,
		   uint64_t val)
{
	struct ptw_i_thread *t = ptw_tr_ready(site);
	if (__builtin_expect(!t, 0)) {
		int alt;
		if (!(t = ptw_tr_resolve(site, kind, &alt)))
			return 0;
	}
	/* the record's name is the site: its category, for the outputs
	 * that take only theirs (tracer_sink.c) */
	return ptw_tr_write_n(t, site, site->cat, kind,
			      (const char *)(const void *)site, NULL, track,
			      val, NULL, 0);
}

/* The _FMT macros: formats only once the event is known to be recorded,
 * into the stack (a few bytes more than a copied name may hold, so that
 * the cut falls on a UTF-8 character boundary, see ptw_tr_clip). */
static inline __attribute__((always_inline)) int
ptw_tr_emit_vfmt(struct ptw_i_site *site, uint32_t kind, uint64_t id,
		 const char *fmt, va_list ap)
{
	struct ptw_i_thread *t = ptw_tr_ready(site);
	if (__builtin_expect(!t, 0)) {
		int alt, ret;
		if (!(t = ptw_tr_resolve(site, kind, &alt)))
			return 0;
		if (alt && ptw_tr_alt_done(t, site->cat, kind, &ret))
			return ret;
	}
	char buf[PTW_TRACER_MAX_NAME + 8];
	int n = fmt ? vsnprintf(buf, sizeof(buf), fmt, ap) : -1;
	if (n < 0)
		buf[0] = '\0';
	return ptw_tr_write_n(t, site, site->cat, kind, NULL, buf, id, id, NULL,
			      0);
}

int ptw_i_emit_fmt(struct ptw_i_site *site, uint32_t kind, const char *fmt,
		   ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = ptw_tr_emit_vfmt(site, kind, 0, fmt, ap);
	va_end(ap);
	return r;
}

int ptw_i_emit_fmt_id(struct ptw_i_site *site, uint32_t kind, uint64_t id,
		      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = ptw_tr_emit_vfmt(site, kind, id, fmt, ap);
	va_end(ap);
	return r;
}

/* ---- thread names and exit --------------------------------------------- */

int ptw_set_thread_name(const char *name)
{
	if (!name)
		return PTW_ERR_INVALID;
	ptw_tr_ctl_init_once();
	struct ptw_tr_thread *t = ptw_tr_me();
	uint32_t g = __atomic_load_n(&ptw_i_gen, __ATOMIC_RELAXED);
	if (g & PTW_I_GEN_ON) {
		struct ptw_i_thread *pt = ptw_i_thread_slow(NULL, 0, g, NULL);
		if (pt) {
			t = (struct ptw_tr_thread *)pt;
			ptw_utf8_copy(t->carry_name, sizeof(t->carry_name), name);
			(void)ptw_tr_write_n(pt, NULL, "", PTW_I_K_THREAD_NAME,
					     NULL, t->carry_name, 0, 0, NULL,
					     0);
			return 0;
		}
		t = ptw_tr_me();
	}
	if (!t) {
		/* Not tracing yet: a ring-less record carries the name into
		 * the thread's first session. */
		t = ptw_tr_thread_alloc(0);
		if (!t)
			return PTW_ERR_NOMEM;
		/* never a generation (TSC and BOOTTIME bits both set), so
		 * the producer's fast path never takes this record for a
		 * registered ring, also before the first ptw_start() when
		 * the generation and a site's state are still 0 */
		t->pub.gen = UINT32_MAX;
		ptw_i_self = &t->pub;
		pthread_setspecific(ptw_tr_ctl.key, t);
	}
	ptw_utf8_copy(t->carry_name, sizeof(t->carry_name), name);
	return 0;
}

void ptw_tr_thread_key_destructor(void *p)
{
	struct ptw_tr_thread *t = p;
	if (!t)
		return;
	if (ptw_i_self == &t->pub)
		ptw_i_self = NULL;
	/* Release: every slot this thread committed is visible to the
	 * backend once it sees 'exited' (it then drains and frees). */
	atomic_store_explicit(&t->exited, 1, memory_order_release);
	ptw_tr_thread_unref(t);
}
