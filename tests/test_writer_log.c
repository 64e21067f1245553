/* test_writer_log.c - source locations on events and log messages
 * (struct ptw_source_location, ptw_seq_log): the interned entries as
 * protobuf-c decodes them, and what trace_processor makes of them (slice
 * args source.*, android_logs).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "test_writer_util.h"

static Perfetto__Protos__Trace *unpack(const char *path)
{
	size_t n;
	uint8_t *b = tw_read_file(path, &n);
	cr_assert_not_null(b);
	Perfetto__Protos__Trace *t = perfetto__protos__trace__unpack(NULL, n, b);
	free(b);
	cr_assert_not_null(t);
	return t;
}

static const struct ptw_source_location here = {"src/app.c", "load", 42};
static const struct ptw_source_location there = {"src/io.c", "read_all",
						  7};

/* Two BEGINs from one static location and an INSTANT from another: one
 * interned entry each, the second use only its iid. */
Test(writer_log, source_locations_are_interned_once_per_sequence)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "srcloc");
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t t = ptw_writer_add_thread_track(w, 10, 11, "main");
	struct ptw_seq *s = ptw_writer_add_seq(w, t);
	struct ptw_event ev = {.ts = 100, .category = "c", .name = "load",
			       .flags = PTW_EV_STATIC_STRINGS,
			       .source = &here};
	cr_assert_eq(ptw_seq_slice_begin(s, &ev), 0);
	struct ptw_event end = {.ts = 200};
	cr_assert_eq(ptw_seq_slice_end(s, &end), 0);
	ev.ts = 300;
	cr_assert_eq(ptw_seq_slice_begin(s, &ev), 0);
	end.ts = 400;
	cr_assert_eq(ptw_seq_slice_end(s, &end), 0);
	/* the same location again, not static: found by content */
	struct ptw_source_location copy = here;
	struct ptw_event in = {.ts = 500, .name = "read", .source = &there};
	cr_assert_eq(ptw_seq_instant(s, &in), 0);
	in.ts = 600;
	in.source = &copy;
	cr_assert_eq(ptw_seq_instant(s, &in), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	Perfetto__Protos__Trace *tr = unpack(path);
	size_t n_locs = 0, n_iid = 0;
	uint64_t iids[4] = {0};
	for (size_t i = 0; i < tr->n_packet; i++) {
		const Perfetto__Protos__TracePacket *pk = tr->packet[i];
		if (pk->interned_data)
			for (size_t j = 0; j < pk->interned_data->n_source_locations; j++) {
				const Perfetto__Protos__SourceLocation *l =
					pk->interned_data->source_locations[j];
				n_locs++;
				if (l->iid == 1) {
					cr_assert_str_eq(l->file_name, "src/app.c");
					cr_assert_str_eq(l->function_name, "load");
					cr_assert_eq(l->line_number, 42);
				} else {
					cr_assert_eq(l->iid, 2);
					cr_assert_str_eq(l->file_name, "src/io.c");
					cr_assert_str_eq(l->function_name, "read_all");
					cr_assert_eq(l->line_number, 7);
				}
			}
		if (pk->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT)
			continue;
		const Perfetto__Protos__TrackEvent *te = pk->track_event;
		if (te->source_location_field_case ==
		    PERFETTO__PROTOS__TRACK_EVENT__SOURCE_LOCATION_FIELD_SOURCE_LOCATION_IID) {
			cr_assert_lt(n_iid, 4);
			iids[n_iid++] = te->source_location_iid;
		} else {
			cr_assert_eq(te->type,
				     PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END);
		}
	}
	cr_assert_eq(n_locs, 2);
	cr_assert_eq(n_iid, 4);
	cr_assert(iids[0] == 1 && iids[1] == 1 && iids[2] == 2 && iids[3] == 1);
	perfetto__protos__trace__free_unpacked(tr, NULL);

	if (ptw_test_tp_shell()) {
		ptw_test_tp_expect_rows(
			path,
			"select s.ts, extract_arg(s.arg_set_id, 'source.file_name'), "
			"extract_arg(s.arg_set_id, 'source.function_name'), "
			"extract_arg(s.arg_set_id, 'source.line_number') "
			"from slice s order by s.ts",
			"100,\"src/app.c\",\"load\",42\n"
			"300,\"src/app.c\",\"load\",42\n"
			"500,\"src/io.c\",\"read_all\",7\n"
			"600,\"src/app.c\",\"load\",42\n");
		ptw_test_tp_expect_no_error_stats(path);
	}
	unlink(path);
}

/* Log lines: android_logs has ts, thread, prio, tag file:line, msg. */
Test(writer_log, log_messages_reach_android_logs)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "logmsg");
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t t = ptw_writer_add_thread_track(w, 10, 11, "main");
	uint64_t named = ptw_writer_add_track(w, "queue", 0, -1);
	struct ptw_seq *s = ptw_writer_add_seq(w, t);
	struct ptw_event ev = {.ts = 1000, .category = "log",
			       .name = "LogMessage", .source = &here};
	cr_assert_eq(ptw_seq_log(s, &ev, PTW_LOG_PRIO_WARN, "disk 93% full"), 0);
	ev.ts = 2000;
	ev.source = NULL;
	cr_assert_eq(ptw_seq_log(s, &ev, PTW_LOG_PRIO_UNSPECIFIED, "no tag"), 0);
	ev.ts = 3000;
	ev.source = &there;
	cr_assert_eq(ptw_seq_log(s, &ev, PTW_LOG_PRIO_ERROR, "disk 93% full"), 0);
	/* misuse: not a thread track, unknown prio, NULL message */
	ev.track = named;
	cr_assert_eq(ptw_seq_log(s, &ev, PTW_LOG_PRIO_INFO, "x"), PTW_ERR_INVALID);
	ev.track = 0;
	cr_assert_eq(ptw_seq_log(s, &ev, 9, "x"), PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_log(s, &ev, PTW_LOG_PRIO_INFO, NULL), PTW_ERR_INVALID);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	Perfetto__Protos__Trace *tr = unpack(path);
	size_t n_bodies = 0, n_logs = 0;
	for (size_t i = 0; i < tr->n_packet; i++) {
		const Perfetto__Protos__TracePacket *pk = tr->packet[i];
		if (pk->interned_data)
			n_bodies += pk->interned_data->n_log_message_body;
		if (pk->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT ||
		    !pk->track_event->log_message)
			continue;
		const Perfetto__Protos__TrackEvent *te = pk->track_event;
		const Perfetto__Protos__LogMessage *lm = te->log_message;
		cr_assert_eq(te->type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT);
		cr_assert(lm->has_body_iid);
		n_logs++;
		if (n_logs == 1)
			cr_assert(lm->has_prio && lm->prio == 5 &&
				  lm->has_source_location_iid);
		if (n_logs == 2)
			cr_assert(!lm->has_prio && !lm->has_source_location_iid);
		if (n_logs == 3)
			cr_assert_eq(lm->body_iid, 1); /* the first body again */
	}
	cr_assert_eq(n_logs, 3);
	cr_assert_eq(n_bodies, 2);
	perfetto__protos__trace__free_unpacked(tr, NULL);

	if (ptw_test_tp_shell()) {
		ptw_test_tp_expect_rows(
			path,
			"select l.ts, t.tid, l.prio, l.tag, l.msg from android_logs l "
			"join thread t using (utid) order by l.ts",
			"1000,11,5,\"src/app.c:42\",\"disk 93% full\"\n"
			"2000,11,4,\"[NULL]\",\"no tag\"\n"
			"3000,11,6,\"src/io.c:7\",\"disk 93% full\"\n");
		ptw_test_tp_expect_no_error_stats(path);
	}
	unlink(path);
}

/* A checkpoint forgets every iid: the entries are written again after it
 * and trace_processor still resolves every one. */
Test(writer_log, entries_are_written_again_after_a_checkpoint)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "logcp");
	struct ptw_error err;
	struct ptw_writer_options o = {.checkpoint_packets = 4};
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t t = ptw_writer_add_thread_track(w, 10, 11, "main");
	struct ptw_seq *s = ptw_writer_add_seq(w, t);
	for (int i = 0; i < 20; i++) {
		struct ptw_event ev = {.ts = 100u + 10u * (unsigned)i,
				       .name = "tick",
				       .flags = PTW_EV_STATIC_STRINGS,
				       .source = &here};
		cr_assert_eq(ptw_seq_log(s, &ev, PTW_LOG_PRIO_INFO, "same"), 0);
	}
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	if (ptw_test_tp_shell()) {
		ptw_test_tp_expect_rows(
			path,
			"select count(*), count(distinct tag), min(msg) from "
			"android_logs where tag = 'src/app.c:42'",
			"20,1,\"same\"\n");
		ptw_test_tp_expect_rows(
			path,
			"select count(*) from slice where "
			"extract_arg(arg_set_id, 'source.line_number') = 42",
			"20\n");
		ptw_test_tp_expect_no_error_stats(path);
	}
	unlink(path);
}
