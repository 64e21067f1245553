/* test_emit_fast.c - the emitter's short path (emit_fast.c), and its batch
 * form fed by the APLTRC01 reader (with the X-form lane and prepared
 * packets), write exactly what the general path writes: random APLTRC01
 * runs (nesting, unmatched ends, equal and backward timestamps, tid 0,
 * redefined names, counters, instants, metadata, several inputs with a
 * shift; also with frequent checkpoints) and random Chrome JSON (B/E
 * matched by name, X, instants of every scope, flows, counters, args,
 * empty and missing names) are converted both ways and the outputs
 * compared byte for byte (batches: sequence by sequence, see
 * compare_outputs). A write failure stops every path alike.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converters/appletrace/appletrace.h"
#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "support/ptw_test.h"
#include "reader/trace_same.h"

/* The lane writes little-endian words: a big-endian host has none
 * (converters/emit/emit_fast.c, PTW_EM_LANE_HOST). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LANE_HOST 1
#else
#define LANE_HOST 0
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define PID 77u

#define MAX_THREADS 40

struct gen {
	uint64_t x;         /* xorshift state */
	uint64_t ts[MAX_THREADS]; /* per thread */
	int depth[MAX_THREADS];
	int no_x;           /* Chrome: no X events (E's keep file order) */
	int wide;           /* APLTRC01: time steps of every size */
};

static uint64_t rnd(struct gen *g, uint64_t n)
{
	g->x ^= g->x << 13;
	g->x ^= g->x >> 7;
	g->x ^= g->x << 17;
	return g->x % n;
}

static void put(FILE *f, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		cr_assert_eq(fputc((int)(uint8_t)(v >> (8 * i)), f),
			     (int)(uint8_t)(v >> (8 * i)));
}

static void define(FILE *f, uint32_t id, const char *s)
{
	put(f, 1, 1);
	put(f, id, 4);
	put(f, strlen(s), 4);
	cr_assert_eq(fwrite(s, 1, strlen(s), f), strlen(s));
}

static void event(FILE *f, char ph, uint32_t id, uint64_t tid, uint64_t ts,
		  uint64_t arg)
{
	put(f, (uint8_t)ph, 1);
	put(f, id, 4);
	put(f, tid, 8);
	put(f, ts, 8);
	put(f, arg, 8);
}

/* tid 0 is the main thread (shown as the pid); 2^33 reads as 0 too, and
 * shares its clock here. */
static const uint64_t tids[5] = {0, 1ull << 33, 5, 6, 7};

/* Threads of the APLTRC01 runs: 5, or more than the emitter gives
 * sequences of their own to (PTW_EM_THREAD_SEQS); the sixth is the pid
 * itself, the main thread again (with a second X-form stack, and its
 * clock). */
static int g_threads = 5;

static uint64_t tid_of(int c)
{
	return c < 5 ? tids[c] : c == 5 ? PID : 1000 + 64 * (uint64_t)c;
}

/* A time step (us) of each size the lane's packets encode (in ns): 2
 * bytes (1-16 us: below 2^14 ns), 3 bytes (17-2097 us: below 2^21 ns),
 * and longer ones (the general encoder). (Microseconds are 1000 ns: no
 * 1-byte step; test_writer_prep.c tests every step.) */
static uint64_t wide_step(struct gen *g)
{
	uint64_t r = rnd(g, 10);
	return r < 5 ? 1 + rnd(g, 16) : r < 8 ? 17 + rnd(g, 2081)
					  : 2098 + rnd(g, 5000);
}

/* Writes fragment 'k' of a run: names 1..8 in fragment 0, some redefined
 * later (fragment 2 uses names only fragment 0 defined). */
static void fragment(const char *dir, int k, struct gen *g, int events)
{
	char p[512];
	if (k == 0)
		snprintf(p, sizeof(p), "%s/trace.appletracebin", dir);
	else
		snprintf(p, sizeof(p), "%s/trace_%d.appletracebin", dir, k);
	FILE *f = fopen(p, "wb");
	cr_assert(f, "%s", p);
	cr_assert_eq(fwrite("APLTRC01", 1, 8, f), 8u);
	put(f, PID, 4);
	char name[64];
	for (uint32_t id = 1; k == 0 && id <= 8; id++) {
		snprintf(name, sizeof(name), "name%u", id);
		define(f, id, name);
	}
	if (k == 0)
		define(f, 10, "thread_name");
	if (k == 1) {
		define(f, 3, "name3-redefined");
		define(f, 9, "");
		define(f, 5000, "sparse id");
	}
	for (int i = 0; i < events; i++) {
		int c = (int)rnd(g, (uint64_t)g_threads);
		int t = c == 1 || c == 5 ? 0 : c;
		uint64_t tid = tid_of(c);
		uint64_t r = rnd(g, 100);
		/* mostly forward, sometimes equal, rarely backward */
		if (r < 80)
			g->ts[t] += g->wide ? wide_step(g) : 1 + rnd(g, 3);
		else if (r < 83 && g->ts[t] > 2)
			g->ts[t] -= 2;
		uint64_t ts = g->ts[t];
		uint32_t id = 1 + (uint32_t)rnd(g, 8);
		if (k >= 1 && rnd(g, 10) == 0)
			id = rnd(g, 2) ? 9 : 5000;
		uint64_t ph = rnd(g, 100);
		if (ph < 4) {
			/* integers (of every length, negative) and doubles */
			static const double vals[] = {3.0, 2.0, 0.25, -7.5,
						      -3.0, 1e19, 4.0e12,
						      -9.3e18, 123456789.0};
			double dv = vals[rnd(g, sizeof(vals) / sizeof(vals[0]))];
			uint64_t bits;
			memcpy(&bits, &dv, sizeof(bits));
			event(f, 'C', id, tid, ts, bits);
		} else if (ph < 8) {
			event(f, 'i', id, tid, ts, 0);
		} else if (ph < 9) {
			event(f, 'M', 10, tid, 0, id);
		} else if (ph < 10) {
			event(f, 'E', id, tid, ts, 0); /* maybe unmatched */
		} else if (g->depth[t] < 4 && (g->depth[t] == 0 || ph < 55)) {
			event(f, 'B', id, tid, ts, 0);
			g->depth[t]++;
		} else {
			event(f, 'E', id, tid, ts, 0);
			g->depth[t]--;
		}
	}
	cr_assert_eq(fclose(f), 0);
}

/* Time steps of every size in make_run (wide_step). */
static int g_wide;

static void make_run(const char *dir, uint64_t seed, int events)
{
	cr_assert_eq(mkdir(dir, 0700), 0, "%s", dir);
	struct gen g;
	memset(&g, 0, sizeof(g));
	g.x = seed;
	g.wide = g_wide;
	for (int k = 0; k < 3; k++)
		fragment(dir, k, &g, events);
}

/* Writer options of the conversions (NULL: defaults). */
static const struct ptw_writer_options *g_wopts;

/* Converts an AppleTrace run directory (twice, the second time shifted;
 * simple events in batches if 'batch') or a Chrome JSON file (once,
 * shifted) into 'out'. */
static void convert(const char *in_path, int json, const char *out,
		    int general, int batch, struct ptw_emit_stats *st)
{
	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(out, g_wopts, &err);
	cr_assert(w, "%s", err.msg);
	struct ptw_emit *em = ptw_emit_create(w, &err);
	cr_assert(em, "%s", err.msg);
	for (int i = 0; i < (json ? 1 : 2); i++) {
		struct ptw_emit_input in = {
			.mode = json ? PTW_EMIT_CHROME : PTW_EMIT_XFORM,
			.shift_ns = json ? 7000 : i ? -500 : 0,
			.general_path_only = general};
		cr_assert_eq(ptw_emit_begin_input(em, &in, &err), 0);
		int rc;
		if (json) {
			rc = ptw_cv_json_read(in_path, NULL, ptw_emit_event, em,
					      NULL, &err);
		} else {
			struct ptw_appletrace_run *r =
				ptw_appletrace_run_create(&err);
			cr_assert(r);
			if (batch)
				ptw_appletrace_run_set_batch(
					r, ptw_emit_simple_batch);
			rc = ptw_appletrace_run_read_dir(r, in_path,
							 ptw_emit_event, em,
							 NULL, &err);
			ptw_appletrace_run_destroy(r);
		}
		cr_assert_eq(rc, 0, "%s", err.msg);
		cr_assert_eq(ptw_emit_end_input(em, &err), 0, "%s", err.msg);
	}
	cr_assert_eq(ptw_emit_finish(em, &err), 0, "%s", err.msg);
	ptw_emit_get_stats(em, st);
	ptw_emit_destroy(em);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
}

/* Both traces decode to the same tracks and, sequence by sequence, the
 * same events (ptw_trace_same). */
static void same_sequences(const char *a, const char *b, uint64_t seed)
{
	struct ptw_trace *ta = ptw_test_load_checked_or_fail(a, PTW_CHECK_ALLOW_OPEN);
	struct ptw_trace *tb = ptw_test_load_checked_or_fail(b, PTW_CHECK_ALLOW_OPEN);
	struct ptw_trace_diff d = {0};
	int r = ptw_trace_same(ta, tb, &d);
	cr_assert_eq(r, 1, "seed %llu: %s differs (sequence %u, packet %llu)",
		     (unsigned long long)seed, d.what ? d.what : "?",
		     (unsigned)d.seq_id, (unsigned long long)d.packet);
	cr_assert_eq(ptw_trace_get_stats(ta)->packets, ptw_trace_get_stats(tb)->packets);
	ptw_trace_free(ta);
	ptw_trace_free(tb);
}

/* Each sequence's packets are the same bytes in both files, however the
 * sequences interleave: what the batches write on a sequence is exactly
 * what the general path writes on it. */
static void same_sequence_bytes(const char *a, const char *b, uint64_t seed)
{
	size_t na, nb;
	uint8_t *da = ptw_test_read_file_or_fail(a, &na);
	uint8_t *db = ptw_test_read_file_or_fail(b, &nb);
	struct ptw_trace_diff d = {0};
	int r = ptw_trace_same_sequence_bytes(da, na, db, nb, &d);
	cr_assert_eq(r, 1, "seed %llu: %s differs (sequence %u, packet %llu)",
		     (unsigned long long)seed, d.what ? d.what : "?",
		     (unsigned)d.seq_id, (unsigned long long)d.packet);
	free(da);
	free(db);
}

/* Both outputs are the same: byte for byte if 'exact', else sequence by
 * sequence, decoded and byte for byte (same_sequences,
 * same_sequence_bytes: the batches write thread by thread, so the
 * sequences' packets interleave differently, which trace_processor does
 * not see, as it orders events by timestamp). The stats are equal too
 * (the short path took a fair share). Removes both files. */
static void compare_outputs(const char *a, const char *b, uint64_t seed,
			    int exact, struct ptw_emit_stats *sa,
			    struct ptw_emit_stats *sb)
{
	if (exact) {
		size_t na, nb;
		uint8_t *da = ptw_test_read_file_or_fail(a, &na);
		uint8_t *db = ptw_test_read_file_or_fail(b, &nb);
		cr_assert_eq(na, nb, "seed %llu: %zu bytes vs %zu",
			     (unsigned long long)seed, na, nb);
		size_t i = 0;
		while (i < na && da[i] == db[i])
			i++;
		cr_assert_eq(i, na, "seed %llu: outputs differ at byte %zu",
			     (unsigned long long)seed, i);
		free(da);
		free(db);
	} else {
		same_sequences(a, b, seed);
		same_sequence_bytes(a, b, seed);
	}
	cr_assert_eq(sb->short_path, 0u);
	cr_assert_eq(sb->batched, 0u);
	cr_assert_eq(sb->lane, 0u);
	/* (with many threads, general-path events come between any two of
	 * one thread's and close its lane: a share, not a quarter) */
	cr_assert_gt(sa->short_path, sa->events_in / (g_threads > 5 ? 16 : 4),
		     "short path took %llu of %llu events",
		     (unsigned long long)sa->short_path,
		     (unsigned long long)sa->events_in);
	sa->short_path = sa->batched = sa->lane = 0;
	cr_assert(memcmp(sa, sb, sizeof(*sa)) == 0, "stats differ");
	/* and the output is a valid trace */
	ptw_trace_free(ptw_test_load_checked_or_fail(a, PTW_CHECK_ALLOW_OPEN));
	unlink(a);
	unlink(b);
}

/* Converts 'in' (a run directory, or a JSON file if json) by the short
 * path, in batches if batch (into a: IN.short.pftrace), and by the
 * general path (b: IN.general.pftrace), with their stats. */
static void convert_fast_and_general(const char *in, int json, int batch,
				     char a[300], char b[300],
				     struct ptw_emit_stats *sa,
				     struct ptw_emit_stats *sb)
{
	snprintf(a, 300, "%s.short.pftrace", in);
	snprintf(b, 300, "%s.general.pftrace", in);
	convert(in, json, a, 0, batch, sa);
	convert(in, json, b, 1, batch, sb);
}

static void same_output(uint64_t seed, int events)
{
	char dir[256], a[300], b[300];
	ptw_test_tmp_path(dir, sizeof(dir), "fastrun");
	make_run(dir, seed, events);
	/* short path alone, in batches, and neither (general path; a batch
	 * callback must then take nothing) */
	for (int batch = 0; batch < 2; batch++) {
		struct ptw_emit_stats sa, sb;
		convert_fast_and_general(dir, 0, batch, a, b, &sa, &sb);
		if (batch) {
			cr_assert_gt(sa.batched, sa.short_path / 2,
				     "batches took %llu of %llu",
				     (unsigned long long)sa.batched,
				     (unsigned long long)sa.short_path);
			/* (an eighth; a 32nd with a checkpoint every 37
			 * packets and a flush every 1000 bytes; some with
			 * many threads) */
			if (LANE_HOST)
				cr_assert_gt(sa.lane,
					     g_threads > 5 ? 0
							   : sa.batched / (g_wopts ? 32 : 8),
					     "the lane took %llu of %llu",
					     (unsigned long long)sa.lane,
					     (unsigned long long)sa.batched);
		} else {
			cr_assert_eq(sa.batched, 0u);
			cr_assert_eq(sa.lane, 0u);
		}
		compare_outputs(a, b, seed, !batch, &sa, &sb);
	}
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(emit_fast, same_bytes_as_the_general_path)
{
	for (uint64_t seed = 1; seed <= 20; seed++)
		same_output(seed * 0x9E3779B97F4A7C15ull, 400);
}

/* Frequent checkpoints (every sequence forgets its iids, so prepared
 * packets and the lane's iids must be dropped in time), intern caps and
 * small flushes. */
Test(emit_fast, same_bytes_across_checkpoints)
{
	static const struct ptw_writer_options wo = {
		.checkpoint_packets = 37, .max_interned = 16, .flush_bytes = 1000};
	g_wopts = &wo;
	for (uint64_t seed = 1; seed <= 10; seed++)
		same_output(seed * 0xD6E8FEB86659FD93ull, 600);
	g_wopts = NULL;
}

/* The same without an intern cap: checkpoints come from the packet count
 * alone. */
Test(emit_fast, same_bytes_across_checkpoints_without_intern_cap)
{
	static const struct ptw_writer_options wo = {
		.checkpoint_packets = 37, .flush_bytes = 1000};
	g_wopts = &wo;
	for (uint64_t seed = 1; seed <= 6; seed++)
		same_output(seed * 0x9E3779B97F4A7C15ull, 600);
	g_wopts = NULL;
}

static void same_json_output(uint64_t seed, int events, int no_x);

/* A machine_id of the longest encoding in every packet: the lane's
 * prepared prefixes carry it as the general path writes it. */
Test(emit_fast, same_bytes_with_a_machine_id)
{
	static const struct ptw_writer_options wo = {
		.checkpoint_packets = 37, .max_interned = 16, .flush_bytes = 1000,
		.machine_id = 4000000000u, .machine_name = "node-17"};
	g_wopts = &wo;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		same_output(seed * 0xD6E8FEB86659FD93ull, 600);
		same_json_output(seed * 0xC2B2AE3D27D4EB4Full, 400, seed & 1);
	}
	g_wopts = NULL;
}

/* More threads than sequences of their own: the batches write the
 * others' events on the shared sequence in file order, between the runs
 * of the rest. */
Test(emit_fast, same_output_with_threads_on_the_shared_sequence)
{
	g_threads = MAX_THREADS;
	for (uint64_t seed = 1; seed <= 6; seed++)
		same_output(seed * 0xA0761D6478BD642Full, 3000);
	g_threads = 5;
}

/* A counter sample of a thread not seen yet, whose tid shares the
 * emitter's thread cache slot with one seen (5 and 68): the batches leave
 * it to the general path, which makes the thread, as they leave every
 * sample they cannot take as the short path would take it. */
Test(emit_fast, counter_of_a_new_thread_goes_to_the_general_path)
{
	char dir[256], p[300], a[300], b[300];
	ptw_test_tmp_path(dir, sizeof(dir), "fastnewthread");
	cr_assert_eq(mkdir(dir, 0700), 0, "%s", dir);
	snprintf(p, sizeof(p), "%s/trace.appletracebin", dir);
	FILE *f = fopen(p, "wb");
	cr_assert(f, "%s", p);
	cr_assert_eq(fwrite("APLTRC01", 1, 8, f), 8u);
	put(f, PID, 4);
	define(f, 1, "n");
	uint64_t ts = 10;
	for (int i = 0; i < 200; i++) {
		event(f, 'B', 1, 5, ts++, 0);
		/* a sample of thread 5 (its track is made, then prepared),
		 * then of thread 68 (new: the general path makes it) */
		event(f, 'C', 1, 5, ts++, 0x4000000000000000ull);
		event(f, 'C', 1, 5, ts++, 0x4008000000000000ull);
		if (i == 100)
			event(f, 'C', 1, 68, ts++, 0x4010000000000000ull);
		event(f, 'E', 1, 5, ts++, 0);
	}
	cr_assert_eq(fclose(f), 0);
	struct ptw_emit_stats sa, sb;
	convert_fast_and_general(dir, 0, 1, a, b, &sa, &sb);
	cr_assert_gt(sa.batched, 0u);
	compare_outputs(a, b, 1, 0, &sa, &sb);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Time steps of 2 and 3 bytes and longer ones: the lane's one-word
 * packet heads (ptw_pkt_put_step21) and the general encoder between
 * them; also across checkpoints. */
Test(emit_fast, same_bytes_with_time_steps_of_every_size)
{
	g_wide = 1;
	for (uint64_t seed = 1; seed <= 10; seed++)
		same_output(seed * 0x9E3779B97F4A7C15ull, 600);
	static const struct ptw_writer_options wo = {
		.checkpoint_packets = 37, .max_interned = 16, .flush_bytes = 1000};
	g_wopts = &wo;
	for (uint64_t seed = 1; seed <= 4; seed++)
		same_output(seed * 0xD6E8FEB86659FD93ull, 600);
	g_wopts = NULL;
	g_wide = 0;
}

Test(emit_fast, same_bytes_on_a_long_run)
{
	same_output(88172645463325252ull, (int)ptw_test_scale(60000, 6000));
}

/* A write failure while the batches are being taken (the lane's releases
 * flush the writer) stops the conversion with the writer's I/O error, as
 * on the general path; nothing crashes or goes on. */
Test(emit_fast, write_failure_stops_the_lane_as_the_general_path)
{
	char dir[256];
	ptw_test_tmp_path(dir, sizeof(dir), "fastfull");
	make_run(dir, 4242, 3000);
	for (int general = 0; general < 2; general++) {
		int fd = open("/dev/full", O_WRONLY);
		if (fd < 0)
			cr_skip_test("no /dev/full");
		struct ptw_writer_options wo = {.flush_bytes = 4096,
						.close_fd = 1};
		struct ptw_error err = {0};
		struct ptw_writer *w = ptw_writer_open_fd(fd, &wo, &err);
		cr_assert(w, "%s", err.msg);
		struct ptw_emit *em = ptw_emit_create(w, &err);
		cr_assert(em, "%s", err.msg);
		struct ptw_emit_input in = {.mode = PTW_EMIT_XFORM,
					    .general_path_only = general};
		cr_assert_eq(ptw_emit_begin_input(em, &in, &err), 0);
		struct ptw_appletrace_run *r = ptw_appletrace_run_create(&err);
		cr_assert(r);
		ptw_appletrace_run_set_batch(r, ptw_emit_simple_batch);
		int rc = ptw_appletrace_run_read_dir(r, dir, ptw_emit_event, em,
						     NULL, &err);
		ptw_appletrace_run_destroy(r);
		cr_assert_eq(rc, PTW_ERR_IO, "general %d: rc %d (%s)", general,
			     rc, err.msg);
		cr_assert(strstr(err.msg, strerror(ENOSPC)), "%s", err.msg);
		struct ptw_emit_stats st;
		ptw_emit_get_stats(em, &st);
		if (!general && LANE_HOST)
			cr_assert_gt(st.lane, 0u);
		else
			cr_assert_eq(st.lane, 0u);
		ptw_emit_destroy(em);
		cr_assert_neq(ptw_writer_close(w, &err), 0);
	}
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* ---- Chrome JSON ------------------------------------------------------ */

static const char *const cnames[] = {"a", "b", "c", "", NULL};
static const char *const ccats[] = {"x", "y", NULL};

static const char *const v2_dirs[] = {",\"flow_out\":true",
				      ",\"flow_in\":true",
				      ",\"flow_in\":true,\"flow_out\":true"};

/* One random Chrome event on one of 4 threads of 2 processes. */
static void chrome_event(FILE *f, struct gen *g)
{
	int t = (int)rnd(g, 4);
	uint64_t r = rnd(g, 100);
	if (r < 75)
		g->ts[t] += 1 + rnd(g, 3);
	else if (r < 78 && g->ts[t] > 2)
		g->ts[t] -= 2;
	const char *nm = cnames[rnd(g, 5)], *cat = ccats[rnd(g, 3)];
	fprintf(f, "{\"pid\":%d,\"tid\":%d,\"ts\":%llu", t < 2 ? 1 : 2,
		t == 0 ? 0 : 10 + t, (unsigned long long)g->ts[t]);
	if (nm)
		fprintf(f, ",\"name\":\"%s\"", nm);
	if (cat)
		fprintf(f, ",\"cat\":\"%s\"", cat);
	uint64_t ph = rnd(g, 100);
	if (ph < 40)
		fputs(",\"ph\":\"B\"", f);
	else if (ph < 75)
		fputs(",\"ph\":\"E\"", f);
	else if (ph < 80 && g->no_x)
		fputs(",\"ph\":\"B\"", f);
	else if (ph < 80)
		fprintf(f, ",\"ph\":\"X\",\"dur\":%llu",
			(unsigned long long)rnd(g, 4));
	else if (ph < 85)
		fprintf(f, ",\"ph\":\"i\",\"s\":\"%c\"", "tpgt"[rnd(g, 4)]);
	else if (ph < 87)
		fputs(",\"ph\":\"I\"", f);
	else if (ph < 90)
		fprintf(f, ",\"ph\":\"C\",\"args\":{\"v\":%llu}",
			(unsigned long long)rnd(g, 9));
	else if (ph < 93)
		fprintf(f, ",\"ph\":\"%c\",\"id\":%llu%s", "stf"[rnd(g, 3)],
			(unsigned long long)rnd(g, 3),
			rnd(g, 2) ? ",\"bp\":\"e\"" : "");
	else if (ph < 96)
		fputs(",\"ph\":\"B\",\"args\":{\"k\":1}", f);
	else if (ph < 98)
		fprintf(f, ",\"ph\":\"B\",\"bind_id\":%llu%s",
			(unsigned long long)rnd(g, 3), v2_dirs[rnd(g, 3)]);
	else
		fputs(",\"ph\":\"M\",\"args\":{\"name\":\"n\"}", f);
	fputs("}", f);
}

static void same_json_output(uint64_t seed, int events, int no_x)
{
	char json[256], a[300], b[300];
	ptw_test_tmp_path(json, sizeof(json), "fastjson");
	FILE *f = fopen(json, "w");
	cr_assert(f);
	struct gen g;
	memset(&g, 0, sizeof(g));
	g.x = seed;
	g.no_x = no_x;
	fputs("[", f);
	for (int i = 0; i < events; i++) {
		if (i)
			fputs(",\n", f);
		chrome_event(f, &g);
	}
	fputs("]\n", f);
	cr_assert_eq(fclose(f), 0);
	struct ptw_emit_stats sa, sb;
	convert_fast_and_general(json, 1, 0, a, b, &sa, &sb);
	compare_outputs(a, b, seed, 1, &sa, &sb);
	unlink(json);
}

Test(emit_fast, chrome_json_same_bytes_as_the_general_path)
{
	for (uint64_t seed = 1; seed <= 40; seed++)
		same_json_output(seed * 0xC2B2AE3D27D4EB4Full, 400, seed & 1);
	same_json_output(12345, (int)ptw_test_scale(50000, 5000), 0);
}

/* ---- sequences per thread ---------------------------------------------- */

/* More threads than sequences of their own (PTW_EM_THREAD_SEQS), in two
 * inputs: the first threads get their own sequence, the rest share one,
 * the second input reuses the first one's slots; every slice still lands
 * on its own thread with its own times. */
Test(emit_fast, threads_beyond_the_own_sequences_share_one)
{
	enum { THREADS = 40, SLICES = 30 };
	char json[256], out[300];
	ptw_test_tmp_path(json, sizeof(json), "manythreads");
	FILE *f = fopen(json, "w");
	cr_assert(f);
	fputs("[", f);
	/* interleaved threads, each with its own clock */
	for (int i = 0; i < SLICES; i++)
		for (int t = 0; t < THREADS; t++)
			fprintf(f, "%s{\"name\":\"t%d\",\"ph\":\"X\",\"pid\":1,"
				"\"tid\":%d,\"ts\":%d,\"dur\":2}", i || t ? ",\n" : "",
				t, 100 + t, 1000 * t + 10 * i);
	fputs("]\n", f);
	cr_assert_eq(fclose(f), 0);
	snprintf(out, sizeof(out), "%s.pftrace", json);

	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(out, NULL, &err);
	cr_assert(w, "%s", err.msg);
	struct ptw_emit *em = ptw_emit_create(w, &err);
	cr_assert(em, "%s", err.msg);
	for (int i = 0; i < 2; i++) {
		struct ptw_emit_input in = {.shift_ns = i * 1000000000ll};
		cr_assert_eq(ptw_emit_begin_input(em, &in, &err), 0);
		cr_assert_eq(ptw_cv_json_read(json, NULL, ptw_emit_event, em,
					      NULL, &err), 0, "%s", err.msg);
		cr_assert_eq(ptw_emit_end_input(em, &err), 0, "%s", err.msg);
	}
	cr_assert_eq(ptw_emit_finish(em, &err), 0, "%s", err.msg);
	ptw_emit_destroy(em);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	struct ptw_trace *t = ptw_test_load_checked_or_fail(out, 0);
	/* descriptors, simulation, wall (unused), 2 x 16 own */
	cr_expect_eq(ptw_trace_get_stats(t)->sequences, 1u + 1u + 2u * 16u);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	cr_assert_eq(m->n_slices, 2u * THREADS * SLICES);
	size_t per_input[2][THREADS] = {{0}};
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		const struct ptw_trace_track *tr =
			ptw_trace_find_track(t, s->track_uuid);
		cr_assert(tr && tr->kind == PTW_TRACE_TRACK_THREAD);
		int th = (int)tr->tid - 100, in = s->ts >= 1000000000ll;
		char want[16];
		snprintf(want, sizeof(want), "t%d", th);
		cr_assert(th >= 0 && th < THREADS);
		cr_assert_str_eq(s->name, want);
		int64_t rel = (s->ts - in * 1000000000ll) / 1000 - 1000 * th;
		cr_assert(rel >= 0 && rel % 10 == 0 && rel < 10 * SLICES,
			  "slice of t%d at %lld", th, (long long)s->ts);
		cr_assert_eq(s->dur, 2000);
		per_input[in][th]++;
	}
	for (int i = 0; i < 2; i++)
		for (int th = 0; th < THREADS; th++)
			cr_expect_eq(per_input[i][th], (size_t)SLICES);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(out);
	unlink(json);
}
