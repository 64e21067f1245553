/* test_writer_lag.c - sequences whose events reach the writer out of step
 * (the tracer's backend drains one thread's ring, then the next: thread B's
 * events then lag behind thread A's checkpoints) keep delta timestamps:
 * a checkpoint takes each sequence's own time, so two sequences cost the
 * same bytes per event as one, and the events decode exactly.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "reader/trace_read.h"

#define BLOCK 20000u  /* events of one sequence written in a row */
#define ROUNDS 12u

/* Writes ROUNDS blocks per sequence: in each round, sequence k writes
 * BLOCK begin/end events covering the same time span as the others' (in
 * turn, as the backend drains rings). Returns bytes per event. */
static double run(const char *path, uint32_t n_seqs, uint32_t checkpoint_packets)
{
	struct ptw_error err;
	struct ptw_writer_options o;
	memset(&o, 0, sizeof(o));
	o.checkpoint_packets = checkpoint_packets;
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	struct ptw_seq *s[2];
	for (uint32_t k = 0; k < n_seqs; k++) {
		uint64_t t = ptw_writer_add_thread_track(w, 1, 10 + k, "t");
		cr_assert(t);
		s[k] = ptw_writer_add_seq(w, t);
		cr_assert_not_null(s[k]);
	}
	uint64_t events = 0;
	for (uint32_t r = 0; r < ROUNDS; r++) {
		for (uint32_t k = 0; k < n_seqs; k++) {
			uint64_t ts = 1000000 + (uint64_t)r * BLOCK * 7 + k;
			for (uint32_t i = 0; i < BLOCK; i += 2) {
				cr_assert_eq(ptw_seq_simple(s[k], PTW_SIMPLE_BEGIN, 0,
							    ts, "c", "n"), 0);
				cr_assert_eq(ptw_seq_simple(s[k], PTW_SIMPLE_END, 0,
							    ts + 5, NULL, NULL), 0);
				ts += 14;
				events += 2;
			}
		}
	}
	cr_assert_eq(ptw_writer_finish(w, &err), 0, "%s", err.msg);
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	/* every event decodes at its time, in order per sequence */
	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	uint64_t seen = 0;
	int64_t last[2] = {0, 0};
	uint32_t first_seq = 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].type != PTW_TRACE_SLICE_BEGIN &&
		    ev[i].type != PTW_TRACE_SLICE_END)
			continue;
		if (!first_seq)
			first_seq = ev[i].seq_id;
		uint32_t k = ev[i].seq_id == first_seq ? 0 : 1;
		cr_assert_geq(ev[i].ts, last[k]);
		last[k] = ev[i].ts;
		seen++;
	}
	cr_assert_eq(seen, events);
	cr_assert_eq(ptw_trace_get_stats(t)->absolute_timestamps, 0);
	ptw_trace_free(t);
	return (double)st.bytes_written / (double)events;
}

static void one_vs_two(uint32_t checkpoint_packets)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "lag1");
	double one = run(path, 1, checkpoint_packets);
	unlink(path);
	ptw_test_tmp_path(path, sizeof(path), "lag2");
	double two = run(path, 2, checkpoint_packets);
	unlink(path);
	cr_assert_lt(two - one, 0.5, "1 sequence %.2f, 2 sequences %.2f bytes/event",
		     one, two);
}

Test(writer_lag, two_sequences_out_of_step_cost_what_one_costs)
{
	one_vs_two(0);
}

/* A lag of many checkpoints (BLOCK events per turn, a checkpoint every
 * 500 packets): each checkpoint still reads its own sequence's time. */
Test(writer_lag, a_lag_of_many_checkpoints_costs_nothing_either)
{
	one_vs_two(500);
}
