/* writer_internal.h - hooks of the writer for other lib/ modules (clock
 * streams, tracer backend). Not installed, not API.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_WRITER_INTERNAL_H
#define PTW_WRITER_INTERNAL_H

#include "ptw/writer.h"

/* Which kind of timestamps a writer carries. Host-time events (the sim and
 * wall sequences, ptw_writer_add_seq sequences) and clock streams cannot
 * share one writer: the first event or stream fixes the mode, and the other
 * kind then gets PTW_ERR_INVALID. */
enum ptw_i_mode {
	PTW_I_MODE_NONE = 0,
	PTW_I_MODE_HOST,
	PTW_I_MODE_CLOCK,
};

/* Sets the mode, or returns PTW_ERR_INVALID if the writer is in the other
 * mode (and records that misuse in the writer's error record). */
int ptw_i_writer_set_mode(struct ptw_writer *w, enum ptw_i_mode mode);

/* A sequence for clock-stream output: its events do not claim HOST mode.
 * Same semantics as ptw_writer_add_seq otherwise. */
struct ptw_seq *ptw_i_writer_add_clock_seq(struct ptw_writer *w,
					   uint64_t default_track);

/* A module that buffers events (clock streams) registers a hook that
 * ptw_writer_close() calls first, before the final flush, to emit what
 * remains; then 'free_fn(ctx)' at the end of close. One hook per writer;
 * a second registration returns PTW_ERR_INVALID. */
int ptw_i_writer_set_close_hook(struct ptw_writer *w,
				int (*close_fn)(void *ctx),
				void (*free_fn)(void *ctx), void *ctx);

/* Clock-stream buffering figures, reported by ptw_writer_get_stats(). */
void ptw_i_writer_note_clock_peak(struct ptw_writer *w, uint64_t records,
				  uint64_t bytes);

/* Records an error in the writer's error record (code, errno, message) and
 * returns code; NOMEM and IO become sticky. */
int ptw_i_writer_fail(struct ptw_writer *w, int code, int sys_errno,
		      const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

#endif /* PTW_WRITER_INTERNAL_H */
