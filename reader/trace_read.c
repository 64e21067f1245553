/* trace_read.c - walks a Perfetto trace in file order and keeps the
 * per-sequence state of trace_processor's tokenizer (perfetto-wire.md
 * sections 1-4): framing, compressed batches, incremental-state validity,
 * interning, defaults, clocks. TrackDescriptors go to trace_track.c,
 * TrackEvents to trace_event.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include "trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "pb_wire.h"

/* TracePacket fields the raw scan looks at (trace_packet.proto). */
#define F_PACKET	     1u /* Trace.packet */
#define F_CLOCK_SNAPSHOT     6u
#define F_TRACK_EVENT	     11u
#define F_PROCESS_DESCRIPTOR 43u
#define F_THREAD_DESCRIPTOR  44u
#define F_COMPRESSED	     50u
#define F_TRACK_DESCRIPTOR   60u
#define F_ZSTD		     133u

#define SEQ_CLEARED 1u /* TracePacket.SEQ_INCREMENTAL_STATE_CLEARED */
#define SEQ_NEEDS   2u /* TracePacket.SEQ_NEEDS_INCREMENTAL_STATE */

/* A batch may not inflate past this: protects the tools from zip bombs
 * (trace_processor itself has no limit). */
#define MAX_INFLATED ((size_t)1 << 30)
/* ... nor a whole gzip file */
#define MAX_GUNZIP ((size_t)1 << 34)
/* informational diagnostics kept (skipped fields, truncation) */
#define MAX_NOTES 100

/* ---- small helpers ---------------------------------------------------- */

void ptw_i_trace_diag(struct ptw_trace *t, enum ptw_trace_diag_kind kind,
		      const struct pos *at, uint32_t seq, const char *fmt, ...)
{
	if (t->n_diags >= t->max_diags)
		return;
	/* informational notes must not crowd out rule violations */
	if (kind > PTW_TRACE_DIAG_NOTE_ && t->n_notes++ >= MAX_NOTES)
		return;
	void *grown = ptw_grow(t->diags, &t->cap_diags, t->n_diags + 1, 64,
			       sizeof(*t->diags));
	if (!grown) {
		t->nomem = 1;
		return;
	}
	t->diags = grown;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		buf[0] = '\0';
	const char *msg = ptw_arena_strdup(&t->arena, buf);
	if (!msg) {
		t->nomem = 1;
		return;
	}
	struct ptw_trace_diag *d = &t->diags[t->n_diags++];
	d->kind = kind;
	d->offset = at->offset;
	d->inner_offset = at->inner_offset;
	d->batch = at->batch;
	d->seq_id = seq;
	d->msg = msg;
}

void ptw_i_trace_set_fatal(struct ptw_trace *t, const struct pos *at,
			   const char *fmt, ...)
{
	if (t->has_fatal)
		return;
	char buf[400];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		buf[0] = '\0';
	t->has_fatal = 1;
	t->fatal.input = t->name;
	t->fatal.offset = at->offset;
	if (at->batch)
		ptw_error_set(
			&t->fatal, PTW_ERR_FORMAT, 0,
			"%s: byte %llu (batch %u, inflated byte %llu): %s",
			t->name, (unsigned long long)at->offset, at->batch,
			(unsigned long long)at->inner_offset, buf);
	else
		ptw_error_set(&t->fatal, PTW_ERR_FORMAT, 0, "%s: byte %llu: %s",
			      t->name, (unsigned long long)at->offset, buf);
	ptw_i_trace_diag(t, PTW_TRACE_DIAG_FATAL, at, 0, "%s", buf);
}

static struct gen *gen_new(struct ptw_trace *t)
{
	struct gen *g = calloc(1, sizeof(*g));
	if (!g) {
		t->nomem = 1;
		return NULL;
	}
	g->next_alloc = t->gens;
	t->gens = g;
	return g;
}

static void gen_free(struct gen *g)
{
	ptw_u64map_free(&g->names);
	ptw_u64map_free(&g->cats);
	ptw_u64map_free(&g->ann_names);
	ptw_u64map_free(&g->ann_strings);
	ptw_u64map_free(&g->fn_names);
	ptw_u64map_free(&g->frames);
	ptw_u64map_free(&g->callstacks);
	free(g);
}

static struct seq *get_seq(struct ptw_trace *t, uint32_t id, int *is_new)
{
	struct seq *s = ptw_u64map_get(&t->seqs, id);
	*is_new = 0;
	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	void *grown = s ? ptw_grow(t->seq_list, &t->cap_seq_list,
				   t->n_seq_list + 1, 64, sizeof(*t->seq_list))
			: NULL;
	if (grown)
		t->seq_list = grown;
	if (!grown || ptw_u64map_put(&t->seqs, id, s) < 0) {
		free(s);
		t->nomem = 1;
		return NULL;
	}
	t->seq_list[t->n_seq_list++] = s;
	s->id = id;
	t->stats.sequences++;
	*is_new = 1;
	return s;
}

/* ---- interning ---------------------------------------------------------- */

static void intern_table(struct ptw_trace *t, const struct pos *at,
			 uint32_t seq, struct ptw_u64map *m, const char *what,
			 uint64_t iid, int has_iid, const char *s, size_t len)
{
	if (!has_iid) {
		/* incremental_state.cc: an entry without iid is rejected */
		t->stats.interned_data_tokenizer_errors++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_BAD_INTERNED, at, seq,
				 "interned %s entry without iid", what);
		return;
	}
	if (ptw_u64map_get(m, iid))
		return; /* first definition in a generation wins */
	char *copy = ptw_arena_strndup(&t->arena, s ? s : "", s ? len : 0);
	if (!copy || ptw_u64map_add(m, iid, copy) < 0) {
		t->nomem = 1;
		return;
	}
	t->stats.interned_entries++;
}

/* Callstacks: each frame as its function's name, each callstack as its
 * frames' names (outermost first). A frame or function name that is not
 * interned (yet) reads as "" (unnamed). */
static void intern_stacks(struct ptw_trace *t, const struct pos *at,
			  struct seq *s,
			  const Perfetto__Protos__InternedData *d)
{
	struct gen *g = s->gen;
	for (size_t i = 0; i < d->n_function_names; i++) {
		const Perfetto__Protos__InternedString *e = d->function_names[i];
		intern_table(t, at, s->id, &g->fn_names, "function_names",
			     e->iid, e->has_iid, (const char *)e->str.data,
			     e->str.len);
	}
	for (size_t i = 0; i < d->n_frames; i++) {
		const Perfetto__Protos__Frame *f = d->frames[i];
		const char *nm = f->has_function_name_id
			? ptw_u64map_get(&g->fn_names, f->function_name_id)
			: NULL;
		intern_table(t, at, s->id, &g->frames, "frames", f->iid,
			     f->has_iid, nm, nm ? strlen(nm) : 0);
	}
	for (size_t i = 0; i < d->n_callstacks; i++) {
		const Perfetto__Protos__Callstack *c = d->callstacks[i];
		if (!c->has_iid || ptw_u64map_get(&g->callstacks, c->iid))
			continue;
		struct ptw_trace_stack *k = ptw_arena_alloc(
			&t->arena, sizeof(*k) + c->n_frame_ids * sizeof(char *));
		if (!k) {
			t->nomem = 1;
			return;
		}
		k->n = (uint32_t)c->n_frame_ids;
		for (size_t j = 0; j < c->n_frame_ids; j++) {
			const char *nm = ptw_u64map_get(&g->frames,
							c->frame_ids[j]);
			k->frames[j] = nm ? nm : "";
		}
		if (ptw_u64map_add(&g->callstacks, c->iid, k) < 0) {
			t->nomem = 1;
			return;
		}
	}
}

static void apply_interned(struct ptw_trace *t, const struct pos *at,
			   struct seq *s,
			   const Perfetto__Protos__InternedData *d)
{
	struct gen *g = s->gen;
	for (size_t i = 0; i < d->n_event_names; i++) {
		const Perfetto__Protos__EventName *e = d->event_names[i];
		intern_table(t, at, s->id, &g->names, "event_names", e->iid,
			     e->has_iid, e->name,
			     e->name ? strlen(e->name) : 0);
	}
	for (size_t i = 0; i < d->n_event_categories; i++) {
		const Perfetto__Protos__EventCategory *e =
			d->event_categories[i];
		intern_table(t, at, s->id, &g->cats, "event_categories", e->iid,
			     e->has_iid, e->name,
			     e->name ? strlen(e->name) : 0);
	}
	for (size_t i = 0; i < d->n_debug_annotation_names; i++) {
		const Perfetto__Protos__DebugAnnotationName *e =
			d->debug_annotation_names[i];
		intern_table(t, at, s->id, &g->ann_names,
			     "debug_annotation_names", e->iid, e->has_iid,
			     e->name, e->name ? strlen(e->name) : 0);
	}
	for (size_t i = 0; i < d->n_debug_annotation_string_values; i++) {
		const Perfetto__Protos__InternedString *e =
			d->debug_annotation_string_values[i];
		intern_table(t, at, s->id, &g->ann_strings,
			     "debug_annotation_string_values", e->iid,
			     e->has_iid, (const char *)e->str.data, e->str.len);
	}
	intern_stacks(t, at, s, d);
}

/* ---- packets ------------------------------------------------------------ */

struct raw_scan {
	int n_payloads;		 /* fields of the 'data' oneof we know */
	const uint8_t *snapshot; /* last ClockSnapshot field */
	size_t snapshot_len;
	const uint8_t *event; /* last TrackEvent field */
	size_t event_len;
	int has_compressed, has_zstd;
	const uint8_t *compressed;
	size_t compressed_len;
};

/* Returns 0, or -1 if the packet does not parse to its end (where
 * ProtoTraceReader::ParsePacket refuses the file: decoder.bytes_left()).
 * A known message field of another wire type is there but empty, as
 * protozero's as_bytes() gives it (size 0). */
static int scan_packet(const uint8_t *data, size_t len, struct raw_scan *r)
{
	struct ptw_wire_cursor c;
	struct ptw_wire_field f;
	int st;
	memset(r, 0, sizeof(*r));
	ptw_wire_init(&c, data, len);
	while ((st = ptw_wire_next(&c, &f)) == PTW_WIRE_FIELD) {
		if (f.wt != 2) {
			f.data = data;
			f.len = 0;
		}
		switch (f.num) {
		case F_CLOCK_SNAPSHOT:
			r->snapshot = f.data;
			r->snapshot_len = f.len;
			r->n_payloads++;
			break;
		case F_TRACK_EVENT:
			r->event = f.data;
			r->event_len = f.len;
			r->n_payloads++;
			break;
		case F_COMPRESSED:
		case F_ZSTD: /* one batch field, two codecs */
			if (f.num == F_ZSTD)
				r->has_zstd = 1;
			else
				r->has_compressed = 1;
			r->compressed = f.data;
			r->compressed_len = f.len;
			r->n_payloads++;
			break;
		case F_TRACK_DESCRIPTOR:
		case F_PROCESS_DESCRIPTOR:
		case F_THREAD_DESCRIPTOR:
			r->n_payloads++;
			break;
		default:
			break;
		}
	}
	return st == PTW_WIRE_END ? 0 : -1;
}

static int emit(struct ptw_trace *t, struct ptw_trace_packet_info *info,
		const void *pkt)
{
	if (!t->opt.on_packet)
		return 0;
	return t->opt.on_packet(t->opt.ctx, info, pkt);
}

/* A packet being tokenized: what the steps below share. */
struct pkt {
	const struct pos *at;
	const Perfetto__Protos__TracePacket *p;
	const struct raw_scan *raw;
	uint32_t seq_id; /* 0: none */
	struct seq *s;	 /* NULL when seq_id is 0 */
	uint32_t flags;	 /* sequence_flags */
	int cleared;	 /* CLEARED flag or deprecated bool */
	int seq_new;	 /* the sequence's first packet */
	struct ptw_trace_packet_info *info;
};

/* Step results: go on, the packet is finished (emit it), or stop. */
enum { STEP_NEXT = 0, STEP_DONE = 1, STEP_STOP = -1 };

static int drop(struct pkt *k, const char *reason)
{
	k->info->dropped = 1;
	k->info->drop_reason = reason;
	return STEP_DONE;
}

/* Sequence bookkeeping, then CLEARED or previous_packet_dropped. */
static int step_sequence(struct ptw_trace *t, struct pkt *k)
{
	const Perfetto__Protos__TracePacket *p = k->p;
	/* A trace of one machine (machine_id on every packet, or on none) is
	 * kept on one machine by trace_processor; a packet whose machine_id
	 * differs from the first packet's goes to another machine's
	 * context (proto_trace_reader.cc, ParsePacket). */
	uint32_t mid = p->has_machine_id ? p->machine_id : 0;
	if (!t->machine_seen) {
		t->machine_seen = 1;
		t->machine_id = mid;
	} else if (mid != t->machine_id) {
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_MACHINE_ID, k->at, k->seq_id,
				 "machine_id %u differs from the first "
				 "packet's (%u): trace_processor puts this "
				 "packet on another machine",
				 mid, t->machine_id);
	}
	if (k->raw->n_payloads > 1)
		ptw_i_trace_diag(
			t, PTW_TRACE_DIAG_PAYLOAD, k->at, k->seq_id, "%s",
			k->raw->snapshot ? "a packet carrying a ClockSnapshot "
					   "has another payload, which "
					   "trace_processor ignores"
					 : "packet carries more than one "
					   "payload");
	if (k->seq_id == 0) {
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_NO_SEQUENCE, k->at, 0,
				 "packet without trusted_packet_sequence_id");
	} else {
		int is_new;
		k->s = get_seq(t, k->seq_id, &is_new);
		if (!k->s)
			return STEP_STOP;
		k->seq_new = is_new;
		if (is_new && !k->cleared)
			ptw_i_trace_diag(t, PTW_TRACE_DIAG_FIRST_NOT_CLEARED,
					 k->at, k->seq_id,
					 "first packet of sequence %u does not "
					 "set SEQ_INCREMENTAL_STATE_CLEARED",
					 k->seq_id);
	}
	struct seq *s = k->s;
	int loss = p->has_previous_packet_dropped && p->previous_packet_dropped;
	if (loss)
		t->stats.previous_packet_dropped++;
	/* proto_trace_reader.cc: the flag counts for the sequence's packet
	 * loss only on a packet after its first one */
	if (loss && s && !k->seq_new)
		s->loss_count++;
	if (k->cleared) {
		t->stats.checkpoints++;
		if (!s) {
			t->stats.incremental_state_cleared_missing_sequence_id++;
			return STEP_NEXT;
		}
		/* packet_sequence_state_generation.cc: a new generation, no
		 * defaults, counters back to 0; the thread association
		 * survives. Loss reported with a checkpoint leaves the state
		 * valid: that is how ptw_seq_mark_dropped() reports it. */
		struct gen *g = gen_new(t);
		if (!g)
			return STEP_STOP;
		s->gen = g;
		s->valid = 1;
		s->has_defaults = 0;
		s->has_def_track = 0;
		s->def_clock = 0;
		s->n_def_extra = s->n_def_extra_d = 0;
		ptw_u64map_clear(&s->incr);
	} else if (loss) {
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_DATA_LOSS, k->at, k->seq_id,
				 "previous_packet_dropped is set: incremental "
				 "state is invalid until the next CLEARED "
				 "packet");
		if (!s)
			t->stats.previous_packet_dropped_missing_sequence_id++;
		else
			s->valid = 0;
	}
	return STEP_NEXT;
}

/* TracePacketDefaults: accepted whatever the validity, replacing the
 * previous ones entirely (proto_trace_reader.cc). */
static int step_defaults(struct ptw_trace *t, struct pkt *k)
{
	const Perfetto__Protos__TracePacketDefaults *d =
		k->p->trace_packet_defaults;
	struct seq *s = k->s;
	if (!d)
		return STEP_NEXT;
	if (!s) {
		t->stats.trace_packet_defaults_missing_sequence_id++;
		return STEP_NEXT;
	}
	t->stats.defaults++;
	s->has_defaults = 1;
	s->def_clock = d->has_timestamp_clock_id ? d->timestamp_clock_id : 0;
	const Perfetto__Protos__TrackEventDefaults *te =
		d->track_event_defaults;
	s->has_def_track = te && te->has_track_uuid;
	s->def_track = s->has_def_track ? te->track_uuid : 0;
	s->n_def_extra = s->n_def_extra_d = 0;
	if (te && te->n_extra_counter_track_uuids) {
		s->def_extra = (uint64_t *)ptw_i_trace_copy_u64(
			t, te->extra_counter_track_uuids,
			te->n_extra_counter_track_uuids);
		s->n_def_extra =
			s->def_extra ? te->n_extra_counter_track_uuids : 0;
	}
	if (te && te->n_extra_double_counter_track_uuids) {
		s->def_extra_d = (uint64_t *)ptw_i_trace_copy_u64(
			t, te->extra_double_counter_track_uuids,
			te->n_extra_double_counter_track_uuids);
		s->n_def_extra_d =
			s->def_extra_d ? te->n_extra_double_counter_track_uuids
				       : 0;
	}
	return t->nomem ? STEP_STOP : STEP_NEXT;
}

/* InternedData: discarded while the state is invalid, even on a packet
 * without NEEDS (proto_trace_reader.cc). */
static int step_interned(struct ptw_trace *t, struct pkt *k)
{
	if (!k->p->interned_data)
		return STEP_NEXT;
	if (!k->s) {
		t->stats.interned_data_missing_sequence_id++;
	} else if (!k->s->valid || !k->s->gen) {
		t->stats.interned_data_skipped_incremental_state_invalid++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_INTERNED_INVALID, k->at,
				 k->seq_id,
				 "interned_data while the incremental state "
				 "of sequence %u is invalid is discarded",
				 k->seq_id);
	} else {
		apply_interned(t, k->at, k->s, k->p->interned_data);
	}
	return t->nomem ? STEP_STOP : STEP_NEXT;
}

/* A ClockSnapshot is applied and finishes the packet: any other payload
 * in it is ignored (proto_trace_reader.cc). */
static int step_snapshot(struct ptw_trace *t, struct pkt *k)
{
	const struct raw_scan *raw = k->raw;
	if (!raw->snapshot)
		return STEP_NEXT;
	t->stats.clock_snapshots++;
	/* protobuf-c keeps only the last member of the 'data' oneof */
	int own = k->p->data_case !=
		  PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
	Perfetto__Protos__ClockSnapshot *cs =
		own ? perfetto__protos__clock_snapshot__unpack(
			      NULL, raw->snapshot_len, raw->snapshot)
		    : k->p->clock_snapshot;
	if (!cs) {
		/* trace_processor reads the clocks before the damage */
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_CLOCK_SNAPSHOT, k->at,
				 k->seq_id,
				 "ClockSnapshot does not decode: ignored");
		return STEP_DONE;
	}
	uint32_t n =
		cs->n_clocks > UINT32_MAX ? UINT32_MAX : (uint32_t)cs->n_clocks;
	struct ptw_clock_reading *rd = calloc(n ? n : 1, sizeof(*rd));
	int bad_seq = 0, rc = STEP_DONE;
	if (!rd) {
		t->nomem = 1;
		rc = STEP_STOP;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		const Perfetto__Protos__ClockSnapshot__Clock *ck =
			cs->clocks[i];
		rd[i].id = ck->clock_id;
		rd[i].timestamp = ck->timestamp;
		rd[i].unit_ns =
			ck->has_unit_multiplier_ns ? ck->unit_multiplier_ns : 0;
		rd[i].is_incremental =
			ck->has_is_incremental && ck->is_incremental;
		bad_seq |= ptw_clock_is_seq(ck->clock_id) && !k->seq_id;
	}
	if (bad_seq) {
		ptw_i_trace_set_fatal(t, k->at,
				      "ClockSnapshot with a sequence-scoped "
				      "clock (64..127) on a packet without "
				      "sequence id");
		rc = STEP_STOP;
		goto out;
	}
	uint32_t primary = cs->has_primary_trace_clock
				   ? (uint32_t)cs->primary_trace_clock
				   : 0;
	const char *why = NULL;
	int r = ptw_clocks_add_snapshot(t->clocks, k->seq_id, rd, n, primary,
					&why);
	if (r < 0) {
		t->nomem = 1;
		rc = STEP_STOP;
	} else if (r > 0) {
		t->stats.invalid_clock_snapshots++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_CLOCK_SNAPSHOT, k->at,
				 k->seq_id, "ClockSnapshot rejected: %s", why);
	}
out:
	free(rd);
	if (own && cs)
		perfetto__protos__clock_snapshot__free_unpacked(cs, NULL);
	return rc;
}

/* SEQ_NEEDS_INCREMENTAL_STATE while the state is invalid: the packet is
 * dropped; on sequence 0 the whole file is refused. */
static int step_needs(struct ptw_trace *t, struct pkt *k)
{
	if (!(k->flags & SEQ_NEEDS))
		return STEP_NEXT;
	if (!k->seq_id) {
		ptw_i_trace_set_fatal(t, k->at,
				      "SEQ_NEEDS_INCREMENTAL_STATE on a packet "
				      "whose sequence id is 0");
		return STEP_STOP;
	}
	if (k->s->valid)
		return STEP_NEXT;
	t->stats.packet_skipped_seq_needs_incremental_state_invalid++;
	ptw_i_trace_diag(t, PTW_TRACE_DIAG_NEEDS_INVALID, k->at, k->seq_id,
			 "SEQ_NEEDS_INCREMENTAL_STATE packet on sequence %u "
			 "before any SEQ_INCREMENTAL_STATE_CLEARED (or after "
			 "data loss) is dropped",
			 k->seq_id);
	return drop(k, "incremental state invalid");
}

/* Converts the packet timestamp to trace time (proto_trace_reader.cc
 * TimestampTokenizeAndPushToSorter): the packet's clock, else the
 * sequence default, else the trace default, else none (verbatim). */
static int step_timestamp(struct ptw_trace *t, struct pkt *k)
{
	const Perfetto__Protos__TracePacket *p = k->p;
	if (!p->has_timestamp)
		return STEP_NEXT;
	uint32_t clock = p->has_timestamp_clock_id ? p->timestamp_clock_id : 0;
	int explicit_clock = clock != 0;
	if (!clock && k->s && k->s->has_defaults)
		clock = k->s->def_clock;
	if (!clock)
		clock = ptw_clocks_default(t->clocks);
	int64_t ts = (int64_t)p->timestamp;
	if (clock) {
		if (ptw_clock_is_seq(clock) && !k->seq_id) {
			ptw_i_trace_set_fatal(t, k->at,
					      "timestamp on sequence-scoped "
					      "clock %u on a packet without "
					      "sequence id",
					      clock);
			return STEP_STOP;
		}
		if (explicit_clock &&
		    !ptw_clocks_is_incremental(t->clocks, k->seq_id, clock))
			t->stats.absolute_timestamps++;
		int r = ptw_clocks_convert(t->clocks, k->seq_id, clock,
					   p->timestamp, &ts);
		if (r < 0) {
			t->nomem = 1;
			return STEP_STOP;
		}
		if (r == 1) {
			/* TP defers it to the end of the file, where it is
			 * dropped or placed with a scrambled clock value */
			t->stats.clock_sync_failure_unknown_source_clock++;
			ptw_i_trace_diag(
				t, PTW_TRACE_DIAG_TIMESTAMP, k->at, k->seq_id,
				"timestamp on clock %u, which no "
				"earlier ClockSnapshot%s defines; "
				"packet dropped",
				clock,
				ptw_clock_is_seq(clock) ? " on this sequence"
							: "");
			return drop(k, "unknown clock");
		}
		if (r == 2) {
			t->stats.clock_sync_failure_no_path++;
			ptw_i_trace_diag(t, PTW_TRACE_DIAG_TIMESTAMP, k->at,
					 k->seq_id,
					 "no ClockSnapshot path from clock %u "
					 "to the trace clock; packet dropped",
					 clock);
			return drop(k, "no clock path");
		}
	}
	k->info->has_ts = 1;
	k->info->ts = ts;
	return STEP_NEXT;
}

/* The payload: descriptors are reserved, TrackEvents resolved. */
static int step_payload(struct ptw_trace *t, struct pkt *k)
{
	const Perfetto__Protos__TracePacket *p = k->p;
	int has_ts = k->info->has_ts;
	int64_t ts = k->info->ts;
	switch (p->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR:
		t->stats.track_descriptors++;
		if (has_ts && ts < 0) {
			t->stats.trace_sorter_negative_timestamp_dropped++;
			ptw_i_trace_diag(t, PTW_TRACE_DIAG_TIMESTAMP, k->at,
					 k->seq_id,
					 "descriptor packet at negative trace "
					 "time %lld",
					 (long long)ts);
		}
		ptw_i_trace_add_descriptor(t, k->at, k->seq_id, k->s,
					   p->track_descriptor);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT: {
		t->stats.track_events++;
		if (!k->seq_id) {
			t->stats.track_event_missing_sequence_id++;
			return drop(k, "no sequence id");
		}
		if (!has_ts) {
			t->stats.track_event_missing_timestamp++;
			ptw_i_trace_diag(t, PTW_TRACE_DIAG_TIMESTAMP, k->at,
					 k->seq_id,
					 "TrackEvent packet without timestamp "
					 "is dropped");
			return drop(k, "no timestamp");
		}
		if (ts < 0) {
			t->stats.track_event_invalid_timestamp++;
			ptw_i_trace_diag(t, PTW_TRACE_DIAG_TIMESTAMP, k->at,
					 k->seq_id,
					 "TrackEvent at negative trace time "
					 "%lld is dropped",
					 (long long)ts);
			return drop(k, "negative timestamp");
		}
		const char *why = NULL;
		if (ptw_i_trace_add_event(t, k->at, k->seq_id, k->s,
					  p->track_event, k->raw->event,
					  k->raw->event_len, ts, &why))
			k->info->event = &t->events[t->n_events - 1];
		else
			drop(k, why);
		break;
	}
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_COMPRESSED_PACKETS:
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_ZSTD_COMPRESSED_PACKETS:
		/* a batch inside a batch: TP hits a CHECK and aborts */
		ptw_i_trace_set_fatal(t, k->at,
				      "compressed_packets nested inside a "
				      "compressed batch");
		return STEP_STOP;
	default:
		break;
	}
	return t->nomem ? STEP_STOP : STEP_DONE;
}

/* TraceStats (after the clock snapshot, before the NEEDS check, as in
 * ProtoTraceReader::ParsePacket): the buffer figures, and per buffer the
 * loss flags counted so far on the sequences its WriterStats name
 * (ParseTraceStats). */
static int step_trace_stats(struct ptw_trace *t, struct pkt *k)
{
	const Perfetto__Protos__TracePacket *p = k->p;
	if (p->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS ||
	    !p->trace_stats)
		return STEP_NEXT;
	const Perfetto__Protos__TraceStats *ts = p->trace_stats;
	struct ptw_trace_stats *st = &t->stats;
	st->trace_stats_packets++;
	st->n_buffers = ts->n_buffer_stats < PTW_TRACE_MAX_BUFFERS
				? (uint32_t)ts->n_buffer_stats
				: PTW_TRACE_MAX_BUFFERS;
	for (size_t i = 0; i < st->n_buffers; i++) {
		const Perfetto__Protos__TraceStats__BufferStats *b =
			ts->buffer_stats[i];
		struct ptw_trace_buf_stats *o = &st->buf[i];
		o->buffer_size = b->buffer_size;
		o->bytes_written = b->bytes_written;
		o->bytes_overwritten = b->bytes_overwritten;
		o->chunks_written = b->chunks_written;
		o->chunks_overwritten = b->chunks_overwritten;
		o->trace_writer_packet_loss = b->trace_writer_packet_loss;
	}
	uint64_t loss[PTW_TRACE_MAX_BUFFERS] = {0};
	int named[PTW_TRACE_MAX_BUFFERS] = {0};
	for (size_t i = 0; i < ts->n_writer_stats; i++) {
		const Perfetto__Protos__TraceStats__WriterStats *w =
			ts->writer_stats[i];
		struct seq *s = ptw_u64map_get(&t->seqs, (uint32_t)w->sequence_id);
		if (!s || w->buffer >= PTW_TRACE_MAX_BUFFERS)
			continue;
		loss[w->buffer] += s->loss_count;
		named[w->buffer] = 1;
	}
	for (size_t i = 0; i < PTW_TRACE_MAX_BUFFERS; i++) {
		if (!named[i])
			continue;
		st->buf[i].sequence_packet_loss = loss[i];
		st->buf[i].has_sequence_stats = 1;
	}
	return STEP_DONE;
}

/* A TracePacket whose fields all parse (scan_packet) but which protobuf-c
 * does not decode: a field's nested message is malformed, or a known
 * field has another wire type. trace_processor decodes lazily (protozero
 * stops reading a nested message at its first bad field and keeps what
 * came before) and imports the file; here the packet is decoded without
 * the fields that do not decode on their own, each recorded as a
 * diagnostic (PTW_TRACE_DIAG_EVENT). Sets *out to a malloc'd copy of the
 * kept fields, *raw to its scan and *p to its decoding (NULL when even
 * that fails: the packet is then empty). Returns 0, or -1 out of
 * memory. */
static int salvage_packet(struct ptw_trace *t, const struct pos *at,
			  const uint8_t *data, size_t len, uint8_t **out,
			  struct raw_scan *raw,
			  Perfetto__Protos__TracePacket **p)
{
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf) {
		t->nomem = 1;
		return -1;
	}
	size_t n = 0;
	struct ptw_wire_cursor c;
	struct ptw_wire_field f;
	ptw_wire_init(&c, data, len);
	while (ptw_wire_next(&c, &f) == PTW_WIRE_FIELD) {
		size_t flen = (size_t)(c.p - c.start) - f.offset;
		Perfetto__Protos__TracePacket *one =
			perfetto__protos__trace_packet__unpack(
				NULL, flen, data + f.offset);
		if (!one) {
			ptw_i_trace_diag(t, PTW_TRACE_DIAG_EVENT, at, 0,
					 "TracePacket field %u does not decode "
					 "(a nested message is malformed): "
					 "left out (trace_processor reads "
					 "what comes before the damage)",
					 f.num);
			continue;
		}
		perfetto__protos__trace_packet__free_unpacked(one, NULL);
		memcpy(buf + n, data + f.offset, flen);
		n += flen;
	}
	scan_packet(buf, n, raw);
	*p = perfetto__protos__trace_packet__unpack(NULL, n, buf);
	if (!*p) {
		scan_packet(buf, 0, raw);
		*p = perfetto__protos__trace_packet__unpack(NULL, 0, buf);
		if (!*p) {
			free(buf);
			t->nomem = 1;
			return -1;
		}
	}
	*out = buf;
	return 0;
}

/* Tokenizes one (non-batch) TracePacket in the order of
 * ProtoTraceReader::ParsePacket (perfetto-wire.md 3.1). Returns 0, or -1
 * to stop the walk (fatal, out of memory, or the callback asked). */
static int process_packet(struct ptw_trace *t, const struct pos *at,
			  const uint8_t *data, size_t len,
			  const struct raw_scan *raw)
{
	static int (*const steps[])(struct ptw_trace *, struct pkt *) = {
		step_sequence, step_defaults,	 step_interned,
		step_snapshot, step_trace_stats, step_needs,
		step_timestamp, step_payload,
	};
	struct ptw_trace_packet_info info;
	memset(&info, 0, sizeof(info));
	info.offset = at->offset;
	info.inner_offset = at->inner_offset;
	info.batch = at->batch;
	info.size = (uint32_t)len;
	info.packet_index = t->packet_index;

	Perfetto__Protos__TracePacket *p =
		perfetto__protos__trace_packet__unpack(NULL, len, data);
	uint8_t *kept = NULL;
	struct raw_scan kept_raw;
	if (!p) {
		/* walked to its end (scan_packet): trace_processor takes it */
		int r = salvage_packet(t, at, data, len, &kept, &kept_raw, &p);
		if (r < 0)
			return -1;
		raw = &kept_raw;
	}
	struct pkt k;
	memset(&k, 0, sizeof(k));
	k.at = at;
	k.p = p;
	k.raw = raw;
	k.info = &info;
	if (p->optional_trusted_packet_sequence_id_case ==
	    PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID)
		k.seq_id = p->trusted_packet_sequence_id;
	k.flags = p->has_sequence_flags ? p->sequence_flags : 0;
	k.cleared =
		(k.flags & SEQ_CLEARED) || (p->has_incremental_state_cleared &&
					    p->incremental_state_cleared);

	int rc = STEP_NEXT;
	for (size_t i = 0;
	     rc == STEP_NEXT && i < sizeof(steps) / sizeof(*steps); i++)
		rc = steps[i](t, &k);
	if (rc != STEP_STOP && emit(t, &info, p)) {
		rc = STEP_STOP;
		t->stopped = 1;
	}
	perfetto__protos__trace_packet__free_unpacked(p, NULL);
	free(kept);
	t->packet_index++;
	t->stats.packets++;
	return rc == STEP_STOP || t->nomem ? -1 : 0;
}

/* Outcome of zinflate() */
enum zstate {
	Z_COMPLETE,  /* exactly one (or, with 'members', several) streams */
	Z_TRAILING,  /* bytes after the stream */
	Z_TRUNCATED, /* input ended inside the stream (output is partial) */
	Z_CORRUPT,   /* not zlib/gzip, or bad data */
	Z_TOO_BIG,   /* output over 'limit' */
};

/* Inflates zlib or gzip data (inflateInit2(32 + MAX_WBITS), as TP's
 * GzipDecompressor). With 'members' set, concatenated streams are
 * inflated one after the other (whole-file gzip). Returns 0 with a
 * malloc'd buffer (also for partial output) and *state, or -1 when out
 * of memory. */
static int zinflate(const uint8_t *in, size_t in_len, size_t limit, int members,
		    uint8_t **out, size_t *out_len, enum zstate *state,
		    const char **zmsg)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	*zmsg = NULL;
	if (inflateInit2(&zs, 32 + MAX_WBITS) != Z_OK)
		return -1;
	size_t cap = in_len < 1024 ? 4096 : in_len * 4, len = 0;
	uint8_t *buf = malloc(cap);
	if (!buf) {
		inflateEnd(&zs);
		return -1;
	}
	const uint8_t *next = in;
	size_t left = in_len;
	*state = Z_CORRUPT;
	for (;;) {
		if (len == cap) {
			if (cap >= limit) {
				*state = Z_TOO_BIG;
				break;
			}
			/* doubles */
			uint8_t *nb = ptw_grow_by(buf, &cap, cap, 1, 0, 1);
			if (!nb) {
				free(buf);
				inflateEnd(&zs);
				return -1;
			}
			buf = nb;
		}
		/* zlib counts in uInt: feed and drain in slices */
		uInt in_now = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
		size_t room = cap - len;
		zs.next_in = (Bytef *)(uintptr_t)next;
		zs.avail_in = in_now;
		zs.next_out = buf + len;
		zs.avail_out = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
		int zr = inflate(&zs, Z_NO_FLUSH);
		next += in_now - zs.avail_in;
		left -= in_now - zs.avail_in;
		len = (size_t)(zs.next_out - buf);
		if (zr == Z_STREAM_END) {
			if (left == 0) {
				*state = Z_COMPLETE;
				break;
			}
			if (!members) {
				*state = Z_TRAILING;
				break;
			}
			if (inflateReset(&zs) != Z_OK)
				break;
			continue;
		}
		if (zr == Z_OK)
			continue;
		if (zr == Z_BUF_ERROR && zs.avail_out != 0 && left == 0) {
			*state = Z_TRUNCATED;
			break;
		}
		if (zr == Z_BUF_ERROR && zs.avail_out == 0)
			continue; /* grow */
		*zmsg = zs.msg;
		break;
	}
	inflateEnd(&zs);
	*out = buf;
	*out_len = len;
	return 0;
}

/* Inflates one compressed_packets field: exactly one complete zlib or gzip
 * stream, nothing after it (proto_trace_tokenizer.cc). Returns 0 and a
 * malloc'd buffer, or -1 (fatal set) / -2 (out of memory). */
static int inflate_batch(struct ptw_trace *t, const struct pos *at,
			 const uint8_t *in, size_t in_len, uint8_t **out,
			 size_t *out_len)
{
	if (in_len == 0) {
		ptw_i_trace_set_fatal(t, at, "empty compressed_packets field");
		return -1;
	}
	enum zstate st;
	const char *zmsg;
	if (zinflate(in, in_len, MAX_INFLATED, 0, out, out_len, &st, &zmsg))
		return -2;
	if (st == Z_COMPLETE)
		return 0;
	free(*out);
	*out = NULL;
	switch (st) {
	case Z_TRAILING:
		ptw_i_trace_set_fatal(t, at,
				      "compressed_packets holds bytes after "
				      "its zlib stream");
		break;
	case Z_TOO_BIG:
		ptw_i_trace_set_fatal(t, at,
				      "compressed batch inflates to more than "
				      "1 GiB");
		break;
	default:
		ptw_i_trace_set_fatal(t, at,
				      "compressed_packets does not inflate "
				      "(one complete zlib/gzip stream "
				      "expected%s%s)",
				      zmsg ? ": " : "", zmsg ? zmsg : "");
		break;
	}
	return -1;
}

/* Decompresses one zstd_compressed_packets field: exactly one complete
 * zstd frame, nothing after it (util::FrameMode::kSingleFrame). Returns
 * 0 and a malloc'd buffer, or -1 (fatal set) / -2 (out of memory). */
static int unzstd_batch(struct ptw_trace *t, const struct pos *at,
			const uint8_t *in, size_t in_len, uint8_t **out,
			size_t *out_len)
{
	*out = NULL;
	*out_len = 0;
	if (in_len == 0) {
		ptw_i_trace_set_fatal(t, at,
				      "empty zstd_compressed_packets field");
		return -1;
	}
	ZSTD_DCtx *z = ZSTD_createDCtx();
	if (!z)
		return -2;
	size_t cap = in_len * 4 < 65536 ? 65536 : in_len * 4;
	uint8_t *buf = malloc(cap);
	if (!buf) {
		ZSTD_freeDCtx(z);
		return -2;
	}
	ZSTD_inBuffer ib = {in, in_len, 0};
	ZSTD_outBuffer ob = {buf, cap, 0};
	const char *why = NULL;
	for (;;) {
		size_t r = ZSTD_decompressStream(z, &ob, &ib);
		if (ZSTD_isError(r)) {
			why = ZSTD_getErrorName(r);
			break;
		}
		if (r == 0) { /* the frame is complete */
			if (ib.pos != ib.size)
				why = "bytes after the zstd frame";
			break;
		}
		if (ob.pos == ob.size) {
			if (cap >= MAX_INFLATED) {
				why = "the batch decompresses to more than 1 GiB";
				break;
			}
			/* doubles */
			uint8_t *nb = ptw_grow_by(buf, &cap, cap, 1, 0, 1);
			if (!nb) {
				free(buf);
				ZSTD_freeDCtx(z);
				return -2;
			}
			buf = nb;
			ob.dst = buf;
			ob.size = cap;
		} else if (ib.pos == ib.size) {
			why = "the zstd frame is cut short";
			break;
		}
	}
	ZSTD_freeDCtx(z);
	if (why) {
		free(buf);
		ptw_i_trace_set_fatal(t, at,
				      "zstd_compressed_packets does not "
				      "decompress (one complete frame "
				      "expected): %s",
				      why);
		return -1;
	}
	*out = buf;
	*out_len = ob.pos;
	return 0;
}

/* Checks a batch's codec: not inside another batch, one codec per
 * packet and per trace (proto_trace_tokenizer.cc). Returns 2 (zstd), 1
 * (deflate) or -1 having set the fatal error. */
static int batch_codec(struct ptw_trace *t, const struct pos *at,
		       const struct raw_scan *raw)
{
	if (at->batch) {
		ptw_i_trace_set_fatal(
			t, at,
			"compressed_packets nested inside a compressed "
			"batch");
		return -1;
	}
	int codec = raw->has_zstd ? 2 : 1;
	if (raw->has_zstd && raw->has_compressed) {
		ptw_i_trace_set_fatal(t, at,
				      "a packet carries both compressed_packets "
				      "and zstd_compressed_packets");
		return -1;
	}
	if (t->codec && t->codec != codec) {
		ptw_i_trace_set_fatal(t, at,
				      "a trace must not mix compressed_packets "
				      "and zstd_compressed_packets");
		return -1;
	}
	return codec;
}

/* The packets of an inflated batch (n bytes): only 0x0A records are
 * allowed; 1-2 trailing bytes are ignored (proto_trace_tokenizer.h).
 * Returns 0 or -1. */
static int process_batch_packets(struct ptw_trace *t, const struct pos *at,
				 const uint8_t *buf, size_t n)
{
	const uint8_t *p = buf, *end = buf + n;
	while (end - p > 2) {
		struct pos in = *at;
		in.batch = t->batch_no;
		in.inner_offset = (uint64_t)(p - buf);
		if (*p != 0x0a) {
			ptw_i_trace_set_fatal(
				t, &in,
				"compressed batch holds something "
				"other than Trace.packet records");
			return -1;
		}
		const uint8_t *q = p + 1;
		uint64_t sz;
		if (!ptw_wire_varint(&q, end, &sz) ||
		    sz > (uint64_t)(end - q)) {
			ptw_i_trace_set_fatal(t, &in,
					      "invalid packet size inside a "
					      "compressed batch");
			return -1;
		}
		struct raw_scan rs;
		if (scan_packet(q, (size_t)sz, &rs) < 0) {
			ptw_i_trace_set_fatal(
				t, &in,
				"TracePacket inside a compressed batch "
				"does not parse to its end");
			return -1;
		}
		t->stats.batch_packets++;
		if (rs.has_compressed || rs.has_zstd) {
			ptw_i_trace_set_fatal(
				t, &in,
				"compressed_packets nested inside a "
				"compressed batch");
			return -1;
		}
		if (process_packet(t, &in, q, (size_t)sz, &rs) < 0)
			return -1;
		p = q + sz;
	}
	return 0;
}

static int process_batch(struct ptw_trace *t, const struct pos *at,
			 const uint8_t *pkt, size_t pkt_len,
			 const struct raw_scan *raw)
{
	int codec = batch_codec(t, at, raw);
	if (codec < 0)
		return -1;
	t->codec = codec;
	uint8_t *buf = NULL;
	size_t n = 0;
	int r = raw->has_zstd ? unzstd_batch(t, at, raw->compressed,
					     raw->compressed_len, &buf, &n)
			      : inflate_batch(t, at, raw->compressed,
					      raw->compressed_len, &buf, &n);
	if (r == -2) {
		t->nomem = 1;
		return -1;
	}
	if (r < 0)
		return -1;
	t->batch_no++;
	t->stats.batches++;
	t->stats.zstd_batches += raw->has_zstd;
	t->stats.inflated_bytes += n;

	struct ptw_trace_packet_info info;
	memset(&info, 0, sizeof(info));
	info.offset = at->offset;
	info.size = (uint32_t)pkt_len;
	info.packet_index = t->packet_index;
	info.is_batch = 1;
	info.inflated_size = n;
	if (emit(t, &info, NULL)) {
		free(buf);
		t->stopped = 1;
		return -1;
	}
	int rc = process_batch_packets(t, at, buf, n);
	free(buf);
	return rc;
}

/* Reads a record header's varint (its tag or length, 'what') at *p for
 * the record at 'at' (avail bytes from there). Returns 1, 0 if it does
 * not end within the data (a truncated tail), or -1 having set the fatal
 * error: a header is at most 20 bytes, so with 20 bytes available a
 * varint that does not end can only be corrupt. */
static int header_varint(struct ptw_trace *t, const struct pos *at,
			 const uint8_t **p, const uint8_t *end, size_t avail,
			 uint64_t *v, const char *what)
{
	if (ptw_wire_varint(p, end, v))
		return 1;
	if (avail < 20)
		return 0;
	ptw_i_trace_set_fatal(t, at, "cannot parse %s", what);
	return -1;
}

/* The top-level tokenizer loop (proto_trace_tokenizer.h Tokenize). */
static void walk(struct ptw_trace *t, const uint8_t *data, size_t len)
{
	size_t off = 0;
	while (off < len) {
		struct pos at = {off, 0, 0};
		const uint8_t *p = data + off, *end = data + len;
		uint64_t tag;
		int h = header_varint(t, &at, &p, end, len - off, &tag,
				      "a field tag");
		if (h < 0)
			return;
		if (!h)
			goto truncated;
		if (tag != ((F_PACKET << 3) | 2)) {
			uint64_t v;
			switch (tag & 7) {
			case 0:
				if (!ptw_wire_varint(&p, end, &v))
					goto truncated;
				break;
			case 1:
				if ((size_t)(end - p) < 8)
					goto truncated;
				p += 8;
				break;
			case 5:
				if ((size_t)(end - p) < 4)
					goto truncated;
				p += 4;
				break;
			case 2:
				if (!ptw_wire_varint(&p, end, &v))
					goto truncated;
				if (v > (uint64_t)(end - p))
					goto truncated;
				p += v;
				break;
			default:
				ptw_i_trace_set_fatal(
					t, &at,
					"top-level field %llu has wire "
					"type %u (3, 4, 6 and 7 are fatal)",
					(unsigned long long)(tag >> 3),
					(unsigned)(tag & 7));
				return;
			}
			t->stats.skipped_fields++;
			ptw_i_trace_diag(t, PTW_TRACE_DIAG_SKIPPED_FIELD, &at,
					 0,
					 "top-level field %llu (not "
					 "Trace.packet) skipped",
					 (unsigned long long)(tag >> 3));
			off = (size_t)(p - data);
			continue;
		}
		uint64_t sz;
		h = header_varint(t, &at, &p, end, len - off, &sz,
				  "a packet length");
		if (h < 0)
			return;
		if (!h)
			goto truncated;
		if (sz == 0) {
			t->stats.empty_records++;
			off = (size_t)(p - data);
			continue;
		}
		if (sz > (uint64_t)(end - p))
			goto truncated;
		t->stats.records++;
		struct raw_scan rs;
		if (scan_packet(p, (size_t)sz, &rs) < 0) {
			ptw_i_trace_set_fatal(
				t, &at,
				"TracePacket does not parse to its end "
				"(trace_processor refuses the whole "
				"file)");
			return;
		}
		int r = rs.has_compressed || rs.has_zstd
				? process_batch(t, &at, p, (size_t)sz, &rs)
				: process_packet(t, &at, p, (size_t)sz, &rs);
		if (r < 0)
			return;
		off = (size_t)(p - data) + (size_t)sz;
	}
	return;
truncated:
	t->truncated = 1;
	t->trunc_offset = off;
	{
		struct pos at = {off, 0, 0};
		ptw_i_trace_diag(
			t, PTW_TRACE_DIAG_TRUNCATED, &at, 0,
			"the last %zu bytes are a partial record (dropped, as "
			"trace_processor does)",
			len - off);
	}
}

/* ---- public API --------------------------------------------------------- */

/* trace_type.cc: whole-file gzip is a container TP unwraps first. If
 * *d starts with gzip's magic, points *d and *len at the inflated data
 * (*unzipped, to free) and sets *truncated when the stream ends early.
 * Returns 0, or -1 with err set. */
static int unwrap_gzip(const uint8_t **d, size_t *len, const char *name,
		       uint8_t **unzipped, int *truncated,
		       struct ptw_error *err)
{
	*unzipped = NULL;
	*truncated = 0;
	if (*len < 2 || (*d)[0] != 0x1f || (*d)[1] != 0x8b)
		return 0;
	enum zstate st;
	const char *zmsg;
	size_t unzipped_len = 0;
	if (zinflate(*d, *len, MAX_GUNZIP, 1, unzipped, &unzipped_len, &st,
		     &zmsg)) {
		ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		return -1;
	}
	if (st != Z_COMPLETE && st != Z_TRUNCATED) {
		free(*unzipped);
		*unzipped = NULL;
		if (err) {
			err->input = name;
			err->offset = 0;
		}
		ptw_error_set(err, PTW_ERR_FORMAT, 0,
			      "%s: gzip file does not inflate%s%s", name,
			      zmsg ? ": " : "", zmsg ? zmsg : "");
		return -1;
	}
	*truncated = st == Z_TRUNCATED;
	*d = *unzipped;
	*len = unzipped_len;
	return 0;
}

/* A new, empty model of the trace 'name' (len bytes), or NULL (out of
 * memory). */
static struct ptw_trace *new_trace(const char *name, size_t len,
				   const struct ptw_trace_options *opt)
{
	struct ptw_trace *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->clocks = ptw_clocks_new();
	t->name = ptw_arena_strdup(&t->arena, name);
	if (!t->clocks || !t->name) {
		ptw_trace_free(t);
		return NULL;
	}
	if (opt)
		t->opt = *opt;
	t->max_diags = t->opt.max_diags ? t->opt.max_diags
					: PTW_TRACE_DEFAULT_MAX_DIAGS;
	t->stats.bytes = len;
	return t;
}

struct ptw_trace *ptw_trace_load_mem(const void *data, size_t len,
				     const char *name,
				     const struct ptw_trace_options *opt,
				     struct ptw_error *err)
{
	const uint8_t *d = data;
	if (err)
		memset(err, 0, sizeof(*err));
	if (!name)
		name = "<memory>";
	if (!data && len) {
		ptw_error_set(err, PTW_ERR_INVALID, 0, "NULL data");
		return NULL;
	}
	uint8_t *unzipped;
	size_t gzip_in = len;
	int gz_truncated;
	if (unwrap_gzip(&d, &len, name, &unzipped, &gz_truncated, err))
		return NULL;
	if (len == 0 || d[0] != 0x0a) {
		free(unzipped);
		if (err) {
			err->input = name;
			err->offset = 0;
		}
		ptw_error_set(
			err, PTW_ERR_FORMAT, 0,
			"%s: byte 0: not a Perfetto proto trace (%s)", name,
			len == 0 ? "empty input" : "first byte is not 0x0a");
		return NULL;
	}
	struct ptw_trace *t = new_trace(name, len, opt);
	if (!t) {
		free(unzipped);
		ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	if (unzipped) {
		/* offsets below are positions in the inflated data */
		struct pos at = {0, 0, 0};
		t->stats.gzip_bytes = gzip_in;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_SKIPPED_FIELD, &at, 0,
				 "the file is gzip (%zu bytes): byte offsets "
				 "refer to the inflated data%s",
				 gzip_in,
				 gz_truncated ? "; the gzip stream ends early"
					      : "");
	}
	walk(t, d, len);
	int refused;
	const char *other = ptw_i_trace_sniff_other(d, len, &refused);
	if (other) {
		struct pos at = {0, 0, 0};
		if (refused)
			ptw_i_trace_set_fatal(
				t, &at,
				"trace_processor takes the file for %s "
				"(its first bytes), not a proto trace, and "
				"refuses it", other);
		else
			ptw_i_trace_diag(
				t, PTW_TRACE_DIAG_OTHER_FORMAT, &at, 0,
				"trace_processor takes the file for %s (its "
				"first bytes), not a proto trace, and shows "
				"nothing of it", other);
	}
	if (gz_truncated && !t->truncated && !t->has_fatal) {
		t->truncated = 1;
		t->trunc_offset = len;
	}
	free(unzipped);
	if (!t->nomem)
		ptw_i_trace_apply_fixups(t);
	t->stats.events = t->n_events;
	if (t->nomem) {
		ptw_trace_free(t);
		ptw_error_set(err, PTW_ERR_NOMEM, 0,
			      "%s: out of memory while reading", name);
		return NULL;
	}
	if (t->stopped) {
		ptw_error_set(err, PTW_ERR_INVALID, 0,
			      "%s: walk stopped by the caller", name);
		ptw_trace_free(t);
		return NULL;
	}
	return t;
}

struct ptw_trace *ptw_trace_load_file(const char *path,
				      const struct ptw_trace_options *opt,
				      struct ptw_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (!path) {
		ptw_error_set(err, PTW_ERR_INVALID, 0, "NULL path");
		return NULL;
	}
	if (err)
		err->input = path;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ptw_error_set(err, PTW_ERR_IO, errno, "%s: cannot open", path);
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		ptw_error_set(err, PTW_ERR_IO, e, "%s: cannot stat", path);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) &&
	    !S_ISCHR(st.st_mode)) {
		close(fd);
		ptw_error_set(err, PTW_ERR_IO, EISDIR, "%s: not a file", path);
		return NULL;
	}
	size_t cap = S_ISREG(st.st_mode) && st.st_size > 0
			     ? (size_t)st.st_size + 1
			     : 65536;
	size_t len = 0;
	uint8_t *buf = malloc(cap);
	if (!buf) {
		close(fd);
		ptw_error_set(err, PTW_ERR_NOMEM, 0, "%s: out of memory", path);
		return NULL;
	}
	for (;;) {
		if (len == cap) {
			/* doubles */
			uint8_t *nb = ptw_grow_by(buf, &cap, cap, 1, 0, 1);
			if (!nb) {
				free(buf);
				close(fd);
				ptw_error_set(err, PTW_ERR_NOMEM, 0,
					      "%s: out of memory", path);
				return NULL;
			}
			buf = nb;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			close(fd);
			ptw_error_set(err, PTW_ERR_IO, e, "%s: read failed",
				      path);
			return NULL;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	struct ptw_trace *t = ptw_trace_load_mem(buf, len, path, opt, err);
	free(buf);
	if (!t && err)
		err->input = path;
	return t;
}

void ptw_trace_free(struct ptw_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_seq_list; i++) {
		ptw_u64map_free(&t->seq_list[i]->incr);
		free(t->seq_list[i]);
	}
	free(t->seq_list);
	ptw_u64map_free(&t->seqs);
	for (struct gen *g = t->gens; g;) {
		struct gen *n = g->next_alloc;
		gen_free(g);
		g = n;
	}
	ptw_clocks_free(t->clocks);
	ptw_u64map_free(&t->track_idx);
	ptw_u64map_free(&t->async_root);
	free(t->events);
	free(t->tracks);
	free(t->diags);
	free(t->fixups);
	ptw_arena_free(&t->arena);
	free(t);
}

const struct ptw_trace_event *ptw_trace_events(const struct ptw_trace *t,
					       size_t *n)
{
	*n = t->n_events;
	return t->events;
}

const struct ptw_trace_track *ptw_trace_tracks(const struct ptw_trace *t,
					       size_t *n)
{
	*n = t->n_tracks;
	return t->tracks;
}

const struct ptw_trace_track *ptw_trace_find_track(const struct ptw_trace *t,
						   uint64_t uuid)
{
	return ptw_i_trace_find_track(t, uuid);
}

const struct ptw_trace_stats *ptw_trace_get_stats(const struct ptw_trace *t)
{
	return &t->stats;
}

const struct ptw_trace_diag *ptw_trace_diags(const struct ptw_trace *t,
					     size_t *n)
{
	*n = t->n_diags;
	return t->diags;
}

int ptw_trace_truncated(const struct ptw_trace *t, uint64_t *offset)
{
	if (offset)
		*offset = t->truncated ? t->trunc_offset : 0;
	return t->truncated;
}

const struct ptw_error *ptw_trace_fatal(const struct ptw_trace *t)
{
	return t->has_fatal ? &t->fatal : NULL;
}

uint32_t ptw_trace_clock(const struct ptw_trace *t)
{
	return ptw_clocks_trace_clock(t->clocks);
}

const char *ptw_trace_name(const struct ptw_trace *t)
{
	return t->name;
}

const char *ptw_trace_event_type_name(int type)
{
	switch (type) {
	case PTW_TRACE_LEGACY_FLOW:
		return "LEGACY_FLOW";
	case PTW_TRACE_SLICE_BEGIN:
		return "SLICE_BEGIN";
	case PTW_TRACE_SLICE_END:
		return "SLICE_END";
	case PTW_TRACE_INSTANT:
		return "INSTANT";
	case PTW_TRACE_COUNTER:
		return "COUNTER";
	case PTW_TRACE_STATE:
		return "STATE";
	case PTW_TRACE_COMPLETE:
		return "COMPLETE";
	default:
		return "UNSPECIFIED";
	}
}

const char *ptw_trace_track_kind_name(int kind)
{
	switch (kind) {
	case PTW_TRACE_TRACK_PLAIN:
		return "track";
	case PTW_TRACE_TRACK_PROCESS:
		return "process";
	case PTW_TRACE_TRACK_THREAD:
		return "thread";
	case PTW_TRACE_TRACK_COUNTER:
		return "counter";
	case PTW_TRACE_TRACK_STATE:
		return "state";
	default:
		return "unknown";
	}
}
