/* test_appletrace_bin.c - the APLTRC01 decoder, rule by rule (corpus
 * README section 4): phases and fields, truncation at every byte, zero
 * padding, one name table across fragments, redefinitions, errors with
 * their byte offsets, and the chunked fd reader (also one buffer kept
 * across fragments) against the memory one.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converters/appletrace/appletrace.h"
#include "support/ptw_test.h"

/* ---- a tiny fragment encoder (the reference producer's layout) -------- */

struct frag {
	uint8_t *p;
	size_t len, cap;
	size_t bounds[4096]; /* end offset of each record */
	size_t n_bounds;
	size_t n_events;
};

static void put(struct frag *f, const void *s, size_t n)
{
	if (f->len + n > f->cap) {
		f->cap = (f->len + n) * 2 + 64;
		f->p = realloc(f->p, f->cap);
		cr_assert(f->p);
	}
	memcpy(f->p + f->len, s, n);
	f->len += n;
}

static void put_le(struct frag *f, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++) {
		uint8_t b = (uint8_t)(v >> (8 * i));
		put(f, &b, 1);
	}
}

static void mark(struct frag *f)
{
	if (f->n_bounds < 4096)
		f->bounds[f->n_bounds++] = f->len;
}

static void frag_header(struct frag *f, uint32_t pid)
{
	memset(f, 0, sizeof(*f));
	put(f, "APLTRC01", 8);
	put_le(f, pid, 4);
}

static void frag_def(struct frag *f, uint32_t id, const char *s)
{
	uint8_t tag = 1;
	put(f, &tag, 1);
	put_le(f, id, 4);
	put_le(f, strlen(s), 4);
	put(f, s, strlen(s));
	mark(f);
}

static void frag_event(struct frag *f, char ph, uint32_t id, uint64_t tid,
		       uint64_t ts, uint64_t arg)
{
	uint8_t tag = (uint8_t)ph;
	put(f, &tag, 1);
	put_le(f, id, 4);
	put_le(f, tid, 8);
	put_le(f, ts, 8);
	put_le(f, arg, 8);
	mark(f);
	f->n_events++;
}

static uint64_t dbits(double d)
{
	uint64_t b;
	memcpy(&b, &d, 8);
	return b;
}

/* ---- collecting events ---------------------------------------------------- */

struct got_ev {
	char ph;
	char name[64];
	uint64_t name_sym;
	size_t name_n;
	char cat[32];
	uint32_t pid, tid, flags;
	int64_t ts_ns;
	uint64_t id, offset;
	char scope;
	int n_args;
	int arg_type;
	int64_t arg_i;
	double arg_d;
	char arg_s[64];
};

struct got {
	struct got_ev ev[512];
	size_t n;
};

static int collect(void *ctx, const struct ptw_cv_event *ev,
		   struct ptw_error *err)
{
	(void)err;
	struct got *g = ctx;
	if (g->n == 512)
		return 0;
	struct got_ev *e = &g->ev[g->n++];
	memset(e, 0, sizeof(*e));
	e->ph = ev->ph;
	snprintf(e->name, sizeof(e->name), "%.*s", (int)ev->name.n, ev->name.p);
	e->name_sym = ev->name_sym;
	e->name_n = ev->name.n;
	if (ev->cat.p)
		snprintf(e->cat, sizeof(e->cat), "%.*s", (int)ev->cat.n, ev->cat.p);
	e->pid = ev->pid;
	e->tid = ev->tid;
	e->flags = ev->flags;
	e->ts_ns = ev->ts_ns;
	e->id = ev->id_num;
	e->offset = ev->offset;
	e->scope = ev->scope;
	e->n_args = (int)ev->n_args;
	if (ev->n_args) {
		e->arg_type = ev->args[0].type;
		e->arg_i = ev->args[0].i;
		e->arg_d = ev->args[0].d;
		if (ev->args[0].type == PTW_CV_VAL_STRING)
			snprintf(e->arg_s, sizeof(e->arg_s), "%.*s",
				 (int)ev->args[0].s.n, ev->args[0].s.p);
	}
	return 0;
}

static int read_frag(const struct frag *f, size_t len,
		     struct ptw_appletrace_names *names, struct got *g,
		     enum ptw_appletrace_kind *kind, struct ptw_error *err)
{
	return ptw_appletrace_bin_read_mem(f->p, len, "frag.appletracebin",
					   names, collect, g, kind, err);
}

static void sample(struct frag *f)
{
	frag_header(f, 666);
	frag_def(f, 1, "work");
	frag_def(f, 2, "main");
	frag_event(f, 'B', 1, 0, 10, 0);
	frag_event(f, 'i', 1, 7, 11, 0);
	frag_event(f, 'C', 1, 7, 12, dbits(60.0));
	frag_event(f, 'C', 1, 7, 13, dbits(142.5));
	frag_event(f, 'b', 1, 7, 14, 42);
	frag_event(f, 'e', 1, 7, 15, 42);
	frag_event(f, 'M', 1, 7, 0, 2);
	frag_event(f, 'E', 1, 0, 20, 0);
}

Test(appletrace_bin, decodes_every_phase_as_the_exporter_does)
{
	struct frag f;
	sample(&f);
	struct ptw_appletrace_names *names = ptw_appletrace_names_create();
	struct got g = {0};
	struct ptw_error err = {0};
	cr_assert_eq(read_frag(&f, f.len, names, &g, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(g.n, 8);
	cr_assert_eq(g.ev[0].ph, 'B');
	cr_assert_str_eq(g.ev[0].name, "work");
	cr_assert_str_eq(g.ev[0].cat, "appletrace");
	cr_assert_eq(g.ev[0].pid, 666);
	cr_assert_eq(g.ev[0].tid, 0);
	cr_assert_eq(g.ev[0].ts_ns, 10000);
	cr_assert_eq(g.ev[0].offset, 12 + 13 + 13);
	cr_assert_eq(g.ev[1].scope, 't');
	cr_assert_eq(g.ev[2].arg_type, PTW_CV_VAL_INT);
	cr_assert_eq(g.ev[2].arg_i, 60);
	cr_assert_eq(g.ev[3].arg_type, PTW_CV_VAL_DOUBLE);
	cr_assert_float_eq(g.ev[3].arg_d, 142.5, 1e-12);
	cr_assert(g.ev[4].flags & PTW_CV_HAS_ID);
	cr_assert_eq(g.ev[4].id, 42);
	cr_assert_eq(g.ev[6].ph, 'M');
	cr_assert_str_eq(g.ev[6].cat, "");           /* no cat */
	cr_assert_eq(g.ev[6].flags & PTW_CV_HAS_TS, 0); /* no ts */
	cr_assert_str_eq(g.ev[6].arg_s, "main");
	ptw_appletrace_names_destroy(names);
	free(f.p);
}

Test(appletrace_bin, counter_values_integral_become_integers)
{
	struct frag f;
	frag_header(&f, 1);
	frag_def(&f, 0, "c");
	frag_event(&f, 'C', 0, 1, 1, dbits(-0.0));
	frag_event(&f, 'C', 0, 1, 2, dbits(1e15));
	frag_event(&f, 'C', 0, 1, 3, dbits(-2.25));
	struct ptw_appletrace_names *names = ptw_appletrace_names_create();
	struct got g = {0};
	cr_assert_eq(read_frag(&f, f.len, names, &g, NULL, NULL), 0);
	cr_assert_eq(g.ev[0].arg_type, PTW_CV_VAL_INT);
	cr_assert_eq(g.ev[0].arg_i, 0);
	cr_assert_eq(g.ev[1].arg_type, PTW_CV_VAL_INT);
	cr_assert_eq(g.ev[1].arg_i, 1000000000000000LL);
	cr_assert_eq(g.ev[2].arg_type, PTW_CV_VAL_DOUBLE);
	ptw_appletrace_names_destroy(names);
	free(f.p);
}

Test(appletrace_bin, truncation_at_every_byte_ends_the_fragment_quietly)
{
	struct frag f;
	sample(&f);
	for (size_t len = 0; len <= f.len; len++) {
		struct ptw_appletrace_names *names = ptw_appletrace_names_create();
		struct got g = {0};
		struct ptw_error err = {0};
		int rc = read_frag(&f, len, names, &g, NULL, &err);
		cr_assert_eq(rc, 0, "cut at %zu: %s", len, err.msg);
		size_t want = 0; /* events whose record is complete */
		size_t start = 12;
		for (size_t i = 0; i < f.n_bounds; i++) {
			if (f.bounds[i] <= len && f.p[start] != 1)
				want++;
			start = f.bounds[i];
		}
		cr_assert_eq(g.n, want, "cut at %zu: %zu events, expected %zu", len,
			     g.n, want);
		ptw_appletrace_names_destroy(names);
	}
	free(f.p);
}

Test(appletrace_bin, zero_tag_ends_the_fragment_and_ignores_the_rest)
{
	struct frag f;
	frag_header(&f, 5);
	frag_def(&f, 3, "x");
	frag_event(&f, 'B', 3, 1, 1, 0);
	uint8_t pad[100] = {0};
	pad[50] = 'Z'; /* stale bytes after the padding are ignored too */
	put(&f, pad, sizeof(pad));
	struct ptw_appletrace_names *names = ptw_appletrace_names_create();
	struct got g = {0};
	cr_assert_eq(read_frag(&f, f.len, names, &g, NULL, NULL), 0);
	cr_assert_eq(g.n, 1);
	ptw_appletrace_names_destroy(names);
	free(f.p);
}

Test(appletrace_bin, name_defined_in_fragment_1_is_used_in_fragment_3)
{
	struct frag a, b, c;
	frag_header(&a, 9);
	frag_def(&a, 4000000000u, "defined-early");
	frag_event(&a, 'B', 4000000000u, 2, 1, 0);
	frag_header(&b, 9);
	frag_def(&b, 5, "other");
	frag_event(&b, 'i', 5, 2, 2, 0);
	frag_header(&c, 9);
	frag_event(&c, 'E', 4000000000u, 2, 3, 0);
	struct ptw_appletrace_names *names = ptw_appletrace_names_create();
	struct got g = {0};
	cr_assert_eq(read_frag(&a, a.len, names, &g, NULL, NULL), 0);
	cr_assert_eq(read_frag(&b, b.len, names, &g, NULL, NULL), 0);
	cr_assert_eq(read_frag(&c, c.len, names, &g, NULL, NULL), 0);
	cr_assert_eq(g.n, 3);
	cr_assert_str_eq(g.ev[2].name, "defined-early");
	/* A fresh table (a new run) does not know it. */
	struct ptw_appletrace_names *fresh = ptw_appletrace_names_create();
	enum ptw_appletrace_kind kind;
	cr_assert_eq(read_frag(&c, c.len, fresh, &g, &kind, NULL), PTW_ERR_FORMAT);
	cr_assert_eq(kind, PTW_APPLETRACE_UNDEFINED_NAME_ID);
	ptw_appletrace_names_destroy(names);
	ptw_appletrace_names_destroy(fresh);
	free(a.p);
	free(b.p);
	free(c.p);
}

Test(appletrace_bin, redefinition_replaces_the_string_from_then_on)
{
	struct frag f;
	frag_header(&f, 1);
	frag_def(&f, 1, "old");
	frag_event(&f, 'B', 1, 1, 1, 0);
	frag_def(&f, 1, "new");
	frag_event(&f, 'E', 1, 1, 2, 0);
	frag_def(&f, 2, "");
	frag_event(&f, 'i', 2, 1, 3, 0);
	struct ptw_appletrace_names *names = ptw_appletrace_names_create();
	struct got g = {0};
	cr_assert_eq(read_frag(&f, f.len, names, &g, NULL, NULL), 0);
	cr_assert_str_eq(g.ev[0].name, "old");
	cr_assert_str_eq(g.ev[1].name, "new");
	cr_assert_str_eq(g.ev[2].name, ""); /* zero-length definition */
	ptw_appletrace_names_destroy(names);
	free(f.p);
}

Test(appletrace_bin, errors_name_the_fragment_and_the_record_offset)
{
	struct frag f;
	frag_header(&f, 1);
	frag_def(&f, 1, "a");            /* 12..22 */
	frag_event(&f, 'B', 77, 1, 1, 0); /* offset 22: undefined */
	struct ptw_appletrace_names *names = ptw_appletrace_names_create();
	struct got g = {0};
	struct ptw_error err = {0};
	enum ptw_appletrace_kind kind;
	cr_assert_eq(read_frag(&f, f.len, names, &g, &kind, &err), PTW_ERR_FORMAT);
	cr_assert_eq(kind, PTW_APPLETRACE_UNDEFINED_NAME_ID);
	cr_assert_eq(err.offset, 22);
	cr_assert(strstr(err.msg, "frag.appletracebin: offset 22"), "%s", err.msg);

	struct frag m;
	frag_header(&m, 1);
	frag_def(&m, 1, "thread_name");
	frag_event(&m, 'M', 1, 1, 0, 99); /* value id 99 undefined */
	cr_assert_eq(read_frag(&m, m.len, names, &g, &kind, &err), PTW_ERR_FORMAT);
	cr_assert_eq(kind, PTW_APPLETRACE_UNDEFINED_NAME_ID);
	cr_assert_eq(err.offset, 12 + 9 + 11);

	struct frag t;
	frag_header(&t, 1);
	frag_def(&t, 1, "a");
	uint8_t z = 'Z';
	put(&t, &z, 1);
	cr_assert_eq(read_frag(&t, t.len, names, &g, &kind, &err), PTW_ERR_FORMAT);
	cr_assert_eq(kind, PTW_APPLETRACE_UNKNOWN_TAG);
	cr_assert_eq(err.offset, 22);
	cr_assert(strstr(err.msg, "0x5a"), "%s", err.msg);

	struct frag bad;
	frag_header(&bad, 1);
	bad.p[0] = 'X';
	cr_assert_eq(read_frag(&bad, bad.len, names, &g, &kind, &err), PTW_ERR_FORMAT);
	cr_assert_eq(kind, PTW_APPLETRACE_BAD_MAGIC);
	/* A header cut by a crash that is a prefix of the magic: no events. */
	cr_assert_eq(read_frag(&bad, 0, names, &g, &kind, &err), 0);
	cr_assert_eq(read_frag(&f, 5, names, &g, &kind, &err), 0);
	cr_assert_eq(read_frag(&f, 10, names, &g, &kind, &err), 0);
	cr_assert_eq(read_frag(&bad, 3, names, &g, &kind, &err), PTW_ERR_FORMAT);
	ptw_appletrace_names_destroy(names);
	free(f.p);
	free(m.p);
	free(t.p);
	free(bad.p);
}

Test(appletrace_bin, tids_above_uint32_read_as_zero)
{
	struct frag f;
	frag_header(&f, 3);
	frag_def(&f, 1, "a");
	frag_event(&f, 'i', 1, 0x100000005ull, 1, 0);
	struct ptw_appletrace_names *names = ptw_appletrace_names_create();
	struct got g = {0};
	cr_assert_eq(read_frag(&f, f.len, names, &g, NULL, NULL), 0);
	cr_assert_eq(g.ev[0].tid, 0);
	ptw_appletrace_names_destroy(names);
	free(f.p);
}

static int count_cb(void *ctx, const struct ptw_cv_event *ev,
		    struct ptw_error *err)
{
	(void)err;
	uint64_t *n = ctx;
	n[0]++;
	n[1] += (uint64_t)ev->ts_ns + ev->name.n;
	return 0;
}

Test(appletrace_bin, fd_reader_matches_memory_reader_across_chunks)
{
	struct frag f;
	frag_header(&f, 42);
	char big[5000];
	memset(big, 'n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	size_t nev = ptw_test_scale(80000, 20000);
	for (size_t i = 0; i < nev; i++) {
		if (i % 997 == 0) {
			big[i % 4000] = (char)('a' + i % 26);
			frag_def(&f, (uint32_t)(i % 7), big); /* long strings
							       * cross chunks */
		}
		frag_event(&f, i % 2 ? 'E' : 'B', (uint32_t)(i % 7 < 1 ? 0 : 0),
			   i % 5, i, 0);
	}
	put(&f, "\x01\x01\x00\x00", 4); /* truncated definition at the end */
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "apbin");
	ptw_test_write_file_or_fail(path, f.p, f.len);
	uint64_t a[2] = {0}, b[2] = {0};
	struct ptw_appletrace_names *n1 = ptw_appletrace_names_create();
	struct ptw_appletrace_names *n2 = ptw_appletrace_names_create();
	struct ptw_error err = {0};
	cr_assert_eq(ptw_appletrace_bin_read_mem(f.p, f.len, "m", n1, count_cb, a,
						 NULL, &err), 0, "%s", err.msg);
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ptw_appletrace_bin_read_fd(fd, "f", n2, count_cb, b, NULL,
						&err), 0, "%s", err.msg);
	close(fd);
	unlink(path);
	cr_assert_eq(a[0], nev);
	cr_assert_eq(a[0], b[0]);
	cr_assert_eq(a[1], b[1]);
	ptw_appletrace_names_destroy(n1);
	ptw_appletrace_names_destroy(n2);
	free(f.p);
}

/* Three fragments for one buffer: a string longer than the reader's
 * chunk (the buffer grows), many events crossing chunk boundaries, and a
 * small one ending in a cut event. */
static void three_fragments(struct frag f[3])
{
	size_t big_n = 600u << 10;
	char *big = malloc(big_n + 1);
	cr_assert(big);
	memset(big, 'x', big_n);
	big[big_n] = '\0';
	frag_header(&f[0], 7);
	frag_def(&f[0], 3, big);
	frag_event(&f[0], 'B', 3, 1, 5, 0);
	frag_event(&f[0], 'E', 3, 1, 6, 0);
	free(big);
	frag_header(&f[1], 7);
	frag_def(&f[1], 4, "short");
	size_t nev = ptw_test_scale(30000, 12000);
	for (size_t i = 0; i < nev; i++)
		frag_event(&f[1], i % 2 ? 'E' : 'B', i % 3 ? 3 : 4, i % 5,
			   10 + i, 0);
	frag_header(&f[2], 7);
	frag_event(&f[2], 'i', 4, 2, 99999, 0);
	put(&f[2], "B\x03\x00", 3); /* a cut event ends it */
}

Test(appletrace_bin, one_buffer_reads_fragments_in_turn_as_memory_does)
{
	struct frag f[3];
	three_fragments(f);
	struct ptw_appletrace_names *n1 = ptw_appletrace_names_create();
	struct ptw_appletrace_names *n2 = ptw_appletrace_names_create();
	struct ptw_appletrace_buf buf = {NULL, 0};
	struct ptw_error err = {0};
	for (int i = 0; i < 3; i++) {
		uint64_t a[2] = {0}, b[2] = {0};
		char path[256];
		ptw_test_tmp_path(path, sizeof(path), "apbuf");
		ptw_test_write_file_or_fail(path, f[i].p, f[i].len);
		cr_assert_eq(ptw_appletrace_bin_read_mem(f[i].p, f[i].len, "m",
							 n1, count_cb, a, NULL,
							 &err), 0, "%s", err.msg);
		int fd = open(path, O_RDONLY);
		cr_assert_geq(fd, 0);
		enum ptw_appletrace_kind kind;
		cr_assert_eq(ptw_appletrace_bin_read_fd_buf(fd, "f", n2,
							    count_cb, NULL, b,
							    &buf, &kind, &err),
			     0, "%s", err.msg);
		close(fd);
		unlink(path);
		cr_assert_eq(kind, PTW_APPLETRACE_OK);
		cr_assert_eq(a[0], f[i].n_events);
		cr_assert_eq(a[0], b[0], "fragment %d", i);
		cr_assert_eq(a[1], b[1], "fragment %d", i);
		/* kept for the next fragment, grown past the long string */
		cr_assert(buf.p && buf.cap > (600u << 10));
	}
	ptw_appletrace_buf_free(&buf);
	cr_assert(!buf.p && !buf.cap);
	ptw_appletrace_names_destroy(n1);
	ptw_appletrace_names_destroy(n2);
	for (int i = 0; i < 3; i++)
		free(f[i].p);
}

Test(appletrace_bin, ids_small_and_large_redefine_and_stay_apart)
{
	/* Ids below 4096 are also indexed directly, others hashed: both
	 * kinds define, redefine and fail alike, and never mix. */
	static const uint32_t ids[] = {0, 4095, 4096, 4096 + 4096,
				       0xFFFFFFFFu, 64 * 1024 + 1};
	enum { N = sizeof(ids) / sizeof(ids[0]) };
	struct frag f;
	frag_header(&f, 1);
	char s[32];
	for (int i = 0; i < N; i++) {
		snprintf(s, sizeof(s), "a%u", (unsigned)ids[i]);
		frag_def(&f, ids[i], s);
	}
	for (int i = 0; i < N; i++)
		frag_event(&f, 'i', ids[i], 1, 1, 0);
	for (int i = 0; i < N; i++) {
		snprintf(s, sizeof(s), "b%u", (unsigned)ids[i]);
		frag_def(&f, ids[i], s);
	}
	for (int i = N; i > 0; i--)
		frag_event(&f, 'i', ids[i - 1], 1, 2, 0);
	/* many more definitions: the hashed table grows; all still found */
	for (uint32_t id = 5000; id < 5300; id++) {
		snprintf(s, sizeof(s), "c%u", (unsigned)id);
		frag_def(&f, id, s);
	}
	frag_event(&f, 'i', 5299, 1, 3, 0);
	frag_event(&f, 'i', 4095, 1, 3, 0);
	frag_event(&f, 'i', 4094, 1, 4, 0); /* never defined */
	struct ptw_appletrace_names *names = ptw_appletrace_names_create();
	struct got g = {0};
	struct ptw_error err = {0};
	enum ptw_appletrace_kind kind = PTW_APPLETRACE_OK;
	cr_assert_eq(read_frag(&f, f.len, names, &g, &kind, &err),
		     PTW_ERR_FORMAT);
	cr_assert_eq(kind, PTW_APPLETRACE_UNDEFINED_NAME_ID);
	cr_assert_eq(g.n, 2 * N + 2);
	for (int i = 0; i < N; i++) {
		snprintf(s, sizeof(s), "a%u", (unsigned)ids[i]);
		cr_expect_str_eq(g.ev[i].name, s);
		snprintf(s, sizeof(s), "b%u", (unsigned)ids[N - 1 - i]);
		cr_expect_str_eq(g.ev[N + i].name, s);
	}
	cr_expect_str_eq(g.ev[2 * N].name, "c5299");
	cr_expect_str_eq(g.ev[2 * N + 1].name, "b4095");
	cr_expect_eq(ptw_appletrace_names_count(names), N + 300);
	ptw_appletrace_names_destroy(names);
	free(f.p);
}

/* A file with the APLTRC01 magic is a binary fragment whatever its name;
 * pipes and directories are never read to find out (a pipe's bytes would
 * be lost). */
Test(appletrace_bin, a_fragment_is_known_by_its_magic_not_its_name)
{
	struct frag f;
	frag_header(&f, 42);
	frag_def(&f, 1, "x");
	frag_event(&f, 'B', 1, 7, 10, 0);
	frag_event(&f, 'E', 1, 7, 20, 0);
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "capture.dat");
	ptw_test_write_file_or_fail(path, f.p, f.len);
	cr_expect(ptw_appletrace_has_bin_magic(path));
	struct ptw_error err = {0};
	struct ptw_appletrace_run *r = ptw_appletrace_run_create(&err);
	cr_assert(r);
	uint64_t c[2] = {0};
	cr_assert_eq(ptw_appletrace_run_read_file(r, path, count_cb, c, NULL,
						  &err), 0, "%s", err.msg);
	cr_expect_eq(c[0], 2, "both events, read as binary");
	unlink(path);
	/* ... but the extension wins: a ".appletrace" file is text, and
	 * text reading stops at a line that does not start with '{' */
	char tpath[300];
	snprintf(tpath, sizeof(tpath), "%s.appletrace", path);
	ptw_test_write_file_or_fail(tpath, f.p, f.len);
	c[0] = 0;
	cr_assert_eq(ptw_appletrace_run_read_file(r, tpath, count_cb, c, NULL,
						  &err), 0, "%s", err.msg);
	cr_expect_eq(c[0], 0, "read as text: no event");
	unlink(tpath);
	ptw_appletrace_run_destroy(r);

	ptw_test_write_file_or_fail(path, "APLTRC0", 7); /* too short */
	cr_expect_not(ptw_appletrace_has_bin_magic(path));
	unlink(path);
	cr_expect_not(ptw_appletrace_has_bin_magic("/tmp"));
	cr_assert_eq(mkfifo(path, 0600), 0);
	/* would block in open() if it were opened without a writer */
	cr_expect_not(ptw_appletrace_has_bin_magic(path));
	unlink(path);
	free(f.p);
}

/* ---- batches ---------------------------------------------------------- */

/* Every event a reader hands out, one way or the other, in order. */
struct seen {
	struct got_ev *ev;
	size_t n, cap;
	uint64_t x;        /* xorshift: how many a batch takes */
	uint64_t batches, in_batches;
};

static struct got_ev *seen_add(struct seen *s)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		cr_assert(s->ev);
	}
	struct got_ev *e = &s->ev[s->n++];
	memset(e, 0, sizeof(*e));
	return e;
}

static int seen_event(void *ctx, const struct ptw_cv_event *ev,
		      struct ptw_error *err)
{
	struct seen *s = ctx;
	struct got g = {.n = 0};
	collect(&g, ev, err);
	*seen_add(s) = g.ev[0];
	/* a batch has no offsets, and names only by number (non-empty) */
	s->ev[s->n - 1].offset = 0;
	memset(s->ev[s->n - 1].name, 0, sizeof(g.ev[0].name));
	s->ev[s->n - 1].name_n = g.ev[0].name_n != 0;
	return 0;
}

/* Takes a random number of the batch's events (sometimes none, sometimes
 * all), recording each as the event callback would see it. */
static int seen_batch(void *ctx, const struct ptw_cv_batch *b, size_t *taken,
		      struct ptw_error *err)
{
	(void)err;
	struct seen *s = ctx;
	s->x ^= s->x << 13;
	s->x ^= s->x >> 7;
	s->x ^= s->x << 17;
	size_t k = s->x % 4 == 0 ? b->n : (size_t)(s->x >> 8) % (b->n + 1);
	cr_assert_gt(b->n, 0u);
	for (size_t i = 0; i < k; i++) {
		const struct ptw_cv_simple *x = &b->ev[i];
		struct got_ev *e = seen_add(s);
		e->ph = x->ph;
		e->name_sym = x->name_sym;
		e->name_n = 1; /* a batch's names are not empty */
		if (b->cat.p)
			snprintf(e->cat, sizeof(e->cat), "%.*s", (int)b->cat.n,
				 b->cat.p);
		e->pid = b->pid;
		e->tid = x->tid;
		e->flags = PTW_CV_HAS_PID | PTW_CV_HAS_TID | PTW_CV_HAS_TS;
		e->ts_ns = x->ts_ns;
		e->scope = x->ph == 'i' ? 't' : 0;
		if (x->ph == 'C') {
			cr_assert_eq(b->value_key.n, 5u);
			cr_assert(memcmp(b->value_key.p, "value", 5) == 0);
			e->n_args = 1;
			int64_t iv;
			int is_int = ptw_cv_double_is_int(x->d, &iv);
			e->arg_type = is_int ? PTW_CV_VAL_INT : PTW_CV_VAL_DOUBLE;
			if (is_int)
				e->arg_i = iv;
			else
				e->arg_d = x->d;
		}
	}
	*taken = k;
	s->batches++;
	s->in_batches += k;
	return 0;
}

/* A batch callback sees exactly the events the event callback would, in
 * file order, whatever it takes: through chunk boundaries, around every
 * other kind of record and timestamps too large for a batch. */
Test(appletrace_bin, batches_hand_out_the_same_events_in_order)
{
	struct frag f;
	frag_header(&f, 42);
	frag_def(&f, 1, "one");
	frag_def(&f, 2, "two");
	size_t nev = ptw_test_scale(120000, 30000);
	for (size_t i = 0; i < nev; i++) {
		static const char ph[] = "BEiBEBEBECMbeBE";
		char p = ph[i * 7 % (sizeof(ph) - 1)];
		uint64_t ts = i % 101 == 0 ? (uint64_t)INT64_MAX / 500 : i;
		if (i % 3001 == 0)
			frag_def(&f, 2, i % 2 ? "two" : "deux");
		uint64_t arg = p == 'M' ? 1 : p == 'C' ? dbits(i % 3 ? i * 0.25 : -0.0) : 3;
		frag_event(&f, p, 1 + (uint32_t)(i % 2), i % 3 ? i % 5 : 1ull << 40,
			   ts, arg);
	}
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "apbatch");
	ptw_test_write_file_or_fail(path, f.p, f.len);
	struct seen plain = {0}, mem = {.x = 7}, fd = {.x = 11};
	struct ptw_error err = {0};
	struct ptw_appletrace_names *n1 = ptw_appletrace_names_create();
	struct ptw_appletrace_names *n2 = ptw_appletrace_names_create();
	struct ptw_appletrace_names *n3 = ptw_appletrace_names_create();
	cr_assert_eq(ptw_appletrace_bin_read_mem(f.p, f.len, "m", n1, seen_event,
						 &plain, NULL, &err), 0);
	cr_assert_eq(ptw_appletrace_bin_read_mem_batch(f.p, f.len, "m", n2,
						       seen_event, seen_batch,
						       &mem, NULL, &err), 0);
	int h = open(path, O_RDONLY);
	cr_assert_geq(h, 0);
	cr_assert_eq(ptw_appletrace_bin_read_fd_batch(h, "f", n3, seen_event,
						      seen_batch, &fd, NULL,
						      &err), 0, "%s", err.msg);
	close(h);
	unlink(path);
	cr_assert_eq(plain.n, nev);
	const struct seen *ways[2] = {&mem, &fd};
	for (int w = 0; w < 2; w++) {
		const struct seen *s = ways[w];
		cr_assert_eq(s->n, nev);
		for (size_t i = 0; i < nev; i++)
			cr_assert(memcmp(&s->ev[i], &plain.ev[i],
					 sizeof(plain.ev[i])) == 0,
				  "way %d: event %zu (%c) differs", w, i,
				  plain.ev[i].ph);
		/* batches took most events, and left some */
		cr_expect_gt(s->in_batches, nev / 4);
		cr_expect_lt(s->in_batches, nev);
	}
	free(plain.ev);
	free(mem.ev);
	free(fd.ev);
	ptw_appletrace_names_destroy(n1);
	ptw_appletrace_names_destroy(n2);
	ptw_appletrace_names_destroy(n3);
	free(f.p);
}

/* An error stops a batched read as it stops a plain one: the failing
 * batch's code comes back, and an undefined name is still reported with
 * its record's offset. */
static int failing_batch(void *ctx, const struct ptw_cv_batch *b,
			 size_t *taken, struct ptw_error *err)
{
	uint64_t *calls = ctx;
	(*calls)++;
	*taken = b->n > 2 ? 2 : b->n;
	return ptw_error_set(err, PTW_ERR_IO, 0, "batch failed");
}

static int no_event(void *ctx, const struct ptw_cv_event *ev,
		    struct ptw_error *err)
{
	(void)ctx;
	(void)ev;
	(void)err;
	return 0;
}

Test(appletrace_bin, batch_errors_stop_the_read)
{
	struct frag f;
	frag_header(&f, 42);
	frag_def(&f, 1, "one");
	for (int i = 0; i < 10; i++)
		frag_event(&f, 'B', 1, 5, (uint64_t)i, 0);
	struct ptw_error err = {0};
	uint64_t calls = 0;
	struct ptw_appletrace_names *n = ptw_appletrace_names_create();
	cr_assert_eq(ptw_appletrace_bin_read_mem_batch(f.p, f.len, "m", n,
						       no_event, failing_batch,
						       &calls, NULL, &err),
		     PTW_ERR_IO);
	cr_expect_eq(calls, 1u);
	cr_expect_str_eq(err.msg, "batch failed");

	size_t bad_at = f.len;
	frag_event(&f, 'E', 9, 5, 20, 0); /* name 9 undefined */
	enum ptw_appletrace_kind kind;
	struct seen s = {.x = 3};
	cr_assert_eq(ptw_appletrace_bin_read_mem_batch(f.p, f.len, "m", n,
						       seen_event, seen_batch,
						       &s, &kind, &err),
		     PTW_ERR_FORMAT);
	cr_expect_eq(kind, PTW_APPLETRACE_UNDEFINED_NAME_ID);
	cr_expect_eq(err.offset, bad_at, "offset %llu",
		     (unsigned long long)err.offset);
	cr_expect_eq(s.n, 10u, "the events before it");
	free(s.ev);
	ptw_appletrace_names_destroy(n);
	free(f.p);
}
