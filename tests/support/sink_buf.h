/* sink_buf.h - a sink of the session (the system sessions' outputs,
 * lib/tracer/tracer_sink.c) that keeps its bytes in memory and takes one
 * category, for the tests that add sinks without Perfetto's service
 * (test_tracer_sink, test_tracer_tight).
 * SPDX-License-Identifier: Apache-2.0
 *
 * Header-only (static inline): only the tests that include it link the
 * tracer's internals through it. */
#ifndef PTW_TEST_SINK_BUF_H
#define PTW_TEST_SINK_BUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tracer/tracer_internal.h"

/* What a sink's writer wrote (free p when done). */
struct ptw_test_sink_buf {
	uint8_t *p;
	size_t n, cap;
};

static inline int ptw_test_sink_out(void *ctx, const uint8_t *p, size_t n)
{
	struct ptw_test_sink_buf *b = ctx;
	if (b->n + n > b->cap) {
		size_t cap = 2 * (b->n + n);
		uint8_t *q = realloc(b->p, cap);
		if (!q)
			return PTW_ERR_NOMEM;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

/* ctx: the one category the sink takes */
static inline int ptw_test_sink_want_one(void *ctx, const char *cat,
					 size_t len)
{
	const char *w = ctx;
	return strlen(w) == len && memcmp(w, cat, len) == 0;
}

/* A sink writing into b with options wo (which must outlive the sink),
 * in a process named 'pname', taking category 'cat' (a literal). */
static inline void ptw_test_sink_cfg(struct ptw_tr_sink_cfg *sc,
				     struct ptw_test_sink_buf *b,
				     const struct ptw_writer_options *wo,
				     const char *pname, const char *cat)
{
	memset(sc, 0, sizeof(*sc));
	sc->out.fn = ptw_test_sink_out;
	sc->out.ctx = b;
	sc->wo = wo;
	sc->pname = pname;
	sc->want = ptw_test_sink_want_one;
	sc->want_ctx = (void *)(uintptr_t)cat;
}

#endif
