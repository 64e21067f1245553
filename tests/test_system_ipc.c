/* test_system_ipc.c - system mode against a hostile or broken service: a
 * fake service on a UNIX socket in this test answers ptw's connection
 * with malformed frames, oversized frames, refusals, replies to no
 * request, unexpected file descriptors, and bytes cut at every place.
 * ptw must never crash or hang, must drop the connection and connect
 * again, and must not leak the fds it was sent.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/encode/pb.h"
#include "lib/system/pbr.h"
#include "lib/system/system.h"
#include "ptw/tracer.h"

struct fake {
	char dir[64];
	char path[128];
	int lfd;   /* listening */
	int fd;    /* the accepted connection */
};

static void fake_listen(struct fake *f)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/ptw-sysipc-XXXXXX");
	cr_assert_not_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/p.sock", f->dir);
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(f->lfd >= 0);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, f->path);
	cr_assert_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(f->lfd, 4), 0);
	f->fd = -1;
	setenv("PERFETTO_PRODUCER_SOCK_NAME", f->path, 1);
}

static void fake_done(struct fake *f)
{
	if (f->fd >= 0)
		close(f->fd);
	close(f->lfd);
	unlink(f->path);
	rmdir(f->dir);
}

/* Accepts ptw's next connection (bounded wait: 10 s). */
static void fake_accept(struct fake *f)
{
	if (f->fd >= 0)
		close(f->fd);
	struct pollfd pf = {f->lfd, POLLIN, 0};
	cr_assert_eq(poll(&pf, 1, 10000), 1, "ptw did not connect");
	f->fd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
	cr_assert(f->fd >= 0);
}

/* Reads one frame from ptw into buf; returns its length. */
static size_t fake_read_frame(struct fake *f, uint8_t *buf, size_t cap)
{
	size_t have = 0, need = 4;
	while (have < need) {
		struct pollfd pf = {f->fd, POLLIN, 0};
		cr_assert_eq(poll(&pf, 1, 10000), 1, "no frame from ptw");
		ssize_t n = read(f->fd, buf + have, need - have);
		cr_assert(n > 0, "ptw closed the connection");
		have += (size_t)n;
		if (have == 4 && need == 4) {
			need = 4 + ((size_t)buf[0] | (size_t)buf[1] << 8 |
				    (size_t)buf[2] << 16 | (size_t)buf[3] << 24);
			cr_assert(need <= cap);
		}
	}
	memmove(buf, buf + 4, need - 4);
	return need - 4;
}

/* Waits until ptw closes the connection (bounded: 10 s). */
static void fake_expect_close(struct fake *f)
{
	uint8_t b[4096];
	for (;;) {
		struct pollfd pf = {f->fd, POLLIN, 0};
		cr_assert_eq(poll(&pf, 1, 10000), 1, "ptw kept the connection");
		ssize_t n = read(f->fd, b, sizeof(b));
		if (n <= 0)
			break;
	}
	close(f->fd);
	f->fd = -1;
}

/* Sends 'n' bytes, 'step' at a time (1: byte by byte), with fd beside
 * the first byte if >= 0. */
static void fake_send(struct fake *f, const uint8_t *p, size_t n, size_t step,
		      int fd)
{
	for (size_t off = 0; off < n;) {
		size_t k = n - off < step ? n - off : step;
		struct iovec iov = {(void *)(p + off), k};
		struct msghdr m;
		memset(&m, 0, sizeof(m));
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} ctl;
		if (off == 0 && fd >= 0) {
			m.msg_control = ctl.buf;
			m.msg_controllen = sizeof(ctl.buf);
			struct cmsghdr *h = CMSG_FIRSTHDR(&m);
			h->cmsg_level = SOL_SOCKET;
			h->cmsg_type = SCM_RIGHTS;
			h->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(h), &fd, sizeof(int));
		}
		cr_assert_eq(sendmsg(f->fd, &m, MSG_NOSIGNAL), (ssize_t)k);
		off += k;
		if (step < n) {
			struct timespec ts = {0, 200000};
			nanosleep(&ts, NULL);
		}
	}
}

/* A frame: request_id and one oneof field holding 'body'. */
static void frame(struct ptw_pb_buf *out, uint64_t req, uint32_t field,
		  const struct ptw_pb_buf *body)
{
	struct ptw_pb_buf f;
	cr_assert_eq(ptw_pb_buf_init(&f, 256), 0);
	ptw_pb_append_varint_field(&f, 2, req);
	ptw_pb_append_bytes_field(&f, field, body->data, body->len);
	uint8_t h[4] = {(uint8_t)f.len, (uint8_t)(f.len >> 8),
			(uint8_t)(f.len >> 16), (uint8_t)(f.len >> 24)};
	ptw_pb_buf_reset(out);
	ptw_pb_append_raw(out, h, 4);
	ptw_pb_append_raw(out, f.data, f.len);
	ptw_pb_buf_free(&f);
}

/* The request id of ptw's frame. */
static uint64_t frame_req(const uint8_t *p, size_t n, uint32_t *kind,
			  const uint8_t **body, size_t *blen)
{
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf fl;
	uint64_t req = 0;
	ptw_sys_pbr_init(&r, p, n);
	while (ptw_sys_pbr_next(&r, &fl) > 0) {
		if (fl.num == 2)
			req = fl.v;
		else if (fl.wt == 2) {
			*kind = fl.num;
			*body = fl.data;
			*blen = fl.len;
		}
	}
	return req;
}

/* The method id of ptw's InvokeMethod frame 'p' (0 if it is not one). */
static uint64_t frame_method(const uint8_t *p, size_t n, uint64_t *req)
{
	uint32_t kind = 0;
	const uint8_t *inv = NULL;
	size_t ilen = 0;
	*req = frame_req(p, n, &kind, &inv, &ilen);
	if (kind != 5)
		return 0;
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf fl;
	uint64_t method = 0;
	ptw_sys_pbr_init(&r, inv, ilen);
	while (ptw_sys_pbr_next(&r, &fl) > 0)
		if (fl.num == 2)
			method = fl.v;
	return method;
}

static void start_system(void)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.system = 1;
	cfg.categories = "app";
	cr_assert_eq(ptw_start(&cfg), 0);
}

/* Reads ptw's BindService; returns its request id. */
static uint64_t expect_bind(struct fake *f)
{
	uint8_t buf[65536];
	size_t n = fake_read_frame(f, buf, sizeof(buf));
	uint32_t kind = 0;
	const uint8_t *body = NULL;
	size_t blen = 0;
	uint64_t req = frame_req(buf, n, &kind, &body, &blen);
	cr_assert_eq(kind, 3, "not a BindService");
	cr_assert(blen >= 14 && memmem(body, blen, "ProducerPort", 12));
	return req;
}

/* A BindServiceReply: success, service 1, methods 1..9 by name. */
static void bind_reply(struct ptw_pb_buf *body, int ok)
{
	static const char *const names[] = {
		"InitializeConnection", "RegisterDataSource", "UpdateDataSource",
		"CommitData", "GetAsyncCommand", "NotifyDataSourceStarted",
		"NotifyDataSourceStopped", "RegisterTraceWriter",
		"UnregisterTraceWriter"};
	ptw_pb_buf_reset(body);
	ptw_pb_append_varint_field(body, 1, ok);
	ptw_pb_append_varint_field(body, 2, 1);
	for (uint32_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t m = ptw_pb_begin_nested(body, 3);
		ptw_pb_append_varint_field(body, 1, i + 1);
		ptw_pb_append_string_field(body, 2, names[i]);
		ptw_pb_end_nested(body, m);
	}
}

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* ptw in system mode connected to the fake, which read its BindService;
 * returns that request's id. */
static uint64_t fake_connected(struct fake *f)
{
	fake_listen(f);
	start_system();
	fake_accept(f);
	return expect_bind(f);
}

/* ptw closes the connection, connects again and sends its BindService. */
static void fake_expect_reconnect(struct fake *f)
{
	fake_expect_close(f);
	fake_accept(f);
	(void)expect_bind(f);
}

/* ptw in system mode connected to the fake, its BindService answered
 * ('ok': success) in one piece; body and out are initialised for the
 * test's next frames (it frees them). */
static void fake_bind_answered(struct fake *f, int ok, struct ptw_pb_buf *body,
			       struct ptw_pb_buf *out)
{
	uint64_t req = fake_connected(f);
	cr_assert_eq(ptw_pb_buf_init(body, 256), 0);
	cr_assert_eq(ptw_pb_buf_init(out, 256), 0);
	bind_reply(body, ok);
	frame(out, req, 4, body);
	fake_send(f, out->data, out->len, out->len, -1);
}

/* Reads ptw's InitializeConnection (method id 1) and answers success,
 * 'step' bytes at a time (fake_send). */
static void answer_init(struct fake *f, struct ptw_pb_buf *body,
			struct ptw_pb_buf *out, size_t step)
{
	uint8_t buf[65536];
	size_t n = fake_read_frame(f, buf, sizeof(buf));
	uint64_t init_req = 0;
	cr_assert_eq(frame_method(buf, n, &init_req), 1,
		     "not InitializeConnection (method 1)");
	ptw_pb_buf_reset(body);
	ptw_pb_append_varint_field(body, 1, 1);
	frame(out, init_req, 6, body);
	fake_send(f, out->data, out->len, step, -1);
}

/* Waits (bounded: 10 s) until ptw has made 'n' attempts to connect
 * (ptw_sys_describe's count). 1 if so. */
static int wait_attempts(unsigned long long n)
{
	for (int i = 0; i < 1000; i++) {
		char d[512];
		unsigned long long got = 0;
		ptw_sys_describe(d, sizeof(d));
		const char *a = strstr(d, " after ");
		if (a && sscanf(a, " after %llu attempts", &got) == 1 && got >= n)
			return 1;
		struct timespec ts = {0, 10000000L};
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* The service's listen backlog full: on Linux ptw's connect then fails
 * with EAGAIN. That attempt is over; ptw tries again later and connects
 * once there is room. */
Test(system_ipc, a_full_backlog_is_tried_again_later)
{
	struct fake f;
	fake_listen(&f);
	/* a backlog of 0 (listen again to change it), filled by a
	 * connection nobody accepts yet */
	cr_assert_eq(listen(f.lfd, 0), 0);
	int filler = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(filler >= 0);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, f.path);
	cr_assert_eq(connect(filler, (struct sockaddr *)&sa, sizeof(sa)), 0);
	start_system();
	/* a second attempt: the first one found the backlog full */
	cr_assert(wait_attempts(2), "ptw did not try again");
	cr_assert_eq(ptw_is_running(), 0);
	int taken = accept4(f.lfd, NULL, NULL, SOCK_CLOEXEC);
	cr_assert(taken >= 0);
	close(taken);
	close(filler);
	fake_accept(&f); /* ptw's next attempt */
	(void)expect_bind(&f);
	cr_assert_eq(ptw_stop(), 0);
	fake_done(&f);
}

/* ptw connects, gets 'bad' (raw bytes) and must close and come back. */
static void hostile_bytes(const uint8_t *bad, size_t n)
{
	struct fake f;
	(void)fake_connected(&f);
	fake_send(&f, bad, n, n, -1);
	fake_expect_reconnect(&f);
	cr_assert_eq(ptw_is_running(), 0);
	cr_assert_eq(ptw_stop(), 0);
	fake_done(&f);
}

Test(system_ipc, a_frame_above_the_limit_drops_the_connection)
{
	static const uint8_t big[] = {0xFF, 0xFF, 0xFF, 0x7F, 0, 0, 0, 0};
	hostile_bytes(big, sizeof(big));
}

Test(system_ipc, a_frame_that_does_not_parse_drops_the_connection)
{
	static const uint8_t junk[] = {6, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F};
	hostile_bytes(junk, sizeof(junk));
}

Test(system_ipc, a_reply_to_no_request_drops_the_connection)
{
	struct ptw_pb_buf body, out;
	cr_assert_eq(ptw_pb_buf_init(&body, 256), 0);
	cr_assert_eq(ptw_pb_buf_init(&out, 256), 0);
	bind_reply(&body, 1);
	frame(&out, 999, 4, &body); /* BindServiceReply to request 999 */
	hostile_bytes(out.data, out.len);
	ptw_pb_buf_free(&body);
	ptw_pb_buf_free(&out);
}

Test(system_ipc, a_refused_bind_drops_the_connection)
{
	struct fake f;
	struct ptw_pb_buf body, out;
	fake_bind_answered(&f, 0, &body, &out);
	fake_expect_reconnect(&f);
	cr_assert_eq(ptw_stop(), 0);
	ptw_pb_buf_free(&body);
	ptw_pb_buf_free(&out);
	fake_done(&f);
}

/* The reply cut into single bytes, an fd nobody asked for beside it, then
 * a SetupTracing whose buffer is no buffer: the connection is dropped and
 * no fd is left behind. */
Test(system_ipc, bytes_one_at_a_time_and_fds_it_did_not_expect)
{
	struct fake f;
	uint64_t req = fake_connected(&f);
	struct ptw_pb_buf body, out;
	cr_assert_eq(ptw_pb_buf_init(&body, 256), 0);
	cr_assert_eq(ptw_pb_buf_init(&out, 256), 0);
	bind_reply(&body, 1);
	frame(&out, req, 4, &body);
	int stray = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert(stray >= 0);
	int fds_before = count_fds();
	fake_send(&f, out.data, out.len, 1, stray);

	/* InitializeConnection answered, then the command stream:
	 * SetupTracing on a /dev/null fd */
	answer_init(&f, &body, &out, 3);
	uint8_t buf[65536];
	size_t n;
	uint64_t async_req = 0;
	for (int i = 0; i < 2; i++) { /* GetAsyncCommand, RegisterDataSource */
		uint64_t rq;
		n = fake_read_frame(&f, buf, sizeof(buf));
		if (frame_method(buf, n, &rq) == 5)
			async_req = rq;
	}
	cr_assert_neq(async_req, 0, "no GetAsyncCommand");
	struct ptw_pb_buf cmd;
	cr_assert_eq(ptw_pb_buf_init(&cmd, 64), 0);
	size_t st = ptw_pb_begin_nested(&cmd, 3);
	ptw_pb_append_varint_field(&cmd, 1, 4); /* 4 KiB pages */
	ptw_pb_end_nested(&cmd, st);
	ptw_pb_buf_reset(&body);
	ptw_pb_append_varint_field(&body, 1, 1);
	ptw_pb_append_varint_field(&body, 2, 1);
	ptw_pb_append_bytes_field(&body, 3, cmd.data, cmd.len);
	frame(&out, async_req, 6, &body);
	int null2 = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fake_send(&f, out.data, out.len, out.len, null2);
	close(null2);
	fake_expect_reconnect(&f);
	cr_assert_eq(ptw_stop(), 0);
	/* gone: our stray copy, ptw's socket and wake-up pipe (3); ptw
	 * kept neither of the two fds it was sent */
	close(stray);
	cr_assert_eq(count_fds(), fds_before - 4, "ptw kept an fd it was sent");
	ptw_pb_buf_free(&cmd);
	ptw_pb_buf_free(&body);
	ptw_pb_buf_free(&out);
	fake_done(&f);
}

/* The service drops a data source's SetupDataSource and StartDataSource
 * sent before the producer's GetAsyncCommand (only SetupTracing waits
 * for it: google/perfetto v58 src/tracing/ipc/service/
 * producer_ipc_service.cc), so a RegisterDataSource ahead of it, while a
 * session that wants the data source runs, could leave that session
 * without ptw. As the SDK does, ptw asks for the command stream first. */
Test(system_ipc, the_command_stream_is_asked_for_before_registering)
{
	struct fake f;
	struct ptw_pb_buf body, out;
	fake_bind_answered(&f, 1, &body, &out);
	answer_init(&f, &body, &out, 65536);
	uint8_t buf[65536];
	size_t n;
	uint64_t methods[2], rq;
	for (int i = 0; i < 2; i++) {
		n = fake_read_frame(&f, buf, sizeof(buf));
		methods[i] = frame_method(buf, n, &rq);
	}
	/* the fake's method ids: 5 GetAsyncCommand, 2 RegisterDataSource */
	cr_assert_eq(methods[0], 5, "method %llu before GetAsyncCommand",
		     (unsigned long long)methods[0]);
	cr_assert_eq(methods[1], 2, "method %llu, not RegisterDataSource",
		     (unsigned long long)methods[1]);
	cr_assert_eq(ptw_stop(), 0);
	ptw_pb_buf_free(&body);
	ptw_pb_buf_free(&out);
	fake_done(&f);
}

/* The inodes of this process's sockets ("socket:[N]"), up to max. */
static size_t socket_inodes(unsigned long *out, size_t max)
{
	size_t n = 0;
	DIR *d = opendir("/proc/self/fd");
	cr_assert_not_null(d);
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		char p[300], l[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		ssize_t k = readlink(p, l, sizeof(l) - 1);
		if (k <= 0)
			continue;
		l[k] = '\0';
		unsigned long ino;
		if (sscanf(l, "socket:[%lu]", &ino) == 1)
			out[n++] = ino;
	}
	closedir(d);
	return n;
}

static int has_inode(const unsigned long *v, size_t n, unsigned long ino)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == ino)
			return 1;
	return 0;
}

Test(system_ipc, a_forked_child_does_not_inherit_the_connection)
{
	struct fake f;
	fake_listen(&f);
	unsigned long before[256], after[256];
	size_t nb = socket_inodes(before, 256);
	start_system();
	fake_accept(&f);
	(void)expect_bind(&f);
	size_t na = socket_inodes(after, 256);
	unsigned long ptw_sock = 0;
	for (size_t i = 0; i < na; i++)
		if (!has_inode(before, nb, after[i]) &&
		    after[i] != 0 && !ptw_sock) {
			/* not the fake's accepted end: that one is f.fd */
			char p[64], l[64];
			snprintf(p, sizeof(p), "/proc/self/fd/%d", f.fd);
			ssize_t k = readlink(p, l, sizeof(l) - 1);
			cr_assert(k > 0);
			l[k] = '\0';
			unsigned long mine;
			cr_assert_eq(sscanf(l, "socket:[%lu]", &mine), 1);
			if (after[i] != mine)
				ptw_sock = after[i];
		}
	cr_assert_neq(ptw_sock, 0, "ptw's socket not found");
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		unsigned long child[256];
		size_t nc = socket_inodes(child, 256);
		int ok = !has_inode(child, nc, ptw_sock) && ptw_is_running() == 0 &&
			 ptw_stop() == 0;
		_exit(ok ? 0 : 1);
	}
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the child kept ptw's connection (or its ptw_stop failed)");
	/* the parent's connection is still there: ptw answers nothing
	 * more, but it has not closed it */
	struct pollfd pf = {f.fd, POLLIN, 0};
	cr_assert_eq(poll(&pf, 1, 100), 0, "the parent's connection closed");
	cr_assert_eq(ptw_stop(), 0);
	fake_done(&f);
}
