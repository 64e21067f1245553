/* os_object.h - which loaded object (the program or a shared library)
 * holds an address, and the address range its segments occupy: the
 * tracer's unload hook (tracer_unload.c) tells the objects apart by it.
 * Internal, not API.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Also the list of loaded objects with their executable segment and
 * build id, from which lib/stack names captured return addresses.
 * Implemented once per OS (lib/os/object_linux.c, the dynamic loader's
 * dl_iterate_phdr); a port adds its own file,
 * guarded by its OS macro, and nothing else changes. The contract is
 * below, at each declaration. */
#ifndef PTW_OS_OBJECT_H
#define PTW_OS_OBJECT_H

#include <stddef.h>
#include <stdint.h>

/* [lo, hi): from the lowest to the highest byte of the object's PT_LOAD
 * segments (the gaps between them included: nothing else is mapped
 * there). 'adds' and 'subs' are the loader's counts of objects loaded
 * and unloaded so far when the range was found (dl_iterate_phdr): an
 * object loaded later at the same addresses comes with a higher 'adds'. */
struct ptw_obj_range {
	uintptr_t lo, hi;
	unsigned long long adds, subs;
};

/* Fills *r for the loaded object whose segments hold 'addr'. Returns 0,
 * or -1 (r zeroed) if no loaded object holds it. Takes the loader's list
 * lock for a moment (dl_iterate_phdr): callable from an object's
 * destructors, also while dlclose() runs them; not from a signal handler. */
int ptw_obj_range_of(const void *addr, struct ptw_obj_range *r);

/* 1 if 'p' lies in r's range. */
static inline int ptw_obj_range_has(const struct ptw_obj_range *r,
				    const void *p)
{
	uintptr_t a = (uintptr_t)p;
	return a >= r->lo && a < r->hi;
}

/* 1 if a and b are the same loaded object (same range, and no object was
 * loaded or unloaded between the two look-ups that could have taken its
 * place). */
static inline int ptw_obj_range_same(const struct ptw_obj_range *a,
				     const struct ptw_obj_range *b)
{
	return a->lo == b->lo && a->hi == b->hi && a->adds == b->adds &&
	       a->subs == b->subs;
}

/* One loaded object, as ptw_os_objects_each lists it. Pointers are valid
 * during the callback only. */
#define PTW_OS_BUILD_ID_MAX 64u
struct ptw_os_object {
	const char *path;   /* its file (the main program's resolved path) */
	uintptr_t base;     /* load bias: added to the file's addresses */
	uint64_t x_vaddr;   /* its first executable segment: file address, */
	uint64_t x_memsz;   /* size in memory */
	uint64_t x_offset;  /* and offset in the file */
	const unsigned char *build_id; /* GNU build id; NULL: none */
	size_t build_id_len;           /* 1..PTW_OS_BUILD_ID_MAX */
};

/* Calls fn for every loaded object that has an executable segment, in
 * the loader's order, until fn returns non-zero. *adds and *subs (may be
 * NULL) get the loader's counts of objects loaded and unloaded so far.
 * Takes the loader's list lock while it runs: fn must not load or unload
 * objects. Not from a signal handler. */
void ptw_os_objects_each(int (*fn)(const struct ptw_os_object *o, void *ctx),
			 void *ctx, unsigned long long *adds,
			 unsigned long long *subs);

/* The loader's counts only (cheap: stops at the first object), to tell
 * whether a list made earlier is still the loader's. */
void ptw_os_objects_counts(unsigned long long *adds, unsigned long long *subs);

#endif /* PTW_OS_OBJECT_H */
