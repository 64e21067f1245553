/* tp_shell.h - the real trace_processor_shell (Perfetto v58) for tests
 * that check what it makes of a trace: found at $PTW_SHARED_DIR/tp, else
 * <source root>/../shared/tp. Tests must pass without it (their checks by
 * trace_processor are then skipped).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TEST_TP_SHELL_H
#define PTW_TEST_TP_SHELL_H

/* The path of trace_processor_shell, or NULL if it is not there. */
const char *ptw_test_tp_shell(void);

/* Runs one query (no double quotes in it) on 'trace' with
 * trace_processor_shell (which must exist); returns its CSV rows without
 * the header line, one per line, malloc'd. Fails the test if the shell
 * fails. */
char *ptw_test_tp_query(const char *trace, const char *sql);

/* Fails the test unless the query's rows (as ptw_test_tp_query returns
 * them, e.g. "\"name\"\n" or "0\n") are 'want'. */
void ptw_test_tp_expect_rows(const char *trace, const char *sql,
			     const char *want);

#endif /* PTW_TEST_TP_SHELL_H */
