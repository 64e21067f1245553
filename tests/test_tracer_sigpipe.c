/* test_tracer_sigpipe.c - a trace written to a pipe or socket whose
 * reader went away: the write fails with EPIPE and the error is returned,
 * as for a full disk; no SIGPIPE kills the program (each test keeps
 * SIGPIPE's default disposition, so before the fix the test process died
 * of it). The writer API on the caller's thread, the tracer's stream
 * output, its ring-mode output at stop and its snapshots.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "ptw/writer.h"
#include "support/ptw_test.h"

/* SIGPIPE as a fresh program has it: default action (terminate),
 * unblocked, nothing pending. */
static void sigpipe_default(void)
{
	cr_assert_neq(signal(SIGPIPE, SIG_DFL), SIG_ERR);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	cr_assert_eq(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
}

/* 1 if SIGPIPE is pending for the calling thread or the process. */
static int sigpipe_pending(void)
{
	sigset_t p;
	cr_assert_eq(sigpending(&p), 0);
	return sigismember(&p, SIGPIPE) == 1;
}

/* 1 if the calling thread blocks SIGPIPE. */
static int sigpipe_blocked(void)
{
	sigset_t m;
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, NULL, &m), 0);
	return sigismember(&m, SIGPIPE) == 1;
}

/* ---- the writer API, on the caller's thread ----------------------------- */

/* Writes events to fd (the write end of a pipe or socket) until a flush
 * has put some in the peer, reads those, closes the reader 'rd' and goes
 * on until the writer fails: it must fail with EPIPE, keep counting
 * only the bytes that went out, and the program must still be here.
 * What was read decodes. */
static void writer_reader_gone(int fd, int rd)
{
	struct ptw_writer_options o = {.flush_bytes = 64};
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open_fd(fd, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_event ev = {.track = tr, .ts = 1, .name = "n"};
	for (int i = 0; i < 10; i++)
		cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	cr_assert_eq(ptw_writer_flush(w), 0);
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	size_t good = (size_t)st.bytes_written, got = 0;
	uint8_t *buf = malloc(good);
	cr_assert_not_null(buf);
	while (got < good) {
		ssize_t k = read(rd, buf + got, good - got);
		cr_assert_gt(k, 0);
		got += (size_t)k;
	}
	close(rd);
	int rc = 0;
	for (int i = 0; i < 100 && rc == 0; i++)
		rc = ptw_seq_instant(s, &ev);
	if (rc == 0)
		rc = ptw_writer_flush(w);
	cr_assert_eq(rc, PTW_ERR_IO);
	cr_assert_eq(ptw_writer_error(w)->sys_errno, EPIPE);
	ptw_writer_get_stats(w, &st); /* completed writes only */
	cr_assert_eq(st.bytes_written, good);
	cr_assert_eq(ptw_writer_close(w, &err), PTW_ERR_IO);
	cr_assert_eq(err.sys_errno, EPIPE);
	struct ptw_trace *t = ptw_test_load_mem_or_fail(buf, got);
	size_t n;
	ptw_trace_events(t, &n);
	cr_assert_eq(n, 10);
	ptw_trace_free(t);
	free(buf);
}

Test(sigpipe, writer_on_a_pipe_whose_reader_closed_returns_epipe)
{
	sigpipe_default();
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	writer_reader_gone(fds[1], fds[0]);
	/* nothing left behind: no SIGPIPE waiting, the mask as it was */
	cr_assert(!sigpipe_pending());
	cr_assert(!sigpipe_blocked());
	close(fds[1]);

	/* A program that blocks SIGPIPE and has one pending (its own): the
	 * writer's failure must neither take it nor unblock it. */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
	cr_assert_eq(raise(SIGPIPE), 0);
	cr_assert(sigpipe_pending());
	cr_assert_eq(pipe(fds), 0);
	writer_reader_gone(fds[1], fds[0]);
	cr_assert(sigpipe_pending());
	cr_assert(sigpipe_blocked());
	struct timespec now = {0, 0};
	cr_assert_eq(sigtimedwait(&s, NULL, &now), SIGPIPE);
	close(fds[1]);
}

Test(sigpipe, writer_on_a_socket_whose_peer_closed_returns_epipe)
{
	sigpipe_default();
	int sv[2];
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	writer_reader_gone(sv[0], sv[1]);
	cr_assert(!sigpipe_pending());
	cr_assert(!sigpipe_blocked());
	close(sv[0]);
}

/* ---- the tracer, on its backend thread ---------------------------------- */

/* Reads what is in the pipe now (rd is non-blocking). */
static size_t drain_pipe(int rd, uint8_t *buf, size_t cap)
{
	size_t got = 0;
	ssize_t k;
	while (got < cap && (k = read(rd, buf + got, cap - got)) > 0)
		got += (size_t)k;
	return got;
}

Test(sigpipe, tracer_stream_to_a_pipe_whose_reader_closed_stops_with_epipe)
{
	sigpipe_default();
	int fds[2];
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	cr_assert_eq(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	struct ptw_writer_options wo = {.flush_bytes = 4096};
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_fd = fds[1];
	cfg.writer = &wo;
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	for (int i = 0; i < 10; i++)
		PTW_INSTANT("p", "before");
	cr_assert_eq(ptw_flush(), 0);
	/* a reader like `| head`: takes the beginning, then goes away */
	static uint8_t buf[1 << 16];
	size_t got = drain_pipe(fds[0], buf, sizeof(buf));
	cr_assert_gt(got, 0);
	close(fds[0]);
	for (int i = 0; i < 10000; i++)
		PTW_INSTANT_ARGS("p", "after", PTW_ARG_I64("i", i));
	cr_assert_eq(ptw_stop_ex(&err), PTW_ERR_IO);
	cr_assert_eq(err.code, PTW_ERR_IO);
	cr_assert_eq(err.sys_errno, EPIPE, "%s", err.msg);
	/* the program goes on: no SIGPIPE waits for it, and a new session
	 * writes a file that loads */
	cr_assert(!sigpipe_pending());
	close(fds[1]);
	struct ptw_trace *t = ptw_test_load_mem_or_fail(buf, got);
	ptw_trace_free(t);
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "sigpipe-after");
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	PTW_INSTANT("p", "next session");
	cr_assert_eq(ptw_stop(), 0);
	t = ptw_test_load_checked_or_fail(path, 0);
	cr_assert_not_null(ptw_test_find_event(t, 0, "next session", 0));
	ptw_trace_free(t);
	unlink(path);
}

/* A ring-mode session with some events in its window. */
static void start_ring(int out_fd)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = PTW_MODE_RING;
	cfg.ring_bytes = 256u << 10;
	cfg.output_fd = out_fd; /* 0: none (a zeroed config) */
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	for (int i = 0; i < 20000; i++)
		PTW_INSTANT_ARGS("r", "tick", PTW_ARG_I64("i", i));
}

Test(sigpipe, ring_output_to_a_pipe_whose_reader_closed_stops_with_epipe)
{
	sigpipe_default();
	int fds[2];
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	start_ring(fds[1]);
	close(fds[0]);
	struct ptw_error err;
	cr_assert_eq(ptw_stop_ex(&err), PTW_ERR_IO);
	cr_assert_eq(err.sys_errno, EPIPE, "%s", err.msg);
	cr_assert(!sigpipe_pending());
	close(fds[1]);
}

Test(sigpipe, snapshot_to_a_pipe_whose_reader_closed_fails_and_tracing_goes_on)
{
	sigpipe_default();
	int fds[2];
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	start_ring(0);
	close(fds[0]);
	cr_assert_eq(ptw_snapshot_fd(fds[1]), PTW_ERR_IO);
	close(fds[1]);
	/* the session is unharmed: a snapshot to a file still works */
	PTW_INSTANT("r", "after the failed snapshot");
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "sigpipe-snap");
	cr_assert_eq(ptw_snapshot(path), 0);
	cr_assert_eq(ptw_stop(), 0);
	cr_assert(!sigpipe_pending());
	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	cr_assert_not_null(
		ptw_test_find_event(t, 0, "after the failed snapshot", 0));
	ptw_trace_free(t);
	unlink(path);
}
