// test_tracer_cxx.cc - ptw from C++: every tracer macro and the writer API
// used from several std::threads, the trace decoded and compared with what
// was traced (and, when PTW_SHARED_DIR has it, read by trace_processor).
// SPDX-License-Identifier: Apache-2.0
#include <criterion/criterion.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "ptw/clock_stream.h"
#include "ptw/error.h"
#include "ptw/tracer.h"
#include "ptw/version.h"
#include "ptw/writer.h"

extern "C" {
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "support/tp_stack.h"
}

namespace {

const int kThreads = 4;

// Two scopes from one macro expansion (and so on one line).
#define TWO_SCOPES(a, b) PTW_SCOPE("cxx", a); PTW_SCOPE("cxx", b)

void thrower(int i)
{
	PTW_SCOPE("cxx", "throws");
	if (i >= 0)
		throw std::runtime_error("unwinds");
}

void traced_thread(int i)
{
	std::string tname = "worker " + std::to_string(i);
	ptw_set_thread_name(tname.c_str());
	std::string dyn = "dyn " + std::to_string(i);
	std::string sval = "value " + std::to_string(i);
	int local = 0;
	{
		PTW_SCOPE("cxx", "outer");
		PTW_SCOPE_ARGS("cxx", "scope_args", PTW_ARG_I64("i", -i),
			       PTW_ARG_U64("u", 7u + (unsigned)i),
			       PTW_ARG_DBL("d", 1.5), PTW_ARG_BOOL("b", true),
			       PTW_ARG_STR("s", sval.c_str()),
			       PTW_ARG_PTR("p", &local));
		PTW_SCOPE_DYN("cxx", dyn.c_str());
		PTW_SCOPE_FMT("cxx", "fmt %d/%s", i, "x");
		TWO_SCOPES("two_a", "two_b");
		PTW_SCOPE("cxx", "line_a"); PTW_SCOPE("cxx", "line_b");
		if (i >= 0)
			PTW_SCOPE("cxx", "if_body"); // a declaration as if body
		switch (i) {
		case 0:
		default:
			PTW_SCOPE("cxx", "after_case");
			break;
		}
		PTW_BEGIN("cxx", "begin_end");
		PTW_END("cxx");
		PTW_BEGIN_ARGS("cxx", "begin_args", PTW_ARG_I64("n", i));
		PTW_END_ARGS("cxx", PTW_ARG_STR("end", "yes"));
		PTW_BEGIN_DYN("cxx", dyn.c_str());
		PTW_END();
		PTW_BEGIN_FMT("cxx", "bfmt %d", i);
		PTW_END("cxx");
		PTW_INSTANT("cxx", "instant");
		PTW_INSTANT_ARGS("cxx", "instant_args", PTW_ARG_I64("k", 42));
		PTW_INSTANT_DYN("cxx", sval.c_str());
		PTW_INSTANT_FMT("cxx", "ifmt %s", tname.c_str());
		PTW_COUNTER_INT("cxx", "ctr_int", 10 + i);
		PTW_COUNTER_DOUBLE("cxx", "ctr_dbl", 0.5 + i);
		PTW_COUNTER_INT_DYN("cxx", ("dctr " + std::to_string(i)).c_str(), i);
		PTW_COUNTER_DOUBLE_DYN("cxx", "dctr_shared", 2.5);
		uint64_t id = 1000u + (uint64_t)i;
		PTW_ASYNC_BEGIN("cxx", "async", id);
		PTW_ASYNC_END("cxx", id);
		PTW_ASYNC_BEGIN_ARGS("cxx", "async_args", id + 100,
				     PTW_ARG_STR("req", sval.c_str()));
		PTW_ASYNC_END("cxx", id + 100);
		PTW_FLOW_START("cxx", "flow_start", id);
		PTW_FLOW_STEP("cxx", "flow_step", id);
		PTW_FLOW_END("cxx", "flow_end", id);
		// the run-time name forms with arguments, ids or a format
		std::string n = std::to_string(i);
		PTW_BEGIN_DYN_ARGS("cxx", ("bda " + n).c_str(),
				   PTW_ARG_I64("n", i));
		PTW_END("cxx");
		PTW_INSTANT_DYN_ARGS("cxx", ("ida " + n).c_str(),
				     PTW_ARG_STR("s", sval.c_str()));
		{
			PTW_SCOPE_DYN_ARGS("cxx", ("sda " + n).c_str(),
					   PTW_ARG_I64("n", i));
		}
		PTW_ASYNC_BEGIN_DYN("cxx", ("adyn " + n).c_str(), id + 200);
		PTW_ASYNC_END("cxx", id + 200);
		PTW_ASYNC_BEGIN_FMT("cxx", id + 300, "afmt %d", i);
		PTW_ASYNC_END("cxx", id + 300);
		PTW_ASYNC_BEGIN_DYN_ARGS("cxx", ("ada " + n).c_str(), id + 400,
					 PTW_ARG_I64("n", i));
		PTW_ASYNC_END("cxx", id + 400);
		PTW_FLOW_START_DYN("cxx", ("fdyn " + n).c_str(), id + 500);
		PTW_FLOW_STEP_FMT("cxx", id + 500, "fstep %d", i);
		PTW_FLOW_END_DYN("cxx", ("fend " + n).c_str(), id + 500);
		PTW_COUNTER_INT_FMT("cxx", 20 + i, "fctr %d", i);
		PTW_COUNTER_DOUBLE_FMT("cxx", 0.25 + i, "fdbl %s", n.c_str());
		try {
			thrower(i);
		} catch (const std::exception &) {
		}
	}
}

const ptw_tp_slice *slice_on(const ptw_tp_model *m, const char *name,
			     int64_t tid)
{
	for (size_t k = 0; k < m->n_slices; k++) {
		const ptw_tp_slice *s = &m->slices[k];
		if (s->name && std::strcmp(s->name, name) == 0 &&
		    s->owner.tid == tid)
			return s;
	}
	return nullptr;
}

size_t count_slices(const ptw_tp_model *m, const char *name)
{
	size_t n = 0;
	for (size_t k = 0; k < m->n_slices; k++)
		if (m->slices[k].name && std::strcmp(m->slices[k].name, name) == 0)
			n++;
	return n;
}

const ptw_trace_arg *arg_of(const ptw_tp_slice *s, const char *name)
{
	for (uint32_t a = 0; a < s->n_args; a++)
		if (s->args[a]->name && std::strcmp(s->args[a]->name, name) == 0)
			return s->args[a];
	return nullptr;
}

// trace_processor (when available) reads the trace without error stats and
// counts 'want' slices.
void check_with_trace_processor(const char *path, size_t want)
{
	const char *shared = std::getenv("PTW_SHARED_DIR");
	if (!shared)
		return;
	std::string tp = std::string(shared) + "/tp/trace_processor_shell";
	if (access(tp.c_str(), X_OK) != 0)
		return;
	std::string q = "select (select count(*) from slice) || ' ' || "
			"(select count(*) from stats where value > 0 and "
			"severity in ('error', 'data_loss')) as r";
	std::string cmd = tp + " -Q \"" + q + "\" " + path + " 2>/dev/null";
	FILE *f = popen(cmd.c_str(), "r");
	cr_assert_not_null(f);
	char line[256];
	std::string last;
	while (std::fgets(line, sizeof(line), f))
		last = line;
	cr_assert_eq(pclose(f), 0, "trace_processor failed on %s", path);
	unsigned long slices = 0, errors = 1;
	// the last line is the value, quoted
	int got = std::sscanf(last.c_str(), "\"%lu %lu\"", &slices, &errors);
	cr_assert_eq(got, 2, "trace_processor said: %s", last.c_str());
	cr_assert_eq(errors, 0u, "trace_processor error stats on %s", path);
	cr_assert_eq(slices, want, "trace_processor: %lu slices, expected %zu",
		     slices, want);
}

} // namespace

Test(cxx, every_tracer_macro_from_std_threads)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "cxx-tracer");
	ptw_config cfg = {};
	cfg.output_path = path;
	cr_assert_eq(ptw_start(&cfg), 0);
	std::vector<std::thread> ts;
	std::map<int, int64_t> tids;
	for (int i = 0; i < kThreads; i++)
		ts.emplace_back(traced_thread, i);
	for (auto &t : ts)
		t.join();
	ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(ptw_stop(), 0);
	cr_assert_eq(st.dropped, 0u);

	ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	ptw_tp_model *m = ptw_test_model_or_fail(t);
	cr_assert_eq(m->n_unmatched_ends, 0u);
	cr_assert_eq(m->misplaced_end_event, 0u);
	ptw_stats after;
	cr_assert_eq(ptw_get_stats(&after), 0);
	cr_assert_eq(after.invalid, 0u);

	// thread names as set, one thread track each
	for (int i = 0; i < kThreads; i++) {
		std::string want = "worker " + std::to_string(i);
		int64_t tid = 0;
		for (size_t k = 0; k < m->n_threads; k++)
			if (m->threads[k].name && want == m->threads[k].name)
				tid = m->threads[k].tid;
		cr_assert_neq(tid, 0, "no thread named %s", want.c_str());
		tids[i] = tid;
	}
	// per thread: the scopes nest as written and end at the brace
	const char *nest[] = {"outer", "scope_args", nullptr, nullptr,
			      "two_a", "two_b", "line_a", "line_b"};
	for (int i = 0; i < kThreads; i++) {
		std::string dyn = "dyn " + std::to_string(i);
		std::string fmt = "fmt " + std::to_string(i) + "/x";
		nest[2] = dyn.c_str();
		nest[3] = fmt.c_str();
		int64_t tid = tids[i];
		const ptw_tp_slice *prev = nullptr;
		for (size_t d = 0; d < sizeof(nest) / sizeof(nest[0]); d++) {
			const ptw_tp_slice *s = slice_on(m, nest[d], tid);
			cr_assert_not_null(s, "thread %d: no slice %s", i, nest[d]);
			cr_assert_eq(s->depth, d, "%s at depth %u", nest[d],
				     s->depth);
			cr_assert_geq(s->dur, 0, "%s never ended", nest[d]);
			if (prev)
				cr_assert_eq(s->parent_id, (int64_t)prev->id);
			prev = s;
		}
		// the if body's scope ended at once: a leaf inside line_b
		const ptw_tp_slice *ib = slice_on(m, "if_body", tid);
		cr_assert_not_null(ib);
		cr_assert_eq(ib->parent_id, (int64_t)prev->id);
		cr_assert_not_null(slice_on(m, "after_case", tid));
		const ptw_tp_slice *thr = slice_on(m, "throws", tid);
		cr_assert_not_null(thr);
		cr_assert_geq(thr->dur, 0, "an exception ends the scope");
		cr_assert_eq(thr->parent_id, (int64_t)prev->id);

		const ptw_tp_slice *sa = slice_on(m, "scope_args", tid);
		const ptw_trace_arg *a = arg_of(sa, "i");
		cr_assert(a && a->type == PTW_TRACE_ARG_INT && a->v.i == -i);
		a = arg_of(sa, "u");
		cr_assert(a && a->type == PTW_TRACE_ARG_UINT &&
			  a->v.u == 7u + (unsigned)i);
		a = arg_of(sa, "d");
		cr_assert(a && a->type == PTW_TRACE_ARG_DOUBLE && a->v.d == 1.5);
		a = arg_of(sa, "b");
		cr_assert(a && a->type == PTW_TRACE_ARG_BOOL && a->v.b == 1);
		a = arg_of(sa, "s");
		std::string sval = "value " + std::to_string(i);
		cr_assert(a && a->type == PTW_TRACE_ARG_STRING &&
			  sval == a->v.s);
		a = arg_of(sa, "p");
		cr_assert(a && a->type == PTW_TRACE_ARG_POINTER && a->v.u != 0);

		const ptw_tp_slice *ba = slice_on(m, "begin_args", tid);
		cr_assert_not_null(ba);
		cr_assert(arg_of(ba, "n") && arg_of(ba, "n")->v.i == i);
		cr_assert(arg_of(ba, "end") &&
			  std::strcmp(arg_of(ba, "end")->v.s, "yes") == 0);
		std::string bfmt = "bfmt " + std::to_string(i);
		cr_assert_not_null(slice_on(m, bfmt.c_str(), tid));
		cr_assert_not_null(slice_on(m, "begin_end", tid));
		const ptw_tp_slice *in = slice_on(m, "instant_args", tid);
		cr_assert(in && in->is_instant && arg_of(in, "k")->v.i == 42);
		cr_assert_not_null(slice_on(m, sval.c_str(), tid));
		std::string ifmt = "ifmt worker " + std::to_string(i);
		cr_assert_not_null(slice_on(m, ifmt.c_str(), tid));

		std::string n = std::to_string(i);
		const ptw_tp_slice *bda = slice_on(m, ("bda " + n).c_str(), tid);
		cr_assert(bda && bda->dur >= 0 && arg_of(bda, "n") &&
			  arg_of(bda, "n")->v.i == i);
		const ptw_tp_slice *ida = slice_on(m, ("ida " + n).c_str(), tid);
		cr_assert(ida && ida->is_instant && arg_of(ida, "s") &&
			  sval == arg_of(ida, "s")->v.s);
		const ptw_tp_slice *sda = slice_on(m, ("sda " + n).c_str(), tid);
		cr_assert(sda && sda->dur >= 0 && arg_of(sda, "n") &&
			  arg_of(sda, "n")->v.i == i);
		for (const char *an : {"adyn ", "afmt ", "ada "}) {
			const ptw_tp_slice *as =
				ptw_test_find_slice(m, (an + n).c_str(), 0);
			cr_assert(as && as->dur >= 0, "async %s%d", an, i);
		}
		const ptw_tp_slice *ada = ptw_test_find_slice(m, ("ada " + n).c_str(), 0);
		cr_assert(arg_of(ada, "n") && arg_of(ada, "n")->v.i == i);
		cr_assert_not_null(slice_on(m, ("fdyn " + n).c_str(), tid));
		cr_assert_not_null(slice_on(m, ("fstep " + n).c_str(), tid));
		cr_assert_not_null(slice_on(m, ("fend " + n).c_str(), tid));
	}
	// the dynamic name appears as a scope and as a BEGIN_DYN slice
	cr_assert_eq(count_slices(m, "dyn 0"), 2u);
	cr_assert_eq(count_slices(m, "async"), (size_t)kThreads);
	cr_assert_eq(count_slices(m, "async_args"), (size_t)kThreads);
	const ptw_tp_slice *aa = ptw_test_find_slice(m, "async_args", 0);
	cr_assert(aa && arg_of(aa, "req") &&
		  std::strncmp(arg_of(aa, "req")->v.s, "value ", 6) == 0);
	cr_assert_eq(m->n_flows, 4u * kThreads);

	// counters: literal and run-time names, one track per name
	std::map<std::string, std::vector<double>> ctr;
	size_t nt;
	const ptw_trace_track *tracks = ptw_trace_tracks(t, &nt);
	for (size_t k = 0; k < m->n_counters; k++)
		for (size_t j = 0; j < nt; j++)
			if (tracks[j].uuid == m->counters[k].track_uuid &&
			    tracks[j].name)
				ctr[tracks[j].name].push_back(m->counters[k].value);
	cr_assert_eq(ctr["ctr_int"].size(), (size_t)kThreads);
	cr_assert_eq(ctr["ctr_dbl"].size(), (size_t)kThreads);
	cr_assert_eq(ctr["dctr_shared"].size(), (size_t)kThreads);
	for (int i = 0; i < kThreads; i++) {
		auto &v = ctr["dctr " + std::to_string(i)];
		cr_assert_eq(v.size(), 1u);
		cr_assert_eq(v[0], (double)i);
		auto &fi = ctr["fctr " + std::to_string(i)];
		cr_assert(fi.size() == 1 && fi[0] == 20.0 + i);
		auto &fd = ctr["fdbl " + std::to_string(i)];
		cr_assert(fd.size() == 1 && fd[0] == 0.25 + i);
	}
	size_t want = m->n_slices;
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	check_with_trace_processor(path, want);
	unlink(path);
}

Test(cxx, writer_api_from_std_threads)
{
	// one writer per thread (a writer belongs to one thread at a time)
	std::vector<std::string> paths(kThreads);
	std::vector<std::thread> ts;
	for (int i = 0; i < kThreads; i++) {
		char p[256];
		paths[i] = ptw_test_tmp_path(p, sizeof(p), "cxx-writer");
	}
	std::vector<int> rc(kThreads, -1);
	for (int i = 0; i < kThreads; i++)
		ts.emplace_back([&, i] {
			ptw_error err;
			ptw_writer *w = ptw_writer_open(paths[i].c_str(), nullptr,
							&err);
			if (!w)
				return;
			uint64_t th = ptw_writer_add_thread_track(w, 1, 10 + i,
								  "wthread");
			ptw_seq *s = ptw_writer_add_seq(w, th);
			std::string v = "v" + std::to_string(i);
			ptw_arg args[2] = {PTW_ARG_I64("n", i),
					   PTW_ARG_STR("s", v.c_str())};
			ptw_event ev = {};
			ev.ts = 100;
			ev.name = "work";
			ev.category = "cxx";
			ev.args = args;
			ev.n_args = 2;
			int r = ptw_seq_slice_begin(s, &ev);
			ev = {};
			ev.ts = 200;
			if (r == 0)
				r = ptw_seq_slice_end(s, &ev);
			if (r == 0)
				r = ptw_writer_close(w, &err);
			else
				ptw_writer_close(w, nullptr);
			rc[i] = r;
		});
	for (auto &t : ts)
		t.join();
	for (int i = 0; i < kThreads; i++) {
		cr_assert_eq(rc[i], 0);
		ptw_trace *t = ptw_test_load_checked_or_fail(paths[i].c_str(), 0);
		ptw_tp_model *m = ptw_test_model_or_fail(t);
		cr_assert_eq(m->n_slices, 1u);
		cr_assert_str_eq(m->slices[0].name, "work");
		cr_assert_eq(m->slices[0].dur, 100);
		cr_assert_eq(m->slices[0].owner.tid, 10 + i);
		cr_assert_eq(arg_of(&m->slices[0], "n")->v.i, i);
		ptw_tp_model_free(m);
		ptw_trace_free(t);
		check_with_trace_processor(paths[i].c_str(), 1);
		unlink(paths[i].c_str());
	}
	cr_assert_str_eq(ptw_version(), PTW_VERSION);
}

/* The _STACK macros in C++: a scope guard with the stack, in a chain of
 * C++ functions (names as the symbol tables have them: mangled). */
namespace {
__attribute__((noinline)) void cxx_stk_inner(int k)
{
	PTW_INSTANT_STACK("stk", "cxx_instant");
	if (k)
		throw std::runtime_error("leave the scope by an exception");
}

__attribute__((noinline)) void cxx_stk_outer(int k)
{
	PTW_SCOPE_STACK("stk", "cxx_scope");
	cxx_stk_inner(k);
	__asm__ volatile("" ::: "memory");
}
volatile int g_stk_k = 1; /* not a constant: no .constprop clones */
} // namespace

Test(cxx, stack_macros_record_the_chain)
{
	PTW_TEST_NEEDS_STACK_WALK();
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "cxxstk");
	ptw_config cfg = {};
	cfg.output_path = path;
	cr_assert_eq(ptw_start(&cfg), 0);
	std::thread([] {
		try {
			cxx_stk_outer(g_stk_k);
		} catch (const std::runtime_error &) {
		}
	}).join();
	cr_assert_eq(ptw_stop(), 0);
	char rows[4096];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0) {
		/* innermost frames; the thread's start (std::thread's
		 * internals) lies outside */
		std::string r(rows);
		cr_assert(r.find("cxx_scope:") == 0, "%s", rows);
		std::string outer = "_ZN12_GLOBAL__N_113cxx_stk_outerEi";
		std::string inner = "_ZN12_GLOBAL__N_113cxx_stk_innerEi";
		size_t semi = r.find(';');
		cr_assert(r.substr(0, semi).size() > outer.size() &&
				  r.compare(semi - outer.size(), outer.size(),
					    outer) == 0,
			  "%s", rows);
		std::string second = r.substr(semi + 1);
		cr_assert(second.find("cxx_instant:") == 0 &&
				  second.find(outer + ">" + inner + ";") !=
					  std::string::npos,
			  "%s", rows);
	}
	unlink(path);
}

// PTW_LOG and PTW_LOG_DYN from std::threads: android_logs has each
// thread's lines with their priority and call site (file:line).
static std::atomic<int> cxx_log_line; // written by both threads
static void cxx_log(int i)
{
	ptw_set_thread_name(("logger " + std::to_string(i)).c_str());
	std::string msg = "dyn line " + std::to_string(i);
	PTW_LOG(PTW_LOG_PRIO_INFO, "fmt line %d", i); cxx_log_line.store(__LINE__);
	PTW_LOG_DYN(PTW_LOG_PRIO_DEBUG, msg.c_str());
}

Test(cxx, log_lines_from_std_threads)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "cxx-log");
	ptw_config cfg = {};
	cfg.output_path = path;
	cr_assert_eq(ptw_start(&cfg), 0);
	std::vector<std::thread> ts;
	for (int i = 0; i < 2; i++)
		ts.emplace_back(cxx_log, i);
	for (auto &t : ts)
		t.join();
	cr_assert_eq(ptw_stop(), 0);
	ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.events, 4u);
	cr_assert_eq(st.invalid, 0u);
	if (ptw_test_tp_shell()) {
		std::string tag = std::string("\"") + __FILE__ + ":";
		std::string want;
		for (int i = 0; i < 2; i++)
			want += "\"logger " + std::to_string(i) + "\",4," + tag +
				std::to_string(cxx_log_line) + "\",\"fmt line " +
				std::to_string(i) + "\"\n" + "\"logger " +
				std::to_string(i) + "\",3," + tag +
				std::to_string(cxx_log_line + 1) +
				"\",\"dyn line " + std::to_string(i) + "\"\n";
		ptw_test_tp_expect_rows(
			path,
			"select t.name, l.prio, l.tag, l.msg from android_logs l "
			"join thread t using (utid) order by t.name, l.ts",
			want.c_str());
		ptw_test_tp_expect_rows(
			path,
			"select distinct extract_arg(arg_set_id, "
			"'source.function_name') from slice where name = 'LogMessage'",
			"\"cxx_log\"\n");
		ptw_test_tp_expect_no_error_stats(path);
	}
	unlink(path);
}

// cfg.source_locations from C++: a scope's call site names the function
// it is in (its site is in a statement expression, not a lambda, whose
// __func__ would be "operator()").
static int cxx_scope_line;
static void cxx_sited(void)
{
	PTW_SCOPE("cxxsl", "sited scope"); cxx_scope_line = __LINE__;
	PTW_INSTANT("cxxsl", "sited instant");
}

Test(cxx, scopes_carry_their_call_site)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "cxx-srcloc");
	ptw_config cfg = {};
	cfg.output_path = path;
	cfg.source_locations = 1;
	cr_assert_eq(ptw_start(&cfg), 0);
	std::thread(cxx_sited).join();
	cr_assert_eq(ptw_stop(), 0);
	if (ptw_test_tp_shell()) {
		std::string f = std::string("\"") + __FILE__ + "\"";
		std::string want =
			"\"sited instant\"," + f + ",\"cxx_sited\"," +
			std::to_string(cxx_scope_line + 1) + "\n" +
			"\"sited scope\"," + f + ",\"cxx_sited\"," +
			std::to_string(cxx_scope_line) + "\n";
		ptw_test_tp_expect_rows(
			path,
			"select name, extract_arg(arg_set_id, 'source.file_name'), "
			"extract_arg(arg_set_id, 'source.function_name'), "
			"extract_arg(arg_set_id, 'source.line_number') from slice "
			"where category = 'cxxsl' order by name",
			want.c_str());
	}
	unlink(path);
}

// Tracks of one's own and flows on slices from std::threads: a slice
// begun on one thread and ended on another, a counter with its unit, and
// a flow from a scope on one thread to a scope on another.
Test(cxx, own_tracks_and_flows_from_std_threads)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "cxx-tracks");
	static const uint64_t dev = ptw_track_new("device", 0);
	static const uint64_t temp =
		ptw_counter_track_new("temperature", "C", dev, 0);
	cr_assert(dev && temp);
	ptw_config cfg = {};
	cfg.output_path = path;
	cr_assert_eq(ptw_start(&cfg), 0);
	std::thread([] {
		PTW_TRACK_BEGIN("dev", dev, "transfer");
		PTW_TRACK_COUNTER_DOUBLE("dev", temp, 41.5);
		PTW_SCOPE_ARGS("dev", "submit", PTW_ARG_FLOW(77));
	}).join();
	std::thread([] {
		PTW_SCOPE_ARGS("dev", "complete", PTW_ARG_TERMINATING_FLOW(77));
		PTW_TRACK_END("dev", dev);
	}).join();
	cr_assert_eq(ptw_stop(), 0);
	ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.invalid, 0u);
	if (ptw_test_tp_shell()) {
		ptw_test_tp_expect_rows(
			path,
			"select s.name, s.dur > 0 from slice s join track t "
			"on s.track_id = t.id where t.name = 'device'",
			"\"transfer\",1\n");
		ptw_test_tp_expect_rows(
			path,
			"select t.unit, c.value from counter c join counter_track t "
			"on c.track_id = t.id where t.name = 'temperature'",
			"\"C\",41.500000\n");
		ptw_test_tp_expect_rows(
			path,
			"select so.name, si.name from flow f join slice so on "
			"f.slice_out = so.id join slice si on f.slice_in = si.id",
			"\"submit\",\"complete\"\n");
		ptw_test_tp_expect_no_error_stats(path);
	}
	unlink(path);
}
