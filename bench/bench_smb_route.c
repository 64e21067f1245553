/* bench_smb_route.c - the system backend's own cost per packet: a
 * writer's output (BEGIN/END pairs from the tracer, one thread, as
 * bench_system logs them) routed into a shared memory buffer
 * (lib/shmem) that lives in private memory written once beforehand, so
 * that neither the service nor first touches of pages are in the figure.
 * Prints smb_route_ns_per_packet, and for scale memcpy_ns_per_packet
 * (the same bytes copied into the same buffer with one memcpy).
 * Thread CPU time, median of rounds. PTW_BENCH_QUICK=1: a short version.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench/support/bench_clock.h"
#include "lib/shmem/smb.h"
#include "ptw/tracer.h"

#define PAGE (32u * 1024u)

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n ? v[n / 2] : 0;
}

/* The trace file of 'events' BEGIN/END events logged by the tracer. */
static uint8_t *trace_bytes(uint32_t events, size_t *len)
{
	char path[] = "/tmp/ptw_bench_smb_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	close(fd);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.clock = PTW_CLOCK_BOOT;
	cfg.ring_slots = 1u << 22;
	if (ptw_start(&cfg) != 0)
		return NULL;
	for (uint32_t i = 0; i < events / 2; i++) {
		PTW_BEGIN("bench", "pair");
		PTW_END("bench");
		if ((i & 65535) == 65535)
			ptw_flush();
	}
	ptw_stop();
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	if (f && fseek(f, 0, SEEK_END) == 0) {
		long n = ftell(f);
		buf = n > 0 ? malloc((size_t)n) : NULL;
		rewind(f);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = buf ? (size_t)n : 0;
	}
	if (f)
		fclose(f);
	unlink(path);
	return buf;
}

int main(void)
{
	int quick = getenv("PTW_BENCH_QUICK") != NULL;
	uint32_t events = quick ? (1u << 17) : (1u << 20);
	unsigned rounds = quick ? 3 : 9;
	size_t len = 0;
	uint8_t *in = trace_bytes(events, &len);
	if (!in) {
		fprintf(stderr, "bench_smb_route: no input trace\n");
		return 1;
	}
	/* room for every packet with its chunks' headers and slack */
	size_t size = (len * 2 + PAGE - 1) / PAGE * PAGE;
	uint8_t *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	double *route = calloc(rounds, sizeof(double));
	double *copy = calloc(rounds, sizeof(double));
	if (!route || !copy)
		return 1;
	uint64_t packets = 0;
	for (unsigned r = 0; r < rounds; r++) {
		memset(mem, 0, size); /* also the pages' first writes */
		int err = 0;
		struct ptw_smb *smb = ptw_smb_create(mem, size, PAGE, 2, &err);
		struct ptw_smb_router *rt =
			smb ? ptw_smb_router_create(smb, 1, NULL) : NULL;
		if (!rt)
			return 1;
		uint64_t t0 = cpu_ns();
		if (ptw_smb_route(rt, in, len) != 0) {
			fprintf(stderr, "bench_smb_route: the trace does not "
				"route\n");
			return 1;
		}
		ptw_smb_router_flush(rt);
		uint64_t t1 = cpu_ns();
		struct ptw_smb_stats st;
		ptw_smb_get_stats(smb, &st);
		/* (the file's own TraceStats packet is refused, as it
		 * should be) */
		if (st.dropped || st.malformed) {
			fprintf(stderr, "bench_smb_route: %llu dropped, %llu "
				"malformed packets\n",
				(unsigned long long)st.dropped,
				(unsigned long long)st.malformed);
			return 1;
		}
		packets = st.packets;
		route[r] = (double)(t1 - t0) / (double)st.packets;
		ptw_smb_destroy(smb);
		t0 = cpu_ns();
		memcpy(mem, in, len);
		t1 = cpu_ns();
		copy[r] = (double)(t1 - t0) / (double)st.packets;
	}
	printf("smb_route_ns_per_packet %.2f ns\n", median(route, rounds));
	printf("memcpy_ns_per_packet %.2f ns\n", median(copy, rounds));
	printf("smb_route_packets %llu packets\n", (unsigned long long)packets);
	free(route);
	free(copy);
	munmap(mem, size);
	free(in);
	return 0;
}
