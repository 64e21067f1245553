/* ptw_convert.c - ptw-convert: AppleTrace runs and Chrome JSON to a
 * Perfetto protobuf trace (and --to-json back).
 * SPDX-License-Identifier: Apache-2.0
 *
 *   ptw-convert [-o OUT.pftrace] [--compress[=LEVEL|zstd[:LEVEL]]] [options] INPUT...
 *   ptw-convert --to-json [-o OUT.json] TRACE.pftrace
 *
 * See docs/convert.md. The output is written to OUT.tmp-XXXXXX next to
 * OUT and renamed on success; on failure the temporary file is removed.
 * Standard output and devices or FIFOs are written directly. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "converters/appletrace/appletrace.h"
#include "converters/chrome_json/chrome_json.h"
#include "converters/chrome_json/cv_sort.h"
#include "converters/chrome_json/cv_stacks.h"
#include "converters/emit/emit.h"
#include "lib/util/grow.h"
#include "ptw/version.h"
#include "ptw/writer.h"

#define PROG "ptw-convert"
#define MAX_INPUTS 4096

struct input_opt {
	int64_t shift_ns;
	struct ptw_emit_remap *pids;
	uint32_t n_pids;
	struct ptw_emit_remap *tids;
	uint32_t n_tids;
};

/* A --process-name / --thread-name. */
struct pname { uint32_t pid, tid; int is_thread; const char *name; };

struct cli {
	const char *out;
	int compress, level;
	int keep_going, quiet, stats, to_json, strict;
	struct input_opt opts[MAX_INPUTS + 1]; /* by 1-based input number */
	int progress;
	uint64_t events;
	double t0, last_progress;
	struct ptw_emit *em;
	uint64_t bytes_in;
	uint64_t warnings;
	uint64_t repairs;       /* lenient repairs over all JSON inputs */
	const char *repair_in;  /* the first one: input, line, what */
	const char *stacks_late; /* a pipe whose stackFrames came after sf/esf */
	uint64_t repair_line;
	const char *repair_what;
	uint64_t json_stops;    /* JSON inputs read up to a stop */
	const char *cur_dir; /* run directory being read (messages) */
	int max_input_opt;   /* highest input number an option names */
	int reported_failures; /* inputs whose problems were reported */
	/* JSON events pass a reorder window (cv_sort.h) of 'window' events:
	 * from the start when the inputs or the output cannot be done over,
	 * else only in a second pass when the first one found events out of
	 * order ('replay': its read messages were printed by the first) */
	int reorder, replay;
	size_t window;
	uint32_t machine_id;      /* --machine-id (0: none) */
	const char *machine_name; /* --machine-name (NULL: none) */
	struct pname *names;      /* --process-name, --thread-name */
	size_t n_names;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A command-line mistake: what was wrong was said; point to --help, as
 * common Unix tools do. Returns the exit status 2. */
static int usage_error(void)
{
	fputs("Try '" PROG " --help' for more information.\n", stderr);
	return 2;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [-o OUT.pftrace] [--compress[=LEVEL|zstd[:LEVEL]]] [options] INPUT...\n"
		"       " PROG " --to-json [-o OUT.json] TRACE.pftrace\n"
		"INPUT: an AppleTrace run directory, one trace[_N].appletrace[bin]\n"
		"       fragment, a Chrome JSON file (.json, .json.gz), or - (stdin JSON)\n"
		"options:\n"
		"  -o, --output FILE          output (default: first INPUT + .pftrace;\n"
		"                             - is standard output)\n"
		"  -z, --compress[=LEVEL]     deflate packet batches (zlib level 1-9, 6)\n"
		"      --compress=zstd[:LEVEL] zstd batches instead (level 1-19, 3):\n"
		"                             smaller and faster, but only Perfetto\n"
		"                             v58+ (UI and trace_processor) reads them\n"
		"  -k, --keep-going           convert what can be converted, report\n"
		"                             each failing input, exit 1 at the end\n"
		"  -q, --quiet                no progress, notices or warnings\n"
		"  -s, --stats                print event counts, bytes and time\n"
		"      --reorder-window N     events held to put JSON events in\n"
		"                             time order (default 65536)\n"
		"      --strict               Chrome JSON must be strict RFC 8259\n"
		"                             (default: accept what trace_processor\n"
		"                             accepts, e.g. trailing commas, raw\n"
		"                             control characters in strings)\n"
		"      --shift N:US           add US microseconds to input N's times\n"
		"      --remap-pid N:OLD=NEW  in input N, pid OLD becomes NEW\n"
		"      --remap-tid N:OLD=NEW  in input N, tid OLD (any pid) becomes NEW\n"
		"      --process-name PID=NAME      name a process (trace M events win)\n"
		"      --thread-name PID:TID=NAME   name a thread (trace M events win)\n"
		"      --machine-id N         every packet says machine N (1 to\n"
		"                             4294967295), for merging traces of\n"
		"                             several machines (docs/convert.md)\n"
		"      --machine-name NAME    name the machine (SystemInfo)\n"
		"      --to-json              write Chrome JSON from a .pftrace\n"
		"  -h, --help\n"
		"      --version              print \"" PROG " VERSION\" and exit\n"
		"Inputs are numbered from 1 in command-line order. Equal pids in\n"
		"different inputs stay separate processes unless remapped.\n");
}

static int parse_u32(const char *s, char **end, uint32_t *out)
{
	errno = 0;
	unsigned long long v = strtoull(s, end, 10);
	if (errno || *end == s || v > UINT32_MAX || *s == '-')
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_input_no(const char *s, char **end)
{
	uint32_t n;
	if (parse_u32(s, end, &n) || **end != ':' || n < 1 || n > MAX_INPUTS)
		return -1;
	(*end)++;
	return (int)n;
}

/* Notes that an option names input n (checked against the inputs given). */
static void saw_input_no(struct cli *c, int n)
{
	if (n > c->max_input_opt)
		c->max_input_opt = n;
}

static int add_remap(struct ptw_emit_remap **v, uint32_t *n, uint32_t from,
		     uint32_t to)
{
	void *p = ptw_realloc_array(*v, (size_t)*n + 1, sizeof(**v));
	if (!p)
		return -1;
	*v = p;
	(*v)[*n].from = from;
	(*v)[*n].to = to;
	(*n)++;
	return 0;
}

static int opt_remap(struct cli *c, const char *arg, int tid)
{
	char *e;
	int n = parse_input_no(arg, &e);
	uint32_t from, to;
	if (n < 0 || parse_u32(e, &e, &from) || *e != '=' ||
	    parse_u32(e + 1, &e, &to) || *e)
		return -1;
	saw_input_no(c, n);
	struct input_opt *o = &c->opts[n];
	return tid ? add_remap(&o->tids, &o->n_tids, from, to)
		   : add_remap(&o->pids, &o->n_pids, from, to);
}

static int opt_shift(struct cli *c, const char *arg)
{
	char *e;
	int n = parse_input_no(arg, &e);
	if (n < 0)
		return -1;
	errno = 0;
	char *e2;
	double us = strtod(e, &e2);
	if (errno || e2 == e || *e2 || !isfinite(us) || fabs(us) > 9e15)
		return -1;
	saw_input_no(c, n);
	c->opts[n].shift_ns = llround(us * 1000.0);
	return 0;
}

/* ---- event callback with progress ------------------------------------- */

/* Shows progress when the event count passed a multiple of 2^20. */
static void progress_tick(struct cli *c, uint64_t before)
{
	if (!c->progress || (before >> 20) == (c->events >> 20))
		return;
	double t = now_s();
	if (t - c->last_progress >= 0.5) {
		c->last_progress = t;
		fprintf(stderr, "\r" PROG ": %llu events, %.1f s",
			(unsigned long long)c->events, t - c->t0);
	}
}

static int on_event(void *ctx, const struct ptw_cv_event *ev,
		    struct ptw_error *err)
{
	struct cli *c = ctx;
	progress_tick(c, c->events++);
	return ptw_emit_event(c->em, ev, err);
}

/* The same for a batch of simple events (counted as taken). */
static int on_batch(void *ctx, const struct ptw_cv_batch *b, size_t *taken,
		    struct ptw_error *err)
{
	struct cli *c = ctx;
	int rc = ptw_emit_simple_batch(c->em, b, taken, err);
	uint64_t before = c->events;
	c->events += *taken;
	progress_tick(c, before);
	return rc;
}

/* --keep-going: a fragment failed; the run goes on with the next one. */
static void on_fragment_error(void *ctx, const struct ptw_error *err)
{
	struct cli *c = ctx;
	if (c->progress)
		fputc('\n', stderr);
	fprintf(stderr, PROG ": %s%s%s\n", c->cur_dir ? c->cur_dir : "",
		c->cur_dir ? "/" : "", err->msg);
}

/* One warning: counted (--stats), printed unless --quiet. */
static void warn(struct cli *c, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static void warn(struct cli *c, const char *fmt, ...)
{
	c->warnings++;
	if (c->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs(PROG ": warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void on_warn(void *ctx, const char *file, uint64_t line,
		    const char *msg)
{
	(void)file;
	(void)line;
	struct cli *c = ctx;
	if (!c->replay) /* else printed and counted by the first pass */
		warn(c, "%s", msg);
}

/* ---- inputs ------------------------------------------------------------- */

static int is_fragment_path(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b);
	if (ptw_appletrace_fragment_name(b, NULL, NULL))
		return 1;
	return (n > 11 && strcmp(b + n - 11, ".appletrace") == 0) ||
	       (n > 14 && strcmp(b + n - 14, ".appletracebin") == 0) ||
	       ptw_appletrace_has_bin_magic(path); /* any name */
}

/* Does the file at 'path', gzip-compressed or not, contain "sort_index"?
 * 0 for standard input and pipes (read once: a scan would consume them)
 * and anything unreadable (the conversion itself reports read errors).
 * zlib's gzread passes an uncompressed file through. */
static int mentions_sort_index(const char *path)
{
	static const char key[] = "sort_index";
	enum { K = sizeof(key) - 1, CHUNK = 1 << 20 };
	struct stat st;
	if (strcmp(path, "-") == 0 || stat(path, &st) != 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	gzFile gz = gzopen(path, "rb");
	if (!gz)
		return 0;
	char *buf = malloc(CHUNK + K);
	size_t keep = 0;
	int found = 0;
	if (buf)
		(void)gzbuffer(gz, CHUNK);
	while (buf && !found) {
		int r = gzread(gz, buf + keep, CHUNK);
		if (r <= 0)
			break; /* end, or an error the conversion reports */
		size_t n = keep + (size_t)r;
		/* memchr for the key's last byte, rare in JSON traces, is
		 * several times faster than memmem */
		for (const char *q = buf + K - 1, *e = buf + n;
		     !found && q < e && (q = memchr(q, key[K - 1],
						    (size_t)(e - q)));
		     q++)
			found = memcmp(q - (K - 1), key, K - 1) == 0;
		/* the key may straddle two reads */
		keep = n < K - 1 ? n : K - 1;
		memmove(buf, buf + n - keep, keep);
	}
	free(buf);
	gzclose(gz);
	return found;
}

/* After a JSON input: the warning for a stop where trace_processor stops
 * reading, and the repairs for the summary at the end. */
static void json_read_notes(struct cli *c, const char *path,
			    const struct ptw_cv_json_read_stats *js)
{
	if (js->repairs) {
		if (!c->repairs) {
			c->repair_in = path;
			c->repair_line = js->repair_line;
			c->repair_what = js->repair_what;
		}
		c->repairs += js->repairs;
	}
	if (js->system_trace_events)
		warn(c, "%s: \"systemTraceEvents\" (ftrace text, which "
			"trace_processor imports as ftrace events) was not "
			"converted", path);
	if (!js->stopped)
		return;
	c->json_stops++;
	warn(c, "%s:%llu (byte %llu): \"%s\": %s is not a number of "
		"microseconds; trace_processor stops reading the JSON at this "
		"event, so it and the rest of the file (%llu bytes) were not "
		"converted (json_stopped)",
	     path, (unsigned long long)js->stop_line,
	     (unsigned long long)js->stop_offset, js->stop_member,
	     js->stop_value, (unsigned long long)js->stop_bytes_left);
}

/* The warnings that sum up the whole run (one line each). */
static void end_warnings(struct cli *c)
{
	struct ptw_emit_stats es;
	ptw_emit_get_stats(c->em, &es);
	if (es.x_without_dur)
		warn(c, "%llu complete event(s) (ph X) without a \"dur\" were "
			"dropped, as trace_processor drops them (x_without_dur)",
		     (unsigned long long)es.x_without_dur);
	char ph[512];
	size_t at = 0;
	uint64_t unwritten = 0;
	for (int p = 0; p < 128; p++) {
		uint64_t k = es.unwritten_by_phase[p];
		if (!k)
			continue;
		unwritten += k;
		int n = snprintf(ph + at, sizeof(ph) - at, "%s%c (%llu)",
				 at ? ", " : "", p > 32 && p < 127 ? p : '?',
				 (unsigned long long)k);
		if (n > 0 && (size_t)n < sizeof(ph) - at)
			at += (size_t)n;
	}
	if (unwritten)
		warn(c, "%llu event(s) of a phase that is not converted were "
			"not written (only their process and thread were): "
			"phase %s (unwritten_phases)",
		     (unsigned long long)unwritten, ph);
	if (es.out_of_order)
		warn(c, "%llu event(s) came more than the reorder window (%zu "
			"events) after a later event of their thread (or a "
			"later async event) and were written out of time order:"
			" trace_processor may show them differently from the "
			"JSON (out_of_order; see --reorder-window)",
		     (unsigned long long)es.out_of_order,
		     c->window ? c->window : (size_t)PTW_CV_SORT_WINDOW);
	if (es.stack_unknown)
		warn(c, "%llu \"sf\"/\"esf\" id(s) name no frame of "
			"\"stackFrames\": written without that callstack "
			"(stack_unknown)%s%s%s", (unsigned long long)es.stack_unknown,
		     c->stacks_late ? "; in " : "",
		     c->stacks_late ? c->stacks_late : "",
		     c->stacks_late ? ", a pipe, \"stackFrames\" came after "
				      "events with ids, which found their "
				      "frames only if still in the reorder "
				      "window (convert the file itself, put "
				      "\"stackFrames\" first, or widen "
				      "--reorder-window)" : "");
	if (es.stack_cycles)
		warn(c, "%llu callstack(s) whose \"parent\" links loop were "
			"left out (stack_cycles)",
		     (unsigned long long)es.stack_cycles);
	if (es.stack_truncated)
		warn(c, "%llu callstack(s) deeper than %d frames kept their "
			"%d innermost frames (stack_truncated)",
		     (unsigned long long)es.stack_truncated, PTW_MAX_FRAMES,
		     PTW_MAX_FRAMES);
	if (es.stack_invalid)
		warn(c, "%llu \"stack\"/\"estack\" member(s) that are not "
			"arrays of strings were ignored (stack_invalid)",
		     (unsigned long long)es.stack_invalid);
	if (es.stack_ignored)
		warn(c, "%llu callstack(s) on events other than thread "
			"slices and instants (async, counter, flow, ...) "
			"were not written (stack_ignored)",
		     (unsigned long long)es.stack_ignored);
	if (es.args_renamed)
		warn(c, "%llu arg key(s) contain '[' or ']', which "
			"trace_processor shows as '_' for a protobuf trace "
			"(debug.a_0_ where its JSON import shows args.a[0])",
		     (unsigned long long)es.args_renamed);
	if (es.args_dropped)
		warn(c, "%llu arg value(s) left out: more than %u args, more "
			"than %u levels deep or more than %u nested values in "
			"one event (args_dropped)",
		     (unsigned long long)es.args_dropped, PTW_MAX_ANNOTATIONS,
		     PTW_MAX_ARG_DEPTH, PTW_MAX_ARG_NODES);
	if (c->repairs)
		warn(c, "%llu lenient repairs: JSON that is not RFC 8259 was "
			"read as trace_processor reads it (the first: %s:%llu: "
			"%s); --strict refuses it (lenient_repairs)",
		     (unsigned long long)c->repairs, c->repair_in,
		     (unsigned long long)c->repair_line,
		     c->repair_what ? c->repair_what : "?");
}

/* The length of a directory path without its trailing slashes. */
static int dir_len(const char *path)
{
	int n = (int)strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	return n;
}

/* When err is about fragment 'frag' of run directory 'path' (not, say,
 * about the writer), names the fragment with its directory. */
static void name_fragment(struct ptw_error *err, const char *path,
			  const char *frag)
{
	if (!frag[0] || strncmp(err->msg, frag, strlen(frag)) != 0 ||
	    strlen(err->msg) + strlen(path) + 4 >= sizeof(err->msg))
		return;
	char m[2 * PTW_ERROR_MSG_MAX + 8];
	snprintf(m, sizeof(m), "%.*s/%s", dir_len(path), path, err->msg);
	memcpy(err->msg, m, sizeof(err->msg) - 1);
	err->msg[sizeof(err->msg) - 1] = '\0';
}

/* Reads an AppleTrace run directory or one fragment into the emitter.
 * Under --keep-going a directory's failing fragments are reported one by
 * one and the input counts as read (c->reported_failures). */
static int convert_appletrace(struct cli *c, const char *path, int is_dir,
			      ptw_cv_event_fn fn, void *ctx,
			      struct ptw_error *err)
{
	struct ptw_appletrace_run *r = ptw_appletrace_run_create(err);
	if (!r)
		return PTW_ERR_NOMEM;
	/* Runs of simple events go to the emitter in batches (same output,
	 * less work per event). */
	ptw_appletrace_run_set_batch(r, c->progress ? on_batch
						    : ptw_emit_simple_batch);
	struct ptw_appletrace_warn w = {on_warn, c, NULL};
	char dir[PATH_MAX];
	if (is_dir && c->keep_going) {
		/* Report each failing fragment, read the others. */
		snprintf(dir, sizeof(dir), "%.*s", dir_len(path), path);
		c->cur_dir = dir;
		w.error_fn = on_fragment_error;
	}
	int rc = is_dir ? ptw_appletrace_run_read_dir(r, path, fn, ctx, &w, err)
			: ptw_appletrace_run_read_file(r, path, fn, ctx, &w,
						       err);
	c->bytes_in += ptw_appletrace_run_bytes(r);
	c->cur_dir = NULL;
	if (rc && w.error_fn) {
		/* every problem was reported; the events are kept */
		c->reported_failures++;
		rc = 0;
	}
	if (rc && err && is_dir)
		name_fragment(err, path, ptw_appletrace_run_file(r));
	if (rc && err)
		err->input = NULL; /* owned by r */
	ptw_appletrace_run_destroy(r);
	return rc;
}

/* Reads a Chrome JSON file (or standard input) into the emitter, through
 * the reorder window when c->reorder is set. */
static int convert_json(struct cli *c, const char *path, ptw_cv_event_fn fn,
			void *ctx, struct ptw_error *err)
{
	struct ptw_cv_json_read_stats js;
	struct ptw_cv_json_read_opts jo = {.strict = c->strict};
	int rc = 0;
	memset(&js, 0, sizeof(js));
	/* Chrome writes its M events last, after the tracks they rank were
	 * written: read those first. */
	if (mentions_sort_index(path))
		rc = ptw_cv_json_read(path, &jo, ptw_emit_sort_index_event,
				      c->em, NULL, err);
	struct ptw_cv_sort *so = NULL;
	/* callstacks: "stackFrames" goes to the emitter's frames */
	if (!rc && !(jo.stacks = ptw_emit_stacks(c->em)))
		rc = ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
	if (!rc)
		ptw_cv_stacks_next_input(jo.stacks);
	if (!rc && c->reorder &&
	    !(so = ptw_cv_sort_create(c->window, fn, ctx, err)))
		rc = PTW_ERR_NOMEM;
	if (!rc)
		rc = so ? ptw_cv_json_read(path, &jo, ptw_cv_sort_event, so,
					   &js, err)
			: ptw_cv_json_read(path, &jo, fn, ctx, &js, err);
	if (!rc && so)
		rc = ptw_cv_sort_drain(so, err);
	ptw_cv_sort_destroy(so);
	c->bytes_in += js.bytes_in;
	if (c->replay) /* its notes were printed by the first pass */
		js.system_trace_events = js.stopped = 0;
	if (!rc && js.cut == PTW_CV_JSON_CUT_MID_EVENT && !c->quiet &&
	    !c->replay)
		fprintf(stderr, PROG ": notice: %s: array cut inside its last "
			"event (line %llu), which was dropped\n", path,
			(unsigned long long)js.cut_line);
	json_read_notes(c, path, &js);
	if (!rc && js.stacks_late && !c->stacks_late)
		c->stacks_late = path; /* see end_warnings */
	if (rc && err)
		err->input = NULL;
	return rc;
}

/* Converts input number 'no' (an AppleTrace run or fragment, or Chrome
 * JSON) with its --shift and --remap options. */
static int convert_input(struct cli *c, const char *path, int no,
			 struct ptw_error *err)
{
	struct input_opt *o = &c->opts[no];
	struct ptw_emit_input in = {.shift_ns = o->shift_ns,
				    .pids = o->pids, .n_pids = o->n_pids,
				    .tids = o->tids, .n_tids = o->n_tids};
	struct stat st;
	int is_dir = strcmp(path, "-") != 0 && stat(path, &st) == 0 &&
		     S_ISDIR(st.st_mode);
	int is_at = is_dir || (strcmp(path, "-") != 0 && is_fragment_path(path));
	in.mode = is_at ? PTW_EMIT_XFORM : PTW_EMIT_CHROME;
	/* Events go straight to the emitter unless progress is shown. */
	ptw_cv_event_fn fn = c->progress ? on_event : ptw_emit_event;
	void *ctx = c->progress ? (void *)c : (void *)c->em;
	int rc = ptw_emit_begin_input(c->em, &in, err);
	if (rc)
		return rc;
	rc = is_at ? convert_appletrace(c, path, is_dir, fn, ctx, err)
		   : convert_json(c, path, fn, ctx, err);
	int rc2 = ptw_emit_end_input(c->em, rc ? NULL : err);
	return rc ? rc : rc2;
}

static char *default_output(const char *in, const char *ext)
{
	size_t n = strlen(in);
	while (n > 1 && in[n - 1] == '/')
		n--;
	size_t cut = n;
	const char *b = in;
	for (size_t i = 0; i < n; i++)
		if (in[i] == '/')
			b = in + i + 1;
	static const char *exts[] = {".json.gz", ".json", ".appletracebin",
				     ".appletrace", ".pftrace", NULL};
	for (int i = 0; exts[i]; i++) {
		size_t k = strlen(exts[i]);
		if (n > k && (size_t)(in + n - b) > k &&
		    strncmp(in + n - k, exts[i], k) == 0) {
			cut = n - k;
			break;
		}
	}
	char *o = malloc(cut + strlen(ext) + 1);
	if (!o)
		return NULL;
	memcpy(o, in, cut);
	strcpy(o + cut, ext);
	return o;
}

/* Creates OUT.tmp-XXXXXX; returns its fd and path (malloc'd) or -1. */
static int make_temp(const char *out, char **tmp)
{
	size_t n = strlen(out) + 16;
	*tmp = malloc(n);
	if (!*tmp)
		return -1;
	snprintf(*tmp, n, "%s.tmp-XXXXXX", out);
	int fd = mkstemp(*tmp);
	if (fd < 0) {
		/* the user's path: the temporary name means nothing to them */
		fprintf(stderr, PROG ": %s: cannot create: %s\n", out,
			strerror(errno));
		free(*tmp);
		*tmp = NULL;
		return -1;
	}
	/* mkstemp makes the file 0600; the output gets the usual 0666 & ~umask,
	 * like a file created with open(O_CREAT). */
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0) {
		fprintf(stderr, PROG ": %s: cannot set permissions: %s\n", out,
			strerror(errno));
		close(fd);
		unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
		return -1;
	}
	return fd;
}

/* The output. A regular file (existing or new) is written under a
 * temporary name next to it and renamed on success, so a failed run leaves
 * nothing that looks complete. Standard output ("-") and anything that
 * exists and is not a regular file (a device such as /dev/null, a FIFO)
 * are written directly: renaming onto them would replace them. */
struct output {
	const char *path; /* as given */
	char *tmp;        /* temporary name; NULL: written directly */
	int fd;
};

/* Returns 0, or 1 with a message printed. 'binary': refuse a terminal. */
static int output_open(struct output *o, const char *path, int binary)
{
	struct stat st;
	o->path = path;
	o->tmp = NULL;
	o->fd = -1;
	if (strcmp(path, "-") == 0) {
		if (binary && isatty(STDOUT_FILENO)) {
			fprintf(stderr, PROG ": not writing a binary trace to "
				"a terminal (use -o FILE or a pipe)\n");
			return 1;
		}
		o->fd = STDOUT_FILENO;
		return 0;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (o->fd < 0) {
			fprintf(stderr, PROG ": %s: cannot open: %s\n", path,
				strerror(errno));
			return 1;
		}
		return 0;
	}
	o->fd = make_temp(path, &o->tmp);
	return o->fd < 0;
}

/* Is the output an existing regular file that is also one of the inputs?
 * Says so and returns 1: converting would replace the input. */
static int output_is_input(const char *out, char *const *in, int n)
{
	struct stat so, si;
	if (strcmp(out, "-") == 0 || stat(out, &so) != 0 || !S_ISREG(so.st_mode))
		return 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(in[i], "-") != 0 && stat(in[i], &si) == 0 &&
		    si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
			fprintf(stderr, PROG ": %s: the output is also input %d;"
				" name another file with -o\n", out, i + 1);
			return 1;
		}
	}
	return 0;
}

/* The name to put in messages about the bytes being written. */
static const char *output_name(const struct output *o)
{
	return o->tmp ? o->tmp : strcmp(o->path, "-") == 0 ? "stdout" : o->path;
}

/* After a successful write: moves the temporary file into place. Returns
 * 0, or 1 with a message printed. */
static int output_commit(struct output *o)
{
	if (!o->tmp)
		return 0;
	if (rename(o->tmp, o->path) != 0) {
		fprintf(stderr, PROG ": %s: cannot rename to %s: %s\n", o->tmp,
			o->path, strerror(errno));
		return 1;
	}
	free(o->tmp);
	o->tmp = NULL;
	return 0;
}

/* Removes the temporary file, if one is left (after a failure). */
static void output_discard(struct output *o)
{
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}

static int run_to_json(struct cli *c, const char *in)
{
	struct ptw_error err = {0};
	struct output o;
	if (output_open(&o, c->out ? c->out : "-", 0))
		return 1;
	FILE *f = o.fd == STDOUT_FILENO ? stdout : fdopen(o.fd, "w");
	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", output_name(&o),
			strerror(errno));
		close(o.fd);
		output_discard(&o);
		return 1;
	}
	int rc = ptw_cv_export_json(in, f, &err);
	if ((f == stdout ? fflush(f) : fclose(f)) != 0 && !rc)
		rc = ptw_error_set(&err, PTW_ERR_IO, errno, "%s: write failed",
				   output_name(&o));
	if (rc && err.msg[0])
		fprintf(stderr, PROG ": %s\n", err.msg);
	if (!rc && output_commit(&o))
		rc = PTW_ERR_IO;
	output_discard(&o);
	return rc ? 1 : 0;
}

/* Is every input a regular file (read twice if need be)? */
static int all_regular(char *const *in, int n)
{
	struct stat st;
	for (int i = 0; i < n; i++)
		if (strcmp(in[i], "-") == 0 || stat(in[i], &st) != 0 ||
		    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			return 0;
	return 1;
}

/* Opens the writer on o and the emitter (c->em), and converts the inputs.
 * Returns 0 (with *failed inputs reported under --keep-going) or 1 with a
 * message printed. */
static int convert_all(struct cli *c, struct output *o, char *const *in,
		       int n_in, struct ptw_writer **wp, int *failed)
{
	struct ptw_error err = {0};
	/* A converted trace names its machine (no uname: the input may come
	 * from another host) and keeps its own clock (no REALTIME). */
	struct ptw_writer_options wo = {.compress = c->compress,
					.compress_level = c->level,
					.checkpoint_packets =
						PTW_EMIT_CHECKPOINT_PACKETS,
					.close_fd = o->fd != STDOUT_FILENO,
					.machine_id = c->machine_id,
					.machine_name = c->machine_name};
	struct ptw_writer *w = *wp = ptw_writer_open_fd(o->fd, &wo, &err);
	*failed = 0;
	if (!w) {
		if (wo.close_fd)
			close(o->fd);
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 1;
	}
	c->em = ptw_emit_create(w, &err);
	if (!c->em) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 1;
	}
	for (size_t i = 0; i < c->n_names; i++) {
		const struct pname *p = &c->names[i];
		int rc = p->is_thread
			? ptw_emit_name_thread(c->em, p->pid, p->tid, p->name)
			: ptw_emit_name_process(c->em, p->pid, p->name);
		if (rc) {
			fprintf(stderr, PROG ": %s\n", ptw_strerror(rc));
			return 1;
		}
	}
	for (int i = 0; i < n_in; i++) {
		memset(&err, 0, sizeof(err));
		int rc = convert_input(c, in[i], i + 1, &err);
		if (rc) {
			if (c->progress)
				fputc('\n', stderr);
			if (ptw_writer_error(w)->code) /* about the output */
				fprintf(stderr, PROG ": %s: ", output_name(o));
			else
				fprintf(stderr, PROG ": ");
			fprintf(stderr, "%s\n",
				err.msg[0] ? err.msg : ptw_strerror(rc));
			++*failed;
			/* Writer failures are fatal whatever --keep-going. */
			if (!c->keep_going || ptw_writer_error(w)->code)
				return 1;
		}
	}
	return 0;
}

/* ---- command line ------------------------------------------------------- */

enum { O_SHIFT = 256, O_RPID, O_RTID, O_PNAME, O_TNAME, O_TOJSON, O_STRICT,
       O_VERSION, O_WINDOW, O_MID, O_MNAME };

/* --compress: NULL, LEVEL, deflate[:LEVEL] or zstd[:LEVEL]. Returns 0 or
 * -1 (bad value). */
static int opt_compress(struct cli *c, const char *a)
{
	c->compress = PTW_COMPRESS_DEFLATE;
	c->level = 0;
	uint32_t max = 9;
	size_t k = 0;
	if (a && strncmp(a, "zstd", 4) == 0) {
		c->compress = PTW_COMPRESS_ZSTD;
		max = 19;
		k = 4;
	} else if (a && strncmp(a, "deflate", 7) == 0) {
		k = 7;
	}
	if (a && k) {
		if (a[k] == '\0')
			a = NULL;      /* the codec alone */
		else if (a[k] == ':')
			a += k + 1;    /* codec:LEVEL */
		else
			return -1;
	}
	if (!a)
		return 0;
	uint32_t l;
	char *e;
	if (parse_u32(a, &e, &l) || *e || l < 1 || l > max)
		return -1;
	c->level = (int)l;
	return 0;
}

/* --process-name PID=NAME or --thread-name PID:TID=NAME. Returns 0, -1
 * (bad value) or -2 (out of memory). */
static int opt_name(struct cli *c, const char *arg, int is_thread)
{
	struct pname p = {0, 0, is_thread, NULL};
	char *e;
	int bad = parse_u32(arg, &e, &p.pid);
	if (!bad && p.is_thread)
		bad = *e != ':' || parse_u32(e + 1, &e, &p.tid);
	if (bad || *e != '=')
		return -1;
	p.name = e + 1;
	void *q = ptw_realloc_array(c->names, c->n_names + 1,
				    sizeof(*c->names));
	if (!q)
		return -2;
	c->names = q;
	c->names[c->n_names++] = p;
	return 0;
}

/* The long name of an option that takes a value, for messages. */
static const char *opt_long_name(int ch)
{
	switch (ch) {
	case 'z': return "compress";
	case O_SHIFT: return "shift";
	case O_RPID: return "remap-pid";
	case O_RTID: return "remap-tid";
	case O_PNAME: return "process-name";
	case O_WINDOW: return "reorder-window";
	case O_MID: return "machine-id";
	default: return "thread-name";
	}
}

/* Reads the options into c; optind is then the first input. Returns -1
 * to go on, or the exit status (after --help, --version, or a mistake
 * that was reported). */
static int parse_args(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
		{"output", required_argument, NULL, 'o'},
		{"compress", optional_argument, NULL, 'z'},
		{"keep-going", no_argument, NULL, 'k'},
		{"quiet", no_argument, NULL, 'q'},
		{"stats", no_argument, NULL, 's'},
		{"shift", required_argument, NULL, O_SHIFT},
		{"remap-pid", required_argument, NULL, O_RPID},
		{"remap-tid", required_argument, NULL, O_RTID},
		{"process-name", required_argument, NULL, O_PNAME},
		{"thread-name", required_argument, NULL, O_TNAME},
		{"to-json", no_argument, NULL, O_TOJSON},
		{"strict", no_argument, NULL, O_STRICT},
		{"reorder-window", required_argument, NULL, O_WINDOW},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, O_VERSION},
		{"machine-id", required_argument, NULL, O_MID},
		{"machine-name", required_argument, NULL, O_MNAME},
		{NULL, 0, NULL, 0},
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "o:z::kqsh", lo, NULL)) != -1) {
		char *e;
		uint32_t v;
		int bad = 0;
		switch (ch) {
		case 'o': c->out = optarg; break;
		case 'z': bad = opt_compress(c, optarg); break;
		case 'k': c->keep_going = 1; break;
		case 'q': c->quiet = 1; break;
		case 's': c->stats = 1; break;
		case O_SHIFT: bad = opt_shift(c, optarg); break;
		case O_RPID: bad = opt_remap(c, optarg, 0); break;
		case O_RTID: bad = opt_remap(c, optarg, 1); break;
		case O_PNAME:
		case O_TNAME:
			bad = opt_name(c, optarg, ch == O_TNAME);
			if (bad == -2) {
				fprintf(stderr, PROG ": out of memory\n");
				return 1;
			}
			break;
		case O_TOJSON: c->to_json = 1; break;
		case O_STRICT: c->strict = 1; break;
		case O_WINDOW:
			bad = parse_u32(optarg, &e, &v) || *e || v < 1;
			c->window = v;
			break;
		case O_MID:
			bad = parse_u32(optarg, &e, &c->machine_id) || *e ||
			      !c->machine_id;
			break;
		case O_MNAME: c->machine_name = optarg; break;
		case 'h': usage(stdout); return 0;
		case O_VERSION: puts(PROG " " PTW_VERSION); return 0;
		default: return usage_error(); /* getopt said why */
		}
		if (bad) {
			fprintf(stderr, PROG ": bad value for --%s: '%s'\n",
				opt_long_name(ch), optarg);
			return usage_error();
		}
	}
	return -1;
}

/* Checks the number of inputs against the limits and the input numbers
 * that options name. Returns -1 to go on, or the exit status. */
static int check_inputs(const struct cli *c, int n_in)
{
	if (n_in < 1) {
		fprintf(stderr, PROG ": no input given\n");
		return usage_error();
	}
	if (n_in > MAX_INPUTS) {
		fprintf(stderr, PROG ": at most %d inputs\n", MAX_INPUTS);
		return 2;
	}
	if (c->max_input_opt > n_in) {
		fprintf(stderr, PROG ": an option names input %d, but there %s"
			" %d input%s\n", c->max_input_opt, n_in == 1 ? "is" : "are",
			n_in, n_in == 1 ? "" : "s");
		return 2;
	}
	if (c->to_json && n_in != 1) {
		fprintf(stderr, PROG ": --to-json takes one trace\n");
		return 2;
	}
	return -1;
}

/* ---- conversion --------------------------------------------------------- */

/* The output path (malloc'd): -o, else the first input's name with
 * .pftrace. NULL with a message printed and *status set. */
static char *output_path(const struct cli *c, const char *first, int *status)
{
	char *out = c->out ? strdup(c->out) : NULL;
	if (!out) {
		if (strcmp(first, "-") == 0) {
			fprintf(stderr, PROG ": reading stdin: name the output "
				"with -o\n");
			*status = 2;
			return NULL;
		}
		out = default_output(first, ".pftrace");
	}
	if (!out) {
		fprintf(stderr, PROG ": out of memory\n");
		*status = 1;
	}
	return out;
}

/* Converts every input into o (convert_all). When that pass found events
 * out of order in inputs that can be read again, starts over on a fresh
 * output with the reorder window (c->replay). Returns 0 or 1 (message
 * printed). */
static int convert_in_order(struct cli *c, struct output *o, const char *out,
			    char *const *in, int n_in, struct ptw_writer **w,
			    int *failed)
{
	int status = convert_all(c, o, in, n_in, w, failed);
	struct ptw_emit_stats es = {0};
	if (c->em)
		ptw_emit_get_stats(c->em, &es);
	if (status || *failed || c->reported_failures || c->reorder ||
	    !es.out_of_order)
		return status;
	ptw_writer_close(*w, NULL);
	*w = NULL;
	ptw_emit_destroy(c->em);
	c->em = NULL;
	output_discard(o);
	if (output_open(o, out, 1))
		return 1;
	c->reorder = c->replay = 1;
	c->events = c->bytes_in = c->repairs = 0;
	return convert_all(c, o, in, n_in, w, failed);
}

/* Ends the trace: the emitter's last packets, the writer's figures in
 * *ws, the writer closed (*w = NULL) and the output put in place. Returns
 * 0 or 1 (message printed). */
static int finish_trace(struct cli *c, struct output *o, struct ptw_writer **w,
			struct ptw_writer_stats *ws)
{
	struct ptw_error err = {0};
	if (ptw_emit_finish(c->em, &err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 1;
	}
	ptw_writer_flush(*w);
	ptw_writer_get_stats(*w, ws);
	memset(&err, 0, sizeof(err));
	int rc = ptw_writer_close(*w, &err);
	*w = NULL;
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", output_name(o), err.msg);
		return 1;
	}
	return output_commit(o);
}

/* --stats: one "name value" line per figure. */
static void print_counts(const char *const *names, const uint64_t *vals,
			 size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s %llu\n", names[i],
			(unsigned long long)vals[i]);
}

/* One line per phase letter seen ('?' for one that does not print). */
static void print_by_phase(const char *prefix, const uint64_t *by_phase)
{
	for (int p = 0; p < 128; p++)
		if (by_phase[p])
			fprintf(stderr, "%s%c %llu\n", prefix,
				p > 32 && p < 127 ? p : '?',
				(unsigned long long)by_phase[p]);
}

static void print_stats(const struct cli *c, const struct ptw_emit_stats *es,
			const struct ptw_writer_stats *ws)
{
	double t = now_s() - c->t0;
	print_counts((const char *const[]){"events_read"}, &es->events_in, 1);
	print_by_phase("events_read_", es->by_phase);
	static const char *const names[] = {
		"events_written", "slices", "open_slices", "instants",
		"counter_samples", "flows", "dropped", "pid_collisions",
		"warnings", "dropped_x_without_dur", "json_stopped",
		"lenient_repairs", "short_path", "batched", "lane",
		"spilled_overlapping_x"};
	const uint64_t vals[] = {
		ws->events, es->slices, es->open_slices, es->instants,
		es->counters, es->flows, es->dropped, es->pid_collisions,
		c->warnings, es->x_without_dur, c->json_stops, c->repairs,
		es->short_path, es->batched, es->lane, es->spilled};
	print_counts(names, vals, sizeof(vals) / sizeof(vals[0]));
	print_by_phase("unwritten_phase_", es->unwritten_by_phase);
	static const char *const names2[] = {
		"out_of_order", "thread_times", "stacks", "stack_unknown",
		"stack_cycles", "stack_truncated", "stack_invalid",
		"stack_ignored", "args_renamed", "args_dropped", "bytes_in",
		"bytes_out"};
	const uint64_t vals2[] = {
		es->out_of_order, es->thread_times, es->stacks,
		es->stack_unknown, es->stack_cycles, es->stack_truncated,
		es->stack_invalid, es->stack_ignored, es->args_renamed,
		es->args_dropped, c->bytes_in, ws->bytes_written};
	print_counts(names2, vals2, sizeof(vals2) / sizeof(vals2[0]));
	fprintf(stderr, "time_s %.3f\n", t);
}

/* The notices after a conversion (not under --quiet). */
static void print_notices(const struct output *o,
			  const struct ptw_emit_stats *es,
			  const struct ptw_writer_stats *ws)
{
	if (!ws->events)
		fprintf(stderr, PROG ": notice: no events to write: "
			"%s is a trace without events\n", output_name(o));
	if (es->pid_collisions)
		fprintf(stderr, PROG ": notice: %llu pid(s) appear in "
			"several inputs; kept as separate processes "
			"(use --remap-pid to renumber)\n",
			(unsigned long long)es->pid_collisions);
	if (es->spilled)
		fprintf(stderr, PROG ": notice: %llu complete (X) "
			"event(s) partly overlap another on their "
			"thread and were written on an overlap track "
			"of that thread, as trace_processor shows them; "
			"its JSON import also reports them as "
			"slice_spill_overlapping_complete_event, which "
			"a protobuf trace cannot carry\n",
			(unsigned long long)es->spilled);
	if (es->thread_times)
		fprintf(stderr, PROG ": notice: %llu event(s) carry "
			"thread time (tts): trace_processor shows it "
			"as slice.thread_ts/thread_dur and also as "
			"rows of a \"thread_time\" counter track per "
			"thread, which the JSON import does not have\n",
			(unsigned long long)es->thread_times);
	if (es->sort_index_late)
		fprintf(stderr, PROG ": notice: %llu sort index(es) "
			"came after their track was written and were "
			"not applied (read from standard input; a file "
			"is read for them first)"
			"\n", (unsigned long long)es->sort_index_late);
}

/* Converts the inputs into one trace. Returns the exit status. */
static int run_convert(struct cli *c, char *const *in, int n_in)
{
	int status = 0;
	char *out = output_path(c, in[0], &status);
	if (!out)
		return status;
	struct output o;
	if (output_is_input(out, in, n_in) || output_open(&o, out, 1)) {
		free(out);
		return 1;
	}
	c->t0 = c->last_progress = now_s();
	c->progress = !c->quiet && isatty(2);
	/* Out-of-order events are put right by a second pass through a
	 * reorder window when the first finds some; inputs read once (pipes)
	 * or an output written in place need the window from the start. */
	c->reorder = !o.tmp || !all_regular(in, n_in);
	struct ptw_writer *w = NULL;
	struct ptw_writer_stats ws;
	int failed = 0;
	status = convert_in_order(c, &o, out, in, n_in, &w, &failed);
	if (!status)
		status = finish_trace(c, &o, &w, &ws);
	if (!status) {
		if (c->progress)
			fputc('\n', stderr);
		end_warnings(c);
		struct ptw_emit_stats es;
		ptw_emit_get_stats(c->em, &es);
		if (c->stats)
			print_stats(c, &es, &ws);
		if (!c->quiet)
			print_notices(&o, &es, &ws);
		status = failed || c->reported_failures ? 1 : 0;
	}
	if (w)
		ptw_writer_close(w, NULL);
	ptw_emit_destroy(c->em);
	output_discard(&o); /* nothing left after a commit */
	free(out);
	return status;
}

int main(int argc, char **argv)
{
	static struct cli c;
	int status = parse_args(&c, argc, argv);
	if (status < 0)
		status = check_inputs(&c, argc - optind);
	if (status < 0 && c.to_json)
		status = c.out && output_is_input(c.out, argv + optind, 1)
			 ? 1 : run_to_json(&c, argv[optind]);
	else if (status < 0)
		status = run_convert(&c, argv + optind, argc - optind);
	free(c.names);
	for (int i = 0; i <= MAX_INPUTS; i++) {
		free(c.opts[i].pids);
		free(c.opts[i].tids);
	}
	return status;
}
