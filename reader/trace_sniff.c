/* trace_sniff.c - does trace_processor take a file that starts like a
 * proto trace for another format?
 * SPDX-License-Identifier: Apache-2.0
 *
 * trace_processor (v58.2) picks the importer from the first bytes it
 * reads (TraceImporterRegistry::Guess: every importer's Sniff, lowest
 * detection_priority first; with mmap the first blob is the whole file up
 * to 128 MiB). The proto importer (priority 230) only asks for a first
 * byte 0x0A, so importers tried before it can claim such a file, and
 * then refuse it ("Invalid pprof: empty string table"). This models the
 * sniffs a file starting with 0x0A can meet:
 *   - pprof (220, pprof_trace_reader.cc IsPprofProfile): read as a
 *     Profile message, every field up to the first that does not parse
 *     is one Profile has, with its wire type, and one of them is a
 *     sample, mapping, location, function, string table or drop/keep
 *     frames field (a bit flip turning a Trace.packet tag into field 2-6
 *     makes one);
 *   - JSON, Gecko and manifest files (110, 100, 90): the first 128 bytes
 *     without white space (0x0A is one) start with {" or [{";
 *   - systrace (200): the first 128 bytes hold "# tracer" or "TRACE:\n"
 *     (its parser skips what it does not understand: the file loads,
 *     with nothing in it; the others refuse it).
 * Text formats that need a line structure from byte 0 on (logcat, perf
 * text, strace, collapsed stacks) and magic numbers are not modelled. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pb_wire.h"
#include "trace_internal.h"

#define LOOKAHEAD 128 /* kGuessTraceMaxLookahead */
#define FIRST_BLOB (128u << 20) /* the first mmap slice Guess() sees */

static int is_pprof(const uint8_t *data, size_t len)
{
	if (len < 10)
		return 0;
	struct ptw_wire_cursor c;
	struct ptw_wire_field f;
	int core = 0;
	ptw_wire_init(&c, data, len);
	while (ptw_wire_next(&c, &f) == PTW_WIRE_FIELD) {
		switch (f.num) {
		case 2: case 3: case 4: case 5: case 6: /* core messages */
			core = 1;
			/* fall through */
		case 1: case 11: /* sample_type, period_type */
			if (f.wt != 2)
				return 0;
			break;
		case 13: /* comment */
			if (f.wt != 2 && f.wt != 0)
				return 0;
			break;
		case 7: case 8: /* drop_frames, keep_frames */
			core = 1;
			/* fall through */
		case 9: case 10: case 12: case 14:
			if (f.wt != 0)
				return 0;
			break;
		default:
			return 0;
		}
	}
	return core;
}

static int has(const uint8_t *p, size_t n, const char *s)
{
	size_t k = strlen(s);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(p + i, s, k) == 0)
			return 1;
	return 0;
}

const char *ptw_i_trace_sniff_other(const uint8_t *data, size_t len,
				    int *refused)
{
	*refused = 1;
	size_t n = len < LOOKAHEAD ? len : LOOKAHEAD;
	char start[LOOKAHEAD];
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!(data[i] == ' ' || (data[i] >= '\t' && data[i] <= '\r')))
			start[k++] = (char)data[i];
	if ((k >= 2 && memcmp(start, "{\"", 2) == 0) ||
	    (k >= 3 && memcmp(start, "[{\"", 3) == 0))
		return "a JSON trace";
	if (has(data, n, "# tracer") || has(data, n, "TRACE:\n")) {
		*refused = 0;
		return "a systrace text trace";
	}
	if (is_pprof(data, len < FIRST_BLOB ? len : FIRST_BLOB))
		return "a pprof profile";
	return NULL;
}
