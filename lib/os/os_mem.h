/* os_mem.h - large blocks of memory straight from the OS: reserved at
 * once, paid for page by page as they are used. Internal, not API.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Implemented once per OS (lib/os/mem_linux.c); a port adds its own
 * file, guarded by its OS macro, and nothing else changes. Contract:
 * - ptw_os_mem_reserve(bytes) returns 'bytes' of page-aligned, writable,
 *   zeroed memory, or NULL. Only reserved: a page takes memory when it is
 *   first touched. Not shared with a child of fork(): the parent's
 *   pages stay its own (its next writes take no copy-on-write faults)
 *   and the child finds the block zeroed, its pages not yet touched
 *   (where the OS cannot, the child gets a copy as usual).
 * - ptw_os_mem_populate(mem, bytes) faults every page of a reserved
 *   block in now, without changing its contents, while another thread
 *   may be writing to it: best effort (an OS that cannot, or an old
 *   kernel, does nothing and the writer faults pages in itself).
 * - ptw_os_mem_release(mem, bytes) gives a whole block back to the OS.
 * - ptw_os_mem_map_shared(fd, bytes) maps 'bytes' of the file (or shared
 *   memory) 'fd' read-write and shared, its pages faulted in and each
 *   written once now (without changing a byte: another process may use
 *   them), so that the first writes cost no more than later ones, or
 *   NULL.
 *   Released with ptw_os_mem_release.
 * All are thread-safe and never called per event. */
#ifndef PTW_OS_MEM_H
#define PTW_OS_MEM_H

#include <stddef.h>

void *ptw_os_mem_reserve(size_t bytes);
void ptw_os_mem_populate(void *mem, size_t bytes);
void ptw_os_mem_release(void *mem, size_t bytes);
void *ptw_os_mem_map_shared(int fd, size_t bytes);

#endif /* PTW_OS_MEM_H */
