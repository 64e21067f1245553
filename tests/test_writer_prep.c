/* test_writer_prep.c - prepared simple events (ptw_i_seq_prepare +
 * ptw_seq_batch_*, the tracer backend's way for one-slot BEGIN, END and
 * INSTANT records; and the converters' runs, seq_lane.h) write the same
 * bytes as ptw_seq_simple one by one: the same pseudo-random workload goes
 * to two writers, one each way, and the two files must be identical -
 * across checkpoints (stale iids), flush thresholds, time going back, ENDs
 * with no open slice, with each compression and in flight-recorder mode.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/writer.h"
#include "lib/writer/seq_fast.h"
#include "lib/writer/seq_lane.h"
#include "lib/writer/writer_internal.h"
#include "support/ptw_test.h"
#include "reader/trace_read.h"

#define N_EVENTS 60000u

static const char *const names[] = {"alpha", "beta", "gamma", "delta",
				    "a name long enough to take more bytes"};
static const char *const cats[] = {NULL, "io", "render"};

struct ev {
	enum ptw_simple_type type;
	uint64_t ts;
	const char *cat, *name;
};

/* A reproducible workload: mostly nested BEGIN/END and INSTANTs with
 * small time steps, some big steps (also past 2^21 ns), a few instants
 * back in time and a few ENDs with no open slice; every slice ends. */
static size_t workload(struct ev *v, size_t n)
{
	uint64_t x = 0x9E3779B97F4A7C15ull, ts = 1000000;
	uint32_t depth = 0;
	size_t i;
	for (i = 0; i + 20 < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t r = (uint32_t)(x >> 33);
		/* steps of 1, 2 and 3 bytes, a few longer ones */
		uint32_t step = r % 100 < 90   ? r % 50
				: r % 100 < 97 ? r % 40000
				: r % 100 < 98 ? r % 5000000
					       : 0;
		ts += step;
		v[i].cat = cats[(r >> 12) % 3];
		v[i].name = names[(r >> 16) % 5];
		if (r % 997 == 0) {
			/* an instant back in time: written absolute */
			v[i].type = PTW_SIMPLE_INSTANT;
			v[i].ts = ts - 3000;
			continue;
		}
		uint32_t k = (r >> 8) % 10;
		v[i].ts = ts;
		if (k < 4 && depth < 20) {
			v[i].type = PTW_SIMPLE_BEGIN;
			depth++;
		} else if (k < 8 && (depth || r % 211 == 0)) {
			v[i].type = PTW_SIMPLE_END; /* depth 0: refused both ways */
			v[i].cat = v[i].name = NULL; /* not written */
			depth -= depth > 0;
		} else {
			v[i].type = PTW_SIMPLE_INSTANT;
		}
	}
	for (; depth; depth--, i++) /* every slice ends */
		v[i] = (struct ev){PTW_SIMPLE_END, ts + 1, NULL, NULL};
	return i;
}

/* ring_bytes > 0: a flight recorder of that size (its window is written
 * to 'path' at the end), else a writer to 'path'. */
static uint64_t last_track; /* the track open_writer made last */

static struct ptw_writer *open_writer(const char *path,
				      const struct ptw_writer_options *o,
				      uint64_t ring_bytes, struct ptw_seq **s)
{
	struct ptw_error err;
	struct ptw_writer *w = ring_bytes
				       ? ptw_i_writer_open_recorder(o, ring_bytes, &err)
				       : ptw_writer_open(path, o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t t = ptw_writer_add_thread_track(w, 1, 2, "t");
	cr_assert(t);
	last_track = t;
	*s = ptw_writer_add_seq(w, t);
	cr_assert_not_null(*s);
	return w;
}

static void close_writer(struct ptw_writer *w, const char *path,
			 uint64_t ring_bytes)
{
	if (ring_bytes) {
		FILE *f = fopen(path, "wb");
		cr_assert_not_null(f);
		struct ptw_i_trace_stats st = {0};
		cr_assert_eq(ptw_i_writer_snapshot(w, fileno(f), &st), 0);
		cr_assert_eq(fclose(f), 0);
	}
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
}

/* Prepared events of the test, looked up as the backend looks them up. */
struct key {
	int used;
	enum ptw_simple_type type;
	const char *cat, *name;
};

struct slot {
	struct key k;
	struct ptw_seq_prep p;
};

/* The entry of e's kind, or a free one, in a table of 64 entries of
 * 'size' bytes, each beginning with its struct key. */
static void *find_in(void *table, size_t size, const struct ev *e)
{
	for (size_t i = 0; i < 64; i++) {
		struct key *k = (struct key *)((char *)table + i * size);
		if (!k->used || (k->type == e->type && k->cat == e->cat &&
				 k->name == e->name))
			return k;
	}
	cr_assert_fail("prepared-event table full");
	return NULL;
}

static struct slot *find(struct slot *c, const struct ev *e)
{
	return find_in(c, sizeof(*c), e);
}

/* One event one by one, as the backend's single way: ptw_seq_simple,
 * then prepared for the batches. Returns ptw_seq_simple's result. */
static int single(struct ptw_seq *s, struct slot *c, const struct ev *e,
		  uint64_t *prepared)
{
	int rc = ptw_seq_simple(s, e->type, 0, e->ts, e->cat, e->name);
	struct slot *sl = find(c, e);
	if (rc != 0)
		return rc;
	/* a slot whose preparing failed must not be put (seq_fast.h) */
	sl->k.used = ptw_i_seq_prepare(s, e->type, e->cat, e->name, &sl->p);
	if (sl->k.used) {
		sl->k = (struct key){1, e->type, e->cat, e->name};
		(*prepared)++;
	}
	return rc;
}

/* Writes v[0, n) one by one on s; rc[i] gets each result. */
static void write_single(struct ptw_seq *s, const struct ev *v, size_t n,
			 int *rc)
{
	for (size_t i = 0; i < n; i++)
		rc[i] = ptw_seq_simple(s, v[i].type, 0, v[i].ts, v[i].cat,
				       v[i].name);
}

/* The tracer backend's tight run (seq_fast.h): an event of a small time
 * step written by ptw_pkt_put_step() and counted by ptw_seq_batch_took(),
 * after the checks the run makes. Returns 1 if it took the event. */
static int put_step(struct ptw_seq_batch *r, const struct slot *sl,
		    const struct ev *e)
{
	const struct ptw_seq_prep *p = &sl->p;
	if (!sl->k.used || p->gen != r->gen || e->ts < r->base ||
	    e->ts - r->base >= PTW_SEQ_STEP_MAX ||
	    !ptw_seq_batch_steps_ok(r, 1) || (p->depth_d < 0 && !r->depth))
		return 0;
	uint64_t head[2] = {ptw_pkt_step_head(p->len, 0),
			    ptw_pkt_step_head(p->len, 1)};
	uint8_t *q = r->data + r->len;
	uint8_t *end = ptw_pkt_put_step(q, e->ts - r->base, head, p->tail,
					p->len);
	ptw_seq_batch_took(r, (size_t)(end - r->data), r->len, e->ts, 1,
			   p->depth_d);
	return 1;
}

/* chunked: check fullness once per ptw_seq_batch_sure() events, as the
 * tracer's backend does, instead of before each event; 2: also write
 * small steps as the backend's tight run does (put_step). */
static void write_both(const struct ev *v, size_t n,
		       const struct ptw_writer_options *o, uint64_t ring_bytes,
		       const char *tag, int chunked)
{
	char pa[128], pb[128];
	snprintf(pa, sizeof(pa), "/tmp/ptw_test_prep_%s_simple_%d_%d.pftrace",
		 tag, chunked, (int)getpid());
	snprintf(pb, sizeof(pb), "/tmp/ptw_test_prep_%s_run_%d_%d.pftrace", tag,
		 chunked, (int)getpid());
	struct ptw_seq *sa, *sb;
	struct ptw_writer *wa = open_writer(pa, o, ring_bytes, &sa);
	struct ptw_writer *wb = open_writer(pb, o, ring_bytes, &sb);

	/* one by one */
	int rc_a[N_EVENTS];
	write_single(sa, v, n, rc_a);

	/* in batches of prepared events, as the backend writes them */
	struct slot cache[64];
	memset(cache, 0, sizeof(cache));
	uint64_t prepared = 0, in_runs = 0, refused = 0, full_runs = 0,
		 in_steps = 0;
	size_t i = 0;
	while (i < n) {
		struct ptw_seq_batch run;
		size_t k = 0;
		if (ptw_seq_batch_begin(sb, &run)) {
			uint32_t sure = chunked ? ptw_seq_batch_sure(&run) : 0;
			while (i < n && (chunked ? sure != 0
						 : !ptw_seq_batch_full(&run))) {
				cr_assert(!ptw_seq_batch_full(&run),
					  "event %zu: the run was sure of more", i);
				struct slot *sl = find(cache, &v[i]);
				int stepped = chunked == 2 &&
					      put_step(&run, sl, &v[i]);
				in_steps += stepped;
				if (!stepped &&
				    (!sl->k.used ||
				     !ptw_seq_batch_put(&run, v[i].ts, &sl->p))) {
					refused += sl->k.used;
					break;
				}
				cr_assert_eq(rc_a[i], 0, "event %zu: taken by a "
					     "run but refused one by one", i);
				i++;
				k++;
				if (chunked && --sure == 0)
					sure = ptw_seq_batch_sure(&run);
			}
			full_runs += ptw_seq_batch_full(&run);
			cr_assert_eq(ptw_seq_batch_end(sb, &run), 0, "flush failed");
			in_runs += k;
		}
		if (k || i == n)
			continue;
		int r = single(sb, cache, &v[i], &prepared);
		cr_assert_eq(r, rc_a[i], "event %zu: %d one by one, %d here", i,
			     rc_a[i], r);
		i++;
	}
	close_writer(wa, pa, ring_bytes);
	close_writer(wb, pb, ring_bytes);

	/* the runs did the bulk of the work, refused prepared events (stale
	 * iids, time going back, ENDs with no open slice) and filled up
	 * (flush points, checkpoints due) */
	cr_assert_gt(in_runs, n / 2, "only %llu events in runs",
		     (unsigned long long)in_runs);
	cr_assert_gt(refused, 0);
	cr_assert_gt(full_runs, 0);
	cr_assert_gt(prepared, 10);
	if (chunked == 2)
		cr_assert_gt(in_steps, n / 4, "only %llu events in steps",
			     (unsigned long long)in_steps);
	ptw_test_same_files_or_fail(pa, pb, tag);
}

/* The converters' way (seq_lane.h): an item prepared per (type, category,
 * name) after ptw_seq_simple wrote one like it, valid in its generation;
 * runs of prepared items (ptw_seq_lane_begin/put/end), every fourth turn a
 * run of one (ptw_seq_lane_put_one), anything else one by one. */
struct lslot {
	struct key k;
	uint32_t gen;
	int d;
	uint8_t pre[16], body[PTW_SEQ_BODY_MAX];
	size_t pre_len, n;
	uint64_t word;
};

static struct lslot *lfind(struct lslot *c, const struct ev *e)
{
	return find_in(c, sizeof(*c), e);
}

static void lane_prepare(struct ptw_seq *s, struct lslot *sl,
			 const struct ev *e)
{
	static const int te[] = {[PTW_SIMPLE_BEGIN] = PTW_TE_TYPE_SLICE_BEGIN,
				 [PTW_SIMPLE_END] = PTW_TE_TYPE_SLICE_END,
				 [PTW_SIMPLE_INSTANT] = PTW_TE_TYPE_INSTANT};
	uint64_t ci, ni;
	const char *cat = e->type == PTW_SIMPLE_END ? NULL : e->cat;
	const char *name = e->type == PTW_SIMPLE_END ? NULL : e->name;
	cr_assert(ptw_seq_lane_iids(s, cat, name, &ci, &ni),
		  "strings just written are interned");
	sl->k = (struct key){0, e->type, e->cat, e->name};
	sl->gen = ptw_seq_lane_gen(s);
	sl->d = e->type == PTW_SIMPLE_BEGIN ? 1 : e->type == PTW_SIMPLE_END ? -1 : 0;
	memset(sl->body, 0, sizeof(sl->body));
	sl->n = ptw_seq_body_prepare(sl->body, te[e->type], ci, ni);
	cr_assert_leq(sl->n, 8, "small iids: a body word");
	memcpy(&sl->word, sl->body, sizeof(sl->word));
	sl->pre_len = ptw_seq_lane_prefix(s, sl->pre, sl->n);
	sl->k.used = sl->pre_len != 0;
}

/* Writes v[*i...] in one run if it can (prepared items of one generation);
 * returns how many it wrote. */
static size_t lane_run(struct ptw_seq *s, struct lslot *c, const struct ev *v,
		       size_t i, size_t n, const int *rc_a, uint32_t *max)
{
	struct lslot *sl = lfind(c, &v[i]);
	struct ptw_seq_lane r;
	if (!sl->k.used || !ptw_seq_lane_begin(s, last_track, sl->gen, &r))
		return 0;
	uint32_t gen = sl->gen, k = 0;
	uint8_t *p = r.p, *last = NULL;
	uint64_t base = r.base;
	for (; i < n && k < r.max; i++, k++) {
		sl = lfind(c, &v[i]);
		if (!sl->k.used || sl->gen != gen || (sl->d < 0 && !r.depth))
			break;
		cr_assert_eq(rc_a[i], 0, "event %zu: taken by a run but "
			     "refused one by one", i);
		last = p;
		p = ptw_seq_lane_put(p, v[i].ts, &base, r.abs_clock,
				     ptw_pkt_step21_head(sl->pre_len + sl->n),
				     sl->pre, sl->pre_len,
				     sl->word, sl->n);
		r.depth += (uint32_t)sl->d;
	}
	r.p = p;
	r.last = last;
	r.base = base;
	r.n = k;
	cr_assert_eq(ptw_seq_lane_end(s, &r), 0, "flush failed");
	*max = r.max;
	return k;
}

static void write_both_lane(const struct ev *v, size_t n,
			    const struct ptw_writer_options *o,
			    uint64_t ring_bytes, const char *tag)
{
	char pa[128], pb[128];
	snprintf(pa, sizeof(pa), "/tmp/ptw_test_lane_%s_simple_%d.pftrace",
		 tag, (int)getpid());
	snprintf(pb, sizeof(pb), "/tmp/ptw_test_lane_%s_run_%d.pftrace", tag,
		 (int)getpid());
	struct ptw_seq *sa, *sb;
	struct ptw_writer *wa = open_writer(pa, o, ring_bytes, &sa);
	struct ptw_writer *wb = open_writer(pb, o, ring_bytes, &sb);
	uint64_t track = last_track;
	static int rc_a[N_EVENTS];
	write_single(sa, v, n, rc_a);
	struct lslot cache[64];
	memset(cache, 0, sizeof(cache));
	uint64_t in_runs = 0, ones = 0, refused = 0, full_runs = 0;
	size_t i = 0, turn = 0;
	while (i < n) {
		struct lslot *sl = lfind(cache, &v[i]);
		int rc;
		if (turn++ % 4 == 3 && sl->k.used) {
			if (ptw_seq_lane_put_one(sb, track, sl->gen, v[i].ts,
						 sl->body, sl->n, sl->d, &rc)) {
				cr_assert_eq(rc, 0);
				cr_assert_eq(rc_a[i], 0, "event %zu", i);
				ones++;
				i++;
				continue;
			}
			refused++;
		} else {
			uint32_t max = 0;
			size_t k = lane_run(sb, cache, v, i, n, rc_a, &max);
			in_runs += k;
			full_runs += k && k == max;
			if (k) {
				i += k;
				continue;
			}
		}
		rc = ptw_seq_simple(sb, v[i].type, 0, v[i].ts, v[i].cat,
				    v[i].name);
		cr_assert_eq(rc, rc_a[i], "event %zu: %d one by one, %d here", i,
			     rc_a[i], rc);
		if (!rc)
			lane_prepare(sb, sl, &v[i]);
		i++;
	}
	close_writer(wa, pa, ring_bytes);
	close_writer(wb, pb, ring_bytes);
	/* the runs did the bulk of the work; runs of one were refused
	 * (stale iids, ENDs with no open slice); runs filled up */
	cr_assert_gt(in_runs, n / 2, "only %llu events in runs",
		     (unsigned long long)in_runs);
	cr_assert_gt(ones, 20, "%s: %llu runs of one", tag,
		     (unsigned long long)ones);
	cr_assert_gt(refused, 0);
	cr_assert_gt(full_runs, 0);
	ptw_test_same_files_or_fail(pa, pb, tag);
}

static struct ev events[N_EVENTS];

Test(writer_prep, runs_write_the_bytes_of_single_events)
{
	size_t n = workload(events, N_EVENTS);
	/* checkpoints often (iids go stale), flushes often */
	struct ptw_writer_options o = {.checkpoint_packets = 700,
				       .flush_bytes = 3000};
	for (int c = 0; c <= 2; c++)
		write_both(events, n, &o, 0, "plain", c);
}

Test(writer_prep, runs_write_the_bytes_of_single_events_compressed)
{
	size_t n = workload(events, N_EVENTS);
	struct ptw_writer_options o = {.checkpoint_packets = 1000,
				       .flush_bytes = 5000,
				       .compress = PTW_COMPRESS_DEFLATE};
	for (int c = 0; c <= 2; c++) {
		o.compress = PTW_COMPRESS_DEFLATE;
		write_both(events, n, &o, 0, "deflate", c);
		o.compress = PTW_COMPRESS_ZSTD;
		write_both(events, n, &o, 0, "zstd", c);
	}
	/* the default flush point is the batch limit: the packet that goes
	 * past it makes a batch of its own (the writer's last_pkt) */
	struct ptw_writer_options d = {.compress = PTW_COMPRESS_DEFLATE};
	for (int c = 0; c <= 2; c++)
		write_both(events, n, &d, 0, "deflate-default", c);
}

Test(writer_prep, runs_write_the_bytes_of_single_events_default_options)
{
	size_t n = workload(events, N_EVENTS);
	for (int c = 0; c <= 2; c++)
		write_both(events, n, NULL, 0, "default", c);
}

/* With a machine_id of the longest encoding in every packet's header:
 * the prepared tails still hold it and the runs write the same bytes. */
Test(writer_prep, runs_write_the_bytes_of_single_events_with_a_machine_id)
{
	size_t n = workload(events, N_EVENTS);
	struct ptw_writer_options o = {.checkpoint_packets = 700,
				       .flush_bytes = 3000,
				       .machine_id = 4000000000u,
				       .machine_name = "node-17"};
	for (int c = 0; c <= 2; c++) {
		write_both(events, n, &o, 0, "machine", c);
		write_both(events, n, &o, 64u << 10, "machine-ring", c);
	}
}

/* A flight recorder: each flush may start a new piece of the ring, which
 * asks for a checkpoint; the window written at the end is the same. */
Test(writer_prep, runs_write_the_bytes_of_single_events_flight_recorder)
{
	size_t n = workload(events, N_EVENTS);
	struct ptw_writer_options o = {.flush_bytes = 4096};
	for (int c = 0; c <= 2; c++)
		write_both(events, n, &o, 64u << 10, "ring", c);
}

/* The converters' runs (seq_lane.h) write the bytes of single events:
 * checkpoints and flushes often, compressed, with a machine id, in a
 * flight recorder. */
Test(writer_prep, lane_runs_write_the_bytes_of_single_events)
{
	size_t n = workload(events, N_EVENTS);
	struct ptw_writer_options o = {.checkpoint_packets = 700,
				       .flush_bytes = 3000};
	write_both_lane(events, n, &o, 0, "plain");
	write_both_lane(events, n, NULL, 0, "default");
	o.compress = PTW_COMPRESS_DEFLATE;
	write_both_lane(events, n, &o, 0, "deflate");
	o.compress = PTW_COMPRESS_ZSTD;
	write_both_lane(events, n, &o, 0, "zstd");
	struct ptw_writer_options m = {.checkpoint_packets = 700,
				       .flush_bytes = 3000,
				       .machine_id = 4000000000u};
	write_both_lane(events, n, &m, 0, "machine");
	struct ptw_writer_options r = {.flush_bytes = 4096};
	write_both_lane(events, n, &r, 64u << 10, "ring");
}

/* A run refuses prepared bytes of another generation, and a run of one an
 * END on a track with no open slice, having written nothing. */
Test(writer_prep, lane_refuses_stale_items_and_unmatched_ends)
{
	char pa[128];
	snprintf(pa, sizeof(pa), "/tmp/ptw_test_lane_refuse_%d.pftrace",
		 (int)getpid());
	struct ptw_writer_options o = {.checkpoint_packets = 4};
	struct ptw_seq *s;
	struct ptw_writer *w = open_writer(pa, &o, 0, &s);
	uint64_t t = last_track;
	cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_INSTANT, 0, 10, NULL, "a"), 0);
	uint32_t gen = ptw_seq_lane_gen(s);
	struct ptw_seq_lane r;
	cr_assert(ptw_seq_lane_begin(s, t, gen, &r));
	cr_assert_eq(r.depth, 0);
	cr_assert_leq(r.max, 4);
	cr_assert(!ptw_seq_lane_begin(s, t, gen + 1, &r), "stale generation");
	uint8_t body[PTW_SEQ_BODY_MAX] = {0};
	size_t bn = ptw_seq_body_prepare(body, PTW_TE_TYPE_SLICE_END, 0, 0);
	int rc = -1;
	struct ptw_writer_stats st0, st1;
	ptw_writer_get_stats(w, &st0);
	cr_assert(!ptw_seq_lane_put_one(s, t, gen, 11, body, bn, -1, &rc),
		  "an END with no open slice");
	ptw_writer_get_stats(w, &st1);
	cr_assert_eq(st1.events, st0.events);
	cr_assert_eq(rc, -1);
	/* checkpoints every 4 packets: the generation moves on */
	for (uint64_t ts = 20; ptw_seq_lane_gen(s) == gen; ts++)
		cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_INSTANT, 0, ts, NULL,
					    "a"), 0);
	cr_assert(!ptw_seq_lane_begin(s, t, gen, &r), "iids forgotten");
	cr_assert(!ptw_seq_lane_put_one(s, t, gen, 100, body, bn, 0, &rc));
	close_writer(w, pa, 0);
	unlink(pa);
}

/* ptw_pkt_put_step() writes the bytes of ptw_pkt_put() + ptw_pkt_end()
 * for every small step and every length of known bytes. */
Test(writer_prep, put_step_writes_the_packet_encoders_bytes)
{
	uint8_t known[32];
	for (size_t i = 0; i < sizeof(known); i++)
		known[i] = (uint8_t)(0xA5 + 37 * i);
	for (size_t n = 0; n <= sizeof(known); n++) {
		uint64_t head[2] = {ptw_pkt_step_head(n, 0),
				    ptw_pkt_step_head(n, 1)};
		for (uint64_t step = 0; step < PTW_SEQ_STEP_MAX; step++) {
			uint8_t a[PTW_EV_FAST_MAX], b[PTW_EV_FAST_MAX];
			memset(a, 0xEE, sizeof(a));
			memset(b, 0xEE, sizeof(b));
			uint64_t base = 1000, ts = base + step;
			uint8_t *ea = ptw_pkt_end(
				a, ptw_pkt_put(a, ts, &base, PTW_CLOCK_SEQ_ABS, known,
					       n, 32, 1));
			cr_assert_eq(base, ts);
			uint8_t *eb = ptw_pkt_put_step(b, step, head, known, n);
			cr_assert_eq(eb - b, ea - a, "n %zu step %llu", n,
				     (unsigned long long)step);
			cr_assert_eq(memcmp(a, b, (size_t)(ea - a)), 0,
				     "n %zu step %llu", n,
				     (unsigned long long)step);
		}
	}
}

/* ptw_seq_lane_put() writes the bytes of ptw_pkt_put() + ptw_pkt_end():
 * its one-word head (ptw_pkt_put_step21) for steps of 1, 2 and 3 bytes,
 * at each class's bounds and in between, for every prefix and body
 * length; the general encoder for time going back and longer steps. */
static void lane_put_vs_general(uint64_t base0, uint64_t ts,
				const uint8_t pre[16], size_t pre_len,
				uint64_t body, size_t n)
{
	uint8_t a[PTW_EV_FAST_MAX], b[PTW_EV_FAST_MAX];
	memset(a, 0xEE, sizeof(a));
	memset(b, 0xEE, sizeof(b));
	uint64_t base_a = base0, base_b = base0;
	uint8_t *q = ptw_pkt_put(a, ts, &base_a, PTW_CLOCK_SEQ_ABS, pre,
				 pre_len, 16, 0);
	memcpy(q, &body, sizeof(body));
	uint8_t *ea = ptw_pkt_end(a, q + n);
	uint8_t *eb = ptw_seq_lane_put(b, ts, &base_b, PTW_CLOCK_SEQ_ABS,
				       ptw_pkt_step21_head(pre_len + n), pre,
				       pre_len, body, n);
	cr_assert_eq(base_b, base_a, "base: ts %llu base %llu",
		     (unsigned long long)ts, (unsigned long long)base0);
	cr_assert_eq(eb - b, ea - a, "length: ts %llu base %llu pre %zu n %zu",
		     (unsigned long long)ts, (unsigned long long)base0,
		     pre_len, n);
	cr_assert_eq(memcmp(a, b, (size_t)(ea - a)), 0,
		     "bytes: ts %llu base %llu pre %zu n %zu",
		     (unsigned long long)ts, (unsigned long long)base0, pre_len,
		     n);
}

Test(writer_prep, lane_put_writes_the_packet_encoders_bytes)
{
	uint8_t pre[16];
	for (size_t i = 0; i < sizeof(pre); i++)
		pre[i] = (uint8_t)(0x5A + 29 * i);
	uint64_t body = 0x0123456789ABCDEFull;
	static const uint64_t bounds[] = {
		0, 1, 126, 127, 128, 129, 255, 256, 16382, 16383, 16384,
		16385, 65535, 65536, (1u << 20) - 1, 1u << 20,
		(1u << 21) - 2, (1u << 21) - 1, 1u << 21, (1u << 21) + 1,
		(1u << 28) - 1, 1u << 28, 1ull << 35, 1ull << 62};
	uint64_t base = 1000000007ull;
	for (size_t pre_len = 0; pre_len <= 16; pre_len++)
		for (size_t n = 0; n <= 8; n++) {
			for (size_t i = 0; i < sizeof(bounds) / sizeof(*bounds);
			     i++)
				lane_put_vs_general(base, base + bounds[i], pre,
						    pre_len, body, n);
			/* time going back: written absolute */
			lane_put_vs_general(base, base - 1, pre, pre_len, body,
					    n);
			lane_put_vs_general(base, 0, pre, pre_len, body, n);
			lane_put_vs_general((uint64_t)INT64_MAX, 5, pre,
					    pre_len, body, n);
		}
	/* every step of each class, for the lengths the lane uses */
	for (uint64_t step = 0; step < PTW_PKT_STEP21_MAX + 300; step++)
		for (size_t n = 2; n <= 6; n += 2)
			lane_put_vs_general(base, base + step, pre, 7, body, n);
}
