/* mem_linux.c - os_mem.h on Linux: anonymous mappings.
 * SPDX-License-Identifier: Apache-2.0 */
#if defined(__linux__)
#include "os_mem.h"

#include <sys/mman.h>

void *ptw_os_mem_reserve(size_t bytes)
{
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return mem == MAP_FAILED ? NULL : mem;
}

void ptw_os_mem_populate(void *mem, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
	if (madvise(mem, bytes, MADV_POPULATE_WRITE) == 0)
		return;
#endif
	/* Older kernels: nothing that would not race with the producer
	 * (writing the pages would); it faults them in itself. */
	(void)mem;
	(void)bytes;
}

void ptw_os_mem_release(void *mem, size_t bytes) { munmap(mem, bytes); }

void *ptw_os_mem_map_shared(int fd, size_t bytes)
{
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, fd, 0);
	return mem == MAP_FAILED ? NULL : mem;
}
#endif /* __linux__ */
