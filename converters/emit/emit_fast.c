/* emit_fast.c - the emitter's fast paths for the bulk of a trace: plain
 * B, E and instant events (no arguments, ids or flows) on a thread seen
 * before, and counter samples on known tracks.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Each event these paths take is written with exactly the bytes the
 * general path (emit.c ptw_em_thread_event, then emit_thread.c) would
 * write; for anything else they return 0 before changing any state, and
 * the caller takes the general path. The tests compare the two paths byte
 * for byte (tests/test_emit_fast.c, fuzz/fuzz_emit_paths.c).
 *
 * The general path keeps, per thread, a queue of events not yet written,
 * so that a later event of the same timestamp can still be put before
 * them. The "short path" (ptw_em_short_core) handles the common case of
 * that queue: it holds at most one event, older than the new one. It
 * writes (releases) the queued event and queues the new one in its place.
 * For an AppleTrace run (the "X form": B and E matched into complete
 * slices), a B is queued open and pushed on the thread's stack of open
 * slices, and an E pops it and is queued as a nameless end (its B was
 * written already). In X form the short path also prepares the packet of
 * the event it queues (ptw_em_prep_make), so that releasing it is a copy
 * (ptw_em_prep_take).
 *
 * Three ways in:
 * 1. one event (ptw_emit_event -> ptw_em_short_path);
 * 2. a counter sample (C with one numeric argument) whose process and
 *    counter track exist, written at once (ptw_em_short_counter);
 * 3. batches from the APLTRC01 reader (ptw_emit_simple_batch): many simple
 *    events in one call, without a struct ptw_cv_event each. A batch is
 *    cut into rounds of at most PTW_EM_ROUND events (ptw_em_round). A
 *    round is checked in file order, as the short path would check each
 *    event; counters, and threads that write on the shared sequence, are
 *    written there and then; the events of each thread with a sequence of
 *    its own are linked into a chain, one per thread. Each chain then goes
 *    to the "lane" (ptw_em_lane): a loop for one thread's X-form events
 *    that keeps the writer's state in locals, writes prepared packet bytes
 *    and hands any event it does not take back to the short path.
 *
 * The writer is reached through its public API and, for prepared packets,
 * lib/writer/seq_lane.h: a run (begin, put, end) on a thread's own
 * sequence, whose begin tells whether the writer's fast path may take
 * events now and how many, and whose end stores the writer's state and
 * counts. The packets are the writer's bytes (one encoder,
 * lib/writer/pkt_encode.h); what the emitter prepares ahead of time is
 * valid for the sequence's interning generation it was made in.
 *
 * Batches keep each sequence's packets in order, but sequences interleave
 * differently than on the general path (and a checkpoint's clock
 * snapshot, taken from the latest time of any sequence, may read another
 * value); trace_processor orders events by timestamp, so it imports the
 * same, and the tests compare batch output event by event, sequence by
 * sequence. The lane's shortcuts hold while the emitter's epoch has not
 * moved (emit_internal.h: a general-path call, a flush or an input change
 * moves it). */
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

/* What the lane's loop needs of an event's kind (PTW_EM_LANE_KIND), in
 * k[0, 4), k[1].pre and k[2].pre being the packet prefixes of a begin and
 * of an end (pre_len bytes), blen_bi the length of a begin's body. A
 * begin's or an instant's body has its name's iid from the lane slot (an
 * instant's type differs from a begin's in one bit: 3 vs 1); an end's is
 * fixed, and its name unchecked. */
static inline __attribute__((always_inline)) void
ptw_em_lane_kinds(struct ptw_em_lane_kind k[4], size_t blen_bi,
		  size_t pre_len)
{
	_Static_assert((PTW_TE_TYPE_SLICE_BEGIN ^ PTW_TE_TYPE_INSTANT) == 2,
		       "a begin's and an instant's type differ in bit 1");
	_Static_assert(sizeof(struct ptw_em_open) == 16 &&
			       sizeof(struct ptw_em_open_b) == 16,
		       "the lane's levels in bytes are 16 an entry");
	/* a begin */
	k[1].keep = ~0ull;
	k[1].flip = 0;
	k[1].key_mask = ~0ull;
	k[1].head = ptw_pkt_step21_head(pre_len + blen_bi);
	k[1].blen = blen_bi;
	k[1].be = 1;
	k[1].d16 = 16;
	k[1].d = 1;
	/* an instant: a begin's packet, its type flipped */
	k[0] = k[1];
	k[0].flip = 1u << 9;
	k[0].be = 0;
	k[0].d16 = 0;
	k[0].d = 0;
	k[3] = k[0];
	/* an end: its own body and prefix, no name */
	k[2].keep = 0;
	k[2].flip = PTW_PB_TAG(PTW_F_TE_TYPE, PTW_PB_WT_VARINT) |
		    (uint64_t)PTW_TE_TYPE_SLICE_END << 8;
	k[2].key_mask = 0;
	k[2].head = ptw_pkt_step21_head(pre_len + 2);
	k[2].blen = 2;
	k[2].be = 1ull << 32;
	k[2].d16 = -16;
	k[2].d = -1;
}

/* The X-form lane keeps, per thread, the iids of the names its events
 * used (th->lane_slot by the name's number, for iids below 128) and of the
 * category (lane_ci, for lane_scat), valid in the sequence's generation
 * lane_gen (seq_lane.h), and the prefixes of its packets. Forgets the
 * iids when the generation or the category changes. */
static inline void ptw_em_lane_sync(struct ptw_em_thread *th,
				    const struct ptw_seq *s, uint32_t gen,
				    const char *scat, uint64_t ci)
{
	if (th->lane_gen == gen && th->lane_scat == scat &&
	    th->lane_ci == ci && th->lane_pre_len)
		return;
	memset(th->lane_slot, 0, sizeof(th->lane_slot));
	th->lane_gen = gen;
	th->lane_scat = scat;
	th->lane_ci = (uint8_t)ci;
	unsigned blen;
	(void)ptw_seq_body_small(PTW_TE_TYPE_SLICE_BEGIN, ci, 1, &blen);
	th->lane_blen = (uint8_t)blen;
	/* a begin's or an instant's prefix, and an end's (0: no lane) */
	struct ptw_em_lane_kind *k = th->lane_kinds;
	size_t n = ptw_seq_lane_prefix(s, k[1].pre, blen);
	if (n && ptw_seq_lane_prefix(s, k[2].pre, 2) != n)
		n = 0;
	th->lane_pre_len = (uint8_t)n;
	ptw_em_lane_kinds(k, blen, n);
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
	if (!th->own_seq || !th->uuid)
		return;
	struct ptw_seq *s = th->seq;
	uint32_t gen = ptw_seq_lane_gen(s);
	uint64_t ci = 0, ni = 0;
	int type = PTW_TE_TYPE_SLICE_END;
	pp->depth_d = -1;
	if (ph != 'E') {
		if (!ptw_seq_lane_iids(s, it->scat, it->sname, &ci, &ni) || !ni)
			return;
		type = ph == 'B' ? PTW_TE_TYPE_SLICE_BEGIN : PTW_TE_TYPE_INSTANT;
		pp->depth_d = ph == 'B';
		if (ni < 128 && ci < 128 && sym) {
			ptw_em_lane_sync(th, s, gen, it->scat, ci);
			struct ptw_em_lane_slot *sl =
				&th->lane_slot[sym & (PTW_EM_LANE_SLOTS - 1)];
			sl->key = sym;
			sl->sname = it->sname;
			unsigned blen;
			sl->body = ptw_seq_body_small(PTW_TE_TYPE_SLICE_BEGIN,
						      ci, ni, &blen);
		}
	}
	pp->body_len = (uint8_t)ptw_seq_body_prepare(pp->body, type, ci, ni);
	pp->gen = gen;
	pp->id = it->id;
	th->lane_epoch = em->epoch;
}

/* Writes the queued item 'q' through its prepared packet if it can, as
 * ptw_em_write_simple would write it: the packet, the track's depth
 * (seq_lane.c), the model and where v1 flows bind. Returns 1 with *rc
 * set (a writer code), else 0 having changed nothing. */
static inline __attribute__((always_inline)) int
ptw_em_prep_take(struct ptw_emit *em, struct ptw_em_thread *th,
		 const struct ptw_em_item *q, int *rc)
{
	const struct ptw_em_prep *pp = &th->prep;
	int d = pp->depth_d;
	size_t mn = th->model_n;
	/* room to push the model (any kind: the store below is
	 * unconditional); an end must close an open slice (tested without a
	 * branch on the kind: kinds come in random order, and such a branch
	 * mispredicts; the writer checks the track's depth) */
	if (pp->id != q->id || th->lane_epoch != em->epoch ||
	    __builtin_expect(mn == th->model_cap, 0) ||
	    __builtin_expect((d < 0) & (mn == 0), 0) ||
	    !ptw_seq_lane_put_one(th->seq, th->uuid, pp->gen, (uint64_t)q->ts,
				  pp->body, pp->body_len, d, rc))
		return 0;
	struct ptw_em_open *o = &th->model[mn]; /* a begin's, else unused */
	o->name_h = o->cat_h = 0;
	th->model_n = mn + (size_t)d;
	if (__builtin_expect(*rc != 0, 0))
		th->model_n -= d > 0; /* as ptw_em_write_simple: no push */
	ptw_em_fl_note(th, q->ts, d < 0); /* where v1 flows bind */
	return 1;
}

/* Releases the item queued on th (the short path's case: one item, older
 * than the new event): through its prepared packet, else as the general
 * path writes it. Returns 0 or an error (*err set). */
static inline __attribute__((always_inline)) int
ptw_em_short_release(struct ptw_emit *em, struct ptw_em_thread *th,
		     struct ptw_error *err)
{
	const struct ptw_em_item *q = &th->q[th->head];
	int rc;
	if (ptw_em_prep_take(em, th, q, &rc)) {
		em->st.open_slices += th->prep.depth_d > 0;
		em->st.instants += th->prep.depth_d == 0;
	} else if (!ptw_em_write_simple(em, th, q, &rc)) {
		return ptw_em_write_item(em, th, q, err);
	}
	return rc ? ptw_em_writer_fail(em, rc, err) : 0;
}

/* Queues event 'ph' at ts (stable names sname, scat; name number
 * name_sym) as th's only item, the queue being empty: X form pushes a B
 * on its stack 'l' (which has room) and pops an E's (it has one), and
 * prepares the item's packet. */
static inline __attribute__((always_inline)) void
ptw_em_short_queue(struct ptw_emit *em, struct ptw_em_thread *th, int xform,
		   struct ptw_em_lifo *l, char ph, int64_t ts,
		   const char *sname, const char *scat, uint64_t name_sym)
{
	/* every field set (no memset: see ptw_em_fast_write) */
	struct ptw_em_item *it = &th->q[0];
	it->ts = ts;
	it->sname = sname;
	it->scat = scat;
	it->dur = 0;
	it->seq = em->next_seq;
	it->id = ++em->next_item;
	it->flow_id = 0;
	it->data = it->data_len = 0;
	it->state = 0;
	it->flow_ph = it->raw_end = it->e_late = it->cls = it->is_x = 0;
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
		    (cat_n && !(scat = ptw_em_fast_sym(em, cat_sym))))
			return 0;
		if (ph == 'B' && l->n == l->cap && ptw_em_lifo_grow(l) != 0) {
			*rc = ptw_em_nomem(err); /* taken, and failed */
			return 1;
		}
	}

	/* From here on the event is ours. */
	if (!batch) {
		em->st.events_in++;
		em->st.short_path++;
	}
	em->st.by_phase[(unsigned char)ph]++;
	th->last_ts = ts;
	th->has_last = 1;
	if (queued && (*rc = ptw_em_short_release(em, th, err)) != 0)
		return 1;
	th->head = th->n = 0;
	th->arena.len = 0;
	th->compact_at = 0;
	++em->next_seq;
	*rc = 0;
	if (xform && ph == 'E' && !l->n) {
		em->st.dropped++; /* unmatched E */
		return 1;
	}
	ptw_em_short_queue(em, th, xform, l, ph, ts, sname, scat, name_sym);
	return 1;
}

/* The lane builds packet bytes in little-endian words. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PTW_EM_LANE_HOST 1
#else
#define PTW_EM_LANE_HOST 0
#endif

/* An event kind as the lane writes it (ptw_em_lane_as), found by its
 * phase's bits 1-2 (kinds come in random order: a branch on them would
 * mispredict): 0 an instant, 1 a begin, 2 an end; 3, no batch phase, is
 * an instant again (as the short core takes any other phase). */
#define PTW_EM_LANE_KIND(ph) (((unsigned)(unsigned char)(ph) >> 1) & 3u)
_Static_assert(PTW_EM_LANE_KIND('i') == 0 && PTW_EM_LANE_KIND('B') == 1 &&
		       PTW_EM_LANE_KIND('E') == 2,
	       "the lane's kinds by phase");
/* The kind of phase ph in kinds[4], by its offset in bytes (kinds are 128
 * bytes: PTW_EM_LANE_KIND * 128, without the shift down) */
#define PTW_EM_LANE_KIND_AT(kinds, ph)                                        \
	((const struct ptw_em_lane_kind *)(const void *)((const char *)(kinds) + \
	   (((unsigned)(unsigned char)(ph) << 6) & 0x180u)))

/* What stays fixed during one batch, and the counts the lane keeps
 * locally until the batch ends (ptw_em_lane_tally). */
struct ptw_em_lane_ctx {
	int64_t shift_ns, ts_in_max;
	const char *scat;   /* the batch's stable category (NULL: none) */
	size_t cat_n;       /* the batch's category, as the reader gave it */
	uint64_t cat_sym;
	uint32_t pid;
	int tid0_own;       /* pid != 0: raw tid 0 has a LIFO stack of its own */
	uint64_t by_b, by_e, by_i, open_slices, instants, dropped, lane;
};

/* One call of the lane: the writer's run and the bounds that spare the
 * loop its checks (ptw_em_lane_open). */
struct ptw_em_lane_run {
	struct ptw_seq_lane r; /* the writer's */
	unsigned n;          /* events it may take */
	size_t mn0;          /* the model's level at the start */
	size_t e_floor;      /* no end may take the model below this */
};

/* Opens the lane on th for at most n_run events (see ptw_em_lane_as):
 * returns 1 with *lr set, or 0 (nothing changed) if the lane is not open
 * for th or the writer's fast path cannot take an event now. */
static inline __attribute__((always_inline)) int
ptw_em_lane_open(const struct ptw_emit *em, const struct ptw_em_lane_ctx *c,
		 struct ptw_em_thread *th, unsigned n_run, int mixed,
		 struct ptw_em_lane_run *lr)
{
	const struct ptw_em_prep *pp = &th->prep;
	if (!PTW_EM_LANE_HOST || th->lane_epoch != em->epoch ||
	    th->lane_scat != c->scat || !th->lane_pre_len ||
	    (th->n && (pp->id != th->q[0].id || pp->gen != th->lane_gen)) ||
	    !ptw_seq_lane_begin(th->seq, th->uuid, th->lane_gen, &lr->r))
		return 0;
	/* One packet for the queued item and at most one per event, within
	 * the run's bound; each event pushes at most one stack entry (the
	 * stacks get room first). */
	unsigned held = th->n != 0, n = n_run;
	if (lr->r.max <= held)
		return 0;
	if (n > lr->r.max - held)
		n = lr->r.max - held;
	for (int t = 0; t <= mixed; t++) { /* the stacks it may push on */
		struct ptw_em_lifo *l = &th->lifo[t];
		while (l->cap - l->n < n && ptw_em_lifo_grow(l) == 0)
			;
		if (l->cap - l->n < n)
			n = (unsigned)(l->cap - l->n);
	}
	if (!n)
		return 0;
	/* The model's top entries (at most n + 1 count), and the track's
	 * depth, bound the ends that may be written (as ptw_em_prep_take: an
	 * end closes an open slice): e_room. Each begin written adds one
	 * (the lane's model entries are plain), each end takes one. */
	size_t mn0 = th->model_n;
	size_t e_room = mn0 < (size_t)n + 1 ? mn0 : (size_t)n + 1;
	if (e_room > lr->r.depth)
		e_room = lr->r.depth;
	/* Room in the model for every entry the lane may write (one per
	 * packet), so that it checks none. Without it the short core takes
	 * the event (and reports the lack of memory). */
	if (mn0 + n + 1 > th->model_cap &&
	    ptw_em_model_reserve(th, mn0 + n + 1) != 0)
		return 0;
	lr->n = n;
	lr->mn0 = mn0;
	lr->e_floor = mn0 - e_room; /* e_room moves with the model's level */
	return 1;
}

/* Writes the queued item of th through its prepared packet at p, in run
 * r, with the delta base *base, the model's level being mn; returns the
 * packet's end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_em_lane_held(struct ptw_em_thread *th, const struct ptw_seq_lane *r,
		 uint8_t *p, uint64_t *base, size_t mn)
{
	const struct ptw_em_prep *pp = &th->prep;
	th->model[mn].name_h = th->model[mn].cat_h = 0; /* (a begin's) */
	th->n = 0;
	return ptw_put_body_packet(p, (uint64_t)th->q[0].ts, base, r->abs_clock,
				   r->hdr, r->hdr_len, pp->body, pp->body_len);
}

/* Where the lane's loop stopped: its locals. */
struct ptw_em_lane_res {
	uint8_t *p, *last;   /* the packets' end, the newest one's start */
	uint64_t base, nid;
	uint64_t n_be;       /* begins (low half) and ends (high) taken */
	uint64_t dropped;    /* unmatched ends */
	int64_t ts;          /* the last event's */
	size_t mn;           /* the model's level */
	size_t ln[2];        /* the stacks' levels */
	unsigned k;          /* events taken */
	int h_d0;            /* kind (depth change) of the item queued at the
			      * start (2: none) */
	int h_d;             /* the same of the chain's last, if queued */
	uint64_t h_body;     /* its body */
	const char *h_sname;
};

/* Closes the lane after its loop: the thread's, the emitter's and the
 * writer's state (ptw_seq_lane_end), and the counts. *rc as for
 * ptw_em_lane_as. */
static inline __attribute__((always_inline)) void
ptw_em_lane_close(struct ptw_emit *em, struct ptw_em_lane_ctx *c,
		  struct ptw_em_thread *th, struct ptw_em_lane_run *lr,
		  const struct ptw_em_lane_res *o, int *rc,
		  struct ptw_error *err)
{
	uint64_t k = o->k;
	int64_t ts = o->ts;
	th->model_n = o->mn;
	/* (the lane keeps no state for v1 flows: ptw_em_flow_ts; what it
	 * wrote is at most at the last ts it took) */
	th->fl_unknown = 1;
	th->fl_max = ts > th->fl_max ? ts : th->fl_max;
	lr->r.depth += (uint32_t)(o->mn - lr->mn0); /* as the model */

	/* the counts: the held items written are the queued one and the
	 * taken ones but the one still queued */
	uint64_t n_b = (uint32_t)o->n_be, n_e = o->n_be >> 32;
	uint64_t n_i = k - n_b - n_e, held_b = th->n && o->h_d > 0,
		 held_i = th->n && o->h_d == 0;
	c->lane += k;
	c->by_b += n_b;
	c->by_e += n_e;
	c->by_i += n_i;
	c->dropped += o->dropped;
	c->open_slices += n_b + (o->h_d0 == 1) - held_b;
	c->instants += n_i + (o->h_d0 == 0) - held_i;
	if (k)
		th->last_ts = ts;
	em->next_item = o->nid;
	em->next_seq += k;
	th->lifo[0].n = o->ln[0];
	th->lifo[1].n = o->ln[1];
	if (th->n && k) {
		/* the chain's last event, queued (the constant fields are
		 * set: see ptw_em_lane_as) */
		struct ptw_em_item *q = &th->q[0];
		struct ptw_em_prep *pp = &th->prep;
		int h_d = o->h_d;
		q->ts = ts;
		q->sname = o->h_sname;
		q->scat = h_d < 0 ? NULL : c->scat;
		q->seq = em->next_seq;
		q->id = o->nid;
		q->state = 0; /* PTW_EM_UNRESOLVED for a begin */
		q->kind = h_d > 0 ? PTW_EM_BEGIN
			: h_d < 0 ? PTW_EM_END : PTW_EM_INSTANT;
		memcpy(pp->body, &o->h_body, sizeof(o->h_body));
		pp->body_len = (uint8_t)(h_d < 0 ? 2 : th->lane_blen);
		pp->depth_d = (int8_t)h_d;
		pp->gen = th->lane_gen;
		pp->id = o->nid;
	}
	/* packets: the queued item's, and one per item taken but the one
	 * queued now */
	lr->r.n = (uint32_t)((o->h_d0 != 2) + (k - o->dropped) -
			     (uint64_t)(th->n && k));
	lr->r.p = o->p;
	lr->r.last = o->last;
	lr->r.base = o->base;
	int r = ptw_seq_lane_end(th->seq, &lr->r);
	if (r)
		*rc = ptw_em_writer_fail(em, r, err);
}

/* The X-form lane: the short path again, for a chain of batch events (B, E
 * or i) on one thread whose last event the short path took in this epoch
 * (lane_epoch), whose queued item, if any, is prepared, and whose names'
 * iids are in the thread's lane slots (a slot exists only for a name the
 * short core found non-empty and stable: within an input a number always
 * stands for the same text). It releases the queued item first; then it
 * writes each event of the chain but the last at once (the next one, in
 * the chain, has a later timestamp: it would release it unchanged), and
 * queues the chain's last with its prepared packet. The sequence's delta
 * base, the writer's counts, the track's depth, the model and the stacks
 * are kept in locals and stored once, when the lane stops; bodies are
 * chosen by kind without a branch (kinds come in random order). It does
 * what ptw_em_short_core does for each event, and stops, having changed
 * nothing for it, at the first event it cannot take that way (a name
 * without a slot, an end whose slice is not open, or the
 * bounds of the call: a checkpoint or a flush due): the caller gives that
 * one to the short core.
 *
 * What it relies on, from lane_epoch == em->epoch: since the short core
 * last queued an item on th in this epoch, only the short core and the
 * lane touched th (a general-path call, flush or input change moves the
 * epoch); so th->head is 0, the arena and compaction mark are reset, and
 * q[0] holds an item whose constant fields (no payload or duration,
 * stable names) the short core or the lane set: only the varying ones are
 * written. The prepared bytes' generation is checked by the writer's run
 * (ptw_seq_lane_begin), which also bounds the call: a checkpoint or a
 * flush due ends it.
 *
 * 'ev' and 'nxt' give the chain: event *jp first, each next one at nxt[j],
 * n_run of them; the caller checked every event as ptw_em_short_core
 * would (the thread, a later timestamp than the one before, a known
 * name). Returns how many it took (*jp then indexes the first one not
 * taken; 0 may still have released the queued item), with *rc set (0 or
 * an error). 'mixed': th is the pid's own thread, which takes raw tid 0
 * events on a second stack. */
static inline __attribute__((always_inline)) unsigned
ptw_em_lane_as(struct ptw_emit *em, struct ptw_em_lane_ctx *c,
	       struct ptw_em_thread *th, const struct ptw_cv_simple *ev,
	       const uint16_t *nxt, unsigned *jp, unsigned n_run, int *rc,
	       int mixed, struct ptw_error *err)
{
	struct ptw_em_lane_run lr;
	*rc = 0;
	if (!ptw_em_lane_open(em, c, th, n_run, mixed, &lr))
		return 0;
	struct ptw_em_open *model = th->model;
	unsigned held = th->n != 0, n = lr.n;

	/* Locals: stores into the packet bytes could alias the fields. */
	uint64_t base = lr.r.base;
	const unsigned abs_clock = lr.r.abs_clock;
	const struct ptw_em_lane_kind *kinds = th->lane_kinds;
	size_t pre_len = th->lane_pre_len;
	const struct ptw_em_lane_slot *slots = th->lane_slot;
	int64_t shift = c->shift_ns;
	size_t ln[2] = {th->lifo[0].n, th->lifo[1].n};
	struct ptw_em_open_b *lb[2] = {th->lifo[0].b, th->lifo[1].b};
	uint64_t nid = em->next_item, dropped = 0;
	uint64_t n_be = 0; /* begins (low half) and ends (high): one add */
	size_t mn = lr.mn0, e_floor = lr.e_floor;
	uint8_t *p = lr.r.p, *last = NULL;
	/* the queued item, if any (its kind: depth change, 2 none) */
	int h_d0 = held ? th->prep.depth_d : 2;
	if (held) {
		if (__builtin_expect((h_d0 < 0) & (mn == e_floor), 0))
			return 0;
		last = p;
		p = ptw_em_lane_held(th, &lr.r, p, &base, mn);
		mn += (size_t)h_d0;
	}
	/* The levels in bytes (no scaled index: entries are 16 bytes): the
	 * model's, mo, which no end may take below mo_floor. With one stack
	 * (not mixed), the stack's level is the model's plus lo (each event
	 * moves both by its depth change), so an end finds its stack empty
	 * at one model level too: mo_floor is the higher of the two. */
	char *mb = (char *)model, *lb0 = (char *)lb[0];
	ptrdiff_t mo = (ptrdiff_t)mn * 16;
	ptrdiff_t lo = ((ptrdiff_t)ln[0] - (ptrdiff_t)mn) * 16;
	ptrdiff_t mo_floor = (ptrdiff_t)e_floor * 16;
	if (!mixed && -lo > mo_floor)
		mo_floor = -lo;

	/* Each event but the chain's last is written at once: the next one
	 * (in this chain) has a later timestamp, so it would release it
	 * unchanged. The chain's last is queued, its packet prepared. */
	int h_d = 0;
	uint64_t h_body = 0;
	const char *h_sname = NULL;
	int64_t ts = th->last_ts;
	unsigned j = *jp, left = n;
	/* the chain's last comes when 'left' is q_at (0: not in this call,
	 * n < n_run) */
	unsigned q_at = n == n_run;
	for (; left; left--, j = nxt[j]) {
		const struct ptw_cv_simple *e = &ev[j];
		const struct ptw_em_lane_kind *kd =
			PTW_EM_LANE_KIND_AT(kinds, e->ph);
		/* raw tid 0 has a stack of its own on the pid's thread */
		unsigned t = mixed ? e->tid == 0 : 0;
		uint64_t sym = e->name_sym;
		const struct ptw_em_lane_slot *sl =
			&slots[sym & (PTW_EM_LANE_SLOTS - 1)];
		/* (sym is not 0: an empty slot does not match) */
		if (__builtin_expect(((sl->key ^ sym) & kd->key_mask) != 0, 0))
			break; /* (for the short core) */
		/* the stack's level (with one, the model's plus lo) */
		size_t lt = mixed ? ln[t] : (size_t)(mo + lo) / 16;
		ptrdiff_t mo2 = mo + kd->d16;
		/* an end with no B on its stack, or none open in the model */
		if (__builtin_expect(
			    mo2 < mo_floor ||
				    (mixed && (ptrdiff_t)lt + kd->d < 0),
			    0)) {
			if (lt != 0)
				break; /* (for the short core) */
			/* From here on the event is ours. */
			ts = e->ts_ns + shift;
			n_be += kd->be;
			dropped++; /* unmatched E */
			continue;
		}
		uint64_t body = (sl->body & kd->keep) ^ kd->flip;

		/* From here on the event is ours. */
		ts = e->ts_ns + shift;
		n_be += kd->be;
		uint64_t id = ++nid;
		/* a begin's (plain pointer arithmetic: the stacks are
		 * arrays of 16-byte entries) */
		struct ptw_em_open_b *ob =
			mixed ? &lb[t][lt]
			      : (struct ptw_em_open_b *)(lb0 + (mo + lo));
		ob->id = id;
		ob->ts = ts;
		if (mixed) /* its B was released: a nameless end */
			ln[t] = lt + (size_t)kd->d;
		if (__builtin_expect(left == q_at, 0)) {
			h_d = kd->d;
			h_body = body;
			h_sname = kd->d < 0 ? ptw_em_empty : sl->sname;
			th->n = 1;
			continue; /* (the loop ends: left is 1) */
		}
		last = p;
		p = ptw_seq_lane_put(p, (uint64_t)ts, &base, abs_clock, kd->head,
				     kd->pre, pre_len, body, kd->blen);
		/* plain; an end's or an instant's store is above the top */
		struct ptw_em_open *o = (struct ptw_em_open *)(mb + mo);
		o->name_h = o->cat_h = 0;
		mo = mo2;
	}
	unsigned k = n - left;
	mn = (size_t)mo / 16;
	if (!mixed) /* and the chain's last, queued, on its stack */
		ln[0] = (size_t)((mo + lo) / 16 + h_d);
	if (!k && !held)
		return 0;
	*jp = j;
	const struct ptw_em_lane_res o = {
		.p = p, .last = last, .base = base, .nid = nid, .n_be = n_be,
		.dropped = dropped, .ts = ts, .mn = mn, .ln = {ln[0], ln[1]},
		.k = k, .h_d0 = h_d0, .h_d = h_d, .h_body = h_body,
		.h_sname = h_sname};
	ptw_em_lane_close(em, c, th, &lr, &o, rc, err);
	return k;
}

static __attribute__((noinline)) unsigned
ptw_em_lane(struct ptw_emit *em, struct ptw_em_lane_ctx *c,
	    struct ptw_em_thread *th, const struct ptw_cv_simple *ev,
	    const uint16_t *nxt, unsigned *jp, unsigned n_run, int *rc,
	    struct ptw_error *err)
{
	/* Only the pid's own thread (tid == pid) takes events written with
	 * raw tid 0, and has two stacks. */
	if (c->tid0_own && th->tid == c->pid)
		return ptw_em_lane_as(em, c, th, ev, nxt, jp, n_run, rc, 1,
				      err);
	return ptw_em_lane_as(em, c, th, ev, nxt, jp, n_run, rc, 0, err);
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
			  uint32_t tid, int64_t ts_ns, int has_name,
			  uint64_t name_sym, int key_ok, int is_int, int64_t iv,
			  double dv, int *rc, struct ptw_error *err)
{
	if (!key_ok || ts_ns < 0 || ts_ns > em->ts_in_max || !em->last_proc ||
	    em->last_pid != pid)
		return 0;
	/* Its thread must exist already (a thread row, see
	 * ptw_em_touch_thread): else the general path makes it. */
	tid = tid ? tid : pid;
	const struct ptw_em_thread *th = em->th_cache[ptw_em_th_slot(tid)];
	if (!th || th->pid != pid || th->tid != tid)
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
		em, 0, ev->pid, ev->tid, ev->ts_ns, ev->name.p != NULL,
		ev->name_sym,
		ptw_em_ctr_key_is(em, a->key.p ? a->key.p : "",
				  a->key.p ? a->key.n : 0),
		a->type == PTW_CV_VAL_INT, a->i, a->d, rc, err);
}

/* ---- counter samples of a batch -----------------------------------------
 * A round writes the counter samples it takes in file order on em->seq,
 * in writer runs (lib/writer/seq_ctr.h): a sample whose track's known
 * bytes are prepared (struct ptw_em_ctr_prep) is a timestamp, those bytes
 * and its value. Any other write on the writer ends the run first. */

/* The prepared entry slot of name number sym. */
static inline size_t ptw_em_ctr_prep_index(uint64_t sym)
{
	return ptw_em_sym_index(sym) & (PTW_EM_CTR_PREP - 1);
}

/* The stamp under which a round of process pid's events takes prepared
 * counter samples (struct ptw_em_ctr_prep), with their process track in
 * *parent; 0 (none) unless ptw_em_short_counter_core could take them
 * (key_ok: the batch's value key is em->ctr_key). Nothing in a round
 * changes what this reads. */
static uint64_t ptw_em_ctr_stamp(struct ptw_emit *em, uint32_t pid,
				 int key_ok, uint64_t *parent)
{
	*parent = 0;
	if (!key_ok || !em->last_proc || em->last_pid != pid)
		return 0;
	uint64_t pt = em->procs[em->last_proc - 1].uuid;
	if (!pt)
		return 0;
	if (pt != em->ctr_stamp_parent || em->ctr_key != em->ctr_stamp_key ||
	    em->input_index != em->ctr_stamp_input) {
		em->ctr_stamp++;
		em->ctr_stamp_parent = pt;
		em->ctr_stamp_key = em->ctr_key;
		em->ctr_stamp_input = em->input_index;
	}
	*parent = pt;
	return em->ctr_stamp;
}

/* Prepares the entry of name number sym after ptw_em_short_counter_core
 * took a sample of it (a counter track of parent found in the caches)
 * under 'stamp'. */
static __attribute__((noinline)) void
ptw_em_ctr_prep_fill(struct ptw_emit *em, uint64_t stamp, uint64_t parent,
		     uint64_t sym)
{
	const char *sn = ptw_em_fast_sym(em, sym);
	const struct ptw_em_ctr_slot *cs =
		ptw_em_ctr_slot(em->ctr_cache, parent, sn, em->ctr_key);
	struct ptw_em_ctr_prep *cp = &em->ctr_prep[ptw_em_ctr_prep_index(sym)];
	cp->sym = 0;
	if (!sn || cs->parent != parent || cs->name != sn ||
	    cs->key != em->ctr_key || !ptw_seq_ctr_known(em->seq, cs->track, &cp->k))
		return;
	cp->sym = sym;
	cp->stamp = stamp;
	cp->track = cs->track;
}

/* Writes the n counter samples of a round linked from ev[j] through nxt
 * (each checked as ptw_em_short_counter_core would check it, with a
 * prepared entry of this round's stamp), at their timestamps plus
 * 'shift', in writer runs; a sample that no run takes (a checkpoint due)
 * goes through the writer's single path, as the short core writes it.
 * 0 or an error. */
static __attribute__((noinline)) int
ptw_em_ctr_take(struct ptw_emit *em, const struct ptw_cv_simple *ev,
		const uint16_t *nxt, unsigned j, unsigned n, int64_t shift,
		struct ptw_error *err)
{
	const struct ptw_em_ctr_prep *prep = em->ctr_prep;
	struct ptw_seq_ctr_run r = {0};
	uint8_t *p = NULL, *last = NULL;
	uint64_t base = 0;
	uint32_t left = 0;
	int rc;
	for (unsigned k = 0; k < n; k++, j = nxt[j]) {
		const struct ptw_cv_simple *e = &ev[j];
		const struct ptw_em_ctr_prep *cp =
			&prep[ptw_em_ctr_prep_index(e->name_sym)];
		int64_t ts = e->ts_ns + shift;
		int64_t iv;
		int is_int = ptw_cv_double_is_int(e->d, &iv);
		if (__builtin_expect(!left, 0)) {
			/* the run is full (or none yet): another */
			if (r.max) {
				r.p = p;
				r.last = last;
				r.base = base;
				r.n = r.max;
				em->st.by_phase['C'] += r.n;
				em->st.counters += r.n;
				if ((rc = ptw_seq_ctr_end(em->seq, &r)) != 0)
					return ptw_em_writer_fail(em, rc, err);
			}
			r.max = 0;
			if (!ptw_seq_ctr_begin(em->seq, &r)) {
				em->st.by_phase['C']++;
				rc = ptw_em_counter_sample(em, cp->track, ts,
							   is_int, iv, e->d,
							   err);
				if (rc)
					return rc;
				continue;
			}
			p = r.p;
			base = r.base;
			left = r.max;
		}
		last = p;
		p = ptw_seq_ctr_put(p, (uint64_t)ts, &base, &cp->k, is_int, iv,
				    e->d);
		left--;
	}
	if (!r.max)
		return 0;
	r.p = p;
	r.last = last;
	r.base = base;
	r.n = r.max - left;
	em->st.by_phase['C'] += r.n;
	em->st.counters += r.n;
	rc = ptw_seq_ctr_end(em->seq, &r);
	return rc ? ptw_em_writer_fail(em, rc, err) : 0;
}

/* A batch is taken in rounds of at most PTW_EM_ROUND events: first in
 * file order (ptw_emit_simple_batch), then thread by thread. */
#define PTW_EM_ROUND 1024u
_Static_assert(PTW_EM_ROUND <= 65536u, "chain indexes are 16-bit");

/* One thread's events in a round: indexes linked through nxt[]. */
struct ptw_em_chain {
	struct ptw_em_thread *th;
	int64_t last;        /* the latest timestamp of the chain */
	uint16_t *tail;      /* where the next index goes */
	uint32_t tid;        /* one of another slot: no chain here yet */
	uint16_t head, n;
};
_Static_assert(sizeof(struct ptw_em_chain) == 32 || sizeof(void *) != 8,
	       "a chain's index is a shift");

/* Gives a chain's events to the lane, and each one it leaves to the short
 * core, in order. 0 or an error. */
static int ptw_em_chain_take(struct ptw_emit *em, struct ptw_em_lane_ctx *c,
			     const struct ptw_em_chain *r,
			     const struct ptw_cv_simple *ev, const uint16_t *nxt,
			     struct ptw_error *err)
{
	struct ptw_em_thread *th = r->th;
	unsigned j = r->head, n = r->n;
	int rc = 0;
	while (n) {
		unsigned k = ptw_em_lane(em, c, th, ev, nxt, &j, n, &rc, err);
		n -= k;
		if (rc || !n)
			break;
		const struct ptw_cv_simple *e = &ev[j];
		/* (name length 1: a batch's names are not empty) */
		if (!ptw_em_short_core(em, 1, 1, e->ph, c->pid, e->tid,
				       e->ts_ns, 1, e->name_sym,
				       c->cat_n, c->cat_sym, NULL, &rc, err))
			return ptw_error_set(err, PTW_ERR_STATE, 0,
					     "emit: internal error: a batch "
					     "event checked for the short path "
					     "was refused by it");
		n--;
		j = nxt[j];
		if (rc)
			break;
	}
	return rc;
}

/* One round: events [0, n) of 'ev'. In file order, counter samples are
 * written at once, and the events of threads without a sequence of their
 * own go to the short core (both write on the shared sequence, whose
 * order must stay the file's); the events of threads with a sequence of
 * their own are checked as the short core would check them and gathered
 * into chains, one per thread. Then each chain is taken, thread after thread:
 * a sequence's packets keep their order, and trace_processor orders the
 * sequences' events by timestamp whatever their order in the file. Stops
 * at the first event that fits none of this; *taken gets how many came
 * before it. 0 or an error. */
static inline __attribute__((always_inline)) int
ptw_em_round_as(struct ptw_emit *em, struct ptw_em_lane_ctx *c,
		const struct ptw_cv_simple *ev, unsigned n, int key_ok,
		unsigned *taken, int plain_ts, struct ptw_error *err)
{
	struct ptw_em_chain chains[64];
	uint8_t order[64];
	uint16_t nxt[PTW_EM_ROUND];
	unsigned n_runs = 0, i;
	for (i = 0; i < 64; i++)
		chains[i].tid = i ^ 1; /* its slot is i ^ 1 (were it i, the
				      * round would stop: slower, not wrong) */
	int no_cat = c->cat_n && !c->scat;
	/* locals: the stores into chains[] could alias *c */
	uint32_t pid = c->pid;
	int64_t shift = plain_ts ? 0 : c->shift_ns, in_max = c->ts_in_max;
	int rc = 0;
	/* the counter samples taken, linked through nxt[] from c_head:
	 * written before any other write on the writer (ptw_em_ctr_take) */
	uint64_t parent;
	uint64_t stamp = ptw_em_ctr_stamp(em, pid, key_ok, &parent);
	uint16_t c_head = 0, *c_tail = &c_head;
	unsigned c_n = 0;
	for (i = 0; i < n; i++) {
		const struct ptw_cv_simple *e = &ev[i];
		int took;
		if (e->ph == 'C') {
			/* what ptw_em_short_counter_core checks: the thread,
			 * the time, the track (a prepared entry) */
			uint32_t ctid = e->tid ? e->tid : pid;
			size_t cslot = ptw_em_th_slot(ctid);
			const struct ptw_em_thread *th = em->th_cache[cslot];
			const struct ptw_em_ctr_prep *cp =
				&em->ctr_prep[ptw_em_ctr_prep_index(e->name_sym)];
			int64_t ts = e->ts_ns + shift;
			int bad_ts = plain_ts ? 0
					      : (e->ts_ns > in_max) |
							(e->ts_ns < 0) | (ts < 0);
			/* (an empty entry's sym is 0 and a filled one's stamp
			 * is not: stamp 0 takes none; a chain's thread was
			 * checked as the short core checks it) */
			if (__builtin_expect(cp->sym == e->name_sym &&
						     cp->stamp == stamp &&
						     !bad_ts &&
						     (chains[cslot].tid == ctid ||
						      (th && th->pid == pid &&
						       th->tid == ctid)),
					     1)) {
				c_n++;
				*c_tail = (uint16_t)i;
				c_tail = &nxt[i];
				continue;
			}
			/* the short core's: the samples before it first */
			if (c_n && (rc = ptw_em_ctr_take(em, ev, nxt, c_head,
							 c_n, shift, err)))
				break;
			c_n = 0;
			c_tail = &c_head;
			int64_t iv;
			int is_int = ptw_cv_double_is_int(e->d, &iv);
			took = ptw_em_short_counter_core(
				em, 1, c->pid, e->tid, e->ts_ns, 1, e->name_sym,
				key_ok, is_int, iv, e->d, &rc, err);
			if (took && !rc && stamp)
				ptw_em_ctr_prep_fill(em, stamp, parent,
						     e->name_sym);
			goto inline_done;
		}
		uint32_t tid = e->tid ? e->tid : pid;
		size_t slot = ptw_em_th_slot(tid);
		struct ptw_em_chain *r = &chains[slot];
		if (__builtin_expect(r->tid != tid, 0)) {
			if (ptw_em_th_slot(r->tid) == slot)
				break; /* another thread in this slot */
			struct ptw_em_thread *th = em->th_cache[slot];
			if (!th || th->pid != c->pid || th->tid != tid)
				break;
			if (!th->own_seq || !th->uuid) {
				/* the shared sequence: in file order (the
				 * counter samples before it first) */
				if (c_n && (rc = ptw_em_ctr_take(
						    em, ev, nxt, c_head, c_n,
						    shift, err)))
					break;
				c_n = 0;
				c_tail = &c_head;
				took = ptw_em_short_core(
					em, 1, 1, e->ph, c->pid, e->tid,
					e->ts_ns, 1, e->name_sym,
					c->cat_n, c->cat_sym, NULL, &rc, err);
				goto inline_done;
			}
			if (th->cap == 0 || th->n - th->head > 1)
				break;
			order[n_runs++] = (uint8_t)slot;
			r->th = th;
			r->tid = tid;
			r->last = th->has_last ? th->last_ts : -1;
			r->tail = &r->head;
			r->n = 0;
		}
		/* what ptw_em_short_core checks (the queue holds at most
		 * one item, older than r->last); with plain_ts, shifted
		 * timestamps cannot leave [0, INT64_MAX] */
		int64_t ts = e->ts_ns + shift;
		const struct ptw_em_sym_slot *ss =
			&em->sym_cache[ptw_em_sym_index(e->name_sym)];
		/* (a batch's names are not empty, their numbers not 0) */
		int no_name = (ss->sym != e->name_sym) | no_cat;
		int bad_ts = plain_ts ? 0
				      : (e->ts_ns > in_max) | (ts < 0);
		if (bad_ts | (ts <= r->last) | ((e->ph != 'E') & no_name))
			break;
		r->last = ts;
		r->n++;
		*r->tail = (uint16_t)i;
		r->tail = &nxt[i];
		continue;
	inline_done:
		if (!took)
			break;
		if (rc) {
			i++; /* taken, and failed */
			break;
		}
	}
	if (c_n && !rc)
		rc = ptw_em_ctr_take(em, ev, nxt, c_head, c_n, shift, err);
	*taken = i;
	for (unsigned k = 0; k < n_runs && !rc; k++)
		rc = ptw_em_chain_take(em, c, &chains[order[k]], ev, nxt, err);
	return rc;
}

static int ptw_em_round(struct ptw_emit *em, struct ptw_em_lane_ctx *c,
			const struct ptw_cv_simple *ev, unsigned n,
			int key_ok, unsigned *taken, struct ptw_error *err)
{
	/* no shift (timestamps are >= 0): the common case, without the
	 * range checks */
	if (c->shift_ns == 0 && c->ts_in_max == INT64_MAX)
		return ptw_em_round_as(em, c, ev, n, key_ok, taken, 1, err);
	return ptw_em_round_as(em, c, ev, n, key_ok, taken, 0, err);
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
	size_t cat_n = b->cat.p ? b->cat.n : 0, i = 0;
	const char *key = b->value_key.p ? b->value_key.p : "";
	size_t key_n = b->value_key.p ? b->value_key.n : 0;
	struct ptw_em_lane_ctx c = {
		.shift_ns = em->shift_ns,
		.ts_in_max = em->ts_in_max, .pid = b->pid,
		.tid0_own = b->pid != 0, .cat_n = cat_n, .cat_sym = b->cat_sym,
		.scat = cat_n ? ptw_em_fast_sym(em, b->cat_sym) : NULL};
	/* the batch's one value key; no general path runs in a batch, so
	 * em->ctr_key cannot change during it */
	int key_ok = ptw_em_ctr_key_is(em, key, key_n);
	int rc = 0;
	while (i < b->n && !rc) {
		size_t left = b->n - i;
		unsigned n = left < PTW_EM_ROUND ? (unsigned)left : PTW_EM_ROUND;
		unsigned k;
		rc = ptw_em_round(em, &c, b->ev + i, n, key_ok, &k, err);
		i += k;
		if (k < n)
			break;
	}
	ptw_em_lane_tally(em, &c);
	*taken = i;
	em->st.events_in += i;
	em->st.short_path += i;
	em->st.batched += i;
	return rc;
}
