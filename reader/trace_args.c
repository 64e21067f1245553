/* trace_args.c - the args table rows trace_processor makes of debug
 * annotations (see trace_read.h, "args table").
 * SPDX-License-Identifier: Apache-2.0
 *
 * Follows src/trace_processor/util/proto_to_args_parser.cc (v58.2):
 * ParseDebugAnnotationName (names sanitized: '.', '[' and ']' -> '_'),
 * EnterDictionary / AppendProtoType (key + '.' + name), EnterArray
 * (key + "[i]", flat key unchanged) and StepDebugAnnotation (a dict with
 * entries counts as having added an entry, an array only if one of its
 * values did; an array's index is the inserter's per-key index, advanced
 * after each value that added an entry; an error stops the top-level
 * annotation, keeping the rows added before it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"
#include "trace_read.h"

struct ptw_trace_args_index {
	char *key;
	size_t next;
};

/* A growable NUL-terminated key. */
struct kbuf {
	char *p;
	size_t n, cap;
};

static int kb_reserve(struct kbuf *b, size_t more)
{
	/* 'more' bytes and a NUL after the first n */
	char *p = ptw_grow_by(b->p, &b->cap, b->n + 1, more, 64, 1);
	if (!p)
		return -1;
	b->p = p;
	return 0;
}

static int kb_put(struct kbuf *b, const char *s, size_t n)
{
	if (kb_reserve(b, n))
		return -1;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
	return 0;
}

/* '.' and the name with '.', '[' and ']' replaced by '_'
 * (SanitizeDebugAnnotationName, AppendProtoType). */
static int kb_put_name(struct kbuf *b, const char *name)
{
	size_t n = strlen(name);
	if (kb_reserve(b, n + 1))
		return -1;
	b->p[b->n++] = '.';
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		b->p[b->n++] = c == '.' || c == '[' || c == ']' ? '_' : c;
	}
	b->p[b->n] = '\0';
	return 0;
}

static void kb_cut(struct kbuf *b, size_t n)
{
	b->n = n;
	if (b->p)
		b->p[n] = '\0';
}

/* The array index slot of 'key', created at 0. NULL out of memory. */
static size_t *index_of(struct ptw_trace_args_table *t, const char *key)
{
	for (size_t i = 0; i < t->n_idx; i++)
		if (strcmp(t->idx[i].key, key) == 0)
			return &t->idx[i].next;
	if (t->n_idx == t->idx_cap) {
		void *p = ptw_grow(t->idx, &t->idx_cap, t->n_idx + 1, 8,
				   sizeof(*t->idx));
		if (!p)
			return NULL;
		t->idx = p;
	}
	char *k = strdup(key);
	if (!k)
		return NULL;
	t->idx[t->n_idx].key = k;
	t->idx[t->n_idx].next = 0;
	return &t->idx[t->n_idx++].next;
}

/* Adds or updates (same key: new flat key and value, same place) a row. */
static int add_row(struct ptw_trace_args_table *t, const char *flat_key,
		   const char *key, const struct ptw_trace_arg *a)
{
	struct ptw_trace_arg_row *r = NULL;
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].key, key) == 0) {
			r = &t->rows[i];
			break;
		}
	char *fk = strdup(flat_key);
	if (!fk)
		return -1;
	if (r) {
		free(r->flat_key);
	} else {
		if (t->n == t->cap) {
			void *p = ptw_grow(t->rows, &t->cap, t->n + 1, 16,
					   sizeof(*t->rows));
			if (!p) {
				free(fk);
				return -1;
			}
			t->rows = p;
		}
		r = &t->rows[t->n];
		if (!(r->key = strdup(key))) {
			free(fk);
			return -1;
		}
		t->n++;
	}
	r->flat_key = fk;
	r->type = a->type;
	memcpy(&r->v, &a->v, sizeof(r->v)); /* the scalar members */
	return 0;
}

struct walk {
	struct ptw_trace_args_table *t;
	struct kbuf key, flat;
	int stop; /* an error: the rest of the top-level annotation is lost */
};

/* Adds the rows of annotation 'a' whose key is w->key. Sets *added when
 * it added an entry in StepDebugAnnotation's sense. -1 out of memory. */
static int walk_value(struct walk *w, const struct ptw_trace_arg *a,
		      int *added)
{
	size_t kn = w->key.n, fn = w->flat.n;
	switch (a->type) {
	case PTW_TRACE_ARG_NESTED:
		return 0;
	case PTW_TRACE_ARG_BAD:
		w->stop = 1;
		return 0;
	case PTW_TRACE_ARG_DICT:
		for (uint32_t i = 0; i < a->v.nested.n && !w->stop; i++) {
			const struct ptw_trace_arg *e = &a->v.nested.items[i];
			int child = 0;
			if (e->type == PTW_TRACE_ARG_BAD || !e->name) {
				w->stop = 1; /* unresolved entry name */
				break;
			}
			if (kb_put_name(&w->key, e->name) ||
			    kb_put_name(&w->flat, e->name) ||
			    walk_value(w, e, &child))
				return -1;
			kb_cut(&w->key, kn);
			kb_cut(&w->flat, fn);
		}
		*added = a->v.nested.n != 0;
		return 0;
	case PTW_TRACE_ARG_ARRAY: {
		size_t *slot = index_of(w->t, w->key.p);
		if (!slot)
			return -1;
		size_t index = *slot;
		for (uint32_t i = 0; i < a->v.nested.n && !w->stop; i++) {
			char num[24];
			int child = 0;
			int len = snprintf(num, sizeof(num), "[%zu]", index);
			if (kb_put(&w->key, num, (size_t)len) ||
			    walk_value(w, &a->v.nested.items[i], &child))
				return -1;
			kb_cut(&w->key, kn);
			kb_cut(&w->flat, fn);
			if (child) {
				/* the slot may have moved (index_of grows) */
				if (!(slot = index_of(w->t, w->key.p)))
					return -1;
				index = ++*slot;
				*added = 1;
			}
		}
		return 0;
	}
	default:
		*added = 1;
		return add_row(w->t, w->flat.p, w->key.p, a);
	}
}

int ptw_trace_args_add(struct ptw_trace_args_table *t,
		       const struct ptw_trace_arg *args, uint32_t n)
{
	struct walk w = { .t = t };
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++) {
		int added = 0;
		w.stop = 0;
		kb_cut(&w.key, 0);
		kb_cut(&w.flat, 0);
		if (kb_put(&w.key, "debug", 5) || kb_put(&w.flat, "debug", 5) ||
		    kb_put_name(&w.key, args[i].name ? args[i].name : "") ||
		    kb_put_name(&w.flat, args[i].name ? args[i].name : "") ||
		    walk_value(&w, &args[i], &added))
			rc = PTW_ERR_NOMEM;
	}
	free(w.key.p);
	free(w.flat.p);
	return rc;
}

const struct ptw_trace_arg_row *
ptw_trace_args_find(const struct ptw_trace_args_table *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].key, key) == 0)
			return &t->rows[i];
	return NULL;
}

void ptw_trace_args_free(struct ptw_trace_args_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->rows[i].flat_key);
		free(t->rows[i].key);
	}
	for (size_t i = 0; i < t->n_idx; i++)
		free(t->idx[i].key);
	free(t->rows);
	free(t->idx);
	memset(t, 0, sizeof(*t));
}
