/* demo_system.c - a program in system mode: it registers its categories
 * with Perfetto's tracing service (traced) and logs only while a session
 * of the service records it (examples/demo_system.sh starts one).
 *
 *   demo-system SECONDS
 *
 * Without a service it runs all the same: the macros stay off.
 * SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ptw/tracer.h"

#define N_WORKERS 3

static volatile int stop_now;

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[32];
	snprintf(name, sizeof(name), "worker-%ld", id);
	ptw_set_thread_name(name);
	for (long job = 0; !stop_now; job++) {
		PTW_SCOPE_ARGS("demo", "job", PTW_ARG_I64("job", job),
			       PTW_ARG_I64("worker", id));
		{
			PTW_SCOPE("io", "read input");
			sleep_us(300 + 100 * id);
		}
		PTW_COUNTER_INT("demo", "jobs done", job);
		sleep_us(500);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 5;
	struct ptw_config cfg = {0};
	cfg.system = 1;
	cfg.categories = "demo,io";
	cfg.stop_at_exit = 1;
	ptw_declare_category("demo.verbose", "every step", "debug");
	struct ptw_error err;
	if (ptw_start_ex(&cfg, &err) != 0) {
		fprintf(stderr, "demo-system: %s\n", err.msg);
		return 1;
	}
	ptw_set_thread_name("main");
	pthread_t th[N_WORKERS];
	for (long i = 0; i < N_WORKERS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (int t = 0; t < seconds * 10; t++) {
		PTW_INSTANT_ARGS("demo", "tick", PTW_ARG_I64("t", t));
		PTW_INSTANT("demo.verbose", "verbose tick");
		sleep_us(100000);
	}
	stop_now = 1;
	for (int i = 0; i < N_WORKERS; i++)
		pthread_join(th[i], NULL);
	return 0; /* stop_at_exit: the last events reach the service */
}
