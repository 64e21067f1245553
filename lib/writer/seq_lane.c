/* seq_lane.c - runs of prepared simple events for lib/'s converters: the
 * writer's side of seq_lane.h.
 * SPDX-License-Identifier: Apache-2.0 */
#include "seq_lane.h"

#include "seq_fast.h"
#include "writer_state.h"

/* The slice track 'track' of s if the fast path may write prepared items
 * of generation 'gen' on it now (no checkpoint, first packet or drop
 * report due, no sticky error, gen current), else NULL. */
static struct ptw_track *ptw_seq_lane_track(struct ptw_seq *s, uint64_t track,
					    uint32_t gen)
{
	if (!ptw_seq_fast_ready(s) || s->cp_gen != gen)
		return NULL;
	struct ptw_track *tr = ptw_tracks_get(&s->w->tracks, track);
	return tr && tr->kind != PTW_TRACK_COUNTER ? tr : NULL;
}

int ptw_seq_lane_begin(struct ptw_seq *s, uint64_t track, uint32_t gen,
		       struct ptw_seq_lane *r)
{
	struct ptw_writer *w = s->w;
	struct ptw_track *tr = ptw_seq_lane_track(s, track, gen);
	/* (an abs_only sequence's base is UINT64_MAX: no steps from it) */
	if (!tr || s->abs_only || !(r->max = ptw_seq_fast_fit(s)))
		return 0;
	r->p = w->pend.data + w->pend.len;
	r->base = s->base;
	r->depth = tr->depth;
	memcpy(r->hdr, s->hdr, sizeof(r->hdr));
	r->hdr_len = s->hdr_len;
	r->abs_clock = s->abs_clock;
	r->last = NULL;
	r->n = 0;
	r->s = s;
	r->tr = tr;
	return 1;
}

int ptw_seq_lane_end(struct ptw_seq *s, const struct ptw_seq_lane *r)
{
	s->base = r->base;
	r->tr->depth = r->depth;
	if (!r->n)
		return 0;
	return ptw_seq_fast_commit(s, r->p, (size_t)(r->last - s->w->pend.data),
				   r->n);
}

int ptw_seq_lane_put_one(struct ptw_seq *s, uint64_t track, uint32_t gen,
			 uint64_t ts, const uint8_t body[PTW_SEQ_BODY_MAX],
			 size_t n, int depth_d, int *rc)
{
	struct ptw_track *tr = ptw_seq_lane_track(s, track, gen);
	if (!tr || (depth_d < 0 && !tr->depth))
		return 0;
	struct ptw_pb_buf *b = &s->w->pend;
	size_t at = b->len;
	uint8_t *p = ptw_put_body_packet(b->data + at, ts, &s->base,
					 s->abs_clock, s->hdr, s->hdr_len, body,
					 n);
	*rc = ptw_seq_fast_commit(s, p, at, 1);
	/* (after the commit and its flush, as ptw_seq_simple counts it) */
	tr->depth += (uint32_t)depth_d;
	return 1;
}

uint32_t ptw_seq_lane_gen(const struct ptw_seq *s)
{
	return s->cp_gen;
}

int ptw_seq_lane_iids(const struct ptw_seq *s, const char *cat,
		      const char *name, uint64_t *cat_iid, uint64_t *name_iid)
{
	return ptw_seq_iids(s, cat, name, cat_iid, name_iid);
}

size_t ptw_seq_lane_prefix(const struct ptw_seq *s, uint8_t pre[16],
			   size_t body_len)
{
	size_t n = s->hdr_len + 2u;
	if (n > 16 || body_len > 127)
		return 0;
	memset(pre, 0, 16);
	memcpy(pre, s->hdr, s->hdr_len + 1u); /* and the TrackEvent's tag */
	pre[n - 1] = (uint8_t)body_len;
	return n;
}

int ptw_seq_lane_start(struct ptw_seq *s, uint64_t ts)
{
	return ptw_w_seq_prepare(s, ts);
}
