/* sink.c - writes encoded bytes to the output fd.
 * SPDX-License-Identifier: Apache-2.0 */
#include "sink.h"

#include <errno.h>
#include <unistd.h>

void ptw_sink_init(struct ptw_sink *s, int fd, int own_fd)
{
	s->fd = fd;
	s->own_fd = own_fd;
	s->failed_errno = 0;
	s->bytes_written = 0;
}

int ptw_fd_write_all(int fd, const void *p, size_t n)
{
	const unsigned char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return errno ? errno : EIO;
		}
		if (k == 0) { /* should not happen for regular fds */
			errno = EIO;
			return EIO;
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

int ptw_sink_write(struct ptw_sink *s, const void *p, size_t n)
{
	if (s->failed_errno)
		return -1;
	int e = ptw_fd_write_all(s->fd, p, n);
	if (e) {
		s->failed_errno = e;
		return -1;
	}
	s->bytes_written += n;
	return 0;
}

int ptw_sink_close(struct ptw_sink *s)
{
	int rc = 0;
	if (s->own_fd && s->fd >= 0) {
		/* close() may report a deferred write error (NFS); EINTR after
		 * close leaves the fd closed on Linux, so never retry. */
		if (close(s->fd) != 0)
			rc = errno;
	}
	s->fd = -1;
	return rc;
}
