/* test_convert_utf8.c - the converter cuts names and string arguments longer
 * than the writer takes (PTW_MAX_STRING_LEN) at the last UTF-8 character
 * boundary, so trace_processor never stores a split character.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "test_convert_json.h"
#include "reader/trace_read.h"

/* Appends 'k' bytes: ASCII 'a's, then "é" (C3 A9) pairs. */
static size_t put_text(char *j, size_t len, size_t lead, size_t k)
{
	for (size_t i = 0; i < k; i++)
		j[len + i] = i < lead ? 'a'
			     : ((i - lead) % 2 ? (char)0xA9 : (char)0xC3);
	return len + k;
}

Test(convert_utf8, names_and_strings_over_the_limit_end_between_characters)
{
	/* "a" x (MAX - 2), then "é" pairs: the limit falls inside an "é". */
	size_t lead = PTW_MAX_STRING_LEN - 2, k = PTW_MAX_STRING_LEN + 40;
	size_t cap = 2 * k + 256, len = 0;
	char *j = malloc(cap);
	cr_assert(j);
	len += (size_t)snprintf(j, cap, "[{\"ph\":\"i\",\"pid\":1,\"tid\":1,"
				"\"ts\":1,\"name\":\"");
	len = put_text(j, len, lead, k);
	len += (size_t)snprintf(j + len, cap - len, "\",\"args\":{\"s\":\"");
	len = put_text(j, len, lead, k);
	len += (size_t)snprintf(j + len, cap - len, "\"}}]");

	char out[256];
	ptw_test_tmp_path(out, sizeof(out), "utf8-cut");
	ptw_test_convert_json(out, j, 0, NULL); /* snprintf ended j */
	free(j);

	struct ptw_error err = {0};
	struct ptw_trace *t = ptw_trace_load_file(out, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	int seen = 0;
	for (size_t i = 0; i < n; i++) {
		if (!ev[i].name || ev[i].name[0] != 'a')
			continue;
		seen = 1;
		/* lead 'a's fit, the "é" across the limit does not */
		cr_assert_eq(strlen(ev[i].name), lead);
		cr_assert_eq(ev[i].n_args, 1);
		cr_assert_eq(strlen(ev[i].args[0].v.s), lead);
	}
	cr_assert(seen);
	ptw_trace_free(t);
	unlink(out);
}
