/* bench_system.c - system mode beside file mode, in one run: what a
 * macro costs the producer when a session of Perfetto's tracing service
 * records it (producer_ns_per_event_1t_system) and when it goes to a file
 * (producer_ns_per_event_1t_file), and how many million events a second
 * the backend writes into the service's shared memory buffer and into a
 * file: events logged while the backend is held, then drained by it
 * until ptw_flush returns. backend_mev_per_s_system / _file count them
 * per second that the backend thread ran (its schedstat run time: what
 * the backend costs, whatever else the 2 CPUs run meanwhile), with
 * system/file as backend_system_file_ratio; the _wall figures per second
 * of wall time from the release to ptw_flush's return. Rounds alternate
 * file and system sessions (the machine's load changes over seconds);
 * each figure is the median of its rounds. The _first_round and
 * _later_rounds producer figures put the first session of the process
 * beside the later ones (each after a fork() of perfetto): equal, unless
 * a restart or a fork() costs the producer page faults again.
 *
 * The shared memory buffer is sized so that a whole burst fits in it
 * (about 15 bytes an event: 2^20 events in 32 MiB): the backend never
 * waits for the service to free chunks, and the figure is ptw's side
 * (routing into the buffer), not the service's copying.
 * Needs tracebox ($PTW_SHARED_DIR/tp/tracebox, else ../shared/tp): a
 * private traced on temp sockets; without it, says so and prints nothing.
 * PTW_BENCH_QUICK=1: a short version. PTW_BENCH_SYSTEM_CLOCK=tsc: the
 * system sessions' producers read the CPU's counter (PTW_CLOCK_TSC, the
 * backend converts to BOOTTIME), and the producer's figure is
 * producer_ns_per_event_1t_system_tsc; compare it with the default
 * (BOOTTIME read by the producer) in alternate runs of the bench, each
 * a fresh process (see producer_ns below for why not in one run).
 * PTW_BENCH_SYSTEM_FILE=1: the system sessions' program also writes a
 * file of its own beside system mode (cfg.output_path with cfg.system),
 * and the producer's figures are named ..._system_with_file[_tsc].
 * PTW_BENCH_SYSTEM_TWO=1: a second session, of another category
 * ("other"), runs beside the measured one, so that each takes only its
 * categories (tracer_sink.c: the measured one takes every event, the
 * second passes over them all, both on the backend's time); the backend
 * figures are named ..._system_two_sessions and
 * backend_system_two_sessions_file_ratio[_wall]. PTW_BENCH_SYSTEM_TWO=gone:
 * the second session stops before the measurement, and the measured one
 * takes only its categories alone (..._system_after_two_sessions).
 * PTW_BENCH_SYSTEM_GENERAL=1: the system sessions' backend writes through
 * its general path only (cfg.general_path_only), to compare; the backend
 * figures are named ..._system_general (with _two_sessions or
 * _after_two_sessions after it when both are set).
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/support/bench_clock.h"
#include "ptw/tracer.h"
#include "lib/system/system.h"          /* ptw_sys_sessions */
#include "lib/tracer/tracer_internal.h" /* ptw_tr_test_hold */

#define RUN_EVENTS 256

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n ? v[n / 2] : 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static pid_t spawn(const char *tb, const char *a1, const char *a2,
		   const char *a3, const char *a4, const char *a5,
		   const char *a6)
{
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with the bench */
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(tb, tb, a1, a2, a3, a4, a5, a6, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Median ns per event of BEGIN/END pairs, 'runs' runs. */
static double pairs_ns(unsigned runs)
{
	double *v = malloc(runs * sizeof(*v));
	if (!v)
		exit(1);
	for (unsigned r = 0; r < runs; r++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < RUN_EVENTS / 2; i++) {
			PTW_BEGIN("bench", "pair");
			PTW_END("bench");
		}
		uint64_t t1 = now_ns();
		v[r] = (double)(t1 - t0) / RUN_EVENTS;
		if ((r & 63) == 63)
			ptw_flush();
	}
	double m = median(v, runs);
	free(v);
	return m;
}

/* Nanoseconds the thread named ptw-backend has run on a CPU
 * (/proc/self/task/TID/schedstat), 0 if there is none: its time waiting
 * for a CPU on a loaded machine is not in it. */
static uint64_t backend_cpu_ns(void)
{
	DIR *d = opendir("/proc/self/task");
	uint64_t ns = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[300], comm[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f) ||
		    strcmp(comm, "ptw-backend\n") != 0) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat",
			 e->d_name);
		f = fopen(path, "r");
		unsigned long long v = 0;
		if (f && fscanf(f, "%llu", &v) == 1)
			ns = v;
		if (f)
			fclose(f);
		break;
	}
	if (d)
		closedir(d);
	return ns;
}

/* Events a second the backend alone writes: n logged while it is held,
 * per second of wall time from its release until ptw_flush returns
 * (*wall), and per second the backend thread ran meanwhile (returned). */
static double backend_rate(uint32_t n, double *wall)
{
	PTW_INSTANT("bench", "warm-up");
	ptw_flush();
	atomic_store(&ptw_tr_test_hold, 1);
	for (uint32_t i = 0; i < n / 2; i++) {
		PTW_BEGIN("bench", "pair");
		PTW_END("bench");
	}
	uint64_t c0 = backend_cpu_ns();
	atomic_store(&ptw_tr_test_hold, 0);
	uint64_t t0 = now_ns();
	ptw_flush();
	uint64_t t1 = now_ns();
	uint64_t c1 = backend_cpu_ns();
	*wall = (double)n * 1e9 / (double)(t1 - t0);
	return c1 > c0 ? (double)n * 1e9 / (double)(c1 - c0) : 0;
}

int main(void)
{
	int quick = getenv("PTW_BENCH_QUICK") != NULL;
	const char *sclock = getenv("PTW_BENCH_SYSTEM_CLOCK");
	int tsc = sclock && strcmp(sclock, "tsc") == 0;
	const char *sfile = getenv("PTW_BENCH_SYSTEM_FILE");
	int beside = sfile && strcmp(sfile, "1") == 0;
	const char *sgen = getenv("PTW_BENCH_SYSTEM_GENERAL");
	int general = sgen && strcmp(sgen, "1") == 0;
	const char *stwo = getenv("PTW_BENCH_SYSTEM_TWO");
	int gone = stwo && strcmp(stwo, "gone") == 0;
	int two = (stwo && strcmp(stwo, "1") == 0) || gone;
	unsigned runs = quick ? 200 : 4000;
	unsigned rounds = quick ? 3 : 5;
	uint32_t n = quick ? (1u << 17) : (1u << 20);
	char tb[4096];
	const char *sh = getenv("PTW_SHARED_DIR");
	snprintf(tb, sizeof(tb), "%s/tp/tracebox", sh && *sh ? sh : "../shared");
	if (access(tb, X_OK) != 0) {
		fprintf(stderr, "bench_system: no tracebox at %s: skipped\n", tb);
		return 0;
	}
	char dir[] = "/tmp/ptw_bench_system_XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char prod[128], cons[128], cfgp[128], out[128], file[128], own[128];
	char cfg2p[128], out2[128];
	snprintf(prod, sizeof(prod), "%s/producer.sock", dir);
	snprintf(cons, sizeof(cons), "%s/consumer.sock", dir);
	snprintf(cfgp, sizeof(cfgp), "%s/cfg.txt", dir);
	snprintf(out, sizeof(out), "%s/system.pftrace", dir);
	snprintf(file, sizeof(file), "%s/file.pftrace", dir);
	snprintf(own, sizeof(own), "%s/own.pftrace", dir);
	snprintf(cfg2p, sizeof(cfg2p), "%s/cfg2.txt", dir);
	snprintf(out2, sizeof(out2), "%s/system2.pftrace", dir);
	setenv("PERFETTO_PRODUCER_SOCK_NAME", prod, 1);
	setenv("PERFETTO_CONSUMER_SOCK_NAME", cons, 1);
	pid_t traced = spawn(tb, "traced", NULL, NULL, NULL, NULL, NULL);
	struct stat st;
	for (int i = 0; i < 5000 && stat(prod, &st) != 0; i++)
		sleep_ms(1);
	FILE *f = fopen(cfgp, "w");
	if (!f)
		return 1;
	fprintf(f, "buffers { size_kb: 262144 }\n"
		   "data_sources { config { name: \"track_event\" } }\n"
		   "duration_ms: 600000\n");
	fclose(f);
	/* the second session: category "other" only */
	if (!(f = fopen(cfg2p, "w")))
		return 1;
	fprintf(f, "buffers { size_kb: 4096 }\n"
		   "data_sources { config { name: \"track_event\"\n"
		   "  track_event_config { enabled_categories: \"other\"\n"
		   "    disabled_categories: \"*\" } } }\n"
		   "duration_ms: 600000\n");
	fclose(f);
	/* PTW_BENCH_SYSTEM_KB: a smaller shared memory buffer, where the
	 * backend waits for the service to free chunks (then the figure is
	 * the service's) */
	const char *kb = getenv("PTW_BENCH_SYSTEM_KB");
	uint32_t smb_kb = kb && atoi(kb) > 0 ? (uint32_t)atoi(kb) : 32768;

	double *file_ns = calloc(rounds, sizeof(double));
	double *sys_ns = calloc(rounds, sizeof(double));
	double *file_rate = calloc(rounds, sizeof(double));
	double *sys_rate = calloc(rounds, sizeof(double));
	double *file_wall = calloc(rounds, sizeof(double));
	double *sys_wall = calloc(rounds, sizeof(double));
	if (!file_ns || !sys_ns || !file_rate || !sys_rate || !file_wall ||
	    !sys_wall)
		return 1;
	uint64_t lost = 0;
	for (unsigned r = 0; r < rounds; r++) {
		/* file mode */
		struct ptw_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.output_path = file;
		cfg.clock = PTW_CLOCK_BOOT;
		cfg.ring_slots = 1u << 22;
		if (ptw_start(&cfg) != 0)
			return 1;
		file_ns[r] = pairs_ns(runs);
		file_rate[r] = backend_rate(n, &file_wall[r]);
		ptw_stop();

		/* system mode, a session of the service recording it */
		memset(&cfg, 0, sizeof(cfg));
		cfg.system = 1;
		cfg.categories = "bench";
		cfg.ring_slots = 1u << 22;
		cfg.system_buffer_kb = smb_kb;
		if (tsc)
			cfg.clock = PTW_CLOCK_TSC;
		if (beside)
			cfg.output_path = own;
		cfg.general_path_only = general;
		if (ptw_start(&cfg) != 0)
			return 1;
		pid_t pf = spawn(tb, "perfetto", "--txt", "-c", cfgp, "-o", out);
		/* (with a file of its own, ptw runs from ptw_start on) */
		for (int i = 0; i < 10000 && ptw_sys_sessions() < 1; i++)
			sleep_ms(1);
		pid_t pf2 = 0;
		if (ptw_sys_sessions() == 1 && two) {
			pf2 = spawn(tb, "perfetto", "--txt", "-c", cfg2p, "-o",
				    out2);
			for (int i = 0; i < 10000 && ptw_sys_sessions() < 2; i++)
				sleep_ms(1);
		}
		if (ptw_sys_sessions() < 1 + two) {
			fprintf(stderr, "bench_system: the session did not start\n");
			kill(pf, SIGKILL);
			if (pf2)
				kill(pf2, SIGKILL);
			kill(traced, SIGKILL);
			return 1;
		}
		if (gone) {
			kill(pf2, SIGINT);
			waitpid(pf2, NULL, 0);
			unlink(out2);
			pf2 = 0;
		}
		sys_ns[r] = pairs_ns(runs);
		sys_rate[r] = backend_rate(n, &sys_wall[r]);
		struct ptw_stats ps;
		ptw_get_stats(&ps);
		lost += ps.system_lost;
		kill(pf, SIGINT); /* perfetto ends the session, writes the trace */
		waitpid(pf, NULL, 0);
		if (pf2) {
			kill(pf2, SIGINT);
			waitpid(pf2, NULL, 0);
			unlink(out2);
		}
		ptw_stop();
		unlink(out);
		unlink(own);
	}
	kill(traced, SIGKILL);
	waitpid(traced, NULL, 0);

	/* The first round's producer figures beside the later rounds': a
	 * session after a fork() (here of perfetto) used to cost 5x the
	 * first when its ring's pages were copy-on-write (os_mem.h). */
	double f0 = file_ns[0], s0 = sys_ns[0];
	double fl = median(file_ns + 1, rounds - 1);
	double sl = median(sys_ns + 1, rounds - 1);
	double fn = median(file_ns, rounds), sn = median(sys_ns, rounds);
	double fr = median(file_rate, rounds), sr = median(sys_rate, rounds);
	double fw = median(file_wall, rounds), sw = median(sys_wall, rounds);
	/* the system producers' clock, and their own file if any */
	const char *sx = beside ? (tsc ? "_with_file_tsc" : "_with_file")
				: (tsc ? "_tsc" : "");
	printf("producer_ns_per_event_1t_file %.2f ns\n", fn);
	printf("producer_ns_per_event_1t_system%s %.2f ns\n", sx, sn);
	printf("producer_ns_per_event_1t_file_first_round %.2f ns\n", f0);
	printf("producer_ns_per_event_1t_file_later_rounds %.2f ns\n", fl);
	printf("producer_ns_per_event_1t_system%s_first_round %.2f ns\n", sx, s0);
	printf("producer_ns_per_event_1t_system%s_later_rounds %.2f ns\n", sx, sl);
	printf("backend_mev_per_s_file %.1f Mevents/s\n", fr / 1e6);
	char bx[64];
	snprintf(bx, sizeof(bx), "%s%s", general ? "_general" : "",
		 gone ? "_after_two_sessions" : two ? "_two_sessions" : "");
	printf("backend_mev_per_s_system%s %.1f Mevents/s\n", bx, sr / 1e6);
	printf("backend_system%s_file_ratio %.2f\n", bx, fr > 0 ? sr / fr : 0);
	printf("backend_mev_per_s_wall_file %.1f Mevents/s\n", fw / 1e6);
	printf("backend_mev_per_s_wall_system%s %.1f Mevents/s\n", bx,
	       sw / 1e6);
	printf("backend_system%s_file_ratio_wall %.2f\n", bx,
	       fw > 0 ? sw / fw : 0);
	printf("system_lost_packets %llu packets\n", (unsigned long long)lost);
	free(file_ns);
	free(sys_ns);
	free(file_rate);
	free(sys_rate);
	free(file_wall);
	free(sys_wall);
	unlink(file);
	unlink(cfgp);
	unlink(cfg2p);
	rmdir(dir);
	return 0;
}
