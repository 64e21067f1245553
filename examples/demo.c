/* demo.c - writes a trace that uses every writer feature.
 * SPDX-License-Identifier: Apache-2.0
 *
 *   build/bin/demo OUT.pftrace
 *
 * Two processes with several threads, nested slices, instants, int and
 * double counters, flows across threads, typed annotations, a root track
 * with ranked children, the simulation (cycle) and wall-clock sequences
 * plus one sequence per worker thread, a backwards timestamp, frequent
 * checkpoints and deflate, source locations on the frames and log lines
 * (ptw_seq_log). Open OUT.pftrace in ui.perfetto.dev. */
#include <stdio.h>
#include <stdlib.h>

#include "ptw/writer.h"

#define CHECK(expr)                                                          \
	do {                                                                 \
		if ((expr) != 0)                                             \
			goto fail;                                           \
	} while (0)
#define CHECK_UUID(var, expr)                                                \
	do {                                                                 \
		if (((var) = (expr)) == 0)                                   \
			goto fail;                                           \
	} while (0)

static const char *const stages[3] = {"update", "layout", "paint"};

/* Simulation domain: 8 operations on two cores from cycle 'c0' on (one
 * cycle is shown as 1 ns), with messages (flows) between the cores. */
static int sim_ops(struct ptw_seq *cyc, uint64_t core0, uint64_t core1,
		   uint64_t temp, uint64_t first, uint64_t c0)
{
	for (uint64_t i = first; i < first + 8; i++) {
		uint64_t c = c0 + (i - first) * 2000000;
		uint64_t core = i % 2 ? core1 : core0;
		uint64_t msg = 5000 + i;
		struct ptw_event op = {.track = core, .ts = c, .category = "sim",
				       .name = i % 3 ? "execute" : "fetch",
				       .flags = PTW_EV_STATIC_STRINGS};
		if (i % 10 == 0) { /* message to the other core */
			op.flow_ids = &msg;
			op.n_flow_ids = 1;
		}
		if (ptw_seq_slice_begin(cyc, &op))
			return -1;
		struct ptw_event sub = {.track = core, .ts = c + 100, .category = "sim",
					.name = "mem", .flags = PTW_EV_STATIC_STRINGS};
		if (ptw_seq_slice_begin(cyc, &sub))
			return -1;
		sub.ts = c + 700000;
		if (ptw_seq_slice_end(cyc, &sub))
			return -1;
		op.ts = c + 1500000;
		op.n_flow_ids = 0;
		if (ptw_seq_slice_end(cyc, &op))
			return -1;
		if (i % 10 == 1) {
			uint64_t m = msg - 1;
			struct ptw_event rx = {.track = core, .ts = c + 1600000,
					       .category = "sim", .name = "receive",
					       .terminating_flow_ids = &m,
					       .n_terminating_flow_ids = 1};
			if (ptw_seq_instant(cyc, &rx))
				return -1;
		}
		if (i % 4 == 0 &&
		    ptw_seq_counter_int(cyc, temp, c, 40 + (int64_t)(i % 17)))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.pftrace\n", argv[0]);
		return 2;
	}
	struct ptw_writer_options opt = {
		.checkpoint_packets = 64, /* small, to show checkpoints */
		.max_interned = 64,
		.flush_bytes = 16 * 1024,
		.compress = 1,
		.compress_level = 6,
	};
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(argv[1], &opt, &err);
	if (!w) {
		fprintf(stderr, "demo: %s\n", err.msg);
		return 1;
	}

	/* ---- tracks ---- */
	uint64_t render, r_main, r_worker, r_io, sim, core0, core1;
	uint64_t gpu, gpu_q0, gpu_q1, queue, load, temp;
	CHECK_UUID(render, ptw_writer_add_process_track(w, 100, "renderer"));
	CHECK_UUID(r_main, ptw_writer_add_thread_track(w, 100, 101, "main"));
	CHECK_UUID(r_worker, ptw_writer_add_thread_track(w, 100, 102, "worker"));
	CHECK_UUID(r_io, ptw_writer_add_thread_track(w, 100, 103, "io"));
	CHECK_UUID(sim, ptw_writer_add_process_track(w, 200, "simulator"));
	CHECK_UUID(core0, ptw_writer_add_thread_track(w, 200, 201, "core0"));
	CHECK_UUID(core1, ptw_writer_add_thread_track(w, 200, 202, "core1"));
	CHECK_UUID(gpu, ptw_writer_add_track(w, "GPU", 0, -1));
	CHECK_UUID(gpu_q1, ptw_writer_add_track(w, "GPU queue 1", gpu, 1));
	CHECK_UUID(gpu_q0, ptw_writer_add_track(w, "GPU queue 0", gpu, 0));
	CHECK_UUID(queue, ptw_writer_add_counter_track(w, "queue_depth", "items", render, -1));
	CHECK_UUID(load, ptw_writer_add_counter_track(w, "cpu_load", "%", render, -1));
	CHECK_UUID(temp, ptw_writer_add_counter_track(w, "core_temp", "C", sim, -1));
	CHECK(ptw_writer_rename_track(w, r_io, "io-thread"));

	struct ptw_seq *wall = ptw_writer_wall_seq(w);
	struct ptw_seq *cyc = ptw_writer_sim_seq(w);
	struct ptw_seq *worker = ptw_writer_add_seq(w, r_worker);
	if (!wall || !cyc || !worker)
		goto fail;

	/* ---- wall-clock domain: 40 frames of 16.6 ms ---- */
	for (uint64_t f = 0; f < 40; f++) {
		uint64_t t0 = 1000000 + f * 16600000;
		uint64_t flow = 1000 + f;
		char frame_name[32];
		snprintf(frame_name, sizeof(frame_name), "frame %llu",
			 (unsigned long long)f);
		struct ptw_arg fargs[] = {
			{.name = "frame", .type = PTW_ARG_TYPE_UINT, .v.u = f},
			{.name = "dropped", .type = PTW_ARG_TYPE_BOOL, .v.b = f % 7 == 3},
			{.name = "scale", .type = PTW_ARG_TYPE_DOUBLE, .v.d = 1.0 + (double)f / 40},
			{.name = "title", .type = PTW_ARG_TYPE_STRING, .v.s = frame_name},
			{.name = "delta", .type = PTW_ARG_TYPE_INT, .v.i = (int64_t)f - 20},
			{.name = "buffer", .type = PTW_ARG_TYPE_POINTER, .v.u = 0x7f0000001000u + f * 64},
		};
		static const struct ptw_source_location frame_site = {
			__FILE__, __func__, __LINE__};
		struct ptw_event frame = {.track = r_main, .ts = t0, .category = "gfx",
					  .name = "frame", .args = fargs, .n_args = 6,
					  .source = &frame_site};
		CHECK(ptw_seq_slice_begin(wall, &frame));
		CHECK(ptw_seq_counter_int(wall, queue, t0, (int64_t)(f * 7 % 13)));
		CHECK(ptw_seq_counter_double(wall, load, t0, 35.0 + (double)(f * 37 % 50) * 0.9));
		if (f % 5 == 0) {
			struct ptw_arg a = {.name = "bytes", .type = PTW_ARG_TYPE_INT,
					    .v.i = 4096 * (int64_t)(f + 1)};
			struct ptw_event io = {.track = r_io, .ts = t0 + 100000,
					       .category = "io", .name = "read done",
					       .args = &a, .n_args = 1};
			CHECK(ptw_seq_instant(wall, &io));
			/* a log line with its source location: android_logs
			 * and the UI's log panel */
			static const struct ptw_source_location here = {
				__FILE__, __func__, __LINE__};
			struct ptw_event lg = {.track = r_io, .ts = t0 + 150000,
					       .category = "log",
					       .name = "LogMessage",
					       .flags = PTW_EV_STATIC_STRINGS,
					       .source = &here};
			CHECK(ptw_seq_log(wall, &lg, f % 10 ? PTW_LOG_PRIO_INFO
							    : PTW_LOG_PRIO_WARN,
					  f % 10 ? "read done" : "read slow"));
		}
		CHECK(sim_ops(cyc, core0, core1, temp, f * 8, t0));
		uint64_t t = t0 + 200000;
		for (int st = 0; st < 3; st++) {
			struct ptw_event ev = {.track = r_main, .ts = t, .category = "gfx",
					       .name = stages[st],
					       .flags = PTW_EV_STATIC_STRINGS};
			if (st == 2) { /* paint hands work to the worker */
				ev.flow_ids = &flow;
				ev.n_flow_ids = 1;
			}
			CHECK(ptw_seq_slice_begin(wall, &ev));
			struct ptw_event inner = {.track = r_main, .ts = t + 100000,
						  .category = "gfx", .name = "alloc",
						  .flags = PTW_EV_STATIC_STRINGS};
			CHECK(ptw_seq_slice_complete(wall, &inner, 50000 + (uint64_t)st * 10000));
			ev.ts = t + 3000000;
			CHECK(ptw_seq_slice_end(wall, &ev));
			t += 3500000;
		}
		/* The worker, on its own sequence (default track = its thread). */
		struct ptw_event work = {.ts = t, .category = "gfx", .name = "rasterize",
					 .terminating_flow_ids = &flow,
					 .n_terminating_flow_ids = 1};
		CHECK(ptw_seq_slice_begin(worker, &work));
		struct ptw_event tile = {.ts = t + 1000, .category = "gfx", .name = "tile"};
		for (int k = 0; k < 4; k++) {
			CHECK(ptw_seq_slice_complete(worker, &tile, 900000));
			tile.ts += 1000000;
		}
		work.ts = tile.ts + 1000;
		CHECK(ptw_seq_slice_end(worker, &work));
		/* GPU queues (async-style named tracks). */
		struct ptw_event gq = {.track = f % 2 ? gpu_q1 : gpu_q0, .ts = t + 200000,
				       .category = "gpu", .name = "submit"};
		CHECK(ptw_seq_slice_complete(wall, &gq, 5000000));
		frame.ts = t0 + 16000000;
		frame.n_args = 0;
		CHECK(ptw_seq_slice_end(wall, &frame));
	}

	/* A late report of an earlier cycle: written with an absolute time. */
	struct ptw_event late = {.track = core0, .ts = 3000000, .category = "sim",
				 .name = "late interrupt"};
	CHECK(ptw_seq_instant(cyc, &late));

	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	if (ptw_writer_close(w, &err) != 0) {
		fprintf(stderr, "demo: %s\n", err.msg);
		return 1;
	}
	fprintf(stderr, "demo: %llu events, %llu packets, %llu checkpoints\n",
		(unsigned long long)st.events, (unsigned long long)st.packets,
		(unsigned long long)st.checkpoints);
	return 0;
fail:
	fprintf(stderr, "demo: %s\n", ptw_writer_error(w)->msg);
	ptw_writer_close(w, NULL);
	return 1;
}
