/* test_clock_stream.c - clock streams end to end: write with the public
 * API, decode the file with protobuf-c, compare with what was submitted.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/clock_stream.h"
#include "ptw/writer.h"
#include "test_clock_stream_util.h"

struct fx {
	char *path;
	struct ptw_writer *w;
	struct ptw_clock_streams *cs;
};

static void fx_open(struct fx *f, const struct ptw_clock_streams_options *o)
{
	struct ptw_error err;
	f->path = ct_tmp_path();
	f->w = ptw_writer_open(f->path, NULL, &err);
	cr_assert_not_null(f->w, "%s", err.msg);
	f->cs = ptw_clock_stream_attach(f->w, o, &err);
	cr_assert_not_null(f->cs, "%s", err.msg);
}

static uint32_t fx_stream(struct fx *f, const char *name, uint64_t hz,
			  uint64_t hz_den, uint64_t offset, uint64_t offset_ns)
{
	struct ptw_clock_domain d = { .name = name, .hz = hz, .hz_den = hz_den,
				      .offset = offset, .offset_ns = offset_ns };
	uint32_t id = UINT32_MAX;
	cr_assert_eq(ptw_clock_stream_add(f->cs, &d, &id), 0, "%s",
		     ptw_writer_error(f->w)->msg);
	return id;
}

/* Closes the writer and decodes the file into *t. */
static void fx_close(struct fx *f, struct ct_trace *t)
{
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(f->w, &err), 0, "%s", err.msg);
	f->w = NULL;
	f->cs = NULL;
	ct_decode_file(t, f->path);
	unlink(f->path);
	free(f->path);
	f->path = NULL;
}

static void instant(struct fx *f, uint32_t st, uint64_t track, uint64_t c,
		    const char *name)
{
	struct ptw_clock_event ev = { .track = track, .cycle = c, .name = name };
	cr_assert_eq(ptw_clock_stream_instant(f->cs, st, &ev), 0, "%s",
		     ptw_writer_error(f->w)->msg);
}

Test(clock_stream, timestamps_decode_to_the_exact_nanosecond)
{
	struct fx f;
	fx_open(&f, NULL);
	uint32_t cpu = fx_stream(&f, "cpu", 1200000000ull, 0, 0, 0);
	uint32_t bus = fx_stream(&f, "bus", 800000000ull, 0, 0, 0);
	uint32_t acc = fx_stream(&f, "acc", 1500000000ull, 0, 0, 0);
	uint32_t slow = fx_stream(&f, "slow", 3, 0, 0, 0);
	uint32_t third = fx_stream(&f, "third", 1000000000ull, 3, 0, 0);
	uint32_t off = fx_stream(&f, "off", 2500000000ull, 0, 0, 5000);
	uint32_t big = fx_stream(&f, "big", 2500000000ull, 0, 0, 0);

	struct {
		uint32_t st;
		uint64_t cycle, ns;
	} want[] = {
		{ cpu, 1200, 1000 },
		{ bus, 800, 1000 },
		{ acc, 1501, 1000 },  /* 1000.67 ns */
		{ acc, 1499, 999 },   /* 999.33 ns */
		{ slow, 1, 333333333 },
		{ slow, 4, 1333333333 },
		{ third, 5, 15 },     /* 1/3 GHz: 3 ns per cycle */
		{ off, 7, 5002 },     /* 2.8 ns + 5000 */
		{ big, UINT64_MAX, 7378697629483820646ull },
		{ big, UINT64_MAX - 1, 7378697629483820645ull },
		{ cpu, 0, 0 },
	};
	size_t n = sizeof(want) / sizeof(want[0]);
	char name[32];
	for (size_t i = 0; i < n; i++) {
		uint64_t ns = 0;
		cr_assert_eq(ptw_clock_stream_to_ns(f.cs, want[i].st,
						    want[i].cycle, &ns), 0);
		cr_assert_eq(ns, want[i].ns, "row %zu", i);
		snprintf(name, sizeof(name), "e%zu", i);
		instant(&f, want[i].st, 0, want[i].cycle, name);
	}
	struct ct_trace t;
	fx_close(&f, &t);
	cr_assert_eq(t.n_ev, n);
	size_t seen = 0;
	uint64_t prev = 0;
	for (size_t k = 0; k < t.n_ev; k++) {
		const struct ct_event *e = &t.ev[k];
		cr_assert_geq(e->ts, prev, "file order is time order");
		prev = e->ts;
		size_t i = (size_t)atoi(e->name + 1);
		cr_assert_lt(i, n);
		cr_assert_eq(e->ts, want[i].ns, "%s at %llu, want %llu", e->name,
			     (unsigned long long)e->ts,
			     (unsigned long long)want[i].ns);
		cr_assert_eq(e->type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT);
		const struct ct_track *tr = ct_track(&t, e->track);
		cr_assert_not_null(tr);
		static const char *const names[] = { "cpu", "bus", "acc", "slow",
						     "third", "off", "big" };
		cr_assert_str_eq(tr->name, names[want[i].st]);
		seen |= (size_t)1 << i;
	}
	cr_assert_eq(seen, ((size_t)1 << n) - 1);
	ct_free(&t);
}

Test(clock_stream, fields_flows_annotations_and_counters_survive)
{
	struct fx f;
	fx_open(&f, NULL);
	uint32_t cpu = fx_stream(&f, "cpu", 1000000000ull, 0, 0, 0);
	uint64_t q = ptw_clock_stream_add_counter_track(f.cs, "queue", "items",
							0, -1);
	uint64_t u = ptw_clock_stream_add_counter_track(f.cs, "util", NULL, 0, -1);
	uint64_t lane = ptw_clock_stream_add_track(f.cs, "lane", 0, 3);
	cr_assert(q && u && lane);

	uint64_t flows[2] = { 11, 12 }, term[1] = { 10 };
	struct ptw_arg args[4] = {
		{ .name = "addr", .type = PTW_ARG_POINTER, .v.u = 0x1000 },
		{ .name = "delta", .type = PTW_ARG_INT, .v.i = -3 },
		{ .name = "ratio", .type = PTW_ARG_DOUBLE, .v.d = 0.25 },
		{ .name = "op", .type = PTW_ARG_STRING, .v.s = "load" },
	};
	struct ptw_clock_event ev = {
		.track = lane, .cycle = 100, .category = "mem", .name = "load",
		.flow_ids = flows, .n_flow_ids = 2,
		.terminating_flow_ids = term, .n_terminating_flow_ids = 1,
		.args = args, .n_args = 4,
	};
	cr_assert_eq(ptw_clock_stream_slice_begin(f.cs, cpu, &ev), 0);
	struct ptw_clock_event end = { .track = lane, .cycle = 180 };
	cr_assert_eq(ptw_clock_stream_slice_end(f.cs, cpu, &end), 0);
	cr_assert_eq(ptw_clock_stream_counter_int(f.cs, cpu, q, 120, -7), 0);
	cr_assert_eq(ptw_clock_stream_counter_double(f.cs, cpu, u, 130, 0.5), 0);
	/* Counters on plain tracks and slices on counter tracks: rejected now,
	 * not when the watermark passes. */
	cr_assert_eq(ptw_clock_stream_counter_int(f.cs, cpu, lane, 140, 1),
		     PTW_ERR_INVALID);
	ev.track = q;
	cr_assert_eq(ptw_clock_stream_instant(f.cs, cpu, &ev), PTW_ERR_INVALID);
	ev.track = 999999;
	cr_assert_eq(ptw_clock_stream_instant(f.cs, cpu, &ev), PTW_ERR_INVALID);
	cr_assert(strstr(ptw_writer_error(f.w)->msg, "999999"));

	cr_assert_eq(ptw_clock_stream_advance_watermark(f.cs, 1000), 0);
	struct ptw_clock_stream_stats st;
	ptw_clock_stream_get_stats(f.cs, &st);
	cr_assert_eq(st.submitted, 4);
	cr_assert_eq(st.emitted, 4);
	cr_assert_eq(st.buffered_records, 0);

	struct ct_trace t;
	fx_close(&f, &t);
	cr_assert_eq(t.n_ev, 4);
	const struct ct_event *b = &t.ev[0];
	cr_assert_eq(b->type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN);
	cr_assert_eq(b->ts, 100);
	cr_assert_eq(b->track, lane);
	cr_assert_str_eq(b->name, "load");
	cr_assert_str_eq(b->cat, "mem");
	cr_assert_eq(b->n_flows, 2);
	cr_assert_eq(b->flows[0], 11);
	cr_assert_eq(b->flows[1], 12);
	cr_assert_eq(b->n_tflows, 1);
	cr_assert_eq(b->tflows[0], 10);
	cr_assert_eq(b->n_args, 4);
	cr_assert_eq(ct_find_arg(b, "addr")->u, 0x1000);
	cr_assert_eq(ct_find_arg(b, "delta")->i, -3);
	cr_assert(ct_find_arg(b, "ratio")->d == 0.25);
	cr_assert_str_eq(ct_find_arg(b, "op")->s, "load");

	cr_assert_eq(t.ev[1].type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER);
	cr_assert_eq(t.ev[1].ts, 120);
	cr_assert_eq(t.ev[1].track, q);
	cr_assert_eq(t.ev[1].counter_kind, 1);
	cr_assert_eq(t.ev[1].ival, -7);
	cr_assert_eq(t.ev[2].ts, 130);
	cr_assert_eq(t.ev[2].counter_kind, 2);
	cr_assert(t.ev[2].dval == 0.5);
	cr_assert_eq(t.ev[3].type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END);
	cr_assert_eq(t.ev[3].ts, 180);
	cr_assert_str_eq(t.ev[3].name, "");
	ct_free(&t);
}

static void keyed(struct fx *f, uint32_t st, uint64_t track, uint64_t c,
		  const char *name, int phase, int ordinal)
{
	struct ptw_arg a[2];
	uint32_t n = 0;
	if (phase >= 0)
		a[n++] = (struct ptw_arg){ .name = "phase", .type = PTW_ARG_UINT,
					   .v.u = (uint64_t)phase };
	if (ordinal >= 0)
		a[n++] = (struct ptw_arg){ .name = "ordinal", .type = PTW_ARG_UINT,
					   .v.u = (uint64_t)ordinal };
	struct ptw_clock_event ev = { .track = track, .cycle = c, .name = name,
				      .args = a, .n_args = n };
	cr_assert_eq(ptw_clock_stream_instant(f->cs, st, &ev), 0, "%s",
		     ptw_writer_error(f->w)->msg);
}

Test(clock_stream, simultaneous_events_order_by_time_phase_name_ordinal)
{
	struct fx f;
	fx_open(&f, NULL);
	/* 1.2 GHz cycle 12 = 800 MHz cycle 8 = 3 GHz cycle 30 = 10 ns. */
	uint32_t cpu = fx_stream(&f, "cpu", 1200000000ull, 0, 0, 0);
	uint32_t bus = fx_stream(&f, "bus", 800000000ull, 0, 0, 0);
	uint32_t fast = fx_stream(&f, "fast", 3000000000ull, 0, 0, 0);
	uint64_t ta = ptw_clock_stream_add_track(f.cs, "a", 0, -1);
	uint64_t tb = ptw_clock_stream_add_track(f.cs, "b", 0, -1);

	keyed(&f, cpu, tb, 12, "cpu-b-phase1", 1, -1);
	keyed(&f, cpu, tb, 12, "cpu-b", -1, -1);        /* ordinal 1 (2nd) */
	keyed(&f, bus, ta, 8, "bus-a-ord5", -1, 5);
	keyed(&f, fast, ta, 30, "fast-a-ord2", 0, 2);
	keyed(&f, fast, tb, 31, "fast-b-10.33ns", 0, 0); /* later exact time */
	keyed(&f, bus, tb, 8, "bus-b-ord0", -1, 0);
	keyed(&f, fast, tb, 29, "fast-b-9.67ns", 7, 9);  /* earlier exact time */
	keyed(&f, cpu, 0, 12, "cpu-own", -1, -1);       /* track "cpu" */
	keyed(&f, fast, ta, 30, "fast-a-ord5", -1, 5);  /* ties bus on ordinal */

	cr_assert_eq(ptw_clock_stream_advance_watermark(f.cs, 11), 0);
	struct ct_trace t;
	fx_close(&f, &t);
	/* 9.67 ns first (its 9 ns bucket), then the exact-10 ns events:
	 * phase 0 before phase 1, by track name ("a" < "b" < "cpu"), by
	 * ordinal, by stream; the 10.33 ns event last although it shares the
	 * 10 ns bucket: exact time comes before every other key. */
	const char *want[] = {
		"fast-b-9.67ns", "fast-a-ord2", "bus-a-ord5", "fast-a-ord5",
		"bus-b-ord0", "cpu-b", "cpu-own", "cpu-b-phase1",
		"fast-b-10.33ns",
	};
	size_t n = sizeof(want) / sizeof(want[0]);
	cr_assert_eq(t.n_ev, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_str_eq(t.ev[i].name, want[i], "position %zu", i);
	cr_assert_eq(t.ev[0].ts, 9);
	for (size_t i = 1; i < n; i++)
		cr_assert_eq(t.ev[i].ts, 10);
	/* The sort keys are written like any annotation. */
	cr_assert_eq(ct_find_arg(&t.ev[0], "phase")->u, 7);
	cr_assert_eq(ct_find_arg(&t.ev[0], "ordinal")->u, 9);
	ct_free(&t);
}
