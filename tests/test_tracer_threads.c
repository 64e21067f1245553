/* test_tracer_threads.c - many threads: rings are reused when threads
 * exit (ring_mem.h keeps them for the next ones) and faulted in by the
 * backend while their thread logs; neither may ever let one thread's
 * events show under another thread's track, lose one (OVERFLOW_WAIT) or
 * lose one uncounted (OVERFLOW_DROP). Each event carries its thread's
 * number and its own; each thread names its track after its number.
 * (Also run under TSan.)
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "reader/trace_read.h"

#define ALIVE 24u /* threads alive at once */

static unsigned n_events; /* per thread */

static void *worker(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	char name[32];
	snprintf(name, sizeof(name), "w%u", t);
	ptw_set_thread_name(name);
	for (unsigned i = 0; i < n_events; i++)
		PTW_INSTANT_ARGS("th", "ev", PTW_ARG_U64("t", t),
				 PTW_ARG_U64("i", i));
	return NULL; /* exits at once, its ring maybe still full */
}

/* n threads, ALIVE at a time. */
static void run_threads(unsigned n)
{
	pthread_t th[ALIVE];
	for (unsigned i = 0; i < n; i++) {
		pthread_t *slot = &th[i % ALIVE];
		if (i >= ALIVE)
			cr_assert_eq(pthread_join(*slot, NULL), 0);
		int rc = pthread_create(slot, NULL, worker,
					(void *)(uintptr_t)i);
		cr_assert_eq(rc, 0);
	}
	for (unsigned i = n > ALIVE ? n - ALIVE : 0; i < n; i++) {
		pthread_t *slot = &th[i % ALIVE];
		cr_assert_eq(pthread_join(*slot, NULL), 0);
	}
}

/* Every event is on the track of the thread that logged it, each
 * thread's numbers rise; returns the events found (per thread in seen). */
static uint64_t check_trace(const char *path, unsigned n, uint64_t *seen,
			    int exact)
{
	struct ptw_trace *tr = ptw_test_load_or_fail(path);
	size_t ne;
	const struct ptw_trace_event *ev = ptw_trace_events(tr, &ne);
	int64_t *last = malloc(n * sizeof(*last));
	cr_assert_not_null(last);
	for (unsigned t = 0; t < n; t++)
		last[t] = -1;
	uint64_t total = 0;
	for (size_t k = 0; k < ne; k++) {
		const struct ptw_trace_event *e = &ev[k];
		if (!e->name || strcmp(e->name, "ev"))
			continue;
		const struct ptw_trace_arg *at = ptw_test_find_arg(e, "t");
		const struct ptw_trace_arg *ai = ptw_test_find_arg(e, "i");
		cr_assert(at && ai);
		cr_assert_lt(at->v.u, n);
		unsigned t = (unsigned)at->v.u;
		const struct ptw_trace_track *trk =
			ptw_trace_find_track(tr, e->track_uuid);
		cr_assert_not_null(trk);
		char want[32];
		snprintf(want, sizeof(want), "w%u", t);
		cr_assert_str_eq(trk->name ? trk->name : "", want,
				 "thread %u's event %llu on track '%s'", t,
				 (unsigned long long)ai->v.u,
				 trk->name ? trk->name : "");
		if (exact)
			cr_assert_eq((int64_t)ai->v.u, last[t] + 1,
				     "thread %u: event %llu after %lld", t,
				     (unsigned long long)ai->v.u,
				     (long long)last[t]);
		else
			cr_assert_gt((int64_t)ai->v.u, last[t]);
		last[t] = (int64_t)ai->v.u;
		seen[t]++;
		total++;
	}
	free(last);
	ptw_trace_free(tr);
	return total;
}

static void threads_case(enum ptw_overflow ov, uint32_t slots, unsigned n,
			 unsigned per_thread, const char *tag)
{
	char path[128];
	ptw_test_tmp_path(path, sizeof(path), tag);
	n_events = per_thread;
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.overflow = ov;
	cfg.ring_slots = slots;
	struct ptw_error err;
	/* two sessions: the second one's threads find the first one's rings
	 * (and their old records) in the pool */
	for (int s = 0; s < 2; s++) {
		cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
		run_threads(n);
		struct ptw_stats st;
		cr_assert_eq(ptw_stop(), 0);
		cr_assert_eq(ptw_get_stats(&st), 0);
		uint64_t *seen = calloc(n, sizeof(*seen));
		cr_assert_not_null(seen);
		uint64_t got = check_trace(path, n, seen,
					   ov == PTW_OVERFLOW_WAIT);
		uint64_t logged = (uint64_t)n * per_thread;
		if (ov == PTW_OVERFLOW_WAIT) {
			cr_assert_eq(got, logged);
			cr_assert_eq(st.dropped, 0);
		} else {
			cr_assert_eq(got + st.dropped, logged,
				     "%llu written + %llu dropped != %llu",
				     (unsigned long long)got,
				     (unsigned long long)st.dropped,
				     (unsigned long long)logged);
		}
		for (unsigned t = 0; t < n; t++)
			cr_assert_gt(seen[t], 0, "thread %u: no event", t);
		free(seen);
	}
	unlink(path);
}

Test(tracer_threads, exiting_threads_with_full_rings_wait_policy)
{
	threads_case(PTW_OVERFLOW_WAIT, 64, ptw_test_scale(300, 60),
		     ptw_test_scale(400, 200), "thr_wait");
}

Test(tracer_threads, exiting_threads_with_full_rings_drop_policy)
{
	threads_case(PTW_OVERFLOW_DROP, 64, ptw_test_scale(300, 60),
		     ptw_test_scale(400, 200), "thr_drop");
}

Test(tracer_threads, default_rings_reused_and_faulted_in_while_drained)
{
	/* past a sixteenth of the ring: the backend faults the rest in while
	 * the thread goes on writing into it */
	threads_case(PTW_OVERFLOW_WAIT, 0, ptw_test_scale(32, 8),
		     ptw_test_scale(5000, 3000), "thr_grow");
}
