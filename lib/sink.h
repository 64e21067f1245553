/* sink.h - the writer's output file descriptor: full write loops and a
 * failure that stops all further output.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_SINK_H
#define PTW_SINK_H

#include <stddef.h>
#include <stdint.h>

struct ptw_sink {
	int fd;
	int own_fd;      /* close fd in ptw_sink_close */
	int failed_errno;/* errno of the first failed write; 0 while healthy */
	uint64_t bytes_written; /* bytes of completed ptw_sink_write calls */
};

void ptw_sink_init(struct ptw_sink *s, int fd, int own_fd);

/* Writes all 'n' bytes to fd, retrying EINTR and short writes. Returns 0
 * or the errno of the failure (errno is set too). Async-signal-safe (the
 * flight recorder's snapshots and the crash dump use it). */
int ptw_fd_write_all(int fd, const void *p, size_t n);

/* Writes all 'n' bytes (retrying EINTR and short writes). Returns 0, or
 * -1 with s->failed_errno set; after a failure nothing is ever written
 * again (a partial record at the end of the file is harmless to readers,
 * appending after it is not). bytes_written counts only calls that
 * completed. */
int ptw_sink_write(struct ptw_sink *s, const void *p, size_t n);

/* Closes the fd if owned. Returns 0 or the errno of a failed close. */
int ptw_sink_close(struct ptw_sink *s);

#endif /* PTW_SINK_H */
