/* trace_clock.h - trace_processor's clock model for the reader (internal).
 * SPDX-License-Identifier: Apache-2.0
 *
 * Follows src/trace_processor/util/clock_synchronizer.{h,cc} and
 * proto_trace_reader.cc (perfetto-wire.md 3.5): snapshots relate clocks;
 * sequence-scoped clocks (64..127) are keyed by (sequence, id); incremental
 * clocks keep a running value in ns, reset by each snapshot and advanced
 * by every packet converted through them, in file order; a value is
 * converted to trace time by a breadth-first search over snapshot edges
 * (at most PTW_CLOCK_MAX_HOPS hops), using on each hop the latest snapshot
 * whose source reading is <= the value (else the first one). */
#ifndef PTW_TRACE_CLOCK_H
#define PTW_TRACE_CLOCK_H

#include <stdint.h>

#define PTW_CLOCK_BOOTTIME 6u
#define PTW_CLOCK_TRACE_FILE 11u
#define PTW_CLOCK_MAX_HOPS 4

struct ptw_clocks;

struct ptw_clock_reading {
	uint32_t id;          /* clock id as written */
	uint64_t timestamp;   /* in units */
	uint64_t unit_ns;     /* 0 means 1 */
	int is_incremental;
};

struct ptw_clocks *ptw_clocks_new(void);
void ptw_clocks_free(struct ptw_clocks *c);

static inline int ptw_clock_is_seq(uint32_t id) { return id >= 64 && id < 128; }

/* Applies a snapshot taken on sequence 'seq' (0: none; the caller rejects
 * sequence clocks without a sequence as fatal first). 'primary' is
 * primary_trace_clock (0: unset). Returns 0 accepted, 1 rejected
 * (invalid_clock_snapshots; *why says which rule), -1 out of memory. */
int ptw_clocks_add_snapshot(struct ptw_clocks *c, uint32_t seq,
			    const struct ptw_clock_reading *r, uint32_t n,
			    uint32_t primary, const char **why);

/* The clock a timestamp without explicit clock id is in (the trace
 * default clock set by snapshots), or 0 (no conversion). */
uint32_t ptw_clocks_default(const struct ptw_clocks *c);

/* The trace-time clock (0 while none was chosen: TRACE_FILE). */
uint32_t ptw_clocks_trace_clock(const struct ptw_clocks *c);

/* Converts 'ts' in clock 'id' (sequence-scoped on 'seq') to trace time.
 * Advances incremental clocks. Returns 0 and *out, 1 if the clock was
 * never snapshotted (unknown source clock), 2 if no path leads to trace
 * time, -1 out of memory. */
int ptw_clocks_convert(struct ptw_clocks *c, uint32_t seq, uint32_t id,
		       uint64_t ts, int64_t *out);

/* 1 if clock (seq, id) is known and incremental. */
int ptw_clocks_is_incremental(const struct ptw_clocks *c, uint32_t seq,
			      uint32_t id);

#endif /* PTW_TRACE_CLOCK_H */
