/* trace_check.c - the sequence rules `ptw-dump --check` enforces.
 * SPDX-License-Identifier: Apache-2.0 */
#include "trace_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_model.h"

/* Where problems go: to the caller's function, each with its level. */
struct walk {
	uint32_t flags;
	void (*fn)(void *ctx, const struct ptw_check_problem *p);
	void *ctx;
};

static void report(struct walk *w, enum ptw_check_level level,
		   uint64_t offset, uint64_t inner, uint32_t batch,
		   const char *what, const char *detail)
{
	char msg[PTW_ERROR_MSG_MAX];
	/* long names are cut: the message is for people */
	if (snprintf(msg, sizeof(msg), "%s%s%s", what, detail ? ": " : "",
		     detail ? detail : "") < 0)
		msg[0] = '\0';
	struct ptw_check_problem p = { .level = level, .offset = offset,
				       .inner_offset = inner, .batch = batch,
				       .msg = msg };
	w->fn(w->ctx, &p);
}

static void event_text(const struct ptw_trace_event *ev, char *buf,
		       size_t len)
{
	if (snprintf(buf, len, "%s at ts %lld on track %llu%s%.100s%s",
		     ptw_trace_event_type_name(ev->type), (long long)ev->ts,
		     (unsigned long long)ev->track_uuid, ev->name ? " (\"" : "",
		     ev->name ? ev->name : "", ev->name ? "\")" : "") < 0)
		buf[0] = '\0';
}

static void report_event(struct walk *w, enum ptw_check_level level,
			 const struct ptw_trace_event *ev, const char *what)
{
	char buf[200];
	event_text(ev, buf, sizeof(buf));
	report(w, level, ev->offset, ev->inner_offset, ev->batch, what, buf);
}

static int diag_counts(enum ptw_trace_diag_kind k, uint32_t flags)
{
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

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Slices left open, and the nesting a lost END leaves behind: a slice
 * that never ended with complete slices of its own name and category
 * directly under it (the next instances of a repeated scope, one level
 * deeper than their predecessor). A scope left open by a snapshot, a
 * crash or main() returning has children of other names. */
static int check_open(struct walk *w, const struct ptw_tp_model *m,
		      struct ptw_error *err)
{
	int allow = (w->flags & (PTW_CHECK_ALLOW_OPEN | PTW_CHECK_AS_TP)) != 0;
	uint32_t *repeats = NULL;
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *c = &m->slices[i];
		if (c->parent_id < 0 || c->dur == -1 || c->is_instant)
			continue;
		const struct ptw_tp_slice *s = &m->slices[c->parent_id];
		if (s->dur != -1 || !s->name || !same_str(s->name, c->name) ||
		    !same_str(s->category, c->category))
			continue;
		if (!repeats && !(repeats = calloc(m->n_slices,
						   sizeof(*repeats)))) {
			ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
			return PTW_ERR_NOMEM;
		}
		repeats[c->parent_id]++;
	}
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		if (s->dur != -1)
			continue;
		report_event(w, allow ? PTW_CHECK_NOTE : PTW_CHECK_ERROR,
			     s->begin, "slice never ended (dur -1)");
		if (!repeats || !repeats[i])
			continue;
		char what[512];
		snprintf(what, sizeof(what),
			 "slice nesting looks broken: \"%.100s\" (ts %lld, "
			 "depth %u) never ended, and %u later \"%.100s\" "
			 "slice(s) nest directly under it: its END was "
			 "probably lost, so every later slice of its track "
			 "is shown one level deeper",
			 s->name, (long long)s->ts, s->depth, repeats[i],
			 s->name);
		report(w, PTW_CHECK_WARNING, s->begin->offset,
		       s->begin->inner_offset, s->begin->batch, what, NULL);
	}
	free(repeats);
	return 0;
}

int ptw_trace_check_each(const struct ptw_trace *t, uint32_t flags,
			 void (*fn)(void *ctx,
				    const struct ptw_check_problem *p),
			 void *ctx, struct ptw_error *err)
{
	struct walk w = { .flags = flags, .fn = fn, .ctx = ctx };

	/* rules found while reading (diagnostics are in file order) */
	size_t nd;
	const struct ptw_trace_diag *d = ptw_trace_diags(t, &nd);
	const struct ptw_trace_diag *fatal_diag = NULL;
	for (size_t i = 0; i < nd; i++) {
		if (d[i].kind == PTW_TRACE_DIAG_FATAL) {
			fatal_diag = &d[i];
			continue;
		}
		if (d[i].kind >= PTW_TRACE_DIAG_NOTE_ ||
		    !diag_counts(d[i].kind, flags))
			continue;
		report(&w, PTW_CHECK_ERROR, d[i].offset, d[i].inner_offset,
		       d[i].batch, d[i].msg, NULL);
	}
	const struct ptw_error *fatal = ptw_trace_fatal(t);
	if (fatal_diag)
		report(&w, PTW_CHECK_FATAL, fatal_diag->offset,
		       fatal_diag->inner_offset, fatal_diag->batch,
		       "trace_processor would refuse the file",
		       fatal_diag->msg);
	else if (fatal) /* diagnostics were capped */
		report(&w, PTW_CHECK_FATAL, fatal->offset, 0, 0,
		       "trace_processor would refuse the file", fatal->msg);
	uint64_t toff;
	if ((flags & PTW_CHECK_COMPLETE) && ptw_trace_truncated(t, &toff))
		report(&w, PTW_CHECK_ERROR, toff, 0, 0,
		       "the file ends inside a record", NULL);

	/* events on a track whose parent chain is broken are dropped */
	size_t ne;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &ne);
	for (size_t i = 0; i < ne; i++) {
		struct ptw_tp_track_owner o =
			ptw_tp_model_owner(t, ev[i].track_uuid);
		if (o.broken)
			report_event(&w, PTW_CHECK_ERROR, &ev[i],
				     "event on a track whose parent is never "
				     "described (or loops)");
	}

	/* slice nesting, in trace_processor's order */
	struct ptw_error merr;
	struct ptw_tp_model *m = ptw_tp_model_build(t, &merr);
	if (!m) {
		if (err)
			*err = merr;
		return merr.code ? merr.code : PTW_ERR_NOMEM;
	}
	for (size_t i = 0; i < m->n_unmatched_ends; i++)
		report_event(&w, PTW_CHECK_ERROR, m->unmatched_ends[i].event,
			     m->unmatched_ends[i].msg);
	/* open at the end: trace_processor shows dur -1, no error */
	int rc = check_open(&w, m, err);
	ptw_tp_model_free(m);
	return rc;
}

/* ptw_trace_check: the earliest problem of level ERROR or above. */
struct first {
	int set;
	uint64_t offset, inner_offset;
	uint32_t batch;
	char msg[PTW_ERROR_MSG_MAX];
};

static void keep_first(void *ctx, const struct ptw_check_problem *p)
{
	struct first *f = ctx;
	if (p->level < PTW_CHECK_ERROR)
		return;
	if (f->set && (p->offset > f->offset ||
		       (p->offset == f->offset &&
			p->inner_offset >= f->inner_offset)))
		return;
	f->set = 1;
	f->offset = p->offset;
	f->inner_offset = p->inner_offset;
	f->batch = p->batch;
	snprintf(f->msg, sizeof(f->msg), "%s", p->msg);
}

int ptw_trace_check(const struct ptw_trace *t, uint32_t flags,
		    struct ptw_error *err)
{
	struct first p;
	memset(&p, 0, sizeof(p));
	if (err)
		memset(err, 0, sizeof(*err));
	int rc = ptw_trace_check_each(t, flags, keep_first, &p, err);
	if (rc)
		return rc;
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
