/* error.h - status codes and the error record every ptw object keeps.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Fallible calls return int: 0 (PTW_OK) or a negative PTW_ERR_* code.
 * Constructors return NULL on failure and fill an optional struct ptw_error.
 * NOMEM and IO errors are sticky on the object that hit them (every later
 * call and the final close return them); INVALID is not. The library never
 * prints: tools format ptw_error and exit non-zero. */
#ifndef PTW_ERROR_H
#define PTW_ERROR_H

#include <stdarg.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ptw_status {
	PTW_OK = 0,
	PTW_ERR_NOMEM = -1,   /* an allocation failed */
	PTW_ERR_IO = -2,      /* a read or write failed; sys_errno says why */
	PTW_ERR_INVALID = -3, /* bad argument or call out of order (misuse) */
	PTW_ERR_FORMAT = -4,  /* malformed input; input/offset/line say where */
	PTW_ERR_LIMIT = -5,   /* a documented size limit was exceeded */
	PTW_ERR_STATE = -6,   /* object closed, or failed earlier */
};

#define PTW_ERROR_MSG_MAX 256

struct ptw_error {
	int code;          /* enum ptw_status */
	int sys_errno;     /* errno for PTW_ERR_IO, else 0 */
	const char *input; /* input name (file), or NULL; static or owned by caller */
	uint64_t offset;   /* byte offset in input, when known */
	uint32_t line;     /* 1-based line, 0 if not applicable */
	uint32_t column;   /* 1-based column, 0 if not applicable */
	char msg[PTW_ERROR_MSG_MAX]; /* complete human-readable message */
};

/* Returns a constant description of a status code (any int is accepted). */
const char *ptw_strerror(int code);

/* Fills *err (if err is not NULL) with code, errno and a printf-formatted
 * message; returns code so callers can write `return ptw_error_set(...)`. */
int ptw_error_set(struct ptw_error *err, int code, int sys_errno,
		  const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/* The same with a va_list, for functions that take their own format. */
int ptw_error_vset(struct ptw_error *err, int code, int sys_errno,
		   const char *fmt, va_list ap);

#ifdef __cplusplus
}
#endif

#endif /* PTW_ERROR_H */
