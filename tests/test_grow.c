/* test_grow.c - the growable-array helper (lib/util/grow.h): it grows by
 * doubling, keeps the contents, refuses sizes that overflow size_t without
 * calling realloc, and leaves the array intact when growth fails.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* grow.h is inline: route its realloc through a counter that can fail. */
static int reallocs;
static int fail_next;
static void *test_realloc(void *p, size_t n)
{
	reallocs++;
	if (fail_next) {
		fail_next = 0;
		return NULL;
	}
	return realloc(p, n);
}
#define realloc test_realloc
#include "lib/util/grow.h"
#undef realloc

Test(grow, cap_doubles_with_a_minimum_and_covers_need)
{
	cr_assert_eq(ptw_grow_cap(0, 1, 16, 4), 16);
	cr_assert_eq(ptw_grow_cap(16, 17, 16, 4), 32);
	cr_assert_eq(ptw_grow_cap(16, 100, 16, 4), 100);
	cr_assert_eq(ptw_grow_cap(0, 0, 0, 4), 1);
	/* doubling past the limit stops at the largest array that fits */
	cr_assert_eq(ptw_grow_cap(SIZE_MAX / 8 - 1, SIZE_MAX / 8, 0, 8),
		     SIZE_MAX / 8);
	cr_assert_eq(ptw_grow_cap(SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 2, 0, 1),
		     SIZE_MAX);
}

Test(grow, cap_is_zero_when_need_times_elem_overflows)
{
	cr_assert_eq(ptw_grow_cap(0, SIZE_MAX / 8 + 1, 16, 8), 0);
	cr_assert_eq(ptw_grow_cap(0, SIZE_MAX, 0, 2), 0);
	cr_assert_eq(ptw_grow_cap(0, 1, 0, 0), 0);
}

Test(grow, grows_and_keeps_contents)
{
	uint32_t *v = NULL;
	size_t cap = 0;
	for (uint32_t i = 0; i < 1000; i++) {
		void *p = ptw_grow(v, &cap, (size_t)i + 1, 8, sizeof(*v));
		cr_assert_not_null(p);
		v = p;
		cr_assert_geq(cap, (size_t)i + 1);
		v[i] = i * 7u;
	}
	for (uint32_t i = 0; i < 1000; i++)
		cr_assert_eq(v[i], i * 7u);
	cr_assert_eq(cap, 1024); /* 8, 16, ..., 1024: doubling */
	free(v);
}

Test(grow, does_nothing_while_there_is_room)
{
	size_t cap = 0;
	char *v = ptw_grow(NULL, &cap, 1, 64, 1);
	cr_assert_not_null(v);
	cr_assert_eq(cap, 64);
	reallocs = 0;
	cr_assert_eq(ptw_grow(v, &cap, 64, 64, 1), v);
	cr_assert_eq(reallocs, 0);
	cr_assert_eq(cap, 64);
	free(v);
}

Test(grow, refuses_overflow_without_calling_realloc)
{
	size_t cap = 4;
	uint64_t *v = malloc(cap * sizeof(*v));
	cr_assert_not_null(v);
	v[3] = 42;
	reallocs = 0;
	cr_assert_null(ptw_grow(v, &cap, SIZE_MAX / 8 + 1, 0, 8));
	cr_assert_null(ptw_grow(v, &cap, SIZE_MAX, 0, 8));
	cr_assert_null(ptw_realloc_array(v, SIZE_MAX / 8 + 1, 8));
	cr_assert_null(ptw_realloc_array(v, 3, SIZE_MAX));
	cr_assert_null(ptw_realloc_array(v, 0, 8)); /* would free v */
	cr_assert_eq(reallocs, 0);
	cr_assert_eq(cap, 4);
	cr_assert_eq(v[3], 42); /* still ours, still valid */
	free(v);
}

Test(grow, failed_realloc_leaves_array_and_cap_intact)
{
	size_t cap = 0;
	int *v = ptw_grow(NULL, &cap, 4, 4, sizeof(*v));
	cr_assert_not_null(v);
	for (int i = 0; i < 4; i++)
		v[i] = i + 1;
	fail_next = 1;
	reallocs = 0;
	cr_assert_null(ptw_grow(v, &cap, 5, 4, sizeof(*v)));
	cr_assert_eq(reallocs, 1);
	cr_assert_eq(cap, 4);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(v[i], i + 1);
	/* and the next attempt succeeds with the contents */
	int *w = ptw_grow(v, &cap, 5, 4, sizeof(*v));
	cr_assert_not_null(w);
	cr_assert_eq(cap, 8);
	cr_assert_eq(w[3], 4);
	free(w);
}

Test(grow, grow_by_appends_and_refuses_a_length_that_overflows)
{
	size_t cap = 0, len = 0;
	char *b = ptw_grow_by(NULL, &cap, len, 5, 16, 1);
	cr_assert_not_null(b);
	cr_assert_eq(cap, 16);
	memcpy(b, "hello", 5);
	len = 5;
	char *c = ptw_grow_by(b, &cap, len, 100, 16, 1);
	cr_assert_not_null(c);
	cr_assert_eq(cap, 105);
	cr_assert_eq(memcmp(c, "hello", 5), 0);
	reallocs = 0;
	cr_assert_null(ptw_grow_by(c, &cap, len, SIZE_MAX - 4, 16, 1));
	cr_assert_eq(reallocs, 0);
	cr_assert_eq(cap, 105);
	free(c);
}

Test(grow, realloc_array_multiplies_checked)
{
	reallocs = 0;
	short *v = ptw_realloc_array(NULL, 10, sizeof(short));
	cr_assert_not_null(v);
	cr_assert_eq(reallocs, 1);
	v[9] = 9;
	free(v);
}
