/* bench_macros.c - what a disabled macro costs in the side-by-side loop
 * that compared ptw with the Perfetto SDK (its variants d0 and d1).
 *
 * The loop is the peer benchmark's, macro for macro: groups of 4 nested
 * PTW_BEGINs then 4 PTW_END("bench"); the BEGIN names cycle through 16
 * literals, one call site per name behind a switch; category "bench".
 * Prints `name value unit` lines, ns per macro (thread CPU time over the
 * loop; median, min and max of several runs):
 *   macro_ns_d0_not_started_peer_loop   tracing never started (d0)
 *   macro_ns_d1_category_off_peer_loop  session running, "bench" off (d1)
 * PTW_BENCH_QUICK=1 runs a short version.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptw/tracer.h"

#define NAMES(X)                                                      \
	X(0, "alpha") X(1, "bravo") X(2, "charlie") X(3, "delta")      \
	X(4, "echo") X(5, "foxtrot") X(6, "golf") X(7, "hotel")        \
	X(8, "india") X(9, "juliett") X(10, "kilo") X(11, "lima")      \
	X(12, "mike") X(13, "november") X(14, "oscar") X(15, "papa")
#define CASE(i, lit)                                                  \
	case i:                                                       \
		PTW_BEGIN("bench", lit);                              \
		break;

static inline __attribute__((always_inline)) void begin16(unsigned k)
{
	switch (k & 15u) { NAMES(CASE) }
}

/* n macros: n/8 groups of 4 BEGINs and 4 ENDs. */
static __attribute__((noinline)) void peer_loop(uint64_t n)
{
	unsigned k = 0;
	for (uint64_t g = 0; g < n / 8; g++) {
		begin16(k++);
		begin16(k++);
		begin16(k++);
		begin16(k++);
		PTW_END("bench");
		PTW_END("bench");
		PTW_END("bench");
		PTW_END("bench");
	}
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#define MAX_RUNS 64

/* Median, min and max ns per macro over 'runs' runs of n macros each. */
static void measure(const char *name, unsigned runs, uint64_t n)
{
	double v[MAX_RUNS];
	for (unsigned r = 0; r < runs; r++) {
		uint64_t t0 = cpu_ns();
		peer_loop(n);
		uint64_t t1 = cpu_ns();
		v[r] = (double)(t1 - t0) / (double)n;
	}
	qsort(v, runs, sizeof(v[0]), cmp_double);
	printf("%s %.3f ns\n", name, v[runs / 2]);
	printf("%s_min %.3f ns\n", name, v[0]);
	printf("%s_max %.3f ns\n", name, v[runs - 1]);
}

int main(void)
{
	int quick = getenv("PTW_BENCH_QUICK") != NULL;
	unsigned runs = quick ? 3 : 15;
	uint64_t n = quick ? 800000 : 40000000;

	measure("macro_ns_d0_not_started_peer_loop", runs, n);

	char path[] = "/tmp/ptw_bench_macros_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		perror("bench_macros: mkstemp");
		return 1;
	}
	close(fd);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.disabled_categories = "bench";
	struct ptw_error err;
	if (ptw_start_ex(&cfg, &err) != 0) {
		fprintf(stderr, "bench_macros: %s\n", err.msg);
		unlink(path);
		return 1;
	}
	measure("macro_ns_d1_category_off_peer_loop", runs, n);
	struct ptw_stats st;
	int rc = ptw_stop_ex(&err);
	if (rc != 0)
		fprintf(stderr, "bench_macros: %s\n", err.msg);
	ptw_get_stats(&st);
	unlink(path);
	if (st.events != 0) {
		fprintf(stderr, "bench_macros: %llu events in a disabled category\n",
			(unsigned long long)st.events);
		return 1;
	}
	return rc != 0;
}
