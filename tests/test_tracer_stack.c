/* test_tracer_stack.c - the _STACK macros: a known call chain (a static
 * function, a function of a shared library, a callback) captured by frame
 * pointers on the producer and named by the backend, as trace_processor
 * shows it (frames in order, the library's mapping with its build id and
 * rel_pc); PTW_INSTANT_STACK, PTW_BEGIN_STACK and PTW_SCOPE_STACK, and
 * cfg.stack_categories; through the backend's fast and general paths and
 * the flight recorder. PTW_TEST_LOADS_PLUGINS: dlopen()s tests/plugins/
 * libstack_lib.so (and is linked with -rdynamic).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "support/tp_stack.h"

static void (*lib_call)(void (*cb)(int), int k);
static void *lib_base;

static void load_lib(void)
{
	char exe[400], path[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert(n > 0);
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	cr_assert_not_null(slash);
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/plugins/libstack_lib.so", exe);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "dlopen %s: %s", path, dlerror());
	*(void **)&lib_call = dlsym(h, "stack_lib_call");
	cr_assert_not_null(lib_call);
	Dl_info di;
	cr_assert(dladdr(*(void **)&lib_call, &di));
	lib_base = di.dli_fbase;
}

#define KEEP() __asm__ volatile("" ::: "memory") /* no tail calls */

static __attribute__((noinline)) void stk_leaf(int k)
{
	PTW_INSTANT_STACK("stk", "leaf");
	if (k)
		PTW_INSTANT_STACK("stk", "leaf_again");
	KEEP();
}

__attribute__((noinline)) void stk_cb(int k);
__attribute__((noinline)) void stk_cb(int k)
{
	PTW_SCOPE_STACK("stk", "cb_scope");
	PTW_BEGIN_STACK("stk", "cb_begin");
	stk_leaf(k);
	PTW_END();
	KEEP();
}

__attribute__((noinline)) void stk_outer(int k);
__attribute__((noinline)) void stk_outer(int k)
{
	lib_call(stk_cb, k);
	KEEP();
}

static void *stk_thread(void *arg)
{
	for (int i = 0; i < 3; i++)
		stk_outer((int)(intptr_t)arg);
	KEEP();
	return NULL;
}

/* Each row "name:<outside>>from>...;" of 'rows' (cut in place) as
 * "name:from>...;" into got: what lies outside the thread's function 'from'
 * (the C library's or TSan's thread start) is cut. */
static void cut_rows(char *rows, const char *from, char *got, size_t max)
{
	got[0] = '\0';
	for (char *r = rows, *end; *r; r = end + 1) {
		end = strchr(r, ';');
		cr_assert_not_null(end, "%s", rows);
		*end = '\0';
		char *colon = strchr(r, ':');
		char *at = strstr(r, from);
		cr_assert(colon && at, "row %s", r);
		size_t n = strlen(got);
		snprintf(got + n, max - n, "%.*s%s;", (int)(colon - r + 1), r,
			 at);
	}
}

/* What trace_processor shows from the thread's function in. */
static void expect_chains(const char *path)
{
	char rows[8192];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) != 0)
		return;
	char want[2048] = "", got[8192];
	const char *chain = "stk_thread>stk_outer>stack_lib_call>stk_cb";
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(want);
		snprintf(want + n, sizeof(want) - n,
			 "cb_scope:%s;cb_begin:%s;leaf:%s>stk_leaf;"
			 "leaf_again:%s>stk_leaf;",
			 chain, chain, chain, chain);
	}
	cut_rows(rows, "stk_thread", got, sizeof(got));
	cr_assert_str_eq(got, want);

	/* the library's frame: its file, build id and rel_pc in the file */
	char m[1024];
	ptw_test_tp_rows(path,
			 "select distinct f.rel_pc, m.name, length(m.build_id)"
			 " from stack_profile_frame f join stack_profile_mapping m"
			 " on m.id = f.mapping where f.name = 'stack_lib_call'",
			 m, sizeof(m));
	unsigned long long rel = 0;
	char name[512];
	int bid = 0;
	int fields = sscanf(m, "%llu,%511[^,],%d;", &rel, name, &bid);
	cr_assert_eq(fields, 3, "%s", m);
	cr_assert(strstr(name, "/plugins/libstack_lib.so"), "%s", name);
	cr_assert_eq(bid, 40, "build id of 20 bytes: %s", m);
	uintptr_t fn = (uintptr_t)*(void **)&lib_call - (uintptr_t)lib_base;
	cr_assert(rel > fn && rel < fn + 64, "rel_pc %llx, function at %lx",
		  rel, (unsigned long)fn);
}

static void run(struct ptw_config *cfg, const char *tag)
{
	load_lib();
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), tag);
	cfg->output_path = path;
	cr_assert_eq(ptw_start(cfg), 0);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, stk_thread, (void *)(intptr_t)1), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(ptw_stop(), 0);
	expect_chains(path);
	unlink(path);
}

Test(tracer_stack, known_chains_through_the_fast_path)
{
	PTW_TEST_NEEDS_STACK_WALK();
	struct ptw_config cfg = {0};
	run(&cfg, "stk");
}

Test(tracer_stack, known_chains_through_the_general_path)
{
	PTW_TEST_NEEDS_STACK_WALK();
	struct ptw_config cfg = {.general_path_only = 1};
	run(&cfg, "stkg");
}

Test(tracer_stack, known_chains_in_the_flight_recorder)
{
	PTW_TEST_NEEDS_STACK_WALK();
	struct ptw_config cfg = {.mode = PTW_MODE_RING};
	run(&cfg, "stkr");
}

/* cfg.stack_categories: every PTW_BEGIN / PTW_SCOPE of those categories
 * carries its stack; their other events and other categories none. */
static __attribute__((noinline)) void cat_inner(void)
{
	PTW_BEGIN("grp,auto", "begin");
	PTW_INSTANT("auto", "instant");
	PTW_END();
	PTW_SCOPE("plain", "no_stack");
	KEEP();
}

__attribute__((noinline)) void cat_scoped(void);
__attribute__((noinline)) void cat_scoped(void)
{
	PTW_SCOPE("auto", "scope");
	cat_inner();
	KEEP();
}

static void *cat_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++)
		cat_scoped();
	KEEP();
	return NULL;
}

static void run_cat(struct ptw_config *cfg, const char *tag)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), tag);
	cfg->output_path = path;
	cfg->stack_categories = ",x,,au*,"; /* empty items are ignored */
	cr_assert_eq(ptw_start(cfg), 0);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, cat_thread, NULL), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(ptw_stop(), 0);
	char rows[4096], got[4096];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0) {
		cut_rows(rows, "cat_thread", got, sizeof(got));
		cr_assert_str_eq(got,
				 "scope:cat_thread>cat_scoped;"
				 "begin:cat_thread>cat_scoped>cat_inner;"
				 "scope:cat_thread>cat_scoped;"
				 "begin:cat_thread>cat_scoped>cat_inner;",
				 "%s", got);
	}
	unlink(path);
}

Test(tracer_stack, stack_categories_give_begins_their_stack)
{
	PTW_TEST_NEEDS_STACK_WALK();
	struct ptw_config cfg = {0};
	run_cat(&cfg, "stkc");
}

Test(tracer_stack, stack_categories_in_the_flight_recorder)
{
	PTW_TEST_NEEDS_STACK_WALK();
	struct ptw_config cfg = {.mode = PTW_MODE_RING, .general_path_only = 1};
	run_cat(&cfg, "stkcr");
}

/* A flight recorder that wraps many times: every stack in the window
 * still resolves (each piece interns its stacks again). */
static __attribute__((noinline)) void wrap_leaf(int i)
{
	PTW_INSTANT_STACK("stk", "w");
	if (i % 2)
		PTW_INSTANT_STACK("stk", "w");
	KEEP();
}

static void *wrap_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++)
		wrap_leaf(i);
	KEEP();
	return NULL;
}

Test(tracer_stack, a_wrapped_flight_recorder_keeps_whole_stacks)
{
	PTW_TEST_NEEDS_STACK_WALK();
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "stkw");
	struct ptw_config cfg = {.output_path = path, .mode = PTW_MODE_RING,
				 .ring_bytes = 64u << 10,
				 .overflow = PTW_OVERFLOW_WAIT};
	cr_assert_eq(ptw_start(&cfg), 0);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, wrap_thread, NULL), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	struct ptw_stats st;
	ptw_get_stats(&st);
	cr_assert_eq(ptw_stop(), 0);
	static char rows[1 << 20], got[1 << 20];
	if (ptw_test_tp_stacks(path, rows, sizeof(rows)) == 0) {
		cut_rows(rows, "wrap_thread", got, sizeof(got));
		size_t n = 0;
		for (const char *r = got; *r; r += strlen("w:wrap_thread>wrap_leaf;"), n++)
			cr_assert(strncmp(r, "w:wrap_thread>wrap_leaf;",
					  strlen("w:wrap_thread>wrap_leaf;")) == 0,
				  "row %zu: %.60s", n, r);
		/* the window holds a part of the 30000 events only */
		cr_assert(n > 100 && n < 30000, "%zu stacks", n);
	}
	unlink(path);
}

/* Tracing stopped: the macros capture nothing and write nothing. */
Test(tracer_stack, stopped_macros_do_nothing)
{
	load_lib();
	stk_outer(1);
	struct ptw_stats st;
	ptw_get_stats(&st);
	cr_assert_eq(st.events, 0);
}
