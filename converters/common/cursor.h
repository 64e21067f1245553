/* cursor.h - bounds-checked little-endian reads from a byte buffer.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A cursor is a view of 'n' bytes at 'p' with a read position. Every read
 * checks the remaining length first and returns -1 without moving when the
 * bytes are not there, so a decoder built on it can never read past its
 * input. Header-only: the reads are inlined into the decoders' loops. */
#ifndef PTW_CURSOR_H
#define PTW_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ptw_cursor {
	const uint8_t *p;
	size_t n;   /* bytes in the view */
	size_t pos; /* next byte to read, 0..n */
};

static inline void ptw_cursor_init(struct ptw_cursor *c, const void *p,
				   size_t n)
{
	c->p = (const uint8_t *)p;
	c->n = n;
	c->pos = 0;
}

/* Bytes left to read. */
static inline size_t ptw_cursor_left(const struct ptw_cursor *c)
{
	return c->n - c->pos;
}

/* 1 if at least 'k' bytes are left. */
static inline int ptw_cursor_has(const struct ptw_cursor *c, size_t k)
{
	return c->n - c->pos >= k;
}

static inline int ptw_cursor_u8(struct ptw_cursor *c, uint8_t *out)
{
	if (!ptw_cursor_has(c, 1))
		return -1;
	*out = c->p[c->pos++];
	return 0;
}

/* Little-endian loads of bytes known to be there: through memcpy (one
 * unaligned load), swapped on big-endian hosts. */
static inline uint32_t ptw_load_le32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint64_t ptw_load_le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline int ptw_cursor_le32(struct ptw_cursor *c, uint32_t *out)
{
	if (!ptw_cursor_has(c, 4))
		return -1;
	*out = ptw_load_le32(c->p + c->pos);
	c->pos += 4;
	return 0;
}

static inline int ptw_cursor_le64(struct ptw_cursor *c, uint64_t *out)
{
	if (!ptw_cursor_has(c, 8))
		return -1;
	*out = ptw_load_le64(c->p + c->pos);
	c->pos += 8;
	return 0;
}

/* Points *out at the next 'k' bytes (no copy) and skips them. */
static inline int ptw_cursor_bytes(struct ptw_cursor *c, size_t k,
				   const uint8_t **out)
{
	if (!ptw_cursor_has(c, k))
		return -1;
	*out = c->p + c->pos;
	c->pos += k;
	return 0;
}

#endif /* PTW_CURSOR_H */
