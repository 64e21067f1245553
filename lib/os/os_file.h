/* os_file.h - what ptw asks of the OS about files beyond POSIX: disk
 * space reserved ahead of writes, and read-ahead for files read once
 * from start to end. Internal, not API.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Implemented once per OS (lib/os/file_linux.c); a port adds its own
 * file, guarded by its OS macro, and nothing else changes. Every call is
 * a hint the OS may not support: a port with nothing better returns
 * "no" and the caller writes or reads as it would without. Contract:
 * - ptw_os_file_prealloc_pays(fd): 1 if reserving disk space ahead of
 *   writes to the regular file fd is supported and pays on its file
 *   system (not on tmpfs, where it allocates and zeroes memory up front,
 *   which made writes slower), else 0.
 * - ptw_os_file_prealloc(fd, from, len) reserves the bytes [from,
 *   from + len) of fd without changing the file's size or contents (the
 *   space past the end is given back by ftruncate at close). Returns 0,
 *   or an errno (ENOTSUP, ENOSPC...): the caller then stops reserving.
 *   Retries EINTR; keeps errno.
 * - ptw_os_file_sequential(fd) tells the OS that fd will be read once
 *   from start to end (more read-ahead). Errors ignored. */
#ifndef PTW_OS_FILE_H
#define PTW_OS_FILE_H

#include <stdint.h>

int ptw_os_file_prealloc_pays(int fd);
int ptw_os_file_prealloc(int fd, uint64_t from, uint64_t len);
void ptw_os_file_sequential(int fd);

#endif /* PTW_OS_FILE_H */
