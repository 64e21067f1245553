/* test_convert_fidelity_thread.c - thread slices as trace_processor
 * (v58.2) imports the Chrome JSON: complete (X) events that partly overlap
 * on one thread, and thread time (tts / tdur -> slice.thread_ts /
 * thread_dur). Each case converts a small JSON text through the library,
 * decodes the output with the reader and its trace_processor model, and
 * compares the rows
 *   ts dur name cat depth tid pid track thread_ts thread_dur
 * (track: "main" for the thread's track, "ovlN" for the N-th overlap
 * track of the thread, in creation order) with rows derived from
 * trace_processor's JSON rules; the comments cite the rule.
 *
 * References (git show v58.2:<path> in perfetto):
 *   J  = src/trace_processor/importers/json/json_trace_parser.cc
 *   ST = src/trace_processor/importers/common/slice_tracker.cc
 *   TC = src/trace_processor/importers/common/track_compressor.cc
 *   SO = src/trace_processor/sorter/trace_sorter.h
 *   TE = src/trace_processor/importers/proto/track_event_event_importer.h
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "support/ptw_test.h"
#include "test_convert_expect.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* "main" for a thread track, else "ovlN": N = how many of the thread's
 * child tracks have a smaller uuid (the writer numbers tracks in creation
 * order, and the converter creates overlap lanes in lane order). */
static void track_label(const struct ptw_trace *t, uint64_t uuid, char *buf,
			size_t len)
{
	const struct ptw_trace_track *tr = ptw_trace_find_track(t, uuid);
	cr_assert_not_null(tr);
	if (tr->kind == PTW_TRACE_TRACK_THREAD) {
		snprintf(buf, len, "main");
		return;
	}
	cr_assert(tr->has_parent);
	size_t n, k = 0;
	const struct ptw_trace_track *all = ptw_trace_tracks(t, &n);
	for (size_t i = 0; i < n; i++)
		if (all[i].has_parent && all[i].parent_uuid == tr->parent_uuid &&
		    all[i].kind == PTW_TRACE_TRACK_PLAIN && all[i].uuid < uuid)
			k++;
	snprintf(buf, len, "ovl%zu", k);
}

/* The thread slices of a converted trace, one line each. */
static void thread_rows(const char *path, struct rows *r)
{
	struct ptw_trace *t = ptw_test_load_checked_or_fail(
		path, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		struct ptw_tp_track_owner o = ptw_tp_model_owner(t, s->track_uuid);
		if (o.owner != PTW_TP_OWNER_THREAD)
			continue;
		char lab[16], tts[24] = "null", tdur[24] = "null", line[512];
		track_label(t, s->track_uuid, lab, sizeof(lab));
		if (s->has_thread_ts)
			snprintf(tts, sizeof(tts), "%lld", (long long)s->thread_ts);
		if (s->has_thread_dur)
			snprintf(tdur, sizeof(tdur), "%lld",
				 (long long)s->thread_dur);
		snprintf(line, sizeof(line), "%lld %lld %s %s %u %lld %d %s %s %s",
			 (long long)s->ts, (long long)s->dur,
			 s->name ? s->name : "null",
			 s->category ? s->category : "null", s->depth,
			 (long long)o.tid, (int)o.pid, lab, tts, tdur);
		rows_add(r, line);
	}
	ptw_tp_model_free(m);
	ptw_trace_free(t);
}

#define EXPECT(tag, json, want, st)                                          \
	ptw_test_expect_json_rows(tag, json, want,                           \
				  sizeof(want) / sizeof(want[0]), st, thread_rows)

#define X(name, ts, dur) \
	"{\"name\":\"" name "\",\"cat\":\"c\",\"ph\":\"X\",\"pid\":1," \
	"\"tid\":2,\"ts\":" #ts ",\"dur\":" #dur "}"

/* ---- partly overlapping X ------------------------------------------------ */

/* J case 'X': Scoped on the thread track reports the overlap (ST
 * MaybeCloseStack: B starts inside A, [5, 15) ends after A's end 10),
 * and the slice goes to InternLegacyOverlappingScoped's first lane with
 * its own duration; A keeps its duration. Depth on the lane: its open
 * slices (TC LegacyOverlappingScopedInternal, none). */
static const char *const overlap_rows[] = {
	"0 10000 A c 0 2 1 main null null",
	"5000 10000 B c 0 2 1 ovl0 null null",
};

Test(fidelity_thread, partly_overlapping_x_keeps_both_durations)
{
	struct ptw_emit_stats st;
	EXPECT("ovl_ab", "[" X("A", 0, 10) "," X("B", 5, 10) "]", overlap_rows,
	       &st);
	/* J: RecordEventError(slice_spill_overlapping_complete_event) */
	cr_expect_eq(st.spilled, 1);
}

/* SO: events are sorted by ts first, so the file order of the two does
 * not matter: A (ts 0) is imported first either way. */
Test(fidelity_thread, partly_overlapping_x_in_reverse_file_order)
{
	EXPECT("ovl_ba", "[" X("B", 5, 10) "," X("A", 0, 10) "]", overlap_rows,
	       NULL);
}

/* SO SlowOperatorLess: at equal ts an X sorts by max - dur, the longer
 * first, whatever the file order; the shorter then nests inside it (ST:
 * [0, 10) ends before 20, no overlap) at depth 1. */
Test(fidelity_thread, equal_start_longer_x_first_and_the_shorter_nests)
{
	static const char *const want[] = {
		"0 20000 B c 0 2 1 main null null",
		"0 10000 A c 1 2 1 main null null",
	};
	struct ptw_emit_stats st;
	EXPECT("ovl_eq", "[" X("A", 0, 10) "," X("B", 0, 20) "]", want, &st);
	cr_expect_eq(st.spilled, 0);
}

/* Three-way: B [5, 15) overlaps A [0, 10): lane 0. C [8, 18) overlaps A
 * too; lane 0's open slice ends at 15 < 18, so TC takes a new lane 1. D
 * [12, 14) starts after A ended (ST: A popped, ends_before) and nests on
 * the thread track at depth 0. */
Test(fidelity_thread, three_way_overlap_needs_two_overlap_tracks)
{
	static const char *const want[] = {
		"0 10000 A c 0 2 1 main null null",
		"5000 10000 B c 0 2 1 ovl0 null null",
		"8000 10000 C c 0 2 1 ovl1 null null",
		"12000 2000 D c 0 2 1 main null null",
	};
	struct ptw_emit_stats st;
	EXPECT("ovl_3", "[" X("A", 0, 10) "," X("B", 5, 10) "," X("C", 8, 10)
	       "," X("D", 12, 2) "]", want, &st);
	cr_expect_eq(st.spilled, 2);
}

/* C [9, 13) overlaps A [0, 10) on the thread track and nests inside B
 * [5, 15) on lane 0 (TC: 13 <= 15): depth 1 there. E [6, 8) nests in A
 * on the thread track (ST: no overlap), depth 1. F [16, 17): depth 0. */
Test(fidelity_thread, x_nested_inside_a_spilled_x)
{
	static const char *const want[] = {
		"0 10000 A c 0 2 1 main null null",
		"5000 10000 B c 0 2 1 ovl0 null null",
		"6000 2000 E c 1 2 1 main null null",
		"9000 4000 C c 1 2 1 ovl0 null null",
		"16000 1000 F c 0 2 1 main null null",
	};
	struct ptw_emit_stats st;
	EXPECT("ovl_nest", "[" X("A", 0, 10) "," X("B", 5, 10) "," X("E", 6, 2)
	       "," X("C", 9, 4) "," X("F", 16, 1) "]", want, &st);
	cr_expect_eq(st.spilled, 2);
}

/* An X that ends exactly where the open one ends nests (ST: new_ts +
 * new_dur > end_ts is false), and one that starts where it ends follows
 * it (ends_same_and_should_drop pops it). */
Test(fidelity_thread, touching_x_do_not_spill)
{
	static const char *const want[] = {
		"0 10000 A c 0 2 1 main null null",
		"5000 5000 B c 1 2 1 main null null",
		"10000 5000 C c 0 2 1 main null null",
	};
	struct ptw_emit_stats st;
	EXPECT("ovl_touch", "[" X("A", 0, 10) "," X("B", 5, 5) ","
	       X("C", 10, 5) "]", want, &st);
	cr_expect_eq(st.spilled, 0);
}

/* B/E around X's: the open B "outer" does not block the check between
 * the X's above it: ST looks at A (complete, on top) and B2 [5, 15)
 * overlaps A [1, 11): lane 0, depth 0. The E at 20 closes "outer" (ST:
 * A ended before 20 and is popped). */
Test(fidelity_thread, overlapping_x_inside_an_open_b)
{
	static const char *const want[] = {
		"0 20000 outer c 0 2 1 main null null",
		"1000 10000 A c 1 2 1 main null null",
		"5000 10000 B2 c 0 2 1 ovl0 null null",
	};
	EXPECT("ovl_be",
	       "[{\"name\":\"outer\",\"cat\":\"c\",\"ph\":\"B\",\"pid\":1,"
	       "\"tid\":2,\"ts\":0}," X("A", 1, 10) "," X("B2", 5, 10) ","
	       "{\"name\":\"outer\",\"cat\":\"c\",\"ph\":\"E\",\"pid\":1,"
	       "\"tid\":2,\"ts\":20}]",
	       want, NULL);
}

/* An open B between two X's hides the lower one from the check (ST: the
 * complete slice below a pending one is only tested for truncation, and
 * 5 <= 10 keeps it): C [5, 15) nests on the thread track at depth 2, no
 * spill. trace_processor keeps A's duration although b and C above it
 * stay open past A's end. (It failed while X's were written as a BEGIN
 * and an END: the nameless END closed the innermost open slice, C; an X
 * of whole microseconds is now one complete event, as in the JSON.) */
Test(fidelity_thread, open_b_above_an_x_means_no_spill)
{
	static const char *const want[] = {
		"0 10000 A c 0 2 1 main null null",
		"2000 -1 b c 1 2 1 main null null",
		"5000 10000 C c 2 2 1 main null null",
	};
	struct ptw_emit_stats st;
	EXPECT("ovl_openb", "[" X("A", 0, 10) ","
	       "{\"name\":\"b\",\"cat\":\"c\",\"ph\":\"B\",\"pid\":1,"
	       "\"tid\":2,\"ts\":2}," X("C", 5, 10) "]", want, &st);
	cr_expect_eq(st.spilled, 0);
}

/* A B left open inside an X when the X ends (ST MaybeCloseStack): the
 * next slice event after the X's end (here b's own E at 15) truncates b
 * at the X's end (misplaced_end_event) and pops both; the E then closes
 * nothing. The converter's X of one event is complete from its start, as
 * the JSON's, so the protobuf import does the same (written as a BEGIN
 * and an END, A's END closed b and b's E closed A at 15). */
Test(fidelity_thread, b_left_open_in_an_x_is_truncated_at_its_end)
{
	static const char *const want[] = {
		"0 10000 A c 0 2 1 main null null",
		"2000 8000 b c 1 2 1 main null null",
		"20000 0 i c 0 2 1 main null null",
	};
	EXPECT("x_trunc", "[" X("A", 0, 10) ","
	       "{\"name\":\"b\",\"cat\":\"c\",\"ph\":\"B\",\"pid\":1,"
	       "\"tid\":2,\"ts\":2},"
	       "{\"name\":\"b\",\"cat\":\"c\",\"ph\":\"E\",\"pid\":1,"
	       "\"tid\":2,\"ts\":15},"
	       "{\"name\":\"i\",\"cat\":\"c\",\"ph\":\"i\",\"s\":\"t\","
	       "\"pid\":1,\"tid\":2,\"ts\":20}]", want, NULL);
}

/* The short path (emit_fast.c) never takes an X, so a spill written
 * through a later short-path event comes out the same: the B/E after
 * the X's go through it and release the queued X items. */
Test(fidelity_thread, spill_then_short_path_events)
{
	static const char *const want[] = {
		"0 10000 A c 0 2 1 main null null",
		"5000 10000 B c 0 2 1 ovl0 null null",
		"20000 10000 s null 0 2 1 main null null",
	};
	EXPECT("ovl_short", "[" X("A", 0, 10) "," X("B", 5, 10) ","
	       "{\"name\":\"s\",\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":20},"
	       "{\"name\":\"s\",\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":30}]",
	       want, NULL);
}

/* ---- thread time -------------------------------------------------------- */

#define EV(ph, name, ts, more) \
	"{\"name\":\"" name "\",\"cat\":\"c\",\"ph\":\"" ph "\",\"pid\":1," \
	"\"tid\":2,\"ts\":" #ts more "}"

/* J case 'B': thread_ts = tts; case 'E': thread_dur = tts(E) -
 * thread_ts when the closed slice has a thread_ts. CoerceToTs: us -> ns,
 * a fraction rounded (600.5 -> 600500). */
Test(fidelity_thread, b_e_with_tts_on_both_ends)
{
	static const char *const want[] = {
		"0 10000 b c 0 2 1 main 100000 30000",
		"20000 1000 f c 0 2 1 main 600500 750",
	};
	EXPECT("tt_be", "[" EV("B", "b", 0, ",\"tts\":100") ","
	       EV("E", "b", 10, ",\"tts\":130") ","
	       EV("B", "f", 20, ",\"tts\":600.5") ","
	       EV("E", "f", 21, ",\"tts\":601.25") "]", want, NULL);
}

/* J case 'E' without tts: thread_dur stays NULL; a B without tts has
 * no thread_ts, so its E's tts gives no thread_dur either. */
Test(fidelity_thread, e_without_tts)
{
	static const char *const want[] = {
		"0 10000 b c 0 2 1 main 200000 null",
		"20000 5000 n c 0 2 1 main null null",
	};
	EXPECT("tt_e", "[" EV("B", "b", 0, ",\"tts\":200") ","
	       EV("E", "b", 10, "") "," EV("B", "n", 20, "") ","
	       EV("E", "n", 25, ",\"tts\":300") "]", want, NULL);
}

#define XT(name, ts, dur, more) \
	"{\"name\":\"" name "\",\"cat\":\"c\",\"ph\":\"X\",\"pid\":1," \
	"\"tid\":2,\"ts\":" #ts ",\"dur\":" #dur more "}"

/* J case 'X': thread_ts = tts, thread_dur = tdur; without tdur only
 * thread_ts. The spilled X keeps its thread time too (J sets it on the
 * slice Scoped returned on the overlap track). */
Test(fidelity_thread, x_with_tts_and_tdur)
{
	static const char *const want[] = {
		"0 10000 A c 0 2 1 main 300000 2000",
		"5000 10000 B c 0 2 1 ovl0 310000 4500",
		"20000 5000 C c 0 2 1 main 400000 null",
	};
	EXPECT("tt_x", "[" XT("A", 0, 10, ",\"tts\":300,\"tdur\":2") ","
	       XT("B", 5, 10, ",\"tts\":310,\"tdur\":4.5") ","
	       XT("C", 20, 5, ",\"tts\":400") "]", want, NULL);
}

/* What protobuf cannot express (docs/convert.md): the JSON import gives
 * D thread_dur 3000 without a thread_ts (J case 'X' sets tdur alone),
 * but the protobuf import derives thread_dur from the END's thread time
 * minus the BEGIN's (TE ParseThreadEndEvent), so neither is set; and a
 * zero thread duration (E's tts equal to B's: J sets 0) is left NULL
 * (TE: only a delta != 0 is stored). */
Test(fidelity_thread, thread_time_protobuf_cannot_express)
{
	static const char *const want[] = {
		"30000 1000 D c 0 2 1 main null null",
		"40000 1000 z c 0 2 1 main 900000 null",
	};
	EXPECT("tt_limits", "[" XT("D", 30, 1, ",\"tdur\":3") ","
	       EV("B", "z", 40, ",\"tts\":900") ","
	       EV("E", "z", 41, ",\"tts\":900") "]", want, NULL);
}

/* J case 'i' (thread scope): thread_ts = tts. The protobuf import sets
 * thread_dur = 0 on every instant with thread time (TE
 * ParseThreadInstantEvent), where the JSON import leaves it NULL: a
 * documented difference (docs/convert.md). Process-scoped instants and
 * async events ignore tts (J). */
Test(fidelity_thread, instants_with_tts)
{
	static const char *const want[] = {
		"5000 0 i c 0 2 1 main 700000 0",
	};
	EXPECT("tt_i", "[" EV("i", "i", 5, ",\"s\":\"t\",\"tts\":700") ","
	       "{\"name\":\"p\",\"ph\":\"i\",\"s\":\"p\",\"pid\":1,\"tid\":2,"
	       "\"ts\":6,\"tts\":9}]", want, NULL);
}

/* --to-json writes thread time back as tts / tdur (not as a thread_time
 * counter), so JSON -> proto -> JSON -> proto keeps the rows, the
 * overlap track included. */
Test(fidelity_thread, thread_time_and_spill_survive_the_json_round_trip)
{
	static const char *const want[] = {
		"0 10000 A c 0 2 1 main 300000 2000",
		"5000 10000 B c 0 2 1 ovl0 310000 4500",
		"20000 10000 b c 0 2 1 main 100000 30000",
	};
	const char *json = "[" XT("A", 0, 10, ",\"tts\":300,\"tdur\":2") ","
		XT("B", 5, 10, ",\"tts\":310,\"tdur\":4.5") ","
		EV("B", "b", 20, ",\"tts\":100") ","
		EV("E", "b", 30, ",\"tts\":130") "]";
	char p1[256], j2[256];
	ptw_test_tmp_path(p1, sizeof(p1), "rt1");
	ptw_test_tmp_path(j2, sizeof(j2), "rt2");
	ptw_test_convert_json(p1, json, 0, NULL);
	FILE *f = fopen(j2, "w");
	cr_assert_not_null(f);
	struct ptw_error err = {0};
	cr_assert_eq(ptw_cv_export_json(p1, f, &err), 0, "%s", err.msg);
	cr_assert_eq(fclose(f), 0);
	size_t n;
	char *back = (char *)ptw_test_read_file_or_fail(j2, &n);
	char *z = realloc(back, n + 1);
	cr_assert_not_null(z);
	z[n] = '\0';
	cr_expect_null(strstr(z, "thread_time"), "%s", z);
	EXPECT("rt3", z, want, NULL);
	free(z);
	unlink(p1);
	unlink(j2);
}

/* ---- events out of file order -------------------------------------------- */

/* trace_processor sorts a JSON trace by ts before it imports it (SO), so
 * the file order does not matter: C (B at 5, E at 95) encloses A; B
 * partly overlaps A and goes to a lane. Through the reorder window
 * (cv_sort.h) the conversion shows those rows; without it, C would be
 * left open (the issue 24 case). Checked with trace_processor v58.2 on
 * the JSON and on the conversion. */
static const char unsorted_json[] =
	"[" X("A", 10, 50) "," X("B", 40, 50) ","
	"{\"name\":\"C\",\"cat\":\"c\",\"ph\":\"B\",\"ts\":5,\"pid\":1,\"tid\":2},"
	"{\"name\":\"C\",\"cat\":\"c\",\"ph\":\"E\",\"ts\":95,\"pid\":1,\"tid\":2}]";
static const char *const unsorted_rows[] = {
	"5000 90000 C c 0 2 1 main null null",
	"10000 50000 A c 1 2 1 main null null",
	"40000 50000 B c 0 2 1 ovl0 null null",
};

Test(convert_fidelity_thread, events_out_of_file_order_are_sorted_by_ts)
{
	struct ptw_emit_stats st;
	ptw_test_expect_json_rows_window("unsorted", unsorted_json, 4,
					 unsorted_rows, 3, &st, thread_rows);
	cr_expect_eq(st.out_of_order, 0);
	/* without the window the emitter sees, and counts, the late B; so
	 * it does when the window is too small to hold A and B when C comes */
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "unsorted0");
	for (size_t window = 0; window < 2; window++) {
		ptw_test_convert_json_window(out, unsorted_json, 0, window, &st);
		cr_expect_eq(st.out_of_order, 1, "window %zu", window);
	}
	unlink(out);
}
