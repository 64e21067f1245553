/* emit_track_events.c - the emitter's events on tracks other than a
 * thread's: counters (one track per process, name and arg key), async
 * slices (global or process tracks by id, reused when idle) and process
 * or global instants.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "emit_internal.h"

static const char ptw_em_no_name[] = PTW_EM_NO_NAME;

void ptw_em_display_name(const struct ptw_cv_event *ev, const char **p,
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
				 ev->cat.n, ev, PTW_FLOW_NONE, 0);
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
	/* JSON 'b' and 'n' take v2 flows (json_trace_parser.cc MaybeAddFlow) */
	struct ptw_legacy lg;
	memset(&lg, 0, sizeof(lg));
	if (ev->ph == 'b' || ev->ph == 'n')
		lg.flow_dir = (enum ptw_flow_dir)ptw_em_v2_flow(ev, &lg.bind_id);
	if (lg.flow_dir) {
		e.legacy = &lg;
		em->st.flows++;
	}
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

uint64_t ptw_em_str_key(uint64_t h, struct ptw_cv_str s)
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

int ptw_em_counter(struct ptw_emit *em, const struct ptw_cv_event *ev,
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
			em->ctr_key = sk;
			em->ctr_key_n = kn;
			cs = ptw_em_ctr_slot(em->ctr_cache, parent, sn, sk);
			if (cs->parent == parent && cs->name == sn &&
			    cs->key == sk) {
				int rc = ptw_em_counter_sample(em, cs->track, ts,
							       is_int, iv, dv,
							       err);
				if (rc)
					return rc;
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
		int rc = ptw_em_counter_sample(em, track, ts, is_int, iv, dv,
					       err);
		if (rc)
			return rc;
	}
	return 0;
}

int ptw_em_async(struct ptw_emit *em, const struct ptw_cv_event *ev,
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

/* An instant on the global track (scope g) or its process (scope p). */
int ptw_em_scoped_instant(struct ptw_emit *em,
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
