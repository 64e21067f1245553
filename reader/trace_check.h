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

/* How serious one problem is. */
enum ptw_check_level {
	PTW_CHECK_NOTE = 0,    /* worth knowing; passes the check with these
				* flags (a slice left open with
				* PTW_CHECK_ALLOW_OPEN or PTW_CHECK_AS_TP) */
	PTW_CHECK_WARNING = 1, /* suspicious; passes the check with these
				* flags (slice nesting that looks broken:
				* an END probably lost) */
	PTW_CHECK_ERROR = 2,   /* fails the check with these flags, but
				* trace_processor loads the file (it counts
				* a stat, drops a packet or shows it so) */
	PTW_CHECK_FATAL = 3,   /* trace_processor refuses the file
				* (ptw_trace_fatal) */
};

struct ptw_check_problem {
	enum ptw_check_level level;
	uint64_t offset, inner_offset; /* as for events */
	uint32_t batch;
	const char *msg; /* complete sentence, no offset prefix; valid
			  * during the callback */
};

/* Calls fn for every problem ptw_trace_check(t, flags) looks at (rules
 * found while reading in file order, then slice nesting), with its level
 * under 'flags'; the first (in file order) of level PTW_CHECK_ERROR or
 * above is what ptw_trace_check() reports. Returns 0, or PTW_ERR_NOMEM
 * (*err set) if the slice model could not be built. */
int ptw_trace_check_each(const struct ptw_trace *t, uint32_t flags,
			 void (*fn)(void *ctx,
				    const struct ptw_check_problem *p),
			 void *ctx, struct ptw_error *err);

/* Returns 0 if the trace passes, else PTW_ERR_FORMAT with *err (if not
 * NULL) set: err->offset = byte offset of the first problem, err->input =
 * the trace name, err->msg = "byte N: <what>" (with the batch position
 * for packets inside compressed batches). PTW_ERR_NOMEM if the slice
 * check could not allocate. */
int ptw_trace_check(const struct ptw_trace *t, uint32_t flags,
		    struct ptw_error *err);

#endif /* PTW_TRACE_CHECK_H */
