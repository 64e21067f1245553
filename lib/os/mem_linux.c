/* mem_linux.c - os_mem.h on Linux: anonymous mappings.
 * SPDX-License-Identifier: Apache-2.0 */
#if defined(__linux__)
#include "os_mem.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

void *ptw_os_mem_reserve(size_t bytes)
{
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
#ifdef MADV_WIPEONFORK
	/* fork() would otherwise share the block's pages with the child,
	 * copy-on-write: each page the parent then writes first takes a page
	 * fault, even after the child has exited or exec'd (35 us each on a
	 * PVM guest; a busy 32 MiB ring written again after any fork() of
	 * the program paid some 150 ns an event). The child sees zeros
	 * instead (Linux 4.14; older kernels keep the copy-on-write). */
	(void)madvise(mem, bytes, MADV_WIPEONFORK);
#endif
	return mem;
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
	if (mem == MAP_FAILED)
		return NULL;
	/* MAP_POPULATE fills the kernel's page tables, but under a
	 * hypervisor that shadows them (seen on a PVM guest) the first write
	 * of the process to each page still costs some 20 us: a write, not
	 * a read, from user space is what fills the shadow. So each page
	 * takes one write now: an atomic OR of 0, which changes no byte
	 * whatever the other process does with the page meanwhile. On bare
	 * metal this is a few ns a page. */
	long ps = sysconf(_SC_PAGESIZE);
	size_t step = ps > 0 ? (size_t)ps : 4096u;
	for (size_t off = 0; off + sizeof(uint32_t) <= bytes; off += step)
		atomic_fetch_or_explicit(
			(_Atomic uint32_t *)(void *)((uint8_t *)mem + off), 0u,
			memory_order_relaxed);
	return mem;
}
#endif /* __linux__ */
