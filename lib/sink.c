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

int ptw_sink_write(struct ptw_sink *s, const void *p, size_t n)
{
	if (s->failed_errno)
		return -1;
	const unsigned char *c = p;
	size_t left = n;
	while (left) {
		ssize_t k = write(s->fd, c, left);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			s->failed_errno = errno ? errno : EIO;
			return -1;
		}
		if (k == 0) { /* should not happen for regular fds */
			s->failed_errno = EIO;
			return -1;
		}
		c += k;
		left -= (size_t)k;
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
