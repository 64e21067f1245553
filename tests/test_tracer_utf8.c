/* test_tracer_utf8.c - names and strings over the tracer's limits (1024
 * bytes for run-time names and string arguments, 63 for thread names) are
 * cut at the last UTF-8 character boundary within the limit, so
 * trace_processor never stores a split character.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "reader/tp_model.h"
#include "reader/trace_read.h"
#include "lib/util/utf8.h"

/* 'lead' ASCII bytes, then "é" (C3 A9) repeated: the limit falls between
 * the two bytes of an "é" when lead + limit is odd. */
static void fill(char *buf, size_t lead, size_t total)
{
	memset(buf, 'a', lead);
	for (size_t i = lead; i + 1 < total; i += 2) {
		buf[i] = (char)0xC3;
		buf[i + 1] = (char)0xA9;
	}
	buf[total - 1] = '\0';
}

/* 1 if 's' is well-formed UTF-8 (lead bytes followed by their count of
 * continuation bytes). */
static int utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		int k = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1
			: (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
		if (k < 0)
			return 0;
		p++;
		for (int i = 0; i < k; i++, p++)
			if ((*p & 0xC0) != 0x80)
				return 0;
	}
	return 1;
}

Test(tracer_utf8, prefix_backs_off_to_a_character_start)
{
	cr_assert_eq(ptw_utf8_prefix("abc", 5), 3);
	cr_assert_eq(ptw_utf8_prefix("abcdef", 3), 3);
	cr_assert_eq(ptw_utf8_prefix("a\xC3\xA9", 2), 1);   /* a|C3 A9 */
	cr_assert_eq(ptw_utf8_prefix("a\xC3\xA9", 3), 3);
	cr_assert_eq(ptw_utf8_prefix("\xE2\x82\xAC" "x", 2), 0); /* € */
	cr_assert_eq(ptw_utf8_prefix("\xF0\x9F\x98\x80" "x", 3), 0);
	cr_assert_eq(ptw_utf8_prefix("\xF0\x9F\x98\x80" "x", 4), 4);
	char dst[4];
	ptw_utf8_copy(dst, sizeof(dst), "ab\xC3\xA9");
	cr_assert_str_eq(dst, "ab");
}

Test(tracer_utf8, long_names_args_and_thread_names_are_cut_between_characters)
{
	char path[128];
	snprintf(path, sizeof(path), "/tmp/ptw_test_tracer_utf8_%d.pftrace",
		 (int)getpid());
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	static char name[2000], arg[2000], tname[200];
	fill(name, 1023, sizeof(name)); /* byte 1024 is an "é"'s second */
	fill(arg, 1, sizeof(arg));
	fill(tname, 62, sizeof(tname));  /* byte 63 too */
	ptw_set_thread_name(tname);
	PTW_INSTANT_DYN("u", name);
	PTW_INSTANT_ARGS("u", "with arg", PTW_ARG_STR("s", arg));
	cr_assert_eq(ptw_stop(), 0);

	struct ptw_trace *t = ptw_trace_load_file(path, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	int seen_name = 0, seen_arg = 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].name && ev[i].name[0] == 'a' &&
		    strlen(ev[i].name) > 1000) {
			seen_name = 1;
			cr_assert_eq(strlen(ev[i].name), 1023);
			cr_assert(utf8_ok(ev[i].name));
		}
		if (ev[i].name && strcmp(ev[i].name, "with arg") == 0) {
			seen_arg = 1;
			cr_assert_eq(ev[i].n_args, 1);
			cr_assert_eq(strlen(ev[i].args[0].v.s), 1023);
			cr_assert(utf8_ok(ev[i].args[0].v.s));
		}
	}
	cr_assert(seen_name && seen_arg);
	struct ptw_tp_model *m = ptw_tp_model_build(t, &err);
	cr_assert_not_null(m);
	int seen_thread = 0;
	for (size_t i = 0; i < m->n_threads; i++) {
		if (m->threads[i].name && m->threads[i].name[0] == 'a') {
			seen_thread = 1;
			cr_assert_eq(strlen(m->threads[i].name), 62);
			cr_assert(utf8_ok(m->threads[i].name));
		}
	}
	cr_assert(seen_thread);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(path);
}
