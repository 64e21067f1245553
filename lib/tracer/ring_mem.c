/* ring_mem.c - memory for the producers' rings (ring_mem.h): blocks
 * from the OS (os_mem.h), faulted in as used or on request, pooled when
 * threads exit.
 * SPDX-License-Identifier: Apache-2.0 */
#include "ring_mem.h"

#include <pthread.h>

#include "lib/os/os_fork.h"
#include "lib/os/os_mem.h"

struct ptw_tr_block {
	void *mem;
	size_t bytes;
	int warm;
};

static pthread_mutex_t ptw_tr_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t ptw_tr_pool_once = PTHREAD_ONCE_INIT;
static struct ptw_tr_block ptw_tr_pool[PTW_TR_RING_POOL];
static unsigned ptw_tr_pool_n, ptw_tr_pool_warm;

static void ptw_tr_pool_lock(void) { pthread_mutex_lock(&ptw_tr_pool_mu); }
static void ptw_tr_pool_unlock(void) { pthread_mutex_unlock(&ptw_tr_pool_mu); }

/* The child's blocks are zeroed and untouched (os_mem.h: not shared with
 * a child of fork), so none of them is warm there. */
static void ptw_tr_pool_child(void)
{
	for (unsigned i = 0; i < ptw_tr_pool_n; i++)
		ptw_tr_pool[i].warm = 0;
	ptw_tr_pool_warm = 0;
	ptw_tr_pool_unlock();
}

static void ptw_tr_pool_init(void)
{
	/* Held across fork, so the child's copy is consistent and unlocked. */
	ptw_os_atfork(ptw_tr_pool_lock, ptw_tr_pool_unlock,
		      ptw_tr_pool_child);
}

void *ptw_tr_ring_mem_get(size_t bytes, int *warm)
{
	pthread_once(&ptw_tr_pool_once, ptw_tr_pool_init);
	*warm = 0;
	void *mem = NULL;
	pthread_mutex_lock(&ptw_tr_pool_mu);
	/* the warm block of this size added last, else any of this size */
	for (unsigned pass = 0; pass < 2 && !mem; pass++) {
		for (unsigned i = ptw_tr_pool_n; i-- > 0;) {
			struct ptw_tr_block *b = &ptw_tr_pool[i];
			if (b->bytes != bytes || (pass == 0 && !b->warm))
				continue;
			mem = b->mem;
			*warm = b->warm;
			ptw_tr_pool_warm -= (unsigned)b->warm;
			*b = ptw_tr_pool[--ptw_tr_pool_n];
			break;
		}
	}
	pthread_mutex_unlock(&ptw_tr_pool_mu);
	if (mem)
		return mem;
	return ptw_os_mem_reserve(bytes);
}

void ptw_tr_ring_mem_populate(void *mem, size_t bytes)
{
	ptw_os_mem_populate(mem, bytes);
}

void ptw_tr_ring_mem_put(void *mem, size_t bytes, int warm)
{
	if (!mem)
		return;
	pthread_once(&ptw_tr_pool_once, ptw_tr_pool_init);
	pthread_mutex_lock(&ptw_tr_pool_mu);
	struct ptw_tr_block drop = {mem, bytes, warm != 0};
	if (ptw_tr_pool_n < PTW_TR_RING_POOL &&
	    (!drop.warm || ptw_tr_pool_warm < PTW_TR_RING_POOL_WARM)) {
		ptw_tr_pool_warm += (unsigned)drop.warm;
		ptw_tr_pool[ptw_tr_pool_n++] = drop;
		drop.mem = NULL;
	} else if (drop.warm && ptw_tr_pool_warm < PTW_TR_RING_POOL_WARM) {
		/* full of cold blocks: a warm one is worth more */
		for (unsigned i = 0; i < ptw_tr_pool_n; i++) {
			if (!ptw_tr_pool[i].warm) {
				struct ptw_tr_block cold = ptw_tr_pool[i];
				ptw_tr_pool[i] = drop;
				ptw_tr_pool_warm++;
				drop = cold;
				break;
			}
		}
	}
	pthread_mutex_unlock(&ptw_tr_pool_mu);
	if (drop.mem)
		ptw_os_mem_release(drop.mem, drop.bytes);
}
