/* writer_machine.c - the writer's machine options: machine_id on every
 * packet, the SystemInfo packet (machine_name, utsname) and ClockSnapshots
 * that relate trace time to CLOCK_REALTIME, so that traces of several
 * machines merge in trace_processor (docs/writer.md, "Several machines").
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "lib/encode/pb_fields.h"
#include "writer_state.h"

/* Trace time between two REALTIME snapshots (when something calls for
 * them: a flush, a tracer backend pass). trace_processor converts a
 * timestamp with the newest snapshot at or before it, so this bounds the
 * time over which the trace clock's rate error adds up: the tracer's
 * calibrated TSC is off by ~10 ppm at most, 0.5 us per 50 ms. */
#define PTW_RT_PERIOD_NS 50000000u

static uint64_t ptw_w_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The wall-clock sequence's time: what ptw_writer_now_ns() returns. */
static uint64_t ptw_w_wall_now(const void *ctx)
{
	const struct ptw_writer *w = ctx;
	return ptw_w_clock_ns(CLOCK_MONOTONIC) - w->open_ns;
}

static void ptw_w_put_str(struct ptw_pb_buf *b, uint32_t f, const char *s)
{
	ptw_pb_append_bytes_field(b, f, s, strnlen(s, PTW_MAX_STRING_LEN));
}

int ptw_w_machine_init(struct ptw_writer *w)
{
	const struct ptw_writer_options *o = &w->opt;
	if (o->machine_id) {
		uint8_t *e = ptw_pb_write_varint_field(w->mid, PTW_F_PKT_MACHINE_ID,
						       o->machine_id);
		w->mid_len = (uint8_t)(e - w->mid);
	}
	/* The caller's string is not kept, only its encoding. */
	const char *name = o->machine_name;
	w->opt.machine_name = NULL;
	if (o->wall_realtime) {
		w->rt_now = ptw_w_wall_now;
		w->rt_ctx = w;
	}
	if (!o->machine_uname && !name)
		return 0;
	struct ptw_pb_buf b;
	if (ptw_pb_buf_init(&b, 256))
		return PTW_ERR_NOMEM;
	struct utsname u;
	if (o->machine_uname && uname(&u) == 0) {
		size_t m = ptw_pb_begin_nested(&b, PTW_F_SI_UTSNAME);
		ptw_w_put_str(&b, PTW_F_UTS_SYSNAME, u.sysname);
		ptw_w_put_str(&b, PTW_F_UTS_VERSION, u.version);
		ptw_w_put_str(&b, PTW_F_UTS_RELEASE, u.release);
		ptw_w_put_str(&b, PTW_F_UTS_MACHINE, u.machine);
		ptw_pb_end_nested(&b, m);
	}
	if (name)
		ptw_w_put_str(&b, PTW_F_SI_MACHINE_NAME, name);
	if (b.oom) {
		ptw_pb_buf_free(&b);
		return PTW_ERR_NOMEM;
	}
	w->sysinfo = b.data;
	w->sysinfo_len = b.len;
	return 0;
}

void ptw_w_machine_free(struct ptw_writer *w)
{
	free(w->sysinfo);
	w->sysinfo = NULL;
	w->sysinfo_len = 0;
}

/* The header of a packet on the service's sequence: each one says CLEARED,
 * since none depends on incremental state and any may be the first of
 * its sequence (flight-recorder windows start at any piece). */
static void ptw_w_put_service_hdr(const struct ptw_writer *w,
				  struct ptw_pb_buf *b)
{
	ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_ID, PTW_SEQ_ID_SERVICE);
	ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_FLAGS,
				   PTW_SEQ_INCREMENTAL_STATE_CLEARED);
	ptw_w_put_mid(w, b);
}

void ptw_w_put_sysinfo(const struct ptw_writer *w, struct ptw_pb_buf *b)
{
	if (!w->sysinfo)
		return;
	size_t m = ptw_pb_begin_nested(b, PTW_F_TRACE_PACKET);
	ptw_w_put_service_hdr(w, b);
	size_t s = ptw_pb_begin_nested(b, PTW_F_PKT_SYSTEM_INFO);
	ptw_pb_append_raw(b, w->sysinfo, w->sysinfo_len);
	ptw_pb_end_nested(b, s);
	ptw_pb_end_nested(b, m);
}

/* A (trace time, REALTIME) pair read as close together as the clocks
 * allow: REALTIME bracketed by two trace-clock reads, the pair with the
 * smallest gap of five. 0, or -1 if the trace clock never moved forward. */
static int ptw_w_rt_pair(const struct ptw_writer *w, uint64_t *t, uint64_t *r)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t a = w->rt_now(w->rt_ctx);
		uint64_t x = ptw_w_clock_ns(CLOCK_REALTIME);
		uint64_t c = w->rt_now(w->rt_ctx);
		if (c >= a && c - a < best) {
			best = c - a;
			*t = a + (c - a) / 2;
			*r = x;
		}
	}
	return best == UINT64_MAX ? -1 : 0;
}

static void ptw_w_put_clock(struct ptw_pb_buf *b, uint32_t id, uint64_t ts)
{
	size_t m = ptw_pb_begin_nested(b, PTW_F_CS_CLOCKS);
	ptw_pb_append_varint_field(b, PTW_F_CLK_CLOCK_ID, id);
	ptw_pb_append_varint_field(b, PTW_F_CLK_TIMESTAMP, ts);
	ptw_pb_end_nested(b, m);
}

void ptw_w_put_realtime_at(const struct ptw_writer *w, struct ptw_pb_buf *b,
			   uint64_t t)
{
	uint64_t tn, r;
	if (!w->rt_now || ptw_w_rt_pair(w, &tn, &r))
		return;
	size_t m = ptw_pb_begin_nested(b, PTW_F_TRACE_PACKET);
	ptw_w_put_service_hdr(w, b);
	size_t c = ptw_pb_begin_nested(b, PTW_F_PKT_CLOCK_SNAPSHOT);
	ptw_w_put_clock(b, PTW_CLOCK_BOOTTIME, t);
	ptw_w_put_clock(b, PTW_CLOCK_REALTIME, t + (r - tn));
	ptw_pb_end_nested(b, c);
	ptw_pb_end_nested(b, m);
}

int ptw_w_realtime_due(const struct ptw_writer *w)
{
	return w->rt_now && (!w->rt_any || w->rt_now(w->rt_ctx) - w->rt_last >=
						       PTW_RT_PERIOD_NS);
}

int ptw_w_realtime_snapshot(struct ptw_writer *w, int force)
{
	if (!w->rt_now || w->sticky)
		return w->sticky;
	if (!force && !ptw_w_realtime_due(w))
		return 0;
	uint64_t t, r;
	/* Trace time in these snapshots never goes back: trace_processor
	 * refuses a snapshot whose trace clock is lower than the last one of
	 * the same set of clocks. */
	if (ptw_w_rt_pair(w, &t, &r) || (w->rt_any && t < w->rt_last))
		return 0;
	if (!w->rt_any)
		w->desc_ts = t;
	w->rt_last = t;
	w->rt_any = 1;
	/* On the service's sequence, like Perfetto's own snapshots: apart
	 * from the sequences' checkpoint snapshots (another set of clocks,
	 * which trace_processor keeps apart), so neither orders the other. */
	size_t mark = ptw_w_packet_begin(w);
	ptw_w_put_service_hdr(w, &w->pend);
	size_t c = ptw_pb_begin_nested(&w->pend, PTW_F_PKT_CLOCK_SNAPSHOT);
	ptw_w_put_clock(&w->pend, PTW_CLOCK_BOOTTIME, t);
	ptw_w_put_clock(&w->pend, PTW_CLOCK_REALTIME, r);
	ptw_pb_end_nested(&w->pend, c);
	return ptw_w_packet_end(w, mark, 0);
}

/* ---- hooks for the tracer (writer_internal.h) -------------------------- */

int ptw_i_writer_set_realtime(struct ptw_writer *w,
			      uint64_t (*now)(const void *ctx), const void *ctx)
{
	if (!w)
		return PTW_ERR_INVALID;
	w->rt_now = now;
	w->rt_ctx = ctx;
	w->rt_any = 0;
	return ptw_w_realtime_snapshot(w, 1);
}

int ptw_i_writer_realtime_tick(struct ptw_writer *w, int force)
{
	return w ? ptw_w_realtime_snapshot(w, force) : PTW_ERR_INVALID;
}
