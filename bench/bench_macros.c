/* bench_macros.c - what a macro costs in the side-by-side loop that
 * compares ptw with the Perfetto SDK, disabled (d0, d1) and enabled, with
 * the C macros (bench/support/macro_loop.h has the loop and the figures).
 * SPDX-License-Identifier: Apache-2.0 */
#define BENCH_LANG ""
#include "support/macro_loop.h"

int main(void) { return ml_main(); }
