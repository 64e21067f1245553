/* bench_stack.c - what a callstack costs: the producer's time for a
 * PTW_INSTANT_STACK that captures 16 frames against a PTW_INSTANT at the
 * same depth, and the trace bytes of a repeated stack (interned: after its
 * first event it costs its callstack_iid). Built with frame pointers for
 * the frames it captures (__builtin_frame_address keeps them).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/support/bench_clock.h"
#include "ptw/tracer.h"

#define EVENTS 2000u   /* per timed batch (the ring holds them all) */
#define BATCHES 200u
#define KEEP() __asm__ volatile("" ::: "memory")

static int use_stack;

static __attribute__((noinline)) void leaf_batch(void)
{
	(void)__builtin_frame_address(0); /* a frame of its own */
	if (use_stack)
		for (unsigned i = 0; i < EVENTS; i++)
			PTW_INSTANT_STACK("bench", "e");
	else
		for (unsigned i = 0; i < EVENTS; i++)
			PTW_INSTANT("bench", "e");
	KEEP();
}

/* 'd' frames between the caller and leaf_batch */
static __attribute__((noinline)) void down(int d)
{
	(void)__builtin_frame_address(0);
	if (d > 0)
		down(d - 1);
	else
		leaf_batch();
	KEEP();
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Median ns per event over BATCHES batches; the file's size in *bytes. */
static double run(int stack, int depth, const char *path, off_t *bytes)
{
	struct ptw_config cfg = {.output_path = path,
				 .overflow = PTW_OVERFLOW_WAIT,
				 .ring_slots = 1u << 16};
	if (ptw_start(&cfg) != 0) {
		fprintf(stderr, "bench_stack: ptw_start failed\n");
		exit(1);
	}
	use_stack = stack;
	static uint64_t t[BATCHES];
	for (unsigned b = 0; b < BATCHES; b++) {
		uint64_t t0 = now_ns();
		down(depth);
		t[b] = now_ns() - t0;
		ptw_flush(); /* the backend drains between batches */
	}
	ptw_stop();
	struct stat st;
	*bytes = stat(path, &st) == 0 ? st.st_size : 0;
	qsort(t, BATCHES, sizeof(t[0]), cmp_u64);
	return (double)t[BATCHES / 2] / EVENTS;
}

int main(void)
{
	char path[] = "/tmp/ptw_bench_stack_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	/* run > down x14 > leaf_batch: 16 frames (main, built without a
	 * frame pointer, ends the walk; checked in trace_processor) */
	int depth = 12;
	off_t plain_bytes, stack_bytes;
	double plain = 0, stack = 0;
	for (int rep = 0; rep < 3; rep++) { /* alternated, best of 3 */
		double p = run(0, depth, path, &plain_bytes);
		double s = run(1, depth, path, &stack_bytes);
		plain = rep == 0 || p < plain ? p : plain;
		stack = rep == 0 || s < stack ? s : stack;
	}
	int keep = getenv("PTW_BENCH_KEEP") != NULL; /* to look at it */
	if (keep)
		fprintf(stderr, "bench_stack: kept %s\n", path);
	else
		unlink(path);
	printf("producer_ns_instant_at_depth16 %.2f ns\n", plain);
	printf("producer_ns_instant_stack16 %.2f ns\n", stack);
	printf("producer_ns_per_stack_frame %.2f ns\n", (stack - plain) / 16);
	printf("trace_bytes_per_repeated_stack %.2f bytes\n",
	       (double)(stack_bytes - plain_bytes) / (BATCHES * EVENTS));
	return 0;
}
