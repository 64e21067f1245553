/* cv_sort.c - a bounded window that hands Chrome JSON events on in
 * timestamp order (see cv_sort.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include "cv_sort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ptw_cv_held {
	int64_t ts;              /* INT64_MIN: no timestamp */
	uint64_t seq;            /* arrival order: ties keep file order */
	struct ptw_cv_event *ev; /* one block: event, args, strings */
};

struct ptw_cv_sort {
	ptw_cv_event_fn next;
	void *next_ctx;
	size_t window;
	struct ptw_cv_held *heap; /* min-heap on (ts, seq) */
	size_t n;
	uint64_t seq;
};

struct ptw_cv_sort *ptw_cv_sort_create(size_t window, ptw_cv_event_fn next,
				       void *next_ctx, struct ptw_error *err)
{
	struct ptw_cv_sort *s = calloc(1, sizeof(*s));
	if (s) {
		s->window = window ? window : PTW_CV_SORT_WINDOW;
		s->heap = malloc((s->window + 1) * sizeof(*s->heap));
	}
	if (!s || !s->heap) {
		free(s);
		ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	s->next = next;
	s->next_ctx = next_ctx;
	return s;
}

static size_t str_size(struct ptw_cv_str v)
{
	return v.p ? v.n : 0;
}

/* Copies v's bytes to *at (advancing it) and points v there. */
static void str_copy(struct ptw_cv_str *v, char **at)
{
	if (!v->p)
		return;
	if (v->n)
		memcpy(*at, v->p, v->n);
	v->p = *at;
	*at += v->n;
}

static int arg_has_str(const struct ptw_cv_arg *a)
{
	return a->type == PTW_CV_VAL_STRING || a->type == PTW_CV_VAL_JSON;
}

/* The event with its args and strings in one malloc'd block. */
static struct ptw_cv_event *event_copy(const struct ptw_cv_event *ev)
{
	size_t bytes = str_size(ev->name) + str_size(ev->cat) +
		       str_size(ev->pid_str) + str_size(ev->tid_str) +
		       str_size(ev->id_str) + str_size(ev->bind_id) +
		       (ev->input ? strlen(ev->input) + 1 : 0);
	if (ev->stacks)
		bytes += str_size(ev->stacks->sf) +
			 str_size(ev->stacks->esf) +
			 str_size(ev->stacks->stack) +
			 str_size(ev->stacks->estack);
	for (uint32_t i = 0; i < ev->n_args; i++)
		bytes += str_size(ev->args[i].key) +
			 (arg_has_str(&ev->args[i]) ? str_size(ev->args[i].s) : 0);
	size_t head = sizeof(*ev) + ev->n_args * sizeof(struct ptw_cv_arg) +
		      (ev->stacks ? sizeof(*ev->stacks) : 0);
	struct ptw_cv_event *c = malloc(head + bytes);
	if (!c)
		return NULL;
	*c = *ev;
	struct ptw_cv_arg *args = (struct ptw_cv_arg *)(c + 1);
	char *at = (char *)c + head;
	if (ev->n_args)
		memcpy(args, ev->args, ev->n_args * sizeof(*args));
	c->args = ev->n_args ? args : NULL;
	for (uint32_t i = 0; i < ev->n_args; i++) {
		str_copy(&args[i].key, &at);
		if (arg_has_str(&args[i]))
			str_copy(&args[i].s, &at);
	}
	str_copy(&c->name, &at);
	str_copy(&c->cat, &at);
	str_copy(&c->pid_str, &at);
	str_copy(&c->tid_str, &at);
	str_copy(&c->id_str, &at);
	str_copy(&c->bind_id, &at);
	if (ev->input) {
		size_t k = strlen(ev->input) + 1;
		memcpy(at, ev->input, k);
		c->input = at;
		at += k;
	}
	if (ev->stacks) {
		/* after the args (aligned as they are) */
		struct ptw_cv_stack_refs *k =
			(struct ptw_cv_stack_refs *)(args + ev->n_args);
		*k = *ev->stacks;
		str_copy(&k->sf, &at);
		str_copy(&k->esf, &at);
		str_copy(&k->stack, &at);
		str_copy(&k->estack, &at);
		c->stacks = k;
	}
	return c;
}

static int held_less(const struct ptw_cv_held *a, const struct ptw_cv_held *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

/* Removes the smallest event and hands it on. */
static int pop_one(struct ptw_cv_sort *s, struct ptw_error *err)
{
	struct ptw_cv_held top = s->heap[0];
	struct ptw_cv_held last = s->heap[--s->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->n)
			break;
		if (c + 1 < s->n && held_less(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!held_less(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->n)
		s->heap[i] = last;
	int rc = s->next(s->next_ctx, top.ev, err);
	free(top.ev);
	return rc;
}

int ptw_cv_sort_event(void *ctx, const struct ptw_cv_event *ev,
		      struct ptw_error *err)
{
	struct ptw_cv_sort *s = ctx;
	struct ptw_cv_held h = {
		.ts = (ev->flags & PTW_CV_HAS_TS) ? ev->ts_ns : INT64_MIN,
		.seq = s->seq++,
		.ev = event_copy(ev),
	};
	if (!h.ev)
		return ptw_error_set(err, PTW_ERR_NOMEM, 0,
				     "out of memory (reorder window)");
	size_t i = s->n++;
	while (i > 0 && held_less(&h, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = h;
	return s->n > s->window ? pop_one(s, err) : 0;
}

int ptw_cv_sort_drain(struct ptw_cv_sort *s, struct ptw_error *err)
{
	while (s->n) {
		int rc = pop_one(s, err);
		if (rc)
			return rc;
	}
	return 0;
}

void ptw_cv_sort_destroy(struct ptw_cv_sort *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->heap[i].ev);
	free(s->heap);
	free(s);
}
