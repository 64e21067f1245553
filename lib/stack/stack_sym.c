/* stack_sym.c - names the return addresses of captured stacks on the
 * backend: the loaded objects (lib/os/os_object.h: load address,
 * executable segment, build id) and their function symbols (.symtab of
 * the file on disk, else .dynsym), read when a stack first lands in an
 * object. Each stack first asks the loader whether an object was loaded or
 * unloaded since the list was made, and then lists them again.
 * SPDX-License-Identifier: Apache-2.0 */
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/os/os_object.h"
#include "stack.h"

#define PTW_STK_BID_MAX PTW_OS_BUILD_ID_MAX

/* The ELF types of this process's word size. */
#if UINTPTR_MAX > 0xffffffffu
#define PTW_ELF(type) Elf64_##type
#else
#define PTW_ELF(type) Elf32_##type
#endif

struct ptw_stk_fn {
	uint64_t addr, size; /* ELF virtual address */
	size_t name;         /* offset in the object's names */
};

struct ptw_stk_obj {
	uintptr_t l_addr;          /* load address (added to ELF addresses) */
	char *path;
	uint8_t bid[PTW_STK_BID_MAX];
	struct ptw_mapping map;    /* the executable segment */
	int read;                  /* symbols looked for */
	struct ptw_stk_fn *fns;    /* sorted by addr */
	size_t n_fns;
	char *names;
};

struct ptw_stk_sym {
	struct ptw_stk_obj *objs;
	size_t n, cap;
	unsigned long long adds, subs; /* the loader's counters then */
	int failed;                    /* out of memory listing them */
};

static void ptw_stk_objs_free(struct ptw_stk_sym *y)
{
	for (size_t i = 0; i < y->n; i++) {
		free(y->objs[i].path);
		free(y->objs[i].fns);
		free(y->objs[i].names);
	}
	free(y->objs);
	y->objs = NULL;
	y->n = y->cap = 0;
}

void ptw_stk_sym_free(struct ptw_stk_sym *y)
{
	if (!y)
		return;
	ptw_stk_objs_free(y);
	free(y);
}

static int ptw_stk_list_one(const struct ptw_os_object *x, void *ctx)
{
	struct ptw_stk_sym *y = ctx;
	if (y->n == y->cap) {
		size_t cap = y->cap ? 2 * y->cap : 32;
		void *p = realloc(y->objs, cap * sizeof(*y->objs));
		if (!p) {
			y->failed = 1;
			return 1;
		}
		y->objs = p;
		y->cap = cap;
	}
	struct ptw_stk_obj *o = &y->objs[y->n];
	memset(o, 0, sizeof(*o));
	o->l_addr = x->base;
	if (!(o->path = strdup(x->path))) {
		y->failed = 1;
		return 1;
	}
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	o->map.path = o->path;
	o->map.start = (x->base + x->x_vaddr) & ~(page - 1);
	o->map.end = x->base + x->x_vaddr + x->x_memsz;
	o->map.exact_offset = x->x_offset & ~(page - 1);
	o->map.load_bias = x->x_vaddr - x->x_offset;
	if (x->build_id) {
		memcpy(o->bid, x->build_id, x->build_id_len);
		o->map.build_id = o->bid;
		o->map.build_id_len = x->build_id_len;
	}
	y->n++;
	return 0;
}

/* (Re)lists the loaded objects. */
static void ptw_stk_list(struct ptw_stk_sym *y)
{
	ptw_stk_objs_free(y);
	y->failed = 0;
	ptw_os_objects_each(ptw_stk_list_one, y, &y->adds, &y->subs);
}

struct ptw_stk_sym *ptw_stk_sym_create(void)
{
	struct ptw_stk_sym *y = calloc(1, sizeof(*y));
	if (y)
		ptw_stk_list(y);
	return y;
}

static int ptw_stk_fn_cmp(const void *a, const void *b)
{
	const struct ptw_stk_fn *x = a, *z = b;
	return x->addr < z->addr ? -1 : x->addr > z->addr;
}

/* Function symbols of section 'sh' (a symbol table) of the ELF file at
 * f (len bytes), names from its linked string table. 0, or -1 if the
 * table is not there or malformed. */
static int ptw_stk_read_syms(struct ptw_stk_obj *o, const unsigned char *f,
			     size_t len, const PTW_ELF(Ehdr) *eh,
			     const PTW_ELF(Shdr) *sh)
{
	if (sh->sh_link >= eh->e_shnum || sh->sh_entsize != sizeof(PTW_ELF(Sym)) ||
	    sh->sh_offset > len || sh->sh_size > len - sh->sh_offset)
		return -1;
	PTW_ELF(Shdr) st;
	memcpy(&st, f + eh->e_shoff + (size_t)sh->sh_link * eh->e_shentsize,
	       sizeof(st));
	if (st.sh_offset > len || st.sh_size > len - st.sh_offset)
		return -1;
	const char *strs = (const char *)f + st.sh_offset;
	size_t n = sh->sh_size / sizeof(PTW_ELF(Sym)), used = 0, nbytes = 0;
	struct ptw_stk_fn *fns = malloc((n ? n : 1) * sizeof(*fns));
	if (!fns)
		return -1;
	for (size_t i = 0; i < n; i++) {
		PTW_ELF(Sym) s;
		memcpy(&s, f + sh->sh_offset + i * sizeof(s), sizeof(s));
		int type = ELF64_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    s.st_shndx == SHN_UNDEF || !s.st_value ||
		    s.st_name >= st.sh_size)
			continue;
		size_t nl = strnlen(strs + s.st_name, st.sh_size - s.st_name);
		if (nl == st.sh_size - s.st_name) /* not terminated */
			continue;
		fns[used].addr = s.st_value;
		fns[used].size = s.st_size;
		fns[used].name = s.st_name;
		nbytes = s.st_name + nl + 1 > nbytes ? s.st_name + nl + 1 : nbytes;
		used++;
	}
	/* the names: a copy of the string table up to its last name used */
	char *names = malloc(nbytes ? nbytes : 1);
	if (!names) {
		free(fns);
		return -1;
	}
	memcpy(names, strs, nbytes);
	qsort(fns, used, sizeof(*fns), ptw_stk_fn_cmp);
	o->fns = fns;
	o->n_fns = used;
	o->names = names;
	return 0;
}

/* Reads the object's function symbols from its file (once). */
static void ptw_stk_read(struct ptw_stk_obj *o)
{
	o->read = 1;
	int fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat sb;
	void *m = MAP_FAILED;
	if (fstat(fd, &sb) == 0 && sb.st_size >= (off_t)sizeof(PTW_ELF(Ehdr)))
		m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	const unsigned char *f = m;
	size_t len = (size_t)sb.st_size;
	PTW_ELF(Ehdr) eh;
	memcpy(&eh, f, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    eh.e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
	    eh.e_shentsize == sizeof(PTW_ELF(Shdr)) && eh.e_shoff < len &&
	    (size_t)eh.e_shnum * eh.e_shentsize <= len - eh.e_shoff) {
		const PTW_ELF(Shdr) *best = NULL;
		PTW_ELF(Shdr) sh[2];
		for (PTW_ELF(Half) i = 0; i < eh.e_shnum; i++) {
			memcpy(&sh[0], f + eh.e_shoff + (size_t)i * eh.e_shentsize,
			       sizeof(sh[0]));
			if (sh[0].sh_type == SHT_SYMTAB ||
			    (sh[0].sh_type == SHT_DYNSYM && !best)) {
				sh[1] = sh[0];
				best = &sh[1];
				if (sh[0].sh_type == SHT_SYMTAB)
					break;
			}
		}
		if (best)
			(void)ptw_stk_read_syms(o, f, len, &eh, best);
	}
	munmap(m, len);
}

static const char *ptw_stk_fn_name(struct ptw_stk_obj *o, uint64_t a)
{
	if (!o->read)
		ptw_stk_read(o);
	size_t lo = 0, hi = o->n_fns;
	while (lo < hi) { /* first symbol above a */
		size_t mid = lo + (hi - lo) / 2;
		if (o->fns[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct ptw_stk_fn *fn = &o->fns[lo - 1];
	if (fn->size && a - fn->addr >= fn->size)
		return NULL;
	return o->names + fn->name;
}

static struct ptw_stk_obj *ptw_stk_find(struct ptw_stk_sym *y, uint64_t pc)
{
	for (size_t i = 0; i < y->n; i++)
		if (pc >= y->objs[i].map.start && pc < y->objs[i].map.end)
			return &y->objs[i];
	return NULL;
}

uint32_t ptw_stk_sym_frames(struct ptw_stk_sym *y, const uint64_t *pcs,
			    uint32_t n, struct ptw_frame *out)
{
	/* an object loaded or unloaded since the list was made: list them
	 * again (the loader counts both; this look-up stops at the first
	 * object) */
	unsigned long long c[2] = {0, 0};
	ptw_os_objects_counts(&c[0], &c[1]);
	if (c[0] != y->adds || c[1] != y->subs || y->failed)
		ptw_stk_list(y);
	for (uint32_t i = 0; i < n; i++) {
		/* a return address: the call is the byte before it */
		uint64_t pc = pcs[i] ? pcs[i] - 1 : 0;
		struct ptw_stk_obj *o = ptw_stk_find(y, pc);
		struct ptw_frame *f = &out[n - 1 - i]; /* outermost first */
		memset(f, 0, sizeof(*f));
		if (!o) {
			f->rel_pc = pc;
			continue;
		}
		f->mapping = &o->map;
		f->rel_pc = pc - o->l_addr;
		f->function = ptw_stk_fn_name(o, f->rel_pc);
	}
	/* The tracer's own frames on top (ptw_i_ev and ptw_tr_ev_other, when
	 * the compiler made no sibling call to ptw_i_emit_stack) are not the
	 * program's. */
	uint32_t keep = n;
	while (keep > 1 && out[keep - 1].function &&
	       (strncmp(out[keep - 1].function, "ptw_i_", 6) == 0 ||
		strncmp(out[keep - 1].function, "ptw_tr_", 7) == 0))
		keep--;
	return keep;
}
