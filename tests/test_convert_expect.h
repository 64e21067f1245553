/* test_convert_expect.h - converts a Chrome JSON text and compares the
 * rows its trace gives (test_convert_rows.h) with the expected ones, for
 * the fidelity tests that turn traces into rows their own way.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TEST_CONVERT_EXPECT_H
#define PTW_TEST_CONVERT_EXPECT_H

#include <unistd.h>

#include "support/ptw_test.h"
#include "test_convert_json.h"
#include "test_convert_rows.h"

/* Converts 'json' (file named after 'tag'), turns the trace into rows
 * with rows_of() and expects exactly the n rows 'want'; the emitter's
 * stats into *st if st is not NULL. */
static inline void ptw_test_expect_json_rows_window(
	const char *tag, const char *json, size_t window, const char *const *want,
	size_t n, struct ptw_emit_stats *st,
	void (*rows_of)(const char *path, struct rows *))
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), tag);
	ptw_test_convert_json_window(out, json, 0, window, st);
	struct rows got = {0}, exp = {0};
	rows_of(out, &got);
	for (size_t i = 0; i < n; i++)
		rows_add(&exp, want[i]);
	cr_expect(rows_equal(tag, &exp, &got), "%s: rows differ (see stderr)",
		  tag);
	rows_free(&got);
	rows_free(&exp);
	unlink(out);
}

/* The same without a reorder window. */
static inline void ptw_test_expect_json_rows(
	const char *tag, const char *json, const char *const *want, size_t n,
	struct ptw_emit_stats *st, void (*rows_of)(const char *path, struct rows *))
{
	ptw_test_expect_json_rows_window(tag, json, 0, want, n, st, rows_of);
}

#endif /* PTW_TEST_CONVERT_EXPECT_H */
