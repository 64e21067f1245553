/* test_tracer_tracks.c - tracks of the program's own (ptw_track_new,
 * ptw_counter_track_new, PTW_TRACK_*) and flows on slices (PTW_ARG_FLOW,
 * PTW_ARG_TERMINATING_FLOW): what trace_processor shows (track tree,
 * slices begun on one thread and ended on another, counters with their
 * unit, per-thread counters, flows between slices), through both backend
 * paths and the flight recorder's snapshot; and --to-json keeps every
 * flow.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "support/tracer_run.h"

static uint64_t queue, conn, depth, load, per_thread;

static void make_tracks(void)
{
	if (queue)
		return; /* handles are the process's: once for every test */
	queue = ptw_track_new("queue", 0);
	conn = ptw_track_new("conn 1", queue);
	depth = ptw_counter_track_new("queue depth", "items", queue, 0);
	load = ptw_counter_track_new("load", NULL, 0, 0);
	per_thread = ptw_counter_track_new("thread items", NULL, 0, 1);
	cr_assert(queue && conn && depth && load && per_thread);
}

static void *second_thread(void *arg)
{
	(void)arg;
	ptw_set_thread_name("second");
	PTW_TRACK_END("q", queue);          /* ends the main thread's BEGIN */
	PTW_TRACK_INSTANT_DYN("q", conn, "closed");
	PTW_TRACK_COUNTER_INT("q", per_thread, 2);
	PTW_SCOPE_ARGS("f", "recv", PTW_ARG_TERMINATING_FLOW(7));
	return NULL;
}

static void traced(void)
{
	ptw_set_thread_name("main");
	PTW_TRACK_BEGIN("q", queue, "request");
	PTW_TRACK_INSTANT_ARGS("q", conn, "opened", PTW_ARG_I64("fd", 5));
	PTW_TRACK_COUNTER_INT("q", depth, 3);
	PTW_TRACK_COUNTER_DOUBLE("q", load, 0.5);
	PTW_TRACK_COUNTER_INT("q", per_thread, 1);
	{
		PTW_SCOPE_ARGS("f", "send", PTW_ARG_FLOW(7));
	}
	PTW_BEGIN("f", "work");
	PTW_END_ARGS("f", PTW_ARG_FLOW(8));   /* the ended slice starts it */
	PTW_BEGIN_ARGS("f", "after", PTW_ARG_TERMINATING_FLOW(8));
	PTW_END("f");
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, second_thread, NULL), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
}

static const char k_flows[] =
	"select so.name, si.name from flow f join slice so on "
	"f.slice_out = so.id join slice si on f.slice_in = si.id "
	"order by so.name";
static const char k_flow_rows[] = "\"send\",\"recv\"\n\"work\",\"after\"\n";

/* Decoded with protobuf-c (also without trace_processor): the
 * descriptors of the tracks (queue under the process track, conn 1 and
 * the counter with its unit under queue, one 'thread items' per thread)
 * and the flow ids on the slices' events. */
static void expect_decoded(const char *path)
{
	Perfetto__Protos__Trace *t = ptw_test_unpack_or_fail(path);
	uint64_t proc = 0, q = 0, c = 0, d = 0;
	size_t per_thread_tracks = 0, flows = 0, tflows = 0;
	for (size_t i = 0; i < t->n_packet; i++) {
		const Perfetto__Protos__TracePacket *pk = t->packet[i];
		if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT) {
			flows += pk->track_event->n_flow_ids;
			tflows += pk->track_event->n_terminating_flow_ids;
			continue;
		}
		if (pk->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR)
			continue;
		const Perfetto__Protos__TrackDescriptor *td = pk->track_descriptor;
		const char *nm = td->static_or_dynamic_name_case ==
					 PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME
				 ? td->name
				 : "";
		if (td->process && !td->thread)
			proc = td->uuid;
		else if (!strcmp(nm, "queue")) {
			q = td->uuid;
			cr_assert_eq(td->parent_uuid, proc);
		} else if (!strcmp(nm, "conn 1")) {
			c = td->parent_uuid;
		} else if (!strcmp(nm, "queue depth")) {
			d = td->parent_uuid;
			cr_assert_not_null(td->counter);
			cr_assert_str_eq(td->counter->unit_name, "items");
		} else if (!strcmp(nm, "thread items"))
			per_thread_tracks++;
	}
	perfetto__protos__trace__free_unpacked(t, NULL);
	cr_assert(proc && q && c == q && d == q);
	cr_assert_eq(per_thread_tracks, 2);
	cr_assert_eq(flows, 2);  /* send, the END of work */
	cr_assert_eq(tflows, 2); /* recv, after */
}

static void expect(const char *path, int unused)
{
	expect_decoded(path);
	if (!ptw_test_tp_shell())
		return;
	char pid[32];
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	/* the tree: queue under the process (trace_processor gives it the
	 * process's upid), conn 1 and the counter under queue */
	ptw_test_tp_expect_rows(
		path,
		"select t.name, p.name from track t join track p "
		"on t.parent_id = p.id where t.name in ('conn 1', "
		"'queue depth') order by t.name",
		"\"conn 1\",\"queue\"\n\"queue depth\",\"queue\"\n");
	ptw_test_tp_expect_rows(
		path,
		"select p.pid from process_track t join process p using (upid) "
		"where t.name = 'queue'",
		pid);
	/* a slice begun on main and ended on second */
	ptw_test_tp_expect_rows(
		path,
		"select s.name, s.dur > 0 from slice s join track t "
		"on s.track_id = t.id where t.name = 'queue'",
		"\"request\",1\n");
	ptw_test_tp_expect_rows(
		path,
		"select s.name, extract_arg(s.arg_set_id, 'debug.fd') from slice s "
		"join track t on s.track_id = t.id where t.name = 'conn 1' "
		"order by s.ts",
		"\"opened\",5\n\"closed\",\"[NULL]\"\n");
	/* counters, with the unit */
	ptw_test_tp_expect_rows(
		path,
		"select t.name, c.value, extract_arg(t.dimension_arg_set_id, "
		"'unit') is not null or t.unit is not null from counter c "
		"join counter_track t on c.track_id = t.id where t.name in "
		"('queue depth', 'load') order by t.name",
		"\"load\",0.500000,0\n\"queue depth\",3.000000,1\n");
	ptw_test_tp_expect_rows(
		path,
		"select t.unit from counter_track t where t.name = 'queue depth'",
		"\"items\"\n");
	/* one per-thread counter track under each thread that sampled */
	ptw_test_tp_expect_rows(
		path,
		"select th.name, c.value from counter c join thread_counter_track t "
		"on c.track_id = t.id join thread th using (utid) "
		"where t.name = 'thread items' order by th.name",
		"\"main\",1.000000\n\"second\",2.000000\n");
	ptw_test_tp_expect_rows(path, k_flows, k_flow_rows);
	ptw_test_tp_expect_no_error_stats(path);
}

static void run(int general, int ring, const char *tag)
{
	make_tracks();
	struct ptw_config cfg = {0};
	cfg.general_path_only = general;
	(void)ptw_test_traced_session(cfg, ring, tag, traced, expect, 0);
}

Test(tracer_tracks, tracks_counters_and_flows) { run(0, 0, "trk"); }
Test(tracer_tracks, by_the_general_path) { run(1, 0, "trkg"); }
Test(tracer_tracks, in_a_flight_recorder_snapshot) { run(0, 1, "trkr"); }

/* --to-json keeps every flow the tracer writes (on thread slices, on
 * slices of tracks of our own, on flow instants): trace_processor finds
 * the same links in the JSON. */
Test(tracer_tracks, to_json_keeps_every_flow)
{
	char path[256], json[256];
	ptw_test_tmp_path(path, sizeof(path), "trkjs");
	ptw_test_tmp_path(json, sizeof(json), "trkjson");
	make_tracks();
	struct ptw_config cfg = {.output_path = path};
	cr_assert_eq(ptw_start(&cfg), 0);
	traced();
	PTW_FLOW_START("f", "fs", 9);
	PTW_FLOW_END("f", "fe", 9);
	/* flows from and to slices of a track of our own */
	PTW_TRACK_BEGIN_ARGS("q", queue, "on track", PTW_ARG_FLOW(5));
	PTW_TRACK_END("q", queue);
	PTW_BEGIN_ARGS("f", "on thread", PTW_ARG_TERMINATING_FLOW(5));
	PTW_END("f");
	PTW_BEGIN_ARGS("f", "thread2", PTW_ARG_FLOW(6));
	PTW_END("f");
	PTW_TRACK_INSTANT_ARGS("q", conn, "track instant",
			       PTW_ARG_TERMINATING_FLOW(6));
	cr_assert_eq(ptw_stop(), 0);
	FILE *f = fopen(json, "w");
	cr_assert_not_null(f);
	struct ptw_error err;
	cr_assert_eq(ptw_cv_export_json(path, f, &err), 0, "%s", err.msg);
	cr_assert_eq(fclose(f), 0);
	if (ptw_test_tp_shell()) {
		const char *want = "\"fs\",\"fe\"\n"
				   "\"on track\",\"on thread\"\n"
				   "\"send\",\"recv\"\n"
				   "\"thread2\",\"track instant\"\n"
				   "\"work\",\"after\"\n";
		ptw_test_tp_expect_rows(path, k_flows, want);
		ptw_test_tp_expect_rows(json, k_flows, want);
	}
	unlink(path);
	unlink(json);
}

Test(tracer_tracks, bad_handles_are_refused)
{
	make_tracks();
	cr_assert_eq(ptw_track_new(NULL, 0), 0);
	cr_assert_eq(ptw_track_new("x", depth), 0); /* a counter as parent */
	cr_assert_eq(ptw_track_new("x", 999999), 0);
	cr_assert_eq(ptw_counter_track_new("x", NULL, queue, 1), 0);
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "trkbad");
	struct ptw_config cfg = {.output_path = path};
	cr_assert_eq(ptw_start(&cfg), 0);
	PTW_TRACK_BEGIN("q", depth, "on a counter"); /* invalid */
	PTW_TRACK_COUNTER_INT("q", queue, 1);        /* invalid */
	PTW_TRACK_INSTANT("q", 424242, "unknown");   /* invalid */
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.invalid, 3);
	unlink(path);
}

/* The flight recorder: a slice of a track of our own still open when the
 * snapshot cuts a ring that wrapped many times since its BEGIN is begun
 * again at the window's start, with its name and arguments. */
Test(tracer_tracks, a_slice_open_across_wraps_is_begun_again_in_a_snapshot)
{
	char snap[256];
	ptw_test_tmp_path(snap, sizeof(snap), "trkwrap");
	make_tracks();
	struct ptw_config cfg = {0};
	cfg.mode = PTW_MODE_RING;
	cfg.ring_bytes = 64u * 1024u;
	cfg.overflow = PTW_OVERFLOW_WAIT; /* nothing lost before the window */
	cr_assert_eq(ptw_start(&cfg), 0);
	PTW_TRACK_BEGIN_ARGS("q", queue, "long request", PTW_ARG_I64("id", 3));
	for (int64_t i = 0; i < 20000; i++) /* wraps the window many times */
		PTW_INSTANT_ARGS("spam", "tick", PTW_ARG_I64("i", i));
	cr_assert_eq(ptw_snapshot(snap), 0);
	PTW_TRACK_END("q", queue);
	cr_assert_eq(ptw_stop(), 0);
	if (ptw_test_tp_shell()) {
		ptw_test_tp_expect_rows(
			snap,
			"select min(extract_arg(arg_set_id, 'debug.i')) > 0 "
			"from slice where name = 'tick'",
			"1\n");
		ptw_test_tp_expect_rows(
			snap,
			"select s.name, s.dur, extract_arg(s.arg_set_id, 'debug.id') "
			"from slice s join track t on s.track_id = t.id "
			"where t.name = 'queue'",
			"\"long request\",-1,3\n");
		ptw_test_tp_expect_no_error_stats(snap);
	}
	unlink(snap);
}
