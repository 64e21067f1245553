/* test_convert.c - the emitter and merge options: colliding pids kept
 * apart, --shift / --remap-pid / --remap-tid semantics, default names
 * versus M events, Chrome E matching by name, and the round trip
 * JSON -> proto -> JSON -> proto keeping every row.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#include "converters/appletrace/appletrace.h"
#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "ptw/version.h"
#include "support/ptw_test.h"
#include "test_convert_rows.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

struct in {
	const char *json;         /* Chrome JSON text, or NULL */
	const char *run_dir;      /* AppleTrace run, or NULL */
	struct ptw_emit_input opt;
};

/* Converts the inputs in order into 'out'. */
static void convert(const char *out, const struct in *in, size_t n,
		    void (*setup)(struct ptw_emit *))
{
	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(out, NULL, &err);
	cr_assert(w, "%s", err.msg);
	struct ptw_emit *em = ptw_emit_create(w, &err);
	cr_assert(em, "%s", err.msg);
	if (setup)
		setup(em);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(ptw_emit_begin_input(em, &in[i].opt, &err), 0);
		int rc;
		if (in[i].json) {
			rc = ptw_cv_json_read_mem(in[i].json, strlen(in[i].json),
						  NULL, ptw_emit_event, em, NULL,
						  &err);
		} else {
			struct ptw_appletrace_run *r = ptw_appletrace_run_create(&err);
			rc = ptw_appletrace_run_read_dir(r, in[i].run_dir,
							 ptw_emit_event, em,
							 NULL, &err);
			ptw_appletrace_run_destroy(r);
		}
		cr_assert_eq(rc, 0, "%s", err.msg);
		cr_assert_eq(ptw_emit_end_input(em, &err), 0, "%s", err.msg);
	}
	cr_assert_eq(ptw_emit_finish(em, &err), 0, "%s", err.msg);
	ptw_emit_destroy(em);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
}

static void rows_of(const char *path, struct rows *r)
{
	struct ptw_trace *t = ptw_test_load_checked_or_fail(
		path, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	rows_from_trace(t, m, r);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
}

static void expect_rows(const char *path, const char *const *want, size_t n)
{
	struct rows got = {0}, exp = {0};
	rows_of(path, &got);
	for (size_t i = 0; i < n; i++)
		rows_add(&exp, want[i]);
	cr_expect(rows_equal(path, &exp, &got), "rows differ (see stderr)");
	rows_free(&got);
	rows_free(&exp);
}

/* Converts one Chrome JSON text and expects exactly these rows. */
static void expect_json_rows(const char *tag, const char *json,
			     const char *const *want, size_t n)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), tag);
	struct in in[1] = {{.json = json}};
	convert(out, in, 1, NULL);
	expect_rows(out, want, n);
	unlink(out);
}
#define EXPECT_JSON_ROWS(tag, json, want) \
	expect_json_rows(tag, json, want, sizeof(want) / sizeof(want[0]))

static const char app[] =
	"[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":100,\"args\":{\"name\":\"app\"}},\n"
	"{\"name\":\"work\",\"cat\":\"c\",\"ph\":\"X\",\"pid\":100,\"tid\":101,\"ts\":10,\"dur\":5},\n"
	"{\"name\":\"n\",\"ph\":\"C\",\"pid\":100,\"tid\":101,\"ts\":12,\"args\":{\"v\":3}}]";

Test(convert, colliding_pids_of_two_inputs_stay_separate_processes)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "merge");
	struct in in[2] = {{.json = app}, {.json = app}};
	convert(out, in, 2, NULL);
	struct ptw_trace *t = ptw_test_load_or_fail(out);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	size_t procs = 0;
	uint64_t uuids[2] = {0};
	for (size_t i = 0; i < m->n_processes; i++)
		if (m->processes[i].pid == 100 && procs < 2)
			uuids[procs++] = m->processes[i].track_uuid;
	cr_expect_eq(procs, 2);
	cr_expect_neq(uuids[0], uuids[1]);
	size_t slices = 0;
	uint64_t tracks[2] = {0};
	for (size_t i = 0; i < m->n_slices; i++)
		if (slices < 2)
			tracks[slices++] = m->slices[i].track_uuid;
	cr_expect_eq(slices, 2);
	cr_expect_neq(tracks[0], tracks[1], "the two inputs' threads mixed");
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(out);
}

Test(convert, shift_and_remap_apply_to_their_input_only)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "shift");
	static const struct ptw_emit_remap pids[] = {{100, 200}};
	static const struct ptw_emit_remap tids[] = {{101, 201}};
	struct in in[2] = {
		{.json = app},
		{.json = app, .opt = {.shift_ns = 1500000, .pids = pids,
				      .n_pids = 1, .tids = tids, .n_tids = 1}},
	};
	convert(out, in, 2, NULL);
	static const char *const want[] = {
		"process\t100\t\"app\"",
		"process\t200\t\"app\"",
		"thread_slice\t10000\t5000\t\"work\"\t\"c\"\t0\t101\t100",
		"thread_slice\t1510000\t5000\t\"work\"\t\"c\"\t0\t201\t200",
		"counter\t\"n v\"\t100\t12000\t3",
		"counter\t\"n v\"\t200\t1512000\t3",
	};
	expect_rows(out, want, sizeof(want) / sizeof(want[0]));
	unlink(out);
}

static void names_setup(struct ptw_emit *em)
{
	cr_assert_eq(ptw_emit_name_process(em, 100, "default"), 0);
	cr_assert_eq(ptw_emit_name_process(em, 300, "only-default"), 0);
	cr_assert_eq(ptw_emit_name_thread(em, 100, 101, "worker"), 0);
}

Test(convert, default_names_yield_to_metadata_events)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "names");
	static const char j[] =
		"[{\"name\":\"work\",\"ph\":\"X\",\"pid\":100,\"tid\":101,\"ts\":1,\"dur\":1},"
		"{\"name\":\"i\",\"ph\":\"i\",\"pid\":300,\"tid\":300,\"ts\":1},"
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":100,\"args\":{\"name\":\"first\"}},"
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":100,\"args\":{\"name\":\"last\"}}]";
	struct in in[1] = {{.json = j}};
	convert(out, in, 1, names_setup);
	static const char *const want[] = {
		"process\t100\t\"last\"",
		"process\t300\t\"only-default\"",
		"thread_name\t101\t100\t\"worker\"",
		"thread_slice\t1000\t1000\t\"work\"\tnull\t0\t101\t100",
		"thread_instant\t1000\t\"i\"\tnull\t0\t300\t300",
	};
	expect_rows(out, want, sizeof(want) / sizeof(want[0]));
	unlink(out);
}

Test(convert, chrome_end_closes_the_innermost_slice_with_its_name)
{
	static const char j[] =
		"[{\"name\":\"a\",\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":1},"
		"{\"name\":\"b\",\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":2},"
		"{\"name\":\"zzz\",\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":3},"
		"{\"name\":\"b\",\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":4},"
		"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":6},"
		"{\"name\":\"c\",\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":7},"
		"{\"name\":\"c\",\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":7}]";
	/* "zzz" closes nothing; the nameless E closes "a"; without any X
	 * event equal timestamps keep file order: "c" is a zero-length
	 * slice. */
	static const char *const want[] = {
		"process\t1\tnull",
		"thread_slice\t1000\t5000\t\"a\"\tnull\t0\t2\t1",
		"thread_slice\t2000\t2000\t\"b\"\tnull\t1\t2\t1",
		"thread_instant\t7000\t\"c\"\tnull\t0\t2\t1",
	};
	EXPECT_JSON_ROWS("ends", j, want);
}

Test(convert, chrome_e_sorts_first_at_equal_ts_once_an_x_was_seen)
{
	static const char j[] =
		"[{\"name\":\"x\",\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":1,\"dur\":1},"
		"{\"name\":\"c\",\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":7},"
		"{\"name\":\"c\",\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":7}]";
	/* the B/E pair at one ts loses its E (E events sort first) */
	static const char *const want[] = {
		"process\t1\tnull",
		"thread_slice\t1000\t1000\t\"x\"\tnull\t0\t3\t1",
		"thread_slice\t7000\t-1\t\"c\"\tnull\t0\t2\t1",
	};
	EXPECT_JSON_ROWS("ends-x", j, want);
}

/* ---- round trip --------------------------------------------------------- */

static char *slurp(const char *path)
{
	size_t n;
	return (char *)ptw_test_read_file_or_fail(path, &n);
}

/* examples/legacy/NAME in the source tree. */
static void example_path(char *buf, size_t len, const char *name)
{
	char src[PATH_MAX];
	ptw_test_src_root(src, sizeof(src));
	snprintf(buf, len, "%s/examples/legacy/%s", src, name);
}

/* The Chrome JSON example of `make demo`: rows worked out by hand from the
 * corpus README's rules (async "id" -> global track, "s":"p" instant on
 * the process, "s":"g" global, one counter track per arg key, v2 flow by
 * bind_id), so the demo shows what it says. */
Test(convert, the_chrome_json_example_shows_what_it_says)
{
	char p[PATH_MAX + 64];
	example_path(p, sizeof(p), "chrome.json");
	char *j = slurp(p);
	static const char *const want[] = {
		"process\t100\t\"Browser\"",
		"process\t200\t\"Renderer\"",
		"thread_name\t101\t100\t\"CrBrowserMain\"",
		"thread_name\t102\t100\t\"Chrome_IOThread\"",
		"thread_name\t201\t200\t\"CrRendererMain\"",
		"global_slice\t1000000\t600125\t\"NavigationRequest\"",
		"thread_slice\t1000000\t900500\t\"BrowserMain::Loop\"\t\"toplevel\"\t0\t101\t100",
		"thread_slice\t1100250\t50000\t\"SendRequest\"\t\"ipc\"\t1\t101\t100",
		"thread_slice\t1200000\t200000\t\"URLLoader::Start\"\t\"net\"\t0\t102\t100",
		"thread_slice\t1210000\t30000\t\"ReceiveRequest\"\t\"ipc\"\t1\t102\t100",
		"thread_slice\t1250000\t120000\t\"DNS\"\t\"net\"\t1\t102\t100",
		"process_slice\t1500000\t0\t\"NavigationCommitted\"\t100",
		"thread_slice\t1650000\t200000\t\"ParseHTML\"\t\"blink\"\t0\t201\t200",
		"thread_slice\t1700000\t80000\t\"Layout\"\t\"blink\"\t1\t201\t200",
		"global_slice\t1900000\t0\t\"FirstContentfulPaint\"",
		"thread_slice\t2000000\t300000\t\"RunTask\"\t\"toplevel\"\t0\t201\t200",
		"counter\t\"JSHeap used_kb\"\t200\t1650000\t2048",
		"counter\t\"JSHeap used_kb\"\t200\t1850000\t3100.5",
		"counter\t\"JSHeap total_kb\"\t200\t1650000\t4096",
		"counter\t\"JSHeap total_kb\"\t200\t1850000\t4096",
		"flow\t1100250\t\"SendRequest\"\t1210000\t\"ReceiveRequest\"",
	};
	EXPECT_JSON_ROWS("example-json", j, want);
	free(j);
}

/* The AppleTrace example: 12 frames of 3 nested slices on the main
 * thread and 2 on the worker, split over two fragments, all closed. */
Test(convert, the_appletrace_example_converts_whole)
{
	char dir[PATH_MAX + 64], out[256];
	example_path(dir, sizeof(dir), "appletrace");
	ptw_test_tmp_path(out, sizeof(out), "example-at");
	struct in in[1] = {{.run_dir = dir}};
	convert(out, in, 1, NULL);
	struct rows r = {0};
	rows_of(out, &r);
	size_t main_slices = 0, worker_slices = 0, counters = 0, named = 0;
	for (size_t i = 0; i < r.n; i++) {
		main_slices += strncmp(r.v[i], "thread_slice", 12) == 0 &&
			       strstr(r.v[i], "\t4321\t4321");
		worker_slices += strncmp(r.v[i], "thread_slice", 12) == 0 &&
				 strstr(r.v[i], "\t4400\t4321");
		counters += strncmp(r.v[i], "counter\t", 8) == 0;
		named += strcmp(r.v[i], "process\t4321\t\"PhotoApp\"") == 0 ||
			 strcmp(r.v[i], "thread_name\t4400\t4321\t\"image-loader\"") == 0;
	}
	cr_expect_eq(main_slices, 36);
	cr_expect_eq(worker_slices, 24);
	cr_expect_eq(counters, 16, "4 memory samples and 12 fps samples");
	cr_expect_eq(named, 2);
	rows_free(&r);
	unlink(out);
}

Test(convert, json_proto_json_proto_round_trip_keeps_every_row)
{
	static const char *cases[] = {
		"chrome_array", "chrome_counters", "chrome_flows",
		"chrome_x_events", "chrome_object_ns", "text_sample",
		"async_text", "metadata_text", "equal_timestamps_text",
		"bin_instants_counters", "unmatched_begin_end_text",
	};
	char root[PATH_MAX];
	ptw_test_corpus_dir_or_skip(root, sizeof(root));
	size_t failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dir[PATH_MAX + 64], p1[256], p2[256], js[256];
		snprintf(dir, sizeof(dir), "%s/%s", root, cases[i]);
		ptw_test_tmp_path(p1, sizeof(p1), "rt1");
		ptw_test_tmp_path(p2, sizeof(p2), "rt2");
		ptw_test_tmp_path(js, sizeof(js), "rtjson");
		struct in a = {0};
		char *text = NULL;
		if (strncmp(cases[i], "chrome_", 7) == 0) {
			char f[PATH_MAX + 80];
			snprintf(f, sizeof(f), "%s/input.json", dir);
			a.json = text = slurp(f);
		} else {
			a.run_dir = dir;
			a.opt.mode = PTW_EMIT_XFORM;
		}
		convert(p1, &a, 1, NULL);
		FILE *f = fopen(js, "w");
		cr_assert(f);
		struct ptw_error err = {0};
		cr_assert_eq(ptw_cv_export_json(p1, f, &err), 0, "%s: %s",
			     cases[i], err.msg);
		cr_assert_eq(fclose(f), 0);
		char *back = slurp(js);
		struct in b = {.json = back};
		convert(p2, &b, 1, NULL);
		struct rows r1 = {0}, r2 = {0};
		rows_of(p1, &r1);
		rows_of(p2, &r2);
		if (!rows_equal(cases[i], &r1, &r2))
			failed++;
		cr_expect_gt(r1.n, 0);
		rows_free(&r1);
		rows_free(&r2);
		free(back);
		free(text);
		unlink(p1);
		unlink(p2);
		unlink(js);
	}
	cr_assert_eq(failed, 0, "%zu round trips lost rows (see stderr)", failed);
}

/* One descriptor per async cookie; trace_processor merges same-name
 * sibling tracks (track_compressor.cc), so sequential ids end up on one
 * track, as they do in its JSON import. */
Test(convert, async_sequential_ids_share_one_trace_processor_track)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "async");
	size_t n = 2000, cap = n * 160 + 16;
	char *j = malloc(cap);
	cr_assert(j);
	size_t len = (size_t)snprintf(j, cap, "[");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(j + len, cap - len,
			"%s{\"name\":\"op\",\"ph\":\"b\",\"id\":%zu,\"pid\":1,\"ts\":%zu},"
			"{\"name\":\"op\",\"ph\":\"e\",\"id\":%zu,\"pid\":1,\"ts\":%zu}",
			i ? "," : "", i, 10 * i, i, 10 * i + 5);
	snprintf(j + len, cap - len, "]");
	struct in in[1] = {{.json = j}};
	convert(out, in, 1, NULL);
	struct ptw_trace *t = ptw_test_load_or_fail(out);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	size_t slices = 0;
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		cr_expect_eq(s->tp_track, m->slices[0].tp_track);
		cr_expect_str_eq(s->track_name, "op");
		cr_expect_eq(s->depth, 0);
		slices += s->dur == 5000;
	}
	cr_expect_eq(slices, n);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	free(j);
	unlink(out);
}

/* ---- the ptw-convert command ------------------------------------------- */

/* The built ptw-convert next to this test binary; skips the test if it
 * is not built. */
static void tool_path(char *buf, size_t len)
{
	if (ptw_test_bin(buf, len, "ptw-convert") != 0)
		cr_skip_test("ptw-convert not built");
}

static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int count_cb(void *ctx, const struct ptw_cv_event *ev,
		    struct ptw_error *err)
{
	(void)ev;
	(void)err;
	(*(size_t *)ctx)++;
	return 0;
}

Test(convert, command_line_outputs_keep_going_stats_stdin_and_to_json)
{
	char tool[PATH_MAX], root[PATH_MAX];
	tool_path(tool, sizeof(tool));
	ptw_test_corpus_dir_or_skip(root, sizeof(root));
	char d[] = "/tmp/ptw-cli-XXXXXX";
	cr_assert(mkdtemp(d));
	/* default output name: the input without its extension */
	cr_assert_eq(sh("cp -r '%s/text_sample' '%s/run' && cp '%s/chrome_array/input.json' "
			"'%s/a.json' && chmod -R u+w '%s'", root, d, root, d, d), 0);
	cr_assert_eq(sh("'%s' -q '%s/run/' && test -s '%s/run.pftrace'", tool, d, d), 0);
	cr_assert_eq(sh("'%s' -q '%s/a.json' && test -s '%s/a.pftrace'", tool, d, d), 0);
	/* stdin needs -o; --stats prints counts */
	cr_assert_neq(sh("'%s' -q - < '%s/a.json' 2>/dev/null", tool, d), 0);
	cr_assert_eq(sh("'%s' -q -s -o '%s/stdin.pftrace' - < '%s/a.json' 2>'%s/stats' "
			"&& grep -q '^events_read ' '%s/stats' && grep -q '^bytes_out ' '%s/stats'",
			tool, d, d, d, d, d), 0);
	/* a bad input: without -k nothing is written; with -k the good
	 * input is converted and the status is still 1 */
	cr_assert_eq(sh("printf '{\"name\":\"x\",,\\n' > '%s/bad.appletrace'", d), 0);
	cr_assert_eq(sh("'%s' -q -o '%s/k.pftrace' '%s/a.json' '%s/bad.appletrace' "
			"2>/dev/null", tool, d, d, d), 1);
	cr_assert_neq(sh("ls '%s' | grep -q '^k.pftrace'", d), 0, "output left");
	cr_assert_eq(sh("'%s' -q -k -o '%s/k.pftrace' '%s/a.json' '%s/bad.appletrace' "
			"2>'%s/err'", tool, d, d, d, d), 1);
	cr_assert_eq(sh("test -s '%s/k.pftrace' && grep -q 'bad.appletrace:1' '%s/err'",
			d, d), 0);
	/* -k inside a run: the failing fragment is reported, the others
	 * are converted */
	cr_assert_eq(sh("mkdir '%s/r2' && printf '{\"name\":\"a\",\"ph\":\"i\",\"pid\":1,"
			"\"ts\":1}\n' > '%s/r2/trace.appletrace' && printf '{bad\n' > "
			"'%s/r2/trace_1.appletrace' && cp '%s/r2/trace.appletrace' "
			"'%s/r2/trace_2.appletrace'", d, d, d, d, d), 0);
	cr_assert_eq(sh("'%s' -q -o '%s/r2.pftrace' '%s/r2' 2>/dev/null", tool, d, d), 1);
	cr_assert_neq(sh("test -e '%s/r2.pftrace'", d), 0);
	cr_assert_eq(sh("'%s' -q -k -o '%s/r2.pftrace' '%s/r2' 2>'%s/err2'", tool, d, d,
			d), 1);
	cr_assert_eq(sh("test -s '%s/r2.pftrace' && grep -q 'r2/trace_1.appletrace:1' "
			"'%s/err2'", d, d), 0);
	/* bad option values are refused */
	cr_assert_eq(sh("'%s' --shift x '%s/a.json' 2>/dev/null", tool, d), 2);
	cr_assert_eq(sh("'%s' --remap-pid 0:1=2 '%s/a.json' 2>/dev/null", tool, d), 2);
	/* no events: said, and still a valid trace (see below) */
	cr_assert_eq(sh("printf '[]' > '%s/e.json' && '%s' -o '%s/e.pftrace' "
			"'%s/e.json' 2>'%s/err4' && grep -q 'no events to write' "
			"'%s/err4' && test -s '%s/e.pftrace'", d, tool, d, d, d,
			d, d), 0);
	/* an option for an input that is not there */
	cr_assert_eq(sh("'%s' --shift 2:5 '%s/a.json' 2>'%s/err3'", tool, d, d), 2);
	cr_assert_eq(sh("grep -q 'names input 2, but there is 1 input' "
			"'%s/err3'", d), 0);
	/* --to-json writes Chrome JSON that reads back */
	cr_assert_eq(sh("'%s' --to-json -o '%s/back.json' '%s/a.pftrace'", tool, d, d), 0);
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/back.json", d);
	size_t n, events = 0;
	uint8_t *text = ptw_test_read_file_or_fail(p, &n);
	struct ptw_error err = {0};
	cr_assert_eq(ptw_cv_json_read_mem(text, n, NULL, count_cb, &events, NULL,
					  &err), 0, "%s", err.msg);
	cr_assert_gt(events, 10);
	free(text);
	cr_assert_eq(sh("rm -rf '%s'", d), 0);
}

/* ---- X-form ordering, fed event by event ------------------------------- */

static void feed(struct ptw_emit *em, char ph, const char *name, uint32_t tid,
		 int64_t ts_us)
{
	struct ptw_cv_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.ph = ph;
	ev.name.p = name;
	ev.name.n = strlen(name);
	ev.cat.p = "c";
	ev.cat.n = 1;
	ev.pid = 9;
	ev.tid = tid;
	ev.ts_ns = ts_us * 1000;
	ev.flags = PTW_CV_HAS_PID | PTW_CV_HAS_TID | PTW_CV_HAS_TS;
	if (ph == 'i')
		ev.scope = 't';
	struct ptw_error err = {0};
	cr_assert_eq(ptw_emit_event(em, &ev, &err), 0, "%s", err.msg);
}

struct xform_run {
	char out[256];
	struct ptw_writer *w;
	struct ptw_emit *em;
};

static void xform_open_held(struct xform_run *x, uint32_t max_held)
{
	struct ptw_error err = {0};
	ptw_test_tmp_path(x->out, sizeof(x->out), "xform");
	x->w = ptw_writer_open(x->out, NULL, &err);
	cr_assert(x->w, "%s", err.msg);
	x->em = ptw_emit_create(x->w, &err);
	cr_assert(x->em);
	struct ptw_emit_input in = {.mode = PTW_EMIT_XFORM,
				    .max_held = max_held};
	cr_assert_eq(ptw_emit_begin_input(x->em, &in, &err), 0);
}

static void xform_open(struct xform_run *x)
{
	xform_open_held(x, 0);
}

static void xform_close(struct xform_run *x, struct ptw_emit_stats *st)
{
	struct ptw_error err = {0};
	cr_assert_eq(ptw_emit_end_input(x->em, &err), 0, "%s", err.msg);
	cr_assert_eq(ptw_emit_finish(x->em, &err), 0, "%s", err.msg);
	if (st)
		ptw_emit_get_stats(x->em, st);
	ptw_emit_destroy(x->em);
	cr_assert_eq(ptw_writer_close(x->w, &err), 0, "%s", err.msg);
}

Test(convert, xform_instant_at_a_begin_is_inside_unless_the_b_never_ends)
{
	struct xform_run x;
	xform_open(&x);
	feed(x.em, 'B', "closed", 1, 100);
	feed(x.em, 'i', "in", 1, 100);
	feed(x.em, 'E', "closed", 1, 110);
	feed(x.em, 'B', "open", 2, 100);
	feed(x.em, 'i', "before", 2, 100);
	feed(x.em, 'i', "later", 2, 105);
	feed(x.em, 'B', "p", 3, 200); /* same ts and dur: E order decides */
	feed(x.em, 'B', "q", 3, 200);
	feed(x.em, 'E', "q", 3, 210);
	feed(x.em, 'E', "p", 3, 210);
	feed(x.em, 'E', "orphan", 3, 220);
	xform_close(&x, NULL);
	static const char *const want[] = {
		"process\t9\tnull",
		"thread_slice\t100000\t10000\t\"closed\"\t\"c\"\t0\t1\t9",
		"thread_instant\t100000\t\"in\"\t\"c\"\t1\t1\t9",
		"thread_instant\t100000\t\"before\"\t\"c\"\t0\t2\t9",
		"thread_slice\t100000\t-1\t\"open\"\t\"c\"\t0\t2\t9",
		"thread_instant\t105000\t\"later\"\t\"c\"\t1\t2\t9",
		"thread_slice\t200000\t10000\t\"q\"\t\"c\"\t0\t3\t9",
		"thread_slice\t200000\t10000\t\"p\"\t\"c\"\t1\t3\t9",
	};
	expect_rows(x.out, want, sizeof(want) / sizeof(want[0]));
	unlink(x.out);
}

Test(convert, xform_queue_is_bounded_when_an_open_b_waits)
{
	struct xform_run x;
	xform_open_held(&x, 1000);
	feed(x.em, 'B', "main", 1, 0);
	feed(x.em, 'i', "start", 1, 0);
	size_t n = 3000;
	for (size_t i = 1; i <= n; i++)
		feed(x.em, 'i', "tick", 1, (int64_t)i);
	struct ptw_emit_stats st;
	xform_close(&x, &st);
	cr_expect_eq(st.forced_releases, 1);
	cr_expect_leq(st.max_queue, 1002);
	/* released as if "main" ends later: the instants nest inside it */
	struct ptw_trace *t = ptw_test_load_or_fail(x.out);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	const struct ptw_tp_slice *s = ptw_test_find_slice(m, "start", 0);
	cr_assert(s);
	cr_expect_eq(s->depth, 1);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(x.out);
}

Test(convert, xform_pairs_per_raw_tid_so_tid_0_and_tid_pid_stay_apart)
{
	struct xform_run x;
	xform_open(&x);
	feed(x.em, 'B', "zero", 0, 300); /* tid 0: shown as tid 9 */
	feed(x.em, 'E', "nine", 9, 310); /* tid 9 has no open B */
	feed(x.em, 'B', "inner", 0, 320);
	feed(x.em, 'E', "inner", 0, 330);
	xform_close(&x, NULL);
	static const char *const want[] = {
		"process\t9\tnull",
		"thread_slice\t300000\t-1\t\"zero\"\t\"c\"\t0\t9\t9",
		"thread_slice\t320000\t10000\t\"inner\"\t\"c\"\t1\t9\t9",
	};
	expect_rows(x.out, want, sizeof(want) / sizeof(want[0]));
	unlink(x.out);
}

/* ---- trace_processor's rules for ids given as strings ------------------- */

Test(convert, string_pid_and_tid_become_numbers_named_by_the_string)
{
	/* trace_processor interns a string pid/tid and uses the string as
	 * the process / thread name; the same string is the same number for
	 * pids and tids; a string tid is never replaced by the pid; a later
	 * M event renames. Numbers are ours: 0x7F000000 + 1, + 2, ... */
	static const char j[] =
		"[{\"name\":\"a\",\"ph\":\"X\",\"pid\":\"browser\",\"tid\":\"io\",\"ts\":1,\"dur\":2},"
		"{\"name\":\"b\",\"ph\":\"X\",\"pid\":\"browser\",\"tid\":\"browser\",\"ts\":1,\"dur\":1},"
		"{\"name\":\"c\",\"ph\":\"i\",\"pid\":7,\"tid\":\"io\",\"ts\":2},"
		"{\"name\":\"d\",\"ph\":\"X\",\"pid\":\"gpu\",\"ts\":3,\"dur\":1},"
		"{\"name\":\"gone\",\"ph\":\"X\",\"pid\":\"nots\",\"tid\":1},"
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":\"io\",\"args\":{\"name\":\"io-7\"}}]";
	static const char *const want[] = {
		"process\t2130706433\t\"browser\"",
		"process\t7\tnull",
		"process\t2130706435\t\"gpu\"",
		"thread_name\t2130706434\t2130706433\t\"io\"",
		"thread_name\t2130706433\t2130706433\t\"browser\"",
		"thread_name\t2130706434\t7\t\"io-7\"",
		"thread_slice\t1000\t2000\t\"a\"\tnull\t0\t2130706434\t2130706433",
		"thread_slice\t1000\t1000\t\"b\"\tnull\t0\t2130706433\t2130706433",
		"thread_instant\t2000\t\"c\"\tnull\t0\t2130706434\t7",
		"thread_slice\t3000\t1000\t\"d\"\tnull\t0\t2130706435\t2130706435",
	};
	EXPECT_JSON_ROWS("strpid", j, want);
}

Test(convert, v1_flow_ids_given_as_strings_are_hex_numbers)
{
	/* "0x5", "0x05" and "5" are one flow (base 16, as trace_processor's
	 * CStringToUInt64(s, 16)); "0x10" is 16, not the number 10; "zz"
	 * is no id at all (flow_invalid_id). */
	static const char j[] =
		"[{\"name\":\"src\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":4},"
		"{\"name\":\"f\",\"cat\":\"c\",\"ph\":\"s\",\"id\":\"0x5\",\"pid\":1,\"tid\":1,\"ts\":2},"
		"{\"name\":\"mid\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":6,\"dur\":4},"
		"{\"name\":\"f\",\"cat\":\"c\",\"ph\":\"t\",\"id\":\"0x05\",\"pid\":1,\"tid\":2,\"ts\":7},"
		"{\"name\":\"dst\",\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":11,\"dur\":4},"
		"{\"name\":\"f\",\"cat\":\"c\",\"ph\":\"f\",\"bp\":\"e\",\"id\":\"5\",\"pid\":1,\"tid\":3,\"ts\":12},"
		"{\"name\":\"s2\",\"ph\":\"X\",\"pid\":1,\"tid\":4,\"ts\":1,\"dur\":4},"
		"{\"name\":\"g\",\"ph\":\"s\",\"id\":10,\"pid\":1,\"tid\":4,\"ts\":2},"
		"{\"name\":\"d2\",\"ph\":\"X\",\"pid\":1,\"tid\":5,\"ts\":11,\"dur\":4},"
		"{\"name\":\"g\",\"ph\":\"f\",\"bp\":\"e\",\"id\":\"0x10\",\"pid\":1,\"tid\":5,\"ts\":12},"
		"{\"name\":\"s3\",\"ph\":\"X\",\"pid\":1,\"tid\":6,\"ts\":1,\"dur\":4},"
		"{\"name\":\"h\",\"ph\":\"s\",\"id\":\"zz\",\"pid\":1,\"tid\":6,\"ts\":2},"
		"{\"name\":\"d3\",\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":11,\"dur\":4},"
		"{\"name\":\"h\",\"ph\":\"f\",\"bp\":\"e\",\"id\":\"zz\",\"pid\":1,\"tid\":7,\"ts\":12}]";
	static const char *const want[] = {
		"process\t1\tnull",
		"thread_slice\t1000\t4000\t\"src\"\tnull\t0\t1\t1",
		"thread_slice\t6000\t4000\t\"mid\"\tnull\t0\t2\t1",
		"thread_slice\t11000\t4000\t\"dst\"\tnull\t0\t3\t1",
		"thread_slice\t1000\t4000\t\"s2\"\tnull\t0\t4\t1",
		"thread_slice\t11000\t4000\t\"d2\"\tnull\t0\t5\t1",
		"thread_slice\t1000\t4000\t\"s3\"\tnull\t0\t6\t1",
		"thread_slice\t11000\t4000\t\"d3\"\tnull\t0\t7\t1",
		"flow\t1000\t\"src\"\t6000\t\"mid\"",
		"flow\t6000\t\"mid\"\t11000\t\"dst\"",
	};
	EXPECT_JSON_ROWS("flowhex", j, want);
}

Test(convert, v2_bind_id_strings_are_hex_and_numbers_are_numbers)
{
	static const char j[] =
		"[{\"name\":\"a\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"bind_id\":\"0x1f\",\"flow_out\":true},"
		"{\"name\":\"b\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":3,\"dur\":1,\"bind_id\":31,\"flow_in\":true},"
		"{\"name\":\"c\",\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":1,\"dur\":1,\"bind_id\":\"12\",\"flow_out\":true},"
		"{\"name\":\"d\",\"ph\":\"X\",\"pid\":1,\"tid\":4,\"ts\":3,\"dur\":1,\"bind_id\":12,\"flow_in\":true},"
		"{\"name\":\"e\",\"ph\":\"X\",\"pid\":1,\"tid\":4,\"ts\":5,\"dur\":1,\"bind_id\":18,\"flow_in\":true}]";
	/* "0x1f" = 31 links a to b; "12" is 0x12 = 18: c links to e, not d */
	static const char *const want[] = {
		"process\t1\tnull",
		"thread_slice\t1000\t1000\t\"a\"\tnull\t0\t1\t1",
		"thread_slice\t3000\t1000\t\"b\"\tnull\t0\t2\t1",
		"thread_slice\t1000\t1000\t\"c\"\tnull\t0\t3\t1",
		"thread_slice\t3000\t1000\t\"d\"\tnull\t0\t4\t1",
		"thread_slice\t5000\t1000\t\"e\"\tnull\t0\t4\t1",
		"flow\t1000\t\"a\"\t3000\t\"b\"",
		"flow\t1000\t\"c\"\t5000\t\"e\"",
	};
	EXPECT_JSON_ROWS("bindhex", j, want);
}

/* ---- stable name store ---------------------------------------------------- */

Test(convert, names_colliding_in_the_cache_or_with_nul_keep_their_text)
{
	/* Same length and same first and last 8 bytes: one cache slot, so
	 * they evict each other; a name with a NUL is cut there and copied
	 * (never stored); args ride along with stored names. */
	static const char j[] =
		"[{\"name\":\"prefix__A__suffix_\",\"cat\":\"k\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
		"{\"name\":\"prefix__B__suffix_\",\"cat\":\"k\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1,\"args\":{\"v\":1}},"
		"{\"name\":\"prefix__A__suffix_\",\"cat\":\"k\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1},"
		"{\"name\":\"prefix__B__suffix_\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":7,\"dur\":1},"
		"{\"name\":\"nul\\u0000tail\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":9,\"dur\":1},"
		"{\"name\":\"\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":11,\"dur\":1}]";
	static const char *const want[] = {
		"process\t1\tnull",
		"thread_slice\t1000\t1000\t\"prefix__A__suffix_\"\t\"k\"\t0\t1\t1",
		"thread_slice\t3000\t1000\t\"prefix__B__suffix_\"\t\"k\"\t0\t1\t1",
		"thread_slice\t5000\t1000\t\"prefix__A__suffix_\"\t\"k\"\t0\t1\t1",
		"thread_slice\t7000\t1000\t\"prefix__B__suffix_\"\tnull\t0\t1\t1",
		"thread_slice\t9000\t1000\t\"nul\"\tnull\t0\t1\t1",
		"thread_slice\t11000\t1000\t\"[No name]\"\tnull\t0\t1\t1",
	};
	EXPECT_JSON_ROWS("strs", j, want);
}

Test(convert, names_beyond_the_store_limit_are_still_written)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "strs-full");
	enum { N = 70000 }; /* more than PTW_EM_STRS_MAX distinct names */
	size_t cap = (size_t)N * 80 + 16, len = 0;
	char *j = malloc(cap);
	cr_assert(j);
	j[len++] = '[';
	for (int i = 0; i < N; i++)
		len += (size_t)snprintf(j + len, cap - len,
					"%s{\"name\":\"n%d\",\"ph\":\"X\",\"pid\":1,"
					"\"tid\":1,\"ts\":%d,\"dur\":1}",
					i ? "," : "", i % (N - 10), 2 * i + 1);
	j[len++] = ']';
	j[len] = '\0';
	struct in in[1] = {{.json = j}};
	convert(out, in, 1, NULL);
	struct rows got = {0}, exp = {0};
	rows_of(out, &got);
	char line[128];
	rows_add(&exp, "process\t1\tnull");
	for (int i = 0; i < N; i++) {
		snprintf(line, sizeof(line),
			 "thread_slice\t%d\t1000\t\"n%d\"\tnull\t0\t1\t1",
			 (2 * i + 1) * 1000, i % (N - 10));
		rows_add(&exp, line);
	}
	cr_expect(rows_equal(out, &exp, &got), "rows differ (see stderr)");
	rows_free(&got);
	rows_free(&exp);
	free(j);
	unlink(out);
}

/* The first descriptor of the process (pid) or thread (tid != 0) track. */
static const struct ptw_trace_track *pt_track(const struct ptw_trace *t,
					      int32_t pid, int64_t tid)
{
	size_t n;
	const struct ptw_trace_track *tr = ptw_trace_tracks(t, &n);
	for (size_t i = 0; i < n; i++) {
		if (tid == 0 && tr[i].kind == PTW_TRACE_TRACK_PROCESS &&
		    tr[i].pid == pid)
			return &tr[i];
		if (tid != 0 && tr[i].kind == PTW_TRACE_TRACK_THREAD &&
		    tr[i].pid == pid && tr[i].tid == tid)
			return &tr[i];
	}
	cr_assert_fail("no track for pid %d tid %lld", pid, (long long)tid);
	return NULL;
}

Test(convert, sort_indexes_become_ranks_of_process_and_thread_descriptors)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "sortidx");
	/* Ranks are int32 (7.9 -> 7, 2^32 + 3 -> 3); the last one wins, also
	 * after the track exists (pid 2's descriptor is still queued when
	 * the final M event comes); pid 3 has none. */
	static const char j[] =
		"[{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"sort_index\":-2}},"
		"{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":2,\"tid\":2,\"args\":{\"sort_index\":5}},"
		"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":3,\"args\":{\"sort_index\":7.9}},"
		"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"sort_index\":4294967299}},"
		"{\"name\":\"a\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
		"{\"name\":\"b\",\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":1,\"dur\":1},"
		"{\"name\":\"c\",\"ph\":\"X\",\"pid\":2,\"tid\":2,\"ts\":2,\"dur\":1},"
		"{\"name\":\"d\",\"ph\":\"X\",\"pid\":3,\"tid\":3,\"ts\":2,\"dur\":1},"
		"{\"name\":\"c\",\"ph\":\"X\",\"pid\":2,\"tid\":2,\"ts\":9,\"dur\":1},"
		"{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":2,\"tid\":2,\"args\":{\"sort_index\":6}}]";
	struct in in[1] = {{.json = j}};
	convert(out, in, 1, NULL);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(
		out, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
	const struct {
		int32_t pid;
		int64_t tid;
		int has;
		int32_t rank;
	} want[] = {{1, 0, 1, -2}, {2, 0, 1, 6}, {3, 0, 0, 0},
		    {1, 3, 1, 7},  {1, 1, 1, 3}, {2, 2, 0, 0}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct ptw_trace_track *tr = pt_track(t, want[i].pid,
							    want[i].tid);
		cr_expect_eq(tr->has_rank, want[i].has, "%zu", i);
		if (want[i].has)
			cr_expect_eq(tr->rank, want[i].rank, "%zu: %d", i, tr->rank);
	}
	/* the default track's descriptor (process/thread_ordering; the
	 * writer tests check its fields) */
	cr_expect_not_null(ptw_trace_find_track(t, 0));
	ptw_trace_free(t);
	unlink(out);
}

/* Converts JSON 'j' with tiny writer batches (every descriptor is written
 * with the first event after it), optionally after a first pass for its
 * sort indexes; returns the checked trace and the emitter's stats. */
static struct ptw_trace *convert_tiny_batches(const char *j, int first_pass,
					      const char *out,
					      struct ptw_emit_stats *st)
{
	struct ptw_error err = {0};
	struct ptw_writer_options o = {.flush_bytes = 1};
	struct ptw_writer *w = ptw_writer_open(out, &o, &err);
	cr_assert(w, "%s", err.msg);
	struct ptw_emit *em = ptw_emit_create(w, &err);
	cr_assert(em, "%s", err.msg);
	struct ptw_emit_input opt = {0};
	cr_assert_eq(ptw_emit_begin_input(em, &opt, &err), 0);
	if (first_pass)
		cr_assert_eq(ptw_cv_json_read_mem(j, strlen(j), NULL,
						  ptw_emit_sort_index_event,
						  em, NULL, &err), 0, "%s",
			     err.msg);
	cr_assert_eq(ptw_cv_json_read_mem(j, strlen(j), NULL, ptw_emit_event,
					  em, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(ptw_emit_end_input(em, &err), 0, "%s", err.msg);
	cr_assert_eq(ptw_emit_finish(em, &err), 0, "%s", err.msg);
	ptw_emit_get_stats(em, st);
	ptw_emit_destroy(em);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	return ptw_test_load_checked_or_fail(out, PTW_CHECK_ALLOW_OPEN |
						  PTW_CHECK_COMPLETE);
}

static const char sort_last[] =
	"[{\"name\":\"a\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
	"{\"name\":\"a\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1},"
	"{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"sort_index\":4}},"
	"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"sort_index\":-3}}]";

Test(convert, sort_index_after_the_descriptor_was_written_is_counted)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "sortlate");
	struct ptw_emit_stats st;
	struct ptw_trace *t = convert_tiny_batches(sort_last, 0, out, &st);
	cr_expect_eq(st.sort_index_late, 2);
	cr_expect_not(pt_track(t, 1, 0)->has_rank);
	cr_expect_not(pt_track(t, 1, 1)->has_rank);
	ptw_trace_free(t);
	unlink(out);
}

Test(convert, a_first_pass_applies_sort_indexes_that_come_last)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "sortpass");
	struct ptw_emit_stats st;
	struct ptw_trace *t = convert_tiny_batches(sort_last, 1, out, &st);
	cr_expect_eq(st.sort_index_late, 0);
	cr_expect_eq(st.events_in, 4, "the first pass counts no events");
	cr_expect(pt_track(t, 1, 0)->has_rank);
	cr_expect_eq(pt_track(t, 1, 0)->rank, 4);
	cr_expect(pt_track(t, 1, 1)->has_rank);
	cr_expect_eq(pt_track(t, 1, 1)->rank, -3);
	ptw_trace_free(t);
	unlink(out);
}

/* String pids and tids: the first pass numbers them as the conversion
 * will (first string seen, first number), so the ranks land on the
 * tracks the events use. */
Test(convert, a_first_pass_applies_sort_indexes_of_string_pids)
{
	static const char j[] =
		"[{\"name\":\"a\",\"ph\":\"X\",\"pid\":\"gpu\",\"tid\":\"main\",\"ts\":1,\"dur\":1},"
		"{\"name\":\"a\",\"ph\":\"X\",\"pid\":\"gpu\",\"tid\":\"main\",\"ts\":5,\"dur\":1},"
		"{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":\"gpu\",\"tid\":\"main\",\"args\":{\"sort_index\":4}},"
		"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":\"gpu\",\"tid\":\"main\",\"args\":{\"sort_index\":-3}}]";
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "sortstr");
	for (int pass = 0; pass < 2; pass++) {
		struct ptw_emit_stats st;
		struct ptw_trace *t = convert_tiny_batches(j, pass, out, &st);
		/* "gpu" is the first string (number 1), "main" the second */
		uint32_t pid = 0x7F000001u, tid = 0x7F000002u;
		cr_expect_eq(st.sort_index_late, pass ? 0 : 2);
		cr_assert(pt_track(t, pid, 0) && pt_track(t, pid, tid));
		cr_expect_eq(pt_track(t, pid, 0)->has_rank, pass);
		cr_expect_eq(pt_track(t, pid, tid)->has_rank, pass);
		if (pass) {
			cr_expect_eq(pt_track(t, pid, 0)->rank, 4);
			cr_expect_eq(pt_track(t, pid, tid)->rank, -3);
		}
		ptw_trace_free(t);
		unlink(out);
	}
}

/* An output that exists and is not a regular file (a FIFO here, /dev/null
 * for users) is written in place, never renamed over; "-" is standard
 * output. The FIFO checks come first: if they fail, /dev/full is not
 * touched (renaming over it as root would replace the device). */
Test(convert, devices_fifos_and_stdout_are_written_in_place)
{
	char tool[PATH_MAX];
	tool_path(tool, sizeof(tool));
	char d[] = "/tmp/ptw-outdev-XXXXXX";
	cr_assert(mkdtemp(d));
	static const char j[] =
		"[{\"name\":\"a\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}]";
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/in.json", d);
	ptw_test_write_file_or_fail(p, j, sizeof(j) - 1);
	/* proto and JSON output into a FIFO read by cat */
	cr_assert_eq(sh("cd '%s' && mkfifo fifo && { timeout 20 cat fifo > got.pftrace & "
			"'%s' -q -o fifo in.json; r=$?; wait; exit $r; }", d,
			tool), 0);
	cr_assert_eq(sh("test -p '%s/fifo' && ! ls '%s' | grep -q tmp-", d, d),
		     0, "the FIFO is still a FIFO, no temporary file left");
	cr_assert_eq(sh("cd '%s' && { timeout 20 cat fifo > got.json & '%s' --to-json "
			"-o fifo got.pftrace; r=$?; wait; exit $r; } && "
			"test -p fifo && grep -q '\"name\":\"a\"' got.json", d,
			tool), 0);
	cr_assert_eq(sh("cd '%s' && '%s' -q -o - in.json > out.pftrace && "
			"cmp -s out.pftrace got.pftrace", d, tool), 0,
		     "stdout gets the same bytes");
	snprintf(p, sizeof(p), "%s/got.pftrace", d);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(
		p, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
	size_t n;
	ptw_trace_events(t, &n);
	cr_expect_eq(n, 1); /* the X: one complete event */
	ptw_trace_free(t);
	/* an output that is one of the inputs is refused, input untouched */
	cr_expect_eq(sh("cd '%s' && cp in.json keep.json && "
			"! '%s' -q -o in.json got.pftrace in.json 2>err && "
			"grep -q 'also input 2' err && cmp -s in.json keep.json && "
			"! '%s' --to-json -o got.pftrace got.pftrace 2>err && "
			"grep -q 'also input 1' err && cmp -s got.pftrace "
			"out.pftrace", d, tool, tool), 0);
	/* a full device: an error naming it, and the device stays */
	cr_assert_eq(sh("test -c /dev/full"), 0);
	cr_expect_eq(sh("cd '%s' && ! '%s' -o /dev/full in.json 2>err && "
			"grep -q '/dev/full: .*No space' err && test -c /dev/full",
			d, tool), 0);
	cr_assert_eq(sh("rm -rf '%s'", d), 0);
}

/* ptw-convert reads a JSON file's sort indexes first (plain or gzip),
 * even when they come after a whole batch of output; from standard input
 * it cannot, and says so. */
Test(convert, command_line_applies_sort_indexes_written_last)
{
	char tool[PATH_MAX];
	tool_path(tool, sizeof(tool));
	char d[] = "/tmp/ptw-sortcli-XXXXXX";
	cr_assert(mkdtemp(d));
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/late.json", d);
	FILE *f = fopen(p, "w");
	cr_assert(f);
	fputs("[", f);
	for (int i = 0; i < 60000; i++) /* well over one 256 KiB batch */
		fprintf(f, "{\"name\":\"s%d\",\"ph\":\"X\",\"pid\":1,\"tid\":2,"
			"\"ts\":%d,\"dur\":1},\n", i % 50, 2 * i);
	fputs("{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,"
	      "\"tid\":2,\"args\":{\"sort_index\":9}}]\n", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(sh("'%s' -q -o '%s/a.pftrace' '%s'", tool, d, p), 0);
	/* standard input: the reorder window brings the M event (no ts)
	 * first when it holds the whole file, else the rank comes late */
	cr_assert_eq(sh("'%s' -o '%s/b.pftrace' --reorder-window 1000 - < '%s' "
			"2>'%s/err' && grep -q 'sort index' '%s/err'", tool, d,
			p, d, d), 0);
	cr_assert_eq(sh("'%s' -o '%s/d.pftrace' - < '%s' 2>'%s/err' && "
			"! grep -q 'sort index' '%s/err'", tool, d, p, d, d), 0);
	cr_assert_eq(sh("gzip -c '%s' > '%s/late.json.gz' && '%s' -o "
			"'%s/c.pftrace' '%s/late.json.gz' 2>'%s/err' && "
			"! grep -q 'sort index' '%s/err'", p, d, tool, d, d, d,
			d), 0);
	/* A named pipe is read once: no first pass (it used to read the
	 * pipe empty, then wait for a second writer forever). */
	cr_assert_eq(sh("mkfifo '%s/fifo' && (cat '%s' > '%s/fifo' &) && "
			"timeout 60 '%s' -o '%s/f.pftrace' --reorder-window 9 "
			"'%s/fifo' "
			"2>'%s/err' && grep -q 'sort index' '%s/err'", d, p, d,
			tool, d, d, d, d), 0);
	snprintf(p, sizeof(p), "%s/f.pftrace", d);
	struct ptw_trace *tf = ptw_test_load_checked_or_fail(
		p, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
	size_t nf;
	ptw_trace_events(tf, &nf);
	cr_expect_eq(nf, 60000, "every X event (one complete event each)");
	ptw_trace_free(tf);
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%c.pftrace", d, "acd"[i]);
		struct ptw_trace *t = ptw_test_load_checked_or_fail(
			p, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
		cr_expect(pt_track(t, 1, 2)->has_rank, "%s", p);
		cr_expect_eq(pt_track(t, 1, 2)->rank, 9, "%s", p);
		ptw_trace_free(t);
	}
	snprintf(p, sizeof(p), "%s/b.pftrace", d);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(
		p, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
	cr_expect_not(pt_track(t, 1, 2)->has_rank);
	ptw_trace_free(t);
	cr_assert_eq(sh("rm -rf '%s'", d), 0);
}

/* ---- issue 13: times, X without dur, the tokenizer stop, leniency,
 * inputs that are not Chrome JSON, --version ----------------------------- */

Test(convert, times_are_trace_processors_and_x_without_dur_is_dropped)
{
	static const char j[] =
		"[{\"ph\":\"X\",\"ts\":1850244461563845.0,\"dur\":1.5,\"pid\":1,"
		"\"tid\":2,\"name\":\"big\"},\n"
		"{\"ph\":\"X\",\"ts\":10,\"pid\":1,\"tid\":3,\"name\":\"nodur\"},\n"
		"{\"ph\":\"X\",\"ts\":\"20\",\"dur\":\"0.25\",\"pid\":1,\"tid\":2,"
		"\"name\":\"str\"},\n"
		"{\"ph\":\"X\",\"ts\":-5,\"dur\":1,\"pid\":1,\"tid\":2,\"name\":\"neg\"},\n"
		"{\"ts\":50,\"pid\":4,\"tid\":4,\"name\":\"nophase\"},\n"
		"{\"ph\":\"X\",\"ts\":30,\"dur\":\"bad\",\"pid\":1,\"tid\":2,"
		"\"name\":\"stop\"},\n"
		"{\"ph\":\"X\",\"ts\":40,\"dur\":1,\"pid\":1,\"tid\":2,\"name\":\"after\"}]";
	/* CoerceToTs: 1850244461563845.0 is integral -> (int64)d * 1000;
	 * "20" / "0.25" are strings holding one number; json_trace_parser.cc
	 * case 'X': event.dur == max() (no "dur") -> json_parser_failure, no
	 * slice; an event without "ph" is skipped by the tokenizer (no
	 * process 4); "dur":"bad" stops the tokenizer: neither "stop" nor
	 * "after" is imported (array form: the file still loads). A negative
	 * ts is dropped by the converter as before (not this test's rule). */
	static const char *const want[] = {
		"process\t1\tnull",
		"thread_slice\t1850244461563845000\t1500\t\"big\"\tnull\t0\t2\t1",
		"thread_slice\t20000\t250\t\"str\"\tnull\t0\t2\t1",
	};
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "x-nodur");
	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(out, NULL, &err);
	cr_assert(w, "%s", err.msg);
	struct ptw_emit *em = ptw_emit_create(w, &err);
	struct ptw_emit_input in = {.mode = PTW_EMIT_CHROME};
	struct ptw_cv_json_read_stats st;
	cr_assert_eq(ptw_emit_begin_input(em, &in, &err), 0);
	cr_assert_eq(ptw_cv_json_read_mem(j, strlen(j), NULL, ptw_emit_event, em,
					  &st, &err), 0, "%s", err.msg);
	cr_assert_eq(ptw_emit_end_input(em, &err), 0);
	cr_assert_eq(ptw_emit_finish(em, &err), 0);
	struct ptw_emit_stats es;
	ptw_emit_get_stats(em, &es);
	cr_assert_eq(es.x_without_dur, 1);
	cr_assert_eq(es.events_in, 5);
	cr_assert_eq(st.stopped, 1);
	cr_assert_eq(st.stop_line, 6);
	ptw_emit_destroy(em);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	expect_rows(out, want, sizeof(want) / sizeof(want[0]));
	unlink(out);
}

Test(convert, a_repaired_input_converts_to_its_strict_twins_rows)
{
	/* trailing commas in an event and in args, a raw TAB in a name, an
	 * unknown escape (dropped by UnescapeString), no comma between two
	 * events: trace_processor reads this as the strict text below */
	static const char lenient[] =
		"[{\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":2,\"name\":\"a\tb\",},\n"
		"{\"ph\":\"X\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":2,\"name\":\"\\q\","
		"\"args\":{\"k\":[1,],},}\n"
		"{\"ph\":\"E\",\"ts\":5,\"pid\":1,\"tid\":2,},]";
	static const char strict[] =
		"[{\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":2,\"name\":\"a\\tb\"},\n"
		"{\"ph\":\"X\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":2,\"name\":\"\","
		"\"args\":{\"k\":[1]}},\n"
		"{\"ph\":\"E\",\"ts\":5,\"pid\":1,\"tid\":2}]";
	static const char *const want[] = {
		"process\t1\tnull",
		"thread_slice\t1000\t4000\t\"a\\tb\"\tnull\t0\t2\t1",
		"thread_slice\t2000\t1000\t\"[No name]\"\tnull\t1\t2\t1",
	};
	EXPECT_JSON_ROWS("lenient", lenient, want);
	EXPECT_JSON_ROWS("strict", strict, want);
}

Test(convert, command_line_strict_not_chrome_stop_and_version)
{
	char tool[PATH_MAX];
	tool_path(tool, sizeof(tool));
	char d[] = "/tmp/ptw-cli13-XXXXXX";
	cr_assert(mkdtemp(d));
	/* --version: "ptw-convert VERSION", the header's string */
	cr_assert_eq(sh("test \"$('%s' --version)\" = 'ptw-convert " PTW_VERSION
			"'", tool), 0);
	char dump[PATH_MAX + 16];
	if (ptw_test_bin(dump, sizeof(dump), "ptw-dump") != 0)
		cr_skip_test("ptw-dump not built");
	cr_assert_eq(sh("test \"$('%s' --version)\" = 'ptw-dump " PTW_VERSION "'",
			dump), 0);
	char v[32];
	snprintf(v, sizeof(v), "%d.%d.%d", PTW_VERSION_MAJOR, PTW_VERSION_MINOR,
		 PTW_VERSION_PATCH);
	cr_assert_str_eq(v, PTW_VERSION);
	cr_assert_str_eq(ptw_version(), PTW_VERSION); /* the library's */
	/* a repaired input: converted, one summary warning, counted */
	cr_assert_eq(sh("printf '[{\"ph\":\"i\",\"ts\":1,\"pid\":1,},]' > '%s/l.json'",
			d), 0);
	cr_assert_eq(sh("'%s' -s -o '%s/l.pftrace' '%s/l.json' 2>'%s/err'", tool, d,
			d, d), 0);
	cr_assert_eq(sh("grep -q '^ptw-convert: warning: 2 lenient repairs: .*l.json:1: "
			"a trailing comma' '%s/err' && grep -q '^lenient_repairs 2$' "
			"'%s/err' && test -s '%s/l.pftrace'", d, d, d), 0);
	/* --strict: an error naming the place, no file */
	cr_assert_eq(sh("'%s' --strict -o '%s/s.pftrace' '%s/l.json' 2>'%s/err'",
			tool, d, d, d), 1);
	cr_assert_eq(sh("grep -q \"l.json:1:27 (byte 26): expected '\\\"' starting "
			"a member name\" '%s/err' && test ! -e '%s/s.pftrace'", d, d),
		     0);
	cr_assert_eq(sh("'%s' --help | grep -q -- '--strict'", tool), 0);
	/* not Chrome JSON: named, status 1, nothing left */
	cr_assert_eq(sh("printf '{\"meta\":{\"version\":24},\"threads\":[]}' > "
			"'%s/g.json'", d), 0);
	cr_assert_eq(sh("'%s' -o '%s/g.pftrace' '%s/g.json' 2>'%s/err'", tool, d, d,
			d), 1);
	cr_assert_eq(sh("grep -q 'g.json:1:1 (byte 0): not a Chrome JSON trace: "
			"Gecko profiler JSON' '%s/err' && ! ls '%s' | grep -q "
			"'^g.pftrace'", d, d), 0);
	cr_assert_eq(sh("printf '\"x\"' > '%s/s.json' && ! '%s' -o '%s/x.pftrace' "
			"'%s/s.json' 2>'%s/err' && grep -q 'a JSON string' '%s/err' "
			"&& ! ls '%s' | grep -q '^x.pftrace'", d, tool, d, d, d, d,
			d), 0);
	/* the tokenizer stop: a warning, counted, status 0 (a conversion
	 * with warnings); in the object form an error */
	cr_assert_eq(sh("printf '[{\"ph\":\"i\",\"ts\":1,\"pid\":1},\\n"
			"{\"ph\":\"X\",\"ts\":2,\"dur\":\"x\"},{}]' > '%s/t.json'", d),
		     0);
	cr_assert_eq(sh("'%s' -s -o '%s/t.pftrace' '%s/t.json' 2>'%s/err'", tool, d,
			d, d), 0);
	cr_assert_eq(sh("grep -q 'warning: .*t.json:2 (byte 28): \"dur\": \"x\" is "
			"not a number.*stops reading.*(31 bytes) were not converted' "
			"'%s/err' && grep -q '^json_stopped 1$' '%s/err' && grep -q "
			"'^events_read 1$' '%s/err'", d, d, d), 0);
	cr_assert_eq(sh("printf '{\"traceEvents\":[{\"ph\":\"X\",\"dur\":\"x\"}]}' > "
			"'%s/o.json' && ! '%s' -o '%s/o.pftrace' '%s/o.json' "
			"2>'%s/err' && grep -q 'JSON trace file is incomplete' "
			"'%s/err' && ! ls '%s' | grep -q '^o.pftrace'", d, tool, d,
			d, d, d, d), 0);
	/* an X without dur: one warning line, counted */
	cr_assert_eq(sh("printf '[{\"ph\":\"X\",\"ts\":1,\"pid\":1},{\"ph\":\"X\","
			"\"ts\":2,\"pid\":1}]' > '%s/x.json' && '%s' -s -o "
			"'%s/x.pftrace' '%s/x.json' 2>'%s/err' && test \"$(grep -c "
			"'without a \"dur\" were dropped' '%s/err')\" = 1 && grep -q "
			"'^dropped_x_without_dur 2$' '%s/err'", d, tool, d, d, d, d,
			d), 0);
	cr_assert_eq(sh("rm -rf '%s'", d), 0);
}

/* The built ptw-convert and a new scratch directory (template d). */
static void cli_begin(char *tool, size_t n, char *d)
{
	tool_path(tool, n);
	cr_assert(mkdtemp(d));
}

/* Events out of time order: a regular file takes a second pass through
 * the reorder window when the first finds them, standard input takes the
 * window at once; both give the same bytes, and the first pass's read
 * warnings are printed once. What the window cannot fix is warned. */
Test(convert, command_line_sorts_events_out_of_order_file_or_pipe)
{
	char tool[PATH_MAX];
	char d[] = "/tmp/ptw-cli24-XXXXXX";
	cli_begin(tool, sizeof(tool), d);
	cr_assert_eq(sh("printf '[{\"name\":\"A\",\"ph\":\"X\",\"ts\":10,\"dur\":50,"
			"\"pid\":1,\"tid\":2},{\"name\":\"B\",\"ph\":\"X\",\"ts\":40,"
			"\"dur\":50,\"pid\":1,\"tid\":2},{\"name\":\"C\",\"ph\":\"B\","
			"\"ts\":5,\"pid\":1,\"tid\":2},{\"name\":\"C\",\"ph\":\"E\","
			"\"ts\":95,\"pid\":1,\"tid\":2,}]' > '%s/u.json'", d), 0);
	cr_assert_eq(sh("'%s' -s -o '%s/f.pftrace' '%s/u.json' 2>'%s/err' && "
			"'%s' -o '%s/p.pftrace' - < '%s/u.json' 2>/dev/null && "
			"cmp '%s/f.pftrace' '%s/p.pftrace'", tool, d, d, d, tool, d,
			d, d, d), 0);
	cr_assert_eq(sh("grep -q '^out_of_order 0$' '%s/err' && test \"$(grep -c 'lenient "
			"repairs' '%s/err')\" = 1 && grep -q '^events_read 4$' "
			"'%s/err'", d, d, d), 0);
	/* a B never ended is counted as open (trace_processor: dur -1) */
	cr_assert_eq(sh("printf '[{\"name\":\"C\",\"ph\":\"B\",\"ts\":5,"
			"\"pid\":1,\"tid\":2}]' > '%s/o.json' && '%s' -s -o "
			"'%s/o.pftrace' '%s/o.json' 2>&1 | grep -q '^open_slices "
			"1$'", d, tool, d, d), 0);
	cr_assert_eq(sh("'%s' -s --reorder-window 1 -o '%s/w.pftrace' '%s/u.json' "
			"2>'%s/err' && grep -q '^out_of_order 1$' '%s/err' && grep -q "
			"'warning: 1 event(s) came more than the reorder window (1 "
			"events)' '%s/err'", tool, d, d, d, d, d), 0);
	cr_assert_eq(sh("rm -rf '%s'", d), 0);
}

/* [] or a file whose first event stops trace_processor's reading still
 * gives a valid trace (one clock snapshot), which ptw-dump --check and
 * trace_processor load (v58.2: thread 0 and process 0 only, as for the
 * JSON). */
Test(convert, inputs_without_events_give_a_valid_trace)
{
	char tool[PATH_MAX];
	char d[] = "/tmp/ptw-cli24e-XXXXXX";
	cli_begin(tool, sizeof(tool), d);
	char dump[PATH_MAX + 16];
	if (ptw_test_bin(dump, sizeof(dump), "ptw-dump") != 0)
		cr_skip_test("ptw-dump not built");
	cr_assert_eq(sh("printf '[]' > '%s/a.json' && printf '[{\"ph\":\"X\","
			"\"ts\":1,\"dur\":\"x\",\"pid\":1}]' > '%s/b.json' && printf "
			"'{\"traceEvents\":[]}' > '%s/c.json'", d, d, d), 0);
	for (char f = 'a'; f <= 'c'; f++) {
		cr_expect_eq(sh("'%s' -o '%s/%c.pftrace' '%s/%c.json' 2>'%s/err' "
				"&& test -s '%s/%c.pftrace' && grep -q 'no events "
				"to write: .*%c.pftrace is a trace without events'"
				" '%s/err' && '%s' --check '%s/%c.pftrace' "
				">/dev/null", tool, d, f, d, f, d, d, f, f, d,
				dump, d, f), 0, "%c", f);
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/%c.pftrace", d, f);
		struct ptw_trace *t = ptw_test_load_checked_or_fail(p, 0);
		size_t n;
		ptw_trace_events(t, &n);
		cr_expect_eq(n, 0);
		ptw_trace_tracks(t, &n);
		cr_expect_eq(n, 0);
		ptw_trace_free(t);
	}
	cr_assert_eq(sh("rm -rf '%s'", d), 0);
}

/* Events of a phase the converter does not write (trace_processor makes
 * no row of them either, only their process and thread) are counted per
 * phase and summed up in one warning, not dropped silently. */
Test(convert, unwritten_phases_are_counted_and_warned)
{
	char tool[PATH_MAX];
	char d[] = "/tmp/ptw-cli24q-XXXXXX";
	cli_begin(tool, sizeof(tool), d);
	cr_assert_eq(sh("printf '[{\"ph\":\"Q\",\"ts\":1,\"pid\":1,\"tid\":2},"
			"{\"ph\":\"Q\",\"ts\":1,\"pid\":1},{\"ph\":\"O\",\"ts\":1,"
			"\"pid\":1},{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,"
			"\"pid\":1}]' > '%s/q.json'", d), 0);
	cr_assert_eq(sh("'%s' -s -o '%s/q.pftrace' '%s/q.json' 2>'%s/err'", tool,
			d, d, d), 0);
	cr_assert_eq(sh("grep -q 'warning: 3 event(s) of a phase that is not "
			"converted were not written .*phase O (1), Q (2)' '%s/err'"
			" && grep -q '^unwritten_phase_Q 2$' '%s/err' && grep -q "
			"'^unwritten_phase_O 1$' '%s/err' && grep -q '^warnings 1$'"
			" '%s/err'", d, d, d, d), 0);
	cr_assert_eq(sh("rm -rf '%s'", d), 0);
}

/* Messages: a bad -o names the path the user gave (not the temporary
 * file); a bad option or value is one line saying what, then a pointer to
 * --help, not the whole help. */
Test(convert, command_line_mistakes_are_one_line)
{
	char tool[PATH_MAX];
	char d[] = "/tmp/ptw-cli24m-XXXXXX";
	cli_begin(tool, sizeof(tool), d);
	cr_assert_eq(sh("printf '[]' > '%s/a.json'", d), 0);
	cr_assert_eq(sh("'%s' -o '%s/no/x.pftrace' '%s/a.json' 2>'%s/err'", tool,
			d, d, d), 1);
	cr_assert_eq(sh("grep -q '^ptw-convert: %s/no/x.pftrace: cannot create: ' "
			"'%s/err' && ! grep -q tmp- '%s/err'", d, d, d), 0);
	char a[PATH_MAX + 16];
	snprintf(a, sizeof(a), "'%s/a.json'", d);
	const char *const bad[][2] = {{"--bogus", a}, {"--shift x", a},
				      {"-z12", a}, {"-q", ""},
				      {"--machine-id 0", a},
				      {"--machine-id 4294967296", a}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(sh("'%s' %s %s 2>'%s/err'; test $? = 2 && "
				"test $(wc -l < '%s/err') = 2 && tail -n1 '%s/err' "
				"| grep -qx \"Try 'ptw-convert --help' for more "
				"information.\"", tool, bad[i][0], bad[i][1], d, d,
				d), 0, "%s", bad[i][0]);
	}
	cr_assert_eq(sh("rm -rf '%s'", d), 0);
}
