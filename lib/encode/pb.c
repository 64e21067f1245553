/* pb.c - slow paths of the inline protobuf encoder (growth, long lengths).
 * SPDX-License-Identifier: Apache-2.0 */
#include "pb.h"
#include "ptw/error.h"

#include <stdlib.h>

#include "lib/util/grow.h"

int ptw_pb_buf_init(struct ptw_pb_buf *b, size_t initial_cap)
{
	if (initial_cap == 0)
		initial_cap = 4096;
	b->data = malloc(initial_cap);
	b->len = 0;
	b->cap = b->data ? initial_cap : 0;
	b->oom = b->data == NULL;
	return b->data ? PTW_OK : PTW_ERR_NOMEM;
}

void ptw_pb_buf_free(struct ptw_pb_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

int ptw_pb_reserve_slow(struct ptw_pb_buf *b, size_t need)
{
	if (b->oom)
		return PTW_ERR_NOMEM;
	uint8_t *p = ptw_grow_by(b->data, &b->cap, b->len, need, 4096, 1);
	if (!p) {
		b->oom = 1;
		return PTW_ERR_NOMEM;
	}
	b->data = p;
	return PTW_OK;
}

void ptw_pb_end_nested_slow(struct ptw_pb_buf *b, size_t mark)
{
	size_t body = b->len - mark - 1;
	unsigned extra = ptw_pb_varint_size(body) - 1;
	if (!ptw_pb_reserve(b, extra))
		return;
	memmove(b->data + mark + 1 + extra, b->data + mark + 1, body);
	ptw_pb_write_varint(b->data + mark, body);
	b->len += extra;
}
