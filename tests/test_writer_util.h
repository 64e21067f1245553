/* test_writer_util.h - decodes a ptw trace with protobuf-c into a flat
 * event list (resolving interning, defaults and clocks the way
 * trace_processor does) for the writer tests. Static functions only.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TEST_WRITER_UTIL_H
#define PTW_TEST_WRITER_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "ptw_trace.pb-c.h"

#define TW_MAX_SEQ 64
#define TW_MAX_TRACKS 64

struct tw_arg {
	char name[64];
	int type; /* enum ptw_arg_type */
	int b;
	int64_t i;
	uint64_t u;
	double d;
	char s[400];
	int s_inline; /* written as string_value, not string_value_iid */
};

struct tw_event {
	uint32_t seq;
	int type; /* TrackEvent.Type */
	uint64_t track;
	uint64_t ts;
	int has_name, has_cat;
	char name[160];
	char cat[160];
	size_t n_args;
	struct tw_arg *args; /* n_args entries, owned by the trace */
	size_t n_flows, n_tflows;
	uint64_t flows[8], tflows[8];
	int has_value, is_double;
	int64_t ival;
	double dval;
	size_t packet;     /* packets decoded when this event was */
	int raw_has_track; /* track_uuid present in the packet */
	int abs_clock;     /* timestamp_clock_id written (backwards ts) */
};

struct tw_track {
	uint64_t uuid;
	int is_process, is_thread, is_counter;
	char name[160];
	int32_t pid;
	int64_t tid;
	uint64_t parent;
	int has_rank;
	int32_t rank;
	char unit[64];
	/* From the uuid's first descriptor in file order (trace_processor
	 * ignores the ordering of later ones): child_ordering (0: absent)
	 * and the packet count when it was decoded. */
	int first_child_ordering;
	size_t first_packet;
};

struct tw_strtab {
	char **s;
	size_t n, cap;
};

struct tw_seq {
	int seen, valid;
	uint64_t base;
	uint32_t clock; /* defaults timestamp_clock_id */
	uint64_t default_track;
	int has_snapshot;
	uint64_t snapshot; /* BOOTTIME of its newest ClockSnapshot */
	struct tw_strtab names, cats, anames, svals;
};

struct tw_trace {
	struct tw_event *ev;
	size_t n_ev, cap_ev;
	struct tw_track tracks[TW_MAX_TRACKS];
	size_t n_tracks;
	size_t n_packets;     /* inner packets decoded */
	size_t n_cleared;
	size_t n_dropped_marks;
	size_t n_compressed;
	size_t n_zstd;        /* of which zstd_compressed_packets */
	size_t max_compressed_record; /* bytes incl. tag+len */
	size_t n_trace_stats; /* TraceStats packets */
	uint64_t writer_packet_loss; /* last TraceStats, buffer 0 */
	size_t n_snapshots;
	size_t consumed;      /* bytes of complete records */
	struct tw_seq seqs[TW_MAX_SEQ];
	char err[300];
};

static inline int tw_fail(struct tw_trace *t, const char *fmt, ...)
{
	if (t->err[0])
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->err, sizeof(t->err), fmt, ap);
	va_end(ap);
	return -1;
}

static inline void tw_strtab_clear(struct tw_strtab *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->s[i]);
	s->n = 0;
}

static inline void tw_strtab_free(struct tw_strtab *s)
{
	tw_strtab_clear(s);
	free(s->s);
	s->s = NULL;
	s->cap = 0;
}

static inline int tw_strtab_put(struct tw_trace *t, struct tw_strtab *s,
				uint64_t iid, const char *str, size_t len)
{
	if (iid == 0)
		return tw_fail(t, "interned entry with iid 0");
	/* ptw assigns 1, 2, 3... in order: anything else is a bug. */
	if (iid != s->n + 1)
		return tw_fail(t, "iid %llu out of order (table has %zu)",
			       (unsigned long long)iid, s->n);
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->s = realloc(s->s, s->cap * sizeof(*s->s));
	}
	char *c = malloc(len + 1);
	if (len)
		memcpy(c, str, len);
	c[len] = 0;
	s->s[s->n++] = c;
	return 0;
}

static inline const char *tw_strtab_get(const struct tw_strtab *s, uint64_t iid)
{
	return iid >= 1 && iid <= s->n ? s->s[iid - 1] : NULL;
}

static inline void tw_trace_free(struct tw_trace *t)
{
	for (size_t i = 0; i < t->n_ev; i++)
		free(t->ev[i].args);
	free(t->ev);
	for (int i = 0; i < TW_MAX_SEQ; i++) {
		tw_strtab_free(&t->seqs[i].names);
		tw_strtab_free(&t->seqs[i].cats);
		tw_strtab_free(&t->seqs[i].anames);
		tw_strtab_free(&t->seqs[i].svals);
	}
	memset(t, 0, sizeof(*t));
}

static inline const struct tw_track *tw_find_track(const struct tw_trace *t,
						    uint64_t uuid)
{
	for (size_t i = 0; i < t->n_tracks; i++)
		if (t->tracks[i].uuid == uuid)
			return &t->tracks[i];
	return NULL;
}

static inline void tw_copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

static inline int tw_packet(struct tw_trace *t, const uint8_t *p, size_t n);

/* Reads 0x0A records from [p, p+n). Returns -1 on error. With 'inner'
 * (a compressed batch) the records must all be complete. */
static inline int tw_records(struct tw_trace *t, const uint8_t *p, size_t n,
			     int inner)
{
	size_t off = 0;
	while (off < n) {
		size_t start = off;
		if (p[off] != 0x0A)
			return tw_fail(t, "byte %zu: tag 0x%02x, not a packet record",
				       off, p[off]);
		off++;
		uint64_t len = 0;
		int shift = 0, done = 0;
		while (off < n && shift < 64) {
			uint8_t c = p[off++];
			len |= (uint64_t)(c & 0x7f) << shift;
			shift += 7;
			if (!(c & 0x80)) {
				done = 1;
				break;
			}
		}
		if (!done || len > n - off) {
			if (inner)
				return tw_fail(t, "truncated record inside a batch");
			return 0; /* truncated tail: dropped, like trace_processor */
		}
		if (tw_packet(t, p + off, (size_t)len) != 0)
			return -1;
		off += (size_t)len;
		if (!inner) {
			t->consumed = off;
			(void)start;
		}
	}
	return 0;
}

static inline int tw_inflate(struct tw_trace *t, const uint8_t *p, size_t n)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 32 + MAX_WBITS) != Z_OK)
		return tw_fail(t, "inflateInit2");
	size_t cap = n * 8 + 1024, len = 0;
	uint8_t *out = malloc(cap);
	zs.next_in = (Bytef *)(uintptr_t)p;
	zs.avail_in = (uInt)n;
	int zr;
	for (;;) {
		if (len == cap) {
			cap *= 2;
			out = realloc(out, cap);
		}
		zs.next_out = out + len;
		zs.avail_out = (uInt)(cap - len);
		zr = inflate(&zs, Z_NO_FLUSH);
		len = cap - zs.avail_out;
		if (zr == Z_STREAM_END)
			break;
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			inflateEnd(&zs);
			free(out);
			return tw_fail(t, "inflate failed (%d)", zr);
		}
		if (zr == Z_BUF_ERROR && zs.avail_in == 0) {
			inflateEnd(&zs);
			free(out);
			return tw_fail(t, "compressed stream not finished");
		}
	}
	int trailing = zs.avail_in != 0;
	inflateEnd(&zs);
	if (trailing) {
		free(out);
		return tw_fail(t, "bytes after the compressed stream");
	}
	int rc = tw_records(t, out, len, 1);
	free(out);
	return rc;
}

/* One complete zstd frame, nothing after it (as trace_processor). */
static inline int tw_unzstd(struct tw_trace *t, const uint8_t *p, size_t n)
{
	unsigned long long sz = ZSTD_getFrameContentSize(p, n);
	if (sz == ZSTD_CONTENTSIZE_ERROR || sz == ZSTD_CONTENTSIZE_UNKNOWN ||
	    sz > (1u << 30))
		return tw_fail(t, "zstd frame without a usable content size");
	size_t fsz = ZSTD_findFrameCompressedSize(p, n);
	if (ZSTD_isError(fsz) || fsz != n)
		return tw_fail(t, "not exactly one zstd frame");
	uint8_t *out = malloc(sz ? (size_t)sz : 1);
	if (!out)
		return tw_fail(t, "out of memory");
	size_t got = ZSTD_decompress(out, (size_t)sz, p, n);
	if (ZSTD_isError(got) || got != sz) {
		free(out);
		return tw_fail(t, "zstd decompression failed");
	}
	int rc = tw_records(t, out, got, 1);
	free(out);
	return rc;
}

static inline struct tw_event *tw_new_event(struct tw_trace *t)
{
	if (t->n_ev == t->cap_ev) {
		t->cap_ev = t->cap_ev ? t->cap_ev * 2 : 256;
		t->ev = realloc(t->ev, t->cap_ev * sizeof(*t->ev));
	}
	struct tw_event *e = &t->ev[t->n_ev++];
	memset(e, 0, sizeof(*e));
	e->packet = t->n_packets;
	return e;
}

static inline int tw_interned(struct tw_trace *t, struct tw_seq *s,
			      const Perfetto__Protos__InternedData *id)
{
	for (size_t i = 0; i < id->n_event_categories; i++) {
		const char *n = id->event_categories[i]->name;
		if (tw_strtab_put(t, &s->cats, id->event_categories[i]->iid, n ? n : "",
				  n ? strlen(n) : 0))
			return -1;
	}
	for (size_t i = 0; i < id->n_event_names; i++) {
		const char *n = id->event_names[i]->name;
		if (tw_strtab_put(t, &s->names, id->event_names[i]->iid, n ? n : "",
				  n ? strlen(n) : 0))
			return -1;
	}
	for (size_t i = 0; i < id->n_debug_annotation_names; i++) {
		const char *n = id->debug_annotation_names[i]->name;
		if (tw_strtab_put(t, &s->anames, id->debug_annotation_names[i]->iid,
				  n ? n : "", n ? strlen(n) : 0))
			return -1;
	}
	for (size_t i = 0; i < id->n_debug_annotation_string_values; i++) {
		const Perfetto__Protos__InternedString *is =
			id->debug_annotation_string_values[i];
		if (tw_strtab_put(t, &s->svals, is->iid, (const char *)is->str.data,
				  is->str.len))
			return -1;
	}
	return 0;
}

static inline int tw_descriptor(struct tw_trace *t,
				const Perfetto__Protos__TrackDescriptor *d)
{
	if (!d->has_uuid || d->uuid == 0)
		return tw_fail(t, "descriptor without uuid");
	struct tw_track *tr = (struct tw_track *)tw_find_track(t, d->uuid);
	int first_co = d->has_child_ordering ? (int)d->child_ordering : 0;
	size_t first_packet = t->n_packets;
	if (!tr) {
		if (t->n_tracks == TW_MAX_TRACKS)
			return tw_fail(t, "too many tracks");
		tr = &t->tracks[t->n_tracks++];
	} else {
		first_co = tr->first_child_ordering;
		first_packet = tr->first_packet;
	}
	memset(tr, 0, sizeof(*tr));
	tr->first_child_ordering = first_co;
	tr->first_packet = first_packet;
	tr->uuid = d->uuid;
	tr->parent = d->has_parent_uuid ? d->parent_uuid : 0;
	if (d->static_or_dynamic_name_case ==
	    PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME)
		tw_copy(tr->name, sizeof(tr->name), d->name);
	tr->has_rank = d->has_sibling_order_rank;
	tr->rank = d->sibling_order_rank;
	if (d->process) {
		tr->is_process = 1;
		tr->pid = d->process->pid;
		if (d->process->process_name)
			tw_copy(tr->name, sizeof(tr->name), d->process->process_name);
	}
	if (d->thread) {
		tr->is_thread = 1;
		tr->pid = d->thread->pid;
		tr->tid = d->thread->tid;
		if (d->thread->thread_name)
			tw_copy(tr->name, sizeof(tr->name), d->thread->thread_name);
	}
	if (d->counter) {
		tr->is_counter = 1;
		tw_copy(tr->unit, sizeof(tr->unit), d->counter->unit_name);
	}
	return 0;
}

static inline int tw_track_event(struct tw_trace *t, struct tw_seq *s,
				 uint32_t seq_id, uint64_t ts, int abs_clock,
				 const Perfetto__Protos__TrackEvent *te)
{
	struct tw_event *e = tw_new_event(t);
	e->seq = seq_id;
	e->ts = ts;
	e->abs_clock = abs_clock;
	e->type = te->has_type ? (int)te->type : 0;
	e->raw_has_track = te->has_track_uuid;
	e->track = te->has_track_uuid ? te->track_uuid : s->default_track;
	if (te->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID) {
		const char *n = tw_strtab_get(&s->names, te->name_iid);
		if (!n)
			return tw_fail(t, "unknown name iid %llu",
				       (unsigned long long)te->name_iid);
		e->has_name = 1;
		tw_copy(e->name, sizeof(e->name), n);
	}
	for (size_t i = 0; i < te->n_category_iids; i++) {
		const char *c = tw_strtab_get(&s->cats, te->category_iids[i]);
		if (!c)
			return tw_fail(t, "unknown category iid %llu",
				       (unsigned long long)te->category_iids[i]);
		e->has_cat = 1;
		tw_copy(e->cat, sizeof(e->cat), c);
	}
	if (te->n_debug_annotations > PTW_MAX_ANNOTATIONS)
		return tw_fail(t, "too many annotations");
	if (te->n_debug_annotations)
		e->args = calloc(te->n_debug_annotations, sizeof(*e->args));
	for (size_t i = 0; i < te->n_debug_annotations; i++) {
		const Perfetto__Protos__DebugAnnotation *da = te->debug_annotations[i];
		struct tw_arg *a = &e->args[e->n_args++];
		if (da->name_field_case !=
		    PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID)
			return tw_fail(t, "annotation name not interned");
		const char *n = tw_strtab_get(&s->anames, da->name_iid);
		if (!n)
			return tw_fail(t, "unknown annotation name iid");
		tw_copy(a->name, sizeof(a->name), n);
		switch (da->value_case) {
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE:
			a->type = 1; a->b = da->bool_value; break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE:
			a->type = 2; a->i = da->int_value; break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE:
			a->type = 3; a->u = da->uint_value; break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE:
			a->type = 4; a->d = da->double_value; break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE:
			a->type = 5; a->s_inline = 1;
			tw_copy(a->s, sizeof(a->s), da->string_value); break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID: {
			const char *v = tw_strtab_get(&s->svals, da->string_value_iid);
			if (!v)
				return tw_fail(t, "unknown string value iid");
			a->type = 5; tw_copy(a->s, sizeof(a->s), v); break;
		}
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE:
			a->type = 6; a->u = da->pointer_value; break;
		default:
			return tw_fail(t, "annotation without value");
		}
	}
	if (te->n_flow_ids > 8 || te->n_terminating_flow_ids > 8)
		return tw_fail(t, "too many flows");
	e->n_flows = te->n_flow_ids;
	if (e->n_flows)
		memcpy(e->flows, te->flow_ids, e->n_flows * sizeof(uint64_t));
	e->n_tflows = te->n_terminating_flow_ids;
	if (e->n_tflows)
		memcpy(e->tflows, te->terminating_flow_ids,
		       e->n_tflows * sizeof(uint64_t));
	if (te->counter_value_field_case ==
	    PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE) {
		e->has_value = 1;
		e->ival = te->counter_value;
	} else if (te->counter_value_field_case ==
		   PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE) {
		e->has_value = 1;
		e->is_double = 1;
		e->dval = te->double_counter_value;
	}
	if (e->type == 4) {
		const struct tw_track *tr = tw_find_track(t, e->track);
		if (!tr || !tr->is_counter)
			return tw_fail(t, "counter event before its counter descriptor");
		if (!e->has_value)
			return tw_fail(t, "counter without value");
		if (e->has_cat || e->has_name)
			return tw_fail(t, "counter with name or category");
	}
	if (e->type == 2 && (e->has_cat || e->has_name))
		return tw_fail(t, "SLICE_END with name or category");
	return 0;
}

static inline int tw_packet(struct tw_trace *t, const uint8_t *p, size_t n)
{
	Perfetto__Protos__TracePacket *pk =
		perfetto__protos__trace_packet__unpack(NULL, n, p);
	if (!pk)
		return tw_fail(t, "packet %zu does not decode", t->n_packets);
	int rc = 0;
	t->n_packets++;
	if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_COMPRESSED_PACKETS ||
	    pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_ZSTD_COMPRESSED_PACKETS) {
		t->n_compressed++;
		if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_ZSTD_COMPRESSED_PACKETS) {
			t->n_zstd++;
			rc = tw_unzstd(t, pk->zstd_compressed_packets.data,
				       pk->zstd_compressed_packets.len);
		} else {
			rc = tw_inflate(t, pk->compressed_packets.data,
					pk->compressed_packets.len);
		}
		size_t rec = n + 1 + (n < 128 ? 1 : n < 16384 ? 2 : n < (1u << 21) ? 3 : 4);
		if (rec > t->max_compressed_record)
			t->max_compressed_record = rec;
		perfetto__protos__trace_packet__free_unpacked(pk, NULL);
		return rc;
	}
	if (pk->optional_trusted_packet_sequence_id_case !=
		    PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID ||
	    pk->trusted_packet_sequence_id < 2 ||
	    pk->trusted_packet_sequence_id >= TW_MAX_SEQ) {
		rc = tw_fail(t, "packet without a usable sequence id");
		goto out;
	}
	uint32_t id = pk->trusted_packet_sequence_id;
	struct tw_seq *s = &t->seqs[id];
	uint32_t flags = pk->has_sequence_flags ? pk->sequence_flags : 0;
	if (!s->seen && !(flags & 1)) {
		rc = tw_fail(t, "first packet of sequence %u is not CLEARED", id);
		goto out;
	}
	s->seen = 1;
	if (flags & 1) {
		t->n_cleared++;
		s->valid = 1;
		s->clock = 0;
		s->default_track = 0;
		tw_strtab_clear(&s->names);
		tw_strtab_clear(&s->cats);
		tw_strtab_clear(&s->anames);
		tw_strtab_clear(&s->svals);
	}
	if (pk->has_previous_packet_dropped && pk->previous_packet_dropped) {
		t->n_dropped_marks++;
		if (!(flags & 1)) {
			rc = tw_fail(t, "previous_packet_dropped without CLEARED");
			goto out;
		}
	}
	if (pk->trace_packet_defaults) {
		const Perfetto__Protos__TracePacketDefaults *d = pk->trace_packet_defaults;
		s->clock = d->has_timestamp_clock_id ? d->timestamp_clock_id : 0;
		s->default_track = d->track_event_defaults &&
					   d->track_event_defaults->has_track_uuid
				   ? d->track_event_defaults->track_uuid : 0;
	}
	if (pk->interned_data && (rc = tw_interned(t, s, pk->interned_data)) != 0)
		goto out;
	if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT) {
		const Perfetto__Protos__ClockSnapshot *cs = pk->clock_snapshot;
		uint64_t boot = 0, c64 = 0;
		int has_boot = 0, has64 = 0;
		for (size_t i = 0; i < cs->n_clocks; i++) {
			if (cs->clocks[i]->clock_id == 6) {
				has_boot = 1;
				boot = cs->clocks[i]->timestamp;
			}
			if (cs->clocks[i]->clock_id == 64) {
				has64 = 1;
				c64 = cs->clocks[i]->timestamp;
				if (!cs->clocks[i]->is_incremental) {
					rc = tw_fail(t, "clock 64 not incremental");
					goto out;
				}
			}
		}
		if (!has_boot || !has64) {
			rc = tw_fail(t, "snapshot without BOOTTIME and clock 64");
			goto out;
		}
		/* trace_processor keeps each clock's readings in one series
		 * per set of clocks: a sequence's own (64 and 65 are
		 * sequence-scoped) must not go back, across sequences they may */
		if (s->has_snapshot && boot < s->snapshot) {
			rc = tw_fail(t, "snapshot BOOTTIME %llu below the "
				     "sequence's earlier %llu",
				     (unsigned long long)boot,
				     (unsigned long long)s->snapshot);
			goto out;
		}
		t->n_snapshots++;
		s->has_snapshot = 1;
		s->snapshot = boot;
		s->base = c64;
		goto out; /* the packet is consumed by the snapshot */
	}
	if ((flags & 2) && !s->valid) {
		rc = tw_fail(t, "NEEDS packet on invalid sequence %u", id);
		goto out;
	}
	uint64_t ts = 0;
	int abs_clock = 0;
	if (pk->has_timestamp) {
		uint32_t clk = pk->has_timestamp_clock_id ? pk->timestamp_clock_id : s->clock;
		if (clk == 64) {
			s->base += pk->timestamp;
			ts = s->base;
		} else {
			abs_clock = pk->has_timestamp_clock_id;
			ts = pk->timestamp;
		}
	}
	if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS) {
		t->n_trace_stats++;
		const Perfetto__Protos__TraceStats *st = pk->trace_stats;
		t->writer_packet_loss =
			st->n_buffer_stats ? st->buffer_stats[0]->trace_writer_packet_loss : 0;
	} else if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR) {
		rc = tw_descriptor(t, pk->track_descriptor);
	} else if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT) {
		if (!pk->has_timestamp) {
			rc = tw_fail(t, "track event without timestamp");
			goto out;
		}
		rc = tw_track_event(t, s, id, ts, abs_clock, pk->track_event);
	}
out:
	perfetto__protos__trace_packet__free_unpacked(pk, NULL);
	return rc;
}

/* Decodes 'n' bytes (a truncated tail is dropped silently). 0 or -1. */
static inline int tw_decode(struct tw_trace *t, const uint8_t *p, size_t n)
{
	memset(t, 0, sizeof(*t));
	if (n && p[0] != 0x0A)
		return tw_fail(t, "file does not start with a packet record");
	return tw_records(t, p, n, 0);
}

static inline uint8_t *tw_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	uint8_t *b = malloc(cap);
	size_t k;
	while ((k = fread(b + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			cap *= 2;
			b = realloc(b, cap);
		}
	}
	fclose(f);
	*len = n;
	return b;
}

static inline int tw_decode_file(struct tw_trace *t, const char *path)
{
	size_t n;
	uint8_t *b = tw_read_file(path, &n);
	if (!b) {
		memset(t, 0, sizeof(*t));
		return tw_fail(t, "cannot read %s", path);
	}
	int rc = tw_decode(t, b, n);
	free(b);
	return rc;
}

/* A fresh temporary path (the file exists, empty). Caller frees. */
static inline char *tw_tmp_path(void)
{
	char *p = strdup("/tmp/ptw_test_writer_XXXXXX");
	int fd = mkstemp(p);
	if (fd >= 0)
		close(fd);
	return p;
}

/* Compares two decoded events; returns NULL or what differs. */
static inline const char *tw_event_diff(const struct tw_event *a,
					const struct tw_event *b)
{
	if (a->seq != b->seq) return "seq";
	if (a->type != b->type) return "type";
	if (a->track != b->track) return "track";
	if (a->ts != b->ts) return "ts";
	if (a->has_name != b->has_name || strcmp(a->name, b->name)) return "name";
	if (a->has_cat != b->has_cat || strcmp(a->cat, b->cat)) return "category";
	if (a->n_args != b->n_args) return "n_args";
	for (size_t i = 0; i < a->n_args; i++) {
		const struct tw_arg *x = &a->args[i], *y = &b->args[i];
		if (strcmp(x->name, y->name) || x->type != y->type || x->b != y->b ||
		    x->i != y->i || x->u != y->u || memcmp(&x->d, &y->d, sizeof(double)) ||
		    strcmp(x->s, y->s))
			return "arg";
	}
	if (a->n_flows != b->n_flows ||
	    memcmp(a->flows, b->flows, a->n_flows * sizeof(uint64_t)))
		return "flows";
	if (a->n_tflows != b->n_tflows ||
	    memcmp(a->tflows, b->tflows, a->n_tflows * sizeof(uint64_t)))
		return "terminating flows";
	if (a->has_value != b->has_value || a->is_double != b->is_double ||
	    a->ival != b->ival || memcmp(&a->dval, &b->dval, sizeof(double)))
		return "counter value";
	return NULL;
}

#endif /* PTW_TEST_WRITER_UTIL_H */
