/* tp_shell.c - runs the real trace_processor_shell from tests.
 * SPDX-License-Identifier: Apache-2.0 */
#include "tp_shell.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptw_test.h"

const char *ptw_test_tp_find(const char **looked)
{
	static char path[4096];
	const char *env = getenv("PTW_SHARED_DIR");
	if (env && *env) {
		snprintf(path, sizeof(path), "%s/tp/trace_processor_shell", env);
	} else {
		char root[3000];
		ptw_test_src_root(root, sizeof(root));
		snprintf(path, sizeof(path),
			 "%s/../shared/tp/trace_processor_shell", root);
	}
	if (looked)
		*looked = path;
	return access(path, X_OK) == 0 ? path : NULL;
}

const char *ptw_test_tp_shell(void) { return ptw_test_tp_find(NULL); }

char *ptw_test_tp_run(const char *tp, const char *trace, const char *sql)
{
	size_t cn = strlen(tp) + strlen(trace) + strlen(sql) + 64;
	char *cmd = malloc(cn);
	cr_assert_not_null(cmd);
	snprintf(cmd, cn, "'%s' -Q \"%s\" '%s' 2>/dev/null", tp, sql, trace);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p, "cannot run %s", cmd);
	free(cmd);
	size_t cap = 1 << 16, len = 0, n;
	char *out = malloc(cap);
	cr_assert_not_null(out);
	while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2) {
			char *nb = realloc(out, cap *= 2);
			cr_assert_not_null(nb);
			out = nb;
		}
	}
	out[len] = '\0';
	if (pclose(p) != 0) {
		free(out);
		return NULL;
	}
	char *nl = strchr(out, '\n');
	memmove(out, nl ? nl + 1 : out + len, strlen(nl ? nl + 1 : "") + 1);
	return out;
}

char *ptw_test_tp_query(const char *trace, const char *sql)
{
	const char *tp = ptw_test_tp_shell();
	cr_assert_not_null(tp, "no trace_processor_shell");
	char *out = ptw_test_tp_run(tp, trace, sql);
	cr_assert_not_null(out, "trace_processor_shell failed on %s: %s",
			   trace, sql);
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

void ptw_test_tp_expect_no_error_stats(const char *trace)
{
	/* the entries themselves, so that a failure names them */
	ptw_test_tp_expect_rows(trace,
				"select name, idx, value from stats where "
				"value > 0 and severity in ('error', "
				"'data_loss')",
				"");
}

int ptw_test_tp_rows(const char *trace, const char *sql, char *out,
		     size_t max)
{
	out[0] = '\0';
	const char *tp = ptw_test_tp_shell();
	if (!tp)
		return -1;
	char *rows = ptw_test_tp_run(tp, trace, sql);
	cr_assert_not_null(rows, "trace_processor_shell failed on %s", trace);
	size_t n = 0;
	for (const char *p = rows; *p && n + 1 < max; p++)
		if (*p != '"')
			out[n++] = *p == '\n' ? ';' : *p;
	out[n] = '\0';
	free(rows);
	return 0;
}

int ptw_test_tp_loads(const char *tp, const char *trace)
{
	size_t cn = strlen(tp) + strlen(trace) + 64;
	char *cmd = malloc(cn);
	cr_assert_not_null(cmd);
	snprintf(cmd, cn, "'%s' -Q 'select 1' '%s' >/dev/null 2>&1", tp,
		 trace);
	int st = system(cmd);
	free(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}
