/* os_proc.h - the process as the OS describes it. Internal, not API.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Implemented once per OS (lib/os/proc_linux.c); a port adds its own
 * file, guarded by its OS macro, and nothing else changes. Contract:
 * - ptw_os_process_name() is the running program's name without its
 *   directory (what ps shows), for the trace's process track when the
 *   program names none; never NULL ("" when the OS cannot tell). The
 *   string lives as long as the process; no allocation. */
#ifndef PTW_OS_PROC_H
#define PTW_OS_PROC_H

const char *ptw_os_process_name(void);

#endif /* PTW_OS_PROC_H */
