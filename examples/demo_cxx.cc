// demo_cxx.cc - the tracer from C++: a pool of std::threads works through
// jobs; scopes end at the brace (also on an exception), names come from
// std::string, formatted names and per-queue counters are built at run time.
//
//     demo-cxx [OUT.pftrace]     (default demo-cxx.pftrace)
// SPDX-License-Identifier: Apache-2.0
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ptw/tracer.h"

namespace {

std::atomic<int> next_job{0};
const int kJobs = 200;

int parse(const std::string &text, int job)
{
	PTW_SCOPE_ARGS("demo", "parse", PTW_ARG_STR("text", text.c_str()),
		       PTW_ARG_I64("job", job));
	if (job % 37 == 36)
		throw std::runtime_error("bad input"); // the scope still ends
	return (int)text.size();
}

void worker(int w)
{
	std::string me = "worker " + std::to_string(w);
	ptw_set_thread_name(me.c_str());
	std::string queue = "queue " + std::to_string(w % 2) + " depth";
	for (int job; (job = next_job.fetch_add(1)) < kJobs;) {
		PTW_SCOPE_FMT("demo", "job %d", job);
		PTW_COUNTER_INT_DYN("demo", queue.c_str(), kJobs - job);
		PTW_ASYNC_BEGIN_ARGS("demo", "request", (uint64_t)job,
				     PTW_ARG_STR("by", me.c_str()));
		try {
			int n = parse("payload-" + std::to_string(job), job);
			PTW_SCOPE_DYN("demo", me.c_str());
			PTW_COUNTER_DOUBLE("demo", "bytes per job", n * 1.5);
			std::this_thread::sleep_for(std::chrono::microseconds(100));
		} catch (const std::exception &e) {
			PTW_INSTANT_ARGS("demo", "failed",
					 PTW_ARG_STR("why", e.what()));
			PTW_LOG_DYN(PTW_LOG_PRIO_ERROR,
				    (me + ": " + e.what()).c_str());
		}
		PTW_ASYNC_END("demo", (uint64_t)job);
	}
}

} // namespace

int main(int argc, char **argv)
{
	ptw_config cfg = {};
	cfg.output_path = argc > 1 ? argv[1] : "demo-cxx.pftrace";
	cfg.source_locations = 1; // each slice's file, function and line
	ptw_error err;
	if (ptw_start_ex(&cfg, &err) != 0) {
		std::fprintf(stderr, "demo-cxx: %s\n", err.msg);
		return 1;
	}
	ptw_set_thread_name("main");
	{
		PTW_SCOPE("demo", "run pool");
		std::vector<std::thread> pool;
		for (int w = 0; w < 4; w++)
			pool.emplace_back(worker, w);
		for (auto &t : pool)
			t.join();
	}
	if (ptw_stop_ex(&err) != 0) {
		std::fprintf(stderr, "demo-cxx: %s\n", err.msg);
		return 1;
	}
	return 0;
}
