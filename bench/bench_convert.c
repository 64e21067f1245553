/* bench_convert.c - converter throughput, memory and output size.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Generates one synthetic workload (nested slices, counters and instants
 * on 16 threads of one process) as an APLTRC01 run, a text AppleTrace run
 * and a Chrome JSON array, in a temporary directory, then converts each
 * in a child process (so peak RSS is the converter's alone) and prints
 * "name value unit" lines (rates: CPU time of the converting child, best
 * of 3 runs; *_wall_* lines: wall clock of that run). PTW_BENCH_QUICK=1
 * uses a small workload and one run. For comparing two builds in turns:
 * PTW_BENCH_KEEP=1 keeps the generated inputs, PTW_BENCH_DIR=DIR converts
 * those again instead of generating, PTW_BENCH_ONLY=appletracebin runs
 * only the APLTRC01 conversion and its io floor, PTW_BENCH_REPS=N sets
 * the runs.
 *
 * A second Chrome JSON input, chrome.json, is shaped like the files
 * people convert (issue 40): complete (X) events with two args, instants
 * and counters on 3 processes / 8 threads, timestamps with fractions of
 * a microsecond. When trace_processor_shell is found ($PTW_SHARED_DIR/tp
 * or ../shared/tp beside the source tree), each JSON input and its
 * conversion are loaded by it (select count(*) from slice), in turns,
 * and tp_load_* lines give its CPU time (median of at least 5 runs each,
 * with their range) and tp_load_ratio_json* the converted trace's over
 * the JSON's (median of the per-turn ratios, with their range). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/support/bench_clock.h"
#include "converters/appletrace/appletrace.h"
#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "lib/encode/pb.h"
#include "ptw/writer.h"

/* Paths are short (mkdtemp under /tmp); truncation cannot happen. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define THREADS 16
#define NAMES 64
/* chrome.json: events per full run (quick: a twentieth) */
#define CHROME_EVENTS 1200000
#define FRAG_BYTES (32u << 20)

static void die(const char *what)
{
	fprintf(stderr, "bench_convert: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put_le(FILE *f, uint64_t v, int bytes)
{
	unsigned char b[8];
	for (int i = 0; i < bytes; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	if (fwrite(b, 1, (size_t)bytes, f) != (size_t)bytes)
		die("write");
}

struct gen {
	const char *dir;
	FILE *bin, *txt, *json;
	int bin_frag;
	uint64_t bin_bytes;
	int first_json;
	char names[NAMES][48];
};

static void bin_open(struct gen *g)
{
	char p[512];
	if (g->bin_frag == 0)
		snprintf(p, sizeof(p), "%s/bin/trace.appletracebin", g->dir);
	else
		snprintf(p, sizeof(p), "%s/bin/trace_%d.appletracebin", g->dir,
			 g->bin_frag);
	g->bin = fopen(p, "wb");
	if (!g->bin)
		die(p);
	fwrite("APLTRC01", 1, 8, g->bin);
	put_le(g->bin, 4242, 4);
	g->bin_bytes = 12;
	/* older producers: every fragment defines its names */
	for (uint32_t i = 0; i < NAMES; i++) {
		size_t n = strlen(g->names[i]);
		fputc(1, g->bin);
		put_le(g->bin, i, 4);
		put_le(g->bin, n, 4);
		fwrite(g->names[i], 1, n, g->bin);
		g->bin_bytes += 9 + n;
	}
}

static void emit(struct gen *g, char ph, uint32_t name, uint32_t tid,
		 uint64_t ts, double value)
{
	if (g->bin_bytes > FRAG_BYTES) {
		if (fclose(g->bin) != 0)
			die("close");
		g->bin_frag++;
		bin_open(g);
	}
	uint64_t arg = 0;
	if (ph == 'C')
		memcpy(&arg, &value, 8);
	fputc(ph, g->bin);
	put_le(g->bin, name, 4);
	put_le(g->bin, tid, 8);
	put_le(g->bin, ts, 8);
	put_le(g->bin, arg, 8);
	g->bin_bytes += 29;

	char line[256];
	int n;
	if (ph == 'C')
		n = snprintf(line, sizeof(line),
			     "{\"name\":\"%s\",\"cat\":\"catname\",\"ph\":\"C\","
			     "\"pid\":4242,\"tid\":%u,\"ts\":%llu,\"args\":"
			     "{\"value\":%g}}", g->names[name], tid,
			     (unsigned long long)ts, value);
	else if (ph == 'i')
		n = snprintf(line, sizeof(line),
			     "{\"name\":\"%s\",\"cat\":\"catname\",\"ph\":\"i\","
			     "\"pid\":4242,\"tid\":%u,\"ts\":%llu,\"s\":\"t\"}",
			     g->names[name], tid, (unsigned long long)ts);
	else
		n = snprintf(line, sizeof(line),
			     "{\"name\":\"%s\",\"cat\":\"catname\",\"ph\":\"%c\","
			     "\"pid\":4242,\"tid\":%u,\"ts\":%llu}",
			     g->names[name], ph, tid, (unsigned long long)ts);
	if (g->txt) {
		fwrite(line, 1, (size_t)n, g->txt);
		fputc('\n', g->txt);
	}
	if (g->json) {
		fputs(g->first_json ? "[\n" : ",\n", g->json);
		g->first_json = 0;
		fwrite(line, 1, (size_t)n, g->json);
	}
}

/* A deterministic mix: per thread, slices nest up to depth 5; ~10%
 * counters and ~5% instants. */
static void generate(struct gen *g, uint64_t events, uint64_t text_events)
{
	uint64_t ts[THREADS] = {0};
	uint32_t depth[THREADS] = {0};
	uint32_t stack[THREADS][8];
	uint64_t x = 88172645463325252ull;
	for (uint64_t i = 0; i < events; i++) {
		if (i == text_events) {
			if (fclose(g->txt) || fputs("\n]\n", g->json) < 0 ||
			    fclose(g->json))
				die("close");
			g->txt = g->json = NULL;
		}
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t t = (uint32_t)(x % THREADS);
		uint32_t r = (uint32_t)((x >> 20) % 100);
		uint32_t tid = 1000 + t;
		ts[t] += 1 + (x >> 40) % 20;
		if (r < 10) {
			emit(g, 'C', (uint32_t)(x >> 8) % NAMES, tid, ts[t],
			     (double)((x >> 30) % 1000) / 4.0);
		} else if (r < 15) {
			emit(g, 'i', (uint32_t)(x >> 8) % NAMES, tid, ts[t], 0);
		} else if (depth[t] < 5 && (depth[t] == 0 || r < 58)) {
			uint32_t nm = (uint32_t)(x >> 8) % NAMES;
			stack[t][depth[t]++] = nm;
			emit(g, 'B', nm, tid, ts[t], 0);
		} else {
			emit(g, 'E', stack[t][--depth[t]], tid, ts[t], 0);
		}
	}
	if (g->txt && (fclose(g->txt) || fputs("\n]\n", g->json) < 0 ||
		       fclose(g->json)))
		die("close");
	if (fclose(g->bin))
		die("close");
}

/* chrome.json (see the top): per thread, X events nest inside the
 * enclosing X's still running; half the events are X (durations in whole
 * microseconds, as Chrome writes them), 30% instants, 20% counters. */
static void make_chrome(const char *path, uint64_t events)
{
	FILE *f = fopen(path, "w");
	if (!f)
		die(path);
	static const char *const cats[] = {"toplevel", "v8", "blink", "cc"};
	double cur[8];
	double stk[8][64];
	int depth[8] = {0};
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (int t = 0; t < 8; t++)
		cur[t] = 1000.0 + t;
	fputs("[\n", f);
	for (uint64_t i = 0; i < events; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int t = (int)(x % 8);
		uint32_t r = (uint32_t)((x >> 8) % 100);
		int pid = 1 + t % 3, tid = 100 + t;
		cur[t] += (double)(1 + (x >> 20) % 40000) / 1000.0;
		double ts = cur[t];
		while (depth[t] && stk[t][depth[t] - 1] <= ts)
			depth[t]--;
		const char *sep = i ? ",\n" : "";
		unsigned nm = (unsigned)((x >> 40) % 40);
		const char *cat = cats[(x >> 50) % 4];
		int n;
		if (r < 50) {
			double lim = depth[t] ? stk[t][depth[t] - 1] - ts : 1e9;
			uint64_t d = (x >> 30) % 10 < 3 ? (x >> 33) % 200
							 : (x >> 33) % 20;
			if ((double)d >= lim)
				d = lim >= 1.0 ? (uint64_t)(lim - 1.0) : 0;
			if (depth[t] < 64)
				stk[t][depth[t]++] = ts + (double)d;
			n = fprintf(f, "%s{\"name\":\"Task%02u::Run\",\"cat\":"
				    "\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
				    "\"ts\":%.3f,\"dur\":%llu,\"args\":{"
				    "\"count\":%llu,\"url\":\"https://example."
				    "com/p/%llu\"}}", sep, nm, cat, pid, tid, ts,
				    (unsigned long long)d,
				    (unsigned long long)((x >> 12) % 100000),
				    (unsigned long long)((x >> 45) % 1000));
		} else if (r < 80) {
			n = fprintf(f, "%s{\"name\":\"Task%02u::Run\",\"cat\":"
				    "\"%s\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,"
				    "\"tid\":%d,\"ts\":%.3f}", sep, nm, cat, pid,
				    tid, ts);
		} else {
			n = fprintf(f, "%s{\"name\":\"Counter%u\",\"cat\":"
				    "\"mem\",\"ph\":\"C\",\"pid\":%d,\"tid\":%d,"
				    "\"ts\":%.3f,\"args\":{\"value\":%llu}}", sep,
				    nm % 6, pid, tid, ts,
				    (unsigned long long)((x >> 24) % (1u << 20)));
		}
		if (n < 0)
			die(path);
	}
	if (fputs("\n]\n", f) < 0 || fclose(f))
		die(path);
}

/* trace_processor_shell, or NULL. */
static const char *tp_path(void)
{
	static char p[4096];
	const char *env = getenv("PTW_SHARED_DIR");
	if (env && *env) {
		snprintf(p, sizeof(p), "%s/tp/trace_processor_shell", env);
	} else {
		/* <root>/bench/bench_convert.c -> <root>/../shared */
		snprintf(p, sizeof(p), "%s", __FILE__);
		for (int k = 0; k < 2; k++) {
			char *s = strrchr(p, '/');
			if (s)
				*s = '\0';
		}
		size_t n = strlen(p);
		snprintf(p + n, sizeof(p) - n, "/../shared/tp/trace_processor_shell");
	}
	return access(p, X_OK) == 0 ? p : NULL;
}

/* CPU seconds (user + system) of trace_processor loading 'trace'; < 0
 * if it failed. */
static double tp_load(const char *tp, const char *trace)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(tp, tp, "-Q", "select count(*) from slice", trace,
		      (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return -1;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* trace_processor loads per input in tp_compare: at least this many,
 * whatever PTW_BENCH_REPS says (a median of fewer means little on a
 * shared machine), at most TP_REPS_MAX. */
#define TP_REPS_MIN 5
#define TP_REPS_MAX 64

/* Sorts v[0, n) and returns its median. */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Loads a JSON input and its conversion in turns, 'reps' times each
 * (TP_REPS_MIN to TP_REPS_MAX), and prints the median CPU times with
 * their range and the median of the per-turn ratios (converted / JSON)
 * with its range (suffix: "" or "_chrome"). */
static void tp_compare(const char *tp, const char *json, const char *pf,
		       const char *suffix, int reps)
{
	double j[TP_REPS_MAX], p[TP_REPS_MAX], r[TP_REPS_MAX];
	if (reps < TP_REPS_MIN)
		reps = TP_REPS_MIN;
	if (reps > TP_REPS_MAX)
		reps = TP_REPS_MAX;
	for (int i = 0; i < reps; i++) {
		j[i] = tp_load(tp, json);
		p[i] = tp_load(tp, pf);
		if (j[i] <= 0 || p[i] < 0) {
			fprintf(stderr, "bench_convert: trace_processor failed "
					"on %s or %s\n", json, pf);
			return;
		}
		r[i] = p[i] / j[i];
	}
	double mj = median(j, reps), mp = median(p, reps), mr = median(r, reps);
	printf("tp_load_json%s_s %.3f s (median of %d, %.3f-%.3f)\n", suffix,
	       mj, reps, j[0], j[reps - 1]);
	printf("tp_load_pftrace%s_s %.3f s (median of %d, %.3f-%.3f)\n",
	       suffix, mp, reps, p[0], p[reps - 1]);
	printf("tp_load_ratio_json%s %.3f pftrace/json (median of the per-turn "
	       "ratios, %.3f-%.3f)\n", suffix, mr, r[0], r[reps - 1]);
}

static uint64_t dir_bytes(const char *dir)
{
	uint64_t total = 0;
	for (int i = 0;; i++) {
		char p[512];
		struct stat st;
		if (i == 0)
			snprintf(p, sizeof(p), "%s/trace.appletracebin", dir);
		else
			snprintf(p, sizeof(p), "%s/trace_%d.appletracebin", dir, i);
		if (stat(p, &st) != 0)
			break;
		total += (uint64_t)st.st_size;
	}
	return total;
}

/* The floor under any APLTRC01 converter on this machine: the same reads
 * and writes, with a minimal packet per event (timestamp delta, type, the
 * raw name id; no interning, ordering, checkpoints or checks). Its CPU
 * time, mostly the kernel's page-cache reads and writes, bounds
 * convert_appletracebin_mb_per_s from above. 0 on success. */
static int io_floor(const char *dir, const char *out)
{
	/* 256 KiB reads, as the converter reads (the buffer stays in the L2
	 * cache between the kernel's copy and the loop): 1 MiB reads made
	 * this floor 3-7% lower */
	enum { IN = 256 << 10, OUT = 256 << 10 };
	uint8_t *in = malloc(IN), *ob = malloc(OUT + 64);
	int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct { uint64_t tid, last; } th[64];
	memset(th, 0, sizeof(th));
	size_t on = 0;
	int rc = !in || !ob || fo < 0;
	for (int i = 0; !rc; i++) {
		char p[512];
		if (i == 0)
			snprintf(p, sizeof(p), "%s/trace.appletracebin", dir);
		else
			snprintf(p, sizeof(p), "%s/trace_%d.appletracebin", dir, i);
		int fd = open(p, O_RDONLY);
		if (fd < 0)
			break;
		size_t len = 0, skip = 12; /* header */
		ssize_t r;
		while ((r = read(fd, in + len, IN - len)) > 0) {
			len += (size_t)r;
			size_t pos = skip < len ? skip : len;
			skip -= pos;
			while (pos < len) {
				const uint8_t *q = in + pos;
				if (q[0] == 1) { /* string definition */
					uint32_t l;
					if (pos + 9 > len)
						break;
					memcpy(&l, q + 5, 4);
					if (pos + 9 + l > len)
						break;
					pos += 9 + (size_t)l;
					continue;
				}
				if (pos + 29 > len)
					break;
				uint32_t id;
				uint64_t tid, ts;
				memcpy(&id, q + 1, 4);
				memcpy(&tid, q + 5, 8);
				memcpy(&ts, q + 13, 8);
				ts *= 1000;
				unsigned s = (unsigned)(tid * 0x9E3779B1u) >> 26;
				if (th[s].tid != tid) {
					th[s].tid = tid;
					th[s].last = 0;
				}
				uint8_t *o = ob + on, *plen, *tlen;
				*o++ = 0x0A;
				plen = o++;
				*o++ = 0x08; /* timestamp */
				o = ptw_pb_write_varint(o, ts - th[s].last);
				th[s].last = ts;
				*o++ = 0x5A; /* track_event */
				tlen = o++;
				*o++ = 0x48; /* type */
				*o++ = q[0] == 'B' ? 1 : q[0] == 'E' ? 2 : 3;
				if (q[0] != 'E') {
					*o++ = 0x50; /* name_iid */
					o = ptw_pb_write_varint(o, (uint64_t)id + 1);
				}
				*tlen = (uint8_t)(o - tlen - 1);
				*plen = (uint8_t)(o - plen - 1);
				on = (size_t)(o - ob);
				if (on >= OUT) {
					rc |= write(fo, ob, on) != (ssize_t)on;
					on = 0;
				}
				pos += 29;
			}
			memmove(in, in + pos, len - pos);
			len -= pos;
		}
		rc |= r < 0;
		close(fd);
	}
	if (fo >= 0) {
		rc |= on && write(fo, ob, on) != (ssize_t)on;
		rc |= close(fo) != 0;
	}
	free(in);
	free(ob);
	if (rc)
		fprintf(stderr, "bench_convert: floor run failed\n");
	return rc;
}

/* Converts in the child; returns 0 and exits. */
static int convert(const char *in, int is_run, int floor_only, const char *out,
		   int compress)
{
	if (floor_only)
		return io_floor(in, out);
	struct ptw_error err = {0};
	struct ptw_writer_options wo = {
		.compress = compress,
		.checkpoint_packets = PTW_EMIT_CHECKPOINT_PACKETS}; /* as ptw-convert */
	struct ptw_writer *w = ptw_writer_open(out, &wo, &err);
	if (!w)
		goto fail;
	struct ptw_emit *em = ptw_emit_create(w, &err);
	if (!em)
		goto fail;
	struct ptw_emit_input ei = {.mode = is_run ? PTW_EMIT_XFORM
						   : PTW_EMIT_CHROME};
	int rc = ptw_emit_begin_input(em, &ei, &err);
	if (!rc && is_run) {
		struct ptw_appletrace_run *r = ptw_appletrace_run_create(&err);
		/* as ptw-convert reads a run */
		ptw_appletrace_run_set_batch(r, ptw_emit_simple_batch);
		rc = r ? ptw_appletrace_run_read_dir(r, in, ptw_emit_event, em,
						     NULL, &err)
		       : PTW_ERR_NOMEM;
		ptw_appletrace_run_destroy(r);
	} else if (!rc) {
		rc = ptw_cv_json_read(in, NULL, ptw_emit_event, em, NULL, &err);
	}
	if (!rc)
		rc = ptw_emit_end_input(em, &err);
	if (!rc)
		rc = ptw_emit_finish(em, &err);
	ptw_emit_destroy(em);
	if (ptw_writer_close(w, rc ? NULL : &err) || rc)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "bench_convert: %s: %s\n", in, err.msg);
	return 1;
}

struct run {
	double secs; /* CPU seconds (user + system) */
	double sys;  /* of which system */
	double wall;
	double rss_mb;
	uint64_t out_bytes;
};

static struct run measure(const char *in, int is_run, int floor_only,
			  const char *out, int compress)
{
	struct run r = {0};
	/* A fresh output each run (replacing the previous run's output would
	 * charge its freeing to this conversion), and no dirty pages left
	 * from the inputs just generated or earlier outputs: the kernel
	 * throttles a writer while others' dirty pages are written back,
	 * and would charge that to the conversion too. */
	unlink(out);
	sync();
	double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		_exit(convert(in, is_run, floor_only, out, compress));
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench_convert: conversion of %s failed\n", in);
		exit(1);
	}
	/* CPU time of the child: stable on a loaded machine, and the
	 * conversion never waits for anything but its own I/O. */
	r.secs = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	r.sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	r.wall = now_s() - t0;
	if (r.secs <= 0)
		r.secs = r.wall;
	r.rss_mb = (double)ru.ru_maxrss / 1024.0;
	struct stat s;
	r.out_bytes = stat(out, &s) == 0 ? (uint64_t)s.st_size : 0;
	return r;
}

static struct run measure_best(const char *in, int is_run, int floor_only,
				const char *out, int compress, int reps)
{
	struct run best = measure(in, is_run, floor_only, out, compress);
	for (int i = 1; i < reps; i++) {
		struct run r = measure(in, is_run, floor_only, out, compress);
		if (r.secs < best.secs)
			best = r;
	}
	return best;
}

/* The io floor's line, the same in the full and the APLTRC01-only runs. */
static void print_floor(uint64_t bin_in, const struct run *rf)
{
	printf("convert_appletracebin_io_floor_mb_per_s %.1f MB/s "
	       "(%.0f%% of it in the kernel)\n", bin_in / 1e6 / rf->secs,
	       100.0 * rf->sys / rf->secs);
}

/* Generates the inputs in a new directory 'dir' (and the event counts
 * in its file "events", for PTW_BENCH_DIR). */
static void make_inputs(char *dir, uint64_t events, uint64_t text_events)
{
	if (!mkdtemp(dir))
		die("mkdtemp");
	char p[512];
	snprintf(p, sizeof(p), "%s/bin", dir);
	if (mkdir(p, 0700))
		die(p);
	snprintf(p, sizeof(p), "%s/text", dir);
	if (mkdir(p, 0700))
		die(p);
	struct gen g;
	memset(&g, 0, sizeof(g));
	g.dir = dir;
	g.first_json = 1;
	for (int i = 0; i < NAMES; i++)
		snprintf(g.names[i], sizeof(g.names[i]), "-[Module%02d method%d:]",
			 i % 13, i);
	bin_open(&g);
	snprintf(p, sizeof(p), "%s/text/trace.appletrace", dir);
	g.txt = fopen(p, "w");
	snprintf(p, sizeof(p), "%s/trace.json", dir);
	g.json = fopen(p, "w");
	if (!g.txt || !g.json)
		die("fopen");
	generate(&g, events, text_events);
	snprintf(p, sizeof(p), "%s/events", dir);
	FILE *f = fopen(p, "w");
	if (!f || fprintf(f, "%llu %llu\n", (unsigned long long)events,
			  (unsigned long long)text_events) < 0 || fclose(f))
		die(p);
}

/* The event counts of inputs made earlier by make_inputs. */
static void read_counts(const char *dir, uint64_t *events,
			uint64_t *text_events)
{
	char p[512];
	unsigned long long e = 0, t = 0;
	snprintf(p, sizeof(p), "%s/events", dir);
	FILE *f = fopen(p, "r");
	if (!f || fscanf(f, "%llu %llu", &e, &t) != 2)
		die(p);
	fclose(f);
	*events = e;
	*text_events = t;
}

/* Removes the inputs made by this run unless PTW_BENCH_KEEP is set
 * ('reused': they were not, and stay). Returns 0. */
static int finish(const char *dir, int reused)
{
	if (reused)
		return 0;
	if (getenv("PTW_BENCH_KEEP")) {
		fprintf(stderr, "bench_convert: inputs kept in %s\n", dir);
		return 0;
	}
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_convert: could not remove %s\n", dir);
	return 0;
}

int main(void)
{
	int quick = getenv("PTW_BENCH_QUICK") && atoi(getenv("PTW_BENCH_QUICK"));
	const char *given = getenv("PTW_BENCH_DIR");
	int reuse = given && *given;
	const char *only = getenv("PTW_BENCH_ONLY");
	int bin_only = only && strcmp(only, "appletracebin") == 0;
	uint64_t events = quick ? 200000 : 5000000;
	uint64_t text_events = quick ? 200000 : 2000000;
	char dir[512] = "/tmp/ptw-bench-convert-XXXXXX";
	if (reuse) {
		snprintf(dir, sizeof(dir), "%s", given);
		read_counts(dir, &events, &text_events);
	} else {
		make_inputs(dir, events, text_events);
	}
	char p[512];

	char bin[512], text[512], json[512], out[512];
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	snprintf(text, sizeof(text), "%s/text", dir);
	snprintf(json, sizeof(json), "%s/trace.json", dir);
	snprintf(out, sizeof(out), "%s/out.pftrace", dir);
	struct stat st;
	uint64_t bin_in = dir_bytes(bin);
	stat(json, &st);
	uint64_t json_in = (uint64_t)st.st_size;
	snprintf(p, sizeof(p), "%s/text/trace.appletrace", dir);
	stat(p, &st);
	uint64_t text_in = (uint64_t)st.st_size;

	/* Best of 'reps' runs (the machine is shared: the fastest run is
	 * the one least disturbed). */
	int reps = quick ? 1 : 3;
	if (getenv("PTW_BENCH_REPS") && atoi(getenv("PTW_BENCH_REPS")) > 0)
		reps = atoi(getenv("PTW_BENCH_REPS"));
	struct run rb = measure_best(bin, 1, 0, out, 0, reps);
	if (bin_only) {
		printf("convert_appletracebin_mb_per_s %.1f MB/s\n",
		       bin_in / 1e6 / rb.secs);
		/* the floor on the same CPU in the same minute: what the
		 * machine's reads and writes leave for the conversion */
		struct run rf = measure_best(bin, 1, 1, out, 0, reps);
		print_floor(bin_in, &rf);
		printf("convert_appletracebin_sys_share %.0f %%\n",
		       100.0 * rb.sys / rb.secs);
		printf("convert_appletracebin_cpu_s %.3f s\n", rb.secs);
		printf("convert_appletracebin_wall_s %.3f s\n", rb.wall);
		printf("convert_appletracebin_peak_rss_mb %.1f MiB\n", rb.rss_mb);
		printf("convert_output_bytes %llu bytes\n",
		       (unsigned long long)rb.out_bytes);
		return finish(dir, reuse);
	}
	struct run rbz = measure_best(bin, 1, 0, out, 1, reps);
	struct run rt = measure_best(text, 1, 0, out, 0, reps);
	struct run rf = measure_best(bin, 1, 1, out, 0, reps);
	struct run rj = measure_best(json, 0, 0, out, 0, reps);
	struct run rjz = measure_best(json, 0, 0, out, 1, reps);
	double peak = rb.rss_mb;
	struct run all[] = {rbz, rt, rj, rjz};
	for (int i = 0; i < 4; i++)
		if (all[i].rss_mb > peak)
			peak = all[i].rss_mb;

	/* The named *_mb_per_s and *_events_per_s lines divide by the CPU
	 * time (user + system) of the converting child; *_wall_mb_per_s
	 * divide by the wall-clock time of the same run (lower when the
	 * machine is busy or the disk is slow). */
	printf("convert_events %llu events\n", (unsigned long long)events);
	printf("convert_appletracebin_mb_per_s %.1f MB/s\n", bin_in / 1e6 / rb.secs);
	printf("convert_appletracebin_events_per_s %.0f events/s\n", events / rb.secs);
	printf("convert_appletracebin_deflate_mb_per_s %.1f MB/s\n",
	       bin_in / 1e6 / rbz.secs);
	print_floor(bin_in, &rf);
	printf("convert_appletracebin_sys_share %.0f %%\n",
	       100.0 * rb.sys / rb.secs);
	printf("convert_appletrace_text_mb_per_s %.1f MB/s\n", text_in / 1e6 / rt.secs);
	printf("convert_appletrace_text_events_per_s %.0f events/s\n",
	       text_events / rt.secs);
	printf("convert_json_mb_per_s %.1f MB/s\n", json_in / 1e6 / rj.secs);
	printf("convert_json_events_per_s %.0f events/s\n", text_events / rj.secs);
	printf("convert_json_deflate_mb_per_s %.1f MB/s\n", json_in / 1e6 / rjz.secs);
	printf("convert_appletracebin_cpu_s %.3f s\n", rb.secs);
	printf("convert_appletracebin_wall_s %.3f s\n", rb.wall);
	printf("convert_appletracebin_wall_mb_per_s %.1f MB/s\n",
	       bin_in / 1e6 / rb.wall);
	printf("convert_appletrace_text_wall_mb_per_s %.1f MB/s\n",
	       text_in / 1e6 / rt.wall);
	printf("convert_json_cpu_s %.3f s\n", rj.secs);
	printf("convert_json_wall_s %.3f s\n", rj.wall);
	printf("convert_json_wall_mb_per_s %.1f MB/s\n", json_in / 1e6 / rj.wall);
	printf("convert_peak_rss_mb %.1f MiB\n", peak);
	printf("convert_output_ratio %.4f out/in\n", (double)rj.out_bytes / json_in);
	printf("convert_output_ratio_deflate %.4f out/in\n",
	       (double)rjz.out_bytes / json_in);
	printf("convert_output_ratio_appletracebin %.4f out/in\n",
	       (double)rb.out_bytes / bin_in);
	printf("convert_output_ratio_appletracebin_deflate %.4f out/in\n",
	       (double)rbz.out_bytes / bin_in);
	printf("convert_output_bytes_per_event %.2f bytes\n",
	       (double)rb.out_bytes / events);
	printf("convert_input_bytes %llu bytes (bin) %llu (text) %llu (json)\n",
	       (unsigned long long)bin_in, (unsigned long long)text_in,
	       (unsigned long long)json_in);

	/* the Chrome-shaped input (made here unless reused and present) */
	char chrome[512], pf[512], pfc[512];
	snprintf(chrome, sizeof(chrome), "%s/chrome.json", dir);
	snprintf(pf, sizeof(pf), "%s/trace.pftrace", dir);
	snprintf(pfc, sizeof(pfc), "%s/chrome.pftrace", dir);
	if (stat(chrome, &st) != 0)
		make_chrome(chrome, quick ? CHROME_EVENTS / 20 : CHROME_EVENTS);
	stat(chrome, &st);
	uint64_t chrome_in = (uint64_t)st.st_size;
	struct run rc = measure_best(chrome, 0, 0, pfc, 0, reps);
	printf("convert_chrome_json_mb_per_s %.1f MB/s\n",
	       chrome_in / 1e6 / rc.secs);
	printf("convert_chrome_json_peak_rss_mb %.1f MiB\n", rc.rss_mb);
	printf("convert_output_ratio_chrome %.4f out/in (%llu bytes)\n",
	       (double)rc.out_bytes / chrome_in,
	       (unsigned long long)rc.out_bytes);
	const char *tp = tp_path();
	if (tp) {
		measure(json, 0, 0, pf, 0); /* trace.json's conversion, kept */
		tp_compare(tp, json, pf, "", reps);
		tp_compare(tp, chrome, pfc, "_chrome", reps);
	} else {
		fprintf(stderr, "bench_convert: no trace_processor_shell "
				"(set PTW_SHARED_DIR): tp_load_* skipped\n");
	}
	unlink(pf);
	unlink(pfc);

	return finish(dir, reuse);
}
