/* tracer_open.c - what every open slice is (name, category, arguments),
 * per thread and per async track, so that a flight-recorder snapshot
 * begins the slices its window cut with their real names.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The backend pushes a level for each BEGIN it writes and drops it at the
 * END (only the depth changes: the levels are overwritten in place). A
 * one-slot BEGIN (PTW_BEGIN: literal name and category) costs two stores;
 * any other is copied as its ring slots, in ring mode only, and decoded
 * only when the writer starts a new piece and asks for the open slices
 * (ptw_tr_open_fill). Memory grows with the deepest nesting and the
 * largest copied records seen, never per event. */
#include "tracer_internal.h"

#include "lib/util/grow.h"
#include "lib/encode/pb.h"

#include <stdlib.h>
#include <string.h>

#define PTW_TR_SLOT PTW_TRACER_SLOT_SIZE

int ptw_tr_ostack_room(struct ptw_tr_ostack *st, uint32_t d)
{
	if (d + 1 < st->cap)
		return 0;
	if (d >= UINT32_MAX / 4)
		return PTW_ERR_NOMEM;
	/* below UINT32_MAX / 2: cap only grows once d + 1 reaches it */
	size_t nc = ptw_grow_cap(st->cap, (size_t)d + 2, 16, sizeof(*st->lv));
	struct ptw_tr_open *lv = ptw_realloc_array(st->lv, nc, sizeof(*lv));
	if (!lv)
		return PTW_ERR_NOMEM;
	st->lv = lv;
	st->cap = (uint32_t)nc;
	return 0;
}

int ptw_tr_open_lit(struct ptw_tr_ostack *st, uint32_t d, const char *name,
		    const char *cat)
{
	if (ptw_tr_ostack_room(st, d))
		return PTW_ERR_NOMEM;
	st->lv[d].name = name;
	st->lv[d].u.cat = cat;
	return 0;
}

/* Bytes of the copied record at buf + off. */
static size_t ptw_tr_copy_size(const struct ptw_tr_ostack *st, size_t off)
{
	struct ptw_i_rec rec;
	memcpy(&rec, st->buf + off, sizeof(rec));
	return (1 + (size_t)rec.extra) * PTW_TR_SLOT;
}

int ptw_tr_open_copy(struct ptw_tr_ostack *st, uint32_t d,
		     const struct ptw_tr_ev *e)
{
	if (ptw_tr_ostack_room(st, d))
		return PTW_ERR_NOMEM;
	/* after the nearest copied level below d (the buffer is a stack) */
	size_t off = 0;
	for (uint32_t k = d; k-- > 0;) {
		if (!st->lv[k].name) {
			off = st->lv[k].u.off + ptw_tr_copy_size(st, st->lv[k].u.off);
			break;
		}
	}
	size_t n = 1 + (size_t)e->rec.extra;
	if (off + n * PTW_TR_SLOT > st->buf_cap) {
		unsigned char *nb = ptw_grow(st->buf, &st->buf_cap,
					     off + n * PTW_TR_SLOT, 1024, 1);
		if (!nb)
			return PTW_ERR_NOMEM;
		st->buf = nb;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(st->buf + off + i * PTW_TR_SLOT,
		       ptw_ring_slot(e->r, e->h + i), PTW_TR_SLOT);
	st->lv[d].name = NULL;
	st->lv[d].u.off = off;
	return 0;
}

void ptw_tr_ostack_free(struct ptw_tr_ostack *st)
{
	free(st->lv);
	free(st->buf);
	memset(st, 0, sizeof(*st));
}

/* The entry of a track that no live thread owns; created if absent. */
static struct ptw_tr_otrack *ptw_tr_otrack(struct ptw_tracer *tr,
					   uint64_t track, int create)
{
	uint64_t ix;
	if (ptw_map_get(&tr->otrack_ix, track, &ix))
		return &tr->otracks[ix - 1];
	if (!create)
		return NULL;
	if (tr->n_otracks == tr->cap_otracks) {
		struct ptw_tr_otrack *no =
			ptw_grow(tr->otracks, &tr->cap_otracks,
				 tr->n_otracks + 1, 16, sizeof(*no));
		if (!no)
			return NULL;
		tr->otracks = no;
	}
	if (ptw_map_put(&tr->otrack_ix, track, tr->n_otracks + 1))
		return NULL;
	struct ptw_tr_otrack *o = &tr->otracks[tr->n_otracks++];
	memset(o, 0, sizeof(*o));
	o->track = track;
	return o;
}

int ptw_tr_open_async_begin(struct ptw_tracer *tr, uint64_t track,
			    const struct ptw_tr_ev *e)
{
	struct ptw_tr_otrack *o = ptw_tr_otrack(tr, track, 1);
	if (!o || ptw_tr_open_copy(&o->st, o->depth, e))
		return PTW_ERR_NOMEM;
	o->depth++;
	return 0;
}

void ptw_tr_open_async_end(struct ptw_tracer *tr, uint64_t track)
{
	/* the innermost BEGIN written on the track: trace_processor pairs
	 * them by time, which is the order written unless ids race */
	struct ptw_tr_otrack *o = ptw_tr_otrack(tr, track, 0);
	if (o && o->depth)
		o->depth--;
}

int ptw_tr_open_retire(struct ptw_tracer *tr, struct ptw_tr_thread *th)
{
	int rc = 0;
	if (tr->ring && th->depth && th->seq) {
		struct ptw_tr_otrack *o = ptw_tr_otrack(tr, th->track, 1);
		if (o) {
			ptw_tr_ostack_free(&o->st);
			o->st = th->open; /* moved */
			o->depth = th->depth;
			memset(&th->open, 0, sizeof(th->open));
		} else {
			rc = PTW_ERR_NOMEM;
		}
	}
	ptw_tr_ostack_free(&th->open);
	return rc;
}

/* Appends the BEGINs of levels 0..depth-1 of st on 'track'. */
static void ptw_tr_open_put(struct ptw_tracer *tr, struct ptw_pb_buf *b,
			    uint64_t track, const struct ptw_tr_ostack *st,
			    uint32_t depth)
{
	/* (a level beyond cap: pushing it ran out of memory, and the
	 * writer failed then) */
	for (uint32_t d = 0; d < depth && d < st->cap; d++) {
		const struct ptw_tr_open *lv = &st->lv[d];
		if (lv->name) {
			ptw_i_writer_recorder_open_add(tr->w, b, track, lv->u.cat,
						       lv->name, NULL, 0);
			continue;
		}
		/* a copied record: decoded from the copy as a ring of
		 * consecutive slots */
		struct ptw_ring cr;
		memset(&cr, 0, sizeof(cr));
		cr.c_slots = st->buf + lv->u.off;
		cr.c_mask = UINT64_MAX;
		cr.c_shift = (uint32_t)__builtin_ctz(PTW_TR_SLOT);
		struct ptw_tr_ev e;
		uint64_t unknown = 0;
		ptw_tr_decode_at(tr, &cr, 0, &e, tr->oscratch, &unknown);
		ptw_i_writer_recorder_open_add(tr->w, b, track, e.rec.v.cat, e.name,
					       e.args, e.nargs);
	}
}

int ptw_tr_open_fill(void *ctx, struct ptw_pb_buf *b)
{
	struct ptw_tracer *tr = ctx;
	for (size_t i = 0; i < tr->n_snap; i++) {
		const struct ptw_tr_thread *th = tr->snap[i];
		if (th && th->seq)
			ptw_tr_open_put(tr, b, th->track, &th->open, th->depth);
	}
	for (size_t i = 0; i < tr->n_otracks; i++) {
		const struct ptw_tr_otrack *o = &tr->otracks[i];
		ptw_tr_open_put(tr, b, o->track, &o->st, o->depth);
	}
	return b->oom ? PTW_ERR_NOMEM : 0;
}

void ptw_tr_open_free(struct ptw_tracer *tr)
{
	for (size_t i = 0; i < tr->n_otracks; i++)
		ptw_tr_ostack_free(&tr->otracks[i].st);
	free(tr->otracks);
	tr->otracks = NULL;
	tr->n_otracks = tr->cap_otracks = 0;
	ptw_map_free(&tr->otrack_ix);
	free(tr->oscratch);
	tr->oscratch = NULL;
}
