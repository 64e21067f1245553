/* callstack.h - the callstack of an event (TrackEvent.callstack inline, or
 * callstack_iid with its frames, mappings and strings interned per
 * sequence). Not installed.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_CALLSTACK_H
#define PTW_CALLSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "ptw/writer.h"

struct ptw_seq;
struct ptw_stk; /* a sequence's callstack tables, made at its first stack */

/* What one event's stack adds to its packet: 'id' the new InternedData
 * entries (id_len bytes, written inside the packet's InternedData), 'te'
 * the TrackEvent field (te_len bytes). Valid until the next encode on
 * the same sequence. */
struct ptw_stk_out {
	const uint8_t *id;
	size_t id_len;
	const uint8_t *te;
	size_t te_len;
};

/* NULL if 'cs' can be written, else what is wrong with it. */
const char *ptw_w_stk_check(const struct ptw_callstack *cs);

/* Interns (or encodes inline) a checked stack for sequence s, after its
 * checkpoint (if any) was written: tables of an older interning
 * generation (s->cp_gen) are forgotten first. Sets s->need_cp when a
 * table reaches max_interned. Returns 0 or PTW_ERR_NOMEM. */
int ptw_w_stk_encode(struct ptw_seq *s, const struct ptw_callstack *cs,
		     struct ptw_stk_out *out);

void ptw_w_stk_free(struct ptw_stk *k);

#endif /* PTW_CALLSTACK_H */
