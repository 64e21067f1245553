/* sink.h - the writer's output file descriptor: full write loops, disk
 * space reserved ahead of the writes, and a failure that stops all
 * further output.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_SINK_H
#define PTW_SINK_H

#include <stddef.h>
#include <stdint.h>

/* Disk space reserved past the end of the file at a time (see
 * ptw_sink_init). */
#define PTW_SINK_PREALLOC_STEP (8u << 20)

struct ptw_sink {
	int fd;
	int own_fd;      /* close fd in ptw_sink_close */
	int failed_errno;/* errno of the first failed write; 0 while healthy */
	int prealloc;    /* reserve disk space ahead of the writes */
	uint64_t bytes_written; /* bytes of completed ptw_sink_write calls */
	uint64_t pos;       /* file offset after the last completed write */
	uint64_t alloc_end; /* space is reserved up to here (0: none yet) */
};

/* A sink that owns a regular file (not on tmpfs) reserves disk space
 * PTW_SINK_PREALLOC_STEP bytes at a time ahead of its writes
 * (fallocate, FALLOC_FL_KEEP_SIZE: the file's size and bytes do not
 * change), so that each write() finds its blocks mapped instead of
 * reserving them page by page: about a third less kernel time per byte
 * on ext4. ptw_sink_close gives back what was not used. */
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

/* Gives back the space reserved past the end of the file, then closes
 * the fd if owned. Returns 0 or the errno of a failed close. */
int ptw_sink_close(struct ptw_sink *s);

#endif /* PTW_SINK_H */
