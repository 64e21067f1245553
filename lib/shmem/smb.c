/* smb.c - the shared memory buffer: its geometry, taking and completing
 * chunks with the ABI's compare-and-swap on each page's word, and the
 * commit list (smb.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "ptw/error.h"
#include "smb_internal.h"

/* Tries on one page before moving on: only the service changes a page's
 * word besides us, and only a bounded number of times per chunk we
 * completed, but a producer never waits on it. */
#define PTW_SMB_CAS_TRIES 64

#define PTW_SMB_MAX_CHUNKS_PER_PAGE 14u

static uint32_t ptw_smb_layout_of(uint32_t per_page)
{
	for (uint32_t l = 1; l <= 5; l++)
		if (ptw_smb_layout_chunks(l) == per_page)
			return l;
	return 0;
}

struct ptw_smb *ptw_smb_create(void *mem, size_t size, uint32_t page_size,
			       uint32_t chunks_per_page, int *err)
{
	int rc = PTW_ERR_INVALID;
	uint32_t per = chunks_per_page ? chunks_per_page : 1;
	uint32_t layout = ptw_smb_layout_of(per);
	uint32_t quarter = page_size / PTW_SMB_MIN_PAGE;
	struct ptw_smb *smb = NULL;
	if (!mem || ((uintptr_t)mem & (PTW_SMB_MIN_PAGE - 1)) || !layout ||
	    page_size < PTW_SMB_MIN_PAGE || page_size > PTW_SMB_MAX_PAGE ||
	    page_size % PTW_SMB_MIN_PAGE || (quarter & (quarter - 1)) ||
	    size < page_size || size % page_size ||
	    size / page_size > UINT32_MAX / PTW_SMB_MAX_CHUNKS_PER_PAGE)
		goto fail;
	rc = PTW_ERR_NOMEM;
	smb = calloc(1, sizeof(*smb));
	if (!smb)
		goto fail;
	smb->mem = mem;
	smb->size = size;
	smb->page_size = page_size;
	smb->num_pages = (uint32_t)(size / page_size);
	smb->layout = layout;
	smb->per_page = per;
	smb->chunk_size = ptw_smb_layout_chunk_size(page_size, layout);
	smb->next_writer_id = 1;
	/* Every chunk of every layout a page may have: one entry each. */
	smb->commits_cap = (size_t)smb->num_pages * PTW_SMB_MAX_CHUNKS_PER_PAGE;
	smb->commits = calloc(smb->commits_cap, sizeof(*smb->commits));
	smb->slot = calloc(smb->commits_cap, sizeof(*smb->slot));
	if (!smb->commits || !smb->slot)
		goto fail;
	return smb;
fail:
	if (smb) {
		free(smb->commits);
		free(smb->slot);
		free(smb);
	}
	if (err)
		*err = rc;
	return NULL;
}

uint32_t ptw_smb_num_pages(const struct ptw_smb *smb)
{
	return smb->num_pages;
}

uint32_t ptw_smb_chunk_size(const struct ptw_smb *smb)
{
	return smb->chunk_size;
}

uint32_t ptw_smb_chunks_per_page(const struct ptw_smb *smb)
{
	return smb->per_page;
}

/* ---- chunks ---------------------------------------------------------- */

static uint8_t *ptw_smb_page(const struct ptw_smb *smb, uint32_t page)
{
	return smb->mem + (size_t)page * smb->page_size;
}

/* Takes a free chunk of page 'page', if it has one: 1 with c's place set. */
static int ptw_smb_take_in_page(struct ptw_smb *smb, uint32_t page,
				struct ptw_smb_chunk *c)
{
	_Atomic uint32_t *w = ptw_smb_page_word(ptw_smb_page(smb, page));
	uint32_t v = atomic_load_explicit(w, memory_order_acquire);
	for (int t = 0; t < PTW_SMB_CAS_TRIES; t++) {
		uint32_t layout = ptw_smb_word_layout(v);
		uint32_t n = ptw_smb_layout_chunks(layout), idx = 0, nv;
		if (!layout) {
			/* A free page: partition it and take its chunk 0
			 * in one step. */
			layout = smb->layout;
			nv = (layout << PTW_SMB_LAYOUT_SHIFT) |
			     PTW_SMB_BEING_WRITTEN;
		} else {
			while (idx < n &&
			       ptw_smb_word_state(v, idx) != PTW_SMB_FREE)
				idx++;
			if (idx == n) /* full, or a layout we do not know */
				return 0;
			nv = v | ((uint32_t)PTW_SMB_BEING_WRITTEN << (2 * idx));
		}
		if (atomic_compare_exchange_strong_explicit(
			    w, &v, nv, memory_order_acq_rel,
			    memory_order_acquire)) {
			c->page = page;
			c->idx = idx;
			c->size = ptw_smb_layout_chunk_size(smb->page_size,
							    layout);
			c->base = ptw_smb_page(smb, page) + PTW_SMB_PAGE_HDR +
				  (size_t)idx * c->size;
			return 1;
		}
	}
	return 0;
}

int ptw_smb_acquire(struct ptw_smb *smb, uint32_t writer_id,
		    uint32_t chunk_id, uint32_t flags, struct ptw_smb_chunk *c)
{
	for (uint32_t i = 0; i < smb->num_pages; i++) {
		uint32_t page = smb->cursor + i;
		if (page >= smb->num_pages)
			page -= smb->num_pages;
		if (!ptw_smb_take_in_page(smb, page, c))
			continue;
		smb->cursor = page;
		atomic_store_explicit(ptw_smb_chunk_id_word(c->base), chunk_id,
				      memory_order_relaxed);
		atomic_store_explicit(ptw_smb_writer_id_word(c->base),
				      (uint16_t)writer_id, memory_order_relaxed);
		c->used = PTW_SMB_CHUNK_HDR;
		c->count = 0;
		c->flags = flags;
		ptw_smb_chunk_publish(c);
		return 1;
	}
	c->base = NULL;
	return 0;
}

uint32_t ptw_smb_free_chunks(const struct ptw_smb *smb, uint32_t enough)
{
	uint32_t n = 0;
	/* from where the next chunk will be looked for: free ones are
	 * likely there, and the count stops at 'enough' */
	for (uint32_t i = 0; i < smb->num_pages && n < enough; i++) {
		uint32_t p = smb->cursor + i;
		if (p >= smb->num_pages)
			p -= smb->num_pages;
		_Atomic uint32_t *w = ptw_smb_page_word(ptw_smb_page(smb, p));
		uint32_t v = atomic_load_explicit(w, memory_order_acquire);
		uint32_t layout = ptw_smb_word_layout(v);
		if (!layout) {
			n += smb->per_page;
			continue;
		}
		uint32_t k = ptw_smb_layout_chunks(layout);
		for (uint32_t c = 0; c < k; c++)
			n += ptw_smb_word_state(v, c) == PTW_SMB_FREE;
	}
	return n;
}

int ptw_smb_complete(struct ptw_smb *smb, struct ptw_smb_chunk *c,
		     uint32_t target_buffer)
{
	ptw_smb_chunk_publish(c);
	/* Being written (01) to complete (11): only we change a chunk in
	 * this state, so one atomic OR does it whatever the service does
	 * to the other chunks of the page meanwhile. */
	_Atomic uint32_t *w = ptw_smb_page_word(ptw_smb_page(smb, c->page));
	atomic_fetch_or_explicit(w, (uint32_t)PTW_SMB_BEING_READ << (2 * c->idx),
				 memory_order_release);
	smb->st.chunks++;
	size_t key = (size_t)c->page * PTW_SMB_MAX_CHUNKS_PER_PAGE + c->idx;
	c->base = NULL;
	if (smb->slot[key]) {
		/* Still listed from an earlier use: one entry reads it. */
		smb->commits[smb->slot[key] - 1].target_buffer = target_buffer;
		return 0;
	}
	struct ptw_smb_commit *e = &smb->commits[smb->n_commits++];
	e->page = c->page;
	e->chunk = c->idx;
	e->target_buffer = target_buffer;
	smb->slot[key] = (uint32_t)smb->n_commits;
	size_t total = (size_t)smb->num_pages * smb->per_page;
	return smb->n_commits == (total + 1) / 2;
}

/* ---- commit list and stats -------------------------------------------- */

size_t ptw_smb_take_commits(struct ptw_smb *smb, struct ptw_smb_commit *out,
			    size_t max)
{
	size_t n = smb->n_commits < max ? smb->n_commits : max;
	if (!n)
		return 0;
	memcpy(out, smb->commits, n * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		smb->slot[(size_t)out[i].page * PTW_SMB_MAX_CHUNKS_PER_PAGE +
			  out[i].chunk] = 0;
	smb->n_commits -= n;
	memmove(smb->commits, smb->commits + n,
		smb->n_commits * sizeof(*smb->commits));
	for (size_t i = 0; i < smb->n_commits; i++)
		smb->slot[(size_t)smb->commits[i].page *
				  PTW_SMB_MAX_CHUNKS_PER_PAGE +
			  smb->commits[i].chunk] = (uint32_t)(i + 1);
	return n;
}

size_t ptw_smb_pending_commits(const struct ptw_smb *smb)
{
	return smb->n_commits;
}

void ptw_smb_get_stats(const struct ptw_smb *smb, struct ptw_smb_stats *st)
{
	*st = smb->st;
}
