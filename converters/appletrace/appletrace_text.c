/* appletrace_text.c - reads AppleTrace text fragments (one JSON event per
 * line) with the damage rules of corpus README section 3.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A line scanner is fed chunks of the file. Complete lines are parsed in
 * place when they lie inside one chunk, else gathered in a line buffer.
 * NUL bytes get special care so that megabytes of NUL padding cost
 * nothing: a NUL where a line's first non-blank byte should be ends the
 * fragment at once (rule 3, and rule 1's NUL run before EOF leaves nothing
 * more to read); a NUL inside a line only needs to be remembered, because
 * such a line is invalid JSON unless the NULs are the run that ends the
 * file (the crash-cut final line), which is then stripped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "appletrace.h"
#include "converters/chrome_json/chrome_json.h"
#include "lib/util/grow.h"

#define PTW_AT_TEXT_CHUNK (1u << 20)

struct ptw_at_text {
	const char *name;
	ptw_cv_event_fn fn;
	void *ctx;
	const struct ptw_appletrace_warn *warn;
	enum ptw_appletrace_kind kind;
	struct ptw_cv_json_parser *jp;
	/* the line being gathered */
	char *buf;
	size_t len, cap;
	uint64_t line;       /* 1-based number of the current line */
	uint64_t line_off;   /* file offset of the current line */
	uint64_t off;        /* file offset of the next byte fed */
	int nul_seen;        /* a NUL ended the line's content */
	int junk_after_nul;  /* ... and a non-NUL byte followed it */
	int stop;            /* rule 3: the fragment has ended */
};

static int ptw_at_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Handles one line: content p[0..n) (before any NUL), 'nul' if NULs
 * followed the content, 'junk' if non-NUL bytes followed those NULs,
 * 'terminated' if an LF ended it. */
static int ptw_at_text_line(struct ptw_at_text *t, const char *p, size_t n,
			    int nul, int junk, int terminated,
			    struct ptw_error *err)
{
	while (n && ptw_at_is_blank(*p)) {
		p++;
		n--;
	}
	if (!n) {
		/* Empty (rule 2), unless its first byte is a NUL: that ends
		 * the fragment (rule 3); the unterminated final line loses
		 * its NUL run (rule 1) and is empty either way. */
		if (nul && (terminated || junk))
			t->stop = 1;
		return 0;
	}
	if (*p != '{') {
		t->stop = 1; /* rule 3 */
		return 0;
	}
	/* NULs inside a line make it invalid, unless they are the run that
	 * ends the file (the caller already cut them off). */
	int valid = !(nul && (terminated || junk));
	while (n && ptw_at_is_blank(p[n - 1]))
		n--;
	struct ptw_cv_event ev;
	struct ptw_error perr = {0};
	int rc = PTW_ERR_FORMAT;
	const char *why = "NUL bytes inside the line";
	if (valid) {
		size_t m = n;
		if (m && p[m - 1] == ',')
			m--; /* exactly one trailing comma (rule 4) */
		rc = ptw_cv_json_parse_object(t->jp, p, m, &ev, &perr);
		why = perr.msg;
	}
	if (rc == 0) {
		ev.input = t->name;
		ev.line = t->line;
		ev.offset = t->line_off;
		return t->fn(t->ctx, &ev, err);
	}
	if (rc != PTW_ERR_FORMAT && rc != PTW_ERR_LIMIT) {
		if (err)
			*err = perr;
		t->kind = PTW_APPLETRACE_OTHER;
		return rc;
	}
	if (!terminated) {
		/* Rule 4: the crash-cut final line of a fragment is dropped
		 * with a warning. */
		if (t->warn && t->warn->fn) {
			char msg[PTW_ERROR_MSG_MAX + 128];
			snprintf(msg, sizeof(msg),
				 "%s:%llu: dropped unterminated last line cut "
				 "by a crash (dropped_unterminated_line): %s",
				 t->name, (unsigned long long)t->line, why);
			t->warn->fn(t->warn->ctx, t->name, t->line, msg);
		}
		t->stop = 1;
		return 0;
	}
	t->kind = PTW_APPLETRACE_INVALID_JSON_LINE;
	ptw_error_set(err, PTW_ERR_FORMAT, 0,
		      "%s:%llu: invalid JSON line (invalid_json_line): line "
		      "starts with '{' but is not one valid JSON object: %s",
		      t->name, (unsigned long long)t->line, why);
	if (err) {
		err->input = t->name;
		err->line = (uint32_t)(t->line > UINT32_MAX ? UINT32_MAX : t->line);
		err->offset = t->line_off;
	}
	return PTW_ERR_FORMAT;
}

/* 1 if the gathered content so far already decides that the fragment
 * ends here (first non-blank byte is not '{', or is a NUL). */
static int ptw_at_text_ends_early(const struct ptw_at_text *t)
{
	for (size_t i = 0; i < t->len; i++)
		if (!ptw_at_is_blank(t->buf[i]))
			return t->buf[i] != '{';
	return t->nul_seen;
}

/* Appends s[0..n) (no LF inside) to the current line. */
static int ptw_at_text_gather(struct ptw_at_text *t, const char *s, size_t n,
			      struct ptw_error *err)
{
	if (t->nul_seen) {
		for (size_t i = 0; i < n && !t->junk_after_nul; i++)
			if (s[i] != '\0')
				t->junk_after_nul = 1;
		return 0;
	}
	const char *z = memchr(s, '\0', n);
	size_t take = z ? (size_t)(z - s) : n;
	if (t->len + take > PTW_APPLETRACE_MAX_LINE) {
		t->kind = PTW_APPLETRACE_OTHER;
		return ptw_error_set(err, PTW_ERR_LIMIT, 0,
				     "%s:%llu: line longer than %u bytes",
				     t->name, (unsigned long long)t->line,
				     PTW_APPLETRACE_MAX_LINE);
	}
	if (t->len + take > t->cap) {
		/* t->len + take <= PTW_APPLETRACE_MAX_LINE: no overflow */
		char *nb = ptw_grow(t->buf, &t->cap, t->len + take, 4096, 1);
		if (!nb) {
			t->kind = PTW_APPLETRACE_OTHER;
			return ptw_error_set(err, PTW_ERR_NOMEM, 0,
					     "%s: out of memory", t->name);
		}
		t->buf = nb;
	}
	if (take) {
		memcpy(t->buf + t->len, s, take);
		t->len += take;
	}
	if (z) {
		t->nul_seen = 1;
		for (size_t i = take; i < n && !t->junk_after_nul; i++)
			if (s[i] != '\0')
				t->junk_after_nul = 1;
	}
	if (ptw_at_text_ends_early(t))
		t->stop = 1;
	return 0;
}

static void ptw_at_text_next_line(struct ptw_at_text *t, uint64_t next_off)
{
	t->len = 0;
	t->nul_seen = 0;
	t->junk_after_nul = 0;
	t->line++;
	t->line_off = next_off;
}

/* Feeds a chunk of the file. */
static int ptw_at_text_feed(struct ptw_at_text *t, const char *p, size_t n,
			    struct ptw_error *err)
{
	const char *end = p + n;
	while (p < end && !t->stop) {
		const char *lf = memchr(p, '\n', (size_t)(end - p));
		size_t seg = lf ? (size_t)(lf - p) : (size_t)(end - p);
		int rc;
		if (lf && t->len == 0 && !t->nul_seen) {
			/* The whole line is in the chunk: parse in place. */
			const char *z = memchr(p, '\0', seg);
			size_t take = z ? (size_t)(z - p) : seg;
			int junk = 0;
			if (z)
				for (size_t i = take; i < seg && !junk; i++)
					junk = p[i] != '\0';
			rc = ptw_at_text_line(t, p, take, z != NULL, junk, 1,
					      err);
		} else {
			rc = ptw_at_text_gather(t, p, seg, err);
			if (rc == 0 && lf && !t->stop)
				rc = ptw_at_text_line(t, t->buf, t->len,
						      t->nul_seen,
						      t->junk_after_nul, 1, err);
		}
		if (rc)
			return rc;
		t->off += seg;
		p += seg;
		if (lf) {
			t->off++;
			p++;
			ptw_at_text_next_line(t, t->off);
		}
	}
	return 0;
}

/* End of file: the bytes after the last LF are the unterminated line. */
static int ptw_at_text_finish(struct ptw_at_text *t, struct ptw_error *err)
{
	if (t->stop)
		return 0;
	if (t->len == 0 && !t->nul_seen)
		return 0;
	return ptw_at_text_line(t, t->buf, t->len, t->nul_seen,
				t->junk_after_nul, 0, err);
}

static int ptw_at_text_init(struct ptw_at_text *t, const char *name,
			    ptw_cv_event_fn fn, void *ctx,
			    const struct ptw_appletrace_warn *warn,
			    struct ptw_error *err)
{
	memset(t, 0, sizeof(*t));
	t->name = name ? name : "<memory>";
	t->fn = fn;
	t->ctx = ctx;
	t->warn = warn;
	t->line = 1;
	t->jp = ptw_cv_json_parser_create(err);
	return t->jp ? 0 : PTW_ERR_NOMEM;
}

static void ptw_at_text_free(struct ptw_at_text *t)
{
	ptw_cv_json_parser_destroy(t->jp);
	free(t->buf);
}

int ptw_appletrace_text_read_mem(const void *data, size_t n, const char *name,
				 ptw_cv_event_fn fn, void *ctx,
				 const struct ptw_appletrace_warn *warn,
				 enum ptw_appletrace_kind *kind,
				 struct ptw_error *err)
{
	if (kind)
		*kind = PTW_APPLETRACE_OTHER;
	if ((!data && n) || !fn)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "appletrace text: bad arguments");
	struct ptw_at_text t;
	int rc = ptw_at_text_init(&t, name, fn, ctx, warn, err);
	if (rc)
		return rc;
	rc = ptw_at_text_feed(&t, data, n, err);
	if (!rc)
		rc = ptw_at_text_finish(&t, err);
	if (kind)
		*kind = rc ? (t.kind ? t.kind : PTW_APPLETRACE_OTHER)
			   : PTW_APPLETRACE_OK;
	ptw_at_text_free(&t);
	return rc;
}

int ptw_appletrace_text_read_fd(int fd, const char *name,
				ptw_cv_event_fn fn, void *ctx,
				const struct ptw_appletrace_warn *warn,
				enum ptw_appletrace_kind *kind,
				struct ptw_error *err)
{
	if (kind)
		*kind = PTW_APPLETRACE_OTHER;
	if (fd < 0 || !fn)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "appletrace text: bad arguments");
	struct ptw_at_text t;
	int rc = ptw_at_text_init(&t, name, fn, ctx, warn, err);
	if (rc)
		return rc;
	char *chunk = malloc(PTW_AT_TEXT_CHUNK);
	if (!chunk) {
		ptw_at_text_free(&t);
		return ptw_error_set(err, PTW_ERR_NOMEM, 0, "%s: out of memory",
				     t.name);
	}
	while (!rc && !t.stop) {
		ssize_t r = read(fd, chunk, PTW_AT_TEXT_CHUNK);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			t.kind = PTW_APPLETRACE_OTHER;
			rc = ptw_error_set(err, PTW_ERR_IO, errno,
					   "%s: read failed: %s", t.name,
					   strerror(errno));
			break;
		}
		if (r == 0) {
			rc = ptw_at_text_finish(&t, err);
			break;
		}
		rc = ptw_at_text_feed(&t, chunk, (size_t)r, err);
	}
	if (kind)
		*kind = rc ? (t.kind ? t.kind : PTW_APPLETRACE_OTHER)
			   : PTW_APPLETRACE_OK;
	free(chunk);
	ptw_at_text_free(&t);
	return rc;
}
