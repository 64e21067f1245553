/* os_thread.h - threads as the OS sees them: their ids and names.
 * Internal, not API.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Implemented once per OS (lib/os/thread_linux.c); a port adds its own
 * file, guarded by its OS macro, and nothing else changes. Contract:
 * - ptw_os_thread_id() is the calling thread's id as the system's tools
 *   show it and trace_processor expects it (Linux: the kernel's tid, as in
 *   top -H and /proc/PID/task); never 0. A system call: ptw calls it once
 *   per thread, never per event. Async-signal-safe (the crash handler
 *   compares it).
 * - ptw_os_thread_name(buf, n) copies the calling thread's OS name into
 *   buf (n > 0 bytes, NUL-terminated), or "" when the OS cannot tell.
 * - ptw_os_thread_set_name(th, name) names thread th (a thread ptw just
 *   created) for the system's tools (top -H, gdb): best effort, cosmetic,
 *   errors ignored; the OS may cut the name (Linux: 15 bytes).
 * - ptw_os_thread_stack_top() is the upper end of the calling thread's
 *   stack (one past its highest byte), or 0 when the OS cannot tell; may
 *   allocate: lib/stack asks once per thread. */
#ifndef PTW_OS_THREAD_H
#define PTW_OS_THREAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

int64_t ptw_os_thread_id(void);
void ptw_os_thread_name(char *buf, size_t n);
void ptw_os_thread_set_name(pthread_t th, const char *name);
uintptr_t ptw_os_thread_stack_top(void);

#endif /* PTW_OS_THREAD_H */
