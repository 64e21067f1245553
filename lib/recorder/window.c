/* window.c - the flight recorder's circular store of pieces.
 * SPDX-License-Identifier: Apache-2.0 */
#include "window.h"

#include <stdlib.h>
#include <string.h>

#include "lib/writer/sink.h"

struct ptw_window *ptw_window_create(uint64_t size)
{
	if (size < PTW_RS_MIN_BYTES || size > SIZE_MAX / 2)
		return NULL;
	struct ptw_window *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return NULL;
	/* Untouched pages cost nothing until the ring reaches them. */
	rs->mem = malloc((size_t)size);
	if (!rs->mem) {
		free(rs);
		return NULL;
	}
	rs->size = size;
	rs->piece_target = size / 8;
	atomic_store(&rs->first, 0);
	atomic_store(&rs->n, 1); /* the first piece, empty */
	rs->p[0].min_ts = UINT64_MAX;
	return rs;
}

void ptw_window_destroy(struct ptw_window *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < PTW_RS_MAX_PIECES; i++)
		ptw_pb_buf_free(&rs->p[i].open);
	free(rs->prefix);
	free(rs->mem);
	free(rs);
}

/* Forgets the oldest piece (never the current one). */
static void ptw_window_drop_oldest(struct ptw_window *rs)
{
	uint32_t f = atomic_load_explicit(&rs->first, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&rs->n, memory_order_relaxed);
	struct ptw_window_piece *o = &rs->p[f % PTW_RS_MAX_PIECES];
	rs->bytes_overwritten += atomic_load_explicit(&o->len, memory_order_relaxed);
	rs->pieces_dropped++;
	/* Publish the new window before its space is reused. */
	atomic_store_explicit(&rs->n, n - 1, memory_order_release);
	atomic_store_explicit(&rs->first, (f + 1) % PTW_RS_MAX_PIECES,
			      memory_order_release);
}

int ptw_window_append(struct ptw_window *rs, const uint8_t *p, size_t n)
{
	struct ptw_window_piece *cur = ptw_window_cur(rs);
	uint64_t cur_len = atomic_load_explicit(&cur->len, memory_order_relaxed);
	if (cur_len + n > rs->size) {
		/* Not even the current piece and these bytes fit: both go. */
		rs->bytes_overwritten += cur_len + n;
		atomic_store_explicit(&cur->len, 0, memory_order_release);
		atomic_store_explicit(&cur->start, rs->pos, memory_order_release);
		return 1;
	}
	for (;;) {
		uint32_t f = atomic_load_explicit(&rs->first, memory_order_relaxed);
		uint32_t k = atomic_load_explicit(&rs->n, memory_order_relaxed);
		if (k <= 1)
			break;
		uint64_t oldest = atomic_load_explicit(
			&rs->p[f % PTW_RS_MAX_PIECES].start, memory_order_relaxed);
		if (rs->pos + n - oldest <= rs->size)
			break;
		ptw_window_drop_oldest(rs);
	}
	uint64_t off = rs->pos % rs->size;
	size_t first = n;
	if (off + n > rs->size) {
		first = (size_t)(rs->size - off);
		rs->wraps++;
	}
	memcpy(rs->mem + off, p, first);
	if (first < n)
		memcpy(rs->mem, p + first, n - first);
	rs->pos += n;
	rs->bytes_written += n;
	atomic_store_explicit(&cur->len, cur_len + n, memory_order_release);
	return 0;
}

void ptw_window_cut(struct ptw_window *rs, uint64_t snapshot)
{
	uint32_t n = atomic_load_explicit(&rs->n, memory_order_relaxed);
	if (n == PTW_RS_MAX_PIECES)
		ptw_window_drop_oldest(rs);
	n = atomic_load_explicit(&rs->n, memory_order_relaxed);
	uint32_t f = atomic_load_explicit(&rs->first, memory_order_relaxed);
	struct ptw_window_piece *np = &rs->p[(f + n) % PTW_RS_MAX_PIECES];
	np->open.len = 0;
	np->min_ts = UINT64_MAX;
	np->cut_snapshot = snapshot;
	atomic_store_explicit(&np->start, rs->pos, memory_order_relaxed);
	atomic_store_explicit(&np->len, 0, memory_order_relaxed);
	atomic_store_explicit(&rs->n, n + 1, memory_order_release);
	rs->pieces_cut++;
}

int ptw_window_write_pieces(struct ptw_window *rs, int fd)
{
	uint32_t f = atomic_load_explicit(&rs->first, memory_order_acquire);
	uint32_t n = atomic_load_explicit(&rs->n, memory_order_acquire);
	for (uint32_t i = 0; i < n && i < PTW_RS_MAX_PIECES; i++) {
		struct ptw_window_piece *pc = &rs->p[(f + i) % PTW_RS_MAX_PIECES];
		uint64_t start = atomic_load_explicit(&pc->start, memory_order_acquire);
		uint64_t len = atomic_load_explicit(&pc->len, memory_order_acquire);
		if (len > rs->size)
			return -1;
		uint64_t off = start % rs->size;
		uint64_t first = off + len > rs->size ? rs->size - off : len;
		if (ptw_fd_write_all(fd, rs->mem + off, (size_t)first) ||
		    ptw_fd_write_all(fd, rs->mem, (size_t)(len - first)))
			return -1;
	}
	return 0;
}
