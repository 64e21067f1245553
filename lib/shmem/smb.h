/* smb.h - ptw's TracePackets into a Perfetto shared memory buffer (SMB):
 * the producer side of the ABI that traced reads (Perfetto v58
 * docs/design-docs/api-and-abi.md, shared_memory_abi.h). Private to lib/;
 * not installed. The UNIX-socket IPC that maps the buffer, commits the
 * chunks and answers the service lives elsewhere (the system backend).
 * SPDX-License-Identifier: Apache-2.0
 *
 * The buffer is 'size' bytes of pages of 'page_size' bytes (4 KiB .. 32
 * KiB, a power of two times 4 KiB: what the service accepts). Each page
 * starts with an 8-byte header whose 32-bit word holds the page's layout
 * (bits 30..28: 1, 2, 4, 7 or 14 chunks, 0: free) and 2 state bits per
 * chunk (free, being written, being read, complete); each chunk starts
 * with an 8-byte header (chunk_id u32, writer_id u16, packet count u10 and
 * flags u6) followed by packet fragments, each a varint size and that many
 * bytes of one TracePacket. Only this side moves a chunk from free to
 * being written and then to complete; only the service moves it from
 * complete to being read and back to free (and clears a page whose chunks
 * are all free). Both sides change the page word with compare-and-swap,
 * so the service may free chunks at any time while we write.
 *
 *   smb = ptw_smb_create(mmapped, size, page_size, 0, &err);
 *   r = ptw_smb_router_create(smb, target_buffer, &hooks);
 *   ...the writer's output bytes:     ptw_smb_route(r, p, n);
 *   ...after each output batch, on a Flush request, before Stop:
 *        ptw_smb_router_flush(r);
 *        n = ptw_smb_take_commits(smb, list, max);  -> CommitDataRequest
 *            (chunks_to_move: page, chunk, target_buffer; one each)
 *   ptw_smb_router_destroy(r); ptw_smb_destroy(smb); munmap.
 *
 * The router takes the writer's output (Trace.packet records, the bytes
 * a ptw writer writes to its file, compression off) or single packets,
 * and writes each packet into the chunk of its sequence's writer: every
 * trusted_packet_sequence_id gets a writer id of its own (1 ..
 * PTW_SMB_MAX_WRITER_ID, never reused while the smb lives), whose chunk
 * ids count up from 0 by one per chunk. The packet goes in without the
 * fields that only the service may set (trusted_uid, trusted_pid,
 * trusted_packet_sequence_id, machine_id: the service stamps its own per
 * writer id); a packet holding a field that the service refuses outright
 * (trace_config, trace_stats, compressed_packets, zstd_compressed_packets,
 * synchronization_marker, service_event, trace_provenance, protovms)
 * is left out and counted in 'refused', since the service would drop it
 * (PacketStreamValidator) and a ptw writer in system mode must not write
 * them: compression off, no TraceStats packet.
 *
 * A packet longer than the room left in its chunk continues in the next
 * chunk of its writer (flags kLastPacketContinuesOnNextChunk /
 * kFirstPacketContinuesFromPrevChunk), over as many chunks as it needs.
 * Each fragment's size is known when it is written (we hold whole
 * packets), so nothing is ever patched: no kChunkNeedsPatching, no
 * chunks_to_patch. A chunk holds at most 1023 packets (the count's bits).
 *
 * Never blocks by itself: a packet for which there are not enough free
 * chunks right now is dropped whole and counted ('dropped'), unless the
 * optional hooks.stall makes room. Its sequence is then in
 * loss: until a packet that clears its incremental state
 * (SEQ_INCREMENTAL_STATE_CLEARED or incremental_state_cleared), packets
 * that need that state (SEQ_NEEDS_INCREMENTAL_STATE) are left out too
 * ('skipped': trace_processor would skip them after a loss anyway, and
 * their interned ids and delta timestamps may lean on the lost packet),
 * and the hooks' loss() asks the writer for such a packet soon. The first
 * packet written after a loss carries previous_packet_dropped =
 * DATA_LOSS_PRESENT | DATA_LOSS_SMB_FULL (as the SDK's TraceWriter
 * marks it): trace_processor counts it per sequence
 * (traced_buf_sequence_packet_loss and traced_buf_data_loss_smb_full,
 * data_loss severity, with the service's TraceStats). trace_processor
 * ignores the mark on the first packet of a sequence (the service marks
 * every first packet), so a sequence that lost packets before any was
 * written gets a packet of the mark alone first. A loss not followed by
 * any packet gets a packet of that mark alone at the next
 * ptw_smb_router_flush() that finds a free chunk, or waits for one in
 * ptw_smb_router_settle(). With hooks.stall the routing thread may wait
 * for room instead (bounded by the hook).
 *
 * Thread rule: an smb and all its routers belong to one thread at a time
 * (the tracer's backend); nothing here locks or sleeps, and only the
 * creation of a sequence's state allocates. The service is the only other
 * party. */
#ifndef PTW_SMB_H
#define PTW_SMB_H

#include <stddef.h>
#include <stdint.h>

#define PTW_SMB_MIN_PAGE 4096u
#define PTW_SMB_MAX_PAGE (32u * 1024u) /* the service's limit (the ABI's:
					 * 64 KiB) */
#define PTW_SMB_MAX_WRITER_ID 32767u   /* kMaxWriterID */
#define PTW_SMB_MAX_PACKETS_PER_CHUNK 1023u

/* TracePacket.previous_packet_dropped of the first packet after a loss. */
#define PTW_SMB_LOSS_MARK (1u | 256u) /* DATA_LOSS_PRESENT | _SMB_FULL */

struct ptw_smb;
struct ptw_smb_router;

/* One entry of CommitDataRequest.chunks_to_move. */
struct ptw_smb_commit {
	uint32_t page;
	uint32_t chunk;
	uint32_t target_buffer;
};

/* Counts since creation, over all routers of the smb. */
struct ptw_smb_stats {
	uint64_t packets;         /* packets routed that were written into
				   * the buffer (not the mark-only ones) */
	uint64_t bytes;           /* their bytes, as written (no headers) */
	uint64_t fragments;       /* continuation fragments (chunk changes
				   * inside a packet) */
	uint64_t chunks;          /* chunks completed */
	uint64_t dropped;         /* packets lost: no free chunk */
	uint64_t dropped_bytes;
	uint64_t skipped;         /* left out after a loss (see above) */
	uint64_t loss_marks;      /* previous_packet_dropped written */
	uint64_t refused;         /* packets with a field only the service
				   * writes */
	uint64_t malformed;       /* input that is not a Trace.packet record
				   * or a TracePacket; also a sequence that
				   * found no writer id */
};

/* The system backend's side of a router's events, all optional (NULL). */
struct ptw_smb_hooks {
	void *ctx;
	/* A sequence got writer id 'writer_id' (added 1: send
	 * RegisterTraceWriter(writer_id, target_buffer)), or lost it at
	 * ptw_smb_router_destroy (added 0: UnregisterTraceWriter). */
	void (*writer)(void *ctx, uint32_t writer_id, uint32_t target_buffer,
		       int added);
	/* Sequence 'seq_id' (the writer's trusted_packet_sequence_id) lost
	 * a packet: its next event should clear its incremental state (a
	 * checkpoint). Called once per loss, when it begins. */
	void (*loss)(void *ctx, uint32_t seq_id);
	/* At least half of the buffer's chunks are complete and wait in the
	 * commit list: send a CommitDataRequest now (it may be called in the
	 * middle of ptw_smb_route). */
	void (*commit_due)(void *ctx);
	/* No chunk is free for a packet now ('attempt' 0, 1, ... for that
	 * packet). The router has completed every chunk it and the other
	 * routers of the smb held open (they are in the commit list). Return
	 * non-zero once room is likely (e.g. the commits were sent and the
	 * caller waited a little): the router tries again; 0: the packet is
	 * dropped as without the hook. NULL: never waits. Only for this
	 * thread (the backend), never a producer's: keep the total wait
	 * bounded. */
	int (*stall)(void *ctx, unsigned attempt);
};

/* An smb over 'size' bytes at 'mem' (page-aligned, e.g. the service's
 * mmapped fd; not owned, zeroed by the service), in pages of 'page_size'
 * bytes split into 'chunks_per_page' chunks (1, 2, 4, 7 or 14; 0: 1, as
 * the SDK). NULL with *err (PTW_ERR_INVALID: a size that is not a
 * multiple of the page size, a page size the service refuses, a layout
 * not in the ABI; PTW_ERR_NOMEM). */
struct ptw_smb *ptw_smb_create(void *mem, size_t size, uint32_t page_size,
			       uint32_t chunks_per_page, int *err);
/* Destroys the routers left (ptw_smb_router_destroy) and frees the smb.
 * The memory is the caller's. */
void ptw_smb_destroy(struct ptw_smb *smb);

/* A router writing into 'smb' for a session's 'target_buffer'
 * (DataSourceConfig.target_buffer). hooks is copied (NULL: none). NULL on
 * out of memory. */
struct ptw_smb_router *ptw_smb_router_create(struct ptw_smb *smb,
					     uint32_t target_buffer,
					     const struct ptw_smb_hooks *hooks);
/* ptw_smb_router_flush, then gives back its writer ids (hooks.writer
 * with added 0) and frees it. */
void ptw_smb_router_destroy(struct ptw_smb_router *r);

/* Writes 'n' bytes of whole Trace.packet records (field 1, what a ptw
 * writer writes to a file, uncompressed). Returns 0; PTW_ERR_INVALID if a
 * record's packet is not a well-formed TracePacket (counted in
 * 'malformed' and left out, the other records are written) or the bytes
 * are not such records (counted; the records before are written, the
 * rest left out); PTW_ERR_NOMEM if a new sequence's state could not be
 * allocated (that packet and the rest are left out). A packet lost for
 * want of chunks is not an error (counted). */
int ptw_smb_route(struct ptw_smb_router *r, const uint8_t *p, size_t n);
/* The same for one TracePacket's bytes (no record framing). */
int ptw_smb_route_packet(struct ptw_smb_router *r, const uint8_t *pkt,
			 size_t n);

/* Completes every chunk the router has open (each in the commit list
 * then), so that the service may read every packet routed so far; writes
 * the marks of losses no packet carried yet. Call it after each output
 * batch, before answering a Flush request and when the session stops. */
void ptw_smb_router_flush(struct ptw_smb_router *r);
/* ptw_smb_router_flush, then the marks still due (no chunk was free for
 * them) wait for room through hooks.stall, bounded by the hook: for the
 * end of a session and a Flush request, after which no later packet of
 * a sequence may come to carry its mark. Without hooks.stall the same as
 * ptw_smb_router_flush. */
void ptw_smb_router_settle(struct ptw_smb_router *r);

/* Forgets sequence 'seq_id' (its writer finished it, e.g. a thread that
 * exited): completes its chunk and gives back its writer id (hooks.writer
 * with added 0), which is not handed out again. A later packet of that
 * sequence id gets a new writer id. */
void ptw_smb_router_forget(struct ptw_smb_router *r, uint32_t seq_id);

/* ClearIncrementalState changes nothing here: the writer clears its
 * sequences' state (ptw_i_writer_clear_incremental), whose next packets
 * carry SEQ_INCREMENTAL_STATE_CLEARED through the router as any other. */

/* Moves up to 'max' entries of the commit list (oldest first) into out;
 * returns how many. A chunk appears once however often it was completed
 * before the list was taken (the service reads what is there). */
size_t ptw_smb_take_commits(struct ptw_smb *smb, struct ptw_smb_commit *out,
			    size_t max);
/* Entries waiting in the commit list. */
size_t ptw_smb_pending_commits(const struct ptw_smb *smb);

/* Counts since creation. */
void ptw_smb_get_stats(const struct ptw_smb *smb, struct ptw_smb_stats *st);

/* The buffer's geometry, for tests and the IPC side. */
uint32_t ptw_smb_num_pages(const struct ptw_smb *smb);
uint32_t ptw_smb_chunk_size(const struct ptw_smb *smb); /* with header */
uint32_t ptw_smb_chunks_per_page(const struct ptw_smb *smb);

#endif /* PTW_SMB_H */
