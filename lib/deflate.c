/* deflate.c - turns a batch of packet records into a compressed_packets
 * record with zlib.
 * SPDX-License-Identifier: Apache-2.0 */
#include "deflate.h"

#include <stdlib.h>
#include <zlib.h>

#include "pb_fields.h"
#include "ptw/error.h"
#include "ptw/pb.h"

/* Room before the compressed bytes for the record and field headers:
 * 0x0A + varint(packet len) + tag(50) (2 bytes) + varint(data len). */
#define PTW_DEFLATE_HEADROOM 24u

struct ptw_deflate {
	z_stream zs;
	uint8_t *buf; /* PTW_DEFLATE_HEADROOM + compressed bytes */
	size_t cap;
};

struct ptw_deflate *ptw_deflate_create(int level)
{
	struct ptw_deflate *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	/* windowBits 15 = zlib framing (trace_processor accepts zlib or
	 * gzip, not raw deflate); memLevel 8 = zlib's default. */
	if (deflateInit2(&d->zs, level, Z_DEFLATED, 15, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(d);
		return NULL;
	}
	d->cap = PTW_DEFLATE_HEADROOM +
		 deflateBound(&d->zs, PTW_DEFLATE_MAX_INPUT);
	d->buf = malloc(d->cap);
	if (!d->buf) {
		deflateEnd(&d->zs);
		free(d);
		return NULL;
	}
	return d;
}

void ptw_deflate_destroy(struct ptw_deflate *d)
{
	if (!d)
		return;
	deflateEnd(&d->zs);
	free(d->buf);
	free(d);
}

int ptw_deflate_batch(struct ptw_deflate *d, const uint8_t *in, size_t n,
		      const uint8_t **out, size_t *out_len)
{
	if (n > PTW_DEFLATE_MAX_INPUT || n == 0)
		return PTW_ERR_INVALID;
	if (deflateReset(&d->zs) != Z_OK)
		return PTW_ERR_INVALID;
	d->zs.next_in = (Bytef *)(uintptr_t)in; /* zlib API is not const */
	d->zs.avail_in = (uInt)n;
	d->zs.next_out = d->buf + PTW_DEFLATE_HEADROOM;
	d->zs.avail_out = (uInt)(d->cap - PTW_DEFLATE_HEADROOM);
	int zr = deflate(&d->zs, Z_FINISH);
	if (zr != Z_STREAM_END)
		return zr == Z_MEM_ERROR ? PTW_ERR_NOMEM : PTW_ERR_INVALID;
	size_t clen = d->zs.total_out;

	/* Field header (tag 50, wire type 2) and record header, written
	 * right-aligned so they end where the compressed bytes begin. */
	uint8_t hdr[PTW_DEFLATE_HEADROOM];
	uint8_t *p = hdr;
	uint8_t field[2 * PTW_PB_VARINT_MAX];
	uint8_t *f = ptw_pb_write_varint(
		field, PTW_PB_TAG(PTW_F_PKT_COMPRESSED_PACKETS, PTW_PB_WT_LEN));
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
