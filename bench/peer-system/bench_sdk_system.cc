// bench_sdk_system.cc - the system-mode side-by-side, the Perfetto SDK's
// half: the same workload (workload.h) traced with TRACE_EVENT_BEGIN /
// TRACE_EVENT_END by a program that uses the SDK's system backend
// (perfetto::Tracing::Initialize with kSystemBackend). Not built by ptw's
// build: compile it against your own copy of the SDK (the amalgamated
// perfetto.h / perfetto.cc of a Perfetto release), e.g. from ptw's root
//
//   c++ -O2 -std=c++17 -I$SDK -I. -Ibench/peer-system -o bench_sdk_system
//       bench/peer-system/bench_sdk_system.cc $SDK/perfetto.cc -lpthread
//
// and hand it to run.sh (SDK_BENCH=...). peer.h says what it prints.
//
//   bench_sdk_system a|b|c EVENTS_PER_THREAD [smb_kb=N] [policy=stall|drop]
//
// smb_kb: TracingInitArgs.shmem_size_hint_kb (default 32768, the most the
// service gives). policy: TracingInitArgs.track_event_buffer_exhausted_policy
// (default stall: a full shared memory buffer makes the producer wait, so
// that nothing is lost, as in the file-mode side-by-side).
// SPDX-License-Identifier: Apache-2.0
#include "perfetto.h"

#include "peer.h"
#include "workload.h"

PERFETTO_DEFINE_CATEGORIES(
    perfetto::Category("bench").SetDescription("side-by-side workload"),
    perfetto::Category("warmup").SetDescription("untimed first event"));
PERFETTO_TRACK_EVENT_STATIC_STORAGE();

#define PS_BEGIN(lit) TRACE_EVENT_BEGIN(PS_CAT, lit)
#define PS_BEGIN_ARG(lit, v) TRACE_EVENT_BEGIN(PS_CAT, lit, "v", v)
#define PS_END() TRACE_EVENT_END(PS_CAT)
PS_WORKLOAD

static void warmup(void)
{
	TRACE_EVENT_INSTANT("warmup", "warmup");
}

static int bench_enabled(void)
{
	return TRACE_EVENT_CATEGORY_ENABLED(PS_CAT) ? 1 : 0;
}

// The producer threads' writers committed their chunks when the threads
// ended; this one's too.
static void flush(void)
{
	perfetto::TrackEvent::Flush();
}

int main(int argc, char **argv)
{
	struct ps_args a;
	ps_parse(argc, argv, &a);
	perfetto::TracingInitArgs args;
	args.backends = perfetto::kSystemBackend;
	args.shmem_size_hint_kb = static_cast<uint32_t>(
	    strtoul(ps_opt(&a, "smb_kb", "32768"), nullptr, 10));
	const char *policy = ps_opt(&a, "policy", "stall");
	args.track_event_buffer_exhausted_policy =
	    strcmp(policy, "drop") ? perfetto::BufferExhaustedPolicy::kStall
				   : perfetto::BufferExhaustedPolicy::kDrop;
	perfetto::Tracing::Initialize(args);
	perfetto::TrackEvent::Register();
	struct ps_result r;
	if (ps_measure(&a, bench_enabled, flush, ps_workload_plain,
		       ps_workload_arg, warmup, &r) < 0)
		return 1;
	char extra[128];
	snprintf(extra, sizeof(extra),
		 ",\"session_ended\":%d,\"sdk\":{\"smb_kb\":%u,\"policy\":\"%s\"}",
		 r.ended, args.shmem_size_hint_kb, policy);
	ps_print("perfetto-sdk", &a, &r, extra);
	return !r.ended;
}
