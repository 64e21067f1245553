/* ptw_test.h - helpers for every Criterion suite: temp files, loading and
 * checking traces with the in-house trace_processor model.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Linked into every test binary (configure links tests/support/ into each).
 * Include it as "support/ptw_test.h" from tests/test_NAME.c.
 * Functions named _or_fail end the current Criterion test with a message
 * (file, byte offset, reason) instead of returning an error.
 *
 * Typical use:
 *
 *     char path[256];
 *     ptw_test_tmp_path(path, sizeof(path), "nested");
 *     ... write a trace to path with the writer ...
 *     struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
 *     size_t n;
 *     const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
 *     cr_assert_str_eq(ev[0].name, "work");
 *     struct ptw_tp_model *m = ptw_test_model_or_fail(t);
 *     cr_assert_eq(m->slices[0].dur, 2500);
 *     ptw_tp_model_free(m);
 *     ptw_trace_free(t);
 *     unlink(path);
 */
#ifndef PTW_TEST_H
#define PTW_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "ptw/tracer.h"
#include "reader/tp_model.h"
#include "reader/trace_check.h"
#include "reader/trace_read.h"

/* Writes a unique path "<TMPDIR or /tmp>/ptw-<tag>-<pid>-<n>.pftrace"
 * into buf and returns buf. The file is not created. */
char *ptw_test_tmp_path(char *buf, size_t len, const char *tag);

/* ptw_start_ex(cfg), or the test fails with ptw's message. */
void ptw_test_start_or_fail(const struct ptw_config *cfg);

/* Starts tracing into a new temporary file named after 'tag' (its path
 * into path[len]), producers waiting when their ring is full
 * (PTW_OVERFLOW_WAIT), or the test fails with ptw's message. */
void ptw_test_start_file(char *path, size_t len, const char *tag);

/* The source tree's root (from this file's path: tests/support/). */
void ptw_test_src_root(char *buf, size_t len);

/* BUILDDIR/bin/NAME for the test binary BUILDDIR/tests/test_x, into buf
 * (a command to run, not a file to read); 0 if it is built, else -1. When
 * PTW_TEST_RUNNER is set (the command that runs this build's programs,
 * as "qemu-s390x -L /usr/s390x-linux-gnu" for a cross build: see
 * tools/test-cross.sh), it is BUILDDIR/bin-run/NAME, a script that runs
 * the program with it. */
int ptw_test_bin(char *buf, size_t len, const char *name);

/* ptw_test_bin() into a static buffer; skips the current Criterion test
 * if the program is not built. */
const char *ptw_test_bin_or_skip(const char *name);

/* The reference corpus: $PTW_SHARED_DIR/corpus if set (make test sets
 * it), else <source root>/../shared/corpus. */
void ptw_test_corpus_dir(char *buf, size_t len);

/* ptw_test_corpus_dir(), then skips the current Criterion test if that is
 * not a directory: tests must pass on a machine without ../shared
 * (`make test-no-shared` checks it). */
void ptw_test_corpus_dir_or_skip(char *buf, size_t len);

/* Reads a whole file into a malloc'd buffer (*len bytes; NUL-terminated
 * for convenience). Fails the test if it cannot. */
uint8_t *ptw_test_read_file_or_fail(const char *path, size_t *len);

/* Fails the test (naming 'tag') unless the files at pa and pb hold the
 * same bytes, over 1000 of them, and make a valid trace; removes both. */
void ptw_test_same_files_or_fail(const char *pa, const char *pb,
				 const char *tag);

/* Writes 'len' bytes to 'path' (created/truncated). Fails the test on
 * error. */
void ptw_test_write_file_or_fail(const char *path, const void *data,
				 size_t len);

/* Loads a trace; fails the test with the loader's message if it does not
 * load or if trace_processor would refuse it (ptw_trace_fatal). */
struct ptw_trace *ptw_test_load_or_fail(const char *path);
struct ptw_trace *ptw_test_load_mem_or_fail(const void *data, size_t len);

/* Loads and runs ptw_trace_check(flags: PTW_CHECK_*); fails the test with
 * "path: byte N: message" on the first problem. */
struct ptw_trace *ptw_test_load_checked_or_fail(const char *path,
						uint32_t flags);

/* Builds the trace_processor model; fails the test on allocation error. */
struct ptw_tp_model *ptw_test_model_or_fail(const struct ptw_trace *t);

/* The n-th (0-based) event of 'type' (0: any) named 'name' (NULL: any),
 * in file order, or NULL. */
const struct ptw_trace_event *ptw_test_find_event(const struct ptw_trace *t,
						  int type, const char *name,
						  size_t nth);

/* The n-th slice row named 'name' in the model (in TP's slice order), or
 * NULL. */
const struct ptw_tp_slice *ptw_test_find_slice(const struct ptw_tp_model *m,
					       const char *name, size_t nth);

/* The annotation named 'name' of an event, or NULL. */
const struct ptw_trace_arg *ptw_test_find_arg(const struct ptw_trace_event *e,
					      const char *name);

/* Decodes hex text ("0a 2b 50 02 ...", whitespace ignored) into a malloc'd
 * buffer; fails the test on a bad digit. */
uint8_t *ptw_test_hex_or_fail(const char *hex, size_t *len);

/* Skips the current test, with the reason, when PTW_TEST_NO_THREAD_AFTER_FORK
 * is set: tools/test-cross.sh sets it when its qemu-user cannot start a
 * thread in the child of a fork() taken while other threads ran
 * (tests/cross/threaded_fork.c). For the tests whose forked child starts
 * a thread (ptw_start) after the parent's threads ran. */
void ptw_test_skip_if_no_thread_after_fork(void);

/* 'normal', or 'small' when the environment sets PTW_TEST_SCALE=small
 * (the TSan run). */
size_t ptw_test_scale(size_t normal, size_t small);

#endif /* PTW_TEST_H */
