/* trace_same.c - event-by-event comparison of two decoded traces,
 * sequence by sequence (trace_same.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include "trace_same.h"

#include <stdlib.h>
#include <string.h>

#include "pb_wire.h"

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static int by_seq(const void *x, const void *y)
{
	const struct ptw_trace_event *a = *(const struct ptw_trace_event *const *)x;
	const struct ptw_trace_event *b = *(const struct ptw_trace_event *const *)y;
	if (a->seq_id != b->seq_id)
		return a->seq_id < b->seq_id ? -1 : 1;
	return a->packet_index < b->packet_index ? -1
	       : a->packet_index > b->packet_index;
}

/* The events of t, by sequence and, within one, in file order; NULL out
 * of memory. */
static const struct ptw_trace_event **by_sequence(const struct ptw_trace *t,
						  size_t *n)
{
	const struct ptw_trace_event *ev = ptw_trace_events(t, n);
	const struct ptw_trace_event **v = malloc((*n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < *n; i++)
		v[i] = &ev[i];
	qsort(v, *n, sizeof(*v), by_seq);
	return v;
}

static int same_arg(const struct ptw_trace_arg *x, const struct ptw_trace_arg *y)
{
	if (!str_eq(x->name, y->name) || x->type != y->type)
		return 0;
	switch (x->type) {
	case PTW_TRACE_ARG_STRING:
	case PTW_TRACE_ARG_JSON:
		return str_eq(x->v.s, y->v.s);
	case PTW_TRACE_ARG_BOOL:
		return x->v.b == y->v.b;
	case PTW_TRACE_ARG_INT:
		return x->v.i == y->v.i;
	case PTW_TRACE_ARG_DOUBLE:
		return memcmp(&x->v.d, &y->v.d, sizeof(double)) == 0;
	case PTW_TRACE_ARG_DICT:
	case PTW_TRACE_ARG_ARRAY:
		if (x->v.nested.n != y->v.nested.n)
			return 0;
		for (uint32_t i = 0; i < x->v.nested.n; i++)
			if (!same_arg(&x->v.nested.items[i],
				      &y->v.nested.items[i]))
				return 0;
		return 1;
	case PTW_TRACE_ARG_NESTED:
	case PTW_TRACE_ARG_BAD:
		return 1; /* no value */
	default: /* UINT, POINTER */
		return x->v.u == y->v.u;
	}
}

static int same_event(const struct ptw_trace_event *a,
		      const struct ptw_trace_event *b)
{
	if (a->seq_id != b->seq_id || a->ts != b->ts || a->type != b->type ||
	    a->track_uuid != b->track_uuid || !str_eq(a->name, b->name) ||
	    !str_eq(a->category, b->category) ||
	    a->counter_kind != b->counter_kind ||
	    a->counter_int != b->counter_int ||
	    memcmp(&a->counter_double, &b->counter_double,
		   sizeof(double)) != 0 ||
	    a->n_flow_ids != b->n_flow_ids ||
	    a->n_terminating_flow_ids != b->n_terminating_flow_ids ||
	    a->n_args != b->n_args || a->legacy_phase != b->legacy_phase ||
	    a->dur != b->dur ||
	    a->has_legacy_id != b->has_legacy_id ||
	    a->legacy_id != b->legacy_id ||
	    a->bind_to_enclosing != b->bind_to_enclosing ||
	    a->has_bind_id != b->has_bind_id || a->bind_id != b->bind_id ||
	    a->flow_direction != b->flow_direction)
		return 0;
	for (uint32_t i = 0; i < a->n_flow_ids; i++)
		if (a->flow_ids[i] != b->flow_ids[i])
			return 0;
	for (uint32_t i = 0; i < a->n_terminating_flow_ids; i++)
		if (a->terminating_flow_ids[i] != b->terminating_flow_ids[i])
			return 0;
	for (uint32_t i = 0; i < a->n_args; i++)
		if (!same_arg(&a->args[i], &b->args[i]))
			return 0;
	return 1;
}

static int differ(struct ptw_trace_diff *d, const char *what, uint32_t seq,
		  uint64_t packet)
{
	if (d) {
		d->what = what;
		d->seq_id = seq;
		d->packet = packet;
	}
	return 0;
}

int ptw_trace_same(const struct ptw_trace *a, const struct ptw_trace *b,
		   struct ptw_trace_diff *d)
{
	size_t ka, kb;
	const struct ptw_trace_track *ta = ptw_trace_tracks(a, &ka);
	(void)ptw_trace_tracks(b, &kb);
	if (ka != kb)
		return differ(d, "the number of tracks", 0, 0);
	for (size_t i = 0; i < ka; i++) {
		const struct ptw_trace_track *y = ptw_trace_find_track(b, ta[i].uuid);
		if (!y || y->kind != ta[i].kind || !str_eq(y->name, ta[i].name) ||
		    y->pid != ta[i].pid || y->tid != ta[i].tid ||
		    y->parent_uuid != ta[i].parent_uuid)
			return differ(d, "a track", 0, ta[i].offset);
	}
	size_t na, nb;
	const struct ptw_trace_event **ea = by_sequence(a, &na);
	const struct ptw_trace_event **eb = by_sequence(b, &nb);
	int r = ea && eb ? 1 : -1;
	if (r == 1 && na != nb)
		r = differ(d, "the number of events", 0, 0);
	for (size_t i = 0; r == 1 && i < na; i++)
		if (!same_event(ea[i], eb[i]))
			r = differ(d, "an event", ea[i]->seq_id,
				   ea[i]->packet_index);
	free(ea);
	free(eb);
	return r;
}

/* A packet record of a raw trace: its sequence, its place, its bytes. */
struct raw_pkt {
	uint64_t seq;
	size_t index;        /* in the file */
	const uint8_t *data;
	size_t len;
};

static int by_seq_index(const void *x, const void *y)
{
	const struct raw_pkt *a = x, *b = y;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* The packet records of raw trace [data, data + n), by sequence and,
 * within one, in file order (*k of them); NULL if it is not a sequence of
 * whole packet records (other top-level fields are skipped, as
 * trace_processor skips them: a converter's output has one,
 * ptw_i_writer_converted), or out of memory. */
static struct raw_pkt *raw_packets(const void *data, size_t n, size_t *k)
{
	struct ptw_wire_cursor c, pc;
	struct ptw_wire_field f, pf;
	struct raw_pkt *v = NULL;
	size_t cap = 0;
	int st;
	*k = 0;
	ptw_wire_init(&c, data, n);
	while ((st = ptw_wire_next(&c, &f)) == PTW_WIRE_FIELD) {
		if (f.num != 1)
			continue;
		if (f.wt != 2)
			break;
		if (*k == cap) {
			cap = cap ? 2 * cap : 256;
			struct raw_pkt *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return NULL;
			}
			v = nv;
		}
		struct raw_pkt *r = &v[*k];
		r->seq = 0;
		r->index = *k;
		r->data = f.data;
		r->len = f.len;
		ptw_wire_init(&pc, f.data, f.len);
		while (ptw_wire_next(&pc, &pf) == PTW_WIRE_FIELD)
			if (pf.num == 10 && pf.wt == 0)
				r->seq = pf.varint;
		(*k)++;
	}
	if (st != PTW_WIRE_END) {
		free(v);
		return NULL;
	}
	if (*k)
		qsort(v, *k, sizeof(*v), by_seq_index);
	return v ? v : malloc(1);
}

int ptw_trace_same_sequence_bytes(const void *a, size_t na, const void *b,
				  size_t nb, struct ptw_trace_diff *d)
{
	size_t ka, kb;
	struct raw_pkt *va = raw_packets(a, na, &ka);
	struct raw_pkt *vb = raw_packets(b, nb, &kb);
	int r = va && vb ? 1 : -1;
	if (r == 1 && ka != kb)
		r = differ(d, "the number of packets", 0, 0);
	for (size_t i = 0, in_seq = 0; r == 1 && i < ka; i++) {
		in_seq = i && va[i].seq == va[i - 1].seq ? in_seq + 1 : 0;
		if (va[i].seq != vb[i].seq || va[i].len != vb[i].len ||
		    memcmp(va[i].data, vb[i].data, va[i].len) != 0)
			r = differ(d, "a packet", (uint32_t)va[i].seq, in_seq);
	}
	free(va);
	free(vb);
	return r;
}
