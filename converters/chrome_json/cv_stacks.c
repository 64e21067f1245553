/* cv_stacks.c - the frames of a Chrome JSON trace's callstacks (see
 * cv_stacks.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "cv_stacks.h"
#include "json_internal.h"
#include "lib/util/grow.h"
#include "lib/util/hashmap.h"

struct ptw_cv_frame {
	uint32_t name;   /* offset in chars */
	uint32_t key;    /* offset of its key: id, or inline (caller, name) */
	uint32_t key_n;
	uint32_t parent; /* 1-based; 0: none */
	uint32_t pkey;   /* stackFrames: offset of the parent's id ... */
	uint32_t pkey_n; /* ... and its length; UINT32_MAX: none */
	uint32_t depth;  /* 0 until resolved; PTW_CV_STACK_CYCLE */
};

struct ptw_cv_stacks {
	struct ptw_cv_frame *f;
	size_t n, cap;
	char *chars;
	size_t chars_n, chars_cap;
	uint32_t *slot; /* open addressing: frame (1-based), 0 empty */
	size_t slots;   /* power of two */
	int loaded;
	uint32_t gen;    /* input number: stackFrames ids are per input */
	uint64_t bad_parents;
};

struct ptw_cv_stacks *ptw_cv_stacks_create(void)
{
	return calloc(1, sizeof(struct ptw_cv_stacks));
}

void ptw_cv_stacks_destroy(struct ptw_cv_stacks *s)
{
	if (!s)
		return;
	free(s->f);
	free(s->chars);
	free(s->slot);
	free(s);
}

/* Appends n bytes and a NUL; returns the offset, or UINT32_MAX. */
static uint32_t put(struct ptw_cv_stacks *s, const void *p, size_t n)
{
	if (s->chars_n + n + 1 > UINT32_MAX - 1)
		return UINT32_MAX;
	char *c = ptw_grow_by(s->chars, &s->chars_cap, s->chars_n, n + 1, 4096,
			      1);
	if (!c)
		return UINT32_MAX;
	s->chars = c;
	uint32_t off = (uint32_t)s->chars_n;
	if (n)
		memcpy(c + off, p, n);
	c[off + n] = 0;
	s->chars_n += n + 1;
	return off;
}

static uint32_t *lookup(const struct ptw_cv_stacks *s, const char *k, size_t n)
{
	if (!s->slots)
		return NULL;
	size_t m = s->slots - 1, i = (size_t)ptw_fnv1a(PTW_FNV_INIT, k, n) & m;
	for (;; i = (i + 1) & m) {
		uint32_t f = s->slot[i];
		if (!f)
			return &s->slot[i];
		const struct ptw_cv_frame *x = &s->f[f - 1];
		if (x->key_n == n && memcmp(s->chars + x->key, k, n) == 0)
			return &s->slot[i];
	}
}

static int grow_slots(struct ptw_cv_stacks *s)
{
	if ((s->n + 1) * 2 <= s->slots)
		return 0;
	size_t ns = s->slots ? s->slots * 2 : 256;
	uint32_t *old = s->slot;
	size_t olds = s->slots;
	s->slot = calloc(ns, sizeof(*s->slot));
	if (!s->slot) {
		s->slot = old;
		return PTW_ERR_NOMEM;
	}
	s->slots = ns;
	for (size_t i = 0; i < olds; i++)
		if (old[i]) {
			const struct ptw_cv_frame *x = &s->f[old[i] - 1];
			*lookup(s, s->chars + x->key, x->key_n) = old[i];
		}
	free(old);
	return 0;
}

/* The frame of key k, created with 'name' if new; an existing one
 * takes 'name' only if 'rename' (a stackFrames id given again). */
static int frame_of(struct ptw_cv_stacks *s, const char *k, size_t kn,
		    struct ptw_cv_str name, int rename, uint32_t *out)
{
	if (grow_slots(s))
		return PTW_ERR_NOMEM;
	uint32_t *sl = lookup(s, k, kn);
	uint32_t f = *sl;
	if (!f) {
		if (s->n >= UINT32_MAX - 1)
			return PTW_ERR_NOMEM;
		void *p = ptw_grow(s->f, &s->cap, s->n + 1, 64, sizeof(*s->f));
		if (!p)
			return PTW_ERR_NOMEM;
		s->f = p;
		uint32_t key = put(s, k, kn);
		if (key == UINT32_MAX)
			return PTW_ERR_NOMEM;
		f = (uint32_t)++s->n;
		memset(&s->f[f - 1], 0, sizeof(s->f[0]));
		s->f[f - 1].key = key;
		s->f[f - 1].key_n = (uint32_t)kn;
		*sl = f;
	} else if (!rename) {
		*out = f;
		return 0;
	}
	uint32_t nm = put(s, name.p ? name.p : "", name.p ? name.n : 0);
	if (nm == UINT32_MAX)
		return PTW_ERR_NOMEM;
	s->f[f - 1].name = nm;
	*out = f;
	return 0;
}

int ptw_cv_stacks_add(struct ptw_cv_stacks *s, struct ptw_cv_str id,
		      struct ptw_cv_str name, struct ptw_cv_str parent)
{
	uint32_t f;
	/* stackFrames ids: keys starting with 's' (inline ones with 'i') */
	char small[256], *k = id.n < sizeof(small) - 5 ? small : malloc(id.n + 5);
	if (!k)
		return PTW_ERR_NOMEM;
	k[0] = 's';
	memcpy(k + 1, &s->gen, 4);
	memcpy(k + 5, id.p, id.n);
	int rc = frame_of(s, k, id.n + 5, name, 1, &f);
	if (k != small)
		free(k);
	if (rc)
		return rc;
	struct ptw_cv_frame *x = &s->f[f - 1];
	x->pkey_n = UINT32_MAX;
	if (parent.p) {
		uint32_t pk = put(s, parent.p, parent.n);
		if (pk == UINT32_MAX)
			return PTW_ERR_NOMEM;
		x = &s->f[f - 1];
		x->pkey = pk;
		x->pkey_n = (uint32_t)parent.n;
	}
	return 0;
}

uint32_t ptw_cv_stacks_find(const struct ptw_cv_stacks *s,
			    struct ptw_cv_str id)
{
	if (!s->slots)
		return 0;
	char small[256], *k = id.n < sizeof(small) - 5 ? small : malloc(id.n + 5);
	if (!k)
		return 0; /* out of memory: as unknown */
	k[0] = 's';
	memcpy(k + 1, &s->gen, 4);
	memcpy(k + 5, id.p, id.n);
	uint32_t f = *lookup(s, k, id.n + 5);
	if (k != small)
		free(k);
	return f;
}

int ptw_cv_stacks_resolve(struct ptw_cv_stacks *s)
{
	/* parents by id */
	for (size_t i = 0; i < s->n; i++) {
		struct ptw_cv_frame *x = &s->f[i];
		if (x->depth || x->pkey_n == UINT32_MAX || x->parent)
			continue;
		struct ptw_cv_str id = {s->chars + x->pkey, x->pkey_n};
		x->parent = ptw_cv_stacks_find(s, id);
		if (!x->parent)
			s->bad_parents++;
	}
	/* depths, walking up to a known depth; a walk that meets a frame
	 * of its own walk (depth UINT32_MAX - 1 while walking) is a loop */
	for (size_t i = 0; i < s->n; i++) {
		uint32_t f = (uint32_t)i + 1, d = 0;
		while (f && !s->f[f - 1].depth) {
			s->f[f - 1].depth = UINT32_MAX - 1;
			f = s->f[f - 1].parent;
		}
		if (f)
			d = s->f[f - 1].depth; /* known, or this walk's: loop */
		if (d == UINT32_MAX - 1 || d == PTW_CV_STACK_CYCLE) {
			/* the whole walk (and its loop) is a loop's */
			for (uint32_t g = (uint32_t)i + 1;
			     g && s->f[g - 1].depth == UINT32_MAX - 1;
			     g = s->f[g - 1].parent)
				s->f[g - 1].depth = PTW_CV_STACK_CYCLE;
			continue;
		}
		/* the frames of this walk, from frame i up to the stop */
		uint32_t n = 0;
		for (uint32_t g = (uint32_t)i + 1; g != f; g = s->f[g - 1].parent)
			n++;
		for (uint32_t g = (uint32_t)i + 1; g != f;
		     g = s->f[g - 1].parent) {
			s->f[g - 1].depth = d + n >= UINT32_MAX - 1
						    ? UINT32_MAX - 2
						    : d + n;
			n--;
		}
	}
	s->loaded = 1;
	return 0;
}

void ptw_cv_stacks_next_input(struct ptw_cv_stacks *s)
{
	s->gen++;
	s->loaded = 0;
}

int ptw_cv_stacks_loaded(const struct ptw_cv_stacks *s)
{
	return s && s->loaded;
}

int ptw_cv_stacks_push(struct ptw_cv_stacks *s, uint32_t caller,
		       const char *name, size_t n, uint32_t *frame)
{
	/* key: 'i', the caller's number, the name */
	size_t kn = 1 + 4 + n;
	char small[256], *k = kn <= sizeof(small) ? small : malloc(kn);
	if (!k)
		return PTW_ERR_NOMEM;
	k[0] = 'i';
	memcpy(k + 1, &caller, 4);
	memcpy(k + 5, name, n);
	uint32_t f;
	int rc = frame_of(s, k, kn, (struct ptw_cv_str){name, n}, 0, &f);
	if (k != small)
		free(k);
	if (rc)
		return rc;
	struct ptw_cv_frame *x = &s->f[f - 1];
	if (!x->depth) { /* new */
		x->parent = caller;
		x->pkey_n = UINT32_MAX;
		x->depth = caller ? s->f[caller - 1].depth + 1 : 1;
		if (caller && s->f[caller - 1].depth >= UINT32_MAX - 2)
			x->depth = UINT32_MAX - 2; /* (- 1 marks walks) */
	}
	*frame = f;
	return 0;
}

int ptw_cv_stacks_inline(struct ptw_cv_stacks *s,
			 struct ptw_cv_json_parser *jp, struct ptw_cv_str text,
			 uint32_t *frame)
{
	struct ptw_cv_json_walk w;
	struct ptw_cv_arg a;
	uint32_t at = 0;
	int rc = ptw_cv_json_walk_start(jp, &w, text.p, text.n);
	while (!rc && (rc = ptw_cv_json_walk_next(&w, &a)) == 1) {
		if (a.type != PTW_CV_VAL_STRING) {
			rc = PTW_ERR_FORMAT;
			break;
		}
		uint32_t f;
		if ((rc = ptw_cv_stacks_push(s, at, a.s.p, a.s.n, &f)))
			return rc;
		at = f;
	}
	if (rc < 0)
		return rc == PTW_ERR_NOMEM ? rc : PTW_ERR_FORMAT;
	*frame = at;
	return 0;
}

const char *ptw_cv_stacks_name(const struct ptw_cv_stacks *s, uint32_t f)
{
	return s->chars + s->f[f - 1].name;
}

uint32_t ptw_cv_stacks_parent(const struct ptw_cv_stacks *s, uint32_t f)
{
	return s->f[f - 1].parent;
}

uint32_t ptw_cv_stacks_depth(const struct ptw_cv_stacks *s, uint32_t f)
{
	return s->f[f - 1].depth;
}

uint32_t ptw_cv_stacks_count(const struct ptw_cv_stacks *s)
{
	return s ? (uint32_t)s->n : 0;
}

uint64_t ptw_cv_stacks_bad_parents(const struct ptw_cv_stacks *s)
{
	return s ? s->bad_parents : 0;
}
