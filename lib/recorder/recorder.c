/* recorder.c - the writer's flight-recorder mode: output goes into a
 * window of self-contained pieces instead of a file, and snapshots
 * (also from the crash handler) write the window held.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A piece ends once it holds size/8 bytes, at the end of a flush. The next
 * piece starts with the descriptor of every track (the descriptor
 * sequence CLEARED again), and every sequence writes a checkpoint
 * (CLEARED, defaults, a fresh clock snapshot, interning restarted) before
 * its first event in the piece, so the oldest piece can always be dropped.
 * A slice open when a piece starts has its BEGIN in an older piece: when
 * the piece's first checkpoint is due, its owner (the tracer, through
 * ptw_i_writer_recorder_set_open_fn) encodes a BEGIN for each slice open then,
 * with its real name, category and arguments; a snapshot starts with a
 * prefix, on a sequence of its own, that writes those of the oldest piece
 * at the earliest time of the window, so no END in the window lacks its
 * BEGIN. Without an owner, each such slice is begun as "ptw: begun before
 * the window". The prefix also carries the trace metadata
 * (ptw_i_writer_metadata). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/encode/pb_fields.h"
#include "lib/writer/seq_fast.h"
#include "lib/writer/writer_state.h"

#define PTW_RECORDER_PREFIX_NAME "ptw: begun before the window"

int ptw_i_writer_recorder_enable(struct ptw_writer *w, uint64_t ring_bytes)
{
	if (!w || w->rs || w->n_seqs > 2 || w->tracks.n)
		return PTW_ERR_STATE;
	if (ring_bytes < PTW_RS_MIN_BYTES)
		return PTW_ERR_INVALID;
	w->rs = ptw_window_create(ring_bytes);
	if (!w->rs)
		return PTW_ERR_NOMEM;
	/* Batches small next to a piece, so pieces stay near their size. */
	uint64_t cap = w->rs->piece_target / 4;
	if (w->flush_at > cap)
		w->flush_at = (size_t)cap;
	w->prefix_seq_id = w->next_seq_id++;
	return 0;
}

int ptw_i_writer_is_recorder(const struct ptw_writer *w) { return w && w->rs; }

int ptw_w_rec_write(struct ptw_writer *w, const uint8_t *p, size_t n)
{
	struct ptw_window *rs = w->rs;
	if (w->ring_discard) {
		rs->bytes_overwritten += n;
		return 0;
	}
	if (ptw_window_append(rs, p, n)) {
		/* Even the current piece had to go: what follows in this
		 * flush refers to it, so drop that too and start afresh. */
		w->ring_discard = 1;
		w->ring_cut_due = 1;
	}
	w->stats.bytes_written = rs->bytes_written;
	return 0;
}

void ptw_w_rec_note_checkpoint(struct ptw_writer *w, uint64_t ts)
{
	struct ptw_window_piece *pc = ptw_window_cur(w->rs);
	if (ts < pc->min_ts)
		pc->min_ts = ts;
}

void ptw_i_writer_recorder_note_ts(struct ptw_writer *w, uint64_t ts)
{
	if (w && w->rs)
		ptw_w_rec_note_checkpoint(w, ts);
}

void ptw_i_writer_recorder_set_open_fn(struct ptw_writer *w,
				       int (*fn)(void *ctx, struct ptw_pb_buf *b),
				       void *ctx)
{
	w->ring_open_fn = fn;
	w->ring_open_ctx = ctx;
}

void ptw_i_writer_recorder_open_add(const struct ptw_writer *w,
				    struct ptw_pb_buf *b, uint64_t track,
				    const char *cat, const char *name,
				    const struct ptw_arg *args, uint32_t n_args)
{
	/* names and values inline, not interned: the prefix is written
	 * once per snapshot, and its sequence has no interned data */
	size_t m = ptw_pb_begin_nested(b, PTW_F_TRACE_PACKET);
	ptw_pb_append_varint_field(b, PTW_F_PKT_TIMESTAMP, 0);
	ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_ID, w->prefix_seq_id);
	ptw_w_put_mid(w, b);
	ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_FLAGS,
				   PTW_SEQ_NEEDS_INCREMENTAL_STATE);
	size_t te = ptw_pb_begin_nested(b, PTW_F_PKT_TRACK_EVENT);
	ptw_pb_append_varint_field(b, PTW_F_TE_TYPE, PTW_TE_TYPE_SLICE_BEGIN);
	ptw_pb_append_varint_field(b, PTW_F_TE_TRACK_UUID, track);
	if (cat && *cat)
		ptw_pb_append_string_field(b, PTW_F_TE_CATEGORIES, cat);
	if (name)
		ptw_pb_append_string_field(b, PTW_F_TE_NAME, name);
	for (uint32_t i = 0; i < n_args; i++) {
		const struct ptw_arg *a = &args[i];
		size_t da = ptw_pb_begin_nested(b, PTW_F_TE_DEBUG_ANNOTATIONS);
		ptw_pb_append_string_field(b, PTW_F_DA_NAME, a->name);
		switch (a->type) {
		case PTW_ARG_TYPE_BOOL:
			ptw_pb_append_varint_field(b, PTW_F_DA_BOOL_VALUE,
						   a->v.b != 0);
			break;
		case PTW_ARG_TYPE_INT:
			ptw_pb_append_int64_field(b, PTW_F_DA_INT_VALUE, a->v.i);
			break;
		case PTW_ARG_TYPE_UINT:
			ptw_pb_append_varint_field(b, PTW_F_DA_UINT_VALUE, a->v.u);
			break;
		case PTW_ARG_TYPE_POINTER:
			ptw_pb_append_varint_field(b, PTW_F_DA_POINTER_VALUE,
						   a->v.u);
			break;
		case PTW_ARG_TYPE_DOUBLE:
			ptw_pb_append_double_field(b, PTW_F_DA_DOUBLE_VALUE,
						   a->v.d);
			break;
		case PTW_ARG_TYPE_STRING:
			ptw_pb_append_string_field(b, PTW_F_DA_STRING_VALUE,
						   a->v.s);
			break;
		default: /* nested values: the tracer has none */
			break;
		}
		ptw_pb_end_nested(b, da);
	}
	ptw_pb_end_nested(b, te);
	ptw_pb_end_nested(b, m);
}

void ptw_w_rec_note_open(struct ptw_writer *w)
{
	struct ptw_window_piece *pc = ptw_window_cur(w->rs);
	w->ring_open_pending = 0;
	pc->open.len = 0;
	int rc = 0;
	if (w->ring_open_fn) {
		rc = w->ring_open_fn(w->ring_open_ctx, &pc->open);
	} else {
		for (uint64_t i = 0; i < w->tracks.n; i++)
			for (uint32_t d = 0; d < w->tracks.v[i].depth; d++)
				ptw_i_writer_recorder_open_add(w, &pc->open, i + 1,
							       NULL,
							       PTW_RECORDER_PREFIX_NAME,
							       NULL, 0);
	}
	if (rc || pc->open.oom) {
		pc->open.len = 0;
		pc->open.oom = 0;
		ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0,
				  "flight recorder: out of memory");
	}
}

/* Starts a new piece: every sequence checkpoints before its next event
 * and every track is described again. */
static int ptw_w_rec_cut(struct ptw_writer *w)
{
	w->ring_cut_due = 0;
	w->ring_discard = 0;
	ptw_window_cut(w->rs, w->last_snapshot);
	w->ring_open_pending = 1;
	for (uint32_t i = 0; i < w->n_seqs; i++) {
		struct ptw_seq *s = w->seqs[i];
		if (s->started && !s->destroyed) {
			s->need_cp = 1;
			ptw_seq_fast_update(s);
		}
	}
	w->desc_started = 0;
	w->sysinfo_due = w->sysinfo != NULL;
	w->tracks.order_done = 0;
	return ptw_w_requeue_tracks(w);
}

int ptw_w_rec_after_flush(struct ptw_writer *w)
{
	struct ptw_window *rs = w->rs;
	if (!w->ring_cut_due &&
	    atomic_load_explicit(&ptw_window_cur(rs)->len, memory_order_relaxed) <
		    rs->piece_target)
		return 0;
	return ptw_w_rec_cut(w);
}

/* ---- snapshot ------------------------------------------------------ */

/* The piece a snapshot starts with: the oldest that holds bytes, else the
 * current one. */
static struct ptw_window_piece *ptw_w_rec_base(struct ptw_window *rs, uint32_t *ix)
{
	uint32_t f = atomic_load_explicit(&rs->first, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&rs->n, memory_order_relaxed);
	for (uint32_t i = 0; i + 1 < n; i++) {
		struct ptw_window_piece *pc = &rs->p[(f + i) % PTW_RS_MAX_PIECES];
		if (atomic_load_explicit(&pc->len, memory_order_relaxed)) {
			*ix = f + i;
			return pc;
		}
	}
	*ix = f + n - 1;
	return &rs->p[(f + n - 1) % PTW_RS_MAX_PIECES];
}

/* Rebuilds the snapshot prefix if the base piece or its time changed. */
static int ptw_w_rec_prefix(struct ptw_writer *w)
{
	struct ptw_window *rs = w->rs;
	if (w->ring_open_pending)
		ptw_w_rec_note_open(w);
	uint32_t ix;
	struct ptw_window_piece *pc = ptw_w_rec_base(rs, &ix);
	/* The earliest checkpoint of the whole window: a thread whose ring
	 * lags may write, in a later piece, events older than anything in
	 * the base piece; its first event in each piece is a checkpoint, and
	 * a thread's events are in time order, so none is older than this. */
	uint64_t t = pc->cut_snapshot;
	uint32_t f = atomic_load_explicit(&rs->first, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&rs->n, memory_order_relaxed);
	for (uint32_t i = ix - f; i < n; i++) {
		uint64_t m = rs->p[(f + i) % PTW_RS_MAX_PIECES].min_ts;
		if (m < t)
			t = m;
	}
	if (rs->prefix_valid && rs->prefix_first == ix && rs->prefix_ts == t)
		return 0;
	struct ptw_pb_buf b;
	if (ptw_pb_buf_init(&b, 256 + w->ring_meta.len + pc->open.len))
		return PTW_ERR_NOMEM;
	/* t <= the cut's checkpoint time <= any REALTIME snapshot in the
	 * window (all taken after the cut) */
	ptw_w_put_realtime_at(w, &b, t);
	if (pc->open.len || w->ring_meta.len) {
		size_t m = ptw_pb_begin_nested(&b, PTW_F_TRACE_PACKET);
		ptw_w_encode_checkpoint(w, &b, w->prefix_seq_id, 0, 0, 0,
					PTW_CLOCK_SEQ_INCR, t);
		ptw_pb_end_nested(&b, m);
		if (w->ring_meta.len)
			ptw_pb_append_raw(&b, w->ring_meta.data,
					  w->ring_meta.len);
		if (pc->open.len)
			ptw_pb_append_raw(&b, pc->open.data, pc->open.len);
	}
	if (b.oom) {
		ptw_pb_buf_free(&b);
		return PTW_ERR_NOMEM;
	}
	/* Swap in the new prefix; the crash handler reads it only while
	 * the backend is idle (tracer_crash.c). */
	free(rs->prefix);
	rs->prefix = b.data;
	rs->prefix_cap = b.cap;
	atomic_store_explicit(&rs->prefix_len, b.len, memory_order_release);
	rs->prefix_first = ix;
	rs->prefix_ts = t;
	rs->prefix_valid = 1;
	return 0;
}

int ptw_i_writer_recorder_prepare(struct ptw_writer *w)
{
	if (!w || !w->rs)
		return PTW_ERR_STATE;
	if (w->sticky)
		return w->sticky;
	int rc = ptw_w_flush(w);
	if (rc)
		return rc;
	rc = ptw_w_rec_prefix(w);
	if (rc)
		return ptw_i_writer_fail(w, rc, 0, "flight recorder: out of memory");
	return 0;
}

/* ---- trace metadata ------------------------------------------------------ */

int ptw_i_writer_metadata(struct ptw_writer *w, struct ptw_seq *s, uint64_t ts,
			  const struct ptw_i_meta *m, size_t n)
{
	if (!w || !s || s->w != w)
		return PTW_ERR_INVALID;
	if (w->sticky)
		return w->sticky;
	/* ChromeEventBundle { metadata { name, string_value | int_value } } */
	struct ptw_pb_buf bundle;
	if (ptw_pb_buf_init(&bundle, 256))
		return ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0,
					 "metadata: out of memory");
	for (size_t i = 0; i < n; i++) {
		size_t e = ptw_pb_begin_nested(&bundle, PTW_F_CEB_METADATA);
		ptw_pb_append_string_field(&bundle, PTW_F_CM_NAME, m[i].name);
		if (m[i].str)
			ptw_pb_append_string_field(&bundle, PTW_F_CM_STRING_VALUE,
						   m[i].str);
		else
			ptw_pb_append_int64_field(&bundle, PTW_F_CM_INT_VALUE,
						  m[i].i);
		ptw_pb_end_nested(&bundle, e);
	}
	int rc = bundle.oom ? PTW_ERR_NOMEM : 0;
	if (!rc && w->rs) {
		/* for the prefix of every snapshot: a packet on the prefix
		 * sequence, at the window's start */
		struct ptw_pb_buf *b = &w->ring_meta;
		b->len = 0;
		size_t k = ptw_pb_begin_nested(b, PTW_F_TRACE_PACKET);
		ptw_pb_append_varint_field(b, PTW_F_PKT_TIMESTAMP, 0);
		ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_ID,
					   w->prefix_seq_id);
		ptw_w_put_mid(w, b);
		ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_FLAGS,
					   PTW_SEQ_NEEDS_INCREMENTAL_STATE);
		ptw_pb_append_bytes_field(b, PTW_F_PKT_CHROME_EVENTS,
					  bundle.data, bundle.len);
		ptw_pb_end_nested(b, k);
		rc = b->oom ? PTW_ERR_NOMEM : 0;
		w->rs->prefix_valid = 0;
	} else if (!rc) {
		/* stream mode: one packet on 's', now */
		rc = ptw_w_seq_prepare(s, ts);
		if (!rc) {
			size_t k = ptw_w_packet_begin(w);
			if (ptw_pb_reserve(&w->pend, 64)) {
				uint8_t *q = ptw_seq_put_ts_hdr(
					s, w->pend.data + w->pend.len, ts);
				w->pend.len = (size_t)(q - w->pend.data);
				s->since_cp++;
				ptw_seq_fast_update(s);
			}
			ptw_pb_append_bytes_field(&w->pend,
						  PTW_F_PKT_CHROME_EVENTS,
						  bundle.data, bundle.len);
			rc = ptw_w_packet_end(w, k, 0);
		}
	}
	ptw_pb_buf_free(&bundle);
	if (rc == PTW_ERR_NOMEM)
		return ptw_i_writer_fail(w, rc, 0, "metadata: out of memory");
	return rc;
}

/* ---- TraceStats -------------------------------------------------------- */

/* Encodes 'v' into p (at most 10 bytes). */
static size_t ptw_ts_varint(uint8_t *p, uint64_t v)
{
	return (size_t)(ptw_pb_write_varint(p, v) - p);
}

static size_t ptw_ts_field(uint8_t *p, uint32_t f, uint64_t v)
{
	return (size_t)(ptw_pb_write_varint_field(p, f, v) - p);
}

/* WriterStats of sequence 'id' in buffer 0. */
static size_t ptw_ts_writer(uint8_t *p, uint32_t id)
{
	uint8_t body[16];
	size_t bl = ptw_ts_field(body, PTW_F_WS_SEQUENCE_ID, id);
	bl += ptw_ts_field(body + bl, PTW_F_WS_BUFFER, 0);
	size_t n = ptw_ts_varint(p, PTW_PB_TAG(PTW_F_TS_WRITER_STATS, PTW_PB_WT_LEN));
	n += ptw_ts_varint(p + n, bl);
	memcpy(p + n, body, bl);
	return n + bl;
}

int ptw_i_writer_put_trace_stats(const struct ptw_writer *w,
				 const struct ptw_i_trace_stats *st, int fd,
				 struct ptw_pb_buf *b)
{
	/* buffer_stats[0] */
	uint8_t bs[96];
	size_t bl = 0;
	const struct ptw_window *rs = w->rs;
	if (rs) {
		bl += ptw_ts_field(bs + bl, PTW_F_BS_BUFFER_SIZE, rs->size);
		bl += ptw_ts_field(bs + bl, PTW_F_BS_BYTES_WRITTEN, rs->bytes_written);
		bl += ptw_ts_field(bs + bl, PTW_F_BS_BYTES_OVERWRITTEN,
				   rs->bytes_overwritten);
	}
	bl += ptw_ts_field(bs + bl, PTW_F_BS_TRACE_WRITER_PACKET_LOSS,
			   st->packet_loss);
	uint8_t hdr[160];
	size_t hl = 0;
	hl += ptw_ts_varint(hdr + hl, PTW_PB_TAG(PTW_F_TS_BUFFER_STATS, PTW_PB_WT_LEN));
	hl += ptw_ts_varint(hdr + hl, bl);
	memcpy(hdr + hl, bs, bl);
	hl += bl;
	/* one WriterStats per sequence that wrote a packet */
	uint64_t body = hl;
	uint8_t tmp[32];
	for (uint32_t i = 0; i < w->n_seqs; i++)
		if (w->seqs[i]->started)
			body += ptw_ts_writer(tmp, w->seqs[i]->id);
	/* the packet: sequence 2, CLEARED (the packet may be the first of
	 * the descriptor sequence in a snapshot), trace_stats */
	uint8_t pk[64];
	size_t pl = 0;
	pl += ptw_ts_field(pk + pl, PTW_F_PKT_SEQUENCE_ID, PTW_SEQ_ID_DESCRIPTORS);
	memcpy(pk + pl, w->mid, w->mid_len);
	pl += w->mid_len;
	pl += ptw_ts_field(pk + pl, PTW_F_PKT_SEQUENCE_FLAGS,
			   PTW_SEQ_INCREMENTAL_STATE_CLEARED);
	pl += ptw_ts_varint(pk + pl, PTW_PB_TAG(PTW_F_PKT_TRACE_STATS, PTW_PB_WT_LEN));
	pl += ptw_ts_varint(pk + pl, body);
	uint8_t rec[32];
	size_t rl = ptw_ts_varint(rec, PTW_PB_TAG(PTW_F_TRACE_PACKET, PTW_PB_WT_LEN));
	rl += ptw_ts_varint(rec + rl, pl + body);
	if (b) {
		ptw_pb_append_raw(b, rec, rl);
		ptw_pb_append_raw(b, pk, pl);
		ptw_pb_append_raw(b, hdr, hl);
		for (uint32_t i = 0; i < w->n_seqs; i++) {
			if (!w->seqs[i]->started)
				continue;
			size_t n = ptw_ts_writer(tmp, w->seqs[i]->id);
			ptw_pb_append_raw(b, tmp, n);
		}
		return b->oom ? PTW_ERR_NOMEM : 0;
	}
	/* write() only: the crash handler uses this path */
	if (ptw_fd_write_all(fd, rec, rl) || ptw_fd_write_all(fd, pk, pl) ||
	    ptw_fd_write_all(fd, hdr, hl))
		return PTW_ERR_IO;
	uint8_t chunk[512];
	size_t cl = 0;
	for (uint32_t i = 0; i < w->n_seqs; i++) {
		if (!w->seqs[i]->started)
			continue;
		if (cl + 32 > sizeof(chunk)) {
			if (ptw_fd_write_all(fd, chunk, cl))
				return PTW_ERR_IO;
			cl = 0;
		}
		cl += ptw_ts_writer(chunk + cl, w->seqs[i]->id);
	}
	if (cl && ptw_fd_write_all(fd, chunk, cl))
		return PTW_ERR_IO;
	return 0;
}

int ptw_i_writer_trace_stats(struct ptw_writer *w,
			     const struct ptw_i_trace_stats *st)
{
	if (!w)
		return PTW_ERR_INVALID;
	if (w->sticky)
		return w->sticky;
	w->last_pkt = w->pend.len;
	int rc = ptw_i_writer_put_trace_stats(w, st, -1, &w->pend);
	if (rc)
		return ptw_i_writer_fail(w, rc, 0, "trace stats: out of memory");
	w->stats.packets++;
	return 0;
}

static int ptw_w_window_out(struct ptw_writer *w, int fd,
			    const struct ptw_i_trace_stats *st, int pend)
{
	struct ptw_window *rs = w->rs;
	size_t pl = atomic_load_explicit(&rs->prefix_len, memory_order_acquire);
	if (pl && ptw_fd_write_all(fd, rs->prefix, pl))
		return PTW_ERR_IO;
	if (ptw_window_write_pieces(rs, fd))
		return PTW_ERR_IO;
	if (pend && w->pend.len && !w->ring_discard &&
	    ptw_fd_write_all(fd, w->pend.data, w->pend.len))
		return PTW_ERR_IO;
	if (st)
		return ptw_i_writer_put_trace_stats(w, st, fd, NULL);
	return 0;
}

int ptw_i_writer_write_window(struct ptw_writer *w, int fd,
			      const struct ptw_i_trace_stats *st, int pend)
{
	struct ptw_sigpipe_guard g;
	ptw_sigpipe_hold(&g);
	int rc = ptw_w_window_out(w, fd, st, pend);
	ptw_sigpipe_release(&g, rc != 0);
	return rc;
}

int ptw_i_writer_snapshot(struct ptw_writer *w, int fd,
			  const struct ptw_i_trace_stats *st)
{
	int rc = ptw_i_writer_recorder_prepare(w);
	if (rc)
		return rc;
	rc = ptw_i_writer_write_window(w, fd, st, 0);
	if (rc == PTW_ERR_IO)
		return ptw_error_set(NULL, PTW_ERR_IO, errno, "snapshot write");
	return rc;
}

static int ptw_w_pending_out(struct ptw_writer *w, int fd,
			     const struct ptw_i_trace_stats *st)
{
	/* what the sink held back of its last write comes first (sink.h) */
	if (w->sink.carry_len && !w->sink.failed_errno &&
	    ptw_fd_write_all(fd, w->sink.carry, w->sink.carry_len))
		return PTW_ERR_IO;
	if (w->pend.len && ptw_fd_write_all(fd, w->pend.data, w->pend.len))
		return PTW_ERR_IO;
	return st ? ptw_i_writer_put_trace_stats(w, st, fd, NULL) : 0;
}

int ptw_i_writer_write_pending(struct ptw_writer *w, int fd,
			       const struct ptw_i_trace_stats *st)
{
	struct ptw_sigpipe_guard g;
	ptw_sigpipe_hold(&g);
	int rc = ptw_w_pending_out(w, fd, st);
	ptw_sigpipe_release(&g, rc != 0);
	return rc;
}

int ptw_i_writer_crash_ready(struct ptw_writer *w)
{
	if (!w || w->sticky)
		return 0;
	/* The crash handler cannot encode: descriptors still queued are
	 * written now (a flush when new tracks appeared, rare). */
	if (w->tracks.n_pend) {
		int rc = ptw_w_flush(w);
		if (rc)
			return rc;
	}
	if (!w->rs)
		return 0;
	int rc = ptw_w_rec_prefix(w);
	if (rc)
		return ptw_i_writer_fail(w, rc, 0, "flight recorder: out of memory");
	return 0;
}
