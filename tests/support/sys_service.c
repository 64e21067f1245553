/* sys_service.c - a private tracing service for the tests (sys_service.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include "sys_service.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/arch/arch.h"
#include "lib/system/system.h"
#include "ptw/tracer.h"
#include "ptw_test.h"
#include "tp_shell.h"

const char *ptw_test_tracebox_find(const char **looked)
{
	static char path[4096];
	const char *env = getenv("PTW_SHARED_DIR");
	if (env && *env) {
		snprintf(path, sizeof(path), "%s/tp/tracebox", env);
	} else {
		char root[3000];
		ptw_test_src_root(root, sizeof(root));
		snprintf(path, sizeof(path), "%s/../shared/tp/tracebox", root);
	}
	if (looked)
		*looked = path;
	return access(path, X_OK) == 0 ? path : NULL;
}

static void ptw_test_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Runs tracebox with argv[1..], stdout/stderr to 'log'. */
static pid_t ptw_test_spawn(const char *tracebox, const char *const *args,
			    const char *log)
{
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork failed");
	if (pid == 0) {
		/* dies with the test, also one that fails half-way */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		char *argv[16];
		size_t n = 0;
		argv[n++] = (char *)tracebox;
		for (; args[n - 1] && n < 15; n++)
			argv[n] = (char *)args[n - 1];
		argv[n] = NULL;
		execv(tracebox, argv);
		_exit(127);
	}
	return pid;
}

static void ptw_test_svc_run(struct ptw_test_svc *s)
{
	unlink(s->prod);
	unlink(s->cons);
	char log[400];
	snprintf(log, sizeof(log), "%s/traced.log", s->dir);
	static const char *const args[] = {"traced", NULL};
	s->traced = ptw_test_spawn(s->tracebox, args, log);
	/* bounded wait for the socket (a start takes milliseconds) */
	struct stat st;
	for (int i = 0; i < 5000 && stat(s->prod, &st) != 0; i++)
		ptw_test_sleep_ms(2);
	cr_assert(stat(s->prod, &st) == 0, "traced did not create %s (see %s)",
		  s->prod, log);
}

void ptw_test_svc_start_or_skip(struct ptw_test_svc *s)
{
	const char *looked;
	memset(s, 0, sizeof(*s));
	const char *tb = ptw_test_tracebox_find(&looked);
	if (!tb)
		cr_skip_test("no tracebox at %s: the system mode test needs Perfetto's "
			"service (set PTW_SHARED_DIR)", looked);
	if (!ptw_test_tp_find(&looked))
		cr_skip_test("no trace_processor_shell at %s", looked);
	snprintf(s->tracebox, sizeof(s->tracebox), "%s", tb);
	snprintf(s->dir, sizeof(s->dir), "/tmp/ptw-sys-XXXXXX");
	cr_assert_not_null(mkdtemp(s->dir));
	snprintf(s->prod, sizeof(s->prod), "%s/producer.sock", s->dir);
	snprintf(s->cons, sizeof(s->cons), "%s/consumer.sock", s->dir);
	setenv("PERFETTO_PRODUCER_SOCK_NAME", s->prod, 1);
	setenv("PERFETTO_CONSUMER_SOCK_NAME", s->cons, 1);
	ptw_test_svc_run(s);
}

void ptw_test_svc_restart(struct ptw_test_svc *s) { ptw_test_svc_run(s); }

void ptw_test_svc_start_probes(struct ptw_test_svc *s)
{
	/* one ftrace session at a time on this machine: the kernel's
	 * tracing is one, and two traced_probes programming it at once
	 * (two tests in parallel, two checkouts) disturb each other. Held
	 * until this test's process exits. */
	int lk = open("/tmp/ptw-test-ftrace.lock", O_RDWR | O_CREAT | O_CLOEXEC,
		      0666);
	cr_assert(lk >= 0, "cannot open /tmp/ptw-test-ftrace.lock");
	while (flock(lk, LOCK_EX) != 0)
		cr_assert(errno == EINTR, "flock failed");
	char log[400];
	snprintf(log, sizeof(log), "%s/probes.log", s->dir);
	static const char *const args[] = {"traced_probes", NULL};
	s->probes = ptw_test_spawn(s->tracebox, args, log);
}

void ptw_test_svc_kill(struct ptw_test_svc *s)
{
	if (s->probes > 0) {
		kill(s->probes, SIGKILL);
		waitpid(s->probes, NULL, 0);
	}
	s->probes = 0;
	if (s->traced > 0) {
		kill(s->traced, SIGKILL);
		waitpid(s->traced, NULL, 0);
	}
	s->traced = 0;
}

void ptw_test_svc_stop(struct ptw_test_svc *s)
{
	ptw_test_svc_kill(s);
	if (!s->dir[0])
		return;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", s->dir);
}

pid_t ptw_test_perfetto_start(struct ptw_test_svc *s, const char *cfg,
			      const char *out)
{
	static int n;
	char path[400], log[400];
	snprintf(path, sizeof(path), "%s/cfg%d.txt", s->dir, n++);
	snprintf(log, sizeof(log), "%s/perfetto.log", s->dir);
	ptw_test_write_file_or_fail(path, cfg, strlen(cfg));
	const char *const args[] = {"perfetto", "--txt", "-c", path, "-o", out,
				    NULL};
	return ptw_test_spawn(s->tracebox, args, log);
}

void ptw_test_perfetto_wait(pid_t pid)
{
	int st = 0;
	cr_assert(waitpid(pid, &st, 0) == pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "tracebox perfetto failed (status %d)", st);
}

char *ptw_test_svc_path(const struct ptw_test_svc *s, char *buf, size_t len,
			const char *name)
{
	int n = snprintf(buf, len, "%s/%s", s->dir, name);
	cr_assert(n >= 0 && (size_t)n < len, "path too long: %s/%s", s->dir,
		  name);
	return buf;
}

void ptw_test_svc_record(struct ptw_test_svc *s, struct ptw_test_session *x,
			 const char *cfg, const char *name)
{
	ptw_test_svc_path(s, x->out, sizeof(x->out), name);
	x->pid = ptw_test_perfetto_start(s, cfg, x->out);
}

void ptw_test_svc_record_started_at(struct ptw_test_svc *s,
				    struct ptw_test_session *x,
				    const char *cfg, const char *name,
				    const char *file, int line)
{
	ptw_test_svc_record(s, x, cfg, name);
	ptw_test_svc_expect_running_at(s, 1, 30000, "the session never started",
				       file, line);
}

void ptw_test_svc_record_ended_at(struct ptw_test_svc *s,
				  struct ptw_test_session *x,
				  const char *file, int line)
{
	ptw_test_svc_expect_running_at(s, 0, 30000, "the session never stopped",
				       file, line);
	ptw_test_perfetto_wait(x->pid);
}

struct ptw_config ptw_test_sys_config(const char *categories)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.system = 1;
	cfg.categories = categories;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	return cfg;
}

void ptw_test_cpu_counter_or_skip(void)
{
	if (!ptw_arch_counter_usable())
		cr_skip_test("no usable CPU counter here");
}

int ptw_test_wait_running(int want, int ms)
{
	for (int i = 0; i < ms / 2; i++) {
		if (ptw_is_running() == want)
			return 1;
		ptw_test_sleep_ms(2);
	}
	return ptw_is_running() == want;
}

/* Polls `perfetto --query | grep -q PATTERN` (bounded: 10 s). */
static int ptw_test_svc_poll_query(struct ptw_test_svc *s, const char *pattern)
{
	char cmd[4700];
	snprintf(cmd, sizeof(cmd),
		 "'%s' perfetto --query 2>/dev/null | grep -q -- '%s'",
		 s->tracebox, pattern);
	for (int i = 0; i < 100; i++) {
		if (system(cmd) == 0)
			return 1;
		ptw_test_sleep_ms(100);
	}
	return 0;
}

int ptw_test_svc_wait_registered(struct ptw_test_svc *s)
{
	return ptw_test_svc_poll_query(s, "^track_event ");
}

int ptw_test_svc_wait_query(struct ptw_test_svc *s, const char *word)
{
	return ptw_test_svc_poll_query(s, word);
}

/* The last 'max'-1 bytes of 'path' (or a line saying it is missing). */
static void ptw_test_tail(const char *path, char *out, size_t max)
{
	out[0] = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(out, max, "(no %s)", path);
		return;
	}
	long end = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	long from = end > (long)max - 1 ? end - ((long)max - 1) : 0;
	if (end >= 0 && fseek(f, from, SEEK_SET) == 0)
		out[fread(out, 1, max - 1, f)] = 0;
	fclose(f);
}

/* Fails the test with ptw's side and the service's logs. */
static void ptw_test_svc_fail_explained(struct ptw_test_svc *s, const char *what,
					const char *file, int line)
{
	char ptw[512], traced[1500], perfetto[1000], path[400];
	ptw_sys_describe(ptw, sizeof(ptw));
	snprintf(path, sizeof(path), "%s/traced.log", s->dir);
	ptw_test_tail(path, traced, sizeof(traced));
	snprintf(path, sizeof(path), "%s/perfetto.log", s->dir);
	ptw_test_tail(path, perfetto, sizeof(perfetto));
	cr_assert_fail("%s:%d: %s\nptw: %s\ntraced.log ends:\n%s\nperfetto.log ends:"
		       "\n%s", file, line, what, ptw, traced, perfetto);
}

void ptw_test_svc_expect_running_at(struct ptw_test_svc *s, int want, int ms,
				    const char *what, const char *file, int line)
{
	if (!ptw_test_wait_running(want, ms))
		ptw_test_svc_fail_explained(s, what, file, line);
}

void ptw_test_svc_expect_sessions_at(struct ptw_test_svc *s, int n, int ms,
				     const char *file, int line)
{
	for (int i = 0; i < ms / 2 && ptw_sys_sessions() != n; i++)
		ptw_test_sleep_ms(2);
	if (ptw_sys_sessions() != n) {
		char what[64];
		snprintf(what, sizeof(what), "%d system sessions, not %d",
			 ptw_sys_sessions(), n);
		ptw_test_svc_fail_explained(s, what, file, line);
	}
}
