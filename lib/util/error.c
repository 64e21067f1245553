/* error.c - status strings and error-record formatting.
 * SPDX-License-Identifier: Apache-2.0 */
#include "ptw/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *ptw_strerror(int code)
{
	switch (code) {
	case PTW_OK: return "success";
	case PTW_ERR_NOMEM: return "out of memory";
	case PTW_ERR_IO: return "I/O error";
	case PTW_ERR_INVALID: return "invalid argument or call";
	case PTW_ERR_FORMAT: return "malformed input";
	case PTW_ERR_LIMIT: return "size limit exceeded";
	case PTW_ERR_STATE: return "object closed or failed earlier";
	default: return "unknown error code";
	}
}

int ptw_error_vset(struct ptw_error *err, int code, int sys_errno,
		   const char *fmt, va_list ap)
{
	if (!err)
		return code;
	err->code = code;
	err->sys_errno = sys_errno;
	int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	if (n < 0)
		err->msg[0] = '\0';
	if (sys_errno) {
		size_t len = strlen(err->msg);
		snprintf(err->msg + len, sizeof(err->msg) - len, ": %s",
			 strerror(sys_errno));
	}
	return code;
}

int ptw_error_set(struct ptw_error *err, int code, int sys_errno,
		  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ptw_error_vset(err, code, sys_errno, fmt, ap);
	va_end(ap);
	return code;
}
