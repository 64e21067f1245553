/* test_dump_flips.c - `ptw-dump --check` gives trace_processor's verdict
 * on corrupt traces: a bit-flip corpus of our own traces, and the two
 * shapes that once disagreed.
 *
 * The verdict (docs/dump.md "What --check enforces"): trace_processor
 * "refuses" a file when trace_processor_shell exits non-zero (it stops
 * with a parse error: a TracePacket that does not parse to its end, a bad
 * compressed batch, a file it takes for another format by its first
 * bytes, ...); it "loads" it when it exits 0, whatever stats it counts.
 * `ptw-dump --check` must exit 1 on the first and 0 on the second.
 *
 * The corpus: five small traces (writer API plain and deflate, tracer,
 * converted Chrome JSON plain and deflate), each with flips_per_trace()
 * variants of one and as many of three random bit flips (fixed seed): 80
 * files, 80 runs of trace_processor_shell (in two tests, which `--jobs=2`
 * runs side by side); 20 with PTW_TEST_SCALE=small (under qemu-user, where
 * each ptw-dump run starts an emulator). Without trace_processor_shell
 * ($PTW_SHARED_DIR/tp) the
 * comparison is skipped with a message; that ptw-dump exits 0 or 1 on
 * every variant (no crash: the ASan build runs it too) is always checked.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "support/trace_build.h"
#include "test_convert_json.h"

/* variants per trace and flip count */
static int flips_per_trace(void) { return (int)ptw_test_scale(8, 2); }

/* ---- tools ------------------------------------------------------------- */

static const char *dump_path(void)
{
	return ptw_test_bin_or_skip("ptw-dump");
}

/* `ptw-dump ARGS` on 'file' (within 60 s): its exit status, or 128 +
 * signal (124: timed out). */
static int run_dump(const char *args, const char *file)
{
	char cmd[PATH_MAX + 1024];
	int len = snprintf(cmd, sizeof(cmd),
			   "timeout 60 '%s' %s '%s' >/dev/null 2>&1",
			   dump_path(), args, file);
	cr_assert(len > 0 && (size_t)len < sizeof(cmd));
	int st = system(cmd);
	cr_assert_neq(st, -1);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- the five traces ----------------------------------------------------- */

static void writer_trace(const char *path, int deflate)
{
	struct ptw_error err = {0};
	struct ptw_writer_options o = {
		.compress = deflate ? PTW_COMPRESS_DEFLATE : PTW_COMPRESS_NONE,
		.checkpoint_packets = 16 };
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	cr_assert(w, "%s", err.msg);
	ptw_writer_add_process_track(w, 10, "proc");
	uint64_t th = ptw_writer_add_thread_track(w, 10, 11, "main");
	uint64_t ctr = ptw_writer_add_counter_track(w, "queue", "items", th, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	for (int i = 0; i < 12; i++) {
		struct ptw_arg a[] = {
			{ .name = "i", .type = PTW_ARG_TYPE_INT, .v.i = i },
			{ .name = "s", .type = PTW_ARG_TYPE_STRING,
			  .v.s = i % 2 ? "odd" : "even" } };
		uint64_t flow = 100 + (uint64_t)i;
		struct ptw_event e = { .track = th, .ts = 1000 * i,
				       .category = "cat", .name = "outer",
				       .args = a, .n_args = 2,
				       .flow_ids = &flow, .n_flow_ids = 1 };
		cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
		struct ptw_event in = { .track = th, .ts = 1000 * i + 100,
					.category = "cat",
					.name = i % 3 ? "inner" : "other" };
		cr_assert_eq(ptw_seq_slice_begin(s, &in), 0);
		in.ts += 300;
		cr_assert_eq(ptw_seq_slice_end(s, &in), 0);
		e.ts += 800;
		e.args = NULL;
		e.n_args = 0;
		e.n_flow_ids = 0;
		cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
		cr_assert_eq(ptw_seq_counter_int(s, ctr, 1000 * (uint64_t)i + 900,
						 i * 3), 0);
	}
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
}

static void tracer_trace(const char *path)
{
	struct ptw_writer_options o = { .checkpoint_packets = 32 };
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.writer = &o;
	cfg.ring_slots = 1u << 12;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	cr_assert_eq(ptw_start(&cfg), 0);
	ptw_set_thread_name("flips");
	for (int i = 0; i < 40; i++) {
		PTW_BEGIN("work", "step");
		PTW_INSTANT("work", "tick");
		PTW_COUNTER_INT("work", "n", i);
		PTW_END("work");
	}
	cr_assert_eq(ptw_stop(), 0);
}

static void json_trace(const char *path, int deflate)
{
	static const char json[] =
		"[{\"name\":\"M\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
		"\"args\":{\"name\":\"main\"}},"
		"{\"name\":\"a\",\"cat\":\"c\",\"ph\":\"X\",\"pid\":1,\"tid\":2,"
		"\"ts\":1,\"dur\":10,\"args\":{\"k\":[1,{\"x\":\"y\"}]}},"
		"{\"name\":\"b\",\"cat\":\"c\",\"ph\":\"B\",\"pid\":1,\"tid\":2,"
		"\"ts\":2},{\"name\":\"b\",\"ph\":\"E\",\"pid\":1,\"tid\":2,"
		"\"ts\":5},{\"name\":\"q\",\"cat\":\"n\",\"ph\":\"b\",\"id\":7,"
		"\"pid\":1,\"tid\":3,\"ts\":3},{\"name\":\"q\",\"cat\":\"n\","
		"\"ph\":\"e\",\"id\":7,\"pid\":1,\"tid\":3,\"ts\":9},"
		"{\"name\":\"C\",\"ph\":\"C\",\"pid\":1,\"ts\":4,"
		"\"args\":{\"v\":2.5}},{\"name\":\"i\",\"ph\":\"i\",\"s\":\"t\","
		"\"pid\":1,\"tid\":2,\"ts\":6}]";
	struct ptw_writer_options o = {
		.compress = deflate ? PTW_COMPRESS_DEFLATE : PTW_COMPRESS_NONE };
	ptw_test_convert_json_with(path, json, 0, 0, NULL, &o);
}

/* ---- the corpus ---------------------------------------------------------- */

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Writes the flips_per_trace() variants of 'src' with 'flips' bit flips each and
 * checks them; returns how many verdicts differed from trace_processor's
 * (each printed). */
static int check_variants(const char *src, const char *tag, int flips,
			  uint64_t seed, const char *tp)
{
	size_t len;
	uint8_t *data = ptw_test_read_file_or_fail(src, &len);
	cr_assert_gt(len, 16);
	uint8_t *v = malloc(len);
	cr_assert_not_null(v);
	int differ = 0;
	for (int k = 0, n = flips_per_trace(); k < n; k++) {
		memcpy(v, data, len);
		char where[128];
		size_t at = 0;
		for (int f = 0; f < flips; f++) {
			uint64_t bit = rng(&seed) % (len * 8);
			v[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			at += (size_t)snprintf(where + at, sizeof(where) - at,
					       "%s%llu.%u", f ? "," : "",
					       (unsigned long long)(bit / 8),
					       (unsigned)(bit % 8));
		}
		char path[256];
		ptw_test_tmp_path(path, sizeof(path), tag);
		ptw_test_write_file_or_fail(path, v, len);
		int d = run_dump("--check", path);
		cr_expect(d == 0 || d == 1,
			  "%s, flips at %s: ptw-dump --check exited %d", tag,
			  where, d);
		int s = run_dump("--slices", path);
		cr_expect(s == 0 || s == 1,
			  "%s, flips at %s: ptw-dump --slices exited %d", tag,
			  where, s);
		if (tp) {
			int t = ptw_test_tp_loads(tp, path);
			cr_expect(t >= 0, "%s: trace_processor_shell crashed",
				  tag);
			if ((t == 0) != (d == 0)) {
				differ++;
				fprintf(stderr,
					"%s, flips at byte.bit %s: "
					"trace_processor %s it, ptw-dump "
					"--check %s it (kept: %s)\n",
					tag, where, t == 0 ? "loads" : "refuses",
					d == 0 ? "passes" : "fails", path);
				continue; /* keep the file to look at */
			}
		}
		unlink(path);
	}
	free(v);
	free(data);
	return differ;
}

static void corpus(int flips, uint64_t seed)
{
	const char *looked, *tp = ptw_test_tp_find(&looked);
	if (!tp)
		fprintf(stderr, "no trace_processor_shell at %s: verdicts not "
				"compared with trace_processor (only: ptw-dump "
				"exits 0 or 1)\n", looked);
	char src[5][256];
	static const char *const tags[5] = { "flip-writer", "flip-writer-z",
					     "flip-tracer", "flip-json",
					     "flip-json-z" };
	for (int i = 0; i < 5; i++)
		ptw_test_tmp_path(src[i], sizeof(src[i]), tags[i]);
	writer_trace(src[0], 0);
	writer_trace(src[1], 1);
	tracer_trace(src[2]);
	json_trace(src[3], 0);
	json_trace(src[4], 1);
	int differ = 0;
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(run_dump("--check --strict", src[i]), 0, "%s",
			     tags[i]);
		differ += check_variants(src[i], tags[i], flips,
					 seed + (uint64_t)i * 7919, tp);
		unlink(src[i]);
	}
	cr_expect_eq(differ, 0,
		     "%d verdict(s) differ from trace_processor's (stderr)",
		     differ);
}

Test(dump_flips, one_bit_flip_verdicts_are_trace_processors, .timeout = 600)
{
	corpus(1, 0x9e3779b97f4a7c15ull);
}

Test(dump_flips, three_bit_flip_verdicts_are_trace_processors,
     .timeout = 600)
{
	corpus(3, 0x2545f4914f6cdd1dull);
}

/* ---- the two shapes that once disagreed ---------------------------------- */

/* One good packet (a process track), written into b. */
static void good_packet(struct ptw_tb *b)
{
	ptw_tb_start_seq(b, 2, 64, 2, 1000);
	ptw_tb_begin_on(b, 2, 0);
	ptw_tb_process_track(b, 1, 5, "p");
	ptw_tb_end(b);
}

/* 'want_ok': the verdict; checked against ptw-dump --check and, when it
 * is there, trace_processor. */
static void expect_verdict(const char *tag, const struct ptw_tb *b,
			   int want_ok)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), tag);
	ptw_test_write_file_or_fail(path, b->out.data, b->out.len);
	int d = run_dump("--check", path);
	cr_expect_eq(d, want_ok ? 0 : 1, "%s: ptw-dump --check exited %d", tag,
		     d);
	const char *tp = ptw_test_tp_find(NULL);
	if (tp)
		cr_expect_eq(ptw_test_tp_loads(tp, path) == 0, want_ok,
			     "%s: trace_processor disagrees", tag);
	unlink(path);
}

/* A top-level field 2 (not Trace.packet) after the first packet: the file
 * reads as a pprof Profile (sample_type, then sample), which
 * trace_processor tries first and refuses. */
Test(dump_flips, a_top_level_field_that_makes_a_pprof_profile_is_refused)
{
	struct ptw_tb b;
	ptw_tb_init(&b);
	good_packet(&b);
	ptw_pb_append_bytes_field(&b.out, 2, "\x08\x01", 2);
	expect_verdict("flip-pprof", &b, 0);
	ptw_tb_free(&b);
	/* field 15 is no Profile field: a proto trace, with a skipped field */
	ptw_tb_init(&b);
	good_packet(&b);
	ptw_pb_append_bytes_field(&b.out, 15, "\x08\x01", 2);
	expect_verdict("flip-field15", &b, 1);
	ptw_tb_free(&b);
}

/* Interned data holding a field number 0: protozero stops reading the
 * interned data there (the entries before it count), protobuf-c cannot
 * decode the packet at all. trace_processor loads the file. */
Test(dump_flips, field_zero_inside_interned_data_loads)
{
	struct ptw_tb b;
	ptw_tb_init(&b);
	good_packet(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_open(&b, 12); /* interned_data */
	ptw_tb_open(&b, 2);  /* event_names */
	ptw_tb_varint(&b, 1, 1);
	ptw_tb_string(&b, 2, "a");
	ptw_tb_close(&b);
	ptw_tb_bytes(&b, 0, "", 0); /* tag 0x02: field 0 */
	ptw_tb_close(&b);
	ptw_tb_open(&b, 11); /* track_event SLICE_BEGIN "a" on uuid 1 */
	ptw_tb_varint(&b, 9, 1);
	ptw_tb_varint(&b, 10, 1);
	ptw_tb_varint(&b, 11, 1);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	expect_verdict("flip-field0", &b, 1);
	ptw_tb_free(&b);
}

/* A field number above 2^29 (a flipped tag byte): protozero cuts the
 * tag's number to 32 bits and skips numbers above 0xFFFF, so the packet
 * decodes and trace_processor loads the file (seen with a random flip:
 * ptw-dump --check used to refuse it). */
Test(dump_flips, a_field_number_above_2_29_is_skipped_not_refused)
{
	struct ptw_tb b;
	ptw_tb_init(&b);
	good_packet(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_pb_append_varint(&b.pkt, (1015214580885ull << 3) | 0);
	ptw_pb_append_varint(&b.pkt, 1);
	ptw_tb_open(&b, 11); /* track_event SLICE_BEGIN "a" on uuid 1 */
	ptw_tb_varint(&b, 9, 1);
	ptw_tb_varint(&b, 10, 1);
	ptw_tb_varint(&b, 11, 1);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	expect_verdict("flip-bigfield", &b, 1);
	ptw_tb_free(&b);
}
