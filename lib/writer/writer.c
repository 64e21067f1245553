/* writer.c - writer lifecycle, packet framing, buffering and output
 * (raw or deflated batches), errors and statistics.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/encode/pb_fields.h"
#include "ptw/version.h"
#include "lib/util/sized.h"
#include "writer_state.h"

static uint64_t ptw_w_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- errors ----------------------------------------------------------- */

int ptw_i_writer_fail(struct ptw_writer *w, int code, int sys_errno,
		      const char *fmt, ...)
{
	if (!w)
		return code;
	/* A sticky error keeps its record: it is what close reports. */
	if (w->sticky)
		return code;
	w->err.input = NULL;
	w->err.offset = w->sink.bytes_written;
	w->err.line = w->err.column = 0;
	va_list ap;
	va_start(ap, fmt);
	ptw_error_vset(&w->err, code, sys_errno, fmt, ap);
	va_end(ap);
	if (code == PTW_ERR_NOMEM || code == PTW_ERR_IO)
		w->sticky = code;
	return code;
}

const struct ptw_error *ptw_writer_error(const struct ptw_writer *w)
{
	static const struct ptw_error no_writer = {
		.code = PTW_ERR_INVALID, .msg = "no writer (NULL)"};
	return w ? &w->err : &no_writer;
}

/* ---- open ------------------------------------------------------------- */

static int ptw_w_resolve_options(const struct ptw_writer_options *in,
				 struct ptw_writer_options *o,
				 struct ptw_error *err)
{
	memset(o, 0, sizeof(*o));
	if (in)
		*o = *in;
	if (!o->checkpoint_packets)
		o->checkpoint_packets = PTW_DEFAULT_CHECKPOINT_PACKETS;
	if (!o->max_interned)
		o->max_interned = PTW_DEFAULT_MAX_INTERNED;
	if (!o->flush_bytes)
		o->flush_bytes = PTW_DEFAULT_FLUSH_BYTES;
	if (o->compress != PTW_COMPRESS_NONE &&
	    o->compress != PTW_COMPRESS_DEFLATE && o->compress != PTW_COMPRESS_ZSTD)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "compress %d is not 0 (none), 1 (deflate) "
				     "or 2 (zstd)", o->compress);
	int zstd = o->compress == PTW_COMPRESS_ZSTD;
	int max_level = zstd ? 19 : 9;
	if (!o->compress_level)
		o->compress_level = zstd ? PTW_DEFAULT_ZSTD_LEVEL
					 : PTW_DEFAULT_COMPRESS_LEVEL;
	if (o->compress_level < 1 || o->compress_level > max_level)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "%s compress_level %d is not in 1..%d",
				     zstd ? "zstd" : "deflate",
				     o->compress_level, max_level);
	return 0;
}

static struct ptw_writer *ptw_w_open(int fd,
				     const struct ptw_writer_options *opt,
				     struct ptw_error *err);

/* The caller's options, as its header knew them (sized.h). */
static int ptw_w_options_in(struct ptw_writer_options *o,
			    const struct ptw_writer_options *opt,
			    size_t opt_size, struct ptw_error *err)
{
	if (ptw_sized_in(o, sizeof(*o), opt, opt_size))
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "writer options of %zu bytes set fields "
				     "this library (%zu bytes, version %s) "
				     "does not know",
				     opt_size, sizeof(*o), PTW_VERSION);
	return 0;
}

struct ptw_writer *ptw_writer_open_fd_sized(int fd,
					    const struct ptw_writer_options *opt,
					    size_t opt_size,
					    struct ptw_error *err)
{
	struct ptw_writer_options o;
	if (ptw_w_options_in(&o, opt, opt_size, err))
		return NULL;
	if (fd < 0) {
		ptw_error_set(err, PTW_ERR_INVALID, 0, "invalid fd %d", fd);
		return NULL;
	}
	return ptw_w_open(fd, &o, err);
}

struct ptw_writer *ptw_i_writer_open_recorder(const struct ptw_writer_options *opt,
					      uint64_t ring_bytes,
					      struct ptw_error *err)
{
	struct ptw_writer_options o;
	if (opt)
		o = *opt;
	else
		memset(&o, 0, sizeof(o));
	o.close_fd = 0;
	struct ptw_writer *w = ptw_w_open(-1, &o, err);
	if (!w)
		return NULL;
	int rc = ptw_i_writer_recorder_enable(w, ring_bytes);
	if (rc) {
		ptw_error_set(err, rc, 0,
			      rc == PTW_ERR_NOMEM ? "flight recorder: cannot "
						    "allocate %llu bytes"
						  : "flight recorder: ring_bytes "
						    "%llu is below 64 KiB",
			      (unsigned long long)ring_bytes);
		ptw_writer_close(w, NULL);
		return NULL;
	}
	return w;
}

static struct ptw_writer *ptw_w_open(int fd,
				     const struct ptw_writer_options *opt,
				     struct ptw_error *err)
{
	struct ptw_writer_options o;
	if (ptw_w_resolve_options(opt, &o, err) != 0)
		return NULL;
	struct ptw_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		ptw_error_set(err, PTW_ERR_NOMEM, 0, "writer: out of memory");
		return NULL;
	}
	w->opt = o;
	ptw_sink_init(&w->sink, fd, o.close_fd);
	w->open_ns = ptw_w_mono_ns();
	int ok = ptw_w_machine_init(w) == 0;
	w->sysinfo_due = w->sysinfo != NULL;
	w->next_seq_id = PTW_SEQ_ID_FIRST_EVENT;
	w->flush_at = o.flush_bytes;
	if (o.compress && w->flush_at > PTW_DEFLATE_MAX_INPUT)
		w->flush_at = PTW_DEFLATE_MAX_INPUT;
	/* The buffer holds up to flush_at bytes plus one packet; it starts at
	 * most 4 MiB and doubles if a larger threshold needs it. */
	size_t init = w->flush_at < (4u << 20) ? w->flush_at : (4u << 20);
	ok = ok && ptw_pb_buf_init(&w->pend, init + 64 * 1024) == 0 &&
	     ptw_pb_buf_init(&w->dbuf, 1024) == 0;
	if (ok && o.compress) {
		w->defl = ptw_deflate_create(o.compress, o.compress_level);
		ok = w->defl != NULL;
	}
	if (ok) {
		w->sim = ptw_w_seq_create(w, 0, 0);
		w->wall = ptw_w_seq_create(w, 0, 0);
		ok = w->sim && w->wall;
	}
	if (ok)
		ok = ptw_w_realtime_snapshot(w, 1) == 0;
	if (!ok) {
		ptw_error_set(err, PTW_ERR_NOMEM, 0, "writer: out of memory");
		w->sink.own_fd = 0; /* the caller still owns fd on failure */
		ptw_writer_close(w, NULL);
		return NULL;
	}
	return w;
}

struct ptw_writer *ptw_writer_open_sized(const char *path,
					 const struct ptw_writer_options *opt,
					 size_t opt_size, struct ptw_error *err)
{
	struct ptw_writer_options req, o;
	if (ptw_w_options_in(&req, opt, opt_size, err))
		return NULL;
	if (!path) {
		ptw_error_set(err, PTW_ERR_INVALID, 0, "path is NULL");
		return NULL;
	}
	if (ptw_w_resolve_options(&req, &o, err) != 0)
		return NULL;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		ptw_error_set(err, PTW_ERR_IO, errno, "cannot create %s", path);
		return NULL;
	}
	o.close_fd = 1;
	struct ptw_writer *w = ptw_w_open(fd, &o, err);
	if (!w)
		close(fd);
	return w;
}

/* ---- packets and output ------------------------------------------------ */

size_t ptw_w_packet_begin(struct ptw_writer *w)
{
	w->last_pkt = w->pend.len;
	return ptw_pb_begin_nested(&w->pend, PTW_F_TRACE_PACKET);
}

int ptw_w_packet_end(struct ptw_writer *w, size_t mark, int is_event)
{
	ptw_pb_end_nested(&w->pend, mark);
	if (w->pend.oom) {
		w->pend.len = 0;
		return ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0,
					 "packet buffer: out of memory");
	}
	if (w->grp_on)
		ptw_w_grp_note_record(w);
	w->stats.packets++;
	w->pend_has_event |= is_event;
	if (w->pend.len >= w->flush_at)
		return ptw_w_flush(w);
	return 0;
}

/* System mode: the records go to the output hook instead of the fd. */
static int ptw_w_out_write(struct ptw_writer *w, const void *p, size_t n)
{
	int rc = w->out_fn(w->out_ctx, p, n);
	if (rc)
		return ptw_i_writer_fail(w, rc, 0, "trace output hook failed");
	w->sink.bytes_written += n;
	w->stats.bytes_written = w->sink.bytes_written;
	return 0;
}

/* The sink's result (0 or -1 after a failed write) as the writer's. */
static int ptw_w_sink_result(struct ptw_writer *w, int rc)
{
	if (rc != 0)
		return ptw_i_writer_fail(w, PTW_ERR_IO, w->sink.failed_errno,
					 "trace write failed after %llu bytes",
					 (unsigned long long)w->sink.bytes_written);
	w->stats.bytes_written = w->sink.bytes_written;
	return 0;
}

static int ptw_w_write(struct ptw_writer *w, const void *p, size_t n)
{
	if (w->rs)
		return ptw_w_rec_write(w, p, n);
	if (w->out_fn)
		return ptw_w_out_write(w, p, n);
	return ptw_w_sink_result(w, ptw_sink_write(&w->sink, p, n));
}

/* Everything flushed is in the file after this (the sink may hold back
 * the end of its last write, sink.h). 0 or the sticky error. */
static int ptw_w_sync(struct ptw_writer *w)
{
	if (w->sticky)
		return w->sticky;
	return ptw_w_sink_result(w, ptw_sink_sync(&w->sink));
}

static int ptw_w_write_batch(struct ptw_writer *w, const uint8_t *p, size_t n)
{
	if (!n)
		return 0;
	/* A record too big for one batch goes out plain: mixing plain and
	 * compressed records is fine for readers. */
	if (n > PTW_DEFLATE_MAX_INPUT)
		return ptw_w_write(w, p, n);
	const uint8_t *out;
	size_t out_len;
	int rc = ptw_deflate_batch(w->defl, p, n, &out, &out_len);
	if (rc)
		return ptw_i_writer_fail(w, rc == PTW_ERR_NOMEM ? rc : PTW_ERR_IO,
					 0, "compression failed");
	rc = ptw_w_write(w, out, out_len);
	if (!rc)
		w->stats.compressed_batches++;
	return rc;
}

int ptw_w_emit(struct ptw_writer *w, const uint8_t *data, size_t len,
	       size_t last)
{
	if (!w->defl)
		return ptw_w_write(w, data, len);
	if (len <= PTW_DEFLATE_MAX_INPUT)
		return ptw_w_write_batch(w, data, len);
	/* Only the newest record can push the buffer past the batch limit
	 * (we flush at every record end past flush_at <= the limit), so
	 * split there. */
	int rc = ptw_w_write_batch(w, data, last);
	if (!rc)
		rc = ptw_w_write_batch(w, data + last, len - last);
	return rc;
}

static int ptw_w_flush_pending(struct ptw_writer *w)
{
	if (w->sticky)
		return w->sticky;
	int rc = 0;
	if (w->tracks.n_pend || w->sysinfo_due)
		rc = ptw_w_flush_tracks(w);
	if (!w->pend.len)
		return !rc && w->rs && w->ring_cut_due ? ptw_w_rec_after_flush(w)
							: rc;
	if (!rc) {
		const uint8_t *d = w->pend.data;
		size_t last = w->last_pkt;
		if (w->conv_group)
			ptw_w_group_by_seq(w, &d, &last);
		rc = ptw_w_emit(w, d, w->pend.len, last);
	}
	if (!rc && w->sniff_stop) {
		static const uint8_t stop[2] = {
			PTW_PB_TAG(2, PTW_PB_WT_VARINT), 0};
		rc = ptw_w_write(w, stop, sizeof(stop));
		w->sniff_stop = 0;
	}
	if (!rc && w->pend_has_event && !w->stats.first_output_ns) {
		uint64_t d = ptw_w_mono_ns() - w->open_ns;
		w->stats.first_output_ns = d ? d : 1;
		if (w->mode == PTW_I_MODE_CLOCK)
			w->stats.first_clock_output_ns = w->stats.first_output_ns;
	}
	/* On failure the batch is dropped: nothing is ever written again. */
	w->pend.len = 0;
	w->last_pkt = 0;
	w->pend_has_event = 0;
	ptw_w_grp_reset(w);
	if (!rc && w->rs)
		rc = ptw_w_rec_after_flush(w);
	return rc;
}

int ptw_w_flush(struct ptw_writer *w)
{
	int rc = ptw_w_flush_pending(w);
	/* A REALTIME snapshot when due goes out after the pending packets,
	 * on its own: added to them it could push a full batch past the
	 * compression limit (only the newest packet may, ptw_w_emit). */
	if (!rc && w->rt_now && ptw_w_realtime_due(w)) {
		rc = ptw_w_realtime_snapshot(w, 1);
		if (!rc)
			rc = ptw_w_flush_pending(w);
	}
	return rc;
}

int ptw_writer_flush(struct ptw_writer *w)
{
	if (!w)
		return PTW_ERR_INVALID;
	int rc = ptw_w_flush(w);
	return rc ? rc : ptw_w_sync(w);
}

/* ---- close ------------------------------------------------------------- */

static void ptw_w_copy_result(const struct ptw_writer *w, int rc,
			      struct ptw_error *err)
{
	if (!err)
		return;
	if (rc)
		*err = w->err;
	else
		memset(err, 0, sizeof(*err));
}

int ptw_writer_finish(struct ptw_writer *w, struct ptw_error *err)
{
	if (!w)
		return ptw_error_set(err, PTW_ERR_INVALID, 0, "NULL writer");
	if (w->finished) {
		ptw_w_copy_result(w, w->finish_rc, err);
		return w->finish_rc;
	}
	int rc = 0;
	if (w->close_fn && !w->sticky) {
		int hr = w->close_fn(w->hook_ctx);
		if (hr)
			rc = hr;
	}
	int fr = ptw_w_flush(w);
	if (!fr)
		fr = ptw_w_sync(w);
	if (fr && !rc)
		rc = fr;
	int ce = ptw_sink_close(&w->sink);
	if (ce && !w->sticky)
		ptw_i_writer_fail(w, PTW_ERR_IO, ce, "closing the trace failed");
	if (w->sticky)
		rc = w->sticky;
	w->finished = 1;
	w->finish_rc = rc;
	/* Every writing entry point returns the sticky code: from now on that
	 * is PTW_ERR_STATE (or the IO/NOMEM error that ended the trace). */
	if (!w->sticky)
		w->sticky = PTW_ERR_STATE;
	ptw_w_copy_result(w, rc, err);
	return rc;
}

int ptw_writer_close(struct ptw_writer *w, struct ptw_error *err)
{
	if (!w) {
		if (err)
			memset(err, 0, sizeof(*err));
		return 0;
	}
	int rc = ptw_writer_finish(w, err);
	if (w->free_fn)
		w->free_fn(w->hook_ctx);
	for (uint32_t i = 0; i < w->n_seqs; i++)
		ptw_w_seq_free(w->seqs[i]);
	free(w->seqs);
	ptw_tracks_free(&w->tracks);
	ptw_deflate_destroy(w->defl);
	ptw_pb_buf_free(&w->pend);
	ptw_pb_buf_free(&w->dbuf);
	ptw_pb_buf_free(&w->grp);
	free(w->grp_runs);
	ptw_window_destroy(w->rs);
	ptw_w_machine_free(w);
	ptw_pb_buf_free(&w->ring_meta);
	free(w);
	return rc;
}

/* ---- queries ----------------------------------------------------------- */

void ptw_writer_get_stats_sized(const struct ptw_writer *w,
				struct ptw_writer_stats *out, size_t out_size)
{
	if (!out)
		return;
	struct ptw_writer_stats st;
	memset(&st, 0, sizeof(st));
	if (w) {
		st = w->stats;
		st.bytes_written = w->sink.bytes_written;
	}
	ptw_sized_out(out, out_size, &st, sizeof(st));
}

uint64_t ptw_writer_now_ns(const struct ptw_writer *w)
{
	if (!w)
		return 0;
	return ptw_w_mono_ns() - w->open_ns;
}

/* ---- hooks for lib/ modules (writer_internal.h) ------------------------ */

int ptw_i_writer_set_mode(struct ptw_writer *w, enum ptw_i_mode mode)
{
	if (!w)
		return PTW_ERR_INVALID;
	if (w->mode == PTW_I_MODE_NONE || w->mode == mode) {
		w->mode = mode;
		return 0;
	}
	return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
				 "host-time events and clock streams cannot "
				 "share one writer");
}

int ptw_i_writer_set_close_hook(struct ptw_writer *w,
				int (*close_fn)(void *ctx),
				void (*free_fn)(void *ctx), void *ctx)
{
	if (!w)
		return PTW_ERR_INVALID;
	if (w->close_fn || w->free_fn)
		return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
					 "a close hook is already registered");
	w->close_fn = close_fn;
	w->free_fn = free_fn;
	w->hook_ctx = ctx;
	return 0;
}

int ptw_i_writer_set_output(struct ptw_writer *w,
			    int (*fn)(void *ctx, const uint8_t *p, size_t n),
			    void *ctx)
{
	if (!w || !fn)
		return PTW_ERR_INVALID;
	if (w->defl || w->rs || w->sink.bytes_written || w->pend.len)
		return ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
					 "an output hook needs a fresh writer "
					 "without compression or flight "
					 "recorder");
	w->out_fn = fn;
	w->out_ctx = ctx;
	return 0;
}

struct ptw_writer *
ptw_i_writer_open_output(const struct ptw_writer_options *opt,
			 int (*fn)(void *ctx, const uint8_t *p, size_t n),
			 void *ctx, struct ptw_error *err)
{
	struct ptw_writer_options o;
	if (opt)
		o = *opt;
	else
		memset(&o, 0, sizeof(o));
	if (o.compress || !fn) {
		ptw_error_set(err, PTW_ERR_INVALID, 0,
			      "an output hook takes packets uncompressed");
		return NULL;
	}
	o.close_fd = 0;
	struct ptw_writer *w = ptw_w_open(-1, &o, err);
	if (w)
		ptw_i_writer_set_output(w, fn, ctx); /* cannot fail: fresh */
	return w;
}

void ptw_i_writer_clear_incremental(struct ptw_writer *w, uint32_t seq_id)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->n_seqs; i++) {
		struct ptw_seq *s = w->seqs[i];
		if (seq_id && s->id != seq_id)
			continue;
		if (s->started) { /* a first packet clears it anyway */
			s->need_cp = 1;
			ptw_seq_fast_update(s);
		}
	}
}

void ptw_i_writer_note_clock_peak(struct ptw_writer *w, uint64_t records,
				  uint64_t bytes)
{
	if (!w)
		return;
	if (records > w->stats.clock_peak_records)
		w->stats.clock_peak_records = records;
	if (bytes > w->stats.clock_peak_bytes)
		w->stats.clock_peak_bytes = bytes;
}
