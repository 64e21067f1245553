/* pbr.h - a bounded protobuf field reader for the messages the tracing
 * service sends (lib/system). Every read stays inside [p, end); a bad
 * varint, a length past the end or a wire type protobuf does not have is
 * refused, never followed. Private to lib/system.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_SYS_PBR_H
#define PTW_SYS_PBR_H

#include <stddef.h>
#include <stdint.h>

struct ptw_sys_pbr {
	const uint8_t *p, *end;
};

struct ptw_sys_pbf {
	uint32_t num;         /* field number */
	uint32_t wt;          /* 0 varint, 1 fixed64, 2 bytes, 5 fixed32 */
	uint64_t v;           /* wt 0, 1, 5: the value */
	const uint8_t *data;  /* wt 2 */
	size_t len;           /* wt 2 */
};

static inline void ptw_sys_pbr_init(struct ptw_sys_pbr *r, const void *p,
				    size_t n)
{
	r->p = (const uint8_t *)p;
	r->end = n ? r->p + n : r->p; /* p may be NULL when n is 0 */
}

static inline int ptw_sys_pbr_varint(struct ptw_sys_pbr *r, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 10; i++) {
		if (r->p >= r->end)
			return -1;
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7Fu) << (7 * i);
		if (!(b & 0x80u)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* The next field: 1 with *f filled, 0 at the end, -1 on malformed input
 * (the reader is then left where the bad field began or inside it; stop
 * reading). Field number 0 is malformed. */
static inline int ptw_sys_pbr_next(struct ptw_sys_pbr *r, struct ptw_sys_pbf *f)
{
	if (r->p >= r->end)
		return 0;
	uint64_t tag;
	if (ptw_sys_pbr_varint(r, &tag) || (tag >> 3) == 0 ||
	    (tag >> 3) > 0x1FFFFFFFu)
		return -1;
	f->num = (uint32_t)(tag >> 3);
	f->wt = (uint32_t)(tag & 7u);
	f->data = NULL;
	f->len = 0;
	f->v = 0;
	switch (f->wt) {
	case 0:
		return ptw_sys_pbr_varint(r, &f->v) ? -1 : 1;
	case 1:
	case 5: {
		size_t n = f->wt == 1 ? 8 : 4;
		if ((size_t)(r->end - r->p) < n)
			return -1;
		for (size_t i = 0; i < n; i++)
			f->v |= (uint64_t)r->p[i] << (8 * i);
		r->p += n;
		return 1;
	}
	case 2: {
		uint64_t len;
		if (ptw_sys_pbr_varint(r, &len) ||
		    len > (uint64_t)(r->end - r->p))
			return -1;
		f->data = r->p;
		f->len = (size_t)len;
		r->p += len;
		return 1;
	}
	default:
		return -1;
	}
}

#endif /* PTW_SYS_PBR_H */
