/* fuzz_emit_paths.c - differential libFuzzer target: the emitter's short
 * path (emit_fast.c), alone and fed in batches by the APLTRC01 reader, and
 * its general path must write the same trace: the same bytes, or for the
 * batches, which write thread by thread, the same bytes and events
 * sequence by sequence.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Input: byte 0's low bit picks the format (0: APLTRC01, split into two
 * fragments of one run at a point byte 0 also picks; 1: Chrome JSON). The
 * events are converted three times (short path with batches, short path
 * alone, general_path_only) into memory files; any difference in the
 * outputs (or in whether the conversion failed) aborts. An input of odd
 * length is converted with a machine_id (on every packet, in the
 * sequences' prepared headers). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converters/appletrace/appletrace.h"
#include "converters/chrome_json/chrome_json.h"
#include "converters/chrome_json/cv_stacks.h"
#include "converters/emit/emit.h"
#include "reader/trace_read.h"
#include "reader/trace_same.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Converts into a new memory file; returns its fd (-1: could not start)
 * and the conversion's result in *rc. */
static int convert(const uint8_t *data, size_t size, int general, int batch,
		   int *rc)
{
	int fd = memfd_create("ptw-fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	struct ptw_writer_options wo = {.max_interned = 64,
					.flush_bytes = 4096,
					.checkpoint_packets = 256,
					.machine_id = size & 1 ? 4000000000u : 0};
	struct ptw_writer *w = ptw_writer_open_fd(fd, &wo, NULL);
	if (!w) {
		close(fd);
		return -1;
	}
	int json = data[0] & 1;
	size_t split = 1 + (size_t)(data[0] >> 1) * (size - 1) / 127;
	struct ptw_emit *em = ptw_emit_create(w, NULL);
	struct ptw_appletrace_names *names = ptw_appletrace_names_create();
	struct ptw_emit_input in = {.mode = json ? PTW_EMIT_CHROME
						 : PTW_EMIT_XFORM,
				    .max_held = 64,
				    .general_path_only = general};
	struct ptw_error err;
	*rc = -1;
	if (em && names && ptw_emit_begin_input(em, &in, NULL) == 0) {
		if (json) {
			/* with callstacks (stackFrames, sf/esf, stack) */
			struct ptw_cv_json_read_opts jo = {
				.stacks = ptw_emit_stacks(em)};
			if (jo.stacks)
				ptw_cv_stacks_next_input(jo.stacks);
			*rc = ptw_cv_json_read_mem(data + 1, size - 1, &jo,
						   ptw_emit_event, em, NULL,
						   &err);
		} else {
			ptw_cv_batch_fn bf = batch ? ptw_emit_simple_batch
						   : NULL;
			*rc = ptw_appletrace_bin_read_mem_batch(
				data + 1, split - 1, "trace.appletracebin",
				names, ptw_emit_event, bf, em, NULL, &err);
			if (*rc == 0)
				*rc = ptw_appletrace_bin_read_mem_batch(
					data + split, size - split,
					"trace_1.appletracebin", names,
					ptw_emit_event, bf, em, NULL, &err);
		}
		if (*rc == 0)
			*rc = ptw_emit_end_input(em, &err);
		if (*rc == 0)
			*rc = ptw_emit_finish(em, &err);
	}
	ptw_appletrace_names_destroy(names);
	ptw_emit_destroy(em);
	ptw_writer_close(w, NULL);
	return fd;
}

static void *contents(int fd, size_t *n)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		abort();
	*n = (size_t)st.st_size;
	void *p = malloc(*n + 1);
	if (!p || pread(fd, p, *n, 0) != (ssize_t)*n)
		abort();
	return p;
}

/* Aborts unless the conversions behind fds a and b agree: byte for byte
 * if 'exact', else sequence by sequence, decoded and byte for byte
 * (ptw_trace_same, ptw_trace_same_sequence_bytes: the batches write
 * thread by thread). */
static void same(int fa, int ra, int fb, int rb, int exact)
{
	if (fa < 0 || fb < 0)
		return;
	size_t na, nb;
	void *a = contents(fa, &na), *b = contents(fb, &nb);
	if (ra != rb)
		abort(); /* the paths disagree */
	if (exact) {
		if (na != nb || memcmp(a, b, na) != 0)
			abort();
	} else if (na || nb) {
		struct ptw_trace *ta = ptw_trace_load_mem(a, na, "a", NULL, NULL);
		struct ptw_trace *tb = ptw_trace_load_mem(b, nb, "b", NULL, NULL);
		if (!ta || !tb || ptw_trace_same(ta, tb, NULL) != 1 ||
		    ptw_trace_same_sequence_bytes(a, na, b, nb, NULL) != 1)
			abort();
		ptw_trace_free(ta);
		ptw_trace_free(tb);
	}
	free(a);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int rs, rg, rb;
	int fs = convert(data, size, 0, 0, &rs);
	int fg = convert(data, size, 1, 0, &rg);
	same(fs, rs, fg, rg, 1);
	if (!(data[0] & 1)) {
		int fb = convert(data, size, 0, 1, &rb);
		same(fb, rb, fg, rg, 0);
		if (fb >= 0)
			close(fb);
	}
	if (fs >= 0)
		close(fs);
	if (fg >= 0)
		close(fg);
	return 0;
}
