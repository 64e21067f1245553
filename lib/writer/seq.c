/* seq.c - sequences: creation, first packet and checkpoints (CLEARED +
 * defaults + clock snapshot), and the incremental clock of event packets.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"
#include "lib/encode/pb_fields.h"
#include "callstack.h"
#include "writer_state.h"

/* Headroom of each intern table beyond max_interned: one event can add
 * a name, a category and PTW_MAX_ANNOTATIONS names and values before the
 * checkpoint it triggers. */
#define PTW_INTERN_SLACK (2u * PTW_MAX_ANNOTATIONS + 2u)

/* The header every event packet of 's' starts with (s->hdr): sequence id,
 * SEQ_NEEDS_INCREMENTAL_STATE, machine_id (if set), then the TrackEvent's
 * tag, which the fast packets copy with it (seq_fast.h). A converter's
 * file leaves the flag out: it is written whole, each sequence starting
 * with its SEQ_INCREMENTAL_STATE_CLEARED packet, so no reader finds a
 * sequence's state invalid, and the flag cost trace_processor about 400
 * instructions a packet (docs/convert.md, "Loading in trace_processor").
 * A flight recorder's or system mode's output keeps it: packets of
 * theirs can be lost. */
static void ptw_w_seq_put_hdr(struct ptw_seq *s)
{
	struct ptw_writer *w = s->w;
	uint8_t *h = ptw_pb_write_varint_field(s->hdr, PTW_F_PKT_SEQUENCE_ID, s->id);
	if (!w->conv_clocks || w->rs || w->out_fn)
		h = ptw_pb_write_varint_field(h, PTW_F_PKT_SEQUENCE_FLAGS,
					      PTW_SEQ_NEEDS_INCREMENTAL_STATE);
	/* machine_id (if set): it costs the fast paths nothing (6 + 2 + 7
	 * bytes at most, < 16) */
	memcpy(h, w->mid, w->mid_len);
	h += w->mid_len;
	s->hdr_len = (uint8_t)(h - s->hdr);
	*h = PTW_PB_TAG(PTW_F_PKT_TRACK_EVENT, PTW_PB_WT_LEN);
}

struct ptw_seq *ptw_w_seq_create(struct ptw_writer *w, uint64_t default_track,
				 int is_clock)
{
	if (w->n_seqs == w->seqs_cap) {
		if (w->seqs_cap > UINT32_MAX / 2)
			return NULL;
		uint32_t cap = w->seqs_cap ? w->seqs_cap * 2 : 8;
		void *p = ptw_realloc_array(w->seqs, cap, sizeof(*w->seqs));
		if (!p)
			return NULL;
		w->seqs = p;
		w->seqs_cap = cap;
	}
	struct ptw_seq *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	uint32_t n = w->opt.max_interned + PTW_INTERN_SLACK;
	if (n < w->opt.max_interned) /* overflow */
		n = UINT32_MAX;
	s->w = w;
	s->id = w->next_seq_id;
	s->default_track = default_track;
	s->is_clock = (uint8_t)(is_clock != 0);
	s->abs_clock = w->conv_clocks ? PTW_CLOCK_BOOTTIME : PTW_CLOCK_SEQ_ABS;
	s->value_gap = w->conv_clocks ? PTW_CONV_VALUE_GAP : PTW_INTERN_VALUE_GAP;
	ptw_w_seq_put_hdr(s);
	s->names = ptw_intern_create(n);
	s->cats = ptw_intern_create(n);
	s->anames = ptw_intern_create(n);
	s->svals = ptw_intern_create(n);
	s->locs = ptw_intern_create(64);
	s->bodies = ptw_intern_create(64);
	if (!s->names || !s->cats || !s->anames || !s->svals || !s->locs ||
	    !s->bodies) {
		ptw_w_seq_free(s);
		return NULL;
	}
	w->next_seq_id++;
	w->seqs[w->n_seqs++] = s;
	return s;
}

static void ptw_w_seq_free_tables(struct ptw_seq *s)
{
	ptw_intern_destroy(s->names);
	ptw_intern_destroy(s->cats);
	ptw_intern_destroy(s->anames);
	ptw_intern_destroy(s->svals);
	ptw_intern_destroy(s->locs);
	ptw_intern_destroy(s->bodies);
	s->names = s->cats = s->anames = s->svals = NULL;
	ptw_w_stk_free(s->stk);
	s->stk = NULL;
	s->locs = s->bodies = NULL;
	free(s->lkey);
	s->lkey = NULL;
	s->lkey_cap = 0;
	free(s->sv_seen);
	s->sv_seen = NULL;
}

void ptw_w_seq_free(struct ptw_seq *s)
{
	if (!s)
		return;
	ptw_w_seq_free_tables(s);
	free(s);
}

/* ---- public sequence calls ------------------------------------------- */

struct ptw_seq *ptw_writer_sim_seq(struct ptw_writer *w)
{
	return w ? w->sim : NULL;
}

struct ptw_seq *ptw_writer_wall_seq(struct ptw_writer *w)
{
	return w ? w->wall : NULL;
}

static struct ptw_seq *ptw_w_add_seq(struct ptw_writer *w,
				     uint64_t default_track, int is_clock)
{
	if (!w)
		return NULL;
	if (w->sticky)
		return NULL;
	if (default_track) {
		struct ptw_track *t = ptw_tracks_get(&w->tracks, default_track);
		if (!t || t->kind == PTW_TRACK_COUNTER) {
			ptw_i_writer_fail(w, PTW_ERR_INVALID, 0,
					  "default track %llu is %s",
					  (unsigned long long)default_track,
					  t ? "a counter track" : "unknown");
			return NULL;
		}
	}
	struct ptw_seq *s = ptw_w_seq_create(w, default_track, is_clock);
	if (!s)
		ptw_i_writer_fail(w, PTW_ERR_NOMEM, 0, "sequence: out of memory");
	return s;
}

struct ptw_seq *ptw_writer_add_seq(struct ptw_writer *w, uint64_t default_track)
{
	return ptw_w_add_seq(w, default_track, 0);
}

void ptw_i_writer_converted(struct ptw_writer *w)
{
	w->conv_clocks = 1;
	/* a file's (compressed batches are few top-level fields: a short
	 * walk; a flight recorder's or system mode's output is not a file
	 * of records in order) */
	w->sniff_stop = !w->defl && !w->rs && !w->out_fn;
	/* (a flight recorder's pieces and system mode's chunks are cut
	 * from the batch by packet) */
	w->conv_group = !w->rs && !w->out_fn;
	w->grp_on = w->conv_group;
	for (uint32_t i = 0; i < w->n_seqs; i++) {
		if (!w->seqs[i]->abs_only)
			w->seqs[i]->abs_clock = PTW_CLOCK_BOOTTIME;
		w->seqs[i]->value_gap = PTW_CONV_VALUE_GAP;
		ptw_w_seq_put_hdr(w->seqs[i]);
	}
}

void ptw_i_seq_abs_only(struct ptw_seq *s)
{
	s->abs_only = 1;
	s->base = UINT64_MAX; /* every timestamp is before it */
	/* BOOTTIME in each packet until a checkpoint makes it the
	 * defaults' clock (ptw_w_seq_checkpoint) */
	s->abs_clock = PTW_CLOCK_BOOTTIME;
}

struct ptw_seq *ptw_i_writer_add_clock_seq(struct ptw_writer *w,
					   uint64_t default_track)
{
	return ptw_w_add_seq(w, default_track, 1);
}

void ptw_seq_destroy(struct ptw_seq *s)
{
	/* The struct stays (owned by the writer) so later calls on it fail
	 * cleanly with PTW_ERR_STATE instead of touching freed memory. */
	if (!s || s->destroyed)
		return;
	s->destroyed = 1;
	ptw_seq_fast_update(s);
	ptw_w_seq_free_tables(s);
}

void ptw_seq_mark_dropped(struct ptw_seq *s, uint64_t n)
{
	if (!s || s->destroyed || !n)
		return;
	s->dropped += n;
	ptw_seq_fast_update(s);
}

void ptw_i_writer_forget_addresses(struct ptw_writer *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->n_seqs; i++) {
		struct ptw_seq *s = w->seqs[i];
		if (s->destroyed)
			continue; /* its tables are gone */
		ptw_intern_forget_ptrs(s->names);
		ptw_intern_forget_ptrs(s->cats);
		ptw_intern_forget_ptrs(s->anames);
		ptw_intern_forget_ptrs(s->svals);
		ptw_intern_forget_ptrs(s->locs);
	}
}

/* ---- checkpoints ------------------------------------------------------- */

static void ptw_w_append_clock(struct ptw_pb_buf *b, uint32_t id, uint64_t ts,
			       int incremental)
{
	size_t m = ptw_pb_begin_nested(b, PTW_F_CS_CLOCKS);
	ptw_pb_append_varint_field(b, PTW_F_CLK_CLOCK_ID, id);
	ptw_pb_append_varint_field(b, PTW_F_CLK_TIMESTAMP, ts);
	if (incremental)
		ptw_pb_append_varint_field(b, PTW_F_CLK_IS_INCREMENTAL, 1);
	ptw_pb_end_nested(b, m);
}

void ptw_w_encode_checkpoint(const struct ptw_writer *w, struct ptw_pb_buf *b,
			     uint32_t seq_id, int first, int dropped,
			     uint64_t default_track, uint32_t def_clock,
			     uint64_t x)
{
	ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_ID, seq_id);
	ptw_w_put_mid(w, b);
	ptw_pb_append_varint_field(b, PTW_F_PKT_SEQUENCE_FLAGS,
				   PTW_SEQ_INCREMENTAL_STATE_CLEARED);
	if (first)
		ptw_pb_append_varint_field(b, PTW_F_PKT_FIRST_PACKET_ON_SEQUENCE, 1);
	if (dropped)
		ptw_pb_append_varint_field(b, PTW_F_PKT_PREVIOUS_PACKET_DROPPED, 1);
	size_t d = ptw_pb_begin_nested(b, PTW_F_PKT_DEFAULTS);
	ptw_pb_append_varint_field(b, PTW_F_DEF_TIMESTAMP_CLOCK_ID, def_clock);
	if (default_track) {
		size_t t = ptw_pb_begin_nested(b, PTW_F_DEF_TRACK_EVENT_DEFAULTS);
		ptw_pb_append_varint_field(b, PTW_F_TED_TRACK_UUID, default_track);
		ptw_pb_end_nested(b, t);
	}
	ptw_pb_end_nested(b, d);
	size_t c = ptw_pb_begin_nested(b, PTW_F_PKT_CLOCK_SNAPSHOT);
	ptw_w_append_clock(b, PTW_CLOCK_BOOTTIME, x, 0);
	ptw_w_append_clock(b, PTW_CLOCK_SEQ_INCR, x, 1);
	ptw_w_append_clock(b, PTW_CLOCK_SEQ_ABS, x, 0);
	ptw_pb_append_varint_field(b, PTW_F_CS_PRIMARY_TRACE_CLOCK,
				   PTW_CLOCK_BOOTTIME);
	ptw_pb_end_nested(b, c);
}

/* Writes CLEARED + defaults + clock snapshot as one packet (a packet with
 * a snapshot carries nothing else that trace_processor would read) and
 * starts a new interning generation. The snapshot is read on the
 * sequence's own timeline: at the event's time, or at the sequence's
 * previous snapshot if the event went back before it. trace_processor
 * requires each clock's readings to grow only among snapshots of the same
 * set of clocks (clock_synchronizer.cc AddSnapshot), and each sequence's
 * set is its own (clocks 64 and 65 are sequence-scoped), so sequences
 * written out of step (the tracer drains one thread's ring, then the
 * next) keep delta timestamps however far one lags behind another. */
static int ptw_w_seq_checkpoint(struct ptw_seq *s, uint64_t ts)
{
	struct ptw_writer *w = s->w;
	uint64_t x = s->started && ts < s->snap ? s->snap : ts;
	size_t mark = ptw_w_packet_begin(w);
	ptw_w_encode_checkpoint(w, &w->pend, s->id, !s->started, s->dropped != 0,
				s->default_track,
				s->abs_only ? PTW_CLOCK_BOOTTIME
					    : PTW_CLOCK_SEQ_INCR, x);
	if (w->rs)
		ptw_w_rec_note_checkpoint(w, ts);
	/* The new state is set before the packet ends: ending it may flush,
	 * and in flight-recorder mode a flush may start a new piece, which
	 * asks every sequence for a checkpoint again (recorder.c). */
	if (x > w->last_snapshot)
		w->last_snapshot = x;
	w->stats.checkpoints++;
	s->snap = x;
	s->base = s->abs_only ? UINT64_MAX : x;
	if (s->abs_only)
		s->abs_clock = 0; /* the defaults' clock: no field needed */
	s->started = 1;
	s->need_cp = 0;
	s->since_cp = 0;
	s->dropped = 0;
	ptw_intern_reset(s->names);
	ptw_intern_reset(s->cats);
	ptw_intern_reset(s->anames);
	ptw_intern_reset(s->svals);
	ptw_intern_reset(s->locs);
	ptw_intern_reset(s->bodies);
	s->cp_gen++;
	ptw_seq_fast_update(s);
	return ptw_w_packet_end(w, mark, 0);
}

int ptw_w_seq_prepare(struct ptw_seq *s, uint64_t ts)
{
	struct ptw_writer *w = s->w;
	if (__builtin_expect(s->started && !s->need_cp && !s->dropped &&
			     s->since_cp < w->opt.checkpoint_packets, 1))
		return 0;
	if (w->rs && w->ring_open_pending)
		ptw_w_rec_note_open(w);
	if (!s->started && !s->is_clock) {
		int rc = ptw_i_writer_set_mode(w, PTW_I_MODE_HOST);
		if (rc)
			return rc;
	}
	return ptw_w_seq_checkpoint(s, ts);
}
