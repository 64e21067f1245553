/* test_appletrace_text.c - AppleTrace text fragments, rule by rule (corpus
 * README section 3) and run discovery (section 2): blank lines, CRLF,
 * one trailing comma, tails that end a fragment, NUL padding, the
 * crash-cut final line (warning) versus a broken terminated line (error),
 * a fragment cut at every byte, numeric fragment order, and a name table
 * shared by the binary fragments of a run.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converters/appletrace/appletrace.h"
#include "support/ptw_test.h"

struct got {
	char names[256][32];
	uint64_t lines[256];
	size_t n;
	char warn_file[8][64];
	uint64_t warn_line[8];
	size_t n_warn;
};

static int collect(void *ctx, const struct ptw_cv_event *ev,
		   struct ptw_error *err)
{
	(void)err;
	struct got *g = ctx;
	if (g->n < 256) {
		snprintf(g->names[g->n], 32, "%.*s", (int)ev->name.n,
			 ev->name.p ? ev->name.p : "");
		g->lines[g->n] = ev->line;
		g->n++;
	}
	return 0;
}

static void warn(void *ctx, const char *file, uint64_t line, const char *msg)
{
	(void)msg;
	struct got *g = ctx;
	if (g->n_warn < 8) {
		snprintf(g->warn_file[g->n_warn], 64, "%s", file);
		g->warn_line[g->n_warn++] = line;
	}
}

static int read_text(const char *s, size_t n, struct got *g,
		     enum ptw_appletrace_kind *kind, struct ptw_error *err)
{
	struct ptw_appletrace_warn w = {warn, g, NULL};
	return ptw_appletrace_text_read_mem(s, n, "trace.appletrace", collect, g,
					    &w, kind, err);
}

#define EV(name) "{\"name\":\"" name "\",\"cat\":\"catname\",\"ph\":\"i\"," \
		 "\"pid\":1,\"tid\":0,\"ts\":5,\"s\":\"t\"}"

Test(appletrace_text, blank_lines_crlf_indentation_and_one_trailing_comma)
{
	static const char in[] = "\n" EV("a") ",\r\n   \t\r\n  " EV("b")
				 "\r\n\f" EV("c") " \v\n";
	struct got g = {0};
	struct ptw_error err = {0};
	cr_assert_eq(read_text(in, sizeof(in) - 1, &g, NULL, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(g.n, 3);
	cr_assert_str_eq(g.names[0], "a");
	cr_assert_eq(g.lines[0], 2);
	cr_assert_eq(g.lines[1], 4);
	cr_assert_eq(g.lines[2], 5);
}

Test(appletrace_text, a_line_not_starting_with_brace_ends_the_fragment)
{
	static const char in[] = EV("a") "\n*** crash: SIGSEGV\n" EV("b") "\n"
				 "{broken\n\xff\xfe\n";
	struct got g = {0};
	cr_assert_eq(read_text(in, sizeof(in) - 1, &g, NULL, NULL), 0);
	cr_assert_eq(g.n, 1);
}

Test(appletrace_text, nul_padding_after_lf_ends_the_fragment)
{
	char in[4096];
	memset(in, 0, sizeof(in));
	size_t n = (size_t)sprintf(in, "%s\n%s\n", EV("a"), EV("b"));
	memcpy(in + n + 100, "{junk\n", 6); /* stale bytes after the NULs */
	struct got g = {0};
	cr_assert_eq(read_text(in, sizeof(in), &g, NULL, NULL), 0);
	cr_assert_eq(g.n, 2);
	cr_assert_eq(g.n_warn, 0);
}

Test(appletrace_text, unterminated_valid_last_line_is_an_event)
{
	static const char in[] = EV("a") "\n" EV("b");
	struct got g = {0};
	cr_assert_eq(read_text(in, sizeof(in) - 1, &g, NULL, NULL), 0);
	cr_assert_eq(g.n, 2);
	/* also with NUL padding right after it */
	char pad[512] = {0};
	memcpy(pad, in, sizeof(in) - 1);
	struct got h = {0};
	cr_assert_eq(read_text(pad, sizeof(pad), &h, NULL, NULL), 0);
	cr_assert_eq(h.n, 2);
	cr_assert_eq(h.n_warn, 0);
}

Test(appletrace_text, crash_cut_last_line_is_dropped_with_a_warning)
{
	char in[1024] = {0};
	int n = sprintf(in, "%s\n%s\n{\"name\":\"cut\",\"ph\":\"E\",", EV("a"),
			EV("b"));
	struct got g = {0};
	struct ptw_error err = {0};
	cr_assert_eq(read_text(in, (size_t)n + 300, &g, NULL, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(g.n, 2);
	cr_assert_eq(g.n_warn, 1);
	cr_assert_str_eq(g.warn_file[0], "trace.appletrace");
	cr_assert_eq(g.warn_line[0], 3);
}

Test(appletrace_text, broken_terminated_line_is_an_error_with_its_line)
{
	static const char *bad[] = {
		EV("a") "\n" EV("b") ",,\n",               /* two commas */
		EV("a") "\n{\"name\":\"x\" \"ph\":\"B\"}\n" EV("c") "\n",
		EV("a") "\n" EV("b") "\n{\"name\":\"cut\n", /* cut, then LF */
	};
	static const uint64_t line[] = {2, 2, 3};
	for (int i = 0; i < 3; i++) {
		char in[1024] = {0};
		size_t n = strlen(bad[i]);
		memcpy(in, bad[i], n);
		struct got g = {0};
		struct ptw_error err = {0};
		enum ptw_appletrace_kind kind;
		/* followed by NUL padding: still an error */
		cr_assert_eq(read_text(in, n + 200, &g, &kind, &err), PTW_ERR_FORMAT,
			     "case %d", i);
		cr_assert_eq(kind, PTW_APPLETRACE_INVALID_JSON_LINE);
		cr_assert_eq(err.line, line[i], "case %d: line %u", i, err.line);
		cr_assert(strstr(err.msg, "trace.appletrace:"), "%s", err.msg);
	}
}

Test(appletrace_text, nul_inside_a_terminated_line_is_an_error)
{
	static const char in[] = "{\"name\":\"a\0b\"}\n";
	struct got g = {0};
	enum ptw_appletrace_kind kind;
	cr_assert_eq(read_text(in, sizeof(in) - 1, &g, &kind, NULL), PTW_ERR_FORMAT);
	cr_assert_eq(kind, PTW_APPLETRACE_INVALID_JSON_LINE);
}

Test(appletrace_text, fragment_cut_at_every_byte_never_fails)
{
	char in[2048];
	int n = sprintf(in, "%s\n%s,\n\n%s\r\n{\"name\":\"\\u00e9\\ud83d\\ude00\","
			"\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":7}\n", EV("a"),
			EV("bb"), EV("ccc"));
	for (int len = 0; len <= n; len++) {
		struct got g = {0};
		struct ptw_error err = {0};
		int rc = read_text(in, (size_t)len, &g, NULL, &err);
		cr_assert_eq(rc, 0, "cut at %d: %s", len, err.msg);
		/* complete lines are events; the cut one is an event or a
		 * warning, never both */
		size_t lfs = 0;
		for (int i = 0; i < len; i++)
			lfs += in[i] == '\n';
		size_t full = lfs >= 4 ? 3 + (lfs >= 5) : lfs >= 3 ? 2 : lfs;
		cr_assert_geq(g.n, full, "cut at %d", len);
		cr_assert_leq(g.n + g.n_warn, full + 1, "cut at %d", len);
	}
}

static void write_file(const char *dir, const char *name, const void *p,
		       size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ptw_test_write_file_or_fail(path, p, n);
}

/* v as n little-endian bytes at p (APLTRC01's byte order on any host) */
static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static size_t bin_frag(uint8_t *b, uint32_t def_id, const char *def,
		       uint32_t ev_id, uint64_t ts)
{
	size_t n = 0;
	memcpy(b, "APLTRC01\x07\x00\x00\x00", 12);
	n = 12;
	if (def) {
		uint32_t len = (uint32_t)strlen(def);
		b[n++] = 1;
		put_le(b + n, def_id, 4);
		put_le(b + n + 4, len, 4);
		memcpy(b + n + 8, def, len);
		n += 8 + len;
	}
	b[n++] = 'i';
	put_le(b + n, ev_id, 4);
	put_le(b + n + 4, 3, 8);  /* tid */
	put_le(b + n + 12, ts, 8);
	put_le(b + n + 20, 0, 8); /* arg */
	return n + 28;
}

Test(appletrace_run, fragments_are_read_in_numeric_order_with_a_shared_name_table)
{
	char dir[] = "/tmp/ptw-run-XXXXXX";
	cr_assert(mkdtemp(dir));
	uint8_t b[256];
	char t[256];
	/* 0: text, 1: binary defining id 9, 2: text, 10: binary using 9 */
	int n = sprintf(t, "%s\n", EV("zero"));
	write_file(dir, "trace.appletrace", t, (size_t)n);
	write_file(dir, "trace_1.appletracebin", b, bin_frag(b, 9, "one", 9, 1));
	n = sprintf(t, "%s\n", EV("two"));
	write_file(dir, "trace_2.appletrace", t, (size_t)n);
	write_file(dir, "trace_10.appletracebin", b, bin_frag(b, 0, NULL, 9, 10));
	write_file(dir, "trace.json", "[", 1);        /* not a fragment */
	write_file(dir, "trace_x.appletrace", "?", 1); /* not a fragment */
	struct ptw_appletrace_run *r = ptw_appletrace_run_create(NULL);
	struct got g = {0};
	struct ptw_error err = {0};
	struct ptw_appletrace_warn w = {warn, &g, NULL};
	cr_assert_eq(ptw_appletrace_run_read_dir(r, dir, collect, &g, &w, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(g.n, 4);
	cr_assert_str_eq(g.names[0], "zero");
	cr_assert_str_eq(g.names[1], "one");
	cr_assert_str_eq(g.names[2], "two");
	cr_assert_str_eq(g.names[3], "one"); /* id 9 from fragment 1 */
	cr_assert_eq(ptw_appletrace_run_fragments(r), 4);

	/* Read alone, fragment 10 does not know id 9. */
	char path[512];
	snprintf(path, sizeof(path), "%s/trace_10.appletracebin", dir);
	cr_assert_eq(ptw_appletrace_run_read_file(r, path, collect, &g, &w, &err),
		     PTW_ERR_FORMAT);
	cr_assert_eq(ptw_appletrace_run_kind(r), PTW_APPLETRACE_UNDEFINED_NAME_ID);
	cr_assert_str_eq(ptw_appletrace_run_file(r), "trace_10.appletracebin");
	ptw_appletrace_run_destroy(r);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(appletrace_run, a_directory_without_fragments_is_an_error)
{
	char dir[] = "/tmp/ptw-run-XXXXXX";
	cr_assert(mkdtemp(dir));
	write_file(dir, "trace.json", "[]", 2);
	struct ptw_appletrace_run *r = ptw_appletrace_run_create(NULL);
	struct got g = {0};
	struct ptw_error err = {0};
	cr_assert_eq(ptw_appletrace_run_read_dir(r, dir, collect, &g, NULL, &err),
		     PTW_ERR_FORMAT);
	cr_assert_eq(ptw_appletrace_run_kind(r), PTW_APPLETRACE_NO_FRAGMENT);
	ptw_appletrace_run_destroy(r);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(appletrace_run, fragment_names)
{
	uint64_t num;
	int bin;
	cr_assert(ptw_appletrace_fragment_name("trace.appletrace", &num, &bin));
	cr_assert_eq(num, 0);
	cr_assert_eq(bin, 0);
	cr_assert(ptw_appletrace_fragment_name("trace_12.appletracebin", &num, &bin));
	cr_assert_eq(num, 12);
	cr_assert_eq(bin, 1);
	cr_assert_not(ptw_appletrace_fragment_name("trace_.appletrace", NULL, NULL));
	cr_assert_not(ptw_appletrace_fragment_name("trace_1a.appletrace", NULL, NULL));
	cr_assert_not(ptw_appletrace_fragment_name("trace.json", NULL, NULL));
	cr_assert_not(ptw_appletrace_fragment_name("xtrace.appletrace", NULL, NULL));
	cr_assert_not(ptw_appletrace_fragment_name("trace_1.appletrace.bak", NULL,
						   NULL));
}

static void on_error(void *ctx, const struct ptw_error *err)
{
	struct got *g = ctx;
	if (g->n_warn < 8) {
		snprintf(g->warn_file[g->n_warn], 64, "%s", err->input ? err->input : "");
		g->warn_line[g->n_warn++] = err->line;
	}
}

Test(appletrace_run, error_fn_keeps_going_after_a_failing_fragment)
{
	char dir[] = "/tmp/ptw-run-XXXXXX";
	cr_assert(mkdtemp(dir));
	char t[512];
	int n = sprintf(t, "%s\n", EV("a"));
	write_file(dir, "trace.appletrace", t, (size_t)n);
	n = sprintf(t, "%s\n{\"name\":,}\n%s\n", EV("b"), EV("lost"));
	write_file(dir, "trace_1.appletrace", t, (size_t)n);
	n = sprintf(t, "%s\n", EV("c"));
	write_file(dir, "trace_2.appletrace", t, (size_t)n);
	struct ptw_appletrace_run *r = ptw_appletrace_run_create(NULL);
	struct got g = {0};
	struct ptw_error err = {0};
	struct ptw_appletrace_warn w = {warn, &g, on_error};
	cr_assert_eq(ptw_appletrace_run_read_dir(r, dir, collect, &g, &w, &err),
		     PTW_ERR_FORMAT);
	cr_assert_eq(g.n, 3);
	cr_assert_str_eq(g.names[2], "c");
	cr_assert_eq(g.n_warn, 1);
	cr_assert_str_eq(g.warn_file[0], "trace_1.appletrace");
	cr_assert_eq(g.warn_line[0], 2);
	/* the run still reports its first error */
	cr_assert_eq(ptw_appletrace_run_kind(r), PTW_APPLETRACE_INVALID_JSON_LINE);
	cr_assert_str_eq(ptw_appletrace_run_file(r), "trace_1.appletrace");
	cr_assert_eq(err.line, 2);
	ptw_appletrace_run_destroy(r);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}
