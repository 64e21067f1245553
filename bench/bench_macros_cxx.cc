// bench_macros_cxx.cc - the same loop and figures as bench_macros, with the
// macros compiled as C++ (bench/support/macro_loop.h; names end in _cxx).
// SPDX-License-Identifier: Apache-2.0
#define BENCH_LANG "_cxx"
#include "support/macro_loop.h"

int main() { return ml_main(); }
