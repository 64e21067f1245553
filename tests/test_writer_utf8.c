/* test_writer_utf8.c - strings that are not UTF-8 (a run-time name of the
 * tracer, PTW_BEGIN_DYN; any writer string) are written with each maximal
 * invalid subpart replaced by U+FFFD, as the Perfetto UI's TextDecoder
 * shows them and as `ptw-convert --to-json` writes them; trace_processor
 * itself would keep the raw bytes. Valid UTF-8 is written unchanged.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/utf8.h"
#include "ptw/tracer.h"
#include "ptw/writer.h"
#include "reader/tp_model.h"
#include "reader/trace_read.h"
#include "support/ptw_test.h"

/* A lone byte, a cut 3-byte character, a surrogate (3 subparts), then a
 * valid 4-byte character. */
#define BAD "caf\xc3\xa9 \xff|\xe2\x82|\xed\xa0\x80|\xf0\x9f\x98\x80"
#define FIXED                                                         \
	"caf\xc3\xa9 \xef\xbf\xbd|\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd" \
	"\xef\xbf\xbd|\xf0\x9f\x98\x80"

Test(writer_utf8, fix_replaces_maximal_subparts)
{
	static const struct {
		const char *in, *out;
	} c[] = {
		{ "plain ascii, longer than eight", "plain ascii, longer than eight" },
		{ BAD, FIXED },
		{ "\x80", "\xef\xbf\xbd" },
		{ "\xe0\x80", "\xef\xbf\xbd\xef\xbf\xbd" },      /* overlong */
		{ "\xf0\x9f\x98", "\xef\xbf\xbd" },              /* cut at end */
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				      "\xef\xbf\xbd" },          /* > U+10FFFF */
		{ "ok\xc3", "ok\xef\xbf\xbd" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char out[64];
		int fix;
		size_t n = strlen(c[i].in);
		size_t k = ptw_utf8_fixed_len(c[i].in, n, &fix);
		cr_assert_eq(k, strlen(c[i].out), "case %zu", i);
		cr_assert_eq(fix, strcmp(c[i].in, c[i].out) != 0, "case %zu", i);
		char *end = ptw_utf8_fix(out, c[i].in, n);
		cr_assert_eq((size_t)(end - out), k);
		*end = '\0';
		cr_assert_str_eq(out, c[i].out, "case %zu", i);
	}
}

static const struct ptw_trace_event *find_ev(const struct ptw_trace *t,
					     const char *name)
{
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	for (size_t i = 0; i < n; i++)
		if (ev[i].name && strcmp(ev[i].name, name) == 0)
			return &ev[i];
	return NULL;
}

/* Every kind of string the writer writes: event names and categories,
 * annotation names, interned and inline (long) string values, nested
 * names and values, track, thread and process names. */
Test(writer_utf8, writer_strings_are_fixed)
{
	char pf[256];
	ptw_test_tmp_path(pf, sizeof(pf), "utf8");
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(pf, NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t P = ptw_writer_add_process_track(w, 5, "p" BAD);
	uint64_t T = ptw_writer_add_thread_track(w, 5, 6, "t" BAD);
	uint64_t A = ptw_writer_add_track(w, "a" BAD, 0, -1);
	cr_assert(P && T && A);
	static char lng[600], lng_fixed[700];
	memset(lng, 'x', 500);
	strcpy(lng + 500, BAD);
	memset(lng_fixed, 'x', 500);
	strcpy(lng_fixed + 500, FIXED);
	struct ptw_arg kid = { .name = "n" BAD, .type = PTW_ARG_TYPE_STRING,
			       .v.s = "v" BAD };
	struct ptw_arg args[] = {
		{ .name = "k" BAD, .type = PTW_ARG_TYPE_STRING, .v.s = "s" BAD },
		{ .name = "long", .type = PTW_ARG_TYPE_STRING, .v.s = lng },
		{ .name = "d", .type = PTW_ARG_TYPE_DICT, .v.nested = { &kid, 1 } },
	};
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_event e = { .track = T, .ts = 10, .name = BAD,
			       .category = "c" BAD, .args = args, .n_args = 3 };
	cr_assert_eq(ptw_seq_instant(s, &e), 0, "%s", ptw_writer_error(w)->msg);
	e = (struct ptw_event){ .track = A, .ts = 20, .name = BAD };
	cr_assert_eq(ptw_seq_instant(s, &e), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	struct ptw_trace *t = ptw_trace_load_file(pf, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	const struct ptw_trace_event *ev = find_ev(t, FIXED);
	cr_assert_not_null(ev, "the name was not fixed");
	cr_assert_str_eq(ev->category, "c" FIXED);
	cr_assert_eq(ev->n_args, 3);
	cr_assert_str_eq(ev->args[0].name, "k" FIXED);
	cr_assert_str_eq(ev->args[0].v.s, "s" FIXED);
	cr_assert_str_eq(ev->args[1].v.s, lng_fixed);
	cr_assert_eq(ev->args[2].v.nested.n, 1);
	cr_assert_str_eq(ev->args[2].v.nested.items[0].name, "n" FIXED);
	cr_assert_str_eq(ev->args[2].v.nested.items[0].v.s, "v" FIXED);
	size_t nt;
	const struct ptw_trace_track *tr = ptw_trace_tracks(t, &nt);
	int seen = 0;
	for (size_t i = 0; i < nt; i++) {
		if (tr[i].uuid == A) {
			cr_assert_str_eq(tr[i].name, "a" FIXED);
			seen |= 1;
		}
	}
	cr_assert_eq(seen, 1);
	struct ptw_tp_model *m = ptw_tp_model_build(t, &err);
	cr_assert_not_null(m);
	cr_assert_eq(m->n_threads, 1);
	cr_assert_str_eq(m->threads[0].name, "t" FIXED);
	for (size_t i = 0; i < m->n_processes; i++)
		if (m->processes[i].pid == 5)
			cr_assert_str_eq(m->processes[i].name, "p" FIXED);
	/* the second use of the name found the same entry */
	size_t n_same = 0;
	for (size_t i = 0; i < m->n_slices; i++)
		n_same += m->slices[i].name &&
			  strcmp(m->slices[i].name, FIXED) == 0;
	cr_assert_eq(n_same, 2);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(pf);
}

/* The tracer's run-time names and thread names. */
Test(writer_utf8, tracer_dyn_names_are_fixed)
{
	char pf[256];
	ptw_test_tmp_path(pf, sizeof(pf), "utf8-tracer");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = pf;
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	char dyn[64];
	snprintf(dyn, sizeof(dyn), "%s", "b" BAD);
	ptw_set_thread_name("th\xff");
	PTW_BEGIN_DYN("u", dyn);
	snprintf(dyn, sizeof(dyn), "%s", "i" BAD);
	PTW_INSTANT_DYN("u", dyn);
	PTW_END("u");
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_trace *t = ptw_trace_load_file(pf, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_not_null(find_ev(t, "b" FIXED));
	cr_assert_not_null(find_ev(t, "i" FIXED));
	struct ptw_tp_model *m = ptw_tp_model_build(t, &err);
	cr_assert_not_null(m);
	int seen = 0;
	for (size_t i = 0; i < m->n_threads; i++)
		seen |= m->threads[i].name &&
			strcmp(m->threads[i].name, "th\xef\xbf\xbd") == 0;
	cr_assert(seen, "the thread name was not fixed");
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(pf);
}
