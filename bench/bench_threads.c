/* bench_threads.c - what tracing costs a program with many threads: the
 * extra wall time of a short-lived thread that logs a little, and the peak
 * memory of many threads alive at once.
 *
 * Prints `name value unit` lines:
 *   thread_start_us            extra wall time per short-lived thread when
 *                              a session runs: 5,000 threads, at most 100
 *                              alive, each 10 BEGIN/END pairs + 1 counter
 *                              (traced minus untraced wall time, / threads;
 *                              median of the alternated rounds)
 *   thread_wall_s_untraced / _traced   the two wall times of the median round
 *   rss_mb_1000_threads        peak RSS (VmHWM) of a process whose 1,000
 *                              threads are alive at once and log 10 pairs
 *                              each, a session running (_untraced: the same
 *                              without a session)
 *   rss_mb_2000_threads        the same with 2,000 threads
 * Each memory figure comes from a fresh child process (fork), so that
 * one workload's peak does not hide another's. Every run checks that the
 * trace holds every event (ptw_get_stats: events written, none dropped).
 * PTW_BENCH_QUICK=1 runs a short version (fewer threads).
 * SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/support/bench_clock.h"
#include "ptw/tracer.h"

#define PAIRS 10u
#define ALIVE 100u /* short-lived threads alive at once */

static void die(const char *what)
{
	fprintf(stderr, "bench_threads: %s\n", what);
	exit(1);
}

/* ---- short-lived threads ----------------------------------------------- */

static void log_some(void)
{
	for (unsigned i = 0; i < PAIRS; i++) {
		PTW_BEGIN("threads", "work");
		PTW_END("threads");
	}
	PTW_COUNTER_INT("threads", "done", 1);
}

static void *short_worker(void *arg)
{
	(void)arg;
	log_some();
	return NULL;
}

/* n threads, at most ALIVE at once (joined in creation order). */
static void run_short(unsigned n)
{
	pthread_t th[ALIVE];
	for (unsigned i = 0; i < n; i++) {
		if (i >= ALIVE)
			pthread_join(th[i % ALIVE], NULL);
		if (pthread_create(&th[i % ALIVE], NULL, short_worker, NULL))
			die("pthread_create");
	}
	for (unsigned i = n > ALIVE ? n - ALIVE : 0; i < n; i++)
		pthread_join(th[i % ALIVE], NULL);
}

static char out_path[64];

static void start_or_die(void)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = out_path;
	cfg.clock = PTW_CLOCK_FASTEST;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	struct ptw_error err;
	if (ptw_start_ex(&cfg, &err) != 0)
		die(err.msg);
}

/* Stops and checks that the trace holds every event logged. */
static void stop_and_check(uint64_t want)
{
	struct ptw_stats st;
	if (ptw_stop() != 0)
		die("ptw_stop failed");
	ptw_get_stats(&st);
	if (st.events != want || st.dropped) {
		fprintf(stderr, "bench_threads: %llu events written, %llu dropped, %llu logged\n",
			(unsigned long long)st.events,
			(unsigned long long)st.dropped,
			(unsigned long long)want);
		exit(1);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void bench_short(unsigned n, unsigned rounds)
{
	uint64_t d[16], un[16], tr[16];
	for (unsigned r = 0; r < rounds; r++) {
		uint64_t t0 = now_ns();
		run_short(n);
		un[r] = now_ns() - t0;
		start_or_die();
		t0 = now_ns();
		run_short(n);
		tr[r] = now_ns() - t0;
		stop_and_check((uint64_t)n * (2 * PAIRS + 1));
		d[r] = tr[r] > un[r] ? tr[r] - un[r] : 0;
	}
	/* the median round by extra time */
	uint64_t s[16];
	memcpy(s, d, sizeof(s));
	qsort(s, rounds, sizeof(s[0]), cmp_u64);
	unsigned m = 0;
	for (unsigned r = 0; r < rounds; r++)
		if (d[r] == s[rounds / 2])
			m = r;
	printf("thread_start_us %.1f us\n", (double)d[m] / 1e3 / n);
	printf("thread_wall_s_untraced %.3f s\n", (double)un[m] / 1e9);
	printf("thread_wall_s_traced %.3f s\n", (double)tr[m] / 1e9);
}

/* ---- many threads alive at once ---------------------------------------- */

static pthread_barrier_t logged;

static void *alive_worker(void *arg)
{
	(void)arg;
	log_some();
	pthread_barrier_wait(&logged); /* all alive and logged... */
	pthread_barrier_wait(&logged); /* ...until the peak is taken */
	return NULL;
}

static double vm_hwm_mb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kb = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lf kB", &kb) == 1)
			break;
	fclose(f);
	return kb / 1024.0;
}

/* In a child: n threads alive, each logs; prints the peak RSS. */
static void alive_child(unsigned n, int traced, const char *name)
{
	pthread_t *th = calloc(n, sizeof(*th));
	if (!th || pthread_barrier_init(&logged, NULL, n + 1))
		die("out of memory");
	if (traced)
		start_or_die();
	for (unsigned i = 0; i < n; i++) {
		if (pthread_create(&th[i], NULL, alive_worker, NULL))
			die("pthread_create");
	}
	pthread_barrier_wait(&logged);
	if (traced && ptw_flush() != 0) /* the backend's share of the peak */
		die("ptw_flush failed");
	double mb = vm_hwm_mb();
	pthread_barrier_wait(&logged);
	for (unsigned i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (traced)
		stop_and_check((uint64_t)n * (2 * PAIRS + 1));
	printf("%s%s %.1f MB\n", name, traced ? "" : "_untraced", mb);
	fflush(stdout);
	free(th);
}

static void bench_alive(unsigned n, int traced, const char *name)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		alive_child(n, traced, name);
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		die("a child failed");
}

int main(void)
{
	int quick = getenv("PTW_BENCH_QUICK") != NULL;
	snprintf(out_path, sizeof(out_path), "/tmp/ptw_bench_threads_%d.pftrace",
		 (int)getpid());
	/* children first: the parent has not traced yet */
	bench_alive(quick ? 100 : 1000, 0, "rss_mb_1000_threads");
	bench_alive(quick ? 100 : 1000, 1, "rss_mb_1000_threads");
	if (!quick)
		bench_alive(2000, 1, "rss_mb_2000_threads");
	bench_short(quick ? 300 : 5000, quick ? 1 : 3);
	unlink(out_path);
	return 0;
}
