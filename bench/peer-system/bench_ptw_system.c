/* bench_ptw_system.c - the system-mode side-by-side, ptw's half: the
 * workload (workload.h) traced with PTW_BEGIN / PTW_BEGIN_ARGS / PTW_END
 * by a producer of Perfetto's tracing service (cfg.system). run.sh builds
 * and runs it; peer.h says what it prints.
 *
 *   bench_ptw_system a|b|c EVENTS_PER_THREAD [smb_kb=N] [slots=N]
 *
 * smb_kb: the shared memory buffer asked of the service (default 32768,
 * the most the service gives, as asked of the SDK). slots: ring slots per
 * thread (default 2^24: a thread's events fit, so that the producer never
 * waits on the backend, as in the file-mode side-by-side).
 * SPDX-License-Identifier: Apache-2.0 */
#include "ptw/tracer.h"

#include "peer.h"
#include "workload.h"

#define PS_BEGIN(lit) PTW_BEGIN(PS_CAT, lit)
#define PS_BEGIN_ARG(lit, v) PTW_BEGIN_ARGS(PS_CAT, lit, PTW_ARG_I64("v", v))
#define PS_END() PTW_END(PS_CAT)
PS_WORKLOAD

static void warmup(void)
{
	PTW_INSTANT("warmup", "warmup");
}

/* every event in the shared memory buffer, committed */
static void flush(void)
{
	ptw_flush();
}

int main(int argc, char **argv)
{
	struct ps_args a;
	ps_parse(argc, argv, &a);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.system = 1;
	cfg.categories = PS_CAT ",warmup";
	cfg.process_name = "peer_system";
	cfg.system_buffer_kb = (uint32_t)strtoul(ps_opt(&a, "smb_kb", "32768"),
						 NULL, 10);
	cfg.ring_slots = (uint32_t)strtoul(ps_opt(&a, "slots", "16777216"),
					   NULL, 10);
	cfg.overflow = PTW_OVERFLOW_WAIT;
	/* clock=tsc: the producers read the CPU's counter, which the backend
	 * converts to BOOTTIME; clock=boot (default): they read BOOTTIME */
	if (!strcmp(ps_opt(&a, "clock", "boot"), "tsc"))
		cfg.clock = PTW_CLOCK_TSC;
	struct ptw_error err;
	if (ptw_start_ex(&cfg, &err)) {
		fprintf(stderr, "ptw_start: %s\n", err.msg);
		return 1;
	}
	struct ps_result r;
	if (ps_measure(&a, ptw_is_running, flush, ps_workload_plain,
		       ps_workload_arg, warmup, &r) < 0)
		return 1;
	struct ptw_stats st;
	memset(&st, 0, sizeof(st));
	ptw_get_stats(&st);
	char extra[256];
	snprintf(extra, sizeof(extra),
		 ",\"session_ended\":%d,\"ptw\":{\"events\":%llu,"
		 "\"dropped\":%llu,\"waits\":%llu,\"system_lost\":%llu}",
		 r.ended, (unsigned long long)st.events,
		 (unsigned long long)st.dropped, (unsigned long long)st.waits,
		 (unsigned long long)st.system_lost);
	ps_print("ptw", &a, &r, extra);
	ptw_stop();
	return !r.ended;
}
