/* trace_check.h - the sequence rules `ptw-dump --check` enforces.
 * SPDX-License-Identifier: Apache-2.0
 *
 * ptw_trace_check() validates a loaded trace and reports the first problem
 * in file order (byte offset + message), stricter than trace_processor
 * where ptw's own output must be exact:
 *
 *   1. the file is a complete proto trace (nothing TP treats as fatal);
 *   2. every packet has a non-zero trusted_packet_sequence_id;
 *   3. the first packet of each sequence sets SEQ_INCREMENTAL_STATE_CLEARED;
 *      no NEEDS packet and no interned data while the state is invalid;
 *   4. every iid is defined before its use, in its generation;
 *   5. timestamps reconstruct: every TrackEvent has a timestamp, its clock
 *      was snapshotted before use on its sequence, the result is >= 0, and
 *      no ClockSnapshot breaks a rule (incl. a non-monotonic trace clock);
 *   6. counters only on counter tracks described earlier in the file;
 *      descriptors valid and not conflicting; parents described;
 *   7. slice nesting balanced per track, in trace_processor's (ts, file
 *      order) order: every END closes an open BEGIN with the same name and
 *      category (or none), and no BEGIN is left open at the end (unless
 *      PTW_CHECK_ALLOW_OPEN);
 *   8. no packed repeated fields, one machine_id (or none) on every
 *      packet, one payload per packet,
 *      nothing next to a ClockSnapshot; previous_packet_dropped only
 *      together with CLEARED (how ptw reports ring-buffer loss) unless
 *      PTW_CHECK_ALLOW_DATA_LOSS.
 *
 * A truncated final record is accepted unless PTW_CHECK_COMPLETE is set.
 * PTW_CHECK_AS_TP keeps only what trace_processor itself reports (see
 * below). */
#ifndef PTW_TRACE_CHECK_H
#define PTW_TRACE_CHECK_H

#include <stdint.h>

#include "ptw/error.h"
#include "trace_read.h"

#define PTW_CHECK_ALLOW_OPEN 1u     /* slices left open at the end are OK */
#define PTW_CHECK_COMPLETE 2u       /* a truncated final record fails */
#define PTW_CHECK_ALLOW_DATA_LOSS 4u/* previous_packet_dropped without
				     * CLEARED is OK (the NEEDS packets it
				     * invalidates still fail) */
#define PTW_CHECK_AS_TP 8u          /* judge as trace_processor does: pass
				     * what it imports without errors (a
				     * trace ptw did not write, e.g. the
				     * Perfetto SDK's), so leave out ptw's
				     * own invariants: rule 2, the CLEARED
				     * first packet of rule 3, slices left
				     * open (rule 7: TP shows them with dur
				     * -1, no error) and rule 8 but for data
				     * loss. `ptw-dump --check` without
				     * --strict */

/* Returns 0 if the trace passes, else PTW_ERR_FORMAT with *err (if not
 * NULL) set: err->offset = byte offset of the first problem, err->input =
 * the trace name, err->msg = "byte N: <what>" (with the batch position
 * for packets inside compressed batches). PTW_ERR_NOMEM if the slice
 * check could not allocate. */
int ptw_trace_check(const struct ptw_trace *t, uint32_t flags,
		    struct ptw_error *err);

#endif /* PTW_TRACE_CHECK_H */
