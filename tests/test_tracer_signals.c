/* test_tracer_signals.c - the threads ptw starts block every asynchronous
 * signal: a program's timer signal (process-directed SIGALRM) runs its
 * handler on the program's own threads only, never on ptw's backend
 * (where a macro in the handler would deadlock the backend), while the
 * faults the crash dump relies on stay deliverable there.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "support/ptw_test.h"

#define MAX_TASKS 64

/* The tids of ptw's threads: those named "ptw-..." in /proc/self/task
 * (the backend names itself "ptw-backend"). */
static size_t ptw_threads(long *tid, size_t max)
{
	DIR *d = opendir("/proc/self/task");
	cr_assert_not_null(d);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char p[300], comm[32] = "";
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(p, "r");
		if (!f)
			continue; /* the thread has just exited */
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, "ptw-", 4) == 0 && n < max)
			tid[n++] = strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	return n;
}

static int has_tid(const long *tid, size_t n, long t)
{
	for (size_t i = 0; i < n; i++)
		if (tid[i] == t)
			return 1;
	return 0;
}

/* Starts tracing into a temporary file (path) and returns the tids of
 * the threads ptw started. */
static size_t start_and_find_ptw_threads(char *path, size_t len, long *ptw)
{
	ptw_test_tmp_path(path, len, "signals");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	struct ptw_error err;
	cr_assert_eq(ptw_start_ex(&cfg, &err), 0, "%s", err.msg);
	/* the backend has run (a new thread starts with all signals blocked
	 * until glibc gives it the mask it inherits) */
	cr_assert_eq(ptw_flush(), 0);
	size_t n = ptw_threads(ptw, MAX_TASKS);
	cr_assert_eq(n, 1, "%zu threads named ptw-*", n);
	return n;
}

/* ---- a program's timer ---------------------------------------------------- */

#define ROUNDS 50
static atomic_long alarm_tid[ROUNDS * 4];
static atomic_int alarms;

static void on_alarm(int sig)
{
	(void)sig;
	int i = atomic_fetch_add(&alarms, 1);
	if (i < (int)(sizeof(alarm_tid) / sizeof(alarm_tid[0])))
		atomic_store(&alarm_tid[i], (long)gettid());
}

static int sigalrm_pending(void)
{
	sigset_t p;
	cr_assert_eq(sigpending(&p), 0);
	return sigismember(&p, SIGALRM) == 1;
}

Test(tracer_signals, a_timer_signal_never_runs_its_handler_on_a_ptw_thread)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	/* ptw_start from a thread that takes SIGALRM: ptw's threads must
	 * not inherit that */
	cr_assert_eq(pthread_sigmask(SIG_UNBLOCK, &alrm, NULL), 0);
	char path[256];
	long ptw[MAX_TASKS];
	size_t n_ptw = start_and_find_ptw_threads(path, sizeof(path), ptw);

	struct itimerval it = {{0, 500}, {0, 500}};
	cr_assert_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	/* Each round: the main thread blocks SIGALRM and traces until the
	 * next expiry is either pending (no thread can take it) or handled
	 * (by a thread that could: only ptw's). Then it takes the pending
	 * one itself. */
	for (int r = 0; r < ROUNDS; r++) {
		cr_assert_eq(pthread_sigmask(SIG_BLOCK, &alrm, NULL), 0);
		int seen = atomic_load(&alarms);
		for (long i = 0; !sigalrm_pending() && atomic_load(&alarms) == seen;
		     i++)
			PTW_INSTANT_ARGS("sig", "busy", PTW_ARG_I64("i", i));
		cr_assert_eq(pthread_sigmask(SIG_UNBLOCK, &alrm, NULL), 0);
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	cr_assert_eq(setitimer(ITIMER_REAL, &off, NULL), 0);
	cr_assert_eq(ptw_stop(), 0);
	signal(SIGALRM, SIG_IGN);

	int n = atomic_load(&alarms);
	cr_assert_geq(n, ROUNDS);
	long me = (long)gettid();
	for (int i = 0; i < n && i < (int)(sizeof(alarm_tid) / sizeof(alarm_tid[0]));
	     i++) {
		long t = atomic_load(&alarm_tid[i]);
		cr_assert(!has_tid(ptw, n_ptw, t),
			  "alarm %d of %d ran its handler on ptw's thread %ld",
			  i, n, t);
		cr_assert_eq(t, me);
	}
	struct ptw_trace *tr = ptw_test_load_checked_or_fail(path, 0);
	cr_assert_not_null(ptw_test_find_event(tr, 0, "busy", 0));
	ptw_trace_free(tr);
	unlink(path);
}

/* ---- the mask itself ------------------------------------------------------ */

/* The blocked-signal mask of thread 'tid' (SigBlk in its status file):
 * bit sig-1 for signal sig. */
static unsigned long long blocked_of(long tid)
{
	char p[64], line[256];
	snprintf(p, sizeof(p), "/proc/self/task/%ld/status", tid);
	FILE *f = fopen(p, "r");
	cr_assert_not_null(f, "%s", p);
	unsigned long long m = 0;
	int found = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &m) == 1) {
			found = 1;
			break;
		}
	fclose(f);
	cr_assert(found, "no SigBlk in %s", p);
	return m;
}

Test(tracer_signals, ptw_threads_block_asynchronous_signals_and_take_faults)
{
	sigset_t none;
	sigemptyset(&none);
	cr_assert_eq(pthread_sigmask(SIG_SETMASK, &none, NULL), 0);
	char path[256];
	long ptw[MAX_TASKS];
	size_t n_ptw = start_and_find_ptw_threads(path, sizeof(path), ptw);
	static const int async[] = {SIGALRM, SIGCHLD, SIGTERM, SIGINT,
				    SIGHUP,  SIGUSR1, SIGUSR2, SIGPIPE,
				    SIGWINCH, SIGIO,  SIGVTALRM, SIGPROF};
	static const int faults[] = {SIGSEGV, SIGBUS, SIGILL,
				     SIGFPE,  SIGTRAP, SIGSYS};
	for (size_t k = 0; k < n_ptw; k++) {
		unsigned long long m = blocked_of(ptw[k]);
		for (size_t i = 0; i < sizeof(async) / sizeof(async[0]); i++)
			cr_assert(m & (1ull << (async[i] - 1)),
				  "thread %ld takes signal %d (SigBlk %llx)",
				  ptw[k], async[i], m);
		/* under qemu-user SigBlk is the emulator's own mask on the
		 * host, where the program's real-time signals have other
		 * numbers: only the first 31 match */
		if (!getenv("PTW_TEST_RUNNER"))
			cr_assert(m & (1ull << (SIGRTMIN - 1)));
		else if (k == 0)
			fprintf(stderr, "SIGRTMIN's bit not checked under %s "
					"(/proc shows the emulator's mask)\n",
				getenv("PTW_TEST_RUNNER"));
		for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
			cr_assert(!(m & (1ull << (faults[i] - 1))),
				  "thread %ld blocks fault %d (SigBlk %llx)",
				  ptw[k], faults[i], m);
	}
	/* and the caller's mask is as it was */
	cr_assert_eq(blocked_of((long)gettid()), 0);
	cr_assert_eq(ptw_stop(), 0);
	unlink(path);
}
