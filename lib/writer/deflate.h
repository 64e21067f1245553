/* deflate.h - wraps a batch of TracePacket records into one
 * TracePacket.compressed_packets record (zlib format, one stream) or one
 * TracePacket.zstd_compressed_packets record (one zstd frame).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_DEFLATE_H
#define PTW_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

/* Largest batch input: keeps every compressed packet well under the
 * 512 KB trace_packet.proto asks for, even for incompressible data (the
 * compress bound of 256 KiB is about 256 KiB + 100 bytes for deflate,
 * + 1 KiB for zstd). */
#define PTW_DEFLATE_MAX_INPUT (256u * 1024u)

struct ptw_deflate;

/* method: PTW_COMPRESS_DEFLATE (level 1..9, as zlib's) or
 * PTW_COMPRESS_ZSTD (level 1..19). NULL on allocation failure. */
struct ptw_deflate *ptw_deflate_create(int method, int level);
void ptw_deflate_destroy(struct ptw_deflate *d);

/* Compresses 'n' (<= PTW_DEFLATE_MAX_INPUT) bytes of complete Trace.packet
 * records into one finished zlib stream (zstd frame) and frames it as a
 * top-level record carrying compressed_packets (zstd_compressed_packets).
 * On success returns 0 and points *out and *out_len at the record (valid
 * until the next call); returns PTW_ERR_INVALID (compressor failure)
 * otherwise. */
int ptw_deflate_batch(struct ptw_deflate *d, const uint8_t *in, size_t n,
		      const uint8_t **out, size_t *out_len);

#endif /* PTW_DEFLATE_H */
