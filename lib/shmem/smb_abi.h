/* smb_abi.h - the words of Perfetto's shared memory buffer ABI as both
 * sides see them (include/perfetto/ext/tracing/core/shared_memory_abi.h):
 * the page header's layout word and the chunk header. Used by smb.c and
 * by the tests' stand-in for the service. Private to lib/ and tests/.
 * SPDX-License-Identifier: Apache-2.0
 *
 *   page:   [u32 word: bit 31 reserved, 30..28 layout, 2 bits per chunk]
 *           [u32 reserved] [chunk 0] [chunk 1] ... (chunk_size each)
 *   chunk:  [u32 chunk_id] [u16 writer_id] [u16 count:10 | flags:6 << 10]
 *           [fragment: varint size, bytes] ...
 *
 * Little-endian only, as Perfetto. */
#ifndef PTW_SMB_ABI_H
#define PTW_SMB_ABI_H

#include <stdatomic.h>
#include <stdint.h>

#define PTW_SMB_PAGE_HDR 8u
#define PTW_SMB_CHUNK_HDR 8u
#define PTW_SMB_LAYOUT_SHIFT 28
#define PTW_SMB_LAYOUT_MASK 0x70000000u
#define PTW_SMB_ALL_CHUNKS 0x0FFFFFFFu

/* Chunk states (2 bits each in the page word). */
enum {
	PTW_SMB_FREE = 0,
	PTW_SMB_BEING_WRITTEN = 1,
	PTW_SMB_BEING_READ = 2,
	PTW_SMB_COMPLETE = 3,
};

/* Chunk header flags (the 6 bits above the 10-bit packet count). */
#define PTW_SMB_FIRST_CONTINUES 1u /* kFirstPacketContinuesFromPrevChunk */
#define PTW_SMB_LAST_CONTINUES 2u  /* kLastPacketContinuesOnNextChunk */
#define PTW_SMB_NEEDS_PATCHING 4u  /* kChunkNeedsPatching (never set here) */
#define PTW_SMB_COUNT_BITS 10
#define PTW_SMB_COUNT_MASK 0x3FFu

/* kPacketSizeDropPacket: a fragment size that tells the service to drop
 * the packet it belongs to (protozero's kMaxMessageLength). */
#define PTW_SMB_DROP_PACKET_SIZE (256u * 1024u * 1024u - 1u)

/* Chunks per page of each layout (0: not partitioned, 6 and 7 reserved). */
static inline uint32_t ptw_smb_layout_chunks(uint32_t layout)
{
	static const uint8_t n[8] = { 0, 1, 2, 4, 7, 14, 0, 0 };
	return n[layout & 7u];
}

/* Size of each chunk (with its header) of a layout in a page. */
static inline uint32_t ptw_smb_layout_chunk_size(uint32_t page_size,
						 uint32_t layout)
{
	uint32_t n = ptw_smb_layout_chunks(layout);
	return n ? ((page_size - PTW_SMB_PAGE_HDR) / n) & ~3u : 0;
}

static inline uint32_t ptw_smb_word_layout(uint32_t word)
{
	return (word & PTW_SMB_LAYOUT_MASK) >> PTW_SMB_LAYOUT_SHIFT;
}

static inline uint32_t ptw_smb_word_state(uint32_t word, uint32_t chunk)
{
	return (word >> (2u * chunk)) & 3u;
}

/* The page word, and the chunk header's fields, as the atomics they are:
 * the other process reads and changes them at any time. */
static inline _Atomic uint32_t *ptw_smb_page_word(uint8_t *page)
{
	return (_Atomic uint32_t *)(void *)page;
}

static inline _Atomic uint32_t *ptw_smb_chunk_id_word(uint8_t *chunk)
{
	return (_Atomic uint32_t *)(void *)chunk;
}

static inline _Atomic uint16_t *ptw_smb_writer_id_word(uint8_t *chunk)
{
	return (_Atomic uint16_t *)(void *)(chunk + 4);
}

static inline _Atomic uint16_t *ptw_smb_packets_word(uint8_t *chunk)
{
	return (_Atomic uint16_t *)(void *)(chunk + 6);
}

static inline uint16_t ptw_smb_packets(uint32_t count, uint32_t flags)
{
	return (uint16_t)((count & PTW_SMB_COUNT_MASK) |
			  (flags << PTW_SMB_COUNT_BITS));
}

#endif /* PTW_SMB_ABI_H */
