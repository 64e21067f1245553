/* test_convert_fidelity_args.c - JSON "args" as trace_processor (v58.2)
 * shows them in its args table, for the converted trace: each case
 * converts a small JSON text through the library, decodes the output with
 * the reader and its trace_processor model, flattens each slice's debug
 * annotations into args rows (ptw_trace_args_add: the protobuf import's
 * rules) and compares the rows
 *   <slice name> <key> <type> <value>
 * with the rows trace_processor's JSON import gives (derived from its
 * source; the comments cite the rule). The only allowed difference is the
 * prefix: "debug." for the protobuf import, "args." for the JSON one; the
 * rows below are written with "args." and the converted ones renamed.
 *
 * References (git show v58.2:<path> in perfetto):
 *   JA = src/trace_processor/util/json_args.cc (AddJsonValueToArgs)
 *   JP = src/trace_processor/util/json_parser.h (ParseNumber,
 *        StringToInt64, StringToDouble)
 *   J  = src/trace_processor/importers/json/json_trace_parser.cc
 *   AT = src/trace_processor/importers/common/args_tracker.{h,cc}
 *   ST = src/trace_processor/importers/common/slice_tracker.cc
 *   PA = src/trace_processor/util/proto_to_args_parser.cc
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "test_convert_expect.h"

/* One args row as "<slice> <key> <type> <value>", types named as in
 * trace_processor's args.value_type. */
static void row_line(const char *slice, const struct ptw_trace_arg_row *r,
		     char *line, size_t len)
{
	const char *key = r->key;
	char k[256];
	if (strncmp(key, "debug.", 6) == 0) {
		snprintf(k, sizeof(k), "args.%s", key + 6);
		key = k;
	}
	switch (r->type) {
	case PTW_TRACE_ARG_BOOL:
		snprintf(line, len, "%s %s bool %d", slice, key, r->v.b);
		break;
	case PTW_TRACE_ARG_INT:
		snprintf(line, len, "%s %s int %" PRId64, slice, key, r->v.i);
		break;
	case PTW_TRACE_ARG_UINT:
		snprintf(line, len, "%s %s uint %" PRIu64, slice, key, r->v.u);
		break;
	case PTW_TRACE_ARG_DOUBLE:
		snprintf(line, len, "%s %s real %.17g", slice, key, r->v.d);
		break;
	case PTW_TRACE_ARG_STRING:
		snprintf(line, len, "%s %s string %s", slice, key, r->v.s);
		break;
	default:
		snprintf(line, len, "%s %s type%d", slice, key, (int)r->type);
		break;
	}
}

/* The args rows of every slice of a converted trace. */
static void args_rows(const char *path, struct rows *out)
{
	struct ptw_trace *t = ptw_test_load_checked_or_fail(
		path, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		struct ptw_trace_args_table tab = {0};
		/* BEGIN's annotations, then END's: one inserter (ST
		 * GetArgsInserter) */
		for (uint32_t k = 0; k < s->n_args; k++)
			cr_assert_eq(ptw_trace_args_add(&tab, s->args[k], 1), 0);
		for (size_t r = 0; r < tab.n; r++) {
			char line[512];
			row_line(s->name ? s->name : "null", &tab.rows[r], line,
				 sizeof(line));
			rows_add(out, line);
		}
		ptw_trace_args_free(&tab);
	}
	ptw_tp_model_free(m);
	ptw_trace_free(t);
}

#define EXPECT(tag, json, want, st)                                          \
	ptw_test_expect_json_rows(tag, json, want,                           \
				  sizeof(want) / sizeof(want[0]), st, args_rows)

#define X(name, ts, args) \
	"{\"name\":\"" name "\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":" \
	#ts ",\"dur\":1,\"args\":" args "}"

/* ---- objects and arrays ---------------------------------------------- */

/* JA: an object member's key is the parent's + "." + member name, a leaf
 * (int64, double, string, bool) is one row (InsertLeaf); an array value's
 * key is the array's + "[i]" with i the inserter's next index for the
 * array's key (AT GetNextArrayEntryIndex / IncrementArrayEntryIndex). */
static const char *const nested_rows[] = {
	"s args.a.b int 1",
	"s args.a.c.d string x",
	"s args.arr[0] int 1",
	"s args.arr[1] real 2.5",
	"s args.arr[2] bool 1",
	"s args.arr[3] string s",
	"s args.top int 7",
};

Test(convert_fidelity_args, nested_objects_and_arrays)
{
	/* JA "Skip null values": a null array value takes no index */
	EXPECT("args_nested",
	       "[" X("s", 1, "{\"a\":{\"b\":1,\"c\":{\"d\":\"x\"}},"
			     "\"arr\":[1,null,2.5,true,\"s\"],\"top\":7}") "]",
	       nested_rows, NULL);
}

/* JA: an object or array that is an array value takes its index before
 * its members are read (the index is taken for every non-null value), so
 * {} [] and {"y":null} use up indexes 1, 2 and 3 without a row; a nested
 * array's values are keyed on "o[4]". The protobuf import would not
 * count an empty value (PA StepDebugAnnotation: only added entries move
 * the index): the converter writes those as a dict with one empty dict
 * entry, which counts (PA: a dict with entries sets added_entry). */
static const char *const array_rows[] = {
	"s args.o[0].x int 1",
	"s args.o[4][0][0] int 2",
	"s args.o[5] int 3",
	"s args.n[0][0] string deep",
};

Test(convert_fidelity_args, arrays_of_objects_and_arrays_keep_indexes)
{
	EXPECT("args_arrays",
	       "[" X("s", 1, "{\"o\":[{\"x\":1},{},[],{\"y\":null},[[2],[]],3],"
			     "\"n\":[[\"deep\"]]}") "]",
	       array_rows, NULL);
}

/* JA: nulls are skipped and empty objects/arrays add nothing at any
 * level; an args object with nothing else gives no row at all. */
static const char *const empty_rows[] = {
	"s args.h int 1",
};

Test(convert_fidelity_args, nulls_and_empty_values_add_no_row)
{
	EXPECT("args_empty",
	       "[" X("s", 1, "{\"e\":{},\"f\":[],\"g\":null,\"h\":1,"
			     "\"i\":{\"j\":{},\"k\":[null]}}") ","
	       X("none", 5, "{\"e\":{},\"g\":null}") "]",
	       empty_rows, NULL);
}

/* ---- keys -------------------------------------------------------------- */

/* JA builds keys by appending "." + the member name as written, so "a.b"
 * and {"a":{"b":..}} give the same key (the protobuf import would show
 * '.' in a name as '_', PA SanitizeDebugAnnotationName: the converter
 * splits the key into dicts). Same keys: the later value replaces the
 * earlier one in place (AT AddArg, kAddOrUpdate); arrays under one key
 * share their index (AT array_indexes). Escapes are decoded. */
static const char *const dotted_rows[] = {
	"s args.a.b int 1",
	"s args.c.d.e[0] bool 1",
	"s args.a.z int 2",
	"s args.p.q int 4",
	"s args.m.n[0] int 5",
	"s args.m.n[1] int 6",
	"s args.x..y int 7",
	"s args. int 8",
	"s args.o.kA string a\"b\xc3\xa9",
};

Test(convert_fidelity_args, dotted_keys)
{
	EXPECT("args_dotted",
	       "[" X("s", 1, "{\"a.b\":1,\"c\":{\"d.e\":[true]},\"a\":{\"z\":2},"
			     "\"p.q\":3,\"p\":{\"q\":4},"
			     "\"m.n\":[5],\"m\":{\"n\":[6]},\"x..y\":7,\"\":8,"
			     "\"o\":{\"k\\u0041\":\"a\\\"b\\u00e9\"}}") "]",
	       dotted_rows, NULL);
}

/* JA keeps '[' and ']' in keys; the protobuf import replaces them with
 * '_' in every name (PA SanitizeDebugAnnotationName) and a protobuf trace
 * has no other way to spell a key: these rows differ (counted in
 * args_renamed, docs/convert.md). */
static const char *const bracket_rows[] = {
	"s args.k_1_ int 3",  /* JSON import: args.k[1] */
	"s args.o.x_ int 1",  /* JSON import: args.o.x] */
};

Test(convert_fidelity_args, brackets_in_keys_become_underscores)
{
	struct ptw_emit_stats st;
	EXPECT("args_brackets", "[" X("s", 1, "{\"k[1]\":3,\"o\":{\"x]\":1}}") "]",
	       bracket_rows, &st);
	cr_expect_eq(st.args_renamed, 2);
	cr_expect_eq(st.args_dropped, 0);
}

/* ---- values ------------------------------------------------------------ */

/* JP ParseNumber: an integer that fits int64 is an int, anything else a
 * double by StringToDouble, which sums the integer digits in an int64
 * (wrapping: 18446744073709551615 -> -1, 9223372036854775808 -> INT64_MIN)
 * and the fraction digits in another (20 digits wrap: pi's become
 * 2.4479366030851377); -0 is the int 0, -0.0 the double -0. */
static const char *const value_rows[] = {
	"s args.i int -5",
	"s args.d real 1.5",
	"s args.big real -1",
	"s args.e real 100",
	"s args.z int 0",
	"s args.nz real -0",
	"s args.pi real 2.4479366030851377",
	"s args.n.big real -9.2233720368547758e+18",
	"s args.n.arr[0] real 0.25",
	"s args.n.arr[1] int -9223372036854775808",
	"s args.f bool 0",
};

Test(convert_fidelity_args, value_types_as_the_json_parser_makes_them)
{
	EXPECT("args_values",
	       "[" X("s", 1, "{\"i\":-5,\"d\":1.5,\"big\":18446744073709551615,"
			     "\"e\":1e2,\"z\":-0,\"nz\":-0.0,"
			     "\"pi\":3.14159265358979323846,"
			     "\"n\":{\"big\":9223372036854775808,"
			     "\"arr\":[0.25,-9223372036854775808]},"
			     "\"f\":false}") "]",
	       value_rows, NULL);
}

/* Every arg of an event is a row (the writer takes up to
 * PTW_MAX_ANNOTATIONS = 64: more are cut, below). */
Test(convert_fidelity_args, more_than_sixteen_args)
{
	char json[4096];
	size_t n = (size_t)snprintf(json, sizeof(json),
				    "[{\"name\":\"s\",\"ph\":\"X\",\"pid\":1,"
				    "\"tid\":2,\"ts\":1,\"dur\":1,\"args\":{");
	const char *want[64];
	char lines[64][32];
	for (int i = 0; i < 64; i++) {
		n += (size_t)snprintf(json + n, sizeof(json) - n,
				      "%s\"a%d\":%d", i ? "," : "", i, i);
		snprintf(lines[i], sizeof(lines[i]), "s args.a%d int %d", i, i);
		want[i] = lines[i];
	}
	snprintf(json + n, sizeof(json) - n, "}}]");
	ptw_test_expect_json_rows("args_many", json, want, 64, NULL, args_rows);
}

/* ---- phases ------------------------------------------------------------ */

/* J 'B' / 'E': both call the args inserter of the slice (ST Begin / End
 * -> GetArgsInserter, one inserter per slice), so E's array values go on
 * after B's ("arr" indexes 2), E's "x" replaces B's in place, and E's
 * "o.q" joins B's "o.p". The same holds for the protobuf END. */
static const char *const be_rows[] = {
	"b args.arr[0] int 1",
	"b args.arr[1] int 2",
	"b args.arr[2] int 3",
	"b args.x int 2",
	"b args.o.p int 1",
	"b args.o.q int 2",
};

Test(convert_fidelity_args, begin_and_end_args_merge)
{
	EXPECT("args_be",
	       "[{\"name\":\"b\",\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":1,"
	       "\"args\":{\"arr\":[1,2],\"x\":1,\"o\":{\"p\":1}}},"
	       "{\"name\":\"b\",\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":5,"
	       "\"args\":{\"arr\":[3],\"x\":2,\"o\":{\"q\":2}}}]",
	       be_rows, NULL);
}

/* J 'i' (every scope) and 'b' / 'e': Scoped / Begin / End with the args
 * inserter; the async e merges into its slice as E does (ST). */
static const char *const phase_rows[] = {
	"ti args.a.b[0] int 1",
	"gi args.g.h string x",
	"pi args.p[0].q bool 1",
	"req args.r[0] int 1",
	"req args.r[1] int 2",
	"req args.s.t int 3",
	"x args.k.v real 0.5",
};

Test(convert_fidelity_args, instants_async_and_complete)
{
	EXPECT("args_phases",
	       "[{\"name\":\"ti\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":2,"
	       "\"ts\":1,\"args\":{\"a\":{\"b\":[1]}}},"
	       "{\"name\":\"gi\",\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":2,"
	       "\"ts\":2,\"args\":{\"g.h\":\"x\"}},"
	       "{\"name\":\"pi\",\"ph\":\"I\",\"s\":\"p\",\"pid\":1,\"tid\":2,"
	       "\"ts\":3,\"args\":{\"p\":[{\"q\":true}]}},"
	       "{\"name\":\"req\",\"cat\":\"n\",\"ph\":\"b\",\"id\":1,\"pid\":1,"
	       "\"tid\":2,\"ts\":4,\"args\":{\"r\":[1]}},"
	       "{\"name\":\"req\",\"cat\":\"n\",\"ph\":\"e\",\"id\":1,\"pid\":1,"
	       "\"tid\":2,\"ts\":8,\"args\":{\"r\":[2],\"s\":{\"t\":3}}},"
	       X("x", 10, "{\"k\":{\"v\":0.5}}") "]",
	       phase_rows, NULL);
}

/* ---- limits ------------------------------------------------------------ */

/* Values nested deeper than the writer's PTW_MAX_ARG_DEPTH (16 levels
 * below the top-level arg) are left out and counted; the rest stay. */
Test(convert_fidelity_args, too_deep_values_are_counted)
{
	char json[1024];
	size_t n = (size_t)snprintf(json, sizeof(json),
			     "[{\"name\":\"s\",\"ph\":\"X\",\"pid\":1,\"tid\":2,"
			     "\"ts\":1,\"dur\":1,\"args\":{\"ok\":1,\"d\":");
	for (int i = 0; i < 20; i++)
		n += (size_t)snprintf(json + n, sizeof(json) - n, "[");
	n += (size_t)snprintf(json + n, sizeof(json) - n, "1");
	for (int i = 0; i < 20; i++)
		n += (size_t)snprintf(json + n, sizeof(json) - n, "]");
	snprintf(json + n, sizeof(json) - n, "}}]");
	static const char *const want[] = { "s args.ok int 1" };
	struct ptw_emit_stats st;
	ptw_test_expect_json_rows("args_deep", json, want, 1, &st, args_rows);
	cr_expect_eq(st.args_dropped, 1);
}

/* ---- args past the writer's limits --------------------------------------
 * trace_processor's JSON import has no limit on the number of args or on
 * their depth (json_args.cc walks with an explicit stack). The reader
 * takes them all too; the writer takes PTW_MAX_ANNOTATIONS top-level
 * args and PTW_MAX_ARG_DEPTH levels: the emitter leaves out the rest and
 * counts it (args_dropped), and the conversion goes on with the events
 * after it. Each case is compared with trace_processor loading the JSON
 * (rows it shows that the converted trace lacks: exactly args_dropped)
 * and loading the converted trace (the rows our reader decodes). */

/* "s" with the given args, then "after". malloc'd. */
static char *cut_json(const char *args)
{
	size_t n = strlen(args) + 256;
	char *json = malloc(n);
	cr_assert_not_null(json);
	snprintf(json, n,
		 "[" X("s", 1, "%s") ",{\"name\":\"after\",\"ph\":\"X\","
		 "\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":1}]", args);
	return json;
}

/* {"a0":0,"a1":1,...} with n members. malloc'd. */
static char *many_args(int n)
{
	char *a = malloc((size_t)n * 24 + 8), *p = a;
	cr_assert_not_null(a);
	*p++ = '{';
	for (int i = 0; i < n; i++)
		p += sprintf(p, "%s\"a%d\":%d", i ? "," : "", i, i);
	strcpy(p, "}");
	return a;
}

/* {"ok":1,"d":V} where the event nests 'depth' levels deep in all (the
 * event is level 1, "args" level 2): V is depth - 2 arrays ('[') or
 * objects ({"k":...}) around 1. malloc'd. */
static char *deep_args(int depth, char open)
{
	int levels = depth - 2;
	char *a = malloc((size_t)levels * 8 + 32), *p = a;
	cr_assert_not_null(a);
	p += sprintf(p, "{\"ok\":1,\"d\":");
	for (int i = 0; i < levels; i++)
		p += sprintf(p, open == '[' ? "[" : "{\"k\":");
	*p++ = '1';
	for (int i = 0; i < levels; i++)
		*p++ = open == '[' ? ']' : '}';
	strcpy(p, "}");
	return a;
}

/* trace_processor's args rows of 'trace', as args_rows() writes ours. */
static void tp_rows(const char *tp, const char *trace, struct rows *out)
{
	char *csv = ptw_test_tp_run(
		tp, trace,
		"select s.name || ' ' || replace(a.key, 'debug.', 'args.') || "
		"' ' || a.value_type || ' ' || a.display_value from slice s "
		"join args a using(arg_set_id)");
	cr_assert_not_null(csv, "trace_processor failed on %s", trace);
	for (char *l = csv, *nl; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		cr_assert_not_null(nl);
		*nl = '\0';
		size_t n = strlen(l); /* a CSV string: "..." */
		cr_assert(n >= 2 && l[0] == '"' && l[n - 1] == '"', "%s", l);
		l[n - 1] = '\0';
		rows_add(out, l + 1);
	}
	free(csv);
}

static int rows_has(const struct rows *r, const char *line)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i], line) == 0)
			return 1;
	return 0;
}

static void expect_cut(const char *tag, char *args, size_t kept,
		       uint64_t dropped)
{
	char *json = cut_json(args);
	free(args);
	char out[256], in[300];
	ptw_test_tmp_path(out, sizeof(out), tag);
	struct ptw_emit_stats st;
	ptw_test_convert_json(out, json, 0, &st);
	cr_expect_eq(st.args_dropped, dropped, "%s: args_dropped %llu", tag,
		     (unsigned long long)st.args_dropped);

	/* decoded: the rows kept, and the event after it */
	struct rows got = {0};
	args_rows(out, &got);
	cr_expect_eq(got.n, kept, "%s: %zu rows", tag, got.n);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(
		out, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	cr_expect_not_null(ptw_test_find_slice(m, "after", 0), "%s", tag);
	ptw_tp_model_free(m);
	ptw_trace_free(t);

	const char *looked, *tp = ptw_test_tp_find(&looked);
	if (!tp) {
		fprintf(stderr, "%s: no trace_processor_shell at %s: "
				"comparison skipped\n", tag, looked);
	} else {
		snprintf(in, sizeof(in), "%s.json", out);
		ptw_test_write_file_or_fail(in, json, strlen(json));
		struct rows want = {0}, conv = {0};
		tp_rows(tp, in, &want);
		for (size_t i = 0; i < got.n; i++)
			cr_expect(rows_has(&want, got.v[i]),
				  "%s: %s is not a row of the JSON import", tag,
				  got.v[i]);
		cr_expect_eq(want.n - got.n, dropped,
			     "%s: the JSON import shows %zu rows, we %zu", tag,
			     want.n, got.n);
		char *after = ptw_test_tp_run(
			tp, in, "select count(*) from slice where name = 'after'");
		cr_expect(after && strcmp(after, "1\n") == 0, "%s", tag);
		free(after);
		tp_rows(tp, out, &conv);
		cr_expect(rows_equal(tag, &conv, &got),
			  "%s: trace_processor shows other rows", tag);
		char *bad = ptw_test_tp_run(
			tp, out,
			"select count(*) from stats where value > 0 and "
			"severity in ('error', 'data_loss')");
		cr_expect(bad && strcmp(bad, "0\n") == 0, "%s: stats %s", tag,
			  bad ? bad : "(failed)");
		free(bad);
		rows_free(&want);
		rows_free(&conv);
		unlink(in);
	}
	rows_free(&got);
	free(json);
	unlink(out);
}

Test(convert_fidelity_args, more_args_than_the_writer_takes_are_cut)
{
	expect_cut("args_65", many_args(65), 64, 1);
	expect_cut("args_1000", many_args(1000), 64, 936);
}

Test(convert_fidelity_args, args_nested_at_any_depth_are_cut)
{
	expect_cut("args_257a", deep_args(257, '['), 1, 1);
	expect_cut("args_1000a", deep_args(1000, '['), 1, 1);
	expect_cut("args_257o", deep_args(257, '{'), 1, 1);
	expect_cut("args_1000o", deep_args(1000, '{'), 1, 1);
}
