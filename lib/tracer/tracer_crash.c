/* tracer_crash.c - cfg.crash_path: on SIGSEGV, SIGBUS, SIGILL, SIGFPE and
 * SIGABRT, write what the backend has encoded to a file, with
 * async-signal-safe calls only (SIGPIPE held off around the writes, as in
 * sink.h), then restore the previous handler and re-raise the signal.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The backend holds a "pass lock" (an atomic word, no mutex) while it
 * touches the writer: 0 idle, 1 busy, 2 a crash dump owns the writer, 3
 * the session is being freed. The handler takes the word from 0 to 2
 * (waiting up to PTW_CRASH_WAIT_MS for a pass to end), so it reads a
 * writer nobody changes, and the backend never touches it again. If the
 * crashing thread is the backend itself in the middle of a pass, or the
 * pass does not end in time, only what is known to be complete is
 * written: the pieces of the ring (ring mode), nothing (stream mode). */
#include "tracer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/os/os_signal.h"
#include "lib/os/os_thread.h"
#include "lib/writer/writer_internal.h"

#define PTW_CRASH_WAIT_MS 2000

static struct {
	_Atomic(struct ptw_tracer *) tr;
	_Atomic int state;
	_Atomic int entered;
	_Atomic long backend_tid;
	char path[4096];
} ptw_crash;

static long ptw_crash_tid(void) { return (long)ptw_os_thread_id(); }

int ptw_tr_pass_begin(void)
{
	int idle = 0;
	if (atomic_compare_exchange_strong(&ptw_crash.state, &idle, 1))
		return 0;
	/* A crash dump owns the writer: the process is going down. */
	for (;;) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

void ptw_tr_pass_end(void) { atomic_store(&ptw_crash.state, 0); }

void ptw_tr_backend_tid(void) { atomic_store(&ptw_crash.backend_tid, ptw_crash_tid()); }

/* Takes the writer from the backend: 1 if it is idle (consistent), 0 if
 * not (interrupted pass, or timeout). */
static int ptw_crash_acquire(void)
{
	int me_backend = atomic_load(&ptw_crash.backend_tid) == ptw_crash_tid();
	for (int i = 0; i < PTW_CRASH_WAIT_MS; i++) {
		int idle = 0;
		if (atomic_compare_exchange_strong(&ptw_crash.state, &idle, 2))
			return 1;
		if (idle == 3)
			return -1; /* the session is being freed */
		if (me_backend)
			break;
		struct timespec ts = {0, 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	/* Keep the backend from starting another pass. */
	int busy = 1;
	if (!atomic_compare_exchange_strong(&ptw_crash.state, &busy, 2))
		return busy == 3 ? -1 : 0;
	return 0;
}

static void ptw_crash_dump(void)
{
	struct ptw_tracer *tr = atomic_load(&ptw_crash.tr);
	if (!tr)
		return;
	int safe = ptw_crash_acquire();
	if (safe < 0 || !tr->w)
		return;
	int fd = open(ptw_crash.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0666);
	if (fd < 0)
		return;
	struct ptw_i_trace_stats st = {
		.packet_loss = atomic_load_explicit(&tr->drops_announced,
						    memory_order_relaxed)};
	if (tr->ring)
		(void)ptw_i_writer_write_window(tr->w, fd, safe ? &st : NULL,
						safe);
	else if (safe)
		(void)ptw_i_writer_write_pending(tr->w, fd, &st);
	close(fd);
}

/* The previous handler gets the signal once this one returns, with the
 * core dump and exit status as without ptw (os_signal.h). */
static void ptw_crash_handler(int sig)
{
	int e = errno;
	if (!atomic_exchange(&ptw_crash.entered, 1))
		ptw_crash_dump();
	ptw_os_fault_chain(sig);
	errno = e;
}

/* Under ctl mutex, after the session is set up. */
int ptw_tr_crash_install(struct ptw_tracer *tr, const char *path)
{
	atomic_store(&ptw_crash.state, 0);
	if (!path)
		return 0;
	size_t n = strlen(path);
	if (n >= sizeof(ptw_crash.path))
		return PTW_ERR_INVALID;
	memcpy(ptw_crash.path, path, n + 1);
	atomic_store(&ptw_crash.entered, 0);
	atomic_store(&ptw_crash.tr, tr);
	if (ptw_os_fault_install(ptw_crash_handler) != 0) {
		atomic_store(&ptw_crash.tr, NULL);
		return PTW_ERR_IO;
	}
	return 0;
}

/* ptw_stop: before the session is freed. */
void ptw_tr_crash_uninstall(void)
{
	ptw_os_fault_uninstall();
	atomic_store(&ptw_crash.tr, NULL);
	/* A dump in progress keeps the session: wait for it (the process
	 * dies when it ends). */
	for (;;) {
		int idle = 0;
		if (atomic_compare_exchange_strong(&ptw_crash.state, &idle, 3))
			return;
		struct timespec ts = {0, 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* fork(): the child has no session; its crash dumps nothing. */
void ptw_tr_crash_atfork_child(void)
{
	atomic_store(&ptw_crash.tr, NULL);
	atomic_store(&ptw_crash.state, 0);
}
