/* test_system.c - system mode against Perfetto's real service: a private
 * `tracebox traced` on temp sockets, this test process a producer in
 * system mode, sessions started with `tracebox perfetto`, and
 * trace_processor on what they recorded (skipped without ../shared/tp).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/sys_service.h"
#include "support/tp_shell.h"

/* A session of 'ms' milliseconds recording track_event with the
 * TrackEventConfig 'te' (empty: every category). */
#define CFG_TE(te, ms)                                                       \
	"buffers { size_kb: 8192 }\n"                                        \
	"data_sources { config { name: \"track_event\" " te " } }\n"         \
	"duration_ms: " #ms "\n"
#define CFG_ALL CFG_TE("", 1500)

static void start_system_clock(const char *categories, enum ptw_clock clock)
{
	struct ptw_config cfg = ptw_test_sys_config(categories);
	cfg.clock = clock;
	cfg.process_name = "sysproc";
	ptw_test_start_or_fail(&cfg);
}

static void start_system(const char *categories)
{
	start_system_clock(categories, PTW_CLOCK_MONOTONIC);
}

/* trace_processor's rows of 'sql' on 'trace', ';' after each. */
static void rows(const char *trace, const char *sql, char *out, size_t max)
{
	cr_assert_eq(ptw_test_tp_rows(trace, sql, out, max), 0);
}

/* The trace's slices by name, as "name,count;" in name order, must be
 * 'want' ('ev': what ptw wrote, for the message). */
static void expect_names(const char *trace, const char *want, uint64_t ev)
{
	char got[1024];
	rows(trace,
	     "select name, count(*) from slice group by name order by name",
	     got, sizeof(got));
	cr_assert_str_eq(got, want, "got %s, ptw wrote %llu events", got,
			 (unsigned long long)ev);
}

static void *worker(void *arg)
{
	(void)arg;
	ptw_set_thread_name("sysworker");
	PTW_SCOPE("io", "work");
	PTW_INSTANT("io", "tick");
	return NULL;
}

Test(system, the_session_records_what_was_logged_while_it_ran)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	start_system("app,io");
	ptw_set_thread_name("sysmain");
	cr_assert_eq(ptw_is_running(), 0, "macros on without a session");
	PTW_INSTANT("app", "before"); /* no session yet: not recorded */

	struct ptw_test_session x;
	ptw_test_svc_record_started(&s, &x, CFG_ALL, "out.pftrace");
	{
		PTW_SCOPE("app", "outer");
		PTW_INSTANT_ARGS("io", "opened", PTW_ARG_I64("fd", 3),
				 PTW_ARG_STR("path", "/etc/hosts"));
		PTW_COUNTER_INT("app", "queue", 7);
		PTW_ASYNC_BEGIN("app", "request", 42);
		PTW_FLOW_START("app", "send", 9);
	}
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, worker, NULL), 0);
	pthread_join(th, NULL);
	PTW_FLOW_END("app", "receive", 9);
	PTW_ASYNC_END("app", 42);
	ptw_test_svc_expect_running(&s, 0, 20000, "the session never stopped");
	PTW_INSTANT("app", "after"); /* after the session: not recorded */
	ptw_test_perfetto_wait(x.pid);
	cr_assert_eq(ptw_stop(), 0);

	const char *out = x.out;
	char got[4096];
	rows(out,
	     "select s.name, t.name, p.name from slice s join thread_track tt "
	     "on s.track_id = tt.id join thread t using (utid) join process p "
	     "using (upid) order by s.ts, s.name",
	     got, sizeof(got));
	cr_assert_str_eq(got,
			 "outer,sysmain,sysproc;opened,sysmain,sysproc;"
			 "send,sysmain,sysproc;work,sysworker,sysproc;"
			 "tick,sysworker,sysproc;receive,sysmain,sysproc;");
	rows(out,
	     "select a.key, a.display_value from slice s join args a using "
	     "(arg_set_id) where s.name = 'opened' and a.key like 'debug.%' "
	     "order by a.key",
	     got, sizeof(got));
	cr_assert_str_eq(got, "debug.fd,3;debug.path,/etc/hosts;");
	rows(out,
	     "select t.name, c.value from counter c join counter_track t on "
	     "c.track_id = t.id",
	     got, sizeof(got));
	cr_assert_str_eq(got, "queue,7.000000;");
	rows(out, "select name from slice where track_id not in (select id "
		  "from thread_track)",
	     got, sizeof(got));
	cr_assert_str_eq(got, "request;");
	rows(out, "select count(*) from flow", got, sizeof(got));
	cr_assert_str_eq(got, "1;");
	ptw_test_tp_expect_no_error_stats(out);
	ptw_test_svc_stop(&s);
}

Test(system, no_service_start_succeeds_and_macros_stay_off)
{
	char dir[] = "/tmp/ptw-sys-none-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char sock[128];
	snprintf(sock, sizeof(sock), "%s/absent.sock", dir);
	setenv("PERFETTO_PRODUCER_SOCK_NAME", sock, 1);
	start_system("app");
	for (int i = 0; i < 100; i++)
		PTW_INSTANT("app", "nobody listens");
	cr_assert_eq(ptw_is_running(), 0);
	cr_assert_eq(ptw_flush(), PTW_ERR_STATE);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = "/dev/null";
	cr_assert_eq(ptw_start(&cfg), PTW_ERR_STATE, "system mode is on");
	cr_assert_eq(ptw_stop(), 0);
	cr_assert_eq(ptw_stop(), 0);
	rmdir(dir);
}

/* system mode beside a file or the flight recorder, and two sessions at
 * once: test_system_multi.c */

/* Runs one session of 'cfg_text' into 'name' (x) while this thread logs
 * 'n' instants of "app", "io" and "gfx" each; returns after the session
 * and perfetto ended, with the events ptw wrote in it (a failing test
 * says so). */
static uint64_t record_instants(struct ptw_test_svc *s,
				struct ptw_test_session *x,
				const char *cfg_text, const char *name, int n)
{
	ptw_test_svc_record_started(s, x, cfg_text, name);
	for (int i = 0; i < n; i++) {
		PTW_INSTANT("app", "app event");
		PTW_INSTANT("io", "io event");
		PTW_INSTANT("gfx", "gfx event");
	}
	ptw_test_svc_record_ended(s, x);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	return st.events;
}

Test(system, the_sessions_category_config_is_honoured)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	start_system("app,io,gfx");
	ptw_declare_category("gfx", "drawing", "slow");
	struct ptw_test_session x;
	/* io off by name; gfx off by its tag "slow" (the default) */
	uint64_t ev = record_instants(
		&s, &x,
		CFG_TE("track_event_config { disabled_categories: \"io\" }", 800),
		"cats.pftrace", 50);
	expect_names(x.out, "app event,50;", ev);
	/* then only what a tag enables */
	ev = record_instants(&s, &x,
			     CFG_TE("track_event_config { disabled_categories: "
				    "\"*\" enabled_tags: \"slow\" }",
				    800),
			     "tags.pftrace", 20);
	expect_names(x.out, "gfx event,20;", ev);
	ptw_test_tp_expect_no_error_stats(x.out);
	cr_assert_eq(ptw_stop(), 0);
	ptw_test_svc_stop(&s);
}

/* Waits (bounded: 10 s) until traced's log says a session is set up. */
static int wait_session_configured(struct ptw_test_svc *s)
{
	char log[400], text[8192];
	snprintf(log, sizeof(log), "%s/traced.log", s->dir);
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(log, "r");
		size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
		if (f)
			fclose(f);
		text[n] = 0;
		if (strstr(text, "Configured tracing session"))
			return 1;
		usleep(10000);
	}
	return 0;
}

/* A program that starts while a session runs joins it: traced starts
 * ptw's data source as it registers (the command stream must be open by
 * then, test_system_ipc). */
Test(system, a_program_started_during_a_session_joins_it)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	struct ptw_test_session x;
	char got[256];
	ptw_test_svc_record(&s, &x, CFG_TE("", 3000), "late.pftrace");
	cr_assert(wait_session_configured(&s), "no session in traced.log");
	start_system("app");
	ptw_test_svc_expect_running(&s, 1, 30000, "the session never started");
	for (int i = 0; i < 10; i++)
		PTW_INSTANT("app", "late");
	ptw_test_svc_record_ended(&s, &x);
	cr_assert_eq(ptw_stop(), 0);
	rows(x.out, "select name, count(*) from slice group by name", got,
	     sizeof(got));
	cr_assert_str_eq(got, "late,10;");
	ptw_test_tp_expect_no_error_stats(x.out);
	ptw_test_svc_stop(&s);
}

Test(system, the_service_killed_and_restarted_the_next_session_records)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	start_system("app,io,gfx");
	struct ptw_test_session x;
	record_instants(&s, &x, CFG_ALL, "first.pftrace", 10);
	ptw_test_svc_kill(&s);
	/* the program runs on without a service */
	for (int i = 0; i < 1000; i++)
		PTW_INSTANT("app", "nobody");
	cr_assert_eq(ptw_is_running(), 0);
	ptw_test_svc_restart(&s);
	cr_assert(ptw_test_svc_wait_registered(&s), "ptw did not come back");
	uint64_t ev = record_instants(&s, &x, CFG_ALL, "second.pftrace", 30);
	expect_names(x.out, "app event,30;gfx event,30;io event,30;", ev);
	ptw_test_tp_expect_no_error_stats(x.out);
	cr_assert_eq(ptw_stop(), 0);
	ptw_test_svc_stop(&s);
}

Test(system, clear_incremental_state_keeps_every_event_named)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	start_system("app,io");
	struct ptw_test_session x;
	char got[256];
	ptw_test_svc_record_started(
		&s, &x,
		"buffers { size_kb: 8192 }\n"
		"data_sources { config { name: \"track_event\" } }\n"
		"incremental_state_config { clear_period_ms: 50 }\n"
		"duration_ms: 1000\n",
		"clear.pftrace");
	const char *out = x.out;
	int n = 0;
	while (ptw_is_running()) {
		PTW_SCOPE("app", "step");
		PTW_INSTANT("io", "poll");
		n++;
		usleep(1000);
	}
	ptw_test_perfetto_wait(x.pid);
	/* every event named (interning restarted right after each clear);
	 * the last loop may race the stop */
	rows(out, "select count(*) from slice where name is null or name not "
		  "in ('step', 'poll')",
	     got, sizeof(got));
	cr_assert_str_eq(got, "0;");
	rows(out, "select count(*) from slice where name = 'step'", got,
	     sizeof(got));
	int steps = atoi(got);
	cr_assert(steps >= n - 1 && steps <= n, "%d steps of %d", steps, n);
	cr_assert(n > 100, "only %d steps in a second", n);
	ptw_test_tp_expect_no_error_stats(out);
	cr_assert_eq(ptw_stop(), 0);
	ptw_test_svc_stop(&s);
}

/* Names this thread "<prefix>-<i>", i its index (the thread's arg). */
static void name_thread(const char *prefix, void *arg)
{
	char name[32];
	snprintf(name, sizeof(name), "%s-%ld", prefix, (long)arg);
	ptw_set_thread_name(name);
}

#define N_MANY 96

static void *many_worker(void *arg)
{
	name_thread("many", arg);
	for (int i = 0; i < 20; i++) {
		PTW_SCOPE("app", "unit");
		PTW_INSTANT("io", "mark");
	}
	return NULL;
}

/* More threads (sequences) than the buffer has chunks (a 128 KiB buffer
 * of 32 KiB pages: 4): each event is in the trace, on its thread, or its
 * loss is counted by ptw and shown by trace_processor; none invented. */
Test(system, more_threads_than_chunks)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	struct ptw_config cfg = ptw_test_sys_config("app,io");
	cfg.system_buffer_kb = 128;
	ptw_test_start_or_fail(&cfg);
	struct ptw_test_session x;
	char got[4096];
	ptw_test_svc_record_started(&s, &x, CFG_ALL, "many.pftrace");
	const char *out = x.out;
	pthread_t th[N_MANY];
	for (long i = 0; i < N_MANY; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, many_worker, (void *)i), 0);
	for (int i = 0; i < N_MANY; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(ptw_flush(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	ptw_test_svc_record_ended(&s, &x);
	/* none invented: only our names, on our threads, at most 20 each */
	rows(out,
	     "select count(*) from slice s join thread_track tt on s.track_id "
	     "= tt.id join thread t using (utid) where s.name not in ('unit', "
	     "'mark') or t.name not like 'many-%'",
	     got, sizeof(got));
	cr_assert_str_eq(got, "0;");
	rows(out,
	     "select count(*) from (select t.name, count(*) c from slice s join "
	     "thread_track tt on s.track_id = tt.id join thread t using (utid) "
	     "group by t.name having c > 40)",
	     got, sizeof(got));
	cr_assert_str_eq(got, "0;");
	rows(out, "select count(*) from slice", got, sizeof(got));
	int n = atoi(got);
	cr_log_info("%d of %d events, %llu packets lost", n, N_MANY * 40,
		    (unsigned long long)st.system_lost);
	if (st.system_lost == 0) {
		cr_assert_eq(n, N_MANY * 40, "%d of %d events, none lost", n,
			     N_MANY * 40);
		ptw_test_tp_expect_no_error_stats(out);
	} else {
		cr_assert_lt(n, N_MANY * 40);
		rows(out,
		     "select count(*) from stats where value > 0 and severity = "
		     "'data_loss'",
		     got, sizeof(got));
		cr_assert_neq(atoi(got), 0, "%llu packets lost, not shown",
			      (unsigned long long)st.system_lost);
	}
	cr_assert_eq(ptw_stop(), 0);
	ptw_test_svc_stop(&s);
}

/* The session's buffer far too small (discard when full): the service
 * counts what it dropped, trace_processor shows it, and what is there
 * was logged. */
Test(system, a_buffer_far_too_small_shows_its_loss)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	start_system("app,io,gfx");
	struct ptw_test_session x;
	char got[1024];
	record_instants(&s, &x,
			"buffers { size_kb: 64 fill_policy: DISCARD }\n"
			"data_sources { config { name: \"track_event\" } }\n"
			"duration_ms: 1000\n",
			"small.pftrace", 50000);
	const char *out = x.out;
	rows(out,
	     "select count(*) from slice where name not in ('app event', "
	     "'io event', 'gfx event')",
	     got, sizeof(got));
	cr_assert_str_eq(got, "0;");
	rows(out, "select count(*) from slice", got, sizeof(got));
	int n = atoi(got);
	cr_assert(n > 0 && n < 150000, "%d of 150000 events", n);
	/* what a SDK program shows in the same case: the service's count of
	 * the chunks it discarded (severity info; the UI flags it) */
	rows(out,
	     "select value from stats where name = 'traced_buf_chunks_discarded'",
	     got, sizeof(got));
	cr_assert_gt(atoi(got), 0, "the loss is not shown (%s)", got);
	cr_assert_eq(ptw_stop(), 0);
	ptw_test_svc_stop(&s);
}

/* Mounts tracefs when absent (as root); 1 if sched_switch can be
 * recorded. */
static int tracefs_ready(void)
{
	if (access("/sys/kernel/tracing/events/sched/sched_switch", F_OK) == 0)
		return 1;
	if (geteuid() != 0)
		return 0;
	if (system("mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null") != 0)
		return 0;
	return access("/sys/kernel/tracing/events/sched/sched_switch", F_OK) == 0;
}

static void *sched_worker(void *arg)
{
	name_thread("sched", arg);
	for (int i = 0; i < 20000 && ptw_is_running(); i++) {
		PTW_SCOPE("app", "burst");
		volatile unsigned spin = 0; /* busy on the CPU a while */
		for (unsigned k = 0; k < 20000; k++)
			spin = spin + k;
		(void)spin;
		PTW_INSTANT("io", "between");
		usleep(500); /* off the CPU between bursts */
	}
	return NULL;
}

/* As root with tracefs: the scheduler beside our events. Each instant and
 * each slice's begin and end falls inside a period when sched shows the
 * same thread running (a thread logs only while it runs): the clocks line
 * up and the threads are the same threads. Exactly, with one exception
 * that the kernel's data itself shows: a run of the thread whose
 * sched_switch into it is missing from the ftrace data (on this VM the
 * switches away from one thread of the VM's agent, "tokio-rt-worker",
 * are now and then absent). The next switch on that CPU then has our
 * thread as prev_pid while the one before switched to another thread:
 * trace_processor counts it (mismatched_sched_switch_tids) and, without
 * the switch in, shows no sched period for that run. Such runs are
 * found from the switches' prev_pid (compact_sched off: its format has
 * no prev_pid) and their points are not counted as outside. Only points
 * while every CPU's data runs count: a CPU's switches may end earlier
 * than another's (seen under load: a thread's last run on a CPU whose
 * data had ended, with no switch into it). */
static void sched_alignment(enum ptw_clock clock)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	if (!tracefs_ready()) {
		ptw_test_svc_stop(&s);
		cr_skip_test("no tracefs (needs root to mount it): sched_switch not "
			"recordable");
	}
	ptw_test_svc_start_probes(&s);
	start_system_clock("app,io", clock);
	struct ptw_test_session x;
	char got[1024];
	ptw_test_svc_record_started(
		&s, &x,
		"buffers { size_kb: 32768 }\n"
		"data_sources { config { name: \"track_event\" } }\n"
		"data_sources { config { name: \"linux.ftrace\" ftrace_config { "
		"ftrace_events: \"sched/sched_switch\" "
		"compact_sched { enabled: false } } } }\n"
		"duration_ms: 3000\n",
		"sched.pftrace");
	const char *out = x.out;
	pthread_t th[3];
	for (long i = 0; i < 3; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, sched_worker, (void *)i), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	ptw_test_svc_record_ended(&s, &x);
	rows(out,
	     "select count(*) from slice s join thread_track tt on s.track_id = "
	     "tt.id join thread t using (utid) where t.name like 'sched-%'",
	     got, sizeof(got));
	int ours = atoi(got);
	cr_assert_gt(ours, 100, "only %d of our events", ours);
	/* every point of ours (an instant, a slice's begin and end) while
	 * the kernel recorded the scheduler on every CPU (its data source
	 * starts a little after ours and stops before) inside a sched
	 * period of its thread, or inside a run of it whose switch in is
	 * missing (gap: from the switch before, to the switch out of our
	 * thread that follows it with no switch in) */
	rows(out,
	     "create perfetto table sw as select ts, cpu, extract_arg("
	     "arg_set_id, 'prev_pid') prev, extract_arg(arg_set_id, "
	     "'next_pid') nxt from ftrace_event where name = 'sched_switch'; "
	     "create perfetto table gap as select * from (select ts, prev, "
	     "lag(nxt) over (partition by cpu order by ts) pn, lag(ts) over "
	     "(partition by cpu order by ts) pts from sw) where pn != prev; "
	     "create perfetto table q as with w as (select max(f) a, min(l) b "
	     "from (select min(ts) f, max(ts) l from sched group by cpu)), "
	     "p as (select tt.utid, t.tid, s.ts as x from "
	     "slice s join thread_track tt on s.track_id = tt.id join thread "
	     "t using (utid) where t.name like 'sched-%' union all select "
	     "tt.utid, t.tid, s.ts + s.dur from slice s join thread_track tt "
	     "on s.track_id = tt.id join thread t using (utid) where t.name "
	     "like 'sched-%' and s.dur > 0) select p.* from p, w where p.x > "
	     "w.a and p.x < w.b; "
	     "create perfetto table o as select * from q where not exists "
	     "(select 1 from sched c where c.utid = q.utid and c.ts <= q.x and "
	     "(c.dur < 0 or q.x <= c.ts + c.dur)); "
	     "select (select count(*) from q), (select count(*) from o), "
	     "(select count(*) from o where not exists (select 1 from gap g "
	     "where g.prev = o.tid and g.pts <= o.x and o.x <= g.ts)), "
	     "(select count(*) from gap)",
	     got, sizeof(got));
	int checked = 0, outside = -1, unexplained = -1, gaps = -1;
	cr_assert_eq(sscanf(got, "%d,%d,%d,%d;", &checked, &outside,
			    &unexplained, &gaps), 4, "%s", got);
	cr_log_info("%d points, %d outside their thread's sched periods, all "
		    "but %d in runs whose switch in the kernel's data lacks "
		    "(%d such switches)", checked, outside, unexplained, gaps);
	cr_assert_gt(checked, 100, "only %d points while sched ran", checked);
	cr_assert_eq(unexplained, 0, "%d of %d points of ours outside their "
		     "thread's running periods (%d in runs the kernel's data "
		     "lacks)", unexplained, checked, outside - unexplained);
	/* the only errors: those missing switches, as trace_processor
	 * counts them */
	rows(out,
	     "select name, value from stats where value > 0 and severity in "
	     "('error', 'data_loss') and name != 'mismatched_sched_switch_tids'",
	     got, sizeof(got));
	cr_assert_str_eq(got, "", "error stats: %s", got);
	rows(out,
	     "select coalesce(sum(value), 0) from stats where name = "
	     "'mismatched_sched_switch_tids'",
	     got, sizeof(got));
	cr_assert_eq(atoi(got), gaps, "trace_processor counts %s missing "
		     "switches, the query %d", got, gaps);
	/* the clock the trace says it used */
	rows(out, "select str_value from metadata where name = 'cr-ptw.clock'",
	     got, sizeof(got));
	cr_assert_str_eq(got, clock == PTW_CLOCK_TSC ? "tsc_boottime;"
						     : "boottime;");
	cr_assert_eq(ptw_stop(), 0);
	ptw_test_svc_stop(&s);
}

/* With the monotonic clock, and with the CPU's counter as the producers'
 * clock: the backend converts its ticks to BOOTTIME, re-anchored every
 * pass (tsc.c), exactly enough for every point to stay inside its
 * thread's running periods over the session's seconds. */
PTW_TEST_SVC_EACH_CLOCK(system,
			our_events_fall_where_sched_shows_the_thread_running,
			with_the_tsc_our_events_fall_where_sched_shows_them_running,
			sched_alignment)

/* A program that exits while a session records it: stop_at_exit sends
 * what it logged to the service before it disconnects. */
Test(system, an_exit_during_the_session_keeps_what_was_logged)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	pid_t child = fork();
	cr_assert(child >= 0);
	if (child == 0) {
		struct ptw_config cfg = ptw_test_sys_config("app");
		cfg.stop_at_exit = 1;
		if (ptw_start(&cfg) != 0)
			_exit(2);
		if (!ptw_test_wait_running(1, 20000))
			_exit(3);
		for (int i = 0; i < 5000; i++)
			PTW_INSTANT("app", "last words");
		exit(0); /* atexit: ptw_stop() */
	}
	cr_assert(ptw_test_svc_wait_registered(&s), "the child did not register");
	struct ptw_test_session x;
	char got[256];
	ptw_test_svc_record(&s, &x, CFG_TE("", 3000), "exit.pftrace");
	int st = 0;
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	ptw_test_perfetto_wait(x.pid);
	rows(x.out, "select count(*) from slice where name = 'last words'", got,
	     sizeof(got));
	cr_assert_str_eq(got, "5000;");
	ptw_test_svc_stop(&s);
}

/* The declared categories reach the service (what the UI lists): those of
 * cfg.categories at registration, one declared later by UpdateDataSource. */
Test(system, declared_categories_are_listed_by_the_service)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	start_system("first.cat,second.cat");
	cr_assert(ptw_test_svc_wait_query(&s, "first.cat,second.cat"),
		  "the service does not list cfg.categories");
	cr_assert_eq(ptw_declare_category("late.cat", "declared later", "slow"),
		     0);
	cr_assert(ptw_test_svc_wait_query(&s, "second.cat,late.cat"),
		  "the service does not list a category declared later");
	cr_assert_eq(ptw_declare_category(NULL, NULL, NULL), PTW_ERR_INVALID);
	cr_assert_eq(ptw_declare_category("", NULL, NULL), PTW_ERR_INVALID);
	cr_assert_eq(ptw_stop(), 0);
	ptw_test_svc_stop(&s);
}

/* ptw in system mode with a 128 KiB shared memory buffer (8 chunks of
 * 16 KiB) and large rings (a full one drops: the default), a session
 * of 'cfg_text' into 'name' (x) that records "first", then the service
 * frozen (SIGSTOP) while this thread logs a burst that fills the buffer
 * and more: when it returns the buffer is full and the service does not
 * read. */
static void fill_a_frozen_service(struct ptw_test_svc *s,
				  struct ptw_test_session *x,
				  const char *cfg_text, const char *name)
{
	struct ptw_config cfg = ptw_test_sys_config("app");
	cfg.overflow = PTW_OVERFLOW_DROP;
	cfg.system_buffer_kb = 128;
	cfg.ring_slots = 1u << 18;
	ptw_test_start_or_fail(&cfg);
	ptw_test_svc_record_started(s, x, cfg_text, name);
	PTW_INSTANT("app", "first");
	cr_assert_eq(ptw_flush(), 0);
	kill(s->traced, SIGSTOP);
	for (int i = 0; i < 50000; i++)
		PTW_INSTANT("app", "burst");
	cr_assert_eq(ptw_flush(), 0); /* bounded: no service reads */
}

/* A session of 16 MiB for 'ms' milliseconds. */
#define CFG_FROZEN(ms)                                                       \
	"buffers { size_kb: 16384 }\n"                                       \
	"data_sources { config { name: \"track_event\" } }\n"                \
	"duration_ms: " #ms "\n"

/* The service stops reading (SIGSTOP) while ptw writes: the backend waits
 * a bounded time, then drops what has no room; ptw counts it, and once the
 * service reads again trace_processor shows the loss on the sequence;
 * none invented. */
Test(system, a_service_that_stops_reading_loses_counted_and_shown)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	struct ptw_test_session x;
	char got[1024];
	fill_a_frozen_service(&s, &x, CFG_FROZEN(2000), "stopped.pftrace");
	const char *out = x.out;
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	kill(s.traced, SIGCONT);
	cr_assert_gt(st.system_lost, 0, "nothing counted as lost");
	for (int i = 0; i < 10; i++)
		PTW_INSTANT("app", "after");
	ptw_test_svc_record_ended(&s, &x);
	rows(out,
	     "select count(*) from slice where name not in ('first', 'burst', "
	     "'after')",
	     got, sizeof(got));
	cr_assert_str_eq(got, "0;");
	rows(out, "select count(*) from slice where name = 'burst'", got,
	     sizeof(got));
	cr_assert_lt(atoi(got), 50000);
	rows(out, "select count(*) from slice where name = 'after'", got,
	     sizeof(got));
	cr_assert_str_eq(got, "10;");
	rows(out,
	     "select count(*) from stats where value > 0 and severity = "
	     "'data_loss'",
	     got, sizeof(got));
	cr_assert_gt(atoi(got), 0, "%llu packets lost, not shown",
		     (unsigned long long)st.system_lost);
	cr_assert_eq(ptw_stop(), 0);
	ptw_test_svc_stop(&s);
}

#define N_LOST 6

static void *lost_worker(void *arg)
{
	name_thread("lost", arg);
	for (int i = 0; i < 10; i++)
		PTW_INSTANT("app", "never there");
	return NULL;
}

struct resumer {
	pid_t traced;
	int fd; /* a byte on it: ptw_stop() begins */
};

/* Lets the frozen service go on once the program's stop has begun. */
static void *resume_traced(void *arg)
{
	struct resumer *r = arg;
	char b;
	cr_assert_eq(read(r->fd, &b, 1), 1);
	usleep(400 * 1000); /* the stop is waiting for room by then */
	kill(r->traced, SIGCONT);
	return NULL;
}

/* Threads whose every packet is dropped (the service frozen, the buffer
 * full), then the program stops: the stop waits (bounded) for the service
 * to free chunks and writes each sequence's loss mark, so that
 * trace_processor shows a packet loss for each of those sequences (and
 * one for the main thread's burst), not only ptw's count. */
Test(system, a_sequence_that_loses_every_packet_shows_its_loss)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	struct ptw_test_session x;
	char got[1024];
	fill_a_frozen_service(&s, &x, CFG_FROZEN(3000), "lost.pftrace");
	const char *out = x.out;
	pthread_t th[N_LOST];
	for (long i = 0; i < N_LOST; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, lost_worker, (void *)i),
			     0);
	for (int i = 0; i < N_LOST; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(ptw_flush(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_gt(st.system_lost, 10 * N_LOST, "%llu lost",
		     (unsigned long long)st.system_lost);
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	struct resumer rs = {s.traced, pfd[0]};
	pthread_t rt;
	cr_assert_eq(pthread_create(&rt, NULL, resume_traced, &rs), 0);
	cr_assert_eq(write(pfd[1], "x", 1), 1);
	cr_assert_eq(ptw_stop(), 0); /* the session's end, buffer full */
	pthread_join(rt, NULL);
	close(pfd[0]);
	close(pfd[1]);
	ptw_test_perfetto_wait(x.pid);
	rows(out,
	     "select count(*) from slice where name not in ('first', "
	     "'burst')",
	     got, sizeof(got));
	cr_assert_str_eq(got, "0;");
	/* per buffer: one counted mark per sequence in loss (trace_processor
	 * ignores the mark on a sequence's first packet) */
	rows(out,
	     "select idx, value from stats where name = "
	     "'traced_buf_sequence_packet_loss'",
	     got, sizeof(got));
	int idx = -1, lost = 0;
	cr_assert_eq(sscanf(got, "%d,%d;", &idx, &lost), 2, "%s", got);
	cr_assert_eq(idx, 0);
	cr_assert_geq(lost, N_LOST + 1, "%d sequences shown in loss", lost);
	rows(out,
	     "select count(*) from stats where value > 0 and severity = "
	     "'error'",
	     got, sizeof(got));
	cr_assert_str_eq(got, "0;");
	ptw_test_svc_stop(&s);
}

#define CFG_EDGES                                                            \
	"buffers { size_kb: 8192 }\n"                                        \
	"data_sources { config { name: \"track_event\" } }\n"                \
	"duration_ms: 800\n"

static uint64_t invalid_now(void)
{
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	return st.invalid;
}

/* Events logged before, during and after two sessions, with slices open
 * at a session's start and at its stop. As in a flight recorder's
 * snapshot, a slice open at the stop stays open (dur -1) and an END whose
 * slice began before the session is not written (trace_processor shows
 * no unmatched END). Unlike a snapshot, a slice begun before the session
 * is left out, not begun again at its start: no session was running, so
 * the macros cost only their check and nothing recorded the BEGIN.
 * Neither counts as invalid; an async END from before the session does
 * not end the same id begun again in it. */
Test(system, slices_open_at_a_sessions_start_or_stop)
{
	struct ptw_test_svc s;
	ptw_test_svc_start_or_skip(&s);
	start_system("app");
	ptw_set_thread_name("edges");
	struct ptw_test_session one, two;
	char got[4096];
	PTW_BEGIN("app", "before");
	PTW_ASYNC_BEGIN("app", "before async", 5);
	ptw_test_svc_record(&s, &one, CFG_EDGES, "edges1.pftrace");
	{
		PTW_SCOPE("app", "before scope");
		ptw_test_svc_expect_running(&s, 1, 30000, "the session never started");
		PTW_INSTANT("app", "in1");
	}
	PTW_END("app");          /* of "before" */
	PTW_ASYNC_END("app", 5); /* of "before async" */
	PTW_BEGIN("app", "inside");
	{
		PTW_SCOPE("app", "inner");
		PTW_INSTANT("app", "in2");
	}
	PTW_END("app");
	PTW_BEGIN("app", "open at stop");
	PTW_ASYNC_BEGIN("app", "async open at stop", 6);
	{
		PTW_SCOPE("app", "scope open at stop");
		ptw_test_svc_record_ended(&s, &one);
		cr_assert_eq(invalid_now(), 0);
		ptw_test_svc_record_started(&s, &two, CFG_EDGES,
					    "edges2.pftrace");
		{
			PTW_SCOPE("app", "second");
			PTW_INSTANT("app", "in3");
		}
	}                        /* "scope open at stop" ends */
	PTW_ASYNC_END("app", 6); /* of "async open at stop" */
	PTW_ASYNC_BEGIN("app", "same id again", 6);
	PTW_INSTANT("app", "in4");
	PTW_ASYNC_END("app", 6);
	PTW_END("app");          /* of "open at stop" */
	PTW_INSTANT("app", "in5");
	ptw_test_svc_record_ended(&s, &two);
	cr_assert_eq(invalid_now(), 0);
	PTW_INSTANT("app", "after"); /* no session: not recorded */
	cr_assert_eq(ptw_stop(), 0);
	const char *out1 = one.out, *out2 = two.out;

	/* name, depth, thread (- for the async track), dur: -1 open, 0, +
	 * longer */
	static const char *const sql =
		"select s.name, s.depth, coalesce(t.name, '-'), case when "
		"s.dur < 0 then -1 when s.dur = 0 then 0 else '+' end from "
		"slice s left join thread_track tt on s.track_id = tt.id left "
		"join thread t using (utid) order by s.ts";
	rows(out1, sql, got, sizeof(got));
	cr_assert_str_eq(got, "in1,0,edges,0;inside,0,edges,+;inner,1,edges,+;"
			      "in2,2,edges,0;open at stop,0,edges,-1;"
			      "async open at stop,0,-,-1;"
			      "scope open at stop,1,edges,-1;");
	rows(out2, sql, got, sizeof(got));
	cr_assert_str_eq(got, "second,0,edges,+;in3,1,edges,0;"
			      "same id again,0,-,+;in4,0,edges,0;"
			      "in5,0,edges,0;");
	/* each slice ends at its own END: after what it holds, before what
	 * follows it */
	rows(out1,
	     "select count(*) from slice a, slice b where a.name = 'inside' "
	     "and b.name = 'inner' and a.ts < b.ts and b.ts + b.dur < a.ts + "
	     "a.dur and a.ts + a.dur < (select ts from slice where name = "
	     "'open at stop')",
	     got, sizeof(got));
	cr_assert_str_eq(got, "1;");
	rows(out2,
	     "select count(*) from slice a, slice b, slice c where a.name = "
	     "'same id again' and b.name = 'in4' and c.name = 'in5' and a.ts "
	     "< b.ts and b.ts < a.ts + a.dur and a.ts + a.dur < c.ts",
	     got, sizeof(got));
	cr_assert_str_eq(got, "1;");
	ptw_test_tp_expect_no_error_stats(out1);
	ptw_test_tp_expect_no_error_stats(out2);
	ptw_test_svc_stop(&s);
}
