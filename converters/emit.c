/* emit.c - dispatches legacy events to the writer: processes, threads,
 * counters, async tracks, instants and names (the per-thread ordering of
 * slices lives in emit_thread.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_internal.h"

static const char ptw_em_no_name[] = PTW_EM_NO_NAME;

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

static int ptw_em_nomem(struct ptw_error *err)
{
	return ptw_error_set(err, PTW_ERR_NOMEM, 0, "converter: out of memory");
}

static char *ptw_em_strndup(const char *s, size_t n)
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
	free(em->asyncs);
	for (size_t i = 0; i < em->n_cli; i++)
		free(em->cli_names[i]);
	free(em->cli_names);
	ptw_map_free(&em->proc_map);
	ptw_map_free(&em->pid_owner);
	ptw_map_free(&em->thread_map);
	ptw_map_free(&em->async_map);
	ptw_map_free(&em->async_free);
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
		size_t nc = em->cli_cap ? em->cli_cap * 2 : 8;
		void *p = realloc(em->cli_names, nc * sizeof(char *));
		if (!p)
			return PTW_ERR_NOMEM;
		em->cli_names = p;
		em->cli_cap = nc;
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

static int ptw_em_set_name(char **slot, const char *s, size_t n)
{
	char *p = ptw_em_strndup(s, n);
	if (!p)
		return PTW_ERR_NOMEM;
	free(*slot);
	*slot = p;
	return 0;
}

/* ---- processes and threads -------------------------------------------- */

/* The process of 'pid' in the current input: each input has its own, so
 * equal pids of different inputs stay apart. */
static struct ptw_em_proc *ptw_em_proc_get(struct ptw_emit *em, uint32_t pid,
					   size_t *index, struct ptw_error *err)
{
	uint64_t key = (uint64_t)em->input_index << 32 | pid;
	uint64_t v;
	if (em->last_proc && em->last_pid == pid) {
		if (index)
			*index = em->last_proc - 1;
		return &em->procs[em->last_proc - 1];
	}
	if (ptw_map_get(&em->proc_map, key, &v)) {
		em->last_pid = pid;
		em->last_proc = (size_t)v + 1;
		if (index)
			*index = (size_t)v;
		return &em->procs[v];
	}
	if (em->n_procs == em->procs_cap) {
		size_t nc = em->procs_cap ? em->procs_cap * 2 : 16;
		void *p = realloc(em->procs, nc * sizeof(*em->procs));
		if (!p) {
			ptw_em_nomem(err);
			return NULL;
		}
		em->procs = p;
		em->procs_cap = nc;
	}
	struct ptw_em_proc *pr = &em->procs[em->n_procs];
	memset(pr, 0, sizeof(*pr));
	pr->pid = pid;
	pr->gen = em->input_index;
	uint64_t ci;
	if (ptw_map_get(&em->cli_proc, pid, &ci) &&
	    !(pr->name = strdup(em->cli_names[ci]))) {
		ptw_em_nomem(err);
		return NULL;
	}
	uint64_t owner;
	if (!ptw_map_get(&em->pid_owner, pid, &owner)) {
		if (ptw_map_put(&em->pid_owner, pid, em->input_index + 1u)) {
			ptw_em_nomem(err);
			return NULL;
		}
	} else if (owner != em->input_index + 1u) {
		em->st.pid_collisions++;
	}
	if (ptw_map_put(&em->proc_map, key, em->n_procs)) {
		free(pr->name);
		ptw_em_nomem(err);
		return NULL;
	}
	if (index)
		*index = em->n_procs;
	em->n_procs++;
	return pr;
}

static uint64_t ptw_em_proc_track(struct ptw_emit *em, struct ptw_em_proc *pr,
				  struct ptw_error *err)
{
	if (pr->uuid)
		return pr->uuid;
	pr->uuid = ptw_writer_add_process_track(em->w, (int32_t)pr->pid,
						pr->name);
	if (!pr->uuid || (pr->has_sort && ptw_writer_set_track_rank(
						  em->w, pr->uuid, pr->sort_index))) {
		ptw_em_writer_fail(em, PTW_ERR_INVALID, err);
		return 0;
	}
	if (pr->name && !(pr->written = strdup(pr->name))) {
		ptw_em_nomem(err);
		return 0;
	}
	return pr->uuid;
}

static struct ptw_em_thread *ptw_em_thread_get(struct ptw_emit *em,
					       uint32_t pid, uint32_t tid,
					       struct ptw_error *err)
{
	uint64_t key = ((uint64_t)pid << 32 | tid) ^
		       ((uint64_t)em->input_index * 0x9E3779B97F4A7C15ull);
	uint64_t v;
	struct ptw_em_thread **slot = &em->th_cache[ptw_em_th_slot(tid)];
	struct ptw_em_thread *c = *slot;
	if (c && c->pid == pid && c->tid == tid)
		return c;
	if (ptw_map_get(&em->thread_map, key, &v))
		return *slot = em->threads[v];
	size_t pi;
	if (!ptw_em_proc_get(em, pid, &pi, err))
		return NULL;
	if (em->n_threads == em->threads_cap) {
		size_t nc = em->threads_cap ? em->threads_cap * 2 : 16;
		void *p = realloc(em->threads, nc * sizeof(*em->threads));
		if (!p) {
			ptw_em_nomem(err);
			return NULL;
		}
		em->threads = p;
		em->threads_cap = nc;
	}
	struct ptw_em_thread *th = calloc(1, sizeof(*th));
	if (!th) {
		ptw_em_nomem(err);
		return NULL;
	}
	th->pid = pid;
	th->tid = tid;
	th->gen = em->input_index;
	th->proc = pi;
	uint64_t ci;
	if (ptw_map_get(&em->cli_thread, (uint64_t)pid << 32 | tid, &ci) &&
	    !(th->name = strdup(em->cli_names[ci]))) {
		free(th);
		ptw_em_nomem(err);
		return NULL;
	}
	if (ptw_map_put(&em->thread_map, key, em->n_threads)) {
		ptw_em_thread_free(th);
		ptw_em_nomem(err);
		return NULL;
	}
	em->threads[em->n_threads++] = th;
	return *slot = th;
}

uint64_t ptw_em_thread_track(struct ptw_emit *em, struct ptw_em_thread *th,
			     struct ptw_error *err)
{
	if (th->uuid)
		return th->uuid;
	if (!ptw_em_proc_track(em, &em->procs[th->proc], err))
		return 0;
	th->uuid = ptw_writer_add_thread_track(em->w, (int32_t)th->pid,
					       th->tid, th->name);
	if (!th->uuid || (th->has_sort && ptw_writer_set_track_rank(
						  em->w, th->uuid, th->sort_index))) {
		ptw_em_writer_fail(em, PTW_ERR_INVALID, err);
		return 0;
	}
	if (th->name && !(th->written = strdup(th->name))) {
		ptw_em_nomem(err);
		return 0;
	}
	th->seq = em->seq;
	if (em->n_thread_seqs < PTW_EM_THREAD_SEQS) {
		th->seq = ptw_writer_add_seq(em->w, th->uuid);
		if (!th->seq) {
			ptw_em_writer_fail(em, PTW_ERR_NOMEM, err);
			return 0;
		}
		th->own_seq = 1;
		em->n_thread_seqs++;
	}
	return th->uuid;
}

/* The number standing for a string pid or tid (the same string gives the
 * same number, for pids and tids alike, as trace_processor's one string
 * pool does). Returns 0 or a negative PTW_ERR_*. */
static int ptw_em_str_id(struct ptw_emit *em, struct ptw_cv_str s,
			 uint32_t *out, struct ptw_error *err)
{
	uint64_t h = ptw_fnv1a(PTW_FNV_INIT, s.p, s.n), v;
	/* probe on hash collisions: rehash until the string or a free key */
	while (ptw_map_get(&em->str_ids, h, &v)) {
		if (em->str_lens[v] == s.n &&
		    (s.n == 0 || memcmp(em->str_names[v], s.p, s.n) == 0)) {
			*out = PTW_EM_STR_ID_BASE + (uint32_t)v + 1u;
			return 0;
		}
		h = ptw_fnv1a(h, "+", 1);
	}
	if (em->n_str >= PTW_EM_STR_ID_MAX)
		return ptw_error_set(err, PTW_ERR_LIMIT, 0,
				     "emit: too many distinct string pids/tids");
	if (em->n_str == em->str_cap) {
		size_t nc = em->str_cap ? em->str_cap * 2 : 16;
		char **pn = realloc(em->str_names, nc * sizeof(*pn));
		if (!pn)
			return ptw_em_nomem(err);
		em->str_names = pn;
		size_t *pl = realloc(em->str_lens, nc * sizeof(*pl));
		if (!pl)
			return ptw_em_nomem(err);
		em->str_lens = pl;
		em->str_cap = nc;
	}
	char *copy = ptw_em_strndup(s.p ? s.p : "", s.n);
	if (!copy)
		return ptw_em_nomem(err);
	if (ptw_map_put(&em->str_ids, h, em->n_str)) {
		free(copy);
		return ptw_em_nomem(err);
	}
	em->str_names[em->n_str] = copy;
	em->str_lens[em->n_str] = s.n;
	*out = PTW_EM_STR_ID_BASE + (uint32_t)em->n_str++ + 1u;
	return 0;
}

/* A name from the trace, cut at a NUL and at PTW_MAX_STRING_LEN - 1
 * bytes (the writer's limit). */
static size_t ptw_em_name_len(const char *p, size_t n)
{
	const char *z = n ? memchr(p, '\0', n) : NULL;
	if (z)
		n = (size_t)(z - p);
	return n >= PTW_MAX_STRING_LEN ? PTW_MAX_STRING_LEN - 1 : n;
}

/* Sets *slot to s[0, n) unless it already holds exactly that. */
static int ptw_em_update_name(char **slot, const char *s, size_t n)
{
	if (*slot && strlen(*slot) == n && memcmp(*slot, s, n) == 0)
		return 0;
	return ptw_em_set_name(slot, s, n);
}

/* ---- inputs ------------------------------------------------------------ */

int ptw_emit_begin_input(struct ptw_emit *em, const struct ptw_emit_input *in,
			 struct ptw_error *err)
{
	if (!em || em->in_input)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "emit: input already open");
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
	for (size_t i = 0; i < em->n_threads; i++) {
		struct ptw_em_thread *th = em->threads[i];
		if (th->gen != em->input_index)
			continue;
		int rc = ptw_em_flush(em, th, 1, err);
		if (rc)
			return rc;
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
	for (size_t i = 0; i < em->n_threads; i++) {
		struct ptw_em_thread *th = em->threads[i];
		if (!th->name)
			continue;
		if (!th->uuid) {
			if (!ptw_em_thread_track(em, th, err))
				return err ? err->code : PTW_ERR_INVALID;
		} else if (!th->written || strcmp(th->name, th->written) != 0) {
			if (ptw_writer_rename_track(em->w, th->uuid, th->name))
				return ptw_em_writer_fail(em, PTW_ERR_INVALID,
							  err);
		}
	}
	return 0;
}

/* ---- helpers for immediate events -------------------------------------- */

static void ptw_em_display_name(const struct ptw_cv_event *ev, const char **p,
				size_t *n)
{
	if (ev->name.p && ev->name.n) {
		*p = ev->name.p;
		*n = ev->name.n;
	} else {
		*p = ptw_em_no_name;
		*n = sizeof(ptw_em_no_name) - 1;
	}
}

/* Writes an instant or slice edge on a non-thread track now. */
static int ptw_em_immediate(struct ptw_emit *em, int kind, uint64_t track,
			    int64_t ts, const char *name, size_t name_len,
			    const struct ptw_cv_event *ev, struct ptw_error *err)
{
	em->tmp.len = 0;
	size_t off = ptw_em_pack(&em->tmp, name, name_len, ev->cat.p,
				 ev->cat.n, ev, NULL, 0, NULL, 0);
	if (em->tmp.oom)
		return ptw_em_nomem(err);
	struct ptw_em_payload pl;
	ptw_em_unpack(&em->tmp, off, &pl);
	struct ptw_event e;
	memset(&e, 0, sizeof(e));
	e.track = track;
	e.ts = (uint64_t)ts;
	e.name = name ? pl.name : NULL;
	e.category = pl.cat;
	e.args = pl.args;
	e.n_args = pl.n_args;
	int rc;
	if (kind == PTW_EM_BEGIN) {
		rc = ptw_seq_slice_begin(em->seq, &e);
	} else if (kind == PTW_EM_END) {
		e.name = NULL;
		e.category = NULL;
		rc = ptw_seq_slice_end(em->seq, &e);
	} else {
		rc = ptw_seq_instant(em->seq, &e);
		em->st.instants++;
	}
	return rc ? ptw_em_writer_fail(em, rc, err) : 0;
}

static uint64_t ptw_em_id_hash(uint64_t h, const struct ptw_cv_event *ev)
{
	if (ev->flags & PTW_CV_ID_IS_STRING) {
		h = ptw_fnv1a(h, "s", 1);
		return ptw_fnv1a(h, ev->id_str.p, ev->id_str.n);
	}
	h = ptw_fnv1a(h, "n", 1);
	return ptw_fnv1a(h, &ev->id_num, sizeof(ev->id_num));
}

static uint64_t ptw_em_str_key(uint64_t h, struct ptw_cv_str s)
{
	uint64_t n = s.p ? s.n : UINT64_MAX;
	h = ptw_fnv1a(h, &n, sizeof(n));
	return s.p ? ptw_fnv1a(h, s.p, s.n) : h;
}

/* A name built into em->strbuf; returns it or NULL (out of memory). */
static char *ptw_em_strbuf(struct ptw_emit *em, size_t need)
{
	if (need > em->strbuf_cap) {
		char *p = realloc(em->strbuf, need);
		if (!p)
			return NULL;
		em->strbuf = p;
		em->strbuf_cap = need;
	}
	return em->strbuf;
}

/* ---- phases ------------------------------------------------------------- */

static int ptw_em_counter(struct ptw_emit *em, const struct ptw_cv_event *ev,
			  uint32_t pid, int64_t ts, struct ptw_error *err)
{
	struct ptw_em_proc *pr = ptw_em_proc_get(em, pid, NULL, err);
	if (!pr)
		return err ? err->code : PTW_ERR_NOMEM;
	uint64_t parent = ptw_em_proc_track(em, pr, err);
	if (!parent)
		return err ? err->code : PTW_ERR_INVALID;
	const char *nm = ev->name.p ? ev->name.p : "";
	size_t nn = ev->name.p ? ev->name.n : 0;
	int with_id = (ev->flags & PTW_CV_HAS_ID) &&
		      (ev->flags & PTW_CV_ID_IS_STRING);
	for (uint32_t i = 0; i < ev->n_args; i++) {
		const struct ptw_cv_arg *a = &ev->args[i];
		int is_int = 0;
		int64_t iv = 0;
		double dv = 0;
		if (a->type == PTW_CV_VAL_INT) {
			is_int = 1;
			iv = a->i;
		} else if (a->type == PTW_CV_VAL_DOUBLE) {
			dv = a->d;
		} else if (a->type == PTW_CV_VAL_STRING && a->s.n && a->s.n < 64) {
			char num[64], *end;
			memcpy(num, a->s.p, a->s.n);
			num[a->s.n] = '\0';
			dv = strtod(num, &end);
			if (*end != '\0')
				continue;
		} else {
			continue;
		}
		size_t kn = a->key.p ? a->key.n : 0;
		/* Known (process, name, key) without a string id: cached. */
		struct ptw_em_ctr_slot *cs = NULL;
		const char *sn = NULL, *sk = NULL;
		if (!with_id && (sn = ptw_em_stable(em, ev->name_sym, nm, nn)) &&
		    (sk = ptw_em_strs_get(&em->strs, kn ? a->key.p : "", kn))) {
			uint64_t h = (parent * 0x9E3779B97F4A7C15ull) ^
				     ((uint64_t)(uintptr_t)sn * 0xC2B2AE3D27D4EB4Full) ^
				     ((uint64_t)(uintptr_t)sk * 0x165667B19E3779F9ull);
			cs = &em->ctr_cache[(h >> 32) & (PTW_EM_CTR_CACHE - 1)];
			if (cs->parent == parent && cs->name == sn &&
			    cs->key == sk) {
				int rc = is_int ? ptw_seq_counter_int(
							  em->seq, cs->track,
							  (uint64_t)ts, iv)
						: ptw_seq_counter_double(
							  em->seq, cs->track,
							  (uint64_t)ts, dv);
				if (rc)
					return ptw_em_writer_fail(em, rc, err);
				em->st.counters++;
				continue;
			}
		}
		size_t idn = with_id ? ev->id_str.n + 5 : 0;
		size_t need = nn + idn + kn + 2;
		char *t = ptw_em_strbuf(em, need);
		if (!t)
			return ptw_em_nomem(err);
		size_t o = 0;
		memcpy(t + o, nm, nn);
		o += nn;
		if (with_id) {
			memcpy(t + o, " id: ", 5);
			o += 5;
			memcpy(t + o, ev->id_str.p, ev->id_str.n);
			o += ev->id_str.n;
		}
		t[o++] = ' ';
		if (kn)
			memcpy(t + o, a->key.p, kn);
		o += kn;
		t[o] = '\0';
		/* The writer takes C strings. */
		size_t tl = strlen(t);
		if (tl >= PTW_MAX_STRING_LEN)
			t[tl = PTW_MAX_STRING_LEN - 1] = '\0';
		uint64_t key = ptw_fnv1a(PTW_FNV_INIT, &parent,
					   sizeof(parent));
		key = ptw_fnv1a(key, t, tl);
		uint64_t track;
		if (!ptw_map_get(&em->counter_map, key, &track)) {
			track = ptw_writer_add_counter_track(em->w, t, NULL,
							     parent, -1);
			if (!track)
				return ptw_em_writer_fail(em, PTW_ERR_INVALID,
							  err);
			if (ptw_map_put(&em->counter_map, key, track))
				return ptw_em_nomem(err);
		}
		if (cs) {
			cs->parent = parent;
			cs->name = sn;
			cs->key = sk;
			cs->track = track;
		}
		int rc = is_int ? ptw_seq_counter_int(em->seq, track,
						      (uint64_t)ts, iv)
				: ptw_seq_counter_double(em->seq, track,
							 (uint64_t)ts, dv);
		if (rc)
			return ptw_em_writer_fail(em, rc, err);
		em->st.counters++;
	}
	return 0;
}

static int ptw_em_async(struct ptw_emit *em, const struct ptw_cv_event *ev,
			uint32_t pid, int64_t ts, struct ptw_error *err)
{
	if (!(ev->flags & PTW_CV_HAS_ID)) {
		em->st.dropped++; /* trace_processor needs an id */
		return 0;
	}
	int local = (ev->flags & PTW_CV_ID2_LOCAL) != 0;
	const char *nm;
	size_t nn;
	ptw_em_display_name(ev, &nm, &nn);
	uint64_t key = ptw_em_str_key(PTW_FNV_INIT, ev->name);
	key = ptw_em_str_key(key, ev->cat);
	key = ptw_em_id_hash(key, ev);
	uint64_t parent = 0;
	if (local) {
		struct ptw_em_proc *pr = ptw_em_proc_get(em, pid, NULL, err);
		if (!pr || !(parent = ptw_em_proc_track(em, pr, err)))
			return err ? err->code : PTW_ERR_NOMEM;
		key = ptw_fnv1a(key, &parent, sizeof(parent));
	}
	uint64_t idx;
	if (!ptw_map_get(&em->async_map, key, &idx)) {
		if (ev->ph == 'e') {
			em->st.dropped++; /* ends nothing */
			return 0;
		}
		/* An idle track of the same name and parent is reused, so
		 * tracks are bounded by the concurrency per name, not by the
		 * number of ids (trace_processor merges same-name tracks
		 * anyway). */
		uint64_t nkey = ptw_fnv1a(PTW_FNV_INIT, nm, nn);
		nkey = ptw_fnv1a(nkey, &parent, sizeof(parent));
		uint64_t head;
		/* Reuse only a track idle in time too (input order is not
		 * time order), else its slices could overlap. */
		if (ptw_map_get(&em->async_free, nkey, &head) && head &&
		    em->asyncs[head - 1].last_end <= ts) {
			idx = head - 1;
			if (ptw_map_put(&em->async_free, nkey,
					   em->asyncs[idx].next_free))
				return ptw_em_nomem(err);
		} else {
			if (em->n_asyncs == em->asyncs_cap) {
				size_t nc = em->asyncs_cap ? em->asyncs_cap * 2 : 16;
				void *p = realloc(em->asyncs, nc * sizeof(*em->asyncs));
				if (!p)
					return ptw_em_nomem(err);
				em->asyncs = p;
				em->asyncs_cap = nc;
			}
			char *t = ptw_em_strbuf(em, nn + 1);
			if (!t)
				return ptw_em_nomem(err);
			memcpy(t, nm, nn);
			t[nn] = '\0';
			if (strlen(t) >= PTW_MAX_STRING_LEN)
				t[PTW_MAX_STRING_LEN - 1] = '\0';
			uint64_t uuid = ptw_writer_add_track(em->w, t, parent, -1);
			if (!uuid)
				return ptw_em_writer_fail(em, PTW_ERR_INVALID, err);
			idx = em->n_asyncs++;
			em->asyncs[idx].uuid = uuid;
			em->asyncs[idx].last_end = 0;
			em->asyncs[idx].name_key = nkey;
		}
		em->asyncs[idx].open = 0;
		em->asyncs[idx].next_free = 0;
		if (ptw_map_put(&em->async_map, key, idx))
			return ptw_em_nomem(err);
	}
	struct ptw_em_async *as = &em->asyncs[idx];
	int rc;
	if (ev->ph == 'b') {
		as->open++;
		if (as->last_end < ts)
			as->last_end = ts;
		return ptw_em_immediate(em, PTW_EM_BEGIN, as->uuid, ts, nm, nn,
					ev, err);
	}
	if (ev->ph == 'e') {
		as->open--; /* > 0: the key is only mapped while open */
		em->st.slices++;
		rc = ptw_em_immediate(em, PTW_EM_END, as->uuid, ts, nm, nn, ev,
				      err);
	} else {
		rc = ptw_em_immediate(em, PTW_EM_INSTANT, as->uuid, ts, nm, nn,
				      ev, err);
	}
	if (as->last_end < ts)
		as->last_end = ts;
	if (!rc && as->open == 0) {
		/* Idle: forget the id, keep the track for reuse. */
		uint64_t head = 0;
		ptw_map_del(&em->async_map, key);
		(void)ptw_map_get(&em->async_free, as->name_key, &head);
		as->next_free = head;
		if (ptw_map_put(&em->async_free, as->name_key, idx + 1))
			return ptw_em_nomem(err);
	}
	return rc;
}

/* A string pid names its process, a string tid its thread, on every
 * event that reaches trace_processor's parser (ProcessTracker::
 * SetProcessMetadata / UpdateThreadName): the later name wins, so an
 * M process_name or thread_name event can rename them. */
static int ptw_em_string_names(struct ptw_emit *em,
			       const struct ptw_cv_event *ev, uint32_t pid,
			       uint32_t tid, struct ptw_error *err)
{
	int rc = 0;
	if (ev->flags & PTW_CV_PID_IS_STRING) {
		struct ptw_em_proc *pr = ptw_em_proc_get(em, pid, NULL, err);
		if (!pr)
			return err ? err->code : PTW_ERR_NOMEM;
		rc = ptw_em_update_name(&pr->name, ev->pid_str.p,
					ptw_em_name_len(ev->pid_str.p,
							ev->pid_str.n));
	}
	if (!rc && (ev->flags & PTW_CV_TID_IS_STRING)) {
		struct ptw_em_thread *th = ptw_em_thread_get(em, pid, tid, err);
		if (!th)
			return err ? err->code : PTW_ERR_NOMEM;
		rc = ptw_em_update_name(&th->name, ev->tid_str.p,
					ptw_em_name_len(ev->tid_str.p,
							ev->tid_str.n));
	}
	return rc ? ptw_em_nomem(err) : 0;
}

/* 'p' for an M process_sort_index, 't' for thread_sort_index, else 0. */
static int ptw_em_sort_kind(const struct ptw_cv_event *ev)
{
	static const char ps[] = "process_sort_index", ts[] = "thread_sort_index";
	if (ev->ph != 'M' || !ev->name.p)
		return 0;
	if (ev->name.n == sizeof(ps) - 1 && memcmp(ev->name.p, ps, ev->name.n) == 0)
		return 'p';
	if (ev->name.n == sizeof(ts) - 1 && memcmp(ev->name.p, ts, ev->name.n) == 0)
		return 't';
	return 0;
}

/* M process_sort_index / thread_sort_index: args.sort_index, an integer
 * or a number truncated to one, cut to int32 as trace_processor does; the
 * last one wins. It becomes sibling_order_rank on the process / thread
 * descriptor: given to the writer when the track is created, or now if
 * it exists and its descriptor is still queued. A sort index arriving
 * after the descriptor was written is dropped (counted in
 * sort_index_late; trace_processor keeps a uuid's first descriptor). */
static int ptw_em_sort_index(struct ptw_emit *em,
			     const struct ptw_cv_event *ev, uint32_t pid,
			     uint32_t tid, struct ptw_error *err)
{
	int kind = ptw_em_sort_kind(ev);
	if (!kind)
		return 0; /* other M events: no table row */
	int is_p = kind == 'p';
	int found = 0;
	int64_t v = 0;
	for (uint32_t i = 0; i < ev->n_args; i++) {
		const struct ptw_cv_arg *a = &ev->args[i];
		if (!a->key.p || a->key.n != 10 ||
		    memcmp(a->key.p, "sort_index", 10) != 0)
			continue;
		if (a->type == PTW_CV_VAL_INT) {
			v = a->i;
			found = 1;
		} else if (a->type == PTW_CV_VAL_DOUBLE &&
			   a->d > -9223372036854775808.0 &&
			   a->d < 9223372036854775808.0) {
			v = (int64_t)a->d;
			found = 1;
		}
	}
	if (!found)
		return 0;
	int32_t rank = (int32_t)(uint32_t)(uint64_t)v; /* modulo 2^32 */
	uint64_t uuid;
	int same;
	if (is_p) {
		struct ptw_em_proc *pr = ptw_em_proc_get(em, pid, NULL, err);
		if (!pr)
			return err ? err->code : PTW_ERR_NOMEM;
		same = pr->has_sort && pr->sort_index == rank;
		pr->sort_index = rank;
		pr->has_sort = 1;
		uuid = pr->uuid;
	} else {
		struct ptw_em_thread *th = ptw_em_thread_get(em, pid, tid, err);
		if (!th)
			return err ? err->code : PTW_ERR_NOMEM;
		same = th->has_sort && th->sort_index == rank;
		th->sort_index = rank;
		th->has_sort = 1;
		uuid = th->uuid;
	}
	/* No track yet: its rank is set when it is created. The rank it
	 * already has (read again after a first pass): nothing to do. */
	if (!uuid || same)
		return 0;
	int rc = ptw_writer_set_track_rank(em->w, uuid, rank);
	if (rc == PTW_ERR_STATE) {
		em->st.sort_index_late++;
		return 0;
	}
	return rc ? ptw_em_writer_fail(em, PTW_ERR_INVALID, err) : 0;
}

static int ptw_em_metadata(struct ptw_emit *em, const struct ptw_cv_event *ev,
			   uint32_t pid, uint32_t tid, struct ptw_error *err)
{
	static const char pn[] = "process_name", tn[] = "thread_name";
	int is_p = ev->name.p && ev->name.n == sizeof(pn) - 1 &&
		   memcmp(ev->name.p, pn, ev->name.n) == 0;
	int is_t = ev->name.p && ev->name.n == sizeof(tn) - 1 &&
		   memcmp(ev->name.p, tn, ev->name.n) == 0;
	if (!is_p && !is_t)
		return ptw_em_sort_index(em, ev, pid, tid, err);
	const struct ptw_cv_arg *val = NULL;
	for (uint32_t i = 0; i < ev->n_args; i++)
		if (ev->args[i].key.p && ev->args[i].key.n == 4 &&
		    memcmp(ev->args[i].key.p, "name", 4) == 0)
			val = &ev->args[i];
	if (!val || val->type != PTW_CV_VAL_STRING)
		return 0;
	size_t n = val->s.n;
	const char *z = n ? memchr(val->s.p, '\0', n) : NULL;
	if (z)
		n = (size_t)(z - val->s.p);
	if (n >= PTW_MAX_STRING_LEN)
		n = PTW_MAX_STRING_LEN - 1;
	int rc;
	if (is_p) {
		struct ptw_em_proc *pr = ptw_em_proc_get(em, pid, NULL, err);
		if (!pr)
			return err ? err->code : PTW_ERR_NOMEM;
		rc = ptw_em_set_name(&pr->name, val->s.p, n);
	} else {
		struct ptw_em_thread *th = ptw_em_thread_get(em, pid, tid, err);
		if (!th)
			return err ? err->code : PTW_ERR_NOMEM;
		rc = ptw_em_set_name(&th->name, val->s.p, n);
	}
	return rc ? ptw_em_nomem(err) : 0;
}

/* Moves the thread's flush limit to 'ts' and writes what it releases. */
static int ptw_em_advance(struct ptw_emit *em, struct ptw_em_thread *th,
			  int64_t ts, struct ptw_error *err)
{
	if (th->has_last && ts <= th->last_ts)
		return 0;
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

static void ptw_em_v2_flows(const struct ptw_cv_event *ev, uint64_t *out,
			    uint32_t *n_out, uint64_t *in, uint32_t *n_in)
{
	*n_out = *n_in = 0;
	if (!(ev->flags & PTW_CV_HAS_BIND_ID) ||
	    !(ev->flags & (PTW_CV_FLOW_IN | PTW_CV_FLOW_OUT)))
		return;
	uint64_t num;
	if (ev->flags & PTW_CV_BIND_ID_IS_NUM)
		num = ev->bind_num;
	else if (!ptw_em_hex_id(ev->bind_id, &num))
		return; /* trace_processor: no flow */
	uint64_t id = ptw_fnv1a(PTW_FNV_INIT, "v2", 2);
	id = ptw_fnv1a(id, &num, sizeof(num));
	/* flow_in + flow_out on one slice is a step: in protobuf an id in
	 * flow_ids both continues an active flow and starts a new one. */
	if (ev->flags & PTW_CV_FLOW_OUT)
		out[(*n_out)++] = id;
	else
		in[(*n_in)++] = id;
}

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
	uint64_t out[1], in[1];
	uint32_t n_out = 0, n_in = 0;
	struct ptw_em_item it;
	memset(&it, 0, sizeof(it));
	it.ts = ts;
	it.seq = ++em->next_seq;

	switch (ev->ph) {
	case 'B':
		it.kind = PTW_EM_BEGIN;
		ptw_em_v2_flows(ev, out, &n_out, in, &n_in);
		if (em->mode == PTW_EMIT_XFORM) {
			uint64_t id;
			it.state = PTW_EM_UNRESOLVED;
			rc = ptw_em_queue(em, th, &it, nm, nn, cat, catn, ev,
					  out, n_out, in, n_in, &id);
			if (rc)
				return ptw_em_nomem(err);
			struct ptw_em_lifo *l = &th->lifo[raw_tid0];
			if (l->n == l->cap) {
				size_t nc = l->cap ? l->cap * 2 : 16;
				void *p = realloc(l->b, nc * sizeof(*l->b));
				if (!p)
					return ptw_em_nomem(err);
				l->b = p;
				l->cap = nc;
			}
			l->b[l->n].id = id;
			l->b[l->n++].ts = ts;
			return 0;
		}
		it.state = PTW_EM_RAW;
		break;
	case 'E':
		it.kind = PTW_EM_END;
		if (em->mode == PTW_EMIT_XFORM) {
			struct ptw_em_lifo *l = &th->lifo[raw_tid0];
			if (!l->n) {
				em->st.dropped++; /* unmatched E */
				return 0;
			}
			const struct ptw_em_open_b *ob = &l->b[--l->n];
			struct ptw_em_item *b = ptw_em_find(th, ob->id);
			if (!b && ts < ob->ts) {
				/* Before its B, which is written already (a
				 * later event released it): end it where it
				 * began, so the end closes it and nothing else
				 * (trace_processor drops a negative duration). */
				em->st.backward_ends++;
				ts = it.ts = ob->ts;
			}
			if (b) {
				if (ts < b->ts) {
					b->state = PTW_EM_DEAD;
					em->st.dropped++;
					return 0;
				}
				b->state = PTW_EM_COMPLETE;
				b->dur = ts - b->ts;
				b->seq = it.seq;
				if (b->dur == 0)
					return 0; /* written as an instant */
			}
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
	case 'X': {
		int64_t dur = (ev->flags & PTW_CV_HAS_DUR) ? ev->dur_ns : 0;
		em->seen_x = 1;
		if (dur < 0) {
			em->st.dropped++;
			return 0;
		}
		ptw_em_v2_flows(ev, out, &n_out, in, &n_in);
		it.kind = PTW_EM_BEGIN;
		it.state = PTW_EM_COMPLETE;
		it.dur = dur;
		rc = ptw_em_queue(em, th, &it, nm, nn, cat, catn, ev, out,
				  n_out, in, n_in, NULL);
		if (rc || dur == 0)
			return rc ? ptw_em_nomem(err) : 0;
		it.kind = PTW_EM_END;
		it.ts = ts > INT64_MAX - dur ? INT64_MAX : ts + dur;
		rc = ptw_em_queue(em, th, &it, "", 0, NULL, 0, NULL, NULL, 0,
				  NULL, 0, NULL);
		return rc ? ptw_em_nomem(err) : 0;
	}
	case 's':
	case 't':
	case 'f': {
		/* v1 flows are identified by (id, cat, name); only "id"
		 * counts (not id2), a string is read as hex. */
		uint64_t num = ev->id_num;
		if (!(ev->flags & PTW_CV_HAS_ID) ||
		    (ev->flags & PTW_CV_ID_FROM_ID2) ||
		    ((ev->flags & PTW_CV_ID_IS_STRING) &&
		     !ptw_em_hex_id(ev->id_str, &num))) {
			em->st.dropped++; /* trace_processor: flow_invalid_id */
			return 0;
		}
		uint64_t h = ptw_fnv1a(PTW_FNV_INIT, "v1", 2);
		h = ptw_fnv1a(h, &num, sizeof(num));
		h = ptw_em_str_key(h, ev->cat);
		h = ptw_em_str_key(h, ev->name);
		it.kind = PTW_EM_FLOW;
		it.flow_id = h;
		it.flow_ph = (uint8_t)(ev->ph != 'f' ? ev->ph
				       : ev->bp == 'e' ? 'f' : 'n');
		rc = ptw_em_queue(em, th, &it, "", 0, NULL, 0, NULL, NULL, 0,
				  NULL, 0, NULL);
		return rc ? ptw_em_nomem(err) : 0;
	}
	default: /* thread-scoped instant */
		it.kind = PTW_EM_INSTANT;
		break;
	}
	rc = ptw_em_queue(em, th, &it, nm, nn, cat, catn, ev, out, n_out, in,
			  n_in, NULL);
	return rc ? ptw_em_nomem(err) : 0;
}

/* An instant on the global track (scope g) or its process (scope p). */
static int ptw_em_scoped_instant(struct ptw_emit *em,
				 const struct ptw_cv_event *ev, uint32_t pid,
				 int64_t ts, struct ptw_error *err)
{
	uint64_t track;
	if (ev->scope == 'g') {
		if (!em->global_track) {
			em->global_track = ptw_writer_add_track(
				em->w, "Global instants", 0, -1);
			if (!em->global_track)
				return ptw_em_writer_fail(em, PTW_ERR_INVALID,
							  err);
		}
		track = em->global_track;
	} else {
		struct ptw_em_proc *pr = ptw_em_proc_get(em, pid, NULL, err);
		if (!pr || !(track = ptw_em_proc_track(em, pr, err)))
			return err ? err->code : PTW_ERR_NOMEM;
	}
	/* Process and global instants keep a NULL name when theirs is
	 * empty. */
	int named = ev->name.p && ev->name.n;
	return ptw_em_immediate(em, PTW_EM_INSTANT, track, ts,
				named ? ev->name.p : NULL,
				named ? ev->name.n : 0, ev, err);
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

/* Every event the short path (emit_fast.c, which holds ptw_emit_event)
 * does not take. */
int ptw_em_general_event(struct ptw_emit *em, const struct ptw_cv_event *ev,
			 struct ptw_error *err)
{
	em->st.events_in++;
	em->st.by_phase[(unsigned char)ev->ph & 127u]++;

	if ((ev->flags & (PTW_CV_PID_IS_STRING | PTW_CV_TID_IS_STRING)) &&
	    ev->ph != 'M' && !(ev->flags & PTW_CV_HAS_TS)) {
		em->st.dropped++; /* dropped before it names anything */
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
		return ptw_em_metadata(em, ev, pid, tid, err);
	}
	if (!(ev->flags & PTW_CV_HAS_TS)) {
		em->st.dropped++;
		return 0;
	}
	int64_t ts = ev->ts_ns;
	if ((em->shift_ns > 0 && ts > INT64_MAX - em->shift_ns) ||
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
	/* Every pid is a process, whatever the event (thread events make it
	 * with their thread). */
	int thread_ev = ptw_em_is_thread_event(ev);
	if (!thread_ev && (ev->flags & PTW_CV_HAS_PID) &&
	    !ptw_em_proc_get(em, pid, NULL, err))
		return err ? err->code : PTW_ERR_NOMEM;

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
		return ptw_em_scoped_instant(em, ev, pid, ts, err);
	case 0:
		break;
	default:
		return 0; /* no table row (the process exists) */
	}
	struct ptw_em_thread *th = ptw_em_thread_get(em, pid, tid, err);
	if (!th)
		return err ? err->code : PTW_ERR_NOMEM;
	return ptw_em_thread_event(em, ev, th, ts, raw_tid0, err);
}
