/* pb.h - inline protobuf encoder writing into a growable byte buffer.
 * SPDX-License-Identifier: Apache-2.0
 *
 * One encoder for every message ptw writes: tags, varints, fixed64/double,
 * length-delimited bytes and nested messages. Nested lengths are exact,
 * minimal varints: ptw_pb_begin_nested() reserves one length byte, and
 * ptw_pb_end_nested() moves the body up in the rare case the message is
 * 128 bytes or longer (Perfetto pads every length to 4 bytes instead).
 *
 *     data                 mark   mark+1                 len        cap
 *      |  ...outer fields...| len |  nested body ...     |  free    |
 *
 * Allocation failure is sticky: the buffer sets `oom`, later appends are
 * no-ops, and the owner checks `oom` once per packet. A buffer is not
 * thread-safe. Field numbers live in lib/encode/pb_fields.h. */
#ifndef PTW_PB_H
#define PTW_PB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum ptw_pb_wire_type {
	PTW_PB_WT_VARINT = 0,
	PTW_PB_WT_FIXED64 = 1,
	PTW_PB_WT_LEN = 2,
	PTW_PB_WT_FIXED32 = 5,
};

#define PTW_PB_TAG(field, wt) (((uint32_t)(field) << 3) | (uint32_t)(wt))
#define PTW_PB_VARINT_MAX 10

/* Visible because the inline appenders need its fields. */
struct ptw_pb_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int oom; /* set once an allocation failed; appends are then no-ops */
};

/* Allocates an initial capacity (0: 4096 bytes). Returns 0 or PTW_ERR_NOMEM. */
int ptw_pb_buf_init(struct ptw_pb_buf *b, size_t initial_cap);
/* Frees the storage; the buffer may be initialised again. NULL is a no-op. */
void ptw_pb_buf_free(struct ptw_pb_buf *b);
/* Grows capacity to hold at least `need` more bytes (doubling). Returns 0,
 * or PTW_ERR_NOMEM and sets b->oom. */
int ptw_pb_reserve_slow(struct ptw_pb_buf *b, size_t need);
/* Finishes a nested message whose body reached 128 bytes or more. */
void ptw_pb_end_nested_slow(struct ptw_pb_buf *b, size_t mark);

static inline void ptw_pb_buf_reset(struct ptw_pb_buf *b) { b->len = 0; }

/* ---- inline implementation, not API -------------------------------- */

static inline int ptw_pb_reserve(struct ptw_pb_buf *b, size_t n)
{
	if (__builtin_expect(b->cap - b->len >= n, 1))
		return 1;
	return ptw_pb_reserve_slow(b, n) == 0;
}

static inline unsigned ptw_pb_varint_size(uint64_t v)
{
	/* bits needed / 7, rounded up; v|1 keeps clz defined for 0. */
	unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1u);
	return (bits + 6u) / 7u;
}

static inline uint8_t *ptw_pb_write_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80u) {
		*p++ = (uint8_t)(v | 0x80u);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* The same encoding without a data-dependent branch for values below
 * 2^28 (timestamp deltas, whose length varies from event to event and
 * would mispredict the loop's exit): the four bytes are composed in a
 * word and stored at once. WARNING: writes 4 bytes whatever the length,
 * so up to 3 past the varint's end (callers reserve PTW_PB_VARINT_MAX
 * bytes anyway). */
static inline __attribute__((always_inline)) uint8_t *
ptw_pb_write_varint_nb(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (__builtin_expect(v < (1u << 28), 1)) {
		/* bytes needed, by the count of leading zero bits of x | 1 */
		static const uint8_t len_by_clz[32] = {
			5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3,
			3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1};
		uint32_t x = (uint32_t)v;
		uint32_t w = (x & 0x7Fu) | ((x << 1) & 0x7F00u) |
			     ((x << 2) & 0x7F0000u) | ((x << 3) & 0x7F000000u);
		/* the continuation bits of an n-byte varint */
		static const uint32_t cont_by_len[5] = {0, 0, 0x80u, 0x8080u,
							0x808080u};
		unsigned n = len_by_clz[__builtin_clz(x | 1u)];
		w |= cont_by_len[n];
		memcpy(p, &w, 4);
		return p + n;
	}
#endif
	return ptw_pb_write_varint(p, v);
}

/* The same for values that are mostly below 2^14 (the tracer's time
 * steps): those in two stores, others as ptw_pb_write_varint_nb. Also
 * writes up to 4 bytes whatever the length. */
static inline __attribute__((always_inline)) uint8_t *
ptw_pb_write_varint_2b(uint8_t *p, uint64_t v)
{
	if (__builtin_expect(v < (1u << 14), 1)) {
		uint32_t two = v >= 0x80u;
		p[0] = (uint8_t)(v | two << 7);
		p[1] = (uint8_t)(v >> 7);
		return p + 1 + two;
	}
	return ptw_pb_write_varint_nb(p, v);
}

/* Pointer-form field writers for callers that reserved the space first
 * (ptw_pb_reserve): each writes tag + value at p and returns the end.
 * WARNING: no bounds check; at most 2 * PTW_PB_VARINT_MAX bytes
 * (fixed64: PTW_PB_VARINT_MAX + 8). */
static inline uint8_t *ptw_pb_write_varint_field(uint8_t *p, uint32_t field,
						 uint64_t v)
{
	p = ptw_pb_write_varint(p, PTW_PB_TAG(field, PTW_PB_WT_VARINT));
	return ptw_pb_write_varint(p, v);
}

static inline uint8_t *ptw_pb_write_fixed64_field(uint8_t *p, uint32_t field,
						  uint64_t v)
{
	p = ptw_pb_write_varint(p, PTW_PB_TAG(field, PTW_PB_WT_FIXED64));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8); /* one store */
	return p + 8;
#else
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(v >> (8 * i)); /* little-endian */
	return p;
#endif
}

/* Tag of a length-delimited field whose 1-byte length the caller fills
 * in later (body known to be under 128 bytes). */
static inline uint8_t *ptw_pb_write_len_tag(uint8_t *p, uint32_t field)
{
	return ptw_pb_write_varint(p, PTW_PB_TAG(field, PTW_PB_WT_LEN));
}

static inline void ptw_pb_append_raw(struct ptw_pb_buf *b, const void *src,
				     size_t n)
{
	if (!ptw_pb_reserve(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, src, n);
	b->len += n;
}

static inline void ptw_pb_append_varint(struct ptw_pb_buf *b, uint64_t v)
{
	if (!ptw_pb_reserve(b, PTW_PB_VARINT_MAX))
		return;
	b->len = (size_t)(ptw_pb_write_varint(b->data + b->len, v) - b->data);
}

/* uint32/uint64/bool/enum fields; int32/int64 go through the _int64 form. */
static inline void ptw_pb_append_varint_field(struct ptw_pb_buf *b,
					      uint32_t field, uint64_t v)
{
	if (!ptw_pb_reserve(b, 2 * PTW_PB_VARINT_MAX))
		return;
	uint8_t *p = b->data + b->len;
	p = ptw_pb_write_varint(p, PTW_PB_TAG(field, PTW_PB_WT_VARINT));
	p = ptw_pb_write_varint(p, v);
	b->len = (size_t)(p - b->data);
}

/* int32/int64: two's complement, not zigzag (negative = 10 bytes). */
static inline void ptw_pb_append_int64_field(struct ptw_pb_buf *b,
					     uint32_t field, int64_t v)
{
	ptw_pb_append_varint_field(b, field, (uint64_t)v);
}

static inline void ptw_pb_append_fixed64_field(struct ptw_pb_buf *b,
					       uint32_t field, uint64_t v)
{
	if (!ptw_pb_reserve(b, PTW_PB_VARINT_MAX + 8))
		return;
	uint8_t *p = b->data + b->len;
	p = ptw_pb_write_varint(p, PTW_PB_TAG(field, PTW_PB_WT_FIXED64));
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(v >> (8 * i)); /* little-endian */
	b->len = (size_t)(p - b->data);
}

static inline void ptw_pb_append_double_field(struct ptw_pb_buf *b,
					      uint32_t field, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	ptw_pb_append_fixed64_field(b, field, bits);
}

static inline void ptw_pb_append_bytes_field(struct ptw_pb_buf *b,
					     uint32_t field, const void *src,
					     size_t n)
{
	if (!ptw_pb_reserve(b, 2 * PTW_PB_VARINT_MAX + n))
		return;
	uint8_t *p = b->data + b->len;
	p = ptw_pb_write_varint(p, PTW_PB_TAG(field, PTW_PB_WT_LEN));
	p = ptw_pb_write_varint(p, n);
	if (n)
		memcpy(p, src, n);
	b->len = (size_t)(p + n - b->data);
}

static inline void ptw_pb_append_string_field(struct ptw_pb_buf *b,
					      uint32_t field, const char *s)
{
	ptw_pb_append_bytes_field(b, field, s, strlen(s));
}

/* Writes the tag of a nested message and reserves one length byte; returns
 * the mark to pass to ptw_pb_end_nested(). */
static inline size_t ptw_pb_begin_nested(struct ptw_pb_buf *b, uint32_t field)
{
	if (!ptw_pb_reserve(b, PTW_PB_VARINT_MAX + 1))
		return 0;
	uint8_t *p = b->data + b->len;
	p = ptw_pb_write_varint(p, PTW_PB_TAG(field, PTW_PB_WT_LEN));
	b->len = (size_t)(p - b->data) + 1;
	return b->len - 1;
}

static inline void ptw_pb_end_nested(struct ptw_pb_buf *b, size_t mark)
{
	if (b->oom)
		return;
	size_t body = b->len - mark - 1;
	if (__builtin_expect(body < 0x80u, 1))
		b->data[mark] = (uint8_t)body;
	else
		ptw_pb_end_nested_slow(b, mark);
}

#endif /* PTW_PB_H */
