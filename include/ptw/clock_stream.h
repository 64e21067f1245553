/* clock_stream.h - several hardware clock domains in one trace, merged in a
 * deterministic order by watermarks.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A simulator or hardware-trace decoder has independent time sources (a CPU
 * core at 1.2 GHz, a bus at 800 MHz, ...), each counting its own cycles. It
 * registers one clock stream per domain, submits events in each stream's
 * local cycles, and from time to time promises that no future event will be
 * earlier than some trace time (a watermark). The writer then converts every
 * cycle count to nanoseconds exactly, orders the events of all streams
 * deterministically and writes them.
 *
 *   - Conversion is exact and integer-only: a domain running at
 *     f = hz / hz_den cycles per second puts cycle c at
 *         t = (c * 10^9 + offset) / f + offset_ns      nanoseconds,
 *     and the event is written at floor(t). 128-bit intermediates: any
 *     64-bit cycle count converts without overflow; a time above INT64_MAX ns
 *     (what trace_processor can represent) is rejected with PTW_ERR_LIMIT.
 *   - Submitted events wait in a bounded store, bucketed by nanosecond.
 *     ptw_clock_streams_advance_watermark(cs, W) writes every event with
 *     floor(t) < W; events at W or later stay buffered. Released events are
 *     written in ascending order of
 *         (exact t,  "phase" annotation (default 0),  track name,
 *          "ordinal" annotation (default: the event's index in its stream),
 *          stream index,  index in its stream),
 *     so the output depends only on the set of events submitted, never on
 *     how submissions of different streams were interleaved, nor on where
 *     the watermarks fell. "phase" and "ordinal" are ordinary PTW_ARG_TYPE_UINT
 *     annotations of the event (they are written like any other).
 *   - Errors are returned, never papered over: an event earlier than the
 *     current watermark, a full store (its capacity is an option), or a
 *     watermark going backwards fails with the store left exactly as it was.
 *     Nothing ever spills to disk.
 *   - Each stream writes to its own packet sequence (the writer declares its
 *     sequence clocks 64/65 with a ClockSnapshot), so the trace opens in
 *     ui.perfetto.dev with all domains on one time axis.
 *   - Clock streams and the host-time event API of writer.h (sim, wall and
 *     ptw_writer_add_seq sequences) cannot share a writer: attaching clock
 *     streams to a writer that already has host-time events fails with
 *     PTW_ERR_INVALID, and so do host-time events after attaching.
 *   - ptw_writer_close() writes the events still buffered (in order) and
 *     frees the clock streams: the 'struct ptw_clock_streams' pointer is
 *     invalid afterwards. Like a watermark, it returns PTW_ERR_INVALID if
 *     the writer rejected one of those events (an unmatched slice end).
 *
 * Errors are also recorded in the writer's error record (ptw_writer_error)
 * with the stream, cycle and nanosecond concerned. A NULL handle gives
 * PTW_ERR_INVALID (0 for the uuid-returning calls).
 *
 * Thread rule: as the writer's; one thread at a time, nothing locks.
 *
 * Example (two domains; examples/demo_clocks.c has three):
 *
 *     struct ptw_writer *w = ptw_writer_open("sim.pftrace", NULL, &err);
 *     struct ptw_clock_streams *cs = ptw_clock_streams_attach(w, NULL, &err);
 *     struct ptw_clock_streams_domain cpu = { .name = "cpu", .hz = 1200000000 };
 *     struct ptw_clock_streams_domain bus = { .name = "bus", .hz = 800000000 };
 *     uint32_t s_cpu, s_bus;
 *     ptw_clock_streams_add(cs, &cpu, &s_cpu);
 *     ptw_clock_streams_add(cs, &bus, &s_bus);
 *     struct ptw_clock_streams_event ev = { .name = "fetch", .cycle = 1200 };
 *     ptw_clock_streams_slice_begin(cs, s_cpu, &ev);    (at 1000 ns)
 *     ev.cycle = 2400;
 *     ptw_clock_streams_slice_end(cs, s_cpu, &ev);      (at 2000 ns)
 *     ev = (struct ptw_clock_streams_event){ .name = "grant", .cycle = 800 };
 *     ptw_clock_streams_instant(cs, s_bus, &ev);        (at 1000 ns)
 *     ptw_clock_streams_advance_watermark(cs, 1500);    (writes 2 events)
 *     ptw_writer_close(w, &err);                       (writes the rest)
 */
#ifndef PTW_CLOCK_STREAM_H
#define PTW_CLOCK_STREAM_H

#include <stdint.h>

#include "ptw/error.h"
#include "ptw/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits and defaults ------------------------------------------- */
#define PTW_CLOCK_STREAMS_DEFAULT_MAX_RECORDS (1u << 20)
#define PTW_CLOCK_STREAMS_DEFAULT_MAX_BYTES (64ull << 20)
/* Bytes of metadata (strings, flows, annotations) one buffered event may
 * own; see ptw_clock_streams_event_bytes for how they are counted. */
#define PTW_CLOCK_STREAMS_MAX_META (64u * 1024u)
#define PTW_CLOCK_STREAMS_MAX_STREAMS 4096u

struct ptw_clock_streams;

/* Zeroed (or a NULL pointer) means defaults. */
struct ptw_clock_streams_options {
	/* Most events buffered at once. 0: 1,048,576. */
	uint32_t max_records;
	/* Most bytes buffered at once: about 100 bytes per event plus its
	 * metadata rounded up to 64 bytes. 0: 64 MiB. */
	uint64_t max_bytes;
};

/* A clock domain. The frequency is hz / hz_den cycles per second. */
struct ptw_clock_streams_domain {
	/* Non-empty; copied. Names the stream's own track (its events with
	 * track 0 go there) and appears in error messages. */
	const char *name;
	/* Frequency numerator in Hz, >= 1. */
	uint64_t hz;
	/* Frequency denominator; 0 or 1: integer Hz. E.g. 1/3 GHz is
	 * hz = 1000000000, hz_den = 3. */
	uint64_t hz_den;
	/* Added to cycle * 10^9 before dividing by the frequency: the domain
	 * is shifted by offset / hz ns (exactly, fractions included). */
	uint64_t offset;
	/* Whole nanoseconds added after the conversion: the trace time of
	 * cycle 0 when offset is 0. */
	uint64_t offset_ns;
};

/* One event in a stream's local time. Strings are NUL-terminated UTF-8,
 * copied before the call returns, at most PTW_MAX_STRING_LEN bytes each. */
struct ptw_clock_streams_event {
	uint64_t track;         /* track uuid from ptw_clock_streams_add_track /
				 * _add_counter_track; 0: the stream's track */
	uint64_t cycle;         /* local cycle count */
	const char *category;   /* NULL: none */
	const char *name;       /* NULL: none (ignored for slice ends) */
	const uint64_t *flow_ids;             /* flows leaving/continuing */
	uint32_t n_flow_ids;                  /* at most PTW_MAX_FLOWS */
	uint32_t n_terminating_flow_ids;      /* at most PTW_MAX_FLOWS */
	const uint64_t *terminating_flow_ids; /* flows ending here */
	/* Typed annotations, at most PTW_MAX_ANNOTATIONS. Two names are
	 * special and must be PTW_ARG_TYPE_UINT: "phase" and "ordinal" (sort keys,
	 * see the top of this file). */
	const struct ptw_arg *args;
	uint32_t n_args;
	/* PTW_EV_STATIC_STRINGS: 'name' and 'category' are never freed or
	 * changed while the writer lives (string literals, say). The buffered
	 * event then keeps the pointers instead of copies, and the writer
	 * interns them by pointer: faster. 0: both are copied. */
	uint32_t flags;
};

struct ptw_clock_streams_stats {
	uint64_t buffered_records; /* events waiting for a watermark */
	uint64_t buffered_bytes;   /* bytes they hold */
	uint64_t peak_records;     /* most events ever buffered at once */
	uint64_t peak_bytes;       /* most bytes ever buffered at once */
	uint64_t submitted;        /* events accepted */
	uint64_t emitted;          /* events handed to the writer */
	uint64_t watermark;        /* current watermark, ns (0: none yet) */
	uint64_t first_output_ns;  /* writer open to first emitted event,
				    * ns (ptw_writer_now_ns); 0: none yet */
};

/* ---- set-up ---------------------------------------------------------- */

/* Enables clock streams on 'w' and returns their handle, owned by the
 * writer (freed by ptw_writer_close). 'opt' may be NULL. Returns NULL and
 * fills *err (if not NULL) if 'w' already carries host-time events, already
 * has clock streams, or memory ran out. */
static inline struct ptw_clock_streams *ptw_clock_streams_attach(
	struct ptw_writer *w, const struct ptw_clock_streams_options *opt,
	struct ptw_error *err);

/* Name of the root track that holds the streams' tracks. */
#define PTW_CLOCK_STREAM_GROUP "Clock streams"

/* Adds a stream for 'domain' and stores its index (0, 1, ... in the order
 * of the calls) in *stream_out. The stream gets its own packet sequence and
 * its own track named domain->name, a child of the root track
 * PTW_CLOCK_STREAM_GROUP (created with the first stream) with sibling rank
 * = stream index, so the UI shows the streams in the order added. Must
 * come before the first event of any stream. Returns 0, PTW_ERR_INVALID
 * (bad domain, events already submitted, too many streams), PTW_ERR_NOMEM,
 * or the writer's sticky error. */
int ptw_clock_streams_add(struct ptw_clock_streams *cs,
			 const struct ptw_clock_streams_domain *domain,
			 uint32_t *stream_out);

/* Adds a named track (ptw_writer_add_track) that clock events may use; the
 * name (copied) is the track's sort key. Returns the uuid, or 0 on error
 * (see ptw_writer_error). May be called at any time. */
uint64_t ptw_clock_streams_add_track(struct ptw_clock_streams *cs,
				    const char *name, uint64_t parent_uuid,
				    int32_t rank);

/* Same for a counter track (ptw_writer_add_counter_track). */
uint64_t ptw_clock_streams_add_counter_track(struct ptw_clock_streams *cs,
					    const char *name,
					    const char *unit_name,
					    uint64_t parent_uuid, int32_t rank);

/* The uuid of a stream's own track, or 0 if 'stream' does not exist. */
uint64_t ptw_clock_streams_track(const struct ptw_clock_streams *cs,
				uint32_t stream);

/* Converts a local cycle of 'stream' to trace nanoseconds (floored), as
 * events are. Returns 0, PTW_ERR_INVALID (no such stream) or PTW_ERR_LIMIT
 * (above INT64_MAX ns). */
int ptw_clock_streams_to_ns(const struct ptw_clock_streams *cs,
			   uint32_t stream, uint64_t cycle, uint64_t *ns_out);

/* ---- events -----------------------------------------------------------
 * Each buffers one event and returns 0, or returns an error and buffers
 * nothing: PTW_ERR_INVALID (no such stream or track, a counter on a
 * non-counter track or the reverse, a late event: floor(t) below the
 * current watermark, a bad "phase"/"ordinal" annotation, too many flows or
 * annotations), PTW_ERR_LIMIT (time above INT64_MAX ns, metadata over
 * PTW_CLOCK_STREAMS_MAX_META, store full), PTW_ERR_NOMEM, or the writer's
 * sticky error. A slice's BEGIN and END belong in the same stream. */

int ptw_clock_streams_instant(struct ptw_clock_streams *cs, uint32_t stream,
			     const struct ptw_clock_streams_event *ev);
int ptw_clock_streams_slice_begin(struct ptw_clock_streams *cs,
				 uint32_t stream,
				 const struct ptw_clock_streams_event *ev);
/* Closes the innermost open slice on ev->track; name/category ignored. */
int ptw_clock_streams_slice_end(struct ptw_clock_streams *cs, uint32_t stream,
			       const struct ptw_clock_streams_event *ev);
int ptw_clock_streams_counter_int(struct ptw_clock_streams *cs,
				 uint32_t stream, uint64_t track,
				 uint64_t cycle, int64_t value);
int ptw_clock_streams_counter_double(struct ptw_clock_streams *cs,
				    uint32_t stream, uint64_t track,
				    uint64_t cycle, double value);

/* ---- watermarks -------------------------------------------------------- */

/* Promises that every future event of every stream has floor(t) >=
 * 'exclusive_ns', and writes all buffered events below it, in order.
 * Returns 0; PTW_ERR_INVALID if 'exclusive_ns' is below the current
 * watermark (nothing written, store unchanged; equal is a no-op); the
 * writer's sticky error (NOMEM, IO) if writing failed. If the writer
 * rejected some event (an END without a BEGIN on its track), the others are
 * still written and the first rejection is returned. */
int ptw_clock_streams_advance_watermark(struct ptw_clock_streams *cs,
				       uint64_t exclusive_ns);

/* Bytes a buffered event accounts for against max_bytes, given its
 * metadata size (as a guide for choosing the capacity). */
uint64_t ptw_clock_streams_event_bytes(uint32_t meta_bytes);

static inline void
ptw_clock_streams_get_stats(const struct ptw_clock_streams *cs,
			    struct ptw_clock_streams_stats *out);

/* ---- the sized entry points behind the wrappers (the rule "Structs that
 * grow" in writer.h) --------------------------------------------------- */

struct ptw_clock_streams *ptw_clock_streams_attach_sized(
	struct ptw_writer *w, const struct ptw_clock_streams_options *opt,
	size_t opt_size, struct ptw_error *err);
void ptw_clock_streams_get_stats_sized(const struct ptw_clock_streams *cs,
				       struct ptw_clock_streams_stats *out,
				       size_t out_size);

static inline struct ptw_clock_streams *ptw_clock_streams_attach(
	struct ptw_writer *w, const struct ptw_clock_streams_options *opt,
	struct ptw_error *err)
{
	return ptw_clock_streams_attach_sized(
		w, opt, sizeof(struct ptw_clock_streams_options), err);
}
static inline void
ptw_clock_streams_get_stats(const struct ptw_clock_streams *cs,
			    struct ptw_clock_streams_stats *out)
{
	ptw_clock_streams_get_stats_sized(
		cs, out, sizeof(struct ptw_clock_streams_stats));
}

#ifdef __cplusplus
}
#endif

#endif /* PTW_CLOCK_STREAM_H */
