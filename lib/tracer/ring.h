/* ring.h - single-producer / single-consumer ring of fixed-size slots.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A bounded FIFO between exactly one producer thread and one consumer
 * thread, lock-free and wait-free on both sides, built on C11 atomics (the
 * Concurrency Kit ck_ring_*_spsc design). The capacity is a power of two and
 * each slot has the same power-of-two size; a record may span several
 * consecutive slots (indices wrap: address each slot with ptw_ring_slot()).
 *
 *   slots:  [ ... | head ... consumer reads ... | tail ... free ... ]
 *            head, tail: free-running 64-bit counters, masked on use;
 *            tail - head = slots in use; full when it equals the capacity
 *            (no spare slot is needed, unlike ck's 32-bit variant).
 *
 * Producer: ptw_ring_reserve() -> fill ptw_ring_slot(r, i) ... ->
 *           ptw_ring_commit(), or ptw_ring_push() for a one-slot record.
 * Consumer: ptw_ring_peek() -> read slots -> ptw_ring_release(), or
 *           ptw_ring_pop().
 * A full ring is not an error: reserve/push return a failure value and the
 * caller decides (drop and count, or wait).
 *
 * Thread rule: at any time at most one thread produces and at most one
 * thread consumes; they may be different threads. The caller owns the slot
 * memory (or uses ptw_ring_create()). */
#ifndef PTW_RING_H
#define PTW_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/arch/arch.h"

#define PTW_RING_CACHELINE 64u
#define PTW_RING_MAX_SLOT_SIZE 4096u
#ifndef PTW_RING_PREFETCH_BYTES
#define PTW_RING_PREFETCH_BYTES 1024u /* how far ahead a commit prefetches */
#endif

/* Visible because the inline producer/consumer code needs its fields.
 * Producer-written and consumer-written fields sit on separate cache lines
 * so the two threads do not false-share. */
struct ptw_ring {
	/* ---- producer line: written by the producer only ---- */
	_Alignas(PTW_RING_CACHELINE) _Atomic uint64_t tail; /* next slot to fill */
	uint64_t head_cache; /* producer's last view of head (never ahead of it) */
	unsigned char *p_slots;
	uint64_t p_mask;
	uint32_t p_shift;
	uint32_t p_ahead; /* slots between a commit and the slot it prefetches;
			   * 0: no prefetch (ptw_ring_commit) */
	/* ---- consumer line: written by the consumer only ---- */
	_Alignas(PTW_RING_CACHELINE) _Atomic uint64_t head; /* next slot to read */
	uint64_t tail_cache; /* consumer's last view of tail (never ahead of it) */
	unsigned char *c_slots;
	uint64_t c_mask;
	uint32_t c_shift;
	/* ---- read-only after init ---- */
	_Alignas(PTW_RING_CACHELINE) uint64_t capacity; /* slots */
	uint32_t slot_size;                              /* bytes */
	int owns_memory;
};

/* Bytes of slot memory a ring of 'capacity' slots of 'slot_size' bytes
 * needs; 0 if either is not a power of two or the product overflows. */
size_t ptw_ring_memsize(uint32_t slot_size, uint64_t capacity);

/* Initialises 'r' over caller-owned 'mem' (ptw_ring_memsize() bytes,
 * aligned to the slot size or 64 bytes). 'slot_size' is a power of two from
 * 8 to PTW_RING_MAX_SLOT_SIZE, 'capacity' a power of two >= 2. Both indices
 * start at 'start' (tests use values near UINT64_MAX to check wrap-around;
 * pass 0 otherwise). Returns 0 or PTW_ERR_INVALID. Not thread-safe: call
 * before handing the ring to its threads. */
int ptw_ring_init(struct ptw_ring *r, void *mem, uint32_t slot_size,
		  uint64_t capacity, uint64_t start);

/* 1 if ptw_ring_commit prefetches on this CPU (x86: it has PREFETCHW,
 * CPUID 0x80000001 ECX bit_PRFCHW, which older Intel CPUs lack; asked
 * once, cpuid is slow in a virtual machine). A ring prefetches
 * PTW_RING_PREFETCH_BYTES / slot_size slots ahead (at least one), or not
 * at all if that is a whole lap or more. */
int ptw_ring_prefetch_ok(void);

/* Allocates a ring and its slots (cache-line aligned). Returns NULL on bad
 * sizes or out of memory. Free with ptw_ring_destroy(). */
struct ptw_ring *ptw_ring_create(uint32_t slot_size, uint64_t capacity);

/* Frees a ring from ptw_ring_create() (NULL: no-op). Neither thread may use
 * it any more. */
void ptw_ring_destroy(struct ptw_ring *r);

/* ---- producer side (one thread) ------------------------------------- */

/* Reserves 'n' consecutive slots (n >= 1). Returns 1 and stores the index
 * of the first one in *idx, or 0 if fewer than n slots are free (the ring is
 * unchanged). Fill the slots through ptw_ring_slot(r, *idx + k) and publish
 * them with ptw_ring_commit(r, *idx + n). */
static inline int ptw_ring_reserve(struct ptw_ring *r, uint64_t n,
				   uint64_t *idx);

/* The address of slot 'i' (any free-running index; masked here). */
static inline void *ptw_ring_slot_producer(const struct ptw_ring *r,
					   uint64_t i);
static inline const void *ptw_ring_slot(const struct ptw_ring *r, uint64_t i);

/* Publishes every reserved slot below 'end' to the consumer, and asks for
 * the cache line PTW_RING_PREFETCH_BYTES further on for writing (see the
 * implementation). */
static inline void ptw_ring_commit(struct ptw_ring *r, uint64_t end);

/* Copies one slot_size-byte record in. Returns 1, or 0 if the ring is full
 * (a full ring is not an error; nothing is written). */
static inline int ptw_ring_push(struct ptw_ring *r, const void *rec);

/* ---- consumer side (one thread) ------------------------------------- */

/* Number of committed slots ready to read, starting at *idx (the head). */
static inline uint64_t ptw_ring_peek(struct ptw_ring *r, uint64_t *idx);

/* Hands every slot below 'end' back to the producer. */
static inline void ptw_ring_release(struct ptw_ring *r, uint64_t end);

/* Copies the oldest record out. Returns 1, or 0 if the ring is empty. */
static inline int ptw_ring_pop(struct ptw_ring *r, void *out);

/* Slots in use, as seen from either side (a snapshot: exact only when the
 * other thread is quiet). */
static inline uint64_t ptw_ring_size(struct ptw_ring *r);

/* ---- inline implementation, not API -------------------------------- */

static inline int ptw_ring_reserve(struct ptw_ring *r, uint64_t n,
				   uint64_t *idx)
{
	/* Relaxed: only this thread writes tail. */
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t cap = r->p_mask + 1; /* producer line only */
	/* used + n > capacity; used <= capacity, so no overflow for sane n */
	if (__builtin_expect((t - r->head_cache) + n > cap, 0)) {
		/* Acquire pairs with the consumer's release store of head:
		 * once we see the new head, the consumer has finished reading
		 * the slots below it, so we may overwrite them. */
		r->head_cache =
			atomic_load_explicit(&r->head, memory_order_acquire);
		if ((t - r->head_cache) + n > cap)
			return 0;
	}
	*idx = t;
	return 1;
}

static inline void *ptw_ring_slot_producer(const struct ptw_ring *r,
					   uint64_t i)
{
	return r->p_slots + ((i & r->p_mask) << r->p_shift);
}

static inline const void *ptw_ring_slot(const struct ptw_ring *r, uint64_t i)
{
	return r->c_slots + ((i & r->c_mask) << r->c_shift);
}

static inline void ptw_ring_commit(struct ptw_ring *r, uint64_t end)
{
	/* Release pairs with the consumer's acquire load of tail: the slot
	 * contents written above become visible before the new tail does. */
	atomic_store_explicit(&r->tail, end, memory_order_release);
	/* The consumer has read, one lap ago, the lines the producer writes
	 * next, so each of them must be taken back from the other core
	 * before it can be written: a store that waits for that holds up
	 * every later store. A prefetch for writing (x86 PREFETCHW) asks
	 * for the line early, while the producer does other work. It is
	 * only a hint: a line the consumer has not released yet (near a
	 * full ring) is merely fetched twice. */
	if (r->p_ahead) {
		const void *p = ptw_ring_slot_producer(r, end + r->p_ahead);
		/* p_ahead is 0 on a CPU without it (ring.c) */
		ptw_arch_prefetch_w(p);
	}
}

static inline int ptw_ring_push(struct ptw_ring *r, const void *rec)
{
	uint64_t i;
	if (!ptw_ring_reserve(r, 1, &i))
		return 0;
	memcpy(ptw_ring_slot_producer(r, i), rec, (size_t)1 << r->p_shift);
	ptw_ring_commit(r, i + 1);
	return 1;
}

static inline uint64_t ptw_ring_peek(struct ptw_ring *r, uint64_t *idx)
{
	/* Relaxed: only this thread writes head. */
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	*idx = h;
	if (r->tail_cache == h) {
		/* Acquire pairs with the producer's release store of tail:
		 * the slots below it are fully written once we see it. */
		r->tail_cache =
			atomic_load_explicit(&r->tail, memory_order_acquire);
	}
	return r->tail_cache - h;
}

static inline void ptw_ring_release(struct ptw_ring *r, uint64_t end)
{
	/* Release pairs with the producer's acquire load of head: our reads
	 * of the slots below 'end' complete before the producer may reuse
	 * them (the consumer index is the producer's license to overwrite). */
	atomic_store_explicit(&r->head, end, memory_order_release);
}

static inline int ptw_ring_pop(struct ptw_ring *r, void *out)
{
	uint64_t h;
	if (ptw_ring_peek(r, &h) == 0)
		return 0;
	memcpy(out, ptw_ring_slot(r, h), (size_t)1 << r->c_shift);
	ptw_ring_release(r, h + 1);
	return 1;
}

static inline uint64_t ptw_ring_size(struct ptw_ring *r)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	return t - h;
}

#endif /* PTW_RING_H */
