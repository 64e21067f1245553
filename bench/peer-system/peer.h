/* peer.h - what the two programs of the system-mode side-by-side share
 * (C and C++, header only, included once per program): the command line,
 * the producer threads and their timing, the wait for the session, and
 * the result line.
 *
 *   PROGRAM a|b|c EVENTS_PER_THREAD [key=value ...]
 *
 * a: one producer thread; b: one thread, an int64 argument per BEGIN;
 * c: two threads. The program connects to the service
 * ($PERFETTO_PRODUCER_SOCK_NAME), waits until a session enables category
 * "bench", runs the workload, prints "workload-done" on stderr, waits for
 * the session to stop (the caller stops it: the service then flushes us),
 * and prints one JSON line on stdout: each producer thread's CPU and wall
 * time over its loop, and the process's CPU time from the loop's start to
 * the session's end (the producer threads, and every thread of the
 * library that moved their events into the service's buffer).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_PEER_SYSTEM_PEER_H
#define PTW_PEER_SYSTEM_PEER_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/support/bench_clock.h"

#define PS_MAX_THREADS 2

static inline void ps_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

struct ps_args {
	int threads;
	int with_arg;
	uint64_t events;
	int argc;
	char **argv;
};

/* The value of key=value among the options, or def. */
static const char *ps_opt(const struct ps_args *a, const char *key,
			  const char *def)
{
	size_t kl = strlen(key);
	for (int i = 3; i < a->argc; i++)
		if (!strncmp(a->argv[i], key, kl) && a->argv[i][kl] == '=')
			return a->argv[i] + kl + 1;
	return def;
}

static void ps_parse(int argc, char **argv, struct ps_args *a)
{
	memset(a, 0, sizeof(*a));
	a->argc = argc;
	a->argv = argv;
	a->threads = 1;
	if (argc < 3) {
		fprintf(stderr, "usage: %s a|b|c EVENTS_PER_THREAD "
			"[key=value...]\n", argv[0]);
		exit(2);
	}
	if (!strcmp(argv[1], "b"))
		a->with_arg = 1;
	else if (!strcmp(argv[1], "c"))
		a->threads = 2;
	else if (strcmp(argv[1], "a")) {
		fprintf(stderr, "%s: variant must be a, b or c\n", argv[0]);
		exit(2);
	}
	char *end = NULL;
	a->events = strtoull(argv[2], &end, 10);
	if (!end || *end || a->events == 0 || a->events % 8) {
		fprintf(stderr, "%s: EVENTS_PER_THREAD must be a positive "
			"multiple of 8\n", argv[0]);
		exit(2);
	}
}

/* Polls enabled() every ms until it returns want; 0, or -1 after
 * timeout_ms. */
static int ps_wait(int (*enabled)(void), int want, int timeout_ms)
{
	for (int i = 0; i < timeout_ms; i++) {
		if (!!enabled() == want)
			return 0;
		ps_sleep_ms(1);
	}
	return -1;
}

struct ps_thread {
	pthread_t th;
	int idx;
	void (*fn)(uint64_t n);
	void (*warmup)(void);
	uint64_t n;
	pthread_barrier_t *bar;
	uint64_t cpu_ns, wall_ns;
};

static void *ps_thread_main(void *p)
{
	struct ps_thread *t = (struct ps_thread *)p;
	char name[16];
	snprintf(name, sizeof(name), "producer%d", t->idx);
	pthread_setname_np(pthread_self(), name);
	/* one untimed event outside "bench": the thread's own setup (ptw:
	 * its ring; the SDK: its trace writer) is not timed */
	t->warmup();
	pthread_barrier_wait(t->bar);
	uint64_t c0 = cpu_ns();
	uint64_t w0 = now_ns();
	t->fn(t->n);
	uint64_t w1 = now_ns();
	uint64_t c1 = cpu_ns();
	t->cpu_ns = c1 - c0;
	t->wall_ns = w1 - w0;
	return NULL;
}

/* Runs the workload on a->threads threads at once; *proc0 is the process
 * CPU time when they are released. */
static void ps_run(const struct ps_args *a, void (*plain)(uint64_t),
		   void (*arg)(uint64_t), void (*warmup)(void),
		   struct ps_thread *ts, uint64_t *proc0)
{
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)a->threads + 1);
	for (int i = 0; i < a->threads; i++) {
		ts[i].idx = i;
		ts[i].fn = a->with_arg ? arg : plain;
		ts[i].warmup = warmup;
		ts[i].n = a->events;
		ts[i].bar = &bar;
		if (pthread_create(&ts[i].th, NULL, ps_thread_main, &ts[i])) {
			fprintf(stderr, "pthread_create failed\n");
			exit(1);
		}
	}
	pthread_barrier_wait(&bar);
	*proc0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < a->threads; i++)
		pthread_join(ts[i].th, NULL);
	pthread_barrier_destroy(&bar);
}

/* What ps_measure measured. */
struct ps_result {
	struct ps_thread ts[PS_MAX_THREADS];
	uint64_t proc_cpu_ns; /* from the loop's start to the session's end */
	int ended;            /* the session ended within a minute */
};

/* The measured part of both programs: waits until enabled() (the
 * library's "bench" category is on), runs the workload, calls flush(),
 * says "workload-done" on stderr, waits for the session to end, and
 * fills *r. Returns r->ended (1 when the session ended, 0 if it did not
 * within a minute), or -1 if it did not start within a minute. */
static int ps_measure(const struct ps_args *a, int (*enabled)(void),
		      void (*flush)(void), void (*plain)(uint64_t),
		      void (*arg)(uint64_t), void (*warmup)(void),
		      struct ps_result *r)
{
	memset(r, 0, sizeof(*r));
	if (ps_wait(enabled, 1, 60000)) {
		fprintf(stderr, "%s: no session enabled category bench\n",
			a->argv[0]);
		return -1;
	}
	uint64_t p0 = 0;
	ps_run(a, plain, arg, warmup, r->ts, &p0);
	flush();
	fprintf(stderr, "workload-done\n");
	r->ended = ps_wait(enabled, 0, 60000) == 0;
	r->proc_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p0;
	return r->ended;
}

/* The result line; extra: "" or ",\"key\":value...". */
static void ps_print(const char *lib, const struct ps_args *a,
		     const struct ps_result *r, const char *extra)
{
	const struct ps_thread *ts = r->ts;
	printf("{\"lib\":\"%s\",\"variant\":\"%s\",\"events_per_thread\":%llu,"
	       "\"nthreads\":%d,\"threads\":[", lib, a->argv[1],
	       (unsigned long long)a->events, a->threads);
	for (int i = 0; i < a->threads; i++)
		printf("%s{\"cpu_ns\":%llu,\"wall_ns\":%llu}", i ? "," : "",
		       (unsigned long long)ts[i].cpu_ns,
		       (unsigned long long)ts[i].wall_ns);
	printf("],\"proc_cpu_ns\":%llu%s}\n",
	       (unsigned long long)r->proc_cpu_ns, extra);
	fflush(stdout);
}

#endif /* PTW_PEER_SYSTEM_PEER_H */
