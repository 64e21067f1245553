/* test_convert_json.h - converts a Chrome JSON text with the library, as
 * ptw-convert does, for the converter's test suites.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TEST_CONVERT_JSON_H
#define PTW_TEST_CONVERT_JSON_H

#include <criterion/criterion.h>
#include <string.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/chrome_json/cv_sort.h"
#include "converters/emit/emit.h"
#include "ptw/writer.h"

/* Converts 'json' into the trace file 'out' with writer options 'o' (NULL:
 * defaults; the emitter's general path only if asked; through a reorder
 * window of 'window' events, cv_sort.h, unless 0); the emitter's stats
 * into *st if st is not NULL. */
static inline void ptw_test_convert_json_with(const char *out, const char *json,
					      int general_path_only,
					      size_t window,
					      struct ptw_emit_stats *st,
					      const struct ptw_writer_options *o)
{
	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(out, o, &err);
	cr_assert(w, "%s", err.msg);
	struct ptw_emit *em = ptw_emit_create(w, &err);
	cr_assert(em, "%s", err.msg);
	struct ptw_emit_input in = {.mode = PTW_EMIT_CHROME,
				    .general_path_only = general_path_only};
	cr_assert_eq(ptw_emit_begin_input(em, &in, &err), 0, "%s", err.msg);
	struct ptw_cv_sort *so = NULL;
	if (window)
		cr_assert(so = ptw_cv_sort_create(window, ptw_emit_event, em,
						  &err));
	cr_assert_eq(ptw_cv_json_read_mem(json, strlen(json), NULL,
					  so ? ptw_cv_sort_event : ptw_emit_event,
					  so ? (void *)so : (void *)em, NULL,
					  &err),
		     0, "%s", err.msg);
	if (so)
		cr_assert_eq(ptw_cv_sort_drain(so, &err), 0, "%s", err.msg);
	ptw_cv_sort_destroy(so);
	cr_assert_eq(ptw_emit_end_input(em, &err), 0, "%s", err.msg);
	cr_assert_eq(ptw_emit_finish(em, &err), 0, "%s", err.msg);
	if (st)
		ptw_emit_get_stats(em, st);
	ptw_emit_destroy(em);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
}

/* The same with default writer options. */
static inline void ptw_test_convert_json_window(const char *out,
						const char *json,
						int general_path_only,
						size_t window,
						struct ptw_emit_stats *st)
{
	ptw_test_convert_json_with(out, json, general_path_only, window, st,
				   NULL);
}

/* The same without a reorder window. */
static inline void ptw_test_convert_json(const char *out, const char *json,
					 int general_path_only,
					 struct ptw_emit_stats *st)
{
	ptw_test_convert_json_with(out, json, general_path_only, 0, st, NULL);
}

#endif /* PTW_TEST_CONVERT_JSON_H */
