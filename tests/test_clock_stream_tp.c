/* test_clock_stream_tp.c - clock-stream traces through the in-house
 * trace_processor model (reader/): the checker accepts them and the
 * slices, flows and counters land where the exact conversion says, also
 * with compression and frequent checkpoints.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ptw/clock_stream.h"
#include "ptw/writer.h"
#include "support/ptw_test.h"

#define JOBS_NORMAL 3000u
#define JOBS_SMALL 300u

struct sim {
	struct ptw_writer *w;
	struct ptw_clock_streams *cs;
	uint32_t cpu, bus, acc;
	uint64_t queue, core;
};

static void ok(struct sim *s, int rc)
{
	cr_assert_eq(rc, 0, "%s", ptw_writer_error(s->w)->msg);
}

/* Job j: CPU "issue" [200j, 200j+50) ns with a nested "decode"
 * [200j+10, 200j+20) on the "core" track, bus "xfer" [200j+60, 200j+140),
 * accelerator "kernel" [200j+150, 200j+190) starting at 1.5 GHz cycle
 * 300j+225; flows issue -> xfer -> kernel; queue counter 1/0 around xfer.
 * The accelerator's cycle 300j+226 lands at 200j+150.67 ns: its "tick"
 * instant is floored to 200j+150 and sorts after the kernel begin. */
static void sim_quantum(struct sim *s, uint64_t j0, uint64_t j1, int order)
{
	for (int k = 0; k < 3; k++) {
		int dom = order ? 2 - k : k;
		for (uint64_t j = j0; j < j1; j++) {
			uint64_t f1 = 2 * j + 1, f2 = 2 * j + 2;
			if (dom == 0) {
				struct ptw_clock_streams_event e = {
					.cycle = 240 * j, .name = "issue",
					.category = "cpu", .flow_ids = &f1,
					.n_flow_ids = 1 };
				ok(s, ptw_clock_streams_slice_begin(s->cs, s->cpu, &e));
				struct ptw_clock_streams_event d = {
					.track = s->core, .cycle = 240 * j + 12,
					.name = "decode" };
				ok(s, ptw_clock_streams_slice_begin(s->cs, s->cpu, &d));
				d.cycle = 240 * j + 24;
				ok(s, ptw_clock_streams_slice_end(s->cs, s->cpu, &d));
				e = (struct ptw_clock_streams_event){ .cycle = 240 * j + 60 };
				ok(s, ptw_clock_streams_slice_end(s->cs, s->cpu, &e));
			} else if (dom == 1) {
				uint64_t c = 160 * j + 48;
				struct ptw_clock_streams_event e = {
					.cycle = c, .name = "xfer", .category = "bus",
					.flow_ids = &f2, .n_flow_ids = 1,
					.terminating_flow_ids = &f1,
					.n_terminating_flow_ids = 1 };
				ok(s, ptw_clock_streams_slice_begin(s->cs, s->bus, &e));
				ok(s, ptw_clock_streams_counter_int(s->cs, s->bus, s->queue, c, 1));
				e = (struct ptw_clock_streams_event){ .cycle = c + 64 };
				ok(s, ptw_clock_streams_slice_end(s->cs, s->bus, &e));
				ok(s, ptw_clock_streams_counter_int(s->cs, s->bus, s->queue,
								   c + 64, 0));
			} else {
				uint64_t c = 300 * j + 225;
				struct ptw_clock_streams_event e = {
					.cycle = c, .name = "kernel", .category = "acc",
					.terminating_flow_ids = &f2,
					.n_terminating_flow_ids = 1 };
				struct ptw_clock_streams_event tick = { .cycle = c + 1,
								.name = "tick" };
				/* Submitted before the kernel: exact time orders. */
				ok(s, ptw_clock_streams_instant(s->cs, s->acc, &tick));
				ok(s, ptw_clock_streams_slice_begin(s->cs, s->acc, &e));
				e = (struct ptw_clock_streams_event){ .cycle = c + 60 };
				ok(s, ptw_clock_streams_slice_end(s->cs, s->acc, &e));
			}
		}
	}
}

static void run_sim(const char *path, const struct ptw_writer_options *wo,
		    uint64_t jobs, int order)
{
	struct ptw_error err;
	struct sim s;
	s.w = ptw_writer_open(path, wo, &err);
	cr_assert_not_null(s.w, "%s", err.msg);
	s.cs = ptw_clock_streams_attach(s.w, NULL, &err);
	cr_assert_not_null(s.cs, "%s", err.msg);
	struct ptw_clock_streams_domain cpu = { .name = "cpu", .hz = 1200000000u };
	struct ptw_clock_streams_domain bus = { .name = "bus", .hz = 800000000u };
	struct ptw_clock_streams_domain acc = { .name = "acc", .hz = 1500000000u };
	ok(&s, ptw_clock_streams_add(s.cs, &cpu, &s.cpu));
	ok(&s, ptw_clock_streams_add(s.cs, &bus, &s.bus));
	ok(&s, ptw_clock_streams_add(s.cs, &acc, &s.acc));
	s.queue = ptw_clock_streams_add_counter_track(s.cs, "queue", NULL, 0, -1);
	s.core = ptw_clock_streams_add_track(s.cs, "core", 0, -1);
	cr_assert(s.queue && s.core);
	for (uint64_t j = 0; j < jobs; j += 5) {
		uint64_t j1 = j + 5 < jobs ? j + 5 : jobs;
		sim_quantum(&s, j, j1, order);
		ok(&s, ptw_clock_streams_advance_watermark(s.cs, j1 * 200));
	}
	cr_assert_eq(ptw_writer_close(s.w, &err), 0, "%s", err.msg);
}

static void check_model(const char *path, uint64_t jobs)
{
	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	cr_assert_eq(m->n_slices, jobs * 5);
	cr_assert_eq(m->n_counters, jobs * 2);
	cr_assert_eq(m->n_flows, jobs * 2);
	cr_assert_eq(m->n_unmatched_ends, 0);
	size_t seen[5] = { 0 };
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *sl = &m->slices[i];
		cr_assert_not_null(sl->name);
		int64_t base = sl->ts - sl->ts % 200;
		int64_t off = sl->ts - base;
		if (strcmp(sl->name, "issue") == 0) {
			cr_assert_eq(off, 0);
			cr_assert_eq(sl->dur, 50);
			seen[0]++;
		} else if (strcmp(sl->name, "decode") == 0) {
			cr_assert_eq(off, 10);
			cr_assert_eq(sl->dur, 10);
			cr_assert_eq(sl->depth, 0, "own track: not nested");
			seen[1]++;
		} else if (strcmp(sl->name, "xfer") == 0) {
			cr_assert_eq(off, 60);
			cr_assert_eq(sl->dur, 80);
			seen[2]++;
		} else if (strcmp(sl->name, "kernel") == 0) {
			cr_assert_eq(off, 150);
			cr_assert_eq(sl->dur, 40);
			seen[3]++;
		} else {
			cr_assert_str_eq(sl->name, "tick");
			cr_assert_eq(off, 150, "150.67 ns floors to 150");
			cr_assert_eq(sl->depth, 1, "tick lies inside the kernel");
			seen[4]++;
		}
	}
	for (int k = 0; k < 5; k++)
		cr_assert_eq(seen[k], jobs);
	for (size_t i = 0; i < m->n_flows; i++) {
		const struct ptw_tp_flow *f = &m->flows[i];
		const char *from = m->slices[f->slice_out].name;
		const char *to = m->slices[f->slice_in].name;
		if (f->flow_id % 2)
			cr_assert(!strcmp(from, "issue") && !strcmp(to, "xfer"));
		else
			cr_assert(!strcmp(from, "xfer") && !strcmp(to, "kernel"));
		cr_assert_eq(m->slices[f->slice_in].ts - m->slices[f->slice_out].ts,
			     f->flow_id % 2 ? 60 : 90);
	}
	for (size_t i = 0; i < m->n_counters; i++) {
		int64_t off = m->counters[i].ts % 200;
		cr_assert(off == 60 || off == 140);
		cr_assert(m->counters[i].value == (off == 60 ? 1.0 : 0.0));
	}
	ptw_tp_model_free(m);
	ptw_trace_free(t);
}

static uint64_t jobs(void)
{
	return ptw_test_scale(JOBS_NORMAL, JOBS_SMALL);
}

Test(clock_stream_tp, checker_accepts_and_model_has_exact_times)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "clock-tp");
	run_sim(path, NULL, jobs(), 0);
	check_model(path, jobs());
	unlink(path);
}

Test(clock_stream_tp, compressed_with_frequent_checkpoints)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "clock-tp-z");
	struct ptw_writer_options wo = { .compress = 1, .checkpoint_packets = 100,
					 .flush_bytes = 8192 };
	run_sim(path, &wo, jobs(), 1);
	check_model(path, jobs());
	unlink(path);
}

/* The UI orders tracks by sibling_order_rank only among the children of a
 * parent with child_ordering = EXPLICIT (root tracks go by name): the
 * streams' tracks are children of one root track, ranked by stream index,
 * so "cpu", "bus", "acc" show in the order they were added, not by name. */
Test(clock_stream_tp, stream_tracks_are_ranked_children_of_an_explicit_parent)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "clock-tp-order");
	run_sim(path, NULL, 5, 0);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	size_t n;
	const struct ptw_trace_track *tr = ptw_trace_tracks(t, &n);
	static const char *const names[3] = {"cpu", "bus", "acc"};
	uint64_t parent = 0;
	for (int k = 0; k < 3; k++) {
		const struct ptw_trace_track *found = NULL;
		for (size_t i = 0; i < n; i++)
			if (tr[i].name && strcmp(tr[i].name, names[k]) == 0)
				found = &tr[i];
		cr_assert_not_null(found, "track %s", names[k]);
		cr_assert(found->has_rank);
		cr_assert_eq(found->rank, k);
		cr_assert(found->has_parent && found->parent_uuid);
		if (k)
			cr_assert_eq(found->parent_uuid, parent, "one parent");
		parent = found->parent_uuid;
	}
	const struct ptw_trace_track *p = ptw_trace_find_track(t, parent);
	cr_assert_not_null(p);
	cr_assert_str_eq(p->name, PTW_CLOCK_STREAM_GROUP);
	cr_assert(!p->has_parent || p->parent_uuid == 0, "a root track");
	cr_assert_eq(p->child_ordering, 3, "ChildTracksOrdering EXPLICIT");
	ptw_trace_free(t);
	unlink(path);
}
