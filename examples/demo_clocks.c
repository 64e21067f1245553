/* demo_clocks.c - a simulator-style clock-stream trace: a CPU at 1.2 GHz,
 * a bus at 800 MHz and an accelerator at 1.5 GHz, each emitting events in
 * its own cycles, merged onto one time axis by watermarks.
 *
 *     demo-clocks OUT.pftrace [JOBS]
 *
 * Job j: the CPU issues a request (slice "issue", 60 CPU cycles = 50 ns)
 * at j * 200 ns, the bus carries it 60 ns later (slice "xfer", 64 bus
 * cycles = 80 ns), the accelerator runs it at +150 ns (slice "kernel", 60
 * accelerator cycles = 40 ns); flows link issue -> xfer -> kernel, a
 * counter tracks the bus queue. The accelerator also rings a "doorbell" at
 * exactly the instant the CPU issues: both land on the same nanosecond, and
 * the "phase" annotation puts the doorbell after the issue.
 *
 * Like a simulator, the demo advances each domain by a 1 us quantum in
 * turn (domain by domain, not in time order) and then promises the
 * watermark at the quantum's end.
 * SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ptw/clock_stream.h"
#include "ptw/writer.h"

#define QUANTUM_NS 1000u
#define JOB_NS 200u

struct demo {
	struct ptw_writer *w;
	struct ptw_clock_streams *cs;
	uint32_t cpu, bus, acc;
	uint64_t queue; /* counter track */
};

static int check(struct demo *d, int rc, const char *what)
{
	if (rc)
		fprintf(stderr, "demo-clocks: %s: %s\n", what,
			ptw_writer_error(d->w)->msg);
	return rc;
}

static int slice(struct demo *d, uint32_t st, uint64_t begin, uint64_t end,
		 const char *name, uint64_t flow_out, uint64_t flow_in,
		 uint64_t job)
{
	struct ptw_arg arg = { .name = "job", .type = PTW_ARG_TYPE_UINT, .v.u = job };
	struct ptw_clock_streams_event ev = {
		.cycle = begin, .category = "sim", .name = name,
		.args = &arg, .n_args = 1,
		.flags = PTW_EV_STATIC_STRINGS, /* literals */
		.flow_ids = flow_out ? &flow_out : NULL,
		.n_flow_ids = flow_out ? 1 : 0,
		.terminating_flow_ids = flow_in ? &flow_in : NULL,
		.n_terminating_flow_ids = flow_in ? 1 : 0,
	};
	int rc = ptw_clock_streams_slice_begin(d->cs, st, &ev);
	if (rc)
		return check(d, rc, "slice begin");
	struct ptw_clock_streams_event e = { .cycle = end };
	return check(d, ptw_clock_streams_slice_end(d->cs, st, &e), "slice end");
}

/* Job j's events of one domain; all at or after the job's start. */
static int cpu_job(struct demo *d, uint64_t j)
{
	uint64_t c = j * 240; /* 200 ns at 1.2 GHz */
	return slice(d, d->cpu, c, c + 60, "issue", 3 * j + 1, 0, j);
}

static int bus_job(struct demo *d, uint64_t j)
{
	uint64_t c = j * 160 + 48; /* +60 ns at 800 MHz */
	int rc = slice(d, d->bus, c, c + 64, "xfer", 3 * j + 2, 3 * j + 1, j);
	if (!rc)
		rc = ptw_clock_streams_counter_int(d->cs, d->bus, d->queue, c, 1);
	if (!rc)
		rc = ptw_clock_streams_counter_int(d->cs, d->bus, d->queue, c + 64, 0);
	return check(d, rc, "bus job");
}

static int acc_job(struct demo *d, uint64_t j)
{
	uint64_t c = j * 300; /* 200 ns at 1.5 GHz */
	/* Same instant as the CPU's issue; phase 1 sorts it after. */
	struct ptw_arg phase = { .name = "phase", .type = PTW_ARG_TYPE_UINT, .v.u = 1 };
	struct ptw_clock_streams_event bell = { .cycle = c, .category = "sim",
					.name = "doorbell", .args = &phase,
					.n_args = 1,
					.flags = PTW_EV_STATIC_STRINGS };
	int rc = ptw_clock_streams_instant(d->cs, d->acc, &bell);
	if (rc)
		return check(d, rc, "doorbell");
	return slice(d, d->acc, c + 225, c + 285, "kernel", 0, 3 * j + 2, j);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: demo-clocks OUT.pftrace [JOBS]\n");
		return 2;
	}
	uint64_t jobs = argc == 3 ? strtoull(argv[2], NULL, 10) : 2000;
	if (jobs == 0 || jobs > 10000000) {
		fprintf(stderr, "demo-clocks: JOBS must be 1..10000000\n");
		return 2;
	}

	struct ptw_error err;
	struct demo d;
	d.w = ptw_writer_open(argv[1], NULL, &err);
	if (!d.w) {
		fprintf(stderr, "demo-clocks: %s\n", err.msg);
		return 1;
	}
	d.cs = ptw_clock_streams_attach(d.w, NULL, &err);
	if (!d.cs) {
		fprintf(stderr, "demo-clocks: %s\n", err.msg);
		ptw_writer_close(d.w, NULL);
		return 1;
	}
	const struct ptw_clock_streams_domain cpu = { .name = "CPU 1.2 GHz",
					      .hz = 1200000000u };
	const struct ptw_clock_streams_domain bus = { .name = "Bus 800 MHz",
					      .hz = 800000000u };
	const struct ptw_clock_streams_domain acc = { .name = "Accelerator 1.5 GHz",
					      .hz = 1500000000u };
	if (check(&d, ptw_clock_streams_add(d.cs, &cpu, &d.cpu), "add cpu") ||
	    check(&d, ptw_clock_streams_add(d.cs, &bus, &d.bus), "add bus") ||
	    check(&d, ptw_clock_streams_add(d.cs, &acc, &d.acc), "add acc"))
		goto fail;
	d.queue = ptw_clock_streams_add_counter_track(d.cs, "bus queue",
						     "requests", 0, 3);
	if (!d.queue) {
		check(&d, PTW_ERR_INVALID, "counter track");
		goto fail;
	}

	/* Quantum q covers jobs starting in [q * 1 us, (q + 1) * 1 us). */
	uint64_t per_q = QUANTUM_NS / JOB_NS;
	for (uint64_t q = 0; q * per_q < jobs; q++) {
		uint64_t j0 = q * per_q, j1 = j0 + per_q;
		if (j1 > jobs)
			j1 = jobs;
		for (uint64_t j = j0; j < j1; j++)
			if (cpu_job(&d, j))
				goto fail;
		for (uint64_t j = j0; j < j1; j++)
			if (bus_job(&d, j))
				goto fail;
		for (uint64_t j = j0; j < j1; j++)
			if (acc_job(&d, j))
				goto fail;
		if (check(&d, ptw_clock_streams_advance_watermark(
				      d.cs, (q + 1) * QUANTUM_NS), "watermark"))
			goto fail;
	}

	struct ptw_clock_streams_stats st;
	ptw_clock_streams_get_stats(d.cs, &st);
	if (ptw_writer_close(d.w, &err)) {
		fprintf(stderr, "demo-clocks: %s\n", err.msg);
		return 1;
	}
	printf("demo-clocks: %s: %" PRIu64 " events from 3 clock domains, "
	       "peak %" PRIu64 " buffered (%" PRIu64 " bytes)\n", argv[1],
	       st.submitted, st.peak_records, st.peak_bytes);
	return 0;
fail:
	ptw_writer_close(d.w, NULL);
	return 1;
}
