/* stack.h - callstacks of the tracer's events: capture on the producer
 * (frame pointers) and naming on the backend (symbol tables of the loaded
 * ELF objects). Not installed.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Capture walks the frame-pointer chain from the caller of the capturing
 * function: two loads per frame, no call, lock, allocation or system call
 * (the first capture of a thread asks for its stack's bounds once, which
 * may allocate). Frames of code built without frame pointers end the walk
 * early or are skipped, never read outside the thread's stack. */
#ifndef PTW_STACK_H
#define PTW_STACK_H

#include <stdint.h>

#include "ptw/tracer.h"
#include "ptw/writer.h"

/* ptw_i_arg_rec.type of the stack of an event: its str_len bytes of
 * return addresses (innermost first) follow in the ring as a string's
 * bytes do. Only with the name ptw_stk_arg_name (so that no caller's
 * argument of an unknown type is taken for it). */
#define PTW_I_ARG_STACK 0xFEu
extern const char ptw_stk_arg_name[] __attribute__((visibility("hidden")));

/* An argument the _STACK macros pass: the stack, not a value. */
static inline int ptw_stk_is_arg(const struct ptw_arg *a)
{
	return (unsigned)a->type == PTW_I_ARG_STACK &&
	       a->name == ptw_stk_arg_name;
}

/* The upper end of the calling thread's stack (0: unknown), asked once
 * per thread. */
uintptr_t ptw_stk_thread_top(void);

/* The return addresses of the frames above the function that inlines
 * this (its caller first), at most 'max'. Needs the frame pointer of that
 * function, which __builtin_frame_address(0) makes the compiler keep. */
#if defined(__x86_64__) || defined(__aarch64__)
/* Where a frame pointer points to [caller's frame pointer, return
 * address] (x86-64's push rbp; AArch64's frame record x29/x30). Other
 * CPUs lay frames out otherwise (s390x keeps a back chain only with
 * -mbackchain): they record no stacks. */
#define PTW_STK_WALKS 1
#else
#define PTW_STK_WALKS 0
#endif

static inline __attribute__((always_inline, no_sanitize_address)) uint32_t
ptw_stk_capture(uint64_t *pcs, uint32_t max)
{
	if (!PTW_STK_WALKS)
		return 0;
	const uintptr_t *fp = (const uintptr_t *)__builtin_frame_address(0);
	uintptr_t top = ptw_stk_thread_top();
	uint32_t n = 0;
	while (n < max) {
		uintptr_t next = fp[0], ret = fp[1];
		if (!ret)
			break;
		pcs[n++] = ret;
		/* the chain goes up the stack; anything else is not a frame
		 * pointer (code without one uses the register freely) */
		if (next <= (uintptr_t)fp || (next & 7u) || !top ||
		    next > top - 2 * sizeof(uintptr_t))
			break;
		fp = (const uintptr_t *)next;
	}
	return n;
}

/* ---- backend: naming ------------------------------------------------- */

struct ptw_stk_sym;

struct ptw_stk_sym *ptw_stk_sym_create(void);
void ptw_stk_sym_free(struct ptw_stk_sym *y);

/* Frames for 'n' return addresses (innermost first) into 'out',
 * outermost first: function name (NULL if no symbol covers it), the
 * object's mapping, and rel_pc = pc - 1 - the object's load address (the
 * call instruction's address in the ELF file). Strings and mappings
 * belong to y and stay valid until it is freed. Returns how many of them
 * are the program's: innermost frames of the tracer itself (ptw_i_*,
 * ptw_tr_*) are left out. */
uint32_t ptw_stk_sym_frames(struct ptw_stk_sym *y, const uint64_t *pcs,
			uint32_t n, struct ptw_frame *out);

#endif /* PTW_STACK_H */
