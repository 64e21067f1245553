/* window.h - the flight recorder's memory: the newest 'size' bytes of
 * encoded trace, as a list of self-contained pieces in one circular byte
 * buffer. Each piece starts at a checkpoint of the writer (every sequence
 * CLEARED with a fresh clock snapshot, every track described again), so
 * dropping the oldest piece never leaves a reference to an interned
 * string, a track or a clock that the window no longer holds.
 * Not installed, not API.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_RECORDER_WINDOW_H
#define PTW_RECORDER_WINDOW_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/encode/pb.h"

#define PTW_RS_MAX_PIECES 16u    /* pieces held at most (a piece is >= size/8) */
#define PTW_RS_MIN_BYTES (64u * 1024u)

struct ptw_window_piece {
	/* Absolute byte positions (monotonic; data at pos % size). Atomic:
	 * the crash handler reads them (tracer_crash.c). */
	_Atomic uint64_t start;
	_Atomic uint64_t len;
	uint64_t min_ts;           /* earliest checkpoint time in the piece */
	uint64_t cut_snapshot;     /* newest clock snapshot at the cut */
	/* The slices open when the piece began, encoded (recorder.c):
	 * the snapshot prefix begins them again. Reused piece after piece. */
	struct ptw_pb_buf open;
};

struct ptw_window {
	uint8_t *mem;
	uint64_t size;
	uint64_t piece_target;     /* cut a piece once it holds this much */
	struct ptw_window_piece p[PTW_RS_MAX_PIECES]; /* circular */
	_Atomic uint32_t first;    /* oldest piece held (index mod MAX) */
	_Atomic uint32_t n;        /* pieces held, the current one included */
	uint64_t pos;              /* next absolute write position */
	/* figures for TraceStats (BufferStats) */
	uint64_t bytes_written, bytes_overwritten;
	uint64_t pieces_cut, pieces_dropped, wraps;
	/* The snapshot prefix (begins of open slices, see recorder.c),
	 * kept encoded for the crash handler: rebuilt when the oldest piece
	 * or its min_ts changes. */
	uint8_t *prefix;
	_Atomic size_t prefix_len;
	size_t prefix_cap;
	uint32_t prefix_first;     /* piece the prefix was built for */
	uint64_t prefix_ts;
	int prefix_valid;
};

/* 'size' >= PTW_RS_MIN_BYTES. NULL if out of memory. */
struct ptw_window *ptw_window_create(uint64_t size);
void ptw_window_destroy(struct ptw_window *rs);
/* The piece being filled. */
static inline struct ptw_window_piece *ptw_window_cur(struct ptw_window *rs)
{
	uint32_t n = atomic_load_explicit(&rs->n, memory_order_relaxed);
	uint32_t f = atomic_load_explicit(&rs->first, memory_order_relaxed);
	return &rs->p[(f + n - 1) % PTW_RS_MAX_PIECES];
}
/* Appends bytes to the current piece, dropping the oldest pieces to make
 * room. Returns 0, or 1 if even the current piece had to go (the bytes
 * are not stored; the caller must start a new piece). */
int ptw_window_append(struct ptw_window *rs, const uint8_t *p, size_t n);
/* Starts a new piece (the current one is kept); its open slices are
 * noted later (recorder.c). */
void ptw_window_cut(struct ptw_window *rs, uint64_t snapshot);
/* Writes every held piece, oldest first, to fd with write() only (also
 * from the crash handler). Returns 0 or -1 (errno set). */
int ptw_window_write_pieces(struct ptw_window *rs, int fd);

#endif /* PTW_RECORDER_WINDOW_H */
