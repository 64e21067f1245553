/* trace_build.c - hand-built trace bytes for tests (see trace_build.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include "trace_build.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <zlib.h>

static void ok(const struct ptw_tb *b)
{
	cr_assert(!b->out.oom && !b->pkt.oom, "trace_build: out of memory");
}

void ptw_tb_init(struct ptw_tb *b)
{
	memset(b, 0, sizeof(*b));
	cr_assert_eq(ptw_pb_buf_init(&b->out, 0), 0);
	cr_assert_eq(ptw_pb_buf_init(&b->pkt, 0), 0);
}

void ptw_tb_free(struct ptw_tb *b)
{
	ptw_pb_buf_free(&b->out);
	ptw_pb_buf_free(&b->pkt);
}

void ptw_tb_begin(struct ptw_tb *b)
{
	ptw_pb_buf_reset(&b->pkt);
	b->depth = 0;
}

uint64_t ptw_tb_end(struct ptw_tb *b)
{
	cr_assert_eq(b->depth, 0, "trace_build: unclosed nested message");
	uint64_t off = b->out.len;
	ptw_pb_append_bytes_field(&b->out, 1, b->pkt.data, b->pkt.len);
	ptw_pb_buf_reset(&b->pkt);
	ok(b);
	return off;
}

void ptw_tb_take(struct ptw_tb *b, struct ptw_pb_buf *into)
{
	cr_assert_eq(b->depth, 0, "trace_build: unclosed nested message");
	ptw_pb_append_raw(into, b->pkt.data, b->pkt.len);
	ptw_pb_buf_reset(&b->pkt);
	cr_assert(!into->oom);
}

void ptw_tb_varint(struct ptw_tb *b, uint32_t field, uint64_t v)
{
	ptw_pb_append_varint_field(&b->pkt, field, v);
}

void ptw_tb_int64(struct ptw_tb *b, uint32_t field, int64_t v)
{
	ptw_pb_append_int64_field(&b->pkt, field, v);
}

void ptw_tb_fixed64(struct ptw_tb *b, uint32_t field, uint64_t v)
{
	ptw_pb_append_fixed64_field(&b->pkt, field, v);
}

void ptw_tb_double(struct ptw_tb *b, uint32_t field, double v)
{
	ptw_pb_append_double_field(&b->pkt, field, v);
}

void ptw_tb_string(struct ptw_tb *b, uint32_t field, const char *s)
{
	ptw_pb_append_string_field(&b->pkt, field, s);
}

void ptw_tb_bytes(struct ptw_tb *b, uint32_t field, const void *p, size_t n)
{
	ptw_pb_append_bytes_field(&b->pkt, field, p, n);
}

void ptw_tb_open(struct ptw_tb *b, uint32_t field)
{
	cr_assert_lt(b->depth, PTW_TB_MAX_DEPTH);
	b->marks[b->depth++] = ptw_pb_begin_nested(&b->pkt, field);
	ok(b);
}

void ptw_tb_close(struct ptw_tb *b)
{
	cr_assert_gt(b->depth, 0);
	ptw_pb_end_nested(&b->pkt, b->marks[--b->depth]);
	ok(b);
}

void ptw_tb_seq(struct ptw_tb *b, uint32_t seq, uint32_t flags)
{
	ptw_tb_varint(b, 10, seq);   /* trusted_packet_sequence_id */
	if (flags)
		ptw_tb_varint(b, 13, flags); /* sequence_flags */
}

void ptw_tb_begin_on(struct ptw_tb *b, uint32_t seq, uint64_t ts)
{
	ptw_tb_begin(b);
	ptw_tb_varint(b, 8, ts); /* timestamp */
	ptw_tb_seq(b, seq, 2);   /* SEQ_NEEDS_INCREMENTAL_STATE */
}

void ptw_tb_start_seq(struct ptw_tb *b, uint32_t seq, uint32_t clock,
		      uint64_t track, uint64_t snapshot_ts)
{
	ptw_tb_begin(b);
	ptw_tb_seq(b, seq, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
	ptw_tb_defaults(b, clock, track);
	ptw_tb_clock64(b, snapshot_ts);
	ptw_tb_end(b);
}

void ptw_tb_interned(struct ptw_tb *b, uint32_t table, uint64_t iid,
		     const char *name)
{
	ptw_tb_open(b, 12);          /* interned_data */
	ptw_tb_open(b, table);
	ptw_tb_varint(b, 1, iid);    /* iid */
	ptw_tb_string(b, 2, name);   /* name */
	ptw_tb_close(b);
	ptw_tb_close(b);
}

void ptw_tb_process_track(struct ptw_tb *b, uint64_t uuid, int32_t pid,
			  const char *name)
{
	ptw_tb_open(b, 60);          /* track_descriptor */
	ptw_tb_varint(b, 1, uuid);
	ptw_tb_open(b, 3);           /* process */
	ptw_tb_int64(b, 1, pid);
	if (name)
		ptw_tb_string(b, 6, name);
	ptw_tb_close(b);
	ptw_tb_close(b);
}

void ptw_tb_thread_track(struct ptw_tb *b, uint64_t uuid, int32_t pid,
			 int64_t tid, const char *name)
{
	ptw_tb_open(b, 60);
	ptw_tb_varint(b, 1, uuid);
	ptw_tb_open(b, 4);           /* thread */
	ptw_tb_int64(b, 1, pid);
	ptw_tb_int64(b, 2, tid);
	if (name)
		ptw_tb_string(b, 5, name);
	ptw_tb_close(b);
	ptw_tb_close(b);
}

void ptw_tb_counter_track(struct ptw_tb *b, uint64_t uuid, uint64_t parent,
			  const char *name)
{
	ptw_tb_open(b, 60);
	ptw_tb_varint(b, 1, uuid);
	if (parent)
		ptw_tb_varint(b, 5, parent);
	if (name)
		ptw_tb_string(b, 2, name);
	ptw_tb_open(b, 8);           /* counter {} */
	ptw_tb_close(b);
	ptw_tb_close(b);
}

void ptw_tb_clock64(struct ptw_tb *b, uint64_t ts)
{
	ptw_tb_open(b, 6);           /* clock_snapshot */
	ptw_tb_open(b, 1);
	ptw_tb_varint(b, 1, 6);      /* BOOTTIME */
	ptw_tb_varint(b, 2, ts);
	ptw_tb_close(b);
	ptw_tb_open(b, 1);
	ptw_tb_varint(b, 1, 64);
	ptw_tb_varint(b, 2, ts);
	ptw_tb_varint(b, 3, 1);      /* is_incremental */
	ptw_tb_close(b);
	ptw_tb_varint(b, 2, 6);      /* primary_trace_clock */
	ptw_tb_close(b);
}

void ptw_tb_defaults(struct ptw_tb *b, uint32_t clock, uint64_t track)
{
	ptw_tb_open(b, 59);          /* trace_packet_defaults */
	if (clock)
		ptw_tb_varint(b, 58, clock);
	ptw_tb_open(b, 11);          /* track_event_defaults */
	ptw_tb_varint(b, 11, track);
	ptw_tb_close(b);
	ptw_tb_close(b);
}

uint64_t ptw_tb_compressed(struct ptw_tb *b, const void *raw, size_t n,
			   int gzip)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, gzip ? 16 + 15 : 15, 8,
				  Z_DEFAULT_STRATEGY), Z_OK);
	size_t cap = deflateBound(&zs, (uLong)n) + 64;
	uint8_t *out = malloc(cap);
	cr_assert_not_null(out);
	zs.next_in = (Bytef *)(uintptr_t)raw;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	size_t len = cap - zs.avail_out;
	deflateEnd(&zs);
	ptw_tb_begin(b);
	ptw_tb_bytes(b, 50, out, len); /* compressed_packets */
	free(out);
	return ptw_tb_end(b);
}
