/* stack_emit.c - the producer side of the _STACK macros: captures the
 * caller's stack and records it with the event.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stddef.h>

#include "lib/os/os_thread.h"
#include "stack.h"

const char ptw_stk_arg_name[] = "ptw.stack";

static _Thread_local uintptr_t ptw_stk_top
	__attribute__((tls_model("initial-exec")));

uintptr_t ptw_stk_thread_top(void)
{
	if (__builtin_expect(ptw_stk_top != 0, 1))
		return ptw_stk_top;
	ptw_stk_top = ptw_os_thread_stack_top();
	return ptw_stk_top;
}

/* Not inlined into the caller: its return address is the first frame. */
__attribute__((noinline)) int ptw_i_emit_stack(struct ptw_i_site *site,
					       uint32_t kind, const char *name)
{
	uint64_t pcs[PTW_TRACER_MAX_STACK];
	struct ptw_arg a;
	a.name = ptw_stk_arg_name;
	a.type = (enum ptw_arg_type)PTW_I_ARG_STACK;
	a.v.nested.n = ptw_stk_capture(pcs, PTW_TRACER_MAX_STACK);
	a.v.nested.items = (const struct ptw_arg *)(const void *)pcs;
	return ptw_i_emit_n(site, kind, name, NULL, 0, &a, 1);
}
