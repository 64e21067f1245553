/* test_reader_model.c - the trace_processor model: slices, counters, flows,
 * args, owners, and the tokenizer rules of perfetto-wire.md section 9.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "support/ptw_test.h"
#include "support/trace_build.h"

#define TS 8
#define CLOCK_ID 58
#define EVENT 11
#define TYPE 9
#define TRACK 11
#define NAME 23
#define NAME_IID 10
#define CATEGORIES 22
#define COUNTER 30
#define DCOUNTER 44
#define FLOWS 47
#define TFLOWS 48
#define ANNOT 4

enum { BEGIN = 1, END = 2, INSTANT = 3, CNT = 4 };

/* seq 2 cleared, clock 64 (ns) at 1e9 with default track 2; process 1
 * (pid 10), threads 2 (tid 11) and 4 (tid 12), counter 3 under 1. */
static void base(struct ptw_tb *b)
{
	ptw_tb_init(b);
	ptw_tb_start_seq(b, 2, 64, 2, 1000000000);
	ptw_tb_begin_on(b, 2, 0);
	ptw_tb_process_track(b, 1, 10, "proc");
	ptw_tb_end(b);
	ptw_tb_begin_on(b, 2, 0);
	ptw_tb_thread_track(b, 2, 10, 11, "t1");
	ptw_tb_end(b);
	ptw_tb_begin_on(b, 2, 0);
	ptw_tb_thread_track(b, 4, 10, 12, "t2");
	ptw_tb_end(b);
	ptw_tb_begin_on(b, 2, 0);
	ptw_tb_counter_track(b, 3, 1, "ctr");
	ptw_tb_end(b);
}

/* Opens an event packet (delta ts on clock 64); caller adds fields and
 * calls done(). */
static void ev_open(struct ptw_tb *b, uint64_t delta, int type,
		    uint64_t track, const char *name)
{
	ptw_tb_begin_on(b, 2, delta);
	ptw_tb_open(b, EVENT);
	ptw_tb_varint(b, TYPE, (uint64_t)type);
	if (track)
		ptw_tb_varint(b, TRACK, track);
	if (name)
		ptw_tb_string(b, NAME, name);
}

static uint64_t done(struct ptw_tb *b)
{
	ptw_tb_close(b);
	return ptw_tb_end(b);
}

static uint64_t ev(struct ptw_tb *b, uint64_t delta, int type, uint64_t track,
		   const char *name)
{
	ev_open(b, delta, type, track, name);
	return done(b);
}

struct fx {
	struct ptw_trace *t;
	struct ptw_tp_model *m;
};

static struct fx model(struct ptw_tb *b)
{
	struct fx f;
	f.t = ptw_test_load_mem_or_fail(b->out.data, b->out.len);
	f.m = ptw_test_model_or_fail(f.t);
	ptw_tb_free(b);
	return f;
}

static void fx_free(struct fx *f)
{
	ptw_tp_model_free(f->m);
	ptw_trace_free(f->t);
}

#define T0 1000000000LL

Test(model, nested_slices_get_depth_parent_and_duration)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, 0, "outer");    /* T0+10 */
	ev(&b, 10, BEGIN, 0, "inner");    /* +20 */
	ev(&b, 5, INSTANT, 0, "mark");    /* +25 */
	ev(&b, 5, END, 0, NULL);          /* +30 closes inner */
	ev(&b, 10, END, 0, NULL);         /* +40 closes outer */
	ev(&b, 10, INSTANT, 0, "after");  /* +50 */
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_slices, 4);
	const struct ptw_tp_slice *o = ptw_test_find_slice(f.m, "outer", 0);
	const struct ptw_tp_slice *i = ptw_test_find_slice(f.m, "inner", 0);
	const struct ptw_tp_slice *k = ptw_test_find_slice(f.m, "mark", 0);
	const struct ptw_tp_slice *a = ptw_test_find_slice(f.m, "after", 0);
	cr_assert_eq(o->ts, T0 + 10);
	cr_assert_eq(o->dur, 30);
	cr_assert_eq(o->depth, 0);
	cr_assert_eq(o->parent_id, -1);
	cr_assert_eq(i->dur, 10);
	cr_assert_eq(i->depth, 1);
	cr_assert_eq(i->parent_id, o->id);
	cr_assert_eq(k->dur, 0);
	cr_assert(k->is_instant);
	cr_assert_eq(k->depth, 2);
	cr_assert_eq(k->parent_id, i->id);
	cr_assert_eq(a->depth, 0);
	cr_assert_eq(f.m->n_unmatched_ends, 0);
	fx_free(&f);
}

Test(model, end_closes_the_innermost_slice_with_its_name)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, 0, "a");
	ev(&b, 10, BEGIN, 0, "b");
	ev(&b, 10, END, 0, "a");    /* skips "b", closes "a" */
	ev(&b, 10, END, 0, "zzz");  /* matches nothing: ignored */
	struct fx f = model(&b);
	const struct ptw_tp_slice *a = ptw_test_find_slice(f.m, "a", 0);
	const struct ptw_tp_slice *bb = ptw_test_find_slice(f.m, "b", 0);
	cr_assert_eq(a->dur, 20);
	/* the next event after "a" ended finds "b" still open inside it:
	 * slice_tracker truncates "b" to the end of "a" */
	cr_assert_eq(bb->dur, 10);
	cr_assert_eq(f.m->misplaced_end_event, 1);
	cr_assert_eq(f.m->n_unmatched_ends, 2);
	cr_assert(strstr(f.m->unmatched_ends[0].msg, "still has open") != NULL);
	cr_assert_eq(f.m->unmatched_ends[0].event->ts, T0 + 30);
	cr_assert_eq(f.m->unmatched_ends[1].event->ts, T0 + 40);
	fx_free(&f);
}

Test(model, slices_follow_timestamps_then_file_order)
{
	struct ptw_tb b;
	base(&b);
	/* in the file: END at T0+50 (absolute, BOOTTIME) before BEGIN at
	 * T0+10; then BEGIN and END both at T0+60 */
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, (uint64_t)T0 + 50);
	ptw_tb_varint(&b, CLOCK_ID, 6);
	ptw_tb_seq(&b, 2, 2);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, END);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ev(&b, 10, BEGIN, 0, "x");  /* clock 64 untouched by the absolute */
	ev(&b, 50, BEGIN, 0, "zero");
	ev(&b, 0, END, 0, NULL);
	struct fx f = model(&b);
	const struct ptw_tp_slice *x = ptw_test_find_slice(f.m, "x", 0);
	const struct ptw_tp_slice *z = ptw_test_find_slice(f.m, "zero", 0);
	cr_assert_eq(x->ts, T0 + 10);
	cr_assert_eq(x->dur, 40);
	cr_assert_eq(z->ts, T0 + 60);
	cr_assert_eq(z->dur, 0);
	cr_assert_eq(z->depth, 0);
	fx_free(&f);
}

Test(model, tracks_have_separate_stacks)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, 2, "on1");
	ev(&b, 10, BEGIN, 4, "on2");
	ev(&b, 10, END, 2, NULL);
	ev(&b, 10, END, 4, NULL);
	struct fx f = model(&b);
	const struct ptw_tp_slice *s1 = ptw_test_find_slice(f.m, "on1", 0);
	const struct ptw_tp_slice *s2 = ptw_test_find_slice(f.m, "on2", 0);
	cr_assert_eq(s1->depth, 0);
	cr_assert_eq(s2->depth, 0);
	cr_assert_eq(s1->dur, 20);
	cr_assert_eq(s2->dur, 20);
	cr_assert_eq(s2->track_uuid, 4);
	fx_free(&f);
}

Test(model, flows_link_slices_in_time_order)
{
	struct ptw_tb b;
	base(&b);
	ev_open(&b, 10, BEGIN, 2, "send");
	ptw_tb_fixed64(&b, FLOWS, 77);
	done(&b);
	ev(&b, 5, END, 2, NULL);
	ev_open(&b, 10, INSTANT, 4, "hop");
	ptw_tb_fixed64(&b, FLOWS, 77);
	done(&b);
	ev_open(&b, 10, BEGIN, 4, "recv");
	ptw_tb_fixed64(&b, TFLOWS, 77);
	done(&b);
	ev(&b, 10, END, 4, NULL);
	ev_open(&b, 10, INSTANT, 2, "late");
	ptw_tb_fixed64(&b, TFLOWS, 77); /* ended already: ignored */
	done(&b);
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_flows, 2);
	uint32_t send = ptw_test_find_slice(f.m, "send", 0)->id;
	uint32_t hop = ptw_test_find_slice(f.m, "hop", 0)->id;
	uint32_t recv = ptw_test_find_slice(f.m, "recv", 0)->id;
	cr_assert_eq(f.m->flows[0].slice_out, send);
	cr_assert_eq(f.m->flows[0].slice_in, hop);
	cr_assert_eq(f.m->flows[1].slice_out, hop);
	cr_assert_eq(f.m->flows[1].slice_in, recv);
	cr_assert_eq(f.m->flows[1].flow_id, 77);
	fx_free(&f);
}

Test(model, counters_int_double_multiplier_incremental)
{
	struct ptw_tb b;
	base(&b);
	/* counter 5: unit_multiplier 1000, incremental, unit bytes */
	ptw_tb_begin_on(&b, 2, 0);
	ptw_tb_open(&b, 60);
	ptw_tb_varint(&b, 1, 5);
	ptw_tb_varint(&b, 5, 2);
	ptw_tb_string(&b, 2, "mem");
	ptw_tb_open(&b, 8);
	ptw_tb_varint(&b, 3, 3);     /* UNIT_SIZE_BYTES */
	ptw_tb_int64(&b, 4, 1000);   /* unit_multiplier */
	ptw_tb_varint(&b, 5, 1);     /* is_incremental */
	ptw_tb_close(&b);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ev_open(&b, 10, CNT, 3, NULL);
	ptw_tb_int64(&b, COUNTER, -5);
	done(&b);
	ev_open(&b, 10, CNT, 3, NULL);
	ptw_tb_double(&b, DCOUNTER, 2.5);
	done(&b);
	ev_open(&b, 10, CNT, 5, NULL);
	ptw_tb_int64(&b, COUNTER, 3);
	done(&b);
	ev_open(&b, 10, CNT, 5, NULL);
	ptw_tb_int64(&b, COUNTER, 4);
	done(&b);
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_counters, 4);
	cr_assert_float_eq(f.m->counters[0].value, -5.0, 1e-12);
	cr_assert_float_eq(f.m->counters[1].value, 2.5, 1e-12);
	cr_assert_float_eq(f.m->counters[2].value, 3000.0, 1e-9);
	cr_assert_float_eq(f.m->counters[3].value, 7000.0, 1e-9);
	cr_assert_eq(f.m->counters[3].ts, T0 + 40);
	const struct ptw_trace_track *mem = ptw_trace_find_track(f.t, 5);
	cr_assert_str_eq(mem->unit, "bytes");
	struct ptw_tp_track_owner o = ptw_tp_model_owner(f.t, 5);
	cr_assert_eq(o.owner, PTW_TP_OWNER_THREAD);
	cr_assert_eq(o.tid, 11);
	fx_free(&f);
}

Test(model, annotations_are_typed_and_end_args_merge)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_open(&b, 12);               /* interned_data */
	ptw_tb_open(&b, 3);                /* debug_annotation_names */
	ptw_tb_varint(&b, 1, 1);
	ptw_tb_string(&b, 2, "bytes");
	ptw_tb_close(&b);
	ptw_tb_open(&b, 29);               /* debug_annotation_string_values */
	ptw_tb_varint(&b, 1, 1);
	ptw_tb_bytes(&b, 2, "hello", 5);
	ptw_tb_close(&b);
	ptw_tb_close(&b);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, BEGIN);
	ptw_tb_string(&b, NAME, "io");
	ptw_tb_string(&b, CATEGORIES, "a");
	ptw_tb_string(&b, CATEGORIES, "b");
	ptw_tb_open(&b, ANNOT);
	ptw_tb_varint(&b, 1, 1);           /* name_iid -> "bytes" */
	ptw_tb_int64(&b, 4, -5);           /* int_value */
	ptw_tb_close(&b);
	ptw_tb_open(&b, ANNOT);
	ptw_tb_string(&b, 10, "s");
	ptw_tb_varint(&b, 17, 1);          /* string_value_iid */
	ptw_tb_close(&b);
	ptw_tb_open(&b, ANNOT);
	ptw_tb_string(&b, 10, "d.x");
	ptw_tb_double(&b, 5, 2.5);
	ptw_tb_close(&b);
	ptw_tb_open(&b, ANNOT);
	ptw_tb_string(&b, 10, "flag");
	ptw_tb_varint(&b, 2, 1);
	ptw_tb_close(&b);
	ptw_tb_open(&b, ANNOT);            /* no name: dropped */
	ptw_tb_varint(&b, 3, 9);
	ptw_tb_close(&b);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ev_open(&b, 10, END, 0, NULL);
	ptw_tb_open(&b, ANNOT);
	ptw_tb_string(&b, 10, "result");
	ptw_tb_varint(&b, 3, 7);           /* uint_value */
	ptw_tb_close(&b);
	done(&b);
	struct fx f = model(&b);
	const struct ptw_trace_event *e =
		ptw_test_find_event(f.t, BEGIN, "io", 0);
	cr_assert_not_null(e);
	cr_assert_str_eq(e->category, "a,b");
	cr_assert_eq(e->n_args, 4);
	const struct ptw_trace_arg *a = ptw_test_find_arg(e, "bytes");
	cr_assert_eq(a->type, PTW_TRACE_ARG_INT);
	cr_assert_eq(a->v.i, -5);
	a = ptw_test_find_arg(e, "s");
	cr_assert_eq(a->type, PTW_TRACE_ARG_STRING);
	cr_assert_str_eq(a->v.s, "hello");
	a = ptw_test_find_arg(e, "d.x");
	cr_assert_float_eq(a->v.d, 2.5, 0);
	a = ptw_test_find_arg(e, "flag");
	cr_assert_eq(a->type, PTW_TRACE_ARG_BOOL);
	cr_assert_eq(a->v.b, 1);
	cr_assert_eq(ptw_trace_get_stats(f.t)->track_event_parser_errors, 1);
	const struct ptw_tp_slice *s = ptw_test_find_slice(f.m, "io", 0);
	cr_assert_eq(s->n_args, 5);
	cr_assert_str_eq(s->args[4]->name, "result");
	cr_assert_eq(s->args[4]->v.u, 7);
	fx_free(&f);
}

Test(model, owners_follow_the_parent_chain)
{
	struct ptw_tb b;
	base(&b);
	/* 20: child of thread 2; 21: child of 20; 22: root; 23: child of
	 * process 1 */
	static const uint64_t uu[] = { 20, 21, 22, 23 };
	static const uint64_t par[] = { 2, 20, 0, 1 };
	for (int i = 0; i < 4; i++) {
		ptw_tb_begin(&b);
		ptw_tb_varint(&b, TS, 0);
		ptw_tb_seq(&b, 2, 2);
		ptw_tb_open(&b, 60);
		ptw_tb_varint(&b, 1, uu[i]);
		if (par[i])
			ptw_tb_varint(&b, 5, par[i]);
		ptw_tb_string(&b, 2, "t");
		ptw_tb_close(&b);
		ptw_tb_end(&b);
	}
	ev(&b, 10, INSTANT, 999, "undescribed");
	struct fx f = model(&b);
	struct ptw_tp_track_owner o = ptw_tp_model_owner(f.t, 21);
	cr_assert_eq(o.owner, PTW_TP_OWNER_THREAD);
	cr_assert_eq(o.tid, 11);
	o = ptw_tp_model_owner(f.t, 22);
	cr_assert_eq(o.owner, PTW_TP_OWNER_GLOBAL);
	o = ptw_tp_model_owner(f.t, 23);
	cr_assert_eq(o.owner, PTW_TP_OWNER_PROCESS);
	cr_assert_eq(o.pid, 10);
	o = ptw_tp_model_owner(f.t, 999);
	cr_assert_eq(o.owner, PTW_TP_OWNER_GLOBAL);
	cr_assert_eq(o.broken, 0);
	cr_assert_eq(f.m->n_slices, 1, "undescribed uuid: kept, global");
	cr_assert_eq(f.m->n_threads, 2);
	cr_assert_eq(f.m->n_processes, 1);
	fx_free(&f);
}

Test(model, needs_before_cleared_is_dropped_flagless_is_kept)
{
	/* perfetto-wire.md test 03 */
	struct ptw_tb b;
	ptw_tb_init(&b);
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, 100);
	ptw_tb_seq(&b, 9, 2);
	ptw_tb_interned(&b, 2, 1, "early");
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, NAME_IID, 1);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, 200);
	ptw_tb_seq(&b, 9, 0);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_string(&b, NAME, "flagless");
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, 300);
	ptw_tb_seq(&b, 9, 1);
	ptw_tb_interned(&b, 2, 1, "after");
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, NAME_IID, 1);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	struct fx f = model(&b);
	const struct ptw_trace_stats *s = ptw_trace_get_stats(f.t);
	cr_assert_eq(s->packet_skipped_seq_needs_incremental_state_invalid, 1);
	cr_assert_eq(s->interned_data_skipped_incremental_state_invalid, 1);
	cr_assert_eq(f.m->n_slices, 2);
	cr_assert_str_eq(f.m->slices[0].name, "flagless");
	cr_assert_eq(f.m->slices[0].ts, 200, "no clock: verbatim");
	cr_assert_str_eq(f.m->slices[1].name, "after");
	fx_free(&f);
}

Test(model, first_definition_wins_until_cleared)
{
	/* perfetto-wire.md test 19 */
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_interned(&b, 2, 1, "first");
	ptw_tb_end(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_interned(&b, 2, 1, "second");
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, NAME_IID, 1);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ptw_tb_start_seq(&b, 2, 64, 2, 2000000000); /* re-bases clock 64 */
	ptw_tb_begin_on(&b, 2, 5);
	ptw_tb_interned(&b, 2, 1, "third");
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, NAME_IID, 1);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_slices, 2);
	cr_assert_str_eq(f.m->slices[0].name, "first");
	cr_assert_eq(f.m->slices[0].ts, T0 + 20);
	cr_assert_str_eq(f.m->slices[1].name, "third");
	cr_assert_eq(f.m->slices[1].ts, 2000000005);
	cr_assert_eq(ptw_trace_get_stats(f.t)->checkpoints, 2);
	fx_free(&f);
}

Test(model, forward_reference_in_a_generation_resolves_like_tp)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, NAME_IID, 4);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_interned(&b, 2, 4, "later");
	ptw_tb_end(&b);
	struct fx f = model(&b);
	cr_assert_str_eq(f.m->slices[0].name, "later");
	cr_assert_eq(ptw_trace_get_stats(f.t)->interned_data_tokenizer_errors, 0);
	struct ptw_error err;
	cr_assert_eq(ptw_trace_check(f.t, 0, &err), PTW_ERR_FORMAT,
		     "the checker still rejects use before definition");
	fx_free(&f);
}

Test(model, unknown_category_reads_unknown_iid)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, 3, 8);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	/* several categories: unresolved ones are skipped */
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_interned(&b, 1, 1, "known");
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, 3, 9);
	ptw_tb_varint(&b, 3, 1);
	ptw_tb_string(&b, CATEGORIES, "lit");
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	struct fx f = model(&b);
	cr_assert_str_eq(f.m->slices[0].category, "unknown(8)");
	cr_assert_str_eq(f.m->slices[1].category, "known,lit");
	cr_assert_eq(ptw_trace_get_stats(f.t)->interned_data_tokenizer_errors, 2);
	fx_free(&f);
}

Test(model, microsecond_clock_counts_deltas_in_us)
{
	/* perfetto-wire.md test 12 */
	struct ptw_tb b;
	ptw_tb_init(&b);
	ptw_tb_begin(&b);
	ptw_tb_seq(&b, 2, 1);
	ptw_tb_defaults(&b, 64, 7);
	ptw_tb_open(&b, 6);
	ptw_tb_open(&b, 1);
	ptw_tb_varint(&b, 1, 6);
	ptw_tb_varint(&b, 2, 1000000000);
	ptw_tb_close(&b);
	ptw_tb_open(&b, 1);
	ptw_tb_varint(&b, 1, 64);
	ptw_tb_varint(&b, 2, 1000000);   /* in us */
	ptw_tb_varint(&b, 3, 1);
	ptw_tb_varint(&b, 4, 1000);      /* unit_multiplier_ns */
	ptw_tb_close(&b);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ev(&b, 1, BEGIN, 0, "us");
	ev(&b, 2, END, 0, NULL);
	struct fx f = model(&b);
	cr_assert_eq(f.m->slices[0].ts, T0 + 1000);
	cr_assert_eq(f.m->slices[0].dur, 2000);
	cr_assert_eq(f.m->slices[0].track_uuid, 7);
	fx_free(&f);
}

Test(model, cleared_without_defaults_falls_back_to_the_thread)
{
	/* perfetto-wire.md test 47 */
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin(&b);
	ptw_tb_seq(&b, 3, 1);
	ptw_tb_end(&b);
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, 0);
	ptw_tb_seq(&b, 3, 2);
	ptw_tb_thread_track(&b, 30, 10, 13, "t3");
	ptw_tb_end(&b);
	ptw_tb_begin(&b);
	ptw_tb_seq(&b, 3, 1);          /* CLEARED, no defaults */
	ptw_tb_end(&b);
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, (uint64_t)T0 + 77);
	ptw_tb_seq(&b, 3, 2);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_string(&b, NAME, "fallback");
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	struct fx f = model(&b);
	const struct ptw_tp_slice *s = ptw_test_find_slice(f.m, "fallback", 0);
	cr_assert_not_null(s);
	cr_assert_eq(s->track_uuid, 30);
	cr_assert_eq(s->ts, T0 + 77, "absolute on the trace default clock");
	fx_free(&f);
}

Test(model, misplaced_end_truncates_inner_slices)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, 0, "outer");   /* +10 */
	ev(&b, 10, BEGIN, 0, "inner");   /* +20 */
	ev(&b, 10, END, 0, "outer");     /* +30: closes outer, inner open */
	ev(&b, 10, INSTANT, 0, "later"); /* +40: truncates inner */
	struct fx f = model(&b);
	const struct ptw_tp_slice *in = ptw_test_find_slice(f.m, "inner", 0);
	cr_assert_eq(in->dur, 10);
	cr_assert_eq(f.m->misplaced_end_event, 1);
	cr_assert_eq(f.m->n_unmatched_ends, 1, "improper nesting reported");
	const struct ptw_tp_slice *l = ptw_test_find_slice(f.m, "later", 0);
	cr_assert_eq(l->depth, 0);
	fx_free(&f);
}

Test(model, broken_parent_drops_events)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 0);
	ptw_tb_open(&b, 60);
	ptw_tb_varint(&b, 1, 40);
	ptw_tb_varint(&b, 5, 41);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ev(&b, 10, INSTANT, 40, "lost");
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_slices, 0);
	cr_assert_eq(f.m->track_hierarchy_missing_uuid, 1);
	fx_free(&f);
}

/* A sequence with its own clock 64 (based at 'base'), thread track
 * 'track'. */
static void seq_with_clock(struct ptw_tb *b, uint32_t seq, uint64_t base_ts,
			   uint64_t track)
{
	ptw_tb_begin(b);
	ptw_tb_seq(b, seq, 1);
	ptw_tb_defaults(b, 64, track);
	ptw_tb_clock64(b, base_ts);
	ptw_tb_end(b);
}

static void ev_on(struct ptw_tb *b, uint32_t seq, uint64_t delta, int type,
		  const char *name)
{
	ptw_tb_begin(b);
	ptw_tb_varint(b, TS, delta);
	ptw_tb_seq(b, seq, 2);
	ptw_tb_open(b, EVENT);
	ptw_tb_varint(b, TYPE, (uint64_t)type);
	if (name)
		ptw_tb_string(b, NAME, name);
	ptw_tb_close(b);
	ptw_tb_end(b);
}

Test(model, sequence_clocks_are_independent)
{
	struct ptw_tb b;
	base(&b);
	seq_with_clock(&b, 3, 5000000000ull, 4);
	ev_on(&b, 2, 10, INSTANT, "s2a");   /* T0 + 10 */
	ev_on(&b, 3, 10, INSTANT, "s3a");   /* 5e9 + 10 */
	ev_on(&b, 2, 10, INSTANT, "s2b");   /* T0 + 20 */
	ev_on(&b, 3, 1, INSTANT, "s3b");    /* 5e9 + 11 */
	struct fx f = model(&b);
	cr_assert_eq(ptw_test_find_slice(f.m, "s2a", 0)->ts, T0 + 10);
	cr_assert_eq(ptw_test_find_slice(f.m, "s2b", 0)->ts, T0 + 20);
	cr_assert_eq(ptw_test_find_slice(f.m, "s3a", 0)->ts, 5000000010);
	cr_assert_eq(ptw_test_find_slice(f.m, "s3b", 0)->ts, 5000000011);
	cr_assert_eq(ptw_test_find_slice(f.m, "s3b", 0)->track_uuid, 4);
	fx_free(&f);
}

Test(model, clock_without_a_path_to_trace_time_drops_packets)
{
	/* perfetto-wire.md test 15: clock 64 related only to MONOTONIC
	 * while BOOTTIME is the trace clock */
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin(&b);
	ptw_tb_seq(&b, 6, 1);
	ptw_tb_defaults(&b, 64, 2);
	ptw_tb_open(&b, 6);
	ptw_tb_open(&b, 1);
	ptw_tb_varint(&b, 1, 3);  /* MONOTONIC */
	ptw_tb_varint(&b, 2, 100);
	ptw_tb_close(&b);
	ptw_tb_open(&b, 1);
	ptw_tb_varint(&b, 1, 64);
	ptw_tb_varint(&b, 2, 100);
	ptw_tb_varint(&b, 3, 1);
	ptw_tb_close(&b);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ev_on(&b, 6, 10, INSTANT, "lost");
	ev_on(&b, 2, 10, INSTANT, "kept");
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_slices, 1);
	cr_assert_str_eq(f.m->slices[0].name, "kept");
	cr_assert_eq(ptw_trace_get_stats(f.t)->clock_sync_failure_no_path, 1);
	fx_free(&f);
}

Test(model, no_clocks_means_verbatim_timestamps)
{
	/* perfetto-wire.md test 14 */
	struct ptw_tb b;
	ptw_tb_init(&b);
	ptw_tb_begin(&b);
	ptw_tb_seq(&b, 2, 1);
	ptw_tb_thread_track(&b, 2, 1, 1, "t");
	ptw_tb_end(&b);
	ptw_tb_begin_on(&b, 2, 123456789);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, TRACK, 2);
	ptw_tb_string(&b, NAME, "abs");
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	struct fx f = model(&b);
	cr_assert_eq(ptw_trace_clock(f.t), 0);
	cr_assert_eq(f.m->slices[0].ts, 123456789);
	fx_free(&f);
}

Test(model, extra_counters_sample_at_the_event_time)
{
	struct ptw_tb b;
	base(&b);
	ev_open(&b, 10, INSTANT, 0, "with_extra");
	ptw_tb_varint(&b, 31, 3);       /* extra_counter_track_uuids */
	ptw_tb_int64(&b, 12, 9);        /* extra_counter_values */
	done(&b);
	ev_open(&b, 10, INSTANT, 0, "too_many");
	ptw_tb_varint(&b, 31, 3);
	ptw_tb_int64(&b, 12, 1);
	ptw_tb_int64(&b, 12, 2);        /* more values than tracks */
	done(&b);
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_counters, 1);
	cr_assert_eq(f.m->counters[0].track_uuid, 3);
	cr_assert_eq(f.m->counters[0].ts, T0 + 10);
	cr_assert_float_eq(f.m->counters[0].value, 9.0, 0);
	cr_assert_eq(f.m->n_slices, 1, "the bad event is dropped whole");
	fx_free(&f);
}

Test(model, incremental_counter_restarts_after_a_checkpoint)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 0);
	ptw_tb_open(&b, 60);
	ptw_tb_varint(&b, 1, 8);
	ptw_tb_string(&b, 2, "inc");
	ptw_tb_open(&b, 8);
	ptw_tb_varint(&b, 5, 1);        /* is_incremental */
	ptw_tb_close(&b);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ev_open(&b, 10, CNT, 8, NULL);
	ptw_tb_int64(&b, COUNTER, 5);
	done(&b);
	ev_open(&b, 10, CNT, 8, NULL);
	ptw_tb_int64(&b, COUNTER, 5);
	done(&b);
	ptw_tb_begin(&b);
	ptw_tb_seq(&b, 2, 1);
	ptw_tb_defaults(&b, 64, 2);
	ptw_tb_clock64(&b, T0 + 100);
	ptw_tb_end(&b);
	ev_open(&b, 10, CNT, 8, NULL);
	ptw_tb_int64(&b, COUNTER, 5);
	done(&b);
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_counters, 3);
	cr_assert_float_eq(f.m->counters[0].value, 5.0, 0);
	cr_assert_float_eq(f.m->counters[1].value, 10.0, 0);
	cr_assert_float_eq(f.m->counters[2].value, 5.0, 0);
	cr_assert_eq(f.m->counters[2].ts, T0 + 110);
	fx_free(&f);
}

Test(model, deprecated_flow_ids_are_read_when_new_ones_are_absent)
{
	struct ptw_tb b;
	base(&b);
	ev_open(&b, 10, INSTANT, 2, "a");
	ptw_tb_varint(&b, 36, 5);       /* flow_ids_old */
	done(&b);
	ev_open(&b, 10, INSTANT, 4, "b");
	ptw_tb_varint(&b, 42, 5);       /* terminating_flow_ids_old */
	done(&b);
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_flows, 1);
	cr_assert_eq(f.m->flows[0].flow_id, 5);
	fx_free(&f);
}

/* ---- flows as flow_tracker.cc makes them --------------------------------- */

#define LEGACY 6      /* TrackEvent.legacy_event */
#define LE_PHASE 2
#define LE_UNSCOPED_ID 6
#define LE_GLOBAL_ID 11
#define LE_BIND_ID 8
#define LE_BIND_ENCLOSING 12
#define LE_FLOW_DIR 13
#define CATS 22

/* A typeless TrackEvent with legacy phase s/t/f (a v1 flow event);
 * id_field LE_UNSCOPED_ID (or another id field) with 'id'. */
static void v1(struct ptw_tb *b, uint64_t delta, uint64_t track, char ph,
	       uint32_t id_field, uint64_t id, int bp, const char *cat,
	       const char *name)
{
	ptw_tb_begin_on(b, 2, delta);
	ptw_tb_open(b, EVENT);
	ptw_tb_varint(b, TRACK, track);
	if (name)
		ptw_tb_string(b, NAME, name);
	if (cat)
		ptw_tb_string(b, CATS, cat);
	ptw_tb_open(b, LEGACY);
	ptw_tb_varint(b, LE_PHASE, (uint64_t)ph);
	ptw_tb_varint(b, id_field, id);
	if (bp)
		ptw_tb_varint(b, LE_BIND_ENCLOSING, 1);
	ptw_tb_close(b);
	done(b);
}

/* A BEGIN / INSTANT / END with a v2 flow (legacy bind_id, direction). */
static void v2(struct ptw_tb *b, uint64_t delta, int type, uint64_t track,
	       const char *name, uint64_t bind, int dir)
{
	ev_open(b, delta, type, track, name);
	ptw_tb_open(b, LEGACY);
	ptw_tb_varint(b, LE_BIND_ID, bind);
	if (dir >= 0)
		ptw_tb_varint(b, LE_FLOW_DIR, (uint64_t)dir);
	ptw_tb_close(b);
	done(b);
}

/* Whether the model has a flow row out -> in (by slice names). */
static int has_flow(const struct ptw_tp_model *m, const char *out,
		    const char *in)
{
	for (size_t i = 0; i < m->n_flows; i++)
		if (strcmp(m->slices[m->flows[i].slice_out].name, out) == 0 &&
		    strcmp(m->slices[m->flows[i].slice_in].name, in) == 0)
			return 1;
	return 0;
}

Test(model, v1_flow_events_begin_step_end_on_the_topmost_slice)
{
	/* track 2: S [10, 20], s at 12; track 4: T [30, ...) with t at 31,
	 * then ends at 40 and 42 with bp: End(close = false) leaves the id
	 * at T, so both link T (flow_tracker.cc 107-121) */
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, 2, "S");                      /* 10 */
	v1(&b, 2, 2, 's', LE_UNSCOPED_ID, 5, 0, "c", "f"); /* 12 */
	ev(&b, 8, END, 2, NULL);                        /* 20 */
	ev(&b, 10, BEGIN, 4, "T");                      /* 30 */
	v1(&b, 1, 4, 't', LE_UNSCOPED_ID, 5, 0, "c", "f"); /* 31 */
	ev(&b, 4, INSTANT, 4, "U");                     /* 35 */
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 5, 1, "c", "f"); /* 36: binds U */
	ev(&b, 4, BEGIN, 4, "V");                       /* 40 */
	v1(&b, 2, 4, 'f', LE_UNSCOPED_ID, 5, 1, "c", "f"); /* 42 */
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_flows, 3);
	cr_assert(has_flow(f.m, "S", "T"));
	cr_assert(has_flow(f.m, "T", "U"));
	cr_assert(has_flow(f.m, "T", "V"));
	/* the first v1 (id, cat, name) is flow id 0 (v1_id_counter_) */
	cr_assert_eq(f.m->flows[0].flow_id, 0);
	fx_free(&f);
}

Test(model, v1_ids_are_scoped_by_category_and_name)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, 2, "S");
	v1(&b, 1, 2, 's', LE_UNSCOPED_ID, 5, 0, "c", "f");
	ev(&b, 10, BEGIN, 4, "A");
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 5, 1, "other", "f");
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 5, 1, "c", "g");
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 5, 1, NULL, "f");
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 6, 1, "c", "f");
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 5, 1, "c", "f");
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_flows, 1);
	cr_assert(has_flow(f.m, "S", "A"));
	cr_assert_eq(f.m->flow_end_without_start, 4);
	fx_free(&f);
}

Test(model, v1_stats_duplicate_step_without_start_no_slice_invalid_id)
{
	struct ptw_tb b;
	base(&b);
	v1(&b, 5, 2, 's', LE_UNSCOPED_ID, 1, 0, "c", "f"); /* no slice */
	ev(&b, 5, BEGIN, 2, "S1");
	v1(&b, 1, 2, 's', LE_UNSCOPED_ID, 1, 0, "c", "f");
	v1(&b, 1, 2, 's', LE_UNSCOPED_ID, 1, 0, "c", "f"); /* duplicate */
	v1(&b, 1, 2, 't', LE_UNSCOPED_ID, 2, 0, "c", "f"); /* no start */
	v1(&b, 1, 2, 's', LE_GLOBAL_ID, 3, 0, "c", "f");   /* not a flow id */
	ev(&b, 5, BEGIN, 4, "D");
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 1, 1, "c", "f");
	struct fx f = model(&b);
	cr_assert_eq(f.m->flow_no_enclosing_slice, 1);
	cr_assert_eq(f.m->flow_duplicate_id, 1);
	cr_assert_eq(f.m->flow_step_without_start, 1);
	cr_assert_eq(f.m->flow_invalid_id, 1);
	cr_assert_eq(f.m->n_flows, 1);
	cr_assert(has_flow(f.m, "S1", "D"));
	fx_free(&f);
}

Test(model, v1_end_without_bind_waits_for_the_next_slice_on_its_track)
{
	/* pending (flow_tracker.cc 94-96), linked when the next slice is
	 * pushed on the track (140-152), before the slice's own flows; the
	 * slice open when the f came is not it. An inactive id links slice
	 * 0 (operator[] inserts a value-initialised SliceId) and stays
	 * active there. */
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, INSTANT, 4, "first");                   /* slice 0 */
	ev(&b, 1, BEGIN, 2, "S");
	v1(&b, 1, 2, 's', LE_UNSCOPED_ID, 1, 0, "c", "f");
	ev(&b, 1, BEGIN, 4, "P");
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 1, 0, "c", "f");
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 9, 0, "c", "f"); /* inactive */
	ev(&b, 1, INSTANT, 4, "N");
	ev(&b, 1, INSTANT, 4, "N2");
	ev(&b, 1, BEGIN, 2, "S2");
	v1(&b, 1, 2, 's', LE_UNSCOPED_ID, 9, 0, "c", "f"); /* duplicate */
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_flows, 2);
	cr_assert(has_flow(f.m, "S", "N"));
	cr_assert(has_flow(f.m, "first", "N"));
	cr_assert_eq(f.m->flow_duplicate_id, 1);
	fx_free(&f);
}

Test(model, flows_go_from_the_earlier_slice_whatever_the_reading_order)
{
	/* End binds the enclosing E (began at 10) after the start S (at
	 * 20) was read: the row is E -> S (flow_tracker.cc 113-116). */
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, 4, "E");
	ev(&b, 10, BEGIN, 2, "S");
	v1(&b, 1, 2, 's', LE_UNSCOPED_ID, 1, 0, "c", "f");
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 1, 1, "c", "f");
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_flows, 1);
	cr_assert(has_flow(f.m, "E", "S"));
	fx_free(&f);
}

Test(model, v2_bind_ids_out_inout_in_and_without_direction)
{
	struct ptw_tb b;
	base(&b);
	v2(&b, 10, BEGIN, 2, "a", 3, 2);    /* out: Begin */
	ev(&b, 1, END, 2, NULL);
	v2(&b, 10, INSTANT, 4, "b", 3, 3);  /* in + out: Step */
	v2(&b, 10, BEGIN, 2, "c", 3, 1);    /* in: End, id stays at b */
	v2(&b, 10, INSTANT, 4, "d", 3, 1);
	v2(&b, 10, INSTANT, 4, "e", 4, -1); /* no direction */
	v2(&b, 10, INSTANT, 4, "g", 4, 0);  /* FLOW_UNSPECIFIED */
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_flows, 3);
	cr_assert(has_flow(f.m, "a", "b"));
	cr_assert(has_flow(f.m, "b", "c"));
	cr_assert(has_flow(f.m, "b", "d"));
	cr_assert_eq(f.m->flow_without_direction, 2);
	fx_free(&f);
}

Test(model, v1_flow_ids_share_the_space_of_bind_ids_and_flow_ids)
{
	/* the first v1 flow gets id 0; a bind_id 0 in and a flow_ids 0 on
	 * later slices continue it */
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, 2, "S");
	v1(&b, 1, 2, 's', LE_UNSCOPED_ID, 777, 0, "c", "f");
	v2(&b, 10, INSTANT, 4, "b", 0, 1);
	ev_open(&b, 10, INSTANT, 4, "c");
	ptw_tb_fixed64(&b, TFLOWS, 0);
	done(&b);
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_flows, 2);
	cr_assert(has_flow(f.m, "S", "b"));
	cr_assert(has_flow(f.m, "S", "c"));
	fx_free(&f);
}

Test(model, the_topmost_slice_may_have_ended_until_a_slice_event_pops_it)
{
	/* an instant stays on the stack (dur 0) until a later slice event:
	 * s after it binds it (GetTopmostSliceOnTrack reads the stack) */
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, 2, "P");
	ev(&b, 5, INSTANT, 2, "mark");
	v1(&b, 5, 2, 's', LE_UNSCOPED_ID, 1, 0, "c", "f");
	ev(&b, 5, BEGIN, 4, "D");
	v1(&b, 1, 4, 'f', LE_UNSCOPED_ID, 1, 1, "c", "f");
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_flows, 1);
	cr_assert(has_flow(f.m, "mark", "D"));
	fx_free(&f);
}

/* A typeless event whose legacy_event has phase 'X' and duration_us (as
 * ptw-convert writes a Chrome X) is one complete slice
 * (ParseThreadCompleteEvent, SliceTracker::Scoped): it stays on its
 * track's stack until an event at or after its end; one that starts in
 * it and ends after it is dropped (slice_drop_overlapping_complete_event);
 * off a thread it is dropped; a negative duration is a parser error. */
static void xev(struct ptw_tb *b, uint64_t delta, uint64_t track,
		const char *name, int64_t dur_us)
{
	ptw_tb_begin_on(b, 2, delta);
	ptw_tb_open(b, EVENT);
	if (track)
		ptw_tb_varint(b, TRACK, track);
	ptw_tb_string(b, NAME, name);
	ptw_tb_open(b, 6);                 /* legacy_event */
	ptw_tb_varint(b, 2, 'X');          /* phase */
	ptw_tb_varint(b, 3, (uint64_t)dur_us); /* duration_us */
	ptw_tb_close(b);
	done(b);
}

Test(model, legacy_complete_events_are_scoped_slices)
{
	struct ptw_tb b;
	base(&b);
	xev(&b, 1000, 0, "outer", 5);      /* T0+1000, ends +6000 */
	xev(&b, 1000, 0, "inner", 1);      /* +2000, ends +3000 */
	ev(&b, 1000, INSTANT, 0, "mark");  /* +3000: inner popped */
	xev(&b, 1000, 0, "overlap", 3);    /* +4000..7000: dropped */
	ev(&b, 2000, INSTANT, 0, "after"); /* +6000: outer popped */
	xev(&b, 0, 1, "on_process", 1);    /* no thread: dropped */
	xev(&b, 0, 0, "negative", -1);     /* parser error: dropped */
	struct fx f = model(&b);
	cr_assert_eq(f.m->n_slices, 4);
	const struct ptw_tp_slice *o = ptw_test_find_slice(f.m, "outer", 0);
	const struct ptw_tp_slice *i = ptw_test_find_slice(f.m, "inner", 0);
	const struct ptw_tp_slice *k = ptw_test_find_slice(f.m, "mark", 0);
	const struct ptw_tp_slice *a = ptw_test_find_slice(f.m, "after", 0);
	cr_assert_eq(o->ts, T0 + 1000);
	cr_assert_eq(o->dur, 5000);
	cr_assert_eq(o->depth, 0);
	cr_assert(!o->is_instant);
	cr_assert_eq(i->dur, 1000);
	cr_assert_eq(i->depth, 1);
	cr_assert_eq(i->parent_id, o->id);
	cr_assert_eq(k->depth, 1, "inner ended at the instant's ts");
	cr_assert_eq(k->parent_id, o->id);
	cr_assert_eq(a->depth, 0, "outer ended at the instant's ts");
	cr_assert_eq(f.m->slice_drop_overlapping_complete_event, 1);
	cr_assert_eq(f.m->n_unmatched_ends, 1, "the X off a thread");
	cr_assert_eq(ptw_trace_get_stats(f.t)->track_event_parser_errors, 1);
	size_t n;
	const struct ptw_trace_event *e = ptw_trace_events(f.t, &n);
	cr_assert_eq(e[0].type, PTW_TRACE_COMPLETE);
	cr_assert_eq(e[0].dur, 5000);
	cr_assert_str_eq(ptw_trace_event_type_name(e[0].type), "COMPLETE");
	fx_free(&f);
}
