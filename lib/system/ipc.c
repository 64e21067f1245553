/* ipc.c - Perfetto's IPC frames over a non-blocking UNIX socket (ipc.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include "ipc.h"
#include "lib/os/os_signal.h"

#include "ptw/error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Bytes read at most per recvmsg (one frame plus its header fits). */
#define PTW_SYS_RX_CAP (PTW_SYS_IPC_MAX_FRAME + 4u)
/* fds accepted in one message's control data; more are closed. */
#define PTW_SYS_RX_FDS 4

int ptw_sys_ipc_init(struct ptw_sys_ipc *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->rx_fd = -1;
	c->rx = malloc(PTW_SYS_RX_CAP);
	if (!c->rx || ptw_pb_buf_init(&c->tx, 4096) ||
	    ptw_pb_buf_init(&c->scratch, 4096)) {
		ptw_sys_ipc_free(c);
		return PTW_ERR_NOMEM;
	}
	return 0;
}

void ptw_sys_ipc_close(struct ptw_sys_ipc *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->rx_fd >= 0)
		close(c->rx_fd);
	c->fd = -1;
	c->rx_fd = -1;
	c->failed = 0;
	c->connecting = 0;
	c->rx_len = c->rx_off = 0;
	c->tx.len = 0;
	c->tx.oom = 0;
	c->tx_off = 0;
}

void ptw_sys_ipc_free(struct ptw_sys_ipc *c)
{
	ptw_sys_ipc_close(c);
	free(c->rx);
	c->rx = NULL;
	ptw_pb_buf_free(&c->tx);
	ptw_pb_buf_free(&c->scratch);
}

const char *ptw_sys_socket_path(char *buf, size_t n)
{
	const char *env = getenv("PERFETTO_PRODUCER_SOCK_NAME");
	const char *name;
	size_t len;
	if (env && *env) {
		/* the SDK accepts a list "a,b": it uses the first */
		name = env;
		len = strcspn(env, ",");
	} else {
		name = access("/run/perfetto/", X_OK) == 0
			       ? "/run/perfetto/traced-producer.sock"
			       : "/tmp/perfetto-producer";
		len = strlen(name);
	}
	if (len + 1 > n)
		return NULL;
	memcpy(buf, name, len);
	buf[len] = '\0';
	return buf;
}

static int ptw_sys_fail(struct ptw_sys_ipc *c, int e)
{
	if (!c->failed)
		c->failed = e ? e : EPROTO;
	return -1;
}

int ptw_sys_ipc_connect(struct ptw_sys_ipc *c, const char *path)
{
	ptw_sys_ipc_close(c);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	size_t len = strlen(path);
	if (len == 0 || len >= sizeof(sa.sun_path))
		return ENAMETOOLONG;
	memcpy(sa.sun_path, path, len);
	socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	if (path[0] == '@') {
		/* Linux abstract socket, as the SDK spells it */
		sa.sun_path[0] = '\0';
		sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return errno;
	int rc;
	do
		rc = connect(fd, (struct sockaddr *)&sa, sl);
	while (rc != 0 && errno == EINTR);
	/* On Linux an AF_UNIX connect is done at once, or fails with EAGAIN
	 * when the service's listen backlog is full (it never returns
	 * EINPROGRESS): that attempt is over and the caller tries again
	 * later. A system that answers EINPROGRESS gets ptw_sys_ipc_io's
	 * wait for writability. */
	if (rc != 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return e;
	}
	c->fd = fd;
	c->connecting = rc != 0;
	return 0;
}

/* Writes queued output while the socket takes it. */
static int ptw_sys_flush_tx(struct ptw_sys_ipc *c)
{
	while (c->tx_off < c->tx.len) {
		/* the socket is non-blocking (ptw_sys_connect) */
		struct iovec v = {c->tx.data + c->tx_off,
				  c->tx.len - c->tx_off};
		ssize_t n = ptw_os_writev_nosigpipe(c->fd, &v, 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return ptw_sys_fail(c, errno);
		}
		c->tx_off += (size_t)n;
	}
	c->tx.len = c->tx_off = 0;
	return 0;
}

int ptw_sys_ipc_send(struct ptw_sys_ipc *c, uint64_t request_id,
		     uint32_t field, const void *msg, size_t n)
{
	if (c->fd < 0 || c->failed)
		return -1;
	struct ptw_pb_buf *f = &c->scratch;
	ptw_pb_buf_reset(f);
	ptw_pb_append_varint_field(f, PTW_SYS_F_REQUEST_ID, request_id);
	ptw_pb_append_bytes_field(f, field, msg, n);
	if (f->oom)
		return ptw_sys_fail(c, ENOMEM);
	if (f->len > PTW_SYS_IPC_MAX_FRAME)
		return ptw_sys_fail(c, EMSGSIZE);
	/* compact what was sent before appending */
	if (c->tx_off) {
		memmove(c->tx.data, c->tx.data + c->tx_off, c->tx.len - c->tx_off);
		c->tx.len -= c->tx_off;
		c->tx_off = 0;
	}
	if (c->tx.len + f->len + 4 > PTW_SYS_IPC_MAX_QUEUED)
		return ptw_sys_fail(c, ENOBUFS);
	uint8_t hdr[4] = {(uint8_t)f->len, (uint8_t)(f->len >> 8),
			  (uint8_t)(f->len >> 16), (uint8_t)(f->len >> 24)};
	ptw_pb_append_raw(&c->tx, hdr, 4);
	ptw_pb_append_raw(&c->tx, f->data, f->len);
	if (c->tx.oom)
		return ptw_sys_fail(c, ENOMEM);
	if (c->connecting)
		return 0;
	return ptw_sys_flush_tx(c);
}

short ptw_sys_ipc_events(const struct ptw_sys_ipc *c)
{
	short ev = POLLIN;
	if (c->connecting || c->tx_off < c->tx.len)
		ev |= POLLOUT;
	return ev;
}

/* Takes the fds of one message's control data: the first is kept (one
 * per frame is all the service ever sends), every other one is closed. */
static void ptw_sys_take_fds(struct ptw_sys_ipc *c, struct msghdr *m)
{
	for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(fd));
			if (c->rx_fd < 0) {
				c->rx_fd = fd;
			} else {
				close(fd);
				c->fds_refused++;
			}
		}
	}
}

static int ptw_sys_read(struct ptw_sys_ipc *c)
{
	for (;;) {
		/* keep the unread bytes at the front */
		if (c->rx_off) {
			memmove(c->rx, c->rx + c->rx_off, c->rx_len - c->rx_off);
			c->rx_len -= c->rx_off;
			c->rx_off = 0;
		}
		if (c->rx_len == PTW_SYS_RX_CAP)
			return 0; /* a whole frame is waiting to be taken */
		union {
			char buf[CMSG_SPACE(PTW_SYS_RX_FDS * sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = {c->rx + c->rx_len, PTW_SYS_RX_CAP - c->rx_len};
		struct msghdr m;
		memset(&m, 0, sizeof(m));
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof(ctl.buf);
		ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return ptw_sys_fail(c, errno);
		}
		if (m.msg_controllen)
			ptw_sys_take_fds(c, &m);
		if (m.msg_flags & MSG_CTRUNC)
			c->fds_refused++; /* the kernel closed those */
		if (n == 0)
			return ptw_sys_fail(c, ECONNRESET);
		c->rx_len += (size_t)n;
		/* a full frame may already be here: let the caller take it */
		return 0;
	}
}

int ptw_sys_ipc_io(struct ptw_sys_ipc *c, short revents)
{
	if (c->fd < 0 || c->failed)
		return -1;
	if (c->connecting && (revents & (POLLOUT | POLLERR | POLLHUP))) {
		int e = 0;
		socklen_t el = sizeof(e);
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
			e = errno;
		if (e)
			return ptw_sys_fail(c, e);
		c->connecting = 0;
	}
	if (c->connecting)
		return 0;
	if (ptw_sys_flush_tx(c))
		return -1;
	if (revents & (POLLIN | POLLHUP | POLLERR))
		return ptw_sys_read(c);
	return 0;
}

int ptw_sys_ipc_frame(struct ptw_sys_ipc *c, const uint8_t **frame,
		      size_t *len, int *fd)
{
	*fd = -1;
	size_t have = c->rx_len - c->rx_off;
	if (have < 4)
		return 0;
	const uint8_t *h = c->rx + c->rx_off;
	uint32_t n = (uint32_t)h[0] | (uint32_t)h[1] << 8 |
		     (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
	if (n > PTW_SYS_IPC_MAX_FRAME)
		return ptw_sys_fail(c, EMSGSIZE);
	if (have < 4u + n)
		return 0;
	*frame = h + 4;
	*len = n;
	/* The service sends an fd with the first byte of its frame, so it
	 * is in hand once the frame is. */
	*fd = c->rx_fd;
	c->rx_fd = -1;
	c->rx_off += 4u + n;
	return 1;
}
