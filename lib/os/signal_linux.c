/* signal_linux.c - os_signal.h on Linux.
 * SPDX-License-Identifier: Apache-2.0 */
#if defined(__linux__)
#include "os_signal.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

void ptw_sigpipe_hold(struct ptw_sigpipe_guard *g)
{
	int saved = errno;
	sigset_t sp, pend;
	sigemptyset(&sp);
	sigaddset(&sp, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sp, &g->old);
	g->was_pending = sigpending(&pend) == 0 &&
			 sigismember(&pend, SIGPIPE) == 1;
	errno = saved;
}

void ptw_sigpipe_release(struct ptw_sigpipe_guard *g, int failed)
{
	int saved = errno;
	sigset_t sp, pend;
	sigemptyset(&sp);
	sigaddset(&sp, SIGPIPE);
	/* Only a failed write (EPIPE) raises SIGPIPE: the check costs
	 * nothing on writes that went through. */
	if (failed && !g->was_pending && sigpending(&pend) == 0 &&
	    sigismember(&pend, SIGPIPE) == 1) {
		struct timespec now = {0, 0};
		while (sigtimedwait(&sp, NULL, &now) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	errno = saved;
}

ssize_t ptw_os_writev_nosigpipe(int fd, struct iovec *iov, int cnt)
{
	struct msghdr m;
	memset(&m, 0, sizeof(m));
	m.msg_iov = iov;
	m.msg_iovlen = (size_t)cnt;
	return sendmsg(fd, &m, MSG_NOSIGNAL);
}

int ptw_os_signals_hold_async(sigset_t *old)
{
	static const int faults[] = {SIGSEGV, SIGBUS, SIGILL,
				     SIGFPE,  SIGTRAP, SIGSYS};
	sigset_t quiet;
	sigfillset(&quiet);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(&quiet, faults[i]);
	return pthread_sigmask(SIG_SETMASK, &quiet, old);
}

void ptw_os_signals_restore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* ---- fault handlers ---------------------------------------------------- */

static const int ptw_os_fault_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE,
					SIGABRT};
#define PTW_OS_NFAULT \
	(sizeof(ptw_os_fault_sigs) / sizeof(ptw_os_fault_sigs[0]))

static struct {
	void (*fn)(int sig);
	int installed;
	struct sigaction old[PTW_OS_NFAULT];
} ptw_os_fault;

static void ptw_os_fault_entry(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	ptw_os_fault.fn(sig);
}

int ptw_os_fault_install(void (*fn)(int sig))
{
	const int *sigs = ptw_os_fault_sigs;
	struct sigaction sa, *old = ptw_os_fault.old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ptw_os_fault_entry;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	ptw_os_fault.fn = fn;
	for (size_t i = 0; i < PTW_OS_NFAULT; i++) {
		if (sigaction(sigs[i], &sa, &old[i]) != 0) {
			while (i--)
				sigaction(sigs[i], &old[i], NULL);
			return -1;
		}
	}
	ptw_os_fault.installed = 1;
	return 0;
}

void ptw_os_fault_chain(int sig)
{
	for (size_t i = 0; i < PTW_OS_NFAULT; i++) {
		if (ptw_os_fault_sigs[i] != sig)
			continue;
		struct sigaction old = ptw_os_fault.old[i];
		/* an ignored fault would come back forever: die instead */
		if (old.sa_handler == SIG_IGN && sig != SIGABRT) {
			memset(&old, 0, sizeof(old));
			old.sa_handler = SIG_DFL;
		}
		sigaction(sig, &old, NULL);
	}
	/* Pending until the handler returns (sig is blocked there), then
	 * delivered to the previous disposition: core dump and exit status
	 * as without ptw. A fault re-executes its instruction anyway. */
	raise(sig);
}

void ptw_os_fault_uninstall(void)
{
	if (!ptw_os_fault.installed)
		return;
	for (size_t i = 0; i < PTW_OS_NFAULT; i++) {
		struct sigaction cur;
		if (sigaction(ptw_os_fault_sigs[i], NULL, &cur) == 0 &&
		    (cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_sigaction == ptw_os_fault_entry)
			sigaction(ptw_os_fault_sigs[i], &ptw_os_fault.old[i], NULL);
	}
	ptw_os_fault.installed = 0;
}
#endif /* __linux__ */
