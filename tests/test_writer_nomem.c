/* test_writer_nomem.c - every allocation the writer makes may fail: open,
 * tracks, sequences and events then report PTW_ERR_NOMEM (sticky) or
 * NULL, never crash, and the writer still closes. malloc/calloc/realloc
 * are interposed with a failure budget (plain builds only: the sanitizers
 * own the allocator).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/writer.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PTW_NO_INTERPOSE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PTW_NO_INTERPOSE 1
#endif
#endif

#ifndef PTW_NO_INTERPOSE
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);

static int armed;
static long budget;

static int take(void)
{
	return armed && budget-- <= 0;
}

void *malloc(size_t n)
{
	return take() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	return take() ? NULL : __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	return take() ? NULL : __libc_realloc(p, n);
}

/* One scenario with allocations everywhere: open (deflate), tracks, an
 * extra sequence, many distinct strings (table growth), a big packet
 * (buffer growth). Returns 1 if it ran to a clean close. */
static int scenario(const char *path, long fail_after, int *saw_nomem)
{
	struct ptw_writer_options o = {.compress = 1, .max_interned = 5000,
				       .flush_bytes = 4096};
	struct ptw_error err;
	budget = fail_after;
	armed = 1;
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	if (!w) {
		armed = 0;
		cr_assert_eq(err.code, PTW_ERR_NOMEM, "open: %s", err.msg);
		*saw_nomem = 1;
		return 0;
	}
	int rc = 0;
	uint64_t tr = ptw_writer_add_thread_track(w, 1, 2, "t");
	struct ptw_seq *s = tr ? ptw_writer_add_seq(w, tr) : NULL;
	static char big[60000];
	memset(big, 'x', sizeof(big) - 1);
	char name[32];
	for (int i = 0; s && i < 600 && rc == 0; i++) {
		snprintf(name, sizeof(name), "event-name-%d", i);
		struct ptw_arg a = {.name = name, .type = PTW_ARG_TYPE_STRING,
				    .v.s = i == 300 ? big : name};
		struct ptw_event ev = {.ts = (uint64_t)i * 10, .name = name,
				       .args = &a, .n_args = 1};
		rc = ptw_seq_instant(s, &ev);
	}
	const struct ptw_error *we = ptw_writer_error(w);
	int failed = !tr || !s || rc != 0;
	if (failed)
		cr_assert(rc == 0 || rc == PTW_ERR_NOMEM, "rc %d", rc);
	int cr = ptw_writer_close(w, &err);
	(void)we;
	armed = 0;
	if (failed || cr) {
		cr_assert_eq(cr, PTW_ERR_NOMEM, "close %d: %s", cr, err.msg);
		*saw_nomem = 1;
		return 0;
	}
	return 1;
}
#endif

Test(writer_nomem, every_failed_allocation_is_reported_not_fatal)
{
#ifdef PTW_NO_INTERPOSE
	cr_skip_test("allocator owned by the sanitizer");
#else
	char path[] = "/tmp/ptw_test_nomem_XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	int completed = 0;
	long k;
	for (k = 0; k < 5000 && !completed; k++) {
		int saw = 0;
		completed = scenario(path, k, &saw);
		cr_assert(completed || saw);
	}
	cr_assert(completed, "scenario never completed");
	cr_assert_gt(k, 10, "the scenario allocates more than a few times");
	unlink(path);
#endif
}
