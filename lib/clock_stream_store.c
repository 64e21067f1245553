/* clock_stream_store.c - bounded, totally ordered store of clock records.
 * SPDX-License-Identifier: Apache-2.0 */
#include "clock_stream_store.h"

#include <stdlib.h>
#include <string.h>

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
	void *p = realloc(s->recs, (size_t)ncap * sizeof(*s->recs));
	if (!p)
		return PTW_ERR_NOMEM;
	s->recs = p;
	p = realloc(s->free_slots, (size_t)ncap * sizeof(*s->free_slots));
	if (!p)
		return PTW_ERR_NOMEM;
	s->free_slots = p;
	p = realloc(s->heap, (size_t)ncap * sizeof(*s->heap));
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
	void *p = realloc(s->chunks, (size_t)n * PTW_CLOCK_STORE_CHUNK);
	if (!p)
		return PTW_ERR_NOMEM;
	s->chunks = p;
	p = realloc(s->chunk_next, (size_t)n * sizeof(*s->chunk_next));
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
	uint32_t n = --s->n_recs;
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

	s->heap[s->n_recs].ns = r->t.ns;
	s->heap[s->n_recs].idx = idx;
	s->n_recs++;
	heap_up(s, s->n_recs - 1);

	s->bytes += add;
	if (s->n_recs > s->peak_records)
		s->peak_records = s->n_recs;
	if (s->bytes > s->peak_bytes)
		s->peak_bytes = s->bytes;
	return 0;
}

const struct ptw_clock_rec *ptw_clock_store_min(const struct ptw_clock_store *s)
{
	return s->n_recs ? &s->recs[s->heap[0].idx] : NULL;
}

int ptw_clock_store_pop_below(struct ptw_clock_store *s, uint64_t below_ns,
			      struct ptw_clock_rec *out, void *meta)
{
	if (s->n_recs == 0 || s->heap[0].ns >= below_ns)
		return 0;
	uint32_t idx = s->heap[0].idx;
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

	heap_pop_root(s);
	out->meta_chunk = NO_CHUNK;
	return 1;
}
