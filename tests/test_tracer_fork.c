/* test_tracer_fork.c - a thread name set with ptw_set_thread_name before
 * fork() stays with the forking thread in the child, as the OS name does:
 * a child that starts its own trace shows it in trace_processor's thread
 * table (the in-house model always; the real trace_processor when
 * PTW_SHARED_DIR has it), whether the parent was tracing at the fork or
 * not.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"

/* TSan refuses to start a thread in the child of a multi-threaded fork
 * (die_after_fork), which the child's session needs. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_BUILD 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TSAN_BUILD 1
#endif
#ifndef TSAN_BUILD
#define TSAN_BUILD 0
#endif
/* ASan (clang 14) does not hold its allocator's lock across fork(): when
 * the parent's backend thread was allocating at the fork, the child's
 * first allocation, here the new backend thread's start, waits for ever
 * (seen in a CI run). glibc's own malloc is reset in the child. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#endif
#ifndef ASAN_BUILD
#define ASAN_BUILD 0
#endif

/* longer than an OS thread name (15 bytes): a child that lost ptw's name
 * would show the OS name, which cannot be this */
#define NAME "named before fork"

/* The child: traces one event into 'path' and exits 0 if all went well. */
static void child_traces(const char *path)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	if (ptw_start(&cfg) != 0)
		_exit(2);
	PTW_INSTANT("fork", "in child");
	_exit(ptw_stop() == 0 ? 0 : 3);
}

/* Forks a child that traces into 'path'; checks that its thread (tid =
 * its pid) is named NAME in the child's trace. */
static void fork_and_check_name(const char *path)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		child_traces(path);
	int status = 0;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child status 0x%x", status);

	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	const char *name = NULL;
	for (size_t i = 0; i < m->n_threads; i++)
		if (m->threads[i].tid == pid)
			name = m->threads[i].name;
	cr_assert_not_null(name, "no thread %d in the child's trace", (int)pid);
	cr_assert_str_eq(name, NAME);
	ptw_tp_model_free(m);
	ptw_trace_free(t);

	if (ptw_test_tp_shell()) {
		char sql[256], want[64];
		snprintf(sql, sizeof(sql),
			 "select name from thread where tid = %d", (int)pid);
		snprintf(want, sizeof(want), "\"%s\"\n", NAME);
		ptw_test_tp_expect_rows(path, sql, want);
		ptw_test_tp_expect_rows(path,
					"select count(*) from stats where value "
					"> 0 and severity in ('error', "
					"'data_loss')",
					"0\n");
	} else {
		fprintf(stderr, "no trace_processor_shell: its check skipped\n");
	}
	unlink(path);
}

Test(tracer_fork, a_name_set_before_fork_names_the_thread_in_the_childs_trace)
{
	cr_assert_eq(ptw_set_thread_name(NAME), 0);
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "fork-name");
	fork_and_check_name(path);
}

Test(tracer_fork, a_name_set_while_the_parent_traces_survives_fork_too)
{
	if (TSAN_BUILD)
		cr_skip_test("TSan: no thread may start after a multi-threaded fork");
	if (ASAN_BUILD)
		cr_skip_test("ASan: its allocator may be locked in the child of "
			     "a multi-threaded fork");
	/* qemu-user 7.2 aborts there (tools/test-cross.sh) */
	ptw_test_skip_if_no_thread_after_fork();
	char ppath[256], path[256];
	ptw_test_tmp_path(ppath, sizeof(ppath), "fork-parent");
	ptw_test_tmp_path(path, sizeof(path), "fork-name-live");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = ppath;
	cr_assert_eq(ptw_start(&cfg), 0);
	cr_assert_eq(ptw_set_thread_name(NAME), 0);
	PTW_INSTANT("fork", "in parent");
	fork_and_check_name(path);
	cr_assert_eq(ptw_stop(), 0);
	/* the parent's own trace names it too */
	struct ptw_trace *t = ptw_test_load_checked_or_fail(ppath, 0);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	const char *name = NULL;
	for (size_t i = 0; i < m->n_threads; i++)
		if (m->threads[i].tid == (int64_t)gettid())
			name = m->threads[i].name;
	cr_assert_not_null(name);
	cr_assert_str_eq(name, NAME);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(ppath);
}
