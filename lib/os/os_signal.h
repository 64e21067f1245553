/* os_signal.h - the signals ptw deals with: SIGPIPE around writes to a
 * pipe or socket, the signals ptw's own threads leave to the program,
 * and the fault handlers behind the crash dump. Internal, not API.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Implemented once per OS (lib/os/signal_linux.c); a port adds its own
 * file, guarded by its OS macro, and nothing else changes. Contract:
 * - ptw_sigpipe_hold / ptw_sigpipe_release bracket writes to a pipe: a
 *   reader that went away must give the writer EPIPE, never kill the
 *   program with SIGPIPE, and the program's disposition of SIGPIPE is not
 *   ours to change. Hold blocks SIGPIPE in the calling thread; release(g,
 *   failed) takes back the SIGPIPE a failed write raised (unless one was
 *   pending before the hold: that one is the program's) and restores the
 *   thread's mask. Both keep errno; async-signal-safe (the crash dump
 *   uses them).
 * - ptw_os_writev_nosigpipe(fd, iov, cnt) is writev() on a socket that
 *   fails with EPIPE and raises no SIGPIPE.
 * - ptw_os_signals_hold_async(old) blocks every asynchronous signal in
 *   the calling thread (faults stay deliverable: the crash dump relies on
 *   them) and saves the previous mask in *old, which
 *   ptw_os_signals_restore(old) puts back. A thread created in between
 *   inherits the blocked mask, so the program's handlers (a timer's
 *   SIGALRM, SIGCHLD, SIGTERM...) never run on it. Returns 0 or an errno.
 * - ptw_os_fault_install(fn) makes fn(sig) run on SIGSEGV, SIGBUS,
 *   SIGILL, SIGFPE and SIGABRT, keeping the previous handlers; 0, or -1
 *   with nothing installed. From fn, ptw_os_fault_chain(sig) puts sig's
 *   previous handler back (the default one for an ignored fault, which
 *   would come back forever) and raises sig again: it is delivered to
 *   that handler when fn returns. ptw_os_fault_uninstall() puts the
 *   previous handlers back where fn is still the one installed. Install
 *   and uninstall: one caller at a time; fn and chain: async-signal-safe
 *   context. */
#ifndef PTW_OS_SIGNAL_H
#define PTW_OS_SIGNAL_H

#include <signal.h>
#include <sys/types.h>
#include <sys/uio.h>

struct ptw_sigpipe_guard {
	sigset_t old;
	int was_pending;
};
void ptw_sigpipe_hold(struct ptw_sigpipe_guard *g);
void ptw_sigpipe_release(struct ptw_sigpipe_guard *g, int failed);

ssize_t ptw_os_writev_nosigpipe(int fd, struct iovec *iov, int cnt);

int ptw_os_signals_hold_async(sigset_t *old);
void ptw_os_signals_restore(const sigset_t *old);

int ptw_os_fault_install(void (*fn)(int sig));
void ptw_os_fault_chain(int sig);
void ptw_os_fault_uninstall(void);

#endif /* PTW_OS_SIGNAL_H */
