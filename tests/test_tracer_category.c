/* test_tracer_category.c - categories switched on and off while slices
 * are open (an END closes the BEGIN that was recorded, and only that one,
 * on this thread or when another thread switches, in stream and ring
 * mode, for async slices too), and category patterns and groups. Every
 * trace is decoded with the reader's trace_processor model; with
 * $PTW_SHARED_DIR/tp/trace_processor_shell at hand, trace_processor shows
 * the same slices and no error stat.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"

static void start_mode(const char *path, enum ptw_mode mode,
		       const char *disabled)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.mode = mode;
	cfg.disabled_categories = disabled;
	cfg.overflow = PTW_OVERFLOW_WAIT; /* nothing lost: counts are exact */
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "ptw_start: %s", err.msg);
}

/* Stops; the session had no invalid and no dropped event. */
static void stop_clean(void)
{
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.invalid, 0, "invalid events: %llu",
		     (unsigned long long)st.invalid);
	cr_assert_eq(st.dropped, 0);
}

struct loaded {
	struct ptw_trace *t;
	struct ptw_tp_model *m;
};

/* The trace at path, checked (no slice left open) and modelled. */
static struct loaded load(const char *path)
{
	struct loaded l;
	l.t = ptw_test_load_checked_or_fail(path, 0);
	l.m = ptw_test_model_or_fail(l.t);
	cr_assert_eq(l.m->n_unmatched_ends, 0, "%s: unmatched ENDs", path);
	return l;
}

static void unload(struct loaded *l, const char *path)
{
	ptw_tp_model_free(l->m);
	ptw_trace_free(l->t);
	unlink(path);
}

/* The n-th slice named 'name'; fails if there is none. */
static const struct ptw_tp_slice *slice(const struct loaded *l,
					const char *name, size_t nth)
{
	const struct ptw_tp_slice *s = ptw_test_find_slice(l->m, name, nth);
	cr_assert_not_null(s, "no slice '%s' #%zu", name, nth);
	return s;
}

static const char *parent_name(const struct loaded *l,
			       const struct ptw_tp_slice *s)
{
	if (s->parent_id < 0)
		return NULL;
	return l->m->slices[s->parent_id].name;
}

/* ---- trace_processor, when at hand --------------------------------------- */

/* trace_processor shows 'want' for 'sql', and no error or data-loss
 * stat. Skipped without trace_processor. */
static void tp_expect(const char *trace, const char *sql, const char *want)
{
	char got[4096];
	if (ptw_test_tp_rows(trace, sql, got, sizeof(got)) != 0)
		return;
	cr_assert_str_eq(got, want, "%s: %s", trace, sql);
	ptw_test_tp_rows(trace,
		"select name, idx, severity, value from stats where value > 0 "
		"and severity in ('error', 'data_loss')",
		got, sizeof(got));
	cr_assert_str_eq(got, "", "%s: error stats %s", trace, got);
}

#define SLICES_SQL "select name, depth, dur >= 0 from slice order by ts, depth"

/* ---- one thread switches its own category ------------------------------- */

/* "<base><n>", made at run time. */
static const char *run_time_name(const char *base, int n)
{
	static char buf[64];
	snprintf(buf, sizeof(buf), "%s%d", base, n);
	return buf;
}

/* The sequence: "outer" ends although "db" was off at its END,
 * and "later A" is not nested under it. */
static void end_after_switch_off(enum ptw_mode mode)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "endcat-off");
	start_mode(path, mode, NULL);
	PTW_BEGIN("db", "outer");
	ptw_set_category_enabled("db", 0);
	PTW_END("db");
	ptw_set_category_enabled("db", 1);
	PTW_BEGIN("net", "later A");
	PTW_END("net");
	/* the same with arguments on the END, and with a run-time name */
	PTW_BEGIN_DYN("db", run_time_name("outer", 2));
	ptw_set_category_enabled("db", 0);
	PTW_END_ARGS("db", PTW_ARG_I64("rows", 7));
	ptw_set_category_enabled("db", 1);
	PTW_BEGIN("net", "later B");
	PTW_END("net");
	stop_clean();

	struct loaded l = load(path);
	cr_assert_eq(l.m->n_slices, 4);
	const char *names[] = {"outer", "later A", "outer2", "later B"};
	for (int i = 0; i < 4; i++) {
		const struct ptw_tp_slice *s = slice(&l, names[i], 0);
		cr_assert_geq(s->dur, 0, "%s dur %lld", names[i],
			      (long long)s->dur);
		cr_assert_eq(s->depth, 0, "%s depth %u", names[i], s->depth);
	}
	const struct ptw_tp_slice *o2 = slice(&l, "outer2", 0);
	cr_assert_eq(o2->n_args, 1);
	cr_assert_str_eq(o2->args[0]->name, "rows");
	cr_assert_eq(o2->args[0]->v.i, 7);
	tp_expect(path, SLICES_SQL,
		  "outer,0,1;later A,0,1;outer2,0,1;later B,0,1;");
	unload(&l, path);
}

Test(tracer_category, an_end_closes_its_begin_after_the_category_went_off)
{
	end_after_switch_off(PTW_MODE_STREAM);
}

Test(tracer_category, the_same_in_ring_mode)
{
	end_after_switch_off(PTW_MODE_RING);
}

/* "db" off from the start: the BEGIN is skipped without a trace; "db" is
 * switched on before its END, which must not close "outer". Then "db" on,
 * off, on again around skipped BEGINs of every form: their ENDs are
 * dropped, "A" ends last. */
static void end_of_skipped_begin(enum ptw_mode mode)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "endcat-on");
	start_mode(path, mode, "db");
	PTW_BEGIN("net", "outer");
	PTW_BEGIN("db", "skipped 1");
	ptw_set_category_enabled("db", 1);
	PTW_END("db");
	PTW_BEGIN("net", "inner");
	PTW_END("net");
	PTW_END("net");

	PTW_BEGIN("db", "A");
	ptw_set_category_enabled("db", 0);
	PTW_BEGIN("db", "skipped 2");
	PTW_BEGIN_DYN("db", "skipped 3");
	PTW_BEGIN_FMT("db", "skipped %d", 4);
	PTW_BEGIN_ARGS("db", "skipped 5", PTW_ARG_I64("i", 5));
	{
		PTW_SCOPE("db", "skipped scope");
		PTW_SCOPE_DYN_ARGS("db", "skipped scope 2", PTW_ARG_I64("i", 6));
		PTW_INSTANT("db", "skipped instant");
	}
	ptw_set_category_enabled("db", 1);
	PTW_END("db");
	PTW_END_ARGS("db", PTW_ARG_I64("not", 1));
	PTW_END("db");
	PTW_END("db");
	PTW_BEGIN("net", "C");
	PTW_END("net");
	PTW_END("db");
	stop_clean();

	struct loaded l = load(path);
	cr_assert_eq(l.m->n_slices, 4, "%zu slices", l.m->n_slices);
	const struct ptw_tp_slice *outer = slice(&l, "outer", 0);
	const struct ptw_tp_slice *inner = slice(&l, "inner", 0);
	const struct ptw_tp_slice *a = slice(&l, "A", 0);
	const struct ptw_tp_slice *c = slice(&l, "C", 0);
	cr_assert_eq(outer->depth, 0);
	cr_assert_eq(inner->depth, 1);
	cr_assert_str_eq(parent_name(&l, inner), "outer");
	cr_assert_eq(a->depth, 0);
	cr_assert_eq(c->depth, 1);
	cr_assert_str_eq(parent_name(&l, c), "A");
	cr_assert_eq(a->n_args, 0, "no END's arguments merged into A");
	tp_expect(path, SLICES_SQL, "outer,0,1;inner,1,1;A,0,1;C,1,1;");
	unload(&l, path);
}

Test(tracer_category, an_end_whose_begin_was_skipped_closes_nothing)
{
	end_of_skipped_begin(PTW_MODE_STREAM);
}

Test(tracer_category, an_end_whose_begin_was_skipped_closes_nothing_ring)
{
	end_of_skipped_begin(PTW_MODE_RING);
}

/* Async slices: the END of a recorded BEGIN is written after its category
 * went off; the END of a skipped BEGIN pairs with nothing (also not with a
 * later BEGIN of the same id) and is no error. */
Test(tracer_category, async_ends_follow_the_begin_that_was_recorded)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "endcat-async");
	start_mode(path, PTW_MODE_STREAM, NULL);
	PTW_ASYNC_BEGIN("db", "recorded", 1);
	ptw_set_category_enabled("db", 0);
	PTW_ASYNC_END("db", 1);
	PTW_ASYNC_BEGIN("db", "skipped", 2);
	ptw_set_category_enabled("db", 1);
	PTW_ASYNC_END("db", 2);
	PTW_ASYNC_BEGIN("db", "later", 2);
	PTW_ASYNC_END("db", 2);
	stop_clean();

	struct loaded l = load(path);
	cr_assert_eq(l.m->n_slices, 2, "%zu slices", l.m->n_slices);
	const struct ptw_tp_slice *r = slice(&l, "recorded", 0);
	const struct ptw_tp_slice *later = slice(&l, "later", 0);
	cr_assert_geq(r->dur, 0);
	cr_assert_geq(later->dur, 0);
	cr_assert_not_null(later->end);
	cr_assert_geq(later->end->ts, later->ts);
	tp_expect(path, SLICES_SQL, "recorded,0,1;later,0,1;");
	unload(&l, path);
}

/* Soft ENDs (their category was off at some time) drained out of order:
 * threads registered main, B, C, D (the backend drains their rings in
 * that order, after the burst) log, in real time, B: BEGIN 7; C: END 7;
 * main: BEGIN 7; D: END 7. C's END, earlier than main's BEGIN but later
 * than B's, must pair: two slices, none open, no error. */
static sem_t soft_go[4];

static void *soft_side(void *p)
{
	int who = (int)(intptr_t)p; /* 0: B, 1: C, 2: D */
	PTW_INSTANT("reg", "register");
	sem_wait(&soft_go[who]);
	if (who == 0)
		PTW_ASYNC_BEGIN("db", "soft", 7);
	else
		PTW_ASYNC_END("db", 7);
	sem_post(&soft_go[3]);
	return NULL;
}

Test(tracer_category, soft_async_ends_pair_with_the_earliest_open_begin)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "endcat-soft");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.disabled_categories = "db";
	cfg.drain_interval_us = 2000000; /* the burst is drained after */
	cr_assert_eq(ptw_start(&cfg), 0);
	/* "db" seen while off, then on: its ENDs are soft */
	PTW_INSTANT("db", "not logged");
	ptw_set_category_enabled("db", 1);
	PTW_INSTANT("reg", "register");
	pthread_t th[3];
	for (int i = 0; i < 4; i++)
		sem_init(&soft_go[i], 0, 0);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(pthread_create(&th[i], NULL, soft_side,
					    (void *)(intptr_t)i), 0);
		usleep(20000); /* registered in this order */
	}
	cr_assert_eq(ptw_flush(), 0);
	usleep(100000); /* the backend falls into a long idle sleep */
	sem_post(&soft_go[0]);
	sem_wait(&soft_go[3]);
	sem_post(&soft_go[1]);
	sem_wait(&soft_go[3]);
	PTW_ASYNC_BEGIN("db", "soft", 7);
	sem_post(&soft_go[2]);
	sem_wait(&soft_go[3]);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		sem_destroy(&soft_go[i]);
	stop_clean();

	struct loaded l = load(path);
	const struct ptw_tp_slice *a = slice(&l, "soft", 0);
	const struct ptw_tp_slice *b = slice(&l, "soft", 1);
	cr_assert_geq(a->dur, 0);
	cr_assert_geq(b->dur, 0);
	cr_assert_leq(a->ts + a->dur, b->ts);
	tp_expect(path, "select name, depth, dur >= 0 from slice where "
			"name = 'soft' order by ts",
		  "soft,0,1;soft,0,1;");
	unload(&l, path);
}

/* ---- another thread switches -------------------------------------------- */

#define FLIP_PRODUCERS 2
static atomic_int flip_running;

struct flip_arg {
	int idx;
	size_t iters;
};

/* "net" is never switched, "db" all the time by another thread. */
static void *flip_producer(void *p)
{
	const struct flip_arg *a = p;
	for (size_t i = 0; i < a->iters; i++) {
		uint64_t id = ((uint64_t)a->idx << 32) | i;
		PTW_BEGIN("net", "outer");
		PTW_BEGIN("db", "x");
		PTW_BEGIN("net", "mid");
		PTW_END("net");
		PTW_END("db");
		PTW_BEGIN_ARGS("db", "y", PTW_ARG_U64("i", i));
		PTW_END_ARGS("db", PTW_ARG_I64("r", 1));
		{
			PTW_SCOPE("db", "z");
		}
		PTW_ASYNC_BEGIN("db", "op", id);
		PTW_ASYNC_END("db", id);
		PTW_END("net");
	}
	return NULL;
}

static void *flipper(void *p)
{
	(void)p;
	int on = 0;
	while (atomic_load(&flip_running)) {
		ptw_set_category_enabled("db", on);
		on = !on;
		sched_yield();
	}
	ptw_set_category_enabled("db", 1);
	return NULL;
}

static void flip_run(enum ptw_mode mode, const char *disabled)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "endcat-flip");
	start_mode(path, mode, disabled);
	size_t iters = ptw_test_scale(20000, 2000);
	struct flip_arg args[FLIP_PRODUCERS];
	pthread_t th[FLIP_PRODUCERS], fl;
	atomic_store(&flip_running, 1);
	cr_assert_eq(pthread_create(&fl, NULL, flipper, NULL), 0);
	for (int i = 0; i < FLIP_PRODUCERS; i++) {
		args[i].idx = i;
		args[i].iters = iters;
		cr_assert_eq(pthread_create(&th[i], NULL, flip_producer,
					    &args[i]), 0);
	}
	for (int i = 0; i < FLIP_PRODUCERS; i++)
		pthread_join(th[i], NULL);
	atomic_store(&flip_running, 0);
	pthread_join(fl, NULL);
	stop_clean();

	/* Ring mode keeps a 64 MiB window: all of it here. */
	struct loaded l = load(path);
	size_t outer = 0, db = 0;
	for (size_t i = 0; i < l.m->n_slices; i++) {
		const struct ptw_tp_slice *s = &l.m->slices[i];
		cr_assert_not_null(s->name);
		cr_assert_geq(s->dur, 0, "%s left open", s->name);
		const char *par = parent_name(&l, s);
		if (strcmp(s->name, "outer") == 0) {
			outer++;
			cr_assert_eq(s->depth, 0);
		} else if (strcmp(s->name, "mid") == 0) {
			cr_assert(par && (!strcmp(par, "x") ||
					  !strcmp(par, "outer")),
				  "mid under %s", par ? par : "nothing");
		} else if (strcmp(s->name, "op") == 0) {
			db++;
		} else {
			/* x, y, z: under "outer", never closing it */
			db++;
			cr_assert_eq(s->depth, 1, "%s at depth %u", s->name,
				     s->depth);
			cr_assert_str_eq(par, "outer");
			cr_assert_leq(s->ts + s->dur,
				      l.m->slices[s->parent_id].ts +
					      l.m->slices[s->parent_id].dur);
		}
	}
	cr_assert_eq(outer, FLIP_PRODUCERS * iters);
	tp_expect(path, "select count(*) from slice where dur < 0", "0;");
	cr_log_info("%zu of %zu db slices recorded", db,
		    FLIP_PRODUCERS * iters * 4);
	unload(&l, path);
}

Test(tracer_category, another_thread_switching_leaves_no_slice_open,
     .timeout = 120)
{
	flip_run(PTW_MODE_STREAM, NULL);
}

Test(tracer_category, another_thread_switching_off_from_the_start_ring,
     .timeout = 120)
{
	flip_run(PTW_MODE_RING, "db");
}

/* ---- patterns and groups ------------------------------------------------- */

/* Logs one instant per category, named after it. */
static void instants(int step)
{
	char n[64];
#define ONE(cat)                                                              \
	do {                                                                  \
		snprintf(n, sizeof(n), "%d %s", step, cat);                   \
		PTW_INSTANT_DYN(cat, n);                                      \
	} while (0)
	ONE("debug.a");
	ONE("debug.b.c");
	ONE("debug");
	ONE("debugx");
	ONE("net.verbose");
	ONE("net");
	ONE("net,debug.a");
	ONE("debug.a,debug.b.c");
	ONE("p");
	ONE("q");
	if (step >= 4)
		ONE("debug.xnew");
#undef ONE
}

/* Bit i: "<step> <cats[i]>" is in the trace. */
static unsigned seen_mask(const struct loaded *l, int step)
{
	static const char *const cats[] = {
		"debug.a", "debug.b.c", "debug", "debugx", "net.verbose",
		"net", "net,debug.a", "debug.a,debug.b.c", "p", "q",
		"debug.xnew"};
	unsigned m = 0;
	for (unsigned i = 0; i < sizeof(cats) / sizeof(cats[0]); i++) {
		char n[64];
		snprintf(n, sizeof(n), "%d %s", step, cats[i]);
		if (ptw_test_find_slice(l->m, n, 0))
			m |= 1u << i;
	}
	return m;
}

Test(tracer_category, patterns_groups_and_the_latest_call_wins)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "endcat-pat");
	start_mode(path, PTW_MODE_STREAM, "debug.*, *.verbose");
	instants(0);
	ptw_set_category_enabled("debug.a", 1); /* later than "debug.*" */
	instants(1);
	ptw_set_category_enabled("debug.*", 0); /* later again */
	ptw_set_category_enabled("p,q", 0);     /* a list: both */
	instants(2);
	ptw_set_category_enabled("*", 1);
	instants(3);
	ptw_set_category_enabled("debug.x*", 0); /* before first use */
	instants(4);
	stop_clean();

	struct loaded l = load(path);
	/* bits: debug.a debug.b.c debug debugx net.verbose net
	 *       net,debug.a debug.a,debug.b.c p q debug.xnew */
	cr_assert_eq(seen_mask(&l, 0), 0x36Cu, "step 0: %#x", seen_mask(&l, 0));
	cr_assert_eq(seen_mask(&l, 1), 0x3EDu, "step 1: %#x", seen_mask(&l, 1));
	cr_assert_eq(seen_mask(&l, 2), 0x06Cu, "step 2: %#x", seen_mask(&l, 2));
	cr_assert_eq(seen_mask(&l, 3), 0x3FFu, "step 3: %#x", seen_mask(&l, 3));
	cr_assert_eq(seen_mask(&l, 4), 0x3FFu, "step 4: %#x", seen_mask(&l, 4));
	unload(&l, path);
}
