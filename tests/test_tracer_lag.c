/* test_tracer_lag.c - a backend that drains far behind its producers
 * (held back through ptw_tr_test_hold, then draining one ring after the
 * other at stop) still writes each thread's events as deltas on the
 * thread's own timeline: no absolute timestamps, and every event decodes
 * at exactly the time its producer logged, with the TSC and the
 * monotonic clock. With $PTW_SHARED_DIR/tp/trace_processor_shell at hand,
 * trace_processor shows every slice and no error stat.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "reader/trace_read.h"
#include "lib/tracer/tracer_internal.h"

#define ROUNDS 8u
#define BLOCK 300u   /* BEGIN/END pairs of one thread in a row */
#define EVENTS (2u * ROUNDS * BLOCK) /* per thread, < ring_slots */

/* The two threads take turns: A's block, B's block, A's, ... so their
 * times interleave, while the backend (held) drains A's whole ring first,
 * then B's: B's events all lie before A's last checkpoint. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned turn;
} g_turn = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static void *producer(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	for (unsigned r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&g_turn.mu);
		while (g_turn.turn != 2 * r + me)
			pthread_cond_wait(&g_turn.cv, &g_turn.mu);
		pthread_mutex_unlock(&g_turn.mu);
		for (unsigned i = 0; i < BLOCK; i++) {
			if (me)
				PTW_BEGIN("lag", "B");
			else
				PTW_BEGIN("lag", "A");
			PTW_END("lag");
		}
		pthread_mutex_lock(&g_turn.mu);
		g_turn.turn++;
		pthread_cond_broadcast(&g_turn.cv);
		pthread_mutex_unlock(&g_turn.mu);
	}
	return NULL;
}

/* The times each thread logged (ns), read from its ring while the backend
 * is held: slot by slot, as the backend would convert them. */
struct logged {
	uint64_t ts[2][EVENTS];
	uint32_t n[2];
};

static void read_rings(struct logged *lg)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	struct ptw_tracer *tr = c->tr;
	cr_assert_not_null(tr);
	memset(lg, 0, sizeof(*lg));
	for (size_t i = 0; i < tr->n_threads; i++) {
		const struct ptw_ring *r = &tr->threads[i]->pub.ring;
		uint64_t h, n = ptw_ring_peek((struct ptw_ring *)r, &h);
		int k = -1;
		for (uint64_t j = h; j < h + n;) {
			const struct ptw_i_rec *rec = ptw_ring_slot(r, j);
			if (rec->kind == PTW_I_K_BEGIN && k < 0)
				k = strcmp(rec->name, "A") == 0 ? 0 : 1;
			if (rec->kind == PTW_I_K_BEGIN || rec->kind == PTW_I_K_END) {
				cr_assert_geq(k, 0);
				cr_assert_lt(lg->n[k], EVENTS);
				lg->ts[k][lg->n[k]++] =
					tr->use_tsc ? ptw_tr_tsc_to_ns(&tr->tsc, rec->ts)
						    : rec->ts;
			}
			j += 1 + (uint64_t)rec->extra;
		}
	}
	pthread_mutex_unlock(&c->mu);
	cr_assert_eq(lg->n[0], EVENTS);
	cr_assert_eq(lg->n[1], EVENTS);
}

/* trace_processor, if at hand: every slice, no error or data-loss stat. */
static void check_in_trace_processor(const char *path)
{
	const char *dir = getenv("PTW_SHARED_DIR");
	char tp[512], cmd[1280];
	snprintf(tp, sizeof(tp), "%s/tp/trace_processor_shell",
		 dir ? dir : "../shared");
	if (access(tp, X_OK) != 0) {
		fprintf(stderr, "no trace_processor_shell at %s: check skipped\n",
			tp);
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "%s -Q \"select (select count(*) from slice where name in "
		 "('A','B') and dur >= 0) || ':' || (select count(*) from stats "
		 "where value > 0 and severity in ('error','data_loss'))\" "
		 "%s 2>/dev/null",
		 tp, path);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	char line[256], last[256] = "";
	while (fgets(line, sizeof(line), p))
		snprintf(last, sizeof(last), "%s", line);
	cr_assert_eq(pclose(p), 0, "trace_processor failed on %s", path);
	char want[64];
	snprintf(want, sizeof(want), "\"%u:0\"\n", 2u * ROUNDS * BLOCK);
	cr_assert_str_eq(last, want, "slices:errors from trace_processor: %s", last);
}

static void lagging_backend(enum ptw_clock clock, const char *tag)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), tag);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.clock = clock;
	cfg.ring_slots = 16384; /* > EVENTS: the producers never wait */
	/* many checkpoints while lagging */
	struct ptw_writer_options wopt = {.checkpoint_packets = 64};
	cfg.writer = &wopt;
	g_turn.turn = 0;
	ptw_tr_test_hold = 1;
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	if (ptw_start_ex(&cfg, &err) != 0) {
		ptw_tr_test_hold = 0;
		if (clock == PTW_CLOCK_TSC)
			cr_skip_test("no usable TSC: %s", err.msg);
		cr_assert_fail("ptw_start: %s", err.msg);
	}
	pthread_t th[2];
	for (uintptr_t k = 0; k < 2; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, producer, (void *)k), 0);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	static struct logged lg;
	read_rings(&lg);
	cr_assert_eq(ptw_stop(), 0);
	ptw_tr_test_hold = 0;
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.waits, 0);
	cr_assert_eq(st.dropped, 0);

	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	cr_assert_eq(ptw_trace_get_stats(t)->absolute_timestamps, 0,
		     "%llu events written with absolute timestamps",
		     (unsigned long long)ptw_trace_get_stats(t)->absolute_timestamps);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	uint32_t seq_of[2] = {0, 0}, seen[2] = {0, 0};
	for (size_t i = 0; i < n; i++) {
		if (ev[i].type != PTW_TRACE_SLICE_BEGIN &&
		    ev[i].type != PTW_TRACE_SLICE_END)
			continue;
		int k = ev[i].seq_id == seq_of[0] ? 0 : ev[i].seq_id == seq_of[1] ? 1 : -1;
		if (k < 0) {
			cr_assert(ev[i].type == PTW_TRACE_SLICE_BEGIN && ev[i].name);
			k = strcmp(ev[i].name, "A") == 0 ? 0 : 1;
			cr_assert_eq(seq_of[k], 0);
			seq_of[k] = ev[i].seq_id;
		}
		cr_assert_lt(seen[k], EVENTS);
		cr_assert_eq((uint64_t)ev[i].ts, lg.ts[k][seen[k]],
			     "thread %c event %u: decoded %lld, logged %llu",
			     "AB"[k], seen[k], (long long)ev[i].ts,
			     (unsigned long long)lg.ts[k][seen[k]]);
		seen[k]++;
	}
	cr_assert_eq(seen[0], EVENTS);
	cr_assert_eq(seen[1], EVENTS);
	ptw_trace_free(t);
	check_in_trace_processor(path);
	unlink(path);
}

Test(tracer_lag, monotonic_clock_keeps_each_threads_own_time_base)
{
	lagging_backend(PTW_CLOCK_MONOTONIC, "lag_mono");
}

Test(tracer_lag, tsc_clock_keeps_each_threads_own_time_base)
{
	lagging_backend(PTW_CLOCK_TSC, "lag_tsc");
}
