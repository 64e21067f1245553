/* x86.h - the x86 side of arch.h (included by it only): the time-stamp
 * counter (x86-64) and PREFETCHW (x86-64 and i386).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_ARCH_X86_H
#define PTW_ARCH_X86_H

#if !defined(__x86_64__) && !defined(__i386__)
#error "lib/arch/x86.h is for x86 only: include lib/arch/arch.h"
#endif

#include <cpuid.h>
#include <stdint.h>

#if defined(__x86_64__)
/* The TSC of x86-64; the tracer's 128-bit conversion needs a 64-bit CPU,
 * so i386 goes without (CLOCK_MONOTONIC). */
#define PTW_ARCH_COUNTER 1
static inline uint64_t ptw_arch_counter(void) { return __builtin_ia32_rdtsc(); }

/* CPUID 0x80000007 EDX bit 8: invariant TSC (constant rate, runs in every
 * C/P-state), the condition for using it as a clock. */
static inline int ptw_arch_counter_usable(void)
{
	unsigned a, b, c, d;
	return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
}

/* The TSC's rate is not stated in a form worth trusting (CPUID leaf 0x15
 * is often absent or zero in VMs): tsc.c measures it. */
static inline uint64_t ptw_arch_counter_hz(void) { return 0; }
#endif

/* not __builtin_prefetch: without -mprfchw it emits PREFETCHT0, which
 * fetches the line shared (no gain) */
#define PTW_ARCH_PREFETCH_W 1
static inline int ptw_arch_prefetch_w_ok(void)
{
	unsigned a, b, c = 0, d;
	return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & bit_PRFCHW);
}

static inline void ptw_arch_prefetch_w(const void *p)
{
	__asm__ volatile("prefetchw %0" ::"m"(*(const char *)p));
}

#endif /* PTW_ARCH_X86_H */
