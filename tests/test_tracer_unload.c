/* test_tracer_unload.c - libraries that log and are then dlclose()d
 * (PTW_TEST_LOADS_PLUGINS: configure builds the sources in tests/plugins/ into
 * BUILDDIR/tests/plugins/lib*.so and links this suite with -rdynamic, so
 * that the plugins find libptw's functions in it).
 * SPDX-License-Identifier: Apache-2.0
 *
 * Plugin A logs (every kind of event, on several threads, with the
 * backend held back so that nothing is drained before the unload), leaves
 * slices open and is unloaded; then plugin B, the same code with other
 * literals (likely mapped where A was, so that its literals take A's
 * addresses), logs and is unloaded too, in stream and in ring mode, with
 * snapshots after each unload while the slices A and B began are still
 * open, while another thread logs all along. Each trace is decoded
 * (reader/) and, with $PTW_SHARED_DIR/tp/trace_processor_shell, queried:
 * every slice, instant, counter and argument carries the names its plugin
 * gave it, the counts are what was logged, and no error is counted.
 * Before the fix the backend read A's unmapped literals: SIGSEGV. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "reader/trace_read.h"
#include "lib/os/os_object.h"
#include "lib/tracer/tracer_internal.h"
#include "tests/plugins/unload_plugin.h"

#define THREADS 3 /* besides the main thread, per plugin */

static int rounds(void) { return (int)ptw_test_scale(40, 8); }

/* ---- plugins --------------------------------------------------------- */

struct plugin {
	char which;             /* 'A' or 'B' */
	void *h;
	void (*log)(int64_t round, uint64_t id);
	void (*open)(uint64_t id);
	const char *literal;    /* where its instants' name lives */
	char path[512];
};

static void plugin_load(struct plugin *p, char which)
{
	char exe[400];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert(n > 0);
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	cr_assert_not_null(slash);
	*slash = '\0';
	snprintf(p->path, sizeof(p->path), "%s/plugins/libunload_%c.so", exe,
		 which == 'A' ? 'a' : 'b');
	p->which = which;
	p->h = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(p->h, "dlopen %s: %s", p->path, dlerror());
	*(void **)&p->log = dlsym(p->h, "unload_plugin_log");
	*(void **)&p->open = dlsym(p->h, "unload_plugin_open");
	const char *(*lit)(void);
	*(void **)&lit = dlsym(p->h, "unload_plugin_literal");
	cr_assert(p->log && p->open && lit);
	p->literal = lit();
}

/* What the trace must hold: rounds logged per plugin, and its unloads
 * while tracing ran ("bye" instants). */
static int64_t g_rounds[2], g_byes[2];

/* dlclose, and the library is gone (not kept loaded by anything). */
static void plugin_unload(struct plugin *p)
{
	g_byes[p->which - 'A'] += ptw_is_running();
	cr_assert_eq(dlclose(p->h), 0, "dlclose: %s", dlerror());
	void *again = dlopen(p->path, RTLD_NOW | RTLD_NOLOAD);
	cr_assert_null(again, "%s is still loaded after dlclose", p->path);
	p->h = NULL;
}

static uint64_t g_next_id = 1;

struct job {
	struct plugin *p;
	int rounds;
	uint64_t id0;
};

static void *job_main(void *arg)
{
	const struct job *j = arg;
	for (int r = 0; r < j->rounds; r++)
		j->p->log(r, j->id0 + (uint64_t)r);
	return NULL;
}

/* 'n' rounds of p's events on the main thread and on THREADS threads. */
static void log_rounds(struct plugin *p, int n)
{
	struct job jobs[THREADS + 1];
	pthread_t th[THREADS];
	for (int k = 0; k <= THREADS; k++) {
		jobs[k] = (struct job){p, n, g_next_id};
		g_next_id += (uint64_t)n;
	}
	for (int k = 0; k < THREADS; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, job_main, &jobs[k]), 0);
	job_main(&jobs[THREADS]);
	for (int k = 0; k < THREADS; k++)
		pthread_join(th[k], NULL);
	g_rounds[p->which - 'A'] += (int64_t)n * (THREADS + 1);
}

/* ---- another thread logging all along ---------------------------------- */

static atomic_int g_bg_stop;
static pthread_t g_bg;

static void *bg_main(void *arg)
{
	(void)arg;
	ptw_set_thread_name("bg");
	while (!atomic_load(&g_bg_stop)) {
		PTW_INSTANT("main", "main.bg");
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void bg_start(void)
{
	atomic_store(&g_bg_stop, 0);
	cr_assert_eq(pthread_create(&g_bg, NULL, bg_main, NULL), 0);
}

static void bg_stop(void)
{
	atomic_store(&g_bg_stop, 1);
	pthread_join(g_bg, NULL);
}

/* ---- checking a trace ---------------------------------------------------- */

struct seen {
	char name[32];
	int64_t n;
};

struct tally {
	struct seen s[64];
	size_t n;
};

static void tally_add(struct tally *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->s[i].name, name) == 0) {
			t->s[i].n++;
			return;
		}
	cr_assert_lt(t->n, 64u);
	snprintf(t->s[t->n].name, sizeof(t->s[t->n].name), "%s", name);
	t->s[t->n++].n = 1;
}

static int64_t tally_get(const struct tally *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->s[i].name, name) == 0)
			return t->s[i].n;
	return 0;
}

/* 'A', 'B' or 'C' if s is "A.<...>", "B.<...>" or "C.<...>" (a plugin's
 * name), else 0. */
static char prefix_of(const char *s)
{
	return s && s[0] >= 'A' && s[0] <= 'C' && s[1] == '.' ? s[0] : 0;
}

/* Every event of a plugin has its category and argument names, every
 * async slice its own track, every counter sample a plugin's track;
 * *t gets the events per name (counter samples: per track name). */
static void check_names(const struct ptw_trace *tr, struct tally *t)
{
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(tr, &n);
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n; i++) {
		const struct ptw_trace_event *e = &ev[i];
		if (e->type == PTW_TRACE_COUNTER) {
			const struct ptw_trace_track *tk =
				ptw_trace_find_track(tr, e->track_uuid);
			cr_assert_not_null(tk);
			if (prefix_of(tk->name))
				tally_add(t, tk->name);
			continue;
		}
		char p = prefix_of(e->name);
		if (!p)
			continue;
		tally_add(t, e->name);
		char cat[8];
		snprintf(cat, sizeof(cat), "%c.cat", p);
		cr_assert(e->category && strcmp(e->category, cat) == 0,
			  "%s has category %s", e->name,
			  e->category ? e->category : "(none)");
		for (uint32_t a = 0; a < e->n_args; a++)
			cr_assert_eq(prefix_of(e->args[a].name), p,
				     "%s has argument %s", e->name,
				     e->args[a].name);
		const struct ptw_trace_track *tk =
			ptw_trace_find_track(tr, e->track_uuid);
		cr_assert_not_null(tk);
		if (tk->kind != PTW_TRACE_TRACK_THREAD)
			cr_assert_str_eq(tk->name, e->name,
					 "async slice %s on track %s", e->name,
					 tk->name);
	}
}

static const char *const k_slices[] = UNLOAD_SLICES;
static const char *const k_instants[] = UNLOAD_INSTANTS;
static const char *const k_counters[] = UNLOAD_COUNTERS;

/* The counts of a complete trace: every event of every round, and a
 * "bye" per unload while tracing ran. */
static void check_counts(const struct tally *t)
{
	for (int p = 0; p < 2; p++) {
		char name[32];
		const char *const *lists[3] = {k_slices, k_instants, k_counters};
		const size_t lens[3] = {UNLOAD_N_SLICES, UNLOAD_N_INSTANTS,
					UNLOAD_N_COUNTERS};
		for (int l = 0; l < 3; l++)
			for (size_t k = 0; k < lens[l]; k++) {
				snprintf(name, sizeof(name), "%c.%s", 'A' + p,
					 lists[l][k]);
				cr_assert_eq(tally_get(t, name), g_rounds[p],
					     "%s: %lld events, logged %lld",
					     name, (long long)tally_get(t, name),
					     (long long)g_rounds[p]);
			}
		snprintf(name, sizeof(name), "%c.%s", 'A' + p, UNLOAD_ASYNC);
		cr_assert_eq(tally_get(t, name), g_rounds[p], "%s", name);
		snprintf(name, sizeof(name), "%c.bye", 'A' + p);
		cr_assert_eq(tally_get(t, name), g_byes[p], "%s", name);
	}
}

/* The slices left open by unload_plugin_open() of both plugins. */
static void check_open(const struct tally *t, int plugins)
{
	static const char *const open[] = {"open", "open_args", "async_open"};
	for (int p = 0; p < plugins; p++)
		for (size_t k = 0; k < 3; k++) {
			char name[32];
			snprintf(name, sizeof(name), "%c.%s", 'A' + p, open[k]);
			cr_assert_eq(tally_get(t, name), 1, "%s: %lld", name,
				     (long long)tally_get(t, name));
		}
}

/* ---- trace_processor --------------------------------------------------- */

/* The rows of a query's result, each "a,b,..." with the quotes removed,
 * into 'out' (tests/support/tp_shell.h). Returns the number of rows. */
static size_t tp_rows(const char *trace, const char *sql, char out[][96],
		      size_t max)
{
	char *csv = ptw_test_tp_query(trace, sql);
	size_t n = 0;
	for (const char *line = csv; *line && n < max; n++) {
		size_t k = 0;
		for (; *line && *line != '\n'; line++)
			if (*line != '"' && k < 95)
				out[n][k++] = *line;
		out[n][k] = '\0';
		if (*line == '\n')
			line++;
	}
	free(csv);
	return n;
}

/* One number. */
static long tp_number(const char *trace, const char *sql)
{
	char rows[1][96];
	size_t n = tp_rows(trace, sql, rows, 1);
	cr_assert_eq(n, 1, "%s", sql);
	return strtol(rows[0], NULL, 10);
}

/* trace_processor's view: no error, every plugin slice with its
 * plugin's category, arguments and (async) track; the counts per name
 * (slices and instants, counter tracks) are those of 't'. */
static void tp_check(const char *path, const struct tally *t)
{
	if (!ptw_test_tp_shell())
		return;
	/* each query counts what must not be: zero rows expected */
	/* each query counts what must not be: zero rows expected; a
	 * plugin's name is "A.<...>", "B.<...>" or "C.<...>" */
#define PLUGIN_NAME(x) "substr(" x ", 1, 1) in ('A', 'B', 'C') and substr(" \
		       x ", 2, 1) = '.'"
	static const struct {
		const char *sql, *what;
	} none[] = {
		{"select count(*) from stats where value > 0 and severity in "
		 "('error', 'data_loss')",
		 "trace_processor counts errors"},
		{"select count(*) from slice where " PLUGIN_NAME("name") " and "
		 "substr(name, 1, 1) || '.cat' != ifnull(category, '')",
		 "a slice with another plugin's category"},
		{"select count(*) from slice s join args a using (arg_set_id) "
		 "where " PLUGIN_NAME("s.name") " and a.key like 'debug.%' and "
		 "substr(s.name, 1, 1) != substr(a.key, 7, 1)",
		 "an argument with another plugin's name"},
		{"select count(*) from slice s join track t on s.track_id = "
		 "t.id where s.name like '_.async%' and t.name != s.name",
		 "an async slice on another's track"},
	};
	for (size_t q = 0; q < sizeof(none) / sizeof(none[0]); q++) {
		long bad = tp_number(path, none[q].sql);
		cr_assert_eq(bad, 0, "%s: %s", path, none[q].what);
	}
	char rows[64][96];
	static const char per_name[] =
		"select name, count(*) from slice where " PLUGIN_NAME("name")
		" group by name union all select t.name, count(*) from counter "
		"c join counter_track t on c.track_id = t.id where "
		PLUGIN_NAME("t.name") " group by t.name";
#undef PLUGIN_NAME
	size_t n = tp_rows(path, per_name, rows, 64);
	size_t want = 0;
	for (size_t i = 0; i < t->n; i++)
		want += prefix_of(t->s[i].name) != 0;
	cr_assert_eq(n, want, "%s: trace_processor has %zu names, we %zu",
		     path, n, want);
	for (size_t i = 0; i < n; i++) {
		char *comma = strrchr(rows[i], ',');
		cr_assert_not_null(comma);
		*comma = '\0';
		cr_assert_eq(strtoll(comma + 1, NULL, 10),
			     tally_get(t, rows[i]),
			     "%s: %s: trace_processor %s, reader %lld", path,
			     rows[i], comma + 1,
			     (long long)tally_get(t, rows[i]));
	}
}

/* Loads, checks and tallies one trace; with 'tp', queries it too. */
static void check_trace(const char *path, uint32_t flags, struct tally *t,
			int tp)
{
	struct ptw_trace *tr = ptw_test_load_checked_or_fail(path, flags);
	check_names(tr, t);
	ptw_trace_free(tr);
	if (tp)
		tp_check(path, t);
}

/* ---- the scenario ---------------------------------------------------- */

/* A session writing to 'path' in which nothing is lost (every event is
 * in the trace); the counts of what it must hold start at zero. */
static void session_start(const char *path, enum ptw_mode mode,
			  uint64_t ring_bytes, int stop_at_exit)
{
	memset(g_rounds, 0, sizeof(g_rounds));
	memset(g_byes, 0, sizeof(g_byes));
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.mode = mode;
	cfg.ring_bytes = ring_bytes;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	cfg.stop_at_exit = stop_at_exit;
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "ptw_start: %s", err.msg);
}

/* Fills a ring-mode window several times over from the main program, so
 * that the snapshot's window no longer holds the BEGINs of the open
 * slices: its prefix begins them again, by name. */
static void fill_window(void)
{
	for (int i = 0; i < 20000; i++)
		PTW_INSTANT_ARGS("main", "main.fill", PTW_ARG_I64("i", i));
	cr_assert_eq(ptw_flush(), 0);
}

/* Plugin 'which': logs while the backend is held (nothing of it is
 * drained before the unload), leaves slices open, and goes. */
static void plugin_cycle(char which, uint64_t open_id, uintptr_t *base)
{
	struct plugin p;
	plugin_load(&p, which);
	Dl_info info;
	cr_assert(dladdr(p.literal, &info) != 0);
	*base = (uintptr_t)info.dli_fbase;
	ptw_tr_test_hold = 1;
	log_rounds(&p, rounds());
	p.open(open_id);
	plugin_unload(&p);
	ptw_tr_test_hold = 0;
}

static void unload_run(enum ptw_mode mode)
{
	char path[256], snap_a[256], snap_b[256];
	ptw_test_tmp_path(path, sizeof(path), "unload");
	ptw_test_tmp_path(snap_a, sizeof(snap_a), "unload-snap-a");
	ptw_test_tmp_path(snap_b, sizeof(snap_b), "unload-snap-b");
	session_start(path, mode, 256u << 10, 0);
	bg_start();

	uintptr_t base_a, base_b;
	plugin_cycle('A', 1u << 30, &base_a);
	struct tally t;
	if (mode == PTW_MODE_RING) {
		fill_window();
		cr_assert_eq(ptw_snapshot(snap_a), 0);
		check_trace(snap_a, PTW_CHECK_ALLOW_OPEN, &t, 1);
		check_open(&t, 1);
	}
	plugin_cycle('B', (1u << 30) + 1, &base_b);
	/* where B went: A's place (its literals at A's addresses) is what
	 * the test is after; the loader usually does that */
	cr_log_info("plugin A at %#lx, plugin B at %#lx%s", (unsigned long)base_a,
		    (unsigned long)base_b,
		    base_a == base_b ? " (same place)" : "");
	if (mode == PTW_MODE_RING) {
		fill_window();
		cr_assert_eq(ptw_snapshot(snap_b), 0);
		check_trace(snap_b, PTW_CHECK_ALLOW_OPEN, &t, 1);
		check_open(&t, 2);
	}
	/* the slices the plugins left open end from the program */
	for (int k = 0; k < 4; k++)
		PTW_END("main");
	PTW_ASYNC_END("main", 1u << 30);
	PTW_ASYNC_END("main", (1u << 30) + 1);
	bg_stop();
	struct ptw_stats st;
	cr_assert_eq(ptw_stop(), 0);
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.invalid, 0);
	check_trace(path, mode == PTW_MODE_RING ? PTW_CHECK_ALLOW_OPEN : 0, &t,
		    1);
	if (mode == PTW_MODE_STREAM) {
		check_counts(&t); /* the whole session */
		check_open(&t, 2);
	}
	unlink(path);
	unlink(snap_a);
	unlink(snap_b);
}

Test(tracer_unload, stream_mode_plugins_log_and_go)
{
	unload_run(PTW_MODE_STREAM);
}

Test(tracer_unload, ring_mode_snapshots_after_unloads_name_open_slices)
{
	unload_run(PTW_MODE_RING);
}

/* Many load/log/unload cycles of both plugins (the same addresses again
 * and again), the backend not held, snapshots after each unload. */
static void cycles_run(enum ptw_mode mode)
{
	char path[256], snap[256];
	ptw_test_tmp_path(path, sizeof(path), "unload-cycles");
	ptw_test_tmp_path(snap, sizeof(snap), "unload-cycles-snap");
	session_start(path, mode, 32u << 20, 0); /* the window holds it all */
	bg_start();
	int cycles = (int)ptw_test_scale(12, 4);
	for (int c = 0; c < cycles; c++) {
		struct plugin p;
		plugin_load(&p, c % 2 ? 'B' : 'A');
		log_rounds(&p, rounds() / 4);
		plugin_unload(&p);
		if (mode == PTW_MODE_RING) {
			cr_assert_eq(ptw_snapshot(snap), 0);
			struct tally t;
			/* trace_processor for the last one only */
			check_trace(snap, PTW_CHECK_ALLOW_OPEN, &t,
				    c == cycles - 1);
			check_counts(&t); /* the window holds it all */
		}
	}
	bg_stop();
	cr_assert_eq(ptw_stop(), 0);
	struct tally t;
	check_trace(path, mode == PTW_MODE_RING ? PTW_CHECK_ALLOW_OPEN : 0, &t,
		    1);
	check_counts(&t);
	unlink(path);
	unlink(snap);
}

Test(tracer_unload, stream_mode_load_log_unload_cycles)
{
	cycles_run(PTW_MODE_STREAM);
}

Test(tracer_unload, ring_mode_load_log_unload_cycles)
{
	cycles_run(PTW_MODE_RING);
}

/* Unloads with no session: before the first, between two, and a session
 * after them sees the later plugin's names. */
Test(tracer_unload, unloads_without_a_session)
{
	struct plugin p;
	plugin_load(&p, 'A');
	p.log(0, 1); /* nothing: tracing is stopped */
	plugin_unload(&p);
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "unload-nosession");
	session_start(path, PTW_MODE_STREAM, 0, 0);
	plugin_load(&p, 'A');
	log_rounds(&p, 2);
	cr_assert_eq(ptw_stop(), 0);
	plugin_unload(&p); /* after the stop */
	plugin_load(&p, 'B');
	/* the same file: B's session only */
	session_start(path, PTW_MODE_STREAM, 0, 0);
	ptw_tr_test_hold = 1; /* nothing drained before the unload */
	log_rounds(&p, 3);
	plugin_unload(&p);
	ptw_tr_test_hold = 0;
	cr_assert_eq(ptw_stop(), 0);
	struct tally t;
	check_trace(path, 0, &t, 1);
	cr_assert_eq(g_rounds[0], 0);
	check_counts(&t);
	unlink(path);
}

/* The object range (lib/tracer/object_range.c): a plugin's literal and
 * code lie in its range, the program's do not; a plugin loaded later at
 * the same place is another object; an address of no object has none. */
Test(tracer_unload, object_range_tells_loaded_objects_apart)
{
	struct plugin p;
	plugin_load(&p, 'A');
	struct ptw_obj_range ra, rb, rx;
	cr_assert_eq(ptw_obj_range_of(p.literal, &ra), 0);
	cr_assert(ptw_obj_range_has(&ra, p.literal));
	cr_assert(ptw_obj_range_has(&ra, *(void **)&p.log));
	cr_assert(!ptw_obj_range_has(&ra, (const void *)&g_rounds));
	cr_assert_eq(ptw_obj_range_of(&g_rounds, &rx), 0);
	cr_assert(ptw_obj_range_has(&rx, (const void *)&g_rounds));
	cr_assert(!ptw_obj_range_same(&ra, &rx));
	struct ptw_obj_range again;
	cr_assert_eq(ptw_obj_range_of(*(void **)&p.open, &again), 0);
	cr_assert(ptw_obj_range_same(&ra, &again), "one object, one range");
	plugin_unload(&p);
	plugin_load(&p, 'B');
	cr_assert_eq(ptw_obj_range_of(p.literal, &rb), 0);
	cr_assert(!ptw_obj_range_same(&ra, &rb),
		  "a library loaded later is another object, even in the "
		  "same place");
	plugin_unload(&p);
	int on_stack = 0;
	cr_assert_eq(ptw_obj_range_of(&on_stack, &rx), -1);
	cr_assert_eq(rx.lo, 0);
	cr_assert_eq(rx.hi, 0);
}

/* A process that unloads a plugin, then exits with another one still
 * loaded and a session running: with stop_at_exit the stop comes first (then the hooks find no session)
 * and the trace is complete; without it the hooks drain at exit, while
 * the backend runs, and the process still ends normally. */
static void exit_run(int stop_at_exit)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "unload-exit");
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		alarm(60); /* a hang at exit ends as SIGALRM */
		session_start(path, PTW_MODE_STREAM, 0, stop_at_exit);
		struct plugin a, b;
		plugin_load(&a, 'A');
		plugin_load(&b, 'B'); /* B comes and goes while A stays */
		ptw_tr_test_hold = 1;
		log_rounds(&b, 5);
		plugin_unload(&b);
		ptw_tr_test_hold = 0;
		log_rounds(&a, 5);
		PTW_BEGIN("main", "main.open_at_exit");
		exit(0); /* A is never dlclose()d */
	}
	int status = 0;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the child ended with status %#x", status);
	if (stop_at_exit) {
		/* what the child logged */
		g_rounds[0] = g_rounds[1] = 5 * (THREADS + 1);
		g_byes[0] = 0;
		g_byes[1] = 1;
		struct tally t;
		check_trace(path, PTW_CHECK_ALLOW_OPEN, &t, 1);
		check_counts(&t);
	}
	unlink(path);
}

Test(tracer_unload, exit_with_a_plugin_loaded_and_stop_at_exit)
{
	exit_run(1);
}

Test(tracer_unload, exit_with_a_plugin_loaded_and_tracing_running)
{
	exit_run(0);
}

/* A C++ plugin: a static object, and a function-local static made after
 * the library's first event, log from their destructors at the unload;
 * the tracer's hook comes after both (priority 101) and takes their
 * events along. */
Test(tracer_unload, cxx_plugin_static_destructors_log_at_unload)
{
	char path[256], lib[512];
	ptw_test_tmp_path(path, sizeof(path), "unload-cxx");
	struct plugin a;
	plugin_load(&a, 'A'); /* for the folder */
	snprintf(lib, sizeof(lib), "%s", a.path);
	plugin_unload(&a);
	char *slash = strrchr(lib, '/');
	cr_assert_not_null(slash);
	snprintf(slash + 1, sizeof(lib) - (size_t)(slash + 1 - lib),
		 "libunload_cxx.so");
	session_start(path, PTW_MODE_STREAM, 0, 0);
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "dlopen %s: %s", lib, dlerror());
	void (*log)(int64_t);
	*(void **)&log = dlsym(h, "unload_cxx_log");
	cr_assert_not_null(log);
	ptw_tr_test_hold = 1;
	log(1);
	log(2);
	cr_assert_eq(dlclose(h), 0);
	cr_assert_null(dlopen(lib, RTLD_NOW | RTLD_NOLOAD));
	ptw_tr_test_hold = 0;
	cr_assert_eq(ptw_stop(), 0);
	struct tally t;
	check_trace(path, 0, &t, 1);
	static const struct {
		const char *name;
		int64_t n;
	} want[] = {{"C.scope", 2}, {"C.dyn", 2},	  {"C.counter", 2},
		    {"C.bye", 2},   {"C.bye_static", 1}, {"C.bye_local", 1}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_assert_eq(tally_get(&t, want[i].name), want[i].n,
			     "%s: %lld, logged %lld", want[i].name,
			     (long long)tally_get(&t, want[i].name),
			     (long long)want[i].n);
	cr_assert_eq(t.n, sizeof(want) / sizeof(want[0]));
	unlink(path);
}
