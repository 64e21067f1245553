/* test_system.c - system mode against Perfetto's real service: a private
 * `tracebox traced` on temp sockets, this test process a producer in
 * system mode, sessions started with `tracebox perfetto`, and
 * trace_processor on what they recorded (skipped without ../shared/tp).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/sys_service.h"
#include "support/tp_shell.h"

#define CFG_ALL                                                              \
	"buffers { size_kb: 8192 }\n"                                        \
	"data_sources { config { name: \"track_event\" } }\n"                \
	"duration_ms: 1500\n"

static void start_system(const char *categories)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.system = 1;
	cfg.categories = categories;
	cfg.process_name = "sysproc";
	cfg.overflow = PTW_OVERFLOW_WAIT;
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "ptw_start: %s", err.msg);
}

/* trace_processor's rows of 'sql' on 'trace', ';' after each. */
static void rows(const char *trace, const char *sql, char *out, size_t max)
{
	cr_assert_eq(ptw_test_tp_rows(trace, sql, out, max), 0);
}

static void expect_no_errors(const char *trace)
{
	char got[2048];
	rows(trace,
	     "select name, idx, value from stats where value > 0 and severity "
	     "in ('error', 'data_loss')",
	     got, sizeof(got));
	cr_assert_str_empty(got, "%s: error stats: %s", trace, got);
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

	char out[400];
	snprintf(out, sizeof(out), "%s/out.pftrace", s.dir);
	pid_t pf = ptw_test_perfetto_start(&s, CFG_ALL, out);
	cr_assert(ptw_test_wait_running(1, 10000), "the session never started");
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
	cr_assert(ptw_test_wait_running(0, 20000), "the session never stopped");
	PTW_INSTANT("app", "after"); /* after the session: not recorded */
	ptw_test_perfetto_wait(pf);
	cr_assert_eq(ptw_stop(), 0);

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
	cr_assert_str_eq(got, "queue,7.0;");
	rows(out, "select name from slice where track_id not in (select id "
		  "from thread_track)",
	     got, sizeof(got));
	cr_assert_str_eq(got, "request;");
	rows(out, "select count(*) from flow", got, sizeof(got));
	cr_assert_str_eq(got, "1;");
	expect_no_errors(out);
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

Test(system, an_output_beside_system_mode_is_refused_for_now)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.system = 1;
	cfg.output_path = "/dev/null";
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), PTW_ERR_INVALID);
	cr_assert(strstr(err.msg, "system mode") != NULL, "%s", err.msg);
}
