/* test_writer_finish.c - ptw_writer_finish: the trace is complete, later
 * writes are refused with PTW_ERR_STATE, the handle still answers.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "reader/trace_read.h"

static off_t file_size(const char *path)
{
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	return st.st_size;
}

Test(writer_finish, writes_after_finish_are_refused_and_change_nothing)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "finish");
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t thr = ptw_writer_add_thread_track(w, 10, 11, "main");
	uint64_t ctr = ptw_writer_add_counter_track(w, "depth", NULL, 0, -1);
	struct ptw_seq *s = ptw_writer_add_seq(w, thr);
	cr_assert_not_null(s);
	struct ptw_event ev = {.ts = 100, .name = "before"};
	cr_assert_eq(ptw_seq_slice_begin(s, &ev), 0);
	ev.ts = 200;
	cr_assert_eq(ptw_seq_slice_end(s, &ev), 0);

	cr_assert_eq(ptw_writer_finish(w, &err), 0, "%s", err.msg);
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	off_t size = file_size(path);
	cr_assert_eq((uint64_t)size, st.bytes_written);
	cr_assert_eq(st.events, 2);

	/* Every writing call is refused; nothing reaches the file. */
	ev.ts = 300;
	ev.name = "after";
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_STATE);
	cr_assert_eq(ptw_seq_slice_begin(s, &ev), PTW_ERR_STATE);
	cr_assert_eq(ptw_seq_counter_int(s, ctr, 300, 1), PTW_ERR_STATE);
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), PTW_ERR_STATE);
	cr_assert_eq(ptw_writer_add_track(w, "late", 0, -1), 0);
	cr_assert_null(ptw_writer_add_seq(w, thr));
	cr_assert_eq(ptw_writer_flush(w), PTW_ERR_STATE);
	/* A second finish repeats the result; close frees and reports it. */
	cr_assert_eq(ptw_writer_finish(w, &err), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	cr_assert_eq(file_size(path), size);

	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	cr_assert_not_null(ptw_test_find_event(t, 0, "before", 0));
	cr_assert_null(ptw_test_find_event(t, 0, "after", 0));
	size_t n;
	ptw_trace_events(t, &n);
	cr_assert_eq(n, 2);
	ptw_trace_free(t);
	unlink(path);
}

Test(writer_finish, a_write_error_is_what_finish_and_close_report)
{
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open("/dev/full", NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t thr = ptw_writer_add_thread_track(w, 10, 11, "main");
	struct ptw_event ev = {.track = thr, .ts = 5, .name = "x"};
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), 0);
	cr_assert_eq(ptw_writer_finish(w, &err), PTW_ERR_IO);
	cr_assert_neq(err.sys_errno, 0);
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), PTW_ERR_IO);
	cr_assert_eq(ptw_writer_close(w, &err), PTW_ERR_IO);
	cr_assert_neq(strstr(err.msg, "No space"), NULL, "%s", err.msg);
}

Test(writer_finish, null_writer_is_invalid)
{
	struct ptw_error err;
	cr_assert_eq(ptw_writer_finish(NULL, &err), PTW_ERR_INVALID);
	cr_assert_eq(err.code, PTW_ERR_INVALID);
}
