/* test_corpus.c - every case of ../shared/corpus: convert with the
 * library, decode with the reader's trace_processor model, rebuild the
 * rows of expected/tables.tsv and compare them as multisets; error cases
 * must be rejected (kind, fragment, line/offset) and ptw-convert must
 * leave no output behind; warnings must match case.json.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The corpus is found by ptw_test_corpus_dir_or_skip() (tests/support):
 * $PTW_SHARED_DIR/corpus, else <repo>/../shared/corpus; without it the
 * tests are skipped. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "converters/appletrace/appletrace.h"
#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "support/ptw_test.h"
#include "test_convert_rows.h"

/* Paths are built in PATH_MAX buffers; truncation would only make a
 * lookup fail, which the tests report. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* ---- locating the corpus ---------------------------------------------- */


/* Case directory names, sorted; returns the count. */
static size_t list_cases(const char *dir, char ***out)
{
	DIR *d = opendir(dir);
	cr_assert(d, "cannot open corpus directory %s", dir);
	char **v = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/%s/case.json", dir, de->d_name);
		struct stat st;
		if (stat(p, &st) != 0)
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		cr_assert(v);
		v[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

/* ---- converting a case -------------------------------------------------- */

struct warns {
	char file[64][256];
	uint64_t line[64];
	size_t n;
};

static void on_warn(void *ctx, const char *file, uint64_t line,
		    const char *msg)
{
	(void)msg;
	struct warns *w = ctx;
	if (w->n < 64) {
		snprintf(w->file[w->n], sizeof(w->file[0]), "%s", file);
		w->line[w->n++] = line;
	}
}

struct result {
	int rc;
	struct ptw_error err;
	enum ptw_appletrace_kind kind;
	char file[256];
	struct warns warns;
};

static void convert_case(const char *dir, const char *kind,
			 const char *input, const char *out, struct result *res)
{
	memset(res, 0, sizeof(*res));
	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(out, NULL, &err);
	cr_assert(w, "%s", err.msg);
	struct ptw_emit *em = ptw_emit_create(w, &err);
	cr_assert(em, "%s", err.msg);
	int at = strcmp(kind, "appletrace") == 0;
	struct ptw_emit_input in = {.mode = at ? PTW_EMIT_XFORM : PTW_EMIT_CHROME};
	cr_assert_eq(ptw_emit_begin_input(em, &in, &err), 0);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, input);
	if (at) {
		struct ptw_appletrace_run *r = ptw_appletrace_run_create(&err);
		cr_assert(r);
		struct ptw_appletrace_warn wf = {on_warn, &res->warns, NULL};
		res->rc = ptw_appletrace_run_read_dir(r, path, ptw_emit_event, em,
						      &wf, &res->err);
		res->kind = ptw_appletrace_run_kind(r);
		snprintf(res->file, sizeof(res->file), "%s",
			 ptw_appletrace_run_file(r));
		ptw_appletrace_run_destroy(r);
	} else {
		res->rc = ptw_cv_json_read(path, NULL, ptw_emit_event, em, NULL,
					   &res->err);
	}
	if (res->rc == 0) {
		cr_assert_eq(ptw_emit_end_input(em, &err), 0, "%s", err.msg);
		cr_assert_eq(ptw_emit_finish(em, &err), 0, "%s", err.msg);
	}
	ptw_emit_destroy(em);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
}

static json_object *load_case(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/case.json", dir);
	json_object *j = json_object_from_file(p);
	cr_assert(j, "cannot parse %s", p);
	return j;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* ---- tests ---------------------------------------------------------------- */

Test(corpus, every_ok_case_matches_expected_tables)
{
	char root[PATH_MAX];
	ptw_test_corpus_dir_or_skip(root, sizeof(root));
	char **cases;
	size_t n = list_cases(root, &cases);
	cr_assert_gt(n, 0, "no case in %s", root);
	size_t failed = 0, ran = 0;
	for (size_t i = 0; i < n; i++) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s/%s", root, cases[i]);
		json_object *cj = load_case(dir);
		if (strcmp(jstr(cj, "expect"), "ok") != 0) {
			json_object_put(cj);
			continue;
		}
		char out[256];
		ptw_test_tmp_path(out, sizeof(out), "corpus");
		struct result res;
		convert_case(dir, jstr(cj, "kind"), jstr(cj, "input"), out, &res);
		cr_expect_eq(res.rc, 0, "%s: conversion failed: %s", cases[i],
			     res.err.msg);
		if (res.rc == 0) {
			struct ptw_trace *t = ptw_test_load_checked_or_fail(out, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
			struct ptw_tp_model *m = ptw_test_model_or_fail(t);
			struct rows want = {0}, got = {0};
			char tsv[PATH_MAX];
			snprintf(tsv, sizeof(tsv), "%s/expected/tables.tsv", dir);
			rows_from_tsv(tsv, &want);
			rows_from_trace(t, m, &got);
			if (!rows_equal(cases[i], &want, &got))
				failed++;
			rows_free(&want);
			rows_free(&got);
			ptw_tp_model_free(m);
			ptw_trace_free(t);
		} else {
			failed++;
		}
		ran++;
		unlink(out);
		json_object_put(cj);
	}
	for (size_t i = 0; i < n; i++)
		free(cases[i]);
	free(cases);
	cr_assert_gt(ran, 0);
	cr_assert_eq(failed, 0, "%zu of %zu corpus cases differ (see stderr)",
		     failed, ran);
}

Test(corpus, warnings_match_case_json)
{
	char root[PATH_MAX];
	ptw_test_corpus_dir_or_skip(root, sizeof(root));
	char **cases;
	size_t n = list_cases(root, &cases);
	for (size_t i = 0; i < n; i++) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s/%s", root, cases[i]);
		json_object *cj = load_case(dir);
		if (strcmp(jstr(cj, "expect"), "ok") != 0 ||
		    strcmp(jstr(cj, "kind"), "appletrace") != 0) {
			json_object_put(cj);
			continue;
		}
		char out[256];
		ptw_test_tmp_path(out, sizeof(out), "corpus-warn");
		struct result res;
		convert_case(dir, "appletrace", jstr(cj, "input"), out, &res);
		unlink(out);
		json_object *wv = NULL;
		size_t nw = 0;
		if (json_object_object_get_ex(cj, "warnings", &wv))
			nw = json_object_array_length(wv);
		cr_expect_eq(res.warns.n, nw, "%s: %zu warnings, expected %zu",
			     cases[i], res.warns.n, nw);
		for (size_t k = 0; k < nw && k < res.warns.n; k++) {
			json_object *wj = json_object_array_get_idx(wv, k);
			char where[64];
			snprintf(where, sizeof(where), "line %llu",
				 (unsigned long long)res.warns.line[k]);
			cr_expect_str_eq(jstr(wj, "kind"), "dropped_unterminated_line");
			cr_expect_str_eq(res.warns.file[k], jstr(wj, "file"),
					 "%s", cases[i]);
			cr_expect_str_eq(where, jstr(wj, "where"), "%s", cases[i]);
		}
		json_object_put(cj);
	}
	for (size_t i = 0; i < n; i++)
		free(cases[i]);
	free(cases);
}

static size_t count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	cr_assert(d);
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

Test(corpus, error_cases_fail_with_kind_file_where_and_leave_no_output)
{
	char root[PATH_MAX], tool[PATH_MAX];
	ptw_test_corpus_dir_or_skip(root, sizeof(root));
	int have_tool = ptw_test_bin(tool, sizeof(tool), "ptw-convert") == 0;
	char **cases;
	size_t n = list_cases(root, &cases);
	size_t ran = 0;
	for (size_t i = 0; i < n; i++) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s/%s", root, cases[i]);
		json_object *cj = load_case(dir);
		if (strcmp(jstr(cj, "expect"), "error") != 0) {
			json_object_put(cj);
			continue;
		}
		ran++;
		json_object *ej = NULL;
		json_object_object_get_ex(cj, "error", &ej);
		const char *kind = jstr(ej, "kind"), *file = jstr(ej, "file"),
			   *where = jstr(ej, "where");
		char out[256];
		ptw_test_tmp_path(out, sizeof(out), "corpus-err");
		struct result res;
		convert_case(dir, jstr(cj, "kind"), jstr(cj, "input"), out, &res);
		unlink(out);
		cr_expect_neq(res.rc, 0, "%s: accepted", cases[i]);
		cr_expect_str_eq(ptw_appletrace_kind_name(res.kind), kind, "%s",
				 cases[i]);
		cr_expect_str_eq(res.file, file, "%s", cases[i]);
		unsigned long long v = 0;
		if (sscanf(where, "line %llu", &v) == 1)
			cr_expect_eq(res.err.line, v, "%s: line %u, expected %s",
				     cases[i], res.err.line, where);
		else if (sscanf(where, "offset %llu", &v) == 1)
			cr_expect_eq(res.err.offset, v, "%s: offset %llu, expected %s",
				     cases[i], (unsigned long long)res.err.offset,
				     where);
		else
			cr_expect_fail("%s: bad where '%s'", cases[i], where);
		cr_expect(strstr(res.err.msg, file) != NULL,
			  "%s: message does not name the fragment: %s", cases[i],
			  res.err.msg);

		if (have_tool) {
			/* The command fails and leaves neither the output nor
			 * its temporary file. */
			char tmpdir[] = "/tmp/ptw-cv-errXXXXXX";
			cr_assert(mkdtemp(tmpdir));
			char cmd[3 * PATH_MAX];
			snprintf(cmd, sizeof(cmd), "'%s' -q -o '%s/out.pftrace' '%s' "
				 "2>/dev/null", tool, tmpdir, dir);
			int st = system(cmd);
			cr_expect(WIFEXITED(st) && WEXITSTATUS(st) != 0,
				  "%s: ptw-convert exit status %d", cases[i], st);
			cr_expect_eq(count_entries(tmpdir, "out"), 0,
				     "%s: output left behind", cases[i]);
			char rm[PATH_MAX + 16];
			snprintf(rm, sizeof(rm), "rm -rf '%s'", tmpdir);
			cr_expect_eq(system(rm), 0);
		}
		json_object_put(cj);
	}
	for (size_t i = 0; i < n; i++)
		free(cases[i]);
	free(cases);
	cr_assert_gt(ran, 0);
}
