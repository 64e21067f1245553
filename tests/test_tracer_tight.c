/* test_tracer_tight.c - the backend's fast ways (the batches' tight run,
 * the per-record batch way, ptw_seq_simple) write the very bytes of its
 * general path: records with chosen times go straight into the rings of
 * three producer threads (as the macros would write them) while the
 * backend drains at its own pace, once with cfg.general_path_only and once
 * without; every event packet of the threads' sequences must be the same,
 * byte for byte, and decode to the same events. The records mix long runs
 * of BEGIN/END pairs (the tight run) with what ends a run: time steps of
 * one to four varint bytes, times going back (and, with the TSC, ticks
 * before the calibration point), several names and categories, nesting,
 * ENDs with no open slice, counters, an event with an argument; with
 * frequent checkpoints and flushes, a small ring that wraps, the TSC above
 * and below 1 GHz and the monotonic clock, deflate, zstd and the flight
 * recorder. With sinks (the system sessions' outputs, tracer_sink.c), two
 * of them take one category each ("bench", "io") beside the file or
 * alone: their prepared runs pass over the other category's records. The
 * second comes in the middle of the first turn (alone, the first took
 * everything until then) and goes half-way (the first filters on
 * alone).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/sink_buf.h"
#include "reader/pb_wire.h"
#include "reader/trace_read.h"
#include "lib/tracer/tracer_internal.h"

#define THREADS 3u
#define BLOCKS 6u      /* turns of each thread, interleaved */
#define BLOCK 6000u    /* records of a thread per turn */

/* The fake TSC calibration of a session (set while the backend is held,
 * before any record): a time is mono0 + ((ticks - tsc0) * mult >> 32). */
#define TSC0 1000000000ull
#define MONO0 5000000000ull

static const char *const names[] = {"pair", "other", "third"};
/* A counter's record carries its site where others have the name. */
static struct ptw_i_site count_site = {0, PTW_I_K_COUNTER_INT, "", "count",
				       0, 0, {0, 0, 0}};
#define count_name ((const char *)(const void *)&count_site)
static const char *const cats[] = {"bench", "", "io"};

/* Writes one record into the calling thread's ring as the macros do (two
 * slots with an argument, 'with_arg' 1 an integer, 2 one of a type the
 * ring does not carry, which every output counts as invalid): waits
 * while the ring is full. */
static void put(uint8_t kind, const char *name, const char *cat, uint64_t ts,
		uint64_t val, int with_arg)
{
	struct ptw_ring *r = &ptw_i_self->ring;
	uint64_t n = with_arg ? 2 : 1;
	uint64_t i = atomic_load_explicit(&r->tail, memory_order_relaxed);
	while (i + n - atomic_load_explicit(&r->head, memory_order_acquire) >
	       r->capacity)
		sched_yield();
	struct ptw_i_rec rec;
	memset(&rec, 0, sizeof(rec));
	rec.ts = ts;
	rec.kind = kind;
	rec.name = name;
	if (kind <= PTW_I_K_INSTANT)
		rec.v.cat = cat;
	else
		rec.v.u = val;
	if (with_arg) {
		rec.nargs = 1;
		rec.extra = 1;
		struct ptw_i_arg_rec a;
		memset(&a, 0, sizeof(a));
		a.name = "n";
		a.type = with_arg == 1 ? PTW_ARG_TYPE_INT : PTW_I_ARG_UNKNOWN;
		a.val = val;
		memcpy(ptw_ring_slot_producer(r, i + 1), &a, sizeof(a));
	}
	memcpy(ptw_ring_slot_producer(r, i), &rec, sizeof(rec));
	ptw_ring_commit(r, i + n);
}

/* One thread's records, the same every session: a timeline from its own
 * start, steps mostly small. */
struct gen {
	uint64_t x;     /* random state */
	uint64_t t;     /* time (ticks or ns) */
	uint32_t depth; /* open BEGINs */
};

static uint32_t rnd(struct gen *g)
{
	g->x = g->x * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(g->x >> 33);
}

/* A block of records: 'steady' ones are mostly nested BEGIN/END pairs of
 * two names with small steps (long tight runs, broken now and then);
 * the others mix every kind of record and step. */
static void block(struct gen *g, unsigned k, int steady, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t r = rnd(g), p = r % 1000, q = rnd(g) % 1000;
		/* the step: 1, 2, 3 or 4 varint bytes */
		uint32_t s = !steady ? q
			     : q < 700 ? 0
			     : q < 990 ? 900
			     : q < 997 ? 960
				       : 995;
		g->t += s < 850 ? r % 100
			: s < 950 ? 128 + r % 16000
			: s < 990 ? 16384 + r % 2000000
				  : 3000000 + r % 100000000;
		uint64_t t = g->t;
		const char *name = names[(r >> 10) % 3];
		const char *cat = cats[(r >> 12) % 3];
		if (p == 999 || p == 998) {
			/* back in time; with the TSC before tsc0 at times */
			t = t > TSC0 / 2 ? t - TSC0 / 2 : 0;
			put(PTW_I_K_INSTANT, name, cat, t, 0, 0);
		} else if (p == 997) {
			put(PTW_I_K_COUNTER_INT, count_name, NULL, t, r, 0);
		} else if (p == 996) {
			put(PTW_I_K_INSTANT, name, cat, t, r, 1);
		} else if (p == 995) {
			put(PTW_I_K_INSTANT, name, cat, t, r, 2);
		} else if (p >= 990) {
			put(PTW_I_K_END, NULL, "bench", t, 0, 0); /* maybe none open */
			g->depth -= g->depth > 0;
		} else if (steady) {
			/* two levels: "pair" { "other" { } } */
			if (r % 4 == 0 && g->depth > 0) {
				put(PTW_I_K_END, NULL, "bench", t, 0, 0);
				g->depth--;
			} else if (g->depth < 2) {
				put(PTW_I_K_BEGIN, g->depth ? "other" : "pair",
				    "bench", t, 0, 0);
				g->depth++;
			} else {
				put(PTW_I_K_END, NULL, "bench", t, 0, 0);
				g->depth--;
			}
		} else if (p < 500 || (p < 900 && g->depth > 6)) {
			if (g->depth) {
				put(PTW_I_K_END, NULL, "bench", t, 0, 0);
				g->depth--;
			} else {
				put(PTW_I_K_BEGIN, k ? name : "pair", "bench", t,
				    0, 0);
				g->depth++;
			}
		} else if (p < 900) {
			put(PTW_I_K_BEGIN, name, cat, t, 0, 0);
			g->depth++;
		} else {
			put(PTW_I_K_INSTANT, name, cat, t, 0, 0);
		}
	}
}

/* n instants of three names in "bench" and three in "io", by turns,
 * with small steps: the tight run's keys (the backend's hot set holds a
 * name once, whatever its category). */
static void instants(struct gen *g, unsigned n)
{
	static const char *const io_names[] = {"read", "write", "sync"};
	for (unsigned i = 0; i < n; i++)
		put(PTW_I_K_INSTANT, i % 2 ? io_names[i % 3] : names[i % 3],
		    i % 2 ? "io" : "bench", g->t += 50, 0, 0);
}

/* The threads take turns (thread 0's block, 1's, 2's, 0's, ...) and stay
 * until the session stops, so that the backend makes their sequences in
 * the same order every session. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned turn;
	int quit;
	int flushes;
	/* a sink that comes after the first turn and goes half-way */
	const struct ptw_tr_sink_cfg *join;
} g_run = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, NULL};

static void wait_for(unsigned turn)
{
	pthread_mutex_lock(&g_run.mu);
	while (g_run.turn != turn && !(turn == ~0u && g_run.quit))
		pthread_cond_wait(&g_run.cv, &g_run.mu);
	pthread_mutex_unlock(&g_run.mu);
}

static void next_turn(void)
{
	pthread_mutex_lock(&g_run.mu);
	g_run.turn++;
	pthread_cond_broadcast(&g_run.cv);
	pthread_mutex_unlock(&g_run.mu);
}

static void *producer(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	struct gen g = {0x9E3779B97F4A7C15ull * (k + 1), TSC0 + 1000 * k, 0};
	for (unsigned b = 0; b < BLOCKS; b++) {
		wait_for(b * THREADS + k);
		/* between two turns: every record before is committed */
		static uint64_t joined;
		if (b == BLOCKS / 2 && k == 0 && g_run.join)
			cr_assert_eq(ptw_tr_sink_remove(joined), 0);
		if (b == 0) {
			/* registers the thread (its record has no time) */
			char name[16];
			snprintf(name, sizeof(name), "producer %u", k);
			cr_assert_eq(ptw_set_thread_name(name), 0);
		}
		int steady = (b + k) % 3 != 0;
		if (b == 0 && k == 0 && g_run.join) {
			/* mid-way through a mixed block (the others wait),
			 * with instants of both categories just before and
			 * after: the first sink took both alone, then only
			 * "bench" */
			block(&g, k, steady, BLOCK / 2);
			instants(&g, 300);
			cr_assert_eq(ptw_tr_sink_add(g_run.join, &joined), 0);
			instants(&g, 300);
			block(&g, k, steady, BLOCK - BLOCK / 2);
		} else {
			block(&g, k, steady, BLOCK);
		}
		while (b == BLOCKS - 1 && g.depth) {
			put(PTW_I_K_END, NULL, "bench", g.t += 10, 0, 0);
			g.depth--;
		}
		if (g_run.flushes && b % 2 == 1)
			ptw_flush(); /* drains and writes mid-way */
		next_turn();
	}
	wait_for(~0u);
	return NULL;
}

enum sinks { NO_SINKS, SINKS_BESIDE_FILE, SINKS_ONLY };

struct variant {
	enum ptw_clock clock;
	uint64_t mult;          /* TSC: ns per tick << 32 */
	int compress;
	enum ptw_mode mode;
	uint32_t machine_id;
	enum sinks sinks;
};

static const char *const sink_cats[2] = {"bench", "io"};

/* A session of variant v: the file's path (NULL: SINKS_ONLY), and the
 * sinks' bytes in sk[0] ("bench") and sk[1] ("io") */
static char *trace_it(const struct variant *v, int general_only,
		      struct ptw_stats *st, struct ptw_test_sink_buf sk[2])
{
	static char path[2][256];
	char *out = path[general_only];
	ptw_test_tmp_path(out, sizeof(path[0]), general_only ? "tight_g"
							      : "tight_f");
	struct ptw_writer_options wopt;
	memset(&wopt, 0, sizeof(wopt));
	wopt.checkpoint_packets = 1000;
	wopt.flush_bytes = 16384;
	wopt.compress = v->compress;
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = out;
	cfg.clock = v->clock;
	cfg.ring_slots = 512; /* wraps: the backend drains as they log */
	cfg.overflow = PTW_OVERFLOW_WAIT;
	cfg.writer = &wopt;
	cfg.mode = v->mode;
	cfg.machine_id = v->machine_id;
	cfg.general_path_only = general_only;
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	ptw_tr_test_hold = 1;
	/* with sinks, the drain's chunks end inside records now and then */
	uint32_t chunk = ptw_tr_sink_chunk;
	if (v->sinks != NO_SINKS)
		ptw_tr_sink_chunk = 7;
	struct ptw_tr_sink_cfg sc;
	uint64_t id = 0;
	int rc;
	if (v->sinks == SINKS_ONLY) {
		cfg.output_path = NULL;
		out = NULL;
		ptw_test_sink_cfg(&sc, &sk[0], &wopt, "tight", sink_cats[0]);
		rc = ptw_tr_start_muted(&cfg, NULL, NULL, &sc, &id, &err);
	} else {
		rc = ptw_start_ex(&cfg, &err);
	}
	if (rc != 0) {
		ptw_tr_test_hold = 0;
		if (v->clock == PTW_CLOCK_TSC)
			cr_skip_test("no usable TSC: %s", err.msg);
		cr_assert_fail("ptw_start: %s", err.msg);
	}
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	if (c->tr->use_tsc) {
		c->tr->tsc.tsc0 = TSC0;
		c->tr->tsc.mono0 = MONO0;
		c->tr->tsc.mult = v->mult;
	}
	pthread_mutex_unlock(&c->mu);
	ptw_tr_test_hold = 0;
	if (v->sinks == SINKS_BESIDE_FILE) {
		ptw_test_sink_cfg(&sc, &sk[0], &wopt, "tight", sink_cats[0]);
		cr_assert_eq(ptw_tr_sink_add(&sc, &id), 0);
	}
	static struct ptw_tr_sink_cfg join;
	ptw_test_sink_cfg(&join, &sk[1], &wopt, "tight", sink_cats[1]);
	g_run.join = v->sinks != NO_SINKS ? &join : NULL;
	g_run.turn = 0;
	g_run.quit = 0;
	g_run.flushes = v->mode == PTW_MODE_STREAM;
	pthread_t th[THREADS];
	for (unsigned k = 0; k < THREADS; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, producer,
					    (void *)(uintptr_t)k),
			     0);
	wait_for(BLOCKS * THREADS);
	cr_assert_eq(ptw_stop(), 0);
	ptw_tr_sink_chunk = chunk;
	cr_assert_eq(ptw_get_stats(st), 0);
	pthread_mutex_lock(&g_run.mu);
	g_run.quit = 1;
	pthread_cond_broadcast(&g_run.cv);
	pthread_mutex_unlock(&g_run.mu);
	for (unsigned k = 0; k < THREADS; k++)
		pthread_join(th[k], NULL);
	return out;
}

/* The TracePackets of sequence 'seq' in a plain (uncompressed) trace,
 * concatenated as their records (tag, length, bytes). */
static uint8_t *seq_packets(const uint8_t *d, size_t n, uint32_t seq,
			    size_t *out_len)
{
	uint8_t *out = malloc(n ? n : 1);
	cr_assert_not_null(out);
	size_t o = 0;
	const uint8_t *p = d, *end = d + n;
	while (p < end) {
		const uint8_t *rec = p;
		cr_assert_eq(*p++, 0x0A, "record tag");
		uint64_t len = 0;
		cr_assert_eq(ptw_wire_varint(&p, end, &len), 1);
		cr_assert_leq(len, (uint64_t)(end - p));
		struct ptw_wire_cursor cu;
		struct ptw_wire_field f;
		ptw_wire_init(&cu, p, (size_t)len);
		uint64_t id = 0;
		while (ptw_wire_next(&cu, &f) == 1)
			if (f.num == 10 && f.wt == 0)
				id = f.varint;
		if (id == seq) {
			memcpy(out + o, rec, (size_t)(p + len - rec));
			o += (size_t)(p + len - rec);
		}
		p += len;
	}
	*out_len = o;
	return out;
}

/* The sequences of events e[0..n) in order of first use; returns how
 * many (at most max). */
static size_t event_seqs(const struct ptw_trace_event *e, size_t n,
			 uint32_t *seqs, size_t max)
{
	size_t n_seqs = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < n_seqs && seqs[j] != e[i].seq_id)
			j++;
		if (j == n_seqs) {
			cr_assert_lt(n_seqs, max);
			seqs[n_seqs++] = e[i].seq_id;
		}
	}
	return n_seqs;
}

/* Traces tg (the general path's) and tf (the fast ways') of 'what' hold
 * the same events, sequence by sequence, and, when their bytes dg and df
 * are given (plain traces), the same packets on each sequence, byte for
 * byte. Returns the events. */
static size_t same_trace(struct ptw_trace *tg, struct ptw_trace *tf,
			 const uint8_t *dg, size_t lg, const uint8_t *df,
			 size_t lf, const char *what)
{
	size_t ng, nf;
	const struct ptw_trace_event *eg = ptw_trace_events(tg, &ng);
	const struct ptw_trace_event *ef = ptw_trace_events(tf, &nf);
	cr_assert_eq(nf, ng, "%s: %zu events, %zu by the general path", what,
		     nf, ng);
	/* the threads' sequences (their events' ones) */
	uint32_t seqs[THREADS + 4];
	size_t n_seqs = event_seqs(eg, ng, seqs, THREADS + 4);
	cr_assert_geq(n_seqs, THREADS, "%s", what);
	/* sequence by sequence, the same events in the same order */
	for (size_t s = 0; s < n_seqs; s++) {
		size_t i = 0, j = 0, n = 0;
		for (;;) {
			while (i < ng && eg[i].seq_id != seqs[s])
				i++;
			while (j < nf && ef[j].seq_id != seqs[s])
				j++;
			if (i == ng || j == nf)
				break;
			cr_assert_eq(ef[j].type, eg[i].type, "%s: seq %u event %zu",
				     what, seqs[s], n);
			cr_assert_eq(ef[j].ts, eg[i].ts, "%s: seq %u event %zu",
				     what, seqs[s], n);
			cr_assert_eq(ef[j].track_uuid, eg[i].track_uuid);
			cr_assert((!ef[j].name && !eg[i].name) ||
				  (ef[j].name && eg[i].name &&
				   strcmp(ef[j].name, eg[i].name) == 0));
			cr_assert((!ef[j].category && !eg[i].category) ||
				  (ef[j].category && eg[i].category &&
				   strcmp(ef[j].category, eg[i].category) == 0));
			cr_assert_eq(ef[j].n_args, eg[i].n_args);
			cr_assert_eq(ef[j].counter_int, eg[i].counter_int);
			i++, j++, n++;
		}
		cr_assert(i == ng && j == nf, "%s: seq %u: event counts differ",
			  what, seqs[s]);
	}
	cr_assert_eq(ptw_trace_get_stats(tf)->absolute_timestamps,
		     ptw_trace_get_stats(tg)->absolute_timestamps, "%s", what);
	/* plain output: the same bytes, packet by packet */
	for (size_t s = 0; dg && s < n_seqs; s++) {
		size_t ag, af;
		uint8_t *bg = seq_packets(dg, lg, seqs[s], &ag);
		uint8_t *bf = seq_packets(df, lf, seqs[s], &af);
		size_t at = 0;
		while (at < ag && at < af && bg[at] == bf[at])
			at++;
		cr_assert(ag == af && at == ag,
			  "%s: seq %u: bytes differ at %zu of %zu/%zu", what,
			  seqs[s], at, ag, af);
		cr_assert_gt(ag, 0);
		free(bg);
		free(bf);
	}
	return ng;
}

/* A sink's bytes as a trace, checked as a file's are (with 'flags',
 * PTW_CHECK_*). */
static struct ptw_trace *load_sink(const struct ptw_test_sink_buf *b,
				   uint32_t flags)
{
	struct ptw_trace *t = ptw_test_load_mem_or_fail(b->p, b->n);
	struct ptw_error err;
	cr_assert_eq(ptw_trace_check(t, flags, &err), 0, "a sink's trace: %s",
		     err.msg);
	return t;
}

static void same_bytes_and_events(const struct variant *v)
{
	struct ptw_stats sg, sf;
	struct ptw_test_sink_buf skg[2] = {{0}}, skf[2] = {{0}};
	char *pg = trace_it(v, 1, &sg, skg), *pf = trace_it(v, 0, &sf, skf);
	cr_assert_eq(sf.events, sg.events);
	cr_assert_eq(sf.invalid, sg.invalid);
	cr_assert_gt(sg.invalid, 0); /* ENDs with no open slice */
	cr_assert_eq(sg.dropped + sf.dropped, 0);
	if (pg) {
		struct ptw_trace *tg = ptw_test_load_checked_or_fail(pg, 0);
		struct ptw_trace *tf = ptw_test_load_checked_or_fail(pf, 0);
		size_t lg = 0, lf = 0;
		uint8_t *dg = NULL, *df = NULL;
		if (v->compress == PTW_COMPRESS_NONE) {
			dg = ptw_test_read_file_or_fail(pg, &lg);
			df = ptw_test_read_file_or_fail(pf, &lf);
		}
		size_t n = same_trace(tg, tf, dg, lg, df, lf, "file");
		cr_assert_gt(n, (size_t)THREADS * BLOCKS * BLOCK * 9 / 10);
		cr_assert_gt(ptw_trace_get_stats(tg)->absolute_timestamps, 0);
		free(dg);
		free(df);
		ptw_trace_free(tg);
		ptw_trace_free(tf);
		unlink(pg);
		unlink(pf);
	}
	for (unsigned k = 0; v->sinks != NO_SINKS && k < 2; k++) {
		/* the one that goes half-way leaves slices open */
		uint32_t flags = k ? PTW_CHECK_ALLOW_OPEN : 0;
		struct ptw_trace *tg = load_sink(&skg[k], flags);
		struct ptw_trace *tf = load_sink(&skf[k], flags);
		size_t n = same_trace(tg, tf, skg[k].p, skg[k].n, skf[k].p,
				      skf[k].n, sink_cats[k]);
		/* each took part of the records, passed over the rest */
		cr_assert_gt(n, 1000u, "sink %s", sink_cats[k]);
		cr_assert_lt(n, (size_t)THREADS * BLOCKS * BLOCK, "sink %s",
			     sink_cats[k]);
		ptw_trace_free(tg);
		ptw_trace_free(tf);
		free(skg[k].p);
		free(skf[k].p);
	}
}

#define MULT_2_5GHZ ((uint64_t)(0.4 * 4294967296.0)) /* 0.4 ns per tick */
#define MULT_300MHZ ((uint64_t)(3.3 * 4294967296.0)) /* above 2^32 */

/* A test of one variant: its fields in struct variant's order. */
#define VARIANT_TEST(name, ...)                                              \
	Test(tracer_tight, name)                                             \
	{                                                                    \
		struct variant v = {__VA_ARGS__};                            \
		same_bytes_and_events(&v);                                   \
	}

VARIANT_TEST(same_bytes_tsc, PTW_CLOCK_TSC, MULT_2_5GHZ,
	     PTW_COMPRESS_NONE, PTW_MODE_STREAM, 0, NO_SINKS)

VARIANT_TEST(same_bytes_tsc_below_1ghz, PTW_CLOCK_TSC, MULT_300MHZ,
	     PTW_COMPRESS_NONE, PTW_MODE_STREAM, 0, NO_SINKS)

VARIANT_TEST(same_bytes_monotonic_machine_id, PTW_CLOCK_MONOTONIC, 0,
	     PTW_COMPRESS_NONE, PTW_MODE_STREAM, 4000000000u, NO_SINKS)

VARIANT_TEST(same_events_deflate, PTW_CLOCK_TSC, MULT_2_5GHZ,
	     PTW_COMPRESS_DEFLATE, PTW_MODE_STREAM, 0, NO_SINKS)

VARIANT_TEST(same_events_zstd, PTW_CLOCK_MONOTONIC, 0,
	     PTW_COMPRESS_ZSTD, PTW_MODE_STREAM, 0, NO_SINKS)

/* two sinks beside the file: their runs pass over what they do not take */
VARIANT_TEST(same_bytes_sinks_beside_a_file, PTW_CLOCK_TSC, MULT_2_5GHZ,
	     PTW_COMPRESS_NONE, PTW_MODE_STREAM, 0, SINKS_BESIDE_FILE)

/* the sinks alone (system mode without a file of its own) */
VARIANT_TEST(same_bytes_sinks_only, PTW_CLOCK_MONOTONIC, 0,
	     PTW_COMPRESS_NONE, PTW_MODE_STREAM, 0, SINKS_ONLY)

/* the flight recorder (its runs keep the open slices), a window that
 * holds every event */
VARIANT_TEST(same_bytes_flight_recorder, PTW_CLOCK_TSC, MULT_2_5GHZ,
	     PTW_COMPRESS_NONE, PTW_MODE_RING, 0, NO_SINKS)

/* The flight recorder with the smallest window: many cuts, and at each
 * the thread's slices open at the window's start are described in its
 * prefix from what the runs stored per BEGIN. Depth-0 slices rotate
 * through three names (all kept prepared), each with a child: the
 * window's depth-0 slices, the first one from the prefix, must keep the
 * rotation. Four sessions each way. */
static void cut_rotation(int general_only, unsigned session)
{
	static const char *const top[] = {"pair", "other", "third"};
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "tight_cut");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.clock = PTW_CLOCK_MONOTONIC;
	cfg.ring_slots = 4096;
	cfg.mode = PTW_MODE_RING;
	cfg.ring_bytes = 64u * 1024u;
	cfg.general_path_only = general_only;
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	cr_assert_eq(ptw_set_thread_name("cut"), 0);
	uint64_t t = 1000000000ull;
	unsigned n = 60000 + 7919 * session; /* cuts fall elsewhere */
	for (unsigned i = 0; i < n; i++) {
		put(PTW_I_K_BEGIN, top[i % 3], "bench", t += 40, 0, 0);
		put(PTW_I_K_BEGIN, "child", "bench", t += 40, 0, 0);
		put(PTW_I_K_END, NULL, "bench", t += 40, 0, 0);
		put(PTW_I_K_END, NULL, "bench", t += 40, 0, 0);
	}
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_trace *tt = ptw_test_load_checked_or_fail(path, 0);
	struct ptw_tp_model *m = ptw_test_model_or_fail(tt);
	int prev = -1;
	size_t seen = 0;
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		if (s->depth != 0 || !s->name)
			continue;
		int k = -1;
		for (int j = 0; j < 3; j++)
			if (strcmp(s->name, top[j]) == 0)
				k = j;
		if (k < 0)
			continue;
		cr_assert_geq(s->dur, 0);
		int want = prev < 0 ? k : (prev + 1) % 3;
		if (prev >= 0)
			cr_assert_eq(k, want,
				     "%s: depth-0 slice %zu is %s after %s",
				     general_only ? "general" : "fast", seen,
				     top[k], top[prev]);
		prev = k;
		seen++;
	}
	cr_assert_gt(seen, 100);
	cr_assert_lt(seen, n / 2, "the window holds only the newest");
	ptw_tp_model_free(m);
	ptw_trace_free(tt);
	unlink(path);
}

Test(tracer_tight, flight_recorder_cuts_name_the_open_slices)
{
	for (unsigned s = 0; s < 4; s++) {
		cut_rotation(1, s);
		cut_rotation(0, s);
	}
}
