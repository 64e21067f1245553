/* fuzz_chrome_json_export.c - libFuzzer target for the JSON exporter.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The input is taken as a protobuf trace (the seeds are small traces from
 * the writer), exported with ptw_cv_export_json(), and the JSON it writes
 * must read back with the streaming reader without any error: whatever
 * the trace holds, the export is valid, complete Chrome JSON. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *ctx, const struct ptw_cv_event *ev,
		 struct ptw_error *err)
{
	(void)ev;
	(void)err;
	(*(uint64_t *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("trace", 0);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	char *json = NULL;
	size_t json_n = 0;
	FILE *out = open_memstream(&json, &json_n);
	if (!out) {
		close(fd);
		return 0;
	}
	struct ptw_error err;
	int rc = ptw_cv_export_json(path, out, &err);
	fclose(out);
	close(fd);
	if (rc == 0) {
		uint64_t n = 0;
		struct ptw_cv_json_read_stats st;
		int rr = ptw_cv_json_read_mem(json, json_n, NULL, count, &n, &st,
					      &err);
		if (rr != 0 || st.cut != PTW_CV_JSON_COMPLETE) {
			fprintf(stderr, "export is not valid JSON: %s\n", err.msg);
			abort();
		}
	} else if (rc != PTW_ERR_FORMAT && rc != PTW_ERR_IO &&
		   rc != PTW_ERR_LIMIT && rc != PTW_ERR_NOMEM) {
		abort();
	}
	free(json);
	return 0;
}
