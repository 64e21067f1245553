/* trace_check.c - the sequence rules `ptw-dump --check` enforces.
 * SPDX-License-Identifier: Apache-2.0 */
#include "trace_check.h"

#include <stdio.h>
#include <string.h>

#include "tp_model.h"

/* A candidate problem: the earliest in file order is reported. */
struct problem {
	int set;
	uint64_t offset, inner_offset, packet_index;
	uint32_t batch;
	char msg[PTW_ERROR_MSG_MAX];
};

static int earlier(const struct problem *p, uint64_t offset,
		   uint64_t inner_offset)
{
	if (!p->set)
		return 1;
	if (offset != p->offset)
		return offset < p->offset;
	return inner_offset < p->inner_offset;
}

static void consider(struct problem *p, uint64_t offset, uint64_t inner,
		     uint32_t batch, const char *what, const char *detail)
{
	if (!earlier(p, offset, inner))
		return;
	p->set = 1;
	p->offset = offset;
	p->inner_offset = inner;
	p->batch = batch;
	/* long names are cut: the message is for people */
	if (snprintf(p->msg, sizeof(p->msg), "%s%s%s", what, detail ? ": " : "",
		     detail ? detail : "") < 0)
		p->msg[0] = '\0';
}

static void consider_event(struct problem *p, const struct ptw_trace_event *ev,
			   const char *what)
{
	char buf[200];
	if (snprintf(buf, sizeof(buf), "%s at ts %lld on track %llu%s%.100s%s",
		     ptw_trace_event_type_name(ev->type), (long long)ev->ts,
		     (unsigned long long)ev->track_uuid, ev->name ? " (\"" : "",
		     ev->name ? ev->name : "", ev->name ? "\")" : "") < 0)
		buf[0] = '\0';
	consider(p, ev->offset, ev->inner_offset, ev->batch, what, buf);
}

static int diag_counts(enum ptw_trace_diag_kind k, uint32_t flags)
{
	if (k >= PTW_TRACE_DIAG_NOTE_)
		return 0;
	if (k == PTW_TRACE_DIAG_DATA_LOSS &&
	    (flags & PTW_CHECK_ALLOW_DATA_LOSS))
		return 0;
	/* ptw's own invariants: trace_processor imports such packets
	 * without an error stat (the SDK's service packets on sequence 1
	 * never set CLEARED, for one) */
	if ((flags & PTW_CHECK_AS_TP) &&
	    (k == PTW_TRACE_DIAG_NO_SEQUENCE ||
	     k == PTW_TRACE_DIAG_FIRST_NOT_CLEARED ||
	     k == PTW_TRACE_DIAG_PACKED || k == PTW_TRACE_DIAG_PAYLOAD ||
	     k == PTW_TRACE_DIAG_MACHINE_ID))
		return 0;
	return 1;
}

int ptw_trace_check(const struct ptw_trace *t, uint32_t flags,
		    struct ptw_error *err)
{
	struct problem p;
	memset(&p, 0, sizeof(p));
	if (err)
		memset(err, 0, sizeof(*err));

	/* rules found while reading (diagnostics are in file order) */
	size_t nd;
	const struct ptw_trace_diag *d = ptw_trace_diags(t, &nd);
	for (size_t i = 0; i < nd; i++) {
		if (!diag_counts(d[i].kind, flags))
			continue;
		consider(&p, d[i].offset, d[i].inner_offset, d[i].batch,
			 d[i].msg, NULL);
		break;
	}
	const struct ptw_error *fatal = ptw_trace_fatal(t);
	if (fatal && !p.set) {
		/* diagnostics were capped: the fatal error still counts */
		consider(&p, fatal->offset, 0, 0,
			 "trace_processor would refuse the file", fatal->msg);
	}
	uint64_t toff;
	if ((flags & PTW_CHECK_COMPLETE) && ptw_trace_truncated(t, &toff))
		consider(&p, toff, 0, 0, "the file ends inside a record", NULL);

	/* events on a track whose parent chain is broken are dropped */
	size_t ne;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &ne);
	for (size_t i = 0; i < ne; i++) {
		struct ptw_tp_track_owner o =
			ptw_tp_model_owner(t, ev[i].track_uuid);
		if (o.broken) {
			consider_event(&p, &ev[i],
				       "event on a track whose parent is never "
				       "described (or loops)");
			break;
		}
	}

	/* slice nesting, in trace_processor's order */
	struct ptw_error merr;
	struct ptw_tp_model *m = ptw_tp_model_build(t, &merr);
	if (!m) {
		if (err)
			*err = merr;
		return merr.code ? merr.code : PTW_ERR_NOMEM;
	}
	for (size_t i = 0; i < m->n_unmatched_ends; i++) {
		const struct ptw_trace_event *e = m->unmatched_ends[i].event;
		if (earlier(&p, e->offset, e->inner_offset))
			consider_event(&p, e, m->unmatched_ends[i].msg);
	}
	/* open at the end: trace_processor shows dur -1, no error */
	if (!(flags & (PTW_CHECK_ALLOW_OPEN | PTW_CHECK_AS_TP))) {
		for (size_t i = 0; i < m->n_slices; i++) {
			const struct ptw_tp_slice *s = &m->slices[i];
			if (s->dur == -1 && earlier(&p, s->begin->offset,
						    s->begin->inner_offset))
				consider_event(&p, s->begin,
					       "slice never ended (dur -1)");
		}
	}
	ptw_tp_model_free(m);

	if (!p.set)
		return 0;
	if (err) {
		err->input = ptw_trace_name(t);
		err->offset = p.offset;
		if (p.batch)
			ptw_error_set(
				err, PTW_ERR_FORMAT, 0,
				"byte %llu (batch %u, inflated byte %llu): %s",
				(unsigned long long)p.offset, p.batch,
				(unsigned long long)p.inner_offset, p.msg);
		else
			ptw_error_set(err, PTW_ERR_FORMAT, 0, "byte %llu: %s",
				      (unsigned long long)p.offset, p.msg);
	}
	return PTW_ERR_FORMAT;
}
