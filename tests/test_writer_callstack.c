/* test_writer_callstack.c - callstacks on events (struct ptw_callstack):
 * interned (frames, mappings, build ids, rel_pc) and inline, as
 * trace_processor shows them, and what a repeated stack costs.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "support/tp_stack.h"
#include "reader/trace_read.h"

static const uint8_t bid_main[] = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02};
static const struct ptw_mapping map_main = {
	.path = "/usr/bin/app", .build_id = bid_main,
	.build_id_len = sizeof(bid_main), .start = 0x400000, .end = 0x500000,
	.exact_offset = 0x1000, .load_bias = 0,
};
static const struct ptw_mapping map_lib = {
	.path = "/usr/lib/libx.so", .start = 0x7f0000000000,
	.end = 0x7f0000010000,
};

/* main > work > leaf (two objects), main > other (no mapping) */
static const struct ptw_frame deep[] = {
	{.function = "main", .mapping = &map_main, .rel_pc = 0x1234},
	{.function = "work", .mapping = &map_main, .rel_pc = 0x2345},
	{.function = "leaf", .mapping = &map_lib, .rel_pc = 0x42},
};
static const struct ptw_frame shallow[] = {
	{.function = "main", .mapping = &map_main, .rel_pc = 0x1234},
	{.function = "other"},
};
static const struct ptw_callstack cs_deep = {deep, 3, 0};
static const struct ptw_callstack cs_shallow = {shallow, 2, 0};

static struct ptw_writer *open_w(const char *path, uint64_t *track,
				 uint32_t checkpoint)
{
	struct ptw_error err;
	struct ptw_writer_options o = {.checkpoint_packets = checkpoint};
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	*track = ptw_writer_add_thread_track(w, 10, 11, "t");
	cr_assert_neq(*track, 0);
	return w;
}

Test(writer_callstack, interned_stacks_show_their_frames_in_order)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "wcs");
	uint64_t tr;
	struct ptw_writer *w = open_w(path, &tr, 0);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_event ev = {.track = tr, .ts = 100, .name = "outer",
			       .callstack = &cs_deep};
	cr_assert_eq(ptw_seq_slice_begin(s, &ev), 0, "%s",
		     ptw_writer_error(w)->msg);
	ev = (struct ptw_event){.track = tr, .ts = 110, .name = "mark",
				.callstack = &cs_shallow};
	cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	ev = (struct ptw_event){.track = tr, .ts = 120, .name = "again",
				.callstack = &cs_deep};
	cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	ev = (struct ptw_event){.track = tr, .ts = 200, .callstack = &cs_shallow};
	cr_assert_eq(ptw_seq_slice_end(s, &ev), 0);
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	ptw_trace_free(ptw_test_load_checked_or_fail(path, 0));
	char rows[1024];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0) {
		cr_assert_str_eq(rows, "outer:main>work>leaf;"
				       "outer/end:main>other;"
				       "mark:main>other;"
				       "again:main>work>leaf;");
		/* mappings keep what symbolizes an unnamed frame later */
		char m[1024];
		ptw_test_tp_rows(path,
				 "select f.name, f.rel_pc, m.name, m.build_id,"
				 " m.start, m.end, m.exact_offset from"
				 " stack_profile_frame f join stack_profile_mapping m"
				 " on m.id = f.mapping where m.name != ''"
				 " order by f.name",
				 m, sizeof(m));
		cr_assert_str_eq(m, "leaf,66,/usr/lib/libx.so,,"
				    "139637976727552,139637976793088,0;"
				    "main,4660,/usr/bin/app,deadbeef0102,"
				    "4194304,5242880,4096;"
				    "work,9029,/usr/bin/app,deadbeef0102,"
				    "4194304,5242880,4096;");
	}
	unlink(path);
}

Test(writer_callstack, inline_stacks_show_functions_files_and_lines)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "wcsi");
	uint64_t tr;
	struct ptw_writer *w = open_w(path, &tr, 0);
	static const struct ptw_frame fr[] = {
		{.function = "main", .file = "main.c", .line = 10},
		{.function = "parse", .file = "parse.c", .line = 77},
		{.function = "bad\xff", .line = 3},
	};
	struct ptw_callstack cs = {fr, 3, PTW_CS_INLINE};
	struct ptw_event ev = {.track = tr, .ts = 100, .name = "i",
			       .callstack = &cs};
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), 0);
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	ptw_trace_free(ptw_test_load_checked_or_fail(path, 0));
	char rows[512];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0) {
		cr_assert_str_eq(rows, "i:main>parse>bad\xef\xbf\xbd;");
		ptw_test_tp_rows(path,
				 "select source_file, line_number from"
				 " stack_profile_symbol order by line_number",
				 rows, sizeof(rows));
		cr_assert_str_eq(rows, "[NULL],3;main.c,10;parse.c,77;");
	}
	unlink(path);
}

static off_t write_n(const char *path, int n, const struct ptw_callstack *cs)
{
	uint64_t tr;
	struct ptw_writer *w = open_w(path, &tr, 0);
	for (int i = 0; i < n; i++) {
		struct ptw_event ev = {.track = tr, .ts = 100 + (uint64_t)i,
				       .name = "e", .callstack = cs};
		cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), 0);
	}
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	unlink(path);
	return st.st_size;
}

/* After its first event, a stack costs its callstack_iid field: a
 * two-byte tag (field 56) and a one-byte iid. */
Test(writer_callstack, a_repeated_stack_costs_three_bytes)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "wcsb");
	off_t first = write_n(path, 1, &cs_deep) - write_n(path, 1, NULL);
	off_t all = write_n(path, 1000, &cs_deep) - write_n(path, 1000, NULL);
	cr_assert_eq(all - first, 3 * 999, "%lld bytes for 999 repeats",
		     (long long)(all - first));
}

/* A checkpoint forgets every iid: the stack is interned again after it. */
Test(writer_callstack, stacks_are_interned_again_after_a_checkpoint)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "wcsc");
	uint64_t tr;
	struct ptw_writer *w = open_w(path, &tr, 3);
	for (int i = 0; i < 7; i++) {
		struct ptw_event ev = {.track = tr, .ts = 100 + (uint64_t)i,
				       .name = i % 2 ? "b" : "a",
				       .callstack = i % 2 ? &cs_shallow : &cs_deep};
		cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), 0);
	}
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	ptw_trace_free(ptw_test_load_checked_or_fail(path, 0));
	char rows[1024];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0)
		cr_assert_str_eq(rows, "a:main>work>leaf;b:main>other;"
				       "a:main>work>leaf;b:main>other;"
				       "a:main>work>leaf;b:main>other;"
				       "a:main>work>leaf;");
	unlink(path);
}

Test(writer_callstack, bad_stacks_are_refused_and_write_nothing)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "wcsx");
	uint64_t tr;
	struct ptw_writer *w = open_w(path, &tr, 0);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_callstack cs = {deep, PTW_MAX_FRAMES + 1, 0};
	struct ptw_event ev = {.track = tr, .ts = 1, .name = "x",
			       .callstack = &cs};
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	cs = (struct ptw_callstack){NULL, 2, 0};
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	struct ptw_mapping m = {.build_id_len = 65, .build_id = bid_main};
	struct ptw_frame f = {.function = "f", .mapping = &m};
	cs = (struct ptw_callstack){&f, 1, 0};
	cr_assert_eq(ptw_seq_instant(s, &ev), PTW_ERR_INVALID);
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_eq(st.events, 0);
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	unlink(path);
}

/* A stack table that reaches max_interned makes the next event a
 * checkpoint (as the string tables do): many distinct stacks stay right. */
Test(writer_callstack, full_stack_tables_checkpoint_and_stay_right)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "wcsf");
	struct ptw_error err;
	struct ptw_writer_options o = {.max_interned = 4};
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t tr = ptw_writer_add_thread_track(w, 10, 11, "t");
	char names[12][8], want[512] = "";
	for (int i = 0; i < 12; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		struct ptw_frame fr[2] = {{.function = "main"},
					  {.function = names[i]}};
		struct ptw_callstack cs = {fr, 2, 0};
		struct ptw_event ev = {.track = tr, .ts = 100 + (uint64_t)i,
				       .name = "e", .callstack = &cs};
		cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), 0);
		size_t n = strlen(want);
		snprintf(want + n, sizeof(want) - n, "e:main>%s;", names[i]);
	}
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_gt(st.checkpoints, 3, "%llu checkpoints",
		     (unsigned long long)st.checkpoints);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	ptw_trace_free(ptw_test_load_checked_or_fail(path, 0));
	char rows[1024];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0)
		cr_assert_str_eq(rows, want);
	unlink(path);
}
