/* utf8.h - cutting strings to a byte limit without splitting a UTF-8
 * character (the tracer's name and string limits, the converter's). Private.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_UTF8_H
#define PTW_UTF8_H

#include <stddef.h>
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

#endif /* PTW_UTF8_H */
