/* test_shmem_tp.c - a real ptw writer's output routed through a shared
 * memory buffer (lib/shmem, the writer's output hook), read back by the
 * tests' stand-in for the service (support/smb_service.c) into a trace
 * file as traced would write it, and loaded by the real trace_processor:
 * the same slices, args, counters and thread names as the file the same
 * events make directly; with a buffer too small, the loss shows in
 * trace_processor's stats (data_loss_smb_full, sequence packet loss) and
 * what arrived is a subset of what was logged. Skipped without
 * trace_processor_shell ($PTW_SHARED_DIR/tp or ../shared/tp).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/shmem/smb.h"
#include "lib/writer/writer_internal.h"
#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "support/smb_service.h"
#include "support/tp_shell.h"

#define THREADS 4

/* Skips the test without trace_processor_shell. */
static void need_tp(void)
{
	if (!ptw_test_tp_shell())
		cr_skip_test("no trace_processor_shell (PTW_SHARED_DIR/tp)");
}

/* The events: on each of THREADS threads (a sequence each) nested slices
 * with args, instants, a counter, and now and then an argument longer
 * than a chunk (its packet spans several). 'rounds' per thread. */
static void log_events(struct ptw_writer *w, uint32_t rounds)
{
	static char big[9000];
	memset(big, 'x', sizeof(big) - 1);
	uint64_t proc = ptw_writer_add_process_track(w, 4000, "smbproc");
	uint64_t ctr = ptw_writer_add_counter_track(w, "depth", NULL, proc, -1);
	struct ptw_seq *seq[THREADS];
	for (int t = 0; t < THREADS; t++) {
		char name[32];
		snprintf(name, sizeof(name), "worker-%d", t);
		uint64_t tr = ptw_writer_add_thread_track(w, 4000, 4001 + t,
							  name);
		seq[t] = ptw_writer_add_seq(w, tr);
		cr_assert_not_null(seq[t]);
	}
	for (uint32_t i = 0; i < rounds; i++) {
		for (int t = 0; t < THREADS; t++) {
			uint64_t ts = 1000000 + (uint64_t)i * 10000 + t;
			struct ptw_arg a[2] = {
				{ .name = "i", .type = PTW_ARG_TYPE_INT,
				  .v.i = i },
				{ .name = "s", .type = PTW_ARG_TYPE_STRING,
				  .v.s = i % 97 == 5 ? big : "short" },
			};
			struct ptw_event ev = { .ts = ts, .category = "c",
						.name = i % 3 ? "outer" : "o3",
						.args = a, .n_args = 2 };
			cr_assert_eq(ptw_seq_slice_begin(seq[t], &ev), 0);
			struct ptw_event in = { .ts = ts + 100, .category = "c",
						.name = "inner" };
			cr_assert_eq(ptw_seq_slice_complete(seq[t], &in, 50), 0);
			struct ptw_event mark = { .ts = ts + 200,
						  .category = "c",
						  .name = "tick" };
			cr_assert_eq(ptw_seq_instant(seq[t], &mark), 0);
			cr_assert_eq(ptw_seq_counter_int(seq[t], ctr, ts + 300,
							 (int64_t)i % 7), 0);
			struct ptw_event end = { .ts = ts + 400 };
			cr_assert_eq(ptw_seq_slice_end(seq[t], &end), 0);
		}
	}
}

static const struct ptw_writer_options g_opt = {
	.checkpoint_packets = 500, /* several checkpoints per sequence */
	.flush_bytes = 16 * 1024,  /* many output batches */
};

/* The system side of the test: the buffer, its router and the reader. */
struct sys {
	uint8_t *mem;
	size_t size;
	struct ptw_smb *smb;
	struct ptw_smb_router *r;
	struct svc s;
	struct ptw_writer *w;
	uint32_t calls;
	uint32_t read_every; /* read the commits every n output calls; 0:
			      * when half the chunks wait (commit_due) */
	uint32_t losses;
};

static int sys_out(void *ctx, const uint8_t *p, size_t n)
{
	struct sys *y = ctx;
	int rc = ptw_smb_route(y->r, p, n);
	if (y->read_every && ++y->calls % y->read_every == 0) {
		ptw_smb_router_flush(y->r);
		svc_drain(&y->s, y->smb);
	}
	return rc;
}

static void sys_commit_due(void *ctx)
{
	struct sys *y = ctx;
	if (!y->read_every)
		svc_drain(&y->s, y->smb);
}

static void sys_loss(void *ctx, uint32_t seq_id)
{
	struct sys *y = ctx;
	y->losses++;
	ptw_i_writer_clear_incremental(y->w, seq_id);
}

/* Logs the events through a buffer of 'pages' pages of 4 KiB into a
 * trace file at 'path'; returns the buffer's stats. */
static struct ptw_smb_stats run_system(const char *path, uint32_t pages,
				       uint32_t read_every, uint32_t rounds,
				       uint32_t *losses)
{
	static struct sys y;
	memset(&y, 0, sizeof(y));
	y.size = (size_t)pages * 4096;
	y.mem = aligned_alloc(4096, y.size);
	cr_assert_not_null(y.mem);
	memset(y.mem, 0, y.size);
	y.read_every = read_every;
	y.smb = ptw_smb_create(y.mem, y.size, 4096, 0, NULL);
	cr_assert_not_null(y.smb);
	struct ptw_smb_hooks h = { .ctx = &y, .loss = sys_loss,
				   .commit_due = sys_commit_due };
	y.r = ptw_smb_router_create(y.smb, 0, &h);
	cr_assert_not_null(y.r);
	svc_init(&y.s, y.mem, y.size, 4096);
	struct ptw_error err;
	y.w = ptw_i_writer_open_output(&g_opt, sys_out, &y, &err);
	cr_assert_not_null(y.w, "%s", err.msg);
	log_events(y.w, rounds);
	cr_assert_eq(ptw_writer_close(y.w, &err), 0, "%s", err.msg);
	ptw_smb_router_flush(y.r);
	svc_drain(&y.s, y.smb);
	svc_reassemble(&y.s);
	cr_assert_eq(y.s.chunk_gaps + y.s.orphans + y.s.abi_errors +
			     y.s.writer_drops,
		     0);
	svc_write_trace(&y.s, path, 1, 1);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(y.smb, &st);
	svc_free(&y.s);
	ptw_smb_destroy(y.smb);
	free(y.mem);
	*losses = y.losses;
	return st;
}

static void run_direct(const char *path, uint32_t rounds)
{
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, &g_opt, &err);
	cr_assert_not_null(w, "%s", err.msg);
	log_events(w, rounds);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
}

static const char *Q_SLICES =
	"select s.ts, s.dur, s.depth, s.name, t.name, t.tid, "
	"extract_arg(s.arg_set_id, 'debug.i'), "
	"length(extract_arg(s.arg_set_id, 'debug.s')) from slice s "
	"join thread_track tt on s.track_id = tt.id join thread t using(utid) "
	"order by s.ts, s.depth";
static const char *Q_COUNTERS =
	"select c.ts, c.value, t.name from counter c join counter_track t "
	"on c.track_id = t.id order by c.ts";
/* the slices that ended (a slice whose END was lost has dur -1) */
static const char *Q_ENDED =
	"select s.ts, s.name, t.name, extract_arg(s.arg_set_id, 'debug.i') "
	"from slice s join thread_track tt on s.track_id = tt.id join thread t "
	"using(utid) where s.dur >= 0 order by s.ts";
static const char *Q_LOSS =
	"select name, idx, value from stats where value > 0 and severity in "
	"('error', 'data_loss') order by name";

Test(shmem_tp, a_writer_through_the_buffer_gives_the_same_trace)
{
	need_tp();
	char direct[256], sys[256];
	ptw_test_tmp_path(direct, sizeof(direct), "smb-direct");
	ptw_test_tmp_path(sys, sizeof(sys), "smb-system");
	run_direct(direct, 400);
	uint32_t losses;
	struct ptw_smb_stats st = run_system(sys, 64, 0, 400, &losses);
	cr_assert_eq(st.dropped + st.skipped + st.refused + st.malformed, 0);
	cr_assert_gt(st.fragments, 0); /* the long args spanned chunks */
	cr_assert_eq(losses, 0);
	char *a = ptw_test_tp_query(direct, Q_SLICES);
	char *b = ptw_test_tp_query(sys, Q_SLICES);
	cr_assert_gt(strlen(a), 400 * THREADS * 2 * 10);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
	a = ptw_test_tp_query(direct, Q_COUNTERS);
	b = ptw_test_tp_query(sys, Q_COUNTERS);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
	ptw_test_tp_expect_rows(direct, Q_LOSS, "");
	ptw_test_tp_expect_rows(sys, Q_LOSS, "");
	unlink(direct);
	unlink(sys);
}

/* Each row of 'sub' is a row of 'all' (both sorted the same way). */
static void expect_subset(const char *sub, const char *all)
{
	const char *p = sub;
	size_t rows = 0;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
		char *row = strndup(p, n);
		cr_assert_not_null(row);
		cr_assert_not_null(strstr(all, row), "row not logged: %s", row);
		free(row);
		rows++;
		p += n;
	}
}

Test(shmem_tp, a_buffer_too_small_shows_loss_and_nothing_invented)
{
	need_tp();
	char direct[256], sys[256];
	ptw_test_tmp_path(direct, sizeof(direct), "smb-direct");
	ptw_test_tmp_path(sys, sizeof(sys), "smb-loss");
	run_direct(direct, 400);
	uint32_t losses;
	/* 4 chunks, read every 8th output batch of 16 KiB */
	struct ptw_smb_stats st = run_system(sys, 4, 8, 400, &losses);
	cr_assert_gt(st.dropped, 0);
	cr_assert_gt(st.packets, 0);
	cr_assert_gt(losses, 0);
	char *loss = ptw_test_tp_query(sys, Q_LOSS);
	cr_assert_not_null(strstr(loss, "traced_buf_data_loss_smb_full"),
			   "%s", loss);
	cr_assert_not_null(strstr(loss, "traced_buf_sequence_packet_loss"),
			   "%s", loss);
	cr_assert_null(strstr(loss, "error"), "%s", loss);
	free(loss);
	/* what arrived was logged: no slice, arg or counter invented */
	char *a = ptw_test_tp_query(direct, Q_ENDED);
	char *b = ptw_test_tp_query(sys, Q_ENDED);
	cr_assert_gt(strlen(b), 0);
	cr_assert_lt(strlen(b), strlen(a));
	expect_subset(b, a);
	free(a);
	free(b);
	a = ptw_test_tp_query(direct, Q_COUNTERS);
	b = ptw_test_tp_query(sys, Q_COUNTERS);
	expect_subset(b, a);
	free(a);
	free(b);
	unlink(direct);
	unlink(sys);
}

/* A Trace.packet record at b + 1 (returns its length) of a TracePacket
 * of sequence 'seq': timestamp, sequence_flags CLEARED and a for_testing
 * field of 1000 bytes (strings of a nested message). */
static size_t raw_packet(uint8_t *b, uint32_t seq, uint64_t ts)
{
	uint8_t *q = b + 4;
	*q++ = 10 << 3; /* trusted_packet_sequence_id */
	*q++ = (uint8_t)seq;
	*q++ = 8 << 3;  /* timestamp */
	for (; ts >= 0x80; ts >>= 7)
		*q++ = (uint8_t)(ts | 0x80);
	*q++ = (uint8_t)ts;
	*q++ = 13 << 3; /* sequence_flags: CLEARED */
	*q++ = 1;
	*q++ = 0xa2;    /* for_testing (900), 1000 bytes */
	*q++ = 0x38;
	*q++ = 0xe8;
	*q++ = 0x07;
	for (int i = 0; i < 1000; i += 10)
		memcpy(q + i, "\x0a\x08loss....", 10);
	q += 1000;
	size_t n = (size_t)(q - b - 4);
	/* record header at b + 1: 0x0a, 2-byte length */
	b[1] = 0x0a;
	b[2] = (uint8_t)(n | 0x80);
	b[3] = (uint8_t)(n >> 7);
	return n + 3;
}

Test(shmem_tp, a_sequence_whose_first_packet_is_lost_shows_the_loss)
{
	need_tp();
	size_t size = 4096;
	uint8_t *m = aligned_alloc(4096, size);
	cr_assert_not_null(m);
	memset(m, 0, size);
	struct ptw_smb *smb = ptw_smb_create(m, size, 4096, 0, NULL);
	struct ptw_smb_router *r = ptw_smb_router_create(smb, 0, NULL);
	struct svc s;
	svc_init(&s, m, size, 4096);
	static uint8_t b[1100];
	size_t n = raw_packet(b, 3, 1000); /* sequence 3 takes the chunk */
	cr_assert_eq(ptw_smb_route(r, b + 1, n), 0);
	n = raw_packet(b, 4, 2000); /* sequence 4's first packet: lost */
	cr_assert_eq(ptw_smb_route(r, b + 1, n), 0);
	ptw_smb_router_flush(r);
	svc_drain(&s, smb);
	n = raw_packet(b, 4, 3000);
	cr_assert_eq(ptw_smb_route(r, b + 1, n), 0);
	ptw_smb_router_flush(r);
	svc_drain(&s, smb);
	svc_reassemble(&s);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(smb, &st);
	cr_assert_eq(st.dropped, 1);
	cr_assert_eq(st.packets, 2);
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "smb-first");
	svc_write_trace(&s, path, 1, 1);
	ptw_test_tp_expect_rows(path, Q_LOSS,
				"\"traced_buf_data_loss_smb_full\",0,1\n"
				"\"traced_buf_sequence_packet_loss\",0,1\n");
	unlink(path);
	svc_free(&s);
	ptw_smb_destroy(smb);
	free(m);
}
