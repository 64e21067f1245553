/* bench_clock_stream.c - events per second through clock streams: four
 * clock domains, a watermark every 1,000 events, output to /dev/null.
 * Prints "name value unit" lines. PTW_BENCH_QUICK=1: a tiny run.
 * SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench/support/bench_clock.h"
#include "ptw/clock_stream.h"
#include "ptw/writer.h"

#define WATERMARK_EVERY 1000u

static int fail(struct ptw_writer *w, const char *what)
{
	fprintf(stderr, "bench_clock_stream: %s: %s\n", what,
		ptw_writer_error(w)->msg);
	ptw_writer_close(w, NULL);
	return 1;
}

int main(void)
{
	const char *quick = getenv("PTW_BENCH_QUICK");
	uint64_t total = quick && quick[0] == '1' ? 20000 : 2000000;

	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open("/dev/null", NULL, &err);
	if (!w) {
		fprintf(stderr, "bench_clock_stream: %s\n", err.msg);
		return 1;
	}
	struct ptw_clock_streams *cs = ptw_clock_streams_attach(w, NULL, &err);
	if (!cs) {
		fprintf(stderr, "bench_clock_stream: %s\n", err.msg);
		ptw_writer_close(w, NULL);
		return 1;
	}
	static const struct ptw_clock_streams_domain dom[4] = {
		{ .name = "cpu0", .hz = 1200000000ull },
		{ .name = "cpu1", .hz = 1200000000ull, .offset_ns = 3 },
		{ .name = "bus", .hz = 800000000ull },
		{ .name = "accel", .hz = 1500000000ull },
	};
	uint32_t st[4];
	for (int i = 0; i < 4; i++)
		if (ptw_clock_streams_add(cs, &dom[i], &st[i]))
			return fail(w, "add stream");
	uint64_t ctr = ptw_clock_streams_add_counter_track(cs, "queue", NULL, 0, -1);
	if (!ctr)
		return fail(w, "counter track");

	static const char *const names[] = { "fetch", "decode", "exec", "mem",
					     "retire", "stall" };
	/* Each domain's local time walks forward by 1..16 ns per event (the
	 * domains stay roughly in step, as in a simulator); its cycle count
	 * is that time in its own clock. */
	uint64_t t_ns[4] = { 0, 0, 0, 0 }, cycle[4] = { 0, 0, 0, 0 };
	uint64_t rnd = 88172645463325252ull;
	struct ptw_arg arg = { .name = "addr", .type = PTW_ARG_TYPE_POINTER };
	/* Names are literals: buffered by pointer, interned by pointer. */
	struct ptw_clock_streams_event ev = { .category = "sim", .args = &arg,
				      .n_args = 1,
				      .flags = PTW_EV_STATIC_STRINGS };
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < total; i++) {
		uint32_t d = (uint32_t)(i & 3);
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		t_ns[d] += 1 + (rnd & 15);
		cycle[d] = t_ns[d] * (dom[d].hz / 1000000u) / 1000u;
		int rc;
		if ((rnd >> 8) % 8 == 0) {
			rc = ptw_clock_streams_counter_int(cs, st[d], ctr, cycle[d],
							  (int64_t)(rnd & 63));
		} else {
			ev.cycle = cycle[d];
			ev.name = names[(rnd >> 16) % 6];
			arg.v.u = rnd & 0xffffff;
			rc = ptw_clock_streams_instant(cs, st[d], &ev);
		}
		if (rc)
			return fail(w, "event");
		if ((i + 1) % WATERMARK_EVERY == 0) {
			/* Every stream's next event is later than its current
			 * cycle, so the smallest current time is safe. */
			uint64_t wm = UINT64_MAX;
			for (int k = 0; k < 4; k++) {
				uint64_t ns;
				if (ptw_clock_streams_to_ns(cs, st[k], cycle[k], &ns))
					return fail(w, "to_ns");
				if (ns < wm)
					wm = ns;
			}
			if (ptw_clock_streams_advance_watermark(cs, wm))
				return fail(w, "watermark");
		}
	}
	struct ptw_clock_streams_stats s;
	ptw_clock_streams_get_stats(cs, &s);
	if (ptw_writer_close(w, &err)) {
		fprintf(stderr, "bench_clock_stream: close: %s\n", err.msg);
		return 1;
	}
	uint64_t dt = now_ns() - t0;
	printf("clock_stream_events_per_s %.0f events/s\n",
	       (double)total * 1e9 / (double)(dt ? dt : 1));
	printf("clock_stream_peak_bytes %" PRIu64 " bytes\n", s.peak_bytes);
	return 0;
}
