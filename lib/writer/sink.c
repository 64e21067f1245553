/* sink.c - writes encoded bytes to the output fd.
 * SPDX-License-Identifier: Apache-2.0 */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lib/os/os_file.h"

/* enum ptw_fd_kind of fd (PTW_FD_FILE for no fd: never written). */
static int ptw_fd_kind(int fd)
{
	struct stat st;
	if (fd < 0)
		return PTW_FD_FILE;
	if (fstat(fd, &st) != 0)
		return PTW_FD_PIPE;
	return S_ISREG(st.st_mode)    ? PTW_FD_FILE
	       : S_ISSOCK(st.st_mode) ? PTW_FD_SOCKET
				      : PTW_FD_PIPE;
}

void ptw_sink_init(struct ptw_sink *s, int fd, int own_fd)
{
	s->fd = fd;
	s->own_fd = own_fd;
	s->failed_errno = 0;
	s->prealloc = 0;
	s->bytes_written = 0;
	s->pos = 0;
	s->alloc_end = 0;
	s->carry = NULL;
	s->carry_len = 0;
	s->kind = ptw_fd_kind(fd);
	/* only a file of ours: the space is given back and what is held
	 * back is written when we close it */
	off_t at;
	if (own_fd && fd >= 0 && s->kind == PTW_FD_FILE &&
	    (at = lseek(fd, 0, SEEK_CUR)) >= 0 && ptw_os_file_prealloc_pays(fd)) {
		s->prealloc = 1;
		s->pos = (uint64_t)at;
		s->carry = malloc(PTW_SINK_ALIGN); /* NULL: unaligned writes */
	}
}

/* Reserves space for the next write of n bytes and at least
 * PTW_SINK_PREALLOC_STEP more. A file system that cannot (no support, no
 * space left) turns reserving off: write() then reports a real
 * shortage itself. */
static __attribute__((noinline)) void ptw_sink_reserve(struct ptw_sink *s,
						       size_t n)
{
	uint64_t from = s->alloc_end > s->pos ? s->alloc_end : s->pos;
	uint64_t len = ((uint64_t)n + PTW_SINK_PREALLOC_STEP - 1) /
		       PTW_SINK_PREALLOC_STEP * PTW_SINK_PREALLOC_STEP;
	if (ptw_os_file_prealloc(s->fd, from, len) != 0) {
		s->prealloc = 0;
		return;
	}
	s->alloc_end = from + len;
}

/* One write()'s or writev()'s result k: the bytes it took (0 after
 * EINTR: try again), or -1 with the errno to report in *err (EIO for a
 * write that took nothing, which regular fds never do). */
static ssize_t ptw_fd_took(ssize_t k, int *err)
{
	if (k > 0 || (k < 0 && errno == EINTR))
		return k > 0 ? k : 0;
	if (k == 0)
		errno = EIO;
	*err = errno ? errno : EIO;
	return -1;
}

int ptw_fd_write_all(int fd, const void *p, size_t n)
{
	const unsigned char *c = p;
	while (n) {
		int e;
		ssize_t k = ptw_fd_took(write(fd, c, n), &e);
		if (k < 0)
			return e;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* One writev() of iov[0..cnt); on a socket a sendmsg() that raises no
 * SIGPIPE. */
static ssize_t ptw_fd_writev(int fd, int kind, struct iovec *iov, int cnt)
{
	if (kind != PTW_FD_SOCKET)
		return writev(fd, iov, cnt);
	return ptw_os_writev_nosigpipe(fd, iov, cnt);
}

/* writev() of every byte of iov[0..cnt), retrying EINTR and short
 * writes (iov is consumed). Returns 0 or the errno of the failure. Not
 * for the crash handler: POSIX does not list writev() as
 * async-signal-safe. */
static int ptw_fd_writev_all(int fd, int kind, struct iovec *iov, int cnt)
{
	while (cnt) {
		if (!iov->iov_len) {
			iov++;
			cnt--;
			continue;
		}
		int e;
		ssize_t k = ptw_fd_took(ptw_fd_writev(fd, kind, iov, cnt), &e);
		if (k < 0)
			return e;
		size_t left = (size_t)k;
		while (cnt && left >= iov->iov_len) {
			left -= iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (unsigned char *)iov->iov_base + left;
			iov->iov_len -= left;
		}
	}
	return 0;
}

/* Writes a (an bytes) then b (bn bytes) at the file's end. */
static int ptw_sink_out(struct ptw_sink *s, const void *a, size_t an,
			const void *b, size_t bn)
{
	if (s->prealloc && s->pos + an + bn > s->alloc_end)
		ptw_sink_reserve(s, an + bn);
	struct iovec iov[2] = {{(void *)a, an}, {(void *)b, bn}};
	struct ptw_sigpipe_guard g;
	if (s->kind == PTW_FD_PIPE)
		ptw_sigpipe_hold(&g);
	int e = ptw_fd_writev_all(s->fd, s->kind, iov, 2);
	if (s->kind == PTW_FD_PIPE)
		ptw_sigpipe_release(&g, e != 0);
	if (e) {
		s->failed_errno = e;
		return -1;
	}
	s->bytes_written += an + bn;
	s->pos += an + bn;
	return 0;
}

int ptw_sink_write(struct ptw_sink *s, const void *p, size_t n)
{
	if (s->failed_errno)
		return -1;
	/* A write smaller than the alignment goes out whole, with what was
	 * held back: a small flush_bytes keeps the file as current as asked. */
	if (!s->carry || n < PTW_SINK_ALIGN) {
		if (ptw_sink_out(s, s->carry, s->carry_len, p, n) != 0)
			return -1;
		s->carry_len = 0;
		return 0;
	}
	/* Held back: fewer bytes than reach the first boundary after pos,
	 * so n >= PTW_SINK_ALIGN passes it and k > 0. */
	uint64_t cut = (s->pos + s->carry_len + n) & ~(uint64_t)(PTW_SINK_ALIGN - 1);
	size_t k = (size_t)(cut - s->pos - s->carry_len);
	if (ptw_sink_out(s, s->carry, s->carry_len, p, k) != 0)
		return -1;
	s->carry_len = n - k;
	memcpy(s->carry, (const unsigned char *)p + k, s->carry_len);
	return 0;
}

int ptw_sink_sync(struct ptw_sink *s)
{
	if (s->failed_errno)
		return -1;
	if (!s->carry_len)
		return 0;
	if (ptw_sink_out(s, s->carry, s->carry_len, NULL, 0) != 0)
		return -1;
	s->carry_len = 0;
	return 0;
}

int ptw_sink_close(struct ptw_sink *s)
{
	int rc = 0;
	if (s->fd >= 0 && !s->failed_errno && ptw_sink_sync(s) != 0)
		rc = s->failed_errno;
	free(s->carry);
	s->carry = NULL;
	s->carry_len = 0;
	/* Truncating a file to its own size frees the blocks reserved past
	 * its end (ext4, xfs, tmpfs) and changes nothing else. If it fails
	 * the trace is still whole; only that space stays reserved until
	 * the file is rewritten or deleted, so the error is not reported. */
	struct stat st;
	if (s->alloc_end && s->fd >= 0 && fstat(s->fd, &st) == 0 &&
	    ftruncate(s->fd, st.st_size) != 0)
		s->alloc_end = 0;
	if (s->own_fd && s->fd >= 0) {
		/* close() may report a deferred write error (NFS); EINTR after
		 * close leaves the fd closed on Linux, so never retry. */
		if (close(s->fd) != 0 && !rc)
			rc = errno;
	}
	s->fd = -1;
	return rc;
}
