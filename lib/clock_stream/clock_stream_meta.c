/* clock_stream_meta.c - a clock event's metadata to owned bytes and back.
 * SPDX-License-Identifier: Apache-2.0 */
#include "clock_stream_meta.h"

#include <string.h>

#include "ptw/error.h"

/* Bounded appender: 'full' is set once the metadata would pass the cap. */
struct meta_out {
	uint8_t *p;
	uint32_t len;
	int full;
};

static void put(struct meta_out *o, const void *src, uint32_t n)
{
	if (n == 0)
		return; /* src may be NULL: memcpy must not see it */
	if (o->full || n > PTW_CLOCK_STREAMS_MAX_META - o->len) {
		o->full = 1;
		return;
	}
	memcpy(o->p + o->len, src, n);
	o->len += n;
}

static void put_u8(struct meta_out *o, uint8_t v) { put(o, &v, 1); }
static void put_u32(struct meta_out *o, uint32_t v) { put(o, &v, 4); }

/* u32 length, bytes, NUL. Returns 0 or PTW_ERR_LIMIT for an overlong
 * string (strnlen stops at the limit: never reads past it). */
static int put_str(struct meta_out *o, const char *s)
{
	size_t n = strnlen(s, (size_t)PTW_MAX_STRING_LEN + 1);
	if (n > PTW_MAX_STRING_LEN)
		return PTW_ERR_LIMIT;
	put_u32(o, (uint32_t)n);
	put(o, s, (uint32_t)n + 1);
	return 0;
}

/* The event's array counts and pointers. Returns 0 or PTW_ERR_INVALID
 * (*why set). */
static int check_arrays(const struct ptw_clock_streams_event *ev,
			const char **why)
{
	if (ev->n_flow_ids > PTW_MAX_FLOWS ||
	    ev->n_terminating_flow_ids > PTW_MAX_FLOWS) {
		*why = "more than PTW_MAX_FLOWS flow ids";
		return PTW_ERR_INVALID;
	}
	if ((ev->n_flow_ids && !ev->flow_ids) ||
	    (ev->n_terminating_flow_ids && !ev->terminating_flow_ids) ||
	    (ev->n_args && !ev->args)) {
		*why = "NULL array with a non-zero count";
		return PTW_ERR_INVALID;
	}
	if (ev->n_args > PTW_MAX_ANNOTATIONS) {
		*why = "more than PTW_MAX_ANNOTATIONS annotations";
		return PTW_ERR_INVALID;
	}
	return 0;
}

/* Category and name (each may be NULL): static strings as pointers,
 * others copied. Returns 0 or PTW_ERR_LIMIT (a string too long). */
static int put_names(struct meta_out *o, const char *cat, const char *name,
		     int is_static)
{
	if (is_static) {
		/* Only measured: the writer checks the same limit. */
		if ((cat && strnlen(cat, (size_t)PTW_MAX_STRING_LEN + 1) >
				    PTW_MAX_STRING_LEN) ||
		    (name && strnlen(name, (size_t)PTW_MAX_STRING_LEN + 1) >
				     PTW_MAX_STRING_LEN))
			return PTW_ERR_LIMIT;
		put_u8(o, cat ? 2 : 0);
		if (cat)
			put(o, &cat, sizeof(cat));
		put_u8(o, name ? 2 : 0);
		if (name)
			put(o, &name, sizeof(name));
		return 0;
	}
	put_u8(o, cat != NULL);
	if (cat && put_str(o, cat))
		return PTW_ERR_LIMIT;
	put_u8(o, name != NULL);
	if (name && put_str(o, name))
		return PTW_ERR_LIMIT;
	return 0;
}

/* A "phase" or "ordinal" annotation is also a key of the event (*keys):
 * an unsigned integer, at most once each. Returns 0 or PTW_ERR_INVALID
 * (*why set). */
static int note_key(const struct ptw_arg *a, struct ptw_clock_meta_keys *keys,
		    int *has_phase, const char **why)
{
	/* First-letter test first: most names are neither. */
	int is_phase = a->name[0] == 'p' && strcmp(a->name, "phase") == 0;
	int is_ordinal = a->name[0] == 'o' && strcmp(a->name, "ordinal") == 0;
	if (!is_phase && !is_ordinal)
		return 0;
	if (a->type != PTW_ARG_TYPE_UINT) {
		*why = "\"phase\" and \"ordinal\" annotations must be "
		       "PTW_ARG_TYPE_UINT";
		return PTW_ERR_INVALID;
	}
	if (is_phase ? *has_phase : keys->has_ordinal) {
		*why = "duplicate \"phase\" or \"ordinal\" annotation";
		return PTW_ERR_INVALID;
	}
	if (is_phase) {
		*has_phase = 1;
		keys->phase = a->v.u;
	} else {
		keys->has_ordinal = 1;
		keys->ordinal = a->v.u;
	}
	return 0;
}

/* One annotation: name, type, value. Returns 0, PTW_ERR_INVALID (*why
 * set) or PTW_ERR_LIMIT (a string too long). */
static int put_arg(struct meta_out *o, const struct ptw_arg *a,
		   const char **why)
{
	if (put_str(o, a->name))
		return PTW_ERR_LIMIT;
	put_u8(o, (uint8_t)a->type);
	switch (a->type) {
	case PTW_ARG_TYPE_STRING:
		if (!a->v.s) {
			*why = "NULL string annotation";
			return PTW_ERR_INVALID;
		}
		return put_str(o, a->v.s) ? PTW_ERR_LIMIT : 0;
	case PTW_ARG_TYPE_BOOL:
		put_u8(o, a->v.b != 0);
		return 0;
	case PTW_ARG_TYPE_INT:
		put(o, &a->v.i, 8);
		return 0;
	case PTW_ARG_TYPE_UINT:
	case PTW_ARG_TYPE_POINTER:
		put(o, &a->v.u, 8);
		return 0;
	case PTW_ARG_TYPE_DOUBLE:
		put(o, &a->v.d, 8);
		return 0;
	default:
		*why = "unknown annotation type";
		return PTW_ERR_INVALID;
	}
}

int ptw_clock_meta_encode(const struct ptw_clock_streams_event *ev, int with_names,
			  uint8_t *buf, uint32_t *len,
			  struct ptw_clock_meta_keys *keys, const char **why)
{
	struct meta_out o = { buf, 0, 0 };
	int has_phase = 0, rc;

	keys->phase = 0;
	keys->ordinal = 0;
	keys->has_ordinal = 0;
	if ((rc = check_arrays(ev, why)))
		return rc;

	const char *cat = with_names ? ev->category : NULL;
	const char *name = with_names ? ev->name : NULL;
	if (put_names(&o, cat, name, (ev->flags & PTW_EV_STATIC_STRINGS) != 0))
		goto too_long;

	put_u8(&o, (uint8_t)ev->n_flow_ids);
	put(&o, ev->flow_ids, 8 * ev->n_flow_ids);
	put_u8(&o, (uint8_t)ev->n_terminating_flow_ids);
	put(&o, ev->terminating_flow_ids, 8 * ev->n_terminating_flow_ids);

	put_u8(&o, (uint8_t)ev->n_args);
	for (uint32_t i = 0; i < ev->n_args; i++) {
		const struct ptw_arg *a = &ev->args[i];
		if (!a->name) {
			*why = "annotation without a name";
			return PTW_ERR_INVALID;
		}
		if ((rc = note_key(a, keys, &has_phase, why)))
			return rc;
		rc = put_arg(&o, a, why);
		if (rc == PTW_ERR_LIMIT)
			goto too_long;
		if (rc)
			return rc;
	}
	if (o.full) {
		*why = "event metadata over PTW_CLOCK_STREAMS_MAX_META bytes";
		return PTW_ERR_LIMIT;
	}
	*len = o.len;
	return 0;
too_long:
	*why = "string over PTW_MAX_STRING_LEN bytes";
	return PTW_ERR_LIMIT;
}

/* Bounded reader over encoder output. */
struct meta_in {
	const uint8_t *p;
	uint32_t len;
	uint32_t pos;
	int bad;
};

static const uint8_t *take(struct meta_in *in, uint32_t n)
{
	if (in->bad || n > in->len - in->pos) {
		in->bad = 1;
		return NULL;
	}
	const uint8_t *r = in->p + in->pos;
	in->pos += n;
	return r;
}

static uint8_t get_u8(struct meta_in *in)
{
	const uint8_t *p = take(in, 1);
	return p ? *p : 0;
}

static void get_8(struct meta_in *in, void *dst)
{
	const uint8_t *p = take(in, 8);
	if (p)
		memcpy(dst, p, 8);
}

static const char *get_ptr(struct meta_in *in)
{
	const char *s = NULL;
	const uint8_t *p = take(in, sizeof(s));
	if (p)
		memcpy(&s, p, sizeof(s));
	return s;
}

static const char *get_str(struct meta_in *in)
{
	uint32_t n = 0;
	const uint8_t *p = take(in, 4);
	if (!p)
		return NULL;
	memcpy(&n, p, 4);
	if (n >= PTW_CLOCK_STREAMS_MAX_META) {
		in->bad = 1;
		return NULL;
	}
	const uint8_t *s = take(in, n + 1);
	if (!s || s[n] != '\0') {
		in->bad = 1;
		return NULL;
	}
	return (const char *)s;
}

/* A tagged string: 0 none, 1 inline, 2 static pointer (sets *is_static). */
static const char *get_tagged(struct meta_in *in, int *is_static)
{
	switch (get_u8(in)) {
	case 0:
		return NULL;
	case 1:
		return get_str(in);
	case 2:
		*is_static = 1;
		return get_ptr(in);
	default:
		in->bad = 1;
		return NULL;
	}
}

int ptw_clock_meta_decode(const uint8_t *buf, uint32_t len,
			  struct ptw_event *out, uint64_t *flows,
			  uint64_t *term, struct ptw_arg *args)
{
	struct meta_in in = { buf, len, 0, 0 };

	int is_static = 0;
	out->category = get_tagged(&in, &is_static);
	out->name = get_tagged(&in, &is_static);
	out->flags = is_static ? PTW_EV_STATIC_STRINGS : 0;

	uint32_t n = get_u8(&in);
	if (n > PTW_MAX_FLOWS)
		return PTW_ERR_FORMAT;
	for (uint32_t i = 0; i < n; i++)
		get_8(&in, &flows[i]);
	out->flow_ids = n ? flows : NULL;
	out->n_flow_ids = n;

	n = get_u8(&in);
	if (n > PTW_MAX_FLOWS)
		return PTW_ERR_FORMAT;
	for (uint32_t i = 0; i < n; i++)
		get_8(&in, &term[i]);
	out->terminating_flow_ids = n ? term : NULL;
	out->n_terminating_flow_ids = n;

	n = get_u8(&in);
	if (n > PTW_MAX_ANNOTATIONS)
		return PTW_ERR_FORMAT;
	for (uint32_t i = 0; i < n; i++) {
		struct ptw_arg *a = &args[i];
		memset(a, 0, sizeof(*a));
		a->name = get_str(&in);
		a->type = (enum ptw_arg_type)get_u8(&in);
		switch (a->type) {
		case PTW_ARG_TYPE_STRING:
			a->v.s = get_str(&in);
			break;
		case PTW_ARG_TYPE_BOOL:
			a->v.b = get_u8(&in);
			break;
		case PTW_ARG_TYPE_INT:
			get_8(&in, &a->v.i);
			break;
		case PTW_ARG_TYPE_UINT:
		case PTW_ARG_TYPE_POINTER:
			get_8(&in, &a->v.u);
			break;
		case PTW_ARG_TYPE_DOUBLE:
			get_8(&in, &a->v.d);
			break;
		default:
			return PTW_ERR_FORMAT;
		}
	}
	out->args = n ? args : NULL;
	out->n_args = n;
	if (in.bad || in.pos != len)
		return PTW_ERR_FORMAT;
	return 0;
}
