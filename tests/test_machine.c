/* test_machine.c - the machine options, decoded: machine_id on every
 * packet (plain, deflate and zstd batches, flight recorder, tracer), the
 * SystemInfo packet, REALTIME clock snapshots; and nothing of it in a
 * trace that sets no machine option.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "ptw/clock_stream.h"
#include "ptw/tracer.h"
#include "ptw/writer.h"
#include "ptw_trace.pb-c.h"
#include "support/ptw_test.h"

/* What the packets of a trace say about machines. */
struct seen {
	uint64_t packets;      /* TracePackets (compressed batches not counted) */
	uint64_t with_mid;     /* ... carrying machine_id == want_mid */
	uint64_t other_mid;    /* ... carrying another machine_id */
	uint32_t want_mid;
	uint64_t sysinfo;      /* SystemInfo packets */
	char name[64];         /* the last machine_name */
	char sysname[64];      /* the last utsname.sysname */
	uint64_t rt_snaps;     /* snapshots with REALTIME */
	int64_t rt_off_first;  /* REALTIME - BOOTTIME of the first and */
	int64_t rt_off_last;   /* last of them */
	uint64_t rt_boot_prev; /* BOOTTIME of the previous one */
	int rt_backwards;      /* one went back in BOOTTIME */
	uint64_t meta;         /* metadata (chrome_events) packets with the id */
	uint64_t outer_begins; /* BEGINs of category "outer" with an inline
				* name (a flight-recorder prefix) and the id */
	uint64_t overwritten;  /* TraceStats: bytes the ring overwrote */
};

/* TracePacket.chrome_events: the trace metadata. */
static int has_chrome_events(const Perfetto__Protos__TracePacket *p)
{
	return p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_CHROME_EVENTS;
}

static int on_packet(void *ctx, const struct ptw_trace_packet_info *info,
		     const void *pkt)
{
	struct seen *s = ctx;
	const Perfetto__Protos__TracePacket *p = pkt;
	if (!p || info->is_batch)
		return 0;
	s->packets++;
	int mine = p->has_machine_id && p->machine_id == s->want_mid;
	if (mine)
		s->with_mid++;
	else if (p->has_machine_id)
		s->other_mid++;
	if (mine && has_chrome_events(p))
		s->meta++;
	if (mine &&
	    p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT &&
	    p->track_event->type ==
		    PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN &&
	    p->track_event->name_field_case ==
		    PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME &&
	    p->track_event->n_categories == 1 &&
	    strcmp(p->track_event->categories[0], "outer") == 0)
		s->outer_begins++;
	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO) {
		const Perfetto__Protos__SystemInfo *si = p->system_info;
		s->sysinfo++;
		if (si->machine_name)
			snprintf(s->name, sizeof(s->name), "%s", si->machine_name);
		if (si->utsname && si->utsname->sysname)
			snprintf(s->sysname, sizeof(s->sysname), "%s",
				 si->utsname->sysname);
	}
	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT) {
		const Perfetto__Protos__ClockSnapshot *cs = p->clock_snapshot;
		uint64_t boot = 0, real = 0;
		int nb = 0, nr = 0;
		for (size_t i = 0; i < cs->n_clocks; i++) {
			if (cs->clocks[i]->clock_id == 6) {
				boot = cs->clocks[i]->timestamp;
				nb++;
			} else if (cs->clocks[i]->clock_id == 1) {
				real = cs->clocks[i]->timestamp;
				nr++;
			}
		}
		if (nb == 1 && nr == 1) {
			int64_t off = (int64_t)(real - boot);
			if (!s->rt_snaps++)
				s->rt_off_first = off;
			else if (boot < s->rt_boot_prev)
				s->rt_backwards = 1;
			s->rt_off_last = off;
			s->rt_boot_prev = boot;
		}
	}
	return 0;
}

/* Reads and checks (ptw_trace_check 'flags') the trace at 'path'. */
static void scan_flags(const char *path, struct seen *s, uint32_t want_mid,
		       unsigned flags)
{
	memset(s, 0, sizeof(*s));
	s->want_mid = want_mid;
	struct ptw_trace_options opt = {.on_packet = on_packet, .ctx = s};
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_file(path, &opt, &err);
	cr_assert_not_null(t, "%s: %s", path, err.msg);
	cr_assert_eq(ptw_trace_check(t, flags, &err), 0, "%s: %s", path,
		     err.msg);
	const struct ptw_trace_stats *st = ptw_trace_get_stats(t);
	if (st->n_buffers)
		s->overwritten = st->buf[0].bytes_overwritten;
	ptw_trace_free(t);
}

static void scan(const char *path, struct seen *s, uint32_t want_mid)
{
	scan_flags(path, s, want_mid, 0);
}

static void ok(struct ptw_writer *w, int rc)
{
	cr_assert_eq(rc, 0, "%s", ptw_writer_error(w)->msg);
}

/* A small trace: a process and a thread, slices, an instant with an
 * argument, a counter, enough events for several checkpoints and (with
 * a small flush size) several batches. */
static void write_trace(const char *path, const struct ptw_writer_options *o)
{
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t p = ptw_writer_add_process_track(w, 100, "proc");
	uint64_t t = ptw_writer_add_thread_track(w, 100, 101, "thr");
	uint64_t c = ptw_writer_add_counter_track(w, "queue", NULL, p, 0);
	cr_assert(p && t && c);
	struct ptw_seq *s = ptw_writer_add_seq(w, t);
	cr_assert_not_null(s);
	for (uint64_t i = 0; i < 500; i++) {
		struct ptw_arg a = {.name = "i", .type = PTW_ARG_TYPE_UINT, .v.u = i};
		struct ptw_event ev = {.ts = 1000 * i, .category = "c",
				       .name = i % 2 ? "odd" : "even",
				       .flags = PTW_EV_STATIC_STRINGS};
		ok(w, ptw_seq_slice_begin(s, &ev));
		ev.ts += 400;
		ok(w, ptw_seq_slice_end(s, &ev));
		ev.ts += 100;
		ev.args = &a;
		ev.n_args = 1;
		ev.name = "mark";
		ok(w, ptw_seq_instant(s, &ev));
		ok(w, ptw_seq_counter_int(s, c, ev.ts, (int64_t)i));
	}
	ok(w, ptw_writer_close(w, &err));
}

Test(machine, every_packet_carries_the_machine_id)
{
	static const int compress[] = {PTW_COMPRESS_NONE, PTW_COMPRESS_DEFLATE,
				       PTW_COMPRESS_ZSTD};
	for (size_t k = 0; k < 3; k++) {
		char path[256];
		ptw_test_tmp_path(path, sizeof(path), "machine-mid");
		struct ptw_writer_options o = {.checkpoint_packets = 64,
					       .flush_bytes = 4096,
					       .compress = compress[k],
					       .machine_id = 300000,
					       .machine_name = "rack7-node3"};
		write_trace(path, &o);
		struct seen s;
		scan(path, &s, 300000);
		cr_assert_gt(s.packets, 2000);
		cr_assert_eq(s.with_mid, s.packets, "compress %d: %llu of %llu",
			     compress[k], (unsigned long long)s.with_mid,
			     (unsigned long long)s.packets);
		cr_assert_eq(s.sysinfo, 1);
		cr_assert_str_eq(s.name, "rack7-node3");
		cr_assert_str_eq(s.sysname, "", "no utsname unless asked");
		cr_assert_eq(s.rt_snaps, 0, "no REALTIME unless asked");
		unlink(path);
	}
}

Test(machine, no_option_no_trace_change)
{
	char a[256], b[256];
	ptw_test_tmp_path(a, sizeof(a), "machine-none");
	ptw_test_tmp_path(b, sizeof(b), "machine-none");
	struct ptw_writer_options o = {.checkpoint_packets = 64};
	write_trace(a, &o);
	write_trace(b, NULL);
	struct seen s;
	scan(a, &s, 0);
	cr_assert_eq(s.with_mid + s.other_mid, 0);
	cr_assert_eq(s.sysinfo + s.rt_snaps, 0);
	/* the default writer's bytes do not depend on the new fields */
	o.checkpoint_packets = 0;
	write_trace(a, &o);
	size_t la, lb;
	uint8_t *da = ptw_test_read_file_or_fail(a, &la);
	uint8_t *db = ptw_test_read_file_or_fail(b, &lb);
	cr_assert(la == lb && memcmp(da, db, la) == 0);
	free(da);
	free(db);
	unlink(a);
	unlink(b);
}

Test(machine, uname_and_wall_realtime)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "machine-rt");
	struct ptw_writer_options o = {.machine_uname = 1, .wall_realtime = 1};
	struct timespec m0, r0;
	clock_gettime(CLOCK_MONOTONIC, &m0);
	clock_gettime(CLOCK_REALTIME, &r0);
	write_trace(path, &o);
	struct seen s;
	scan(path, &s, 0);
	struct utsname u;
	cr_assert_eq(uname(&u), 0);
	cr_assert_eq(s.with_mid + s.other_mid, 0, "no machine_id asked");
	cr_assert_eq(s.sysinfo, 1);
	cr_assert_str_eq(s.sysname, u.sysname);
	cr_assert_str_eq(s.name, "");
	cr_assert_geq(s.rt_snaps, 1);
	/* wall time 0 is the writer's open: REALTIME then is after r0 and
	 * before the trace was read back */
	struct timespec r1;
	clock_gettime(CLOCK_REALTIME, &r1);
	int64_t lo = (int64_t)r0.tv_sec * 1000000000 + r0.tv_nsec;
	int64_t hi = (int64_t)r1.tv_sec * 1000000000 + r1.tv_nsec;
	cr_assert(s.rt_off_first >= lo && s.rt_off_first <= hi);
	(void)m0;
	unlink(path);
}

/* The tracer: machine options through its config, REALTIME snapshots at
 * start, at least every 50 ms of trace time while it runs, and at stop,
 * each relating the event clock to CLOCK_REALTIME as the clocks say. */
static void tracer_run(enum ptw_clock clk, enum ptw_mode mode)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "machine-tracer");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.clock = clk;
	cfg.mode = mode;
	cfg.machine_id = 7;
	cfg.machine_name = "tracer-host";
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	uint64_t k = 0;
	do { /* 120 ms of events: at least two periodic snapshots */
		PTW_BEGIN("m", "step");
		PTW_INSTANT("m", "tick");
		PTW_END("m");
		if (++k % 64 == 0)
			usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec) <
		 120000000);
	if (mode == PTW_MODE_RING)
		cr_assert_eq(ptw_snapshot(path), 0);
	cr_assert_eq(ptw_stop_ex(&err), 0, "%s", err.msg);
	struct seen s;
	scan(path, &s, 7);
	cr_assert_eq(s.with_mid, s.packets);
	cr_assert_geq(s.sysinfo, 1);
	cr_assert_str_eq(s.name, "tracer-host");
	struct utsname u;
	cr_assert_eq(uname(&u), 0);
	cr_assert_str_eq(s.sysname, u.sysname);
	cr_assert_eq(s.rt_backwards, 0);
	if (mode == PTW_MODE_STREAM)
		cr_assert_geq(s.rt_snaps, 3, "start, periodic, stop: %llu",
			      (unsigned long long)s.rt_snaps);
	else
		cr_assert_geq(s.rt_snaps, 1);
	/* MONOTONIC (or TSC calibrated on it) and REALTIME run at one rate
	 * unless the clock is set while the test runs: the offsets agree
	 * far below a millisecond */
	int64_t d = s.rt_off_last - s.rt_off_first;
	cr_assert(d > -1000000 && d < 1000000, "offset moved %lld ns",
		  (long long)d);
	unlink(path);
}

Test(machine, tracer_monotonic) { tracer_run(PTW_CLOCK_MONOTONIC, PTW_MODE_STREAM); }
Test(machine, tracer_tsc) { tracer_run(PTW_CLOCK_FASTEST, PTW_MODE_STREAM); }
Test(machine, tracer_ring) { tracer_run(PTW_CLOCK_MONOTONIC, PTW_MODE_RING); }

/* A flight-recorder snapshot whose window lost the BEGINs of slices still
 * open: the prefix that begins them again, the trace metadata in it (the
 * clock) and its REALTIME snapshot carry the machine_id too. */
Test(machine, flight_recorder_prefix_carries_the_machine_id)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "machine-ring-prefix");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = PTW_MODE_RING;
	cfg.ring_bytes = 64u * 1024u;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	cfg.machine_id = 12;
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	PTW_BEGIN_ARGS("outer", "whole run", PTW_ARG_I64("k", 7));
	PTW_BEGIN("outer", "inner");
	for (int i = 0; i < 20000; i++) { /* wraps the ring many times */
		PTW_BEGIN("m", "step");
		PTW_INSTANT("m", "tick");
		PTW_END("m");
	}
	cr_assert_eq(ptw_snapshot(path), 0);
	PTW_END("outer");
	PTW_END("outer");
	cr_assert_eq(ptw_stop_ex(&err), 0, "%s", err.msg);
	struct seen s;
	scan_flags(path, &s, 12, PTW_CHECK_ALLOW_OPEN);
	cr_assert_gt(s.overwritten, 0, "the window wrapped");
	cr_assert_eq(s.with_mid, s.packets, "%llu of %llu packets",
		     (unsigned long long)s.with_mid,
		     (unsigned long long)s.packets);
	cr_assert_eq(s.outer_begins, 2, "the prefix begins both open slices");
	cr_assert_eq(s.meta, 1, "the prefix has the metadata packet");
	cr_assert_geq(s.rt_snaps, 1);
	unlink(path);
}

/* Stream mode: the metadata packet is on the process's sequence, whose
 * header carries the id. */
Test(machine, stream_metadata_carries_the_machine_id)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "machine-meta");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.machine_id = 13;
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	PTW_INSTANT("m", "tick");
	cr_assert_eq(ptw_stop_ex(&err), 0, "%s", err.msg);
	struct seen s;
	scan(path, &s, 13);
	cr_assert_eq(s.with_mid, s.packets);
	cr_assert_eq(s.meta, 1);
	unlink(path);
}

/* A REALTIME snapshot due at a flush goes out after the pending packets:
 * put before the flush, it pushed a full batch past the compression limit
 * and the batch went out uncompressed. */
Test(machine, realtime_snapshots_keep_batches_whole)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "machine-rt-batches");
	struct ptw_writer_options o = {.compress = PTW_COMPRESS_DEFLATE,
				       .wall_realtime = 1};
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t t = ptw_writer_add_thread_track(w, 100, 101, "thr");
	struct ptw_seq *s = ptw_writer_wall_seq(w);
	for (int round = 0; round < 4; round++) {
		/* more than a batch of events, then a pause past the period:
		 * the next flush at the threshold finds a snapshot due */
		for (int i = 0; i < 40000; i++) {
			struct ptw_event ev = {.track = t, .name = "e",
					       .ts = ptw_writer_now_ns(w),
					       .flags = PTW_EV_STATIC_STRINGS};
			ok(w, ptw_seq_instant(s, &ev));
		}
		usleep(60000);
	}
	ok(w, ptw_writer_close(w, &err));
	struct seen sn;
	scan(path, &sn, 0);
	cr_assert_geq(sn.rt_snaps, 4);
	struct ptw_trace *tr = ptw_trace_load_file(path, NULL, &err);
	cr_assert_not_null(tr, "%s", err.msg);
	cr_assert_eq(ptw_trace_get_stats(tr)->batch_packets,
		     ptw_trace_get_stats(tr)->packets, "packets outside batches");
	ptw_trace_free(tr);
	unlink(path);
}

/* Clock streams write through the writer's sequences and checkpoints:
 * the machine_id is on their packets too. */
Test(machine, clock_streams_carry_the_machine_id)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "machine-clock");
	struct ptw_writer_options o = {.machine_id = 9, .checkpoint_packets = 16,
				       .compress = PTW_COMPRESS_ZSTD};
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	struct ptw_clock_streams *cs = ptw_clock_streams_attach(w, NULL, &err);
	cr_assert_not_null(cs, "%s", err.msg);
	struct ptw_clock_streams_domain cpu = {.name = "cpu", .hz = 1000000000};
	struct ptw_clock_streams_domain acc = {.name = "acc", .hz = 1500000000};
	uint32_t a, b;
	ok(w, ptw_clock_streams_add(cs, &cpu, &a));
	ok(w, ptw_clock_streams_add(cs, &acc, &b));
	for (uint64_t i = 0; i < 300; i++) {
		struct ptw_clock_streams_event ev = {.cycle = 100 * i, .name = "run"};
		ok(w, ptw_clock_streams_slice_begin(cs, a, &ev));
		ev.cycle += 50;
		ok(w, ptw_clock_streams_slice_end(cs, a, &ev));
		ev.cycle = 150 * i + 3;
		ok(w, ptw_clock_streams_instant(cs, b, &ev));
	}
	ok(w, ptw_writer_close(w, &err));
	struct seen s;
	scan(path, &s, 9);
	cr_assert_gt(s.packets, 900);
	cr_assert_eq(s.with_mid, s.packets);
	unlink(path);
}
