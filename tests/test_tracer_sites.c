/* test_tracer_sites.c - call sites follow category changes made by other
 * threads, also sites that run for the first time while a category is
 * being switched: a site never logs for a category that was off before
 * the macro began, and sites of a category that stays on log every event.
 * (Run under TSan too: the site list, the site words and the generation
 * are shared between the switching thread and the producers.)
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "reader/trace_read.h"

#define PRODUCERS 3u
#define SITES 64u

/* Odd: "flip" is off and ptw_set_category_enabled has returned; even:
 * it is on (or being switched). A producer reads it before and after its
 * macros: the same odd value both times means they ran while "flip" was
 * off, from start to end, and must not have logged. */
static _Atomic uint64_t epoch;
static _Atomic int producers_done;
static unsigned char *clean_off; /* per event number v: 1 = must not log */
static uint64_t *epoch_of;        /* per event number v: epoch before */

/* SITES distinct call sites of each kind, so that every producer reaches
 * sites for the first time while the category is being switched. */
#define S1(i)                                                          \
	case (i):                                                      \
		PTW_COUNTER_INT("flip", "v", v);                       \
		PTW_INSTANT_ARGS("flip", "flip", PTW_ARG_I64("v", v)); \
		PTW_INSTANT("steady", "steady");                       \
		break;
#define S4(i) S1(i) S1((i) + 1) S1((i) + 2) S1((i) + 3)
#define S16(i) S4(i) S4((i) + 4) S4((i) + 8) S4((i) + 12)
#define S64(i) S16(i) S16((i) + 16) S16((i) + 32) S16((i) + 48)

static void log_at(unsigned k, int64_t v)
{
	switch (k % SITES) { S64(0) }
}

static uint64_t rounds;

static void *producer(void *arg)
{
	uint64_t p = (uint64_t)(uintptr_t)arg;
	unsigned k = (unsigned)p * 7u;
	for (uint64_t i = 0; i < rounds; i++, k++) {
		uint64_t v = p * rounds + i;
		uint64_t e = atomic_load(&epoch);
		log_at(k, (int64_t)v);
		clean_off[v] = (e & 1) && atomic_load(&epoch) == e;
		epoch_of[v] = e;
	}
	atomic_fetch_add(&producers_done, 1);
	return NULL;
}

static void *switcher(void *arg)
{
	(void)arg;
	while (atomic_load(&producers_done) < (int)PRODUCERS) {
		ptw_set_category_enabled("flip", 0);
		atomic_fetch_add(&epoch, 1); /* odd: off for sure */
		usleep(50);
		atomic_fetch_add(&epoch, 1); /* even: about to be on */
		ptw_set_category_enabled("flip", 1);
		usleep(50);
	}
	return NULL;
}

Test(tracer_sites, sites_first_run_while_another_thread_switches_the_category)
{
	char path[128];
	rounds = ptw_test_scale(200000, 20000);
	clean_off = calloc(PRODUCERS * rounds, 1);
	epoch_of = calloc(PRODUCERS * rounds, sizeof(*epoch_of));
	cr_assert_not_null(clean_off);
	cr_assert_not_null(epoch_of);
	atomic_store(&epoch, 0);
	atomic_store(&producers_done, 0);
	ptw_test_start_file(path, sizeof(path), "sites");

	pthread_t sw, th[PRODUCERS];
	cr_assert_eq(pthread_create(&sw, NULL, switcher, NULL), 0);
	for (unsigned i = 0; i < PRODUCERS; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, producer,
					    (void *)(uintptr_t)i), 0);
	for (unsigned i = 0; i < PRODUCERS; i++)
		pthread_join(th[i], NULL);
	pthread_join(sw, NULL);
	ptw_set_category_enabled("flip", 1);
	struct ptw_stats st;
	cr_assert_eq(ptw_stop(), 0);
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.dropped, 0);

	struct ptw_trace *t = ptw_test_load_or_fail(path);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	uint64_t steady = 0, flips = 0, counters = 0, bad = 0, off = 0;
	uint64_t on_epochs = 0, last_on = UINT64_MAX; /* distinct, >= 2 */
	for (uint64_t v = 0; v < PRODUCERS * rounds; v++)
		off += clean_off[v];
	for (size_t i = 0; i < n; i++) {
		const struct ptw_trace_event *e = &ev[i];
		int64_t v = -1;
		if (e->type == PTW_TRACE_COUNTER) {
			counters++;
			v = e->counter_int;
		} else if (e->name && !strcmp(e->name, "steady")) {
			steady++;
		} else if (e->name && !strcmp(e->name, "flip")) {
			flips++;
			const struct ptw_trace_arg *a =
				ptw_test_find_arg(e, "v");
			cr_assert_not_null(a);
			v = a->v.i;
		}
		if (v >= 0) {
			cr_assert_lt((uint64_t)v, PRODUCERS * rounds);
			bad += clean_off[v];
			uint64_t ep = epoch_of[v];
			if (!(ep & 1) && ep != last_on && ep >= 2) {
				on_epochs++; /* roughly: epochs seen on again */
				last_on = ep;
			}
		}
	}
	/* Never an event of macros that ran while "flip" was off... */
	cr_assert_gt(off, 0, "no macro ran in an off period");
	cr_assert_eq(bad, 0, "%llu events logged while off",
		     (unsigned long long)bad);
	/* ...every event of the category that stayed on... */
	cr_assert_eq(steady, PRODUCERS * rounds, "steady %llu",
		     (unsigned long long)steady);
	/* ...and the switching really reached the sites both ways: logged
	 * after being switched back on, not only before the first switch. */
	cr_assert_gt(on_epochs, 2, "on again in %llu epochs",
		     (unsigned long long)on_epochs);
	cr_assert_gt(flips, 0);
	cr_assert_lt(flips, PRODUCERS * rounds);
	cr_assert_gt(counters, 0);
	ptw_trace_free(t);
	free(clean_off);
	free(epoch_of);
	unlink(path);
}

/* ---- ptw_is_running() and the sites ------------------------------------ */

/* Many sites known before the one a waiting thread uses: a start makes
 * every known site live, one after the other. */
#define M1(i)                                                          \
	case (i):                                                      \
		PTW_INSTANT("many", "many");                           \
		break;
#define M4(i) M1(i) M1((i) + 1) M1((i) + 2) M1((i) + 3)
#define M16(i) M4(i) M4((i) + 4) M4((i) + 8) M4((i) + 12)
#define M64(i) M16(i) M16((i) + 16) M16((i) + 32) M16((i) + 48)
#define M256(i) M64(i) M64((i) + 64) M64((i) + 128) M64((i) + 192)
#define MANY 1024u

static void log_many(unsigned k)
{
	switch (k % MANY) {
		M256(0) M256(256) M256(512) M256(768)
	}
}

static void log_seen(void) { PTW_INSTANT("seen", "after is_running"); }

static _Atomic int waiter_ready;

/* Waits for tracing to run, then logs once. */
static void *waiter(void *arg)
{
	(void)arg;
	atomic_store(&waiter_ready, 1);
	while (!ptw_is_running())
		;
	log_seen();
	return NULL;
}

/* A thread that sees ptw_is_running() return 1 logs: the start makes the
 * sites live before it says tracing runs (in system mode a session starts
 * on ptw's own thread while the program's threads log). Its site is the
 * last of many known ones, off since the previous session stopped. */
Test(tracer_sites, a_thread_that_sees_tracing_running_logs)
{
	char path[128];
	ptw_test_tmp_path(path, sizeof(path), "running");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cr_assert_eq(ptw_start(&cfg), 0);
	for (unsigned k = 0; k < MANY; k++)
		log_many(k);
	log_seen();
	cr_assert_eq(ptw_stop(), 0);
	unsigned rounds_n = 20, missed = 0;
	for (unsigned r = 0; r < rounds_n; r++) {
		atomic_store(&waiter_ready, 0);
		pthread_t th;
		cr_assert_eq(pthread_create(&th, NULL, waiter, NULL), 0);
		while (!atomic_load(&waiter_ready))
			;
		cr_assert_eq(ptw_start(&cfg), 0);
		pthread_join(th, NULL);
		cr_assert_eq(ptw_stop(), 0);
		struct ptw_trace *t = ptw_test_load_or_fail(path);
		size_t n, seen = 0;
		const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
		for (size_t i = 0; i < n; i++)
			seen += ev[i].name &&
				!strcmp(ev[i].name, "after is_running");
		ptw_trace_free(t);
		cr_assert_leq(seen, 1);
		missed += seen == 0;
	}
	cr_assert_eq(missed, 0, "%u of %u sessions missed the event",
		     missed, rounds_n);
	unlink(path);
}
