/* fuzz_reader.c - libFuzzer target for the trace reader, the checker and
 * the trace_processor model (reader/).
 * SPDX-License-Identifier: Apache-2.0
 *
 * Input: a .pftrace as is (the first byte is forced to 0x0A so the input
 * is always taken for a proto trace, unless it starts a gzip file). Byte 1 (when present) also decides
 * whether the packet callback runs, so the callback path is covered. Any
 * outcome but a crash or a sanitizer report is fine. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader/tp_model.h"
#include "reader/trace_check.h"
#include "reader/trace_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_packet(void *ctx, const struct ptw_trace_packet_info *info,
		     const void *pkt)
{
	size_t *n = ctx;
	(void)pkt;
	if (info->event && info->event->name)
		*n += strlen(info->event->name);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t *copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (copy[0] != 0x1f) /* keep gzip files (1f 8b) as they are */
		copy[0] = 0x0a;
	size_t names = 0;
	struct ptw_trace_options opt;
	memset(&opt, 0, sizeof(opt));
	if (size > 1 && (copy[1] & 1)) {
		opt.on_packet = on_packet;
		opt.ctx = &names;
	}
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_mem(copy, size, "fuzz", &opt, &err);
	if (t) {
		(void)ptw_trace_check(t, 0, &err);
		struct ptw_tp_model *m = ptw_tp_model_build(t, &err);
		ptw_tp_model_free(m);
		ptw_trace_free(t);
	}
	free(copy);
	return 0;
}
