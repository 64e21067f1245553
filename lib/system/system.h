/* system.h - system mode, as the tracer sees it (lib/tracer/tracer.c):
 * ptw as a producer of Perfetto's tracing service. A thread of its own
 * ("ptw-system") keeps the connection (ipc.h, producer.h), and starts and
 * stops the tracer's sessions (ptw_tr_start_output) as the service starts
 * and stops ptw's data source; the session's writer writes into the
 * service's shared memory buffer (lib/shmem/smb.h) on the backend thread.
 * Not installed, not API.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_SYSTEM_H
#define PTW_SYSTEM_H

#include <stdint.h>

#include "ptw/tracer.h"

/* ptw_start() with cfg->system: starts the system thread (cfg and wo are
 * the library's copies; what they point to is copied). 0,
 * PTW_ERR_STATE (tracing or system mode already on), PTW_ERR_INVALID
 * (an output named too), PTW_ERR_NOMEM. */
int ptw_sys_start(const struct ptw_config *cfg,
		  const struct ptw_writer_options *wo, struct ptw_error *err);

/* ptw_stop(): if system mode is on, stops its thread (which stops a
 * running session with a last flush and commit) and returns 1; else 0. */
int ptw_sys_stop(void);

/* 1 while system mode is on (between ptw_start and ptw_stop). */
int ptw_sys_on(void);

/* fork() child, under the tracer's mutex: forgets system mode without
 * touching the parent's thread; closes the child's copies of the
 * connection and unmaps the buffer. */
void ptw_sys_atfork_child(void);

/* Packets lost to a full shared memory buffer so far (ptw_stats). */
uint64_t ptw_sys_lost(void);

#endif /* PTW_SYSTEM_H */
