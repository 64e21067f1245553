/* ring_mem.h - memory for the producers' rings: reserved at full size,
 * paid for as it is used, and kept for the next thread when one exits.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Contract:
 * - ptw_tr_ring_mem_get(bytes) returns 'bytes' of page-aligned, writable
 *   memory, or NULL. A fresh block is only reserved (anonymous mmap): a
 *   page takes memory when the ring first reaches it, so a thread that
 *   logs a few events costs a page or two, not its ring's full size. *warm
 *   is 1 when the block comes from an exited thread's ring of the same
 *   size (its pages already in memory: no page faults), else 0.
 * - ptw_tr_ring_mem_populate(mem, bytes) faults every page in now, off the
 *   producer (the backend calls it once a thread has shown it logs a lot):
 *   best effort, errors ignored (the producer then faults pages itself).
 * - ptw_tr_ring_mem_put(mem, bytes, warm) gives a block back: it is kept
 *   for reuse (at most PTW_TR_RING_POOL blocks, of which at most
 *   PTW_TR_RING_POOL_WARM warm ones) or unmapped. Its contents are not cleared: a ring is re-initialised by
 *   its next owner (ptw_ring_init) and never read beyond what that owner
 *   wrote.
 * - Thread-safe (its own mutex, taken only when a thread registers or
 *   is freed, never per event) and fork-safe (the mutex is held across
 *   fork(); the child keeps the pool, its blocks cold). A fork() costs
 *   the parent's rings nothing: their pages are not shared with the
 *   child (os_mem.h), so a warm ring stays warm, with no copy-on-write
 *   fault on the producer's next pass. */
#ifndef PTW_TR_RING_MEM_H
#define PTW_TR_RING_MEM_H

#include <stddef.h>

/* Blocks kept for reuse, so that threads that come and go neither map
 * nor unmap (an unmap costs every CPU a TLB flush): a cold block holds
 * the few pages its thread touched (less than a sixteenth of the ring,
 * else the backend had made it warm), a warm one the whole ring. With the
 * default ring (1 MiB) the pool holds at most 16 + 240 / 16 = 31 MiB. */
#define PTW_TR_RING_POOL 256u
#define PTW_TR_RING_POOL_WARM 16u

void *ptw_tr_ring_mem_get(size_t bytes, int *warm);
void ptw_tr_ring_mem_populate(void *mem, size_t bytes);
void ptw_tr_ring_mem_put(void *mem, size_t bytes, int warm);

#endif /* PTW_TR_RING_MEM_H */
