/* test_writer_group.c - a converter's batches written sequence by
 * sequence (lib/writer/group.c): the runs the writer notes as it writes
 * packets and the records read back give the same bytes, and the batches
 * really are regrouped (the same events without it give other bytes but
 * decode to the same events).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/writer/writer_internal.h"
#include "ptw/writer.h"
#include "reader/trace_read.h"
#include "support/ptw_test.h"

#define THREADS 16
#define ROUNDS 6000

enum way { NOTED, READ_BACK, AS_MADE };

static void ok(struct ptw_writer *w, int rc)
{
	cr_assert_eq(rc, 0, "%s", ptw_writer_error(w)->msg);
}

/* THREADS thread sequences interleaved one event at a time, as a
 * converter writes a Chrome trace: fast-path BEGIN/END and INSTANTs,
 * and slices with an argument (the general path). */
static void write_trace(const char *path, enum way way)
{
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	struct ptw_seq *s[THREADS];
	uint64_t p = ptw_writer_add_process_track(w, 10, "proc");
	cr_assert_neq(p, 0);
	for (int i = 0; i < THREADS; i++) {
		char name[16];
		snprintf(name, sizeof(name), "t%d", i);
		uint64_t t = ptw_writer_add_thread_track(w, 10, 100 + i, name);
		cr_assert_neq(t, 0);
		s[i] = ptw_writer_add_seq(w, t);
		cr_assert_not_null(s[i]);
	}
	if (way != AS_MADE)
		ptw_i_writer_converted(w);
	if (way == READ_BACK)
		ptw_i_writer_group_readback(w);
	uint64_t ts = 1000;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < THREADS; i++, ts += 7) {
			struct ptw_seq *q = s[(i * 5 + r) % THREADS];
			if (r % 3 == 2) {
				struct ptw_arg a = {.name = "r",
						    .type = PTW_ARG_TYPE_INT,
						    .v.i = r};
				struct ptw_event ev = {
					.ts = ts, .category = "c", .name = "arg",
					.flags = PTW_EV_STATIC_STRINGS,
					.args = &a, .n_args = 1};
				ok(w, ptw_seq_instant(q, &ev));
			} else {
				ok(w, ptw_seq_simple(q, r % 3 ? PTW_SIMPLE_END
							      : PTW_SIMPLE_BEGIN,
						     0, ts, "c", "slice"));
			}
		}
	}
	ok(w, ptw_writer_close(w, &err));
}

/* The events of the trace at 'path', one line each, sorted: what a
 * reader shows whatever the packets' order. */
static char *events(const char *path, size_t *n_out)
{
	struct ptw_trace *t = ptw_test_load_or_fail(path);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	char *lines = calloc(n ? n : 1, 64);
	cr_assert_not_null(lines);
	for (size_t i = 0; i < n; i++)
		snprintf(lines + i * 64, 64, "%020llu %d %s %llu",
			 (unsigned long long)ev[i].ts, (int)ev[i].type,
			 ev[i].name ? ev[i].name : "",
			 (unsigned long long)ev[i].track_uuid);
	qsort(lines, n, 64, (int (*)(const void *, const void *))strcmp);
	ptw_trace_free(t);
	*n_out = n;
	return lines;
}

Test(writer_group, noted_runs_and_records_read_back_write_the_same_bytes)
{
	char a[128], b[128], c[128];
	ptw_test_tmp_path(a, sizeof(a), "grp_noted");
	ptw_test_tmp_path(b, sizeof(b), "grp_read");
	ptw_test_tmp_path(c, sizeof(c), "grp_made");
	write_trace(a, NOTED);
	write_trace(b, READ_BACK);
	write_trace(c, AS_MADE);
	size_t na, nb, nc;
	uint8_t *ba = ptw_test_read_file_or_fail(a, &na);
	uint8_t *bb = ptw_test_read_file_or_fail(b, &nb);
	uint8_t *bc = ptw_test_read_file_or_fail(c, &nc);
	cr_assert_gt(na, 3u * 256 * 1024, "more than a few batches");
	cr_assert(na == nb && memcmp(ba, bb, na) == 0,
		  "noted runs and records read back differ");
	/* regrouped: other bytes than as made, the same events */
	cr_assert(na != nc || memcmp(ba, bc, na) != 0, "nothing regrouped");
	size_t ea, ec;
	char *la = events(a, &ea), *lc = events(c, &ec);
	cr_assert_eq(ea, (size_t)THREADS * ROUNDS);
	cr_assert_eq(ea, ec);
	cr_assert(memcmp(la, lc, ea * 64) == 0, "the events differ");
	free(la);
	free(lc);
	free(ba);
	free(bb);
	free(bc);
	unlink(a);
	unlink(b);
	unlink(c);
}
