/* test_error.c - status strings and error-record formatting.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ptw/error.h"

Test(error, every_status_has_its_own_description)
{
	static const int codes[] = {PTW_OK, PTW_ERR_NOMEM, PTW_ERR_IO,
				    PTW_ERR_INVALID, PTW_ERR_FORMAT,
				    PTW_ERR_LIMIT, PTW_ERR_STATE};
	const char *unknown = ptw_strerror(12345);
	cr_assert_not_null(unknown);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *s = ptw_strerror(codes[i]);
		cr_assert_not_null(s);
		cr_assert_str_neq(s, unknown, "code %d", codes[i]);
		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(s, ptw_strerror(codes[j]));
	}
	cr_assert_str_eq(ptw_strerror(-99), unknown);
}

Test(error, set_formats_message_and_appends_errno_text)
{
	struct ptw_error e;
	memset(&e, 0x55, sizeof(e));
	int rc = ptw_error_set(&e, PTW_ERR_IO, ENOSPC, "write %s at %d", "x.pftrace", 42);
	cr_assert_eq(rc, PTW_ERR_IO);
	cr_assert_eq(e.code, PTW_ERR_IO);
	cr_assert_eq(e.sys_errno, ENOSPC);
	char want[256];
	snprintf(want, sizeof(want), "write x.pftrace at 42: %s", strerror(ENOSPC));
	cr_assert_str_eq(e.msg, want);
	rc = ptw_error_set(&e, PTW_ERR_INVALID, 0, "plain");
	cr_assert_eq(rc, PTW_ERR_INVALID);
	cr_assert_eq(e.sys_errno, 0);
	cr_assert_str_eq(e.msg, "plain");
}

Test(error, set_without_record_returns_code_and_long_messages_truncate)
{
	cr_assert_eq(ptw_error_set(NULL, PTW_ERR_FORMAT, 0, "x"), PTW_ERR_FORMAT);
	char big[1000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	struct ptw_error e;
	ptw_error_set(&e, PTW_ERR_LIMIT, EINVAL, "%s", big);
	cr_assert_eq(strlen(e.msg), PTW_ERROR_MSG_MAX - 1);
}
