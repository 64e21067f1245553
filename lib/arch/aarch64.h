/* aarch64.h - the 64-bit ARM side of arch.h (included by it only): the
 * generic timer's virtual count, CNTVCT_EL0, as the time counter. Linux
 * lets user space read it and its frequency, CNTFRQ_EL0 (set by the
 * firmware, the one the kernel's own clocksource uses), on every ARMv8
 * system; the count is system-wide and runs at a constant rate.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_ARCH_AARCH64_H
#define PTW_ARCH_AARCH64_H

#if !defined(__aarch64__)
#error "lib/arch/aarch64.h is for aarch64 only: include lib/arch/arch.h"
#endif

#include <stdint.h>

#define PTW_ARCH_COUNTER 1
/* ISB first: without it the read may be taken early, before the
 * instructions that come before it in program order (as the kernel's
 * __arch_counter_get_cntvct does). */
static inline uint64_t ptw_arch_counter(void)
{
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
}

static inline int ptw_arch_counter_usable(void) { return 1; }

static inline uint64_t ptw_arch_counter_hz(void)
{
	uint64_t hz;
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
	return hz & 0xffffffffu; /* the upper 32 bits are RES0 */
}

#endif /* PTW_ARCH_AARCH64_H */
