/* bench_tracer.c - what does an instrumentation macro cost the producer,
 * how fast does the backend drain, how big is the trace; and the same
 * workload written as Chrome JSON lines with fprintf, for comparison.
 *
 * Prints `name value unit` lines. Producer figures are per event, median
 * and p99 over many timed runs of PTW_BENCH_RUN_EVENTS events each (the
 * backend drains concurrently, as in real use). PTW_BENCH_QUICK=1 runs a
 * short version (well under 2 s).
 * SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/support/bench_clock.h"
#include "ptw/tracer.h"
#include "lib/tracer/tracer_internal.h" /* ptw_tr_test_hold */

#define RUN_EVENTS 256 /* events per timed run (nesting stays < 512) */
#define MIN_RING_SLOTS 64u /* ring_slots: a power of two >= 64 */

static int quick;

struct dist {
	double *v;
	size_t n, cap;
};

static void dist_add(struct dist *d, double x)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 1024;
		d->v = realloc(d->v, d->cap * sizeof(*d->v));
		if (!d->v) {
			fprintf(stderr, "bench_tracer: out of memory\n");
			exit(1);
		}
	}
	d->v[d->n++] = x;
}

static void dist_print(struct dist *d, const char *name)
{
	if (!d->n)
		return;
	qsort(d->v, d->n, sizeof(*d->v), cmp_double);
	double med = d->v[d->n / 2];
	double p99 = d->v[(size_t)((double)(d->n - 1) * 0.99)];
	printf("%s %.2f ns\n", name, med);
	printf("%s_p99 %.2f ns\n", name, p99);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* Median, min and max of a few whole runs (each long; the spread shows
 * how busy the machine was). */
static void dist_print_spread(struct dist *d, const char *name,
			      const char *unit, const char *fmt)
{
	if (!d->n)
		return;
	qsort(d->v, d->n, sizeof(*d->v), cmp_double);
	char f[64];
	snprintf(f, sizeof(f), "%%s%%s %s %%s\n", fmt);
	printf(f, name, "", d->v[d->n / 2], unit);
	printf(f, name, "_min", d->v[0], unit);
	printf(f, name, "_max", d->v[d->n - 1], unit);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

static char out_dir[64];

static enum ptw_overflow start_overflow = PTW_OVERFLOW_DROP;

static enum ptw_mode start_mode = PTW_MODE_STREAM;

static void start(const char *tag, enum ptw_clock clock, uint32_t slots,
		  int compress)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s.pftrace", out_dir, tag);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = start_mode;
	cfg.output_path = start_mode == PTW_MODE_RING ? NULL : path;
	cfg.clock = clock;
	cfg.ring_slots = slots;
	struct ptw_writer_options wo = {0};
	wo.compress = compress;
	cfg.writer = &wo;
	cfg.overflow = start_overflow;
	struct ptw_error err;
	if (ptw_start_ex(&cfg, &err) != 0) {
		fprintf(stderr, "bench_tracer: %s\n", err.msg);
		exit(1);
	}
}

static void stop(void)
{
	struct ptw_error err;
	if (ptw_stop_ex(&err) != 0) {
		fprintf(stderr, "bench_tracer: %s\n", err.msg);
		exit(1);
	}
}

/* Keeps the ring from filling across runs (untimed). */
static void settle(unsigned run)
{
	if ((run & 63) == 63)
		ptw_flush();
}

/* ---- workloads ----------------------------------------------------------- */

struct kinds {
	struct dist pair, begin, end, instant, counter, dyn, fmt;
};

static void run_kinds(struct kinds *k, unsigned runs, int all)
{
	for (unsigned r = 0; r < runs; r++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < RUN_EVENTS / 2; i++) {
			PTW_BEGIN("bench", "pair");
			PTW_END("bench");
		}
		uint64_t t1 = now_ns();
		dist_add(&k->pair, (double)(t1 - t0) / RUN_EVENTS);
		settle(r);
		if (!all)
			continue;
		t0 = now_ns();
		for (int i = 0; i < RUN_EVENTS; i++)
			PTW_BEGIN("bench", "begin");
		t1 = now_ns();
		for (int i = 0; i < RUN_EVENTS; i++)
			PTW_END("bench");
		uint64_t t2 = now_ns();
		dist_add(&k->begin, (double)(t1 - t0) / RUN_EVENTS);
		dist_add(&k->end, (double)(t2 - t1) / RUN_EVENTS);
		t0 = now_ns();
		for (int i = 0; i < RUN_EVENTS; i++)
			PTW_INSTANT("bench", "instant");
		t1 = now_ns();
		for (int i = 0; i < RUN_EVENTS; i++)
			PTW_COUNTER_INT("bench", "counter", i);
		t2 = now_ns();
		dist_add(&k->instant, (double)(t1 - t0) / RUN_EVENTS);
		dist_add(&k->counter, (double)(t2 - t1) / RUN_EVENTS);
		settle(r);
		/* a run-time name: copied (_DYN), or formatted first (_FMT) */
		t0 = now_ns();
		for (int i = 0; i < RUN_EVENTS; i++)
			PTW_INSTANT_DYN("bench", "request 1234567");
		t1 = now_ns();
		for (int i = 0; i < RUN_EVENTS; i++)
			PTW_INSTANT_FMT("bench", "request %d", 1234567 - i);
		t2 = now_ns();
		dist_add(&k->dyn, (double)(t1 - t0) / RUN_EVENTS);
		dist_add(&k->fmt, (double)(t2 - t1) / RUN_EVENTS);
		settle(r);
	}
}

static void print_kinds(struct kinds *k, const char *suffix)
{
	char n[96];
	snprintf(n, sizeof(n), "producer_ns_per_event_%s", suffix);
	dist_print(&k->pair, n);
	snprintf(n, sizeof(n), "producer_ns_begin_%s", suffix);
	dist_print(&k->begin, n);
	snprintf(n, sizeof(n), "producer_ns_end_%s", suffix);
	dist_print(&k->end, n);
	snprintf(n, sizeof(n), "producer_ns_instant_%s", suffix);
	dist_print(&k->instant, n);
	snprintf(n, sizeof(n), "producer_ns_counter_%s", suffix);
	dist_print(&k->counter, n);
	snprintf(n, sizeof(n), "producer_ns_instant_dyn_%s", suffix);
	dist_print(&k->dyn, n);
	snprintf(n, sizeof(n), "producer_ns_instant_fmt_%s", suffix);
	dist_print(&k->fmt, n);
}

struct two {
	pthread_barrier_t *bar;
	struct kinds k;
	unsigned runs;
};

static void *two_worker(void *p)
{
	struct two *t = p;
	pthread_barrier_wait(t->bar);
	run_kinds(&t->k, t->runs, 1);
	return NULL;
}

/* Registers the calling thread's ring and lets the backend create its
 * track (outside the timing), then logs 'pairs' BEGIN/END pairs as fast
 * as possible. Returns the time the logging began. */
static uint64_t warm_then_log_pairs(uint32_t pairs)
{
	PTW_INSTANT("bench", "warm-up");
	ptw_flush();
	uint64_t t0 = now_ns();
	for (uint32_t i = 0; i < pairs; i++) {
		PTW_BEGIN("bench", "pair");
		PTW_END("bench");
	}
	return t0;
}

/* One thread logging n BEGIN/END events in a tight loop into a
 * default-size ring, lossless (PTW_OVERFLOW_WAIT): the producer runs at
 * the backend's pace once the ring is full, so this is the sustained cost
 * per event, from the first event until ptw_stop returns. Median of
 * 'runs' sessions. */
static void bench_sustained(uint32_t n, unsigned runs)
{
	struct dist d = {0};
	for (unsigned r = 0; r < runs; r++) {
		start_overflow = PTW_OVERFLOW_WAIT;
		start("sustained", PTW_CLOCK_FASTEST, 0, 0);
		start_overflow = PTW_OVERFLOW_DROP;
		uint64_t t0 = warm_then_log_pairs(n / 2);
		stop();
		uint64_t t1 = now_ns();
		dist_add(&d, (double)(t1 - t0) / (double)n);
		struct ptw_stats st;
		ptw_get_stats(&st);
		if (st.dropped)
			printf("bench_dropped_events_sustained %llu events\n",
			       (unsigned long long)st.dropped);
	}
	dist_print_spread(&d, "producer_ns_per_event_1t_sustained", "ns",
			  "%.2f");
}

/* Two threads logging begin/end pairs at once, for the trace size. */
struct size2 {
	pthread_barrier_t *bar;
	uint32_t pairs;
};

static void *size2_worker(void *p)
{
	struct size2 *s = p;
	PTW_INSTANT("bench", "warm-up"); /* registers the ring */
	pthread_barrier_wait(s->bar);
	for (uint32_t i = 0; i < s->pairs; i++) {
		PTW_BEGIN("bench", "drain");
		PTW_END("bench");
	}
	return NULL;
}

/* Bytes per event of n begin/end events from two producer threads at
 * once into rings of 'slots' (0: default), lossless, printed as 'name'. */
static void size_2t(const char *name, enum ptw_clock clock, uint32_t slots,
		    uint32_t n)
{
	start_overflow = PTW_OVERFLOW_WAIT;
	start("size_2t", clock, slots, 0);
	start_overflow = PTW_OVERFLOW_DROP;
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, 2);
	struct size2 s = {&bar, n / 4};
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, size2_worker, &s);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	stop();
	struct ptw_stats st;
	ptw_get_stats(&st);
	printf("%s %.2f bytes\n", name,
	       (double)st.bytes_written / (double)st.events);
	if (st.dropped)
		printf("bench_dropped_events_%s %llu events\n", name,
		       (unsigned long long)st.dropped);
}

/* Bytes per event with two producer threads. Default-size rings: the
 * producers wait for the backend, which keeps up. Rings that hold every
 * event ("lagging", as in a burst): the producers never wait and the
 * backend drains far behind them, one ring after the other, so the two
 * timelines reach the writer far out of step; each sequence's
 * checkpoints read its own time, so both cost what one thread costs. */
static void bench_size_2t(uint32_t n, uint32_t n_lagging)
{
	size_2t("tracer_bytes_per_event_2t", PTW_CLOCK_FASTEST, 0, n);
	n = n_lagging;
	uint32_t slots = MIN_RING_SLOTS;
	while (slots < n / 2 + 64) /* per thread: its events and a warm-up */
		slots *= 2;
	size_2t("tracer_bytes_per_event_2t_lagging", PTW_CLOCK_FASTEST, slots,
		n);
	size_2t("tracer_bytes_per_event_2t_lagging_monotonic",
		PTW_CLOCK_MONOTONIC, slots, n);
}

/* Same slices as fprintf'd Chrome JSON lines (what one would otherwise
 * write by hand), with the same clock read per event. */
static void bench_json(unsigned runs)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/bench.json", out_dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror("bench_tracer: json output");
		exit(1);
	}
	fputs("[\n", f);
	struct dist d = {0};
	for (unsigned r = 0; r < runs; r++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < RUN_EVENTS / 2; i++) {
			fprintf(f, "{\"name\":\"pair\",\"cat\":\"bench\",\"ph\":\"B\","
				   "\"ts\":%.3f,\"pid\":1,\"tid\":1},\n",
				(double)now_ns() / 1000.0);
			fprintf(f, "{\"ph\":\"E\",\"ts\":%.3f,\"pid\":1,\"tid\":1},\n",
				(double)now_ns() / 1000.0);
		}
		uint64_t t1 = now_ns();
		dist_add(&d, (double)(t1 - t0) / RUN_EVENTS);
	}
	fputs("{}]\n", f);
	if (fclose(f) != 0) {
		perror("bench_tracer: json output");
		exit(1);
	}
	dist_print(&d, "json_writer_ns_per_event_1t");
	unlink(path);
}

int main(void)
{
	quick = getenv("PTW_BENCH_QUICK") != NULL;
	unsigned runs = quick ? 200 : 4000;
	snprintf(out_dir, sizeof(out_dir), "/tmp/ptw_bench_tracer_XXXXXX");
	if (!mkdtemp(out_dir)) {
		perror("bench_tracer: mkdtemp");
		return 1;
	}
	uint32_t slots = 1u << 18;

	/* disabled: tracing not started, then a disabled category; median
	 * of many short runs (robust against a busy machine) */
	{
		const long per_run = 200000;
		unsigned druns = quick ? 50 : 400;
		struct dist d = {0};
		for (unsigned r = 0; r < druns; r++) {
			uint64_t t0 = now_ns();
			for (long i = 0; i < per_run; i++) {
				PTW_BEGIN("bench", "off");
				PTW_END("bench");
			}
			uint64_t t1 = now_ns();
			dist_add(&d, (double)(t1 - t0) / (2.0 * (double)per_run));
		}
		dist_print(&d, "producer_ns_one_site_disabled_off");
		start("disabled", PTW_CLOCK_MONOTONIC, slots, 0);
		ptw_set_category_enabled("off", 0);
		for (unsigned r = 0; r < druns / 4; r++) {
			uint64_t t0 = now_ns();
			for (long i = 0; i < per_run; i++) {
				PTW_BEGIN("off", "off");
				PTW_END("off");
			}
			uint64_t t1 = now_ns();
			dist_add(&d, (double)(t1 - t0) / (2.0 * (double)per_run));
		}
		dist_print(&d, "producer_ns_one_site_disabled_category");
		stop();
		ptw_set_category_enabled("off", 1);
	}


	/* one thread, fastest clock (TSC when usable), per kind */
	struct ptw_stats st;
	{
		start("tsc", PTW_CLOCK_FASTEST, slots, 0);
		struct kinds k;
		memset(&k, 0, sizeof(k));
		run_kinds(&k, runs, 1);
		ptw_get_stats(&st);
		stop();
		print_kinds(&k, "1t");
		printf("tracer_clock_is_tsc %d bool\n", st.clock == PTW_CLOCK_TSC);
		if (st.tsc_hz)
			printf("tsc_hz %llu Hz\n", (unsigned long long)st.tsc_hz);
	}
	/* one thread, flight recorder (64 MiB ring): the producer's cost is
	 * the same; then the time of a snapshot of the full ring */
	{
		start_mode = PTW_MODE_RING;
		start("ring", PTW_CLOCK_FASTEST, slots, 0);
		start_mode = PTW_MODE_STREAM;
		struct kinds k;
		memset(&k, 0, sizeof(k));
		run_kinds(&k, runs, 0);
		dist_print(&k.pair, "producer_ns_per_event_1t_ring");
		/* fill the ring (and wrap it) before timing a snapshot */
		uint64_t fill = quick ? 200000 : 12000000;
		for (uint64_t i = 0; i < fill; i++) {
			PTW_BEGIN("bench", "fill");
			PTW_END("bench");
			if ((i & 16383) == 16383)
				ptw_flush();
		}
		ptw_flush();
		char path[160];
		snprintf(path, sizeof(path), "%s/snapshot.pftrace", out_dir);
		uint64_t t0 = now_ns();
		int rc = ptw_snapshot(path);
		uint64_t t1 = now_ns();
		struct stat sb;
		if (rc || stat(path, &sb) != 0) {
			fprintf(stderr, "bench_tracer: snapshot failed (%d)\n", rc);
			exit(1);
		}
		stop();
		printf("snapshot_ms_64mib %.2f ms\n", (double)(t1 - t0) / 1e6);
		printf("snapshot_bytes %lld bytes\n", (long long)sb.st_size);
		unlink(path);
	}
	/* one thread, CLOCK_MONOTONIC */
	{
		start("mono", PTW_CLOCK_MONOTONIC, slots, 0);
		struct kinds k;
		memset(&k, 0, sizeof(k));
		run_kinds(&k, runs, 1);
		stop();
		print_kinds(&k, "1t_monotonic");
	}
	/* two producer threads at once (per-thread cost) */
	{
		start("2t", PTW_CLOCK_FASTEST, slots, 0);
		pthread_barrier_t bar;
		pthread_barrier_init(&bar, NULL, 2);
		struct two t[2];
		pthread_t th[2];
		for (int i = 0; i < 2; i++) {
			memset(&t[i], 0, sizeof(t[i]));
			t[i].bar = &bar;
			t[i].runs = runs / 2;
			pthread_create(&th[i], NULL, two_worker, &t[i]);
		}
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&bar);
		stop();
		/* merge both threads' runs */
		struct dist *a[] = {&t[0].k.pair, &t[0].k.begin, &t[0].k.end,
				    &t[0].k.instant, &t[0].k.counter};
		struct dist *b[] = {&t[1].k.pair, &t[1].k.begin, &t[1].k.end,
				    &t[1].k.instant, &t[1].k.counter};
		for (size_t j = 0; j < 5; j++) {
			for (size_t i = 0; i < b[j]->n; i++)
				dist_add(a[j], b[j]->v[i]);
			free(b[j]->v);
		}
		print_kinds(&t[0].k, "2t");
	}
	/* Backend throughput and trace size. backend_events_per_s: N
	 * begin/end events logged while the backend is held
	 * (ptw_tr_test_hold), timed from its release until ptw_flush
	 * returns: the backend alone, encoding and writing to the file.
	 * tracer_events_per_s_concurrent: the same N logged as fast as
	 * possible while the backend drains, from the first event until
	 * ptw_flush returns (bounded by the producer's own cost). Medians
	 * of a few sessions; size: the last one's. */
	for (int compress = 0; compress <= 1; compress++) {
		uint32_t n = quick ? (1u << 18) : (1u << 21);
		struct dist d = {0}, dc = {0};
		unsigned bruns = compress || quick ? 1 : 5;
		for (unsigned r = 0; r < bruns; r++) {
			start(compress ? "size_deflate" : "size",
			      PTW_CLOCK_FASTEST, n * 2, compress);
			uint64_t t0 = warm_then_log_pairs(n / 2);
			ptw_flush();
			uint64_t t1 = now_ns();
			dist_add(&dc, (double)n * 1e9 / (double)(t1 - t0));
			atomic_store(&ptw_tr_test_hold, 1);
			for (uint32_t i = 0; i < n / 2; i++) {
				PTW_BEGIN("bench", "pair");
				PTW_END("bench");
			}
			atomic_store(&ptw_tr_test_hold, 0);
			uint64_t t2 = now_ns();
			ptw_flush();
			uint64_t t3 = now_ns();
			stop();
			dist_add(&d, (double)n * 1e9 / (double)(t3 - t2));
		}
		ptw_get_stats(&st);
		if (compress) {
			free(d.v);
			free(dc.v);
		} else {
			dist_print_spread(&d, "backend_events_per_s", "events/s",
					  "%.0f");
			dist_print_spread(&dc, "tracer_events_per_s_concurrent",
					  "events/s", "%.0f");
		}
		printf("%s %.2f bytes\n",
		       compress ? "tracer_bytes_per_event_deflate"
				: "tracer_bytes_per_event",
		       (double)st.bytes_written / (double)st.events);
		if (st.dropped)
			printf("bench_dropped_events %llu events\n",
			       (unsigned long long)st.dropped);
	}
	bench_sustained(quick ? (1u << 18) : (1u << 23), quick ? 1 : 5);
	bench_size_2t(quick ? (1u << 18) : (1u << 25),
		      quick ? (1u << 18) : (1u << 23));
	bench_json(runs);

	char path[128];
	const char *tags[] = {"disabled", "tsc", "mono", "2t", "size", "size_deflate",
			      "size_2t", "sustained"};
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s.pftrace", out_dir, tags[i]);
		unlink(path);
	}
	rmdir(out_dir);
	return 0;
}
