/* test_convert_rows.h - rebuilds the rows of the corpus' expected/tables.tsv
 * from a loaded trace (through the reader's trace_processor model) and
 * compares row sets; shared by test_corpus.c and test_convert.c.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TEST_CONVERT_ROWS_H
#define PTW_TEST_CONVERT_ROWS_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/ptw_test.h"

static inline int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- rows ---------------------------------------------------------------- */

struct rows {
	char **v;
	size_t n, cap;
};

static inline void rows_add(struct rows *r, const char *line)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		cr_assert(r->v);
	}
	r->v[r->n++] = strdup(line);
}

static inline void rows_free(struct rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i]);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* A JSON string literal as Python's json.dumps(ensure_ascii=False)
 * writes it, or null. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static inline void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		while (b->len + n + 1 > b->cap)
			b->cap = b->cap ? b->cap * 2 : 256;
		b->p = realloc(b->p, b->cap);
		cr_assert(b->p);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static inline void sb_fmt(struct sbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	sb_put(b, tmp, (size_t)n);
}

static inline void sb_json(struct sbuf *b, const char *s)
{
	if (!s) {
		sb_put(b, "null", 4);
		return;
	}
	sb_put(b, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': sb_put(b, "\\\"", 2); break;
		case '\\': sb_put(b, "\\\\", 2); break;
		case '\n': sb_put(b, "\\n", 2); break;
		case '\r': sb_put(b, "\\r", 2); break;
		case '\t': sb_put(b, "\\t", 2); break;
		case '\b': sb_put(b, "\\b", 2); break;
		case '\f': sb_put(b, "\\f", 2); break;
		default:
			if (*p < 0x20)
				sb_fmt(b, "\\u%04x", *p);
			else
				sb_put(b, (const char *)p, 1);
		}
	}
	sb_put(b, "\"", 1);
}

static inline void rows_from_trace(const struct ptw_trace *t,
			    const struct ptw_tp_model *m, struct rows *r)
{
	struct sbuf b = {0};
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		struct ptw_tp_track_owner o = s->owner;
		b.len = 0;
		if (o.owner == PTW_TP_OWNER_THREAD) {
			if (s->dur != 0) {
				sb_fmt(&b, "thread_slice\t%lld\t%lld\t",
				       (long long)s->ts, (long long)s->dur);
			} else {
				sb_fmt(&b, "thread_instant\t%lld\t",
				       (long long)s->ts);
			}
			sb_json(&b, s->name);
			sb_put(&b, "\t", 1);
			sb_json(&b, s->category);
			sb_fmt(&b, "\t%u\t%lld\t%d", s->depth, (long long)o.tid,
			       (int)o.pid);
		} else if (o.owner == PTW_TP_OWNER_PROCESS) {
			sb_fmt(&b, "process_slice\t%lld\t%lld\t", (long long)s->ts,
			       (long long)s->dur);
			sb_json(&b, s->name);
			sb_fmt(&b, "\t%d", (int)o.pid);
		} else {
			sb_fmt(&b, "global_slice\t%lld\t%lld\t", (long long)s->ts,
			       (long long)s->dur);
			sb_json(&b, s->name);
		}
		rows_add(r, b.p);
	}
	for (size_t i = 0; i < m->n_counters; i++) {
		const struct ptw_tp_counter *c = &m->counters[i];
		const struct ptw_trace_track *tr = ptw_trace_find_track(t, c->track_uuid);
		struct ptw_tp_track_owner o = ptw_tp_model_owner(t, c->track_uuid);
		b.len = 0;
		sb_put(&b, "counter\t", 8);
		sb_json(&b, tr ? tr->name : NULL);
		sb_fmt(&b, "\t%d\t%lld\t%.12g", (int)o.pid, (long long)c->ts,
		       c->value);
		rows_add(r, b.p);
	}
	for (size_t i = 0; i < m->n_threads; i++) {
		const struct ptw_tp_thread *th = &m->threads[i];
		if (!th->name)
			continue;
		b.len = 0;
		sb_fmt(&b, "thread_name\t%lld\t%d\t", (long long)th->tid,
		       (int)th->pid);
		sb_json(&b, th->name);
		rows_add(r, b.p);
	}
	for (size_t i = 0; i < m->n_processes; i++) {
		const struct ptw_tp_process *p = &m->processes[i];
		if (p->pid == 0)
			continue;
		b.len = 0;
		sb_fmt(&b, "process\t%d\t", (int)p->pid);
		sb_json(&b, p->name);
		rows_add(r, b.p);
	}
	for (size_t i = 0; i < m->n_flows; i++) {
		const struct ptw_tp_slice *a = &m->slices[m->flows[i].slice_out];
		const struct ptw_tp_slice *z = &m->slices[m->flows[i].slice_in];
		b.len = 0;
		sb_fmt(&b, "flow\t%lld\t", (long long)a->ts);
		sb_json(&b, a->name);
		sb_fmt(&b, "\t%lld\t", (long long)z->ts);
		sb_json(&b, z->name);
		rows_add(r, b.p);
	}
	free(b.p);
}

static inline void rows_from_tsv(const char *path, struct rows *r)
{
	size_t len;
	char *text = (char *)ptw_test_read_file_or_fail(path, &len);
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || line[0] == '\0')
			continue;
		rows_add(r, line);
	}
	free(text);
}

/* Compares as multisets; prints the differences. Returns 1 if equal. */
static inline int rows_equal(const char *name, struct rows *want, struct rows *got)
{
	qsort(want->v, want->n, sizeof(char *), cmp_str);
	qsort(got->v, got->n, sizeof(char *), cmp_str);
	size_t i = 0, j = 0, shown = 0;
	int same = 1;
	while (i < want->n || j < got->n) {
		int c = i == want->n ? 1 : j == got->n ? -1
						     : strcmp(want->v[i], got->v[j]);
		if (c == 0) {
			i++;
			j++;
			continue;
		}
		same = 0;
		if (shown++ < 12)
			fprintf(stderr, "%s: %s %s\n", name,
				c < 0 ? "missing" : "extra  ",
				c < 0 ? want->v[i] : got->v[j]);
		if (c < 0)
			i++;
		else
			j++;
	}
	return same;
}

#endif /* PTW_TEST_CONVERT_ROWS_H */
