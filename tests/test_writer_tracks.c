/* test_writer_tracks.c - track names at the edges (empty and NULL names),
 * and ranks set right after a track is created.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "reader/trace_read.h"

/* The first string the track table stores is empty: it must not copy into
 * a table that has no storage yet (found by the APLTRC01 fuzzer, UBSan). */
Test(writer_tracks, empty_first_track_name_is_written_and_usable)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "emptyname");
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t root = ptw_writer_add_track(w, "", 0, -1);
	cr_assert_neq(root, 0, "%s", ptw_writer_error(w)->msg);
	uint64_t child = ptw_writer_add_track(w, "child", root, -1);
	cr_assert_neq(child, 0);
	struct ptw_event ev = {.track = root, .ts = 10, .name = "on empty"};
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), 0);
	ev.track = child;
	ev.name = "on child";
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	const struct ptw_trace_track *tr = ptw_trace_find_track(t, root);
	cr_assert_not_null(tr);
	cr_assert(tr->name == NULL || tr->name[0] == '\0');
	tr = ptw_trace_find_track(t, child);
	cr_assert_not_null(tr);
	cr_assert_str_eq(tr->name, "child");
	cr_assert_eq(tr->parent_uuid, root);
	const struct ptw_trace_event *e =
		ptw_test_find_event(t, 0, "on empty", 0);
	cr_assert_not_null(e);
	cr_assert_eq(e->track_uuid, root);
	cr_assert_eq(e->ts, 10);
	e = ptw_test_find_event(t, 0, "on child", 0);
	cr_assert_not_null(e);
	cr_assert_eq(e->track_uuid, child);
	ptw_trace_free(t);
	unlink(path);
}

/* Same when no track name at all takes storage before the descriptors are
 * encoded at the flush (the string table is still empty then). */
Test(writer_tracks, only_empty_names_are_encoded_without_string_storage)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "onlyempty");
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t root = ptw_writer_add_track(w, "", 0, -1);
	uint64_t ctr = ptw_writer_add_counter_track(w, "", "", 0, -1);
	cr_assert(root && ctr, "%s", ptw_writer_error(w)->msg);
	struct ptw_event ev = {.track = root, .ts = 10, .name = "x"};
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), 0);
	cr_assert_eq(ptw_seq_counter_int(ptw_writer_sim_seq(w), ctr, 11, 5), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	const struct ptw_trace_event *e = ptw_test_find_event(t, 0, "x", 0);
	cr_assert_not_null(e);
	cr_assert_eq(e->track_uuid, root);
	size_t n;
	const struct ptw_trace_event *evs = ptw_trace_events(t, &n);
	cr_assert_eq(n, 2);
	cr_assert_eq(evs[1].track_uuid, ctr);
	cr_assert_eq(evs[1].counter_int, 5);
	ptw_trace_free(t);
	unlink(path);
}

/* The size bound flushes the descriptors queued before a new track, never
 * the new one: its rank can always be set right after creating it. */
Test(writer_tracks, rank_set_right_after_creation_survives_the_batch_bound)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "rankbound");
	struct ptw_error err;
	struct ptw_writer_options o = {.flush_bytes = 1};
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t p = ptw_writer_add_process_track(w, 10, "p");
	cr_assert_eq(ptw_writer_set_track_rank(w, p, 3), 0);
	uint64_t t = ptw_writer_add_thread_track(w, 10, 11, "t");
	cr_assert_eq(ptw_writer_set_track_rank(w, t, -4), 0);
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_gt(st.bytes_written, 0, "the bound never flushed");
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	struct ptw_trace *tr = ptw_test_load_checked_or_fail(path, 0);
	const struct ptw_trace_track *pt = ptw_trace_find_track(tr, p);
	const struct ptw_trace_track *tt = ptw_trace_find_track(tr, t);
	cr_assert(pt && pt->has_rank && tt && tt->has_rank);
	cr_assert_eq(pt->rank, 3);
	cr_assert_eq(tt->rank, -4);
	ptw_trace_free(tr);
	unlink(path);
}
