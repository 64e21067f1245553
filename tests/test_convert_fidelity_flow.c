/* test_convert_fidelity_flow.c - Chrome JSON flows: the flow rows of the
 * converted trace (decoded with the reader and its trace_processor model)
 * are the rows trace_processor v58.2 makes for the JSON.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Each expected row is derived from trace_processor's JSON import:
 * json_trace_parser.cc (v58.2) cases 's' (line 383: FlowTracker::Begin on
 * the thread track), 't' (397: Step), 'f' (411: End with close_flow =
 * false and bind_enclosing_slice = "bp":"e"), and MaybeAddFlow (560: v2
 * on B, X, b, n: in + out Step, out Begin, in End(close = false)); v1 ids
 * are scoped by (id, cat, name) (flow_tracker.cc 127
 * GetFlowIdForV1Event). flow_tracker.cc: Begin (47, 57) binds to the
 * topmost slice of the track (slice_tracker.cc 342 GetTopmostSliceOnTrack)
 * and ignores an active id (flow_duplicate_id); Step (75) links the id's
 * slice to the new one and moves it there; End (107) links without moving
 * (and erases only if close_flow); both put the earlier slice (by ts)
 * first; an End without bind_enclosing_slice waits on the track
 * (pending_flow_ids_map_, 90) until the next slice is pushed there
 * (ClosePendingEventsOnTrack, 140, called from slice_tracker.cc 497
 * StackPush). A complete slice (X) leaves the JSON stack only when a
 * later slice event comes (slice_tracker.cc 417-434 MaybeCloseStack,
 * called from StartSlice and End), not at its end time.
 *
 * Rows are "flow\t<out ts>\t<out name>\t<in ts>\t<in name>" (ns), compared
 * as multisets; every case runs on the short and on the general path. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "support/ptw_test.h"
#include "test_convert_json.h"
#include "test_convert_rows.h"

/* The flow rows of a converted trace. */
static void flow_rows(const char *path, struct rows *r)
{
	struct ptw_trace *t = ptw_test_load_checked_or_fail(
		path, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	struct rows all = {0};
	rows_from_trace(t, m, &all);
	for (size_t i = 0; i < all.n; i++)
		if (strncmp(all.v[i], "flow\t", 5) == 0)
			rows_add(r, all.v[i]);
	rows_free(&all);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
}

static void expect_flows(const char *tag, const char *json,
			 const char *const *want, size_t n)
{
	for (int general = 0; general < 2; general++) {
		char out[256];
		ptw_test_tmp_path(out, sizeof(out), tag);
		ptw_test_convert_json(out, json, general, NULL);
		struct rows got = {0}, exp = {0};
		flow_rows(out, &got);
		for (size_t i = 0; i < n; i++)
			rows_add(&exp, want[i]);
		if (!n) /* (rows_equal sorts: not on an empty set) */
			cr_expect_eq(got.n, 0, "%s: %zu flow rows, first %s",
				     tag, got.n, got.n ? got.v[0] : "");
		else
			cr_expect(rows_equal(tag, &exp, &got),
				  "%s (%s path): flow rows differ (see stderr)",
				  tag, general ? "general" : "short");
		rows_free(&got);
		rows_free(&exp);
		unlink(out);
	}
}
#define EXPECT_FLOWS(tag, json, want) \
	expect_flows(tag, json, want, sizeof(want) / sizeof(want[0]))
#define NO_FLOWS(tag, json) expect_flows(tag, json, NULL, 0)

#define X(name, tid, ts, dur)                                              \
	"{\"name\":\"" name "\",\"ph\":\"X\",\"pid\":1,\"tid\":" #tid     \
	",\"ts\":" #ts ",\"dur\":" #dur "}"
#define FL(ph, id, tid, ts, extra)                                         \
	"{\"name\":\"f\",\"cat\":\"c\",\"ph\":\"" ph "\",\"id\":" id        \
	",\"pid\":1,\"tid\":" #tid ",\"ts\":" #ts extra "}"
#define BP ",\"bp\":\"e\""

Test(flow, one_start_two_enclosing_ends_both_link_back_to_the_start)
{
	/* 'f' is End(close_flow = false): the id stays at S, so each end
	 * links S to its enclosing slice (flow_tracker.cc 107-121). */
	static const char j[] = "[" X("S", 1, 10, 10) "," FL("s", "1", 1, 12, "")
		"," X("A", 2, 30, 10) "," FL("f", "1", 2, 32, BP)
		"," X("B", 3, 50, 10) "," FL("f", "1", 3, 52, BP) "]";
	static const char *const want[] = {
		"flow\t10000\t\"S\"\t30000\t\"A\"",
		"flow\t10000\t\"S\"\t50000\t\"B\"",
	};
	EXPECT_FLOWS("fl_two_ends", j, want);
}

Test(flow, start_step_ends_chain_and_ends_after_a_step_leave_the_step)
{
	/* s binds S; t links S -> T and moves the id to T (Step, 75-88);
	 * both ends then link T (End does not move it). */
	static const char j[] = "[" X("S", 1, 10, 10) "," FL("s", "1", 1, 11, "")
		"," X("T", 2, 30, 10) "," FL("t", "1", 2, 31, "")
		"," X("U", 3, 50, 10) "," FL("f", "1", 3, 51, BP)
		"," X("V", 4, 70, 10) "," FL("f", "1", 4, 71, BP) "]";
	static const char *const want[] = {
		"flow\t10000\t\"S\"\t30000\t\"T\"",
		"flow\t30000\t\"T\"\t50000\t\"U\"",
		"flow\t30000\t\"T\"\t70000\t\"V\"",
	};
	EXPECT_FLOWS("fl_chain", j, want);
}

Test(flow, end_without_bp_binds_the_next_slice_on_its_thread)
{
	/* f without "bp":"e" waits on the track (End, 94-96) and links the
	 * id's slice to the next slice pushed there (140-152): N, not N2,
	 * and not the slice open when f came (none here). */
	static const char j[] = "[" X("S", 1, 10, 10) "," FL("s", "1", 1, 11, "")
		"," FL("f", "1", 2, 25, "") "," X("N", 2, 30, 10)
		"," X("N2", 2, 50, 10) "]";
	static const char *const want[] = {
		"flow\t10000\t\"S\"\t30000\t\"N\"",
	};
	EXPECT_FLOWS("fl_next", j, want);
}

Test(flow, end_without_bp_inside_a_slice_binds_the_next_one_not_it)
{
	static const char j[] = "[" X("S", 1, 10, 10) "," FL("s", "1", 1, 11, "")
		"," X("P", 2, 20, 100) "," FL("f", "1", 2, 25, "")
		"," X("C", 2, 30, 10) "]";
	static const char *const want[] = {
		"flow\t10000\t\"S\"\t30000\t\"C\"",
	};
	EXPECT_FLOWS("fl_next_inside", j, want);
}

Test(flow, pending_end_of_an_inactive_id_leaves_the_first_slice)
{
	/* ClosePendingEventsOnTrack reads the id's slice with
	 * FlatHashMap::operator[] (flow_tracker.cc 146), which inserts a
	 * value-initialised SliceId (0) for an id never started: the row
	 * leaves slice 0, the first slice of the trace ("first"), and the
	 * id is active there from then on (a later s is a duplicate). */
	static const char j[] = "[" X("first", 9, 1, 1)
		"," FL("f", "7", 2, 25, "") "," X("N", 2, 30, 10)
		"," X("S", 1, 40, 10) "," FL("s", "7", 1, 41, "")
		"," X("D", 3, 60, 10) "," FL("f", "7", 3, 61, BP) "]";
	static const char *const want[] = {
		"flow\t1000\t\"first\"\t30000\t\"N\"",
		"flow\t1000\t\"first\"\t60000\t\"D\"",
	};
	EXPECT_FLOWS("fl_pending_inactive", j, want);
}

Test(flow, start_whose_slice_ends_after_the_destination_begins)
{
	/* s binds S when read (at 12), whatever S's end: S (10..100)
	 * links to D (20..30), read at 21. */
	static const char j[] = "[" X("S", 1, 10, 90) "," FL("s", "1", 1, 12, "")
		"," X("D", 2, 20, 10) "," FL("f", "1", 2, 21, BP) "]";
	static const char *const want[] = {
		"flow\t10000\t\"S\"\t20000\t\"D\"",
	};
	EXPECT_FLOWS("fl_long_src", j, want);
}

Test(flow, step_whose_slice_ends_after_the_next_end_is_read)
{
	static const char j[] = "[" X("S", 1, 10, 10) "," FL("s", "1", 1, 11, "")
		"," X("T", 2, 30, 100) "," FL("t", "1", 2, 31, "")
		"," X("U", 3, 40, 10) "," FL("f", "1", 3, 41, BP) "]";
	static const char *const want[] = {
		"flow\t10000\t\"S\"\t30000\t\"T\"",
		"flow\t30000\t\"T\"\t40000\t\"U\"",
	};
	EXPECT_FLOWS("fl_long_step", j, want);
}

Test(flow, a_second_start_on_an_active_id_is_ignored)
{
	/* Begin on an active id: flow_duplicate_id, the id stays at S1
	 * (57-63). */
	static const char j[] = "[" X("S1", 1, 10, 10) "," FL("s", "1", 1, 11, "")
		"," X("S2", 1, 30, 10) "," FL("s", "1", 1, 31, "")
		"," X("D", 2, 50, 10) "," FL("f", "1", 2, 51, BP) "]";
	static const char *const want[] = {
		"flow\t10000\t\"S1\"\t50000\t\"D\"",
	};
	EXPECT_FLOWS("fl_dup", j, want);
}

Test(flow, v2_flow_out_with_two_flow_in)
{
	/* MaybeAddFlow: out Begin, in End(close = false): both ins link a. */
	static const char j[] =
		"[{\"name\":\"a\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,\"bind_id\":7,\"flow_out\":true},"
		"{\"name\":\"b\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":30,\"dur\":5,\"bind_id\":7,\"flow_in\":true},"
		"{\"name\":\"c\",\"ph\":\"B\",\"pid\":1,\"tid\":3,\"ts\":50,\"bind_id\":\"0x7\",\"flow_in\":true},"
		"{\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":55}]";
	static const char *const want[] = {
		"flow\t10000\t\"a\"\t30000\t\"b\"",
		"flow\t10000\t\"a\"\t50000\t\"c\"",
	};
	EXPECT_FLOWS("fl_v2_two_in", j, want);
}

Test(flow, v2_in_and_out_steps)
{
	/* in + out is Step (568-569): a -> b -> c -> d; the in of e links
	 * d, where the id is (End does not move it). */
	static const char j[] =
		"[{\"name\":\"a\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,\"bind_id\":3,\"flow_out\":true},"
		"{\"name\":\"b\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":20,\"dur\":5,\"bind_id\":3,\"flow_in\":true,\"flow_out\":true},"
		"{\"name\":\"c\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":5,\"bind_id\":3,\"flow_in\":true,\"flow_out\":true},"
		"{\"name\":\"d\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":40,\"dur\":5,\"bind_id\":3,\"flow_in\":true},"
		"{\"name\":\"e\",\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":50,\"dur\":5,\"bind_id\":3,\"flow_in\":true}]";
	static const char *const want[] = {
		"flow\t10000\t\"a\"\t20000\t\"b\"",
		"flow\t20000\t\"b\"\t30000\t\"c\"",
		"flow\t30000\t\"c\"\t40000\t\"d\"",
		"flow\t30000\t\"c\"\t50000\t\"e\"",
	};
	EXPECT_FLOWS("fl_v2_steps", j, want);
}

Test(flow, v2_on_async_begin_and_instant)
{
	/* MaybeAddFlow also runs for 'b' and 'n' (json_trace_parser.cc 213,
	 * 223), on the async slice. */
	static const char j[] =
		"[{\"name\":\"req\",\"cat\":\"n\",\"ph\":\"b\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":10,\"bind_id\":9,\"flow_out\":true},"
		"{\"name\":\"req\",\"cat\":\"n\",\"ph\":\"e\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":20},"
		"{\"name\":\"got\",\"cat\":\"n\",\"ph\":\"n\",\"id\":2,\"pid\":1,\"tid\":1,\"ts\":30,\"bind_id\":9,\"flow_in\":true,\"flow_out\":true},"
		"{\"name\":\"d\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":40,\"dur\":5,\"bind_id\":9,\"flow_in\":true}]";
	static const char *const want[] = {
		"flow\t10000\t\"req\"\t30000\t\"got\"",
		"flow\t30000\t\"got\"\t40000\t\"d\"",
	};
	EXPECT_FLOWS("fl_v2_async", j, want);
}

Test(flow, direction_is_by_timestamp_not_by_reading_order)
{
	/* Step and End link the earlier slice (by ts) to the later one
	 * (80-86, 113-116): s binds S (50..60) at 51; the f read at 71 binds
	 * E (5..105), which began before S: the row goes E -> S. */
	static const char j[] = "[" X("E", 3, 5, 100)
		"," X("S", 1, 50, 10) "," FL("s", "1", 1, 51, "")
		"," FL("f", "1", 3, 71, BP) "]";
	static const char *const want[] = {
		"flow\t5000\t\"E\"\t50000\t\"S\"",
	};
	EXPECT_FLOWS("fl_direction", j, want);
}

Test(flow, ids_as_integers_and_hex_strings_scoped_by_category_and_name)
{
	/* 5 and "0x5" are one id (CStringToUInt64(s, 16)); the same id with
	 * another cat or name is another flow (127-138), which never
	 * started (flow_end_without_start). */
	static const char j[] = "[" X("S", 1, 10, 10)
		"," FL("s", "5", 1, 11, "")
		"," X("A", 2, 30, 10) "," FL("f", "\"0x5\"", 2, 31, BP)
		"," X("B", 3, 30, 10)
		",{\"name\":\"f\",\"cat\":\"other\",\"ph\":\"f\",\"bp\":\"e\",\"id\":5,\"pid\":1,\"tid\":3,\"ts\":31}"
		"," X("C", 4, 30, 10)
		",{\"name\":\"g\",\"cat\":\"c\",\"ph\":\"f\",\"bp\":\"e\",\"id\":5,\"pid\":1,\"tid\":4,\"ts\":31}"
		"," X("D", 5, 30, 10)
		",{\"name\":\"f\",\"ph\":\"f\",\"bp\":\"e\",\"id\":5,\"pid\":1,\"tid\":5,\"ts\":31}"
		"]";
	static const char *const want[] = {
		"flow\t10000\t\"S\"\t30000\t\"A\"",
	};
	EXPECT_FLOWS("fl_scope", j, want);
}

Test(flow, a_flow_event_with_no_enclosing_slice_makes_no_row)
{
	/* Begin with no slice on the track: flow_no_enclosing_slice (47-55);
	 * the f then finds no active id. */
	static const char j[] = "[" FL("s", "1", 1, 11, "")
		"," X("D", 2, 30, 10) "," FL("f", "1", 2, 31, BP) "]";
	NO_FLOWS("fl_no_slice", j);
}

Test(flow, a_complete_slice_that_ended_still_encloses_until_a_slice_event)
{
	/* X leaves the JSON stack only at the next StartSlice / End on its
	 * track (MaybeCloseStack): s at 30, after S (10..20) ended, binds S;
	 * nested, s at 60 binds the inner slice I (45..50) that ended, not
	 * the outer O (40..100) still open. */
	static const char j[] = "[" X("S", 1, 10, 10) "," FL("s", "1", 1, 30, "")
		"," X("D", 2, 40, 10) "," FL("f", "1", 2, 41, BP)
		"," X("O", 3, 40, 60) "," X("I", 3, 45, 5)
		"," FL("s", "2", 3, 60, "")
		"," X("D2", 4, 70, 10) "," FL("f", "2", 4, 71, BP) "]";
	static const char *const want[] = {
		"flow\t10000\t\"S\"\t40000\t\"D\"",
		"flow\t45000\t\"I\"\t70000\t\"D2\"",
	};
	EXPECT_FLOWS("fl_stale_x", j, want);
}

Test(flow, an_instant_after_a_complete_slice_is_what_encloses)
{
	/* i at 25 is a slice event: S (10..20) is popped and the instant
	 * (dur 0) is pushed; s at 30 binds the instant. */
	static const char j[] = "[" X("S", 1, 10, 10)
		",{\"name\":\"mark\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"ts\":25}"
		"," FL("s", "1", 1, 30, "")
		"," X("D", 2, 40, 10) "," FL("f", "1", 2, 41, BP) "]";
	static const char *const want[] = {
		"flow\t25000\t\"mark\"\t40000\t\"D\"",
	};
	EXPECT_FLOWS("fl_instant", j, want);
}

Test(flow, b_and_e_slices_enclose_until_their_e)
{
	/* E closes (and pops) its slice: s at 25 after E at 20 has none. */
	static const char j[] =
		"[{\"name\":\"b\",\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":10},"
		FL("s", "1", 1, 12, "") ","
		"{\"name\":\"b\",\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":20},"
		FL("s", "2", 1, 25, "") ","
		"{\"name\":\"d\",\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":30},"
		FL("f", "1", 2, 31, BP) "," FL("f", "2", 2, 32, BP) ","
		"{\"name\":\"d\",\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":40}]";
	static const char *const want[] = {
		"flow\t10000\t\"b\"\t30000\t\"d\"",
	};
	EXPECT_FLOWS("fl_be", j, want);
}

Test(flow, v1_flows_are_numbered_in_the_v2_id_space)
{
	/* GetFlowIdForV1Event gives the first v1 (id, cat, name) flow id 0
	 * (v1_id_counter_), shared with v2 bind ids: bind_id 0's flow_in
	 * links the v1 start. */
	static const char j[] = "[" X("S", 1, 10, 10) "," FL("s", "777", 1, 11, "")
		",{\"name\":\"b\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":30,\"dur\":5,\"bind_id\":0,\"flow_in\":true}]";
	static const char *const want[] = {
		"flow\t10000\t\"S\"\t30000\t\"b\"",
	};
	EXPECT_FLOWS("fl_v1_v2_space", j, want);
}

Test(flow, many_ends_on_one_id_stay_bounded_and_all_link)
{
	/* 300 threads each end the same flow: 300 rows from S. */
	char *j = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&j, &n);
	cr_assert(f);
	fputs("[" X("S", 1, 10, 10) "," FL("s", "1", 1, 11, ""), f);
	for (int t = 0; t < 300; t++)
		fprintf(f,
			",{\"name\":\"D\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,"
			"\"ts\":%d,\"dur\":5},"
			"{\"name\":\"f\",\"cat\":\"c\",\"ph\":\"f\",\"bp\":\"e\","
			"\"id\":1,\"pid\":1,\"tid\":%d,\"ts\":%d}",
			100 + t, 30 + t, 100 + t, 31 + t);
	fputs("]", f);
	cr_assert_eq(fclose(f), 0);
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "fl_many");
	struct ptw_emit_stats st;
	ptw_test_convert_json(out, j, 0, &st);
	struct rows got = {0};
	flow_rows(out, &got);
	cr_assert_eq(got.n, 300);
	for (size_t i = 0; i < got.n; i++)
		cr_assert(strncmp(got.v[i], "flow\t10000\t\"S\"\t", 15) == 0,
			  "%s", got.v[i]);
	cr_assert_eq(st.flows, 301);
	rows_free(&got);
	unlink(out);
	free(j);
}

/* ---- the writer's legacy_event ------------------------------------------- */

Test(flow, writer_legacy_flow_events_decode_and_link)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "fl_writer");
	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(out, NULL, &err);
	cr_assert(w, "%s", err.msg);
	uint64_t pr = ptw_writer_add_process_track(w, 1, "p");
	uint64_t t1 = ptw_writer_add_thread_track(w, 1, 2, "a");
	uint64_t t2 = ptw_writer_add_thread_track(w, 1, 3, "b");
	cr_assert(pr && t1 && t2);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_legacy out_v2 = {.flow_dir = PTW_FLOW_OUT, .bind_id = 9};
	struct ptw_event b = {.track = t1, .ts = 10, .name = "S",
			      .legacy = &out_v2};
	cr_assert_eq(ptw_seq_slice_begin(s, &b), 0);
	struct ptw_legacy st = {.phase = 's', .id = 5};
	struct ptw_event fs = {.track = t1, .ts = 11, .name = "f",
			       .category = "c", .legacy = &st};
	cr_assert_eq(ptw_seq_legacy_flow(s, &fs), 0);
	struct ptw_event e = {.track = t1, .ts = 20};
	cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
	struct ptw_legacy in_v2 = {.flow_dir = PTW_FLOW_IN, .bind_id = 9};
	struct ptw_event d = {.track = t2, .ts = 30, .name = "D",
			      .legacy = &in_v2};
	cr_assert_eq(ptw_seq_instant(s, &d), 0);
	struct ptw_legacy en = {.phase = 'f', .id = 5, .bind_to_enclosing = 1};
	struct ptw_event fe = {.track = t2, .ts = 30, .name = "f",
			       .category = "c", .legacy = &en};
	cr_assert_eq(ptw_seq_legacy_flow(s, &fe), 0);
	/* misuse writes nothing */
	struct ptw_legacy bad = {.phase = 'x', .id = 1};
	fe.legacy = &bad;
	cr_assert_eq(ptw_seq_legacy_flow(s, &fe), PTW_ERR_INVALID);
	cr_assert_eq(ptw_seq_instant(s, &fe), PTW_ERR_INVALID);
	fe.legacy = NULL;
	cr_assert_eq(ptw_seq_legacy_flow(s, &fe), PTW_ERR_INVALID);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	struct ptw_trace *t = ptw_test_load_checked_or_fail(out, 0);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	cr_assert_eq(n, 5);
	cr_assert_eq(ev[0].bind_id, 9);
	cr_assert_eq(ev[0].flow_direction, PTW_FLOW_OUT);
	cr_assert_eq(ev[1].type, PTW_TRACE_LEGACY_FLOW);
	cr_assert_eq(ev[1].legacy_phase, 's');
	cr_assert(ev[1].has_legacy_id && ev[1].legacy_id == 5);
	cr_assert_str_eq(ev[1].name, "f");
	cr_assert_str_eq(ev[1].category, "c");
	cr_assert_eq(ev[4].legacy_phase, 'f');
	cr_assert(ev[4].bind_to_enclosing);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	struct rows got = {0}, exp = {0};
	rows_from_trace(t, m, &got);
	struct rows fl = {0};
	for (size_t i = 0; i < got.n; i++)
		if (strncmp(got.v[i], "flow\t", 5) == 0)
			rows_add(&fl, got.v[i]);
	/* v2 9: S -> D; v1 5: S (enclosing at 11) -> D (top at 30) */
	rows_add(&exp, "flow\t10\t\"S\"\t30\t\"D\"");
	rows_add(&exp, "flow\t10\t\"S\"\t30\t\"D\"");
	cr_expect(rows_equal("fl_writer", &exp, &fl), "rows differ");
	rows_free(&got);
	rows_free(&exp);
	rows_free(&fl);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(out);
}
