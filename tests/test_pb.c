/* test_pb.c - the inline protobuf encoder: varints, every field kind,
 * nested lengths of every size class; decoded back with protobuf-c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "lib/encode/pb_fields.h"
#include "lib/encode/pb.h"
#include "ptw_trace.pb-c.h"

Test(pb, varint_sizes_and_bytes)
{
	static const struct {
		uint64_t v;
		unsigned n;
	} cases[] = {{0, 1}, {1, 1}, {127, 1}, {128, 2}, {16383, 2}, {16384, 3},
		     {(1ull << 28) - 1, 4}, {1ull << 28, 5}, {UINT64_MAX, 10}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t buf[16];
		uint8_t *end = ptw_pb_write_varint(buf, cases[i].v);
		cr_assert_eq((unsigned)(end - buf), cases[i].n, "v=%llu",
			     (unsigned long long)cases[i].v);
		cr_assert_eq(ptw_pb_varint_size(cases[i].v), cases[i].n);
		/* decode */
		uint64_t v = 0;
		for (unsigned k = 0; k < cases[i].n; k++)
			v |= (uint64_t)(buf[k] & 0x7f) << (7 * k);
		cr_assert_eq(v, cases[i].v);
		cr_assert_eq(buf[cases[i].n - 1] & 0x80, 0);
	}
	uint8_t b300[2];
	ptw_pb_write_varint(b300, 300);
	cr_assert(b300[0] == 0xAC && b300[1] == 0x02);
}

/* Encodes a TracePacket with a TrackEvent whose name has 'name_len' bytes
 * and decodes it with protobuf-c. */
static void round_trip(size_t name_len, size_t initial_cap)
{
	struct ptw_pb_buf b;
	cr_assert_eq(ptw_pb_buf_init(&b, initial_cap), 0);
	char *name = malloc(name_len + 1);
	for (size_t i = 0; i < name_len; i++)
		name[i] = (char)('a' + i % 26);
	name[name_len] = 0;
	size_t pkt = ptw_pb_begin_nested(&b, PTW_F_TRACE_PACKET);
	ptw_pb_append_varint_field(&b, PTW_F_PKT_TIMESTAMP, 1234567890123ull);
	ptw_pb_append_varint_field(&b, PTW_F_PKT_SEQUENCE_ID, 7);
	size_t te = ptw_pb_begin_nested(&b, PTW_F_PKT_TRACK_EVENT);
	ptw_pb_append_varint_field(&b, PTW_F_TE_TYPE, 3);
	ptw_pb_append_string_field(&b, PTW_F_TE_NAME, name);
	ptw_pb_append_int64_field(&b, PTW_F_TE_COUNTER_VALUE, -5);
	ptw_pb_append_fixed64_field(&b, PTW_F_TE_FLOW_IDS, 0x0102030405060708ull);
	ptw_pb_append_fixed64_field(&b, PTW_F_TE_FLOW_IDS, 9);
	size_t da = ptw_pb_begin_nested(&b, PTW_F_TE_DEBUG_ANNOTATIONS);
	ptw_pb_append_varint_field(&b, PTW_F_DA_NAME_IID, 3);
	ptw_pb_append_double_field(&b, PTW_F_DA_DOUBLE_VALUE, -2.5);
	ptw_pb_end_nested(&b, da);
	ptw_pb_end_nested(&b, te);
	ptw_pb_end_nested(&b, pkt);
	cr_assert_not(b.oom);

	Perfetto__Protos__Trace *t = perfetto__protos__trace__unpack(NULL, b.len, b.data);
	cr_assert_not_null(t, "name_len %zu does not decode", name_len);
	cr_assert_eq(t->n_packet, 1);
	Perfetto__Protos__TracePacket *p = t->packet[0];
	cr_assert_eq(p->timestamp, 1234567890123ull);
	cr_assert_eq(p->trusted_packet_sequence_id, 7);
	Perfetto__Protos__TrackEvent *e = p->track_event;
	cr_assert_not_null(e);
	cr_assert_eq(e->type, 3);
	cr_assert_str_eq(e->name, name);
	cr_assert_eq(e->counter_value, -5);
	cr_assert_eq(e->n_flow_ids, 2);
	cr_assert_eq(e->flow_ids[0], 0x0102030405060708ull);
	cr_assert_eq(e->flow_ids[1], 9);
	cr_assert_eq(e->n_debug_annotations, 1);
	cr_assert_eq(e->debug_annotations[0]->name_iid, 3);
	cr_assert_eq(e->debug_annotations[0]->double_value, -2.5);
	/* Lengths are minimal: the record header is 1 + varint size. */
	size_t body = b.len - 1 - ptw_pb_varint_size(b.len - 2);
	cr_assert_eq(1 + ptw_pb_varint_size(body) + body, b.len);
	perfetto__protos__trace__free_unpacked(t, NULL);
	free(name);
	ptw_pb_buf_free(&b);
}

Test(pb, nested_lengths_of_every_size_class_decode)
{
	static const size_t lens[] = {0, 1, 90, 100, 101, 127, 128, 200, 16370,
				      16384, 20000, 2100000};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		round_trip(lens[i], 16); /* tiny start: exercises growth too */
		round_trip(lens[i], 0);
	}
}

Test(pb, free_is_idempotent_and_reset_keeps_capacity)
{
	struct ptw_pb_buf b;
	cr_assert_eq(ptw_pb_buf_init(&b, 8), 0);
	ptw_pb_append_raw(&b, "0123456789", 10);
	cr_assert_eq(b.len, 10);
	cr_assert_geq(b.cap, 10);
	size_t cap = b.cap;
	ptw_pb_buf_reset(&b);
	cr_assert_eq(b.len, 0);
	cr_assert_eq(b.cap, cap);
	ptw_pb_buf_free(&b);
	ptw_pb_buf_free(&b);
	ptw_pb_buf_free(NULL);
}

Test(pb, pointer_writers_match_buffer_appenders)
{
	struct ptw_pb_buf b;
	cr_assert_eq(ptw_pb_buf_init(&b, 0), 0);
	ptw_pb_append_varint_field(&b, PTW_F_PKT_TIMESTAMP_CLOCK_ID, 65);
	ptw_pb_append_fixed64_field(&b, PTW_F_TE_FLOW_IDS, 77);
	uint8_t raw[64];
	uint8_t *p = ptw_pb_write_varint_field(raw, PTW_F_PKT_TIMESTAMP_CLOCK_ID, 65);
	p = ptw_pb_write_fixed64_field(p, PTW_F_TE_FLOW_IDS, 77);
	cr_assert_eq((size_t)(p - raw), b.len);
	cr_assert_eq(memcmp(raw, b.data, b.len), 0);
	cr_assert(raw[0] == 0xD0 && raw[1] == 0x03 && raw[2] == 65);
	ptw_pb_buf_free(&b);
}

/* A fast varint writer (fn) encodes v as the loop does and writes nothing
 * beyond PTW_PB_VARINT_MAX bytes. */
static void check_varint(uint8_t *(*fn)(uint8_t *, uint64_t), uint64_t v)
{
	uint8_t a[PTW_PB_VARINT_MAX + 8], b[PTW_PB_VARINT_MAX + 8];
	memset(a, 0xEE, sizeof(a));
	memset(b, 0xEE, sizeof(b));
	size_t na = (size_t)(ptw_pb_write_varint(a, v) - a);
	size_t nb = (size_t)(fn(b, v) - b);
	cr_assert_eq(na, nb, "value %llu: %zu vs %zu bytes",
		     (unsigned long long)v, na, nb);
	cr_assert(memcmp(a, b, na) == 0, "value %llu", (unsigned long long)v);
	for (size_t k = PTW_PB_VARINT_MAX; k < sizeof(b); k++)
		cr_assert_eq(b[k], 0xEE);
}

static uint8_t *varint_nb(uint8_t *p, uint64_t v)
{
	return ptw_pb_write_varint_nb(p, v);
}

static uint8_t *varint_2b(uint8_t *p, uint64_t v)
{
	return ptw_pb_write_varint_2b(p, v);
}

/* The branch-free and the two-byte varint writers encode every value as
 * the loop does, around each length boundary, at random, and (two-byte)
 * every value below 2^16. */
Test(pb, fast_varints_match_the_loop)
{
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < 200000; i++) {
		uint64_t v;
		if (i < 64 * 3) {
			int bit = i / 3;
			v = (1ull << bit) + (uint64_t)(i % 3) - 1; /* 2^k-1, 2^k, 2^k+1 */
		} else {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v = x >> (x % 64);
		}
		check_varint(varint_nb, v);
		check_varint(varint_2b, v);
	}
	for (uint64_t v = 0; v < (1u << 16); v++)
		check_varint(varint_2b, v);
}
