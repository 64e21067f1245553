/* arch.h - what ptw asks of the CPU itself, one file per architecture:
 * a time counter read without a syscall (the clock of PTW_CLOCK_TSC and
 * PTW_CLOCK_FASTEST) and a prefetch for writing (the ring's producer).
 * x86.h and aarch64.h hold every intrinsic and inline assembly line of
 * the library; any other CPU gets the portable fallbacks below (no
 * counter: those clocks fall back to CLOCK_MONOTONIC). A port to another
 * CPU is one more file here.
 *
 * Each file defines:
 *   PTW_ARCH_COUNTER          1 if ptw_arch_counter() is a real counter
 *   ptw_arch_counter()        its raw reading, in ticks (inline, hot path)
 *   ptw_arch_counter_usable() 1 if it runs at a constant rate on this CPU
 *   ptw_arch_counter_hz()     its frequency when the CPU states it, else 0
 *                             (then lib/tracer/tsc.c measures it)
 *   ptw_arch_prefetch_w_ok()  1 if ptw_arch_prefetch_w() asks for the line
 *                             in the exclusive state (else it is not used)
 *   ptw_arch_prefetch_w(p)    prefetch p's cache line for writing
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_ARCH_H
#define PTW_ARCH_H

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include "x86.h"
#elif defined(__aarch64__)
#include "aarch64.h"
#endif

#ifndef PTW_ARCH_COUNTER
#define PTW_ARCH_COUNTER 0
static inline uint64_t ptw_arch_counter(void) { return 0; }
static inline int ptw_arch_counter_usable(void) { return 0; }
static inline uint64_t ptw_arch_counter_hz(void) { return 0; }
#endif

#ifndef PTW_ARCH_PREFETCH_W
#define PTW_ARCH_PREFETCH_W 1
static inline int ptw_arch_prefetch_w_ok(void) { return 1; }
static inline void ptw_arch_prefetch_w(const void *p)
{
	__builtin_prefetch(p, 1, 3);
}
#endif

#endif /* PTW_ARCH_H */
