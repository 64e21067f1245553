/* tp_shell.h - runs the real trace_processor_shell (Perfetto v58.2) from
 * tests that check what it makes of a trace.
 * SPDX-License-Identifier: Apache-2.0
 *
 * It is found at $PTW_SHARED_DIR/tp/trace_processor_shell, else at
 * <source root>/../shared/tp/trace_processor_shell. Tests must pass
 * without it (`make test` also runs with PTW_SHARED_DIR=/nonexistent):
 * skip the comparison when ptw_test_tp_shell() returns NULL. */
#ifndef PTW_TEST_TP_SHELL_H
#define PTW_TEST_TP_SHELL_H

#include <stddef.h>

/* The path of trace_processor_shell, or NULL if it is not there (the
 * path looked at is then in 'looked', if not NULL). */
const char *ptw_test_tp_find(const char **looked);
/* The same, for callers that do not say where it was looked for. */
const char *ptw_test_tp_shell(void);

/* Runs `TP -Q SQL TRACE` (SQL without double quotes) and returns its
 * stdout (CSV, the header line removed), one row a line, malloc'd, or
 * NULL if it exited non-zero. Fails the test if it cannot be run. */
char *ptw_test_tp_run(const char *tp, const char *trace, const char *sql);

/* The same with the shell found by ptw_test_tp_shell() (which must
 * exist); fails the test if the shell fails. */
char *ptw_test_tp_query(const char *trace, const char *sql);

/* Fails the test unless the query's rows (as ptw_test_tp_query returns
 * them, e.g. "\"name\"\n" or "0\n") are 'want'. */
void ptw_test_tp_expect_rows(const char *trace, const char *sql,
			     const char *want);

/* Fails the test if trace_processor's stats table has a non-zero entry
 * of severity error or data_loss for 'trace'. */
void ptw_test_tp_expect_no_error_stats(const char *trace);

/* Runs 'sql' on 'trace'; its rows (quotes removed) each followed by ';'
 * into out (at most max bytes). Returns 0, or -1 without trace_processor
 * (out is then ""). Fails the test if trace_processor fails. */
int ptw_test_tp_rows(const char *trace, const char *sql, char *out,
		     size_t max);

/* Loads 'trace' in trace_processor_shell (a query of the stats
 * table) and returns its exit status: 0 it loaded the file, non-zero it
 * refused it; -1 if it was killed by a signal or could not be run. */
int ptw_test_tp_loads(const char *tp, const char *trace);

#endif /* PTW_TEST_TP_SHELL_H */
