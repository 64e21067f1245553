/* test_reader.c - the trace reader on the perfetto-wire.md worked example,
 * compressed batches, truncation at every byte and garbage input.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ptw_trace.pb-c.h"
#include "support/ptw_test.h"
#include "support/trace_build.h"

/* perfetto-wire.md section 7: seven records, 197 bytes. */
static const char EXAMPLE_HEX[] =
	"0a 2b 50 02 68 01 b8 05 01 da 03 07 d0 03 40 5a 02 58 02 32 18 0a 08"
	" 08 06 10 80 94 eb dc 03 0a 0a 08 40 10 80 94 eb dc 03 18 01 10 06"
	"0a 16 40 00 50 02 68 02 e2 03 0d 08 01 1a 09 08 d2 09 32 04 64 65 6d"
	" 6f"
	"0a 19 40 00 50 02 68 02 e2 03 10 08 02 22 0c 08 d2 09 10 d3 09 2a 04"
	" 6d 61 69 6e"
	"0a 1e 40 00 50 02 68 02 e2 03 15 08 03 28 01 12 0b 71 75 65 75 65 5f"
	" 64 65 70 74 68 42 02 18 02"
	"0a 24 40 e8 07 50 02 68 02 62 13 0a 07 08 01 12 03 63 61 74 12 08 08"
	" 01 12 04 77 6f 72 6b 5a 06 48 01 18 01 50 01"
	"0a 10 40 f4 03 50 02 68 02 5a 07 48 04 58 03 f0 01 2a"
	"0a 0b 40 d0 0f 50 02 68 02 5a 02 48 02";

/* record offsets of P1..P7 and the end */
static const size_t EXAMPLE_REC[] = { 0, 45, 69, 96, 128, 166, 184, 197 };

static uint8_t *example(size_t *len)
{
	uint8_t *d = ptw_test_hex_or_fail(EXAMPLE_HEX, len);
	cr_assert_eq(*len, 197);
	return d;
}

static void assert_no_tp_errors(const struct ptw_trace *t)
{
	const struct ptw_trace_stats *s = ptw_trace_get_stats(t);
	cr_assert_eq(s->packet_skipped_seq_needs_incremental_state_invalid, 0);
	cr_assert_eq(s->interned_data_skipped_incremental_state_invalid, 0);
	cr_assert_eq(s->interned_data_tokenizer_errors, 0);
	cr_assert_eq(s->track_event_missing_sequence_id, 0);
	cr_assert_eq(s->track_event_missing_timestamp, 0);
	cr_assert_eq(s->track_event_invalid_timestamp, 0);
	cr_assert_eq(s->track_event_parser_errors, 0);
	cr_assert_eq(s->track_event_counter_invalid_track_uuid, 0);
	cr_assert_eq(s->invalid_clock_snapshots, 0);
	cr_assert_eq(s->clock_sync_failure_unknown_source_clock, 0);
	cr_assert_eq(s->clock_sync_failure_no_path, 0);
	cr_assert_eq(s->track_descriptor_conflicting_reservation, 0);
	cr_assert_eq(s->packed_repeated_fields, 0);
}

/* The rows perfetto-wire.md section 7 lists for the example. */
static void assert_example_rows(const struct ptw_trace *t)
{
	cr_assert_eq(ptw_trace_clock(t), 6, "trace clock BOOTTIME");
	assert_no_tp_errors(t);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);

	cr_assert_eq(m->n_slices, 1);
	const struct ptw_tp_slice *s = &m->slices[0];
	cr_assert_eq(s->ts, 1000001000);
	cr_assert_eq(s->dur, 2500);
	cr_assert_str_eq(s->name, "work");
	cr_assert_str_eq(s->category, "cat");
	cr_assert_eq(s->depth, 0);
	cr_assert_eq(s->track_uuid, 2);
	struct ptw_tp_track_owner o = ptw_tp_model_owner(t, s->track_uuid);
	cr_assert_eq(o.owner, PTW_TP_OWNER_THREAD);
	cr_assert_eq(o.tid, 1235);
	cr_assert_eq(o.pid, 1234);

	cr_assert_eq(m->n_counters, 1);
	cr_assert_eq(m->counters[0].ts, 1000001500);
	cr_assert_float_eq(m->counters[0].value, 42.0, 1e-12);
	const struct ptw_trace_track *ct =
		ptw_trace_find_track(t, m->counters[0].track_uuid);
	cr_assert_not_null(ct);
	cr_assert_eq(ct->kind, PTW_TRACE_TRACK_COUNTER);
	cr_assert_str_eq(ct->name, "queue_depth");
	cr_assert_str_eq(ct->unit, "count");
	o = ptw_tp_model_owner(t, ct->uuid);
	cr_assert_eq(o.owner, PTW_TP_OWNER_PROCESS);
	cr_assert_eq(o.pid, 1234);

	cr_assert_eq(m->n_threads, 1);
	cr_assert_eq(m->threads[0].tid, 1235);
	cr_assert_eq(m->threads[0].pid, 1234);
	cr_assert_str_eq(m->threads[0].name, "main");
	cr_assert_eq(m->n_processes, 1);
	cr_assert_eq(m->processes[0].pid, 1234);
	cr_assert_str_eq(m->processes[0].name, "demo");
	cr_assert_eq(m->n_flows, 0);
	cr_assert_eq(m->n_unmatched_ends, 0);
	ptw_tp_model_free(m);
}

Test(reader, worked_example_gives_the_documented_rows)
{
	size_t len;
	uint8_t *d = example(&len);
	struct ptw_trace *t = ptw_test_load_mem_or_fail(d, len);
	assert_example_rows(t);

	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	cr_assert_eq(n, 3);
	cr_assert_eq(ev[0].type, PTW_TRACE_SLICE_BEGIN);
	cr_assert_eq(ev[0].offset, 128);
	cr_assert_eq(ev[0].seq_id, 2);
	cr_assert_eq(ev[0].track_explicit, 0, "track from the defaults");
	cr_assert_eq(ev[1].type, PTW_TRACE_COUNTER);
	cr_assert_eq(ev[1].counter_kind, PTW_TRACE_COUNTER_INT);
	cr_assert_eq(ev[1].counter_int, 42);
	cr_assert_eq(ev[1].offset, 166);
	cr_assert_eq(ev[2].type, PTW_TRACE_SLICE_END);
	cr_assert_eq(ev[2].ts, 1000003500);
	cr_assert_null(ev[2].name);

	const struct ptw_trace_stats *s = ptw_trace_get_stats(t);
	cr_assert_eq(s->records, 7);
	cr_assert_eq(s->packets, 7);
	cr_assert_eq(s->sequences, 1);
	cr_assert_eq(s->checkpoints, 1);
	cr_assert_eq(s->track_descriptors, 3);
	cr_assert_eq(s->clock_snapshots, 1);
	cr_assert_eq(s->interned_entries, 2);
	cr_assert_eq(s->events, 3);
	cr_assert_eq(ptw_trace_truncated(t, NULL), 0);

	struct ptw_error err;
	cr_assert_eq(ptw_trace_check(t, 0, &err), 0, "%s", err.msg);
	ptw_trace_free(t);
	free(d);
}

Test(reader, worked_example_decodes_with_protobuf_c)
{
	/* the generated code agrees with the field numbers of the example */
	size_t len;
	uint8_t *d = example(&len);
	Perfetto__Protos__Trace *tr = perfetto__protos__trace__unpack(NULL, len, d);
	cr_assert_not_null(tr);
	cr_assert_eq(tr->n_packet, 7);
	Perfetto__Protos__TracePacket *p1 = tr->packet[0];
	cr_assert_eq(p1->trusted_packet_sequence_id, 2);
	cr_assert_eq(p1->sequence_flags, 1);
	cr_assert(p1->first_packet_on_sequence);
	cr_assert_eq(p1->trace_packet_defaults->timestamp_clock_id, 64);
	cr_assert_eq(p1->trace_packet_defaults->track_event_defaults->track_uuid,
		     2);
	cr_assert_eq(p1->data_case,
		     PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT);
	cr_assert_eq(p1->clock_snapshot->n_clocks, 2);
	cr_assert_eq(p1->clock_snapshot->clocks[1]->clock_id, 64);
	cr_assert(p1->clock_snapshot->clocks[1]->is_incremental);
	cr_assert_eq(p1->clock_snapshot->primary_trace_clock,
		     PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME);
	Perfetto__Protos__TracePacket *p3 = tr->packet[2];
	cr_assert_eq(p3->track_descriptor->thread->tid, 1235);
	Perfetto__Protos__TracePacket *p4 = tr->packet[3];
	cr_assert_eq(p4->track_descriptor->counter->unit,
		     PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_COUNT);
	Perfetto__Protos__TracePacket *p5 = tr->packet[4];
	cr_assert_str_eq(p5->interned_data->event_names[0]->name, "work");
	cr_assert_eq(p5->track_event->type,
		     PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN);
	cr_assert_eq(tr->packet[5]->track_event->counter_value, 42);
	perfetto__protos__trace__free_unpacked(tr, NULL);
	free(d);
}

Test(reader, loads_from_a_file_like_from_memory)
{
	size_t len;
	uint8_t *d = example(&len);
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "reader-file");
	ptw_test_write_file_or_fail(path, d, len);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	cr_assert_str_eq(ptw_trace_name(t), path);
	assert_example_rows(t);
	ptw_trace_free(t);
	unlink(path);
	free(d);
}

Test(reader, missing_file_and_non_traces_are_errors)
{
	struct ptw_error err;
	cr_assert_null(ptw_trace_load_file("/nonexistent/x.pftrace", NULL, &err));
	cr_assert_eq(err.code, PTW_ERR_IO);
	cr_assert_null(ptw_trace_load_mem("", 0, "empty", NULL, &err));
	cr_assert_eq(err.code, PTW_ERR_FORMAT);
	cr_assert_null(ptw_trace_load_mem("{\"traceEvents\":[]}", 18, "json",
					  NULL, &err));
	cr_assert_eq(err.code, PTW_ERR_FORMAT);
	cr_assert_eq(err.offset, 0);
	cr_assert(strstr(err.msg, "json: byte 0") != NULL, "%s", err.msg);
	cr_assert_null(ptw_trace_load_file("/", NULL, &err));
	cr_assert_eq(err.code, PTW_ERR_IO);
}

static void assert_prefix(const struct ptw_trace *full,
			  const struct ptw_trace *part)
{
	size_t nf, np;
	const struct ptw_trace_event *f = ptw_trace_events(full, &nf);
	const struct ptw_trace_event *p = ptw_trace_events(part, &np);
	cr_assert_leq(np, nf);
	for (size_t i = 0; i < np; i++) {
		cr_assert_eq(p[i].ts, f[i].ts);
		cr_assert_eq(p[i].type, f[i].type);
		cr_assert_eq(p[i].track_uuid, f[i].track_uuid);
		cr_assert_eq(p[i].offset, f[i].offset);
		if (f[i].name)
			cr_assert_str_eq(p[i].name, f[i].name);
		else
			cr_assert_null(p[i].name);
		cr_assert_float_eq(p[i].counter_value, f[i].counter_value,
				   1e-12);
	}
}

Test(reader, truncation_at_every_byte_yields_a_prefix)
{
	size_t len;
	uint8_t *d = example(&len);
	struct ptw_trace *full = ptw_test_load_mem_or_fail(d, len);
	for (size_t cut = 1; cut < len; cut++) {
		uint8_t *copy = malloc(cut); /* exact size: ASan sees overreads */
		cr_assert_not_null(copy);
		memcpy(copy, d, cut);
		struct ptw_error err;
		struct ptw_trace *t = ptw_trace_load_mem(copy, cut, "cut", NULL,
							 &err);
		cr_assert_not_null(t, "cut %zu: %s", cut, err.msg);
		cr_assert_null(ptw_trace_fatal(t), "cut %zu", cut);
		int boundary = 0;
		for (size_t r = 0; r < 8; r++)
			boundary |= EXAMPLE_REC[r] == cut;
		uint64_t off;
		cr_assert_eq(ptw_trace_truncated(t, &off), !boundary, "cut %zu",
			     cut);
		if (!boundary) {
			size_t r = 0;
			while (EXAMPLE_REC[r + 1] < cut)
				r++;
			cr_assert_eq(off, EXAMPLE_REC[r], "cut %zu", cut);
		}
		assert_prefix(full, t);
		/* the checker accepts a truncated tail unless asked; the open
		 * BEGIN of a cut before the END is allowed with ALLOW_OPEN */
		cr_assert_eq(ptw_trace_check(t, PTW_CHECK_ALLOW_OPEN, &err), 0,
			     "cut %zu: %s", cut, err.msg);
		if (!boundary)
			cr_assert_eq(ptw_trace_check(t, PTW_CHECK_ALLOW_OPEN |
							       PTW_CHECK_COMPLETE,
						     &err),
				     PTW_ERR_FORMAT);
		ptw_trace_free(t);
		free(copy);
	}
	ptw_trace_free(full);
	free(d);
}

/* P1 plain, then P2..P7 in one batch */
static uint8_t *example_batched(size_t *len, int gzip, uint64_t *batch_off)
{
	size_t n;
	uint8_t *d = example(&n);
	struct ptw_tb b;
	ptw_tb_init(&b);
	ptw_pb_append_raw(&b.out, d, EXAMPLE_REC[1]);
	*batch_off = ptw_tb_compressed(&b, d + EXAMPLE_REC[1],
				       n - EXAMPLE_REC[1], gzip);
	uint8_t *out = malloc(b.out.len);
	cr_assert_not_null(out);
	memcpy(out, b.out.data, b.out.len);
	*len = b.out.len;
	ptw_tb_free(&b);
	free(d);
	return out;
}

static void check_batched(int gzip)
{
	size_t len;
	uint64_t boff;
	uint8_t *d = example_batched(&len, gzip, &boff);
	struct ptw_trace *t = ptw_test_load_mem_or_fail(d, len);
	assert_example_rows(t);
	const struct ptw_trace_stats *s = ptw_trace_get_stats(t);
	cr_assert_eq(s->batches, 1);
	cr_assert_eq(s->batch_packets, 6);
	cr_assert_eq(s->packets, 7);
	cr_assert_eq(s->inflated_bytes, 197 - 45);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	cr_assert_eq(n, 3);
	cr_assert_eq(ev[0].offset, boff);
	cr_assert_eq(ev[0].batch, 1);
	cr_assert_eq(ev[0].inner_offset, 128 - 45);
	struct ptw_error err;
	cr_assert_eq(ptw_trace_check(t, 0, &err), 0, "%s", err.msg);
	ptw_trace_free(t);
	free(d);
}

Test(reader, zlib_batch_gives_the_same_rows) { check_batched(0); }
Test(reader, gzip_batch_gives_the_same_rows) { check_batched(1); }

Test(reader, truncated_batch_loses_only_the_batch)
{
	size_t len;
	uint64_t boff;
	uint8_t *d = example_batched(&len, 0, &boff);
	for (size_t cut = boff + 1; cut < len; cut++) {
		struct ptw_error err;
		struct ptw_trace *t = ptw_trace_load_mem(d, cut, NULL, NULL, &err);
		cr_assert_not_null(t);
		cr_assert_null(ptw_trace_fatal(t));
		size_t n;
		ptw_trace_events(t, &n);
		cr_assert_eq(n, 0);
		cr_assert_eq(ptw_trace_truncated(t, NULL), 1);
		ptw_trace_free(t);
	}
	free(d);
}

/* Builds P1 + one compressed_packets field holding 'payload' as is. */
static const struct ptw_error *load_bad_batch(const void *payload, size_t n,
					      struct ptw_trace **out,
					      uint64_t *boff)
{
	size_t len;
	uint8_t *d = example(&len);
	struct ptw_tb b;
	ptw_tb_init(&b);
	ptw_pb_append_raw(&b.out, d, EXAMPLE_REC[1]);
	ptw_tb_begin(&b);
	ptw_tb_bytes(&b, 50, payload, n);
	*boff = ptw_tb_end(&b);
	struct ptw_error err;
	*out = ptw_trace_load_mem(b.out.data, b.out.len, "bad", NULL, &err);
	cr_assert_not_null(*out, "%s", err.msg);
	ptw_tb_free(&b);
	free(d);
	return ptw_trace_fatal(*out);
}

static size_t zlib_of(const void *in, size_t n, uint8_t *out, size_t cap,
		      int wbits)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, wbits, 8,
				  Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	size_t r = cap - zs.avail_out;
	deflateEnd(&zs);
	return r;
}

Test(reader, raw_deflate_batch_is_fatal)
{
	size_t len;
	uint8_t *d = example(&len);
	uint8_t z[1024];
	size_t zn = zlib_of(d + 45, len - 45, z, sizeof(z), -15);
	struct ptw_trace *t;
	uint64_t boff;
	const struct ptw_error *f = load_bad_batch(z, zn, &t, &boff);
	cr_assert_not_null(f);
	cr_assert_eq(f->offset, boff);
	cr_assert(strstr(f->msg, "does not inflate") != NULL, "%s", f->msg);
	struct ptw_error err;
	cr_assert_eq(ptw_trace_check(t, 0, &err), PTW_ERR_FORMAT);
	cr_assert_eq(err.offset, boff);
	ptw_trace_free(t);
	free(d);
}

Test(reader, two_streams_in_one_batch_are_fatal)
{
	size_t len;
	uint8_t *d = example(&len);
	uint8_t z[2048];
	size_t a = zlib_of(d + 45, 24, z, sizeof(z), 15);
	size_t b = zlib_of(d + 69, 27, z + a, sizeof(z) - a, 15);
	struct ptw_trace *t;
	uint64_t boff;
	const struct ptw_error *f = load_bad_batch(z, a + b, &t, &boff);
	cr_assert_not_null(f);
	cr_assert(strstr(f->msg, "after its zlib stream") != NULL, "%s", f->msg);
	ptw_trace_free(t);
	free(d);
}

Test(reader, empty_and_unfinished_batches_are_fatal)
{
	struct ptw_trace *t;
	uint64_t boff;
	cr_assert_not_null(load_bad_batch("", 0, &t, &boff));
	ptw_trace_free(t);
	size_t len;
	uint8_t *d = example(&len);
	uint8_t z[1024];
	size_t zn = zlib_of(d + 45, len - 45, z, sizeof(z), 15);
	cr_assert_not_null(load_bad_batch(z, zn - 3, &t, &boff));
	ptw_trace_free(t);
	free(d);
}

Test(reader, batch_content_must_be_packet_records)
{
	uint8_t inner[] = { 0x0a, 0x02, 0x50, 0x02, 0x12, 0x01, 0x00 };
	uint8_t z[256];
	size_t zn = zlib_of(inner, sizeof(inner), z, sizeof(z), 15);
	struct ptw_trace *t;
	uint64_t boff;
	const struct ptw_error *f = load_bad_batch(z, zn, &t, &boff);
	cr_assert_not_null(f);
	cr_assert(strstr(f->msg, "inflated byte 4") != NULL, "%s", f->msg);
	ptw_trace_free(t);

	/* 1-2 trailing bytes are ignored, as trace_processor does */
	uint8_t tail[] = { 0x0a, 0x02, 0x50, 0x02, 0x12, 0x01 };
	zn = zlib_of(tail, sizeof(tail), z, sizeof(z), 15);
	cr_assert_null(load_bad_batch(z, zn, &t, &boff));
	ptw_trace_free(t);
}

Test(reader, nested_batch_is_fatal)
{
	size_t len;
	uint8_t *d = example(&len);
	uint8_t z1[1024], z2[2048];
	size_t n1 = zlib_of(d + 45, len - 45, z1, sizeof(z1), 15);
	/* an inner record holding compressed_packets (field 50) */
	struct ptw_tb b;
	ptw_tb_init(&b);
	ptw_tb_begin(&b);
	ptw_tb_bytes(&b, 50, z1, n1);
	ptw_tb_end(&b);
	size_t n2 = zlib_of(b.out.data, b.out.len, z2, sizeof(z2), 15);
	struct ptw_trace *t;
	uint64_t boff;
	const struct ptw_error *f = load_bad_batch(z2, n2, &t, &boff);
	cr_assert_not_null(f);
	cr_assert(strstr(f->msg, "nested") != NULL, "%s", f->msg);
	ptw_trace_free(t);
	ptw_tb_free(&b);
	free(d);
}

Test(reader, other_top_level_fields_and_empty_records_are_skipped)
{
	size_t len;
	uint8_t *d = example(&len);
	struct ptw_tb b;
	ptw_tb_init(&b);
	ptw_pb_append_raw(&b.out, d, 45);
	ptw_pb_append_varint_field(&b.out, 2, 77);        /* varint field */
	ptw_pb_append_bytes_field(&b.out, 3, "xyz", 3);   /* bytes field */
	ptw_pb_append_fixed64_field(&b.out, 4, 1);        /* fixed64 */
	ptw_pb_append_raw(&b.out, "\x0a\x00", 2);         /* empty record */
	ptw_pb_append_raw(&b.out, d + 45, len - 45);
	struct ptw_trace *t = ptw_test_load_mem_or_fail(b.out.data, b.out.len);
	assert_example_rows(t);
	cr_assert_eq(ptw_trace_get_stats(t)->skipped_fields, 3);
	cr_assert_eq(ptw_trace_get_stats(t)->empty_records, 1);
	ptw_trace_free(t);

	/* wire type 3 at top level is fatal */
	ptw_pb_buf_reset(&b.out);
	ptw_pb_append_raw(&b.out, d, 45);
	ptw_pb_append_raw(&b.out, "\x13\x14", 2);
	ptw_pb_append_raw(&b.out, d + 45, len - 45);
	struct ptw_error err;
	t = ptw_trace_load_mem(b.out.data, b.out.len, NULL, NULL, &err);
	cr_assert_not_null(t);
	cr_assert_not_null(ptw_trace_fatal(t));
	cr_assert_eq(ptw_trace_fatal(t)->offset, 45);
	size_t n;
	ptw_trace_events(t, &n);
	cr_assert_eq(n, 0);
	ptw_trace_free(t);
	ptw_tb_free(&b);
	free(d);
}

Test(reader, broken_record_is_fatal_at_its_offset)
{
	size_t len;
	uint8_t *d = example(&len);
	/* P5's TrackEvent claims 7 bytes instead of 6: the record is complete
	 * but does not parse to its end (perfetto-wire.md test 44) */
	cr_assert_eq(d[158], 0x5a);
	cr_assert_eq(d[159], 0x06);
	d[159] = 0x07;
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_mem(d, len, "bad", NULL, &err);
	cr_assert_not_null(t);
	const struct ptw_error *f = ptw_trace_fatal(t);
	cr_assert_not_null(f);
	cr_assert_eq(f->offset, 128);
	cr_assert_eq(ptw_trace_check(t, 0, &err), PTW_ERR_FORMAT);
	cr_assert_eq(err.offset, 128);
	cr_assert(strstr(err.msg, "byte 128:") == err.msg, "%s", err.msg);
	ptw_trace_free(t);
	free(d);
}

/* xorshift: deterministic garbage */
static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void chew(const uint8_t *d, size_t n)
{
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_mem(d, n, "garbage", NULL, &err);
	if (!t) {
		cr_assert(err.code == PTW_ERR_FORMAT, "%s", err.msg);
		return;
	}
	(void)ptw_trace_check(t, 0, &err);
	struct ptw_tp_model *m = ptw_tp_model_build(t, &err);
	cr_assert_not_null(m);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
}

Test(reader, garbage_never_crashes)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	size_t rounds = ptw_test_scale(3000, 300);
	for (size_t r = 0; r < rounds; r++) {
		size_t n = 1 + rng(&s) % 300;
		uint8_t *d = malloc(n);
		cr_assert_not_null(d);
		for (size_t i = 0; i < n; i++)
			d[i] = (uint8_t)rng(&s);
		d[0] = 0x0a;
		chew(d, n);
		free(d);
	}
}

Test(reader, mutated_example_never_crashes)
{
	size_t len;
	uint8_t *d = example(&len);
	uint8_t *m = malloc(len);
	cr_assert_not_null(m);
	static const uint8_t vals[] = { 0x00, 0x01, 0x02, 0x7f, 0x80, 0xff,
					0x0a, 0x40 };
	for (size_t i = 0; i < len; i++) {
		for (size_t v = 0; v < sizeof(vals); v++) {
			memcpy(m, d, len);
			m[i] = vals[v];
			chew(m, len);
		}
	}
	free(m);
	free(d);
}

Test(reader, whole_file_gzip_is_unwrapped)
{
	size_t len;
	uint8_t *d = example(&len);
	uint8_t z[1024];
	size_t zn = zlib_of(d, len, z, sizeof(z), 16 + 15);
	struct ptw_trace *t = ptw_test_load_mem_or_fail(z, zn);
	assert_example_rows(t);
	cr_assert_eq(ptw_trace_get_stats(t)->gzip_bytes, zn);
	cr_assert_eq(ptw_trace_get_stats(t)->bytes, len);
	cr_assert_eq(ptw_trace_truncated(t, NULL), 0);
	struct ptw_error err;
	cr_assert_eq(ptw_trace_check(t, PTW_CHECK_COMPLETE, &err), 0, "%s",
		     err.msg);
	ptw_trace_free(t);

	/* cut anywhere: a prefix of the events, never an error */
	struct ptw_trace *full = ptw_test_load_mem_or_fail(d, len);
	for (size_t cut = 2; cut < zn; cut++) {
		struct ptw_trace *p = ptw_trace_load_mem(z, cut, NULL, NULL, &err);
		if (!p) {
			cr_assert_eq(err.code, PTW_ERR_FORMAT, "%s", err.msg);
			continue;
		}
		cr_assert_null(ptw_trace_fatal(p));
		assert_prefix(full, p);
		ptw_trace_free(p);
	}
	ptw_trace_free(full);

	/* gzip magic followed by garbage */
	uint8_t bad[] = { 0x1f, 0x8b, 0x00, 0x11, 0x22, 0x33, 0x44 };
	cr_assert_null(ptw_trace_load_mem(bad, sizeof(bad), "bad.gz", NULL,
					  &err));
	cr_assert_eq(err.code, PTW_ERR_FORMAT);
	cr_assert(strstr(err.msg, "gzip") != NULL, "%s", err.msg);
	free(d);
}

struct seen {
	size_t packets, batches, events, inner, stop_at;
};

static int count_packets(void *ctx, const struct ptw_trace_packet_info *in,
			 const void *pkt)
{
	struct seen *s = ctx;
	if (in->is_batch) {
		s->batches++;
		cr_assert_null(pkt);
		cr_assert_eq(in->inflated_size, 197 - 45);
		return 0;
	}
	cr_assert_not_null(pkt);
	const Perfetto__Protos__TracePacket *p = pkt;
	cr_assert_eq(p->trusted_packet_sequence_id, 2);
	s->packets++;
	s->inner += in->batch != 0;
	if (in->event) {
		s->events++;
		cr_assert_eq(in->ts, in->event->ts);
	}
	return s->stop_at && s->packets == s->stop_at;
}

Test(reader, packet_callback_sees_every_packet_and_can_stop)
{
	size_t len;
	uint64_t boff;
	uint8_t *d = example_batched(&len, 0, &boff);
	struct seen s = { 0 };
	struct ptw_trace_options opt = { .on_packet = count_packets, .ctx = &s };
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_mem(d, len, NULL, &opt, &err);
	cr_assert_not_null(t, "%s", err.msg);
	cr_assert_eq(s.packets, 7);
	cr_assert_eq(s.batches, 1);
	cr_assert_eq(s.inner, 6);
	cr_assert_eq(s.events, 3);
	ptw_trace_free(t);

	memset(&s, 0, sizeof(s));
	s.stop_at = 3;
	cr_assert_null(ptw_trace_load_mem(d, len, NULL, &opt, &err));
	cr_assert_eq(err.code, PTW_ERR_INVALID);
	cr_assert_eq(s.packets, 3);
	free(d);
}

Test(reader, diagnostics_are_capped_but_stats_go_on)
{
	struct ptw_tb b;
	ptw_tb_init(&b);
	for (int i = 0; i < 50; i++) {
		ptw_tb_begin(&b);
		ptw_tb_varint(&b, 8, 100);   /* timestamp, no sequence id */
		ptw_tb_end(&b);
	}
	struct ptw_trace_options opt = { .max_diags = 10 };
	struct ptw_error err;
	struct ptw_trace *t =
		ptw_trace_load_mem(b.out.data, b.out.len, NULL, &opt, &err);
	cr_assert_not_null(t);
	size_t n;
	const struct ptw_trace_diag *dg = ptw_trace_diags(t, &n);
	cr_assert_eq(n, 10);
	cr_assert_eq(dg[0].kind, PTW_TRACE_DIAG_NO_SEQUENCE);
	cr_assert_eq(dg[0].offset, 0);
	cr_assert_eq(ptw_trace_get_stats(t)->packets, 50);
	cr_assert_eq(ptw_trace_check(t, 0, &err), PTW_ERR_FORMAT);
	cr_assert_eq(err.offset, 0);
	ptw_trace_free(t);
	ptw_tb_free(&b);
}
