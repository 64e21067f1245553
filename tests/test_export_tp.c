/* test_export_tp.c - what trace_processor shows for a protobuf trace, it
 * shows for that trace's `--to-json` export: the same slices (ts, dur,
 * name, category, depth, thread time, thread, process, child count), the
 * same flows (joined to their slices' ts and names), the same args (the
 * protobuf's debug.* as the JSON's args.*) and no error stats. Traces
 * from the writer API, the tracer and converted Chrome JSON (v1 and v2
 * flows, equal timestamps). Skipped when trace_processor_shell is not at
 * $PTW_SHARED_DIR/tp (or ../shared/tp).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "ptw/tracer.h"
#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "test_convert_json.h"

static void need_tp(void)
{
	if (!ptw_test_tp_shell())
		cr_skip_test("no trace_processor_shell (PTW_SHARED_DIR/tp)");
}

static char *query(const char *trace, const char *sql)
{
	return ptw_test_tp_query(trace, sql);
}

static const char *const k_tables[] = {
	"select s.ts, s.dur, s.name, s.category, s.depth, s.thread_ts, "
	"s.thread_dur, t.tid, p.pid, (select count(*) from slice c where "
	"c.parent_id = s.id) as kids from slice s left join thread_track tt "
	"on s.track_id = tt.id left join thread t using(utid) left join "
	"process p using(upid) order by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10",
	"select so.ts, so.name, si.ts, si.name from flow f join slice so on "
	"f.slice_out = so.id join slice si on f.slice_in = si.id "
	"order by 1, 2, 3, 4",
	"select s.ts, s.name, replace(a.flat_key, 'debug.', 'args.'), "
	"a.display_value from slice s join args a using(arg_set_id) "
	"order by 1, 2, 3, 4",
	("select name, idx, severity, value from stats where value > 0 and "
	 "severity in ('error', 'data_loss')"),
};

/* The count of rows of a query's output (ptw_test_tp_query: one per
 * line, no header). */
static size_t rows(const char *out)
{
	size_t n = 0;
	for (const char *p = strchr(out, '\n'); p; p = strchr(p + 1, '\n'))
		n++;
	return n;
}

/* Exports 'pf' as JSON, then checks that trace_processor shows the same
 * tables for both, and at least 'min_flows' flows. */
static void same_in_tp(const char *pf, size_t min_flows)
{
	char json[256];
	ptw_test_tmp_path(json, sizeof(json), "export.json");
	FILE *f = fopen(json, "w");
	cr_assert_not_null(f);
	struct ptw_error err = { 0 };
	cr_assert_eq(ptw_cv_export_json(pf, f, &err), 0, "%s", err.msg);
	cr_assert_eq(fclose(f), 0);
	for (size_t q = 0; q < sizeof(k_tables) / sizeof(k_tables[0]); q++) {
		char *a = query(pf, k_tables[q]);
		char *b = query(json, k_tables[q]);
		if (q == 1)
			cr_assert_geq(rows(a), min_flows, "flows: %s", a);
		if (q == 3)
			cr_assert_eq(rows(a), 0, "errors in %s: %s", pf, a);
		int same = strcmp(a, b) == 0;
		if (!same)
			cr_log_error("%s\nprotobuf:\n%s\nits JSON export:\n%s",
				     k_tables[q], a, b);
		free(a);
		free(b);
		cr_assert(same, "%s: trace_processor shows another table for "
			  "the JSON export (above)", pf);
	}
	unlink(json);
}

/* Flows on slices and on instants from the writer API: flow_ids starts
 * (or continues), terminating_flow_ids ends, on BEGINs, complete slices
 * and instants; instants stacked at one ts, an instant at its parent's
 * end; instants on a process and on a global track. */
Test(export_tp, writer_flows_on_slices_and_instants)
{
	need_tp();
	char pf[256];
	ptw_test_tmp_path(pf, sizeof(pf), "writer.pftrace");
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(pf, NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t T1 = ptw_writer_add_thread_track(w, 10, 11, "one");
	uint64_t T2 = ptw_writer_add_thread_track(w, 10, 12, "two");
	uint64_t P = ptw_writer_add_process_track(w, 10, "proc");
	uint64_t G = ptw_writer_add_track(w, "global", 0, -1);
	cr_assert(T1 && T2 && P && G);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	uint64_t f1 = 1, f2 = 2, f3 = 3, f4 = 4, f5 = 5, f6 = 6;
	struct ptw_arg a = { .name = "k", .type = PTW_ARG_TYPE_INT, .v.i = 3 };
	struct ptw_event e;
	/* slice -> instant -> slice (a step on the instant) */
	e = (struct ptw_event){ .track = T1, .ts = 1000, .name = "send",
				.flow_ids = &f1, .n_flow_ids = 1 };
	cr_assert_eq(ptw_seq_slice_complete(s, &e, 500), 0);
	e = (struct ptw_event){ .track = T2, .ts = 2000, .name = "hop",
				.category = "c", .flow_ids = &f1,
				.n_flow_ids = 1, .args = &a, .n_args = 1 };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = T1, .ts = 3000, .name = "recv",
				.terminating_flow_ids = &f1,
				.n_terminating_flow_ids = 1 };
	cr_assert_eq(ptw_seq_slice_complete(s, &e, 100), 0);
	/* instant -> instant, the second stacked on another instant */
	e = (struct ptw_event){ .track = T1, .ts = 4000, .name = "i-out",
				.flow_ids = &f2, .n_flow_ids = 1 };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = T2, .ts = 5000, .name = "plain" };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = T2, .ts = 5000, .name = "i-in",
				.terminating_flow_ids = &f2,
				.n_terminating_flow_ids = 1 };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = T2, .ts = 5000, .name = "on top" };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	/* an instant with a flow inside a slice, at the slice's end ts,
	 * then a slice at that ts */
	e = (struct ptw_event){ .track = T1, .ts = 6000, .name = "outer" };
	cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
	e = (struct ptw_event){ .track = T1, .ts = 7000, .name = "last",
				.flow_ids = &f3, .n_flow_ids = 1 };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = T1, .ts = 7000 };
	cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
	e = (struct ptw_event){ .track = T1, .ts = 7000, .name = "next",
				.terminating_flow_ids = &f3,
				.n_terminating_flow_ids = 1 };
	cr_assert_eq(ptw_seq_slice_complete(s, &e, 10), 0);
	/* an instant before a slice at the same ts: siblings */
	e = (struct ptw_event){ .track = T2, .ts = 8000, .name = "first",
				.flow_ids = &f4, .n_flow_ids = 1 };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = T2, .ts = 8000, .name = "then",
				.terminating_flow_ids = &f4,
				.n_terminating_flow_ids = 1 };
	cr_assert_eq(ptw_seq_slice_complete(s, &e, 50), 0);
	/* instants with flows on a process and on a global track */
	e = (struct ptw_event){ .track = P, .ts = 9000, .name = "p-out",
				.flow_ids = &f5, .n_flow_ids = 1 };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = G, .ts = 9100, .name = "g-out",
				.flow_ids = &f6, .n_flow_ids = 1 };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = T1, .ts = 9500, .name = "p-in",
				.terminating_flow_ids = &f5,
				.n_terminating_flow_ids = 1 };
	cr_assert_eq(ptw_seq_slice_complete(s, &e, 10), 0);
	e = (struct ptw_event){ .track = T2, .ts = 9600, .name = "g-in",
				.terminating_flow_ids = &f6,
				.n_terminating_flow_ids = 1 };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	same_in_tp(pf, 7);
	unlink(pf);
}

static void *flow_worker(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg;
	ptw_set_thread_name("worker");
	for (uint64_t k = 0; k < 20; k++) {
		PTW_SCOPE("svc", "handle");
		PTW_FLOW_STEP("svc", "picked up", base + k);
		PTW_INSTANT("svc", "working");
		PTW_FLOW_END("svc", "done", base + k);
	}
	return NULL;
}

/* The tracer's flows (PTW_FLOW_START / STEP / END are instants with
 * flows): a service of three threads. */
Test(export_tp, tracer_flows)
{
	need_tp();
	char pf[256];
	ptw_test_tmp_path(pf, sizeof(pf), "tracer.pftrace");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = pf;
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	for (uint64_t k = 0; k < 40; k++) {
		PTW_SCOPE("svc", "enqueue");
		PTW_FLOW_START("svc", "sent", 100 + k);
	}
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, flow_worker,
					    (void *)(uintptr_t)(100 + 20 * i)),
			     0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(ptw_stop(), 0);
	same_in_tp(pf, 80);
	unlink(pf);
}

/* Converted Chrome JSON with v1 (s / t / f) and v2 (bind_id) flows, on
 * slices and on X events of zero duration (instants in the protobuf). */
Test(export_tp, json_v1_and_v2_flows)
{
	need_tp();
	static const char src[] =
		"[{\"name\":\"A\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":10,"
		"\"dur\":10},"
		"{\"name\":\"f\",\"cat\":\"c\",\"ph\":\"s\",\"id\":5,\"pid\":1,"
		"\"tid\":1,\"ts\":11},"
		"{\"name\":\"B\",\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":30},"
		"{\"name\":\"f\",\"cat\":\"c\",\"ph\":\"t\",\"id\":5,\"pid\":1,"
		"\"tid\":2,\"ts\":31},"
		"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":40},"
		"{\"name\":\"C\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":50,"
		"\"dur\":5},"
		"{\"name\":\"f\",\"cat\":\"c\",\"ph\":\"f\",\"bp\":\"e\",\"id\":5,"
		"\"pid\":1,\"tid\":1,\"ts\":51},"
		"{\"name\":\"S\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":60,"
		"\"dur\":5,\"bind_id\":\"0x9\",\"flow_out\":true},"
		"{\"name\":\"D\",\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":70,"
		"\"bind_id\":\"0x9\",\"flow_in\":true,\"flow_out\":true},"
		"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":75},"
		"{\"name\":\"R\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":80,"
		"\"dur\":5,\"bind_id\":9,\"flow_in\":true},"
		/* zero-length X events are converted to instants */
		"{\"name\":\"Z0\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":90,"
		"\"dur\":0,\"bind_id\":\"0xa\",\"flow_out\":true},"
		"{\"name\":\"Z1\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":95,"
		"\"dur\":0,\"bind_id\":\"0xa\",\"flow_in\":true}]";
	char pf[256];
	ptw_test_tmp_path(pf, sizeof(pf), "json-flows.pftrace");
	ptw_test_convert_json(pf, src, 0, NULL);
	same_in_tp(pf, 5);
	unlink(pf);
}

/* Equal timestamps: Perfetto's diff tests
 * test_same_ts_zero_duration_slice_then_begin_end_slice_unnesting and its
 * neighbours (test/trace_processor/diff_tests/parser/parsing/tests.py),
 * converted, then exported: the same slices at the same depths. */
Test(export_tp, equal_timestamps_nest_as_in_the_protobuf)
{
	need_tp();
	static const char *const src[] = {
		"[{\"name\":\"Slice 1\",\"ph\":\"X\",\"ts\":1000,\"dur\":0,"
		"\"pid\":1,\"tid\":1},"
		"{\"name\":\"Slice 2\",\"ph\":\"B\",\"ts\":1000,\"pid\":1,"
		"\"tid\":1},"
		"{\"name\":\"Slice 2\",\"ph\":\"E\",\"ts\":1100,\"pid\":1,"
		"\"tid\":1}]",
		"[{\"name\":\"Slice 1\",\"ph\":\"X\",\"ts\":1000,\"dur\":0,"
		"\"pid\":1,\"tid\":1},"
		"{\"name\":\"Slice 2\",\"ph\":\"X\",\"ts\":1000,\"dur\":100,"
		"\"pid\":1,\"tid\":1}]",
		"[{\"name\":\"Slice 1\",\"ph\":\"X\",\"ts\":1000,\"dur\":100,"
		"\"pid\":1,\"tid\":1},"
		"{\"name\":\"Slice 2\",\"ph\":\"X\",\"ts\":1100,\"dur\":0,"
		"\"pid\":1,\"tid\":1}]",
		"[{\"name\":\"a\",\"ph\":\"i\",\"s\":\"t\",\"ts\":5,\"pid\":1,"
		"\"tid\":1},"
		"{\"name\":\"b\",\"ph\":\"i\",\"s\":\"t\",\"ts\":5,\"pid\":1,"
		"\"tid\":1},"
		"{\"name\":\"c\",\"ph\":\"B\",\"ts\":5,\"pid\":1,\"tid\":1},"
		"{\"name\":\"d\",\"ph\":\"i\",\"s\":\"t\",\"ts\":5,\"pid\":1,"
		"\"tid\":1},"
		"{\"name\":\"e\",\"ph\":\"B\",\"ts\":5,\"pid\":1,\"tid\":1},"
		"{\"ph\":\"E\",\"ts\":5,\"pid\":1,\"tid\":1},"
		"{\"name\":\"f\",\"ph\":\"i\",\"s\":\"t\",\"ts\":6,\"pid\":1,"
		"\"tid\":1},"
		"{\"ph\":\"E\",\"ts\":6,\"pid\":1,\"tid\":1}]",
	};
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		char pf[256];
		ptw_test_tmp_path(pf, sizeof(pf), "same-ts.pftrace");
		ptw_test_convert_json(pf, src[i], 0, NULL);
		same_in_tp(pf, 0);
		unlink(pf);
	}
}

/* Every converted chrome_* corpus case, through the export. */
Test(export_tp, corpus_chrome_cases)
{
	need_tp();
	char dir[512];
	ptw_test_corpus_dir_or_skip(dir, sizeof(dir));
	static const char *const cases[] = { "chrome_flows", "chrome_x_events",
					     "chrome_counters",
					     "chrome_sample_unterminated" };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char in[1024], pf[256];
		snprintf(in, sizeof(in), "%s/%s/input.json", dir, cases[i]);
		ptw_test_tmp_path(pf, sizeof(pf), "corpus.pftrace");
		size_t len;
		char *text = (char *)ptw_test_read_file_or_fail(in, &len);
		ptw_test_convert_json(pf, text, 0, NULL);
		free(text);
		same_in_tp(pf, 0);
		unlink(pf);
	}
}
