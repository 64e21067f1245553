/* utf8.h - cutting strings to a byte limit without splitting a UTF-8
 * character (the tracer's name and string limits, the converter's), and
 * replacing what is not UTF-8 by U+FFFD (the writer's strings, the JSON
 * export). Private.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_UTF8_H
#define PTW_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The longest prefix of 's' (of at least max + 1 readable bytes, or
 * NUL-terminated before that) that is at most 'max' bytes and does not end
 * inside a multi-byte character: a cut at 'max' backs off over
 * continuation bytes (10xxxxxx) to the start of the character they
 * continue. Input that is not UTF-8 is cut the same way. */
static inline size_t ptw_utf8_prefix(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);
	if (n <= max)
		return n;
	n = max;
	while (n && ((unsigned char)s[n] & 0xC0u) == 0x80u)
		n--;
	return n;
}

/* Copies the ptw_utf8_prefix of 'src' that fits 'size' bytes with its NUL
 * (size >= 1). */
static inline void ptw_utf8_copy(char *dst, size_t size, const char *src)
{
	size_t n = ptw_utf8_prefix(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Length of the valid UTF-8 character at s (n >= 1 bytes left), or 0;
 * if 0, *bad is the length of its maximal invalid subpart (the lead byte
 * and the continuation bytes that fit it, at least 1), which becomes one
 * U+FFFD, as browsers' TextDecoder (the Perfetto UI's) replaces it. */
static inline size_t ptw_utf8_char(const unsigned char *s, size_t n,
				   size_t *bad)
{
	unsigned b0 = s[0], need, lo = 0x80, hi = 0xBF;
	*bad = 1;
	if (b0 < 0x80)
		return 1;
	if (b0 >= 0xC2 && b0 <= 0xDF)
		need = 1;
	else if (b0 == 0xE0)
		need = 2, lo = 0xA0;
	else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF)
		need = 2;
	else if (b0 == 0xED)
		need = 2, hi = 0x9F;
	else if (b0 == 0xF0)
		need = 3, lo = 0x90;
	else if (b0 >= 0xF1 && b0 <= 0xF3)
		need = 3;
	else if (b0 == 0xF4)
		need = 3, hi = 0x8F;
	else
		return 0;
	for (unsigned k = 1; k <= need; k++) {
		unsigned l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
		if (k >= n || s[k] < l || s[k] > h) {
			*bad = k;
			return 0;
		}
	}
	return need + 1;
}

/* The length of s[0..n) with each maximal invalid subpart replaced by
 * U+FFFD (EF BF BD); *fixed = 1 if there was one. ASCII goes 8 bytes at
 * a time. */
static inline size_t ptw_utf8_fixed_len(const char *s0, size_t n, int *fixed)
{
	const unsigned char *s = (const unsigned char *)s0;
	size_t i = 0, out = 0, bad;
	*fixed = 0;
	while (i < n) {
		uint64_t w;
		if (n - i >= 8 && (memcpy(&w, s + i, 8),
				   !(w & 0x8080808080808080ull))) {
			i += 8;
			out += 8;
			continue;
		}
		size_t k = ptw_utf8_char(s + i, n - i, &bad);
		if (k) {
			i += k;
			out += k;
		} else {
			i += bad;
			out += 3;
			*fixed = 1;
		}
	}
	return out;
}

/* Writes s[0..n) to dst with each maximal invalid subpart replaced by
 * U+FFFD (ptw_utf8_fixed_len bytes); returns the end. */
static inline char *ptw_utf8_fix(char *dst, const char *s0, size_t n)
{
	const unsigned char *s = (const unsigned char *)s0;
	size_t i = 0, bad;
	while (i < n) {
		size_t k = ptw_utf8_char(s + i, n - i, &bad);
		if (k) {
			memcpy(dst, s + i, k);
			dst += k;
			i += k;
		} else {
			memcpy(dst, "\xEF\xBF\xBD", 3);
			dst += 3;
			i += bad;
		}
	}
	return dst;
}

#endif /* PTW_UTF8_H */
