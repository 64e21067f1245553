/* test_tracer_forms.c - the run-time name forms of every macro kind in C:
 * _DYN and _FMT for async slices, flows and counters, _DYN_ARGS for
 * slices, instants, scopes and async slices. Each is decoded with the
 * reader's trace_processor model and compared with what was logged (and,
 * with $PTW_SHARED_DIR/tp at hand, read by trace_processor without an
 * error stat); with the category off, none evaluates its arguments.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"

static int evaluated;

static int64_t count_eval(int64_t v)
{
	evaluated++;
	return v;
}

static const char *name_eval(const char *s)
{
	evaluated++;
	return s;
}

/* Every new form once, in category "forms", with names made at run time
 * from 'tag' (argument values and names counted by count_eval). */
static void log_forms(const char *tag)
{
	char n[64];
#define NAME(fmt) (snprintf(n, sizeof(n), fmt, tag), name_eval(n))
	PTW_BEGIN_DYN_ARGS("forms", NAME("bda %s"),
			   PTW_ARG_I64("v", count_eval(1)));
	PTW_END("forms");
	PTW_INSTANT_DYN_ARGS("forms", NAME("ida %s"),
			     PTW_ARG_STR("s", "text"),
			     PTW_ARG_I64("v", count_eval(2)));
	{
		PTW_SCOPE_DYN_ARGS("forms", NAME("sda %s"),
				   PTW_ARG_I64("v", count_eval(3)));
	}
	PTW_ASYNC_BEGIN_DYN("forms", NAME("adyn %s"), count_eval(10));
	PTW_ASYNC_END("forms", 10);
	PTW_ASYNC_BEGIN_FMT("forms", count_eval(11), "afmt %s %d", tag,
			    (int)count_eval(11));
	PTW_ASYNC_END("forms", 11);
	PTW_ASYNC_BEGIN_DYN_ARGS("forms", NAME("ada %s"), count_eval(12),
				 PTW_ARG_I64("v", count_eval(4)));
	PTW_ASYNC_END("forms", 12);
	PTW_FLOW_START_DYN("forms", NAME("fsd %s"), count_eval(20));
	PTW_FLOW_STEP_FMT("forms", 20, "fsf %s", tag);
	PTW_FLOW_END_DYN("forms", NAME("fed %s"), 20);
	PTW_FLOW_START_FMT("forms", 21, "f2s %s", tag);
	PTW_FLOW_STEP_DYN("forms", NAME("f2t %s"), 21);
	PTW_FLOW_END_FMT("forms", 21, "f2e %s", tag);
	PTW_COUNTER_INT_FMT("forms", count_eval(-5), "ctr %s", tag);
	PTW_COUNTER_DOUBLE_FMT("forms", 2.5, "dctr %s", NAME("%s"));
#undef NAME
}

static const struct ptw_tp_slice *one(const struct ptw_tp_model *m,
				      const char *name)
{
	const struct ptw_tp_slice *s = ptw_test_find_slice(m, name, 0);
	cr_assert_not_null(s, "no slice '%s'", name);
	cr_assert_null(ptw_test_find_slice(m, name, 1), "two '%s'", name);
	return s;
}

static int64_t arg_i(const struct ptw_tp_slice *s, const char *name)
{
	for (uint32_t a = 0; a < s->n_args; a++)
		if (s->args[a]->name && !strcmp(s->args[a]->name, name))
			return s->args[a]->v.i;
	cr_assert_fail("%s has no argument %s", s->name, name);
	return 0;
}

/* The value of the only sample on the counter track named 'name'. */
static double counter(const struct ptw_trace *t, const struct ptw_tp_model *m,
		      const char *name)
{
	size_t nt;
	const struct ptw_trace_track *tr = ptw_trace_tracks(t, &nt);
	int found = 0;
	double v = 0;
	for (size_t k = 0; k < m->n_counters; k++)
		for (size_t j = 0; j < nt; j++)
			if (tr[j].uuid == m->counters[k].track_uuid &&
			    tr[j].name && !strcmp(tr[j].name, name)) {
				found++;
				v = m->counters[k].value;
			}
	cr_assert_eq(found, 1, "%d samples on '%s'", found, name);
	return v;
}

/* Is there a flow 'id' from the slice named 'from' to the one named
 * 'to'? */
static int flow(const struct ptw_tp_model *m, uint64_t id, const char *from,
		const char *to)
{
	for (size_t i = 0; i < m->n_flows; i++) {
		const struct ptw_tp_flow *f = &m->flows[i];
		if (f->flow_id == id &&
		    !strcmp(m->slices[f->slice_out].name, from) &&
		    !strcmp(m->slices[f->slice_in].name, to))
			return 1;
	}
	return 0;
}

/* trace_processor (when at hand): want_slices ended slices, no error or
 * data-loss stat. */
static void tp_no_errors(const char *path, size_t want_slices)
{
	char got[256], want[64];
	if (ptw_test_tp_rows(path,
			     "select (select count(*) from slice where dur >= 0)"
			     " || ' ' || (select count(*) from stats where "
			     "value > 0 and severity in ('error', 'data_loss'))",
			     got, sizeof(got)) != 0)
		return;
	snprintf(want, sizeof(want), "%zu 0;", want_slices);
	cr_assert_str_eq(got, want, "trace_processor: slices, errors");
}

Test(tracer_forms, run_time_names_with_args_ids_and_formats)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "forms");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	log_forms("x");
	ptw_set_category_enabled("forms", 0);
	log_forms("y"); /* each site learns that the category is off */
	evaluated = 0;
	log_forms("y");
	/* Off after being on, the BEGINs still call the library (to note
	 * the skipped level): PTW_BEGIN_DYN_ARGS and PTW_SCOPE_DYN_ARGS
	 * evaluate their name and argument; nothing else does. */
	cr_assert_eq(evaluated, 4, "%d names or values evaluated while off",
		     evaluated);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.invalid, 0);

	/* Off from the start: nothing is evaluated once the sites know. */
	char path2[256];
	ptw_test_tmp_path(path2, sizeof(path2), "forms-off");
	cfg.output_path = path2;
	cfg.disabled_categories = "forms";
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	log_forms("w");
	evaluated = 0;
	log_forms("w");
	cr_assert_eq(evaluated, 0, "%d names or values evaluated while off",
		     evaluated);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st2;
	cr_assert_eq(ptw_get_stats(&st2), 0);
	cr_assert_eq(st2.events, 0);
	cr_assert_eq(st2.invalid, 0);
	unlink(path2);

	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	struct ptw_tp_model *m = ptw_test_model_or_fail(t);
	const struct ptw_tp_slice *s = one(m, "bda x");
	cr_assert(s->dur >= 0 && !s->is_instant && arg_i(s, "v") == 1);
	s = one(m, "ida x");
	cr_assert(s->is_instant && arg_i(s, "v") == 2);
	s = one(m, "sda x");
	cr_assert(s->dur >= 0 && arg_i(s, "v") == 3);
	/* async slices sit on their own tracks under the process */
	s = one(m, "adyn x");
	cr_assert(s->dur >= 0 && s->owner.tid == 0);
	s = one(m, "afmt x 11");
	cr_assert(s->dur >= 0 && s->owner.tid == 0);
	s = one(m, "ada x");
	cr_assert(s->dur >= 0 && arg_i(s, "v") == 4);
	cr_assert(flow(m, 20, "fsd x", "fsf x"));
	cr_assert(flow(m, 20, "fsf x", "fed x"));
	cr_assert(flow(m, 21, "f2s x", "f2t x"));
	cr_assert(flow(m, 21, "f2t x", "f2e x"));
	cr_assert_eq(m->n_flows, 4);
	cr_assert_eq(counter(t, m, "ctr x"), -5.0);
	cr_assert_eq(counter(t, m, "dctr x"), 2.5);
	for (size_t i = 0; i < m->n_slices; i++)
		cr_assert(!strstr(m->slices[i].name, " y"),
			  "'%s' logged while off", m->slices[i].name);
	size_t n_slices = m->n_slices;
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	tp_no_errors(path, n_slices);
	unlink(path);
}
