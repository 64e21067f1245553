/* ipc.h - Perfetto's IPC over a UNIX stream socket, client side
 * (google/perfetto protos/perfetto/ipc/wire_protocol.proto): each frame is
 * a 4-byte little-endian length and an IPCFrame message; a file
 * descriptor travels beside a frame's bytes (SCM_RIGHTS). Private to
 * lib/system.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The socket is non-blocking: ptw_sys_ipc_send queues a whole frame and
 * writes what the socket takes now (MSG_NOSIGNAL: a service gone away is
 * EPIPE, never SIGPIPE), ptw_sys_ipc_io moves more bytes both ways when
 * poll() says so, and ptw_sys_ipc_frame hands out complete frames one at
 * a time, however the bytes were cut. Any failure (I/O error, end of
 * stream, a frame above PTW_SYS_IPC_MAX_FRAME, too much queued output)
 * is sticky: the caller closes the connection and connects again. */
#ifndef PTW_SYS_IPC_H
#define PTW_SYS_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "lib/encode/pb.h"

/* The service's own limit on a frame (kIPCBufferSize). */
#define PTW_SYS_IPC_MAX_FRAME (128u * 1024u)
/* Output queued while the service does not read: above, the connection
 * is given up. */
#define PTW_SYS_IPC_MAX_QUEUED (4u << 20)

/* IPCFrame fields. */
#define PTW_SYS_F_REQUEST_ID 2
#define PTW_SYS_F_BIND 3
#define PTW_SYS_F_BIND_REPLY 4
#define PTW_SYS_F_INVOKE 5
#define PTW_SYS_F_INVOKE_REPLY 6
#define PTW_SYS_F_REQUEST_ERROR 7

struct ptw_sys_ipc {
	int fd;                 /* -1: not connected */
	int failed;             /* errno-like reason; 0 while healthy */
	int connecting;         /* connect() in progress */
	uint8_t *rx;            /* received bytes not yet handed out */
	size_t rx_len, rx_off;
	int rx_fd;              /* fd that came with the bytes, or -1 */
	uint64_t fds_refused;   /* fds beyond the one expected, closed */
	struct ptw_pb_buf tx;   /* queued output */
	size_t tx_off;
	struct ptw_pb_buf scratch; /* a frame being built */
};

/* Initialises a closed connection. 0 or PTW_ERR_NOMEM. */
int ptw_sys_ipc_init(struct ptw_sys_ipc *c);
void ptw_sys_ipc_free(struct ptw_sys_ipc *c);

/* Starts connecting to the UNIX socket 'path' (non-blocking, CLOEXEC).
 * 0 (connected or in progress: ptw_sys_ipc_io completes it) or an errno
 * (ENOENT, ECONNREFUSED: no service; EAGAIN: its listen backlog is full,
 * try again later). Drops what was queued. */
int ptw_sys_ipc_connect(struct ptw_sys_ipc *c, const char *path);
void ptw_sys_ipc_close(struct ptw_sys_ipc *c);

/* Queues one frame: request_id and the IPCFrame body 'msg' (the oneof
 * field 'field' holding 'n' bytes), with 'send_fd' (>= 0) beside its
 * first byte. Then writes what the socket takes. 0, or -1 (failed). */
int ptw_sys_ipc_send(struct ptw_sys_ipc *c, uint64_t request_id,
		     uint32_t field, const void *msg, size_t n);

/* poll() events the connection waits for (POLLIN, plus POLLOUT while
 * output is queued or connect() is in progress). */
short ptw_sys_ipc_events(const struct ptw_sys_ipc *c);

/* After poll() returned 'revents': completes connect(), writes queued
 * output, reads what arrived. 0, or -1 (failed, see c->failed). */
int ptw_sys_ipc_io(struct ptw_sys_ipc *c, short revents);

/* The next complete frame: 1 with *frame and *len (valid until the next
 * call), 0 if none is complete yet, -1 on a frame too large (failed).
 * *fd: a file descriptor received with this frame's bytes (the caller
 * owns it), else -1. */
int ptw_sys_ipc_frame(struct ptw_sys_ipc *c, const uint8_t **frame,
		      size_t *len, int *fd);

/* The SDK's default producer socket on Linux, unless
 * PERFETTO_PRODUCER_SOCK_NAME names one (its first, if a list). Returns
 * the path in buf (n bytes), or NULL if it does not fit. */
const char *ptw_sys_socket_path(char *buf, size_t n);

#endif /* PTW_SYS_IPC_H */
