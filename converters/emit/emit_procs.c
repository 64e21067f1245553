/* emit_procs.c - the emitter's processes and threads: their writer
 * tracks, numbers for string pids/tids, names (M events, string ids) and
 * sort indexes.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "emit_internal.h"
#include "lib/util/grow.h"

static int ptw_em_set_name(char **slot, const char *s, size_t n)
{
	char *p = ptw_em_strndup(s, n);
	if (!p)
		return PTW_ERR_NOMEM;
	free(*slot);
	*slot = p;
	return 0;
}

/* The process of 'pid' in the current input: each input has its own, so
 * equal pids of different inputs stay apart. */
struct ptw_em_proc *ptw_em_proc_get(struct ptw_emit *em, uint32_t pid,
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
		void *p = ptw_grow(em->procs, &em->procs_cap, em->n_procs + 1,
				   16, sizeof(*em->procs));
		if (!p) {
			ptw_em_nomem(err);
			return NULL;
		}
		em->procs = p;
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

uint64_t ptw_em_proc_track(struct ptw_emit *em, struct ptw_em_proc *pr,
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

struct ptw_em_thread *ptw_em_thread_get(struct ptw_emit *em,
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
		void *p = ptw_grow(em->threads, &em->threads_cap,
				   em->n_threads + 1, 16, sizeof(*em->threads));
		if (!p) {
			ptw_em_nomem(err);
			return NULL;
		}
		em->threads = p;
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
	if (!ptw_em_thread_descriptor(em, th, err))
		return 0;
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

uint64_t ptw_em_thread_descriptor(struct ptw_emit *em,
				  struct ptw_em_thread *th,
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
	return th->uuid;
}

/* The number standing for a string pid or tid (the same string gives the
 * same number, for pids and tids alike, as trace_processor's one string
 * pool does). Returns 0 or a negative PTW_ERR_*. */
int ptw_em_str_id(struct ptw_emit *em, struct ptw_cv_str s,
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
		/* names and lens share str_cap: each grows on its own */
		size_t nc = ptw_grow_cap(em->str_cap, em->n_str + 1, 16,
					 sizeof(*em->str_names));
		char **pn = ptw_realloc_array(em->str_names, nc, sizeof(*pn));
		if (!pn)
			return ptw_em_nomem(err);
		em->str_names = pn;
		size_t *pl = ptw_realloc_array(em->str_lens, nc, sizeof(*pl));
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

/* A string pid names its process, a string tid its thread, on every
 * event that reaches trace_processor's parser (ProcessTracker::
 * SetProcessMetadata / UpdateThreadName): the later name wins, so an
 * M process_name or thread_name event can rename them. */
int ptw_em_string_names(struct ptw_emit *em,
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
int ptw_em_sort_kind(const struct ptw_cv_event *ev)
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
int ptw_em_sort_index(struct ptw_emit *em,
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

int ptw_em_metadata(struct ptw_emit *em, const struct ptw_cv_event *ev,
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
