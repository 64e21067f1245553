/* test_writer_check.c - the writer's output passes the trace checker
 * (reader/trace_check.h, the rules of `ptw-dump --check`) in every
 * configuration: checkpoints, intern caps, backwards time, several
 * sequences, deflate, losses, truncation.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "ptw/writer.h"
#include "test_writer_util.h"
#include "reader/trace_check.h"
#include "reader/trace_read.h"

static void expect_check_ok(const uint8_t *b, size_t len, uint32_t flags,
			    const char *what)
{
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	struct ptw_trace *t = ptw_trace_load_mem(b, len, what, NULL, &err);
	cr_assert_not_null(t, "%s: load: %s", what, err.msg);
	int rc = ptw_trace_check(t, flags, &err);
	cr_assert_eq(rc, 0, "%s: %s", what, err.msg);
	ptw_trace_free(t);
}

/* Several sequences, backwards timestamps, every event kind. */
static uint8_t *write_scenario(const struct ptw_writer_options *o, int iters,
			       int mark_drop, size_t *len)
{
	char *path = tw_tmp_path();
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t proc = ptw_writer_add_process_track(w, 7, "p");
	uint64_t t1 = ptw_writer_add_thread_track(w, 7, 8, "a");
	uint64_t t2 = ptw_writer_add_thread_track(w, 7, 9, "b");
	uint64_t grp = ptw_writer_add_track(w, "group", proc, -1);
	uint64_t ch = ptw_writer_add_track(w, "child", grp, 1);
	uint64_t ci = ptw_writer_add_counter_track(w, "ci", NULL, proc, -1);
	uint64_t cd = ptw_writer_add_counter_track(w, "cd", "ms", t1, 0);
	struct ptw_seq *sim = ptw_writer_sim_seq(w);
	struct ptw_seq *wall = ptw_writer_wall_seq(w);
	struct ptw_seq *own = ptw_writer_add_seq(w, t2);
	cr_assert(proc && t1 && t2 && grp && ch && ci && cd && own);
	char name[24];
	for (int i = 0; i < iters; i++) {
		snprintf(name, sizeof(name), "n%d", i % 37);
		uint64_t base = 1000000 + (uint64_t)i * 1000;
		uint64_t fl = (uint64_t)i + 1;
		struct ptw_arg a[] = {
			{.name = name, .type = PTW_ARG_TYPE_STRING, .v.s = name},
			{.name = "d", .type = PTW_ARG_TYPE_DOUBLE, .v.d = i * 0.25},
		};
		struct ptw_event ev = {.track = t1, .ts = base, .name = name,
				       .category = i % 3 ? "x" : "y", .args = a,
				       .n_args = 2, .flow_ids = &fl, .n_flow_ids = 1};
		cr_assert_eq(ptw_seq_slice_begin(sim, &ev), 0);
		struct ptw_event in = {.track = t1, .ts = base + 10, .name = "in",
				       .flags = PTW_EV_STATIC_STRINGS};
		cr_assert_eq(ptw_seq_slice_complete(sim, &in, 100), 0);
		ev.ts = base + 500;
		ev.n_args = 0;
		ev.n_flow_ids = 0;
		cr_assert_eq(ptw_seq_slice_end(sim, &ev), 0);
		/* wall sequence: smaller times (its snapshots follow sim's) */
		struct ptw_event wv = {.track = ch, .ts = (uint64_t)i * 300,
				       .name = "wall", .terminating_flow_ids = &fl,
				       .n_terminating_flow_ids = 1};
		cr_assert_eq(ptw_seq_instant(wall, &wv), 0);
		cr_assert_eq(ptw_seq_counter_int(wall, ci, wv.ts, -i), 0);
		/* own sequence: a late event every 5th iteration */
		struct ptw_event ov = {.ts = i % 5 == 4 ? base - 4000 : base + 3,
				       .name = "own"};
		cr_assert_eq(ptw_seq_slice_complete(own, &ov, 7), 0);
		cr_assert_eq(ptw_seq_counter_double(own, cd, ov.ts, i / 3.0), 0);
		if (mark_drop && i % 9 == 8)
			ptw_seq_mark_dropped(own, 3);
	}
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	uint8_t *b = tw_read_file(path, len);
	unlink(path);
	free(path);
	return b;
}

Test(writer_check, default_options_pass)
{
	size_t len;
	uint8_t *b = write_scenario(NULL, 60, 0, &len);
	expect_check_ok(b, len, PTW_CHECK_COMPLETE, "default");
	free(b);
}

Test(writer_check, tiny_checkpoints_and_intern_caps_pass)
{
	struct ptw_writer_options o = {.checkpoint_packets = 3, .max_interned = 2};
	size_t len;
	uint8_t *b = write_scenario(&o, 60, 0, &len);
	expect_check_ok(b, len, PTW_CHECK_COMPLETE, "tiny checkpoints");
	free(b);
}

Test(writer_check, deflate_passes_at_every_level)
{
	for (int level = 1; level <= 9; level += 4) {
		struct ptw_writer_options o = {.compress = 1, .compress_level = level,
					       .flush_bytes = 2048,
					       .checkpoint_packets = 50};
		size_t len;
		uint8_t *b = write_scenario(&o, 80, 0, &len);
		expect_check_ok(b, len, PTW_CHECK_COMPLETE, "deflate");
		free(b);
	}
}

Test(writer_check, data_loss_marks_pass_when_allowed)
{
	size_t len;
	uint8_t *b = write_scenario(NULL, 40, 1, &len);
	expect_check_ok(b, len, PTW_CHECK_COMPLETE | PTW_CHECK_ALLOW_DATA_LOSS,
			"loss");
	free(b);
}

Test(writer_check, truncated_files_pass)
{
	struct ptw_writer_options o = {.checkpoint_packets = 16, .compress = 1,
				       .flush_bytes = 1024};
	for (int compress = 0; compress < 2; compress++) {
		o.compress = compress;
		size_t len;
		uint8_t *b = write_scenario(&o, 30, 0, &len);
		for (size_t cut = 0; cut <= len; cut += len / 40 + 1) {
			if (cut == 0)
				continue; /* an empty file is not a trace */
			expect_check_ok(b, cut, PTW_CHECK_ALLOW_OPEN, "cut");
		}
		free(b);
	}
}
