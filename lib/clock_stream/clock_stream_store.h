/* clock_stream_store.h - the bounded store of buffered clock-stream records.
 * Private to lib/ (and its tests), not installed.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Records wait here, bucketed by their floored nanosecond, until a watermark
 * releases them. Popping always yields the smallest record by the full
 * emission key
 *
 *     (exact time, phase, track name, ordinal, stream, seq)
 *
 * so popping every record below a watermark yields each nanosecond bucket
 * completely sorted, and the buckets in ascending order. The key is total
 * ((stream, seq) is unique), hence the output order depends only on the set
 * of records, never on the order they were inserted in.
 *
 * Where a record sits only affects speed. Streams mostly submit in key
 * order, so each stream keeps a FIFO run of records that arrived in
 * ascending key order; a record smaller than its stream's last run record
 * goes to a binary min-heap instead. Pop compares the heap's top with the
 * smallest run head (a second small heap over the streams' run heads):
 * with k streams, an in-order record costs O(log k) instead of
 * O(log records).
 *
 * Each record owns a copy of its metadata (strings, flows, annotations,
 * serialised by the caller, at most PTW_CLOCK_STORE_MAX_META bytes), kept in
 * a pool of fixed 64-byte chunks chained per record, so records can leave in
 * any order without fragmenting anything. Slots, heap and chunks grow by
 * doubling up to the configured capacity, never per record; an insert that
 * would exceed the capacity fails with PTW_ERR_LIMIT and changes nothing. */
#ifndef PTW_CLOCK_STREAM_STORE_H
#define PTW_CLOCK_STREAM_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "clock_stream_math.h"

#define PTW_CLOCK_STORE_MAX_META (64u * 1024u) /* bytes per record */
#define PTW_CLOCK_STORE_CHUNK 64u              /* metadata chunk bytes */

/* One buffered event. The store copies it; 'track_name' must stay valid
 * until the record is popped (the caller owns the string). */
struct ptw_clock_rec {
	struct ptw_clock_time t; /* exact time */
	uint64_t phase;          /* sort key after the time */
	uint64_t ordinal;        /* sort key after the track name */
	uint64_t seq;            /* submission index within the stream */
	uint64_t cycle;          /* local cycle, for messages */
	uint64_t track;          /* track uuid */
	const char *track_name;  /* sort key after phase; never NULL */
	union {
		int64_t i;
		double d;
	} value;                 /* counter value */
	uint32_t stream;         /* stream index: sort key after ordinal */
	uint32_t kind;           /* caller-defined event kind */
	uint32_t meta_len;       /* bytes of metadata */
	uint32_t meta_chunk;     /* store-internal: first chunk */
};

struct ptw_clock_heap_ent {
	uint64_t ns;  /* copy of the record's ns: most comparisons stop here */
	uint32_t idx; /* record slot */
};

/* One stream's records in ascending key order: a ring of slot indices. */
struct ptw_clock_queue {
	uint32_t *idx; /* cap entries, cap a power of two (or 0) */
	uint32_t cap;
	uint32_t head;
	uint32_t len;
};

struct ptw_clock_store {
	uint32_t max_records;        /* capacity: records */
	uint64_t max_bytes;          /* capacity: slot + chunk bytes */

	struct ptw_clock_rec *recs;  /* slots [0, cap_recs) */
	uint32_t *free_slots;        /* stack of free slot indices */
	struct ptw_clock_heap_ent *heap; /* out-of-order records */
	uint32_t cap_recs;
	uint32_t n_free_slots;
	uint32_t n_recs;             /* records buffered (heap + queues) */
	uint32_t n_heap;

	struct ptw_clock_queue *queues;  /* by stream, n_queues of them */
	uint32_t *heads;             /* min-heap of streams with a run */
	uint32_t n_queues;
	uint32_t n_heads;

	uint8_t *chunks;             /* cap_chunks * PTW_CLOCK_STORE_CHUNK */
	uint32_t *chunk_next;        /* chain / free list links */
	uint32_t cap_chunks;
	uint32_t free_chunk;         /* head of the free list */
	uint32_t n_free_chunks;

	uint64_t bytes;              /* n_recs slots + chunks in use, bytes */
	uint64_t peak_records;
	uint64_t peak_bytes;
};

/* Prepares an empty store holding at most 'max_records' records and
 * 'max_bytes' bytes (see ptw_clock_store_rec_bytes). Allocates nothing yet;
 * returns 0. */
int ptw_clock_store_init(struct ptw_clock_store *s, uint32_t max_records,
			 uint64_t max_bytes);

/* Frees all memory; the store may be initialised again. */
void ptw_clock_store_free(struct ptw_clock_store *s);

/* Bytes a record with 'meta_len' bytes of metadata accounts for. */
uint64_t ptw_clock_store_rec_bytes(uint32_t meta_len);

/* Copies 'rec' (its meta_chunk is ignored) and 'meta_len' = rec->meta_len
 * bytes of 'meta' into the store. Returns 0; PTW_ERR_LIMIT if the record
 * count or byte capacity would be exceeded or meta_len is over
 * PTW_CLOCK_STORE_MAX_META; PTW_ERR_NOMEM if growing failed. On error the
 * store is unchanged. */
int ptw_clock_store_insert(struct ptw_clock_store *s,
			   const struct ptw_clock_rec *rec, const void *meta);

/* The smallest buffered record, or NULL if the store is empty. */
const struct ptw_clock_rec *ptw_clock_store_min(const struct ptw_clock_store *s);

/* Removes the smallest record if its ns is below 'below_ns': copies it to
 * *out and its metadata to 'meta' (room for PTW_CLOCK_STORE_MAX_META bytes)
 * and returns 1. Returns 0 (nothing changed) otherwise. */
int ptw_clock_store_pop_below(struct ptw_clock_store *s, uint64_t below_ns,
			      struct ptw_clock_rec *out, void *meta);

/* Full emission-key comparison: <0, 0 (same record), >0. */
int ptw_clock_rec_cmp(const struct ptw_clock_rec *a,
		      const struct ptw_clock_rec *b);

#endif /* PTW_CLOCK_STREAM_STORE_H */
