/* test_os.c - the contracts of lib/os/'s interfaces (os_*.h), checked on
 * the running system: what a port's files must do for the rest of ptw to
 * work unchanged. Each test is one promise of one header.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/os/os_file.h"
#include "lib/os/os_fork.h"
#include "lib/os/os_mem.h"
#include "lib/os/os_object.h"
#include "lib/os/os_proc.h"
#include "lib/os/os_signal.h"
#include "lib/os/os_thread.h"
#include "support/ptw_test.h"

/* ---- os_thread.h ------------------------------------------------------- */

struct named {
	int64_t id;
	char name[32];
	char cut[4];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int go;
};

static void *named_main(void *arg)
{
	struct named *n = arg;
	pthread_mutex_lock(&n->mu); /* named by the creator meanwhile */
	while (!n->go)
		pthread_cond_wait(&n->cv, &n->mu);
	pthread_mutex_unlock(&n->mu);
	n->id = ptw_os_thread_id();
	ptw_os_thread_name(n->name, sizeof(n->name));
	ptw_os_thread_name(n->cut, sizeof(n->cut));
	return NULL;
}

Test(os_thread, ids_are_nonzero_stable_and_differ_between_threads)
{
	int64_t me = ptw_os_thread_id();
	cr_assert_neq(me, 0);
	cr_assert_eq(ptw_os_thread_id(), me);
	struct named n = {.mu = PTHREAD_MUTEX_INITIALIZER,
			  .cv = PTHREAD_COND_INITIALIZER};
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, named_main, &n), 0);
	pthread_mutex_lock(&n.mu);
	n.go = 1;
	pthread_cond_signal(&n.cv);
	pthread_mutex_unlock(&n.mu);
	pthread_join(th, NULL);
	cr_assert_neq(n.id, 0);
	cr_assert_neq(n.id, me);
}

Test(os_thread, a_name_set_by_the_creator_is_read_by_the_thread_and_cut_to_fit)
{
	struct named n = {.mu = PTHREAD_MUTEX_INITIALIZER,
			  .cv = PTHREAD_COND_INITIALIZER};
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, named_main, &n), 0);
	ptw_os_thread_set_name(th, "ptw-os-test");
	pthread_mutex_lock(&n.mu);
	n.go = 1;
	pthread_cond_signal(&n.cv);
	pthread_mutex_unlock(&n.mu);
	pthread_join(th, NULL);
	/* best effort by contract: a port may leave the name unknown ("") */
	cr_assert(strcmp(n.name, "ptw-os-test") == 0 || n.name[0] == '\0',
		  "name '%s'", n.name);
	cr_assert(strlen(n.cut) < sizeof(n.cut));
	cr_assert_eq(strncmp(n.cut, n.name, strlen(n.cut)), 0);
}

/* ---- os_proc.h --------------------------------------------------------- */

/* Criterion's worker processes rename themselves ("boxfort-worker"), so
 * the name is checked for its form, not its value. */
Test(os_proc, the_process_name_is_a_file_name_without_directory)
{
	const char *name = ptw_os_process_name();
	cr_assert_not_null(name);
	cr_assert_neq(name[0], '\0');
	cr_assert_null(strchr(name, '/'), "name '%s'", name);
	cr_assert_eq(ptw_os_process_name(), name, "the same string each time");
}

/* ---- os_mem.h ---------------------------------------------------------- */

Test(os_mem, a_block_is_page_aligned_zeroed_writable_and_kept_by_populate)
{
	size_t bytes = 1u << 20;
	unsigned char *m = ptw_os_mem_reserve(bytes);
	cr_assert_not_null(m);
	cr_assert_eq((uintptr_t)m % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
	for (size_t i = 0; i < bytes; i += 4096)
		cr_assert_eq(m[i], 0, "byte %zu", i);
	memset(m, 0xa5, bytes / 2);
	ptw_os_mem_populate(m, bytes);
	for (size_t i = 0; i < bytes; i += 4093)
		cr_assert_eq(m[i], i < bytes / 2 ? 0xa5 : 0, "byte %zu", i);
	ptw_os_mem_release(m, bytes);
}

static long minor_faults(void)
{
	struct rusage u;
	cr_assert_eq(getrusage(RUSAGE_THREAD, &u), 0);
	return u.ru_minflt;
}

/* A ring the parent has written stays its own across fork(): writing it
 * again takes no copy-on-write fault (each one costs tens of us on a VM),
 * and the child finds the block zeroed. */
Test(os_mem, a_block_is_not_shared_with_a_child_of_fork)
{
	size_t bytes = 1u << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m = ptw_os_mem_reserve(bytes);
	cr_assert_not_null(m);
	memset(m, 0xa5, bytes);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int zero = 1;
		for (size_t i = 0; i < bytes; i += page)
			zero &= m[i] == 0 && m[i + page - 1] == 0;
		_exit(zero ? 0 : 1);
	}
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	/* qemu-user takes MADV_WIPEONFORK and does nothing (its own host
	 * mappings are copy-on-write across the fork): only the parent's
	 * bytes are checked there */
	const char *emu = getenv("PTW_TEST_RUNNER");
	if (emu)
		fprintf(stderr, "the child's view and the faults after fork "
				"not checked under %s\n", emu);
	else
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "the child saw the parent's bytes (status %d)", st);
	long f0 = minor_faults();
	for (size_t i = 0; i < bytes; i += page)
		m[i] = 0x5a;
	long faults = minor_faults() - f0;
	/* copy-on-write would fault once per page (256 here) */
	if (!emu)
		cr_assert_lt(faults, (long)(bytes / page / 16),
			     "%ld page faults writing the block again after "
			     "fork",
			     faults);
	for (size_t i = 0; i < bytes; i += 4093)
		cr_assert_eq(m[i], i % page == 0 ? 0x5a : 0xa5, "byte %zu", i);
	ptw_os_mem_release(m, bytes);
}

/* The service's buffer: mapping it (which writes each page once) changes
 * none of its bytes, and writes go both ways. */
Test(os_mem, a_shared_mapping_keeps_the_files_bytes_and_shares_writes)
{
	size_t bytes = 64u * 4096u;
	char path[] = "/tmp/ptw_test_os_shared_XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	unlink(path);
	static unsigned char want[64u * 4096u];
	for (size_t i = 0; i < bytes; i++)
		want[i] = (unsigned char)(i * 7u + 1u);
	cr_assert_eq(write(fd, want, bytes), (ssize_t)bytes);
	unsigned char *m = ptw_os_mem_map_shared(fd, bytes);
	cr_assert_not_null(m);
	cr_assert(memcmp(m, want, bytes) == 0, "mapping changed the bytes");
	m[4096] = 0x5a;
	unsigned char b = 0;
	cr_assert_eq(pread(fd, &b, 1, 4096), 1);
	cr_assert_eq(b, 0x5a);
	ptw_os_mem_release(m, bytes);
	close(fd);
}

/* ---- os_file.h --------------------------------------------------------- */

Test(os_file, prealloc_keeps_the_size_and_contents)
{
	char path[512];
	ptw_test_tmp_path(path, sizeof(path), "prealloc");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "abc", 3), 3);
	errno = 1234;
	int rc = ptw_os_file_prealloc(fd, 0, 1u << 20);
	cr_assert_eq(errno, 1234, "errno kept");
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_size, 3);
	if (ptw_os_file_prealloc_pays(fd))
		cr_assert_eq(rc, 0, "the file system pays for it, yet: %s",
			     strerror(rc));
	ptw_os_file_sequential(fd);
	char b[4] = {0};
	cr_assert_eq(pread(fd, b, 3, 0), 3);
	cr_assert_str_eq(b, "abc");
	close(fd);
	unlink(path);
}

/* ---- os_fork.h --------------------------------------------------------- */

static int forks_prepared, forks_parent, forks_child;
static void on_prepare(void) { forks_prepared++; }
static void on_parent(void) { forks_parent++; }
static void on_child(void) { forks_child++; }

Test(os_fork, handlers_run_before_in_the_parent_and_in_the_child)
{
	ptw_os_atfork(on_prepare, on_parent, on_child);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(forks_prepared == 1 && forks_child == 1 && forks_parent == 0
			      ? 0 : 1);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the child saw prepare and child once, parent never");
	cr_assert_eq(forks_prepared, 1);
	cr_assert_eq(forks_parent, 1);
	cr_assert_eq(forks_child, 0);
}

/* ---- os_signal.h ------------------------------------------------------- */

Test(os_signal, ptws_threads_block_async_signals_but_not_faults)
{
	sigset_t old, now;
	cr_assert_eq(ptw_os_signals_hold_async(&old), 0);
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	ptw_os_signals_restore(&old);
	cr_assert_eq(sigismember(&now, SIGALRM), 1);
	cr_assert_eq(sigismember(&now, SIGTERM), 1);
	cr_assert_eq(sigismember(&now, SIGCHLD), 1);
	cr_assert_eq(sigismember(&now, SIGSEGV), 0);
	cr_assert_eq(sigismember(&now, SIGBUS), 0);
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	cr_assert_eq(sigismember(&now, SIGALRM), sigismember(&old, SIGALRM));
}

Test(os_signal, a_pipe_without_reader_gives_epipe_and_no_sigpipe)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	close(p[0]);
	struct ptw_sigpipe_guard g;
	ptw_sigpipe_hold(&g);
	ssize_t k = write(p[1], "x", 1);
	int e = errno;
	ptw_sigpipe_release(&g, k < 0);
	close(p[1]);
	cr_assert_eq(k, -1);
	cr_assert_eq(e, EPIPE);
	sigset_t pend;
	cr_assert_eq(sigpending(&pend), 0);
	cr_assert_eq(sigismember(&pend, SIGPIPE), 0, "SIGPIPE taken back");
}

static int fault_pipe = -1;
static void on_fault(int sig)
{
	unsigned char b = (unsigned char)sig;
	(void)!write(fault_pipe, &b, 1);
	ptw_os_fault_chain(sig);
}

Test(os_signal, a_fault_runs_the_handler_then_the_previous_disposition)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		fault_pipe = p[1];
		signal(SIGABRT, SIG_DFL);
		if (ptw_os_fault_install(on_fault) != 0)
			_exit(2);
		raise(SIGABRT);
		_exit(3); /* the default disposition kills before this */
	}
	close(p[1]);
	unsigned char b = 0;
	cr_assert_eq(read(p[0], &b, 1), 1, "the handler ran");
	close(p[0]);
	cr_assert_eq(b, SIGABRT);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		  "status %#x", status);
}

Test(os_signal, uninstall_puts_the_previous_handler_back)
{
	struct sigaction before, after;
	cr_assert_eq(sigaction(SIGBUS, NULL, &before), 0);
	cr_assert_eq(ptw_os_fault_install(on_fault), 0);
	ptw_os_fault_uninstall();
	cr_assert_eq(sigaction(SIGBUS, NULL, &after), 0);
	cr_assert_eq(after.sa_handler, before.sa_handler);
}

/* ---- os_object.h ------------------------------------------------------- */

Test(os_object, the_program_holds_its_code_and_not_the_stack)
{
	struct ptw_obj_range r, again;
	cr_assert_eq(ptw_obj_range_of((const void *)(uintptr_t)on_fault, &r), 0);
	cr_assert(ptw_obj_range_has(&r, (const void *)(uintptr_t)on_prepare));
	cr_assert_eq(ptw_obj_range_of((const void *)(uintptr_t)on_child, &again), 0);
	cr_assert(ptw_obj_range_same(&r, &again));
	int local = 0;
	cr_assert_eq(ptw_obj_range_of(&local, &r), -1);
	cr_assert_eq(r.lo, 0);
	cr_assert_eq(r.hi, 0);
}

struct os_list_find {
	uintptr_t addr;
	int objects, holders, with_build_id;
	char path[4096];
};

static int os_list_one(const struct ptw_os_object *o, void *ctx)
{
	struct os_list_find *f = ctx;
	f->objects++;
	uintptr_t lo = o->base + (uintptr_t)o->x_vaddr;
	if (f->addr >= lo && f->addr < lo + (uintptr_t)o->x_memsz) {
		f->holders++;
		f->with_build_id = o->build_id && o->build_id_len >= 8 &&
				   o->build_id_len <= PTW_OS_BUILD_ID_MAX;
		snprintf(f->path, sizeof(f->path), "%s", o->path);
	}
	return 0;
}

static int os_list_stop(const struct ptw_os_object *o, void *ctx)
{
	(void)o;
	++*(int *)ctx;
	return 1;
}

Test(os_object, the_list_has_the_program_with_its_code_build_id_and_file)
{
	struct os_list_find f = {(uintptr_t)os_list_one, 0, 0, 0, ""};
	unsigned long long adds = 0, subs = 0, adds2 = 0, subs2 = 0;
	ptw_os_objects_each(os_list_one, &f, &adds, &subs);
	cr_assert_geq(f.objects, 2, "the program and libc at least");
	cr_assert_eq(f.holders, 1, "exactly one executable segment holds "
				   "a function of the program");
	cr_assert(f.with_build_id, "gcc and the linker give Debian's "
				   "programs a GNU build id");
	/* the file /proc/self/exe names (not stat() through the link: under
	 * qemu-user that is the emulator, while its readlink() is the
	 * program) */
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = '\0';
	struct stat a, b;
	cr_assert_eq(stat(f.path, &a), 0, "the file is named: %s", f.path);
	cr_assert_eq(stat(exe, &b), 0, "%s", exe);
	cr_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev, "%s is not %s",
		  f.path, exe);
	cr_assert_geq(adds, 1);
	ptw_os_objects_counts(&adds2, &subs2);
	cr_assert(adds2 == adds && subs2 == subs, "nothing loaded between");
	int calls = 0;
	ptw_os_objects_each(os_list_stop, &calls, NULL, NULL);
	cr_assert_eq(calls, 1, "a non-zero return stops the list");
}

Test(os_thread, the_stack_top_lies_above_a_local_within_the_stack)
{
	int local = 0;
	uintptr_t top = ptw_os_thread_stack_top();
	cr_assert(top > (uintptr_t)&local, "a local lies below the top");
	cr_assert(top - (uintptr_t)&local < (64u << 20),
		  "and within the thread's stack (64 MiB at most here)");
}
