// unload_cxx.cc - test plugin C (tests/test_tracer_unload.c), in C++: a
// static object and a function-local static (constructed on the first
// call, after the library's first event) log from their destructors when
// the library is unloaded; the tracer's unload hook runs after both.
// SPDX-License-Identifier: Apache-2.0
#include <cstdint>
#include <string>

#include "ptw/tracer.h"

namespace {

struct bye {
	const char *what;
	explicit bye(const char *w) : what(w) {}
	~bye() { PTW_INSTANT_DYN("C.cat", what); PTW_INSTANT("C.cat", "C.bye"); }
	bye(const bye &) = delete;
	bye &operator=(const bye &) = delete;
};

bye at_load("C.bye_static");

} // namespace

extern "C" void unload_cxx_log(int64_t round);

extern "C" void unload_cxx_log(int64_t round)
{
	static bye at_first_call("C.bye_local");
	PTW_SCOPE("C.cat", "C.scope");
	std::string name = "C.dyn";
	PTW_INSTANT_DYN("C.cat", name.c_str());
	PTW_COUNTER_INT("C.cat", "C.counter", round);
}
