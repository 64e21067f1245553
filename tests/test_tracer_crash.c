/* test_tracer_crash.c - cfg.crash_path: a forked child crashes with each
 * of SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT; it must still die of
 * that signal, and the crash file must load and pass the checker with
 * every event the backend had encoded.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "reader/trace_check.h"
#include "reader/trace_read.h"

/* Sanitizer runtimes install their own handlers for SIGSEGV, SIGBUS and
 * SIGFPE before main: there the "previous handler" the signal goes back
 * to is the sanitizer's, which reports and exits non-zero. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SAN_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SAN_BUILD 1
#endif
#ifndef SAN_BUILD
#define SAN_BUILD 0
#endif

static int died_of(int status, int sig)
{
	if (WIFSIGNALED(status) && WTERMSIG(status) == sig)
		return 1;
	/* the sanitizer's report ends in exit(non-zero), or in abort()
	 * with abort_on_error=1 */
	return SAN_BUILD && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE) &&
	       ((WIFEXITED(status) && WEXITSTATUS(status) != 0) ||
		(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT));
}

static void child(int sig, int ring, const char *out, const char *crash)
{
	struct rlimit no_core = {0, 0};
	setrlimit(RLIMIT_CORE, &no_core);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = ring ? PTW_MODE_RING : PTW_MODE_STREAM;
	cfg.ring_bytes = 128u * 1024u;
	cfg.output_path = ring ? NULL : out;
	cfg.crash_path = crash;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	if (ptw_start(&cfg) != 0)
		_exit(3);
	PTW_BEGIN("c", "main loop");
	for (int i = 0; i < 20000; i++) {
		PTW_BEGIN("c", "step");
		PTW_INSTANT_ARGS("c", "tick", PTW_ARG_I64("i", i));
		PTW_END("c");
	}
	PTW_INSTANT("c", "last words");
	/* let the backend encode everything (nothing is flushed in stream
	 * mode: the last batch is only in memory) */
	struct timespec ts = {0, 100 * 1000 * 1000};
	nanosleep(&ts, NULL);
	raise(sig);
	_exit(4); /* not reached */
}

static int has_event(const struct ptw_trace *t, const char *name)
{
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	for (size_t i = 0; i < n; i++)
		if (ev[i].name && strcmp(ev[i].name, name) == 0)
			return 1;
	return 0;
}

static void crash_run(int sig, int ring)
{
	char out[96], crash[96];
	snprintf(out, sizeof(out), "/tmp/ptw_crash_%d_%d_%d.pftrace", (int)getpid(), sig, ring);
	snprintf(crash, sizeof(crash), "/tmp/ptw_crash_%d_%d_%d.crash.pftrace",
		 (int)getpid(), sig, ring);
	unlink(out);
	unlink(crash);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		child(sig, ring, out, crash);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(died_of(status, sig), "child status 0x%x", status);

	/* stream mode: the output plus the crash file make the trace */
	char whole[128];
	snprintf(whole, sizeof(whole), "%s.whole", crash);
	if (!ring) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "cat %s %s > %s", out, crash, whole);
		cr_assert_eq(system(cmd), 0);
	}
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_file(ring ? crash : whole, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_eq(ptw_trace_check(t, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE, &err),
		     0, "%s", err.msg);
	cr_assert(has_event(t, "last words"));
	cr_assert_eq(ptw_trace_get_stats(t)->trace_stats_packets, 1);
	ptw_trace_free(t);
	unlink(out);
	unlink(crash);
	unlink(whole);
}

Test(tracer_crash, ring_sigsegv) { crash_run(SIGSEGV, 1); }
Test(tracer_crash, ring_sigbus) { crash_run(SIGBUS, 1); }
Test(tracer_crash, ring_sigill) { crash_run(SIGILL, 1); }
Test(tracer_crash, ring_sigfpe) { crash_run(SIGFPE, 1); }
Test(tracer_crash, ring_sigabrt) { crash_run(SIGABRT, 1); }
Test(tracer_crash, stream_sigsegv) { crash_run(SIGSEGV, 0); }
Test(tracer_crash, stream_sigbus) { crash_run(SIGBUS, 0); }
Test(tracer_crash, stream_sigill) { crash_run(SIGILL, 0); }
Test(tracer_crash, stream_sigfpe) { crash_run(SIGFPE, 0); }
Test(tracer_crash, stream_sigabrt) { crash_run(SIGABRT, 0); }

/* The previous handler runs after the dump (here it exits with 42). */
static void prev_handler(int sig)
{
	(void)sig;
	_exit(42);
}

Test(tracer_crash, the_previous_handler_runs_after_the_dump)
{
	char crash[96];
	snprintf(crash, sizeof(crash), "/tmp/ptw_crash_%d_prev.pftrace", (int)getpid());
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		signal(SIGABRT, prev_handler);
		struct ptw_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.mode = PTW_MODE_RING;
		cfg.crash_path = crash;
		if (ptw_start(&cfg) != 0)
			_exit(3);
		PTW_INSTANT("c", "before abort");
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
		abort();
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 42, "0x%x", status);
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_file(crash, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert(has_event(t, "before abort"));
	ptw_trace_free(t);
	unlink(crash);
}

Test(tracer_crash, stop_restores_the_handlers)
{
	struct sigaction before, after;
	sigaction(SIGSEGV, NULL, &before);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = PTW_MODE_RING;
	cfg.crash_path = "/tmp/ptw_crash_unused.pftrace";
	cr_assert_eq(ptw_start(&cfg), 0);
	cr_assert_eq(ptw_stop(), 0);
	sigaction(SIGSEGV, NULL, &after);
	cr_assert(before.sa_handler == after.sa_handler);
	cr_assert_neq(access(cfg.crash_path, F_OK), 0, "no crash, no file");
}

/* crash_path is a FIFO whose reader takes the start of the dump and goes
 * away: the dump fails with EPIPE and the program still dies of its own
 * signal, not of a SIGPIPE raised by the dump (the ring holds more than
 * a pipe's 64 KiB, so some write finds the reader gone). */
Test(tracer_crash, a_dump_into_a_pipe_whose_reader_left_dies_of_the_crash)
{
	char fifo[96];
	snprintf(fifo, sizeof(fifo), "/tmp/ptw_crash_%d_fifo", (int)getpid());
	unlink(fifo);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	pid_t reader = fork();
	cr_assert_geq(reader, 0);
	if (reader == 0) {
		int fd = open(fifo, O_RDONLY); /* until the dump opens it */
		char b[512];
		_exit(fd >= 0 && read(fd, b, sizeof(b)) > 0 ? 0 : 1);
	}
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		child(SIGABRT, 1, NULL, fifo);
	}
	int status, rstatus;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (waitpid(reader, &rstatus, WNOHANG) == 0) {
		kill(reader, SIGKILL); /* the dump never opened the FIFO */
		waitpid(reader, &rstatus, 0);
	}
	unlink(fifo);
	cr_assert(died_of(status, SIGABRT), "child status 0x%x", status);
	cr_assert(WIFEXITED(rstatus) && WEXITSTATUS(rstatus) == 0,
		  "the reader got nothing: 0x%x", rstatus);
}
