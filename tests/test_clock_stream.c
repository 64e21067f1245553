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
	f->cs = ptw_clock_streams_attach(f->w, o, &err);
	cr_assert_not_null(f->cs, "%s", err.msg);
}

static uint32_t fx_stream(struct fx *f, const char *name, uint64_t hz,
			  uint64_t hz_den, uint64_t offset, uint64_t offset_ns)
{
	struct ptw_clock_streams_domain d = { .name = name, .hz = hz, .hz_den = hz_den,
				      .offset = offset, .offset_ns = offset_ns };
	uint32_t id = UINT32_MAX;
	cr_assert_eq(ptw_clock_streams_add(f->cs, &d, &id), 0, "%s",
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
	struct ptw_clock_streams_event ev = { .track = track, .cycle = c, .name = name };
	cr_assert_eq(ptw_clock_streams_instant(f->cs, st, &ev), 0, "%s",
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
		cr_assert_eq(ptw_clock_streams_to_ns(f.cs, want[i].st,
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
	uint32_t seq_of[7] = { 0 }; /* each stream has its own sequence */
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
		if (!seq_of[want[i].st])
			seq_of[want[i].st] = e->seq;
		cr_assert_eq(seq_of[want[i].st], e->seq);
		seen |= (size_t)1 << i;
	}
	cr_assert_eq(seen, ((size_t)1 << n) - 1);
	for (int a = 0; a < 7; a++)
		for (int b = a + 1; b < 7; b++)
			cr_assert_neq(seq_of[a], seq_of[b]);
	cr_assert_geq(t.n_snapshots, 7, "one ClockSnapshot per stream");
	ct_free(&t);
}

Test(clock_stream, fields_flows_annotations_and_counters_survive)
{
	struct fx f;
	fx_open(&f, NULL);
	uint32_t cpu = fx_stream(&f, "cpu", 1000000000ull, 0, 0, 0);
	uint64_t q = ptw_clock_streams_add_counter_track(f.cs, "queue", "items",
							0, -1);
	uint64_t u = ptw_clock_streams_add_counter_track(f.cs, "util", NULL, 0, -1);
	uint64_t lane = ptw_clock_streams_add_track(f.cs, "lane", 0, 3);
	cr_assert(q && u && lane);

	uint64_t flows[2] = { 11, 12 }, term[1] = { 10 };
	struct ptw_arg args[4] = {
		{ .name = "addr", .type = PTW_ARG_TYPE_POINTER, .v.u = 0x1000 },
		{ .name = "delta", .type = PTW_ARG_TYPE_INT, .v.i = -3 },
		{ .name = "ratio", .type = PTW_ARG_TYPE_DOUBLE, .v.d = 0.25 },
		{ .name = "op", .type = PTW_ARG_TYPE_STRING, .v.s = "load" },
	};
	struct ptw_clock_streams_event ev = {
		.track = lane, .cycle = 100, .category = "mem", .name = "load",
		.flow_ids = flows, .n_flow_ids = 2,
		.terminating_flow_ids = term, .n_terminating_flow_ids = 1,
		.args = args, .n_args = 4,
	};
	cr_assert_eq(ptw_clock_streams_slice_begin(f.cs, cpu, &ev), 0);
	struct ptw_clock_streams_event end = { .track = lane, .cycle = 180 };
	cr_assert_eq(ptw_clock_streams_slice_end(f.cs, cpu, &end), 0);
	cr_assert_eq(ptw_clock_streams_counter_int(f.cs, cpu, q, 120, -7), 0);
	cr_assert_eq(ptw_clock_streams_counter_double(f.cs, cpu, u, 130, 0.5), 0);
	/* Counters on plain tracks and slices on counter tracks: rejected now,
	 * not when the watermark passes. */
	cr_assert_eq(ptw_clock_streams_counter_int(f.cs, cpu, lane, 140, 1),
		     PTW_ERR_INVALID);
	ev.track = q;
	cr_assert_eq(ptw_clock_streams_instant(f.cs, cpu, &ev), PTW_ERR_INVALID);
	ev.track = 999999;
	cr_assert_eq(ptw_clock_streams_instant(f.cs, cpu, &ev), PTW_ERR_INVALID);
	cr_assert(strstr(ptw_writer_error(f.w)->msg, "999999"));

	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 1000), 0);
	struct ptw_clock_streams_stats st;
	ptw_clock_streams_get_stats(f.cs, &st);
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
		a[n++] = (struct ptw_arg){ .name = "phase", .type = PTW_ARG_TYPE_UINT,
					   .v.u = (uint64_t)phase };
	if (ordinal >= 0)
		a[n++] = (struct ptw_arg){ .name = "ordinal", .type = PTW_ARG_TYPE_UINT,
					   .v.u = (uint64_t)ordinal };
	struct ptw_clock_streams_event ev = { .track = track, .cycle = c, .name = name,
				      .args = a, .n_args = n };
	cr_assert_eq(ptw_clock_streams_instant(f->cs, st, &ev), 0, "%s",
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
	uint64_t ta = ptw_clock_streams_add_track(f.cs, "a", 0, -1);
	uint64_t tb = ptw_clock_streams_add_track(f.cs, "b", 0, -1);

	keyed(&f, cpu, tb, 12, "cpu-b-phase1", 1, -1);
	keyed(&f, cpu, tb, 12, "cpu-b", -1, -1);        /* ordinal 1 (2nd) */
	keyed(&f, bus, ta, 8, "bus-a-ord5", -1, 5);
	keyed(&f, fast, ta, 30, "fast-a-ord2", 0, 2);
	keyed(&f, fast, tb, 31, "fast-b-10.33ns", 0, 0); /* later exact time */
	keyed(&f, bus, tb, 8, "bus-b-ord0", -1, 0);
	keyed(&f, fast, tb, 29, "fast-b-9.67ns", 7, 9);  /* earlier exact time */
	keyed(&f, cpu, 0, 12, "cpu-own", -1, -1);       /* track "cpu" */
	keyed(&f, fast, ta, 30, "fast-a-ord5", -1, 5);  /* ties bus on ordinal */

	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 11), 0);
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

/* ---- determinism ------------------------------------------------------ */

/* One generated event: stream, cycle, kind and keys. */
struct gen_ev {
	uint32_t st;
	uint64_t cycle;
	int kind; /* 0 instant, 1 counter */
	int phase, ordinal;
	uint32_t track; /* index into the extra tracks, or 3 = own */
	char name[16];
};

static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static const uint64_t GEN_HZ[4] = { 1200000000ull, 800000000ull,
				    1500000000ull, 3000000000ull };
#define GEN_WINDOW_NS 50u

/* Events of each stream in window 'w' (times [w*50, w*50+50) ns), per
 * stream in ascending cycle order; cycles are chosen so that different
 * domains collide on exact times often (multiples of 5/6 ns ...). */
static size_t gen_window(uint64_t w, struct gen_ev *out, size_t max)
{
	size_t n = 0;
	uint64_t s = 1234 + w;
	for (uint32_t st = 0; st < 4; st++) {
		uint64_t lo = w * GEN_WINDOW_NS * GEN_HZ[st] / 1000000000ull;
		uint64_t hi = (w + 1) * GEN_WINDOW_NS * GEN_HZ[st] / 1000000000ull;
		uint64_t c = lo + (rng(&s) % 3);
		while (c < hi && n < max) {
			struct gen_ev *e = &out[n++];
			e->st = st;
			e->cycle = c;
			e->kind = rng(&s) % 7 == 0;
			e->phase = rng(&s) % 4 == 0 ? (int)(rng(&s) % 2) : -1;
			e->ordinal = rng(&s) % 5 == 0 ? (int)(rng(&s) % 3) : -1;
			e->track = (uint32_t)(rng(&s) % 4);
			snprintf(e->name, sizeof(e->name), "s%u-%llu", st,
				 (unsigned long long)c);
			c += 1 + rng(&s) % 12;
		}
	}
	return n;
}

/* Writes the generated events, window by window. Within a window, 'mode'
 * 0 submits stream by stream with a watermark after each window; 1
 * interleaves the streams randomly, watermark every 3 windows; 2 is like 0
 * with no watermark at all (close emits everything); 3 submits the streams
 * in reverse order, watermark after each window. */
static uint8_t *run_gen(int mode, uint64_t windows, size_t *len)
{
	struct fx f;
	fx_open(&f, NULL);
	uint32_t st[4];
	for (int i = 0; i < 4; i++) {
		char nm[8];
		snprintf(nm, sizeof(nm), "d%d", i);
		st[i] = fx_stream(&f, nm, GEN_HZ[i], 0, 0, 0);
	}
	uint64_t tracks[4];
	tracks[0] = ptw_clock_streams_add_track(f.cs, "shared-x", 0, -1);
	tracks[1] = ptw_clock_streams_add_track(f.cs, "shared-y", 0, -1);
	tracks[2] = ptw_clock_streams_add_counter_track(f.cs, "level", NULL, 0, -1);
	tracks[3] = 0;
	static struct gen_ev ev[4096];
	uint64_t s = 77;
	for (uint64_t w = 0; w < windows; w++) {
		size_t n = gen_window(w, ev, 4096);
		/* Per-stream cursors; order within a stream is kept. */
		size_t start[5] = { 0 }, pos[4];
		for (size_t i = 0; i < n; i++)
			start[ev[i].st + 1] = i + 1;
		for (int i = 1; i < 5; i++)
			if (start[i] < start[i - 1])
				start[i] = start[i - 1];
		for (int i = 0; i < 4; i++)
			pos[i] = start[i];
		for (size_t done = 0; done < n; done++) {
			uint32_t k = 0;
			if (mode == 1) { /* random interleaving */
				do
					k = (uint32_t)(rng(&s) % 4);
				while (pos[k] == start[k + 1]);
			} else if (mode == 3) { /* streams in reverse order */
				k = 3;
				while (pos[k] == start[k + 1])
					k--;
			} else { /* stream by stream */
				while (pos[k] == start[k + 1])
					k++;
			}
			const struct gen_ev *e = &ev[pos[k]++];
			if (e->kind == 1) {
				cr_assert_eq(ptw_clock_streams_counter_int(
					f.cs, st[e->st], tracks[2], e->cycle,
					(int64_t)e->cycle), 0);
			} else {
				keyed(&f, st[e->st], tracks[e->track == 2 ? 3 : e->track],
				      e->cycle, e->name, e->phase, e->ordinal);
			}
		}
		uint64_t wm = (w + 1) * GEN_WINDOW_NS;
		if (mode == 0 || mode == 3 || (mode == 1 && w % 3 == 2))
			cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, wm), 0);
	}
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(f.w, &err), 0, "%s", err.msg);
	uint8_t *b = ct_read_file(f.path, len);
	unlink(f.path);
	free(f.path);
	return b;
}

Test(clock_stream, output_bytes_identical_across_runs_and_interleavings)
{
	uint64_t windows = getenv("PTW_TEST_SCALE") ? 20 : 80;
	size_t n0, n0b, n1, n2, n3;
	uint8_t *a = run_gen(0, windows, &n0);
	uint8_t *a2 = run_gen(0, windows, &n0b);
	uint8_t *b = run_gen(1, windows, &n1);
	uint8_t *c = run_gen(2, windows, &n2);
	uint8_t *d = run_gen(3, windows, &n3);
	cr_assert_gt(n0, 1000);
	cr_assert_eq(n0, n0b);
	cr_assert_eq(memcmp(a, a2, n0), 0, "repeated run differs");
	cr_assert_eq(n0, n1, "interleaving changed the size");
	cr_assert_eq(memcmp(a, b, n0), 0, "interleaving changed the bytes");
	cr_assert_eq(n0, n2, "watermark placement changed the size");
	cr_assert_eq(memcmp(a, c, n0), 0, "watermark placement changed bytes");
	cr_assert_eq(n0, n3, "stream order changed the size");
	cr_assert_eq(memcmp(a, d, n0), 0, "stream order changed the bytes");

	/* And the content is right: every event at its exact floor time, in
	 * non-decreasing time order. */
	struct ct_trace t;
	ct_decode(&t, a, n0);
	size_t total = 0;
	static struct gen_ev ev[4096];
	for (uint64_t w = 0; w < windows; w++)
		total += gen_window(w, ev, 4096);
	cr_assert_eq(t.n_ev, total);
	size_t collisions = 0;
	for (size_t i = 0; i < t.n_ev; i++) {
		if (i)
			cr_assert_geq(t.ev[i].ts, t.ev[i - 1].ts);
		if (i && t.ev[i].ts == t.ev[i - 1].ts && t.ev[i].seq != t.ev[i - 1].seq)
			collisions++;
		if (t.ev[i].counter_kind) {
			cr_assert_eq(t.ev[i].counter_kind, 1);
			continue; /* cycle is the value, stream unknown */
		}
		unsigned st;
		unsigned long long cyc;
		cr_assert_eq(sscanf(t.ev[i].name, "s%u-%llu", &st, &cyc), 2);
		unsigned __int128 x = (unsigned __int128)cyc * 1000000000u;
		cr_assert_eq(t.ev[i].ts, (uint64_t)(x / GEN_HZ[st]), "%s",
			     t.ev[i].name);
	}
	/* The data really exercises cross-stream ties. */
	cr_assert_gt(collisions, windows, "only %zu same-ns neighbours", collisions);
	ct_free(&t);
	free(a);
	free(a2);
	free(b);
	free(c);
	free(d);
}

/* ---- watermarks and errors ---------------------------------------------- */

static void stats(struct fx *f, struct ptw_clock_streams_stats *st)
{
	ptw_clock_streams_get_stats(f->cs, st);
}

Test(clock_stream, late_events_are_rejected_with_the_buffer_intact)
{
	struct fx f;
	fx_open(&f, NULL);
	uint32_t cpu = fx_stream(&f, "cpu", 1000000000ull, 0, 0, 0);
	uint32_t bus = fx_stream(&f, "bus", 3, 0, 0, 0);
	instant(&f, cpu, 0, 500, "a");
	instant(&f, cpu, 0, 1500, "b");
	instant(&f, cpu, 0, 2500, "c");
	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 1000), 0);

	struct ptw_clock_streams_stats before, after;
	stats(&f, &before);
	cr_assert_eq(before.emitted, 1);
	cr_assert_eq(before.buffered_records, 2);

	struct ptw_clock_streams_event ev = { .cycle = 999, .name = "late" };
	cr_assert_eq(ptw_clock_streams_instant(f.cs, cpu, &ev), PTW_ERR_INVALID);
	const struct ptw_error *e = ptw_writer_error(f.w);
	cr_assert_eq(e->code, PTW_ERR_INVALID);
	cr_assert(strstr(e->msg, "late") && strstr(e->msg, "cpu") &&
		  strstr(e->msg, "999"), "message: %s", e->msg);
	/* 3 Hz: cycle 0 is at 0 ns, late too; the slice kinds as well. */
	ev.cycle = 0;
	cr_assert_eq(ptw_clock_streams_slice_begin(f.cs, bus, &ev), PTW_ERR_INVALID);
	cr_assert_eq(ptw_clock_streams_counter_int(f.cs, cpu, 0, 10, 1),
		     PTW_ERR_INVALID); /* own track is not a counter either */
	stats(&f, &after);
	cr_assert_eq(memcmp(&before, &after, sizeof(before)), 0,
		     "a rejected event changed the store");

	/* Exactly at the watermark is not late. */
	ev.cycle = 1000;
	ev.name = "at-watermark";
	cr_assert_eq(ptw_clock_streams_instant(f.cs, cpu, &ev), 0);

	struct ct_trace t;
	fx_close(&f, &t);
	const char *want[] = { "a", "at-watermark", "b", "c" };
	uint64_t ts[] = { 500, 1000, 1500, 2500 };
	cr_assert_eq(t.n_ev, 4);
	for (int i = 0; i < 4; i++) {
		cr_assert_str_eq(t.ev[i].name, want[i]);
		cr_assert_eq(t.ev[i].ts, ts[i]);
	}
	ct_free(&t);
}

Test(clock_stream, events_at_the_watermark_stay_buffered)
{
	struct fx f;
	fx_open(&f, NULL);
	/* 3 GHz: cycle 3000 = 1000 ns exactly, 2999 = 999.67 ns, 3001 =
	 * 1000.33 ns (both fractions in the same buckets as their floors). */
	uint32_t s = fx_stream(&f, "fast", 3000000000ull, 0, 0, 0);
	instant(&f, s, 0, 2999, "below");
	instant(&f, s, 0, 3000, "at");
	instant(&f, s, 0, 3001, "at-too");
	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 1000), 0);
	cr_assert_eq(ptw_writer_flush(f.w), 0);

	struct ptw_clock_streams_stats st;
	stats(&f, &st);
	cr_assert_eq(st.emitted, 1);
	cr_assert_eq(st.buffered_records, 2);
	cr_assert_eq(st.watermark, 1000);
	struct ct_trace t;
	ct_decode_file(&t, f.path);
	cr_assert_eq(t.n_ev, 1);
	cr_assert_str_eq(t.ev[0].name, "below");
	cr_assert_eq(t.ev[0].ts, 999);
	ct_free(&t);

	/* The same watermark again is a no-op; one more ns releases both. */
	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 1000), 0);
	stats(&f, &st);
	cr_assert_eq(st.emitted, 1);
	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 1001), 0);
	cr_assert_eq(ptw_writer_flush(f.w), 0);
	stats(&f, &st);
	cr_assert_eq(st.emitted, 3);
	cr_assert_eq(st.buffered_records, 0);
	ct_decode_file(&t, f.path);
	cr_assert_eq(t.n_ev, 3);
	cr_assert_str_eq(t.ev[1].name, "at");
	cr_assert_str_eq(t.ev[2].name, "at-too");
	cr_assert_eq(t.ev[1].ts, 1000);
	cr_assert_eq(t.ev[2].ts, 1000);
	ct_free(&t);
	fx_close(&f, &t);
	ct_free(&t);
}

Test(clock_stream, backwards_watermark_is_an_error_and_changes_nothing)
{
	struct fx f;
	fx_open(&f, NULL);
	uint32_t s = fx_stream(&f, "cpu", 1000000000ull, 0, 0, 0);
	instant(&f, s, 0, 50, "a");
	instant(&f, s, 0, 150, "b");
	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 100), 0);
	struct ptw_clock_streams_stats before, after;
	stats(&f, &before);
	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 99), PTW_ERR_INVALID);
	cr_assert(strstr(ptw_writer_error(f.w)->msg, "99 ns"));
	stats(&f, &after);
	cr_assert_eq(memcmp(&before, &after, sizeof(before)), 0);
	cr_assert_eq(after.watermark, 100);
	/* An event the bad watermark would have made late is still fine. */
	instant(&f, s, 0, 100, "c");
	struct ct_trace t;
	fx_close(&f, &t);
	cr_assert_eq(t.n_ev, 3);
	cr_assert_str_eq(t.ev[1].name, "c");
	ct_free(&t);
}

Test(clock_stream, full_store_rejects_with_the_buffer_intact)
{
	struct ptw_clock_streams_options o = { .max_records = 3 };
	struct fx f;
	fx_open(&f, &o);
	uint32_t s = fx_stream(&f, "cpu", 1000000000ull, 0, 0, 0);
	instant(&f, s, 0, 30, "c");
	instant(&f, s, 0, 10, "a");
	instant(&f, s, 0, 20, "b");
	struct ptw_clock_streams_stats before, after;
	stats(&f, &before);
	struct ptw_clock_streams_event ev = { .cycle = 5, .name = "overflow" };
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &ev), PTW_ERR_LIMIT);
	cr_assert(strstr(ptw_writer_error(f.w)->msg, "store full"), "%s",
		  ptw_writer_error(f.w)->msg);
	stats(&f, &after);
	cr_assert_eq(memcmp(&before, &after, sizeof(before)), 0);
	cr_assert_eq(after.buffered_records, 3);
	cr_assert_eq(after.peak_records, 3);

	/* A watermark makes room; the rejected event can then go in. */
	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 5), 0);
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &ev), PTW_ERR_LIMIT);
	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 15), 0);
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &ev), PTW_ERR_INVALID,
		     "5 ns is late now");
	ev.cycle = 40;
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &ev), 0);

	struct ptw_writer_stats ws;
	ptw_writer_get_stats(f.w, &ws);
	cr_assert_eq(ws.clock_peak_records, 3);
	cr_assert_eq(ws.clock_peak_bytes, after.peak_bytes);

	struct ct_trace t;
	fx_close(&f, &t);
	const char *want[] = { "a", "b", "c", "overflow" };
	cr_assert_eq(t.n_ev, 4);
	for (int i = 0; i < 4; i++)
		cr_assert_str_eq(t.ev[i].name, want[i]);
	ct_free(&t);
}

Test(clock_stream, byte_capacity_and_the_64k_metadata_limit)
{
	uint64_t one = ptw_clock_streams_event_bytes(5000);
	struct ptw_clock_streams_options o = { .max_bytes = 2 * one };
	struct fx f;
	fx_open(&f, &o);
	uint32_t s = fx_stream(&f, "cpu", 1000000000ull, 0, 0, 0);
	char *big = malloc(70000);
	cr_assert_not_null(big);
	memset(big, 'x', 69999);
	big[69999] = '\0';
	big[4000] = '\0'; /* a 4000-byte string first */
	struct ptw_arg a = { .name = "blob", .type = PTW_ARG_TYPE_STRING, .v.s = big };
	struct ptw_clock_streams_event ev = { .cycle = 1, .name = "e", .args = &a,
				      .n_args = 1 };
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &ev), 0);
	ev.cycle = 2;
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &ev), 0);
	struct ptw_clock_streams_stats st;
	stats(&f, &st);
	cr_assert_leq(st.buffered_bytes, 2 * one);
	ev.cycle = 3;
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &ev), PTW_ERR_LIMIT);
	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 3), 0);
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &ev), 0);

	/* Metadata over 64 KiB is refused whatever the capacity: two 40 KB
	 * strings (each under PTW_MAX_STRING_LEN). */
	big[4000] = 'x';
	big[40000] = '\0';
	ev.name = big;
	ev.cycle = 10;
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &ev), PTW_ERR_LIMIT);
	cr_assert(strstr(ptw_writer_error(f.w)->msg, "64") ||
		  strstr(ptw_writer_error(f.w)->msg, "META"), "%s",
		  ptw_writer_error(f.w)->msg);
	stats(&f, &st);
	cr_assert_eq(st.buffered_records, 1);

	struct ct_trace t;
	fx_close(&f, &t);
	cr_assert_eq(t.n_ev, 3);
	cr_assert_eq(strlen(ct_find_arg(&t.ev[2], "blob")->s), 63); /* copied, truncated by ct */
	free(big);
	ct_free(&t);
}

Test(clock_stream, streams_are_configured_before_the_first_event)
{
	struct fx f;
	fx_open(&f, NULL);
	uint32_t s = fx_stream(&f, "cpu", 1000000000ull, 0, 0, 0);
	struct ptw_clock_streams_domain bad = { .name = "zero", .hz = 0 };
	uint32_t id;
	cr_assert_eq(ptw_clock_streams_add(f.cs, &bad, &id), PTW_ERR_INVALID);
	bad.name = "";
	bad.hz = 5;
	cr_assert_eq(ptw_clock_streams_add(f.cs, &bad, &id), PTW_ERR_INVALID);
	instant(&f, s, 0, 1, "x");
	struct ptw_clock_streams_domain late = { .name = "late", .hz = 100 };
	cr_assert_eq(ptw_clock_streams_add(f.cs, &late, &id), PTW_ERR_INVALID);
	cr_assert(strstr(ptw_writer_error(f.w)->msg, "before the first event"));
	struct ptw_clock_streams_event ev = { .cycle = 1 };
	cr_assert_eq(ptw_clock_streams_instant(f.cs, 1, &ev), PTW_ERR_INVALID);
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, NULL), PTW_ERR_INVALID);
	uint64_t ns;
	cr_assert_eq(ptw_clock_streams_to_ns(f.cs, 1, 0, &ns), PTW_ERR_INVALID);
	cr_assert_eq(ptw_clock_streams_track(f.cs, 1), 0);
	cr_assert_neq(ptw_clock_streams_track(f.cs, s), 0);
	/* NULL handles are refused, not dereferenced. */
	cr_assert_eq(ptw_clock_streams_instant(NULL, 0, &ev), PTW_ERR_INVALID);
	cr_assert_eq(ptw_clock_streams_advance_watermark(NULL, 1), PTW_ERR_INVALID);
	cr_assert_eq(ptw_clock_streams_add(NULL, &late, &id), PTW_ERR_INVALID);
	cr_assert_eq(ptw_clock_streams_add_track(NULL, "x", 0, -1), 0);
	struct ptw_clock_streams_stats zs;
	memset(&zs, 0xff, sizeof(zs));
	ptw_clock_streams_get_stats(NULL, &zs);
	cr_assert_eq(zs.submitted, 0);
	struct ptw_error aerr;
	cr_assert_null(ptw_clock_streams_attach(NULL, NULL, &aerr));
	cr_assert_eq(aerr.code, PTW_ERR_INVALID);
	/* A time past INT64_MAX ns is a limit error, not a wrap. */
	ev.cycle = UINT64_MAX;
	cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &ev), PTW_ERR_LIMIT);
	struct ct_trace t;
	fx_close(&f, &t);
	cr_assert_eq(t.n_ev, 1);
	ct_free(&t);
}

Test(clock_stream, host_time_events_and_clock_streams_do_not_mix)
{
	struct ptw_error err;
	char *path = ct_tmp_path();
	/* Host events first: attaching fails. */
	struct ptw_writer *w = ptw_writer_open(path, NULL, &err);
	cr_assert_not_null(w);
	struct ptw_event he = { .ts = 5, .name = "host",
				.track = ptw_writer_add_track(w, "t", 0, -1) };
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &he), 0);
	cr_assert_null(ptw_clock_streams_attach(w, NULL, &err));
	cr_assert_eq(err.code, PTW_ERR_INVALID);
	cr_assert_eq(ptw_writer_close(w, NULL), 0);

	/* Clock streams first: host events fail, a second attach fails. */
	w = ptw_writer_open(path, NULL, &err);
	cr_assert_not_null(w);
	struct ptw_clock_streams *cs = ptw_clock_streams_attach(w, NULL, &err);
	cr_assert_not_null(cs, "%s", err.msg);
	cr_assert_null(ptw_clock_streams_attach(w, NULL, &err));
	cr_assert_eq(err.code, PTW_ERR_INVALID);
	he.track = ptw_writer_add_track(w, "t", 0, -1);
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &he), PTW_ERR_INVALID);
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	unlink(path);
	free(path);
}

Test(clock_stream, close_writes_what_remains_in_order_and_reports_stats)
{
	struct fx f;
	fx_open(&f, NULL);
	uint32_t a = fx_stream(&f, "a", 1000000000ull, 0, 0, 0);
	uint32_t b = fx_stream(&f, "b", 2000000000ull, 0, 0, 0);
	for (uint64_t i = 0; i < 100; i++) {
		instant(&f, a, 0, 1000 - 10 * i, "a");
		instant(&f, b, 0, 2 * (1000 - 10 * i) + 1, "b");
	}
	struct ptw_clock_streams_stats st;
	stats(&f, &st);
	cr_assert_eq(st.peak_records, 200);
	cr_assert_eq(st.buffered_records, 200);
	cr_assert_eq(st.first_output_ns, 0);
	cr_assert_gt(st.peak_bytes, 200 * 64);
	struct ptw_writer_stats ws;
	ptw_writer_get_stats(f.w, &ws);
	cr_assert_eq(ws.clock_peak_records, 200);
	cr_assert_eq(ws.clock_peak_bytes, st.peak_bytes);
	cr_assert_eq(ws.first_clock_output_ns, 0);

	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 500), 0);
	stats(&f, &st);
	cr_assert_gt(st.first_output_ns, 0);
	cr_assert_eq(st.emitted, 98); /* 10..490 ns: 49 from each */
	cr_assert_eq(ptw_writer_flush(f.w), 0);
	ptw_writer_get_stats(f.w, &ws);
	cr_assert_gt(ws.first_clock_output_ns, 0);

	struct ct_trace t;
	fx_close(&f, &t);
	cr_assert_eq(t.n_ev, 200);
	for (size_t i = 0; i < 200; i++) {
		/* a at 10k ns then b at 10k + 0.5 ns: same ns, a first. */
		uint64_t k = 10 + 10 * (i / 2);
		cr_assert_eq(t.ev[i].ts, k, "event %zu", i);
		cr_assert_str_eq(t.ev[i].name, i % 2 ? "b" : "a");
	}
	ct_free(&t);
}

Test(clock_stream, unmatched_end_is_reported_at_the_watermark_others_written)
{
	struct fx f;
	fx_open(&f, NULL);
	uint32_t s = fx_stream(&f, "cpu", 1000000000ull, 0, 0, 0);
	struct ptw_clock_streams_event end = { .cycle = 10 };
	cr_assert_eq(ptw_clock_streams_slice_end(f.cs, s, &end), 0);
	instant(&f, s, 0, 20, "after");
	cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, 100),
		     PTW_ERR_INVALID);
	struct ptw_clock_streams_stats st;
	stats(&f, &st);
	cr_assert_eq(st.buffered_records, 0);
	struct ct_trace t;
	fx_close(&f, &t);
	cr_assert_eq(t.n_ev, 1);
	cr_assert_str_eq(t.ev[0].name, "after");
	ct_free(&t);
}

/* ---- randomized model check --------------------------------------------- */

struct model_ev {
	uint32_t st;
	uint64_t cycle, ns, phase, ordinal, seq;
	const char *track_name;
	uint32_t id;
};

static const uint64_t MODEL_HZ[3] = { 1200000000ull, 7, 2500000000ull };

/* The documented key, computed independently: exact time by cross-
 * multiplying cycle / hz, then phase, track name, ordinal, stream, seq. */
static int model_cmp(const void *pa, const void *pb)
{
	const struct model_ev *a = pa, *b = pb;
	unsigned __int128 l = (unsigned __int128)a->cycle * MODEL_HZ[b->st];
	unsigned __int128 r = (unsigned __int128)b->cycle * MODEL_HZ[a->st];
	if (l != r)
		return l < r ? -1 : 1;
	if (a->phase != b->phase)
		return a->phase < b->phase ? -1 : 1;
	int c = strcmp(a->track_name, b->track_name);
	if (c)
		return c;
	if (a->ordinal != b->ordinal)
		return a->ordinal < b->ordinal ? -1 : 1;
	if (a->st != b->st)
		return a->st < b->st ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

Test(clock_stream, random_operations_match_a_reference_model)
{
	size_t ops = getenv("PTW_TEST_SCALE") ? 1500 : 6000;
	struct ptw_clock_streams_options o = { .max_records = 40 };
	struct fx f;
	fx_open(&f, &o);
	uint32_t st[3];
	st[0] = fx_stream(&f, "zz-cpu", MODEL_HZ[0], 0, 0, 0);
	st[1] = fx_stream(&f, "slow", MODEL_HZ[1], 0, 0, 0);
	st[2] = fx_stream(&f, "fast", MODEL_HZ[2], 0, 0, 0);
	const char *own[3] = { "zz-cpu", "slow", "fast" };
	uint64_t tx = ptw_clock_streams_add_track(f.cs, "x", 0, -1);
	uint64_t ty = ptw_clock_streams_add_track(f.cs, "y", 0, -1);

	struct model_ev *buf = calloc(64, sizeof(*buf));
	struct model_ev *out = calloc(ops + 64, sizeof(*out));
	cr_assert(buf && out);
	size_t nbuf = 0, nout = 0;
	uint64_t wm = 0, seq[3] = { 0 }, rs = 2024;
	uint32_t next_id = 0;
	size_t late = 0, full = 0, back = 0;
	char name[16];
	for (size_t op = 0; op < ops; op++) {
		uint64_t r = rng(&rs);
		if (r % 10 == 0) {
			/* watermark: mostly forward by 0..60 ns, sometimes back */
			uint64_t nw = r % 70 == 0 && wm > 5 ? wm - 1 - (r >> 8) % 5
							    : wm + (r >> 8) % 60;
			int rc = ptw_clock_streams_advance_watermark(f.cs, nw);
			if (nw < wm) {
				cr_assert_eq(rc, PTW_ERR_INVALID);
				back++;
				continue;
			}
			cr_assert_eq(rc, 0, "%s", ptw_writer_error(f.w)->msg);
			wm = nw;
			qsort(buf, nbuf, sizeof(*buf), model_cmp);
			size_t keep = 0;
			for (size_t i = 0; i < nbuf; i++) {
				if (buf[i].ns < wm)
					out[nout++] = buf[i];
				else
					buf[keep++] = buf[i];
			}
			nbuf = keep;
			continue;
		}
		uint32_t s = (uint32_t)(r % 3);
		/* around the watermark: from 20 ns before to 100 ns after */
		uint64_t t_ns = wm + (r >> 4) % 120;
		t_ns = t_ns > 20 ? t_ns - 20 : 0;
		uint64_t cyc = (uint64_t)((unsigned __int128)t_ns * MODEL_HZ[s] /
					  1000000000u);
		cyc += (r >> 12) % 3;
		uint64_t ns = (uint64_t)((unsigned __int128)cyc * 1000000000u /
					 MODEL_HZ[s]);
		uint32_t tk = (uint32_t)((r >> 20) % 3);
		int phase = (r >> 24) % 4 == 0 ? (int)((r >> 26) % 2) : -1;
		int ordinal = (r >> 28) % 4 == 0 ? (int)((r >> 30) % 4) : -1;
		snprintf(name, sizeof(name), "e%u", next_id);
		struct ptw_arg a[2];
		uint32_t na = 0;
		if (phase >= 0)
			a[na++] = (struct ptw_arg){ .name = "phase",
				.type = PTW_ARG_TYPE_UINT, .v.u = (uint64_t)phase };
		if (ordinal >= 0)
			a[na++] = (struct ptw_arg){ .name = "ordinal",
				.type = PTW_ARG_TYPE_UINT, .v.u = (uint64_t)ordinal };
		struct ptw_clock_streams_event ev = {
			.track = tk == 0 ? tx : tk == 1 ? ty : 0, .cycle = cyc,
			.name = name, .args = a, .n_args = na };
		int rc = ptw_clock_streams_instant(f.cs, st[s], &ev);
		if (ns < wm) {
			cr_assert_eq(rc, PTW_ERR_INVALID, "late event accepted");
			late++;
			continue;
		}
		if (nbuf == 40) {
			cr_assert_eq(rc, PTW_ERR_LIMIT, "full store accepted");
			full++;
			continue;
		}
		cr_assert_eq(rc, 0, "%s", ptw_writer_error(f.w)->msg);
		struct model_ev *m = &buf[nbuf++];
		m->st = s;
		m->cycle = cyc;
		m->ns = ns;
		m->phase = phase >= 0 ? (uint64_t)phase : 0;
		m->ordinal = ordinal >= 0 ? (uint64_t)ordinal : seq[s];
		m->seq = seq[s]++;
		m->track_name = tk == 0 ? "x" : tk == 1 ? "y" : own[s];
		m->id = next_id++;

		struct ptw_clock_streams_stats sst;
		ptw_clock_streams_get_stats(f.cs, &sst);
		cr_assert_eq(sst.buffered_records, nbuf);
		cr_assert_eq(sst.emitted, nout);
	}
	qsort(buf, nbuf, sizeof(*buf), model_cmp);
	for (size_t i = 0; i < nbuf; i++)
		out[nout++] = buf[i];
	cr_assert(late > 10 && full > 10 && back > 0,
		  "late %zu full %zu back %zu", late, full, back);

	struct ct_trace t;
	fx_close(&f, &t);
	cr_assert_eq(t.n_ev, nout);
	for (size_t i = 0; i < nout; i++) {
		snprintf(name, sizeof(name), "e%u", out[i].id);
		cr_assert_str_eq(t.ev[i].name, name, "position %zu", i);
		cr_assert_eq(t.ev[i].ts, out[i].ns);
	}
	ct_free(&t);
	free(buf);
	free(out);
}

Test(clock_stream, static_strings_are_written_like_copies)
{
	/* Two identical runs, one with PTW_EV_STATIC_STRINGS: same events. */
	static const char *const names[] = { "fetch", "decode", "exec" };
	struct ct_trace t[2];
	for (int run = 0; run < 2; run++) {
		struct ptw_writer_options wo = { .checkpoint_packets = 50 };
		struct ptw_error err;
		struct fx f;
		f.path = ct_tmp_path();
		f.w = ptw_writer_open(f.path, &wo, &err);
		cr_assert_not_null(f.w);
		f.cs = ptw_clock_streams_attach(f.w, NULL, &err);
		cr_assert_not_null(f.cs);
		uint32_t a = fx_stream(&f, "a", 1200000000ull, 0, 0, 0);
		uint32_t b = fx_stream(&f, "b", 800000000ull, 0, 0, 0);
		for (uint64_t i = 0; i < 600; i++) {
			struct ptw_clock_streams_event ev = {
				.cycle = 6 * i, .name = names[i % 3],
				.category = "cpu",
				.flags = run ? PTW_EV_STATIC_STRINGS : 0 };
			cr_assert_eq(ptw_clock_streams_instant(f.cs, a, &ev), 0);
			ev.cycle = 4 * i + 1;
			ev.name = names[(i + 1) % 3];
			ev.category = "bus";
			cr_assert_eq(ptw_clock_streams_instant(f.cs, b, &ev), 0);
			if (i % 50 == 49)
				cr_assert_eq(ptw_clock_streams_advance_watermark(
						     f.cs, 5 * i), 0);
		}
		fx_close(&f, &t[run]);
	}
	cr_assert_eq(t[0].n_ev, 1200);
	cr_assert_eq(t[1].n_ev, 1200);
	for (size_t i = 0; i < 1200; i++) {
		cr_assert_eq(t[0].ev[i].ts, t[1].ev[i].ts);
		cr_assert_str_eq(t[0].ev[i].name, t[1].ev[i].name);
		cr_assert_str_eq(t[0].ev[i].cat, t[1].ev[i].cat);
	}
	ct_free(&t[0]);
	ct_free(&t[1]);
}

/* Writes a fixed event set; with 'noise', every submission is preceded by
 * calls that must fail (late, full store, bad keys, unknown track, long
 * string, backwards watermark). Returns the file's bytes. */
static uint8_t *run_noisy(int noise, size_t *len)
{
	struct ptw_clock_streams_options o = { .max_records = 8 };
	struct fx f;
	fx_open(&f, &o);
	uint32_t a = fx_stream(&f, "a", 1200000000ull, 0, 0, 0);
	uint32_t b = fx_stream(&f, "b", 800000000ull, 0, 0, 0);
	uint64_t ctr = ptw_clock_streams_add_counter_track(f.cs, "c", NULL, 0, -1);
	static char longname[PTW_MAX_STRING_LEN + 2];
	memset(longname, 'n', sizeof(longname) - 1);
	struct ptw_arg badphase = { .name = "phase", .type = PTW_ARG_TYPE_INT, .v.i = 1 };
	uint64_t wm = 0;
	char name[16];
	for (uint64_t i = 0; i < 400; i++) {
		uint32_t s = i % 2 ? b : a;
		uint64_t cyc = s == a ? 12 * i + 6 : 8 * i;
		snprintf(name, sizeof(name), "n%llu", (unsigned long long)(i % 7));
		struct ptw_clock_streams_event ev = { .cycle = cyc, .name = name,
					      .category = i % 3 ? "x" : "y" };
		if (noise) {
			struct ptw_clock_streams_event bad = ev;
			if (wm) {
				bad.cycle = 0; /* late */
				cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &bad),
					     PTW_ERR_INVALID);
				cr_assert_eq(ptw_clock_streams_advance_watermark(
						     f.cs, wm - 1), PTW_ERR_INVALID);
			}
			bad = ev;
			bad.args = &badphase;
			bad.n_args = 1;
			cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &bad),
				     PTW_ERR_INVALID);
			bad = ev;
			bad.name = longname;
			cr_assert_eq(ptw_clock_streams_slice_begin(f.cs, s, &bad),
				     PTW_ERR_LIMIT);
			bad = ev;
			bad.track = ctr;
			cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &bad),
				     PTW_ERR_INVALID);
			cr_assert_eq(ptw_clock_streams_counter_int(f.cs, s, 0, cyc, 1),
				     PTW_ERR_INVALID);
		}
		int rc = ptw_clock_streams_instant(f.cs, s, &ev);
		if (rc == PTW_ERR_LIMIT) {
			/* full: both runs hit it at the same point */
			wm = 10 * i; /* every earlier event is below 10 i ns */
			cr_assert_eq(ptw_clock_streams_advance_watermark(f.cs, wm), 0);
			rc = ptw_clock_streams_instant(f.cs, s, &ev);
		}
		cr_assert_eq(rc, 0, "%s", ptw_writer_error(f.w)->msg);
		if (noise) {
			struct ptw_clock_streams_stats st;
			ptw_clock_streams_get_stats(f.cs, &st);
			if (st.buffered_records == 8) {
				struct ptw_clock_streams_event more = ev;
				more.cycle += 1;
				cr_assert_eq(ptw_clock_streams_instant(f.cs, s, &more),
					     PTW_ERR_LIMIT);
			}
		}
		if (i % 2) {
			rc = ptw_clock_streams_counter_int(f.cs, s, ctr, cyc,
							  (int64_t)i);
			if (rc == PTW_ERR_LIMIT) {
				wm = 10 * i;
				cr_assert_eq(ptw_clock_streams_advance_watermark(
						     f.cs, wm), 0);
				rc = ptw_clock_streams_counter_int(f.cs, s, ctr, cyc,
								  (int64_t)i);
			}
			cr_assert_eq(rc, 0, "%s", ptw_writer_error(f.w)->msg);
		}
	}
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(f.w, &err), 0, "%s", err.msg);
	uint8_t *bytes = ct_read_file(f.path, len);
	unlink(f.path);
	free(f.path);
	return bytes;
}

Test(clock_stream, rejected_calls_leave_no_trace_in_the_output)
{
	size_t n0, n1;
	uint8_t *quiet = run_noisy(0, &n0);
	uint8_t *noisy = run_noisy(1, &n1);
	cr_assert_gt(n0, 4000);
	cr_assert_eq(n0, n1);
	cr_assert_eq(memcmp(quiet, noisy, n0), 0);
	struct ct_trace t;
	ct_decode(&t, quiet, n0);
	cr_assert_eq(t.n_ev, 600);
	ct_free(&t);
	free(quiet);
	free(noisy);
}
