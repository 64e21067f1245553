/* fuzz_appletrace_bin.c - libFuzzer target for the APLTRC01 decoder and
 * the emitter behind it.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Input: byte 0 picks where the data is split into two fragments of one
 * run (sharing the name table); the decoded events of both are converted
 * through the emitter (X form; simple events in batches, as ptw-convert
 * reads them) into a writer on /dev/null, so the reorder queue, the track
 * tables and the writer see arbitrary event streams.
 * Any outcome but a crash or a sanitizer report is fine. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "converters/appletrace/appletrace.h"
#include "converters/emit/emit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t split = 1 + (size_t)data[0] * (size - 1) / 255;
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
	struct ptw_appletrace_names *names = ptw_appletrace_names_create();
	struct ptw_emit_input in = {.mode = PTW_EMIT_XFORM, .max_held = 64};
	if (em && names && ptw_emit_begin_input(em, &in, NULL) == 0) {
		struct ptw_error err;
		int rc = ptw_appletrace_bin_read_mem_batch(
			data + 1, split - 1, "trace.appletracebin", names,
			ptw_emit_event, ptw_emit_simple_batch, em, NULL, &err);
		if (rc == 0)
			rc = ptw_appletrace_bin_read_mem_batch(
				data + split, size - split,
				"trace_1.appletracebin", names, ptw_emit_event,
				ptw_emit_simple_batch, em, NULL, &err);
		if (rc == 0 && ptw_emit_end_input(em, &err) == 0)
			ptw_emit_finish(em, &err);
	}
	ptw_appletrace_names_destroy(names);
	ptw_emit_destroy(em);
	ptw_writer_close(w, NULL);
	return 0;
}
