/* test_tracer_log.c - PTW_LOG and PTW_LOG_DYN: the log lines of each
 * thread, with their priority and call site, as trace_processor lists
 * them in android_logs; through both backend paths (general_path_only)
 * and the flight recorder's snapshot; with category "log" off, the
 * arguments are not evaluated and nothing is written.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "support/tracer_run.h"

static int evaluated;

static int count_eval(int v)
{
	evaluated++;
	return v;
}

static int line_fmt, line_dyn; /* the lines of the two calls below */

static void log_lines(const char *tag)
{
	char dyn[64];
	snprintf(dyn, sizeof(dyn), "dyn %s", tag);
	PTW_LOG(PTW_LOG_PRIO_WARN, "disk %d%% full on %s", count_eval(93), tag);
	line_fmt = __LINE__ - 1;
	PTW_LOG_DYN(PTW_LOG_PRIO_ERROR, dyn);
	line_dyn = __LINE__ - 1;
}

static void *worker(void *arg)
{
	ptw_set_thread_name("worker");
	log_lines((const char *)arg);
	return NULL;
}

/* Decoded with protobuf-c (also without trace_processor): four
 * log_message events, WARN and ERROR on each thread, every body one of
 * the texts logged and every source location one of the two sites. */
static void expect_decoded(const char *path)
{
	Perfetto__Protos__Trace *t = ptw_test_unpack_or_fail(path);
	size_t logs = 0, warn = 0;
	for (size_t i = 0; i < t->n_packet; i++) {
		const Perfetto__Protos__TracePacket *pk = t->packet[i];
		const Perfetto__Protos__InternedData *id = pk->interned_data;
		for (size_t j = 0; id && j < id->n_log_message_body; j++) {
			static const char *const known[] = {
				"disk 93% full on m", "disk 93% full on w",
				"dyn m", "dyn w"};
			const char *body = id->log_message_body[j]->body;
			int ok = 0; /* (no '%' in an assertion: the TSan shim
				     * prints its text as a format) */
			for (size_t k = 0; k < 4; k++)
				ok |= strcmp(body, known[k]) == 0;
			cr_assert(ok, "body '%s'", body);
		}
		for (size_t j = 0; id && j < id->n_source_locations; j++) {
			const Perfetto__Protos__SourceLocation *l =
				id->source_locations[j];
			cr_assert_str_eq(l->file_name, __FILE__);
			cr_assert_str_eq(l->function_name, "log_lines");
			cr_assert(l->line_number == (uint32_t)line_fmt ||
				  l->line_number == (uint32_t)line_dyn);
		}
		if (pk->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT ||
		    !pk->track_event->log_message)
			continue;
		const Perfetto__Protos__LogMessage *lm = pk->track_event->log_message;
		cr_assert(lm->has_body_iid && lm->has_source_location_iid &&
			  lm->has_prio);
		cr_assert(lm->prio == 5 || lm->prio == 6);
		warn += lm->prio == 5;
		logs++;
	}
	perfetto__protos__trace__free_unpacked(t, NULL);
	cr_assert_eq(logs, 4);
	cr_assert_eq(warn, 2);
}

/* The rows trace_processor shows, one thread's lines after the other's. */
static void expect_rows(const char *path, int unused)
{
	expect_decoded(path);
	if (!ptw_test_tp_shell())
		return;
	char want[1024];
	snprintf(want, sizeof(want),
		 "\"main\",5,\"%s:%d\",\"disk 93%% full on m\"\n"
		 "\"main\",6,\"%s:%d\",\"dyn m\"\n"
		 "\"worker\",5,\"%s:%d\",\"disk 93%% full on w\"\n"
		 "\"worker\",6,\"%s:%d\",\"dyn w\"\n",
		 __FILE__, line_fmt, __FILE__, line_dyn, __FILE__, line_fmt,
		 __FILE__, line_dyn);
	ptw_test_tp_expect_rows(
		path,
		"select t.name, l.prio, l.tag, l.msg from android_logs l "
		"join thread t using (utid) order by t.name, l.ts",
		want);
	/* the instants carry the call site as slice args too */
	char want2[256];
	snprintf(want2, sizeof(want2), "4,\"log_lines\"\n");
	ptw_test_tp_expect_rows(
		path,
		"select count(*), extract_arg(arg_set_id, 'source.function_name') "
		"from slice where name = 'LogMessage' and category = 'log' "
		"group by 2",
		want2);
	ptw_test_tp_expect_no_error_stats(path);
}

static void body(void)
{
	ptw_set_thread_name("main");
	log_lines("m");
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, worker, (void *)"w"), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
}

static void run(int general, int ring)
{
	struct ptw_config cfg = {0};
	cfg.general_path_only = general;
	cr_assert_eq(ptw_test_traced_session(cfg, ring, "tlog", body,
					     expect_rows, 0),
		     4);
}

Test(tracer_log, log_lines_reach_android_logs) { run(0, 0); }
Test(tracer_log, log_lines_by_the_general_path) { run(1, 0); }
Test(tracer_log, log_lines_in_a_flight_recorder_snapshot) { run(0, 1); }

Test(tracer_log, category_off_evaluates_nothing)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "tlogoff");
	struct ptw_config cfg = {.output_path = path,
				 .disabled_categories = "log"};
	cr_assert_eq(ptw_start(&cfg), 0);
	log_lines("x"); /* each site learns that the category is off */
	evaluated = 0;
	log_lines("x");
	cr_assert_eq(evaluated, 0);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.events, 0);
	if (ptw_test_tp_shell())
		ptw_test_tp_expect_rows(path, "select count(*) from android_logs",
					"0\n");
	unlink(path);
}
