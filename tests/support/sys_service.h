/* sys_service.h - a private Perfetto tracing service for the system mode
 * tests: `tracebox traced` on sockets in a fresh temp dir, and sessions
 * recorded with `tracebox perfetto` (Perfetto v58.2, beside
 * trace_processor_shell: $PTW_SHARED_DIR/tp, else ../shared/tp).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TEST_SYS_SERVICE_H
#define PTW_TEST_SYS_SERVICE_H

#include <stddef.h>
#include <sys/types.h>

#include "ptw/tracer.h"

struct ptw_test_svc {
	char dir[256];
	char prod[320], cons[320];
	char tracebox[4096];
	pid_t traced;
	pid_t probes;   /* traced_probes, if started */
};

/* The path of tracebox, or NULL (the path looked at in 'looked'). */
const char *ptw_test_tracebox_find(const char **looked);

/* Skips the test (cr_skip) with a clear message unless tracebox and
 * trace_processor_shell are there; then starts traced on a temp dir's
 * sockets, waits (bounded) until its producer socket exists, and sets
 * PERFETTO_PRODUCER_SOCK_NAME / PERFETTO_CONSUMER_SOCK_NAME in this
 * process. */
void ptw_test_svc_start_or_skip(struct ptw_test_svc *s);
/* Starts traced_probes (the kernel's data sources) beside traced, once
 * no other test on the machine does (a lock held until this process
 * exits: ftrace is one per machine). */
void ptw_test_svc_start_probes(struct ptw_test_svc *s);
/* Starts traced again on the same sockets (after ptw_test_svc_kill). */
void ptw_test_svc_restart(struct ptw_test_svc *s);
/* Kills traced (SIGKILL, by pid) and reaps it. */
void ptw_test_svc_kill(struct ptw_test_svc *s);
/* Kills traced and removes the temp dir. */
void ptw_test_svc_stop(struct ptw_test_svc *s);

/* Waits (bounded: 10 s) until a producer registered "track_event" with
 * the service (`tracebox perfetto --query` lists it). 1 if so. */
int ptw_test_svc_wait_registered(struct ptw_test_svc *s);
/* Waits (bounded: 10 s) until `tracebox perfetto --query` prints a line
 * holding 'word' (a category ptw declared, ...). 1 if so. */
int ptw_test_svc_wait_query(struct ptw_test_svc *s, const char *word);

/* Writes 'cfg' (a text TraceConfig) to the temp dir and starts
 * `tracebox perfetto --txt -c CFG -o OUT`; returns its pid. */
pid_t ptw_test_perfetto_start(struct ptw_test_svc *s, const char *cfg,
			      const char *out);
/* Waits for it; fails the test unless it exited 0. */
void ptw_test_perfetto_wait(pid_t pid);

/* s->dir/'name' into buf (len bytes); returns buf. */
char *ptw_test_svc_path(const struct ptw_test_svc *s, char *buf, size_t len,
			const char *name);

/* One session recorded by `tracebox perfetto` into the temp dir. */
struct ptw_test_session {
	char out[400]; /* the trace it writes */
	pid_t pid;     /* tracebox perfetto's */
};

/* Starts a session of 'cfg' (a text TraceConfig) that writes
 * s->dir/'name' (x->out); returns at once. */
void ptw_test_svc_record(struct ptw_test_svc *s, struct ptw_test_session *x,
			 const char *cfg, const char *name);
/* ptw_test_svc_record, then waits (bounded: 30 s) until ptw records in
 * it; if it does not, fails as ptw_test_svc_expect_running. */
#define ptw_test_svc_record_started(s, x, cfg, name)                         \
	ptw_test_svc_record_started_at(s, x, cfg, name, __FILE__, __LINE__)
void ptw_test_svc_record_started_at(struct ptw_test_svc *s,
				    struct ptw_test_session *x,
				    const char *cfg, const char *name,
				    const char *file, int line);
/* Waits (bounded: 30 s) until ptw no longer records (the session's
 * duration ended), failing as ptw_test_svc_expect_running if it still
 * does; then waits for perfetto (ptw_test_perfetto_wait). */
#define ptw_test_svc_record_ended(s, x)                                      \
	ptw_test_svc_record_ended_at(s, x, __FILE__, __LINE__)
void ptw_test_svc_record_ended_at(struct ptw_test_svc *s,
				  struct ptw_test_session *x,
				  const char *file, int line);

/* A config for system mode as these tests start it: zeroed, then
 * system = 1, 'categories' and overflow PTW_OVERFLOW_WAIT. */
struct ptw_config ptw_test_sys_config(const char *categories);

/* Waits (bounded: 'ms', polling each 2 ms) until ptw_is_running() is
 * 'want'. 1 if it became so, 0 if not. */
int ptw_test_wait_running(int want, int ms);

/* Waits as ptw_test_wait_running; if it times out, fails the test with
 * what explains it: the caller's line, ptw's connection
 * (ptw_sys_describe) and the ends of traced's and perfetto's logs.
 * 'what' names the wait. */
#define ptw_test_svc_expect_running(s, want, ms, what)                       \
	ptw_test_svc_expect_running_at(s, want, ms, what, __FILE__, __LINE__)
void ptw_test_svc_expect_running_at(struct ptw_test_svc *s, int want, int ms,
				    const char *what, const char *file,
				    int line);
/* The same for 'n' system sessions recording (ptw_sys_sessions). */
#define ptw_test_svc_expect_sessions(s, n, ms)                               \
	ptw_test_svc_expect_sessions_at(s, n, ms, __FILE__, __LINE__)
void ptw_test_svc_expect_sessions_at(struct ptw_test_svc *s, int n, int ms,
				     const char *file, int line);

/* Skips the current test unless the CPU's counter is usable as the
 * producers' clock (ptw_arch_counter_usable). */
void ptw_test_cpu_counter_or_skip(void);

/* Two tests of 'fn' (a function of an enum ptw_clock): 'name' runs it
 * with PTW_CLOCK_MONOTONIC, 'name_tsc' with PTW_CLOCK_TSC where the CPU's
 * counter is usable (skipped elsewhere). */
#define PTW_TEST_SVC_EACH_CLOCK(suite, name, name_tsc, fn)                   \
	Test(suite, name) { fn(PTW_CLOCK_MONOTONIC); }                       \
	Test(suite, name_tsc)                                                \
	{                                                                    \
		ptw_test_cpu_counter_or_skip();                              \
		fn(PTW_CLOCK_TSC);                                           \
	}

#endif /* PTW_TEST_SYS_SERVICE_H */
