/* test_writer.c - end-to-end tests of the writer: every event kind,
 * tracks, sequences, clocks, interning; decoded with protobuf-c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "ptw/writer.h"
#include "test_writer_util.h"

/* Records what a test emits, in the decoded form, for comparison. */
struct rec {
	struct tw_event ev[512];
	struct tw_arg args[512][16];
	size_t n;
};

static struct tw_event *rec_add(struct rec *r, uint32_t seq, int type,
				uint64_t track, uint64_t ts)
{
	cr_assert_lt(r->n, 512);
	struct tw_event *e = &r->ev[r->n++];
	memset(e, 0, sizeof(*e));
	e->args = r->args[r->n - 1];
	e->seq = seq;
	e->type = type;
	e->track = track;
	e->ts = ts;
	return e;
}

static void rec_strings(struct tw_event *e, const struct ptw_event *ev)
{
	if (ev->name) {
		e->has_name = 1;
		tw_copy(e->name, sizeof(e->name), ev->name);
	}
	if (ev->category) {
		e->has_cat = 1;
		tw_copy(e->cat, sizeof(e->cat), ev->category);
	}
}

static void rec_extras(struct tw_event *e, const struct ptw_event *ev)
{
	for (uint32_t i = 0; i < ev->n_args; i++) {
		struct tw_arg *a = &e->args[e->n_args++];
		const struct ptw_arg *s = &ev->args[i];
		tw_copy(a->name, sizeof(a->name), s->name);
		switch (s->type) {
		case PTW_ARG_TYPE_BOOL: a->type = 1; a->b = s->v.b != 0; break;
		case PTW_ARG_TYPE_INT: a->type = 2; a->i = s->v.i; break;
		case PTW_ARG_TYPE_UINT: a->type = 3; a->u = s->v.u; break;
		case PTW_ARG_TYPE_DOUBLE: a->type = 4; a->d = s->v.d; break;
		case PTW_ARG_TYPE_STRING: a->type = 5; tw_copy(a->s, sizeof(a->s), s->v.s); break;
		case PTW_ARG_TYPE_POINTER: a->type = 6; a->u = s->v.u; break;
		case PTW_ARG_TYPE_DICT: case PTW_ARG_TYPE_ARRAY: break; /* not used here */
		}
	}
	e->n_flows = ev->n_flow_ids;
	if (ev->n_flow_ids)
		memcpy(e->flows, ev->flow_ids, ev->n_flow_ids * sizeof(uint64_t));
	e->n_tflows = ev->n_terminating_flow_ids;
	if (ev->n_terminating_flow_ids)
		memcpy(e->tflows, ev->terminating_flow_ids,
		       ev->n_terminating_flow_ids * sizeof(uint64_t));
}

static uint64_t track_of(struct ptw_seq *s, uint64_t track, uint64_t dflt)
{
	(void)s;
	return track ? track : dflt;
}

static int do_begin(struct rec *r, struct ptw_seq *s, uint32_t seq,
		    uint64_t dflt, const struct ptw_event *ev)
{
	int rc = ptw_seq_slice_begin(s, ev);
	if (!rc) {
		struct tw_event *e = rec_add(r, seq, 1, track_of(s, ev->track, dflt), ev->ts);
		rec_strings(e, ev);
		rec_extras(e, ev);
	}
	return rc;
}

static int do_end(struct rec *r, struct ptw_seq *s, uint32_t seq,
		  uint64_t dflt, const struct ptw_event *ev)
{
	int rc = ptw_seq_slice_end(s, ev);
	if (!rc) {
		struct tw_event *e = rec_add(r, seq, 2, track_of(s, ev->track, dflt), ev->ts);
		rec_extras(e, ev);
	}
	return rc;
}

static int do_instant(struct rec *r, struct ptw_seq *s, uint32_t seq,
		      uint64_t dflt, const struct ptw_event *ev)
{
	int rc = ptw_seq_instant(s, ev);
	if (!rc) {
		struct tw_event *e = rec_add(r, seq, 3, track_of(s, ev->track, dflt), ev->ts);
		rec_strings(e, ev);
		rec_extras(e, ev);
	}
	return rc;
}

static int do_complete(struct rec *r, struct ptw_seq *s, uint32_t seq,
		       uint64_t dflt, const struct ptw_event *ev, uint64_t dur)
{
	int rc = ptw_seq_slice_complete(s, ev, dur);
	if (!rc) {
		struct tw_event *e = rec_add(r, seq, 1, track_of(s, ev->track, dflt), ev->ts);
		rec_strings(e, ev);
		rec_extras(e, ev);
		rec_add(r, seq, 2, track_of(s, ev->track, dflt), ev->ts + dur);
	}
	return rc;
}

static int do_counter(struct rec *r, struct ptw_seq *s, uint32_t seq,
		      uint64_t track, uint64_t ts, int64_t v)
{
	int rc = ptw_seq_counter_int(s, track, ts, v);
	if (!rc) {
		struct tw_event *e = rec_add(r, seq, 4, track, ts);
		e->has_value = 1;
		e->ival = v;
	}
	return rc;
}

static int do_counter_d(struct rec *r, struct ptw_seq *s, uint32_t seq,
			uint64_t track, uint64_t ts, double v)
{
	int rc = ptw_seq_counter_double(s, track, ts, v);
	if (!rc) {
		struct tw_event *e = rec_add(r, seq, 4, track, ts);
		e->has_value = 1;
		e->is_double = 1;
		e->dval = v;
	}
	return rc;
}

static void expect_events(const struct tw_trace *t, const struct rec *r)
{
	cr_assert_eq(t->n_ev, r->n, "decoded %zu events, emitted %zu", t->n_ev, r->n);
	for (size_t i = 0; i < r->n; i++) {
		const char *d = tw_event_diff(&t->ev[i], &r->ev[i]);
		cr_assert_null(d, "event %zu differs in %s (ts %llu vs %llu, name '%s' vs '%s')",
			       i, d, (unsigned long long)t->ev[i].ts,
			       (unsigned long long)r->ev[i].ts, t->ev[i].name,
			       r->ev[i].name);
	}
}

static struct ptw_writer *open_tmp(char **path, const struct ptw_writer_options *o)
{
	*path = tw_tmp_path();
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(*path, o, &err);
	cr_assert_not_null(w, "open: %s", err.msg);
	return w;
}

static void close_decode(struct ptw_writer *w, char *path, struct tw_trace *t)
{
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0, "close: %s", err.msg);
	cr_assert_eq(tw_decode_file(t, path), 0, "decode: %s", t->err);
	unlink(path);
	free(path);
}

Test(writer, every_event_kind_round_trips)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t proc = ptw_writer_add_process_track(w, 1234, "demo");
	uint64_t thr = ptw_writer_add_thread_track(w, 1234, 1235, "main");
	uint64_t named = ptw_writer_add_track(w, "queue", proc, 2);
	uint64_t ctr = ptw_writer_add_counter_track(w, "depth", "items", proc, -1);
	uint64_t dctr = ptw_writer_add_counter_track(w, "load", NULL, 0, 1);
	cr_assert(proc && thr && named && ctr && dctr);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct rec *r = calloc(1, sizeof(*r));
	uint64_t flows[2] = {0x1122334455667788u, 7};
	uint64_t term[1] = {99};
	struct ptw_arg args[] = {
		{.name = "b", .type = PTW_ARG_TYPE_BOOL, .v.b = 1},
		{.name = "neg", .type = PTW_ARG_TYPE_INT, .v.i = -5},
		{.name = "big", .type = PTW_ARG_TYPE_UINT, .v.u = UINT64_MAX},
		{.name = "d", .type = PTW_ARG_TYPE_DOUBLE, .v.d = 2.5},
		{.name = "s", .type = PTW_ARG_TYPE_STRING, .v.s = "hello"},
		{.name = "p", .type = PTW_ARG_TYPE_POINTER, .v.u = 0xdeadbeef},
	};
	struct ptw_event ev = {.track = thr, .ts = 1000, .category = "cat",
			       .name = "outer", .args = args, .n_args = 6,
			       .flow_ids = flows, .n_flow_ids = 2};
	cr_assert_eq(do_begin(r, s, 3, 0, &ev), 0);
	struct ptw_event in = {.track = thr, .ts = 1500, .category = "cat2",
			       .name = "inner"};
	cr_assert_eq(do_begin(r, s, 3, 0, &in), 0);
	struct ptw_event inst = {.track = thr, .ts = 1600, .name = "tick",
				 .terminating_flow_ids = term,
				 .n_terminating_flow_ids = 1};
	cr_assert_eq(do_instant(r, s, 3, 0, &inst), 0);
	cr_assert_eq(do_counter(r, s, 3, ctr, 1700, -42), 0);
	cr_assert_eq(do_counter_d(r, s, 3, dctr, 1700, 3.25), 0);
	struct ptw_event end = {.track = thr, .ts = 1800};
	cr_assert_eq(do_end(r, s, 3, 0, &end), 0);
	struct ptw_arg a2[] = {{.name = "s", .type = PTW_ARG_TYPE_STRING, .v.s = "hello"}};
	end.ts = 2000;
	end.args = a2;
	end.n_args = 1;
	cr_assert_eq(do_end(r, s, 3, 0, &end), 0);
	struct ptw_event cpl = {.track = named, .ts = 2100, .category = "cat",
				.name = "outer"};
	cr_assert_eq(do_complete(r, s, 3, 0, &cpl, 400), 0);
	cr_assert_eq(do_counter(r, s, 3, ctr, 2600, 0), 0);

	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_eq(st.events, 10);
	struct tw_trace t;
	close_decode(w, path, &t);
	expect_events(&t, r);
	/* Interned once per generation: 2 categories, 3 names, 6 arg
	 * names, one string value. */
	cr_assert_eq(t.seqs[3].cats.n, 2);
	cr_assert_eq(t.seqs[3].names.n, 3);
	cr_assert_eq(t.seqs[3].anames.n, 6);
	cr_assert_eq(t.seqs[3].svals.n, 1);
	cr_assert_eq(t.n_tracks, 5);
	tw_trace_free(&t);
	free(r);
}

/* A string value goes by iid while it repeats within
 * PTW_INTERN_VALUE_GAP (1000) packets of its sequence, inline at its
 * first use and after a longer gap: trace_processor resolves an iid it
 * has not used for long slower than it reads the string
 * (docs/convert.md). A value used once gets no entry. */
Test(writer, a_string_value_unused_for_long_is_written_inline)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t thr = ptw_writer_add_thread_track(w, 1, 2, "main");
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	const char *url = "https://example.com/p/1";
	struct ptw_arg a = {.name = "url", .type = PTW_ARG_TYPE_STRING, .v.s = url};
	struct ptw_arg o = {.name = "url", .type = PTW_ARG_TYPE_STRING,
			    .v.s = "https://example.com/p/2"};
	struct ptw_event ev = {.track = thr, .name = "e", .args = &a, .n_args = 1};
	/* url, url, 1500 other values, url (gap 1501), url (gap 1) */
	uint64_t ts = 1000;
	for (int i = 0; i < 1504; i++) {
		ev.args = i < 2 || i >= 1502 ? &a : &o;
		ev.ts = ts++;
		cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	}
	struct ptw_arg once = {.name = "url", .type = PTW_ARG_TYPE_STRING,
			       .v.s = "https://example.com/once"};
	ev.args = &once;
	ev.ts = ts++;
	cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	struct tw_trace t;
	close_decode(w, path, &t);
	const int want[4] = {1, 0, 1, 0};
	int n = 0, n_other_inline = 0;
	for (size_t i = 0; i < t.n_ev; i++) {
		if (t.ev[i].n_args != 1)
			continue;
		const struct tw_arg *x = &t.ev[i].args[0];
		cr_assert_eq(x->type, 5);
		if (!strcmp(x->s, once.v.s)) {
			cr_assert(x->s_inline);
			continue;
		}
		if (strcmp(x->s, url)) {
			cr_assert_str_eq(x->s, o.v.s);
			n_other_inline += x->s_inline;
			continue;
		}
		cr_assert_lt(n, 4);
		cr_assert_eq(x->s_inline, want[n], "use %d of the value: inline %d",
			     n, x->s_inline);
		n++;
	}
	cr_assert_eq(n, 4);
	cr_assert_eq(n_other_inline, 1); /* its first use */
	/* an entry for each repeated value, once; none for 'once' */
	cr_assert_eq(t.seqs[3].svals.n, 2);
	tw_trace_free(&t);
}

Test(writer, track_descriptors_carry_hierarchy_and_identity)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t proc = ptw_writer_add_process_track(w, 77, "proc");
	uint64_t thr = ptw_writer_add_thread_track(w, 77, 5000000000LL, "worker");
	uint64_t root = ptw_writer_add_track(w, "root", 0, -1);
	uint64_t child = ptw_writer_add_track(w, "child", root, 3);
	uint64_t ctr = ptw_writer_add_counter_track(w, "bytes", "B", thr, 0);
	cr_assert_eq(proc, 1);
	cr_assert_eq(thr, 2);
	cr_assert_eq(ctr, 5);
	cr_assert_eq(ptw_writer_rename_track(w, proc, "renamed"), 0);
	struct tw_trace t;
	close_decode(w, path, &t);
	cr_assert_eq(t.n_tracks, 5);
	const struct tw_track *p = tw_find_track(&t, proc);
	cr_assert(p->is_process);
	cr_assert_eq(p->pid, 77);
	cr_assert_str_eq(p->name, "renamed");
	const struct tw_track *th = tw_find_track(&t, thr);
	cr_assert(th->is_thread);
	cr_assert_eq(th->pid, 77);
	cr_assert_eq(th->tid, 5000000000LL);
	cr_assert_str_eq(th->name, "worker");
	const struct tw_track *ro = tw_find_track(&t, root);
	cr_assert_eq(ro->parent, 0);
	cr_assert_not(ro->has_rank);
	cr_assert_str_eq(ro->name, "root");
	const struct tw_track *ch = tw_find_track(&t, child);
	cr_assert_eq(ch->parent, root);
	cr_assert(ch->has_rank);
	cr_assert_eq(ch->rank, 3);
	const struct tw_track *c = tw_find_track(&t, ctr);
	cr_assert(c->is_counter);
	cr_assert_eq(c->parent, thr);
	cr_assert_str_eq(c->unit, "B");
	cr_assert_str_eq(c->name, "bytes");
	tw_trace_free(&t);
}

Test(writer, parents_of_ranked_children_get_explicit_child_ordering)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t proc = ptw_writer_add_process_track(w, 7, "proc");
	uint64_t thr = ptw_writer_add_thread_track(w, 7, 8, "main");
	uint64_t root = ptw_writer_add_track(w, "root", 0, -1);
	uint64_t plain = ptw_writer_add_track(w, "plain", proc, -1);
	uint64_t b = ptw_writer_add_track(w, "b", root, 2);
	uint64_t a = ptw_writer_add_track(w, "a", root, 1);
	uint64_t ctr = ptw_writer_add_counter_track(w, "c", NULL, thr, 0);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_event ev = {.track = b, .ts = 10, .name = "x"};
	cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	cr_assert_eq(ptw_seq_counter_int(s, ctr, 11, 5), 0);
	struct tw_trace t;
	close_decode(w, path, &t);
	cr_assert_eq(t.n_tracks, 7);
	/* EXPLICIT (3) on the first descriptor of each parent with a
	 * ranked child, nothing elsewhere */
	cr_assert_eq(tw_find_track(&t, root)->first_child_ordering, 3);
	cr_assert_eq(tw_find_track(&t, thr)->first_child_ordering, 3);
	cr_assert_eq(tw_find_track(&t, proc)->first_child_ordering, 0);
	cr_assert_eq(tw_find_track(&t, plain)->first_child_ordering, 0);
	cr_assert_eq(tw_find_track(&t, a)->first_child_ordering, 0);
	cr_assert_eq(tw_find_track(&t, a)->rank, 1);
	cr_assert_eq(tw_find_track(&t, b)->rank, 2);
	cr_assert_eq(tw_find_track(&t, ctr)->rank, 0);
	cr_assert_eq(tw_find_track(&t, plain)->parent, proc);
	cr_assert_eq(t.n_ev, 2);
	tw_trace_free(&t);
}

Test(writer, descriptors_added_between_flushes_precede_their_events)
{
	char *path;
	struct ptw_writer_options o = {.flush_bytes = 64};
	struct ptw_writer *w = open_tmp(&path, &o);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	uint64_t tracks[12];
	uint64_t parent = ptw_writer_add_track(w, "parent", 0, -1);
	/* Tracks created after events and flushes, counters included:
	 * each descriptor must still come before its first event in the
	 * file (counters need that). */
	for (int i = 0; i < 12; i++) {
		int counter = i % 3 == 2;
		tracks[i] = counter ? ptw_writer_add_counter_track(w, "n", "u", parent, i)
				    : ptw_writer_add_track(w, "t", parent, -1);
		cr_assert_neq(tracks[i], 0);
		int rc = counter ? ptw_seq_counter_int(s, tracks[i], 100 + (uint64_t)i, i)
				 : ptw_seq_slice_complete(s, &(struct ptw_event){
						 .track = tracks[i],
						 .ts = 100 + (uint64_t)i,
						 .name = "s"}, 1);
		cr_assert_eq(rc, 0);
		if (i % 4 == 3)
			cr_assert_eq(ptw_writer_flush(w), 0);
	}
	struct tw_trace t;
	close_decode(w, path, &t);
	cr_assert_eq(t.n_tracks, 13);
	cr_assert_eq(t.n_ev, 4 + 2 * 8); /* 4 counters, 8 complete slices */
	for (size_t i = 0; i < t.n_ev; i++) {
		const struct tw_track *tr = tw_find_track(&t, t.ev[i].track);
		cr_assert_not_null(tr);
		cr_assert_lt(tr->first_packet, t.ev[i].packet,
			     "event %zu precedes the descriptor of track %llu", i,
			     (unsigned long long)tr->uuid);
	}
	tw_trace_free(&t);
}

/* Content interning compares strings up to 16 bytes by two overlapping
 * key words and longer ones by memcmp: strings differing in any single
 * byte, at every length around those limits, must stay distinct, and a
 * reused buffer (a converter's case) must find each entry again. */
Test(writer, content_interning_tells_apart_strings_differing_in_one_byte)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t tr = ptw_writer_add_track(w, "t", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	char name[48];
	uint64_t ts = 1, distinct = 0;
	for (int round = 0; round < 2; round++) {
		for (size_t len = 1; len <= 40; len++) {
			for (size_t pos = 0; pos <= len; pos++) {
				memset(name, 'a', len);
				name[len] = '\0';
				if (pos < len)
					name[pos] = 'b';
				struct ptw_event ev = {.track = tr, .ts = ts++, .name = name};
				cr_assert_eq(ptw_seq_instant(s, &ev), 0);
				distinct += round == 0;
			}
		}
	}
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_eq(st.interned_strings, distinct);
	struct tw_trace t;
	close_decode(w, path, &t);
	cr_assert_eq(t.n_ev, 2 * distinct);
	size_t i = 0;
	for (int round = 0; round < 2; round++) {
		for (size_t len = 1; len <= 40; len++) {
			for (size_t pos = 0; pos <= len; pos++, i++) {
				memset(name, 'a', len);
				name[len] = '\0';
				if (pos < len)
					name[pos] = 'b';
				cr_assert_str_eq(t.ev[i].name, name, "event %zu", i);
			}
		}
	}
	tw_trace_free(&t);
}

Test(writer, queued_descriptors_are_flushed_once_they_fill_a_batch)
{
	char *path;
	struct ptw_writer_options o = {.flush_bytes = 256};
	struct ptw_writer *w = open_tmp(&path, &o);
	char name[16];
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "track %d", i);
		cr_assert_eq(ptw_writer_add_track(w, name, 0, -1), (uint64_t)i + 1);
	}
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_gt(st.bytes_written, 0, "40 queued descriptors never flushed");
	cr_assert_eq(st.packets, 40);
	struct tw_trace t;
	close_decode(w, path, &t);
	cr_assert_eq(t.n_tracks, 40);
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "track %d", i);
		cr_assert_str_eq(tw_find_track(&t, (uint64_t)i + 1)->name, name);
	}
	tw_trace_free(&t);
}

Test(writer, default_track_events_omit_track_uuid)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t thr = ptw_writer_add_thread_track(w, 1, 2, "t");
	uint64_t other = ptw_writer_add_track(w, "other", 0, -1);
	struct ptw_seq *s = ptw_writer_add_seq(w, thr);
	cr_assert_not_null(s);
	struct rec *r = calloc(1, sizeof(*r));
	struct ptw_event ev = {.ts = 10, .name = "a"};
	cr_assert_eq(do_begin(r, s, 5, thr, &ev), 0);
	ev.track = thr; /* explicit default: also omitted */
	ev.ts = 11;
	cr_assert_eq(do_instant(r, s, 5, thr, &ev), 0);
	ev.track = other;
	cr_assert_eq(do_instant(r, s, 5, thr, &ev), 0);
	ev.track = 0;
	ev.ts = 12;
	cr_assert_eq(do_end(r, s, 5, thr, &ev), 0);
	struct tw_trace t;
	close_decode(w, path, &t);
	expect_events(&t, r);
	cr_assert_not(t.ev[0].raw_has_track);
	cr_assert_not(t.ev[1].raw_has_track);
	cr_assert(t.ev[2].raw_has_track);
	cr_assert_not(t.ev[3].raw_has_track);
	tw_trace_free(&t);
	free(r);
}

/* Instants at ts[0..n) on the sim sequence decode exactly, and event i
 * is absolute (clock 65) iff abs_expected[i]. Returns the snapshots. */
static size_t instants_at(const struct ptw_writer_options *o,
			  const uint64_t *ts, const int *abs_expected, size_t n)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, o);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct rec *r = calloc(1, sizeof(*r));
	for (size_t i = 0; i < n; i++) {
		struct ptw_event ev = {.track = tr, .ts = ts[i], .name = "i"};
		cr_assert_eq(do_instant(r, s, 3, 0, &ev), 0);
	}
	struct tw_trace t;
	close_decode(w, path, &t);
	expect_events(&t, r);
	cr_assert_eq(t.n_ev, n);
	for (size_t i = 0; i < t.n_ev; i++)
		cr_assert_eq(t.ev[i].abs_clock, abs_expected[i], "event %zu", i);
	size_t snaps = t.n_snapshots;
	tw_trace_free(&t);
	free(r);
	return snaps;
}

Test(writer, backwards_timestamps_are_absolute_and_keep_the_delta_base)
{
	uint64_t ts[] = {1000, 2000, 1500, 100, 2001, 2001, 0, 5000};
	int abs_expected[] = {0, 0, 1, 1, 0, 0, 1, 0};
	instants_at(NULL, ts, abs_expected, sizeof(ts) / sizeof(ts[0]));
}

/* Two sequences written out of step, far apart in time, checkpointing
 * every 3 packets: each one's snapshots read its own time (the decoder
 * rejects a sequence's snapshot below its previous one), so every event is
 * a delta on its sequence's clock 64. */
Test(writer, each_sequence_snapshots_on_its_own_timeline)
{
	char *path;
	struct ptw_writer_options o = {.checkpoint_packets = 3};
	struct ptw_writer *w = open_tmp(&path, &o);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *sim = ptw_writer_sim_seq(w);
	struct ptw_seq *wall = ptw_writer_wall_seq(w);
	struct rec *r = calloc(1, sizeof(*r));
	for (uint64_t i = 0; i < 20; i++) {
		struct ptw_event ev = {.track = tr, .ts = 1000000 + i * 10, .name = "sim"};
		cr_assert_eq(do_instant(r, sim, 3, 0, &ev), 0);
		struct ptw_event ev2 = {.track = tr, .ts = 5 + i * 7, .name = "wall"};
		cr_assert_eq(do_instant(r, wall, 4, 0, &ev2), 0);
	}
	struct tw_trace t;
	close_decode(w, path, &t);
	expect_events(&t, r);
	cr_assert_gt(t.n_snapshots, 10);
	for (size_t i = 0; i < t.n_ev; i++)
		cr_assert_not(t.ev[i].abs_clock, "event %zu", i);
	tw_trace_free(&t);
	free(r);
}

/* A checkpoint at an event that goes back before the sequence's own
 * previous snapshot reads that snapshot's time again (a sequence's
 * snapshots must not go back); the event is absolute, the next ones are
 * deltas again. */
Test(writer, a_checkpoint_at_an_event_gone_back_keeps_the_snapshot_time)
{
	struct ptw_writer_options o = {.checkpoint_packets = 2};
	uint64_t ts[] = {100, 200, 50, 300, 40, 60, 400};
	/* checkpoints before events 0 (at 100), 2 (at 100 again: 50 went
	 * back), 4 (at 100 again) and 6 (at 400) */
	int abs_expected[] = {0, 0, 1, 0, 1, 1, 0};
	cr_assert_eq(instants_at(&o, ts, abs_expected,
				 sizeof(ts) / sizeof(ts[0])), 4);
}

Test(writer, checkpoints_every_n_packets_restart_interning)
{
	char *path;
	struct ptw_writer_options o = {.checkpoint_packets = 4};
	struct ptw_writer *w = open_tmp(&path, &o);
	uint64_t tr = ptw_writer_add_thread_track(w, 1, 1, "t");
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct rec *r = calloc(1, sizeof(*r));
	for (uint64_t i = 0; i < 40; i++) {
		struct ptw_event ev = {.track = tr, .ts = i * 3, .name = "n",
				       .category = "c"};
		cr_assert_eq(do_begin(r, s, 3, 0, &ev), 0);
		cr_assert_eq(do_end(r, s, 3, 0, &ev), 0);
	}
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	/* 80 event packets, 4 per generation: 20 checkpoints. */
	cr_assert_eq(st.checkpoints, 20);
	cr_assert_eq(st.interned_strings, 40);
	struct tw_trace t;
	close_decode(w, path, &t);
	expect_events(&t, r);
	cr_assert_eq(t.n_cleared, 21); /* + the descriptor sequence */
	tw_trace_free(&t);
	free(r);
}

Test(writer, intern_cap_triggers_checkpoint)
{
	char *path;
	struct ptw_writer_options o = {.max_interned = 3};
	struct ptw_writer *w = open_tmp(&path, &o);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct rec *r = calloc(1, sizeof(*r));
	char names[30][16];
	for (int i = 0; i < 30; i++) {
		snprintf(names[i], sizeof(names[i]), "name%d", i);
		struct ptw_event ev = {.track = tr, .ts = 100 + (uint64_t)i, .name = names[i]};
		cr_assert_eq(do_instant(r, s, 3, 0, &ev), 0);
	}
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_eq(st.checkpoints, 10);
	struct tw_trace t;
	close_decode(w, path, &t);
	expect_events(&t, r);
	cr_assert_leq(t.seqs[3].names.n, 3);
	tw_trace_free(&t);
	free(r);
}

Test(writer, static_strings_intern_by_pointer_and_content)
{
	char *path;
	struct ptw_writer_options o = {.checkpoint_packets = 5};
	struct ptw_writer *w = open_tmp(&path, &o);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct rec *r = calloc(1, sizeof(*r));
	static const char a[] = "same";
	char b[] = "same";
	for (uint64_t i = 0; i < 12; i++) {
		struct ptw_event ev = {.track = tr, .ts = i, .name = a,
				       .category = "lit",
				       .flags = PTW_EV_STATIC_STRINGS};
		cr_assert_eq(do_instant(r, s, 3, 0, &ev), 0);
		struct ptw_event ev2 = {.track = tr, .ts = i, .name = b};
		cr_assert_eq(do_instant(r, s, 3, 0, &ev2), 0);
		struct ptw_arg a1[] = {{.name = "k", .type = PTW_ARG_TYPE_INT, .v.i = (int64_t)i},
				       {.name = b, .type = PTW_ARG_TYPE_BOOL, .v.b = 1}};
		struct ptw_event ev3 = {.track = tr, .ts = i, .name = a, .args = a1,
					.n_args = 2,
					.flags = PTW_EV_STATIC_STRINGS | PTW_EV_STATIC_ARG_NAMES};
		cr_assert_eq(do_instant(r, s, 3, 0, &ev3), 0);
	}
	struct tw_trace t;
	close_decode(w, path, &t);
	expect_events(&t, r);
	tw_trace_free(&t);
	free(r);
}

Test(writer, long_string_values_are_written_inline)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct rec *r = calloc(1, sizeof(*r));
	char big[390];
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	struct ptw_arg a[] = {{.name = "long", .type = PTW_ARG_TYPE_STRING, .v.s = big}};
	struct ptw_event ev = {.track = tr, .ts = 5, .name = "e", .args = a, .n_args = 1};
	cr_assert_eq(do_instant(r, s, 3, 0, &ev), 0);
	struct tw_trace t;
	close_decode(w, path, &t);
	expect_events(&t, r);
	cr_assert_eq(t.seqs[3].svals.n, 0);
	tw_trace_free(&t);
	free(r);
}

Test(writer, mark_dropped_starts_a_checkpoint_with_the_loss_flag)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct rec *r = calloc(1, sizeof(*r));
	struct ptw_event ev = {.track = tr, .ts = 5, .name = "e"};
	cr_assert_eq(do_instant(r, s, 3, 0, &ev), 0);
	ptw_seq_mark_dropped(s, 12);
	ev.ts = 9;
	cr_assert_eq(do_instant(r, s, 3, 0, &ev), 0);
	struct tw_trace t;
	close_decode(w, path, &t);
	expect_events(&t, r);
	cr_assert_eq(t.n_dropped_marks, 1);
	cr_assert_eq(t.n_cleared, 3);
	tw_trace_free(&t);
	free(r);
}

/* The fast path (static strings already interned), the general path and
 * ptw_seq_simple() must produce the same bytes: mode 0 general (strings
 * not static), 1 static strings, 2 ptw_seq_simple (static). Checkpoints
 * every 7 packets, drops marked now and then. */
static uint8_t *write_mix(int mode, size_t *len)
{
	char *path = tw_tmp_path();
	struct ptw_writer_options o = {.checkpoint_packets = 7};
	struct ptw_writer *w = ptw_writer_open(path, &o, NULL);
	cr_assert_not_null(w);
	uint64_t thr = ptw_writer_add_thread_track(w, 1, 2, "t");
	uint64_t other = ptw_writer_add_track(w, "o", 0, -1);
	uint64_t ctr = ptw_writer_add_counter_track(w, "c", NULL, 0, -1);
	struct ptw_seq *s = ptw_writer_add_seq(w, thr);
	static const char *const nm[3] = {"a", "b", "c"};
	uint64_t ts[] = {10, 20, 5, 30, 30, 1000000, 3, 1000001};
	for (int i = 0; i < 40; i++) {
		struct ptw_event ev = {.ts = ts[i % 8] + (uint64_t)i, .name = nm[i % 3],
				       .category = i % 2 ? "x" : NULL,
				       .track = i % 4 == 3 ? other : 0,
				       .flags = mode ? PTW_EV_STATIC_STRINGS : 0};
		if (mode == 2) {
			cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_BEGIN, ev.track,
						    ev.ts, ev.category, ev.name), 0);
			cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_INSTANT, ev.track,
						    ev.ts, ev.category, ev.name), 0);
		} else {
			cr_assert_eq(ptw_seq_slice_begin(s, &ev), 0);
			cr_assert_eq(ptw_seq_instant(s, &ev), 0);
		}
		cr_assert_eq(ptw_seq_counter_double(s, ctr, ev.ts, i * 0.5), 0);
		if (i % 13 == 5)
			ptw_seq_mark_dropped(s, 2);
		if (mode == 2)
			cr_assert_eq(ptw_seq_simple(s, PTW_SIMPLE_END, ev.track,
						    ev.ts, "ignored", "ignored"), 0);
		else
			cr_assert_eq(ptw_seq_slice_end(s, &ev), 0);
		cr_assert_eq(ptw_seq_counter_int(s, ctr, ev.ts, -i), 0);
	}
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	uint8_t *b = tw_read_file(path, len);
	unlink(path);
	free(path);
	return b;
}

Test(writer, fast_and_general_paths_write_identical_bytes)
{
	size_t a_len, b_len, c_len;
	uint8_t *a = write_mix(1, &a_len);
	uint8_t *b = write_mix(0, &b_len);
	uint8_t *c = write_mix(2, &c_len);
	cr_assert_eq(a_len, b_len);
	cr_assert_eq(memcmp(a, b, a_len), 0);
	cr_assert_eq(a_len, c_len);
	cr_assert_eq(memcmp(a, c, a_len), 0, "ptw_seq_simple differs");
	struct tw_trace t;
	cr_assert_eq(tw_decode(&t, a, a_len), 0, "%s", t.err);
	cr_assert_eq(t.n_ev, 200);
	cr_assert_eq(t.n_dropped_marks, 3, "%zu", (size_t)t.n_dropped_marks);
	tw_trace_free(&t);
	free(a);
	free(b);
	free(c);
}

Test(writer, tables_grow_past_their_initial_size)
{
	char *path;
	struct ptw_writer_options o = {.max_interned = 100000,
				       .checkpoint_packets = 100000};
	struct ptw_writer *w = open_tmp(&path, &o);
	uint64_t tr = ptw_writer_add_track(w, "x", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	enum { N = 6000 };
	char (*names)[32] = calloc(N, sizeof(*names));
	for (int i = 0; i < N; i++)
		snprintf(names[i], sizeof(names[i]), "static-name-%d-padding", i);
	/* Each name twice: the second use hits the pointer cache (or, once
	 * the cache is full, the content table). */
	for (int rep = 0; rep < 2; rep++) {
		for (int i = 0; i < N; i++) {
			struct ptw_event ev = {.track = tr, .ts = (uint64_t)(rep * N + i),
					       .name = names[i],
					       .flags = PTW_EV_STATIC_STRINGS};
			cr_assert_eq(ptw_seq_instant(s, &ev), 0);
		}
	}
	struct ptw_writer_stats st;
	ptw_writer_get_stats(w, &st);
	cr_assert_eq(st.interned_strings, N);
	cr_assert_eq(st.checkpoints, 1);
	struct tw_trace t;
	close_decode(w, path, &t);
	cr_assert_eq(t.n_ev, 2 * N);
	for (size_t i = 0; i < t.n_ev; i++)
		cr_assert_str_eq(t.ev[i].name, names[i % N]);
	tw_trace_free(&t);
	free(names);
}

/* Descriptors of a raw trace, in file order (protobuf-c only: the
 * tw_decode helpers refuse uuid 0). */
struct desc_list {
	Perfetto__Protos__Trace *trace;
	const Perfetto__Protos__TrackDescriptor *d[64];
	size_t n;
};

static void descs_of(const char *path, struct desc_list *l)
{
	size_t n;
	uint8_t *b = tw_read_file(path, &n);
	cr_assert_not_null(b);
	l->trace = perfetto__protos__trace__unpack(NULL, n, b);
	free(b);
	cr_assert_not_null(l->trace);
	l->n = 0;
	for (size_t i = 0; i < l->trace->n_packet; i++) {
		const Perfetto__Protos__TracePacket *pk = l->trace->packet[i];
		if (pk->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR)
			continue;
		const Perfetto__Protos__TrackDescriptor *d = pk->track_descriptor;
		cr_assert_lt(l->n, 64);
		cr_assert(d->has_uuid, "descriptor %zu has no uuid", l->n);
		l->d[l->n++] = d;
	}
}

/* Index of the first descriptor of 'uuid', or -1. */
static int first_desc(const struct desc_list *l, uint64_t uuid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->d[i]->uuid == uuid)
			return (int)i;
	return -1;
}

Test(writer, track_ranks_go_into_the_first_process_and_thread_descriptors)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t p7 = ptw_writer_add_process_track(w, 7, "seven");
	uint64_t t8 = ptw_writer_add_thread_track(w, 7, 8, "main");
	uint64_t p9 = ptw_writer_add_process_track(w, 9, "nine");
	uint64_t named = ptw_writer_add_track(w, "n", p7, -1);
	cr_assert_eq(ptw_writer_set_track_rank(w, p7, 5), 0);
	cr_assert_eq(ptw_writer_set_track_rank(w, p9, -3), 0);
	cr_assert_eq(ptw_writer_set_track_rank(w, t8, 2), 0);
	cr_assert_eq(ptw_writer_set_track_rank(w, t8, 1), 0); /* last wins */
	cr_assert_eq(ptw_writer_set_track_rank(w, named, 1), PTW_ERR_INVALID);
	cr_assert_eq(ptw_writer_set_track_rank(w, 999, 1), PTW_ERR_INVALID);
	cr_assert_eq(ptw_writer_set_track_rank(NULL, p7, 1), PTW_ERR_INVALID);
	struct ptw_event ev = {.track = t8, .ts = 10, .name = "x"};
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), 0);
	cr_assert_eq(ptw_writer_flush(w), 0);
	/* Written: too late, and not sticky. */
	cr_assert_eq(ptw_writer_set_track_rank(w, p7, 1), PTW_ERR_STATE);
	cr_assert_eq(ptw_writer_error(w)->code, PTW_ERR_STATE);
	cr_assert_eq(ptw_writer_rename_track(w, t8, "main2"), 0);
	uint64_t p11 = ptw_writer_add_process_track(w, 11, "eleven");
	cr_assert_eq(ptw_writer_set_track_rank(w, p11, 0), 0);
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0, "close: %s", err.msg);

	struct desc_list l;
	descs_of(path, &l);
	/* One uuid-0 descriptor, first, no parent, both orderings EXPLICIT;
	 * p11's rank needs no second one. */
	cr_assert_eq(first_desc(&l, 0), 0);
	const Perfetto__Protos__TrackDescriptor *d0 = l.d[0];
	cr_assert_not(d0->has_parent_uuid);
	cr_assert(d0->has_process_ordering);
	cr_assert_eq(d0->process_ordering,
		     PERFETTO__PROTOS__TRACK_DESCRIPTOR__PROCESS_ORDERING__PROCESS_ORDERING_EXPLICIT);
	cr_assert(d0->has_thread_ordering);
	cr_assert_eq(d0->thread_ordering,
		     PERFETTO__PROTOS__TRACK_DESCRIPTOR__THREAD_ORDERING__THREAD_ORDERING_EXPLICIT);
	size_t n0 = 0;
	for (size_t i = 0; i < l.n; i++)
		n0 += l.d[i]->uuid == 0;
	cr_assert_eq(n0, 1);
	const struct {
		uint64_t uuid;
		int has;
		int32_t rank;
	} want[] = {{p7, 1, 5}, {t8, 1, 1}, {p9, 1, -3}, {named, 0, 0},
		    {p11, 1, 0}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int k = first_desc(&l, want[i].uuid);
		cr_assert_gt(k, 0, "no descriptor for %zu", i);
		cr_assert_eq(l.d[k]->has_sibling_order_rank, want[i].has, "%zu", i);
		if (want[i].has)
			cr_assert_eq(l.d[k]->sibling_order_rank, want[i].rank,
				     "%zu", i);
	}
	/* p7's refused rank is nowhere; the rename keeps t8's rank. */
	size_t n_t8 = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (l.d[i]->uuid == p7)
			cr_assert_eq(l.d[i]->sibling_order_rank, 5);
		if (l.d[i]->uuid == t8) {
			n_t8++;
			cr_assert_eq(l.d[i]->sibling_order_rank, 1);
		}
	}
	cr_assert_eq(n_t8, 2);
	perfetto__protos__trace__free_unpacked(l.trace, NULL);
	unlink(path);
	free(path);
}

Test(writer, uuid0_ordering_is_written_again_when_threads_get_ranks_later)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t p = ptw_writer_add_process_track(w, 7, "seven");
	cr_assert_eq(ptw_writer_set_track_rank(w, p, 4), 0);
	cr_assert_eq(ptw_writer_flush(w), 0);
	uint64_t t = ptw_writer_add_thread_track(w, 7, 8, "main");
	cr_assert_eq(ptw_writer_set_track_rank(w, t, 2), 0);
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0, "close: %s", err.msg);

	struct desc_list l;
	descs_of(path, &l);
	cr_assert_eq(l.n, 4);
	cr_assert_eq(l.d[0]->uuid, 0);
	cr_assert(l.d[0]->has_process_ordering);
	cr_assert_not(l.d[0]->has_thread_ordering);
	cr_assert_eq(l.d[1]->uuid, p);
	cr_assert_eq(l.d[2]->uuid, 0);
	cr_assert(l.d[2]->has_process_ordering);
	cr_assert(l.d[2]->has_thread_ordering);
	cr_assert_eq(l.d[3]->uuid, t);
	cr_assert_eq(l.d[3]->sibling_order_rank, 2);
	perfetto__protos__trace__free_unpacked(l.trace, NULL);
	unlink(path);
	free(path);
}

Test(writer, no_ranks_no_uuid0_descriptor)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t p = ptw_writer_add_process_track(w, 7, "seven");
	cr_assert_neq(ptw_writer_add_track(w, "r", p, 1), 0);
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0, "close: %s", err.msg);
	struct desc_list l;
	descs_of(path, &l);
	cr_assert_eq(l.n, 2);
	cr_assert_eq(first_desc(&l, 0), -1);
	perfetto__protos__trace__free_unpacked(l.trace, NULL);
	unlink(path);
	free(path);
}

/* ptw_writer_add_separate_track writes sibling_merge_behavior = NONE
 * (trace_processor then never merges it with a sibling of the same name,
 * track_event_tracker.cc InternDescriptorTrackImpl), and
 * ptw_writer_add_thread_time_track a nameless counter of type
 * COUNTER_THREAD_TIME_NS; thread time is written as the extra counter
 * value of that track (TrackEvent fields 31 and 12). */
Test(writer, separate_and_thread_time_tracks_and_thread_time_values)
{
	char *path;
	struct ptw_writer *w = open_tmp(&path, NULL);
	uint64_t t = ptw_writer_add_thread_track(w, 7, 8, "main");
	uint64_t sep = ptw_writer_add_separate_track(w, NULL, t);
	uint64_t tt = ptw_writer_add_thread_time_track(w, t);
	cr_assert(sep && tt);
	cr_assert_eq(ptw_writer_add_separate_track(w, NULL, 0), 0);
	cr_assert_eq(ptw_writer_add_separate_track(w, NULL, tt), 0);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_event b = {.track = sep, .ts = 10, .name = "x",
			      .flags = PTW_EV_THREAD_TIME | PTW_EV_STATIC_STRINGS,
			      .thread_time = -5, .thread_time_track = tt};
	cr_assert_eq(ptw_seq_slice_begin(s, &b), 0);
	/* not a counter track: refused, nothing written */
	struct ptw_event bad = b;
	bad.thread_time_track = t;
	cr_assert_eq(ptw_seq_instant(s, &bad), PTW_ERR_INVALID);
	struct ptw_event e = {.track = sep, .ts = 20};
	cr_assert_eq(ptw_seq_slice_end(s, &e), 0); /* no thread time */
	struct ptw_error err;
	cr_assert_eq(ptw_writer_close(w, &err), 0, "close: %s", err.msg);

	struct desc_list l;
	descs_of(path, &l);
	const Perfetto__Protos__TrackDescriptor *ds = l.d[first_desc(&l, sep)];
	cr_assert(ds->has_sibling_merge_behavior);
	cr_assert_eq(ds->sibling_merge_behavior,
		     PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_NONE);
	cr_assert_eq(ds->parent_uuid, t);
	cr_assert_null(ds->name);
	const Perfetto__Protos__TrackDescriptor *dt = l.d[first_desc(&l, tt)];
	cr_assert_not_null(dt->counter);
	cr_assert(dt->counter->has_type);
	cr_assert_eq(dt->counter->type,
		     PERFETTO__PROTOS__COUNTER_DESCRIPTOR__BUILTIN_COUNTER_TYPE__COUNTER_THREAD_TIME_NS);
	cr_assert_null(dt->name);
	cr_assert_eq(dt->parent_uuid, t);
	/* the thread track and the others carry no merge behaviour */
	cr_assert_not(l.d[first_desc(&l, t)]->has_sibling_merge_behavior);
	size_t n_te = 0;
	for (size_t i = 0; i < l.trace->n_packet; i++) {
		const Perfetto__Protos__TracePacket *pk = l.trace->packet[i];
		if (pk->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT)
			continue;
		const Perfetto__Protos__TrackEvent *te = pk->track_event;
		if (n_te++ == 0) {
			cr_assert_eq(te->n_extra_counter_track_uuids, 1);
			cr_assert_eq(te->extra_counter_track_uuids[0], tt);
			cr_assert_eq(te->n_extra_counter_values, 1);
			cr_assert_eq(te->extra_counter_values[0], -5);
		} else {
			cr_assert_eq(te->n_extra_counter_values, 0);
		}
	}
	cr_assert_eq(n_te, 2);
	perfetto__protos__trace__free_unpacked(l.trace, NULL);
	unlink(path);
	free(path);
}
