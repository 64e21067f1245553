/* emit_track_events.c - the emitter's events on tracks other than a
 * thread's: counters (one track per process, name and arg key), async
 * slices (global or process tracks by id, reused when idle) and process
 * or global instants.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "emit_internal.h"
#include "lib/util/grow.h"

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

/* Writes an instant or slice edge on a non-thread track now: 'name' /
 * 'cat' (NULL or empty: none), the event's args, writer flags 'flags'
 * (PTW_EV_NAMED_END), an instant's legacy scope 'scope' ('g', 'p' or 0,
 * struct ptw_legacy). A non-zero 'async_id': a JSON async event, written
 * as a legacy event of its phase with that id (local_id for id2.local). */
static int ptw_em_immediate(struct ptw_emit *em, int kind, uint64_t track,
			    int64_t ts, const char *name, size_t name_len,
			    struct ptw_cv_str cat, uint32_t flags, char scope,
			    uint64_t async_id, const struct ptw_cv_event *ev,
			    struct ptw_error *err)
{
	em->tmp.len = 0;
	size_t off = ptw_em_pack(em, &em->tmp, name, name_len, cat.p, cat.n, ev,
				 PTW_FLOW_NONE, 0, NULL);
	if (em->tmp.oom)
		return ptw_em_nomem(err);
	struct ptw_em_payload pl;
	ptw_em_unpack(em, &em->tmp, off, &pl);
	struct ptw_event e;
	memset(&e, 0, sizeof(e));
	e.track = track;
	e.ts = (uint64_t)ts;
	e.name = name && name_len ? pl.name : NULL;
	e.category = pl.cat;
	e.args = pl.args;
	e.n_args = pl.n_args;
	e.flags = flags;
	/* JSON 'b' and 'n' take v2 flows (json_trace_parser.cc MaybeAddFlow) */
	struct ptw_legacy lg;
	memset(&lg, 0, sizeof(lg));
	if (ev->ph == 'b' || ev->ph == 'n')
		lg.flow_dir = (enum ptw_flow_dir)ptw_em_v2_flow(ev, &lg.bind_id);
	if (lg.flow_dir)
		em->st.flows++;
	lg.instant_scope = scope;
	if (lg.flow_dir || scope)
		e.legacy = &lg;
	int rc;
	if (async_id) {
		lg.phase = ev->ph;
		lg.id = async_id;
		lg.local_id = (ev->flags & PTW_CV_ID2_LOCAL) != 0;
		e.legacy = &lg;
		rc = ptw_seq_legacy_flow(em->seq, &e);
		em->st.instants += kind == PTW_EM_INSTANT;
	} else if (kind == PTW_EM_BEGIN) {
		rc = ptw_seq_slice_begin(em->seq, &e);
	} else if (kind == PTW_EM_END) {
		rc = ptw_seq_slice_end(em->seq, &e);
	} else {
		rc = ptw_seq_instant(em->seq, &e);
		em->st.instants++;
	}
	return rc ? ptw_em_writer_fail(em, rc, err) : 0;
}

/* The event's id as trace_processor tells ids apart: a string by its
 * text, an integer by its value, never equal to each other ("1", "0x1"
 * and 1 are three ids). */
static uint64_t ptw_em_id_hash(uint64_t h, const struct ptw_cv_event *ev)
{
	if (ev->flags & PTW_CV_ID_IS_STRING) {
		h = ptw_fnv1a(h, "s", 1);
		return ptw_fnv1a(h, ev->id_str.p, ev->id_str.n);
	}
	h = ptw_fnv1a(h, "n", 1);
	return ptw_fnv1a(h, &ev->id_num, sizeof(ev->id_num));
}

/* An empty string is no string for trace_processor's tokenizer (the
 * JSON "cat" and "name" are interned as kNullStringId when empty). */
static struct ptw_cv_str ptw_em_nonempty(struct ptw_cv_str s)
{
	if (!s.n)
		s.p = NULL;
	return s;
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
	char *p = ptw_grow(em->strbuf, &em->strbuf_cap, need, 64, 1);
	if (p)
		em->strbuf = p;
	return p;
}

/* A counter arg's value: an int, a double, or a string that is a whole
 * number (strtod). Returns 0 if the arg is not a value. */
static inline int ptw_em_counter_value(const struct ptw_cv_arg *a, int *is_int,
				       int64_t *iv, double *dv)
{
	*is_int = 0;
	*iv = 0;
	*dv = 0;
	if (a->type == PTW_CV_VAL_INT) {
		*is_int = 1;
		*iv = a->i;
	} else if (a->type == PTW_CV_VAL_DOUBLE) {
		*dv = a->d;
	} else if (a->type == PTW_CV_VAL_STRING && a->s.n && a->s.n < 64) {
		char num[64], *end;
		memcpy(num, a->s.p, a->s.n);
		num[a->s.n] = '\0';
		*dv = strtod(num, &end);
		if (*end != '\0')
			return 0;
	} else {
		return 0;
	}
	return 1;
}

/* The counter track "NAME[ id: ID] KEY" under 'parent' (created the first
 * time), in *track. */
static int ptw_em_counter_track(struct ptw_emit *em, uint64_t parent,
				const char *nm, size_t nn,
				const struct ptw_cv_str *id,
				const struct ptw_cv_str *k, uint64_t *track,
				struct ptw_error *err)
{
	size_t kn = k->p ? k->n : 0;
	size_t idn = id ? id->n + 5 : 0;
	size_t need = nn + idn + kn + 2;
	char *t = ptw_em_strbuf(em, need);
	if (!t)
		return ptw_em_nomem(err);
	size_t o = 0;
	memcpy(t + o, nm, nn);
	o += nn;
	if (id) {
		memcpy(t + o, " id: ", 5);
		o += 5;
		memcpy(t + o, id->p, id->n);
		o += id->n;
	}
	t[o++] = ' ';
	if (kn)
		memcpy(t + o, k->p, kn);
	o += kn;
	t[o] = '\0';
	/* The writer takes C strings. */
	size_t tl = strlen(t);
	if (tl >= PTW_MAX_STRING_LEN)
		t[tl = PTW_MAX_STRING_LEN - 1] = '\0';
	uint64_t key = ptw_fnv1a(PTW_FNV_INIT, &parent, sizeof(parent));
	key = ptw_fnv1a(key, t, tl);
	if (ptw_map_get(&em->counter_map, key, track))
		return 0;
	*track = ptw_writer_add_counter_track(em->w, t, NULL, parent, -1);
	if (!*track)
		return ptw_em_writer_fail(em, PTW_ERR_INVALID, err);
	if (ptw_map_put(&em->counter_map, key, *track))
		return ptw_em_nomem(err);
	return 0;
}

/* A C event: one sample per numeric arg, on the process's counter track
 * of that arg. */
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
	/* json_trace_parser.cc case 'C': " id: <id>" only for a non-empty
	 * string "id" (id2 is never a counter id, an integer id adds
	 * nothing). */
	int with_id = (ev->flags & (PTW_CV_HAS_ID | PTW_CV_ID_IS_STRING |
				    PTW_CV_ID_FROM_ID2)) ==
			      (PTW_CV_HAS_ID | PTW_CV_ID_IS_STRING) &&
		      ev->id_str.n;
	for (uint32_t i = 0; i < ev->n_args; i++) {
		const struct ptw_cv_arg *a = &ev->args[i];
		int is_int, rc;
		int64_t iv;
		double dv;
		if (!ptw_em_counter_value(a, &is_int, &iv, &dv))
			continue;
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
				rc = ptw_em_counter_sample(em, cs->track, ts,
							   is_int, iv, dv, err);
				if (rc)
					return rc;
				continue;
			}
		}
		uint64_t track;
		rc = ptw_em_counter_track(em, parent, nm, nn,
					  with_id ? &ev->id_str : NULL, &a->key,
					  &track, err);
		if (rc)
			return rc;
		if (cs) {
			if (cs->parent)
				em->ctr_stamp++; /* (struct ptw_em_ctr_prep) */
			cs->parent = parent;
			cs->name = sn;
			cs->key = sk;
			cs->track = track;
		}
		rc = ptw_em_counter_sample(em, track, ts, is_int, iv, dv, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* TP (json_trace_tokenizer.cc, end of ParseTraceEventContents) makes the
 * cookie hash(cat, id) for "id" and id2.global, and json_trace_parser.cc
 * keys id2.local cookies by process as well (InternLegacyAsyncTrack with
 * source_id_is_process_scoped). TrackCompressor::InternLegacyAsyncTrack
 * then spreads the cookies over tracks: those whose first event had the
 * same name (and process, for local ids) form a set, and a cookie takes
 * its own track, else the first of the set with nothing open, else a new
 * one. trace_processor's protobuf import calls the same function for a
 * legacy_event of phase b/e/n with the id as trace id
 * (track_event_event_importer.h ParseTrackAssociationInternal). */
/* The number of the event's trace_processor cookie: hash(category, id),
 * per process for id2.local, numbered 1, 2, ... in order of first use;
 * written as the legacy event's id, it keys trace_processor's async
 * tracks as the cookie keys them for the JSON. 0: out of memory. */
static uint64_t ptw_em_async_cookie(struct ptw_emit *em,
				    const struct ptw_cv_event *ev, size_t pi,
				    struct ptw_error *err)
{
	uint64_t key = ptw_em_str_key(PTW_FNV_INIT, ptw_em_nonempty(ev->cat));
	key = ptw_em_id_hash(key, ev);
	if (ev->flags & PTW_CV_ID2_LOCAL)
		key = ptw_fnv1a(ptw_fnv1a(key, "l", 1), &pi, sizeof(pi));
	uint64_t id;
	if (ptw_map_get(&em->async_map, key, &id))
		return id;
	id = ++em->async_cookies;
	if (ptw_map_put(&em->async_map, key, id)) {
		ptw_em_nomem(err);
		return 0;
	}
	return id;
}

int ptw_em_async(struct ptw_emit *em, const struct ptw_cv_event *ev,
		 uint32_t pid, int64_t ts, struct ptw_error *err)
{
	/* json_trace_parser.cc case 'b'/'e'/'n': json_parser_failure */
	if (!(ev->flags & PTW_CV_HAS_PID) || !(ev->flags & PTW_CV_HAS_ID)) {
		em->st.dropped++;
		return 0;
	}
	/* cookies share tracks in time order (see docs/convert.md) */
	if (ts < em->async_last)
		em->st.out_of_order++;
	else
		em->async_last = ts;
	/* on the process track: it gives trace_processor the process (upid,
	 * needed for id2.local) and no thread (which would add an arg
	 * legacy_event.passthrough_utid the JSON import does not have) */
	size_t pi;
	struct ptw_em_proc *pr = ptw_em_proc_get(em, pid, &pi, err);
	uint64_t track = pr ? ptw_em_proc_track(em, pr, err) : 0;
	uint64_t cookie = track ? ptw_em_async_cookie(em, ev, pi, err) : 0;
	if (!cookie)
		return err ? err->code : PTW_ERR_NOMEM;
	struct ptw_cv_str cat = ptw_em_nonempty(ev->cat);
	if (ev->ph == 'b') {
		/* Begin with the slice name: "[No name]" for an empty one */
		const char *nm;
		size_t nn;
		ptw_em_display_name(ev, &nm, &nn);
		return ptw_em_immediate(em, PTW_EM_BEGIN, track, ts, nm, nn, cat,
					0, 0, cookie, ev, err);
	}
	/* End and Scoped with event.name: NULL for an empty one, and End
	 * closes the innermost open slice of that name and category (none:
	 * any), or nothing. */
	struct ptw_cv_str nm = ptw_em_nonempty(ev->name);
	if (ev->ph == 'e') {
		em->st.slices++;
		return ptw_em_immediate(em, PTW_EM_END, track, ts, nm.p, nm.n,
					cat, PTW_EV_NAMED_END, 0, cookie, ev,
					err);
	}
	return ptw_em_immediate(em, PTW_EM_INSTANT, track, ts, nm.p, nm.n, cat,
				0, 0, cookie, ev, err);
}

/* An instant of scope g or p. JSON puts it on trace_processor's legacy
 * global instant track (one, no name) or its process's legacy instant
 * track (no name); a legacy_event with that scope puts a protobuf
 * instant there too (struct ptw_legacy instant_scope), whatever
 * track carries it: a global track of its own for g (on the thread's
 * track, trace_processor would add arg legacy_event.passthrough_utid),
 * the process track for p. */
int ptw_em_scoped_instant(struct ptw_emit *em,
			  const struct ptw_cv_event *ev, uint32_t pid,
			  uint32_t tid, int64_t ts, struct ptw_error *err)
{
	uint64_t track;
	if (ev->scope == 'g') {
		/* not on the thread's track: trace_processor would add the
		 * thread as arg legacy_event.passthrough_utid, which the JSON
		 * import does not show (the event made the thread already) */
		if (!em->global_track &&
		    !(em->global_track = ptw_writer_add_track(
			      em->w, "Global instants", 0, -1)))
			return ptw_em_writer_fail(em, PTW_ERR_INVALID, err);
		track = em->global_track;
	} else {
		if (!(ev->flags & PTW_CV_HAS_PID)) {
			em->st.dropped++; /* json_parser_failure */
			return 0;
		}
		struct ptw_em_proc *pr = ptw_em_proc_get(em, pid, NULL, err);
		if (!pr || !(track = ptw_em_proc_track(em, pr, err)))
			return err ? err->code : PTW_ERR_NOMEM;
	}
	/* Scoped(..., event.name, ...): NULL for an empty name */
	struct ptw_cv_str nm = ptw_em_nonempty(ev->name);
	return ptw_em_immediate(em, PTW_EM_INSTANT, track, ts, nm.p, nm.n,
				ptw_em_nonempty(ev->cat), 0, ev->scope, 0, ev,
				err);
}
