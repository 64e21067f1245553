/* deflate.c - turns a batch of packet records into a compressed_packets
 * record (zlib format) with libdeflate, or a zstd_compressed_packets
 * record (one zstd frame) with libzstd.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A batch is compressed whole, in one call, which is what libdeflate does
 * (it has no streaming API, and needs none here): at the same level it is
 * 2.6-2.8 times as fast as zlib's deflate() on our packets, with output
 * within 1.5% of zlib's size (docs/writer.md, "Deflate"). Readers inflate it
 * with zlib like any zlib stream. */
#include "deflate.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "lib/encode/pb_fields.h"
#include "ptw/error.h"
#include "lib/encode/pb.h"
#include "ptw/writer.h"

/* Room before the compressed bytes for the record and field headers:
 * 0x0A + varint(packet len) + tag(50 or 133) (2 bytes) + varint(data len). */
#define PTW_DEFLATE_HEADROOM 24u

struct ptw_deflate {
	struct libdeflate_compressor *c; /* deflate */
	ZSTD_CCtx *z;                    /* zstd */
	int level;
	uint32_t field;                  /* TracePacket field of the batch */
	uint8_t *buf; /* PTW_DEFLATE_HEADROOM + compressed bytes */
	size_t cap;
};

struct ptw_deflate *ptw_deflate_create(int method, int level)
{
	struct ptw_deflate *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	size_t bound;
	d->level = level;
	if (method == PTW_COMPRESS_ZSTD) {
		/* One context, reused for every batch: a frame per call,
		 * no allocation per batch. */
		d->z = ZSTD_createCCtx();
		d->field = PTW_F_PKT_ZSTD_COMPRESSED_PACKETS;
		bound = ZSTD_compressBound(PTW_DEFLATE_MAX_INPUT);
		if (!d->z || ZSTD_isError(ZSTD_CCtx_setParameter(
				     d->z, ZSTD_c_compressionLevel, level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(d->z, ZSTD_c_checksumFlag,
							0)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(
			    d->z, ZSTD_c_contentSizeFlag, 1))) {
			ptw_deflate_destroy(d);
			return NULL;
		}
	} else {
		d->c = libdeflate_alloc_compressor(level);
		d->field = PTW_F_PKT_COMPRESSED_PACKETS;
		if (!d->c) {
			free(d);
			return NULL;
		}
		bound = libdeflate_zlib_compress_bound(d->c, PTW_DEFLATE_MAX_INPUT);
	}
	d->cap = PTW_DEFLATE_HEADROOM + bound;
	d->buf = malloc(d->cap);
	if (!d->buf) {
		ptw_deflate_destroy(d);
		return NULL;
	}
	return d;
}

void ptw_deflate_destroy(struct ptw_deflate *d)
{
	if (!d)
		return;
	if (d->c)
		libdeflate_free_compressor(d->c);
	ZSTD_freeCCtx(d->z);
	free(d->buf);
	free(d);
}

int ptw_deflate_batch(struct ptw_deflate *d, const uint8_t *in, size_t n,
		      const uint8_t **out, size_t *out_len)
{
	if (n > PTW_DEFLATE_MAX_INPUT || n == 0)
		return PTW_ERR_INVALID;
	/* The buffer holds the bound for any input this size: 0 (no room)
	 * cannot happen, but is reported rather than written. */
	size_t clen;
	if (d->z) {
		clen = ZSTD_compress2(d->z, d->buf + PTW_DEFLATE_HEADROOM,
				      d->cap - PTW_DEFLATE_HEADROOM, in, n);
		if (ZSTD_isError(clen))
			return PTW_ERR_INVALID;
	} else {
		clen = libdeflate_zlib_compress(d->c, in, n,
						d->buf + PTW_DEFLATE_HEADROOM,
						d->cap - PTW_DEFLATE_HEADROOM);
	}
	if (clen == 0)
		return PTW_ERR_INVALID;

	/* Field header (tag 50 or 133, wire type 2) and record header, written
	 * right-aligned so they end where the compressed bytes begin. */
	uint8_t hdr[PTW_DEFLATE_HEADROOM];
	uint8_t *p = hdr;
	uint8_t field[2 * PTW_PB_VARINT_MAX];
	uint8_t *f = ptw_pb_write_varint(
		field, PTW_PB_TAG(d->field, PTW_PB_WT_LEN));
	f = ptw_pb_write_varint(f, clen);
	size_t flen = (size_t)(f - field);
	p = ptw_pb_write_varint(p, PTW_PB_TAG(PTW_F_TRACE_PACKET, PTW_PB_WT_LEN));
	p = ptw_pb_write_varint(p, flen + clen);
	size_t rlen = (size_t)(p - hdr);
	uint8_t *start = d->buf + PTW_DEFLATE_HEADROOM - flen - rlen;
	memcpy(start, hdr, rlen);
	memcpy(start + rlen, field, flen);
	*out = start;
	*out_len = rlen + flen + clen;
	return 0;
}
