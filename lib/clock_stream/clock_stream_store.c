/* clock_stream_store.c - bounded, totally ordered store of clock records.
 * SPDX-License-Identifier: Apache-2.0 */
#include "clock_stream_store.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"
#include "ptw/error.h"

#define NO_CHUNK UINT32_MAX
/* First allocation sizes; both double up to the capacity. */
#define INITIAL_RECS 256u
#define INITIAL_CHUNKS 1024u

static uint32_t min_u32(uint64_t a, uint64_t b)
{
	uint64_t m = a < b ? a : b;
	return m > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)m;
}

static uint32_t chunks_for(uint32_t meta_len)
{
	return (meta_len + PTW_CLOCK_STORE_CHUNK - 1) / PTW_CLOCK_STORE_CHUNK;
}

uint64_t ptw_clock_store_rec_bytes(uint32_t meta_len)
{
	return sizeof(struct ptw_clock_rec) +
	       (uint64_t)chunks_for(meta_len) * PTW_CLOCK_STORE_CHUNK;
}

int ptw_clock_store_init(struct ptw_clock_store *s, uint32_t max_records,
			 uint64_t max_bytes)
{
	memset(s, 0, sizeof(*s));
	s->max_records = max_records;
	s->max_bytes = max_bytes;
	s->free_chunk = NO_CHUNK;
	return 0;
}

void ptw_clock_store_free(struct ptw_clock_store *s)
{
	free(s->recs);
	free(s->free_slots);
	free(s->heap);
	free(s->chunks);
	free(s->chunk_next);
	for (uint32_t i = 0; i < s->n_queues; i++)
		free(s->queues[i].idx);
	free(s->queues);
	free(s->heads);
	memset(s, 0, sizeof(*s));
	s->free_chunk = NO_CHUNK;
}

/* Grows slots, free stack and heap to hold one more record. Each array is
 * reallocated separately; cap_recs only moves once all three succeeded, so
 * a failure leaves a consistent (if partly larger) store. */
static int grow_recs(struct ptw_clock_store *s)
{
	uint32_t ncap = s->cap_recs ? s->cap_recs : INITIAL_RECS / 2;
	ncap = min_u32((uint64_t)ncap * 2, s->max_records);
	if (ncap <= s->cap_recs)
		return PTW_ERR_LIMIT;
	void *p = ptw_realloc_array(s->recs, ncap, sizeof(*s->recs));
	if (!p)
		return PTW_ERR_NOMEM;
	s->recs = p;
	p = ptw_realloc_array(s->free_slots, ncap, sizeof(*s->free_slots));
	if (!p)
		return PTW_ERR_NOMEM;
	s->free_slots = p;
	p = ptw_realloc_array(s->heap, ncap, sizeof(*s->heap));
	if (!p)
		return PTW_ERR_NOMEM;
	s->heap = p;
	/* Highest index pushed first: slots are handed out from low to high. */
	for (uint32_t i = ncap; i > s->cap_recs; i--)
		s->free_slots[s->n_free_slots++] = i - 1;
	s->cap_recs = ncap;
	return 0;
}

static int grow_chunks(struct ptw_clock_store *s, uint32_t need)
{
	uint64_t max_chunks = s->max_bytes / PTW_CLOCK_STORE_CHUNK;
	uint64_t ncap = s->cap_chunks ? s->cap_chunks : INITIAL_CHUNKS / 2;
	do
		ncap *= 2;
	while (ncap - s->cap_chunks + s->n_free_chunks < need);
	uint32_t n = min_u32(ncap, max_chunks);
	if (n <= s->cap_chunks || n - s->cap_chunks + s->n_free_chunks < need)
		return PTW_ERR_LIMIT;
	void *p = ptw_realloc_array(s->chunks, n, PTW_CLOCK_STORE_CHUNK);
	if (!p)
		return PTW_ERR_NOMEM;
	s->chunks = p;
	p = ptw_realloc_array(s->chunk_next, n, sizeof(*s->chunk_next));
	if (!p)
		return PTW_ERR_NOMEM;
	s->chunk_next = p;
	for (uint32_t i = n; i > s->cap_chunks; i--) {
		s->chunk_next[i - 1] = s->free_chunk;
		s->free_chunk = i - 1;
	}
	s->n_free_chunks += n - s->cap_chunks;
	s->cap_chunks = n;
	return 0;
}

int ptw_clock_rec_cmp(const struct ptw_clock_rec *a,
		      const struct ptw_clock_rec *b)
{
	int c = ptw_clock_time_cmp(&a->t, &b->t);
	if (c)
		return c;
	if (a->phase != b->phase)
		return a->phase < b->phase ? -1 : 1;
	c = strcmp(a->track_name, b->track_name);
	if (c)
		return c < 0 ? -1 : 1;
	if (a->ordinal != b->ordinal)
		return a->ordinal < b->ordinal ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

static int heap_less(const struct ptw_clock_store *s,
		     const struct ptw_clock_heap_ent *a,
		     const struct ptw_clock_heap_ent *b)
{
	if (a->ns != b->ns)
		return a->ns < b->ns;
	return ptw_clock_rec_cmp(&s->recs[a->idx], &s->recs[b->idx]) < 0;
}

static void heap_up(struct ptw_clock_store *s, uint32_t i)
{
	struct ptw_clock_heap_ent e = s->heap[i];
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!heap_less(s, &e, &s->heap[parent]))
			break;
		s->heap[i] = s->heap[parent];
		i = parent;
	}
	s->heap[i] = e;
}

/* Removes the root (Floyd's bottom-up variant): walk the hole down to a
 * leaf along the smaller children, one comparison per level, then drop the
 * last entry into the hole and sift it up - usually no distance at all,
 * since the last entry tends to be among the largest. About half the
 * comparisons of the textbook sift-down. */
static void heap_pop_root(struct ptw_clock_store *s)
{
	uint32_t n = --s->n_heap;
	if (n == 0)
		return;
	uint32_t i = 0;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && heap_less(s, &s->heap[c + 1], &s->heap[c]))
			c++;
		s->heap[i] = s->heap[c];
		i = c;
	}
	s->heap[i] = s->heap[n];
	heap_up(s, i);
}

/* ---- queues ------------------------------------------------------------ */

static const struct ptw_clock_rec *run_head(const struct ptw_clock_store *s,
					     uint32_t stream)
{
	const struct ptw_clock_queue *r = &s->queues[stream];
	return &s->recs[r->idx[r->head]];
}

static int heads_less(const struct ptw_clock_store *s, uint32_t a, uint32_t b)
{
	const struct ptw_clock_rec *ra = run_head(s, a), *rb = run_head(s, b);
	if (ra->t.ns != rb->t.ns)
		return ra->t.ns < rb->t.ns;
	return ptw_clock_rec_cmp(ra, rb) < 0;
}

static void heads_up(struct ptw_clock_store *s, uint32_t i)
{
	uint32_t e = s->heads[i];
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!heads_less(s, e, s->heads[parent]))
			break;
		s->heads[i] = s->heads[parent];
		i = parent;
	}
	s->heads[i] = e;
}

static void heads_down(struct ptw_clock_store *s, uint32_t i)
{
	uint32_t n = s->n_heads, e = s->heads[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && heads_less(s, s->heads[c + 1], s->heads[c]))
			c++;
		if (!heads_less(s, s->heads[c], e))
			break;
		s->heads[i] = s->heads[c];
		i = c;
	}
	s->heads[i] = e;
}

/* Makes queues[stream] exist. 0, or PTW_ERR_NOMEM (then the caller uses
 * the heap: a run is an optimisation only). */
static int runs_cover(struct ptw_clock_store *s, uint32_t stream)
{
	if (stream < s->n_queues)
		return 0;
	/* queues and heads share the count: sized by the larger element */
	size_t n = ptw_grow_cap(s->n_queues, (size_t)stream + 1, 4,
				sizeof(*s->queues));
	if (n == 0 || n > UINT32_MAX)
		return PTW_ERR_NOMEM;
	struct ptw_clock_queue *r = ptw_realloc_array(s->queues, n, sizeof(*r));
	if (!r)
		return PTW_ERR_NOMEM;
	s->queues = r;
	uint32_t *h = ptw_realloc_array(s->heads, n, sizeof(*h));
	if (!h)
		return PTW_ERR_NOMEM;
	s->heads = h;
	memset(r + s->n_queues, 0, (n - s->n_queues) * sizeof(*r));
	s->n_queues = (uint32_t)n;
	return 0;
}

/* Room for one more index in a run (doubling ring). 0 or NOMEM. */
static int queue_reserve(struct ptw_clock_queue *r)
{
	if (r->len < r->cap)
		return 0;
	uint32_t ncap = r->cap ? r->cap * 2 : 64;
	uint32_t *n = malloc((size_t)ncap * sizeof(*n));
	if (!n)
		return PTW_ERR_NOMEM;
	for (uint32_t i = 0; i < r->len; i++)
		n[i] = r->idx[(r->head + i) & (r->cap - 1)];
	free(r->idx);
	r->idx = n;
	r->cap = ncap;
	r->head = 0;
	return 0;
}

/* Whether 'rec' can extend its stream's run (made ready if so). */
static int run_accepts(struct ptw_clock_store *s, const struct ptw_clock_rec *rec)
{
	if (runs_cover(s, rec->stream))
		return 0;
	struct ptw_clock_queue *r = &s->queues[rec->stream];
	if (r->len) {
		uint32_t last = r->idx[(r->head + r->len - 1) & (r->cap - 1)];
		if (ptw_clock_rec_cmp(rec, &s->recs[last]) <= 0)
			return 0;
	}
	return queue_reserve(r) == 0;
}

int ptw_clock_store_insert(struct ptw_clock_store *s,
			   const struct ptw_clock_rec *rec, const void *meta)
{
	uint32_t len = rec->meta_len;
	if (len > PTW_CLOCK_STORE_MAX_META)
		return PTW_ERR_LIMIT;
	uint32_t need = chunks_for(len);
	uint64_t add = ptw_clock_store_rec_bytes(len);
	if (s->n_recs >= s->max_records || add > s->max_bytes ||
	    s->bytes > s->max_bytes - add)
		return PTW_ERR_LIMIT;
	/* Grow first: nothing below may fail once we start to commit. */
	if (s->n_free_slots == 0) {
		int rc = grow_recs(s);
		if (rc)
			return rc;
	}
	if (s->n_free_chunks < need) {
		int rc = grow_chunks(s, need);
		if (rc)
			return rc;
	}
	/* Decided before the commit: the run (if any) already has room. */
	int to_run = run_accepts(s, rec);

	uint32_t idx = s->free_slots[--s->n_free_slots];
	struct ptw_clock_rec *r = &s->recs[idx];
	*r = *rec;
	r->meta_chunk = NO_CHUNK;
	/* Chain the chunks in order; copy the metadata piecewise. */
	uint32_t *link = &r->meta_chunk;
	const uint8_t *src = meta;
	for (uint32_t left = len; left > 0;) {
		uint32_t c = s->free_chunk;
		s->free_chunk = s->chunk_next[c];
		s->n_free_chunks--;
		uint32_t n = left < PTW_CLOCK_STORE_CHUNK ? left
							  : PTW_CLOCK_STORE_CHUNK;
		memcpy(s->chunks + (size_t)c * PTW_CLOCK_STORE_CHUNK, src, n);
		src += n;
		left -= n;
		*link = c;
		link = &s->chunk_next[c];
	}
	*link = NO_CHUNK;

	if (to_run) {
		struct ptw_clock_queue *ru = &s->queues[r->stream];
		ru->idx[(ru->head + ru->len) & (ru->cap - 1)] = idx;
		if (ru->len++ == 0) {
			s->heads[s->n_heads++] = r->stream;
			heads_up(s, s->n_heads - 1);
		}
	} else {
		s->heap[s->n_heap].ns = r->t.ns;
		s->heap[s->n_heap].idx = idx;
		s->n_heap++;
		heap_up(s, s->n_heap - 1);
	}
	s->n_recs++;

	s->bytes += add;
	if (s->n_recs > s->peak_records)
		s->peak_records = s->n_recs;
	if (s->bytes > s->peak_bytes)
		s->peak_bytes = s->bytes;
	return 0;
}

/* The smallest record's slot and whether it is a run head (1) or the
 * heap's top (0); UINT32_MAX if empty. */
static uint32_t min_slot(const struct ptw_clock_store *s, int *in_run)
{
	const struct ptw_clock_rec *h = s->n_heap ? &s->recs[s->heap[0].idx] : NULL;
	const struct ptw_clock_rec *r = s->n_heads ? run_head(s, s->heads[0]) : NULL;
	if (r && (!h || r->t.ns < h->t.ns ||
		  (r->t.ns == h->t.ns && ptw_clock_rec_cmp(r, h) < 0))) {
		*in_run = 1;
		const struct ptw_clock_queue *ru = &s->queues[s->heads[0]];
		return ru->idx[ru->head];
	}
	*in_run = 0;
	return h ? s->heap[0].idx : UINT32_MAX;
}

const struct ptw_clock_rec *ptw_clock_store_min(const struct ptw_clock_store *s)
{
	int in_run;
	uint32_t idx = min_slot(s, &in_run);
	return idx == UINT32_MAX ? NULL : &s->recs[idx];
}

int ptw_clock_store_pop_below(struct ptw_clock_store *s, uint64_t below_ns,
			      struct ptw_clock_rec *out, void *meta)
{
	int in_run;
	uint32_t idx = min_slot(s, &in_run);
	if (idx == UINT32_MAX || s->recs[idx].t.ns >= below_ns)
		return 0;
	struct ptw_clock_rec *r = &s->recs[idx];
	*out = *r;

	/* Copy the chain out and return it to the free list. */
	uint8_t *dst = meta;
	uint32_t left = r->meta_len;
	uint32_t c = r->meta_chunk;
	while (c != NO_CHUNK) {
		uint32_t n = left < PTW_CLOCK_STORE_CHUNK ? left
							  : PTW_CLOCK_STORE_CHUNK;
		memcpy(dst, s->chunks + (size_t)c * PTW_CLOCK_STORE_CHUNK, n);
		dst += n;
		left -= n;
		uint32_t next = s->chunk_next[c];
		s->chunk_next[c] = s->free_chunk;
		s->free_chunk = c;
		s->n_free_chunks++;
		c = next;
	}
	s->bytes -= ptw_clock_store_rec_bytes(r->meta_len);
	s->free_slots[s->n_free_slots++] = idx;

	if (in_run) {
		uint32_t st = s->heads[0];
		struct ptw_clock_queue *ru = &s->queues[st];
		ru->head = (ru->head + 1) & (ru->cap - 1);
		if (--ru->len == 0) {
			s->heads[0] = s->heads[--s->n_heads];
			if (s->n_heads)
				heads_down(s, 0);
		} else {
			heads_down(s, 0); /* its head grew */
		}
	} else {
		heap_pop_root(s);
	}
	s->n_recs--;
	out->meta_chunk = NO_CHUNK;
	return 1;
}
