/* test_convert_fidelity_async.c - Chrome JSON ids, async slices, thread
 * rows, scoped instants and nested args converted as trace_processor
 * (v58.2) imports the JSON: each test converts a small JSON input,
 * decodes the output with the reader and its trace_processor model
 * (tp_model, which follows TP's protobuf import) and compares the rows
 * with rows derived from TP's JSON import (the source lines are cited).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "support/ptw_test.h"
#include "test_convert_json.h"

/* ---- converting and rows ------------------------------------------------ */

struct rows {
	char **v;
	size_t n, cap;
};

static void add(struct rows *r, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		cr_assert(r->v);
	}
	r->v[r->n++] = strdup(buf);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

#define S(x) ((x) ? (x) : "NULL")

/* What the tests compare (kinds in 'kinds': s slices, t threads,
 * p processes, c counters, a args):
 *   slice|ts|dur|name|cat|depth|owner|track name
 *     owner: g (global), p<pid> (process), t<tid> (thread)
 *   thread|tid|pid|name      process|pid|name
 *   counter|track name|ts|value
 *   arg|slice name|key|type|value  (key as trace_processor shows it) */
static void rows_of(const char *path, const char *kinds, struct rows *r)
{
	struct ptw_trace *t = ptw_test_load_or_fail(path);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	for (size_t i = 0; strchr(kinds, 's') && i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		char own[32];
		if (s->owner.owner == PTW_TP_OWNER_THREAD)
			snprintf(own, sizeof(own), "t%lld", (long long)s->owner.tid);
		else if (s->owner.owner == PTW_TP_OWNER_PROCESS)
			snprintf(own, sizeof(own), "p%d", (int)s->owner.pid);
		else
			snprintf(own, sizeof(own), "g");
		add(r, "slice|%lld|%lld|%s|%s|%u|%s|%s", (long long)s->ts,
		    (long long)s->dur, S(s->name), S(s->category), s->depth,
		    own, s->owner.owner == PTW_TP_OWNER_THREAD
				 ? "-" : S(s->track_name));
	}
	for (size_t i = 0; strchr(kinds, 't') && i < m->n_threads; i++)
		add(r, "thread|%lld|%d|%s", (long long)m->threads[i].tid,
		    (int)m->threads[i].pid, S(m->threads[i].name));
	for (size_t i = 0; strchr(kinds, 'p') && i < m->n_processes; i++)
		add(r, "process|%d|%s", (int)m->processes[i].pid,
		    S(m->processes[i].name));
	for (size_t i = 0; strchr(kinds, 'c') && i < m->n_counters; i++) {
		const struct ptw_tp_counter *c = &m->counters[i];
		const struct ptw_trace_track *tr =
			ptw_trace_find_track(t, c->track_uuid);
		add(r, "counter|%s|%lld|%g", S(tr ? tr->name : NULL),
		    (long long)c->ts, c->value);
	}
	ptw_tp_model_free(m);
	ptw_trace_free(t);
}

/* Converts 'json' and compares the rows of 'kinds' with want[0, n). */
static void expect(const char *json, const char *kinds,
		   const char *const *want, size_t n)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "fid_async");
	ptw_test_convert_json(out, json, 0, NULL);
	struct rows got = {0};
	rows_of(out, kinds, &got);
	unlink(out);
	char **exp = malloc((n ? n : 1) * sizeof(*exp));
	cr_assert(exp);
	for (size_t i = 0; i < n; i++)
		exp[i] = strdup(want[i]);
	qsort(exp, n, sizeof(*exp), cmp);
	qsort(got.v, got.n, sizeof(*got.v), cmp);
	int same = got.n == n;
	for (size_t i = 0; same && i < n; i++)
		same = strcmp(exp[i], got.v[i]) == 0;
	if (!same) {
		fprintf(stderr, "---- expected:\n");
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "  %s\n", exp[i]);
		fprintf(stderr, "---- got:\n");
		for (size_t i = 0; i < got.n; i++)
			fprintf(stderr, "  %s\n", got.v[i]);
	}
	cr_expect(same, "rows differ (see stderr)");
	for (size_t i = 0; i < n; i++)
		free(exp[i]);
	free(exp);
	for (size_t i = 0; i < got.n; i++)
		free(got.v[i]);
	free(got.v);
}

#define EXPECT(json, kinds, ...)                                             \
	do {                                                                 \
		static const char *const want_[] = {__VA_ARGS__};            \
		expect(json, kinds, want_, sizeof(want_) / sizeof(*want_));  \
	} while (0)

/* ---- item 1: ids ------------------------------------------------------ */

/* json_trace_tokenizer.cc ExtractId: a string id is the interned string,
 * an int64 id its value; the cookie is MurmurHashCombine(cat, id). So
 * "1", "0x1" and 1 are three cookies. All three began with the name "A":
 * one TrackCompressor set (track_compressor.cc InternLegacyAsyncTrack),
 * and while each cookie's slice is open the next cookie gets a track of
 * its own (GetOrCreateTrackForCookie): three slices at depth 0. One
 * cookie would have nested them (depths 0, 1, 2). */
Test(fidelity_async, string_hex_string_and_integer_ids_differ)
{
	EXPECT("[{\"ph\":\"b\",\"name\":\"A\",\"cat\":\"c\",\"id\":\"1\",\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"b\",\"name\":\"A\",\"cat\":\"c\",\"id\":\"0x1\",\"pid\":1,\"ts\":2},"
	       "{\"ph\":\"b\",\"name\":\"A\",\"cat\":\"c\",\"id\":1,\"pid\":1,\"ts\":3},"
	       "{\"ph\":\"e\",\"name\":\"A\",\"cat\":\"c\",\"id\":\"1\",\"pid\":1,\"ts\":10},"
	       "{\"ph\":\"e\",\"name\":\"A\",\"cat\":\"c\",\"id\":\"0x1\",\"pid\":1,\"ts\":11},"
	       "{\"ph\":\"e\",\"name\":\"A\",\"cat\":\"c\",\"id\":1,\"pid\":1,\"ts\":12}]",
	       "s",
	       "slice|1000|9000|A|c|0|g|A",
	       "slice|2000|9000|A|c|0|g|A",
	       "slice|3000|9000|A|c|0|g|A");
}

/* id2 with an integer or string "global" / "local" (ParseId2 ->
 * ExtractId). Global ids: the upid is not part of the cookie
 * (InternLegacyAsyncTrack with trace_id_is_process_scoped false), so G
 * begun in pid 1 ends in pid 2. Local ids: the track is per process
 * (source_id_is_process_scoped true, dimension upid): L in pids 1 and 2
 * are two process-owned slices. */
Test(fidelity_async, id2_integer_and_string_global_and_local)
{
	EXPECT("[{\"ph\":\"b\",\"name\":\"L\",\"cat\":\"c\",\"id2\":{\"local\":7},\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"b\",\"name\":\"L\",\"cat\":\"c\",\"id2\":{\"local\":7},\"pid\":2,\"ts\":2},"
	       "{\"ph\":\"e\",\"name\":\"L\",\"cat\":\"c\",\"id2\":{\"local\":7},\"pid\":1,\"ts\":5},"
	       "{\"ph\":\"e\",\"name\":\"L\",\"cat\":\"c\",\"id2\":{\"local\":7},\"pid\":2,\"ts\":6},"
	       "{\"ph\":\"b\",\"name\":\"G\",\"cat\":\"c\",\"id2\":{\"global\":7},\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"e\",\"name\":\"G\",\"cat\":\"c\",\"id2\":{\"global\":7},\"pid\":2,\"ts\":4},"
	       "{\"ph\":\"b\",\"name\":\"S\",\"cat\":\"c\",\"id2\":{\"global\":\"x\"},\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"e\",\"name\":\"S\",\"cat\":\"c\",\"id2\":{\"global\":\"x\"},\"pid\":1,\"ts\":3},"
	       "{\"ph\":\"b\",\"name\":\"T\",\"cat\":\"c\",\"id2\":{\"local\":\"x\"},\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"e\",\"name\":\"T\",\"cat\":\"c\",\"id2\":{\"local\":\"x\"},\"pid\":1,\"ts\":2}]",
	       "s",
	       "slice|1000|4000|L|c|0|p1|L",
	       "slice|2000|4000|L|c|0|p2|L",
	       "slice|1000|3000|G|c|0|g|G",
	       "slice|1000|2000|S|c|0|g|S",
	       "slice|1000|1000|T|c|0|p1|T");
}

/* "id" wins over id2 when it is a valid id, whatever the order; an id
 * that is no id (a double) leaves id2 in charge; id2.global before
 * id2.local (end of ParseTraceEventContents). P's begin and end share
 * the global cookie of id 3; Q's begin has id2.local 4 and an invalid
 * "id", its end only id2.local 4: one process cookie; R's begin has
 * both global and local, its end only global. */
Test(fidelity_async, id_before_id2_and_global_before_local)
{
	EXPECT("[{\"ph\":\"b\",\"name\":\"P\",\"id2\":{\"local\":4},\"id\":3,\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"e\",\"name\":\"P\",\"id\":3,\"pid\":2,\"ts\":2},"
	       "{\"ph\":\"b\",\"name\":\"Q\",\"id\":1.5,\"id2\":{\"local\":4},\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"e\",\"name\":\"Q\",\"id2\":{\"local\":4},\"pid\":1,\"ts\":3},"
	       "{\"ph\":\"b\",\"name\":\"R\",\"id2\":{\"local\":5,\"global\":5},\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"e\",\"name\":\"R\",\"id2\":{\"global\":5},\"pid\":3,\"ts\":4}]",
	       "s",
	       "slice|1000|1000|P|NULL|0|g|P",
	       "slice|1000|2000|Q|NULL|0|p1|Q",
	       "slice|1000|3000|R|NULL|0|g|R");
}

/* json_trace_parser.cc case 'C': the counter name gets " id: <id>" only
 * when event.id is a string (`if (!id.empty())`, id being the string of
 * a kString "id"): not for an integer id, not for id2, not for "". */
Test(fidelity_async, counter_id_suffix_only_for_string_id)
{
	EXPECT("[{\"ph\":\"C\",\"name\":\"ctr\",\"id\":\"7\",\"pid\":1,\"ts\":1,\"args\":{\"v\":1}},"
	       "{\"ph\":\"C\",\"name\":\"ctr\",\"id\":7,\"pid\":1,\"ts\":2,\"args\":{\"w\":2}},"
	       "{\"ph\":\"C\",\"name\":\"ctr\",\"id2\":{\"global\":\"g\"},\"pid\":1,\"ts\":3,\"args\":{\"u\":3}},"
	       "{\"ph\":\"C\",\"name\":\"ctr\",\"id\":\"\",\"pid\":1,\"ts\":4,\"args\":{\"z\":4}}]",
	       "c",
	       "counter|ctr id: 7 v|1000|1",
	       "counter|ctr w|2000|2",
	       "counter|ctr u|3000|3",
	       "counter|ctr z|4000|4");
}

/* ---- item 7: async tracks ---------------------------------------------- */

/* One cookie, events with other names: InternLegacyAsyncTrack keys the
 * track set by the cookie's first name (async_tracks_to_root_string_id_),
 * so "inner" and "mark" go on outer's track and nest (slice_tracker
 * Begin / Scoped); the track is named "outer". 'n' uses event.name for
 * the slice (Scoped(..., event.name, ...)). */
Test(fidelity_async, one_cookie_other_names_nest_on_one_track)
{
	EXPECT("[{\"ph\":\"b\",\"name\":\"outer\",\"cat\":\"c\",\"id\":5,\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"b\",\"name\":\"inner\",\"cat\":\"c\",\"id\":5,\"pid\":1,\"ts\":2},"
	       "{\"ph\":\"n\",\"name\":\"mark\",\"cat\":\"c\",\"id\":5,\"pid\":1,\"ts\":3},"
	       "{\"ph\":\"e\",\"name\":\"inner\",\"cat\":\"c\",\"id\":5,\"pid\":1,\"ts\":4},"
	       "{\"ph\":\"e\",\"name\":\"outer\",\"cat\":\"c\",\"id\":5,\"pid\":1,\"ts\":6}]",
	       "s",
	       "slice|1000|5000|outer|c|0|g|outer",
	       "slice|2000|2000|inner|c|1|g|outer",
	       "slice|3000|0|mark|c|2|g|outer");
}

/* 'e' is slice_tracker->End(ts, track, event.cat, event.name): it closes
 * the innermost open slice whose name (and category) match, a NULL name
 * (empty in JSON) matches any, and an 'e' that matches nothing closes
 * nothing. X: "Y" closes nothing, the second e closes X at 3. W: the
 * nameless e closes the innermost (V2), then "V1" closes V1. */
Test(fidelity_async, end_closes_by_name)
{
	EXPECT("[{\"ph\":\"b\",\"name\":\"X\",\"id\":1,\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"e\",\"name\":\"Y\",\"id\":1,\"pid\":1,\"ts\":2},"
	       "{\"ph\":\"e\",\"name\":\"X\",\"id\":1,\"pid\":1,\"ts\":3},"
	       "{\"ph\":\"b\",\"name\":\"V1\",\"id\":2,\"pid\":1,\"ts\":1},"
	       "{\"ph\":\"b\",\"name\":\"V2\",\"id\":2,\"pid\":1,\"ts\":2},"
	       "{\"ph\":\"e\",\"id\":2,\"pid\":1,\"ts\":3},"
	       "{\"ph\":\"e\",\"name\":\"V1\",\"id\":2,\"pid\":1,\"ts\":4}]",
	       "s",
	       "slice|1000|2000|X|NULL|0|g|X",
	       "slice|1000|3000|V1|NULL|0|g|V1",
	       "slice|2000|1000|V2|NULL|1|g|V1");
}

/* Overlapping slices: on one cookie they nest (nest_count 2); on two
 * cookies of one set the second gets a new track while the first is
 * open, and a third cookie adopts the first free track
 * (GetOrCreateTrackForCookie), so it is on the same track as R1. */
Test(fidelity_async, overlapping_slices_on_one_key_and_across_keys)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "fid_async_ov");
	ptw_test_convert_json(out,
		     "[{\"ph\":\"b\",\"name\":\"K\",\"id\":9,\"pid\":1,\"ts\":1},"
		     "{\"ph\":\"b\",\"name\":\"K\",\"id\":9,\"pid\":1,\"ts\":2},"
		     "{\"ph\":\"e\",\"name\":\"K\",\"id\":9,\"pid\":1,\"ts\":3},"
		     "{\"ph\":\"e\",\"name\":\"K\",\"id\":9,\"pid\":1,\"ts\":4},"
		     "{\"ph\":\"b\",\"name\":\"R\",\"id\":1,\"pid\":1,\"ts\":10},"
		     "{\"ph\":\"b\",\"name\":\"R\",\"id\":2,\"pid\":1,\"ts\":11},"
		     "{\"ph\":\"e\",\"name\":\"R\",\"id\":1,\"pid\":1,\"ts\":12},"
		     "{\"ph\":\"b\",\"name\":\"R\",\"id\":3,\"pid\":1,\"ts\":13},"
		     "{\"ph\":\"e\",\"name\":\"R\",\"id\":2,\"pid\":1,\"ts\":14},"
		     "{\"ph\":\"e\",\"name\":\"R\",\"id\":3,\"pid\":1,\"ts\":15}]",
		     0, NULL);
	struct ptw_trace *t = ptw_test_load_or_fail(out);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	cr_assert_eq(m->n_slices, 5);
	const struct ptw_tp_slice *s = m->slices; /* by (ts, order) */
	cr_expect_eq(s[0].depth, 0); /* K at 1: 3 us */
	cr_expect_eq(s[0].dur, 3000);
	cr_expect_eq(s[1].depth, 1); /* K at 2: 1 us, inside */
	cr_expect_eq(s[1].dur, 1000);
	cr_expect_eq(s[0].tp_track, s[1].tp_track);
	cr_expect_eq(s[2].dur, 2000); /* R1 */
	cr_expect_eq(s[3].dur, 3000); /* R2 */
	cr_expect_eq(s[4].dur, 2000); /* R3 */
	cr_expect_eq(s[2].depth + s[3].depth + s[4].depth, 0);
	cr_expect_neq(s[2].tp_track, s[3].tp_track);
	cr_expect_eq(s[4].tp_track, s[2].tp_track);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(out);
}

/* b/e/n without a pid, or without a usable id, are json_parser_failure
 * (case 'b'/'e'/'n': !pid_exists or async_cookie_type kNone): no slice.
 * UpdateThread still ran for them (top of ParseJsonPacket): thread 11 of
 * pid 1 exists. */
Test(fidelity_async, async_without_pid_or_id_is_dropped)
{
	EXPECT("[{\"ph\":\"b\",\"name\":\"np\",\"id\":1,\"tid\":5,\"ts\":1},"
	       "{\"ph\":\"b\",\"name\":\"nid\",\"pid\":1,\"tid\":11,\"ts\":1},"
	       "{\"ph\":\"n\",\"name\":\"dbl\",\"id\":1.5,\"pid\":1,\"tid\":11,\"ts\":1},"
	       "{\"ph\":\"b\",\"name\":\"obj\",\"id2\":{\"local\":{}},\"pid\":1,\"tid\":11,\"ts\":1}]",
	       "st",
	       "thread|5|0|NULL",
	       "thread|11|1|NULL");
}

/* ---- item 8: threads of every event, scoped instants ------------------- */

/* Every event that reaches ParseJsonPacket runs procs->UpdateThread(tid,
 * pid), tid being the pid when it is 0 (tokenizer: "Make the tid equal
 * to the pid if tid is not set"): a C, b or M event makes its thread
 * row. M events reach the parser without ts; other events without ts,
 * and events without ph, are dropped by the tokenizer (no row at all). */
Test(fidelity_async, threads_of_counter_async_and_metadata_events)
{
	EXPECT("[{\"ph\":\"C\",\"name\":\"c\",\"pid\":3,\"tid\":33,\"ts\":1,\"args\":{\"v\":1}},"
	       "{\"ph\":\"b\",\"name\":\"a\",\"id\":1,\"pid\":4,\"tid\":44,\"ts\":1},"
	       "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":5,\"tid\":55,\"args\":{\"sort_index\":2}},"
	       "{\"ph\":\"M\",\"name\":\"something\",\"pid\":6,\"tid\":66},"
	       "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,\"args\":{\"name\":\"P7\"}},"
	       "{\"ph\":\"C\",\"name\":\"c\",\"pid\":8,\"tid\":88,\"args\":{\"v\":1}},"
	       "{\"name\":\"x\",\"pid\":9,\"tid\":99,\"ts\":1}]",
	       "tp",
	       "thread|33|3|NULL", "process|3|NULL",
	       "thread|44|4|NULL", "process|4|NULL",
	       "thread|55|5|NULL", "process|5|NULL",
	       "thread|66|6|NULL", "process|6|NULL",
	       "thread|7|7|NULL", "process|7|P7");
}

/* case 'i' with "s":"g": the kLegacyGlobalInstantsBlueprint track, one
 * per trace, with no name (tracks::BlueprintName()); "s":"p": the
 * process's kChromeProcessInstantBlueprint track, no name. Both use
 * event.name (NULL when empty). Instants at different times each pop the
 * previous one (depth 0). */
Test(fidelity_async, global_and_process_instants_on_unnamed_tracks)
{
	EXPECT("[{\"ph\":\"i\",\"s\":\"g\",\"name\":\"gi\",\"pid\":1,\"tid\":2,\"ts\":1},"
	       "{\"ph\":\"I\",\"s\":\"g\",\"name\":\"gj\",\"ts\":2},"
	       "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"\",\"pid\":3,\"ts\":3},"
	       "{\"ph\":\"i\",\"s\":\"p\",\"name\":\"pi\",\"pid\":1,\"ts\":4},"
	       "{\"ph\":\"X\",\"name\":\"x\",\"pid\":1,\"tid\":2,\"ts\":0,\"dur\":10}]",
	       "s",
	       "slice|1000|0|gi|NULL|0|g|NULL",
	       "slice|2000|0|gj|NULL|0|g|NULL",
	       "slice|3000|0|NULL|NULL|0|g|NULL",
	       "slice|4000|0|pi|NULL|0|p1|NULL",
	       "slice|0|10000|x|NULL|0|t2|-");
}

/* A global instant of a thread is not written on that thread's track:
 * trace_processor's protobuf import would then add the thread as arg
 * legacy_event.passthrough_utid (track_event_event_importer.h), which
 * the JSON import does not show. Checked with trace_processor v58.2: no
 * args on the slice. */
Test(fidelity_async, global_instant_of_a_thread_is_not_on_its_track)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "fid_async_g");
	ptw_test_convert_json(out,
		"[{\"ph\":\"X\",\"name\":\"x\",\"pid\":1,\"tid\":2,\"ts\":0,"
		"\"dur\":10},{\"ph\":\"i\",\"s\":\"g\",\"name\":\"gi\",\"pid\":1,"
		"\"tid\":2,\"ts\":1}]", 0, NULL);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(out, 0);
	size_t n, seen = 0;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	for (size_t i = 0; i < n; i++) {
		if (!ev[i].name || strcmp(ev[i].name, "gi") != 0)
			continue;
		seen++;
		const struct ptw_trace_track *tr =
			ptw_trace_find_track(t, ev[i].track_uuid);
		cr_expect(!tr || tr->kind != PTW_TRACE_TRACK_THREAD);
		cr_expect_eq(ev[i].legacy_scope, 'g');
	}
	cr_expect_eq(seen, 1);
	ptw_trace_free(t);
	unlink(out);
}

/* Async events are written as trace_processor's protobuf import reads
 * Chrome's legacy async events (TrackEvent.legacy_event phase b/e/n with
 * unscoped_id, or local_id for id2.local, on the process track, no
 * type), so they land on its legacy_async_global_slice /
 * legacy_async_process_slice tracks as the JSON's do (checked with
 * trace_processor v58.2: same track types and names, same slice rows).
 * The reader models those tracks: one per id, named after the id's
 * first event, under the process for local ids. */
Test(fidelity_async, async_events_are_legacy_async_events)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "fid_async_legacy");
	ptw_test_convert_json(out,
		"[{\"ph\":\"b\",\"name\":\"G\",\"cat\":\"c\",\"pid\":1,\"tid\":2,"
		"\"ts\":1,\"id2\":{\"global\":\"0x7\"}},"
		"{\"ph\":\"n\",\"name\":\"L\",\"pid\":1,\"tid\":2,\"ts\":2,"
		"\"id2\":{\"local\":3}},"
		"{\"ph\":\"e\",\"name\":\"G\",\"cat\":\"c\",\"pid\":1,\"tid\":2,"
		"\"ts\":3,\"id2\":{\"global\":\"0x7\"}}]", 0, NULL);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(out, 0);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	cr_assert_eq(n, 3);
	static const char phase[] = "bne";
	static const enum ptw_trace_event_type type[] = {
		PTW_TRACE_SLICE_BEGIN, PTW_TRACE_INSTANT, PTW_TRACE_SLICE_END};
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq(ev[i].legacy_phase, phase[i]);
		cr_expect_eq(ev[i].type, type[i]);
		const struct ptw_trace_track *tr =
			ptw_trace_find_track(t, ev[i].track_uuid);
		cr_assert_not_null(tr);
		cr_expect(tr->legacy_async);
		cr_expect_eq(tr->has_parent, i == 1, "local: under the process");
		cr_expect_str_eq(tr->name, i == 1 ? "L" : "G");
	}
	cr_expect_eq(ev[0].track_uuid, ev[2].track_uuid);
	ptw_trace_free(t);
	unlink(out);
}

/* ---- the writer flags these rely on ---------------------------------- */

/* PTW_EV_NAMED_END writes the END's name and category and is accepted
 * without an open slice; a legacy instant_scope 'g' / 'p' writes a
 * legacy_event scope, refused on other event types or ('p') on a track
 * that is not a process track. */
Test(fidelity_async, writer_named_end_and_instant_scopes)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "fid_async_w");
	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(out, NULL, &err);
	cr_assert(w, "%s", err.msg);
	uint64_t pr = ptw_writer_add_process_track(w, 1, "p");
	uint64_t tr = ptw_writer_add_track(w, NULL, 0, -1);
	cr_assert(pr && tr);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_event b = {.track = tr, .ts = 1, .name = "a", .category = "c"};
	cr_assert_eq(ptw_seq_slice_begin(s, &b), 0);
	struct ptw_event e = {.track = tr, .ts = 2, .name = "z",
			      .flags = PTW_EV_NAMED_END};
	cr_assert_eq(ptw_seq_slice_end(s, &e), 0); /* matches nothing */
	e.ts = 3;
	cr_assert_eq(ptw_seq_slice_end(s, &e), 0); /* count is 0: accepted */
	e.name = "a";
	e.category = "c";
	e.ts = 4;
	cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
	struct ptw_event plain_end = {.track = tr, .ts = 5};
	cr_assert_eq(ptw_seq_slice_end(s, &plain_end), PTW_ERR_INVALID);
	static const struct ptw_legacy global = {.instant_scope = 'g'};
	static const struct ptw_legacy process = {.instant_scope = 'p'};
	struct ptw_event gi = {.track = tr, .ts = 6, .name = "g",
			       .legacy = &global};
	cr_assert_eq(ptw_seq_instant(s, &gi), 0);
	cr_assert_eq(ptw_seq_slice_begin(s, &gi), PTW_ERR_INVALID);
	struct ptw_event pi = {.track = tr, .ts = 7, .name = "p",
			       .legacy = &process};
	cr_assert_eq(ptw_seq_instant(s, &pi), PTW_ERR_INVALID);
	pi.track = pr;
	cr_assert_eq(ptw_seq_instant(s, &pi), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	struct ptw_trace *t = ptw_test_load_or_fail(out);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	cr_assert_eq(m->n_slices, 3);
	/* "a" closed by the END named "a" at 4, not by the one named "z" */
	cr_expect_str_eq(m->slices[0].name, "a");
	cr_expect_eq(m->slices[0].dur, 3);
	cr_expect_str_eq(m->slices[0].track_name, "a"); /* after its event */
	cr_expect_eq(m->slices[1].begin->legacy_scope, 'g');
	cr_expect_eq(m->slices[1].owner.owner, PTW_TP_OWNER_GLOBAL);
	cr_expect_null(m->slices[1].track_name);
	cr_expect_eq(m->slices[2].begin->legacy_scope, 'p');
	cr_expect_eq(m->slices[2].owner.owner, PTW_TP_OWNER_PROCESS);
	cr_expect_null(m->slices[2].track_name);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(out);
}

/* ptw_seq_legacy_flow with phase b/e/n: the id as unscoped_id, or as
 * local_id when asked (read back as an id of the event's process); a
 * local_id on a flow phase, or an unknown phase, is refused. */
Test(fidelity_async, writer_legacy_async_phases_and_local_ids)
{
	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "fid_async_wl");
	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(out, NULL, &err);
	cr_assert(w, "%s", err.msg);
	uint64_t pr = ptw_writer_add_process_track(w, 1, "p");
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_legacy lb = {.phase = 'b', .id = 5, .local_id = 1};
	struct ptw_event b = {.track = pr, .ts = 1, .name = "x", .legacy = &lb};
	cr_assert_eq(ptw_seq_legacy_flow(s, &b), 0);
	struct ptw_legacy le = {.phase = 'e', .id = 5, .local_id = 1};
	struct ptw_event e = {.track = pr, .ts = 4, .name = "x", .legacy = &le};
	cr_assert_eq(ptw_seq_legacy_flow(s, &e), 0);
	struct ptw_legacy ln = {.phase = 'n', .id = 5};
	struct ptw_event n = {.track = pr, .ts = 2, .name = "y", .legacy = &ln};
	cr_assert_eq(ptw_seq_legacy_flow(s, &n), 0);
	struct ptw_legacy bad = {.phase = 's', .id = 5, .local_id = 1};
	n.legacy = &bad;
	cr_assert_eq(ptw_seq_legacy_flow(s, &n), PTW_ERR_INVALID);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(out, 0);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	cr_assert_eq(m->n_slices, 2);
	cr_expect_str_eq(m->slices[0].name, "x");
	cr_expect_eq(m->slices[0].dur, 3);
	cr_expect_eq(m->slices[0].owner.owner, PTW_TP_OWNER_PROCESS);
	cr_expect_eq(m->slices[1].owner.owner, PTW_TP_OWNER_GLOBAL);
	cr_expect_neq(m->slices[0].track_uuid, m->slices[1].track_uuid);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(out);
}
