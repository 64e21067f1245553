/* trace_same.h - are two decoded traces the same to trace_processor,
 * whatever the order in which their sequences' packets interleave?
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TRACE_SAME_H
#define PTW_TRACE_SAME_H

#include <stddef.h>
#include <stdint.h>

#include "trace_read.h"

/* Where two traces first differ (see ptw_trace_same). */
struct ptw_trace_diff {
	uint32_t seq_id;      /* the sequence (0 for a track or a count) */
	uint64_t packet;      /* a's packet index of the event that differs
			       * (a track: its first descriptor's offset) */
	const char *what;     /* what differs: "an event", "a track",
			       * "the number of events" or "... of tracks" */
};

/* 1 if a and b describe the same tracks (uuid, kind, name, pid, tid,
 * parent) and, sequence by sequence, the same events in the same order
 * (time, kind, track, names, values, flows, arguments): what
 * trace_processor imports from them is then the same, as it orders events
 * by timestamp, not by file position. Else 0 with *d (may be NULL) set.
 * -1 out of memory. */
int ptw_trace_same(const struct ptw_trace *a, const struct ptw_trace *b,
		   struct ptw_trace_diff *d);

/* 1 if the raw (uncompressed) traces a[0, na) and b[0, nb) hold, sequence
 * by sequence (trusted_packet_sequence_id), the same packets byte for
 * byte in the same order, however the sequences interleave: the same
 * writes on each sequence. Else 0 with *d (may be NULL) set (seq_id, and
 * in 'packet' the packet's index within its sequence). -1 out of memory
 * or if either is not a sequence of whole packet records (top-level
 * fields other than Trace.packet are skipped). */
int ptw_trace_same_sequence_bytes(const void *a, size_t na, const void *b,
				  size_t nb, struct ptw_trace_diff *d);

#endif /* PTW_TRACE_SAME_H */
