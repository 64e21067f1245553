/* shim_main.c - runner for the TSan stand-in of Criterion: one forked child
 * per test, Criterion-style "Synthesis:" line for tests/run.sh.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#define PTW_SHIM_MAX 512
static struct ptw_shim_test ptw_shim_tests[PTW_SHIM_MAX];
static int ptw_shim_n;
#define PTW_SHIM_MAX_SUITES 16
static struct ptw_shim_test ptw_shim_suites[PTW_SHIM_MAX_SUITES];
static int ptw_shim_n_suites;

static void ptw_shim_add(struct ptw_shim_test *list, int *n, int max,
			 const struct ptw_shim_test *t)
{
	if (*n < max)
		list[(*n)++] = *t;
}

void ptw_shim_register(const struct ptw_shim_test *t)
{
	ptw_shim_add(ptw_shim_tests, &ptw_shim_n, PTW_SHIM_MAX, t);
}

void ptw_shim_register_suite(const struct ptw_shim_test *t)
{
	ptw_shim_add(ptw_shim_suites, &ptw_shim_n_suites, PTW_SHIM_MAX_SUITES,
		     t);
}

/* A test's own .init/.fini, else its suite's (TestSuite). */
static void ptw_shim_fixtures(struct ptw_shim_test *t)
{
	for (int i = 0; i < ptw_shim_n_suites; i++) {
		const struct ptw_shim_test *s = &ptw_shim_suites[i];
		if (strcmp(s->t_suite, t->t_suite) != 0)
			continue;
		if (!t->init)
			t->init = s->init;
		if (!t->fini)
			t->fini = s->fini;
	}
}

void ptw_shim_fail(const char *file, int line, const char *what,
		   const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "[----] %s:%d: Assertion Failed: %s", file, line,
		what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	_exit(1);
}

void ptw_shim_skip(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "[SKIP] %s:%d:", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	_exit(77);
}

/* The test with its fixtures. */
static void ptw_shim_call(struct ptw_shim_test *t)
{
	ptw_shim_fixtures(t);
	if (t->init)
		t->init();
	t->t_fn();
	if (t->fini)
		t->fini();
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "--filter=", 9) == 0)
			only = argv[i] + 9;
	int pass = 0, fail = 0, crash = 0;
	for (int i = 0; i < ptw_shim_n; i++) {
		struct ptw_shim_test *t = &ptw_shim_tests[i];
		if (t->disabled || (only && !strstr(t->t_name, only)))
			continue;
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0) {
			ptw_shim_call(t);
			fflush(NULL);
			_exit(0);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 77)) {
			pass++;
		} else if (WIFEXITED(st)) {
			fail++;
			fprintf(stderr, "[FAIL] %s::%s\n", t->t_suite, t->t_name);
		} else {
			crash++;
			fprintf(stderr, "[FAIL] %s::%s: crashed (signal %d)\n",
				t->t_suite, t->t_name, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		}
	}
	printf("[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: %d \n",
	       pass + fail + crash, pass, fail, crash);
	return fail || crash;
}
