/* emit.c - the emitter: inputs, and the general path that dispatches each
 * legacy event by phase. Processes, threads and their names are in
 * emit_procs.c, counters / async / scoped instants in
 * emit_track_events.c, the per-thread ordering of slices in
 * emit_thread.c, the short path for the bulk of events in emit_fast.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/chrome_json/cv_stacks.h"
#include "emit_internal.h"
#include "lib/writer/writer_internal.h"
#include "lib/util/grow.h"

int ptw_em_writer_fail(struct ptw_emit *em, int dflt, struct ptw_error *err)
{
	const struct ptw_error *we = ptw_writer_error(em->w);
	if (err) {
		if (we && we->code) {
			*err = *we;
		} else {
			ptw_error_set(err, dflt, 0, "writer: %s",
				      ptw_strerror(dflt));
		}
	}
	return we && we->code ? we->code : dflt;
}

int ptw_em_lifo_grow(struct ptw_em_lifo *l)
{
	void *p = ptw_grow(l->b, &l->cap, l->cap + 1, 16, sizeof(*l->b));
	if (!p)
		return -1;
	l->b = p;
	return 0;
}

int ptw_em_nomem(struct ptw_error *err)
{
	return ptw_error_set(err, PTW_ERR_NOMEM, 0, "converter: out of memory");
}

char *ptw_em_strndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* ---- create / destroy ------------------------------------------------- */

struct ptw_emit *ptw_emit_create(struct ptw_writer *w, struct ptw_error *err)
{
	if (!w) {
		ptw_error_set(err, PTW_ERR_INVALID, 0, "emit: no writer");
		return NULL;
	}
	struct ptw_emit *em = calloc(1, sizeof(*em));
	if (!em) {
		ptw_em_nomem(err);
		return NULL;
	}
	em->w = w;
	em->seq = ptw_writer_sim_seq(w);
	if (!em->seq) {
		free(em);
		ptw_error_set(err, PTW_ERR_INVALID, 0, "emit: writer has no "
			      "simulation sequence");
		return NULL;
	}
	/* (docs/convert.md, "Loading in trace_processor") */
	ptw_i_writer_converted(w);
	/* counters of every process and threads past the first 16: their
	 * times interleave, few would be deltas */
	ptw_i_seq_abs_only(em->seq);
	return em;
}

void ptw_emit_destroy(struct ptw_emit *em)
{
	if (!em)
		return;
	for (size_t i = 0; i < em->n_procs; i++) {
		free(em->procs[i].name);
		free(em->procs[i].written);
	}
	free(em->procs);
	for (size_t i = 0; i < em->n_threads; i++)
		ptw_em_thread_free(em->threads[i]);
	free(em->threads);
	ptw_cv_json_parser_destroy(em->jp);
	ptw_cv_stacks_destroy(em->stacks);
	free(em->frames);
	for (size_t i = 0; i < em->n_cli; i++)
		free(em->cli_names[i]);
	free(em->cli_names);
	ptw_map_free(&em->proc_map);
	ptw_map_free(&em->pid_owner);
	ptw_map_free(&em->thread_map);
	ptw_map_free(&em->async_map);
	ptw_map_free(&em->counter_map);
	ptw_map_free(&em->cli_proc);
	ptw_map_free(&em->cli_thread);
	ptw_map_free(&em->pid_remap);
	ptw_map_free(&em->tid_remap);
	for (size_t i = 0; i < em->n_str; i++)
		free(em->str_names[i]);
	free(em->str_names);
	free(em->str_lens);
	ptw_map_free(&em->str_ids);
	ptw_em_strs_free(&em->strs);
	ptw_em_buf_free(&em->tmp);
	free(em->strbuf);
	free(em);
}

void ptw_emit_get_stats(const struct ptw_emit *em, struct ptw_emit_stats *out)
{
	if (!out)
		return;
	if (em)
		*out = em->st;
	else
		memset(out, 0, sizeof(*out));
}

/* ---- default names ---------------------------------------------------- */

static int ptw_em_cli_name(struct ptw_emit *em, struct ptw_map *m,
			   uint64_t key, const char *name)
{
	if (!name)
		return PTW_ERR_INVALID;
	if (em->n_cli == em->cli_cap) {
		void *p = ptw_grow(em->cli_names, &em->cli_cap, em->n_cli + 1,
				   8, sizeof(*em->cli_names));
		if (!p)
			return PTW_ERR_NOMEM;
		em->cli_names = p;
	}
	char *copy = strdup(name);
	if (!copy)
		return PTW_ERR_NOMEM;
	em->cli_names[em->n_cli] = copy;
	if (ptw_map_put(m, key, em->n_cli)) {
		free(copy);
		return PTW_ERR_NOMEM;
	}
	em->n_cli++;
	return 0;
}

int ptw_emit_name_process(struct ptw_emit *em, uint32_t pid, const char *name)
{
	return em ? ptw_em_cli_name(em, &em->cli_proc, pid, name)
		  : PTW_ERR_INVALID;
}

int ptw_emit_name_thread(struct ptw_emit *em, uint32_t pid, uint32_t tid,
			 const char *name)
{
	return em ? ptw_em_cli_name(em, &em->cli_thread,
				    (uint64_t)pid << 32 | tid, name)
		  : PTW_ERR_INVALID;
}

/* ---- inputs ------------------------------------------------------------ */

int ptw_emit_begin_input(struct ptw_emit *em, const struct ptw_emit_input *in,
			 struct ptw_error *err)
{
	if (!em || em->in_input)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "emit: input already open");
	em->epoch++;
	struct ptw_emit_input def = {0};
	if (!in)
		in = &def;
	ptw_map_free(&em->pid_remap);
	ptw_map_free(&em->tid_remap);
	for (uint32_t i = 0; i < in->n_pids; i++)
		if (ptw_map_put(&em->pid_remap, in->pids[i].from,
				   in->pids[i].to))
			return ptw_em_nomem(err);
	for (uint32_t i = 0; i < in->n_tids; i++)
		if (ptw_map_put(&em->tid_remap, in->tids[i].from,
				   in->tids[i].to))
			return ptw_em_nomem(err);
	em->mode = in->mode;
	em->fast_ok = !in->general_path_only && !em->pid_remap.count &&
		      !em->tid_remap.count;
	em->seen_x = 0;
	em->max_held = in->max_held ? in->max_held : PTW_EMIT_MAX_HELD;
	em->shift_ns = in->shift_ns;
	em->async_last = 0; /* inputs are merged in order, each sorted alone */
	em->ts_in_max = INT64_MAX - (in->shift_ns > 0 ? in->shift_ns : 0);
	memset(em->th_cache, 0, sizeof(em->th_cache)); /* per input */
	memset(em->sym_cache, 0, sizeof(em->sym_cache));
	em->last_proc = 0;
	em->in_input = 1;
	return 0;
}

int ptw_emit_end_input(struct ptw_emit *em, struct ptw_error *err)
{
	if (!em || !em->in_input)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "emit: no input open");
	em->epoch++;
	for (size_t i = 0; i < em->n_threads; i++) {
		struct ptw_em_thread *th = em->threads[i];
		if (th->gen != em->input_index)
			continue;
		int rc = ptw_em_flush(em, th, 1, err);
		if (rc)
			return rc;
		/* Chrome B's never ended: open in trace_processor (dur -1) */
		if (em->mode == PTW_EMIT_CHROME)
			em->st.open_slices += th->model_n;
		th->lifo[0].n = th->lifo[1].n = 0;
		/* No event can reach this thread any more (a later input has
		 * threads of its own): end its sequence, free its slot. */
		if (th->own_seq) {
			ptw_seq_destroy(th->seq);
			th->seq = em->seq;
			th->own_seq = 0;
			em->n_thread_seqs--;
		}
	}
	em->in_input = 0;
	em->input_index++;
	return 0;
}

int ptw_emit_finish(struct ptw_emit *em, struct ptw_error *err)
{
	if (!em)
		return PTW_ERR_INVALID;
	if (em->in_input) {
		int rc = ptw_emit_end_input(em, err);
		if (rc)
			return rc;
	}
	/* Every pid seen is a process (trace_processor creates one for any
	 * event); names are written last so the last one wins. */
	for (size_t i = 0; i < em->n_procs; i++) {
		struct ptw_em_proc *pr = &em->procs[i];
		if (!pr->uuid) {
			if (pr->pid != 0 && !ptw_em_proc_track(em, pr, err))
				return err ? err->code : PTW_ERR_INVALID;
		} else if (pr->name && (!pr->written ||
					strcmp(pr->name, pr->written) != 0)) {
			if (ptw_writer_rename_track(em->w, pr->uuid, pr->name))
				return ptw_em_writer_fail(em, PTW_ERR_INVALID,
							  err);
		}
	}
	/* Every thread an event named is a thread row (see
	 * ptw_em_general_event), with or without events of its own. */
	for (size_t i = 0; i < em->n_threads; i++) {
		struct ptw_em_thread *th = em->threads[i];
		if (!th->uuid) {
			if (!ptw_em_thread_descriptor(em, th, err))
				return err ? err->code : PTW_ERR_INVALID;
		} else if (th->name && (!th->written ||
					strcmp(th->name, th->written) != 0)) {
			if (ptw_writer_rename_track(em->w, th->uuid, th->name))
				return ptw_em_writer_fail(em, PTW_ERR_INVALID,
							  err);
		}
	}
	/* No event, process or thread ([] or a file trace_processor stops
	 * reading at its first event): still a valid trace, one clock
	 * snapshot, which trace_processor loads as it loads the JSON (its
	 * swapper thread 0 and process 0 only) and ptw-dump --check passes. */
	struct ptw_writer_stats ws;
	ptw_writer_get_stats(em->w, &ws);
	if (!ws.packets && !em->n_procs && !em->n_threads &&
	    ptw_seq_lane_start(em->seq, 0))
		return ptw_em_writer_fail(em, PTW_ERR_INVALID, err);
	return 0;
}

/* ---- thread events -------------------------------------------------------- */

/* Moves the thread's flush limit to 'ts' and writes what it releases. */
static int ptw_em_advance(struct ptw_emit *em, struct ptw_em_thread *th,
			  int64_t ts, struct ptw_error *err)
{
	if (th->has_last && ts <= th->last_ts) {
		/* trace_processor sorts JSON by ts: an earlier event after a
		 * later one cannot be put right here (cv_sort.c can) */
		if (ts < th->last_ts && em->mode == PTW_EMIT_CHROME)
			em->st.out_of_order++;
		return 0;
	}
	th->last_ts = ts;
	th->has_last = 1;
	return ptw_em_flush(em, th, 0, err);
}

/* A flow id given as a string, read as trace_processor reads it
 * (base::CStringToUInt64(s, 16), i.e. strtoull base 16 over the whole
 * NUL-terminated string): leading white space, an optional sign (a '-'
 * negates modulo 2^64), an optional 0x/0X, hex digits; overflow gives
 * UINT64_MAX. The string ends at its first NUL (as c_str() does); it must
 * be consumed entirely and must not be empty, else there is no id (0).
 * So "0x5", "0x05", "5" and " 5" are the same flow. */
static int ptw_em_hex_id(struct ptw_cv_str s, uint64_t *out)
{
	const char *z = s.n ? memchr(s.p, '\0', s.n) : NULL;
	size_t n = z ? (size_t)(z - s.p) : s.n, i = 0;
	if (!s.p || n == 0)
		return 0;
	while (i < n && (s.p[i] == ' ' || (s.p[i] >= '\t' && s.p[i] <= '\r')))
		i++;
	int neg = 0;
	if (i < n && (s.p[i] == '+' || s.p[i] == '-'))
		neg = s.p[i++] == '-';
	if (i + 2 < n && s.p[i] == '0' &&
	    (s.p[i + 1] == 'x' || s.p[i + 1] == 'X') &&
	    isxdigit((unsigned char)s.p[i + 2]))
		i += 2;
	size_t digits = 0;
	uint64_t v = 0;
	int over = 0;
	for (; i < n && isxdigit((unsigned char)s.p[i]); i++, digits++) {
		unsigned char c = (unsigned char)s.p[i];
		unsigned d = c <= (unsigned char)'9' ? (unsigned)c - 48u
						      : ((unsigned)c | 0x20u) - 87u;
		if (v > (UINT64_MAX >> 4))
			over = 1;
		v = v << 4 | d;
	}
	if (!digits || i != n)
		return 0; /* strtoull consumed nothing, or stopped early */
	*out = over ? UINT64_MAX : neg ? 0 - v : v;
	return 1;
}

/* The v2 flow of a B or X event (JSON MaybeAddFlow): its direction
 * (PTW_FLOW_NONE: none) and bind id, written as the slice's legacy_event,
 * which trace_processor reads with the same rules (out: Begin, in and
 * out: Step, in: End without closing, all on the event's slice). A
 * bind_id that is no number, or one without flow_in/flow_out (TP:
 * flow_without_direction), makes no flow. */
uint8_t ptw_em_v2_flow(const struct ptw_cv_event *ev, uint64_t *bind)
{
	*bind = 0;
	if (!(ev->flags & PTW_CV_HAS_BIND_ID) ||
	    !(ev->flags & (PTW_CV_FLOW_IN | PTW_CV_FLOW_OUT)))
		return PTW_FLOW_NONE;
	if (ev->flags & PTW_CV_BIND_ID_IS_NUM)
		*bind = ev->bind_num;
	else if (!ptw_em_hex_id(ev->bind_id, bind))
		return PTW_FLOW_NONE; /* trace_processor: no flow */
	return (uint8_t)(((ev->flags & PTW_CV_FLOW_IN) ? PTW_FLOW_IN : 0) |
			 ((ev->flags & PTW_CV_FLOW_OUT) ? PTW_FLOW_OUT : 0));
}

/* A B event of an AppleTrace input (XFORM): queued unresolved, and
 * pushed on the raw thread's LIFO of open B's for its E to find. */
static inline int ptw_em_xform_begin(struct ptw_emit *em,
				     struct ptw_em_thread *th,
				     struct ptw_em_item *it,
				     const struct ptw_cv_event *ev,
				     const char *nm, size_t nn,
				     const int64_t *tts, int raw_tid0,
				     struct ptw_error *err)
{
	uint64_t id, bind;
	uint8_t fdir = ptw_em_v2_flow(ev, &bind);
	it->state = PTW_EM_UNRESOLVED;
	if (ptw_em_queue(em, th, it, nm, nn, ev->cat.p, ev->cat.n, ev, fdir,
			 bind, tts, &id))
		return ptw_em_nomem(err);
	struct ptw_em_lifo *l = &th->lifo[raw_tid0];
	if (l->n == l->cap && ptw_em_lifo_grow(l) != 0)
		return ptw_em_nomem(err);
	l->b[l->n].id = id;
	l->b[l->n++].ts = it->ts;
	return 0;
}

/* An E event of an AppleTrace input (XFORM): pairs with the raw thread's
 * last open B, which becomes complete. Returns 1 if the END is to be
 * queued (it->ts may move), 0 if not (dropped, or the pair is written as
 * an instant). */
static inline int ptw_em_xform_end(struct ptw_emit *em,
				   struct ptw_em_thread *th,
				   struct ptw_em_item *it, int raw_tid0)
{
	struct ptw_em_lifo *l = &th->lifo[raw_tid0];
	if (!l->n) {
		em->st.dropped++; /* unmatched E */
		return 0;
	}
	const struct ptw_em_open_b *ob = &l->b[--l->n];
	struct ptw_em_item *b = ptw_em_find(th, ob->id);
	if (!b && it->ts < ob->ts) {
		/* Before its B, which is written already (a later event
		 * released it): end it where it began, so the end closes it
		 * and nothing else (trace_processor drops a negative
		 * duration). */
		em->st.backward_ends++;
		it->ts = ob->ts;
	}
	if (b) {
		if (it->ts < b->ts) {
			b->state = PTW_EM_DEAD;
			em->st.dropped++;
			return 0;
		}
		b->state = PTW_EM_COMPLETE;
		b->dur = it->ts - b->ts;
		b->seq = it->seq;
		if (b->dur == 0)
			return 0; /* written as an instant */
	}
	return 1;
}

struct ptw_cv_stacks *ptw_emit_stacks(struct ptw_emit *em)
{
	if (em && !em->stacks)
		em->stacks = ptw_cv_stacks_create();
	return em ? em->stacks : NULL;
}

/* The stack of an event's "sf" id or inline "stack" (sf wins), as a
 * frame of em->stacks for em->pend_cs: 0 when it has none, or one that
 * cannot be written (counted). Returns 0 or PTW_ERR_NOMEM. */
static int ptw_em_stack_of(struct ptw_emit *em, struct ptw_cv_str sf,
			   struct ptw_cv_str stack, uint32_t *out)
{
	uint32_t f = 0;
	*out = 0;
	if (!sf.p && !stack.p)
		return 0;
	if (!ptw_emit_stacks(em))
		return PTW_ERR_NOMEM;
	if (sf.p) {
		if (!(f = ptw_cv_stacks_find(em->stacks, sf))) {
			em->st.stack_unknown++;
			return 0;
		}
	} else {
		if (!em->jp && !(em->jp = ptw_cv_json_parser_create(NULL)))
			return PTW_ERR_NOMEM;
		int rc = ptw_cv_stacks_inline(em->stacks, em->jp, stack, &f);
		if (rc == PTW_ERR_NOMEM)
			return rc;
		if (rc) {
			em->st.stack_invalid++;
			return 0;
		}
	}
	if (f && ptw_cv_stacks_depth(em->stacks, f) == PTW_CV_STACK_CYCLE) {
		em->st.stack_cycles++;
		f = 0;
	}
	*out = f;
	return 0;
}

/* An X event: a complete BEGIN, and (with a duration) its END queued
 * right after it. */
static inline int ptw_em_x_event(struct ptw_emit *em, struct ptw_em_thread *th,
				 struct ptw_em_item *it,
				 const struct ptw_cv_event *ev, const char *nm,
				 size_t nn, const int64_t *tts,
				 struct ptw_error *err)
{
	int64_t dur = ev->dur_ns, ts = it->ts;
	uint64_t bind;
	em->seen_x = 1;
	if (!(ev->flags & PTW_CV_HAS_DUR)) {
		/* trace_processor's parser: json_parser_failure (its thread
		 * exists, as here) */
		em->st.dropped++;
		em->st.x_without_dur++;
		return 0;
	}
	if (dur < 0) {
		em->st.dropped++;
		return 0;
	}
	uint8_t fdir = ptw_em_v2_flow(ev, &bind);
	/* One packet (legacy phase 'X', duration in whole microseconds)
	 * when that is exact: trace_processor's protobuf import reads it as
	 * its JSON import reads the X (SliceTracker::Scoped), faster than a
	 * BEGIN and an END. Thread time needs the pair (an extra counter
	 * value at each end). */
	int one = dur > 0 && dur % 1000 == 0 && !tts && ts <= INT64_MAX - dur &&
		  !(ev->stacks && (ev->stacks->esf.p || ev->stacks->estack.p));
	/* (an end stack needs the END) */
	it->kind = PTW_EM_BEGIN;
	it->state = PTW_EM_COMPLETE;
	it->dur = dur;
	it->is_x = one ? 2 : 1;
	int rc = ptw_em_queue(em, th, it, nm, nn, ev->cat.p, ev->cat.n, ev,
			      fdir, bind, tts, NULL);
	if (rc || dur == 0)
		return rc ? ptw_em_nomem(err) : 0;
	it->kind = one ? PTW_EM_X_END : PTW_EM_END;
	it->is_x = 0;
	it->ts = ts > INT64_MAX - dur ? INT64_MAX : ts + dur;
	/* thread_dur = tdur: the END's thread time is tts + tdur */
	int64_t tend;
	const int64_t *tte = NULL;
	if (tts && (ev->flags & PTW_CV_HAS_TDUR) &&
	    !__builtin_add_overflow(*tts, ev->tdur_ns, &tend))
		tte = &tend;
	/* its end stack */
	if (__builtin_expect(ev->flags & PTW_CV_HAS_STACK, 0) &&
	    ptw_em_stack_of(em, ev->stacks->esf, ev->stacks->estack,
			    &em->pend_cs))
		return ptw_em_nomem(err);
	/* queued right after the BEGIN: its id is the BEGIN's + 1
	 * (ptw_em_spill finds it so) */
	rc = ptw_em_queue(em, th, it, "", 0, NULL, 0, NULL, PTW_FLOW_NONE, 0,
			  tte, NULL);
	return rc ? ptw_em_nomem(err) : 0;
}

/* A v1 flow event (s, t, f): only "id" counts (not id2), a string is
 * read as hex. The event is written as it is (ptw_em_write_flow):
 * trace_processor scopes the id by (id, cat, name) and binds it to a
 * slice when it reads it. */
static inline int ptw_em_v1_flow_event(struct ptw_emit *em,
				       struct ptw_em_thread *th,
				       struct ptw_em_item *it,
				       const struct ptw_cv_event *ev,
				       struct ptw_error *err)
{
	uint64_t num = ev->id_num;
	if (!(ev->flags & PTW_CV_HAS_ID) || (ev->flags & PTW_CV_ID_FROM_ID2) ||
	    ((ev->flags & PTW_CV_ID_IS_STRING) &&
	     !ptw_em_hex_id(ev->id_str, &num))) {
		em->st.dropped++; /* trace_processor: flow_invalid_id */
		return 0;
	}
	it->kind = PTW_EM_FLOW;
	it->flow_id = num;
	it->flow_ph = (uint8_t)(ev->ph != 'f' ? ev->ph
			       : ev->bp == 'e' ? 'f' : 'n');
	int rc = ptw_em_queue(em, th, it, ev->name.p ? ev->name.p : "",
			      ev->name.p ? ev->name.n : 0, ev->cat.p,
			      ev->cat.n, NULL, PTW_FLOW_NONE, 0, NULL, NULL);
	return rc ? ptw_em_nomem(err) : 0;
}

/* An event on its thread's track: queued as one item (two for an X). */
static int ptw_em_thread_event(struct ptw_emit *em,
			       const struct ptw_cv_event *ev,
			       struct ptw_em_thread *th, int64_t ts,
			       int raw_tid0, struct ptw_error *err)
{
	int rc = ptw_em_advance(em, th, ts, err);
	if (rc)
		return rc;
	const char *nm;
	size_t nn;
	ptw_em_display_name(ev, &nm, &nn);
	const char *cat = ev->cat.p;
	size_t catn = ev->cat.n;
	uint64_t bind = 0;
	uint8_t fdir = PTW_FLOW_NONE;
	struct ptw_em_item it;
	memset(&it, 0, sizeof(it));
	it.ts = ts;
	it.seq = ++em->next_seq;
	/* thread time (json_trace_parser.cc: B, E, X and thread-scoped
	 * instants; not shifted: it is the thread's own clock) */
	const int64_t *tts = (ev->flags & PTW_CV_HAS_TTS) ? &ev->tts_ns : NULL;
	switch (ev->ph) {
	case 'B':
		it.kind = PTW_EM_BEGIN;
		if (em->mode == PTW_EMIT_XFORM)
			return ptw_em_xform_begin(em, th, &it, ev, nm, nn, tts,
						  raw_tid0, err);
		fdir = ptw_em_v2_flow(ev, &bind);
		it.state = PTW_EM_RAW;
		break;
	case 'E':
		it.kind = PTW_EM_END;
		if (em->mode == PTW_EMIT_XFORM) {
			if (!ptw_em_xform_end(em, th, &it, raw_tid0))
				return 0;
			/* Names on ends are left out: the END closes the
			 * innermost open slice, which is the LIFO pair. */
			nm = "";
			nn = 0;
			cat = NULL;
			catn = 0;
			break;
		}
		it.raw_end = 1;
		it.e_late = !em->seen_x;
		nm = ev->name.p ? ev->name.p : "";
		nn = ev->name.p ? ev->name.n : 0;
		break;
	case 'X':
		return ptw_em_x_event(em, th, &it, ev, nm, nn, tts, err);
	case 's':
	case 't':
	case 'f':
		return ptw_em_v1_flow_event(em, th, &it, ev, err);
	default: /* thread-scoped instant */
		it.kind = PTW_EM_INSTANT;
		break;
	}
	rc = ptw_em_queue(em, th, &it, nm, nn, cat, catn, ev, fdir, bind,
			  tts, NULL);
	return rc ? ptw_em_nomem(err) : 0;
}

/* ptw_em_thread_event for an event with a callstack: the stack is taken
 * by the next ptw_em_queue (an X's END takes its esf, ptw_em_x_event),
 * and none is left for a later item (when the event was dropped). */
__attribute__((noinline)) static int
ptw_em_thread_event_stack(struct ptw_emit *em, const struct ptw_cv_event *ev,
			  struct ptw_em_thread *th, int64_t ts, int raw_tid0,
			  struct ptw_error *err)
{
	if (ev->ph == 's' || ev->ph == 't' || ev->ph == 'f')
		em->st.stack_ignored++; /* flows carry none */
	else if (ptw_em_stack_of(em, ev->stacks->sf, ev->stacks->stack,
				 &em->pend_cs))
		return ptw_em_nomem(err);
	int rc = ptw_em_thread_event(em, ev, th, ts, raw_tid0, err);
	em->pend_cs = 0;
	return rc;
}

/* Does the event go on its thread's track (B, E, X, flows, thread-scoped
 * instants)? */
static int ptw_em_is_thread_event(const struct ptw_cv_event *ev)
{
	switch (ev->ph) {
	case 'B':
	case 'E':
	case 'X':
	case 's':
	case 't':
	case 'f':
		return 1;
	case 'i':
	case 'I':
	case 'R':
		return ev->scope != 'g' && ev->scope != 'p';
	default:
		return 0;
	}
}

/* Applies the input's --remap-pid / --remap-tid. */
static void ptw_em_remap(const struct ptw_emit *em, uint32_t *pid,
			 uint32_t *tid)
{
	uint64_t v;
	if (em->pid_remap.count && ptw_map_get(&em->pid_remap, *pid, &v))
		*pid = (uint32_t)v;
	if (em->tid_remap.count && ptw_map_get(&em->tid_remap, *tid, &v))
		*tid = (uint32_t)v;
}

/* The event's pid and tid as numbers: string ids numbered, the input's
 * remapping applied (tid 0 stays 0). */
static int ptw_em_ids(struct ptw_emit *em, const struct ptw_cv_event *ev,
		      uint32_t *pid, uint32_t *tid, struct ptw_error *err)
{
	int rc;
	*pid = (ev->flags & PTW_CV_HAS_PID) ? ev->pid : 0;
	*tid = (ev->flags & PTW_CV_HAS_TID) ? ev->tid : 0;
	if ((ev->flags & PTW_CV_PID_IS_STRING) &&
	    (rc = ptw_em_str_id(em, ev->pid_str, pid, err)))
		return rc;
	if ((ev->flags & PTW_CV_TID_IS_STRING) &&
	    (rc = ptw_em_str_id(em, ev->tid_str, tid, err)))
		return rc;
	ptw_em_remap(em, pid, tid);
	return 0;
}

int ptw_emit_sort_index_event(void *ctx, const struct ptw_cv_event *ev,
			      struct ptw_error *err)
{
	struct ptw_emit *em = ctx;
	if (!em || !ev || !em->in_input)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "emit: event outside an input");
	em->epoch++;
	if (!ptw_em_sort_kind(ev))
		return 0;
	uint32_t pid, tid;
	int rc = ptw_em_ids(em, ev, &pid, &tid, err);
	if (rc)
		return rc;
	if (tid == 0)
		tid = pid;
	if ((ev->flags & (PTW_CV_PID_IS_STRING | PTW_CV_TID_IS_STRING)) &&
	    (rc = ptw_em_string_names(em, ev, pid, tid, err)))
		return rc;
	return ptw_em_sort_index(em, ev, pid, tid, err);
}

/* json_trace_parser.cc ParseJsonPacket runs procs->UpdateThread(tid, pid)
 * for every event that reaches it (tid already the pid when it was 0):
 * the thread exists from then on, a row of the thread table even if no
 * event lands on its track; ptw_emit_finish() writes its descriptor.
 * (0, 0) is trace_processor's swapper thread, which always exists. */
static int ptw_em_touch_thread(struct ptw_emit *em, uint32_t pid,
			       uint32_t tid, struct ptw_error *err)
{
	if ((pid || tid) && !ptw_em_thread_get(em, pid, tid, err))
		return err ? err->code : PTW_ERR_NOMEM;
	return 0;
}

/* Every event the short path (emit_fast.c, which holds ptw_emit_event)
 * does not take. */
int ptw_em_general_event(struct ptw_emit *em, const struct ptw_cv_event *ev,
			 struct ptw_error *err)
{
	em->epoch++;
	em->st.events_in++;
	em->st.by_phase[(unsigned char)ev->ph & 127u]++;
	if (!ev->ph) {
		em->st.dropped++; /* the tokenizer drops it: no row at all */
		return 0;
	}

	if ((ev->flags & (PTW_CV_PID_IS_STRING | PTW_CV_TID_IS_STRING)) &&
	    ev->ph != 'M' && !(ev->flags & PTW_CV_HAS_TS)) {
		em->st.dropped++; /* dropped before it names anything */
		return 0;
	}
	if (!ev->ph && em->mode == PTW_EMIT_CHROME) {
		/* trace_processor's tokenizer skips an event without a
		 * phase ("{}" included) before anything else */
		em->st.dropped++;
		return 0;
	}
	uint32_t pid, tid;
	int rc = ptw_em_ids(em, ev, &pid, &tid, err);
	if (rc)
		return rc;
	int raw_tid0 = tid == 0 && pid != 0;
	if (tid == 0)
		tid = pid; /* trace_processor: tid 0 is the pid */

	if (ev->ph == 'M') {
		if ((ev->flags & (PTW_CV_PID_IS_STRING | PTW_CV_TID_IS_STRING)) &&
		    (rc = ptw_em_string_names(em, ev, pid, tid, err)))
			return rc;
		if ((rc = ptw_em_touch_thread(em, pid, tid, err)))
			return rc;
		return ptw_em_metadata(em, ev, pid, tid, err);
	}
	if (!(ev->flags & PTW_CV_HAS_TS)) {
		em->st.dropped++;
		return 0;
	}
	int64_t ts = ev->ts_ns;
	if (ts > em->ts_in_max ||
	    (em->shift_ns < 0 && ts < INT64_MIN - em->shift_ns)) {
		em->st.dropped++;
		return 0;
	}
	ts += em->shift_ns;
	if (ts < 0) {
		em->st.dropped++; /* trace_processor drops negative times */
		return 0;
	}
	if ((ev->flags & (PTW_CV_PID_IS_STRING | PTW_CV_TID_IS_STRING)) &&
	    (rc = ptw_em_string_names(em, ev, pid, tid, err)))
		return rc;
	/* Every pid is a process and every (pid, tid) a thread, whatever
	 * the event (thread events make them with their thread). */
	int thread_ev = ptw_em_is_thread_event(ev);
	if (!thread_ev && (rc = ptw_em_touch_thread(em, pid, tid, err)))
		return rc;

	if (__builtin_expect(ev->flags & PTW_CV_HAS_STACK, 0) && !thread_ev)
		em->st.stack_ignored++;
	switch (thread_ev ? 0 : ev->ph) {
	case 'C':
		return ptw_em_counter(em, ev, pid, ts, err);
	case 'b':
	case 'e':
	case 'n':
		return ptw_em_async(em, ev, pid, ts, err);
	case 'i':
	case 'I':
	case 'R': /* scope g or p (t is a thread event) */
		return ptw_em_scoped_instant(em, ev, pid, tid, ts, err);
	case 0:
		break;
	default:
		/* no table row (the process exists) */
		em->st.unwritten_by_phase[(unsigned char)ev->ph & 127u]++;
		return 0;
	}
	struct ptw_em_thread *th = ptw_em_thread_get(em, pid, tid, err);
	if (!th)
		return err ? err->code : PTW_ERR_NOMEM;
	if (__builtin_expect(ev->flags & PTW_CV_HAS_STACK, 0))
		return ptw_em_thread_event_stack(em, ev, th, ts, raw_tid0,
						 err);
	return ptw_em_thread_event(em, ev, th, ts, raw_tid0, err);
}
