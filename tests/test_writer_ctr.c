/* test_writer_ctr.c - runs of counter samples (lib/writer/seq_ctr.h, the
 * converters' batch path) write the bytes of ptw_seq_counter_int() and
 * ptw_seq_counter_double() one by one: the same pseudo-random samples
 * (several counter tracks, integer and double values of every size, time
 * going back between tracks, steps of every length) go to two writers,
 * one each way, with other events between the runs, and the two files
 * must be identical - across checkpoints, flushes, compression, a machine
 * id and in flight-recorder mode.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/writer.h"
#include "lib/writer/seq_ctr.h"
#include "lib/writer/writer_internal.h"
#include "support/ptw_test.h"
#include "reader/trace_read.h"

#define N_SAMPLES 30000u
#define N_TRACKS 5

struct sample {
	int track;    /* index; -1: a simple event, not a sample */
	uint64_t ts;
	int is_int;
	int64_t iv;
	double dv;
};

static uint64_t next(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 11;
}

/* Integers and doubles of every size and kind. */
static void value(uint64_t *x, struct sample *s)
{
	static const double odd[] = {0.5, -0.25, 1e300, -1e-300, 0.0, -0.0,
				     9.2e18, 1e19, 3.0};
	uint64_t r = next(x);
	s->is_int = r % 3 == 0;
	switch ((r >> 8) % 6) {
	case 0: /* small */
		s->iv = (int64_t)(r >> 20) % 200;
		s->dv = (double)((r >> 20) % 1000) / 4.0;
		break;
	case 1: /* negative: a 10-byte varint */
		s->iv = -(int64_t)((r >> 20) % 100000) - 1;
		s->dv = -(double)((r >> 20) % 100000) / 8.0;
		break;
	case 2: /* large */
		s->iv = (int64_t)(r << 9);
		s->dv = (double)(r << 9) * 1.5;
		break;
	case 3:
		s->iv = INT64_MAX - (int64_t)((r >> 20) % 3);
		s->dv = odd[(r >> 20) % (sizeof(odd) / sizeof(odd[0]))];
		break;
	case 4:
		s->iv = INT64_MIN + (int64_t)((r >> 20) % 3);
		s->dv = (r >> 20) & 1 ? INFINITY : NAN;
		break;
	default: /* one more byte at a time */
		s->iv = (int64_t)(1ull << ((r >> 20) % 63));
		s->dv = ldexp(1.0, (int)((r >> 20) % 200) - 100);
		break;
	}
}

/* Samples on N_TRACKS tracks, each with a clock of its own (so time goes
 * back between tracks: absolute timestamps), with steps of every length
 * up to 2^60, and simple events. */
static size_t workload(struct sample *v, size_t n)
{
	uint64_t x = 0xD6E8FEB86659FD93ull;
	uint64_t clk[N_TRACKS];
	for (int t = 0; t < N_TRACKS; t++)
		clk[t] = 1000000u * (uint64_t)(t + 1);
	for (size_t i = 0; i < n; i++) {
		uint64_t r = next(&x);
		int t = (int)(r % N_TRACKS);
		uint32_t k = (uint32_t)(r >> 8) % 1000;
		uint64_t step = k < 900   ? (r >> 20) % 100
				: k < 990 ? (r >> 20) % (1u << 30)
				: k < 998 ? (r >> 20) % (1ull << 40)
					  : 1ull << (50 + (r >> 20) % 10);
		clk[t] += step;
		if (clk[t] > (uint64_t)INT64_MAX)
			clk[t] = (uint64_t)INT64_MAX - (r >> 20) % 1000;
		v[i].ts = clk[t];
		v[i].track = (r >> 30) % 16 == 0 ? -1 : t;
		value(&x, &v[i]);
	}
	return n;
}

struct pair {
	struct ptw_writer *w;
	struct ptw_seq *s;
	uint64_t tracks[N_TRACKS];
	uint64_t other; /* a slice track */
};

/* ring_bytes > 0: a flight recorder of that size, else a writer to path.
 * The samples go on the writer's simulation sequence ('shared': as the
 * converters write them) or on a sequence with a default slice track. */
static void open_pair(struct pair *p, const char *path,
		      const struct ptw_writer_options *o, uint64_t ring_bytes,
		      int shared)
{
	struct ptw_error err;
	p->w = ring_bytes ? ptw_i_writer_open_recorder(o, ring_bytes, &err)
			  : ptw_writer_open(path, o, &err);
	cr_assert_not_null(p->w, "%s", err.msg);
	uint64_t proc = ptw_writer_add_process_track(p->w, 7, "p");
	cr_assert(proc);
	for (int t = 0; t < N_TRACKS; t++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "counter %d", t);
		p->tracks[t] = ptw_writer_add_counter_track(p->w, nm, NULL,
							    proc, -1);
		cr_assert(p->tracks[t]);
	}
	p->other = ptw_writer_add_thread_track(p->w, 7, 8, "t");
	cr_assert(p->other);
	p->s = shared ? ptw_writer_sim_seq(p->w)
		      : ptw_writer_add_seq(p->w, p->other);
	cr_assert_not_null(p->s);
}

static void close_pair(struct pair *p, const char *path, uint64_t ring_bytes)
{
	if (ring_bytes) {
		FILE *f = fopen(path, "wb");
		cr_assert_not_null(f);
		struct ptw_i_trace_stats st = {0};
		cr_assert_eq(ptw_i_writer_snapshot(p->w, fileno(f), &st), 0);
		cr_assert_eq(fclose(f), 0);
	}
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(p->w, &err), 0, "%s", err.msg);
}

/* Writes v[i] one by one (the single path). */
static int write_one(struct pair *p, const struct sample *v)
{
	if (v->track < 0)
		return ptw_seq_simple(p->s, PTW_SIMPLE_INSTANT, p->other, v->ts,
				      NULL, "an instant");
	uint64_t t = p->tracks[v->track];
	return v->is_int ? ptw_seq_counter_int(p->s, t, v->ts, v->iv)
			 : ptw_seq_counter_double(p->s, t, v->ts, v->dv);
}

static struct sample samples[N_SAMPLES];

/* The workload one by one into one writer, and in runs (of random
 * lengths, up to what ptw_seq_ctr_begin allows, with simple events and
 * single samples between them) into the other. */
static void write_both(const struct ptw_writer_options *o,
		       uint64_t ring_bytes, int shared, const char *tag)
{
	size_t n = workload(samples, N_SAMPLES);
	char pa[128], pb[128];
	snprintf(pa, sizeof(pa), "/tmp/ptw_test_ctr_%s_one_%d.pftrace", tag,
		 (int)getpid());
	snprintf(pb, sizeof(pb), "/tmp/ptw_test_ctr_%s_run_%d.pftrace", tag,
		 (int)getpid());
	struct pair a, b;
	open_pair(&a, pa, o, ring_bytes, shared);
	open_pair(&b, pb, o, ring_bytes, shared);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(write_one(&a, &samples[i]), 0, "sample %zu", i);
	struct ptw_seq_ctr_known known[N_TRACKS];
	for (int t = 0; t < N_TRACKS; t++)
		cr_assert(ptw_seq_ctr_known(b.s, b.tracks[t], &known[t]));
	uint64_t x = 12345, in_runs = 0, full_runs = 0, refused = 0;
	size_t i = 0;
	while (i < n) {
		struct ptw_seq_ctr_run r;
		uint32_t want = 1 + (uint32_t)(next(&x) % 300);
		if (samples[i].track < 0 || !ptw_seq_ctr_begin(b.s, &r)) {
			refused += samples[i].track >= 0;
			cr_assert_eq(write_one(&b, &samples[i]), 0);
			i++;
			continue;
		}
		uint8_t *p = r.p, *last = NULL;
		uint64_t base = r.base;
		uint32_t k = 0;
		for (; i < n && k < r.max && k < want && samples[i].track >= 0;
		     i++, k++) {
			const struct sample *s = &samples[i];
			last = p;
			p = ptw_seq_ctr_put(p, s->ts, &base, &known[s->track],
					    s->is_int, s->iv, s->dv);
		}
		full_runs += k == r.max;
		in_runs += k;
		r.p = p;
		r.last = last;
		r.base = base;
		r.n = k;
		cr_assert_eq(ptw_seq_ctr_end(b.s, &r), 0, "flush failed");
	}
	close_pair(&a, pa, ring_bytes);
	close_pair(&b, pb, ring_bytes);
	cr_assert_gt(in_runs, n / 2, "%s: only %llu samples in runs", tag,
		     (unsigned long long)in_runs);
	if (o && o->checkpoint_packets)
		cr_assert_gt(refused, 0, "%s: no checkpoint in a run's way",
			     tag);
	if (o && o->flush_bytes)
		cr_assert_gt(full_runs, 0, "%s: no run filled up", tag);
	ptw_test_same_files_or_fail(pa, pb, tag);
}

Test(writer_ctr, runs_write_the_bytes_of_single_samples)
{
	struct ptw_writer_options o = {.checkpoint_packets = 300,
				       .flush_bytes = 3000};
	write_both(&o, 0, 1, "shared");
	write_both(&o, 0, 0, "own");
	write_both(NULL, 0, 1, "default");
}

Test(writer_ctr, runs_write_the_bytes_of_single_samples_compressed)
{
	struct ptw_writer_options o = {.checkpoint_packets = 500,
				       .flush_bytes = 5000,
				       .compress = PTW_COMPRESS_DEFLATE};
	write_both(&o, 0, 1, "deflate");
	o.compress = PTW_COMPRESS_ZSTD;
	write_both(&o, 0, 1, "zstd");
}

Test(writer_ctr, runs_write_the_bytes_of_single_samples_with_a_machine_id)
{
	struct ptw_writer_options o = {.checkpoint_packets = 300,
				       .flush_bytes = 3000,
				       .machine_id = 4000000000u,
				       .machine_name = "node-17"};
	write_both(&o, 0, 1, "machine");
	write_both(&o, 64u << 10, 1, "machine-ring");
}

Test(writer_ctr, runs_write_the_bytes_of_single_samples_flight_recorder)
{
	struct ptw_writer_options o = {.flush_bytes = 4096};
	write_both(&o, 64u << 10, 1, "ring");
}

/* Known bytes are made only for a counter track of the writer. */
Test(writer_ctr, known_bytes_only_for_counter_tracks)
{
	char pa[128];
	snprintf(pa, sizeof(pa), "/tmp/ptw_test_ctr_known_%d.pftrace",
		 (int)getpid());
	struct pair p;
	open_pair(&p, pa, NULL, 0, 1);
	struct ptw_seq_ctr_known k;
	cr_assert(ptw_seq_ctr_known(p.s, p.tracks[0], &k));
	cr_assert(!ptw_seq_ctr_known(p.s, p.other, &k), "a slice track");
	cr_assert(!ptw_seq_ctr_known(p.s, 0, &k));
	cr_assert(!ptw_seq_ctr_known(p.s, 999999, &k), "no such track");
	close_pair(&p, pa, 0);
	unlink(pa);
}
