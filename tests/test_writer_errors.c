/* test_writer_errors.c - misuse, write failures, statistics and the
 * internal hooks of the writer.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "ptw/writer.h"
#include "test_writer_util.h"
#include "lib/writer/writer_internal.h"

static struct ptw_writer *open_tmp(char **path, const struct ptw_writer_options *o)
{
	*path = tw_tmp_path();
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(*path, o, &err);
	cr_assert_not_null(w, "open: %s", err.msg);
	return w;
}

Test(writer_errors, misuse_returns_invalid_and_writes_nothing)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	uint64_t ctr = ptw_writer_add_counter_track(w, "c", NULL, 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_writer_stats before, after;
	ptw_writer_get_stats(w, &before);

	struct ptw_event ev = {.track = tr, .ts = 1, .name = "n"};
	cr_assert_eq(ptw_seq_slice_begin(NULL, &ev), PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_slice_begin(s, NULL), PTW_ERR_INVALID);
	ev.track = 999;
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	cr_assert_str_neq(ptw_writer_error(w)->msg, "");
	ev.track = 0; /* the sim sequence has no default track */
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	ev.track = tr;
	cr_assert_eq(ptw_seq_slice_end(s, &ev), PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_counter_int(s, tr, 1, 5), PTW_ERR_INVALID);
	ev.track = ctr;
	cr_assert_eq(ptw_seq_slice_begin(s, &ev), PTW_ERR_INVALID);
	ev.track = tr;
	char *huge = malloc(PTW_MAX_STRING_LEN + 2);
	memset(huge, 'a', PTW_MAX_STRING_LEN + 1);
	huge[PTW_MAX_STRING_LEN + 1] = 0;
	ev.name = huge;
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	ev.name = "n";
	ev.category = huge;
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	ev.category = NULL;
	struct ptw_arg args[PTW_MAX_ANNOTATIONS + 1];
	memset(args, 0, sizeof(args));
	for (unsigned i = 0; i <= PTW_MAX_ANNOTATIONS; i++) {
		args[i].name = "a";
		args[i].type = PTW_ARG_TYPE_INT;
	}
	ev.args = args;
	ev.n_args = PTW_MAX_ANNOTATIONS + 1;
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	ev.n_args = 1;
	args[0].type = (enum ptw_arg_type)77;
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	args[0].type = PTW_ARG_TYPE_STRING;
	args[0].v.s = NULL;
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	args[0].type = PTW_ARG_TYPE_STRING;
	args[0].v.s = huge;
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	args[0].name = NULL;
	args[0].type = PTW_ARG_TYPE_INT;
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	ev.n_args = 0;
	ev.n_flow_ids = 1; /* NULL array */
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	ev.n_flow_ids = PTW_MAX_FLOWS + 1;
	uint64_t flows[PTW_MAX_FLOWS + 1] = {0};
	ev.flow_ids = flows;
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	ev.n_flow_ids = 0;
	ev.ts = 10;
	cr_assert_eq(ptw_seq_slice_complete(s, &ev, UINT64_MAX), PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_slice_complete(s, &ev, (uint64_t)INT64_MAX - 5), PTW_ERR_INVALID);
	ev.ts = (uint64_t)INT64_MAX + 1;
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_counter_int(s, ctr, (uint64_t)INT64_MAX + 1, 1), PTW_ERR_INVALID);
	ev.ts = 10;
	/* The same misuse through ptw_seq_simple(). */
	cr_assert_eq(ptw_seq_simple(NULL, PTW_SIMPLE_BEGIN, tr, 1, NULL, "a"),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_END, tr, 1, NULL, NULL),
		     PTW_ERR_INVALID); /* no open slice */
	cr_assert_eq(ptw_seq_simple(s, (enum ptw_simple_type)9, tr, 1, NULL,
				    "a"), PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_BEGIN, ctr, 1, NULL, "a"),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_INSTANT, 999, 1, NULL, "a"),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_INSTANT, 0, 1, NULL, "a"),
		     PTW_ERR_INVALID); /* no default track */
	cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_BEGIN, tr,
				    (uint64_t)INT64_MAX + 1, NULL, "a"),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_INSTANT, tr, 1, NULL, huge),
		     PTW_ERR_INVALID);
	/* Tracks. */
	cr_assert_eq(ptw_writer_add_track(w, huge, 0, -1), 0);
	cr_assert_eq(ptw_writer_add_track(w, "y", 12345, -1), 0);
	cr_assert_eq(ptw_writer_add_track(w, "y", ctr, -1), 0);
	cr_assert_eq(ptw_writer_add_counter_track(w, huge, NULL, 0, -1), 0);
	cr_assert_eq(ptw_writer_add_process_track(w, 1, huge), 0);
	cr_assert_eq(ptw_writer_rename_track(w, tr, "z"), PTW_ERR_INVALID);
	cr_assert_eq(ptw_writer_rename_track(w, 4242, "z"), PTW_ERR_INVALID);
	cr_assert_null(ptw_writer_add_seq(w, ctr));
	cr_assert_null(ptw_writer_add_seq(w, 4242));
	free(huge);

	ptw_writer_get_stats(w, &after);
	cr_assert_eq(after.packets, before.packets);
	cr_assert_eq(after.events, 0);
	/* INVALID is not sticky: the writer still works. */
	ev.n_args = 0;
	cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0);
	cr_assert_eq(err.code, 0);
	struct tw_trace t;
	cr_assert_eq(tw_decode_file(&t, path), 0, "%s", t.err);
	cr_assert_eq(t.n_ev, 1);
	tw_trace_free(&t);
	unlink(path);
	free(path);
}

Test(writer_errors, null_and_destroyed_objects)
{
	cr_assert_eq(ptw_writer_close(NULL, NULL), 0);
	cr_assert_eq(ptw_writer_flush(NULL), PTW_ERR_INVALID);
	cr_assert_null(ptw_writer_sim_seq(NULL));
	cr_assert_null(ptw_writer_add_seq(NULL, 0));
	cr_assert_eq(ptw_writer_add_track(NULL, "x", 0, -1), 0);
	cr_assert_eq(ptw_writer_error(NULL)->code, PTW_ERR_INVALID);
	ptw_seq_destroy(NULL);
	ptw_seq_mark_dropped(NULL, 3);
	cr_assert_eq(ptw_seq_counter_int(NULL, 1, 1, 1), PTW_ERR_INVALID);
	struct ptw_error err;
	cr_assert_null(ptw_writer_open(NULL, NULL, &err));
	cr_assert_eq(err.code, PTW_ERR_INVALID);
	cr_assert_null(ptw_writer_open("/nonexistent-dir/x.pftrace", NULL, &err));
	cr_assert_eq(err.code, PTW_ERR_IO);
	cr_assert_eq(err.sys_errno, ENOENT);
	cr_assert_null(ptw_writer_open_fd(-1, NULL, &err));
	struct ptw_writer_options bad = {.compress = 1, .compress_level = 12};
	cr_assert_null(ptw_writer_open("/tmp/ptw_never", &bad, &err));
	cr_assert_eq(err.code, PTW_ERR_INVALID);

	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_add_seq(w, tr);
	struct ptw_event ev = {.ts = 1, .name = "n"};
	cr_assert_eq(ptw_seq_slice_begin(s, &ev), 0);
	ptw_seq_destroy(s);
	cr_assert_eq(ptw_seq_slice_end(s, &ev), PTW_ERR_STATE);
	ptw_seq_destroy(s); /* twice: no-op */
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	unlink(path);
	free(path);
}

Test(writer_errors, dev_full_reports_enospc_and_close_returns_it)
{
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open("/dev/full", NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_event ev = {.track = tr, .ts = 1, .name = "n"};
	cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	cr_assert_eq(ptw_writer_flush(w), PTW_ERR_IO);
	cr_assert_eq(ptw_writer_error(w)->code, PTW_ERR_IO);
	cr_assert_eq(ptw_writer_error(w)->sys_errno, ENOSPC);
	/* Sticky: later calls fail fast and nothing is counted as written. */
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_IO);
	cr_assert_eq(ptw_writer_add_track(w, "y", 0, -1), 0);
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_eq(st.bytes_written, 0);
	cr_assert_eq(ptw_writer_close(w, &err), PTW_ERR_IO);
	cr_assert_eq(err.code, PTW_ERR_IO);
	cr_assert_eq(err.sys_errno, ENOSPC);
	cr_assert(strstr(err.msg, "No space") != NULL, "%s", err.msg);
}

Test(writer_errors, stats_count_what_was_written)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_eq(st.first_output_ns, 0);
	struct ptw_arg a = {.name = "k", .type = PTW_ARG_TYPE_STRING, .v.s = "v"};
	struct ptw_event ev = {.track = tr, .ts = 1, .name = "n", .category = "c",
			       .args = &a, .n_args = 1};
	cr_assert_eq(ptw_seq_slice_complete(s, &ev, 5), 0);
	cr_assert_eq(ptw_seq_counter_int(s, ptw_writer_add_counter_track(w, "c", NULL, 0, -1),
					 3, 1), 0);
	ptw_writer_get_stats(w, &st);
	cr_assert_eq(st.events, 3);
	/* descriptor x, first packet, 2 slice packets, descriptor c, counter */
	cr_assert_eq(st.packets, 6);
	cr_assert_eq(st.checkpoints, 1);
	/* n, c, k; the value "v", used once, is written inline */
	cr_assert_eq(st.interned_strings, 3);
	cr_assert_eq(st.bytes_written, 0);
	cr_assert_eq(ptw_writer_flush(w), 0);
	ptw_writer_get_stats(w, &st);
	cr_assert_gt(st.first_output_ns, 0);
	uint64_t written = st.bytes_written;
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	struct stat sb;
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_eq((uint64_t)sb.st_size, written);
	cr_assert_gt(ptw_writer_now_ns(NULL) + 1, 0);
	unlink(path);
	free(path);
}

static int hook_calls;
static int hook_close(void *ctx)
{
	struct ptw_writer *w = ctx;
	hook_calls++;
	/* The hook may still emit events before the final flush. */
	struct ptw_seq *s = ptw_i_writer_add_clock_seq(w, 0);
	cr_assert_not_null(s);
	ptw_i_writer_note_clock_peak(w, 3, 100);
	return 0;
}
static void hook_free(void *ctx)
{
	(void)ctx;
	hook_calls += 10;
}

Test(writer_errors, internal_hooks_mode_and_close_hook)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	cr_assert_eq(ptw_i_writer_set_mode(w, PTW_I_MODE_CLOCK), 0);
	cr_assert_eq(ptw_i_writer_set_mode(w, PTW_I_MODE_CLOCK), 0);
	cr_assert_eq(ptw_i_writer_set_mode(w, PTW_I_MODE_HOST), PTW_ERR_INVALID);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	/* Host events are refused in a clock-mode writer... */
	struct ptw_event ev = {.track = tr, .ts = 1, .name = "n"};
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), PTW_ERR_INVALID);
	/* ...clock sequences are not. */
	struct ptw_seq *cs = ptw_i_writer_add_clock_seq(w, tr);
	cr_assert_not_null(cs);
	ev.track = 0;
	cr_assert_eq(ptw_seq_instant(cs, &ev), 0);
	cr_assert_eq(ptw_i_writer_set_close_hook(w, hook_close, hook_free, w), 0);
	cr_assert_eq(ptw_i_writer_set_close_hook(w, hook_close, hook_free, w),
		     PTW_ERR_INVALID);
	ptw_i_writer_note_clock_peak(w, 7, 50);
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_eq(st.clock_peak_records, 7);
	cr_assert_eq(st.clock_peak_bytes, 50);
	cr_assert_eq(ptw_i_writer_fail(w, PTW_ERR_FORMAT, 0, "bad %d", 5), PTW_ERR_FORMAT);
	cr_assert_str_eq(ptw_writer_error(w)->msg, "bad 5");
	hook_calls = 0;
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	cr_assert_eq(hook_calls, 11);
	struct tw_trace t;
	cr_assert_eq(tw_decode_file(&t, path), 0, "%s", t.err);
	cr_assert_eq(t.n_ev, 1);
	tw_trace_free(&t);
	unlink(path);
	free(path);
}

Test(writer_errors, host_mode_refuses_clock_mode)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_event ev = {.track = tr, .ts = 1, .name = "n"};
	cr_assert_eq(ptw_seq_instant(ptw_writer_wall_seq(w), &ev), 0);
	cr_assert_eq(ptw_i_writer_set_mode(w, PTW_I_MODE_CLOCK), PTW_ERR_INVALID);
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	unlink(path);
	free(path);
}
