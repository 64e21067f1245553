/* test_tracer_sink.c - which records a sink of the session takes (the
 * system sessions' outputs, lib/tracer/tracer_sink.c), without Perfetto's
 * service: two sinks beside the session's file, one wanting category
 * "a", the other "b", each decoded by protobuf-c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/tracer/tracer_internal.h"
#include "reader/trace_read.h"
#include "ptw/tracer.h"
#include "ptw_trace.pb-c.h"
#include "support/counter_pairs.h"
#include "support/ptw_test.h"
#include "support/sink_buf.h"

static uint64_t add_sink(struct ptw_test_sink_buf *b, const char *cat)
{
	static const struct ptw_writer_options wo; /* the defaults */
	struct ptw_tr_sink_cfg sc;
	ptw_test_sink_cfg(&sc, b, &wo, "sinkproc", cat);
	uint64_t id = 0;
	cr_assert_eq(ptw_tr_sink_add(&sc, &id), 0);
	return id;
}

#define TRACK_EVENT PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT
#define TRACK_DESCRIPTOR PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR

/* The packet's TrackEvent, or NULL. */
static const Perfetto__Protos__TrackEvent *
track_event(const Perfetto__Protos__TracePacket *p)
{
	return p->data_case == TRACK_EVENT ? p->track_event : NULL;
}

/* The counter samples of trace b as "name,value*100;" in order. */
static void counters(const struct ptw_test_sink_buf *b, char *out, size_t max)
{
	Perfetto__Protos__Trace *t =
		perfetto__protos__trace__unpack(NULL, b->n, b->p);
	cr_assert_not_null(t, "a sink's bytes are a trace");
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < t->n_packet; i++) {
		const Perfetto__Protos__TrackEvent *te = track_event(t->packet[i]);
		if (!te || te->type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER)
			continue;
		const char *name = "?";
		for (size_t j = 0; j < t->n_packet; j++) {
			const Perfetto__Protos__TracePacket *p = t->packet[j];
			const Perfetto__Protos__TrackDescriptor *td =
				p->data_case == TRACK_DESCRIPTOR
					? p->track_descriptor
					: NULL;
			if (td && td->uuid == te->track_uuid &&
			    td->static_or_dynamic_name_case ==
				    PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME)
				name = td->name;
		}
		double v = te->counter_value_field_case ==
					   PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE
				   ? (double)te->counter_value
				   : te->double_counter_value;
		int k = snprintf(out + o, max - o, "%s,%lld;", name,
				 (long long)(v * 100));
		cr_assert(k > 0 && (size_t)k < max - o);
		o += (size_t)k;
	}
	perfetto__protos__trace__free_unpacked(t, NULL);
}

/* The slice events of trace b as letters: B(egin), E(nd), I(nstant). */
static void slices(const struct ptw_test_sink_buf *b, char *out, size_t max)
{
	Perfetto__Protos__Trace *t =
		perfetto__protos__trace__unpack(NULL, b->n, b->p);
	cr_assert_not_null(t, "a sink's bytes are a trace");
	size_t o = 0;
	for (size_t i = 0; i < t->n_packet; i++) {
		const Perfetto__Protos__TrackEvent *te = track_event(t->packet[i]);
		if (!te)
			continue;
		char c = 0;
		switch (te->type) {
		case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN: c = 'B'; break;
		case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END: c = 'E'; break;
		case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT: c = 'I'; break;
		default: break;
		}
		if (c) {
			cr_assert_lt(o + 1, max);
			out[o++] = c;
		}
	}
	out[o] = '\0';
	perfetto__protos__trace__free_unpacked(t, NULL);
}

/* Every other kind of record a site in category C writes (arguments,
 * run-time and printf-style names, a captured stack, async slices, flows,
 * a track of one's own), each event's name starting with C: 19 events. */
#define KINDS(C, track, id)                                                  \
	do {                                                                 \
		PTW_INSTANT_ARGS(C, C "i", PTW_ARG_I64("n", 1));             \
		PTW_BEGIN_ARGS(C, C "s", PTW_ARG_STR("s", "x"));             \
		PTW_END_ARGS(C, PTW_ARG_I64("m", 2));                        \
		PTW_BEGIN_FMT(C, C "f%d", 1);                                \
		PTW_INSTANT_FMT(C, C "if%d", 2);                             \
		PTW_END(C);                                                  \
		PTW_INSTANT_DYN(C, C "id");                                  \
		{                                                            \
			PTW_SCOPE_STACK(C, C "st");                          \
		}                                                            \
		PTW_ASYNC_BEGIN(C, C "as", (id));                            \
		PTW_ASYNC_END(C, (id));                                      \
		PTW_ASYNC_BEGIN_FMT(C, (id) + 1, C "af%d", 3);               \
		PTW_ASYNC_END(C, (id) + 1);                                  \
		PTW_FLOW_START(C, C "fs", (id));                             \
		PTW_FLOW_STEP_DYN(C, C "fd", (id));                          \
		PTW_FLOW_END_FMT(C, (id), C "fe%d", 4);                      \
		PTW_TRACK_BEGIN(C, (track), C "tb");                         \
		PTW_TRACK_INSTANT_FMT(C, (track), C "ti%d", 5);              \
		PTW_TRACK_END(C, (track));                                   \
	} while (0)
#define KINDS_EVENTS 19

/* Trace b's events other than counters: each name and category is 'cat'
 * (or none); returns how many. */
static size_t only_cat(const struct ptw_test_sink_buf *b, const char *cat)
{
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_mem(b->p, b->n, cat, NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	size_t n, k = 0;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	for (size_t i = 0; i < n; i++) {
		if (ev[i].type == PTW_TRACE_COUNTER)
			continue;
		k++;
		cr_assert(!ev[i].name || ev[i].name[0] == cat[0],
			  "sink %s: event \"%s\"", cat, ev[i].name);
		cr_assert(!ev[i].category || strcmp(ev[i].category, cat) == 0,
			  "sink %s: event \"%s\" of category %s", cat,
			  ev[i].name ? ev[i].name : "", ev[i].category);
	}
	ptw_trace_free(t);
	return k;
}

Test(tracer_sink, each_record_goes_to_the_sinks_of_its_category)
{
	char path[256];
	ptw_test_start_file(path, sizeof(path), "sinkfile");
	uint64_t own = ptw_counter_track_new("own", NULL, 0, 0);
	cr_assert_neq(own, 0);
	struct ptw_test_sink_buf ba = {0}, bb = {0};
	uint64_t ia = add_sink(&ba, "a"), ib = add_sink(&bb, "b");
	char dyn[] = "dqueue";
	uint64_t track = ptw_track_new("mine", 0);
	cr_assert_neq(track, 0);
	PTW_TEST_COUNTER_PAIRS(1, dyn, own);
	KINDS("a", track, 100);
	KINDS("b", track, 200);
	PTW_TEST_COUNTER_PAIRS(2, dyn, own);
	cr_assert_eq(ptw_tr_sink_remove(ia), 0);
	cr_assert_eq(ptw_tr_sink_remove(ib), 0);
	cr_assert_eq(ptw_stop(), 0);
	unlink(path);

	char got[2048];
	counters(&ba, got, sizeof(got));
	cr_assert_str_eq(got, "queue,1100;level,150;dqueue,11100;fqueue,31150;"
			      "own,41100;"
			      "queue,1200;level,250;dqueue,11200;fqueue,31250;"
			      "own,41200;");
	counters(&bb, got, sizeof(got));
	cr_assert_str_eq(got, "queue,2100;level,125;dqueue,12100;fqueue,32150;"
			      "own,42100;"
			      "queue,2200;level,225;dqueue,12200;fqueue,32250;"
			      "own,42200;");
	cr_assert_eq(only_cat(&ba, "a"), KINDS_EVENTS);
	cr_assert_eq(only_cat(&bb, "b"), KINDS_EVENTS);
	free(ba.p);
	free(bb.p);
}

/* Slices of "a" nested deeper than 64 levels, a slice of "b" inside them
 * ended by PTW_END() (which carries no category), then the ends: each END
 * goes exactly to the sink that took its BEGIN. */
Test(tracer_sink, an_end_at_any_depth_goes_where_its_begin_went)
{
	enum { DEEP = 150 };
	char path[256];
	ptw_test_start_file(path, sizeof(path), "sinkfile");
	struct ptw_test_sink_buf ba = {0}, bb = {0};
	uint64_t ia = add_sink(&ba, "a"), ib = add_sink(&bb, "b");
	for (int i = 0; i < DEEP; i++)
		PTW_BEGIN("a", "a");
	PTW_BEGIN("b", "deep b");
	PTW_INSTANT("a", "inside");
	PTW_END();
	PTW_INSTANT("a", "after");
	for (int i = 0; i < DEEP; i++)
		PTW_END();
	cr_assert_eq(ptw_tr_sink_remove(ia), 0);
	cr_assert_eq(ptw_tr_sink_remove(ib), 0);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.invalid, 0);
	unlink(path);

	char got[2 * DEEP + 16], want[2 * DEEP + 16];
	memset(want, 'B', DEEP);
	memcpy(want + DEEP, "II", 2);
	memset(want + DEEP + 2, 'E', DEEP);
	want[2 * DEEP + 2] = '\0';
	slices(&ba, got, sizeof(got));
	cr_assert_str_eq(got, want);
	slices(&bb, got, sizeof(got));
	cr_assert_str_eq(got, "BE");
	free(ba.p);
	free(bb.p);
}

/* The counts of instants named "a" and "b" in trace b. */
static void instants_ab(const struct ptw_test_sink_buf *b, size_t *na,
			size_t *nb)
{
	struct ptw_trace *t = ptw_test_load_mem_or_fail(b->p, b->n);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	*na = *nb = 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].type != PTW_TRACE_INSTANT || !ev[i].name)
			continue;
		*na += strcmp(ev[i].name, "a") == 0;
		*nb += strcmp(ev[i].name, "b") == 0;
	}
	ptw_trace_free(t);
}

/* A sink alone takes every category; once a second sink comes, it takes
 * only its own, through the fast ways as through the general path (a
 * byte-for-byte check of that moment: test_tracer_tight's sink
 * variants). */
static void alone_then_filtering(int general_only, size_t *na, size_t *nb)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.general_path_only = general_only;
	static const struct ptw_writer_options wo;
	struct ptw_test_sink_buf ba = {0}, bb = {0};
	struct ptw_tr_sink_cfg sc;
	ptw_test_sink_cfg(&sc, &ba, &wo, "sinkproc", "a");
	uint64_t ia = 0;
	struct ptw_error err;
	cr_assert_eq(ptw_tr_start_muted(&cfg, NULL, NULL, &sc, &ia, &err), 0,
		     "%s", err.msg);
	for (int i = 0; i < 100; i++) {
		PTW_INSTANT("a", "a");
		PTW_INSTANT("b", "b");
	}
	ptw_flush();
	uint64_t ib = add_sink(&bb, "b");
	for (int i = 0; i < 100; i++) {
		PTW_INSTANT("a", "a");
		PTW_INSTANT("b", "b");
	}
	cr_assert_eq(ptw_tr_sink_remove(ib), 0);
	cr_assert_eq(ptw_stop(), 0);
	instants_ab(&ba, na, nb);
	size_t ba_a, bb_b;
	instants_ab(&bb, &ba_a, &bb_b);
	cr_assert_eq(ba_a, 0);
	cr_assert_eq(bb_b, 100);
	free(ba.p);
	free(bb.p);
}

Test(tracer_sink, a_sink_alone_takes_all_then_only_its_category)
{
	for (int general_only = 0; general_only < 2; general_only++) {
		size_t na, nb;
		alone_then_filtering(general_only, &na, &nb);
		cr_assert_eq(na, 200, "general_only %d", general_only);
		cr_assert_eq(nb, 100, "general_only %d", general_only);
	}
}
