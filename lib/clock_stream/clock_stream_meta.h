/* clock_stream_meta.h - serialises a clock event's metadata (strings,
 * flows, annotations) into the bytes a buffered record owns, and back.
 * Private to lib/ (and its tests), not installed.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Layout (host byte order, unaligned, read back with memcpy):
 *
 *     u8 has_category  1: [u32 len, bytes, NUL]  2: [pointer] (static)
 *     u8 has_name      1: [u32 len, bytes, NUL]  2: [pointer] (static)
 *     u8 n_flows  u64 x n_flows
 *     u8 n_term   u64 x n_term
 *     u8 n_args   per arg: u32 len, name, NUL, u8 type,
 *                          STRING: u32 len, bytes, NUL
 *                          BOOL:   u8
 *                          other:  8 bytes (int64/uint64/double)
 *
 * Strings keep their NUL so the decoder can point into the buffer. With
 * PTW_EV_STATIC_STRINGS, name and category are kept as pointers (the
 * caller promised they outlive the writer) and the decoded event carries
 * the flag on to the writer. */
#ifndef PTW_CLOCK_STREAM_META_H
#define PTW_CLOCK_STREAM_META_H

#include <stdint.h>

#include "ptw/clock_stream.h"
#include "ptw/writer.h"

/* What the encoder learnt about the sort keys. */
struct ptw_clock_meta_keys {
	uint64_t phase;   /* "phase" annotation, else 0 */
	uint64_t ordinal; /* "ordinal" annotation, valid if has_ordinal */
	int has_ordinal;
};

/* Checks 'ev' and writes its metadata to 'buf' (PTW_CLOCK_STREAMS_MAX_META
 * bytes). 'with_names' 0 drops category and name (slice ends, counters).
 * Returns 0 and sets *len and *keys, or PTW_ERR_INVALID / PTW_ERR_LIMIT with
 * a static reason in *why. */
int ptw_clock_meta_encode(const struct ptw_clock_streams_event *ev, int with_names,
			  uint8_t *buf, uint32_t *len,
			  struct ptw_clock_meta_keys *keys, const char **why);

/* Rebuilds the event fields of *out (category, name, flows, args) from
 * 'buf'. Strings point into 'buf'; flows and args are copied to 'flows',
 * 'term' (PTW_MAX_FLOWS each) and 'args' (PTW_MAX_ANNOTATIONS). The input
 * was produced by ptw_clock_meta_encode: returns 0, or PTW_ERR_FORMAT if it
 * is inconsistent (a bug). */
int ptw_clock_meta_decode(const uint8_t *buf, uint32_t len,
			  struct ptw_event *out, uint64_t *flows,
			  uint64_t *term, struct ptw_arg *args);

#endif /* PTW_CLOCK_STREAM_META_H */
