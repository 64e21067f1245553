/* test_tracer_config.c - what struct ptw_config must name: an output, and
 * never fd 0 unless asked for (issue 22 item 4).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"

/* Opens 'path' read-write as the process's fd 0 (as a shell's `<>` would);
 * returns a dup of the old fd 0 for restore_stdin(). */
static int stdin_read_write(const char *path)
{
	int f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(f, 0);
	int saved = dup(0);
	cr_assert_geq(saved, 0);
	cr_assert_eq(dup2(f, 0), 0);
	close(f);
	return saved;
}

static void restore_stdin(int saved)
{
	cr_assert_eq(dup2(saved, 0), 0);
	close(saved);
}

static off_t file_size(const char *path)
{
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	return st.st_size;
}

Test(tracer_config, a_zeroed_config_names_no_output_and_fd_0_stays_untouched)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "stdin-rw");
	int saved = stdin_read_write(path);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	int rc = ptw_start_ex(&cfg, &err);
	if (rc == 0) {
		PTW_INSTANT("t", "lands on stdin");
		ptw_stop();
	}
	restore_stdin(saved);
	cr_assert_eq(rc, PTW_ERR_INVALID, "ptw_start returned %d", rc);
	cr_assert(strstr(err.msg, "output_path") && strstr(err.msg, "output_fd") &&
		  strstr(err.msg, "output_fd_set") &&
		  strstr(err.msg, "PTW_MODE_RING"),
		  "the message says what to set: %s", err.msg);
	cr_assert_eq(file_size(path), 0, "nothing was written to fd 0");
	unlink(path);
}

Test(tracer_config, fd_0_is_written_when_asked_for)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "stdin-asked");
	int saved = stdin_read_write(path);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_fd = 0;
	cfg.output_fd_set = 1;
	int rc = ptw_start(&cfg);
	if (rc == 0) {
		PTW_INSTANT("t", "on fd 0");
		rc = ptw_stop();
	}
	restore_stdin(saved);
	cr_assert_eq(rc, 0);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	cr_assert_not_null(ptw_test_find_event(t, 0, "on fd 0", 0));
	ptw_trace_free(t);
	unlink(path);
}

Test(tracer_config, output_fd_set_with_a_negative_fd_is_refused)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_fd = -1;
	cfg.output_fd_set = 1;
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), PTW_ERR_INVALID);
	cr_assert_eq(ptw_is_running(), 0);
}

Test(tracer_config, ring_mode_needs_no_output)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = PTW_MODE_RING;
	cfg.ring_bytes = 1u << 20;
	cr_assert_eq(ptw_start(&cfg), 0);
	PTW_INSTANT("t", "kept in memory");
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "ring-snap");
	cr_assert_eq(ptw_snapshot(path), 0);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	cr_assert_not_null(ptw_test_find_event(t, 0, "kept in memory", 0));
	ptw_trace_free(t);
	unlink(path);
}
