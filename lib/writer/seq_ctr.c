/* seq_ctr.c - runs of counter samples for lib/'s converters: the
 * writer's side of seq_ctr.h.
 * SPDX-License-Identifier: Apache-2.0 */
#include "seq_ctr.h"

#include "seq_fast.h"
#include "writer_state.h"

int ptw_seq_ctr_known(const struct ptw_seq *s, uint64_t track,
		      struct ptw_seq_ctr_known *k)
{
	const struct ptw_track *tr = ptw_tracks_get(&s->w->tracks, track);
	if (!track || !tr || tr->kind != PTW_TRACK_COUNTER)
		return 0;
	/* as ptw_seq_fast_write: the header and the TrackEvent's tag
	 * (s->hdr), its length, its fields but the value */
	memset(k->b, 0, sizeof(k->b));
	memcpy(k->b, s->hdr, s->hdr_len + 1u);
	uint8_t *te = k->b + s->hdr_len + 1;
	uint8_t *q = ptw_seq_te_fields(te + 1, PTW_TE_TYPE_COUNTER,
				       track != s->default_track ? track : 0,
				       0, 0, 0);
	k->n = (uint8_t)(q - k->b);
	k->abs_clock = s->abs_clock;
	k->te_tail = (uint8_t)(q - te - 1);
	/* a double's value: its tag (2 bytes) and 8 */
	*te = (uint8_t)(k->te_tail + 10u);
	return 1;
}

int ptw_seq_ctr_begin(struct ptw_seq *s, struct ptw_seq_ctr_run *r)
{
	if (!ptw_seq_fast_ready(s) || !(r->max = ptw_seq_fast_fit(s)))
		return 0;
	r->p = s->w->pend.data + s->w->pend.len;
	r->base = s->base;
	r->last = NULL;
	r->n = 0;
	return 1;
}

int ptw_seq_ctr_end(struct ptw_seq *s, const struct ptw_seq_ctr_run *r)
{
	s->base = r->base;
	if (!r->n)
		return 0;
	return ptw_seq_fast_commit(s, r->p, (size_t)(r->last - s->w->pend.data),
				   r->n);
}
