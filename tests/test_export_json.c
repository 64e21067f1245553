/* test_export_json.c - protobuf trace -> Chrome JSON: every kind of row
 * comes back as the JSON event trace_processor turns into the same row.
 * Traces are written with the writer, exported, and the JSON is read back
 * with the streaming reader and compared field by field.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "test_convert_json.h"

struct jev {
	char ph, scope, bp;
	char name[64], cat[32], id_str[32], bind_id[32];
	uint32_t pid, tid, flags;
	int64_t ts, dur;
	uint32_t n_args;
	struct {
		char key[16];
		enum ptw_cv_val_type type;
		int64_t i;
		double d;
		int b;
		char s[32];
	} args[4];
};

struct jevs {
	struct jev e[256];
	size_t n;
};

static void cpy(char *dst, size_t cap, struct ptw_cv_str s)
{
	snprintf(dst, cap, "%.*s", s.p ? (int)s.n : 0, s.p ? s.p : "");
}

static int keep(void *ctx, const struct ptw_cv_event *ev, struct ptw_error *err)
{
	(void)err;
	struct jevs *j = ctx;
	cr_assert(j->n < 256);
	struct jev *e = &j->e[j->n++];
	memset(e, 0, sizeof(*e));
	e->ph = ev->ph;
	e->scope = ev->scope;
	e->bp = ev->bp;
	cpy(e->name, sizeof(e->name), ev->name);
	cpy(e->cat, sizeof(e->cat), ev->cat);
	cpy(e->id_str, sizeof(e->id_str), ev->id_str);
	cpy(e->bind_id, sizeof(e->bind_id), ev->bind_id);
	e->pid = ev->pid;
	e->tid = ev->tid;
	e->flags = ev->flags;
	e->ts = ev->ts_ns;
	e->dur = ev->dur_ns;
	e->n_args = ev->n_args;
	for (uint32_t i = 0; i < ev->n_args && i < 4; i++) {
		cpy(e->args[i].key, sizeof(e->args[i].key), ev->args[i].key);
		e->args[i].type = ev->args[i].type;
		e->args[i].i = ev->args[i].i;
		e->args[i].d = ev->args[i].d;
		e->args[i].b = ev->args[i].b;
		cpy(e->args[i].s, sizeof(e->args[i].s), ev->args[i].s);
	}
	return 0;
}

static const struct jev *find(const struct jevs *j, char ph, const char *name)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->e[i].ph == ph && strcmp(j->e[i].name, name) == 0)
			return &j->e[i];
	cr_assert_fail("no '%c' event named '%s'", ph, name);
	return NULL;
}

/* The duration of the slice a thread's B begins: up to the E that closes
 * it (the E's close the innermost open B, in file order); -1: none. */
static int64_t b_dur(const struct jevs *j, const struct jev *b)
{
	int open = 0;
	for (size_t i = (size_t)(b - j->e); i < j->n; i++) {
		const struct jev *e = &j->e[i];
		if (e->pid != b->pid || e->tid != b->tid)
			continue;
		if (e->ph == 'B')
			open++;
		else if (e->ph == 'E' && --open == 0)
			return e->ts - b->ts;
	}
	return -1;
}

static size_t count_ph(const struct jevs *j, char ph)
{
	size_t n = 0;
	for (size_t i = 0; i < j->n; i++)
		n += j->e[i].ph == ph;
	return n;
}

static char *tmp_path(const char *suffix)
{
	char *p = malloc(64);
	snprintf(p, 64, "/tmp/test_export_%d_XXXXXX", (int)getpid());
	int fd = mkstemp(p);
	cr_assert(fd >= 0);
	close(fd);
	(void)suffix;
	return p;
}

/* Exports 'pf' and reads the JSON back. */
static void export_and_read(const char *pf, struct jevs *j, char **json_out)
{
	char *json = tmp_path("json");
	FILE *f = fopen(json, "w");
	cr_assert_not_null(f);
	struct ptw_error err = { 0 };
	int rc = ptw_cv_export_json(pf, f, &err);
	cr_assert_eq(rc, 0, "export: %s", err.msg);
	cr_assert_eq(fclose(f), 0);
	struct ptw_cv_json_read_stats st;
	j->n = 0;
	rc = ptw_cv_json_read(json, NULL, keep, j, &st, &err);
	cr_assert_eq(rc, 0, "reading the export: %s", err.msg);
	cr_assert_eq(st.cut, PTW_CV_JSON_COMPLETE);
	cr_assert_eq(st.form, PTW_CV_JSON_FORM_ARRAY);
	if (json_out)
		*json_out = json;
	else {
		unlink(json);
		free(json);
	}
}

static void build_trace(const char *path, int compress)
{
	struct ptw_writer_options o = { .compress = compress };
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t P = ptw_writer_add_process_track(w, 10, "proc");
	uint64_t T1 = ptw_writer_add_thread_track(w, 10, 11, "worker");
	uint64_t T0 = ptw_writer_add_thread_track(w, 10, 10, NULL);
	uint64_t G = ptw_writer_add_track(w, "gmarks", 0, -1);
	uint64_t A = ptw_writer_add_track(w, "async", 0, -1);
	uint64_t AL = ptw_writer_add_track(w, "local async", P, -1);
	uint64_t C1 = ptw_writer_add_counter_track(w, "mem value", NULL, P, -1);
	uint64_t C2 = ptw_writer_add_counter_track(w, "withid id: 7 value", NULL,
						   P, -1);
	uint64_t C3 = ptw_writer_add_counter_track(w, "my counter rx", NULL, P,
						   -1);
	cr_assert(P && T1 && T0 && G && A && AL && C1 && C2 && C3);
	struct ptw_seq *s = ptw_writer_sim_seq(w);

	struct ptw_arg a1[] = {
		{ .name = "n", .type = PTW_ARG_TYPE_INT, .v.i = -7 },
		{ .name = "s", .type = PTW_ARG_TYPE_STRING, .v.s = "q\"uote\n" },
		{ .name = "d", .type = PTW_ARG_TYPE_DOUBLE, .v.d = 2.5 },
	};
	struct ptw_arg a2[] = { { .name = "ok", .type = PTW_ARG_TYPE_BOOL, .v.b = 1 } };
	uint64_t flow = 5;
	struct ptw_event e = { .track = T1, .ts = 1000125, .category = "demo",
			       .name = "outer", .args = a1, .n_args = 3 };
	cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
	e = (struct ptw_event){ .track = T1, .ts = 1500000, .category = "demo",
				.name = "inner", .flow_ids = &flow,
				.n_flow_ids = 1 };
	cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
	e = (struct ptw_event){ .track = T1, .ts = 1600000, .name = "mark" };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = T1, .ts = 2000000 };
	cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
	e = (struct ptw_event){ .track = T1, .ts = 3000000, .args = a2,
				.n_args = 1 };
	cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
	e = (struct ptw_event){ .track = T0, .ts = 2500000, .name = "recv",
				.terminating_flow_ids = &flow,
				.n_terminating_flow_ids = 1 };
	cr_assert_eq(ptw_seq_slice_complete(s, &e, 100000), 0);
	e = (struct ptw_event){ .track = T0, .ts = 5000000, .name = "zero" };
	cr_assert_eq(ptw_seq_slice_complete(s, &e, 0), 0);
	e = (struct ptw_event){ .track = T0, .ts = 6000000, .name = "never" };
	cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
	e = (struct ptw_event){ .track = P, .ts = 700000, .name = "pmark" };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = G, .ts = 800000, .name = "gmark" };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = A, .ts = 1000000, .name = "a1",
				.category = "net" };
	cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
	e = (struct ptw_event){ .track = A, .ts = 1100000, .name = "a2",
				.category = "net" };
	cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
	e = (struct ptw_event){ .track = A, .ts = 1150000, .name = "astep" };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	e = (struct ptw_event){ .track = A, .ts = 1200000 };
	cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
	e = (struct ptw_event){ .track = A, .ts = 1300000 };
	cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
	e = (struct ptw_event){ .track = AL, .ts = 50000, .name = "l1" };
	cr_assert_eq(ptw_seq_slice_complete(s, &e, 10000), 0);
	cr_assert_eq(ptw_seq_counter_int(s, C1, 100000, 5), 0);
	cr_assert_eq(ptw_seq_counter_double(s, C1, 200000, 2.5), 0);
	cr_assert_eq(ptw_seq_counter_int(s, C2, 300000, 3), 0);
	cr_assert_eq(ptw_seq_counter_double(s, C3, 400000, -1.25), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
}

static void check_export(const struct jevs *j)
{
	/* names */
	const struct jev *m = find(j, 'M', "process_name");
	cr_assert_eq(m->pid, 10);
	cr_assert_str_eq(m->args[0].s, "proc");
	m = find(j, 'M', "thread_name");
	cr_assert_eq(m->tid, 11);
	cr_assert_str_eq(m->args[0].key, "name");
	cr_assert_str_eq(m->args[0].s, "worker");
	cr_assert_eq(count_ph(j, 'M'), 2);

	/* thread slices: B and E with exact ns, args of begin and end */
	const struct jev *x = find(j, 'B', "outer");
	cr_assert_eq(x->ts, 1000125);
	cr_assert_eq(b_dur(j, x), 3000000 - 1000125);
	cr_assert_str_eq(x->cat, "demo");
	cr_assert_eq(x->pid, 10);
	cr_assert_eq(x->tid, 11);
	cr_assert_eq(x->n_args, 4);
	cr_assert_str_eq(x->args[0].key, "n");
	cr_assert_eq(x->args[0].type, PTW_CV_VAL_INT);
	cr_assert_eq(x->args[0].i, -7);
	cr_assert_str_eq(x->args[1].s, "q\"uote\n");
	cr_assert_eq(x->args[2].type, PTW_CV_VAL_DOUBLE);
	cr_assert_eq(x->args[2].d, 2.5);
	cr_assert_str_eq(x->args[3].key, "ok");
	cr_assert_eq(x->args[3].type, PTW_CV_VAL_BOOL);
	cr_assert_eq(x->args[3].b, 1);

	/* flows: v2 bind_id on both slices, renumbered from 2^63 (the
	 * JSON import numbers v1 flows 0, 1, ... in the bind id space) */
	x = find(j, 'B', "inner");
	cr_assert_eq(b_dur(j, x), 500000);
	cr_assert_str_eq(x->bind_id, "0x8000000000000000");
	cr_assert_eq(x->flags & (PTW_CV_FLOW_OUT | PTW_CV_FLOW_IN),
		     PTW_CV_FLOW_OUT);
	x = find(j, 'B', "recv");
	cr_assert_eq(x->tid, 10);
	cr_assert_eq(b_dur(j, x), 100000);
	cr_assert_str_eq(x->bind_id, "0x8000000000000000");
	cr_assert_eq(x->flags & (PTW_CV_FLOW_OUT | PTW_CV_FLOW_IN),
		     PTW_CV_FLOW_IN);
	x = find(j, 'B', "zero");
	cr_assert_eq(b_dur(j, x), 0);
	x = find(j, 'B', "never");
	cr_assert_eq(x->ts, 6000000);
	cr_assert_eq(b_dur(j, x), -1);
	cr_assert_eq(count_ph(j, 'X'), 0);
	cr_assert_eq(count_ph(j, 'E'), 4);

	/* instants by scope */
	x = find(j, 'i', "mark");
	cr_assert_eq(x->scope, 't');
	cr_assert_eq(x->tid, 11);
	x = find(j, 'i', "pmark");
	cr_assert_eq(x->scope, 'p');
	cr_assert_eq(x->pid, 10);
	x = find(j, 'i', "gmark");
	cr_assert_eq(x->scope, 'g');
	cr_assert_eq(x->ts, 800000);

	/* async: b/e pairs with one id per track, n for instants there */
	const struct jev *b1 = find(j, 'b', "a1"), *b2 = find(j, 'b', "a2");
	const struct jev *e1 = find(j, 'e', "a1"), *e2 = find(j, 'e', "a2");
	cr_assert_eq(b1->flags & PTW_CV_HAS_ID, PTW_CV_HAS_ID);
	cr_assert_str_eq(b1->id_str, b2->id_str);
	cr_assert_str_eq(b1->id_str, e1->id_str);
	cr_assert_str_eq(b1->cat, "net");
	cr_assert_str_eq(e2->cat, "net");
	cr_assert_eq(e1->ts, 1300000);
	cr_assert_eq(e2->ts, 1200000);
	cr_assert_eq(b1->flags & PTW_CV_ID2_LOCAL, 0);
	x = find(j, 'n', "astep");
	cr_assert_str_eq(x->id_str, b1->id_str);
	const struct jev *l = find(j, 'b', "l1");
	cr_assert_eq(l->flags & PTW_CV_ID2_LOCAL, PTW_CV_ID2_LOCAL);
	cr_assert_eq(l->pid, 10);
	cr_assert_str_neq(l->id_str, b1->id_str);
	cr_assert_eq(find(j, 'e', "l1")->ts, 60000);

	/* counters: track name = name + " " + key */
	cr_assert_eq(count_ph(j, 'C'), 4);
	for (size_t i = 0; i < j->n; i++) {
		const struct jev *c = &j->e[i];
		if (c->ph != 'C')
			continue;
		cr_assert_eq(c->pid, 10);
		cr_assert_eq(c->n_args, 1);
		char track[128];
		snprintf(track, sizeof(track), "%s %s", c->name, c->args[0].key);
		if (c->ts == 100000) {
			cr_assert_str_eq(track, "mem value");
			cr_assert_eq(c->args[0].type, PTW_CV_VAL_INT);
			cr_assert_eq(c->args[0].i, 5);
		} else if (c->ts == 200000) {
			cr_assert_str_eq(track, "mem value");
			cr_assert_eq(c->args[0].d, 2.5);
		} else if (c->ts == 300000) {
			cr_assert_str_eq(track, "withid id: 7 value");
			cr_assert_eq(c->args[0].i, 3);
		} else {
			cr_assert_str_eq(track, "my counter rx");
			cr_assert_eq(c->args[0].d, -1.25);
		}
	}
}

Test(export_json, every_row_kind_comes_back)
{
	char *pf = tmp_path("pftrace");
	build_trace(pf, 0);
	struct jevs *j = calloc(1, sizeof(*j));
	char *json;
	export_and_read(pf, j, &json);
	check_export(j);
	/* the file is an array with one event per line */
	FILE *f = fopen(json, "r");
	char line[4096];
	cr_assert_not_null(fgets(line, sizeof(line), f));
	cr_assert_str_eq(line, "[\n");
	size_t lines = 0;
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	cr_assert_eq(lines, j->n + 1);
	unlink(json);
	free(json);
	unlink(pf);
	free(pf);
	free(j);
}

Test(export_json, compressed_traces_export_the_same)
{
	char *pf = tmp_path("pftrace");
	build_trace(pf, 1);
	struct jevs *j = calloc(1, sizeof(*j));
	export_and_read(pf, j, NULL);
	check_export(j);
	unlink(pf);
	free(pf);
	free(j);
}

Test(export_json, strings_are_escaped_and_utf8_sanitised)
{
	char *pf = tmp_path("pftrace");
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(pf, NULL, &err);
	cr_assert_not_null(w);
	uint64_t T = ptw_writer_add_thread_track(w, 1, 2, "t\x01\\");
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_event e = { .track = T, .ts = 1, .name = "caf\xc3\xa9 \xff\t" };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0);
	struct jevs *j = calloc(1, sizeof(*j));
	export_and_read(pf, j, NULL);
	const struct jev *x = find(j, 'i', "caf\xc3\xa9 \xef\xbf\xbd\t");
	cr_assert_eq(x->ts, 1); /* 0.001 us */
	x = find(j, 'M', "thread_name");
	cr_assert_str_eq(x->args[0].s, "t\x01\\");
	unlink(pf);
	free(pf);
	free(j);
}

Test(export_json, errors_are_reported)
{
	struct ptw_error err;
	FILE *f = tmpfile();
	cr_assert_eq(ptw_cv_export_json("/nonexistent.pftrace", f, &err),
		     PTW_ERR_IO);
	cr_assert_eq(ptw_cv_export_json(NULL, f, &err), PTW_ERR_INVALID);
	/* not a protobuf trace */
	char *bad = tmp_path("x");
	FILE *b = fopen(bad, "w");
	fputs("[{\"ph\":\"B\"}]", b);
	fclose(b);
	int rc = ptw_cv_export_json(bad, f, &err);
	cr_assert(rc < 0);
	cr_assert_str_neq(err.msg, "");
	fclose(f);
	unlink(bad);
	free(bad);
	/* a full disk */
	char *pf = tmp_path("pftrace");
	build_trace(pf, 0);
	FILE *full = fopen("/dev/full", "w");
	if (full) {
		rc = ptw_cv_export_json(pf, full, &err);
		cr_assert_eq(rc, PTW_ERR_IO, "%s", err.msg);
		fclose(full);
	}
	unlink(pf);
	free(pf);
}

/* Global events (a g instant, global async b/e) are exported with the
 * pid and tid of a thread of the trace, not pid 0, which would make
 * trace_processor's JSON import create a process 0 and a thread 0 the
 * original did not have, and a thread without slices of its own gets an
 * M event (checked with trace_processor v58.2: the process and thread
 * tables of the original JSON and of the round trip are the same). */
Test(export_json, global_events_make_no_process_0)
{
	static const char src[] =
		"[{\"name\":\"T\",\"ph\":\"X\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":2},"
		"{\"name\":\"G\",\"ph\":\"i\",\"s\":\"g\",\"ts\":1,\"pid\":1,\"tid\":2},"
		"{\"name\":\"A\",\"cat\":\"c\",\"ph\":\"b\",\"ts\":1,\"pid\":1,"
		"\"tid\":2,\"id\":7},"
		"{\"name\":\"A\",\"cat\":\"c\",\"ph\":\"e\",\"ts\":5,\"pid\":1,"
		"\"tid\":2,\"id\":7},"
		"{\"name\":\"L\",\"ph\":\"n\",\"ts\":6,\"pid\":1,\"tid\":3,"
		"\"id2\":{\"local\":1}}]";
	char *pf = tmp_path("pftrace");
	ptw_test_convert_json(pf, src, 0, NULL);
	struct jevs *j = calloc(1, sizeof(*j));
	cr_assert_not_null(j);
	export_and_read(pf, j, NULL);
	cr_assert_gt(j->n, 3);
	for (size_t i = 0; i < j->n; i++) {
		cr_expect_eq(j->e[i].pid, 1, "event %zu (%c %s): pid %u", i,
			     j->e[i].ph, j->e[i].name, j->e[i].pid);
		if (j->e[i].flags & PTW_CV_HAS_TID)
			cr_expect(j->e[i].tid >= 1 && j->e[i].tid <= 3);
	}
	/* thread 3 has no slice of its own: an M event keeps it */
	cr_expect_eq(find(j, 'M', "thread_exists")->tid, 3);
	cr_expect_eq(find(j, 'i', "G")->tid, 2);
	cr_expect_eq(find(j, 'b', "A")->tid, 2);
	free(j);
	unlink(pf);
	free(pf);
}

/* A Chrome X of whole microseconds is converted into one complete event
 * (legacy_event phase 'X'), which has no END to place an E at: the export
 * writes X events (with the slice's dur and args) and an X of a fraction
 * of a microsecond, converted into a BEGIN and an END, also as an X. */
Test(export_json, one_event_complete_slices_come_back_as_x)
{
	static const char src[] =
		"[{\"name\":\"whole\",\"cat\":\"c\",\"ph\":\"X\",\"ts\":1.5,"
		"\"dur\":10,\"pid\":1,\"tid\":2,\"args\":{\"k\":3}},"
		"{\"name\":\"frac\",\"ph\":\"X\",\"ts\":2,\"dur\":2.25,"
		"\"pid\":1,\"tid\":2},"
		"{\"name\":\"b\",\"ph\":\"B\",\"ts\":5,\"pid\":1,\"tid\":2},"
		"{\"name\":\"b\",\"ph\":\"E\",\"ts\":6,\"pid\":1,\"tid\":2}]";
	char *pf = tmp_path("pftrace");
	ptw_test_convert_json(pf, src, 0, NULL);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(pf, 0);
	size_t n, complete = 0;
	const struct ptw_trace_event *e = ptw_trace_events(t, &n);
	for (size_t i = 0; i < n; i++)
		complete += e[i].type == PTW_TRACE_COMPLETE;
	cr_expect_eq(complete, 1, "only the whole-microsecond X is one event");
	ptw_trace_free(t);
	struct jevs *j = calloc(1, sizeof(*j));
	cr_assert_not_null(j);
	export_and_read(pf, j, NULL);
	const struct jev *w = find(j, 'X', "whole");
	cr_expect_eq(w->ts, 1500);
	cr_expect_eq(w->dur, 10000);
	cr_expect_str_eq(w->cat, "c");
	cr_assert_eq(w->n_args, 1);
	cr_expect_str_eq(w->args[0].key, "k");
	cr_expect_eq(w->args[0].i, 3);
	const struct jev *f = find(j, 'X', "frac");
	cr_expect_eq(f->ts, 2000);
	cr_expect_eq(f->dur, 2250);
	cr_expect_eq(find(j, 'X', "b")->dur, 1000);
	free(j);
	unlink(pf);
	free(pf);
}
