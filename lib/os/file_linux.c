/* file_linux.c - os_file.h on Linux: fallocate(FALLOC_FL_KEEP_SIZE),
 * except on tmpfs; posix_fadvise.
 * SPDX-License-Identifier: Apache-2.0 */
#if defined(__linux__)
#include "os_file.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/types.h>
#include <sys/vfs.h>

int ptw_os_file_prealloc_pays(int fd)
{
#if defined(FALLOC_FL_KEEP_SIZE)
	struct statfs fs;
	return fstatfs(fd, &fs) == 0 && fs.f_type != TMPFS_MAGIC;
#else
	(void)fd;
	return 0;
#endif
}

int ptw_os_file_prealloc(int fd, uint64_t from, uint64_t len)
{
#if defined(FALLOC_FL_KEEP_SIZE)
	int saved = errno, rc, e = 0;
	do
		rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)len);
	while (rc != 0 && errno == EINTR);
	if (rc != 0)
		e = errno ? errno : EIO;
	errno = saved;
	return e;
#else
	(void)fd;
	(void)from;
	(void)len;
	return ENOTSUP;
#endif
}

void ptw_os_file_sequential(int fd)
{
#ifdef POSIX_FADV_SEQUENTIAL
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#else
	(void)fd;
#endif
}
#endif /* __linux__ */
