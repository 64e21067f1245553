/* test_tracer_async.c - async slices through the tracer, checked with the
 * reader's trace_processor model: every 64-bit id works, and an id reused
 * across threads pairs its BEGINs and ENDs in timestamp order whatever
 * order the backend drains the rings in.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "reader/tp_model.h"
#include "reader/trace_read.h"

static void tmp_path(char *buf, size_t n, const char *tag)
{
	snprintf(buf, n, "/tmp/ptw_test_tracer_async_%s_%d.pftrace", tag,
		 (int)getpid());
}

static void start_or_die(const char *path)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	/* The backend sleeps long when idle, so a burst logged after a pause
	 * is drained after all of it was logged, ring by ring. */
	cfg.drain_interval_us = 2000000;
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "ptw_start: %s", err.msg);
}

/* The slices named 'name' as trace_processor would show them, in ts
 * order (at most 'max'). */
static size_t slices_named(const char *path, const char *name,
			   struct ptw_tp_slice *out, size_t max)
{
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	struct ptw_trace *t = ptw_trace_load_file(path, NULL, &err);
	cr_assert_not_null(t, "load %s: %s", path, err.msg);
	struct ptw_tp_model *m = ptw_tp_model_build(t, &err);
	cr_assert_not_null(m, "model: %s", err.msg);
	size_t n = 0;
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		if (s->name && strcmp(s->name, name) == 0) {
			cr_assert_lt(n, max);
			out[n] = *s;
			out[n].name = NULL; /* points into the trace */
			out[n].category = NULL;
			out[n].begin = out[n].end = NULL;
			out[n].args = NULL;
			n++;
		}
	}
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	return n;
}

static struct ptw_stats stop_and_stats(void)
{
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	return st;
}

Test(tracer_async, every_64_bit_id_works_including_the_largest)
{
	char path[128];
	tmp_path(path, sizeof(path), "ids");
	start_or_die(path);
	static const uint64_t ids[] = {0, 1, UINT64_MAX - 1, UINT64_MAX};
	for (size_t i = 0; i < 4; i++)
		PTW_ASYNC_BEGIN("async", "maxid", ids[i]);
	for (size_t i = 4; i-- > 0;)
		PTW_ASYNC_END("async", ids[i]);
	struct ptw_stats st = stop_and_stats();
	cr_assert_eq(st.invalid, 0);
	cr_assert_eq(st.events, 8);
	struct ptw_tp_slice s[8];
	size_t n = slices_named(path, "maxid", s, 8);
	cr_assert_eq(n, 4);
	for (size_t i = 0; i < n; i++) {
		cr_assert_gt(s[i].dur, 0, "slice %zu ended", i);
		cr_assert_eq(s[i].depth, 0, "each id on its own track");
	}
	unlink(path);
}

/* Thread "begin" begins id 1, "end" ends it, "begin" begins it again and
 * "end" ends it again, in this real-time order (semaphores). */
struct reuse {
	sem_t go[4];
	int begin_on_main; /* which side the test's own thread plays */
};

static void reuse_begin_side(struct reuse *r)
{
	PTW_ASYNC_BEGIN("async", "reuse", 1);
	sem_post(&r->go[0]);
	sem_wait(&r->go[1]);
	PTW_ASYNC_BEGIN("async", "reuse", 1);
	sem_post(&r->go[2]);
}

static void reuse_end_side(struct reuse *r)
{
	sem_wait(&r->go[0]);
	PTW_ASYNC_END("async", 1);
	sem_post(&r->go[1]);
	sem_wait(&r->go[2]);
	PTW_ASYNC_END("async", 1);
	sem_post(&r->go[3]);
}

static void *reuse_other(void *arg)
{
	struct reuse *r = arg;
	if (r->begin_on_main)
		reuse_end_side(r);
	else
		reuse_begin_side(r);
	return NULL;
}

static void run_reuse(int begin_on_main, const char *tag)
{
	char path[128];
	tmp_path(path, sizeof(path), tag);
	start_or_die(path);
	struct reuse r;
	r.begin_on_main = begin_on_main;
	for (int i = 0; i < 4; i++)
		sem_init(&r.go[i], 0, 0);
	/* The test's thread registers first, so the backend drains its ring
	 * first: either both BEGINs before both ENDs, or the reverse. */
	PTW_INSTANT("async", "register");
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, reuse_other, &r), 0);
	usleep(100000); /* let the backend fall into a long idle sleep */
	if (begin_on_main)
		reuse_begin_side(&r);
	else
		reuse_end_side(&r);
	pthread_join(th, NULL);
	for (int i = 0; i < 4; i++)
		sem_destroy(&r.go[i]);
	struct ptw_stats st = stop_and_stats();
	cr_assert_eq(st.invalid, 0);
	struct ptw_tp_slice s[4];
	size_t n = slices_named(path, "reuse", s, 4);
	cr_assert_eq(n, 2, "both slices, not one");
	/* paired in time: begin1 < end1 < begin2 < end2, both at depth 0 */
	cr_assert_gt(s[0].dur, 0);
	cr_assert_gt(s[1].dur, 0);
	cr_assert_leq(s[0].ts + s[0].dur, s[1].ts);
	cr_assert_eq(s[0].depth, 0);
	cr_assert_eq(s[1].depth, 0);
	unlink(path);
}

Test(tracer_async, id_reused_across_threads_pairs_by_time_begins_drained_first)
{
	run_reuse(1, "reuse_b");
}

Test(tracer_async, id_reused_across_threads_pairs_by_time_ends_drained_first)
{
	run_reuse(0, "reuse_e");
}

Test(tracer_async, really_unmatched_begin_and_end_are_counted)
{
	char path[128];
	tmp_path(path, sizeof(path), "unmatched");
	start_or_die(path);
	PTW_ASYNC_BEGIN("async", "never ends", 5);
	PTW_ASYNC_END("async", 6); /* never begun */
	PTW_ASYNC_BEGIN("async", "pair", 7);
	PTW_ASYNC_END("async", 7);
	struct ptw_stats st = stop_and_stats();
	cr_assert_eq(st.invalid, 2);
	struct ptw_tp_slice s[2];
	cr_assert_eq(slices_named(path, "pair", s, 2), 1);
	cr_assert_gt(s[0].dur, 0);
	cr_assert_eq(slices_named(path, "never ends", s, 2), 1);
	cr_assert_eq(s[0].dur, -1);
	unlink(path);
}

Test(tracer_async, nested_begins_of_one_id_nest_on_its_track)
{
	char path[128];
	tmp_path(path, sizeof(path), "nested");
	start_or_die(path);
	PTW_ASYNC_BEGIN("async", "outer", 9);
	PTW_ASYNC_BEGIN("async", "inner", 9);
	PTW_ASYNC_END("async", 9);
	PTW_ASYNC_END("async", 9);
	struct ptw_stats st = stop_and_stats();
	cr_assert_eq(st.invalid, 0);
	struct ptw_tp_slice o, i;
	cr_assert_eq(slices_named(path, "outer", &o, 1), 1);
	cr_assert_eq(slices_named(path, "inner", &i, 1), 1);
	cr_assert_eq(o.depth, 0);
	cr_assert_eq(i.depth, 1);
	cr_assert_geq(o.ts + o.dur, i.ts + i.dur);
	unlink(path);
}

/* Many short-lived ids: tracks are reused, never two ids interleaved on
 * one track (every slice at depth 0, none lost). */
Test(tracer_async, many_ids_over_time_reuse_tracks_without_mixing)
{
	char path[128];
	tmp_path(path, sizeof(path), "many");
	start_or_die(path);
	for (uint64_t id = 100; id < 2100; id++) {
		PTW_ASYNC_BEGIN("async", "op", id);
		if (id % 3 == 0)
			PTW_ASYNC_BEGIN("async", "op", id + 100000);
		PTW_ASYNC_END("async", id);
		if (id % 3 == 0)
			PTW_ASYNC_END("async", id + 100000);
		if (id % 500 == 0)
			usleep(5000); /* let the backend pass and free tracks */
	}
	struct ptw_stats st = stop_and_stats();
	cr_assert_eq(st.invalid, 0);
	static struct ptw_tp_slice s[3000];
	size_t n = slices_named(path, "op", s, 3000);
	cr_assert_eq(n, 2000 + 666); /* ids 100..2099, a third doubled */
	for (size_t k = 0; k < n; k++) {
		cr_assert_eq(s[k].depth, 0);
		cr_assert_geq(s[k].dur, 0);
	}
	unlink(path);
}
