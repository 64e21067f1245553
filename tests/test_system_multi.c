/* test_system_multi.c - system mode with more than one output: two
 * sessions of the real service at once, each with its own categories, and
 * system sessions beside the program's own file or flight recorder
 * (trace_processor on each; skipped without ../shared/tp).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/arch/arch.h"
#include "lib/system/system.h"
#include "ptw/tracer.h"
#include "support/counter_pairs.h"
#include "support/ptw_test.h"
#include "support/sys_service.h"
#include "support/tp_shell.h"

/* A session of track_event for the categories 'cats' only. */
#define CFG_ONLY(cats, ms)                                                   \
	"buffers { size_kb: 8192 }\n"                                        \
	"data_sources { config { name: \"track_event\" track_event_config {" \
	" disabled_categories: \"*\" enabled_categories: \"" cats "\" } } }\n" \
	"duration_ms: " #ms "\n"

static void rows(const char *trace, const char *sql, char *out, size_t max)
{
	cr_assert_eq(ptw_test_tp_rows(trace, sql, out, max), 0);
}

/* A counter track of one's own, sampled in category "b" (PHASE): its
 * samples' records carry no category, the call site has it. */
static uint64_t own_b;

static void start_clock(const char *path, int ring, enum ptw_clock clock)
{
	struct ptw_config cfg = ptw_test_sys_config("a,b");
	cfg.clock = clock;
	cfg.process_name = "multiproc";
	cfg.output_path = path;
	cfg.mode = ring ? PTW_MODE_RING : PTW_MODE_STREAM;
	ptw_test_start_or_fail(&cfg);
	ptw_set_thread_name("multimain");
	own_b = ptw_counter_track_new("own_b", NULL, 0, 0);
	cr_assert_neq(own_b, 0);
}

/* One phase N: a slice of "a" holding a scope of "b" (whose END, like
 * every scope's, carries no category) with an instant of "b", then an
 * instant of "a" (one level below the "a" slice: a "b" END that closed
 * the "a" slice would put it on top), and a counter of each. */
#define PHASE(N)                                                             \
	do {                                                                 \
		PTW_BEGIN("a", "a" #N);                                      \
		{                                                            \
			PTW_SCOPE("b", "b" #N);                              \
			PTW_INSTANT("b", "bi" #N);                           \
		}                                                            \
		PTW_INSTANT("a", "ai" #N);                                   \
		PTW_COUNTER_INT("a", "ca", N);                               \
		PTW_COUNTER_INT("b", "cb", N);                               \
		PTW_TRACK_COUNTER_INT("b", own_b, 10 * N);                   \
		PTW_END("a");                                                \
	} while (0)

#define SLICES                                                               \
	"select s.name, s.depth, t.name, p.name from slice s join "          \
	"thread_track tt on s.track_id = tt.id join thread t using (utid) "  \
	"join process p using (upid) order by s.ts, s.depth"
#define COUNTERS                                                             \
	"select t.name, cast(c.value as int) from counter c join "           \
	"counter_track t on c.track_id = t.id where t.name in ('ca', 'cb', " \
	"'own_b') "                                                          \
	"order by c.ts, t.name"

/* The system trace 'out' holds exactly 'slices' (SLICES' rows) and
 * 'counters' (COUNTERS' rows), and no error stats. */
static void expect_session(const char *out, const char *slices,
			   const char *counters)
{
	char got[4096];
	rows(out, SLICES, got, sizeof(got));
	cr_assert_str_eq(got, slices, "%s: slices", out);
	rows(out, COUNTERS, got, sizeof(got));
	cr_assert_str_eq(got, counters, "%s: counters", out);
	ptw_test_tp_expect_no_error_stats(out);
}

static void two_sessions(enum ptw_clock clock)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	start_clock(NULL, 0, clock);
	struct ptw_test_session a, b;
	ptw_test_svc_record(&s, &a, CFG_ONLY("a", 5000), "a.pftrace");
	ptw_test_svc_expect_sessions(&s, 1, 20000);
	PTW_BEGIN("b", "b open at B's start"); /* its BEGIN precedes B */
	PTW_BEGIN("a", "a open across B");
	PHASE(1);
	ptw_test_svc_record(&s, &b, CFG_ONLY("b", 1200), "b.pftrace");
	ptw_test_svc_expect_sessions(&s, 2, 20000);
	PTW_END("a");
	PTW_END("b");
	PHASE(2);
	PTW_BEGIN("b", "b open at B's stop"); /* never ended in B */
	PTW_BEGIN("a", "a open at B's stop");
	ptw_test_svc_expect_sessions(&s, 1, 20000); /* B stopped, A runs on */
	ptw_test_perfetto_wait(b.pid);
	PTW_END("a");
	PTW_END("b");
	PHASE(3);
	ptw_test_svc_expect_sessions(&s, 0, 30000);
	ptw_test_perfetto_wait(a.pid);
	cr_assert_eq(ptw_stop(), 0);
	/* the stats add up both sessions' events: A has the "a" part of each
	 * phase (BEGIN, instant, counter, END) and its two slices' BEGINs
	 * and ENDs, B the "b" part of phase 2 (BEGIN, instant, END, two
	 * counters) and a BEGIN */
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.events, (3 * 4 + 4) + (5 + 1), "%llu events",
		     (unsigned long long)st.events);

	expect_session(a.out,
		       "a open across B,0,multimain,multiproc;"
		       "a1,1,multimain,multiproc;ai1,2,multimain,multiproc;"
		       "a2,0,multimain,multiproc;ai2,1,multimain,multiproc;"
		       "a open at B's stop,0,multimain,multiproc;"
		       "a3,0,multimain,multiproc;ai3,1,multimain,multiproc;",
		       "ca,1;ca,2;ca,3;");
	expect_session(b.out,
		       "b2,0,multimain,multiproc;bi2,1,multimain,multiproc;"
		       "b open at B's stop,0,multimain,multiproc;",
		       "cb,2;own_b,20;");
	ptw_test_svc_stop(&s);
}

Test(system_multi, two_sessions_each_get_exactly_their_categories)
{
	two_sessions(PTW_CLOCK_MONOTONIC);
}

/* The same with the CPU's counter as the producers' clock (converted to
 * BOOTTIME by the backend, for every session's writer alike). */
Test(system_multi, two_sessions_with_the_cpu_counter)
{
	two_sessions(PTW_CLOCK_FASTEST);
}

/* Counters of one name in both categories (support/counter_pairs.h):
 * each session gets exactly the samples of its category. */
#define SAME_NAME_COUNTERS                                                   \
	"select t.name, cast(c.value * 100 as int) from counter c join "     \
	"counter_track t on c.track_id = t.id where t.name in ('queue', "    \
	"'level', 'dqueue', 'fqueue', 'own_b') order by c.ts, t.name"

Test(system_multi, counters_of_one_name_in_two_categories_go_to_their_sessions)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	start_clock(NULL, 0, PTW_CLOCK_MONOTONIC);
	struct ptw_test_session a, b;
	char got[4096];
	char dyn[] = "dqueue";

	ptw_test_svc_record(&s, &a, CFG_ONLY("a", 4000), "a.pftrace");
	ptw_test_svc_record(&s, &b, CFG_ONLY("b", 4000), "b.pftrace");
	ptw_test_svc_expect_sessions(&s, 2, 20000);
	PTW_TEST_COUNTER_PAIRS(1, dyn, own_b);
	PTW_TEST_COUNTER_PAIRS(2, dyn, own_b);
	ptw_test_svc_expect_sessions(&s, 0, 30000);
	ptw_test_perfetto_wait(a.pid);
	ptw_test_perfetto_wait(b.pid);
	cr_assert_eq(ptw_stop(), 0);

	rows(a.out, SAME_NAME_COUNTERS, got, sizeof(got));
	cr_assert_str_eq(got, "queue,1100;level,150;dqueue,11100;fqueue,31150;"
			      "own_b,41100;"
			      "queue,1200;level,250;dqueue,11200;fqueue,31250;"
			      "own_b,41200;");
	ptw_test_tp_expect_no_error_stats(a.out);
	rows(b.out, SAME_NAME_COUNTERS, got, sizeof(got));
	cr_assert_str_eq(got, "queue,2100;level,125;dqueue,12100;fqueue,32150;"
			      "own_b,42100;"
			      "queue,2200;level,225;dqueue,12200;fqueue,32250;"
			      "own_b,42200;");
	ptw_test_tp_expect_no_error_stats(b.out);
	ptw_test_svc_stop(&s);
}

/* The clock that 'trace' says it used is 'want' ("tsc_boottime" or
 * "boottime"). */
static void expect_clock(const char *trace, const char *want)
{
	char got[200], w[64];
	rows(trace, "select str_value from metadata where name = 'cr-ptw.clock'",
	     got, sizeof(got));
	snprintf(w, sizeof(w), "%s;", want);
	cr_assert_str_eq(got, w, "%s: clock %s", trace, got);
}

/* The events of 'names' (a SQL list) in 'file' and in the system trace
 * 'sys' have the same timestamps (and slices the same durations): the
 * file and the sessions convert the same way. */
static void same_times(const char *file, const char *sys, const char *names)
{
	char q[1000], a[4096], b[4096];
#define TIMES(more)                                                          \
	snprintf(q, sizeof(q),                                               \
		 "select name, ts, dur from slice where name in (%s) union "  \
		 "all select t.name, c.ts, cast(c.value as int) from counter " \
		 "c join counter_track t on c.track_id = t.id where t.name "  \
		 "in (%s)" more " order by 2, 1",                             \
		 names, names)
	TIMES("");
	rows(sys, q, b, sizeof(b));
	/* the file has every phase: of the counters, the samples of the
	 * system trace's (phase 2's values) */
	TIMES(" and cast(c.value as int) in (2, 20)");
	rows(file, q, a, sizeof(a));
#undef TIMES
	cr_assert_neq(b[0], '\0', "%s has none of %s", sys, names);
	cr_assert_str_eq(a, b, "the file's times\n%s\nthe system trace's\n%s",
			 a, b);
}

/* The producers' clock here for 'clock': the counter when asked for and
 * usable, else BOOTTIME read (the clock names in the metadata). */
static const char *clock_name(enum ptw_clock clock)
{
	return (clock == PTW_CLOCK_TSC || clock == PTW_CLOCK_FASTEST) &&
			       ptw_arch_counter_usable()
		       ? "tsc_boottime"
		       : "boottime";
}

static void file_beside(enum ptw_clock clock)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	char file[400], got[4096];
	ptw_test_svc_path(&s, file, sizeof(file), "own.pftrace");
	start_clock(file, 0, clock);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.clock,
		     strcmp(clock_name(clock), "boottime") ? PTW_CLOCK_TSC
							   : PTW_CLOCK_BOOT,
		     "the producers read clock %d", (int)st.clock);
	cr_assert(ptw_is_running(), "the file records from the start");
	PHASE(1);
	struct ptw_test_session x;
	ptw_test_svc_record(&s, &x, CFG_ONLY("a", 1000), "sys.pftrace");
	const char *out = x.out;
	ptw_test_svc_expect_sessions(&s, 1, 20000);
	PHASE(2);
	ptw_test_svc_expect_sessions(&s, 0, 20000);
	ptw_test_perfetto_wait(x.pid);
	PHASE(3);
	cr_assert(ptw_is_running(), "the file records after the session");
	cr_assert_eq(ptw_stop(), 0);
	/* the stats are the file's: 9 events a phase */
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.events, 3 * 9, "%llu events",
		     (unsigned long long)st.events);

	rows(file, "select name, depth from slice order by ts, depth", got,
	     sizeof(got));
	cr_assert_str_eq(got, "a1,0;b1,1;bi1,2;ai1,1;a2,0;b2,1;bi2,2;ai2,1;"
			      "a3,0;b3,1;bi3,2;ai3,1;");
	rows(file, COUNTERS, got, sizeof(got));
	cr_assert_str_eq(got, "ca,1;cb,1;own_b,10;ca,2;cb,2;own_b,20;ca,3;cb,3;"
			      "own_b,30;");
	ptw_test_tp_expect_no_error_stats(file);

	expect_session(out,
		       "a2,0,multimain,multiproc;ai2,1,multimain,multiproc;",
		       "ca,2;");

	expect_clock(file, clock_name(clock));
	expect_clock(out, clock_name(clock));
	same_times(file, out, "'a2', 'ai2', 'ca'");
	ptw_test_svc_stop(&s);
}

/* With the monotonic clock, and with the CPU's counter as the producers'
 * clock: the file's writer and the session's convert the same ticks the
 * same way. */
PTW_TEST_SVC_EACH_CLOCK(system_multi, a_file_beside_system_mode_has_every_event,
			a_file_beside_system_mode_with_the_cpu_counter,
			file_beside)

static void recorder_beside(enum ptw_clock clock)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	char file[400], snap[400], got[4096];
	ptw_test_svc_path(&s, file, sizeof(file), "window.pftrace");
	ptw_test_svc_path(&s, snap, sizeof(snap), "snap.pftrace");
	start_clock(file, 1, clock);
	PHASE(1);
	struct ptw_test_session x;
	ptw_test_svc_record(&s, &x, CFG_ONLY("b", 1000), "sys.pftrace");
	const char *out = x.out;
	ptw_test_svc_expect_sessions(&s, 1, 20000);
	PHASE(2);
	cr_assert_eq(ptw_snapshot(snap), 0);
	ptw_test_svc_expect_sessions(&s, 0, 20000);
	ptw_test_perfetto_wait(x.pid);
	PHASE(3);
	cr_assert_eq(ptw_stop(), 0);

	rows(snap, "select name, depth from slice order by ts, depth", got,
	     sizeof(got));
	cr_assert_str_eq(got, "a1,0;b1,1;bi1,2;ai1,1;a2,0;b2,1;bi2,2;ai2,1;");
	ptw_test_tp_expect_no_error_stats(snap);
	rows(file, "select name, depth from slice order by ts, depth", got,
	     sizeof(got));
	cr_assert_str_eq(got, "a1,0;b1,1;bi1,2;ai1,1;a2,0;b2,1;bi2,2;ai2,1;"
			      "a3,0;b3,1;bi3,2;ai3,1;");
	ptw_test_tp_expect_no_error_stats(file);

	expect_session(out,
		       "b2,0,multimain,multiproc;bi2,1,multimain,multiproc;",
		       "cb,2;own_b,20;");

	expect_clock(snap, clock_name(clock));
	expect_clock(file, clock_name(clock));
	expect_clock(out, clock_name(clock));
	same_times(snap, out, "'b2', 'bi2', 'cb', 'own_b'");
	same_times(file, out, "'b2', 'bi2', 'cb', 'own_b'");
	ptw_test_svc_stop(&s);
}

PTW_TEST_SVC_EACH_CLOCK(
	system_multi, the_flight_recorder_beside_system_mode_keeps_every_event,
	the_flight_recorder_beside_system_mode_with_the_cpu_counter,
	recorder_beside)
