// bench_tracer_cxx.cc - what the tracer macros cost the producer in C++,
// next to the same loop compiled as C in the same process (runs of each
// alternate, so a busy machine affects both alike).
//
// Prints `name value unit` lines: producer_ns_per_event_1t_cxx (PTW_BEGIN /
// PTW_END pairs), producer_ns_per_event_1t_cxx_scope (a PTW_SCOPE per
// pair: its guard object), producer_ns_per_event_1t_c_same_run and
// cxx_over_c_ratio. Medians of many runs of 256 events, fastest clock, as
// bench_tracer's producer_ns_per_event_1t. PTW_BENCH_QUICK=1: short run.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "support/bench_pairs_c.h"
#include "ptw/tracer.h"

namespace {

const unsigned kPairs = 128; // 256 events per run

uint64_t now_ns()
{
	return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

uint64_t cxx_pairs(unsigned pairs)
{
	uint64_t t0 = now_ns();
	for (unsigned i = 0; i < pairs; i++) {
		PTW_BEGIN("bench", "pair");
		PTW_END("bench");
	}
	return now_ns() - t0;
}

uint64_t cxx_scopes(unsigned pairs)
{
	uint64_t t0 = now_ns();
	for (unsigned i = 0; i < pairs; i++) {
		PTW_SCOPE("bench", "scope");
	}
	return now_ns() - t0;
}

void print(std::vector<double> &v, const char *name)
{
	std::sort(v.begin(), v.end());
	std::printf("%s %.2f ns\n", name, v[v.size() / 2]);
	std::printf("%s_p99 %.2f ns\n", name,
		    v[(size_t)((double)(v.size() - 1) * 0.99)]);
}

} // namespace

int main()
{
	bool quick = std::getenv("PTW_BENCH_QUICK") != nullptr;
	unsigned runs = quick ? 200 : 4000;
	std::string path = "/tmp/ptw_bench_tracer_cxx_" +
			   std::to_string((long)getpid()) + ".pftrace";
	ptw_config cfg = {};
	cfg.output_path = path.c_str();
	cfg.clock = PTW_CLOCK_FASTEST;
	cfg.ring_slots = 1u << 18;
	ptw_error err;
	if (ptw_start_ex(&cfg, &err) != 0) {
		std::fprintf(stderr, "bench_tracer_cxx: %s\n", err.msg);
		return 1;
	}
	std::vector<double> c, cxx, scope;
	for (unsigned r = 0; r < runs; r++) {
		cxx.push_back((double)cxx_pairs(kPairs) / (2 * kPairs));
		c.push_back((double)ptw_bench_c_pairs(kPairs) / (2 * kPairs));
		scope.push_back((double)cxx_scopes(kPairs) / (2 * kPairs));
		if ((r & 63) == 63)
			ptw_flush();
	}
	ptw_stats st;
	ptw_get_stats(&st);
	if (ptw_stop_ex(&err) != 0) {
		std::fprintf(stderr, "bench_tracer_cxx: %s\n", err.msg);
		return 1;
	}
	unlink(path.c_str());
	if (st.dropped) {
		std::fprintf(stderr, "bench_tracer_cxx: %llu events dropped\n",
			     (unsigned long long)st.dropped);
		return 1;
	}
	std::sort(c.begin(), c.end());
	std::sort(cxx.begin(), cxx.end());
	double ratio = cxx[cxx.size() / 2] / c[c.size() / 2];
	print(cxx, "producer_ns_per_event_1t_cxx");
	print(scope, "producer_ns_per_event_1t_cxx_scope");
	print(c, "producer_ns_per_event_1t_c_same_run");
	std::printf("cxx_over_c_ratio %.3f ratio\n", ratio);
	return 0;
}
