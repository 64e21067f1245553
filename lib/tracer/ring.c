/* ring.c - setup and teardown of SPSC rings (the hot paths are in ring.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include "ring.h"

#include <stdlib.h>

#include "lib/arch/arch.h"

#include "ptw/error.h"

static int is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

static uint32_t log2_u32(uint32_t v)
{
	uint32_t s = 0;
	while ((1u << s) < v)
		s++;
	return s;
}

int ptw_ring_prefetch_ok(void)
{
	static _Atomic int known; /* 0: not asked yet, 1: no, 2: yes */
	int k = atomic_load_explicit(&known, memory_order_relaxed);
	if (!k) {
		k = ptw_arch_prefetch_w_ok() ? 2 : 1;
		atomic_store_explicit(&known, k, memory_order_relaxed);
	}
	return k == 2;
}

size_t ptw_ring_memsize(uint32_t slot_size, uint64_t capacity)
{
	if (!is_pow2(slot_size) || slot_size < 8 ||
	    slot_size > PTW_RING_MAX_SLOT_SIZE || !is_pow2(capacity) ||
	    capacity < 2)
		return 0;
	if (capacity > (uint64_t)SIZE_MAX / slot_size)
		return 0;
	return (size_t)(capacity * slot_size);
}

int ptw_ring_init(struct ptw_ring *r, void *mem, uint32_t slot_size,
		  uint64_t capacity, uint64_t start)
{
	if (!r || !mem || ptw_ring_memsize(slot_size, capacity) == 0)
		return PTW_ERR_INVALID;
	memset(r, 0, sizeof(*r));
	atomic_init(&r->tail, start);
	atomic_init(&r->head, start);
	r->head_cache = start;
	r->tail_cache = start;
	r->p_slots = r->c_slots = mem;
	r->p_mask = r->c_mask = capacity - 1;
	r->p_shift = r->c_shift = log2_u32(slot_size);
	/* at least one slot ahead; none if the ring is that small */
	uint64_t ahead = PTW_RING_PREFETCH_BYTES / slot_size;
	ahead = ahead ? ahead : 1;
	r->p_ahead = ptw_ring_prefetch_ok() && ahead < capacity ? (uint32_t)ahead : 0;
	r->capacity = capacity;
	r->slot_size = slot_size;
	return 0;
}

struct ptw_ring *ptw_ring_create(uint32_t slot_size, uint64_t capacity)
{
	size_t bytes = ptw_ring_memsize(slot_size, capacity);
	if (bytes == 0)
		return NULL;
	struct ptw_ring *r = aligned_alloc(PTW_RING_CACHELINE, sizeof(*r));
	if (!r)
		return NULL;
	/* aligned_alloc wants a size that is a multiple of the alignment;
	 * slot sizes below 64 with tiny capacities may not be. */
	size_t rounded = (bytes + PTW_RING_CACHELINE - 1) &
			 ~(size_t)(PTW_RING_CACHELINE - 1);
	void *mem = aligned_alloc(PTW_RING_CACHELINE, rounded);
	if (!mem) {
		free(r);
		return NULL;
	}
	ptw_ring_init(r, mem, slot_size, capacity, 0);
	r->owns_memory = 1;
	return r;
}

void ptw_ring_destroy(struct ptw_ring *r)
{
	if (!r)
		return;
	if (r->owns_memory)
		free(r->p_slots);
	free(r);
}
