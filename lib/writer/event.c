/* event.c - TrackEvent packets: slices, instants, counters, flows and
 * debug annotations, with per-sequence interning.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "callstack.h"
#include "lib/encode/pb_fields.h"
#include "lib/util/utf8.h"
#include "seq_complete.h"
#include "seq_fast.h"
#include "writer_state.h"

/* Strings of one event after validation. len == SIZE_MAX: found in the
 * pointer cache (validated when first interned), length not needed. */
struct ptw_ev_str {
	const char *s;   /* NULL: none (then iid 0) */
	size_t len;      /* a new entry's: as written (after U+FFFD) */
	uint64_t iid;
	int is_new;
	int fix;         /* a new entry not UTF-8: written with U+FFFD */
	size_t raw_len;  /* then the length of s */
};

struct ptw_ev_plan {
	int type;
	uint64_t track; /* resolved; written unless the default */
	struct ptw_track *tr;
	struct ptw_ev_str name, cat;
	struct ptw_ev_str anames[PTW_MAX_ANNOTATIONS];
	struct ptw_ev_str svals[PTW_MAX_ANNOTATIONS]; /* s == NULL: inline */
	size_t nested_need; /* bytes' bound of nested annotations */
	struct ptw_stk_out stk; /* the callstack's bytes (callstack.c) */
	/* a complete slice in one typeless event: legacy_event phase 'X'
	 * with duration_us x_dur_us (ptw_seq_legacy_complete) */
	int is_x;
	uint64_t x_dur_us;
	/* ev->source (NULL: none) and its interning (loc.s: its key); a new
	 * entry's strings as written (U+FFFD for what is not UTF-8) */
	const struct ptw_source_location *src;
	struct ptw_ev_str loc;
	size_t file_len, func_len, file_out, func_out;
	int file_fix, func_fix;
	/* a log message (body.s NULL: none) */
	struct ptw_ev_str body;
	int prio;
};

/* Upper bound of one nested DebugAnnotation besides its inline name and
 * string value: tag, length, name tag and length, value tag and value. */
#define PTW_EV_NODE_MAX 32u

static int ptw_ev_fail(struct ptw_writer *w, const char *what)
{
	return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0, "%s", what);
}

/* Common entry checks; returns 0 or an error. */
static inline int ptw_ev_enter(const struct ptw_seq *s)
{
	if (__builtin_expect(!s, 0))
		return PTW_ERR_INVALID;
	if (__builtin_expect(s->destroyed, 0))
		return ptw_i_writer_fail(s->w, PTW_ERR_STATE, 0,
					 "event on a destroyed sequence");
	return s->w->sticky;
}

static int ptw_ev_resolve_track(struct ptw_seq *s, uint64_t track,
				struct ptw_ev_plan *p, int counter)
{
	p->track = track ? track : s->default_track;
	p->src = NULL;
	p->body.s = NULL;
	p->tr = ptw_tracks_get(&s->w->tracks, p->track);
	if (__builtin_expect(!p->tr, 0))
		return ptw_i_writer_fail(s->w, PTW_ERR_INVALID, 0,
					 p->track ? "unknown track %llu"
						  : "no track (%llu) and no default track",
					 (unsigned long long)p->track);
	if (__builtin_expect((p->tr->kind == PTW_TRACK_COUNTER) != counter, 0))
		return ptw_i_writer_fail(s->w, PTW_ERR_INVALID, 0,
					 counter ? "track %llu is not a counter track"
						 : "track %llu is a counter track",
					 (unsigned long long)p->track);
	return 0;
}

/* Measures a string unless the pointer cache already knows it. */
static inline int ptw_ev_check_str(struct ptw_ev_str *e, const char *s,
				   const struct ptw_intern *t, int is_static)
{
	e->s = s;
	e->is_new = 0;
	if (is_static && (e->iid = ptw_intern_get_ptr(t, s)) != 0) {
		e->len = SIZE_MAX;
		return 0;
	}
	e->iid = 0;
	e->len = strnlen(s, PTW_MAX_STRING_LEN + 1);
	return e->len > PTW_MAX_STRING_LEN ? -1 : 0;
}

/* What is not UTF-8 is written as U+FFFD, as the UI shows it
 * (trace_processor keeps the bytes): checked once per string, for an
 * inline value or a new entry (the table keeps the bytes given, so the
 * same string finds the same entry). Out of line: the per-event path
 * stays as small as it was. */
static __attribute__((noinline, cold)) void ptw_ev_fix(struct ptw_ev_str *e)
{
	e->raw_len = e->len;
	e->len = ptw_utf8_fixed_len(e->s, e->len, &e->fix);
}

/* Validates the entries (PTW_ARG_TYPE_DICT) or values (PTW_ARG_TYPE_ARRAY) of 'a',
 * 'depth' levels below a top-level annotation, adding their number to
 * *nodes and their bytes' bound to *need. Returns NULL, or what is wrong.
 * Recursion is bounded by PTW_MAX_ARG_DEPTH. */
static const char *ptw_ev_check_nested(const struct ptw_arg *a,
				       uint32_t depth, uint32_t *nodes,
				       size_t *need)
{
	uint32_t n = a->v.nested.n;
	if (n && depth > PTW_MAX_ARG_DEPTH)
		return "annotations nested deeper than PTW_MAX_ARG_DEPTH";
	if (n && !a->v.nested.items)
		return "NULL nested annotations with a non-zero count";
	if (n > PTW_MAX_ARG_NODES - *nodes)
		return "more than PTW_MAX_ARG_NODES nested annotations";
	*nodes += n;
	for (uint32_t i = 0; i < n; i++) {
		const struct ptw_arg *e = &a->v.nested.items[i];
		size_t len = 0;
		if (a->type == PTW_ARG_TYPE_DICT) {
			if (!e->name)
				return "annotation without a name";
			len = strnlen(e->name, PTW_MAX_STRING_LEN + 1);
			if (len > PTW_MAX_STRING_LEN)
				return "annotation name too long";
		}
		/* 3 * len: a byte that is not UTF-8 becomes U+FFFD */
		*need += PTW_EV_NODE_MAX + 3 * len;
		const char *why;
		switch (e->type) {
		case PTW_ARG_TYPE_BOOL: case PTW_ARG_TYPE_INT: case PTW_ARG_TYPE_UINT:
		case PTW_ARG_TYPE_DOUBLE: case PTW_ARG_TYPE_POINTER:
			break;
		case PTW_ARG_TYPE_STRING:
			if (!e->v.s)
				return "NULL string annotation value";
			len = strnlen(e->v.s, PTW_MAX_STRING_LEN + 1);
			if (len > PTW_MAX_STRING_LEN)
				return "annotation value too long";
			*need += 3 * len;
			break;
		case PTW_ARG_TYPE_DICT: case PTW_ARG_TYPE_ARRAY:
			if ((why = ptw_ev_check_nested(e, depth + 1, nodes, need)))
				return why;
			break;
		default:
			return "unknown annotation type";
		}
	}
	return NULL;
}

/* Validates everything about 'ev' before anything is written. */
static int ptw_ev_validate(struct ptw_seq *s, const struct ptw_event *ev,
			   struct ptw_ev_plan *p)
{
	struct ptw_writer *w = s->w;
	int is_static = (ev->flags & PTW_EV_STATIC_STRINGS) != 0;
	if (p->type == PTW_TE_TYPE_SLICE_END &&
	    !(ev->flags & PTW_EV_NAMED_END)) {
		p->name.s = p->cat.s = NULL;
		p->name.iid = p->cat.iid = 0;
		if (!p->tr->depth)
			return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
						 "SLICE_END on track %llu without an open slice",
						 (unsigned long long)p->track);
	} else {
		if (!ev->name)
			p->name.s = NULL, p->name.iid = 0;
		else if (ptw_ev_check_str(&p->name, ev->name, s->names, is_static))
			return ptw_ev_fail(w, "event name too long");
		if (!ev->category)
			p->cat.s = NULL, p->cat.iid = 0;
		else if (ptw_ev_check_str(&p->cat, ev->category, s->cats,
					  is_static))
			return ptw_ev_fail(w, "event category too long");
	}
	if (ev->n_args > PTW_MAX_ANNOTATIONS)
		return ptw_ev_fail(w, "too many annotations");
	if (ev->n_flow_ids > PTW_MAX_FLOWS || ev->n_terminating_flow_ids > PTW_MAX_FLOWS)
		return ptw_ev_fail(w, "too many flow ids");
	if (ev->flags & PTW_EV_THREAD_TIME) {
		const struct ptw_track *tt =
			ptw_tracks_get(&w->tracks, ev->thread_time_track);
		if (!tt || tt->kind != PTW_TRACK_COUNTER)
			return ptw_ev_fail(w, "thread time on a track that is "
					      "not a counter track");
	}
	if ((ev->n_args && !ev->args) || (ev->n_flow_ids && !ev->flow_ids) ||
	    (ev->n_terminating_flow_ids && !ev->terminating_flow_ids))
		return ptw_ev_fail(w, "NULL array with a non-zero count");
	const char *cs_why;
	if (ev->callstack && (cs_why = ptw_w_stk_check(ev->callstack)))
		return ptw_ev_fail(w, cs_why);
	if (ev->legacy && (unsigned)ev->legacy->flow_dir > PTW_FLOW_INOUT)
		return ptw_ev_fail(w, "unknown flow direction");
	if (ev->legacy && ev->legacy->phase && p->type)
		return ptw_ev_fail(w, "legacy phase on a typed event");
	if (ev->legacy && ev->legacy->instant_scope) {
		char sc = ev->legacy->instant_scope;
		if (p->type != PTW_TE_TYPE_INSTANT || (sc != 'g' && sc != 'p'))
			return ptw_ev_fail(w, "instant scope on a non-instant "
					   "event, or not 'g' or 'p'");
		if (sc == 'p' && p->tr->kind != PTW_TRACK_PROCESS)
			return ptw_ev_fail(w, "process-scoped instant on a "
					   "track that is not a process track");
	}
	if (ev->source && p->type) {
		const struct ptw_source_location *sl = ev->source;
		is_static |= (ev->flags & PTW_EV_STATIC_SOURCE) != 0;
		p->src = sl;
		p->loc.is_new = 0;
		p->loc.iid = is_static ? ptw_intern_get_ptr(s->locs, sl) : 0;
		p->loc.len = p->loc.iid ? SIZE_MAX : 0;
		p->file_len = sl->file ? strnlen(sl->file, PTW_MAX_STRING_LEN + 1)
				       : 0;
		p->func_len = sl->function ? strnlen(sl->function,
						     PTW_MAX_STRING_LEN + 1)
					   : 0;
		if (p->file_len > PTW_MAX_STRING_LEN ||
		    p->func_len > PTW_MAX_STRING_LEN)
			return ptw_ev_fail(w, "source location file or "
					      "function name too long");
	}
	uint32_t nodes = 0;
	p->nested_need = 0;
	for (uint32_t i = 0; i < ev->n_args; i++) {
		const struct ptw_arg *a = &ev->args[i];
		const char *why;
		if (!a->name)
			return ptw_ev_fail(w, "annotation without a name");
		if (ptw_ev_check_str(&p->anames[i], a->name, s->anames,
				     (ev->flags & PTW_EV_STATIC_ARG_NAMES) != 0))
			return ptw_ev_fail(w, "annotation name too long");
		p->svals[i].s = NULL;
		switch (a->type) {
		case PTW_ARG_TYPE_BOOL: case PTW_ARG_TYPE_INT: case PTW_ARG_TYPE_UINT:
		case PTW_ARG_TYPE_DOUBLE: case PTW_ARG_TYPE_POINTER:
			break;
		case PTW_ARG_TYPE_STRING:
			if (!a->v.s)
				return ptw_ev_fail(w, "NULL string annotation value");
			if (ptw_ev_check_str(&p->svals[i], a->v.s, s->svals, 0))
				return ptw_ev_fail(w, "annotation value too long");
			if (p->svals[i].len > PTW_INTERN_VALUE_MAX) {
				p->svals[i].iid = UINT64_MAX; /* inline */
				ptw_ev_fix(&p->svals[i]);
			}
			break;
		case PTW_ARG_TYPE_DICT: case PTW_ARG_TYPE_ARRAY:
			if ((why = ptw_ev_check_nested(a, 1, &nodes,
						       &p->nested_need)))
				return ptw_ev_fail(w, why);
			break;
		default:
			return ptw_ev_fail(w, "unknown annotation type");
		}
	}
	return 0;
}

/* Interns one string (after any checkpoint). Returns 0 or NOMEM. */
static inline int ptw_ev_intern(struct ptw_ev_str *e, struct ptw_intern *t,
				int is_static)
{
	if (e->len == SIZE_MAX) {
		/* Pointer cache hit before the checkpoint check; look again
		 * (a checkpoint empties the cache). */
		e->iid = ptw_intern_get_ptr(t, e->s);
		if (__builtin_expect(e->iid != 0, 1))
			return 0;
		e->len = strlen(e->s);
	}
	e->iid = ptw_intern_get(t, e->s, e->len, &e->is_new);
	if (!e->iid)
		return PTW_ERR_NOMEM;
	if (is_static)
		ptw_intern_put_ptr(t, e->s, e->iid);
	return 0;
}

/* Interns the source location p->src (after any checkpoint): by address
 * when static, else by its key file NUL function NUL line built in
 * s->lkey. Returns 0 or NOMEM. */
static int ptw_ev_intern_loc(struct ptw_seq *s, struct ptw_ev_plan *p,
			     int is_static)
{
	const struct ptw_source_location *sl = p->src;
	if (p->loc.len == SIZE_MAX &&
	    (p->loc.iid = ptw_intern_get_ptr(s->locs, sl)) != 0)
		return 0;
	size_t n = p->file_len + 1 + p->func_len + 1 + sizeof(sl->line);
	if (n > s->lkey_cap) {
		size_t cap = n < 256 ? 256 : n;
		char *k = realloc(s->lkey, cap);
		if (!k)
			return PTW_ERR_NOMEM;
		s->lkey = k;
		s->lkey_cap = cap;
	}
	char *k = s->lkey;
	if (p->file_len)
		memcpy(k, sl->file, p->file_len);
	k[p->file_len] = 0;
	if (p->func_len)
		memcpy(k + p->file_len + 1, sl->function, p->func_len);
	k[p->file_len + 1 + p->func_len] = 0;
	memcpy(k + p->file_len + 2 + p->func_len, &sl->line, sizeof(sl->line));
	p->loc.s = k;
	p->loc.iid = ptw_intern_get(s->locs, k, n, &p->loc.is_new);
	if (!p->loc.iid)
		return PTW_ERR_NOMEM;
	if (is_static)
		ptw_intern_put_ptr(s->locs, sl, p->loc.iid);
	if (p->loc.is_new) {
		p->file_fix = p->func_fix = 0;
		p->file_out = p->file_len ? ptw_utf8_fixed_len(sl->file,
							       p->file_len,
							       &p->file_fix)
					  : 0;
		p->func_out = p->func_len ? ptw_utf8_fixed_len(sl->function,
							       p->func_len,
							       &p->func_fix)
					  : 0;
	}
	return 0;
}

/* Body of a new SourceLocation entry. */
static inline size_t ptw_ev_loc_body(const struct ptw_ev_plan *p)
{
	return 1 + ptw_pb_varint_size(p->loc.iid) + 1 +
	       ptw_pb_varint_size(p->file_out) + p->file_out + 1 +
	       ptw_pb_varint_size(p->func_out) + p->func_out + 1 +
	       ptw_pb_varint_size(p->src->line);
}

/* A string field of a SourceLocation: 'out' bytes as written. */
static inline uint8_t *ptw_ev_put_loc_str(uint8_t *q, uint32_t field,
					  const char *str, size_t len,
					  size_t out, int fix)
{
	q = ptw_pb_write_len_tag(q, field);
	q = ptw_pb_write_varint(q, out);
	if (!len)
		return q;
	if (fix)
		return (uint8_t *)ptw_utf8_fix((char *)q, str, len);
	memcpy(q, str, len);
	return q + len;
}

/* Writes the new SourceLocation entry of p. */
static uint8_t *ptw_ev_put_loc(uint8_t *q, const struct ptw_ev_plan *p)
{
	q = ptw_pb_write_len_tag(q, PTW_F_ID_SOURCE_LOCATIONS);
	q = ptw_pb_write_varint(q, ptw_ev_loc_body(p));
	q = ptw_pb_write_varint_field(q, PTW_F_INTERN_IID, p->loc.iid);
	q = ptw_ev_put_loc_str(q, PTW_F_SL_FILE_NAME, p->src->file,
			       p->file_len, p->file_out, p->file_fix);
	q = ptw_ev_put_loc_str(q, PTW_F_SL_FUNCTION_NAME, p->src->function,
			       p->func_len, p->func_out, p->func_fix);
	return ptw_pb_write_varint_field(q, PTW_F_SL_LINE_NUMBER, p->src->line);
}

/* Size of an InternedData entry body: iid + the string. */
static inline size_t ptw_ev_entry_body(const struct ptw_ev_str *e)
{
	return 1 + ptw_pb_varint_size(e->iid) + 1 + ptw_pb_varint_size(e->len) +
	       e->len;
}

/* Bytes of a whole length-delimited field with a 'body'-byte payload. */
static inline size_t ptw_ev_field_size(uint32_t field, size_t body)
{
	return ptw_pb_varint_size(PTW_PB_TAG(field, PTW_PB_WT_LEN)) +
	       ptw_pb_varint_size(body) + body;
}

/* Writes an InternedData entry (InternedString / EventName / EventCategory
 * / DebugAnnotationName all use iid = 1, name/str = 2). */
static inline uint8_t *ptw_ev_put_entry(uint8_t *p, uint32_t field,
					const struct ptw_ev_str *e)
{
	p = ptw_pb_write_len_tag(p, field);
	p = ptw_pb_write_varint(p, ptw_ev_entry_body(e));
	p = ptw_pb_write_varint_field(p, PTW_F_INTERN_IID, e->iid);
	p = ptw_pb_write_len_tag(p, PTW_F_INTERN_NAME);
	p = ptw_pb_write_varint(p, e->len);
	if (__builtin_expect(e->fix, 0))
		return (uint8_t *)ptw_utf8_fix((char *)p, e->s, e->raw_len);
	memcpy(p, e->s, e->len);
	return p + e->len;
}

/* Finishes a nested message begun at 'mark' (one reserved length byte)
 * whose body ends at p; returns the new end (moved if the body needed a
 * longer length, which the caller's reservation covers). */
static inline uint8_t *ptw_ev_end_nested(uint8_t *mark, uint8_t *p)
{
	size_t body = (size_t)(p - mark - 1);
	if (__builtin_expect(body < 0x80u, 1)) {
		*mark = (uint8_t)body;
		return p;
	}
	unsigned extra = ptw_pb_varint_size(body) - 1;
	memmove(mark + 1 + extra, mark + 1, body);
	ptw_pb_write_varint(mark, body);
	return p + extra;
}

/* Writes a length-delimited string field, U+FFFD for what is not UTF-8
 * (the caller reserved 3 bytes per byte). */
static inline uint8_t *ptw_ev_put_str(uint8_t *q, uint32_t field,
				      const char *s)
{
	size_t len = strlen(s);
	int fix;
	size_t out = ptw_utf8_fixed_len(s, len, &fix);
	q = ptw_pb_write_len_tag(q, field);
	q = ptw_pb_write_varint(q, out);
	if (fix)
		return (uint8_t *)ptw_utf8_fix((char *)q, s, len);
	memcpy(q, s, len);
	return q + len;
}

/* Writes the entries (dict_entries, each with its name inline) or values
 * (array_values) of a validated PTW_ARG_TYPE_DICT / PTW_ARG_TYPE_ARRAY; string
 * values inline. Recursion is bounded by PTW_MAX_ARG_DEPTH. */
static uint8_t *ptw_ev_put_nested(uint8_t *q, const struct ptw_arg *a)
{
	int dict = a->type == PTW_ARG_TYPE_DICT;
	uint32_t field = dict ? PTW_F_DA_DICT_ENTRIES : PTW_F_DA_ARRAY_VALUES;
	for (uint32_t i = 0; i < a->v.nested.n; i++) {
		const struct ptw_arg *e = &a->v.nested.items[i];
		q = ptw_pb_write_len_tag(q, field);
		uint8_t *da = q++;
		if (dict)
			q = ptw_ev_put_str(q, PTW_F_DA_NAME, e->name);
		switch (e->type) {
		case PTW_ARG_TYPE_BOOL:
			q = ptw_pb_write_varint_field(q, PTW_F_DA_BOOL_VALUE,
						      e->v.b != 0);
			break;
		case PTW_ARG_TYPE_INT:
			q = ptw_pb_write_varint_field(q, PTW_F_DA_INT_VALUE,
						      (uint64_t)e->v.i);
			break;
		case PTW_ARG_TYPE_UINT:
			q = ptw_pb_write_varint_field(q, PTW_F_DA_UINT_VALUE,
						      e->v.u);
			break;
		case PTW_ARG_TYPE_DOUBLE: {
			uint64_t bits;
			memcpy(&bits, &e->v.d, sizeof(bits));
			q = ptw_pb_write_fixed64_field(q, PTW_F_DA_DOUBLE_VALUE,
						       bits);
			break;
		}
		case PTW_ARG_TYPE_POINTER:
			q = ptw_pb_write_varint_field(q, PTW_F_DA_POINTER_VALUE,
						      e->v.u);
			break;
		case PTW_ARG_TYPE_STRING:
			q = ptw_ev_put_str(q, PTW_F_DA_STRING_VALUE, e->v.s);
			break;
		case PTW_ARG_TYPE_DICT: case PTW_ARG_TYPE_ARRAY:
			q = ptw_ev_put_nested(q, e);
			break;
		}
		q = ptw_ev_end_nested(da, q);
	}
	return q;
}

/* Upper bound of a packet's bytes besides the interned data, strings of
 * inline annotation values and the per-annotation and per-flow parts:
 * record tag and length, timestamp and clock id, sequence header,
 * TrackEvent tag and length, type, track, category, name, counter. */
#define PTW_EV_BASE_MAX 128u
/* Upper bound of one DebugAnnotation besides an inline string value. */
#define PTW_EV_ARG_MAX 48u
/* Upper bound of TrackEvent.source_location_iid and log_message. */
#define PTW_EV_LOG_MAX 48u
/* Upper bound of a TrackEvent.legacy_event field. */
#define PTW_EV_LEGACY_MAX 48u

/* Writes TrackEvent.legacy_event (the room is reserved). */
static uint8_t *ptw_ev_put_legacy(uint8_t *q, const struct ptw_legacy *l,
				  const struct ptw_ev_plan *p)
{
	static const struct ptw_legacy none;
	q = ptw_pb_write_len_tag(q, PTW_F_TE_LEGACY_EVENT);
	uint8_t *le = q++;
	if (!l)
		l = &none;
	if (p->is_x) {
		q = ptw_pb_write_varint_field(q, PTW_F_LE_PHASE, 'X');
		q = ptw_pb_write_varint_field(q, PTW_F_LE_DURATION_US,
					      p->x_dur_us);
	}
	if (l->phase) {
		q = ptw_pb_write_varint_field(q, PTW_F_LE_PHASE,
					      (uint64_t)(unsigned char)l->phase);
		q = ptw_pb_write_varint_field(
			q, l->local_id ? PTW_F_LE_LOCAL_ID : PTW_F_LE_UNSCOPED_ID,
			l->id);
		if (l->bind_to_enclosing)
			q = ptw_pb_write_varint_field(
				q, PTW_F_LE_BIND_TO_ENCLOSING, 1);
	}
	if (l->instant_scope) { /* an INSTANT (validated): phase 'I' */
		q = ptw_pb_write_varint_field(q, PTW_F_LE_PHASE, 'I');
		q = ptw_pb_write_varint_field(
			q, PTW_F_LE_INSTANT_EVENT_SCOPE,
			l->instant_scope == 'g' ? PTW_LE_SCOPE_GLOBAL
						: PTW_LE_SCOPE_PROCESS);
	}
	if (l->flow_dir != PTW_FLOW_NONE) {
		q = ptw_pb_write_varint_field(q, PTW_F_LE_BIND_ID, l->bind_id);
		q = ptw_pb_write_varint_field(q, PTW_F_LE_FLOW_DIRECTION,
					      (uint64_t)l->flow_dir);
	}
	return ptw_ev_end_nested(le, q);
}

/* ptw_ev_fix for the new entries of an event. */
static __attribute__((noinline, cold)) void
ptw_ev_fix_new(struct ptw_ev_plan *p, uint32_t n_args)
{
	if (p->name.s && p->name.is_new)
		ptw_ev_fix(&p->name);
	if (p->cat.s && p->cat.is_new)
		ptw_ev_fix(&p->cat);
	if (p->body.s && p->body.is_new)
		ptw_ev_fix(&p->body);
	for (uint32_t i = 0; i < n_args; i++) {
		if (p->anames[i].is_new)
			ptw_ev_fix(&p->anames[i]);
		if (p->svals[i].s && p->svals[i].iid != UINT64_MAX &&
		    p->svals[i].is_new)
			ptw_ev_fix(&p->svals[i]);
	}
}

/* Interns string value 'v' or decides to write it inline (v->iid =
 * UINT64_MAX; returns 1). trace_processor resolves a string_value_iid
 * through two hash maps of the packet's sequence generation and the
 * entry's bytes: for an entry it has not touched for a while that is a
 * few cache misses, about 1 us per arg on the converted Chrome files
 * measured (docs/convert.md), more than parsing the inline string. So a
 * value goes by iid only while the same value was written within the
 * last s->value_gap packets of the sequence (PTW_INTERN_VALUE_GAP; on a
 * converter's writer PTW_CONV_VALUE_GAP), otherwise inline,
 * which costs its length in bytes: values that repeat often stay
 * interned. A value not in the table yet is written inline and
 * remembered in sv_seen; it gets its entry (v->is_new) at its next use
 * within the gap, so a value used once costs no entry, and iids stay
 * 1, 2, 3... in the order entries are written. Returns -1 out of
 * memory, else 0 or 1. */
static inline int ptw_ev_intern_value(struct ptw_seq *s, struct ptw_ev_str *v)
{
	uint64_t h, w0, w1;
	uint32_t now = s->since_cp + 1;
	uint64_t iid = ptw_intern_find(s->svals, v->s, v->len, &h, &w0, &w1);
	v->is_new = 0;
	if (iid) {
		struct ptw_intern_entry *e = &s->svals->entries[iid - 1];
		uint32_t gap = now - e->used;
		e->used = now;
		if (gap <= s->value_gap) {
			v->iid = iid;
			return 0;
		}
	} else {
		if (!s->sv_seen &&
		    !(s->sv_seen = calloc(PTW_SV_SEEN, sizeof(*s->sv_seen)))) {
			v->iid = UINT64_MAX; /* no memory to remember it: */
			return 1;            /* inline, as a first use */
		}
		uint32_t k = (uint32_t)(h >> 32) & (PTW_SV_SEEN - 1);
		if (s->sv_seen[k].hash == h && s->sv_seen[k].gen == s->cp_gen &&
		    now - s->sv_seen[k].used <= s->value_gap) {
			iid = ptw_intern_insert(s->svals, v->s, v->len, h, w0, w1);
			if (!iid)
				return -1;
			s->svals->entries[iid - 1].used = now;
			v->iid = iid;
			v->is_new = 1;
			return 0;
		}
		s->sv_seen[k].hash = h;
		s->sv_seen[k].used = now;
		s->sv_seen[k].gen = s->cp_gen;
	}
	v->iid = UINT64_MAX;
	return 1;
}

/* Interns the event's strings in s's tables. Returns 1 if any is new
 * (the packet then carries InternedData), 0 if none, -1 out of memory. */
static inline __attribute__((always_inline)) int
ptw_ev_intern_all(struct ptw_seq *s, const struct ptw_event *ev,
		  struct ptw_ev_plan *p, uint32_t n_args)
{
	int is_static = ev && (ev->flags & PTW_EV_STATIC_STRINGS);
	int static_args = ev && (ev->flags & PTW_EV_STATIC_ARG_NAMES);
	int any_new = 0;
	if (p->name.s) {
		if (ptw_ev_intern(&p->name, s->names, is_static))
			return -1;
		any_new |= p->name.is_new;
	}
	if (p->cat.s) {
		if (ptw_ev_intern(&p->cat, s->cats, is_static))
			return -1;
		any_new |= p->cat.is_new;
	}
	for (uint32_t i = 0; i < n_args; i++) {
		if (ptw_ev_intern(&p->anames[i], s->anames, static_args))
			return -1;
		any_new |= p->anames[i].is_new;
		if (p->svals[i].s && p->svals[i].iid != UINT64_MAX) {
			int r = ptw_ev_intern_value(s, &p->svals[i]);
			if (r < 0)
				return -1;
			if (r)
				ptw_ev_fix(&p->svals[i]);
			any_new |= p->svals[i].is_new;
		}
	}
	if (__builtin_expect(p->src != NULL, 0)) {
		if (ptw_ev_intern_loc(s, p, is_static ||
					       (ev->flags & PTW_EV_STATIC_SOURCE)))
			return -1;
		any_new |= p->loc.is_new;
	}
	if (__builtin_expect(p->body.s != NULL, 0)) {
		if (ptw_ev_intern(&p->body, s->bodies, 0))
			return -1;
		any_new |= p->body.is_new;
	}
	return any_new;
}

/* The most bytes the packet can take. Everything is sized first, reserved
 * once, then written with pointer stores: exact lengths for the interned
 * data (*id_body: the InternedData body), one reserved length byte per
 * nested message otherwise. */
static inline __attribute__((always_inline)) size_t
ptw_ev_size(const struct ptw_event *ev,
	    const struct ptw_ev_plan *p, uint32_t n_args,
	    int any_new, size_t *id_body)
{
	size_t need = PTW_EV_BASE_MAX, id = 0;
	if (any_new) {
		if (p->cat.s && p->cat.is_new)
			id += ptw_ev_field_size(PTW_F_ID_EVENT_CATEGORIES,
						ptw_ev_entry_body(&p->cat));
		if (p->name.s && p->name.is_new)
			id += ptw_ev_field_size(PTW_F_ID_EVENT_NAMES,
						ptw_ev_entry_body(&p->name));
		for (uint32_t i = 0; i < n_args; i++) {
			if (p->anames[i].is_new)
				id += ptw_ev_field_size(
					PTW_F_ID_DEBUG_ANNOTATION_NAMES,
					ptw_ev_entry_body(&p->anames[i]));
			if (p->svals[i].s && p->svals[i].is_new)
				id += ptw_ev_field_size(
					PTW_F_ID_DEBUG_ANNOTATION_STRING_VALUES,
					ptw_ev_entry_body(&p->svals[i]));
		}
		id += p->stk.id_len;
		if (p->src && p->loc.is_new)
			id += ptw_ev_field_size(PTW_F_ID_SOURCE_LOCATIONS,
						ptw_ev_loc_body(p));
		if (p->body.s && p->body.is_new)
			id += ptw_ev_field_size(PTW_F_ID_LOG_MESSAGE_BODY,
						ptw_ev_entry_body(&p->body));
		need += ptw_ev_field_size(PTW_F_PKT_INTERNED_DATA, id);
	}
	if (p->src || p->body.s)
		need += PTW_EV_LOG_MAX;
	*id_body = id;
	need += p->stk.te_len;
	need += (size_t)n_args * PTW_EV_ARG_MAX;
	if (n_args)
		need += p->nested_need;
	for (uint32_t i = 0; i < n_args; i++)
		if (p->svals[i].s && p->svals[i].iid == UINT64_MAX)
			need += p->svals[i].len;
	if (ev)
		need += ((size_t)ev->n_flow_ids + ev->n_terminating_flow_ids) *
			(PTW_PB_VARINT_MAX + 8) +
			(ev->legacy || p->is_x ? PTW_EV_LEGACY_MAX : 0);
	if (ev && (ev->flags & PTW_EV_THREAD_TIME))
		need += 2 * (2 + PTW_PB_VARINT_MAX);
	return need;
}

/* Writes the packet's InternedData (the new entries) at q; counts them
 * and asks for a checkpoint once a table is full. Returns the end. */
static uint8_t *ptw_ev_put_interned(uint8_t *q, struct ptw_seq *s,
				    const struct ptw_ev_plan *p,
				    uint32_t n_args, size_t id_body)
{
	struct ptw_writer *w = s->w;
	uint64_t n_new = 0;
	q = ptw_pb_write_len_tag(q, PTW_F_PKT_INTERNED_DATA);
	q = ptw_pb_write_varint(q, id_body);
	if (p->cat.s && p->cat.is_new) {
		q = ptw_ev_put_entry(q, PTW_F_ID_EVENT_CATEGORIES, &p->cat);
		n_new++;
	}
	if (p->name.s && p->name.is_new) {
		q = ptw_ev_put_entry(q, PTW_F_ID_EVENT_NAMES, &p->name);
		n_new++;
	}
	for (uint32_t i = 0; i < n_args; i++) {
		if (p->anames[i].is_new) {
			q = ptw_ev_put_entry(q, PTW_F_ID_DEBUG_ANNOTATION_NAMES,
					     &p->anames[i]);
			n_new++;
		}
		if (p->svals[i].s && p->svals[i].is_new) {
			/* InternedString {iid = 1, str = 2}: same numbers as
			 * the name tables. */
			q = ptw_ev_put_entry(q, PTW_F_ID_DEBUG_ANNOTATION_STRING_VALUES,
					     &p->svals[i]);
			n_new++;
		}
	}
	if (p->stk.id_len) { /* the callstack's new entries */
		memcpy(q, p->stk.id, p->stk.id_len);
		q += p->stk.id_len;
	}
	if (p->src && p->loc.is_new) {
		q = ptw_ev_put_loc(q, p);
		n_new++;
	}
	if (p->body.s && p->body.is_new) {
		q = ptw_ev_put_entry(q, PTW_F_ID_LOG_MESSAGE_BODY, &p->body);
		n_new++;
	}
	w->stats.interned_strings += n_new;
	uint32_t cap = w->opt.max_interned;
	if (ptw_intern_count(s->names) >= cap ||
	    ptw_intern_count(s->cats) >= cap ||
	    ptw_intern_count(s->anames) >= cap ||
	    ptw_intern_count(s->svals) >= cap ||
	    ptw_intern_count(s->locs) >= cap ||
	    ptw_intern_count(s->bodies) >= cap)
		s->need_cp = 1;
	return q;
}

/* Writes one debug annotation (its name's iid 'an', a string value's
 * interning 'sv') at q; returns the end. */
static inline __attribute__((always_inline)) uint8_t *
ptw_ev_put_arg(uint8_t *q, const struct ptw_arg *a,
	       const struct ptw_ev_str *an,
	       const struct ptw_ev_str *sv)
{
	q = ptw_pb_write_len_tag(q, PTW_F_TE_DEBUG_ANNOTATIONS);
	uint8_t *da = q++;
	q = ptw_pb_write_varint_field(q, PTW_F_DA_NAME_IID, an->iid);
	switch (a->type) {
	case PTW_ARG_TYPE_BOOL:
		q = ptw_pb_write_varint_field(q, PTW_F_DA_BOOL_VALUE, a->v.b != 0);
		break;
	case PTW_ARG_TYPE_INT:
		q = ptw_pb_write_varint_field(q, PTW_F_DA_INT_VALUE,
					      (uint64_t)a->v.i);
		break;
	case PTW_ARG_TYPE_UINT:
		q = ptw_pb_write_varint_field(q, PTW_F_DA_UINT_VALUE, a->v.u);
		break;
	case PTW_ARG_TYPE_DOUBLE: {
		uint64_t bits;
		memcpy(&bits, &a->v.d, sizeof(bits));
		q = ptw_pb_write_fixed64_field(q, PTW_F_DA_DOUBLE_VALUE, bits);
		break;
	}
	case PTW_ARG_TYPE_POINTER:
		q = ptw_pb_write_varint_field(q, PTW_F_DA_POINTER_VALUE, a->v.u);
		break;
	case PTW_ARG_TYPE_STRING:
		if (sv->iid != UINT64_MAX) {
			q = ptw_pb_write_varint_field(q, PTW_F_DA_STRING_VALUE_IID,
						      sv->iid);
		} else {
			q = ptw_pb_write_len_tag(q, PTW_F_DA_STRING_VALUE);
			q = ptw_pb_write_varint(q, sv->len);
			if (__builtin_expect(sv->fix, 0)) {
				q = (uint8_t *)ptw_utf8_fix((char *)q, a->v.s,
							    sv->raw_len);
			} else {
				memcpy(q, a->v.s, sv->len);
				q += sv->len;
			}
		}
		break;
	case PTW_ARG_TYPE_DICT: case PTW_ARG_TYPE_ARRAY:
		q = ptw_ev_put_nested(q, a);
		break;
	}
	return ptw_ev_end_nested(da, q);
}

/* Interns, then writes one TrackEvent packet. 'ev' may be NULL for
 * events without strings, args or flows (counters, bare ENDs);
 * value_kind as ptw_seq_te_value takes it (a counter's 1 or 2). */
static int ptw_ev_write(struct ptw_seq *s, uint64_t ts,
			const struct ptw_event *ev, struct ptw_ev_plan *p,
			int64_t ival, double dval, int value_kind)
{
	struct ptw_writer *w = s->w;
	/* trace_processor reads packet timestamps as int64: larger values
	 * would come out negative and be dropped. */
	if (__builtin_expect(ts > (uint64_t)INT64_MAX, 0))
		return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
					 "timestamp %llu exceeds INT64_MAX",
					 (unsigned long long)ts);
	int rc = ptw_w_seq_prepare(s, ts);
	if (rc)
		return rc;
	uint32_t n_args = ev ? ev->n_args : 0;
	int any_new = ptw_ev_intern_all(s, ev, p, n_args);
	if (any_new < 0)
		return ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0,
					 "intern table: out of memory");
	if (any_new)
		ptw_ev_fix_new(p, n_args);
	p->stk.id_len = p->stk.te_len = 0;
	if (ev && ev->callstack && ev->callstack->n_frames) {
		if ((rc = ptw_w_stk_encode(s, ev->callstack, &p->stk)) != 0)
			return ptw_i_writer_fail(w, rc, 0,
						 "callstack: out of memory");
		any_new |= p->stk.id_len != 0;
	}
	size_t id_body = 0;
	size_t need = ptw_ev_size(ev, p, n_args, any_new, &id_body);

	struct ptw_pb_buf *b = &w->pend;
	if (!ptw_pb_reserve(b, need)) {
		b->len = 0;
		return ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0,
					 "packet buffer: out of memory");
	}
	w->last_pkt = b->len;
	uint8_t *q = ptw_pb_write_len_tag(b->data + b->len, PTW_F_TRACE_PACKET);
	uint8_t *plen = q++;
	q = ptw_seq_put_ts_hdr(s, q, ts);
	s->since_cp++;
	if (any_new)
		q = ptw_ev_put_interned(q, s, p, n_args, id_body);
	ptw_seq_fast_update(s);

	/* the fields of the fast packet (seq_fast.h), then the rest */
	q = ptw_pb_write_len_tag(q, PTW_F_PKT_TRACK_EVENT);
	uint8_t *te = q++;
	q = ptw_seq_te_fields(q, p->type, p->track, s->default_track,
			      p->cat.iid, p->name.iid);
	q = ptw_seq_te_value(q, value_kind, ival, dval);
	for (uint32_t i = 0; i < n_args; i++)
		q = ptw_ev_put_arg(q, &ev->args[i], &p->anames[i], &p->svals[i]);
	if (ev && (ev->flags & PTW_EV_THREAD_TIME)) {
		/* extra counter: the value on the thread-time track */
		q = ptw_pb_write_varint_field(q, PTW_F_TE_EXTRA_COUNTER_TRACK_UUIDS,
					      ev->thread_time_track);
		q = ptw_pb_write_varint_field(q, PTW_F_TE_EXTRA_COUNTER_VALUES,
					      (uint64_t)ev->thread_time);
	}
	if (ev) {
		for (uint32_t i = 0; i < ev->n_flow_ids; i++)
			q = ptw_pb_write_fixed64_field(q, PTW_F_TE_FLOW_IDS,
						       ev->flow_ids[i]);
		for (uint32_t i = 0; i < ev->n_terminating_flow_ids; i++)
			q = ptw_pb_write_fixed64_field(q, PTW_F_TE_TERMINATING_FLOW_IDS,
						       ev->terminating_flow_ids[i]);
		if (ev->legacy || p->is_x)
			q = ptw_ev_put_legacy(q, ev->legacy, p);
		if (p->stk.te_len) {
			memcpy(q, p->stk.te, p->stk.te_len);
			q += p->stk.te_len;
		}
	}
	if (__builtin_expect(p->body.s != NULL, 0)) {
		q = ptw_pb_write_len_tag(q, PTW_F_TE_LOG_MESSAGE);
		uint8_t *lm = q++;
		if (p->src)
			q = ptw_pb_write_varint_field(
				q, PTW_F_LM_SOURCE_LOCATION_IID, p->loc.iid);
		q = ptw_pb_write_varint_field(q, PTW_F_LM_BODY_IID, p->body.iid);
		if (p->prio)
			q = ptw_pb_write_varint_field(q, PTW_F_LM_PRIO,
						      (uint64_t)p->prio);
		q = ptw_ev_end_nested(lm, q);
	}
	if (__builtin_expect(p->src != NULL, 0))
		q = ptw_pb_write_varint_field(q, PTW_F_TE_SOURCE_LOCATION_IID,
					      p->loc.iid);
	q = ptw_ev_end_nested(te, q);
	b->len = (size_t)(q - b->data);
	size_t mark = (size_t)(plen - b->data);
	rc = ptw_w_packet_end(w, mark, 1);
	if (rc)
		return rc;
	w->stats.events++;
	if (p->type == PTW_TE_TYPE_SLICE_BEGIN)
		p->tr->depth++;
	else if (p->type == PTW_TE_TYPE_SLICE_END && p->tr->depth)
		p->tr->depth--; /* 0 only with PTW_EV_NAMED_END */
	return 0;
}

static int ptw_ev_track_event(struct ptw_seq *s, const struct ptw_event *ev,
			      int type)
{
	int rc = ptw_ev_enter(s);
	if (rc)
		return rc;
	if (!ev)
		return ptw_ev_fail(s->w, "event is NULL");
	struct ptw_ev_plan p;
	p.type = type;
	p.is_x = 0;
	if ((rc = ptw_ev_resolve_track(s, ev->track, &p, 0)) != 0 ||
	    (rc = ptw_ev_validate(s, ev, &p)) != 0)
		return rc;
	return ptw_ev_write(s, ev->ts, ev, &p, 0, 0, 0);
}


/* ---- fast path ------------------------------------------------------------
 * The common event is encoded straight into the pending buffer
 * (seq_fast.h). */

/* BEGIN, INSTANT or END with static strings and no args/flows, on the
 * fast path; returns 1 with *rc set if it handled the event. */
static inline __attribute__((always_inline)) int
ptw_ev_fast_simple(struct ptw_seq *s, int type, uint64_t track, uint64_t ts,
		   const char *category, const char *name, int *rc)
{
	if (__builtin_expect(!s, 0) || ts > (uint64_t)INT64_MAX)
		return 0;
	track = track ? track : s->default_track;
	struct ptw_track *tr = ptw_seq_fast_track(s, track, 0);
	if (!tr)
		return 0;
	uint64_t cat_iid = 0, name_iid = 0;
	if (type == PTW_TE_TYPE_SLICE_END) {
		if (!tr->depth)
			return 0;
	} else if (!ptw_seq_iids(s, category, name, &cat_iid, &name_iid)) {
		return 0;
	}
	*rc = ptw_seq_fast_write(s, ts, type, track, cat_iid, name_iid, 0, 0, 0);
	if (type == PTW_TE_TYPE_SLICE_BEGIN)
		tr->depth++;
	else if (type == PTW_TE_TYPE_SLICE_END)
		tr->depth--;
	return 1;
}

/* The same for a struct ptw_event. */
static inline __attribute__((always_inline)) int
ptw_ev_fast(struct ptw_seq *s, const struct ptw_event *ev, int type, int *rc)
{
	if (__builtin_expect(!ev, 0) ||
	    (ev->n_args | ev->n_flow_ids | ev->n_terminating_flow_ids) ||
	    (ev->flags & (PTW_EV_THREAD_TIME | PTW_EV_NAMED_END)) ||
	    ((uintptr_t)ev->legacy | (uintptr_t)ev->callstack |
	     (uintptr_t)ev->source) ||
	    (type != PTW_TE_TYPE_SLICE_END &&
	     !(ev->flags & PTW_EV_STATIC_STRINGS)))
		return 0;
	return ptw_ev_fast_simple(s, type, ev->track, ev->ts, ev->category,
				  ev->name, rc);
}

int ptw_seq_slice_begin(struct ptw_seq *s, const struct ptw_event *ev)
{
	int rc;
	if (ptw_ev_fast(s, ev, PTW_TE_TYPE_SLICE_BEGIN, &rc))
		return rc;
	return ptw_ev_track_event(s, ev, PTW_TE_TYPE_SLICE_BEGIN);
}

int ptw_seq_slice_end(struct ptw_seq *s, const struct ptw_event *ev)
{
	int rc;
	if (ptw_ev_fast(s, ev, PTW_TE_TYPE_SLICE_END, &rc))
		return rc;
	return ptw_ev_track_event(s, ev, PTW_TE_TYPE_SLICE_END);
}

int ptw_seq_instant(struct ptw_seq *s, const struct ptw_event *ev)
{
	int rc;
	if (ptw_ev_fast(s, ev, PTW_TE_TYPE_INSTANT, &rc))
		return rc;
	return ptw_ev_track_event(s, ev, PTW_TE_TYPE_INSTANT);
}

int ptw_seq_log(struct ptw_seq *s, const struct ptw_event *ev, int prio,
		const char *msg)
{
	int rc = ptw_ev_enter(s);
	if (rc)
		return rc;
	if (!ev || !msg)
		return ptw_ev_fail(s->w, "event or log message is NULL");
	if (prio < 0 || prio > PTW_LOG_PRIO_FATAL)
		return ptw_ev_fail(s->w, "unknown log message priority");
	struct ptw_ev_plan p;
	p.type = PTW_TE_TYPE_INSTANT;
	p.is_x = 0;
	if ((rc = ptw_ev_resolve_track(s, ev->track, &p, 0)) != 0 ||
	    (rc = ptw_ev_validate(s, ev, &p)) != 0)
		return rc;
	if (p.tr->kind != PTW_TRACK_THREAD)
		return ptw_ev_fail(s->w, "log message on a track that is not "
					 "a thread track");
	if (ptw_ev_check_str(&p.body, msg, s->bodies, 0))
		return ptw_ev_fail(s->w, "log message too long");
	p.prio = prio;
	return ptw_ev_write(s, ev->ts, ev, &p, 0, 0, 0);
}

int ptw_seq_legacy_flow(struct ptw_seq *s, const struct ptw_event *ev)
{
	int rc = ptw_ev_enter(s);
	if (rc)
		return rc;
	if (!ev)
		return ptw_ev_fail(s->w, "event is NULL");
	const struct ptw_legacy *l = ev->legacy;
	if (!l || !l->phase || !strchr("stfben", l->phase))
		return ptw_ev_fail(s->w, "legacy event without phase s, t, f, "
					 "b, e or n");
	if (l->local_id && !strchr("ben", l->phase))
		return ptw_ev_fail(s->w, "local_id on a legacy flow event");
	return ptw_ev_track_event(s, ev, 0);
}

/* The simple event's slow path: the full call with the same event. Out
 * of line, so that its struct stays off the fast path's frame. */
static __attribute__((noinline)) int
ptw_ev_simple_slow(struct ptw_seq *s, int type, uint64_t track, uint64_t ts,
		   const char *category, const char *name)
{
	struct ptw_event ev = {.track = track, .ts = ts, .category = category,
			       .name = name, .flags = PTW_EV_STATIC_STRINGS};
	return ptw_ev_track_event(s, &ev, type);
}

/* One type of simple event, fast path first (inlined once per type, so
 * that each copy is specialised for its type). */
static inline __attribute__((always_inline)) int
ptw_ev_simple_typed(struct ptw_seq *s, int type, uint64_t track, uint64_t ts,
		    const char *category, const char *name)
{
	int rc;
	if (ptw_ev_fast_simple(s, type, track, ts, category, name, &rc))
		return rc;
	return ptw_ev_simple_slow(s, type, track, ts, category, name);
}

int ptw_seq_simple(struct ptw_seq *s, enum ptw_simple_type type,
		   uint64_t track, uint64_t ts, const char *category,
		   const char *name)
{
	int rc;
	switch (type) {
	case PTW_SIMPLE_BEGIN:
		return ptw_ev_simple_typed(s, PTW_TE_TYPE_SLICE_BEGIN, track,
					   ts, category, name);
	case PTW_SIMPLE_END: /* names ignored */
		return ptw_ev_simple_typed(s, PTW_TE_TYPE_SLICE_END, track, ts,
					   NULL, NULL);
	case PTW_SIMPLE_INSTANT:
		return ptw_ev_simple_typed(s, PTW_TE_TYPE_INSTANT, track, ts,
					   category, name);
	default:
		if ((rc = ptw_ev_enter(s)) != 0)
			return rc;
		return ptw_ev_fail(s->w, "unknown simple event type");
	}
}

int ptw_i_seq_prepare(struct ptw_seq *s, enum ptw_simple_type type,
		      const char *category, const char *name,
		      struct ptw_seq_prep *p)
{
	return ptw_i_seq_prepare_loc(s, type, category, name, NULL, p);
}

int ptw_i_seq_prepare_loc(struct ptw_seq *s, enum ptw_simple_type type,
			  const char *category, const char *name,
			  const struct ptw_source_location *loc,
			  struct ptw_seq_prep *p)
{
	static const int te_type[] = {
		[PTW_SIMPLE_BEGIN] = PTW_TE_TYPE_SLICE_BEGIN,
		[PTW_SIMPLE_END] = PTW_TE_TYPE_SLICE_END,
		[PTW_SIMPLE_INSTANT] = PTW_TE_TYPE_INSTANT,
	};
	p->len = 0;
	if (!s || type < PTW_SIMPLE_BEGIN || type > PTW_SIMPLE_INSTANT)
		return 0;
	struct ptw_track *tr = ptw_tracks_get(&s->w->tracks, s->default_track);
	if (!tr || tr->kind == PTW_TRACK_COUNTER)
		return 0;
	uint64_t cat_iid = 0, name_iid = 0, loc_iid = 0;
	if (type != PTW_SIMPLE_END &&
	    !ptw_seq_iids(s, category, name, &cat_iid, &name_iid))
		return 0;
	if (loc && (type == PTW_SIMPLE_END ||
		    !(loc_iid = ptw_intern_get_ptr(s->locs, loc))))
		return 0;
	/* the known bytes of its packet (ptw_pkt_put): the sequence's
	 * header and the TrackEvent's tag (s->hdr), its length, its body
	 * (with the source location last, as ptw_ev_write puts it) */
	uint8_t body[PTW_SEQ_BODY_MAX + 2 + PTW_PB_VARINT_MAX];
	size_t n = ptw_seq_body_prepare(body, te_type[type], cat_iid, name_iid);
	if (loc_iid)
		n = (size_t)(ptw_pb_write_varint_field(
				     body + n, PTW_F_TE_SOURCE_LOCATION_IID,
				     loc_iid) -
			     body);
	if (s->hdr_len + 2u + n > PTW_SEQ_PREP_TAIL)
		return 0;
	memset(p->tail, 0, sizeof(p->tail));
	memcpy(p->tail, s->hdr, s->hdr_len + 1u);
	uint8_t *q = p->tail + s->hdr_len + 1;
	*q++ = (uint8_t)n;
	memcpy(q, body, n);
	p->gen = s->cp_gen;
	p->depth_d = (int8_t)(type == PTW_SIMPLE_BEGIN) -
		     (int8_t)(type == PTW_SIMPLE_END);
	p->len = (uint8_t)(q + n - p->tail);
	return 1;
}

/* The entry checks of a complete slice of 'dur' ns (ok: dur_ok). */
static int ptw_ev_complete_enter(struct ptw_seq *s, const struct ptw_event *ev,
				 uint64_t dur, int dur_ok)
{
	int rc = ptw_ev_enter(s);
	if (rc)
		return rc;
	if (!ev)
		return ptw_ev_fail(s->w, "event is NULL");
	if (!dur_ok || ev->ts > (uint64_t)INT64_MAX ||
	    dur > (uint64_t)INT64_MAX - ev->ts)
		return ptw_ev_fail(s->w, "slice end time exceeds INT64_MAX");
	return 0;
}

int ptw_seq_slice_complete(struct ptw_seq *s, const struct ptw_event *ev,
			   uint64_t dur)
{
	int rc = ptw_ev_complete_enter(s, ev, dur, 1);
	if (rc)
		return rc;
	struct ptw_ev_plan p;
	p.type = PTW_TE_TYPE_SLICE_BEGIN;
	p.is_x = 0;
	if ((rc = ptw_ev_resolve_track(s, ev->track, &p, 0)) != 0 ||
	    (rc = ptw_ev_validate(s, ev, &p)) != 0)
		return rc;
	if ((rc = ptw_ev_write(s, ev->ts, ev, &p, 0, 0, 0)) != 0)
		return rc;
	p.type = PTW_TE_TYPE_SLICE_END;
	p.src = NULL;
	p.name.s = p.cat.s = NULL;
	p.name.iid = p.cat.iid = 0;
	return ptw_ev_write(s, ev->ts + dur, NULL, &p, 0, 0, 0);
}

int ptw_seq_legacy_complete(struct ptw_seq *s, const struct ptw_event *ev,
			    uint64_t dur_us)
{
	int ok = dur_us <= (uint64_t)INT64_MAX / 1000;
	int rc = ptw_ev_complete_enter(s, ev, ok ? dur_us * 1000 : 0, ok);
	if (rc)
		return rc;
	const struct ptw_legacy *l = ev->legacy;
	if (l && (l->phase || l->instant_scope))
		return ptw_ev_fail(s->w, "legacy phase or scope on a complete "
					 "slice");
	if (ev->flags & (PTW_EV_THREAD_TIME | PTW_EV_NAMED_END))
		return ptw_ev_fail(s->w, "thread time or named end on a "
					 "complete slice");
	struct ptw_ev_plan p;
	p.type = 0;
	p.is_x = 1;
	p.x_dur_us = dur_us;
	if ((rc = ptw_ev_resolve_track(s, ev->track, &p, 0)) != 0 ||
	    (rc = ptw_ev_validate(s, ev, &p)) != 0)
		return rc;
	return ptw_ev_write(s, ev->ts, ev, &p, 0, 0, 0);
}

/* A counter sample that the fast path did not take (kept out of line:
 * the fast path's callers then need no frame of their own). */
static __attribute__((noinline)) int
ptw_ev_counter_slow(struct ptw_seq *s, uint64_t track, uint64_t ts,
		    int64_t ival, double dval, int is_double)
{
	int rc = ptw_ev_enter(s);
	if (rc)
		return rc;
	struct ptw_ev_plan p;
	p.type = PTW_TE_TYPE_COUNTER;
	p.is_x = 0;
	if ((rc = ptw_ev_resolve_track(s, track, &p, 1)) != 0)
		return rc;
	p.name.s = p.cat.s = NULL;
	p.name.iid = p.cat.iid = 0;
	return ptw_ev_write(s, ts, NULL, &p, ival, dval, is_double ? 2 : 1);
}

static inline __attribute__((always_inline)) int
ptw_ev_counter(struct ptw_seq *s, uint64_t track, uint64_t ts, int64_t ival,
	       double dval, int is_double)
{
	int rc;
	if (ptw_seq_fast_counter(s, track, ts, !is_double, ival, dval, &rc))
		return rc;
	return ptw_ev_counter_slow(s, track, ts, ival, dval, is_double);
}

int ptw_seq_counter_int(struct ptw_seq *s, uint64_t track, uint64_t ts,
			int64_t value)
{
	return ptw_ev_counter(s, track, ts, value, 0, 0);
}

int ptw_seq_counter_double(struct ptw_seq *s, uint64_t track, uint64_t ts,
			   double value)
{
	return ptw_ev_counter(s, track, ts, 0, value, 1);
}
