/* grow.h - growing arrays with realloc, every size checked for overflow
 * (shared by lib/, converters/, reader/ and tools/).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_GROW_H
#define PTW_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The capacity, in elements of 'elem' bytes, that an array of 'cap'
 * elements should grow to so that it holds 'need': the largest of twice
 * 'cap', 'min' and 'need' (at least 1), lowered to SIZE_MAX / elem so
 * that the byte size never overflows size_t. Returns 0 if 'need' elements
 * do not fit in size_t bytes (or elem is 0). */
static inline size_t ptw_grow_cap(size_t cap, size_t need, size_t min,
				  size_t elem)
{
	if (elem == 0 || need > SIZE_MAX / elem)
		return 0;
	size_t max = SIZE_MAX / elem;
	size_t nc = cap > max / 2 ? max : cap * 2;
	if (nc < min)
		nc = min;
	if (nc < need)
		nc = need;
	if (nc > max)
		nc = max;
	return nc ? nc : 1;
}

/* realloc(arr, n * elem), or NULL without calling realloc if n * elem
 * overflows size_t or is 0 (so a failed ptw_grow_cap passes through). On
 * NULL 'arr' is untouched and still owned by the caller. */
static inline void *ptw_realloc_array(void *arr, size_t n, size_t elem)
{
	if (n == 0 || elem == 0 || n > SIZE_MAX / elem)
		return NULL;
	return realloc(arr, n * elem);
}

/* Makes 'arr' (room for *cap elements of 'elem' bytes) hold at least
 * 'need' elements, growing it to ptw_grow_cap(*cap, need, min, elem)
 * elements when it is smaller (a NULL 'arr' is always allocated). Returns
 * the array, moved or not, and updates *cap; NULL when the size overflows
 * size_t or realloc fails: then 'arr' and *cap are unchanged and 'arr' is
 * still valid. The caller stores the result into its own typed pointer
 * (no (void **) parameter: writing a T * through a void * lvalue is
 * undefined behaviour). Usage:
 *     void *p = ptw_grow(t->v, &t->cap, t->n + 1, 16, sizeof(*t->v));
 *     if (!p)
 *             return PTW_ERR_NOMEM;
 *     t->v = p; */
static inline void *ptw_grow(void *arr, size_t *cap, size_t need, size_t min,
			     size_t elem)
{
	if (need <= *cap && arr)
		return arr;
	size_t nc = ptw_grow_cap(*cap, need, min, elem);
	void *p = nc ? realloc(arr, nc * elem) : NULL;
	if (p)
		*cap = nc;
	return p;
}

/* ptw_grow() for 'more' elements after the first 'len' (appending to a
 * buffer); NULL also when len + more overflows size_t. */
static inline void *ptw_grow_by(void *arr, size_t *cap, size_t len,
				size_t more, size_t min, size_t elem)
{
	if (more > SIZE_MAX - len)
		return NULL;
	return ptw_grow(arr, cap, len + more, min, elem);
}

#endif /* PTW_GROW_H */
