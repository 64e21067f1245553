/* tracer_backend.c - the backend thread: drains every producer ring, in
 * order per thread, into the writer (one sequence and thread track per
 * producer thread), announces drops, retires exited threads.
 * SPDX-License-Identifier: Apache-2.0 */
#include "lib/stack/stack.h"
#include "tracer_internal.h"
#include "ring_mem.h"

#include <fcntl.h>
#include <unistd.h>

#include "lib/util/grow.h"
#include "lib/writer/seq_fast.h"
#include "lib/writer/writer_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PTW_TR_SLOT PTW_TRACER_SLOT_SIZE
#define PTW_TR_MIN_SLEEP_US 50u
#define PTW_TR_MAX_PAUSE_US 400u
#define PTW_TR_FLAT_OUT_NS 12u /* per slot, a producer logging flat out */
#define PTW_TR_RELEASE_EVERY 1024u  /* slots consumed between head updates */
/* slots that every sink and then the session read in turn, while they
 * are in the cache (128 KiB); tests set a few, so that chunks end inside
 * records */
uint32_t ptw_tr_sink_chunk = 4096u;
/* Pacing: after a pass that found work the backend pauses until the
 * fastest-filling ring would be a quarter full at the pace it filled since
 * the previous pass (half that time, at most ptw_tr_pause_max_us) rather
 * than going round again at once. A backend that polls rings it has just
 * emptied reads each producer's tail and newest slots while they are being
 * written, and the cache lines going back and forth cost the producer more
 * than the backend saves (bench_tracer, producer_ns_per_event_1t_sustained;
 * docs/tracer.md, Pacing). A ring's fill is in 1/PTW_TR_FILL_ONE. */
#define PTW_TR_FILL_ONE 65536u
#define PTW_TR_PAUSE_MIN_US 10u /* shorter pauses are not worth a sleep */

/* ---- errors -------------------------------------------------------------- */

/* Classifies a writer result: INVALID counts the event as refused; other
 * errors become the session's first error (the writer keeps them sticky,
 * later events fail fast). Returns 1 if the call succeeded. */
static int ptw_tr_check(struct ptw_tracer *tr, int rc)
{
	if (rc == 0)
		return 1;
	if (rc == PTW_ERR_INVALID) {
		atomic_fetch_add_explicit(&tr->invalid, 1, memory_order_relaxed);
		return 0;
	}
	if (!tr->rc) {
		tr->rc = rc;
		const struct ptw_error *we = ptw_writer_error(tr->w);
		if (we && we->code)
			tr->err = *we;
		else
			ptw_error_set(&tr->err, rc, 0, "tracer: writer failed");
	}
	return 0;
}

static void ptw_tr_count_events(struct ptw_tracer *tr, uint64_t n)
{
	/* Only the backend writes; relaxed load + store is exact. */
	atomic_store_explicit(&tr->events,
			      atomic_load_explicit(&tr->events,
						   memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static void ptw_tr_count_event(struct ptw_tracer *tr)
{
	/* Only the backend writes; relaxed load + store is exact. */
	atomic_store_explicit(&tr->events,
			      atomic_load_explicit(&tr->events,
						   memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Keeping an open slice's description ran out of memory: the writer
 * fails (a snapshot would miss the slice's BEGIN otherwise). */
static void ptw_tr_open_failed(struct ptw_tracer *tr)
{
	ptw_tr_check(tr, ptw_i_writer_fail(tr->w, PTW_ERR_NOMEM, 0,
					   "tracer: out of memory for the "
					   "open slices"));
}

/* ---- setup --------------------------------------------------------------- */

static inline uint64_t ptw_tr_ts(const struct ptw_tracer *tr, uint64_t raw)
{
	return tr->use_tsc ? ptw_tr_tsc_to_ns(&tr->tsc, raw) : raw;
}

/* The event clock now, in trace ns: what REALTIME snapshots pair with
 * CLOCK_REALTIME (writer_machine.c). */
static uint64_t ptw_tr_rt_now(const void *ctx)
{
	const struct ptw_tracer *tr = ctx;
	return ptw_tr_ts(tr, ptw_i_now_slow(tr->clock_bits));
}

int ptw_tr_backend_setup(struct ptw_tracer *tr, const char *process_name)
{
	tr->scratch_cap = PTW_TR_SCRATCH;
	tr->scratch = malloc(tr->scratch_cap);
	if (!tr->scratch || ptw_tr_async_init(&tr->async))
		return ptw_error_set(&tr->err, PTW_ERR_NOMEM, 0,
				     "tracer: out of memory");
	if (tr->ring) {
		tr->oscratch = malloc(PTW_TR_SCRATCH);
		if (!tr->oscratch)
			return ptw_error_set(&tr->err, PTW_ERR_NOMEM, 0,
					     "tracer: out of memory");
		ptw_i_writer_recorder_set_open_fn(tr->w, ptw_tr_open_fill, tr);
	}
	tr->proc_track = ptw_writer_add_process_track(tr->w, tr->pid,
						      process_name);
	if (tr->proc_track)
		tr->ctl_seq = ptw_writer_add_seq(tr->w, tr->proc_track);
	if (!tr->proc_track || !tr->ctl_seq) {
		tr->err = *ptw_writer_error(tr->w);
		return tr->err.code ? tr->err.code : PTW_ERR_NOMEM;
	}
	/* Relate the event clock to CLOCK_REALTIME now and every 50 ms
	 * (backend passes, flushes), so that traces of several machines
	 * line up by wall-clock time (docs/tracer.md, "Several machines"). */
	int rc = ptw_i_writer_set_realtime(tr->w, ptw_tr_rt_now, tr);
	if (rc) {
		tr->err = *ptw_writer_error(tr->w);
		return rc;
	}
	/* Declare the clock in the trace's metadata (trace_processor's
	 * metadata table: "cr-ptw.clock", ...), not as an event. */
	struct ptw_i_meta m[5];
	size_t n = 0;
	m[n++] = (struct ptw_i_meta){
		"ptw.clock",
		tr->tsc.boot ? "tsc_boottime"
		: tr->use_tsc ? "tsc"
		: (tr->clock_bits & PTW_I_GEN_BOOT) ? "boottime" : "monotonic",
		0};
	/* anchored to BOOTTIME the mapping changes every pass: the rate
	 * alone */
	if (tr->tsc.boot)
		m[n++] = (struct ptw_i_meta){"ptw.tsc_hz", NULL,
					     (int64_t)tr->tsc.hz};
	else if (tr->use_tsc) {
		m[n++] = (struct ptw_i_meta){"ptw.tsc_hz", NULL,
					     (int64_t)tr->tsc.hz};
		m[n++] = (struct ptw_i_meta){"ptw.ns_per_tick_q32", NULL,
					     (int64_t)tr->tsc.mult};
		m[n++] = (struct ptw_i_meta){"ptw.tsc0", NULL,
					     (int64_t)tr->tsc.tsc0};
		m[n++] = (struct ptw_i_meta){"ptw.mono0_ns", NULL,
					     (int64_t)tr->tsc.mono0};
	}
	rc = ptw_i_writer_metadata(
		tr->w, tr->ctl_seq, ptw_tr_ts(tr, ptw_i_now_slow(tr->clock_bits)),
		m, n);
	if (rc) {
		tr->err = *ptw_writer_error(tr->w);
		return rc;
	}
	return 0;
}

void ptw_tr_backend_free(struct ptw_tracer *tr)
{
	/* sinks left by a start that failed (a stop closes them) */
	for (uint32_t k = 0; k < PTW_TR_MAX_SINKS; k++) {
		struct ptw_tracer *sk = tr->sinks[k];
		if (!sk)
			continue;
		if (sk->w)
			ptw_writer_close(sk->w, NULL);
		ptw_map_free(&sk->want_cat);
		ptw_tr_backend_free(sk);
		free(sk);
		tr->sinks[k] = NULL;
	}
	ptw_map_free(&tr->counters);
	ptw_map_free(&tr->trks);
	for (size_t i = 0; i < tr->n_counter_names; i++)
		free(tr->counter_names[i]);
	free(tr->counter_names);
	free(tr->counter_uuids);
	tr->counter_names = NULL;
	tr->counter_uuids = NULL;
	ptw_tr_async_free(&tr->async);
	ptw_tr_open_free(tr);
	ptw_tr_unload_free(tr);
	ptw_stk_sym_free(tr->sym);
	tr->sym = NULL;
	free(tr->scratch);
	free(tr->snap);
	free(tr->threads);
	free(tr->new_process_name);
	free(tr->out_path);
	tr->out_path = NULL;
	tr->scratch = NULL;
	tr->snap = NULL;
	tr->threads = NULL;
	tr->new_process_name = NULL;
}

/* ---- tracks -------------------------------------------------------------- */

static int ptw_tr_thread_create(struct ptw_tracer *tr, struct ptw_tr_thread *th)
{
	th->created = 1;
	th->track = ptw_writer_add_thread_track(tr->w, tr->pid, th->tid,
						th->init_name[0] ? th->init_name
								 : NULL);
	if (th->track)
		th->seq = ptw_writer_add_seq(tr->w, th->track);
	if (th->seq && tr->ring && ptw_tr_ostack_room(&th->open, 0)) {
		ptw_tr_check(tr, PTW_ERR_NOMEM);
		return -1;
	}
	if (!th->track || !th->seq) {
		ptw_tr_check(tr, ptw_writer_error(tr->w)->code
					 ? ptw_writer_error(tr->w)->code
					 : PTW_ERR_NOMEM);
		return -1;
	}
	return 0;
}

/* Counter tracks are per name: a literal is looked up by pointer, then
 * by content (the same text from another translation unit); a run-time
 * name ('literal' 0, from the _DYN macros) by content only. */
static uint64_t ptw_tr_counter_track(struct ptw_tracer *tr, const char *name,
				     int literal)
{
	uint64_t uuid;
	if (literal &&
	    ptw_map_get(&tr->counters, (uint64_t)(uintptr_t)name, &uuid))
		return uuid;
	uuid = 0;
	for (size_t i = 0; i < tr->n_counter_names; i++)
		if (strcmp(tr->counter_names[i], name) == 0)
			uuid = tr->counter_uuids[i];
	if (!uuid) {
		if (tr->n_counter_names == tr->cap_counter_names) {
			/* two arrays of one capacity */
			size_t nc = ptw_grow_cap(tr->cap_counter_names,
						 tr->n_counter_names + 1, 16,
						 sizeof(uint64_t));
			char **nn = ptw_realloc_array(tr->counter_names, nc,
						      sizeof(*nn));
			if (!nn)
				return 0;
			tr->counter_names = nn;
			uint64_t *nu = ptw_realloc_array(tr->counter_uuids, nc,
							 sizeof(*nu));
			if (!nu)
				return 0;
			tr->counter_uuids = nu;
			tr->cap_counter_names = nc;
		}
		char *copy = strdup(name);
		if (!copy)
			return 0;
		uuid = ptw_writer_add_counter_track(tr->w, name, NULL,
						    tr->proc_track, -1);
		if (!uuid) {
			free(copy);
			return 0;
		}
		tr->counter_names[tr->n_counter_names] = copy;
		tr->counter_uuids[tr->n_counter_names++] = uuid;
	}
	if (literal &&
	    ptw_map_put(&tr->counters, (uint64_t)(uintptr_t)name, uuid))
		return 0;
	return uuid;
}

/* ---- records -------------------------------------------------------------- */

/* Copies a string of 'len' bytes (+ NUL) out of slots k, k+1, ... */
static void ptw_tr_get_bytes(const struct ptw_ring *r, uint64_t *k, char *dst,
			     size_t len)
{
	size_t done = 0;
	while (done <= len) {
		const unsigned char *slot = ptw_ring_slot(r, (*k)++);
		size_t chunk = len + 1 - done;
		if (chunk > PTW_TR_SLOT)
			chunk = PTW_TR_SLOT;
		memcpy(dst + done, slot, chunk);
		done += chunk;
	}
	dst[len] = '\0';
}

void ptw_tr_decode_at(const struct ptw_tracer *tr, const struct ptw_ring *r,
		      uint64_t h, struct ptw_tr_ev *e, char *scratch,
		      uint64_t *unknown)
{
	memcpy(&e->rec, ptw_ring_slot(r, h), sizeof(e->rec));
	e->r = r;
	e->h = h;
	e->ts = ptw_tr_ts(tr, e->rec.ts);
	e->name = e->rec.name;
	e->static_name = 1;
	e->id = 0;
	e->nargs = 0;
	e->n_pcs = 0;
	e->cs.n_frames = 0;
	e->src = NULL;
	e->n_flows = e->n_tflows = 0;
	uint64_t k = h + 1;
	if (e->rec.name_len) {
		size_t len = e->rec.name_len - 1u;
		if (len > PTW_TRACER_MAX_NAME)
			len = PTW_TRACER_MAX_NAME;
		ptw_tr_get_bytes(r, &k, scratch, len);
		e->name = scratch;
		e->static_name = 0;
		scratch += len + 1;
	} else if (e->rec.kind == PTW_I_K_COUNTER_INT ||
		   e->rec.kind == PTW_I_K_COUNTER_DOUBLE) {
		/* the record has the site (ptw_tr_rec_site) */
		const struct ptw_i_site *site = ptw_tr_rec_site(&e->rec);
		e->name = site && site->name ? site->name : "";
	}
	switch (e->rec.kind) {
	case PTW_I_K_ASYNC_BEGIN: case PTW_I_K_ASYNC_END:
	case PTW_I_K_FLOW_START: case PTW_I_K_FLOW_STEP: case PTW_I_K_FLOW_END:
	case PTW_I_K_LOG:
	case PTW_I_K_TRACK_BEGIN: case PTW_I_K_TRACK_END:
	case PTW_I_K_TRACK_INSTANT: case PTW_I_K_TRACK_COUNTER_INT:
	case PTW_I_K_TRACK_COUNTER_DOUBLE:
		memcpy(&e->id, ptw_ring_slot(r, k++), sizeof(e->id));
		break;
	default:
		break;
	}
	uint32_t n = e->rec.nargs;
	if (n > PTW_TRACER_MAX_ARGS)
		n = PTW_TRACER_MAX_ARGS;
	uint32_t kept = 0;
	for (uint32_t a = 0; a < n; a++) {
		struct ptw_i_arg_rec ar;
		memcpy(&ar, ptw_ring_slot(r, k++), sizeof(ar));
		struct ptw_arg *pa = &e->args[kept++];
		pa->name = ar.name;
		pa->type = (enum ptw_arg_type)ar.type;
		switch (ar.type) {
		case PTW_ARG_TYPE_BOOL: pa->v.b = ar.val != 0; break;
		case PTW_ARG_TYPE_INT: pa->v.i = (int64_t)ar.val; break;
		case PTW_ARG_TYPE_UINT: pa->v.u = ar.val; break;
		case PTW_ARG_TYPE_POINTER: pa->v.u = ar.val; break;
		case PTW_ARG_TYPE_DOUBLE: memcpy(&pa->v.d, &ar.val, sizeof(double)); break;
		case PTW_I_ARG_FLOW: /* not an argument: a flow of the event */
			e->flows[e->n_flows++] = ar.val;
			kept--;
			break;
		case PTW_I_ARG_TERMINATING_FLOW:
			e->tflows[e->n_tflows++] = ar.val;
			kept--;
			break;
		case PTW_ARG_TYPE_STRING: {
			size_t len = ar.str_len;
			if (len > PTW_TRACER_MAX_NAME)
				len = PTW_TRACER_MAX_NAME;
			ptw_tr_get_bytes(r, &k, scratch, len);
			pa->v.s = scratch;
			scratch += len + 1;
			break;
		}
		default: /* PTW_I_ARG_UNKNOWN: dropped, never written as 0 */
			kept--;
			if (ar.type == PTW_I_ARG_STACK) { /* lib/stack/ */
				size_t len = ar.str_len;
				if (len > 8u * PTW_TRACER_MAX_STACK)
					len = 8u * PTW_TRACER_MAX_STACK;
				ptw_tr_get_bytes(r, &k, (char *)e->pcs, len);
				e->n_pcs = (uint32_t)(len / 8u);
				break;
			}
			(*unknown)++;
			break;
		}
	}
	e->nargs = kept;
}

static void ptw_tr_decode(struct ptw_tracer *tr, const struct ptw_ring *r,
			  uint64_t h, struct ptw_tr_ev *e)
{
	uint64_t unknown = 0;
	ptw_tr_decode_at(tr, r, h, e, tr->scratch, &unknown);
	if (e->n_pcs) {
		if (!tr->sym)
			tr->sym = ptw_stk_sym_create();
		if (tr->sym) {
			e->cs.frames = e->frames;
			e->cs.n_frames = ptw_stk_sym_frames(tr->sym, e->pcs,
							    e->n_pcs, e->frames);
			e->cs.flags = 0;
		}
	}
	if (tr->srcloc) {
		switch (e->rec.kind) {
		case PTW_I_K_BEGIN: case PTW_I_K_INSTANT: case PTW_I_K_ASYNC_BEGIN:
		case PTW_I_K_FLOW_START: case PTW_I_K_FLOW_STEP:
		case PTW_I_K_FLOW_END: {
			const struct ptw_i_site *site = ptw_tr_rec_site(&e->rec);
			if (site && site->loc.file)
				e->src = &site->loc;
			break;
		}
		default:
			break;
		}
	}
	if (unknown)
		atomic_fetch_add_explicit(&tr->invalid, unknown,
					  memory_order_relaxed);
}

static void ptw_tr_fill(const struct ptw_tr_ev *e, struct ptw_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts = e->ts;
	const char *cat = e->rec.v.cat;
	ev->category = (cat && *cat) ? cat : NULL;
	ev->name = e->name;
	ev->args = e->nargs ? e->args : NULL;
	ev->n_args = e->nargs;
	ev->flags = e->static_name ? PTW_EV_STATIC_STRINGS : 0;
	ev->callstack = e->cs.n_frames ? &e->cs : NULL;
	ev->source = e->src;
	ev->flags |= PTW_EV_STATIC_SOURCE;
	ev->flow_ids = e->n_flows ? e->flows : NULL;
	ev->n_flow_ids = e->n_flows;
	ev->terminating_flow_ids = e->n_tflows ? e->tflows : NULL;
	ev->n_terminating_flow_ids = e->n_tflows;
}

/* Announces drops up to 'total' on the thread's sequence: the next packet
 * carries previous_packet_dropped, and the thread's "dropped events"
 * counter track shows the running total. */
static void ptw_tr_announce_drops(struct ptw_tracer *tr, struct ptw_tr_thread *th,
				  uint64_t total, uint64_t ts)
{
	if (total <= th->drops_announced || !th->seq)
		return;
	ptw_seq_mark_dropped(th->seq, total - th->drops_announced);
	atomic_fetch_add_explicit(&tr->drops_announced,
				  total - th->drops_announced,
				  memory_order_relaxed);
	th->drops_announced = total;
	if (!th->drop_track) {
		th->drop_track = ptw_writer_add_counter_track(
			tr->w, "dropped events", "events", th->track, -1);
		if (!th->drop_track) {
			ptw_tr_check(tr, ptw_writer_error(tr->w)->code);
			return;
		}
	}
	ptw_tr_check(tr, ptw_seq_counter_int(th->seq, th->drop_track, ts,
					     (int64_t)total));
}

/* Writes an async END on 'track'. */
static void ptw_tr_async_write_end(struct ptw_tracer *tr, struct ptw_seq *seq,
				   uint64_t track, uint64_t ts)
{
	struct ptw_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.track = track;
	ev.ts = ts;
	if (ptw_tr_check(tr, ptw_seq_slice_end(seq, &ev))) {
		ptw_tr_count_event(tr);
		if (tr->ring)
			ptw_tr_open_async_end(tr, track);
	}
}

/* A counter sample on its counter track (made on first use). */
static void ptw_tr_process_counter(struct ptw_tracer *tr, struct ptw_seq *seq,
				   const struct ptw_tr_ev *e)
{
	uint64_t track = ptw_tr_counter_track(tr, e->name, e->static_name);
	if (!track) {
		int wrc = ptw_writer_error(tr->w)->code;
		ptw_tr_check(tr, wrc ? wrc : PTW_ERR_NOMEM);
		return;
	}
	int rc;
	if (e->rec.kind == PTW_I_K_COUNTER_INT) {
		rc = ptw_seq_counter_int(seq, track, e->ts, (int64_t)e->rec.v.u);
	} else {
		double d;
		memcpy(&d, &e->rec.v.u, sizeof(d));
		rc = ptw_seq_counter_double(seq, track, e->ts, d);
	}
	if (ptw_tr_check(tr, rc))
		ptw_tr_count_event(tr);
}

/* An async BEGIN: every event of a live id goes on its track;
 * trace_processor pairs them by timestamp (tracer_async.c). */
static void ptw_tr_process_async_begin(struct ptw_tracer *tr,
				       struct ptw_seq *seq,
				       const struct ptw_tr_ev *e)
{
	uint64_t track = ptw_tr_async_track(&tr->async, tr->w, tr->proc_track,
					    e->id, e->name, e->ts);
	if (!track) {
		int rc = ptw_writer_error(tr->w)->code;
		ptw_tr_check(tr, rc ? rc : PTW_ERR_NOMEM);
		return;
	}
	struct ptw_event ev;
	ptw_tr_fill(e, &ev);
	ev.track = track;
	if (!ptw_tr_check(tr, ptw_seq_slice_begin(seq, &ev)))
		return;
	ptw_tr_count_event(tr);
	if (tr->ring && ptw_tr_open_async_begin(tr, track, e))
		ptw_tr_open_failed(tr);
	ptw_tr_async_begun(&tr->async, e->id, e->ts);
	/* ENDs drained before this BEGIN (other threads' rings) */
	uint64_t ts;
	while (ptw_tr_async_pending_end(&tr->async, e->id, e->ts, &ts, &track))
		ptw_tr_async_write_end(tr, seq, track, ts);
}

/* A PTW_LOG line: its id is the site's address and the priority
 * (ptw_i_log_id); the site, static like the literals the ring refers to,
 * gives the source location (an unloaded library's records were all
 * written before it went, tracer_unload.c). */
static void ptw_tr_process_log(struct ptw_tracer *tr, struct ptw_seq *seq,
			       const struct ptw_tr_ev *e)
{
	const struct ptw_i_site *site =
		(const struct ptw_i_site *)(uintptr_t)(e->id & ~(uint64_t)7);
	struct ptw_event ev;
	ptw_tr_fill(e, &ev);
	ev.name = "LogMessage";
	ev.flags = PTW_EV_STATIC_STRINGS;
	ev.source = site->loc.file ? &site->loc : NULL;
	if (ptw_tr_check(tr, ptw_seq_log(seq, &ev, (int)(e->id & 7u), e->name)))
		ptw_tr_count_event(tr);
}

/* An event on a track of ptw_track_new / ptw_counter_track_new. An END
 * is written as one that matches any open slice of the track
 * (PTW_EV_NAMED_END without a name): its BEGIN may come from another
 * thread's ring, drained later; trace_processor pairs them by
 * timestamp. */
static void ptw_tr_process_track(struct ptw_tracer *tr,
				 struct ptw_tr_thread *th,
				 const struct ptw_tr_ev *e)
{
	uint32_t kind = e->rec.kind;
	int counter = kind == PTW_I_K_TRACK_COUNTER_INT ||
		      kind == PTW_I_K_TRACK_COUNTER_DOUBLE;
	uint64_t track = ptw_tr_track_uuid(tr, th->track, e->id, counter);
	if (!track) {
		int wrc = ptw_writer_error(tr->w)->code;
		ptw_tr_check(tr, wrc ? wrc : PTW_ERR_INVALID);
		return;
	}
	struct ptw_event ev;
	int rc;
	switch (kind) {
	case PTW_I_K_TRACK_COUNTER_INT:
		rc = ptw_seq_counter_int(th->seq, track, e->ts,
					 (int64_t)e->rec.v.u);
		break;
	case PTW_I_K_TRACK_COUNTER_DOUBLE: {
		double d;
		memcpy(&d, &e->rec.v.u, sizeof(d));
		rc = ptw_seq_counter_double(th->seq, track, e->ts, d);
		break;
	}
	case PTW_I_K_TRACK_BEGIN:
		ptw_tr_fill(e, &ev);
		ev.track = track;
		rc = ptw_seq_slice_begin(th->seq, &ev);
		/* what the slice is, for a snapshot that cuts it (kept as
		 * an async track's) */
		if (!rc && tr->ring && ptw_tr_open_async_begin(tr, track, e))
			ptw_tr_open_failed(tr);
		break;
	case PTW_I_K_TRACK_END:
		ptw_tr_fill(e, &ev);
		ev.track = track;
		ev.name = NULL;
		ev.category = NULL;
		ev.flags |= PTW_EV_NAMED_END;
		rc = ptw_seq_slice_end(th->seq, &ev);
		if (!rc && tr->ring)
			ptw_tr_open_async_end(tr, track);
		break;
	default:
		ptw_tr_fill(e, &ev);
		ev.track = track;
		rc = ptw_seq_instant(th->seq, &ev);
		break;
	}
	if (ptw_tr_check(tr, rc))
		ptw_tr_count_event(tr);
}

/* Writes one decoded record of thread th by the writer's general API. */
static void ptw_tr_process(struct ptw_tracer *tr, struct ptw_tr_thread *th,
			   const struct ptw_tr_ev *e)
{
	struct ptw_seq *seq = th->seq;
	struct ptw_event ev;
	uint64_t track;
	switch (e->rec.kind) {
	case PTW_I_K_BEGIN:
		ptw_tr_fill(e, &ev);
		if (ptw_tr_check(tr, ptw_seq_slice_begin(seq, &ev))) {
			/* what the slice is, for a snapshot that cuts it */
			if (tr->ring &&
			    (e->rec.extra
				     ? ptw_tr_open_copy(&th->open, th->depth, e)
				     : ptw_tr_open_lit(&th->open, th->depth,
						       e->rec.name,
						       e->rec.v.cat)))
				ptw_tr_open_failed(tr);
			th->depth++;
			ptw_tr_count_event(tr);
		}
		break;
	case PTW_I_K_END:
		if (!th->depth) {
			/* END with no open slice on this thread (unbalanced
			 * macros or a category toggled mid-slice); in a
			 * system session (out.fn) also the END of a slice
			 * begun before it started: no error there. */
			if (!tr->out.fn)
				atomic_fetch_add_explicit(&tr->invalid, 1,
							  memory_order_relaxed);
			break;
		}
		ptw_tr_fill(e, &ev);
		ev.name = NULL;
		ev.category = NULL;
		if (ptw_tr_check(tr, ptw_seq_slice_end(seq, &ev)))
			ptw_tr_count_event(tr);
		th->depth--;
		break;
	case PTW_I_K_INSTANT:
		ptw_tr_fill(e, &ev);
		if (ptw_tr_check(tr, ptw_seq_instant(seq, &ev)))
			ptw_tr_count_event(tr);
		break;
	case PTW_I_K_COUNTER_INT:
	case PTW_I_K_COUNTER_DOUBLE:
		ptw_tr_process_counter(tr, seq, e);
		break;
	case PTW_I_K_ASYNC_BEGIN:
		ptw_tr_process_async_begin(tr, seq, e);
		break;
	case PTW_I_K_ASYNC_END: {
		/* A system session (out.fn) starts while the program runs:
		 * any END may close a BEGIN logged before it, unrecorded, so
		 * every END is soft there (pairs only with an earlier BEGIN,
		 * is no error unpaired), as after a category was off. */
		int r = ptw_tr_async_end(&tr->async, e->id, e->ts,
					 e->rec.name == ptw_tr_soft_end ||
						 tr->out.fn,
					 &track);
		if (r > 0)
			ptw_tr_async_write_end(tr, seq, track, e->ts);
		else if (r < 0) /* no room to wait for its BEGIN */
			atomic_fetch_add_explicit(&tr->invalid, 1,
						  memory_order_relaxed);
		break;
	}
	case PTW_I_K_FLOW_START:
	case PTW_I_K_FLOW_STEP:
	case PTW_I_K_FLOW_END:
		ptw_tr_fill(e, &ev);
		if (e->rec.kind == PTW_I_K_FLOW_END) {
			ev.terminating_flow_ids = &e->id;
			ev.n_terminating_flow_ids = 1;
		} else {
			ev.flow_ids = &e->id;
			ev.n_flow_ids = 1;
		}
		if (ptw_tr_check(tr, ptw_seq_instant(seq, &ev)))
			ptw_tr_count_event(tr);
		break;
	case PTW_I_K_LOG:
		ptw_tr_process_log(tr, seq, e);
		break;
	case PTW_I_K_TRACK_BEGIN: case PTW_I_K_TRACK_END:
	case PTW_I_K_TRACK_INSTANT: case PTW_I_K_TRACK_COUNTER_INT:
	case PTW_I_K_TRACK_COUNTER_DOUBLE:
		ptw_tr_process_track(tr, th, e);
		break;
	case PTW_I_K_THREAD_NAME: {
		struct ptw_tr_thread *real = th->sh_real ? th->sh_real : th;
		snprintf(real->be_name, sizeof(real->be_name), "%s", e->name);
		ptw_tr_check(tr, ptw_writer_rename_track(tr->w, th->track,
							  e->name));
		break;
	}
	case PTW_I_K_DROPPED:
		/* the notes' running sum: a snapshot may have announced some
		 * of these already (ptw_tr_announce_all) */
		th->drops_noted += e->rec.v.u;
		ptw_tr_announce_drops(tr, th, th->drops_noted, e->ts);
		break;
	default:
		atomic_fetch_add_explicit(&tr->invalid, 1, memory_order_relaxed);
		break;
	}
}

/* One-slot BEGIN, END and INSTANT (most of a trace) take a way of their
 * own: through the thread's prepared events (struct ptw_tr_prep) in batches,
 * else one by one through ptw_seq_simple. Both write what ptw_tr_process
 * would (names and categories are literals); cfg.general_path_only
 * turns both off so that tests can compare (test_tracer_fastpath.c and,
 * byte for byte, test_tracer_tight.c; the prepared way's bytes:
 * test_writer_prep.c). */
#define PTW_TR_BATCH 1024u /* records per ptw_tr_batch_gen (then the release check) */

static inline int ptw_tr_is_simple(const struct ptw_i_rec *rec)
{
	return rec->extra == 0 && rec->kind >= PTW_I_K_BEGIN &&
	       rec->kind <= PTW_I_K_INSTANT;
}

/* A simple record's key: an END's strings are not written, an empty
 * category is none. */
static inline void ptw_tr_simple_key(const struct ptw_i_rec *rec,
				     const char **name, const char **cat)
{
	*name = rec->name;
	*cat = rec->v.cat;
	if (rec->kind == PTW_I_K_END)
		*name = *cat = NULL;
	else if (*cat && !**cat)
		*cat = NULL;
}

/* The record's kind, nargs, name_len and extra as one word: a simple
 * record's word is its kind (1 to 3). */
static inline uint64_t ptw_tr_rec_word(const struct ptw_i_rec *rec)
{
	uint64_t w;
	memcpy(&w, &rec->kind, sizeof(w));
	return w;
}
_Static_assert(offsetof(struct ptw_i_rec, extra) + sizeof(uint32_t) -
			       offsetof(struct ptw_i_rec, kind) ==
		       sizeof(uint64_t),
	       "kind, nargs, name_len and extra make one word");

/* The prepared events of a record's key (its word, name and category
 * pointers as the producer wrote them): a set of two slots, so that two
 * busy keys of one set do not evict each other. */
static inline struct ptw_tr_prep *ptw_tr_prep_set(struct ptw_tr_thread *th,
						   uint64_t word,
						   const char *name,
						   const char *cat)
{
	uint64_t k = ((uint64_t)(uintptr_t)name ^
		      ((uint64_t)(uintptr_t)cat << 1) ^ word) *
		     0x9E3779B97F4A7C15ull;
	return &th->prep[2 * (k >> (64 - 5))]; /* 32 sets of PTW_TR_PREP_SLOTS */
}

static inline int ptw_tr_prep_is(const struct ptw_tr_prep *pe, uint64_t word,
				 const struct ptw_i_rec *rec)
{
	/* an empty slot's word 0 matches no record */
	return pe->word == word && pe->name == rec->name &&
	       pe->cat == rec->v.cat;
}

/* The record's prepared event, or NULL. */
static inline const struct ptw_tr_prep *
ptw_tr_prep_find(struct ptw_tr_thread *th, const struct ptw_i_rec *rec)
{
	uint64_t word = ptw_tr_rec_word(rec);
	const struct ptw_tr_prep *set =
		ptw_tr_prep_set(th, word, rec->name, rec->v.cat);
	if (ptw_tr_prep_is(&set[0], word, rec))
		return &set[0];
	if (ptw_tr_prep_is(&set[1], word, rec))
		return &set[1];
	return NULL;
}

/* The slot for (re)preparing the record's key: its own slot if it has
 * one, else the set's first, whose key moves to the second. */
static struct ptw_tr_prep *ptw_tr_prep_slot(struct ptw_tr_thread *th,
					    const struct ptw_i_rec *rec)
{
	uint64_t word = ptw_tr_rec_word(rec);
	struct ptw_tr_prep *set = ptw_tr_prep_set(th, word, rec->name, rec->v.cat);
	if (ptw_tr_prep_is(&set[1], word, rec))
		return &set[1];
	if (!ptw_tr_prep_is(&set[0], word, rec))
		set[1] = set[0];
	set[0].word = word;
	set[0].name = rec->name;
	set[0].cat = rec->v.cat;
	return &set[0];
}
_Static_assert(PTW_TR_PREP_SLOTS == 64, "32 sets of two");

/* A key's entry in a thread's hot set (struct ptw_tr_hot, tracer_internal.h):
 * its word and name pointer (an END has none), mixed by a multiply, so
 * that literals a few bytes apart spread. */
static inline size_t ptw_tr_hot_ix(uint64_t word, const char *name)
{
	return (size_t)((((uintptr_t)name ^ word) * 0x9E3779B97F4A7C15ull) >>
			(64 - PTW_TR_HOT_BITS));
}

/* Empties the set unless it is of generation gen (a checkpoint forgets
 * every iid). An empty entry matches no record: none has a word of all
 * ones (its 'extra' would be 2^32 - 1 slots). */
static inline void ptw_tr_hot_check(struct ptw_tr_thread *th, uint32_t gen)
{
	if (__builtin_expect(th->hot_ok && th->hot_gen == gen, 1))
		return;
	for (size_t i = 0; i < PTW_TR_HOT; i++)
		th->hot[i].word = UINT64_MAX;
	th->hot_gen = gen;
	th->hot_ok = 1;
}

static inline void ptw_tr_hot_put(struct ptw_tr_hot *hs,
				  const struct ptw_tr_prep *pe)
{
	struct ptw_tr_hot *e = &hs[ptw_tr_hot_ix(pe->word, pe->name)];
	e->word = pe->word;
	e->name = pe->name;
	e->cat = pe->cat;
	e->head[0] = ptw_pkt_step_head(pe->p.len, 0);
	e->head[1] = ptw_pkt_step_head(pe->p.len, 1);
	e->depth_d = pe->p.depth_d;
	e->len = pe->p.len;
	memcpy(e->tail, pe->p.tail, sizeof(e->tail));
	e->skip = 0;
}

/* A sink's shadow: record rec's key is of a category the sink does not
 * take (a BEGIN or an INSTANT; whether an END goes is its BEGIN's). */
static inline void ptw_tr_hot_skip(struct ptw_tr_hot *hs,
				   const struct ptw_i_rec *rec)
{
	uint64_t word = ptw_tr_rec_word(rec);
	struct ptw_tr_hot *e = &hs[ptw_tr_hot_ix(word, rec->name)];
	e->word = word;
	e->name = rec->name;
	e->cat = rec->v.cat;
	e->depth_d = rec->kind == PTW_I_K_BEGIN;
	e->len = 0;
	e->skip = 1;
}

/* The runs read a thread's ring once, in order, mostly from memory (the
 * producer wrote it a while ago): they ask for the slots PTW_TR_AHEAD
 * ahead of the one they read, so that the wait for memory overlaps the
 * work (bench_system, bench_tracer: about a quarter more events a second
 * into a file). Past the ring's end the address is only a hint. */
#define PTW_TR_AHEAD 64u
static inline void ptw_tr_prefetch(const unsigned char *slot)
{
	__builtin_prefetch((const void *)((uintptr_t)slot +
					  PTW_TR_AHEAD * PTW_TR_SLOT));
}

/* A filtering sink's runs (tracer_sink.c): what they do with a record,
 * following its nesting in (*rd, *got) as ptw_tr_sink_wants does, for
 * the first 64 levels (sh_rdepth, sh_got; a deeper one stops the run). */
enum ptw_tr_filt { PTW_TR_TAKE, PTW_TR_PASS, PTW_TR_STOP };

/* Before the record's key is looked up: a one-slot END goes where its
 * BEGIN went (not to this sink if it came before the sink did). */
static inline enum ptw_tr_filt ptw_tr_filt_end(const struct ptw_i_rec *rec,
					       uint32_t *rd, uint64_t got)
{
	if (rec->kind != PTW_I_K_END || rec->extra != 0)
		return PTW_TR_TAKE;
	if (!*rd)
		return PTW_TR_PASS;
	if (*rd > 64)
		return PTW_TR_STOP;
	if ((got >> (*rd - 1)) & 1)
		return PTW_TR_TAKE;
	--*rd;
	return PTW_TR_PASS;
}

/* A record whose key has hot entry e: a skip entry's is passed over (a
 * BEGIN opens a level that is not the sink's). */
static inline enum ptw_tr_filt ptw_tr_filt_key(const struct ptw_tr_hot *e,
					       uint32_t *rd, uint64_t *got)
{
	if (e->depth_d > 0 && *rd >= 64)
		return PTW_TR_STOP;
	if (!e->skip)
		return PTW_TR_TAKE;
	if (e->depth_d > 0)
		*got &= ~((uint64_t)1 << (*rd)++);
	return PTW_TR_PASS;
}

/* The tight run of ptw_tr_batch_gen: up to k records from 'rp' on (no
 * ring wrap between), while each has its prepared event in 'hs', its
 * time step is below PTW_SEQ_STEP_MAX (so not back in time),
 * and an END has an open slice; *m is the lower of the thread's and the
 * track's open slices (both move alike), lvm[*m] the thread's open level
 * at its depth (keep_open). The caller checked ptw_seq_batch_steps_ok()
 * for k and the buffer's room and flush threshold for k events
 * (ptw_seq_batch_sure), so no other check is made per event. Returns the
 * records taken.
 *
 * 'filt': the run of a sink's shadow 'sh' that takes only some
 * categories (tracer_sink.c). It also passes over the records the sink
 * does not take: a BEGIN or INSTANT whose key has a skip entry in 'hs',
 * an END whose BEGIN the sink did not take, and follows the nesting as
 * ptw_tr_sink_wants does, in sh_rdepth and sh_got (the first 64 levels:
 * a deeper BEGIN or END ends the run). */
static inline __attribute__((always_inline)) uint64_t
ptw_tr_run_gen(struct ptw_seq_batch *b, const struct ptw_tr_hot *hs,
	       const unsigned char *rp, uint64_t k, uint32_t *m,
	       struct ptw_tr_open *lvm, const struct ptw_tr_tsc *tsc,
	       struct ptw_tr_thread *sh, const int use_tsc,
	       const int keep_open, const int filt)
{
	/* everything in locals: the packets' stores (bytes) could alias
	 * what is read through pointers, which the loop would reload */
	uint8_t *q = b->data + b->len, *last = b->data + b->last;
	/* With the TSC a time is mono0 + x, x = ((ticks - tsc0) * mult) >>
	 * 32 (ptw_tr_tsc_to_ns): the step from the base is x minus the
	 * base's x, xb (modulo 2^64, also for a base below mono0). x is
	 * the high word of (ticks - tsc0) * (mult << 32), the caller made
	 * sure that mult is below 2^32 (a TSC above 1 GHz). Ticks below
	 * tsc0 end the run (the one-by-one way converts them). */
	const uint64_t tsc0 = tsc->tsc0, mult = tsc->mult << 32,
		       off = use_tsc ? tsc->mono0 : 0;
	uint64_t xb = b->base - off;
	const unsigned char *p = rp, *end = rp + k * PTW_TR_SLOT;
	uint32_t d = *m, d0 = d, events = 0;
	uint32_t rd = filt ? sh->sh_rdepth : 0;
	uint64_t got = filt ? sh->sh_got : 0;
	for (; p != end; p += PTW_TR_SLOT) {
		const struct ptw_i_rec *rec = (const void *)p;
		ptw_tr_prefetch(p);
		enum ptw_tr_filt f = filt ? ptw_tr_filt_end(rec, &rd, got)
					  : PTW_TR_TAKE;
		if (f == PTW_TR_PASS)
			continue;
		if (f == PTW_TR_STOP)
			break;
		uint64_t word = ptw_tr_rec_word(rec);
		const struct ptw_tr_hot *e = &hs[ptw_tr_hot_ix(word, rec->name)];
		if (__builtin_expect(e->word != word || e->name != rec->name ||
					     e->cat != rec->v.cat,
				     0))
			break;
		f = filt ? ptw_tr_filt_key(e, &rd, &got) : PTW_TR_TAKE;
		if (f == PTW_TR_PASS)
			continue;
		if (f == PTW_TR_STOP)
			break;
		uint64_t x = rec->ts;
		if (use_tsc) {
			if (__builtin_expect(x < tsc0, 0))
				break;
			x = (uint64_t)(((unsigned __int128)(x - tsc0) * mult) >>
				       64);
		}
		uint32_t nd = d + (uint32_t)e->depth_d;
		if (__builtin_expect(x - xb >= PTW_SEQ_STEP_MAX ||
					     nd == UINT32_MAX,
				     0))
			break;
		if (keep_open)
			memcpy(&lvm[d], &rec->name, sizeof(*lvm));
		last = q;
		uint64_t step = x - xb;
		q = ptw_pkt_put_step(q, step, e->head, e->tail, e->len);
		xb = x;
		d = nd;
		if (filt) {
			if (e->depth_d > 0)
				got |= (uint64_t)1 << rd++;
			rd -= e->depth_d < 0;
			events++;
		}
	}
	uint64_t n = (uint64_t)(p - rp) / PTW_TR_SLOT;
	ptw_seq_batch_took(b, (size_t)(q - b->data), (size_t)(last - b->data),
			   xb + off, filt ? events : (uint32_t)n,
			   (int32_t)(d - d0));
	*m = d;
	if (filt) {
		sh->sh_rdepth = rd;
		sh->sh_got = got;
	}
	return n;
}

/* ptw_tr_run_gen's versions: functions of their own, so that the loop
 * has every register to itself. */
#define PTW_TR_RUN_ARGS                                                        \
	struct ptw_seq_batch *b, const struct ptw_tr_hot *hs,                 \
		const unsigned char *rp, uint64_t k, uint32_t *m,              \
		struct ptw_tr_open *lvm, const struct ptw_tr_tsc *tsc,         \
		struct ptw_tr_thread *sh
#define PTW_TR_RUN(fn, use_tsc, keep_open, filt)                               \
	static __attribute__((noinline)) uint64_t fn(PTW_TR_RUN_ARGS)          \
	{                                                                      \
		return ptw_tr_run_gen(b, hs, rp, k, m, lvm, tsc, sh, use_tsc,  \
				      keep_open, filt);                        \
	}
PTW_TR_RUN(ptw_tr_run_ns, 0, 0, 0)
PTW_TR_RUN(ptw_tr_run_tsc, 1, 0, 0)
PTW_TR_RUN(ptw_tr_run_ns_open, 0, 1, 0)
PTW_TR_RUN(ptw_tr_run_tsc_open, 1, 1, 0)
PTW_TR_RUN(ptw_tr_run_ns_filt, 0, 0, 1)
PTW_TR_RUN(ptw_tr_run_tsc_filt, 1, 0, 1)

/* A filtering sink's record that is not in its hot set (or ends a run):
 * passes it over if the sink does not take it (by its category, a
 * one-slot record only), remembering its key as one to pass over.
 * Returns 1 if passed over. */
static int ptw_tr_filt_slow_pass(struct ptw_tracer *tr, struct ptw_tr_thread *th,
				 const struct ptw_i_rec *rec)
{
	if (!ptw_tr_is_simple(rec) || ptw_tr_sink_peek(tr, th, rec))
		return 0;
	ptw_tr_sink_step(th, rec, 0);
	if (rec->kind != PTW_I_K_END)
		ptw_tr_hot_skip(th->hot, rec);
	return 1;
}

/* A filtering sink's shadow th whose sequence takes no batch now (it has
 * written nothing yet, or a checkpoint is due): passes over the records
 * from *hp on (before lim) that the sink does not take, as the tight run
 * does, up to the first one it takes (which the one-by-one way writes). */
static void ptw_tr_filt_pass(struct ptw_tracer *tr, struct ptw_tr_thread *th,
			     const struct ptw_ring *r, uint64_t *hp,
			     uint64_t lim)
{
	const unsigned char *slots = r->c_slots;
	const uint64_t mask = r->c_mask;
	const uint32_t shift = r->c_shift;
	const struct ptw_tr_hot *hs = th->hot;
	uint64_t h = *hp;
	uint32_t rd = th->sh_rdepth;
	uint64_t got = th->sh_got;
	for (; h < lim; h++) {
		const unsigned char *slot = slots + ((h & mask) << shift);
		const struct ptw_i_rec *rec = (const void *)slot;
		ptw_tr_prefetch(slot);
		enum ptw_tr_filt f = ptw_tr_filt_end(rec, &rd, got);
		if (f == PTW_TR_TAKE && rec->kind != PTW_I_K_END) {
			uint64_t word = ptw_tr_rec_word(rec);
			const struct ptw_tr_hot *e =
				&hs[ptw_tr_hot_ix(word, rec->name)];
			if (e->word == word && e->name == rec->name &&
			    e->cat == rec->v.cat)
				f = ptw_tr_filt_key(e, &rd, &got);
		}
		if (f == PTW_TR_PASS)
			continue;
		th->sh_rdepth = rd;
		th->sh_got = got;
		if (!ptw_tr_filt_slow_pass(tr, th, rec))
			break;
		rd = th->sh_rdepth;
		got = th->sh_got;
	}
	th->sh_rdepth = rd;
	th->sh_got = got;
	*hp = h;
}

/* Writes the records from *hp on (at most PTW_TR_BATCH, before 'end') that
 * have a prepared event, in batches (struct ptw_seq_batch), and moves *hp past
 * them. Stops at the first record without one, one the batch does not take,
 * or an END with no open slice (the general path counts that as invalid).
 * The times it writes are in order (each batch starts from the last one's
 * time and refuses one before it), so the first record's is the
 * earliest. Returns the events written and counted. With 'keep_open'
 * (ring mode) it also keeps what each BEGIN opens (tracer_open.c). Its
 * two versions, ptw_tr_batch_stream and ptw_tr_batch_recorder, are functions of
 * their own, not inlined: stream mode pays nothing for keep_open, and on
 * its own the loop keeps its state in registers.
 *
 * Most records go by the tight run (ptw_tr_run_gen): a record whose
 * prepared event is in the thread's hot set (th->hot), with a small
 * time step. Any other record is looked up and written with every check
 * (ptw_seq_batch_put), and its prepared event goes into the set.
 *
 * 'filt' (never with keep_open): tr is a sink that takes only some
 * categories, th a shadow; the records it does not take are passed over
 * (ptw_tr_batch_sink). */
static inline __attribute__((always_inline)) uint64_t
ptw_tr_batch_gen(struct ptw_tracer *tr, struct ptw_tr_thread *th,
		 const struct ptw_ring *r, uint64_t *hp, uint64_t end,
		 const int keep_open, const int filt)
{
	uint64_t h = *hp, lim = end - h < PTW_TR_BATCH ? end : h + PTW_TR_BATCH;
	uint64_t counted = 0;
	/* the ring and clock as locals (ptw_ring_slot, ptw_tr_ts), so that
	 * the packet bytes the batch stores cannot alias them: the compiler
	 * would reload them for every event otherwise */
	const unsigned char *slots = r->c_slots;
	uint64_t mask = r->c_mask;
	uint32_t shift = r->c_shift;
	const struct ptw_tr_tsc tsc = tr->tsc;
	int use_tsc = tr->use_tsc;
	/* the tight run's version for this mode and clock; its TSC
	 * conversion takes a TSC above 1 GHz (else no tight run) */
	static uint64_t (*const runs[3][2])(PTW_TR_RUN_ARGS) = {
		{ptw_tr_run_ns, ptw_tr_run_tsc},
		{ptw_tr_run_ns_open, ptw_tr_run_tsc_open},
		{ptw_tr_run_ns_filt, ptw_tr_run_tsc_filt}};
	uint64_t (*const run)(PTW_TR_RUN_ARGS) =
		runs[filt ? 2 : keep_open][use_tsc];
	const int tight = !use_tsc || tsc.mult >> 32 == 0;
	/* keep_open: every event stores its record's name and category as
	 * level 'depth' of the open slices: what a BEGIN opens (an END's or
	 * an INSTANT's store is above the levels in use, harmless), with
	 * room made for every event of this call to be a BEGIN: no check
	 * per event */
	if (keep_open &&
	    __builtin_expect(th->open.cap < th->depth + PTW_TR_BATCH + 2, 0) &&
	    ptw_tr_ostack_room(&th->open, th->depth + PTW_TR_BATCH))
		return 0; /* the single way takes the record (and fails) */
	struct ptw_tr_open *lv = th->open.lv;
	while (h < lim) {
		struct ptw_seq_batch batch;
		if (!ptw_seq_batch_begin(th->seq, &batch)) {
			if (filt)
				ptw_tr_filt_pass(tr, th, r, &h, lim);
			break;
		}
		uint32_t depth = th->depth, sure;
		ptw_tr_hot_check(th, batch.gen);
		/* fullness is checked once per 'sure' events, not per event */
		while (h < lim && (sure = ptw_seq_batch_sure(&batch)) != 0) {
			uint64_t stop = lim - h < sure ? lim : h + sure;
			while (h < stop) {
				uint64_t k = stop - h,
					 wrap = mask + 1 - (h & mask);
				k = k < wrap ? k : wrap;
				if (tight && ptw_seq_batch_steps_ok(&batch, k)) {
					uint32_t m = depth < batch.depth
							     ? depth
							     : batch.depth,
						 m0 = m;
					h += run(&batch, th->hot,
						 slots + ((h & mask) << shift),
						 k, &m,
						 keep_open ? lv + (depth - m)
							   : NULL,
						 &tsc, th);
					depth += m - m0;
					if (h == stop)
						break;
				}
				const struct ptw_i_rec *rec = (const void *)(
					slots + ((h & mask) << shift));
				/* a sink's: passes over what it does not take
				 * (any other record has no prepared event) */
				if (filt && ptw_tr_filt_slow_pass(tr, th, rec)) {
					h++;
					continue;
				}
				const struct ptw_tr_prep *pe =
					ptw_tr_prep_find(th, rec);
				uint64_t ts = use_tsc ? ptw_tr_tsc_to_ns(&tsc,
									 rec->ts)
						      : rec->ts;
				if (!pe || (pe->p.depth_d < 0 && !depth) ||
				    !ptw_seq_batch_put(&batch, ts, &pe->p))
					break;
				if (keep_open)
					memcpy(&lv[depth], &rec->name,
					       sizeof(*lv));
				if (filt)
					ptw_tr_sink_step(th, rec, 1);
				depth += (uint32_t)(int32_t)pe->p.depth_d;
				/* of this generation: the batch took it */
				ptw_tr_hot_put(th->hot, pe);
				h++;
			}
			if (h < stop)
				break; /* a record the batch does not take */
		}
		int full = ptw_seq_batch_full(&batch);
		int rc = ptw_seq_batch_end(th->seq, &batch);
		th->depth = depth;
		/* a flush error after the last packet: that event is not
		 * counted, as ptw_tr_fast_event would not count it */
		counted += batch.n - (rc != 0 && batch.n);
		if (rc)
			ptw_tr_check(tr, rc);
		/* a batch that took nothing (not even when full) makes no
		 * progress: the single way takes the record */
		if (!full || rc || !batch.n)
			break;
	}
	*hp = h;
	return counted;
}

static __attribute__((noinline)) uint64_t
ptw_tr_batch_stream(struct ptw_tracer *tr, struct ptw_tr_thread *th,
		    const struct ptw_ring *r, uint64_t *hp, uint64_t end)
{
	return ptw_tr_batch_gen(tr, th, r, hp, end, 0, 0);
}

static __attribute__((noinline)) uint64_t
ptw_tr_batch_recorder(struct ptw_tracer *tr, struct ptw_tr_thread *th,
		      const struct ptw_ring *r, uint64_t *hp, uint64_t end)
{
	return ptw_tr_batch_gen(tr, th, r, hp, end, 1, 0);
}

static __attribute__((noinline)) uint64_t
ptw_tr_batch_sink(struct ptw_tracer *tr, struct ptw_tr_thread *th,
		  const struct ptw_ring *r, uint64_t *hp, uint64_t end)
{
	return ptw_tr_batch_gen(tr, th, r, hp, end, 0, 1);
}

/* A simple record one by one: through ptw_seq_simple, after which the
 * event is prepared for the batches. Returns 1 if the event was written, -1
 * if the writer refused it (counted as ptw_tr_process counts it), 0 to
 * take the general path (an END with no open slice: that path counts it
 * as invalid). */
static int ptw_tr_fast_event(struct ptw_tracer *tr, struct ptw_tr_thread *th,
			     const struct ptw_i_rec *rec)
{
	static const enum ptw_simple_type type[] = {
		[PTW_I_K_BEGIN] = PTW_SIMPLE_BEGIN,
		[PTW_I_K_END] = PTW_SIMPLE_END,
		[PTW_I_K_INSTANT] = PTW_SIMPLE_INSTANT,
	};
	unsigned k = rec->kind;
	if (k == PTW_I_K_END && !th->depth)
		return 0;
	const char *name, *cat;
	ptw_tr_simple_key(rec, &name, &cat);
	/* cfg.source_locations: a BEGIN or INSTANT with its site's */
	const struct ptw_source_location *loc = NULL;
	if (tr->srcloc && k != PTW_I_K_END) {
		const struct ptw_i_site *site = ptw_tr_rec_site(rec);
		loc = site && site->loc.file ? &site->loc : NULL;
	}
	int rc;
	if (loc) {
		struct ptw_event ev;
		memset(&ev, 0, sizeof(ev));
		ev.ts = ptw_tr_ts(tr, rec->ts);
		ev.category = cat;
		ev.name = name;
		ev.flags = PTW_EV_STATIC_STRINGS;
		ev.source = loc;
		rc = k == PTW_I_K_BEGIN ? ptw_seq_slice_begin(th->seq, &ev)
					: ptw_seq_instant(th->seq, &ev);
	} else {
		rc = ptw_seq_simple(th->seq, type[k], 0, ptw_tr_ts(tr, rec->ts),
				    cat, name);
	}
	struct ptw_tr_prep *pe = ptw_tr_prep_slot(th, rec);
	if (rc != 0 || !ptw_i_seq_prepare_loc(th->seq, type[k], cat, name, loc,
					      &pe->p))
		pe->word = 0; /* nothing prepared */
	if (tr->ring && k == PTW_I_K_BEGIN && rc == 0 &&
	    ptw_tr_open_lit(&th->open, th->depth, rec->name, rec->v.cat))
		ptw_tr_open_failed(tr);
	/* depth as ptw_tr_process keeps it: a refused BEGIN does not open,
	 * an END closes whatever happened */
	th->depth += (k == PTW_I_K_BEGIN && rc == 0) - (k == PTW_I_K_END);
	if (rc != 0) {
		ptw_tr_check(tr, rc);
		return -1;
	}
	return 1;
}

_Static_assert(sizeof(struct ptw_tr_open) == 16 &&
		       offsetof(struct ptw_i_rec, v) ==
			       offsetof(struct ptw_i_rec, name) + 8 &&
		       offsetof(struct ptw_tr_open, u) == 8,
	       "a record's name and category are a level of open slices");

_Atomic int ptw_tr_test_hold;

static uint64_t ptw_tr_drain(struct ptw_tracer *tr, struct ptw_tr_thread *th);

/* ---- sinks (tracer_sink.c) ------------------------------------------------
 * A sink writes a thread through a shadow: a struct ptw_tr_thread of its
 * own (sequence, track, open slices, prepared events, drops), whose ring
 * is a copy of the thread's ring struct (the same slots) that the drain
 * below points at the slots to take, [sh_pos, end): the sink's drain
 * reads them, and only the session's own drain hands them back to the
 * producer. */

/* A shadow of th for a sink that takes the ring from slot 'pos' on;
 * NULL when out of memory. */
static struct ptw_tr_thread *ptw_tr_shadow_new(struct ptw_tr_thread *th,
					       uint64_t pos)
{
	struct ptw_tr_thread *sh = aligned_alloc(
		PTW_RING_CACHELINE, (sizeof(*sh) + PTW_RING_CACHELINE - 1) &
					    ~(size_t)(PTW_RING_CACHELINE - 1));
	if (!sh)
		return NULL;
	memset(sh, 0, sizeof(*sh));
	/* the consumer's view of the slots (the producer's line is its
	 * own, written while we copy) */
	struct ptw_ring *sr = &sh->pub.ring;
	const struct ptw_ring *r = &th->pub.ring;
	sr->c_slots = r->c_slots;
	sr->c_mask = r->c_mask;
	sr->c_shift = r->c_shift;
	sr->capacity = r->capacity;
	sr->slot_size = r->slot_size;
	sh->session = th->session;
	sh->tid = th->tid;
	sh->sh_real = th;
	memcpy(sh->init_name, th->be_name[0] ? th->be_name : th->init_name,
	       sizeof(sh->init_name));
	sh->ring_warm = 1; /* the thread's drain faults the ring in */
	sh->sh_pos = pos;
	sh->sh_drop_base = atomic_load_explicit(&th->pub.dropped,
						memory_order_acquire);
	return sh;
}

static void ptw_tr_sinks_drain(struct ptw_tracer *tr, struct ptw_tr_thread *th,
			       uint64_t h, uint64_t end)
{
	for (uint32_t k = 0; k < PTW_TR_MAX_SINKS; k++) {
		struct ptw_tracer *sk = tr->sinks[k];
		if (!sk)
			continue;
		struct ptw_tr_thread *sh = th->sh[k];
		if (!sh) /* a thread new since the sink came */
			sh = th->sh[k] = ptw_tr_shadow_new(th, h);
		if (!sh) {
			ptw_tr_check(sk, PTW_ERR_NOMEM);
			continue;
		}
		uint64_t from = sh->sh_pos > h ? sh->sh_pos : h;
		if (from >= end)
			continue;
		struct ptw_ring *sr = &sh->pub.ring;
		atomic_store_explicit(&sr->head, from, memory_order_relaxed);
		atomic_store_explicit(&sr->tail, end, memory_order_relaxed);
		sr->tail_cache = end;
		ptw_tr_drain(sk, sh);
		/* past 'end' when its last record goes on past it (the
		 * caller's chunks end anywhere) */
		sh->sh_pos = atomic_load_explicit(&sr->head,
						  memory_order_relaxed);
	}
}

/* The sink filters from now on (another output runs beside it): every
 * slice it has open on a thread was taken by it, and its prepared runs
 * forget the keys they took before (a key's category may not be the
 * sink's: ptw_tr_run_gen takes the keys of its set without asking). */
static void ptw_tr_sink_filter_on(struct ptw_tracer *tr, struct ptw_tracer *sk,
				  size_t n)
{
	if (sk->filt)
		return;
	sk->filt = 1;
	for (size_t i = 0; i < n; i++) {
		struct ptw_tr_thread *th = tr->snap[i];
		struct ptw_tr_thread *sh = th ? th->sh[sk->sink_ix] : NULL;
		if (!sh)
			continue;
		ptw_tr_sink_got_all(sh, sh->depth);
		sh->hot_ok = 0;
	}
}

/* A thread's shadow in sink sk is done (the thread retires, or the sink
 * goes): its drops not yet in the sink's trace go there, then it is
 * freed. */
static void ptw_tr_shadow_finish(struct ptw_tracer *sk, struct ptw_tr_thread *th,
				 struct ptw_tr_thread *sh)
{
	uint64_t total = atomic_load_explicit(&th->pub.dropped,
					      memory_order_acquire);
	if (total > sh->sh_drop_base)
		ptw_tr_announce_drops(sk, sh, total - sh->sh_drop_base,
				      ptw_tr_ts(sk, ptw_i_now_slow(sk->clock_bits)));
	if (sh->seq)
		ptw_seq_destroy(sh->seq);
	ptw_tr_ostack_free(&sh->open);
	free(sh->sh_got_deep);
	free(sh);
}

/* Every sink's shadow of th. */
static void ptw_tr_shadows_finish(struct ptw_tracer *tr, struct ptw_tr_thread *th)
{
	for (uint32_t k = 0; k < PTW_TR_MAX_SINKS; k++) {
		if (th->sh[k] && tr->sinks[k])
			ptw_tr_shadow_finish(tr->sinks[k], th, th->sh[k]);
		else
			free(th->sh[k]);
		th->sh[k] = NULL;
	}
}

/* The session's events, invalid records and bytes: a muted session's
 * are its sinks' (those gone included). */
static void ptw_tr_sink_figures(struct ptw_tracer *tr, uint64_t *events,
				uint64_t *invalid, uint64_t *bytes)
{
	*events = tr->sink_events_gone;
	*invalid = tr->sink_invalid_gone;
	*bytes = tr->sink_bytes_gone;
	for (uint32_t k = 0; k < PTW_TR_MAX_SINKS; k++) {
		struct ptw_tracer *sk = tr->sinks[k];
		if (!sk)
			continue;
		struct ptw_writer_stats ws;
		ptw_writer_get_stats(sk->w, &ws);
		*events += atomic_load_explicit(&sk->events, memory_order_relaxed);
		*invalid += atomic_load_explicit(&sk->invalid,
						 memory_order_relaxed);
		*bytes += ws.bytes_written;
	}
}

/* Sink k's end: every shadow finished, its last packets, its writer
 * closed; its figures stay the session's. Returns its first error. */
static int ptw_tr_sink_close(struct ptw_tracer *tr, uint32_t k, size_t n)
{
	struct ptw_tracer *sk = tr->sinks[k];
	for (size_t i = 0; i < n; i++) {
		struct ptw_tr_thread *th = tr->snap[i];
		if (th && th->sh[k]) {
			ptw_tr_shadow_finish(sk, th, th->sh[k]);
			th->sh[k] = NULL;
		}
	}
	/* a sink is a system session: its async slices open at its stop
	 * stay open, as in a snapshot, and count as no error (see the
	 * tracer's own stop) */
	ptw_tr_check(sk, ptw_i_writer_realtime_tick(sk->w, 1));
	ptw_tr_check(sk, ptw_writer_flush(sk->w));
	struct ptw_writer_stats ws;
	ptw_writer_get_stats(sk->w, &ws);
	tr->sink_events_gone += atomic_load_explicit(&sk->events,
						     memory_order_relaxed);
	tr->sink_invalid_gone += atomic_load_explicit(&sk->invalid,
						      memory_order_relaxed);
	tr->sink_bytes_gone += ws.bytes_written;
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	int rc = ptw_writer_close(sk->w, &err);
	sk->w = NULL;
	if (rc && !sk->rc)
		sk->rc = rc;
	rc = sk->rc;
	ptw_map_free(&sk->want_cat);
	ptw_tr_backend_free(sk);
	free(sk);
	tr->sinks[k] = NULL;
	tr->n_sinks--;
	return rc;
}

/* A sink asks to join: its writer and first packets, and a shadow of
 * every thread from its ring's tail on (what was committed before is not
 * its). */
int ptw_tr_sink_open(struct ptw_tracer *tr, struct ptw_tracer *sk, size_t n)
{
	uint32_t k = 0;
	while (k < PTW_TR_MAX_SINKS && tr->sinks[k])
		k++;
	if (k == PTW_TR_MAX_SINKS)
		return PTW_ERR_STATE;
	/* the backend's own copy of the conversion (re-anchored each pass
	 * in system mode, by this thread) */
	sk->tsc = tr->tsc;
	struct ptw_writer_options wo = *sk->sink_wo;
	wo.compress = PTW_COMPRESS_NONE;
	sk->w = ptw_i_writer_open_output(&wo, sk->out.fn, sk->out.ctx, &sk->err);
	if (!sk->w)
		return sk->err.code ? sk->err.code : PTW_ERR_NOMEM;
	int rc = ptw_tr_backend_setup(sk, sk->sink_pname);
	if (rc) {
		ptw_writer_close(sk->w, NULL);
		ptw_tr_backend_free(sk);
		return rc;
	}
	sk->sink_ix = k;
	sk->sink_wo = NULL;
	ptw_tr_sink_name_free(sk);
	for (size_t i = 0; i < n; i++) {
		struct ptw_tr_thread *th = tr->snap[i];
		if (!th)
			continue;
		/* the other outputs take what came before (a rename too, so
		 * the sink knows the thread's name), the sink the rest */
		ptw_tr_drain(tr, th);
		free(th->sh[k]);
		th->sh[k] = ptw_tr_shadow_new(
			th, atomic_load_explicit(&th->pub.ring.head,
						 memory_order_relaxed));
		if (!th->sh[k])
			ptw_tr_check(sk, PTW_ERR_NOMEM);
	}
	tr->sinks[k] = sk;
	tr->n_sinks++;
	/* beside another output, each takes only its categories */
	if (tr->n_sinks + !tr->mute > 1)
		for (uint32_t j = 0; j < PTW_TR_MAX_SINKS; j++)
			if (tr->sinks[j])
				ptw_tr_sink_filter_on(tr, tr->sinks[j], n);
	return 0;
}

/* Answers a sink request with rc (a sink refused is freed). */
static void ptw_tr_sink_answer(struct ptw_tracer *tr, struct ptw_tr_sink_req *rq,
			       int rc)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	if (rc && rq->add) {
		ptw_tr_sink_name_free(rq->add);
		free(rq->add);
	}
	pthread_mutex_lock(&c->mu);
	rq->rc = rc;
	rq->done = 1;
	tr->sink_req = NULL;
	pthread_cond_broadcast(&c->done);
	pthread_mutex_unlock(&c->mu);
}

/* Serves a sink request: an add before the pass's drain, a removal
 * after it. */
static void ptw_tr_serve_sink(struct ptw_tracer *tr, struct ptw_tr_sink_req *rq,
			      size_t n)
{
	int rc = PTW_ERR_STATE;
	if (rq->add)
		rc = ptw_tr_sink_open(tr, rq->add, n);
	else
		for (uint32_t k = 0; k < PTW_TR_MAX_SINKS; k++)
			if (tr->sinks[k] && tr->sinks[k]->sink_id == rq->remove)
				rc = ptw_tr_sink_close(tr, k, n);
	ptw_tr_sink_answer(tr, rq, rc);
}

/* Takes the thread's records from *hp on, up to 'end' (a record that
 * goes on past it is taken whole), into the session's own output: moves
 * *hp past them, releases the slots every PTW_TR_RELEASE_EVERY (from
 * *released on) and lowers *min_raw to the earliest time seen. Returns
 * the events of the fast ways (counted once by the caller). */
static uint64_t ptw_tr_drain_own(struct ptw_tracer *tr, struct ptw_tr_thread *th,
				 uint64_t *hp, uint64_t end, uint64_t *released,
				 uint64_t *min_raw)
{
	struct ptw_ring *r = &th->pub.ring;
	uint64_t h = *hp, fast = 0;
	int simple = th->seq && !tr->general_only;
	while (h < end) {
		if (h - *released >= PTW_TR_RELEASE_EVERY) {
			ptw_ring_release(r, h);
			*released = h;
		}
		/* each way below starts at rec, and a batch's first record is
		 * its earliest (ptw_tr_batch_gen) */
		const struct ptw_i_rec *rec = ptw_ring_slot(r, h);
		*min_raw = rec->ts < *min_raw ? rec->ts : *min_raw;
		if (simple && ptw_tr_is_simple(rec)) {
			uint64_t h0 = h;
			fast += tr->ring  ? ptw_tr_batch_recorder(tr, th, r, &h, end)
				: tr->filt ? ptw_tr_batch_sink(tr, th, r, &h, end)
					   : ptw_tr_batch_stream(tr, th, r, &h, end);
			if (h != h0)
				continue;
		}
		/* a sink beside other outputs: only its categories (the
		 * batches pass over the others themselves) */
		if (__builtin_expect(tr->filt, 0) &&
		    !ptw_tr_sink_wants(tr, th, rec)) {
			h += 1 + (uint64_t)rec->extra;
			continue;
		}
		if (simple && ptw_tr_is_simple(rec)) {
			int f = ptw_tr_fast_event(tr, th, rec);
			if (f) {
				fast += f > 0;
				h++;
				continue;
			}
		}
		struct ptw_tr_ev e;
		ptw_tr_decode(tr, r, h, &e);
		if (th->seq)
			ptw_tr_process(tr, th, &e);
		h += 1 + (uint64_t)e.rec.extra;
	}
	*hp = h;
	return fast;
}

/* Drains what the thread has committed. Returns the slots consumed. */
static uint64_t ptw_tr_drain(struct ptw_tracer *tr, struct ptw_tr_thread *th)
{
	struct ptw_ring *r = &th->pub.ring;
	if (!th->created && ptw_tr_thread_create(tr, th) != 0)
		th->seq = NULL;
	uint64_t h, n = ptw_ring_peek(r, &h);
	uint64_t end = h + n, released = h;
	/* A thread that has filled a sixteenth of its ring logs a lot: fault
	 * the rest in now, so that it does not take the page faults itself.
	 * One that logs little keeps the few pages it touched. */
	if (!th->ring_warm && end >= r->capacity / 16) {
		ptw_tr_ring_mem_populate(th->ring_mem, th->ring_bytes);
		th->ring_warm = 1;
	}
	uint64_t fast = 0; /* events of the fast ways, counted once */
	uint64_t min_raw = UINT64_MAX; /* earliest record (flight recorder) */
	/* With sinks, a chunk at a time: every sink reads it, then the
	 * session, while it is in the cache (the slots stay the producer's
	 * until released). */
	uint64_t chunk = tr->n_sinks ? ptw_tr_sink_chunk : UINT64_MAX;
	while (h < end) {
		uint64_t cend = end - h > chunk ? h + chunk : end;
		if (__builtin_expect(tr->n_sinks != 0, 0))
			ptw_tr_sinks_drain(tr, th, h, cend);
		if (__builtin_expect(tr->mute, 0))
			h = cend;
		else
			fast += ptw_tr_drain_own(tr, th, &h, cend, &released,
						 &min_raw);
	}
	if (h != released)
		ptw_ring_release(r, h);
	ptw_tr_count_events(tr, fast);
	/* A lagging ring may hold events older than anything else in the
	 * ring's current piece: the snapshot prefix must begin before them. */
	if (tr->ring && min_raw != UINT64_MAX)
		ptw_i_writer_recorder_note_ts(tr->w, ptw_tr_ts(tr, min_raw));
	return n;
}

/* Last words for a thread (exited, or the session ends): drops nobody
 * announced yet go into the trace. */
static void ptw_tr_finish_thread(struct ptw_tracer *tr, struct ptw_tr_thread *th)
{
	ptw_tr_drain(tr, th);
	uint64_t total = atomic_load_explicit(&th->pub.dropped,
					      memory_order_acquire);
	ptw_tr_announce_drops(tr, th, total,
			      ptw_tr_ts(tr, ptw_i_now_slow(tr->clock_bits)));
}

/* Removes a finished thread from the session (backend only). */
static void ptw_tr_retire(struct ptw_tracer *tr, struct ptw_tr_thread *th)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < tr->n_threads; i++) {
		if (tr->threads[i] == th) {
			tr->threads[i] = tr->threads[--tr->n_threads];
			break;
		}
	}
	tr->unl.dirty = 1; /* its events may be in the caches */
	tr->dropped_gone += atomic_load(&th->pub.dropped);
	tr->waits_gone += atomic_load(&th->waits);
	pthread_mutex_unlock(&c->mu);
	if (ptw_tr_open_retire(tr, th))
		ptw_tr_open_failed(tr);
	ptw_tr_shadows_finish(tr, th);
	if (th->seq)
		ptw_seq_destroy(th->seq);
	th->seq = NULL;
	ptw_tr_thread_unref(th);
}

/* Copies the thread list (under mu) into tr->snap. Returns its length. */
static size_t ptw_tr_snapshot_locked(struct ptw_tracer *tr)
{
	if (tr->cap_snap < tr->n_threads) {
		size_t nc = tr->cap_threads;
		struct ptw_tr_thread **ns =
			ptw_realloc_array(tr->snap, nc, sizeof(*ns));
		if (!ns)
			return 0; /* retried next pass */
		tr->snap = ns;
		tr->cap_snap = nc;
	}
	if (tr->n_threads)
		memcpy(tr->snap, tr->threads, tr->n_threads * sizeof(*tr->snap));
	tr->n_snap = tr->n_threads;
	return tr->n_threads;
}

static void ptw_tr_publish_bytes(struct ptw_tracer *tr)
{
	if (tr->mute) {
		uint64_t ev, inv, by;
		ptw_tr_sink_figures(tr, &ev, &inv, &by);
		atomic_store_explicit(&tr->events, ev, memory_order_relaxed);
		atomic_store_explicit(&tr->invalid, inv, memory_order_relaxed);
		atomic_store_explicit(&tr->bytes, by, memory_order_relaxed);
		return;
	}
	struct ptw_writer_stats ws;
	ptw_writer_get_stats(tr->w, &ws);
	atomic_store_explicit(&tr->bytes, ws.bytes_written,
			      memory_order_relaxed);
}

/* A snapshot, right after its drain: the drops of each thread up to its
 * last event in the window are announced already (the DROPPED notes come
 * before the next event in the ring). A thread whose ring is still empty
 * may have lost events since that last event, with no note yet: its
 * counted total is exact then. Read in this order, a total of 'dropped'
 * that includes a drop after an event the drain did not take also shows
 * that event's tail (the producer stores the tail before the later
 * drop's count): then the notes alone are the exact figure. Announcing
 * never lowers a total, and a later note only raises it past the
 * announced one (no loss is counted twice). */
static void ptw_tr_announce_all(struct ptw_tracer *tr, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ptw_tr_thread *th = tr->snap[i];
		if (!th)
			continue; /* retired in this pass */
		uint64_t total = atomic_load_explicit(&th->pub.dropped,
						      memory_order_acquire);
		uint64_t tail = atomic_load_explicit(&th->pub.ring.tail,
						     memory_order_acquire);
		uint64_t head = atomic_load_explicit(&th->pub.ring.head,
						     memory_order_relaxed);
		if (tail == head && total > th->drops_announced)
			ptw_tr_announce_drops(
				tr, th, total,
				ptw_tr_ts(tr, ptw_i_now_slow(tr->clock_bits)));
	}
}

/* Writes a requested snapshot (after a drain pass) and answers it. */
static void ptw_tr_serve_snapshot(struct ptw_tracer *tr,
				  struct ptw_tr_snap_req *sr, size_t n)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	ptw_tr_announce_all(tr, n);
	struct ptw_i_trace_stats st = {
		.packet_loss = atomic_load_explicit(&tr->drops_announced,
						    memory_order_relaxed)};
	int rc = tr->rc ? tr->rc : ptw_i_writer_snapshot(tr->w, sr->fd, &st);
	if (rc == PTW_ERR_NOMEM)
		ptw_tr_check(tr, rc);
	pthread_mutex_lock(&c->mu);
	sr->rc = rc;
	sr->done = 1;
	tr->snap_req = NULL;
	tr->snap_busy = 0;
	pthread_cond_broadcast(&c->done);
	pthread_mutex_unlock(&c->mu);
}

/* Stop: the session's end in the output. Stream mode: a TraceStats packet
 * after everything else; ring mode: the window, if an output was named. */
static void ptw_tr_final_output(struct ptw_tracer *tr)
{
	struct ptw_i_trace_stats st = {
		.packet_loss = atomic_load_explicit(&tr->drops_announced,
						    memory_order_relaxed)};
	if (tr->rc || tr->out.fn) /* system mode: the service writes stats */
		return;
	if (!tr->ring) {
		ptw_tr_check(tr, ptw_i_writer_trace_stats(tr->w, &st));
		return;
	}
	int fd = tr->out_fd;
	if (tr->out_path) {
		fd = open(tr->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0666);
		if (fd < 0) {
			tr->rc = ptw_error_set(&tr->err, PTW_ERR_IO, errno,
					       "cannot create %s", tr->out_path);
			return;
		}
	}
	if (fd < 0)
		return; /* nothing named: the window goes with the session */
	int rc = ptw_i_writer_snapshot(tr->w, fd, &st);
	int e = errno;
	if (rc && !tr->rc)
		tr->rc = ptw_error_set(&tr->err, rc, rc == PTW_ERR_IO ? e : 0,
				       "writing the flight recorder's window "
				       "failed");
	if ((tr->out_path || tr->out_close) && close(fd) != 0 && !tr->rc)
		tr->rc = ptw_error_set(&tr->err, PTW_ERR_IO, errno,
				       "closing the trace failed");
}

/* Tests only (ptw_tr_test_hold): waits a moment unless a stop is asked;
 * returns 1 if it waited. */
static int ptw_tr_held(struct ptw_tracer *tr)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	/* an unload waits for a drain (tracer_unload.c) */
	int stop = tr->stop_req || tr->unl.req != tr->unl.done;
	if (!stop) {
		struct timespec dl;
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_nsec += 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_nsec -= 1000000000L;
			dl.tv_sec++;
		}
		pthread_cond_timedwait(&c->wake, &c->mu, &dl);
	}
	pthread_mutex_unlock(&c->mu);
	return !stop;
}

/* The longest pause, and the nap after a pass that found nothing right
 * after one that found work: the time a producer logging flat out takes
 * to fill half its ring (196 us for the default ring), within
 * [PTW_TR_MIN_SLEEP_US, PTW_TR_MAX_PAUSE_US] and at most drain_us. When
 * the producer and the backend share one core, that nap is the producer's
 * turn between two passes, and each turn costs both threads a switch and
 * cache refills: turns of half a ring cost 17-19 ns per event against
 * 20-21 ns with turns of 50 us (docs/tracer.md, Pacing). */
static uint32_t ptw_tr_pause_max_us(const struct ptw_tracer *tr)
{
	uint64_t us = (uint64_t)tr->ring_slots * PTW_TR_FLAT_OUT_NS / 2000;
	if (us > PTW_TR_MAX_PAUSE_US)
		us = PTW_TR_MAX_PAUSE_US;
	if (us > tr->drain_us)
		us = tr->drain_us;
	return us < PTW_TR_MIN_SLEEP_US ? PTW_TR_MIN_SLEEP_US : (uint32_t)us;
}

/* The pause after a pass that found work (see Pacing above): 0 to go
 * round again at once. fill: the largest share of a ring the pass found;
 * dt_ns: the time since the previous pass began; max_us: the longest. */
static uint32_t ptw_tr_pause_us(uint32_t fill, uint64_t dt_ns, uint32_t max_us)
{
	if (fill >= PTW_TR_FILL_ONE / 4)
		return 0;
	if (!fill)
		return max_us;
	uint64_t us = dt_ns * (PTW_TR_FILL_ONE / 4) / fill / 2000;
	if (us < PTW_TR_PAUSE_MIN_US)
		return 0;
	return us < max_us ? (uint32_t)us : max_us;
}

/* Drains every thread's ring once and finishes the threads that exited.
 * Returns the slots (and exited threads) consumed; *fill gets the largest
 * share of a ring found (in 1/PTW_TR_FILL_ONE). */
static uint64_t ptw_tr_drain_all(struct ptw_tracer *tr, size_t n, uint32_t *fill)
{
	uint64_t work = 0;
	*fill = 0;
	for (size_t i = 0; i < n; i++) {
		struct ptw_tr_thread *th = tr->snap[i];
		/* Acquire pairs with the destructor's release: once
		 * 'exited' is seen, the ring holds its last record. */
		if (atomic_load_explicit(&th->exited, memory_order_acquire)) {
			ptw_tr_finish_thread(tr, th);
			ptw_tr_retire(tr, th);
			tr->snap[i] = NULL; /* freed: a snapshot skips it */
			work++;
			continue;
		}
		uint64_t got = ptw_tr_drain(tr, th);
		work += got;
		uint32_t f = (uint32_t)(got * PTW_TR_FILL_ONE /
					th->pub.ring.capacity);
		*fill = f > *fill ? f : *fill;
	}
	return work;
}

/* Answers ptw_flush() request 'freq' if it is still pending. */
static void ptw_tr_serve_flush(struct ptw_tracer *tr, uint64_t freq)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	int pending = tr->flush_done < freq;
	pthread_mutex_unlock(&c->mu);
	if (!pending)
		return;
	ptw_tr_check(tr, ptw_writer_flush(tr->w));
	for (uint32_t k = 0; k < PTW_TR_MAX_SINKS; k++)
		if (tr->sinks[k])
			ptw_tr_check(tr->sinks[k],
				     ptw_writer_flush(tr->sinks[k]->w));
	ptw_tr_publish_bytes(tr);
	pthread_mutex_lock(&c->mu);
	tr->flush_done = freq;
	tr->flush_rc = tr->rc;
	pthread_cond_broadcast(&c->done);
	pthread_mutex_unlock(&c->mu);
}

/* Sleeps up to sleep_us unless a stop, flush, rename, snapshot or unload
 * is asked; these and waiting producers signal 'wake'. */
static void ptw_tr_idle_wait(struct ptw_tracer *tr, uint32_t sleep_us)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	if (!tr->stop_req && tr->flush_req == tr->flush_done &&
	    !tr->new_process_name && !tr->snap_req && !tr->sink_req &&
	    tr->unl.req == tr->unl.done) {
		struct timespec dl;
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_nsec += (long)sleep_us * 1000;
		while (dl.tv_nsec >= 1000000000L) {
			dl.tv_nsec -= 1000000000L;
			dl.tv_sec++;
		}
		pthread_cond_timedwait(&c->wake, &c->mu, &dl);
	}
	pthread_mutex_unlock(&c->mu);
}

/* The session's end: drains and finishes every thread, then writes the
 * last packets and closes the writer. */
static void ptw_tr_backend_stop(struct ptw_tracer *tr)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	/* Stop: the macros are off (no new registrations). Drain and finish
	 * every thread, then close the writer. */
	pthread_mutex_lock(&c->mu);
	size_t n = ptw_tr_snapshot_locked(tr);
	pthread_mutex_unlock(&c->mu);
	/* a snapshot asked before the stop is written with every event */
	pthread_mutex_lock(&c->mu);
	struct ptw_tr_snap_req *sreq = tr->snap_req;
	pthread_mutex_unlock(&c->mu);
	if (sreq) {
		for (size_t i = 0; i < n; i++)
			ptw_tr_drain(tr, tr->snap[i]);
		ptw_tr_serve_snapshot(tr, sreq, n);
	}
	for (size_t i = 0; i < n; i++) {
		ptw_tr_finish_thread(tr, tr->snap[i]);
		ptw_tr_retire(tr, tr->snap[i]);
		tr->snap[i] = NULL; /* freed: the open-slice hook skips it */
	}
	/* sinks still there (their owner removes them before the stop) */
	for (uint32_t k = 0; k < PTW_TR_MAX_SINKS; k++)
		if (tr->sinks[k])
			(void)ptw_tr_sink_close(tr, k, 0);
	pthread_mutex_lock(&c->mu);
	struct ptw_tr_sink_req *kreq = tr->sink_req;
	pthread_mutex_unlock(&c->mu);
	if (kreq) /* asked before the stop: refused */
		ptw_tr_sink_answer(tr, kreq, PTW_ERR_STATE);
	if (tr->mute)
		ptw_tr_publish_bytes(tr);
	/* async ids never ended, ENDs whose BEGIN never came (a system
	 * session stops while the program runs: its open slices stay open,
	 * as those of a snapshot; its ENDs are all soft) */
	if (!tr->out.fn)
		atomic_fetch_add_explicit(&tr->invalid,
					  ptw_tr_async_unmatched(&tr->async),
					  memory_order_relaxed);
	ptw_tr_final_output(tr);
	ptw_tr_check(tr, ptw_i_writer_realtime_tick(tr->w, 1));
	ptw_tr_check(tr, ptw_writer_flush(tr->w));
	struct ptw_writer_stats ws;
	ptw_writer_get_stats(tr->w, &ws);
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	int rc = ptw_writer_close(tr->w, &err);
	tr->w = NULL;
	if (rc && !tr->rc) {
		tr->rc = rc;
		tr->err = err;
	}
	/* everything was flushed before close: the figure is final */
	if (!tr->mute)
		atomic_store_explicit(&tr->bytes, ws.bytes_written,
				      memory_order_relaxed);

	ptw_tr_pass_end();

	pthread_mutex_lock(&c->mu);
	tr->flush_done = tr->flush_req;
	tr->flush_rc = tr->rc;
	pthread_cond_broadcast(&c->done);
	pthread_mutex_unlock(&c->mu);
}

void *ptw_tr_backend_main(void *arg)
{
	struct ptw_tracer *tr = arg;
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	uint32_t max_us = ptw_tr_pause_max_us(tr), sleep_us = max_us;
	uint64_t pass_ns = ptw_i_now_slow(PTW_I_GEN_ON); /* monotonic ns */
	ptw_tr_backend_tid();
	for (;;) {
		if (atomic_load_explicit(&ptw_tr_test_hold, memory_order_acquire) &&
		    ptw_tr_held(tr))
			continue;
		/* The writer is touched only inside a pass (tracer_crash.c). */
		ptw_tr_pass_begin();
		pthread_mutex_lock(&c->mu);
		size_t n = ptw_tr_snapshot_locked(tr);
		int stop = tr->stop_req;
		uint64_t freq = tr->flush_req;
		struct ptw_tr_snap_req *sreq = tr->snap_req;
		uint64_t ureq = tr->unl.req != tr->unl.done ? tr->unl.req : 0;
		char *rename = tr->new_process_name;
		tr->new_process_name = NULL;
		struct ptw_tr_sink_req *kreq = tr->sink_req;
		pthread_mutex_unlock(&c->mu);
		if (kreq && kreq->add) { /* joins before this pass's drain */
			ptw_tr_serve_sink(tr, kreq, n);
			kreq = NULL; /* answered: the caller's again */
		}

		if (rename) {
			ptw_tr_check(tr, ptw_writer_rename_track(
						 tr->w, tr->proc_track, rename));
			free(rename);
		}
		uint64_t now = ptw_i_now_slow(PTW_I_GEN_ON), dt = now - pass_ns;
		pass_ns = now;
		uint32_t fill;
		uint64_t work = ptw_tr_drain_all(tr, n, &fill);
		/* system mode: the TSC follows BOOTTIME (tsc.c); after the
		 * drain, so that the events the next one takes were mostly
		 * logged after the new anchor (the tight run's piece) */
		if (tr->use_tsc) {
			ptw_tr_tsc_reanchor(&tr->tsc);
			/* the sinks convert the same ticks the same way */
			for (uint32_t k = 0; k < PTW_TR_MAX_SINKS; k++)
				if (tr->sinks[k])
					tr->sinks[k]->tsc = tr->tsc;
		}
		if (ureq) /* a library goes: every ring was drained */
			ptw_tr_unload_serve(tr, ureq, n);
		ptw_tr_async_pass(&tr->async);
		if (tr->out.pass) /* system mode's requests (lib/system) */
			tr->out.pass(tr->out.ctx, tr->w);
		for (uint32_t k = 0; k < PTW_TR_MAX_SINKS; k++) {
			struct ptw_tracer *sk = tr->sinks[k];
			if (!sk)
				continue;
			if (sk->out.pass)
				sk->out.pass(sk->out.ctx, sk->w);
			ptw_tr_check(sk, ptw_i_writer_realtime_tick(sk->w, 0));
		}
		if (kreq) /* a sink leaves with everything drained */
			ptw_tr_serve_sink(tr, kreq, n);
		ptw_tr_check(tr, ptw_i_writer_realtime_tick(tr->w, 0));
		if (stop)
			break;
		if (sreq)
			ptw_tr_serve_snapshot(tr, sreq, n);
		ptw_tr_publish_bytes(tr);
		if (freq)
			ptw_tr_serve_flush(tr, freq);
		if (tr->crash && !tr->rc)
			ptw_tr_check(tr, ptw_i_writer_crash_ready(tr->w));
		ptw_tr_pass_end();
		if (work) {
			sleep_us = ptw_tr_pause_us(fill, dt, max_us);
			if (!sleep_us) {
				sleep_us = max_us;
				continue;
			}
		}
		/* idle or little work: longer each idle pass up to drain_us */
		ptw_tr_idle_wait(tr, sleep_us);
		sleep_us = sleep_us * 2 > tr->drain_us ? tr->drain_us : sleep_us * 2;
	}
	ptw_tr_backend_stop(tr);
	return NULL;
}
