/* test_clock_stream_util.h - decodes a clock-stream trace with protobuf-c
 * into a flat, file-ordered event list with absolute nanoseconds, resolving
 * interning and the sequence clocks (64 incremental, 65 absolute) as
 * trace_processor does. Static functions only; for the clock-stream tests.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TEST_CLOCK_STREAM_UTIL_H
#define PTW_TEST_CLOCK_STREAM_UTIL_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw_trace.pb-c.h"

#define CT_MAX_SEQ 64
#define CT_MAX_IID 4096
#define CT_MAX_TRACKS 256

struct ct_arg {
	char name[32];
	int kind; /* DebugAnnotation value case */
	uint64_t u;
	int64_t i;
	double d;
	char s[64];
};

struct ct_event {
	uint32_t seq;
	int type;
	uint64_t track;
	uint64_t ts;
	char name[64];
	char cat[64];
	uint32_t n_args;
	struct ct_arg args[16];
	uint32_t n_flows, n_tflows;
	uint64_t flows[8], tflows[8];
	int64_t ival;
	double dval;
	int counter_kind; /* 0 none, 1 int, 2 double */
};

struct ct_track {
	uint64_t uuid;
	char name[64];
	int is_counter;
};

struct ct_seq {
	uint64_t clock64;
	int has_clock;
	uint32_t def_clock;
	uint64_t def_track;
	/* iid -> string tables, CT_MAX_IID entries, allocated on first use */
	char **names, **cats, **anames, **svals;
};

struct ct_trace {
	struct ct_event *ev;
	size_t n_ev, cap_ev;
	struct ct_track tracks[CT_MAX_TRACKS];
	size_t n_tracks;
	struct ct_seq *seqs; /* CT_MAX_SEQ */
	size_t n_snapshots;
};

static inline void ct_copy(char *dst, size_t cap, const char *s)
{
	snprintf(dst, cap, "%s", s ? s : "");
}

static inline void ct_clear_tab(char ***tab, int release)
{
	if (*tab)
		for (int i = 0; i < CT_MAX_IID; i++) {
			free((*tab)[i]);
			(*tab)[i] = NULL;
		}
	if (release) {
		free(*tab);
		*tab = NULL;
	}
}

static inline void ct_clear_seq(struct ct_seq *s, int release)
{
	ct_clear_tab(&s->names, release);
	ct_clear_tab(&s->cats, release);
	ct_clear_tab(&s->anames, release);
	ct_clear_tab(&s->svals, release);
}

static inline void ct_put(char ***tabp, uint64_t iid, const char *s, size_t n)
{
	cr_assert(iid > 0 && iid < CT_MAX_IID, "iid %llu", (unsigned long long)iid);
	if (!*tabp) {
		*tabp = calloc(CT_MAX_IID, sizeof(char *));
		cr_assert_not_null(*tabp);
	}
	char **tab = *tabp;
	if (tab[iid])
		return; /* first definition wins */
	tab[iid] = malloc(n + 1);
	cr_assert_not_null(tab[iid]);
	memcpy(tab[iid], s, n);
	tab[iid][n] = '\0';
}

static inline const char *ct_get(char **tab, uint64_t iid)
{
	cr_assert(tab && iid > 0 && iid < CT_MAX_IID && tab[iid],
		  "unresolved iid %llu", (unsigned long long)iid);
	return tab[iid];
}

static inline void ct_event(struct ct_trace *t, struct ct_seq *s, uint32_t id,
			    uint64_t ts, const Perfetto__Protos__TrackEvent *te)
{
	if (t->n_ev == t->cap_ev) {
		t->cap_ev = t->cap_ev ? 2 * t->cap_ev : 256;
		t->ev = realloc(t->ev, t->cap_ev * sizeof(*t->ev));
		cr_assert_not_null(t->ev);
	}
	struct ct_event *e = &t->ev[t->n_ev++];
	memset(e, 0, sizeof(*e));
	e->seq = id;
	e->type = te->type;
	e->track = te->has_track_uuid ? te->track_uuid : s->def_track;
	cr_assert_neq(e->track, 0, "event without a track");
	e->ts = ts;
	if (te->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID)
		ct_copy(e->name, sizeof(e->name), ct_get(s->names, te->name_iid));
	else if (te->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME)
		ct_copy(e->name, sizeof(e->name), te->name);
	for (size_t i = 0; i < te->n_category_iids; i++)
		ct_copy(e->cat, sizeof(e->cat), ct_get(s->cats, te->category_iids[i]));
	for (size_t i = 0; i < te->n_categories; i++)
		ct_copy(e->cat, sizeof(e->cat), te->categories[i]);
	cr_assert_leq(te->n_debug_annotations, 16);
	for (size_t i = 0; i < te->n_debug_annotations; i++) {
		const Perfetto__Protos__DebugAnnotation *a = te->debug_annotations[i];
		struct ct_arg *o = &e->args[e->n_args++];
		if (a->name_field_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID)
			ct_copy(o->name, sizeof(o->name), ct_get(s->anames, a->name_iid));
		else
			ct_copy(o->name, sizeof(o->name), a->name);
		o->kind = a->value_case;
		switch (a->value_case) {
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE: o->u = a->uint_value; break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE: o->u = a->pointer_value; break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE: o->u = a->bool_value; break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE: o->i = a->int_value; break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE: o->d = a->double_value; break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE:
			ct_copy(o->s, sizeof(o->s), a->string_value);
			break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID:
			o->kind = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
			ct_copy(o->s, sizeof(o->s), ct_get(s->svals, a->string_value_iid));
			break;
		default:
			break;
		}
	}
	cr_assert_leq(te->n_flow_ids, 8);
	cr_assert_leq(te->n_terminating_flow_ids, 8);
	e->n_flows = (uint32_t)te->n_flow_ids;
	if (te->n_flow_ids)
		memcpy(e->flows, te->flow_ids, te->n_flow_ids * 8);
	e->n_tflows = (uint32_t)te->n_terminating_flow_ids;
	if (te->n_terminating_flow_ids)
		memcpy(e->tflows, te->terminating_flow_ids,
		       te->n_terminating_flow_ids * 8);
	if (te->counter_value_field_case ==
	    PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE) {
		e->counter_kind = 1;
		e->ival = te->counter_value;
	} else if (te->counter_value_field_case ==
		   PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE) {
		e->counter_kind = 2;
		e->dval = te->double_counter_value;
	}
}

static inline void ct_packet(struct ct_trace *t, const uint8_t *p, size_t n)
{
	Perfetto__Protos__TracePacket *pk =
		perfetto__protos__trace_packet__unpack(NULL, n, p);
	cr_assert_not_null(pk, "packet does not decode");
	cr_assert_neq(pk->data_case,
		      PERFETTO__PROTOS__TRACE_PACKET__DATA_COMPRESSED_PACKETS,
		      "compression is not used by these tests");
	cr_assert_eq(pk->optional_trusted_packet_sequence_id_case,
		     PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID);
	uint32_t id = pk->trusted_packet_sequence_id;
	cr_assert(id > 0 && id < CT_MAX_SEQ);
	struct ct_seq *s = &t->seqs[id];
	if (pk->has_sequence_flags && (pk->sequence_flags & 1)) {
		ct_clear_seq(s, 0);
		s->def_clock = 0;
		s->def_track = 0;
	}
	if (pk->trace_packet_defaults) {
		const Perfetto__Protos__TracePacketDefaults *d = pk->trace_packet_defaults;
		s->def_clock = d->has_timestamp_clock_id ? d->timestamp_clock_id : 0;
		s->def_track = d->track_event_defaults &&
				       d->track_event_defaults->has_track_uuid
			       ? d->track_event_defaults->track_uuid : 0;
	}
	if (pk->interned_data) {
		const Perfetto__Protos__InternedData *d = pk->interned_data;
		for (size_t i = 0; i < d->n_event_names; i++)
			ct_put(&s->names, d->event_names[i]->iid, d->event_names[i]->name,
			       strlen(d->event_names[i]->name));
		for (size_t i = 0; i < d->n_event_categories; i++)
			ct_put(&s->cats, d->event_categories[i]->iid,
			       d->event_categories[i]->name,
			       strlen(d->event_categories[i]->name));
		for (size_t i = 0; i < d->n_debug_annotation_names; i++)
			ct_put(&s->anames, d->debug_annotation_names[i]->iid,
			       d->debug_annotation_names[i]->name,
			       strlen(d->debug_annotation_names[i]->name));
		for (size_t i = 0; i < d->n_debug_annotation_string_values; i++)
			ct_put(&s->svals, d->debug_annotation_string_values[i]->iid,
			       (const char *)d->debug_annotation_string_values[i]->str.data,
			       d->debug_annotation_string_values[i]->str.len);
	}
	if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT) {
		const Perfetto__Protos__ClockSnapshot *c = pk->clock_snapshot;
		uint64_t boot = 0, c64 = 0, c65 = 0;
		int nb = 0, n64 = 0, n65 = 0;
		for (size_t i = 0; i < c->n_clocks; i++) {
			const Perfetto__Protos__ClockSnapshot__Clock *k = c->clocks[i];
			if (k->clock_id == 6) { nb++; boot = k->timestamp; }
			if (k->clock_id == 64) {
				n64++;
				c64 = k->timestamp;
				cr_assert(k->is_incremental);
			}
			if (k->clock_id == 65) {
				n65++;
				c65 = k->timestamp;
				cr_assert(!k->is_incremental);
			}
		}
		cr_assert(nb == 1 && n64 == 1 && n65 == 1,
			  "snapshot declares BOOTTIME, 64 and 65 once each");
		/* Both sequence clocks map 1:1 to BOOTTIME. */
		cr_assert_eq(c64, boot);
		cr_assert_eq(c65, boot);
		s->clock64 = c64;
		s->has_clock = 1;
		t->n_snapshots++;
		perfetto__protos__trace_packet__free_unpacked(pk, NULL);
		return;
	}
	uint64_t ts = 0;
	if (pk->has_timestamp) {
		uint32_t clk = pk->has_timestamp_clock_id ? pk->timestamp_clock_id
							  : s->def_clock;
		if (clk == 0) {
			ts = pk->timestamp; /* trace default clock (descriptors) */
		} else if (clk == 64) {
			cr_assert(s->has_clock, "clock 64 before its snapshot");
			s->clock64 += pk->timestamp;
			ts = s->clock64;
		} else {
			cr_assert(clk == 65 || clk == 6, "clock %u", clk);
			cr_assert(clk == 6 || s->has_clock, "clock 65 before its snapshot");
			ts = pk->timestamp;
		}
	}
	if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR) {
		const Perfetto__Protos__TrackDescriptor *d = pk->track_descriptor;
		cr_assert_lt(t->n_tracks, CT_MAX_TRACKS);
		struct ct_track *tr = &t->tracks[t->n_tracks++];
		tr->uuid = d->uuid;
		if (d->static_or_dynamic_name_case ==
		    PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME)
			ct_copy(tr->name, sizeof(tr->name), d->name);
		tr->is_counter = d->counter != NULL;
	} else if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT) {
		cr_assert(pk->has_timestamp, "track event without timestamp");
		ct_event(t, s, id, ts, pk->track_event);
	}
	perfetto__protos__trace_packet__free_unpacked(pk, NULL);
}

static inline void ct_decode(struct ct_trace *t, const uint8_t *p, size_t n)
{
	memset(t, 0, sizeof(*t));
	t->seqs = calloc(CT_MAX_SEQ, sizeof(*t->seqs));
	cr_assert_not_null(t->seqs);
	size_t pos = 0;
	while (pos < n) {
		cr_assert_eq(p[pos], 0x0A, "record tag at byte %zu", pos);
		pos++;
		uint64_t len = 0;
		int shift = 0;
		for (;;) {
			cr_assert_lt(pos, n, "truncated length");
			uint8_t b = p[pos++];
			len |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
			shift += 7;
			cr_assert_lt(shift, 64);
		}
		cr_assert_leq(len, n - pos, "truncated record at %zu", pos);
		ct_packet(t, p + pos, (size_t)len);
		pos += (size_t)len;
	}
}

static inline void ct_free(struct ct_trace *t)
{
	if (t->seqs)
		for (int i = 0; i < CT_MAX_SEQ; i++)
			ct_clear_seq(&t->seqs[i], 1);
	free(t->seqs);
	free(t->ev);
	memset(t, 0, sizeof(*t));
}

static inline uint8_t *ct_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "open %s", path);
	size_t cap = 1 << 16, n = 0;
	uint8_t *b = malloc(cap);
	cr_assert_not_null(b);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			b = realloc(b, cap);
			cr_assert_not_null(b);
		}
		size_t r = fread(b + n, 1, cap - n, f);
		if (r == 0)
			break;
		n += r;
	}
	cr_assert(!ferror(f));
	fclose(f);
	*len = n;
	return b;
}

static inline void ct_decode_file(struct ct_trace *t, const char *path)
{
	size_t n;
	uint8_t *b = ct_read_file(path, &n);
	ct_decode(t, b, n);
	free(b);
}

/* A fresh temporary path (the file is created empty). Free it. */
static inline char *ct_tmp_path(void)
{
	char *p = strdup("/tmp/ptw_clock_XXXXXX");
	cr_assert_not_null(p);
	int fd = mkstemp(p);
	cr_assert_geq(fd, 0);
	close(fd);
	return p;
}

static inline const struct ct_track *ct_track(const struct ct_trace *t,
					      uint64_t uuid)
{
	for (size_t i = 0; i < t->n_tracks; i++)
		if (t->tracks[i].uuid == uuid)
			return &t->tracks[i];
	return NULL;
}

static inline const struct ct_arg *ct_find_arg(const struct ct_event *e,
					       const char *name)
{
	for (uint32_t i = 0; i < e->n_args; i++)
		if (strcmp(e->args[i].name, name) == 0)
			return &e->args[i];
	return NULL;
}

#endif /* PTW_TEST_CLOCK_STREAM_UTIL_H */
