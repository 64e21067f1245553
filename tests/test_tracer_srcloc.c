/* test_tracer_srcloc.c - cfg.source_locations: every macro form that
 * begins a slice or writes an instant, async BEGIN or flow event carries
 * its call site, which trace_processor shows as the slice's source.*
 * args (file, function, line); through both backend paths and the flight
 * recorder's snapshot; none without the option.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "support/tracer_run.h"

/* The line of each slice's macro, by its name. */
struct site_line {
	const char *name;
	int line;
};
static struct site_line lines[16];
static size_t n_lines;
#define AT(nm) (lines[n_lines].name = (nm), lines[n_lines++].line = __LINE__)

static void traced(void)
{
	n_lines = 0;
	PTW_BEGIN("sl", "begin"); AT("begin");
	PTW_END("sl");
	PTW_INSTANT("sl", "instant"); AT("instant");
	PTW_INSTANT_ARGS("sl", "instant_args", PTW_ARG_I64("v", 1)); AT("instant_args");
	{
		PTW_SCOPE("sl", "scope"); AT("scope");
		PTW_SCOPE_ARGS("sl", "scope_args", PTW_ARG_I64("v", 2)); AT("scope_args");
		PTW_SCOPE_DYN("sl", "scope_dyn"); AT("scope_dyn");
		PTW_SCOPE_FMT("sl", "scope_%s", "fmt"); AT("scope_fmt");
	}
	PTW_BEGIN_ARGS("sl", "begin_args", PTW_ARG_I64("v", 3)); AT("begin_args");
	PTW_END("sl");
	PTW_INSTANT_DYN("sl", "instant_dyn"); AT("instant_dyn");
	PTW_ASYNC_BEGIN("sl", "async", 7); AT("async");
	PTW_ASYNC_END("sl", 7);
	PTW_FLOW_START("sl", "flow_start", 9); AT("flow_start");
	PTW_FLOW_END_FMT("sl", 9, "flow_%s", "end"); AT("flow_end");
}

/* Decoded with protobuf-c (also without trace_processor): with the
 * option, one event per site carries a source_location_iid, and every
 * interned SourceLocation is one of traced()'s sites. */
static void expect_decoded(const char *path, int on)
{
	Perfetto__Protos__Trace *t = ptw_test_unpack_or_fail(path);
	size_t with_iid = 0, locs = 0;
	for (size_t i = 0; i < t->n_packet; i++) {
		const Perfetto__Protos__TracePacket *pk = t->packet[i];
		for (size_t j = 0; pk->interned_data &&
				   j < pk->interned_data->n_source_locations; j++) {
			const Perfetto__Protos__SourceLocation *l =
				pk->interned_data->source_locations[j];
			cr_assert_str_eq(l->file_name, __FILE__);
			cr_assert_str_eq(l->function_name, "traced");
			int known = 0;
			for (size_t k = 0; k < n_lines; k++)
				known |= lines[k].line == (int)l->line_number;
			cr_assert(known, "line %u is no site", l->line_number);
			locs++;
		}
		if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT &&
		    pk->track_event->source_location_field_case ==
			    PERFETTO__PROTOS__TRACK_EVENT__SOURCE_LOCATION_FIELD_SOURCE_LOCATION_IID)
			with_iid++;
	}
	perfetto__protos__trace__free_unpacked(t, NULL);
	cr_assert_eq(with_iid, on ? n_lines : 0);
	cr_assert_eq(locs, on ? n_lines : 0);
}

/* file:function:line of every slice, in name order, as trace_processor
 * shows them (NULL args: "[NULL]"). */
static void expect_sites(const char *path, int on)
{
	expect_decoded(path, on);
	if (!ptw_test_tp_shell())
		return;
	/* sort the expectations by name, as the query does */
	struct site_line s[16];
	memcpy(s, lines, sizeof(s));
	for (size_t i = 1; i < n_lines; i++)
		for (size_t j = i; j > 0 && strcmp(s[j - 1].name, s[j].name) > 0; j--) {
			struct site_line x = s[j];
			s[j] = s[j - 1];
			s[j - 1] = x;
		}
	char want[4096] = "";
	size_t o = 0;
	for (size_t i = 0; i < n_lines; i++) {
		if (on)
			o += (size_t)snprintf(want + o, sizeof(want) - o,
					      "\"%s\",\"%s\",\"traced\",%d\n",
					      s[i].name, __FILE__, s[i].line);
		else
			o += (size_t)snprintf(want + o, sizeof(want) - o,
					      "\"%s\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n",
					      s[i].name);
	}
	ptw_test_tp_expect_rows(
		path,
		"select name, extract_arg(arg_set_id, 'source.file_name'), "
		"extract_arg(arg_set_id, 'source.function_name'), "
		"extract_arg(arg_set_id, 'source.line_number') from slice "
		"where category = 'sl' order by name",
		want);
	ptw_test_tp_expect_no_error_stats(path);
}

static void run(int on, int general, int ring)
{
	struct ptw_config cfg = {0};
	cfg.source_locations = on;
	cfg.general_path_only = general;
	(void)ptw_test_traced_session(cfg, ring, "srcl", traced, expect_sites,
				      on);
}

Test(tracer_srcloc, every_form_carries_its_call_site) { run(1, 0, 0); }
Test(tracer_srcloc, by_the_general_path) { run(1, 1, 0); }
Test(tracer_srcloc, in_a_flight_recorder_snapshot) { run(1, 0, 1); }
Test(tracer_srcloc, none_without_the_option) { run(0, 0, 0); }

/* Many events of a few sites: the backend's prepared ways (the batches
 * and their tight run) write the call site on every one, as its general
 * path does; checkpoints in between make it intern them again. */
static int loop_line_begin, loop_line_instant;
static void loop(void)
{
	for (int i = 0; i < 20000; i++) {
		PTW_BEGIN("loop", "pair"); loop_line_begin = __LINE__;
		PTW_END("loop");
		if (i % 100 == 0) {
			PTW_INSTANT("loop", "mark"); loop_line_instant = __LINE__;
		}
	}
}

static void expect_loop(const char *path, int unused)
{
	if (!ptw_test_tp_shell())
		return;
	char want[128];
	snprintf(want, sizeof(want), "\"mark\",200,%d\n\"pair\",20000,%d\n",
		 loop_line_instant, loop_line_begin);
	ptw_test_tp_expect_rows(
		path,
		"select name, count(*), "
		"max(extract_arg(arg_set_id, 'source.line_number')) from slice "
		"where category = 'loop' and "
		"extract_arg(arg_set_id, 'source.function_name') = 'loop' "
		"group by name order by name",
		want);
	ptw_test_tp_expect_no_error_stats(path);
}

static void loop_run(int general, int ring)
{
	struct ptw_writer_options wopt = {.checkpoint_packets = 1000};
	struct ptw_config cfg = {0};
	cfg.source_locations = 1;
	cfg.general_path_only = general;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	cfg.writer = &wopt;
	cr_assert_eq(ptw_test_traced_session(cfg, ring, "srclloop", loop,
					     expect_loop, 0),
		     40200);
}

Test(tracer_srcloc, the_prepared_ways_write_it_on_every_event)
{
	loop_run(0, 0);
}
Test(tracer_srcloc, the_general_path_writes_the_same) { loop_run(1, 0); }
Test(tracer_srcloc, the_flight_recorder_writes_the_same) { loop_run(0, 1); }
