/* bench_json_parse.c - how fast can Chrome JSON events be parsed?
 * SPDX-License-Identifier: Apache-2.0
 *
 * Generates a Chrome JSON array (nested B/E, X with args, counters,
 * instants on 16 threads), then times:
 *   json_parse_ours_*     ptw_cv_json_read_mem() over the whole array
 *   json_parse_file_*     ptw_cv_json_read() of the same text from a file
 *   json_parse_gzip_*     ptw_cv_json_read_mem() of its gzip compression
 *   json_parse_jsonc_*    json-c 0.16, one json_tokener per event (reused),
 *                         plus the member look-ups an importer needs
 * Usage: bench_json_parse [MEGABYTES]   (default 64; PTW_BENCH_MB too).
 * Prints "name value unit" lines; nothing is asserted. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "bench/support/bench_clock.h"
#include "converters/chrome_json/chrome_json.h"

struct text {
	char *p;
	size_t n, cap;
	size_t *line_off; /* start of each event line */
	size_t lines, lines_cap;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (t->n + n > t->cap) {
		while (t->n + n > t->cap)
			t->cap = t->cap ? t->cap * 2 : 1 << 20;
		t->p = realloc(t->p, t->cap);
		if (!t->p) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
	}
	memcpy(t->p + t->n, s, n);
	t->n += n;
}

static void event(struct text *t, const char *s, int n)
{
	if (t->lines == t->lines_cap) {
		t->lines_cap = t->lines_cap ? t->lines_cap * 2 : 4096;
		t->line_off = realloc(t->line_off, t->lines_cap * sizeof(size_t));
		if (!t->line_off) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
	}
	t->line_off[t->lines++] = t->n;
	put(t, s, (size_t)n);
	put(t, ",\n", 2);
}

static const char *names[] = {
	"-[ViewController viewDidLoad]", "+[ImageCache decode:]",
	"-[NetworkManager fetch:completion:]", "-[Router save]",
	"MessageLoop::RunTask", "v8.compile",
};

static void generate(struct text *t, size_t target)
{
	char line[512];
	uint64_t ts[16] = { 0 };
	unsigned k = 0;
	put(t, "[\n", 2);
	while (t->n < target) {
		unsigned tid = 1000 + k % 16;
		uint64_t *tt = &ts[k % 16];
		const char *nm = names[k % 6];
		int n;
		/* depth-3 nest, an X with args, a counter, an instant */
		for (int d = 0; d < 3; d++) {
			n = snprintf(line, sizeof(line),
				     "{\"name\":\"%s\",\"cat\":\"app\",\"ph\":\"B\","
				     "\"pid\":42,\"tid\":%u,\"ts\":%llu}",
				     names[(k + d) % 6], tid,
				     (unsigned long long)(*tt += 3));
			event(t, line, n);
		}
		n = snprintf(line, sizeof(line),
			     "{\"name\":\"%s\",\"cat\":\"app,io\",\"ph\":\"X\","
			     "\"pid\":42,\"tid\":%u,\"ts\":%llu.125,\"dur\":2.5,"
			     "\"args\":{\"bytes\":%u,\"path\":\"/tmp/f%u\"}}",
			     nm, tid, (unsigned long long)(*tt += 1), k * 7u, k);
		event(t, line, n);
		n = snprintf(line, sizeof(line),
			     "{\"name\":\"queue\",\"ph\":\"C\",\"pid\":42,"
			     "\"tid\":%u,\"ts\":%llu,\"args\":{\"depth\":%u}}",
			     tid, (unsigned long long)(*tt += 1), k % 17);
		event(t, line, n);
		n = snprintf(line, sizeof(line),
			     "{\"name\":\"mark\",\"cat\":\"app\",\"ph\":\"i\","
			     "\"s\":\"t\",\"pid\":42,\"tid\":%u,\"ts\":%llu}",
			     tid, (unsigned long long)(*tt += 1));
		event(t, line, n);
		for (int d = 2; d >= 0; d--) {
			n = snprintf(line, sizeof(line),
				     "{\"name\":\"%s\",\"cat\":\"app\",\"ph\":\"E\","
				     "\"pid\":42,\"tid\":%u,\"ts\":%llu}",
				     names[(k + d) % 6], tid,
				     (unsigned long long)(*tt += 2));
			event(t, line, n);
		}
		k++;
	}
	t->n -= 2; /* last ",\n" */
	put(t, "\n]\n", 3);
}

struct sink {
	uint64_t events, sum;
};

static int count(void *ctx, const struct ptw_cv_event *ev,
		 struct ptw_error *err)
{
	(void)err;
	struct sink *s = ctx;
	s->events++;
	s->sum += (uint64_t)ev->ts_ns + ev->name.n + ev->n_args;
	return 0;
}

static void report(const char *what, size_t bytes, uint64_t events, double dt)
{
	printf("json_parse_%s_mb_per_s %.1f MB/s\n", what,
	       (double)bytes / 1e6 / dt);
	printf("json_parse_%s_events_per_s %.0f events/s\n", what,
	       (double)events / dt);
}

static uint64_t jsonc_once(const struct text *t)
{
	struct json_tokener *tok = json_tokener_new();
	uint64_t sum = 0;
	for (size_t i = 0; i < t->lines; i++) {
		size_t s = t->line_off[i];
		size_t e = i + 1 < t->lines ? t->line_off[i + 1] - 2 : t->n - 3;
		json_tokener_reset(tok);
		struct json_object *o =
			json_tokener_parse_ex(tok, t->p + s, (int)(e - s));
		if (!o) {
			fprintf(stderr, "json-c failed at event %zu\n", i);
			exit(1);
		}
		struct json_object *v;
		const char *keys[] = { "name", "cat", "ph", "pid", "tid", "ts",
				       "dur", "args" };
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (json_object_object_get_ex(o, keys[k], &v))
				sum += (uint64_t)json_object_get_type(v);
		json_object_put(o);
	}
	json_tokener_free(tok);
	return sum;
}

int main(int argc, char **argv)
{
	size_t mb = 64;
	const char *env = getenv("PTW_BENCH_MB");
	if (argc > 1)
		mb = (size_t)strtoul(argv[1], NULL, 10);
	else if (env)
		mb = (size_t)strtoul(env, NULL, 10);
	if (mb == 0)
		mb = 1;
	struct text t = { 0 };
	generate(&t, mb << 20);
	struct ptw_error err = { 0 };
	struct sink s = { 0 };
	double t0, dt;

	/* ours, in memory (best of 3) */
	double best = 1e30;
	for (int r = 0; r < 3; r++) {
		s.events = 0;
		t0 = now_s();
		if (ptw_cv_json_read_mem(t.p, t.n, NULL, count, &s, NULL, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		dt = now_s() - t0;
		if (dt < best)
			best = dt;
	}
	report("ours", t.n, s.events, best);

	/* ours, from a file (page cache) */
	char path[] = "/tmp/bench_json_parse_XXXXXX";
	int fd = mkstemp(path);
	if (fd >= 0) {
		FILE *f = fdopen(fd, "wb");
		if (f && fwrite(t.p, 1, t.n, f) == t.n && fclose(f) == 0) {
			s.events = 0;
			t0 = now_s();
			if (ptw_cv_json_read(path, NULL, count, &s, NULL, &err)) {
				fprintf(stderr, "%s\n", err.msg);
				unlink(path);
				return 1;
			}
			report("file", t.n, s.events, now_s() - t0);
		}
		unlink(path);
	}

	/* ours, gzip in memory (MB/s of JSON text) */
	uLongf zn = compressBound((uLong)t.n) + 64;
	unsigned char *z = malloc(zn);
	if (z) {
		z_stream zs;
		memset(&zs, 0, sizeof(zs));
		if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) == Z_OK) {
			zs.next_in = (unsigned char *)t.p;
			zs.avail_in = (uInt)t.n;
			zs.next_out = z;
			zs.avail_out = (uInt)zn;
			if (deflate(&zs, Z_FINISH) == Z_STREAM_END) {
				s.events = 0;
				t0 = now_s();
				if (ptw_cv_json_read_mem(z, zs.total_out, NULL,
							 count, &s, NULL, &err)) {
					fprintf(stderr, "%s\n", err.msg);
					return 1;
				}
				report("gzip", t.n, s.events, now_s() - t0);
			}
			deflateEnd(&zs);
		}
		free(z);
	}

	/* json-c, per event */
	t0 = now_s();
	uint64_t sum = jsonc_once(&t);
	dt = now_s() - t0;
	report("jsonc", t.n, t.lines, dt);
	printf("json_parse_input_mb %.1f MB\n", (double)t.n / 1e6);
	printf("json_parse_events %zu events\n", t.lines);
	if (sum == 0 || s.sum == 0)
		printf("json_parse_checksum 0 none\n");
	free(t.p);
	free(t.line_off);
	return 0;
}
