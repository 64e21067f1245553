/* test_writer_deflate.c - compressed batches round trip; truncated files
 * decode to a prefix of the emitted events.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "ptw/writer.h"
#include "test_writer_util.h"

static int small_scale(void)
{
	const char *s = getenv("PTW_TEST_SCALE");
	return s && strcmp(s, "small") == 0;
}

/* Writes a mixed workload; returns the file's bytes. */
static uint8_t *write_workload(const struct ptw_writer_options *o, int n_iter,
			       size_t *len, struct ptw_writer_stats *st)
{
	char *path = tw_tmp_path();
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t proc = ptw_writer_add_process_track(w, 10, "p");
	uint64_t thr = ptw_writer_add_thread_track(w, 10, 11, "t");
	uint64_t ctr = ptw_writer_add_counter_track(w, "c", "u", proc, -1);
	struct ptw_seq *s = ptw_writer_add_seq(w, thr);
	struct ptw_seq *wall = ptw_writer_wall_seq(w);
	char name[32];
	for (int i = 0; i < n_iter; i++) {
		snprintf(name, sizeof(name), "ev%d", i % 50);
		struct ptw_arg a[] = {
			{.name = "i", .type = PTW_ARG_TYPE_INT, .v.i = i},
			{.name = "s", .type = PTW_ARG_TYPE_STRING, .v.s = name},
		};
		uint64_t fl = (uint64_t)i;
		struct ptw_event ev = {.ts = (uint64_t)i * 100, .name = name,
				       .category = "cat", .args = a, .n_args = 2,
				       .flow_ids = &fl, .n_flow_ids = 1};
		cr_assert_eq(ptw_seq_slice_begin(s, &ev), 0);
		ev.ts += 10;
		ev.n_args = 0;
		ev.n_flow_ids = 0;
		ev.name = "inner";
		cr_assert_eq(ptw_seq_slice_begin(s, &ev), 0);
		cr_assert_eq(ptw_seq_instant(s, &ev), 0);
		cr_assert_eq(ptw_seq_slice_end(s, &ev), 0);
		cr_assert_eq(ptw_seq_counter_int(s, ctr, ev.ts + 20, i * 3), 0);
		ev.ts += 50;
		cr_assert_eq(ptw_seq_slice_end(s, &ev), 0);
		struct ptw_event we = {.track = proc, .ts = (uint64_t)i * 77,
				       .name = "wall"};
		cr_assert_eq(ptw_seq_instant(wall, &we), 0);
	}
	if (st) {
		cr_assert_eq(ptw_writer_flush(w), 0);
		ptw_writer_get_stats(w, st);
	}
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	if (st)
		st->bytes_written = 0;
	uint8_t *b = tw_read_file(path, len);
	cr_assert_not_null(b);
	unlink(path);
	free(path);
	return b;
}

static void expect_same_events(const struct tw_trace *a, const struct tw_trace *b)
{
	cr_assert_eq(a->n_ev, b->n_ev);
	for (size_t i = 0; i < a->n_ev; i++) {
		const char *d = tw_event_diff(&a->ev[i], &b->ev[i]);
		cr_assert_null(d, "event %zu differs in %s", i, d);
	}
}

Test(writer_deflate, compressed_batches_decode_to_the_same_events)
{
	int n = small_scale() ? 200 : 2000;
	size_t raw_len, z_len;
	uint8_t *raw = write_workload(NULL, n, &raw_len, NULL);
	struct ptw_writer_options o = {.compress = 1, .compress_level = 1,
				       .flush_bytes = 16 * 1024,
				       .checkpoint_packets = 1000};
	struct ptw_writer_stats st;
	uint8_t *z = write_workload(&o, n, &z_len, &st);
	struct tw_trace a, b;
	cr_assert_eq(tw_decode(&a, raw, raw_len), 0, "%s", a.err);
	cr_assert_eq(tw_decode(&b, z, z_len), 0, "%s", b.err);
	cr_assert_eq(a.n_ev, (size_t)n * 7);
	cr_assert_eq(a.n_compressed, 0);
	cr_assert_gt(b.n_compressed, 1);
	cr_assert_eq(b.n_compressed, st.compressed_batches);
	cr_assert_lt(z_len, raw_len / 2);
	/* Only compressed_packets at top level. */
	cr_assert_eq(b.n_packets - b.n_compressed, b.n_packets - b.n_compressed);
	expect_same_events(&a, &b);
	tw_trace_free(&a);
	tw_trace_free(&b);
	free(raw);
	free(z);
}

Test(writer_deflate, batches_stay_under_512_kb_with_large_flush_threshold)
{
	int n = small_scale() ? 3000 : 12000;
	size_t z_len;
	struct ptw_writer_options o = {.compress = 1, .compress_level = 1,
				       .flush_bytes = 8u << 20};
	uint8_t *z = write_workload(&o, n, &z_len, NULL);
	struct tw_trace b;
	cr_assert_eq(tw_decode(&b, z, z_len), 0, "%s", b.err);
	cr_assert_eq(b.n_ev, (size_t)n * 7);
	cr_assert_gt(b.n_compressed, 1);
	cr_assert_lt(b.max_compressed_record, 512u * 1000u);
	tw_trace_free(&b);
	free(z);
}

Test(writer_deflate, huge_packet_goes_out_plain_between_batches)
{
	char *path = tw_tmp_path();
	struct ptw_writer_options o = {.compress = 1};
	struct ptw_writer *w = ptw_writer_open(path, &o, NULL);
	cr_assert_not_null(w);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	char *v = malloc(PTW_MAX_STRING_LEN + 1);
	memset(v, 'q', PTW_MAX_STRING_LEN);
	v[PTW_MAX_STRING_LEN] = 0;
	struct ptw_arg a[PTW_MAX_ANNOTATIONS];
	char names[PTW_MAX_ANNOTATIONS][8];
	for (unsigned i = 0; i < PTW_MAX_ANNOTATIONS; i++) {
		snprintf(names[i], sizeof(names[i]), "a%u", i);
		a[i].name = names[i];
		a[i].type = PTW_ARG_TYPE_STRING;
		a[i].v.s = v;
	}
	struct ptw_event ev = {.track = tr, .ts = 1, .name = "small"};
	cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	ev.args = a;
	ev.n_args = PTW_MAX_ANNOTATIONS; /* ~1 MiB packet */
	cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	ev.n_args = 0;
	cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	struct tw_trace t;
	cr_assert_eq(tw_decode_file(&t, path), 0, "%s", t.err);
	cr_assert_eq(t.n_ev, 3);
	cr_assert_eq(t.ev[1].n_args, PTW_MAX_ANNOTATIONS);
	cr_assert_lt(t.max_compressed_record, 512u * 1000u);
	tw_trace_free(&t);
	free(v);
	unlink(path);
	free(path);
}

/* The first 'cut' bytes of 'b' decode (nothing fails) to a prefix of
 * 'full'; returns the number of events. */
static size_t check_prefix(const uint8_t *b, size_t cut, const struct tw_trace *full)
{
	struct tw_trace t;
	cr_assert_eq(tw_decode(&t, b, cut), 0, "cut at %zu: %s", cut, t.err);
	cr_assert_leq(t.n_ev, full->n_ev);
	for (size_t i = 0; i < t.n_ev; i++) {
		const char *d = tw_event_diff(&t.ev[i], &full->ev[i]);
		cr_assert_null(d, "cut at %zu: event %zu differs in %s", cut, i, d);
	}
	size_t n = t.n_ev;
	tw_trace_free(&t);
	return n;
}

Test(writer_deflate, small_trace_cut_at_every_byte_decodes_a_prefix)
{
	struct ptw_writer_options opts[2] = {
		{.checkpoint_packets = 5, .max_interned = 4},
		{.checkpoint_packets = 5, .compress = 1, .flush_bytes = 300},
	};
	for (int k = 0; k < 2; k++) {
		size_t len;
		uint8_t *b = write_workload(&opts[k], 6, &len, NULL);
		struct tw_trace full;
		cr_assert_eq(tw_decode(&full, b, len), 0, "%s", full.err);
		cr_assert_eq(full.n_ev, 6 * 7);
		size_t last_n = 0;
		for (size_t cut = 0; cut <= len; cut++) {
			size_t n = check_prefix(b, cut, &full);
			cr_assert_geq(n, last_n, "events never disappear as the cut grows");
			last_n = n;
		}
		cr_assert_eq(last_n, full.n_ev);
		tw_trace_free(&full);
		free(b);
	}
}

Test(writer_deflate, large_trace_cut_at_many_offsets_decodes_a_prefix)
{
	int n = small_scale() ? 120 : 250;
	for (int compress = 0; compress < 2; compress++) {
		struct ptw_writer_options o = {.checkpoint_packets = 64,
					       .compress = compress,
					       .flush_bytes = 8192};
		size_t len;
		uint8_t *b = write_workload(&o, n, &len, NULL);
		struct tw_trace full;
		cr_assert_eq(tw_decode(&full, b, len), 0, "%s", full.err);
		size_t step = len / (small_scale() ? 20 : 30) + 1;
		for (size_t cut = 0; cut <= len; cut += step)
			check_prefix(b, cut, &full);
		for (size_t cut = len > 16 ? len - 16 : 0; cut <= len; cut++)
			check_prefix(b, cut, &full);
		tw_trace_free(&full);
		free(b);
	}
}

/* ---- zstd ------------------------------------------------------------ */

#include "reader/trace_check.h"
#include "reader/trace_read.h"

Test(writer_zstd, batches_decode_to_the_same_events_and_pass_the_checker)
{
	int n = small_scale() ? 200 : 2000;
	size_t raw_len, z_len, d_len;
	uint8_t *raw = write_workload(NULL, n, &raw_len, NULL);
	struct ptw_writer_options o = {.compress = PTW_COMPRESS_ZSTD,
				       .flush_bytes = 16 * 1024,
				       .checkpoint_packets = 1000};
	struct ptw_writer_stats st;
	uint8_t *z = write_workload(&o, n, &z_len, &st);
	o.compress = PTW_COMPRESS_DEFLATE;
	uint8_t *d = write_workload(&o, n, &d_len, NULL);
	struct tw_trace a, b;
	cr_assert_eq(tw_decode(&a, raw, raw_len), 0, "%s", a.err);
	cr_assert_eq(tw_decode(&b, z, z_len), 0, "%s", b.err);
	cr_assert_gt(b.n_zstd, 1);
	cr_assert_eq(b.n_zstd, b.n_compressed);
	cr_assert_eq(b.n_compressed, st.compressed_batches);
	cr_assert_lt(z_len, d_len, "zstd %zu bytes, deflate %zu", z_len, d_len);
	expect_same_events(&a, &b);
	/* the reader library decodes it too, and the checker passes it */
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_mem(z, z_len, "zstd", NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_eq(ptw_trace_check(t, PTW_CHECK_COMPLETE, &err), 0, "%s", err.msg);
	const struct ptw_trace_stats *ts = ptw_trace_get_stats(t);
	cr_assert_eq(ts->zstd_batches, b.n_zstd);
	cr_assert_eq(ts->events, a.n_ev);
	ptw_trace_free(t);
	tw_trace_free(&a);
	tw_trace_free(&b);
	free(raw);
	free(z);
	free(d);
}

Test(writer_zstd, levels_are_checked_per_codec)
{
	struct ptw_error err;
	struct ptw_writer_options o = {.compress = PTW_COMPRESS_ZSTD,
				       .compress_level = 19};
	struct ptw_writer *w = ptw_writer_open("/dev/null", &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	o.compress_level = 20;
	cr_assert_null(ptw_writer_open("/dev/null", &o, &err));
	cr_assert_eq(err.code, PTW_ERR_INVALID);
	o.compress = PTW_COMPRESS_DEFLATE;
	o.compress_level = 10;
	cr_assert_null(ptw_writer_open("/dev/null", &o, &err));
	o.compress = 3;
	o.compress_level = 0;
	cr_assert_null(ptw_writer_open("/dev/null", &o, &err));
	cr_assert_eq(err.code, PTW_ERR_INVALID);
}

Test(writer_zstd, batches_stay_under_512_kb_and_a_cut_file_decodes_a_prefix)
{
	int n = small_scale() ? 1500 : 6000;
	size_t z_len;
	struct ptw_writer_options o = {.compress = PTW_COMPRESS_ZSTD,
				       .compress_level = 1,
				       .flush_bytes = 8u << 20,
				       .checkpoint_packets = 64};
	uint8_t *z = write_workload(&o, n, &z_len, NULL);
	struct tw_trace full;
	cr_assert_eq(tw_decode(&full, z, z_len), 0, "%s", full.err);
	cr_assert_eq(full.n_ev, (size_t)n * 7);
	cr_assert_gt(full.n_zstd, 1);
	cr_assert_lt(full.max_compressed_record, 512u * 1000u);
	size_t step = z_len / 25 + 1;
	for (size_t cut = 0; cut <= z_len; cut += step)
		check_prefix(z, cut, &full);
	tw_trace_free(&full);
	free(z);
}

Test(writer_zstd, the_reader_refuses_deflate_and_zstd_in_one_file)
{
	size_t z_len, d_len;
	struct ptw_writer_options o = {.compress = PTW_COMPRESS_ZSTD};
	uint8_t *z = write_workload(&o, 50, &z_len, NULL);
	o.compress = PTW_COMPRESS_DEFLATE;
	uint8_t *d = write_workload(&o, 50, &d_len, NULL);
	uint8_t *both = malloc(z_len + d_len);
	cr_assert_not_null(both);
	memcpy(both, d, d_len);
	memcpy(both + d_len, z, z_len);
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_mem(both, z_len + d_len, "mixed",
						 NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_not_null(ptw_trace_fatal(t));
	cr_assert(strstr(ptw_trace_fatal(t)->msg, "mix") != NULL, "%s",
		  ptw_trace_fatal(t)->msg);
	ptw_trace_free(t);
	free(both);
	free(z);
	free(d);
}
