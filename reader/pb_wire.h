/* pb_wire.h - bounds-checked walk over raw protobuf wire data.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The reader needs the raw wire in three places protobuf-c hides it:
 * Trace.packet framing (to stop at a truncated final record and skip other
 * top-level fields as trace_processor does), packets carrying more than one
 * payload of the 'data' oneof, and packed repeated fields. Decoding proper
 * is done by protobuf-c. */
#ifndef PTW_PB_WIRE_H
#define PTW_PB_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Reads a varint of at most 10 bytes at *p (< end). Returns 1 and advances
 * *p, or 0 if the input ends inside the varint or it is over 10 bytes (*p
 * unchanged). */
int ptw_wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);

struct ptw_wire_field {
	uint32_t num;          /* field number */
	uint32_t wt;           /* wire type 0..7 */
	uint64_t varint;       /* wt 0: value; wt 1/5: raw little-endian bits */
	const uint8_t *data;   /* wt 2: payload */
	size_t len;            /* wt 2: payload length */
	size_t offset;         /* offset of the tag from the buffer start */
};

enum ptw_wire_status {
	PTW_WIRE_END = 0,      /* no more fields */
	PTW_WIRE_FIELD = 1,    /* *f filled */
	PTW_WIRE_TRUNCATED = -1, /* input ends inside a field */
	PTW_WIRE_BAD = -2,     /* bad varint or wire type 3/4/6/7 */
};

struct ptw_wire_cursor {
	const uint8_t *start, *p, *end;
};

static inline void ptw_wire_init(struct ptw_wire_cursor *c, const void *data,
				 size_t len)
{
	c->start = (const uint8_t *)data;
	c->p = c->start;
	c->end = c->start + len;
}

/* Reads the next field. On TRUNCATED/BAD the cursor does not move. */
int ptw_wire_next(struct ptw_wire_cursor *c, struct ptw_wire_field *f);

#endif /* PTW_PB_WIRE_H */
