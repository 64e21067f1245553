/* stack_lib.c - test plugin for tests/test_tracer_stack.c: a frame of a
 * shared library in the middle of a known call chain (built with frame
 * pointers, as every test object).
 * SPDX-License-Identifier: Apache-2.0 */
void stack_lib_call(void (*cb)(int), int k);

__attribute__((noinline)) void stack_lib_call(void (*cb)(int), int k)
{
	cb(k);
	__asm__ volatile("" ::: "memory"); /* no tail call: keep this frame */
}
