/* seq_complete.h - a complete slice in one packet, for lib/'s converters
 * (Chrome JSON X events, converters/emit/emit_thread.c). Private to lib/
 * and its converters; not installed.
 * SPDX-License-Identifier: Apache-2.0
 *
 * trace_processor's protobuf import reads a TrackEvent without type whose
 * legacy_event has phase 'X' and duration_us as one complete slice
 * (track_event_event_importer.h ParseThreadCompleteEvent, through
 * SliceTracker::Scoped, as its JSON import reads an X event): one packet
 * instead of a BEGIN and an END, which it parses and pairs faster. The
 * duration is in whole microseconds, so only a duration that is a
 * multiple of 1000 ns is exact; the track must be a thread's (the importer
 * drops an X without a thread). */
#ifndef PTW_SEQ_COMPLETE_H
#define PTW_SEQ_COMPLETE_H

#include <stdint.h>

#include "ptw/writer.h"

/* Writes 'ev' (name, category, annotations, flow ids, a legacy v2 flow:
 * ev->legacy with flow_dir/bind_id only) as a complete slice of dur_us
 * microseconds. No thread time. Returns 0 or the writer's error. */
int ptw_seq_legacy_complete(struct ptw_seq *s, const struct ptw_event *ev,
			    uint64_t dur_us);

#endif /* PTW_SEQ_COMPLETE_H */
