/* test_tracer_fastpath.c - the backend's own ways for one-slot BEGIN, END
 * and INSTANT records (prepared runs, ptw_seq_simple) write what its
 * general path writes: the same workload traced both ways
 * (cfg.general_path_only) decodes to the same events (kind, name, category,
 * track, arguments; timestamps differ run to run, so they are checked for
 * order only) and the same stats. The writer's bytes of the prepared way
 * are checked exactly in test_writer_prep.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "reader/trace_read.h"
#include "lib/tracer/tracer_internal.h"

/* 80 slices of their own names, more than the backend keeps prepared
 * per thread (64): its table evicts and refills. */
#define SITE(n)                                                              \
	case n:                                                              \
		PTW_BEGIN("site", "slice " #n);                              \
		PTW_END("site");                                             \
		break;
#define SITE10(t)                                                            \
	SITE(t##0) SITE(t##1) SITE(t##2) SITE(t##3) SITE(t##4) SITE(t##5)    \
	SITE(t##6) SITE(t##7) SITE(t##8) SITE(t##9)

static void many_sites(int i)
{
	switch (i % 80) {
		SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
		SITE(8) SITE(9) SITE10(1) SITE10(2) SITE10(3) SITE10(4)
		SITE10(5) SITE10(6) SITE10(7)
	}
}

static void workload(void)
{
	for (int i = 0; i < 3000; i++) {
		many_sites(i);
		many_sites(i * 7 + 3);
		PTW_BEGIN("a", "outer");
		PTW_INSTANT("b", "tick");
		PTW_BEGIN("", "no category");
		PTW_INSTANT_ARGS("b", "with arg", PTW_ARG_I64("i", i));
		PTW_END();
		if (i % 7 == 0)
			PTW_COUNTER_INT("c", "count", i);
		PTW_END("a");
		if (i % 100 == 0)
			PTW_END(); /* no open slice: invalid */
		if (i % 500 == 0)
			ptw_flush(); /* drains mid-way */
	}
}

struct run {
	struct ptw_trace *t;
	struct ptw_stats st;
};

static uint32_t g_machine_id; /* the runs' machine_id (0: none) */

static struct run trace_it(int general_only, const char *tag)
{
	char path[128];
	snprintf(path, sizeof(path), "/tmp/ptw_test_fastpath_%s_%d.pftrace",
		 tag, (int)getpid());
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.general_path_only = general_only;
	cfg.machine_id = g_machine_id;
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	workload();
	cr_assert_eq(ptw_stop(), 0);
	struct run r;
	cr_assert_eq(ptw_get_stats(&r.st), 0);
	r.t = ptw_trace_load_file(path, NULL, &err);
	cr_assert_not_null(r.t, "%s", err.msg);
	unlink(path);
	return r;
}

static int str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void same_as_the_general_path(void)
{
	struct run g = trace_it(1, "general"), f = trace_it(0, "fast");
	cr_assert_eq(f.st.events, g.st.events);
	cr_assert_eq(f.st.invalid, g.st.invalid);
	cr_assert_eq(f.st.invalid, 30);
	size_t ng, nf;
	const struct ptw_trace_event *eg = ptw_trace_events(g.t, &ng);
	const struct ptw_trace_event *ef = ptw_trace_events(f.t, &nf);
	cr_assert_eq(nf, ng);
	int64_t last = 0;
	for (size_t i = 0; i < ng; i++) {
		cr_assert_eq(ef[i].type, eg[i].type, "event %zu", i);
		cr_assert(str_eq(ef[i].name, eg[i].name), "event %zu name", i);
		cr_assert(str_eq(ef[i].category, eg[i].category),
			  "event %zu category", i);
		cr_assert_eq(ef[i].track_uuid, eg[i].track_uuid, "event %zu", i);
		cr_assert_eq(ef[i].track_explicit, eg[i].track_explicit);
		cr_assert_eq(ef[i].n_args, eg[i].n_args, "event %zu", i);
		cr_assert_eq(ef[i].counter_int, eg[i].counter_int);
		if (ef[i].seq_id == ef[nf - 1].seq_id) {
			cr_assert_geq(ef[i].ts, last);
			last = ef[i].ts;
		}
	}
	ptw_trace_free(g.t);
	ptw_trace_free(f.t);
}

Test(tracer_fastpath, same_events_and_stats_as_the_general_path)
{
	same_as_the_general_path();
}

/* machine_id in the prepared packet tails and the sequences' headers. */
Test(tracer_fastpath, same_events_with_a_machine_id)
{
	g_machine_id = 4000000000u;
	same_as_the_general_path();
	g_machine_id = 0;
}
