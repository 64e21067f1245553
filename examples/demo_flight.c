/* demo_flight.c - the flight recorder and the crash dump.
 *
 *   demo-flight FLIGHT.pftrace CRASH.pftrace
 *
 * FLIGHT: four workers log into a 1 MiB ring (PTW_MODE_RING) until it
 * has wrapped several times, then ptw_snapshot() writes the window while
 * they keep going. CRASH: a child process traces in ring mode with
 * cfg.crash_path set and aborts on purpose; its crash handler writes the
 * window before the process dies of SIGABRT.
 * SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptw/tracer.h"

static atomic_int stop_workers;

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker %d", id);
	ptw_set_thread_name(name);
	for (int64_t i = 0; !atomic_load(&stop_workers); i++) {
		PTW_SCOPE("work", "request");
		PTW_BEGIN_ARGS("work", "parse", PTW_ARG_I64("request", i));
		PTW_END("work");
		{
			PTW_SCOPE("work", "handle");
			PTW_COUNTER_INT("work", "queue depth", (i * 7 + id) % 32);
			if (i % 100 == 0)
				PTW_INSTANT_ARGS("work", "checkpoint",
						 PTW_ARG_I64("i", i));
		}
	}
	return NULL;
}

static int flight(const char *path)
{
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = PTW_MODE_RING;
	cfg.ring_bytes = 1u << 20;
	struct ptw_writer_options wo = {.compress = PTW_COMPRESS_DEFLATE};
	cfg.writer = &wo;
	cfg.overflow = PTW_OVERFLOW_WAIT; /* a demo without data loss */
	struct ptw_error err;
	if (ptw_start_ex(&cfg, &err) != 0) {
		fprintf(stderr, "demo-flight: %s\n", err.msg);
		return 1;
	}
	PTW_BEGIN("main", "serving"); /* begun long before the window */
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	usleep(300 * 1000); /* ~a dozen wraps of the ring */
	PTW_INSTANT("main", "something interesting");
	int rc = ptw_snapshot(path);
	atomic_store(&stop_workers, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	PTW_END("main");
	if (ptw_stop() != 0 || rc != 0) {
		fprintf(stderr, "demo-flight: snapshot failed (%d)\n", rc);
		return 1;
	}
	return 0;
}

static int crash(const char *path)
{
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		atomic_store(&stop_workers, 0);
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		struct ptw_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.mode = PTW_MODE_RING;
		cfg.ring_bytes = 1u << 20;
		cfg.crash_path = path;
		cfg.overflow = PTW_OVERFLOW_WAIT;
		if (ptw_start(&cfg) != 0)
			_exit(3);
		pthread_t th[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
		usleep(100 * 1000);
		PTW_INSTANT("main", "about to abort");
		usleep(10 * 1000); /* let the backend encode it */
		abort();
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) ||
	    WTERMSIG(status) != SIGABRT) {
		fprintf(stderr, "demo-flight: the child did not die of SIGABRT\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: demo-flight FLIGHT.pftrace CRASH.pftrace\n");
		return 2;
	}
	return flight(argv[1]) || crash(argv[2]);
}
