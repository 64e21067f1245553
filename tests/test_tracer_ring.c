/* test_tracer_ring.c - the flight recorder (PTW_MODE_RING, ptw_snapshot),
 * the data-loss TraceStats packet, and the tracer with zstd. Every trace
 * is decoded with the reader library, passes ptw_trace_check (slices open
 * at the end of a window allowed) and is compared with what was logged.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "tp_model.h"
#include "trace_check.h"
#include "trace_read.h"

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
	const struct ptw_trace_stats *st = ptw_trace_stats(t);
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
	const struct ptw_trace_stats *st = ptw_trace_stats(t);
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
		cr_assert_gt(ptw_trace_stats(t)->zstd_batches, 0);
		int64_t last = 19999, first;
		int64_t seen = check_suffix(t, &last, 1, &first);
		if (!ring)
			cr_assert_eq(seen, 20000);
		ptw_trace_free(t);
		unlink(p);
		free(p);
	}
}
