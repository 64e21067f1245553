/* fuzz_appletrace_text.c - libFuzzer target for text fragments (line
 * rules, NUL padding, crash-cut lines) and the emitter behind them.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The input is one text fragment; its events go through the emitter
 * (X form) into a writer on /dev/null. Any outcome but a crash or a
 * sanitizer report is fine. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "converters/appletrace/appletrace.h"
#include "converters/emit/emit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ignore_warning(void *ctx, const char *file, uint64_t line,
			   const char *msg)
{
	(void)ctx;
	(void)file;
	(void)line;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* Small tables: a writer is opened per input. */
	struct ptw_writer_options wo = {.close_fd = 1, .max_interned = 64,
					.flush_bytes = 4096};
	struct ptw_writer *w = ptw_writer_open_fd(fd, &wo, NULL);
	if (!w) {
		close(fd);
		return 0;
	}
	struct ptw_emit *em = ptw_emit_create(w, NULL);
	struct ptw_emit_input in = {.mode = PTW_EMIT_XFORM, .max_held = 64};
	struct ptw_appletrace_warn warn = {ignore_warning, NULL, NULL};
	if (em && ptw_emit_begin_input(em, &in, NULL) == 0) {
		struct ptw_error err;
		int rc = ptw_appletrace_text_read_mem(data, size,
						      "trace.appletrace",
						      ptw_emit_event, em, &warn,
						      NULL, &err);
		if (rc == 0 && ptw_emit_end_input(em, &err) == 0)
			ptw_emit_finish(em, &err);
	}
	ptw_emit_destroy(em);
	ptw_writer_close(w, NULL);
	return 0;
}
