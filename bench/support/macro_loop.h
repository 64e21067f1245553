/* macro_loop.h - the body of bench_macros (C) and bench_macros_cxx (C++):
 * what a macro costs in the side-by-side loop that compares ptw with the
 * Perfetto SDK (../shared/peer-bench: its variants d0, d1 and a), compiled
 * in the including file's language so that the C and the C++ macros are
 * measured alike.
 *
 * The loop is the peer benchmark's, macro for macro: groups of 4 nested
 * PTW_BEGINs then 4 PTW_END("bench"); the BEGIN names cycle through 16
 * literals, one call site per name behind a switch; category "bench".
 * Prints `name value unit` lines, ns per macro (producer thread CPU time
 * over the loop; median, min and max of several runs), the name ending in
 * BENCH_LANG ("" for C, "_cxx" for C++):
 *   producer_ns_per_event_disabled_off       tracing not started (d0)
 *   producer_ns_per_event_disabled_category  session on, "bench" off (d1)
 *   producer_ns_per_event_enabled_peer_loop  session on, "bench" on (a),
 *                                            fastest clock, nothing lost
 * PTW_BENCH_QUICK=1 runs a short version.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_BENCH_MACRO_LOOP_H
#define PTW_BENCH_MACRO_LOOP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/support/bench_clock.h"
#include "ptw/tracer.h"

#define ML_NAMES(X)                                                   \
	X(0, "alpha") X(1, "bravo") X(2, "charlie") X(3, "delta")      \
	X(4, "echo") X(5, "foxtrot") X(6, "golf") X(7, "hotel")        \
	X(8, "india") X(9, "juliett") X(10, "kilo") X(11, "lima")      \
	X(12, "mike") X(13, "november") X(14, "oscar") X(15, "papa")
#define ML_CASE(i, lit)                                               \
	case i:                                                       \
		PTW_BEGIN("bench", lit);                              \
		break;

static inline __attribute__((always_inline)) void ml_begin16(unsigned k)
{
	switch (k & 15u) { ML_NAMES(ML_CASE) }
}

/* n macros: n/8 groups of 4 BEGINs and 4 ENDs. */
static __attribute__((noinline)) void ml_peer_loop(uint64_t n)
{
	unsigned k = 0;
	for (uint64_t g = 0; g < n / 8; g++) {
		ml_begin16(k++);
		ml_begin16(k++);
		ml_begin16(k++);
		ml_begin16(k++);
		PTW_END("bench");
		PTW_END("bench");
		PTW_END("bench");
		PTW_END("bench");
	}
}

#define ML_MAX_RUNS 64

/* Median, min and max ns per macro over 'runs' runs of n macros each. */
static void ml_measure(const char *name, unsigned runs, uint64_t n)
{
	double v[ML_MAX_RUNS];
	for (unsigned r = 0; r < runs; r++) {
		uint64_t t0 = cpu_ns();
		ml_peer_loop(n);
		uint64_t t1 = cpu_ns();
		v[r] = (double)(t1 - t0) / (double)n;
	}
	qsort(v, runs, sizeof(v[0]), cmp_double);
	printf("%s%s %.3f ns\n", name, BENCH_LANG, v[runs / 2]);
	printf("%s%s_min %.3f ns\n", name, BENCH_LANG, v[0]);
	printf("%s%s_max %.3f ns\n", name, BENCH_LANG, v[runs - 1]);
}

/* One session around ml_measure: "bench" off (disabled != 0) or on.
 * Returns 0, or 1 with a message; *events gets the session's count. */
static int ml_session(const char *name, int disabled, unsigned runs,
		      uint64_t n, uint64_t *events)
{
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
	cfg.disabled_categories = disabled ? "bench" : NULL;
	cfg.clock = PTW_CLOCK_FASTEST;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	cfg.ring_slots = 1u << 20;
	struct ptw_error err;
	if (ptw_start_ex(&cfg, &err) != 0) {
		fprintf(stderr, "bench_macros: %s\n", err.msg);
		unlink(path);
		return 1;
	}
	ml_measure(name, runs, n);
	struct ptw_stats st;
	int rc = ptw_stop_ex(&err);
	if (rc != 0)
		fprintf(stderr, "bench_macros: %s\n", err.msg);
	ptw_get_stats(&st);
	unlink(path);
	*events = st.events;
	if (st.dropped) {
		fprintf(stderr, "bench_macros: %llu events lost\n",
			(unsigned long long)st.dropped);
		return 1;
	}
	return rc != 0;
}

static int ml_main(void)
{
	int quick = getenv("PTW_BENCH_QUICK") != NULL;
	unsigned runs = quick ? 3 : 15;
	uint64_t n = quick ? 800000 : 40000000;
	uint64_t events = 0;

	ml_measure("producer_ns_per_event_disabled_off", runs, n);
	if (ml_session("producer_ns_per_event_disabled_category", 1, runs, n,
		       &events))
		return 1;
	if (events != 0) {
		fprintf(stderr, "bench_macros: %llu events in a disabled category\n",
			(unsigned long long)events);
		return 1;
	}
	/* enabled: fewer events, the backend writes them all */
	uint64_t ne = quick ? 80000 : 4000000;
	if (ml_session("producer_ns_per_event_enabled_peer_loop", 0, runs, ne,
		       &events))
		return 1;
	if (events != (uint64_t)runs * (ne / 8 * 8)) {
		fprintf(stderr, "bench_macros: %llu events written, %llu logged\n",
			(unsigned long long)events,
			(unsigned long long)runs * (ne / 8 * 8));
		return 1;
	}
	return 0;
}

#endif /* PTW_BENCH_MACRO_LOOP_H */
