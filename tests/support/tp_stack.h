/* tp_stack.h - the callstacks trace_processor shows for slices
 * (track_event_callstacks joined with stack_profile_callsite and
 * stack_profile_frame), for the callstack tests.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TEST_TP_STACK_H
#define PTW_TEST_TP_STACK_H

/* The tracer walks frame pointers on x86-64 and aarch64 only (lib/stack/
 * stack.h): elsewhere its _STACK events carry no stack. */
#if defined(__x86_64__) || defined(__aarch64__)
#define PTW_TEST_NEEDS_STACK_WALK() ((void)0)
#else
#define PTW_TEST_NEEDS_STACK_WALK() \
	cr_skip_test("stacks are walked on x86-64 and aarch64 only")
#endif

#include <stddef.h>

/* One row per track_event_callstacks row, ordered by slice ts and
 * name: "name:f0>f1>...>fn;" (frames outermost first, from the begin's
 * callsite; an END's stack as "name/end:..."). Returns 0, or -1 without
 * trace_processor. Fails the test if trace_processor fails or reports
 * an error or data loss stat. */
int ptw_test_tp_stacks(const char *trace, char *out, size_t max);

#endif /* PTW_TEST_TP_STACK_H */
