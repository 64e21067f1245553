/* smb_internal.h - state of an smb and its chunks, shared by smb.c (the
 * buffer: chunks, commit list) and smb_route.c (routers). Not API.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_SMB_INTERNAL_H
#define PTW_SMB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "smb.h"
#include "smb_abi.h"

/* A chunk this side holds in the being-written state. */
struct ptw_smb_chunk {
	uint8_t *base;     /* its header; NULL: none held */
	uint32_t page;
	uint32_t idx;      /* within the page */
	uint32_t size;     /* with header */
	uint32_t used;     /* bytes from base written (header included) */
	uint32_t count;    /* packets (fragments) in it */
	uint32_t flags;    /* PTW_SMB_*_CONTINUES */
};

struct ptw_smb {
	uint8_t *mem;
	size_t size;
	uint32_t page_size;
	uint32_t num_pages;
	uint32_t layout;        /* of the pages we partition */
	uint32_t per_page;      /* chunks per page of that layout */
	uint32_t chunk_size;    /* with header */
	uint32_t cursor;        /* page the next search starts at */
	uint32_t next_writer_id;/* 1 ..; > PTW_SMB_MAX_WRITER_ID: none left */
	/* The commit list: at most one entry per chunk of the buffer;
	 * slot[page * 14 + idx] is its entry's index + 1 (0: none). */
	struct ptw_smb_commit *commits;
	size_t n_commits;
	size_t commits_cap;
	uint32_t *slot;
	struct ptw_smb_stats st;
	struct ptw_smb_router *routers; /* every router, for destroy */
};

/* Takes a free chunk (partitioning a free page if need be) for writer
 * 'writer_id' as its chunk 'chunk_id', header written with 'flags' and no
 * packet. Returns 1 with *c set, or 0 if no chunk is free now. */
int ptw_smb_acquire(struct ptw_smb *smb, uint32_t writer_id,
		    uint32_t chunk_id, uint32_t flags, struct ptw_smb_chunk *c);
/* Chunks that ptw_smb_acquire would surely give now (more may be freed
 * meanwhile, none taken: this thread is the only producer), counted up to
 * 'enough'. */
uint32_t ptw_smb_free_chunks(const struct ptw_smb *smb, uint32_t enough);
/* Publishes the count and flags of c (release: the bytes before it are
 * visible to the service first). */
static inline void ptw_smb_chunk_publish(struct ptw_smb_chunk *c)
{
	atomic_store_explicit(ptw_smb_packets_word(c->base),
			      ptw_smb_packets(c->count, c->flags),
			      memory_order_release);
}
/* Marks c complete and adds it to the commit list for 'target_buffer';
 * c holds nothing then. Returns 1 if the list just reached half the
 * buffer's chunks (time to send a commit). */
int ptw_smb_complete(struct ptw_smb *smb, struct ptw_smb_chunk *c,
		     uint32_t target_buffer);

#endif /* PTW_SMB_INTERNAL_H */
