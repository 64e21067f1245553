/* trace_internal.h - state shared by the reader's files (internal).
 * SPDX-License-Identifier: Apache-2.0
 *
 * trace_read.c walks the file and keeps per-sequence state, trace_track.c
 * reserves TrackDescriptors, trace_event.c resolves TrackEvents. Not API:
 * tools and tests use trace_read.h. */
#ifndef PTW_TRACE_INTERNAL_H
#define PTW_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "lib/util/grow.h"
#include "ptw_trace.pb-c.h"
#include "trace_clock.h"
#include "trace_read.h"
#include "u64map.h"

/* One interning generation of a sequence: iid -> arena string. */
struct gen {
	struct ptw_u64map names, cats, ann_names, ann_strings;
	/* callstacks: function_names (iid -> string), frames (iid -> its
	 * function name, "" if none), callstacks (iid -> struct
	 * ptw_trace_stack *) */
	struct ptw_u64map fn_names, frames, callstacks;
	struct gen *next_alloc;
};

struct seq {
	uint32_t id;
	int valid;              /* incremental state valid */
	struct gen *gen;        /* NULL before the first CLEARED */
	int has_defaults;
	uint32_t def_clock;
	int has_def_track;
	uint64_t def_track;
	uint64_t *def_extra;    /* arena; extra_counter_track_uuids */
	size_t n_def_extra;
	uint64_t *def_extra_d;  /* extra_double_counter_track_uuids */
	size_t n_def_extra_d;
	int has_thread_track;   /* thread descriptor seen on this sequence */
	uint64_t thread_track;
	struct ptw_u64map incr;/* counter uuid -> double* running sum */
	/* packets with previous_packet_dropped after the sequence's first
	 * packet (TP's SequenceScopedState.previous_packet_dropped_count) */
	uint64_t loss_count;
};

/* An event whose iids did not all resolve at tokenization: resolved again
 * against its generation at the end, as TP's parse-time lookups do. */
struct fixup {
	size_t event;
	struct gen *gen;
	const uint8_t *bytes;   /* TrackEvent copy (arena) */
	size_t len;
};

struct pos {
	uint64_t offset, inner_offset;
	uint32_t batch;
};

struct ptw_trace {
	const char *name;
	struct ptw_arena arena;
	struct ptw_trace_event *events;
	size_t n_events, cap_events;
	struct ptw_trace_track *tracks;
	size_t n_tracks, cap_tracks;
	struct ptw_u64map track_idx; /* uuid -> (index + 1) */
	/* legacy async ids (local or not, process, id) -> the name of their
	 * first event (track_compressor.cc async_tracks_to_root_string_id_) */
	struct ptw_u64map async_root;
	struct ptw_trace_diag *diags;
	size_t n_diags, cap_diags;
	uint32_t max_diags;
	struct ptw_trace_stats stats;
	struct ptw_error fatal;
	int has_fatal;
	int truncated;
	uint64_t trunc_offset;
	struct ptw_clocks *clocks;
	struct ptw_u64map seqs;  /* id -> struct seq * */
	struct seq **seq_list;   /* for freeing */
	size_t n_seq_list, cap_seq_list;
	struct gen *gens;
	struct fixup *fixups;
	size_t n_fixups, cap_fixups;
	struct ptw_trace_options opt;
	uint64_t packet_index;
	uint32_t batch_no;
	int codec;              /* 0: no batch yet, 1: deflate, 2: zstd */
	int nomem;
	int stopped;            /* the on_packet callback asked to stop */
	size_t n_notes;         /* informational diagnostics recorded */
	uint32_t machine_id;    /* the first packet's machine_id (0: none) */
	int machine_seen;       /* a packet was looked at for it */
};


/* Records a diagnostic (formatted once, kept in the arena). */
void ptw_i_trace_diag(struct ptw_trace *t, enum ptw_trace_diag_kind kind,
		      const struct pos *at, uint32_t seq, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 5, 6)))
#endif
	;

/* Records the error that stops the walk (first one wins). */
/* trace_sniff.c: the format trace_processor takes data[0, len) (which
 * starts with 0x0A) for when it is not a proto trace ("a pprof profile"),
 * or NULL; *refused is set to 1 if it then refuses the file, 0 if it
 * loads it (showing nothing of it). */
const char *ptw_i_trace_sniff_other(const uint8_t *data, size_t len,
				    int *refused);

void ptw_i_trace_set_fatal(struct ptw_trace *t, const struct pos *at,
			   const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* trace_track.c */
/* The track trace_processor puts a legacy async event (legacy_event phase
 * b/e/n with an id) on; 0 when it drops the event (*why set). */
uint64_t ptw_i_trace_legacy_async_track(struct ptw_trace *t,
					const struct ptw_trace_event *ev,
					int local, uint64_t id,
					const char **why);
struct ptw_trace_track *ptw_i_trace_find_track(const struct ptw_trace *t,
					       uint64_t uuid);
void ptw_i_trace_add_descriptor(struct ptw_trace *t, const struct pos *at,
				uint32_t seq_id, struct seq *s,
				const Perfetto__Protos__TrackDescriptor *d);

/* trace_event.c */
const uint64_t *ptw_i_trace_copy_u64(struct ptw_trace *t, const uint64_t *v,
				     size_t n);
int ptw_i_trace_add_event(struct ptw_trace *t, const struct pos *at,
			  uint32_t seq_id, struct seq *s,
			  const Perfetto__Protos__TrackEvent *te,
			  const uint8_t *raw, size_t raw_len, int64_t ts,
			  const char **why);
void ptw_i_trace_apply_fixups(struct ptw_trace *t);

#endif /* PTW_TRACE_INTERNAL_H */
