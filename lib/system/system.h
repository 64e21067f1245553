/* system.h - system mode, as the tracer sees it (lib/tracer/tracer.c):
 * ptw as a producer of Perfetto's tracing service. A thread of its own
 * ("ptw-system") keeps the connection (ipc.h, producer.h), and starts and
 * stops the tracer's sinks (ptw_tr_sink_add, one per system session) as
 * the service starts and stops ptw's data source; each sink's writer
 * writes into the service's shared memory buffer (lib/shmem/smb.h) on
 * the backend thread.
 * Not installed, not API.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_SYSTEM_H
#define PTW_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

#include "ptw/tracer.h"

/* ptw_start() with cfg->system: starts the system thread (cfg and wo are
 * the library's copies; what they point to is copied). 'own': the
 * program's file or flight recorder session runs already (started by
 * ptw_start, stopped by ptw_stop after this); system sessions join it
 * as sinks. Else the system thread starts the tracer's session with the
 * first system session and stops it with the last. 0, PTW_ERR_STATE
 * (tracing or system mode already on), PTW_ERR_NOMEM. */
int ptw_sys_start(const struct ptw_config *cfg,
		  const struct ptw_writer_options *wo, int own,
		  struct ptw_error *err);

/* ptw_stop(): if system mode is on, stops its thread (which ends every
 * system session with a last flush and commit) and returns 1 with *own
 * (the program's own session still runs); else 0. */
int ptw_sys_stop(int *own);

/* 1 while system mode is on (between ptw_start and ptw_stop). */
int ptw_sys_on(void);

/* fork() child, under the tracer's mutex: forgets system mode without
 * touching the parent's thread; closes the child's copies of the
 * connection and unmaps the buffer. */
void ptw_sys_atfork_child(void);

/* System sessions whose events are being recorded now (tests). */
int ptw_sys_sessions(void);

/* The connection's state in a sentence (a test explains with it a
 * session that did not start). */
void ptw_sys_describe(char *out, size_t n);

/* Packets lost to a full shared memory buffer so far (ptw_stats). */
uint64_t ptw_sys_lost(void);

#endif /* PTW_SYSTEM_H */
