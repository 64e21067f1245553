/* threaded_fork.c - can the child of a fork() taken while other threads
 * run start a thread of its own? Exits 0 if it can. tools/test-cross.sh
 * runs it under qemu-user before the suites: qemu-user 7.2 (Debian 12)
 * cannot (the child's qemu aborts in qemu_plugin_vcpu_init_hook, on
 * aarch64 and s390x alike), so the tests that need it skip there, naming
 * this program (PTW_TEST_NO_THREAD_AFTER_FORK, support/ptw_test.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int stop;

static void *spin(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		sched_yield();
	return NULL;
}

static void *nothing(void *arg) { return arg; }

int main(void)
{
	pthread_t t, c;
	if (pthread_create(&t, NULL, spin, NULL) != 0)
		return 2;
	pid_t pid = fork();
	if (pid == 0)
		_exit(pthread_create(&c, NULL, nothing, NULL) == 0 &&
		      pthread_join(c, NULL) == 0 ? 0 : 1);
	int st = 0;
	int ok = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		 WEXITSTATUS(st) == 0;
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	return ok ? 0 : 1;
}
