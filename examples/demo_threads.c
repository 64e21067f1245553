/* demo_threads.c - a multi-threaded program instrumented with the tracer
 * macros: named threads, nested scopes, counters, async slices across
 * threads, flows (between instants and slices), typed arguments,
 * run-time names, log lines, call sites (cfg.source_locations), tracks of
 * its own (the queue, the disk) with a counter unit and per-thread
 * counters.
 *
 *   demo-threads OUT.pftrace
 *
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptw/tracer.h"

#define N_WORKERS 4
#define N_JOBS 25

/* Tracks of the program's own (made once in main). */
static uint64_t queue_track, queue_depth, disk_track, jobs_done;
static pthread_mutex_t disk_mu = PTHREAD_MUTEX_INITIALIZER;

struct job_queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int jobs[N_JOBS];
	int head, tail, closed;
};

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	nanosleep(&ts, NULL);
}

static long fib(int n)
{
	PTW_SCOPE("compute", "fib");
	if (n < 2)
		return n;
	if (n > 14)
		return fib(n - 1) + fib(n - 2);
	long a = 0, b = 1;
	for (int i = 0; i < n; i++) {
		long t = a + b;
		a = b;
		b = t;
	}
	return a;
}

static int queue_pop(struct job_queue *q, int *job)
{
	PTW_SCOPE("queue", "pop");
	pthread_mutex_lock(&q->mu);
	while (q->head == q->tail && !q->closed)
		pthread_cond_wait(&q->cv, &q->mu);
	int ok = q->head != q->tail;
	if (ok) {
		*job = q->jobs[q->head++];
		PTW_TRACK_INSTANT_ARGS("queue", queue_track, "taken",
				       PTW_ARG_I64("job", *job));
		PTW_TRACK_COUNTER_INT("queue", queue_depth, q->tail - q->head);
	}
	pthread_mutex_unlock(&q->mu);
	return ok;
}

static void *worker(void *arg)
{
	struct job_queue *q = arg;
	static _Atomic int next_id;
	int me = atomic_fetch_add(&next_id, 1);
	char name[32];
	snprintf(name, sizeof(name), "worker %d", me);
	ptw_set_thread_name(name);

	int job = 0, done = 0;
	while (queue_pop(q, &job)) {
		/* Run-time slice name, copied into the ring; the slice
		 * continues the flow main's "enqueue" started. */
		char jname[32];
		snprintf(jname, sizeof(jname), "job %d", job);
		PTW_BEGIN_DYN_ARGS("work", jname,
				   PTW_ARG_FLOW((uint64_t)job + 1));
		long r = fib(16 + job % 4);
		PTW_COUNTER_INT("work", "last result", r);
		PTW_LOG(PTW_LOG_PRIO_INFO, "worker %d: job %d gave %ld", me,
			job, r);
		{
			/* one disk: its own track, one write at a time */
			PTW_SCOPE("io", "write result");
			pthread_mutex_lock(&disk_mu);
			PTW_TRACK_BEGIN("io", disk_track, "write");
			sleep_us(200);
			PTW_TRACK_END("io", disk_track);
			pthread_mutex_unlock(&disk_mu);
		}
		PTW_TRACK_COUNTER_INT("work", jobs_done, ++done);
		PTW_END_ARGS("work", PTW_ARG_I64("result", r),
			     PTW_ARG_I64("worker", me));
		/* The async operation was started by main for this job. */
		PTW_ASYNC_END("jobs", (uint64_t)job);
		PTW_FLOW_END("work", "done", (uint64_t)job + 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.pftrace\n", argv[0]);
		return 2;
	}
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = argv[1];
	cfg.clock = PTW_CLOCK_FASTEST;
	cfg.process_name = "demo-threads";
	/* every fib and "write result" slice with its callstack (select a
	 * slice in the UI: the recursion shows as fib > fib > ...) */
	cfg.stack_categories = "compute,io";
	cfg.stop_at_exit = 1;
	cfg.source_locations = 1; /* each slice's file, function, line */
	queue_track = ptw_track_new("job queue", 0);
	queue_depth = ptw_counter_track_new("depth", "jobs", queue_track, 0);
	disk_track = ptw_track_new("disk", 0);
	jobs_done = ptw_counter_track_new("jobs done", "jobs", 0, 1);
	struct ptw_error err;
	if (ptw_start_ex(&cfg, &err) != 0) {
		fprintf(stderr, "demo-threads: %s\n", err.msg);
		return 1;
	}
	ptw_set_thread_name("main");

	struct job_queue q;
	memset(&q, 0, sizeof(q));
	pthread_mutex_init(&q.mu, NULL);
	pthread_cond_init(&q.cv, NULL);

	pthread_t th[N_WORKERS];
	for (int i = 0; i < N_WORKERS; i++)
		if (pthread_create(&th[i], NULL, worker, &q) != 0) {
			fprintf(stderr, "demo-threads: pthread_create failed\n");
			return 1;
		}
	{
		PTW_SCOPE("main", "produce jobs");
		for (int j = 0; j < N_JOBS; j++) {
			PTW_INSTANT_ARGS("main", "enqueue", PTW_ARG_I64("job", j),
					 PTW_ARG_STR("kind", j % 2 ? "odd" : "even"),
					 PTW_ARG_DBL("weight", j * 0.5),
					 PTW_ARG_BOOL("urgent", j % 5 == 0));
			PTW_ASYNC_BEGIN("jobs", "job in flight", (uint64_t)j);
			PTW_FLOW_START("main", "enqueue", (uint64_t)j + 1);
			pthread_mutex_lock(&q.mu);
			q.jobs[q.tail++] = j;
			PTW_COUNTER_DOUBLE("main", "queue depth",
					   (double)(q.tail - q.head));
			PTW_TRACK_INSTANT_ARGS("queue", queue_track, "enqueued",
					       PTW_ARG_I64("job", j));
			PTW_TRACK_COUNTER_INT("queue", queue_depth,
					      q.tail - q.head);
			pthread_cond_signal(&q.cv);
			pthread_mutex_unlock(&q.mu);
			sleep_us(300);
		}
	}
	pthread_mutex_lock(&q.mu);
	q.closed = 1;
	pthread_cond_broadcast(&q.cv);
	pthread_mutex_unlock(&q.mu);
	for (int i = 0; i < N_WORKERS; i++)
		pthread_join(th[i], NULL);
	PTW_LOG(PTW_LOG_PRIO_WARN, "all %d jobs done by %d workers", N_JOBS,
		N_WORKERS);

	/* A category switched off at run time: these events vanish. */
	ptw_set_category_enabled("noisy", 0);
	for (int i = 0; i < 1000; i++)
		PTW_INSTANT("noisy", "spam");

	struct ptw_stats st;
	ptw_get_stats(&st);
	if (ptw_stop_ex(&err) != 0) {
		fprintf(stderr, "demo-threads: %s\n", err.msg);
		return 1;
	}
	ptw_get_stats(&st);
	printf("demo-threads: %s: %llu events, %llu dropped, %llu threads, "
	       "%llu bytes, clock %s\n",
	       argv[1], (unsigned long long)st.events,
	       (unsigned long long)st.dropped, (unsigned long long)st.threads,
	       (unsigned long long)st.bytes_written,
	       st.clock == PTW_CLOCK_TSC ? "tsc" : "monotonic");
	return 0;
}
