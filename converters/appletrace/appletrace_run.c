/* appletrace_run.c - finds the fragments of an AppleTrace run and reads
 * them in numeric order with one shared binary name table.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "appletrace.h"
#include "lib/util/grow.h"

struct ptw_appletrace_run {
	struct ptw_appletrace_names *names;
	ptw_cv_batch_fn batch;
	struct ptw_appletrace_buf buf; /* binary fragments' read buffer */
	enum ptw_appletrace_kind kind;
	char file[256];
	uint64_t fragments;
	uint64_t bytes;
};

struct ptw_at_frag {
	uint64_t num;
	int is_bin;
	char *name;
};

const char *ptw_appletrace_kind_name(enum ptw_appletrace_kind k)
{
	switch (k) {
	case PTW_APPLETRACE_OK: return "ok";
	case PTW_APPLETRACE_INVALID_JSON_LINE: return "invalid_json_line";
	case PTW_APPLETRACE_UNDEFINED_NAME_ID: return "undefined_name_id";
	case PTW_APPLETRACE_UNKNOWN_TAG: return "unknown_tag";
	case PTW_APPLETRACE_BAD_MAGIC: return "bad_magic";
	case PTW_APPLETRACE_NO_FRAGMENT: return "no_fragment";
	default: return "other";
	}
}

int ptw_appletrace_fragment_name(const char *name, uint64_t *num, int *is_bin)
{
	if (!name || strncmp(name, "trace", 5) != 0)
		return 0;
	const char *p = name + 5;
	uint64_t n = 0;
	if (*p == '_') {
		p++;
		if (*p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9') {
			if (n > (UINT64_MAX - 9) / 10)
				return 0;
			n = n * 10 + (uint64_t)(*p - '0');
			p++;
		}
	}
	int bin;
	if (strcmp(p, ".appletrace") == 0)
		bin = 0;
	else if (strcmp(p, ".appletracebin") == 0)
		bin = 1;
	else
		return 0;
	if (num)
		*num = n;
	if (is_bin)
		*is_bin = bin;
	return 1;
}

struct ptw_appletrace_run *ptw_appletrace_run_create(struct ptw_error *err)
{
	struct ptw_appletrace_run *r = calloc(1, sizeof(*r));
	if (!r) {
		ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	return r;
}

void ptw_appletrace_run_destroy(struct ptw_appletrace_run *r)
{
	if (!r)
		return;
	ptw_appletrace_names_destroy(r->names);
	ptw_appletrace_buf_free(&r->buf);
	free(r);
}

void ptw_appletrace_run_set_batch(struct ptw_appletrace_run *r,
				  ptw_cv_batch_fn batch)
{
	if (r)
		r->batch = batch;
}

enum ptw_appletrace_kind ptw_appletrace_run_kind(const struct ptw_appletrace_run *r)
{
	return r ? r->kind : PTW_APPLETRACE_OTHER;
}

const char *ptw_appletrace_run_file(const struct ptw_appletrace_run *r)
{
	return r ? r->file : "";
}

uint64_t ptw_appletrace_run_fragments(const struct ptw_appletrace_run *r)
{
	return r ? r->fragments : 0;
}

uint64_t ptw_appletrace_run_bytes(const struct ptw_appletrace_run *r)
{
	return r ? r->bytes : 0;
}

static int ptw_at_frag_cmp(const void *a, const void *b)
{
	const struct ptw_at_frag *x = a, *y = b;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int ptw_at_reset_names(struct ptw_appletrace_run *r,
			      struct ptw_error *err)
{
	ptw_appletrace_names_destroy(r->names);
	r->names = ptw_appletrace_names_create();
	if (!r->names)
		return ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
	return 0;
}

/* Reads one fragment at 'path', named 'label' in messages. */
static int ptw_at_read_one(struct ptw_appletrace_run *r, const char *path,
			   const char *label, int is_bin, ptw_cv_event_fn fn,
			   void *ctx, const struct ptw_appletrace_warn *warn,
			   struct ptw_error *err)
{
	snprintf(r->file, sizeof(r->file), "%s", label);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r->kind = PTW_APPLETRACE_OTHER;
		int e = errno;
		ptw_error_set(err, PTW_ERR_IO, e, "%s: cannot open: %s", path,
			      strerror(e));
		if (err)
			err->input = r->file;
		return PTW_ERR_IO;
	}
	struct stat st;
	if (fstat(fd, &st) == 0)
		r->bytes += (uint64_t)st.st_size;
	int rc;
	if (is_bin)
		rc = ptw_appletrace_bin_read_fd_buf(fd, r->file, r->names, fn,
						    r->batch, ctx, &r->buf,
						    &r->kind, err);
	else
		rc = ptw_appletrace_text_read_fd(fd, r->file, fn, ctx, warn,
						 &r->kind, err);
	close(fd);
	r->fragments++;
	return rc;
}

/* The fragments in open directory d (named 'dir'), sorted by number, in
 * *pv (*pn of them; to free with their names, also after a failure). */
static int ptw_at_list_fragments(DIR *d, const char *dir,
				 struct ptw_at_frag **pv, size_t *pn,
				 struct ptw_error *err)
{
	struct ptw_at_frag *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d)) != NULL) {
		uint64_t num;
		int is_bin;
		if (!ptw_appletrace_fragment_name(de->d_name, &num, &is_bin))
			continue;
		if (n == cap) {
			void *p = ptw_grow(v, &cap, n + 1, 16, sizeof(*v));
			if (!p) {
				rc = PTW_ERR_NOMEM;
				break;
			}
			v = p;
		}
		v[n].num = num;
		v[n].is_bin = is_bin;
		v[n].name = strdup(de->d_name);
		if (!v[n].name) {
			rc = PTW_ERR_NOMEM;
			break;
		}
		n++;
	}
	if (rc)
		ptw_error_set(err, rc, 0, "%s: out of memory", dir);
	if (!rc && n > 1)
		qsort(v, n, sizeof(*v), ptw_at_frag_cmp);
	*pv = v;
	*pn = n;
	return rc;
}

/* Reads the n fragments v of directory 'dir' in order (*read_frags: how
 * many were regular files). Under warn->error_fn a failing fragment is
 * reported and the others are read; the first failure is then returned
 * at the end. */
static int ptw_at_read_fragments(struct ptw_appletrace_run *r, const char *dir,
				 const struct ptw_at_frag *v, size_t n,
				 ptw_cv_event_fn fn, void *ctx,
				 const struct ptw_appletrace_warn *warn,
				 size_t *read_frags, struct ptw_error *err)
{
	size_t plen = strlen(dir);
	int rc = 0, first_rc = 0;
	enum ptw_appletrace_kind first_kind = PTW_APPLETRACE_OK;
	struct ptw_error first_err = {0};
	char first_file[256] = "";
	for (size_t i = 0; i < n && !rc; i++) {
		size_t need = plen + strlen(v[i].name) + 2;
		char *path = malloc(need);
		if (!path) {
			rc = ptw_error_set(err, PTW_ERR_NOMEM, 0,
					   "out of memory");
			break;
		}
		snprintf(path, need, "%s/%s", dir, v[i].name);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			struct ptw_error fe = {0};
			rc = ptw_at_read_one(r, path, v[i].name, v[i].is_bin,
					     fn, ctx, warn, &fe);
			++*read_frags;
			if (rc && warn && warn->error_fn &&
			    rc != PTW_ERR_NOMEM && !first_rc &&
			    r->kind != PTW_APPLETRACE_OK) {
				/* keep going: report, remember, go on */
				first_rc = rc;
				first_kind = r->kind;
				first_err = fe;
				snprintf(first_file, sizeof(first_file), "%s",
					 r->file);
			}
			if (rc && warn && warn->error_fn && rc != PTW_ERR_NOMEM) {
				warn->error_fn(warn->ctx, &fe);
				rc = 0;
			} else if (rc && err) {
				*err = fe;
			}
		}
		free(path);
	}
	if (!rc && first_rc) {
		rc = first_rc;
		r->kind = first_kind;
		snprintf(r->file, sizeof(r->file), "%s", first_file);
		if (err) {
			*err = first_err;
			err->input = r->file;
		}
	}
	return rc;
}

int ptw_appletrace_run_read_dir(struct ptw_appletrace_run *r, const char *dir,
				ptw_cv_event_fn fn, void *ctx,
				const struct ptw_appletrace_warn *warn,
				struct ptw_error *err)
{
	if (!r || !dir || !fn)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "appletrace run: bad arguments");
	r->kind = PTW_APPLETRACE_OTHER;
	r->file[0] = '\0';
	r->fragments = r->bytes = 0;
	int rc = ptw_at_reset_names(r, err);
	if (rc)
		return rc;
	DIR *d = opendir(dir);
	if (!d) {
		int e = errno;
		return ptw_error_set(err, PTW_ERR_IO, e, "%s: cannot open "
				     "directory: %s", dir, strerror(e));
	}
	struct ptw_at_frag *v;
	size_t n, read_frags = 0;
	rc = ptw_at_list_fragments(d, dir, &v, &n, err);
	closedir(d);
	if (!rc)
		rc = ptw_at_read_fragments(r, dir, v, n, fn, ctx, warn,
					   &read_frags, err);
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	if (!rc && read_frags == 0) {
		r->kind = PTW_APPLETRACE_NO_FRAGMENT;
		return ptw_error_set(err, PTW_ERR_FORMAT, 0,
				     "%s: no AppleTrace fragment (expected "
				     "trace.appletrace, trace_N.appletrace, "
				     "trace.appletracebin or "
				     "trace_N.appletracebin)", dir);
	}
	if (!rc) {
		r->kind = PTW_APPLETRACE_OK;
		r->file[0] = '\0';
	} else if (err && err->input) {
		err->input = r->file; /* not the fragment list, now freed */
	}
	return rc;
}

int ptw_appletrace_has_bin_magic(const char *path)
{
	char m[sizeof(PTW_APPLETRACE_MAGIC) - 1];
	struct stat st;
	/* only a regular file: reading a pipe would eat its first bytes */
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t k = read(fd, m, sizeof(m));
	close(fd);
	return k == (ssize_t)sizeof(m) &&
	       memcmp(m, PTW_APPLETRACE_MAGIC, sizeof(m)) == 0;
}

int ptw_appletrace_run_read_file(struct ptw_appletrace_run *r,
				 const char *path, ptw_cv_event_fn fn,
				 void *ctx,
				 const struct ptw_appletrace_warn *warn,
				 struct ptw_error *err)
{
	if (!r || !path || !fn)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "appletrace run: bad arguments");
	r->kind = PTW_APPLETRACE_OTHER;
	r->fragments = r->bytes = 0;
	int rc = ptw_at_reset_names(r, err);
	if (rc)
		return rc;
	size_t n = strlen(path);
	static const char ext[] = ".appletracebin", text_ext[] = ".appletrace";
	/* The extension gives the kind; a file with neither extension is
	 * binary if it starts with the magic. */
	int is_bin = n >= sizeof(ext) - 1 &&
		     strcmp(path + n - (sizeof(ext) - 1), ext) == 0;
	int is_text = n >= sizeof(text_ext) - 1 &&
		      strcmp(path + n - (sizeof(text_ext) - 1), text_ext) == 0;
	if (!is_bin && !is_text)
		is_bin = ptw_appletrace_has_bin_magic(path);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	rc = ptw_at_read_one(r, path, base, is_bin, fn, ctx, warn, err);
	if (!rc) {
		r->kind = PTW_APPLETRACE_OK;
		r->file[0] = '\0';
	}
	return rc;
}
