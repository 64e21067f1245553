/* tracer_run.h - one traced session as the tracer tests of issue 36 run
 * it: through the backend's fast or general path, streamed to a file or
 * kept by the flight recorder and written by ptw_snapshot().
 * SPDX-License-Identifier: Apache-2.0
 *
 * Header-only (static inline): only the tracer tests that include it link
 * the tracer's code through it. */
#ifndef PTW_TEST_TRACER_RUN_H
#define PTW_TEST_TRACER_RUN_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "ptw_trace.pb-c.h"
#include "ptw_test.h"
#include "tp_shell.h"

/* Starts tracing with cfg (its output and mode set here: a file named
 * after 'tag', or ring mode when 'ring'), runs body(), writes a snapshot
 * in ring mode, stops, checks that nothing was refused (stats.invalid 0)
 * and hands the trace to check(path, arg), which runs while the file is
 * there (it is removed afterwards). Returns the session's stats.events. */
static inline uint64_t ptw_test_traced_session(struct ptw_config cfg,
					       int ring, const char *tag,
					       void (*body)(void),
					       void (*check)(const char *,
							     int),
					       int arg)
{
	char path[256], snap[256];
	ptw_test_tmp_path(path, sizeof(path), tag);
	ptw_test_tmp_path(snap, sizeof(snap), "snap");
	if (ring)
		cfg.mode = PTW_MODE_RING;
	else
		cfg.output_path = path;
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	body();
	if (ring)
		cr_assert_eq(ptw_snapshot(snap), 0);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.invalid, 0);
	check(ring ? snap : path, arg);
	unlink(path);
	unlink(snap);
	return st.events;
}

/* The trace at 'path' decoded by protobuf-c (free it with
 * perfetto__protos__trace__free_unpacked), or the test fails. */
static inline Perfetto__Protos__Trace *ptw_test_unpack_or_fail(const char *path)
{
	size_t n;
	uint8_t *b = ptw_test_read_file_or_fail(path, &n);
	Perfetto__Protos__Trace *t = perfetto__protos__trace__unpack(NULL, n, b);
	free(b);
	cr_assert_not_null(t, "%s: not a trace protobuf-c decodes", path);
	return t;
}

#endif /* PTW_TEST_TRACER_RUN_H */
