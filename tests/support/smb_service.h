/* smb_service.h - the tests' stand-in for traced's side of a shared
 * memory buffer (lib/shmem/smb.h): moves complete chunks out as the
 * service does (complete -> being read -> free, with the page word's
 * compare-and-swap; a page whose chunks are all free is cleared), keeps
 * their fragments, and reassembles each writer's packets in chunk id
 * order, as TraceBuffer does. Written from the ABI's description
 * (shared_memory_abi.h, trace_buffer_v2.cc), not from ptw's writer side.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TEST_SMB_SERVICE_H
#define PTW_TEST_SMB_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/shmem/smb.h"

/* A chunk as copied out of the buffer. */
struct svc_chunk {
	uint32_t writer_id;
	uint32_t chunk_id;
	uint32_t count;
	uint32_t flags;
	uint8_t *data;  /* the fragments (count of them) */
	size_t len;
};

/* A reassembled packet. */
struct svc_packet {
	uint32_t writer_id;
	uint8_t *data;
	size_t len;
};

struct svc {
	uint8_t *mem;
	size_t size;
	uint32_t page_size;
	struct svc_chunk *chunks;
	size_t n_chunks, cap;
	/* what reassembly found */
	struct svc_packet *pkts;
	size_t n_pkts, pkts_cap;
	uint64_t chunk_gaps;      /* a writer's chunk ids not consecutive */
	uint64_t orphans;         /* a continuation without its beginning */
	uint64_t writer_drops;    /* kPacketSizeDropPacket fragments */
	uint64_t abi_errors;      /* a header or fragment out of bounds, a
				   * chunk listed but not complete */
};

void svc_init(struct svc *s, void *mem, size_t size, uint32_t page_size);
void svc_free(struct svc *s);

/* Reads the listed chunks (a CommitDataRequest), freeing each. Returns
 * how many were read (a listed chunk that is not complete is counted in
 * abi_errors, as the service refuses it). */
size_t svc_commit(struct svc *s, const struct ptw_smb_commit *c, size_t n);
/* Reads every complete chunk found by walking the pages (what a commit
 * of all of them would read). Returns how many. */
size_t svc_scan(struct svc *s);
/* Takes the commit list of 'smb' and reads it. Returns chunks read. */
size_t svc_drain(struct svc *s, struct ptw_smb *smb);

/* Reassembles the chunks read so far into s->pkts (each writer's packets
 * in chunk id order, writers in the order of their first chunk). */
void svc_reassemble(struct svc *s);

/* Writes the reassembled packets as a trace file: each with
 * trusted_packet_sequence_id = its writer id + seq_base, as traced
 * stamps it, then (stats) a TraceStats packet with one WriterStats per
 * writer in buffer 0, as traced ends a trace. Fails the test on error. */
void svc_write_trace(const struct svc *s, const char *path,
		     uint32_t seq_base, int stats);

/* Writes v as a protobuf varint at p; returns the byte after it. */
uint8_t *svc_put_varint(uint8_t *p, uint64_t v);

#endif /* PTW_TEST_SMB_SERVICE_H */
