/* tp_shell.c - see tp_shell.h.
 * SPDX-License-Identifier: Apache-2.0 */
#include "tp_shell.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw_test.h"

const char *ptw_test_tp_shell(void)
{
	static char path[600];
	const char *env = getenv("PTW_SHARED_DIR");
	if (env && *env) {
		snprintf(path, sizeof(path), "%s/tp/trace_processor_shell", env);
	} else {
		char root[512];
		ptw_test_src_root(root, sizeof(root));
		snprintf(path, sizeof(path),
			 "%s/../shared/tp/trace_processor_shell", root);
	}
	return access(path, X_OK) == 0 ? path : NULL;
}

char *ptw_test_tp_query(const char *trace, const char *sql)
{
	const char *tp = ptw_test_tp_shell();
	cr_assert_not_null(tp, "no trace_processor_shell");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "'%s' -Q \"%s\" '%s' 2>/dev/null", tp, sql,
		 trace);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t cap = 1 << 12, len = 0, n;
	char *out = malloc(cap);
	cr_assert_not_null(out);
	while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			out = realloc(out, cap);
			cr_assert_not_null(out);
		}
	}
	out[len] = '\0';
	int rc = pclose(p);
	cr_assert_eq(rc, 0, "%s failed:\n%s", cmd, out);
	char *nl = strchr(out, '\n');
	cr_assert_not_null(nl, "no header in: %s", out);
	memmove(out, nl + 1, strlen(nl + 1) + 1);
	return out;
}

void ptw_test_tp_expect_rows(const char *trace, const char *sql,
			     const char *want)
{
	char *got = ptw_test_tp_query(trace, sql);
	char shown[512];
	snprintf(shown, sizeof(shown), "%s", got);
	int same = strcmp(got, want) == 0;
	free(got); /* before a failing assert, which leaves the test */
	cr_assert(same, "%s:\ngot:\n%s\nwant:\n%s", sql, shown, want);
}
