/* object_linux.c - os_object.h on Linux: the address range of the
 * loaded object holding an address, and the list of loaded objects with
 * their build ids, from the loader (dl_iterate_phdr).
 * SPDX-License-Identifier: Apache-2.0 */
#if defined(__linux__)
#include "os_object.h"

#include <link.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

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
/* NT_GNU_BUILD_ID of a PT_NOTE segment in memory; NULL if none. */
static const unsigned char *ptw_os_build_id(const unsigned char *p,
					    size_t size, size_t *len)
{
	size_t off = 0;
	while (off + sizeof(ElfW(Nhdr)) <= size) {
		ElfW(Nhdr) nh;
		memcpy(&nh, p + off, sizeof(nh));
		size_t name = (nh.n_namesz + 3u) & ~(size_t)3;
		size_t desc = (nh.n_descsz + 3u) & ~(size_t)3;
		size_t body = off + sizeof(nh);
		if (name > size - body || desc > size - body - name)
			return NULL;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(p + body, "GNU", 4) == 0 && nh.n_descsz &&
		    nh.n_descsz <= PTW_OS_BUILD_ID_MAX) {
			*len = nh.n_descsz;
			return p + body + name;
		}
		off = body + name + desc;
	}
	return NULL;
}

struct ptw_os_each {
	int (*fn)(const struct ptw_os_object *o, void *ctx);
	void *ctx;
	unsigned long long adds, subs;
	int counts_only;
};

static int ptw_os_each_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ptw_os_each *e = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs)) {
		e->adds = info->dlpi_adds;
		e->subs = info->dlpi_subs;
	}
	if (e->counts_only)
		return 1;
	const ElfW(Phdr) *x = NULL;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum && !x; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD &&
		    (info->dlpi_phdr[i].p_flags & PF_X))
			x = &info->dlpi_phdr[i];
	if (!x)
		return 0;
	struct ptw_os_object o;
	memset(&o, 0, sizeof(o));
	o.path = info->dlpi_name;
	char exe[4096];
	if (!o.path || !*o.path) { /* the main program */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		o.path = exe;
	}
	o.base = (uintptr_t)info->dlpi_addr;
	o.x_vaddr = x->p_vaddr;
	o.x_memsz = x->p_memsz;
	o.x_offset = x->p_offset;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum && !o.build_id; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE)
			o.build_id = ptw_os_build_id(
				(const unsigned char *)(info->dlpi_addr +
							ph->p_vaddr),
				ph->p_memsz, &o.build_id_len);
	}
	return e->fn(&o, e->ctx);
}

void ptw_os_objects_each(int (*fn)(const struct ptw_os_object *o, void *ctx),
			 void *ctx, unsigned long long *adds,
			 unsigned long long *subs)
{
	struct ptw_os_each e = {fn, ctx, 0, 0, 0};
	dl_iterate_phdr(ptw_os_each_cb, &e);
	if (adds)
		*adds = e.adds;
	if (subs)
		*subs = e.subs;
}

void ptw_os_objects_counts(unsigned long long *adds, unsigned long long *subs)
{
	struct ptw_os_each e = {NULL, NULL, 0, 0, 1};
	dl_iterate_phdr(ptw_os_each_cb, &e);
	*adds = e.adds;
	*subs = e.subs;
}
#endif /* __linux__ */
