/* pb_wire.c - bounds-checked walk over raw protobuf wire data.
 * SPDX-License-Identifier: Apache-2.0 */
#include "pb_wire.h"

#include <string.h>

int ptw_wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (q >= end)
			return 0;
		uint8_t b = *q++;
		v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 0);
		if (!(b & 0x80)) {
			*out = v;
			*p = q;
			return 1;
		}
	}
	return 0; /* more than 10 bytes */
}

int ptw_wire_next(struct ptw_wire_cursor *c, struct ptw_wire_field *f)
{
	const uint8_t *q = c->p;
	uint64_t tag;
	if (q >= c->end)
		return PTW_WIRE_END;
	if (!ptw_wire_varint(&q, c->end, &tag))
		return (c->end - q) >= 10 ? PTW_WIRE_BAD : PTW_WIRE_TRUNCATED;
	memset(f, 0, sizeof(*f));
	f->offset = (size_t)(c->p - c->start);
	/* As trace_processor's decoder (protozero ParseOneField): the field
	 * number is the tag's upper bits cut to 32; only 0 is malformed, and
	 * a number above 0xFFFF is a field nobody reads (skipped). */
	f->num = (uint32_t)(tag >> 3);
	f->wt = (uint32_t)(tag & 7);
	if (f->num == 0)
		return PTW_WIRE_BAD;
	switch (f->wt) {
	case 0:
		if (!ptw_wire_varint(&q, c->end, &f->varint))
			return (c->end - q) >= 10 ? PTW_WIRE_BAD
						  : PTW_WIRE_TRUNCATED;
		break;
	case 1:
	case 5: {
		size_t n = f->wt == 1 ? 8 : 4;
		if ((size_t)(c->end - q) < n)
			return PTW_WIRE_TRUNCATED;
		uint64_t v = 0;
		for (size_t i = 0; i < n; i++)
			v |= (uint64_t)q[i] << (8 * i);
		f->varint = v;
		q += n;
		break;
	}
	case 2: {
		uint64_t len;
		if (!ptw_wire_varint(&q, c->end, &len))
			return (c->end - q) >= 10 ? PTW_WIRE_BAD
						  : PTW_WIRE_TRUNCATED;
		if (len > (uint64_t)(c->end - q))
			return PTW_WIRE_TRUNCATED;
		f->data = q;
		f->len = (size_t)len;
		q += len;
		break;
	}
	default:
		return PTW_WIRE_BAD;
	}
	c->p = q;
	return PTW_WIRE_FIELD;
}
