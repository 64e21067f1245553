/* test_tracer_ring.c - the flight recorder (PTW_MODE_RING, ptw_snapshot),
 * the data-loss TraceStats packet, and the tracer with zstd. Every trace
 * is decoded with the reader library, passes ptw_trace_check (slices open
 * at the end of a window allowed) and is compared with what was logged.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "reader/tp_model.h"
#include "reader/trace_check.h"
#include "reader/trace_read.h"

static int small_scale(void)
{
	const char *s = getenv("PTW_TEST_SCALE");
	return s && strcmp(s, "small") == 0;
}

static char *tmp_path(const char *tag)
{
	static atomic_int n;
	char *p = malloc(128);
	cr_assert_not_null(p);
	snprintf(p, 128, "/tmp/ptw_ring_%d_%s_%d.pftrace", (int)getpid(), tag,
		 atomic_fetch_add(&n, 1));
	return p;
}

static void start_or_die(struct ptw_config *cfg)
{
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	int rc = ptw_start_ex(cfg, &err);
	cr_assert_eq(rc, 0, "ptw_start: %s", err.msg);
}

/* Loads 'path', checks it (open slices allowed at the window's end) and
 * returns it. */
static struct ptw_trace *load_checked(const char *path)
{
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	struct ptw_trace *t = ptw_trace_load_file(path, NULL, &err);
	cr_assert_not_null(t, "load %s: %s", path, err.msg);
	int rc = ptw_trace_check(t, PTW_CHECK_ALLOW_OPEN | PTW_CHECK_COMPLETE,
				 &err);
	cr_assert_eq(rc, 0, "check %s: %s", path, err.msg);
	const struct ptw_trace_stats *st = ptw_trace_get_stats(t);
	/* nothing trace_processor would count as an error */
	cr_assert_eq(st->packet_skipped_seq_needs_incremental_state_invalid, 0);
	cr_assert_eq(st->interned_data_tokenizer_errors, 0);
	cr_assert_eq(st->invalid_clock_snapshots, 0);
	cr_assert_eq(st->track_event_parser_errors, 0);
	cr_assert_eq(st->track_descriptor_conflicting_reservation, 0);
	cr_assert_eq(st->track_event_counter_invalid_track_uuid, 0);
	cr_assert_eq(st->trace_stats_packets, 1, "one TraceStats at the end");
	return t;
}

static int64_t arg_i(const struct ptw_trace_event *e, const char *name)
{
	for (uint32_t i = 0; i < e->n_args; i++)
		if (strcmp(e->args[i].name, name) == 0)
			return e->args[i].v.i;
	return -1;
}

/* Per logical thread 0..7: the 'i' values of its "tick" instants in the
 * trace must be consecutive and end at last[t] (the window is the newest
 * data, everything logged before the snapshot included). Returns the
 * number of ticks seen of thread 0. */
static int64_t check_suffix(const struct ptw_trace *t, const int64_t *last,
			    int n_threads, int64_t *first_out)
{
	int64_t prev[8], first[8];
	for (int k = 0; k < 8; k++)
		prev[k] = first[k] = -1;
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	for (size_t i = 0; i < n; i++) {
		if (!ev[i].name || strcmp(ev[i].name, "tick") != 0)
			continue;
		int64_t th = arg_i(&ev[i], "t"), v = arg_i(&ev[i], "i");
		cr_assert(th >= 0 && th < n_threads);
		if (prev[th] >= 0)
			cr_assert_eq(v, prev[th] + 1, "thread %lld: tick %lld after %lld",
				     (long long)th, (long long)v, (long long)prev[th]);
		else
			first[th] = v;
		prev[th] = v;
	}
	for (int k = 0; k < n_threads; k++)
		cr_assert_eq(prev[k], last[k], "thread %d ends at tick %lld, logged %lld",
			     k, (long long)prev[k], (long long)last[k]);
	if (first_out)
		*first_out = first[0];
	return prev[0] - first[0] + 1;
}

/* One unit of work: nested slices and a numbered tick. */
static void work(int th, int64_t i)
{
	PTW_BEGIN("w", "outer");
	PTW_BEGIN("w", "inner");
	PTW_INSTANT_ARGS("w", "tick", PTW_ARG_I64("t", th), PTW_ARG_I64("i", i));
	PTW_END("w");
	PTW_END("w");
}

static void ring_cfg(struct ptw_config *cfg, uint64_t bytes)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = PTW_MODE_RING;
	cfg->ring_bytes = bytes;
	cfg->overflow = PTW_OVERFLOW_WAIT;
}

static const struct ptw_trace_buf_stats *buf0(const struct ptw_trace *t)
{
	const struct ptw_trace_stats *st = ptw_trace_get_stats(t);
	cr_assert_geq(st->n_buffers, 1);
	return &st->buf[0];
}

/* Snapshot after 'n' units on one thread with a ring of 'bytes'. */
static void one_thread_snapshot(uint64_t bytes, int64_t n, int expect_wrap)
{
	struct ptw_config cfg;
	ring_cfg(&cfg, bytes);
	start_or_die(&cfg);
	PTW_BEGIN("w", "whole run"); /* open across every wrap */
	for (int64_t i = 0; i < n; i++)
		work(0, i);
	char *p = tmp_path("one");
	cr_assert_eq(ptw_snapshot(p), 0);
	PTW_END("w");
	cr_assert_eq(ptw_stop(), 0);
	struct stat sb;
	cr_assert_eq(stat(p, &sb), 0);
	cr_assert_leq((uint64_t)sb.st_size, bytes + 4096, "window %lld > ring",
		      (long long)sb.st_size);
	struct ptw_trace *t = load_checked(p);
	int64_t last = n - 1, first;
	int64_t seen = check_suffix(t, &last, 1, &first);
	const struct ptw_trace_buf_stats *b = buf0(t);
	cr_assert_eq(b->buffer_size, bytes);
	cr_assert_eq(b->trace_writer_packet_loss, 0);
	if (expect_wrap) {
		cr_assert_gt(b->bytes_overwritten, 0);
		cr_assert_gt(first, 0, "old ticks are gone");
		/* the window keeps at least 5/8 of the ring */
		cr_assert_gt((uint64_t)sb.st_size, bytes / 2);
	} else {
		cr_assert_eq(b->bytes_overwritten, 0);
		cr_assert_eq(first, 0);
		cr_assert_eq(seen, n);
	}
	/* the outer slice is there, begun again if its BEGIN fell out */
	struct ptw_error err;
	struct ptw_tp_model *m = ptw_tp_model_build(t, &err);
	cr_assert_not_null(m);
	cr_assert_eq(m->n_unmatched_ends, 0);
	int outer_open = 0;
	for (size_t i = 0; i < m->n_slices; i++)
		if (m->slices[i].depth == 0 && !m->slices[i].is_instant &&
		    m->slices[i].dur == -1)
			outer_open++;
	cr_assert_eq(outer_open, 1, "the whole-run slice, still open");
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	unlink(p);
	free(p);
}

Test(tracer_ring, snapshot_before_any_wrap)
{
	one_thread_snapshot(1u << 20, 500, 0);
}

Test(tracer_ring, snapshot_after_one_wrap_small_ring)
{
	/* ~45 bytes per unit: 64 KiB hold ~1400 units */
	one_thread_snapshot(64u * 1024u, 2500, 1);
}

Test(tracer_ring, snapshot_after_many_wraps_small_ring)
{
	one_thread_snapshot(64u * 1024u, small_scale() ? 20000 : 100000, 1);
}

Test(tracer_ring, snapshot_after_many_wraps_large_ring)
{
	one_thread_snapshot(4u << 20, small_scale() ? 200000 : 600000, 1);
}

Test(tracer_ring, snapshot_of_an_empty_session)
{
	struct ptw_config cfg;
	ring_cfg(&cfg, 0);
	start_or_die(&cfg);
	char *p = tmp_path("empty");
	cr_assert_eq(ptw_snapshot(p), 0);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_trace *t = load_checked(p);
	cr_assert_eq(buf0(t)->buffer_size, PTW_DEFAULT_RING_BYTES);
	ptw_trace_free(t);
	unlink(p);
	free(p);
}

/* ---- several threads, some exiting during the recording ---------------- */

struct th_arg {
	int th;
	int64_t n;
	pthread_barrier_t *bar; /* then 50 more units each, after the others */
};

static void *worker(void *a_)
{
	struct th_arg *a = a_;
	for (int64_t i = 0; i < a->n; i++)
		work(a->th, i);
	if (a->bar) {
		pthread_barrier_wait(a->bar);
		for (int64_t i = a->n; i < a->n + 50; i++)
			work(a->th, i);
	}
	return NULL;
}

Test(tracer_ring, several_threads_and_thread_exit)
{
	struct ptw_config cfg;
	ring_cfg(&cfg, 256u * 1024u);
	/* The window is the newest data in the order the backend encoded it,
	 * and a producer ring may hold data older than what another thread
	 * already had encoded: small producer rings keep that lag small. */
	cfg.ring_slots = 1024;
	start_or_die(&cfg);
	enum { N = 4 };
	pthread_t th[N];
	struct th_arg a[N];
	int64_t n = small_scale() ? 5000 : 30000;
	/* threads 0, 1 exit before the snapshot; 2, 3 log after it */
	pthread_barrier_t bar;
	cr_assert_eq(pthread_barrier_init(&bar, NULL, 2), 0);
	for (int k = 0; k < 2; k++) {
		a[k] = (struct th_arg){.th = k, .n = n};
		cr_assert_eq(pthread_create(&th[k], NULL, worker, &a[k]), 0);
	}
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	for (int k = 2; k < N; k++) {
		a[k] = (struct th_arg){.th = k, .n = n, .bar = &bar};
		cr_assert_eq(pthread_create(&th[k], NULL, worker, &a[k]), 0);
	}
	for (int k = 2; k < N; k++)
		pthread_join(th[k], NULL);
	char *p = tmp_path("threads");
	cr_assert_eq(ptw_snapshot(p), 0);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_trace *t = load_checked(p);
	/* Threads 2 and 3 are the newest: their last ticks are in; 0 and 1
	 * may have fallen out entirely. */
	size_t ne;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &ne);
	int64_t last[N] = {-1, -1, -1, -1};
	for (size_t i = 0; i < ne; i++)
		if (ev[i].name && strcmp(ev[i].name, "tick") == 0)
			last[arg_i(&ev[i], "t")] = arg_i(&ev[i], "i");
	pthread_barrier_destroy(&bar);
	cr_assert_eq(last[2], n + 49, "%lld %lld %lld %lld", (long long)last[0],
		     (long long)last[1], (long long)last[2], (long long)last[3]);
	cr_assert_eq(last[3], n + 49, "%lld %lld %lld %lld", (long long)last[0], (long long)last[1], (long long)last[2], (long long)last[3]);
	for (int k = 0; k < 2; k++)
		cr_assert(last[k] == -1 || last[k] == n - 1);
	ptw_trace_free(t);
	unlink(p);
	free(p);
}

/* ---- snapshot racing ptw_stop ------------------------------------------- */

static atomic_int race_stop;

static void *snapper(void *arg)
{
	int *ok = arg;
	for (int k = 0; k < 50 && !atomic_load(&race_stop); k++) {
		char *p = tmp_path("race");
		int rc = ptw_snapshot(p);
		cr_assert(rc == 0 || rc == PTW_ERR_STATE, "snapshot: %d", rc);
		if (rc == 0) {
			struct ptw_trace *t = load_checked(p);
			ptw_trace_free(t);
			(*ok)++;
		}
		unlink(p);
		free(p);
	}
	return NULL;
}

static void *logger(void *arg)
{
	(void)arg;
	for (int64_t i = 0; !atomic_load(&race_stop); i++)
		work(1, i);
	return NULL;
}

Test(tracer_ring, snapshots_racing_ptw_stop)
{
	for (int round = 0; round < (small_scale() ? 3 : 8); round++) {
		struct ptw_config cfg;
		ring_cfg(&cfg, 128u * 1024u);
		cfg.overflow = PTW_OVERFLOW_DROP;
		start_or_die(&cfg);
		atomic_store(&race_stop, 0);
		int ok = 0;
		pthread_t s, l;
		cr_assert_eq(pthread_create(&l, NULL, logger, NULL), 0);
		cr_assert_eq(pthread_create(&s, NULL, snapper, &ok), 0);
		usleep((useconds_t)(2000 + round * 3000));
		cr_assert_eq(ptw_stop(), 0);
		atomic_store(&race_stop, 1);
		pthread_join(s, NULL);
		pthread_join(l, NULL);
		cr_assert_eq(ptw_snapshot("/tmp/ptw_never"), PTW_ERR_STATE);
	}
}

/* ---- stop in ring mode ---------------------------------------------------- */

Test(tracer_ring, stop_writes_the_window_only_to_a_named_output)
{
	struct ptw_config cfg;
	ring_cfg(&cfg, 64u * 1024u);
	char *p = tmp_path("stop");
	unlink(p);
	start_or_die(&cfg);
	for (int64_t i = 0; i < 100; i++)
		work(0, i);
	cr_assert_eq(ptw_stop(), 0);
	cr_assert_neq(access(p, F_OK), 0);
	cfg.output_path = p;
	start_or_die(&cfg);
	cr_assert_neq(access(p, F_OK), 0, "nothing before the stop");
	for (int64_t i = 0; i < 5000; i++)
		work(0, i);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_trace *t = load_checked(p);
	int64_t last = 4999;
	check_suffix(t, &last, 1, NULL);
	ptw_trace_free(t);
	unlink(p);
	free(p);
	cr_assert_eq(ptw_snapshot_fd(1), PTW_ERR_STATE);
}

/* ---- data loss in trace_processor's stats --------------------------------- */

static void loss_run(int drops, int ring)
{
	char *p = tmp_path("loss");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = ring ? NULL : p;
	if (ring)
		ring_cfg(&cfg, 1u << 20);
	cfg.overflow = drops ? PTW_OVERFLOW_DROP : PTW_OVERFLOW_WAIT;
	cfg.ring_slots = drops ? 64 : 0;
	cfg.drain_interval_us = 5000;
	start_or_die(&cfg);
	for (int64_t i = 0; i < 20000; i++)
		PTW_INSTANT("l", "x");
	if (ring)
		cr_assert_eq(ptw_snapshot(p), 0);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	if (drops)
		cr_assert_gt(st.dropped, 0);
	else
		cr_assert_eq(st.dropped, 0);
	struct ptw_trace *t = load_checked(p);
	const struct ptw_trace_buf_stats *b = buf0(t);
	cr_assert_eq(b->trace_writer_packet_loss, st.dropped,
		     "TraceStats says %llu, ptw_stats %llu",
		     (unsigned long long)b->trace_writer_packet_loss,
		     (unsigned long long)st.dropped);
	cr_assert(b->has_sequence_stats);
	if (drops) {
		cr_assert_gt(b->sequence_packet_loss, 0);
		/* and the per-thread counter track is still there */
		size_t nt;
		const struct ptw_trace_track *tk = ptw_trace_tracks(t, &nt);
		int found = 0;
		for (size_t i = 0; i < nt; i++)
			found |= tk[i].name && strcmp(tk[i].name, "dropped events") == 0;
		cr_assert(found);
	} else {
		cr_assert_eq(b->sequence_packet_loss, 0);
	}
	ptw_trace_free(t);
	unlink(p);
	free(p);
}

Test(tracer_loss, no_drops_writes_zeros) { loss_run(0, 0); }
Test(tracer_loss, drops_are_data_loss_with_the_exact_count) { loss_run(1, 0); }
Test(tracer_loss, snapshot_reports_drops_too) { loss_run(1, 1); }

/* ---- zstd through the tracer ------------------------------------------------ */

Test(tracer_ring, zstd_stream_and_ring)
{
	for (int ring = 0; ring < 2; ring++) {
		char *p = tmp_path("zstd");
		struct ptw_config cfg;
		if (ring)
			ring_cfg(&cfg, 64u * 1024u);
		else
			memset(&cfg, 0, sizeof(cfg));
		cfg.output_path = p;
		cfg.overflow = PTW_OVERFLOW_WAIT;
		struct ptw_writer_options wo = {.compress = PTW_COMPRESS_ZSTD};
		cfg.writer = &wo;
		start_or_die(&cfg);
		for (int64_t i = 0; i < 20000; i++)
			work(0, i);
		cr_assert_eq(ptw_stop(), 0);
		struct ptw_trace *t = load_checked(p);
		cr_assert_gt(ptw_trace_get_stats(t)->zstd_batches, 0);
		int64_t last = 19999, first;
		int64_t seen = check_suffix(t, &last, 1, &first);
		if (!ring)
			cr_assert_eq(seen, 20000);
		ptw_trace_free(t);
		unlink(p);
		free(p);
	}
}

/* ---- loss counted once while snapshots are taken (issue 23) ---------------- */

/* trace_processor_shell from $PTW_SHARED_DIR/tp, or NULL (checks skipped). */
static const char *tp_shell(void)
{
	static char path[512];
	const char *d = getenv("PTW_SHARED_DIR");
	if (!d)
		return NULL;
	snprintf(path, sizeof(path), "%s/tp/trace_processor_shell", d);
	return access(path, X_OK) == 0 ? path : NULL;
}

/* Runs one query; returns its result rows (header dropped) as numbers, in
 * order, at most 'max'. */
static size_t tp_numbers(const char *trace, const char *sql, double *out,
			 size_t max)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "'%s' -Q \"%s\" '%s' 2>/dev/null", tp_shell(),
		 sql, trace);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	char line[512];
	size_t n = 0;
	int header = 1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != '"' && (line[0] < '0' || line[0] > '9'))
			continue; /* log lines */
		if (header) {
			header = 0;
			continue;
		}
		if (n < max)
			out[n++] = strtod(line[0] == '"' ? line + 1 : line, NULL);
	}
	cr_assert_eq(pclose(f), 0, "trace_processor_shell failed on %s", trace);
	return n;
}

#define LOSS_THREADS 2
static _Atomic int64_t loss_logged[LOSS_THREADS];
static atomic_int loss_snapped; /* the five snapshots are taken */
static int64_t loss_n;

static void *loss_producer(void *arg)
{
	int k = (int)(intptr_t)arg;
	char name[16];
	snprintf(name, sizeof(name), "lossy%d", k);
	ptw_set_thread_name(name);
	/* at least loss_n, and on until the snapshots are taken, so that
	 * every snapshot comes while the ring overflows */
	for (int64_t i = 0; i < loss_n || !atomic_load(&loss_snapped); i++) {
		PTW_INSTANT_ARGS("l", "tick", PTW_ARG_I64("i", i));
		atomic_store_explicit(&loss_logged[k], i + 1,
				      memory_order_release);
	}
	return NULL;
}

/* What a trace says about producer k: its ticks, the last one, and the
 * last value of its "dropped events" counter. */
struct loss_view {
	int64_t present, last, dropped;
};

static void loss_view(const struct ptw_trace *t, struct loss_view *v)
{
	size_t nt, ne;
	const struct ptw_trace_track *tk = ptw_trace_tracks(t, &nt);
	const struct ptw_trace_event *ev = ptw_trace_events(t, &ne);
	for (int k = 0; k < LOSS_THREADS; k++) {
		char name[16];
		snprintf(name, sizeof(name), "lossy%d", k);
		uint64_t th = 0, ctr = 0;
		for (size_t i = 0; i < nt; i++)
			if (tk[i].kind == PTW_TRACE_TRACK_THREAD && tk[i].name &&
			    strcmp(tk[i].name, name) == 0)
				th = tk[i].uuid;
		for (size_t i = 0; i < nt; i++)
			if (th && tk[i].kind == PTW_TRACE_TRACK_COUNTER &&
			    tk[i].parent_uuid == th && tk[i].name &&
			    strcmp(tk[i].name, "dropped events") == 0)
				ctr = tk[i].uuid;
		v[k] = (struct loss_view){0, -1, 0};
		for (size_t i = 0; i < ne; i++) {
			if (th && ev[i].track_uuid == th && ev[i].name &&
			    strcmp(ev[i].name, "tick") == 0) {
				int64_t x = arg_i(&ev[i], "i");
				v[k].present++;
				v[k].last = x > v[k].last ? x : v[k].last;
			} else if (ctr && ev[i].track_uuid == ctr) {
				cr_assert_geq((int64_t)ev[i].counter_value,
					      v[k].dropped,
					      "the running total never goes back");
				v[k].dropped = (int64_t)ev[i].counter_value;
			}
		}
	}
}

/* trace_processor's view: the loss stat and the dropped counters agree
 * with ours. */
static void loss_tp_check(const char *path, const struct loss_view *v,
			  uint64_t loss)
{
	if (!tp_shell())
		return;
	double x[8];
	cr_assert_eq(tp_numbers(path, "select value from stats where name = "
				      "'traced_buf_trace_writer_packet_loss'",
				x, 8), 1);
	cr_assert_eq((uint64_t)x[0], loss, "%s: trace_processor's loss %.0f, "
		     "TraceStats %llu", path, x[0], (unsigned long long)loss);
	cr_assert_eq(tp_numbers(path, "select count(*) from slice where name "
				      "= 'tick'", x, 8), 1);
	cr_assert_eq((int64_t)x[0], v[0].present + v[1].present);
	size_t n = tp_numbers(path, "select max(c.value) from counter c join "
				    "counter_track t on c.track_id = t.id "
				    "where t.name = 'dropped events' group by "
				    "t.id order by 1", x, 8);
	int64_t want[LOSS_THREADS];
	size_t m = 0;
	for (int k = 0; k < LOSS_THREADS; k++)
		if (v[k].dropped)
			want[m++] = v[k].dropped;
	if (m == 2 && want[0] > want[1]) {
		int64_t s = want[0];
		want[0] = want[1];
		want[1] = s;
	}
	cr_assert_eq(n, m, "%s: %zu dropped-events counters, want %zu", path,
		     n, m);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq((int64_t)x[i], want[i]);
}

/* The run: ring mode, two threads logging (300,000 events each,
 * or more until the snapshots are taken) into 1024-slot rings (most
 * events are lost), five snapshots 2 ms apart, then ptw_stop with an
 * output. Each trace counts each loss once: per thread at least every
 * event lost before its last one in the window, at most what it logged
 * by the snapshot's return; the final trace exactly. */
Test(tracer_loss, snapshots_while_producers_drop_count_each_loss_once)
{
	loss_n = small_scale() ? 30000 : 300000;
	char *out = tmp_path("lossfinal");
	char *snap[5];
	int64_t at[5][LOSS_THREADS];
	struct ptw_config cfg;
	ring_cfg(&cfg, 64u << 20);
	cfg.overflow = PTW_OVERFLOW_DROP;
	cfg.ring_slots = 1024;
	cfg.output_path = out;
	start_or_die(&cfg);
	pthread_t th[LOSS_THREADS];
	atomic_store(&loss_snapped, 0);
	for (int k = 0; k < LOSS_THREADS; k++) {
		atomic_store(&loss_logged[k], 0);
		cr_assert_eq(pthread_create(&th[k], NULL, loss_producer,
					    (void *)(intptr_t)k), 0);
	}
	for (int s = 0; s < 5; s++) {
		struct timespec d = {0, 2000000};
		nanosleep(&d, NULL);
		snap[s] = tmp_path("losssnap");
		cr_assert_eq(ptw_snapshot(snap[s]), 0);
		for (int k = 0; k < LOSS_THREADS; k++)
			at[s][k] = atomic_load_explicit(&loss_logged[k],
							memory_order_acquire);
	}
	atomic_store(&loss_snapped, 1);
	int64_t total = 0;
	for (int k = 0; k < LOSS_THREADS; k++) {
		pthread_join(th[k], NULL);
		total += atomic_load(&loss_logged[k]);
	}
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.events + st.dropped, (uint64_t)total);

	for (int s = 0; s <= 5; s++) {
		const char *p = s < 5 ? snap[s] : out;
		struct ptw_trace *t = load_checked(p);
		struct loss_view v[LOSS_THREADS];
		loss_view(t, v);
		uint64_t sum = 0;
		for (int k = 0; k < LOSS_THREADS; k++) {
			/* + 1: the event the producer was logging when
			 * the snapshot returned may be lost already */
			int64_t logged = s < 5 ? at[s][k] + 1
					       : atomic_load(&loss_logged[k]);
			cr_assert_geq(v[k].dropped, v[k].last + 1 - v[k].present,
				      "%s thread %d: %lld lost before tick "
				      "%lld, %lld counted", p, k,
				      (long long)(v[k].last + 1 - v[k].present),
				      (long long)v[k].last,
				      (long long)v[k].dropped);
			cr_assert_leq(v[k].dropped + v[k].present, logged,
				      "%s thread %d: %lld lost + %lld present "
				      "> %lld logged", p, k,
				      (long long)v[k].dropped,
				      (long long)v[k].present, (long long)logged);
			if (s == 5)
				cr_assert_eq(v[k].dropped + v[k].present, logged);
			sum += (uint64_t)v[k].dropped;
		}
		uint64_t loss = buf0(t)->trace_writer_packet_loss;
		cr_assert_eq(loss, sum, "%s: TraceStats %llu, counters %llu", p,
			     (unsigned long long)loss, (unsigned long long)sum);
		if (s == 5)
			cr_assert_eq(loss, st.dropped);
		loss_tp_check(p, v, loss);
		ptw_trace_free(t);
		unlink(p);
		free((void *)p);
	}
}

/* ---- only the user's slices; the clock in the metadata (issue 23) ---------- */

/* A trace's events are exactly the 'pairs' BEGIN/END pairs logged, and
 * trace_processor shows exactly those slices, with the clock in its
 * metadata table. */
static void only_user_slices(const char *p, int64_t pairs)
{
	struct ptw_trace *t = load_checked(p);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	cr_assert_eq(n, (size_t)(2 * pairs), "%s: %zu events, the program "
		     "logged %lld", p, n, (long long)(2 * pairs));
	for (size_t i = 0; i < n; i++)
		cr_assert(ev[i].type == PTW_TRACE_SLICE_END ||
			  (ev[i].name && strcmp(ev[i].name, "user") == 0));
	ptw_trace_free(t);
	if (!tp_shell())
		return;
	double x[4];
	cr_assert_eq(tp_numbers(p, "select count(*) from slice", x, 4), 1);
	cr_assert_eq((int64_t)x[0], pairs, "%s: trace_processor shows %.0f "
		     "slices, the program made %lld", p, x[0], (long long)pairs);
	cr_assert_eq(tp_numbers(p, "select count(*) from metadata where name "
				   "= 'cr-ptw.clock' and str_value in ('tsc', "
				   "'monotonic')", x, 4), 1);
	cr_assert_eq(x[0], 1, "%s: the clock is in the metadata table", p);
}

Test(tracer_meta, every_trace_shows_only_the_users_slices)
{
	const int64_t pairs = 1000;
	for (int ring = 0; ring < 2; ring++) {
		char *out = tmp_path("meta"), *snap = tmp_path("metasnap");
		struct ptw_config cfg;
		if (ring)
			ring_cfg(&cfg, 1u << 20);
		else
			memset(&cfg, 0, sizeof(cfg));
		cfg.output_path = out;
		cfg.clock = PTW_CLOCK_FASTEST;
		start_or_die(&cfg);
		for (int64_t i = 0; i < pairs; i++) {
			PTW_BEGIN("u", "user");
			PTW_END("u");
		}
		if (ring)
			cr_assert_eq(ptw_snapshot(snap), 0);
		cr_assert_eq(ptw_stop(), 0);
		only_user_slices(out, pairs);
		if (ring)
			only_user_slices(snap, pairs);
		unlink(out);
		unlink(snap);
		free(out);
		free(snap);
	}
}

/* ---- slices begun before the window keep what they are (issue 23) --------- */

static atomic_int opener_go;

/* Begins a slice and exits with it open. */
static void *opener(void *arg)
{
	(void)arg;
	ptw_set_thread_name("opener");
	PTW_BEGIN_ARGS("gone", "left open", PTW_ARG_I64("k", 7));
	atomic_store(&opener_go, 1);
	return NULL;
}

static const struct ptw_tp_slice *slice_named(const struct ptw_tp_model *m,
					      const char *name)
{
	const struct ptw_tp_slice *found = NULL;
	for (size_t i = 0; i < m->n_slices; i++)
		if (m->slices[i].name && strcmp(m->slices[i].name, name) == 0) {
			cr_assert_null(found, "one slice named %s", name);
			found = &m->slices[i];
		}
	cr_assert_not_null(found, "a slice named %s", name);
	return found;
}

static const struct ptw_trace_arg *slice_arg(const struct ptw_tp_slice *s,
					     const char *name)
{
	for (uint32_t i = 0; i < s->n_args; i++)
		if (s->args[i]->name && strcmp(s->args[i]->name, name) == 0)
			return s->args[i];
	cr_assert_fail("slice %s has no argument %s", s->name, name);
	return NULL;
}

/* The slices open before the window, as the window shows them: begun at
 * its start ('open': not ended in it) with their names, categories,
 * arguments and depths; nothing is named as a placeholder. */
static void check_cut_slices(const char *p, int open)
{
	struct ptw_trace *t = load_checked(p);
	const struct ptw_trace_buf_stats *b = buf0(t);
	cr_assert_gt(b->bytes_overwritten, 0, "%s: the window wrapped", p);
	struct ptw_error err;
	struct ptw_tp_model *m = ptw_tp_model_build(t, &err);
	cr_assert_not_null(m);
	cr_assert_eq(m->n_unmatched_ends, 0);
	int64_t start = INT64_MAX;
	for (size_t i = 0; i < m->n_slices; i++) {
		cr_assert(!m->slices[i].name ||
			  !strstr(m->slices[i].name, "before the window"),
			  "%s: a placeholder slice", p);
		start = m->slices[i].ts < start ? m->slices[i].ts : start;
	}
	static const struct {
		const char *name, *cat;
		uint32_t depth;
	} want[] = {
		{"whole run", "outer", 0},  {"with args", "args", 1},
		{"dyn-1234", "dyn", 2},      {"async op", "async", 0},
		{"left open", "gone", 0},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct ptw_tp_slice *s = slice_named(m, want[i].name);
		cr_assert_str_eq(s->category, want[i].cat, "%s", want[i].name);
		cr_assert_eq(s->depth, want[i].depth, "%s", want[i].name);
		cr_assert_eq(s->ts, start, "%s begins at the window's start",
			     want[i].name);
		int ended = s->dur >= 0;
		/* the exited thread's slice is never ended */
		cr_assert_eq(ended, !open && i != 4, "%s: dur %lld",
			     want[i].name, (long long)s->dur);
	}
	const struct ptw_tp_slice *a = slice_named(m, "with args");
	cr_assert_eq(slice_arg(a, "n")->v.i, 42);
	cr_assert_str_eq(slice_arg(a, "s")->v.s, "a string value");
	cr_assert_eq(slice_arg(a, "d")->v.d, 1.5);
	cr_assert_eq(slice_arg(a, "b")->v.b, 1);
	cr_assert_eq(slice_arg(slice_named(m, "left open"), "k")->v.i, 7);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	if (!tp_shell())
		return;
	double x[8];
	cr_assert_eq(tp_numbers(p, "select count(*) from slice where name in "
				   "('whole run', 'with args', 'dyn-1234', "
				   "'async op', 'left open') and ts = (select "
				   "min(ts) from slice)", x, 8), 1);
	cr_assert_eq(x[0], 5, "%s: trace_processor has the five slices at "
		     "the window's start", p);
	cr_assert_eq(tp_numbers(p, "select count(*) from slice where "
				   "instr(name, 'before the window') > 0", x,
				8), 1);
	cr_assert_eq(x[0], 0);
	cr_assert_eq(tp_numbers(p, "select a.int_value from slice s join args "
				   "a using (arg_set_id) where s.name = 'with "
				   "args' and a.key = 'debug.n'", x, 8), 1);
	cr_assert_eq(x[0], 42);
	cr_assert_eq(tp_numbers(p, "select count(*) from slice s join args a "
				   "using (arg_set_id) where s.name = 'with "
				   "args' and a.key = 'debug.s' and "
				   "a.string_value = 'a string value'", x, 8), 1);
	cr_assert_eq(x[0], 1);
}

/* Slices of every kind open across many wraps: the snapshot and the
 * trace of ptw_stop begin them at the window's start as they were begun
 * (the backend's one-slot ways and its general path alike). */
static void cut_slices_run(int general_only)
{
	char *out = tmp_path("cutfinal"), *snap = tmp_path("cutsnap");
	struct ptw_config cfg;
	ring_cfg(&cfg, 64u * 1024u);
	cfg.output_path = out;
	cfg.general_path_only = general_only;
	start_or_die(&cfg);
	atomic_store(&opener_go, 0);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, opener, NULL), 0);
	pthread_join(th, NULL);
	cr_assert(atomic_load(&opener_go));
	char dyn[32];
	snprintf(dyn, sizeof(dyn), "dyn-%d", 1234);
	PTW_BEGIN("outer", "whole run");
	PTW_BEGIN_ARGS("args", "with args", PTW_ARG_I64("n", 42),
		       PTW_ARG_STR("s", "a string value"), PTW_ARG_DBL("d", 1.5),
		       PTW_ARG_BOOL("b", 1));
	PTW_BEGIN_DYN("dyn", dyn);
	PTW_ASYNC_BEGIN("async", "async op", 77);
	for (int64_t i = 0; i < 20000; i++) /* wraps the ring many times */
		work(0, i);
	cr_assert_eq(ptw_snapshot(snap), 0);
	PTW_ASYNC_END("async", 77);
	PTW_END("dyn");
	PTW_END("args");
	PTW_END("outer");
	cr_assert_eq(ptw_stop(), 0);
	check_cut_slices(snap, 1);
	check_cut_slices(out, 0);
	unlink(out);
	unlink(snap);
	free(out);
	free(snap);
}

Test(tracer_ring, slices_begun_before_the_window_keep_name_category_and_args)
{
	cut_slices_run(0);
}

Test(tracer_ring, the_general_path_keeps_open_slices_alike)
{
	cut_slices_run(1);
}
