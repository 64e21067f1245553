/* test_export_roundtrip.c - JSON -> proto -> JSON -> proto keeps every
 * event: the trace_processor rows (model of reader/tp_model.h) of the
 * first protobuf trace and of the one rebuilt from its JSON export are the
 * same multisets, for every chrome_* corpus case and for a synthetic trace
 * using every phase.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "reader/tp_model.h"
#include "reader/trace_read.h"

static char *tmp_path(void)
{
	char *p = malloc(64);
	snprintf(p, 64, "/tmp/test_roundtrip_%d_XXXXXX", (int)getpid());
	int fd = mkstemp(p);
	cr_assert(fd >= 0);
	close(fd);
	return p;
}

/* Chrome JSON file -> protobuf trace, through the reader and the emitter. */
static void convert(const char *json, const char *pf)
{
	struct ptw_error err = { 0 };
	struct ptw_writer *w = ptw_writer_open(pf, NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	struct ptw_emit *em = ptw_emit_create(w, &err);
	cr_assert_not_null(em, "%s", err.msg);
	struct ptw_emit_input in = { .mode = PTW_EMIT_CHROME };
	cr_assert_eq(ptw_emit_begin_input(em, &in, &err), 0, "%s", err.msg);
	int rc = ptw_cv_json_read(json, NULL, ptw_emit_event, em, NULL, &err);
	cr_assert_eq(rc, 0, "%s: %s", json, err.msg);
	cr_assert_eq(ptw_emit_end_input(em, &err), 0, "%s", err.msg);
	cr_assert_eq(ptw_emit_finish(em, &err), 0, "%s", err.msg);
	ptw_emit_destroy(em);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
}

struct rows {
	char **r;
	size_t n, cap;
};

static void add_row(struct rows *rs, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 256;
		rs->r = realloc(rs->r, rs->cap * sizeof(char *));
		cr_assert_not_null(rs->r);
	}
	rs->r[rs->n++] = strdup(buf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}


#define S(x) ((x) ? (x) : "(null)")

/* A slice's rows of trace_processor's args table (key, type, value). */
static void add_arg_rows(struct rows *rs, const struct ptw_tp_slice *s)
{
	struct ptw_trace_args_table tab = { 0 };
	for (uint32_t k = 0; k < s->n_args; k++)
		cr_assert_eq(ptw_trace_args_add(&tab, s->args[k], 1), 0);
	for (size_t r = 0; r < tab.n; r++) {
		const struct ptw_trace_arg_row *a = &tab.rows[r];
		char v[64];
		const char *vs = v;
		switch (a->type) {
		case PTW_TRACE_ARG_BOOL: snprintf(v, sizeof(v), "%d", a->v.b); break;
		case PTW_TRACE_ARG_INT: snprintf(v, sizeof(v), "%lld", (long long)a->v.i); break;
		case PTW_TRACE_ARG_DOUBLE: snprintf(v, sizeof(v), "%.17g", a->v.d); break;
		case PTW_TRACE_ARG_STRING: vs = a->v.s; break;
		default: snprintf(v, sizeof(v), "%llu", (unsigned long long)a->v.u); break;
		}
		add_row(rs, "arg|%lld|%s|%s|%d|%s", (long long)s->ts, S(s->name),
			a->key, (int)a->type, vs);
	}
	ptw_trace_args_free(&tab);
}

/* The sections of the corpus comparison (corpus README section 1), with
 * the depth of process and global slices added, and the slices' args. */
static void rows_of(const char *pf, struct rows *rs)
{
	struct ptw_error err = { 0 };
	struct ptw_trace *t = ptw_trace_load_file(pf, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_null(ptw_trace_fatal(t));
	struct ptw_tp_model *m = ptw_tp_model_build(t, &err);
	cr_assert_not_null(m);
	memset(rs, 0, sizeof(*rs));
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		struct ptw_tp_track_owner o = s->owner;
		const char *nm = s->name ? s->name : "[No name]";
		if (o.owner == PTW_TP_OWNER_THREAD)
			add_row(rs, "%s|%lld|%lld|%s|%s|%u|%lld|%d",
				s->dur == 0 ? "thread_instant" : "thread_slice",
				(long long)s->ts, (long long)s->dur, nm,
				S(s->category), s->depth, (long long)o.tid, o.pid);
		else if (o.owner == PTW_TP_OWNER_PROCESS) /* + depth: stricter */
			add_row(rs, "process_slice|%lld|%lld|%s|%d|%u",
				(long long)s->ts, (long long)s->dur, S(s->name),
				o.pid, s->depth);
		else
			add_row(rs, "global_slice|%lld|%lld|%s|%u",
				(long long)s->ts, (long long)s->dur, S(s->name),
				s->depth);
	}
	for (size_t i = 0; i < m->n_slices; i++)
		add_arg_rows(rs, &m->slices[i]);
	for (size_t i = 0; i < m->n_counters; i++) {
		const struct ptw_tp_counter *c = &m->counters[i];
		const struct ptw_trace_track *tr =
			ptw_trace_find_track(t, c->track_uuid);
		struct ptw_tp_track_owner o = ptw_tp_model_owner(t, c->track_uuid);
		add_row(rs, "counter|%s|%d|%lld|%.12g", S(tr ? tr->name : NULL),
			o.pid, (long long)c->ts, c->value);
	}
	for (size_t i = 0; i < m->n_threads; i++)
		if (m->threads[i].name)
			add_row(rs, "thread|%lld|%d|%s",
				(long long)m->threads[i].tid, m->threads[i].pid,
				m->threads[i].name);
	for (size_t i = 0; i < m->n_processes; i++)
		if (m->processes[i].pid != 0)
			add_row(rs, "process|%d|%s", m->processes[i].pid,
				S(m->processes[i].name));
	for (size_t i = 0; i < m->n_flows; i++) {
		const struct ptw_tp_slice *a = &m->slices[m->flows[i].slice_out];
		const struct ptw_tp_slice *b = &m->slices[m->flows[i].slice_in];
		add_row(rs, "flow|%lld|%s|%lld|%s", (long long)a->ts, S(a->name),
			(long long)b->ts, S(b->name));
	}
	qsort(rs->r, rs->n, sizeof(char *), cmp_str);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
}

static void free_rows(struct rows *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->r[i]);
	free(rs->r);
}

/* json -> pf1 -> json2 -> pf2; rows(pf1) == rows(pf2). Returns the row
 * count. */
static size_t roundtrip(const char *json)
{
	char *pf1 = tmp_path(), *j2 = tmp_path(), *pf2 = tmp_path();
	convert(json, pf1);
	FILE *f = fopen(j2, "w");
	cr_assert_not_null(f);
	struct ptw_error err = { 0 };
	cr_assert_eq(ptw_cv_export_json(pf1, f, &err), 0, "%s", err.msg);
	cr_assert_eq(fclose(f), 0);
	convert(j2, pf2);
	struct rows a, b;
	rows_of(pf1, &a);
	rows_of(pf2, &b);
	for (size_t i = 0; i < a.n || i < b.n; i++) {
		const char *x = i < a.n ? a.r[i] : "(none)";
		const char *y = i < b.n ? b.r[i] : "(none)";
		cr_assert_str_eq(x, y, "%s: row %zu differs after the round trip:\n"
			    "  first:  %s\n  second: %s", json, i, x, y);
	}
	size_t n = a.n;
	free_rows(&a);
	free_rows(&b);
	unlink(pf1);
	unlink(j2);
	unlink(pf2);
	free(pf1);
	free(j2);
	free(pf2);
	return n;
}

Test(export_roundtrip, every_phase_survives)
{
	const char *s =
		"[\n"
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"tid\":0,"
		"\"args\":{\"name\":\"app\"}},\n"
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":8,"
		"\"args\":{\"name\":\"worker\"}},\n"
		"{\"name\":\"outer\",\"cat\":\"c\",\"ph\":\"B\",\"pid\":7,\"tid\":8,"
		"\"ts\":10.125,\"args\":{\"k\":\"v\",\"n\":-3,\"d\":0.5,\"b\":true}},\n"
		"{\"name\":\"inner\",\"cat\":\"c\",\"ph\":\"X\",\"pid\":7,\"tid\":8,"
		"\"ts\":11,\"dur\":2.001},\n"
		"{\"name\":\"mark\",\"ph\":\"i\",\"s\":\"t\",\"pid\":7,\"tid\":8,"
		"\"ts\":12},\n"
		"{\"name\":\"outer\",\"cat\":\"c\",\"ph\":\"E\",\"pid\":7,\"tid\":8,"
		"\"ts\":20},\n"
		"{\"name\":\"open\",\"ph\":\"B\",\"pid\":7,\"tid\":7,\"ts\":30},\n"
		"{\"name\":\"zero\",\"ph\":\"X\",\"pid\":7,\"tid\":7,\"ts\":31,"
		"\"dur\":0},\n"
		"{\"name\":\"pmark\",\"ph\":\"i\",\"s\":\"p\",\"pid\":7,\"tid\":7,"
		"\"ts\":32},\n"
		"{\"name\":\"gmark\",\"ph\":\"i\",\"s\":\"g\",\"pid\":7,\"tid\":7,"
		"\"ts\":33},\n"
		"{\"name\":\"req\",\"cat\":\"net\",\"ph\":\"b\",\"id\":1,\"pid\":7,"
		"\"tid\":8,\"ts\":40},\n"
		"{\"name\":\"req\",\"cat\":\"net\",\"ph\":\"b\",\"id\":2,\"pid\":7,"
		"\"tid\":8,\"ts\":41},\n"
		"{\"name\":\"req\",\"cat\":\"net\",\"ph\":\"e\",\"id\":1,\"pid\":7,"
		"\"tid\":8,\"ts\":45},\n"
		"{\"name\":\"req\",\"cat\":\"net\",\"ph\":\"e\",\"id\":2,\"pid\":7,"
		"\"tid\":8,\"ts\":50},\n"
		"{\"name\":\"loc\",\"cat\":\"net\",\"ph\":\"b\",\"id2\":{\"local\":3},"
		"\"pid\":7,\"tid\":8,\"ts\":60},\n"
		"{\"name\":\"loc\",\"cat\":\"net\",\"ph\":\"e\",\"id2\":{\"local\":3},"
		"\"pid\":7,\"tid\":8,\"ts\":61.5},\n"
		"{\"name\":\"p\",\"cat\":\"n\",\"ph\":\"b\",\"id\":\"x\",\"pid\":7,"
		"\"tid\":8,\"ts\":80},\n"
		"{\"name\":\"c\",\"cat\":\"n\",\"ph\":\"b\",\"id\":\"x\",\"pid\":7,"
		"\"tid\":8,\"ts\":85},\n"
		"{\"name\":\"z\",\"cat\":\"n\",\"ph\":\"b\",\"id\":\"x\",\"pid\":7,"
		"\"tid\":8,\"ts\":86},\n"
		"{\"name\":\"z\",\"cat\":\"n\",\"ph\":\"e\",\"id\":\"x\",\"pid\":7,"
		"\"tid\":8,\"ts\":86},\n"
		"{\"name\":\"c\",\"cat\":\"n\",\"ph\":\"e\",\"id\":\"x\",\"pid\":7,"
		"\"tid\":8,\"ts\":90},\n"
		"{\"name\":\"p\",\"cat\":\"n\",\"ph\":\"e\",\"id\":\"x\",\"pid\":7,"
		"\"tid\":8,\"ts\":90},\n"
		"{\"name\":\"q\",\"cat\":\"n\",\"ph\":\"b\",\"id\":\"x\",\"pid\":7,"
		"\"tid\":8,\"ts\":90},\n"
		"{\"name\":\"q\",\"cat\":\"n\",\"ph\":\"e\",\"id\":\"x\",\"pid\":7,"
		"\"tid\":8,\"ts\":95},\n"
		"{\"name\":\"mem\",\"ph\":\"C\",\"pid\":7,\"tid\":8,\"ts\":70,"
		"\"args\":{\"value\":1,\"rss\":2.5}},\n"
		"{\"name\":\"q\",\"ph\":\"C\",\"id\":\"9\",\"pid\":9,\"tid\":9,"
		"\"ts\":71,\"args\":{\"depth\":-4}},\n"
		"{\"name\":\"send\",\"cat\":\"ipc\",\"ph\":\"X\",\"pid\":7,\"tid\":8,"
		"\"ts\":100,\"dur\":10},\n"
		"{\"name\":\"flow\",\"cat\":\"ipc\",\"ph\":\"s\",\"id\":5,\"pid\":7,"
		"\"tid\":8,\"ts\":101},\n"
		"{\"name\":\"recv\",\"cat\":\"ipc\",\"ph\":\"X\",\"pid\":7,\"tid\":7,"
		"\"ts\":200,\"dur\":10},\n"
		"{\"name\":\"flow\",\"cat\":\"ipc\",\"ph\":\"f\",\"bp\":\"e\",\"id\":5,"
		"\"pid\":7,\"tid\":7,\"ts\":205},\n"
		"{\"name\":\"A\",\"ph\":\"X\",\"pid\":7,\"tid\":8,\"ts\":400,"
		"\"dur\":10},\n"
		"{\"name\":\"f1\",\"cat\":\"x\",\"ph\":\"s\",\"id\":1,\"pid\":7,"
		"\"tid\":8,\"ts\":401},\n"
		"{\"name\":\"M\",\"ph\":\"X\",\"pid\":7,\"tid\":7,\"ts\":420,"
		"\"dur\":10},\n"
		"{\"name\":\"f1\",\"cat\":\"x\",\"ph\":\"f\",\"bp\":\"e\",\"id\":1,"
		"\"pid\":7,\"tid\":7,\"ts\":421},\n"
		"{\"name\":\"f2\",\"cat\":\"x\",\"ph\":\"s\",\"id\":2,\"pid\":7,"
		"\"tid\":7,\"ts\":422},\n"
		"{\"name\":\"B2\",\"ph\":\"X\",\"pid\":7,\"tid\":8,\"ts\":440,"
		"\"dur\":10},\n"
		"{\"name\":\"f2\",\"cat\":\"x\",\"ph\":\"f\",\"bp\":\"e\",\"id\":2,"
		"\"pid\":7,\"tid\":8,\"ts\":441},\n"
		"{\"name\":\"v2a\",\"ph\":\"X\",\"pid\":7,\"tid\":8,\"ts\":300,"
		"\"dur\":5,\"bind_id\":\"0x77\",\"flow_out\":true},\n"
		"{\"name\":\"v2b\",\"ph\":\"X\",\"pid\":7,\"tid\":7,\"ts\":310,"
		"\"dur\":5,\"bind_id\":\"0x77\",\"flow_in\":true}\n"
		"]\n";
	char *json = tmp_path();
	FILE *f = fopen(json, "w");
	cr_assert_not_null(f);
	fputs(s, f);
	fclose(f);
	size_t n = roundtrip(json);
	cr_assert(n >= 20, "only %zu rows", n);
	/* the flows themselves, in the first protobuf trace */
	char *pf = tmp_path();
	convert(json, pf);
	struct rows r;
	rows_of(pf, &r);
	const char *want[] = { "flow|100000|send|200000|recv",
			       "flow|300000|v2a|310000|v2b",
			       "flow|400000|A|420000|M",
			       "flow|420000|M|440000|B2" };
	for (size_t k = 0; k < 4; k++) {
		int found = 0;
		for (size_t i = 0; i < r.n; i++)
			found |= strcmp(r.r[i], want[k]) == 0;
		cr_assert(found, "missing %s", want[k]);
	}
	free_rows(&r);
	unlink(pf);
	free(pf);
	unlink(json);
	free(json);
}

/* Nested args (objects, arrays, dotted keys, empty values in arrays,
 * doubles that look integral or need trace_processor's own parse) keep
 * their args rows through JSON -> proto -> JSON -> proto, on B/E, X,
 * instants and async slices. */
Test(export_roundtrip, nested_args_survive)
{
	const char *s =
		"[\n"
		"{\"name\":\"x\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":1,"
		"\"dur\":5,\"args\":{\"a\":{\"b\":1,\"c\":[1,null,{},[],\"s\","
		"{\"d\":2.5},[[true]]]},\"e.f\":-2.0,\"g\":null,\"h\":{},"
		"\"pi\":3.14159265358979323846,\"t\":1e-7}},\n"
		"{\"name\":\"b\",\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":10,"
		"\"args\":{\"arr\":[1,2],\"k\":1}},\n"
		"{\"name\":\"b\",\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":12,"
		"\"args\":{\"arr\":[3],\"k\":{\"z\":0}}},\n"
		"{\"name\":\"i\",\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":2,"
		"\"ts\":20,\"args\":{\"l\":[{\"m\":\"n\"}]}},\n"
		"{\"name\":\"r\",\"cat\":\"c\",\"ph\":\"b\",\"id\":7,\"pid\":1,"
		"\"tid\":2,\"ts\":30,\"args\":{\"q\":[0.5]}},\n"
		"{\"name\":\"r\",\"cat\":\"c\",\"ph\":\"e\",\"id\":7,\"pid\":1,"
		"\"tid\":2,\"ts\":35,\"args\":{\"q\":[{}, 1]}}\n"
		"]\n";
	char *json = tmp_path();
	FILE *f = fopen(json, "w");
	cr_assert_not_null(f);
	fputs(s, f);
	fclose(f);
	size_t n = roundtrip(json);
	/* the rows compared include the args: check a few are there */
	char *pf = tmp_path();
	convert(json, pf);
	struct rows r;
	rows_of(pf, &r);
	const char *want[] = { "arg|1000|x|debug.a.c[4].d|4|2.5",
			       "arg|1000|x|debug.a.c[5][0][0]|1|1",
			       "arg|1000|x|debug.e.f|4|-2",
			       "arg|10000|b|debug.arr[2]|2|3",
			       "arg|30000|r|debug.q[2]|2|1" };
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		int found = 0;
		for (size_t i = 0; i < r.n; i++)
			found |= strcmp(r.r[i], want[k]) == 0;
		cr_assert(found, "missing %s", want[k]);
	}
	cr_assert(n > 10);
	free_rows(&r);
	unlink(pf);
	free(pf);
	unlink(json);
	free(json);
}

/* The export writes a flow step (a slice both entered and left by one flow)
 * as v2 "flow_in":true,"flow_out":true, which trace_processor's JSON parser
 * reads as FlowTracker::Step (json_trace_parser.cc MaybeAddFlow). The
 * emitter must give the same rows: S -> D and D -> R, not a D -> D loop. */
Test(export_roundtrip, v2_flow_in_and_out_on_one_event_is_a_step)
{
	const char *s =
		"[{\"name\":\"S\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":10,"
		"\"dur\":5,\"bind_id\":\"0x9\",\"flow_out\":true},\n"
		"{\"name\":\"D\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":20,"
		"\"dur\":5,\"bind_id\":\"0x9\",\"flow_in\":true,\"flow_out\":true},\n"
		"{\"name\":\"R\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":30,"
		"\"dur\":5,\"bind_id\":\"0x9\",\"flow_in\":true}]\n";
	char *json = tmp_path(), *pf = tmp_path();
	FILE *f = fopen(json, "w");
	cr_assert_not_null(f);
	fputs(s, f);
	fclose(f);
	convert(json, pf);
	struct rows r;
	rows_of(pf, &r);
	size_t flows = 0;
	int sd = 0, dr = 0;
	for (size_t i = 0; i < r.n; i++) {
		if (strncmp(r.r[i], "flow|", 5) != 0)
			continue;
		flows++;
		sd |= strcmp(r.r[i], "flow|10000|S|20000|D") == 0;
		dr |= strcmp(r.r[i], "flow|20000|D|30000|R") == 0;
	}
	cr_assert(sd && dr && flows == 2,
		  "emitter: a v2 event with flow_in and flow_out must be a flow "
		  "step (write the id in flow_ids only, not also in "
		  "terminating_flow_ids); got %zu flow rows", flows);
	free_rows(&r);
	unlink(json);
	unlink(pf);
	free(json);
	free(pf);
}


Test(export_roundtrip, corpus_chrome_cases)
{
	char dir[512];
	ptw_test_corpus_dir_or_skip(dir, sizeof(dir));
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "cannot open corpus directory %s", dir);
	struct dirent *de;
	int cases = 0;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "chrome_", 7) != 0)
			continue;
		char in[1024];
		snprintf(in, sizeof(in), "%s/%s/input.json", dir, de->d_name);
		cr_assert(roundtrip(in) > 0, "%s", in);
		cases++;
	}
	closedir(d);
	cr_assert(cases >= 1);
}

/* Equal timestamps: a zero-length slice (an instant in the protobuf)
 * before a slice at its ts stays its sibling, instants stack, an instant
 * at its parent's end stays inside (Perfetto's diff test
 * test_same_ts_zero_duration_slice_then_begin_end_slice_unnesting and
 * neighbours): the JSON export is read in the protobuf's order. */
Test(export_roundtrip, equal_timestamps_keep_their_depths)
{
	static const char *const src[] = {
		"[{\"name\":\"Slice 1\",\"ph\":\"X\",\"ts\":1000,\"dur\":0,"
		"\"pid\":1,\"tid\":1},"
		"{\"name\":\"Slice 2\",\"ph\":\"B\",\"ts\":1000,\"pid\":1,"
		"\"tid\":1},"
		"{\"name\":\"Slice 2\",\"ph\":\"E\",\"ts\":1100,\"pid\":1,"
		"\"tid\":1}]\n",
		"[{\"name\":\"a\",\"ph\":\"i\",\"s\":\"t\",\"ts\":5,\"pid\":1,"
		"\"tid\":1},"
		"{\"name\":\"b\",\"ph\":\"i\",\"s\":\"t\",\"ts\":5,\"pid\":1,"
		"\"tid\":1},"
		"{\"name\":\"c\",\"ph\":\"B\",\"ts\":5,\"pid\":1,\"tid\":1},"
		"{\"name\":\"d\",\"ph\":\"X\",\"dur\":0,\"ts\":5,\"pid\":1,"
		"\"tid\":1},"
		"{\"name\":\"e\",\"ph\":\"B\",\"ts\":5,\"pid\":1,\"tid\":1},"
		"{\"ph\":\"E\",\"ts\":5,\"pid\":1,\"tid\":1},"
		"{\"ph\":\"E\",\"ts\":6,\"pid\":1,\"tid\":1}]\n",
	};
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		char *json = tmp_path();
		FILE *f = fopen(json, "w");
		cr_assert_not_null(f);
		fputs(src[i], f);
		cr_assert_eq(fclose(f), 0);
		cr_assert_gt(roundtrip(json), 1);
		unlink(json);
		free(json);
	}
}
