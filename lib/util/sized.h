/* sized.h - copying the caller's options and stats structs across library
 * versions (the "extensible struct" rule of writer.h and tracer.h).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_SIZED_H
#define PTW_SIZED_H

#include <stddef.h>
#include <string.h>

#include "ptw/error.h"

/* Copies the caller's struct 'src' of 'size' bytes (as the caller's header
 * knows it) into the library's 'dst' of 'dst_size' bytes: fields the caller
 * does not know are zero (their default). A larger caller struct is
 * accepted only if the bytes the library does not know are all zero.
 * NULL 'src': all zero. Returns 0 or PTW_ERR_INVALID. */
static inline int ptw_sized_in(void *dst, size_t dst_size, const void *src,
			       size_t size)
{
	memset(dst, 0, dst_size);
	if (!src)
		return 0;
	if (size > dst_size) {
		const unsigned char *p = src;
		for (size_t i = dst_size; i < size; i++)
			if (p[i])
				return PTW_ERR_INVALID;
		size = dst_size;
	}
	memcpy(dst, src, size);
	return 0;
}

/* Copies the library's 'src' (src_size bytes) out to the caller's 'dst' of
 * 'size' bytes: as much as both know; fields only the caller knows are 0. */
static inline void ptw_sized_out(void *dst, size_t size, const void *src,
				 size_t src_size)
{
	size_t n = size < src_size ? size : src_size;
	memcpy(dst, src, n);
	if (size > n)
		memset((unsigned char *)dst + n, 0, size - n);
}

#endif /* PTW_SIZED_H */
