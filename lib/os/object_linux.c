/* object_linux.c - os_object.h on Linux: the address range of the
 * loaded object holding an address, from the loader (dl_iterate_phdr).
 * SPDX-License-Identifier: Apache-2.0 */
#if defined(__linux__)
#include "os_object.h"

#include <link.h>
#include <stddef.h>
#include <string.h>

struct ptw_obj_find {
	uintptr_t addr;
	struct ptw_obj_range *r;
	int found;
};

static int ptw_obj_range_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ptw_obj_find *f = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int holds = 0;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		uintptr_t s = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
		uintptr_t e = s + (uintptr_t)ph->p_memsz;
		lo = s < lo ? s : lo;
		hi = e > hi ? e : hi;
		holds |= f->addr >= s && f->addr < e;
	}
	if (!holds)
		return 0;
	f->r->lo = lo;
	f->r->hi = hi;
	/* dlpi_adds and dlpi_subs follow dlpi_phnum (glibc 2.4 and later) */
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs)) {
		f->r->adds = info->dlpi_adds;
		f->r->subs = info->dlpi_subs;
	}
	f->found = 1;
	return 1; /* stop */
}

int ptw_obj_range_of(const void *addr, struct ptw_obj_range *r)
{
	memset(r, 0, sizeof(*r));
	struct ptw_obj_find f = {(uintptr_t)addr, r, 0};
	dl_iterate_phdr(ptw_obj_range_cb, &f);
	if (!f.found)
		memset(r, 0, sizeof(*r));
	return f.found ? 0 : -1;
}
#endif /* __linux__ */
