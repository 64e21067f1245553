/* test_machine_tp.c - traces of several "machines" merged by the real
 * trace_processor (one TAR of traces, `trace_processor_shell util merge`):
 * the machine table names each machine, processes with the same pid on
 * two machines stay two rows, every slice is on its own machine's
 * thread, and events of two processes of this host line up by REALTIME
 * within a microsecond. Writer, tracer and converted Chrome JSON traces.
 * Skipped when trace_processor_shell is not at $PTW_SHARED_DIR/tp (or
 * <source root>/../shared/tp).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "test_convert_json.h"

#define ROUNDS 200

/* ---- trace_processor ---------------------------------------------------- */

static const char *g_tp;

/* Finds trace_processor_shell or skips the test. */
static void need_tp(void)
{
	g_tp = ptw_test_tp_shell();
	if (!g_tp)
		cr_skip_test("no trace_processor_shell (PTW_SHARED_DIR/tp)");
}

/* Packs the traces into one TAR with `util merge`. */
static void merge(const char *tar, const char *a, const char *b)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "'%s' util merge -o '%s' '%s' '%s' >/dev/null 2>&1", g_tp, tar,
		 a, b);
	cr_assert_eq(system(cmd), 0, "%s failed", cmd);
}


static void expect_rows(const char *trace, const char *sql, const char *want)
{
	ptw_test_tp_expect_rows(trace, sql, want);
}

/* The checks shared by every merge: the two machines by name, no error
 * or data loss, and every slice (of those 'only' selects, an SQL condition
 * on slice s) on a thread of the machine named in its arg "m" (each side
 * names its own machine in each of its events). */
static void expect_two_machines(const char *tar, const char *m1,
				const char *m2, const char *only)
{
	char want[256], sql[1024];
	snprintf(want, sizeof(want), "\"%s\"\n\"%s\"\n", m1, m2);
	expect_rows(tar, "select name from machine order by raw_id", want);
	expect_rows(tar,
		    "select count(*) from stats where value > 0 and "
		    "severity in ('error', 'data_loss')",
		    "0\n");
	snprintf(sql, sizeof(sql),
		 "select count(*) from slice s left join thread_track tt on "
		 "s.track_id = tt.id left join thread t using(utid) left join "
		 "machine m on t.machine_id = m.id where (%s) and (m.name is "
		 "null or m.name is not extract_arg(s.arg_set_id, 'debug.m'))",
		 only);
	expect_rows(tar, sql, "0\n");
}

/* The ping-pong rounds: side A logs a_i, wakes B, waits; B logs b_i,
 * wakes A. So b_i happened between a_i and a_(i+1): an offset d between
 * the two traces' timelines (b as shown = b as happened + d) satisfies
 * b_i - a_(i+1) <= d <= b_i - a_i for every i. Whatever the scheduling,
 * d = 0 satisfies all of them; the test asks that some d within 1 us
 * does. */
static void expect_lined_up(const char *tar)
{
	static int64_t a[ROUNDS + 1], b[ROUNDS];
	char *rows = ptw_test_tp_query(
		tar, "select name, ts, extract_arg(arg_set_id, 'debug.i') "
		     "from slice where name in ('a', 'b') order by name, "
		     "extract_arg(arg_set_id, 'debug.i')");
	int na = 0, nb = 0;
	for (char *l = rows; *l;) {
		char name[8];
		long long ts, i;
		cr_assert_eq(sscanf(l, "\"%7[^\"]\",%lld,%lld", name, &ts, &i), 3,
			     "row %s", l);
		if (name[0] == 'a') {
			cr_assert_eq(i, na);
			a[na++] = ts;
		} else {
			cr_assert_eq(i, nb);
			b[nb++] = ts;
		}
		char *nl = strchr(l, '\n');
		l = nl ? nl + 1 : l + strlen(l);
	}
	free(rows);
	cr_assert_eq(na, ROUNDS + 1);
	cr_assert_eq(nb, ROUNDS);
	int64_t lo = INT64_MIN, hi = INT64_MAX;
	for (int i = 0; i < ROUNDS; i++) {
		if (b[i] - a[i + 1] > lo)
			lo = b[i] - a[i + 1];
		if (b[i] - a[i] < hi)
			hi = b[i] - a[i];
	}
	cr_assert(lo <= 1000 && hi >= -1000,
		  "the timelines are off by %lld..%lld ns", (long long)lo,
		  (long long)hi);
}

/* ---- two processes -------------------------------------------------------- */

/* Pipes of the rounds: A writes to ab[1], B to ba[1]. */
struct pp {
	int ab[2], ba[2];
};

static int pp_wait(int fd)
{
	char c;
	return read(fd, &c, 1) == 1 ? 0 : -1;
}

static int pp_wake(int fd)
{
	return write(fd, "x", 1) == 1 ? 0 : -1;
}

/* Runs side(is_b) in a child (B) and here (A); asserts both succeeded. */
static void two_sides(int (*side)(struct pp *pp, int is_b, void *ctx),
		      void *ctx)
{
	struct pp pp;
	cr_assert_eq(pipe(pp.ab), 0);
	cr_assert_eq(pipe(pp.ba), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(pp.ab[1]);
		close(pp.ba[0]);
		_exit(side(&pp, 1, ctx) ? 1 : 0);
	}
	close(pp.ab[0]);
	close(pp.ba[1]);
	int rc = side(&pp, 0, ctx);
	close(pp.ab[1]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	close(pp.ba[0]);
	cr_assert_eq(rc, 0, "side A failed");
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "side B failed");
}

/* One round's event: A logs a_i before waking B, B logs b_i after. */
static int pp_round(struct pp *pp, int is_b, int i, void (*log)(int i, void *c),
		    void *c)
{
	if (is_b) {
		if (pp_wait(pp->ab[0]))
			return -1;
		log(i, c);
		return pp_wake(pp->ba[1]);
	}
	log(i, c);
	if (pp_wake(pp->ab[1]))
		return -1;
	return pp_wait(pp->ba[0]);
}

/* ---- the writer: colliding pids, wall clock since open ---------------------- */

struct wside {
	char path[2][256];
	struct ptw_writer *w;
	uint64_t thread;
	const char *m;
	int is_b;
};

static void w_log(int i, void *c)
{
	struct wside *ws = c;
	struct ptw_arg args[2] = {
		{.name = "i", .type = PTW_ARG_TYPE_INT, .v.i = i},
		{.name = "m", .type = PTW_ARG_TYPE_STRING, .v.s = ws->m}};
	struct ptw_event ev = {.track = ws->thread,
			       .ts = ptw_writer_now_ns(ws->w),
			       .name = ws->is_b ? "b" : "a",
			       .args = args,
			       .n_args = 2};
	(void)ptw_seq_instant(ptw_writer_wall_seq(ws->w), &ev);
	/* and a slice around nothing, on the same thread */
	ev.name = "work";
	ev.n_args = 2;
	(void)ptw_seq_slice_begin(ptw_writer_wall_seq(ws->w), &ev);
	ev.n_args = 0;
	(void)ptw_seq_slice_end(ptw_writer_wall_seq(ws->w), &ev);
}

static int w_side(struct pp *pp, int is_b, void *ctx)
{
	struct wside ws = *(struct wside *)ctx;
	ws.is_b = is_b;
	ws.m = is_b ? "beta" : "alpha";
	if (is_b)
		usleep(5000); /* B's wall time 0 is >= 5 ms after A's */
	struct ptw_writer_options o = {.machine_id = is_b ? 2 : 1,
				       .machine_name = ws.m,
				       .machine_uname = 1,
				       .wall_realtime = 1};
	struct ptw_error err;
	ws.w = ptw_writer_open(ws.path[is_b], &o, &err);
	if (!ws.w)
		return -1;
	/* the same made-up pid and tid on both machines */
	(void)ptw_writer_add_process_track(ws.w, 100, is_b ? "client" : "server");
	ws.thread = ptw_writer_add_thread_track(ws.w, 100, 101, "main");
	int rc = ws.thread ? 0 : -1;
	for (int i = 0; i < ROUNDS && !rc; i++)
		rc = pp_round(pp, is_b, i, w_log, &ws);
	if (!is_b && !rc)
		w_log(ROUNDS, &ws);
	if (ptw_writer_close(ws.w, &err))
		rc = -1;
	return rc;
}

Test(machine_tp, writer_traces_with_colliding_pids)
{
	need_tp();
	struct wside ws;
	memset(&ws, 0, sizeof(ws));
	ptw_test_tmp_path(ws.path[0], sizeof(ws.path[0]), "machine-alpha");
	ptw_test_tmp_path(ws.path[1], sizeof(ws.path[1]), "machine-beta");
	two_sides(w_side, &ws);
	char tar[300];
	snprintf(tar, sizeof(tar), "%s.tar", ws.path[0]);
	merge(tar, ws.path[0], ws.path[1]);
	expect_two_machines(tar, "alpha", "beta", "1");
	expect_rows(tar,
		    "select p.name, m.name from process p join machine m on "
		    "p.machine_id = m.id where p.pid = 100 order by m.raw_id",
		    "\"server\",\"alpha\"\n\"client\",\"beta\"\n");
	expect_rows(tar,
		    "select t.tid, m.name, count(*) from slice s join "
		    "thread_track tt on s.track_id = tt.id join thread t "
		    "using(utid) join machine m on t.machine_id = m.id group by "
		    "t.utid order by m.raw_id",
		    "101,\"alpha\",402\n101,\"beta\",400\n");
	expect_lined_up(tar);
	unlink(tar);
	unlink(ws.path[0]);
	unlink(ws.path[1]);
}

/* ---- the tracer: MONOTONIC here, TSC there ---------------------------------- */

static void t_log(int i, void *c)
{
	const char *m = c;
	if (strcmp(m, "tsc-box") == 0) /* side B */
		PTW_INSTANT_ARGS("pp", "b", PTW_ARG_I64("i", i),
				 PTW_ARG_STR("m", m));
	else
		PTW_INSTANT_ARGS("pp", "a", PTW_ARG_I64("i", i),
				 PTW_ARG_STR("m", m));
}

static int t_side(struct pp *pp, int is_b, void *ctx)
{
	char (*path)[256] = ctx;
	const char *m = is_b ? "tsc-box" : "mono-box";
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path[is_b];
	cfg.clock = is_b ? PTW_CLOCK_FASTEST : PTW_CLOCK_MONOTONIC;
	cfg.machine_id = is_b ? 20 : 10;
	cfg.machine_name = m;
	cfg.process_name = "app"; /* the same name in both */
	if (ptw_start(&cfg))
		return -1;
	int rc = 0;
	for (int i = 0; i < ROUNDS && !rc; i++)
		rc = pp_round(pp, is_b, i, t_log, (void *)m);
	if (!is_b && !rc)
		t_log(ROUNDS, (void *)m);
	if (ptw_stop())
		rc = -1;
	return rc;
}

Test(machine_tp, tracer_traces_line_up)
{
	need_tp();
	static char path[2][256];
	ptw_test_tmp_path(path[0], sizeof(path[0]), "machine-mono");
	ptw_test_tmp_path(path[1], sizeof(path[1]), "machine-tsc");
	two_sides(t_side, path);
	char tar[300];
	snprintf(tar, sizeof(tar), "%s.tar", path[0]);
	merge(tar, path[0], path[1]);
	/* the tracer's own instant (ptw.clock) has no "m": ours only */
	expect_two_machines(tar, "mono-box", "tsc-box", "s.name in ('a', 'b')");
	expect_rows(tar,
		    "select m.name, count(*) from process p join machine m on "
		    "p.machine_id = m.id where p.name = 'app' group by m.id "
		    "order by m.raw_id",
		    "\"mono-box\",1\n\"tsc-box\",1\n");
	expect_lined_up(tar);
	unlink(tar);
	unlink(path[0]);
	unlink(path[1]);
}

/* ---- converted Chrome JSON ------------------------------------------------- */

/* The same pid and tid in both; every event names its machine in "m". */
#define JSON_EVENTS(M, P)                                                     \
	"[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"tid\":7,"      \
	"\"args\":{\"name\":\"" P "\"}},"                                      \
	"{\"name\":\"req\",\"ph\":\"X\",\"ts\":1000,\"dur\":50,\"pid\":7,"    \
	"\"tid\":8,\"args\":{\"m\":\"" M "\"}},"                               \
	"{\"name\":\"inner\",\"ph\":\"B\",\"ts\":1010,\"pid\":7,\"tid\":8,"   \
	"\"args\":{\"m\":\"" M "\"}},"                                         \
	"{\"ph\":\"E\",\"ts\":1030,\"pid\":7,\"tid\":8},"                     \
	"{\"name\":\"sync\",\"ph\":\"i\",\"s\":\"t\",\"ts\":1020.5,"          \
	"\"pid\":7,\"tid\":8,\"args\":{\"m\":\"" M "\"}}]"

Test(machine_tp, converted_json_traces_with_colliding_pids)
{
	need_tp();
	char a[256], b[256], tar[300];
	ptw_test_tmp_path(a, sizeof(a), "machine-json-a");
	ptw_test_tmp_path(b, sizeof(b), "machine-json-b");
	struct ptw_writer_options oa = {.machine_id = 1, .machine_name = "host-a"};
	struct ptw_writer_options ob = {.machine_id = 2, .machine_name = "host-b"};
	ptw_test_convert_json_with(a, JSON_EVENTS("host-a", "server"), 0, 0, NULL,
				   &oa);
	ptw_test_convert_json_with(b, JSON_EVENTS("host-b", "client"), 0, 0, NULL,
				   &ob);
	snprintf(tar, sizeof(tar), "%s.tar", a);
	merge(tar, a, b);
	expect_two_machines(tar, "host-a", "host-b", "1");
	expect_rows(tar,
		    "select p.name, m.name from process p join machine m on "
		    "p.machine_id = m.id where p.pid = 7 order by m.raw_id",
		    "\"server\",\"host-a\"\n\"client\",\"host-b\"\n");
	/* JSON times have no clock: both files keep theirs (the same ts
	 * lands on the same trace time) */
	expect_rows(tar,
		    "select s.ts, s.dur, s.name, extract_arg(s.arg_set_id, "
		    "'debug.m') as m from slice s order by m, s.ts",
		    "1000000,50000,\"req\",\"host-a\"\n"
		    "1010000,20000,\"inner\",\"host-a\"\n"
		    "1020500,0,\"sync\",\"host-a\"\n"
		    "1000000,50000,\"req\",\"host-b\"\n"
		    "1010000,20000,\"inner\",\"host-b\"\n"
		    "1020500,0,\"sync\",\"host-b\"\n");
	unlink(tar);
	unlink(a);
	unlink(b);
}

/* ---- a timeline that starts late ------------------------------------------ */

/* The first file sets the merged timeline: here a writer trace, whose
 * time 0 is its open. A tracer trace merged after it (flight recorder,
 * its window starting with a REALTIME snapshot) keeps its track
 * descriptors: they are not at its clock's 0 (boot), before the
 * timeline's start, where trace_processor drops them. */
Test(machine_tp, flight_recorder_after_a_late_timeline)
{
	need_tp();
	char a[256], b[256], tar[300];
	ptw_test_tmp_path(a, sizeof(a), "machine-late-a");
	ptw_test_tmp_path(b, sizeof(b), "machine-late-b");
	struct ptw_writer_options o = {.machine_id = 1, .machine_name = "late",
				       .wall_realtime = 1};
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(a, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t t = ptw_writer_add_thread_track(w, 100, 101, "main");
	struct ptw_event ev = {.track = t, .name = "w",
			       .ts = ptw_writer_now_ns(w)};
	cr_assert_eq(ptw_seq_instant(ptw_writer_wall_seq(w), &ev), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);

	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = PTW_MODE_RING;
	cfg.ring_bytes = 64 << 10;
	cfg.overflow = PTW_OVERFLOW_WAIT; /* no loss, however slow (ASan) */
	cfg.machine_id = 2;
	cfg.machine_name = "ringbox";
	cfg.process_name = "ring-app";
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	for (int i = 0; i < 20000; i++) {
		PTW_BEGIN("r", "step");
		PTW_END("r");
	}
	cr_assert_eq(ptw_snapshot(b), 0);
	cr_assert_eq(ptw_stop(), 0);

	snprintf(tar, sizeof(tar), "%s.tar", a);
	merge(tar, a, b);
	expect_rows(tar,
		    "select count(*) from stats where value > 0 and "
		    "severity in ('error', 'data_loss')",
		    "0\n");
	expect_rows(tar,
		    "select p.name, m.name from process p join machine m on "
		    "p.machine_id = m.id where p.pid != 0 order by m.raw_id",
		    "\"[NULL]\",\"late\"\n\"ring-app\",\"ringbox\"\n");
	char *rows = ptw_test_tp_query(tar, "select count(*) > 1000 from "
					    "slice where name = 'step'");
	cr_assert_str_eq(rows, "1\n");
	free(rows);
	unlink(tar);
	unlink(a);
	unlink(b);
}
