/* test_convert_stacks.c - Chrome JSON callstacks ("stackFrames" with
 * "sf" / "esf", inline "stack" / "estack") converted into callstacks on
 * the slices, as trace_processor shows them (its own JSON import drops
 * them); bad stacks are counted, never fatal.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/chrome_json/cv_sort.h"
#include "converters/chrome_json/cv_stacks.h"
#include "converters/emit/emit.h"
#include "ptw/writer.h"
#include "reader/trace_read.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "support/tp_stack.h"

/* SRC_SORTED: memory, through a reorder window (cv_sort.h), which holds
 * copies of the events */
enum src { SRC_FILE, SRC_MEM, SRC_PIPE, SRC_SORTED };

/* Converts 'json' as ptw-convert does (the emitter's frames given to the
 * reader), read from a file, from memory or from a pipe. Returns the
 * reader's result; stats into *st and *js. */
static int convert_opts(const char *out, const char *json, enum src src,
			int strict, struct ptw_emit_stats *st,
			struct ptw_cv_json_read_stats *js, struct ptw_error *err)
{
	struct ptw_writer *w = ptw_writer_open(out, NULL, err);
	cr_assert(w, "%s", err->msg);
	struct ptw_emit *em = ptw_emit_create(w, err);
	cr_assert(em, "%s", err->msg);
	struct ptw_emit_input in = {.mode = PTW_EMIT_CHROME};
	cr_assert_eq(ptw_emit_begin_input(em, &in, err), 0, "%s", err->msg);
	struct ptw_cv_json_read_opts jo = {.stacks = ptw_emit_stacks(em),
					   .strict = strict};
	cr_assert(jo.stacks);
	ptw_cv_stacks_next_input(jo.stacks);
	int rc;
	size_t n = strlen(json);
	if (src == SRC_SORTED) {
		struct ptw_cv_sort *so =
			ptw_cv_sort_create(64, ptw_emit_event, em, err);
		cr_assert(so);
		rc = ptw_cv_json_read_mem(json, n, &jo, ptw_cv_sort_event, so,
					  js, err);
		if (!rc)
			rc = ptw_cv_sort_drain(so, err);
		ptw_cv_sort_destroy(so);
	} else if (src == SRC_MEM) {
		rc = ptw_cv_json_read_mem(json, n, &jo, ptw_emit_event, em, js,
					  err);
	} else if (src == SRC_FILE) {
		char in_path[256];
		ptw_test_tmp_path(in_path, sizeof(in_path), "stacks-in");
		ptw_test_write_file_or_fail(in_path, json, n);
		rc = ptw_cv_json_read(in_path, &jo, ptw_emit_event, em, js,
				      err);
		unlink(in_path);
	} else {
		int fd[2];
		cr_assert_eq(pipe(fd), 0);
		pid_t pid = fork();
		cr_assert(pid >= 0);
		if (pid == 0) {
			close(fd[0]);
			size_t k = 0;
			while (k < n) {
				ssize_t m = write(fd[1], json + k, n - k);
				if (m <= 0)
					_exit(1);
				k += (size_t)m;
			}
			_exit(0);
		}
		close(fd[1]);
		rc = ptw_cv_json_read_fd(fd[0], &jo, ptw_emit_event, em, js,
					 err);
		close(fd[0]);
		int ws;
		waitpid(pid, &ws, 0);
	}
	if (!rc) {
		cr_assert_eq(ptw_emit_end_input(em, err), 0, "%s", err->msg);
		cr_assert_eq(ptw_emit_finish(em, err), 0, "%s", err->msg);
	}
	ptw_emit_get_stats(em, st);
	ptw_emit_destroy(em);
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	return rc;
}

static int convert(const char *out, const char *json, enum src src,
		   struct ptw_emit_stats *st, struct ptw_cv_json_read_stats *js,
		   struct ptw_error *err)
{
	return convert_opts(out, json, src, 0, st, js, err);
}

/* stackFrames after traceEvents, as Chrome writes it; ids as numbers and
 * strings; a frame's parent given before or after it. */
static const char after_json[] =
	"{\"traceEvents\":[\n"
	"{\"ph\":\"X\",\"name\":\"work\",\"pid\":1,\"tid\":1,\"ts\":10,"
	"\"dur\":5,\"sf\":3,\"esf\":\"4\"},\n"
	"{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":20,"
	"\"sf\":\"2\"},\n"
	"{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":25,"
	"\"stack\":[\"main\",\"endfn\"]},\n"
	"{\"ph\":\"i\",\"name\":\"inst\",\"pid\":1,\"tid\":1,\"ts\":30,"
	"\"s\":\"t\",\"stack\":[\"main\",\"a\",\"z\"]},\n"
	"{\"ph\":\"X\",\"name\":\"one\",\"pid\":1,\"tid\":1,\"ts\":40,"
	"\"dur\":2,\"sf\":3}\n"
	"],\n"
	"\"stackFrames\":{\"3\":{\"name\":\"b\",\"parent\":2},"
	"\"1\":{\"name\":\"main\",\"category\":\"app\"},"
	"\"2\":{\"name\":\"a\",\"parent\":\"1\"},"
	"\"4\":{\"name\":\"c\",\"parent\":\"1\"}}}\n";

static const char after_want[] = "work:main>a>b;work/end:main>c;b:main>a;"
				 "b/end:main>endfn;inst:main>a>z;"
				 "one:main>a>b;";

static void check_after(enum src src)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "stacks");
	struct ptw_emit_stats st;
	struct ptw_cv_json_read_stats js;
	struct ptw_error err = {0};
	cr_assert_eq(convert(path, after_json, src, &st, &js, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(js.stack_frames, 1);
	cr_assert_eq(js.stacks_late, 0);
	cr_assert_eq(st.stacks, 6);
	cr_assert_eq(st.stack_unknown + st.stack_cycles + st.stack_invalid, 0);
	ptw_trace_free(ptw_test_load_checked_or_fail(path, 0));
	char rows[1024];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0)
		cr_assert_str_eq(rows, after_want);
	unlink(path);
}

Test(convert_stacks, frames_after_the_events_of_a_file)
{
	check_after(SRC_FILE);
}

Test(convert_stacks, frames_after_the_events_in_memory)
{
	check_after(SRC_MEM);
}

/* The reorder window holds copies of the events: their stacks too. */
Test(convert_stacks, through_the_reorder_window)
{
	check_after(SRC_SORTED);
}

/* A pipe is read once: stackFrames first works, after the events the
 * ids stay unknown and the reader says why. */
Test(convert_stacks, a_pipe_needs_the_frames_first)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "stacks-pipe");
	struct ptw_emit_stats st;
	struct ptw_cv_json_read_stats js;
	struct ptw_error err = {0};
	static const char first[] =
		"{\"stackFrames\":{\"1\":{\"name\":\"main\"},"
		"\"2\":{\"name\":\"run\",\"parent\":\"1\"}},"
		"\"traceEvents\":[{\"ph\":\"X\",\"name\":\"x\",\"pid\":1,"
		"\"tid\":1,\"ts\":1,\"dur\":1,\"sf\":2}]}";
	cr_assert_eq(convert(path, first, SRC_PIPE, &st, &js, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(st.stacks, 1);
	cr_assert_eq(js.stacks_late, 0);
	char rows[512];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0)
		cr_assert_str_eq(rows, "x:main>run;");

	cr_assert_eq(convert(path, after_json, SRC_PIPE, &st, &js, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(js.stacks_late, 1);
	cr_assert_eq(st.stack_unknown, 4); /* sf 3, esf 4, sf 2, sf 3 */
	cr_assert_eq(st.stacks, 2);        /* the inline ones */
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0)
		cr_assert_str_eq(rows, "b/end:main>endfn;inst:main>a>z;");
	unlink(path);
}

/* Unknown ids, loops of parents, a chain deeper than the writer takes,
 * an inline stack that is not strings, a parent that names no frame:
 * counted, the events written (without those stacks), no hang. */
Test(convert_stacks, bad_stacks_are_counted)
{
	enum { DEEP = PTW_MAX_FRAMES + 44 };
	size_t cap = 64 * DEEP + 4096, n = 0;
	char *json = malloc(cap);
	cr_assert(json);
	n += (size_t)snprintf(json + n, cap - n,
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"name\":\"unknown\",\"pid\":1,\"tid\":1,"
		"\"ts\":1,\"dur\":1,\"sf\":99},"
		"{\"ph\":\"X\",\"name\":\"loop\",\"pid\":1,\"tid\":1,"
		"\"ts\":3,\"dur\":1,\"sf\":\"c1\"},"
		"{\"ph\":\"X\",\"name\":\"self\",\"pid\":1,\"tid\":1,"
		"\"ts\":5,\"dur\":1,\"sf\":\"me\"},"
		"{\"ph\":\"X\",\"name\":\"deep\",\"pid\":1,\"tid\":1,"
		"\"ts\":7,\"dur\":1,\"sf\":\"d%d\"},"
		"{\"ph\":\"X\",\"name\":\"nums\",\"pid\":1,\"tid\":1,"
		"\"ts\":9,\"dur\":1,\"stack\":[1,2]},"
		"{\"ph\":\"X\",\"name\":\"orphan\",\"pid\":1,\"tid\":1,"
		"\"ts\":11,\"dur\":1,\"sf\":\"o\"},"
		"{\"ph\":\"b\",\"name\":\"async\",\"cat\":\"c\",\"id\":1,"
		"\"pid\":1,\"tid\":1,\"ts\":13,\"sf\":\"o\"}"
		"],\"stackFrames\":{"
		"\"c1\":{\"name\":\"x\",\"parent\":\"c2\"},"
		"\"c2\":{\"name\":\"y\",\"parent\":\"c3\"},"
		"\"c3\":{\"name\":\"z\",\"parent\":\"c1\"},"
		"\"me\":{\"name\":\"m\",\"parent\":\"me\"},"
		"\"o\":{\"name\":\"orphan\",\"parent\":\"nowhere\"}",
		DEEP - 1);
	n += (size_t)snprintf(json + n, cap - n, ",\"d0\":{\"name\":\"f0\"}");
	for (int i = 1; i < DEEP; i++)
		n += (size_t)snprintf(json + n, cap - n,
				      ",\"d%d\":{\"name\":\"f%d\","
				      "\"parent\":\"d%d\"}", i, i, i - 1);
	snprintf(json + n, cap - n, "}}");

	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "stacks-bad");
	struct ptw_emit_stats st;
	struct ptw_cv_json_read_stats js;
	struct ptw_error err = {0};
	cr_assert_eq(convert(path, json, SRC_MEM, &st, &js, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(st.stack_unknown, 1);
	cr_assert_eq(st.stack_cycles, 2);
	cr_assert_eq(st.stack_truncated, 1);
	cr_assert_eq(st.stack_invalid, 1);
	cr_assert_eq(st.stack_ignored, 1);
	cr_assert_eq(st.stacks, 2); /* deep, orphan */
	cr_assert_eq(st.slices, 6);
	char rows[8192];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0) {
		/* the innermost PTW_MAX_FRAMES frames of the deep one */
		char want[8192];
		size_t k = (size_t)snprintf(want, sizeof(want), "deep:");
		for (int i = DEEP - PTW_MAX_FRAMES; i < DEEP; i++)
			k += (size_t)snprintf(want + k, sizeof(want) - k,
					      "f%d%s", i, i + 1 < DEEP ? ">"
								    : ";");
		snprintf(want + k, sizeof(want) - k, "orphan:orphan;");
		cr_assert_str_eq(rows, want);
	}
	unlink(path);
	free(json);
}

/* A "stackFrames" that is not valid JSON: with --strict an error naming
 * it; by default a repair (trace_processor loads such a file, ignoring
 * stackFrames), its ids then unknown. */
Test(convert_stacks, invalid_stack_frames)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "stacks-inv");
	struct ptw_emit_stats st;
	struct ptw_cv_json_read_stats js;
	struct ptw_error err = {0};
	static const char bad[] =
		"{\"stackFrames\":{\"1\":{\"name\":\"a\" \"parent\":2}},"
		"\"traceEvents\":[{\"ph\":\"X\",\"name\":\"x\",\"pid\":1,"
		"\"tid\":1,\"ts\":1,\"dur\":1,\"sf\":1}]}";
	cr_assert_eq(convert_opts(path, bad, SRC_MEM, 1, &st, &js, &err),
		     PTW_ERR_FORMAT);
	cr_assert(strstr(err.msg, "stackFrames"), "%s", err.msg);
	cr_assert_eq(err.offset, 15, "%s", err.msg);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(convert(path, bad, SRC_MEM, &st, &js, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(js.repairs, 1);
	cr_assert(strstr(js.repair_what, "stackFrames"), "%s", js.repair_what);
	cr_assert_eq(st.slices, 1);
	cr_assert_eq(st.stack_unknown, 1);
	unlink(path);
}

/* The stacks of a trace's events, from ptw's reader: "name:f0>f1;"
 * (an END: "/end", as tp_stack.h writes them) in file order. */
static void reader_stacks(const char *path, char *out, size_t max)
{
	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	size_t n, k = 0;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (!ev[i].stack)
			continue;
		k += (size_t)snprintf(out + k, max - k, "%s%s:",
				      ev[i].name ? ev[i].name : "",
				      ev[i].type == PTW_TRACE_SLICE_END
					      ? "/end" : "");
		for (uint32_t j = 0; j < ev[i].stack->n && k < max; j++)
			k += (size_t)snprintf(out + k, max - k, "%s%s",
					      ev[i].stack->frames[j],
					      j + 1 < ev[i].stack->n ? ">"
								     : ";");
		cr_assert_lt(k, max);
	}
	ptw_trace_free(t);
}

/* JSON -> pftrace -> JSON (--to-json: stackFrames + sf/esf) -> pftrace:
 * the same callstacks, in ptw's reader and in trace_processor. */
Test(convert_stacks, round_trip_through_json_keeps_the_stacks)
{
	char p1[256], js[256], p2[256];
	ptw_test_tmp_path(p1, sizeof(p1), "stacks-rt1");
	ptw_test_tmp_path(js, sizeof(js), "stacks-rt.json");
	ptw_test_tmp_path(p2, sizeof(p2), "stacks-rt2");
	struct ptw_emit_stats st;
	struct ptw_cv_json_read_stats rs;
	struct ptw_error err = {0};
	cr_assert_eq(convert(p1, after_json, SRC_MEM, &st, &rs, &err), 0);
	char r1[1024], r2[1024];
	reader_stacks(p1, r1, sizeof(r1));
	cr_assert_str_eq(r1, "work:main>a>b;/end:main>c;b:main>a;"
			     "/end:main>endfn;inst:main>a>z;one:main>a>b;");

	FILE *f = fopen(js, "w");
	cr_assert(f);
	cr_assert_eq(ptw_cv_export_json(p1, f, &err), 0, "%s", err.msg);
	fclose(f);
	size_t n;
	char *text = (char *)ptw_test_read_file_or_fail(js, &n);
	char *z = realloc(text, n + 1);
	cr_assert(z);
	z[n] = '\0';
	cr_assert(strstr(z, "\"stackFrames\":{"), "%s", z);
	cr_assert_eq(convert(p2, z, SRC_MEM, &st, &rs, &err), 0, "%s",
		     err.msg);
	free(z);
	cr_assert_eq(st.stacks, 6);
	reader_stacks(p2, r2, sizeof(r2));
	cr_assert_str_eq(r2, r1);
	char t1[1024], t2[1024];
	if (ptw_test_tp_stacks(p1, t1, sizeof(t1)) == 0) {
		ptw_test_tp_stacks(p2, t2, sizeof(t2));
		cr_assert_str_eq(t1, after_want);
		cr_assert_str_eq(t2, t1);
	}
	unlink(p1);
	unlink(js);
	unlink(p2);
}

static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* ptw-convert: --stats counts the stacks, a pipe with stackFrames last
 * warns (and converts), --to-json writes stackFrames. */
Test(convert_stacks, command_line)
{
	const char *tool = ptw_test_bin_or_skip("ptw-convert");
	char d[] = "/tmp/ptw-stacks-XXXXXX";
	cr_assert(mkdtemp(d));
	char in[512];
	snprintf(in, sizeof(in), "%s/t.json", d);
	ptw_test_write_file_or_fail(in, after_json, strlen(after_json));
	cr_assert_eq(sh("'%s' -s -o '%s/f.pftrace' '%s' 2>'%s/err' && "
			"grep -qx 'stacks 6' '%s/err' && "
			"! grep -q 'warning:' '%s/err'", tool, d, in, d, d, d), 0);
	/* a pipe: the events wait in the reorder window, where they find
	 * stackFrames read after them; those that left it do not */
	cr_assert_eq(sh("'%s' -s -o '%s/p.pftrace' - < '%s' 2>'%s/err' && "
			"grep -qx 'stacks 6' '%s/err' && "
			"! grep -q 'warning:' '%s/err'", tool, d, in, d, d, d), 0);
	cr_assert_eq(sh("'%s' -s --reorder-window 1 -o '%s/p.pftrace' - < '%s' "
			"2>'%s/err' && grep -q 'stack_unknown); in -, a pipe' "
			"'%s/err' && ! grep -qx 'stacks 6' '%s/err'", tool, d,
			in, d, d, d), 0);
	cr_assert_eq(sh("'%s' --to-json -o '%s/b.json' '%s/f.pftrace' && "
			"grep -q '^\"stackFrames\":{' '%s/b.json'", tool, d, d,
			d), 0);
	cr_assert_eq(sh("rm -rf '%s'", d), 0);
}
