/* export_json.c - writes Chrome JSON from a protobuf trace.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Loads the trace with the reader library (reader/trace_read.h) and
 * builds its trace_processor model (tp_model.h), so what is exported is
 * what trace_processor shows for the protobuf trace: slices already paired
 * (names of ENDs come from their BEGINs), depths, counters converted, flows
 * linked. Each row becomes the JSON event that trace_processor's JSON
 * importer turns back into the same row:
 *
 *   thread slice            B, and E at its END's place (none if never
 *                           ended); X (dur) on a thread's other tracks
 *                           and for one-event complete slices (x_mode)
 *   thread instant          i  "s":"t"; with flows B + E (see below)
 *   process-track instant   i  "s":"p"
 *   global instant          i  "s":"g"
 *   process / global instant n on its track, as below (an i would
 *   with flows               lose them)
 *   slice on another track  b + e with "id" (global) or "id2":{"local"}
 *                           (process-scoped), one id per proto track;
 *                           instants there become n
 *   counter sample          C on the owning process, name/key split at the
 *                           last space of the track name (TP joins them
 *                           back with a space, so the track name is kept)
 *   thread / process name   M thread_name / process_name; sibling_order_rank
 *                           -> M thread_sort_index / process_sort_index;
 *                           an unnamed process gets an M "process_exists"
 *                           (ignored by trace_processor except that it
 *                           creates the process row)
 *   flows                   per link, bind_id "0x<id>" + flow_out /
 *                           flow_in (v2) on both slices' events; a link
 *                           whose slice already carries another id goes
 *                           as v1 s / f ("bp":"e") events at both ends
 *                           (thread slices only). Each flow id is
 *                           renumbered from 2^63 up: trace_processor
 *                           numbers v1 flows 0, 1, 2, ... in the same
 *                           space as v2 bind ids, so small ids would
 *                           merge flows on import
 *
 * Order. trace_processor sorts JSON events by ts, ties in file order,
 * unless the file has an X: then, at equal ts, E events go first and X
 * events by decreasing dur before the rest (trace_sorter.h,
 * SlowOperatorLess). Without X, events at equal ts are thus read in the
 * order written, as the protobuf import reads the trace's events (ts,
 * then file order: tp_model.c), so the thread slices are written as B
 * and E in exactly that order and nest as they did (an instant before a
 * slice at its ts stays its sibling, an instant at its parent's end ts
 * stays inside). An instant with flows is a B + E (JSON flows bind to
 * B, X, b and n only; the E follows the instants stacked on it at the
 * same ts, which an 'i' would carry too): the same slice row, and its
 * thread_dur is the protobuf import's 0 where an 'i' leaves NULL. Only a
 * slice on another track of a thread (the converter's overlap tracks)
 * or a complete slice of one event (legacy_event phase 'X', as
 * ptw-convert writes Chrome X events) needs an X; such a trace is written
 * as before this order existed: X for every thread slice, an instant with
 * flows as an X of dur 0.
 *
 * Times are printed exactly: ns / 1000 with up to three decimals. The
 * output is streamed through one buffer; the trace itself is held in
 * memory by the reader library. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "converters/chrome_json/chrome_json.h"
#include "lib/util/hashmap.h"
#include "lib/util/utf8.h"
#include "converters/chrome_json/json_internal.h"
#include "converters/chrome_json/cv_stacks.h"
#include "reader/tp_model.h"
#include "reader/trace_read.h"

#define OUT_BUF (64u << 10)

struct out {
	FILE *f;
	char buf[OUT_BUF];
	size_t n;
	int failed;
	int first; /* no event written yet */
};

static void flush_out(struct out *o)
{
	if (o->n && !o->failed && fwrite(o->buf, 1, o->n, o->f) != o->n)
		o->failed = 1;
	o->n = 0;
}

static void put(struct out *o, const char *s, size_t n)
{
	while (n) {
		if (o->n == OUT_BUF)
			flush_out(o);
		size_t k = OUT_BUF - o->n < n ? OUT_BUF - o->n : n;
		memcpy(o->buf + o->n, s, k);
		o->n += k;
		s += k;
		n -= k;
	}
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void putf(struct out *o, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static void putf(struct out *o, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (k > 0)
		put(o, tmp, (size_t)k < sizeof(tmp) ? (size_t)k : sizeof(tmp) - 1);
}

/* A JSON string literal; each maximal invalid UTF-8 subpart becomes
 * U+FFFD (as the writer writes it and the UI shows it). */
static void put_str_n(struct out *o, const char *s0, size_t n)
{
	const unsigned char *s = (const unsigned char *)s0;
	put(o, "\"", 1);
	size_t i = 0, run = 0;
	while (i < n) {
		unsigned ch = s[i];
		if (ch >= 0x20 && ch < 0x80 && ch != '"' && ch != '\\') {
			i++;
			run++;
			continue;
		}
		put(o, (const char *)s + i - run, run);
		run = 0;
		if (ch >= 0x80) {
			size_t bad, k = ptw_utf8_char(s + i, n - i, &bad);
			if (k) {
				put(o, (const char *)s + i, k);
				i += k;
			} else {
				puts_(o, "\\ufffd");
				i += bad;
			}
			continue;
		}
		switch (ch) {
		case '"': puts_(o, "\\\""); break;
		case '\\': puts_(o, "\\\\"); break;
		case '\n': puts_(o, "\\n"); break;
		case '\r': puts_(o, "\\r"); break;
		case '\t': puts_(o, "\\t"); break;
		case '\b': puts_(o, "\\b"); break;
		case '\f': puts_(o, "\\f"); break;
		default: putf(o, "\\u%04x", ch); break;
		}
		i++;
	}
	put(o, (const char *)s + i - run, run);
	put(o, "\"", 1);
}

static void put_str(struct out *o, const char *s)
{
	put_str_n(o, s, strlen(s));
}

/* A decimal integer (printf costs more than the rest of an event). */
static void put_u64(struct out *o, uint64_t v)
{
	char tmp[20];
	size_t k = sizeof(tmp);
	do {
		tmp[--k] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, tmp + k, sizeof(tmp) - k);
}

static void put_i64(struct out *o, int64_t v)
{
	if (v < 0)
		put(o, "-", 1);
	put_u64(o, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

/* ns as microseconds, exactly. */
static void put_us(struct out *o, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	uint64_t us = a / 1000, frac = a % 1000;
	if (ns < 0)
		put(o, "-", 1);
	put_u64(o, us);
	if (!frac)
		return;
	char f[4] = { '.', (char)('0' + frac / 100),
		      (char)('0' + frac / 10 % 10), (char)('0' + frac % 10) };
	size_t k = 4;
	while (f[k - 1] == '0')
		k--;
	put(o, f, k);
}

static void put_double(struct out *o, double d)
{
	if (!isfinite(d)) {
		puts_(o, "null");
		return;
	}
	if (d == floor(d) && fabs(d) < 9007199254740992.0) {
		putf(o, "%" PRId64, (int64_t)d);
		return;
	}
	char tmp[40];
	/* shortest round-tripping form */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	puts_(o, tmp);
}

/* Starts an event line: ",\n{" or "[\n{" handled by the caller's first. */
static void begin_event(struct out *o)
{
	puts_(o, o->first ? "\n{" : ",\n{");
	o->first = 0;
}

/* An arg's double, in a form trace_processor's JSON parser reads back as
 * a double (a '.' or an exponent) and, where one of the candidate forms
 * allows, as the same double (its StringToDouble is not strtod). */
static void put_arg_double(struct out *o, double d)
{
	if (!isfinite(d)) {
		puts_(o, "null");
		return;
	}
	char tmp[48];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (!strpbrk(tmp, ".e"))
			strcat(tmp, ".0");
		double back;
		if (ptw_cv_json_i_tp_double(tmp, strlen(tmp), &back) == 0 &&
		    back == d)
			break;
	}
	puts_(o, tmp);
}

/* A name as trace_processor's protobuf import shows it ('.', '[' and
 * ']' -> '_'), so that its JSON import makes the same key. */
static void put_arg_name(struct out *o, const char *name)
{
	if (!name)
		name = "";
	size_t n = strlen(name);
	if (!strpbrk(name, ".[]")) {
		put_str_n(o, name, n);
		return;
	}
	char *s = malloc(n + 1); /* rare: names with '.', '[' or ']' */
	if (!s) {
		o->failed = 1;
		return;
	}
	for (size_t i = 0; i < n; i++)
		s[i] = name[i] == '.' || name[i] == '[' || name[i] == ']'
			       ? '_' : name[i];
	put_str_n(o, s, n);
	free(s);
}

/* An arg's value; dicts and arrays as JSON objects and arrays (the JSON
 * import adds their members as "args.<name>.<entry>" / "[i]" rows, as
 * the protobuf import adds "debug.<name>..."). Recursion is bounded by
 * the reader's PTW_TRACE_ARG_MAX_DEPTH. */
static void put_arg_value(struct out *o, const struct ptw_trace_arg *a)
{
	switch (a->type) {
	case PTW_TRACE_ARG_BOOL:
		puts_(o, a->v.b ? "true" : "false");
		break;
	case PTW_TRACE_ARG_INT:
		putf(o, "%" PRId64, a->v.i);
		break;
	case PTW_TRACE_ARG_UINT:
		putf(o, "%" PRIu64, a->v.u);
		break;
	case PTW_TRACE_ARG_DOUBLE:
		put_arg_double(o, a->v.d);
		break;
	case PTW_TRACE_ARG_POINTER:
		putf(o, "\"0x%" PRIx64 "\"", a->v.u);
		break;
	case PTW_TRACE_ARG_STRING:
	case PTW_TRACE_ARG_JSON:
		put_str(o, a->v.s ? a->v.s : "");
		break;
	case PTW_TRACE_ARG_DICT:
	case PTW_TRACE_ARG_ARRAY: {
		int dict = a->type == PTW_TRACE_ARG_DICT;
		put(o, dict ? "{" : "[", 1);
		for (uint32_t i = 0; i < a->v.nested.n; i++) {
			const struct ptw_trace_arg *e = &a->v.nested.items[i];
			if (i)
				put(o, ",", 1);
			if (dict) {
				put_arg_name(o, e->name);
				put(o, ":", 1);
			}
			put_arg_value(o, e);
		}
		put(o, dict ? "}" : "]", 1);
		break;
	}
	default: /* no value: no row */
		puts_(o, "null");
		break;
	}
}

static void put_args(struct out *o, const struct ptw_trace_arg *const *args,
		     uint32_t n)
{
	if (!n)
		return;
	puts_(o, ",\"args\":{");
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			put(o, ",", 1);
		put_arg_name(o, args[i]->name);
		put(o, ":", 1);
		put_arg_value(o, args[i]);
	}
	put(o, "}", 1);
}

/* "name", "cat", pid/tid and ts of an event line. */
static void put_common(struct out *o, const char *ph, const char *name,
		       const char *cat, int32_t pid, int64_t tid, int has_tid,
		       int64_t ts)
{
	puts_(o, "\"ph\":");
	put_str(o, ph);
	if (name) {
		puts_(o, ",\"name\":");
		put_str(o, name);
	}
	if (cat) {
		puts_(o, ",\"cat\":");
		put_str(o, cat);
	}
	puts_(o, ",\"pid\":");
	put_i64(o, pid);
	if (has_tid) {
		puts_(o, ",\"tid\":");
		put_i64(o, tid);
	}
	puts_(o, ",\"ts\":");
	put_us(o, ts);
}

/* Flows of each slice: the first id goes on the event (v2). */
struct slice_flows {
	uint64_t id;
	uint8_t in, out; /* v2 bind on the slice's own event */
	uint8_t v1;      /* the slice is an end of a link written as v1 */
};

struct ctx {
	const struct ptw_trace *t;
	const struct ptw_tp_model *m;
	struct slice_flows *sf;
	uint8_t *async_track; /* per slice: its track has non-instant slices */
	uint8_t *link_v1;     /* per flow link: written as v1 s/f events */
	uint64_t *link_id;    /* per flow link: the id it is written with */
	/* the trace's events: an event's index is its place in the protobuf
	 * import's order at equal ts */
	const struct ptw_trace_event *evs;
	/* a slice lies on another track of a thread: thread slices are X
	 * (see the top) */
	int x_mode;
	/* per slice: an instant written as B + E (it or an instant stacked
	 * on it has flows), and the place of its E (after the instants
	 * stacked on it); NULL when there is none */
	uint8_t *inst_be;
	size_t *inst_end;
	struct out *o;
	/* callstacks: the frames written as "stackFrames" (ids are frame
	 * numbers); NULL when no event has one (the array form then) */
	struct ptw_cv_stacks *stacks;
	int stacks_nomem;
};

static int has_flows(const struct ctx *c, const struct ptw_tp_slice *s)
{
	const struct slice_flows *f = &c->sf[s->id];
	return f->in || f->out || f->v1;
}

/* The slice lies on its thread's own track (else on another track of the
 * thread, where only an X keeps it apart: the JSON import spills an X
 * that overlaps onto another track of the thread). */
static int on_own_thread_track(const struct ctx *c,
			       const struct ptw_tp_slice *s)
{
	const struct ptw_trace_track *tr = ptw_trace_find_track(c->t,
								s->track_uuid);
	return !tr || tr->kind == PTW_TRACE_TRACK_THREAD;
}

/* How a thread slice is written: 'i', 'B' (+ 'E') or 'X'. */
static char thread_form(const struct ctx *c, const struct ptw_tp_slice *s)
{
	if (s->is_instant) {
		if (c->x_mode)
			return has_flows(c, s) ? 'X' : 'i';
		return c->inst_be && c->inst_be[s->id] ? 'B' : 'i';
	}
	if (!c->x_mode)
		return 'B';
	return s->dur < 0 ? 'B' : 'X';
}

static size_t event_index(const struct ctx *c, const struct ptw_trace_event *ev)
{
	return (size_t)(ev - c->evs);
}

/* pid and tid of an event that is not a thread's: a process's own
 * (process track), else, for a global one, those of the trace's first
 * thread, so that importing the JSON makes no process or thread the
 * trace did not have (pid 0 would make process 0 and its thread 0). */
static void owner_ids(const struct ctx *c, const struct ptw_tp_track_owner *ow,
		      int32_t *pid, int64_t *tid, int *has_tid)
{
	*tid = 0;
	*has_tid = 0;
	if (ow->owner == PTW_TP_OWNER_PROCESS) {
		*pid = ow->pid;
	} else if (c->m->n_threads) {
		*pid = c->m->threads[0].pid;
		*tid = c->m->threads[0].tid;
		*has_tid = 1;
	} else {
		*pid = c->m->n_processes ? c->m->processes[0].pid : 0;
	}
}

/* put_common() for an event of owner 'ow' that is not a thread's. */
static void put_common_owned(const struct ctx *c, const char *ph,
			     const struct ptw_tp_slice *s,
			     const struct ptw_tp_track_owner *ow, int64_t ts)
{
	int32_t pid;
	int64_t tid;
	int has_tid;
	owner_ids(c, ow, &pid, &tid, &has_tid);
	put_common(c->o, ph, s->name, s->category, pid, tid, has_tid, ts);
}

static void put_flow_fields(struct out *o, const struct slice_flows *f)
{
	if (!f->in && !f->out)
		return;
	putf(o, ",\"bind_id\":\"0x%" PRIx64 "\"", f->id);
	if (f->in)
		puts_(o, ",\"flow_in\":true");
	if (f->out)
		puts_(o, ",\"flow_out\":true");
}

/* v1 flow events for the links a slice could not carry on its own event
 * (both ends of such a link are written as v1, which binds to the slice
 * open on the thread at that time): ends ('f', "bp":"e") before starts
 * ('s'), so a step through the slice ends the old link first. */
static void extra_flows(struct ctx *c, const struct ptw_tp_slice *s,
			const struct ptw_tp_track_owner *ow)
{
	const struct ptw_tp_model *m = c->m;
	if (!c->sf[s->id].v1 || ow->owner != PTW_TP_OWNER_THREAD)
		return;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < m->n_flows; i++) {
			const struct ptw_tp_flow *f = &m->flows[i];
			if (!c->link_v1[i])
				continue;
			if (pass == 0 ? f->slice_in != s->id
				      : f->slice_out != s->id)
				continue;
			begin_event(c->o);
			put_common(c->o, pass ? "s" : "f", "flow", "ptw", ow->pid,
				   ow->tid, 1, s->ts);
			putf(c->o, ",\"id\":\"0x%" PRIx64 "\"", c->link_id[i]);
			if (pass == 0)
				puts_(c->o, ",\"bp\":\"e\"");
			put(c->o, "}", 1);
		}
	}
}

/* Whether a slice is written as async b/e/n (1), and its owner. */
static int slice_is_async(const struct ctx *c, const struct ptw_tp_slice *s,
			  struct ptw_tp_track_owner *ow)
{
	*ow = s->owner;
	if (ow->owner == PTW_TP_OWNER_THREAD)
		return 0;
	/* an 'i' would lose its flows: an 'n' of its own track keeps them */
	if (s->is_instant && has_flows(c, s))
		return 1;
	if (s->is_instant && s->begin->legacy_scope)
		return 0; /* a global / process instant of a legacy scope */
	const struct ptw_trace_track *tr = ptw_trace_find_track(c->t,
								s->track_uuid);
	if (tr && tr->kind == PTW_TRACE_TRACK_PROCESS && s->is_instant)
		return 0;
	return c->async_track[s->id] || !s->is_instant;
}

/* The E of a thread slice written as B: no name or category, so it
 * closes the innermost open slice, as the protobuf END did. */
/* ,"KEY":ID for an event's callstack (its frames pushed into c->stacks,
 * so equal stacks and shared callers are one frame each). */
static void put_stack(struct ctx *c, const char *key,
		      const struct ptw_trace_event *ev)
{
	if (!ev || !ev->stack || !ev->stack->n || !c->stacks)
		return;
	uint32_t f = 0;
	for (uint32_t i = 0; i < ev->stack->n; i++) {
		const char *nm = ev->stack->frames[i];
		if (ptw_cv_stacks_push(c->stacks, f, nm, strlen(nm), &f)) {
			c->stacks_nomem = 1;
			return;
		}
	}
	putf(c->o, ",\"%s\":%" PRIu32, key, f);
}

/* The "stackFrames" member: every frame as {"name", "parent"}. */
static void put_stack_frames(struct ctx *c)
{
	struct out *o = c->o;
	uint32_t n = ptw_cv_stacks_count(c->stacks);
	puts_(o, ",\n\"stackFrames\":{");
	for (uint32_t f = 1; f <= n; f++) {
		putf(o, "%s\n\"%" PRIu32 "\":{\"name\":", f > 1 ? "," : "",
		     f);
		put_str(o, ptw_cv_stacks_name(c->stacks, f));
		uint32_t p = ptw_cv_stacks_parent(c->stacks, f);
		if (p)
			putf(o, ",\"parent\":\"%" PRIu32 "\"", p);
		put(o, "}", 1);
	}
	puts_(o, "\n}");
}

static void thread_end(struct ctx *c, const struct ptw_tp_slice *s)
{
	struct out *o = c->o;
	begin_event(o);
	put_common(o, "E", NULL, NULL, s->owner.pid, s->owner.tid, 1,
		   s->ts + s->dur);
	if (s->has_thread_ts && s->has_thread_dur) {
		puts_(o, ",\"tts\":");
		put_us(o, s->thread_ts + s->thread_dur);
	}
	put_stack(c, "sf", s->end);
	put(o, "}", 1);
}

static void async_end(struct ctx *c, const struct ptw_tp_slice *s,
		      const struct ptw_tp_track_owner *ow)
{
	struct out *o = c->o;
	int proc = ow->owner == PTW_TP_OWNER_PROCESS;
	begin_event(o);
	put_common_owned(c, "e", s, ow, s->ts + s->dur);
	if (proc)
		putf(o, ",\"id2\":{\"local\":\"0x%" PRIx64 "\"}", s->track_uuid);
	else
		putf(o, ",\"id\":\"0x%" PRIx64 "\"", s->track_uuid);
	put(o, "}", 1);
}

/* Writes a slice's event; for async slices only the begin (b or n), plus
 * the end when it has zero duration (its e must follow its b). */
static void export_slice(struct ctx *c, const struct ptw_tp_slice *s)
{
	struct out *o = c->o;
	struct ptw_tp_track_owner ow;
	int async = slice_is_async(c, s, &ow);
	if (ow.broken)
		return;
	int on_thread = ow.owner == PTW_TP_OWNER_THREAD;
	const struct slice_flows *fl = &c->sf[s->id];
	begin_event(o);
	if (on_thread) {
		char ph = thread_form(c, s);
		put_common(o, ph == 'i' ? "i" : ph == 'B' ? "B" : "X", s->name,
			   s->category, ow.pid, ow.tid, 1, s->ts);
		if (ph == 'i')
			puts_(o, ",\"s\":\"t\"");
		else if (ph == 'X') {
			puts_(o, ",\"dur\":");
			put_us(o, s->dur);
		}
		/* thread time back as tts / tdur (an 'i' instant's thread_dur
		 * is the protobuf import's 0, not the JSON's NULL); a B's
		 * thread_dur is its E's tts */
		if (s->has_thread_ts) {
			puts_(o, ",\"tts\":");
			put_us(o, s->thread_ts);
		}
		if (ph == 'X' && s->has_thread_dur && !s->is_instant) {
			puts_(o, ",\"tdur\":");
			put_us(o, s->thread_dur);
		}
		/* callstacks of the begin (or instant) and of an X's end */
		put_stack(c, "sf", s->begin);
		if (ph == 'X')
			put_stack(c, "esf", s->end);
	} else if (!async) {
		/* process or global instant */
		int proc = ow.owner == PTW_TP_OWNER_PROCESS;
		put_common_owned(c, "i", s, &ow, s->ts);
		puts_(o, proc ? ",\"s\":\"p\"" : ",\"s\":\"g\"");
	} else {
		int proc = ow.owner == PTW_TP_OWNER_PROCESS;
		const char *ph = s->is_instant ? "n" : "b";
		put_common_owned(c, ph, s, &ow, s->ts);
		if (proc)
			putf(o, ",\"id2\":{\"local\":\"0x%" PRIx64 "\"}",
			     s->track_uuid);
		else
			putf(o, ",\"id\":\"0x%" PRIx64 "\"", s->track_uuid);
	}
	put_flow_fields(o, fl);
	put_args(o, s->args, s->n_args);
	put(o, "}", 1);
	if (async && !s->is_instant && s->dur == 0)
		async_end(c, s, &ow);
	extra_flows(c, s, &ow);
}

static void export_counter(struct ctx *c, const struct ptw_tp_counter *k)
{
	struct out *o = c->o;
	const struct ptw_trace_track *tr = ptw_trace_find_track(c->t,
								k->track_uuid);
	struct ptw_tp_track_owner ow = ptw_tp_model_owner(c->t, k->track_uuid);
	const char *tn = tr && tr->name ? tr->name : "";
	/* thread time carried by slice events: exported as their tts */
	if (k->event->type != PTW_TRACE_COUNTER &&
	    strcmp(tn, "thread_time") == 0)
		return;
	const char *sp = strrchr(tn, ' ');
	begin_event(o);
	puts_(o, "\"ph\":\"C\",\"name\":");
	if (sp)
		put_str_n(o, tn, (size_t)(sp - tn));
	else
		put_str(o, tn);
	putf(o, ",\"pid\":%" PRId32 ",\"ts\":", ow.owner ? ow.pid : 0);
	put_us(o, k->ts);
	puts_(o, ",\"args\":{");
	put_str(o, sp ? sp + 1 : "value");
	put(o, ":", 1);
	put_double(o, k->value);
	puts_(o, "}}");
}

/* Does any slice lie on 'track'? */
static int has_slices(const struct ptw_map *with, uint64_t track)
{
	uint64_t v;
	return ptw_map_get(with, track, &v);
}

static void export_names(struct ctx *c)
{
	struct out *o = c->o;
	const struct ptw_tp_model *m = c->m;
	/* the thread tracks that carry slices (their events make the
	 * thread); out of memory: every thread gets its M event */
	struct ptw_map with = {0};
	int oom = 0;
	for (size_t i = 0; i < m->n_slices && !oom; i++)
		oom = ptw_map_put(&with, m->slices[i].track_uuid, 1) != 0;
	for (size_t i = 0; i < m->n_processes; i++) {
		const struct ptw_tp_process *p = &m->processes[i];
		const struct ptw_trace_track *tr =
			ptw_trace_find_track(c->t, p->track_uuid);
		if (p->name) {
			begin_event(o);
			putf(o, "\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%"
				PRId32 ",\"tid\":%" PRId32 ",\"args\":{\"name\":",
			     p->pid, p->pid);
			put_str(o, p->name);
			puts_(o, "}}");
		} else {
			/* an M trace_processor ignores, except that it creates
			 * the (unnamed) process */
			begin_event(o);
			putf(o, "\"ph\":\"M\",\"name\":\"process_exists\","
				"\"pid\":%" PRId32 ",\"tid\":%" PRId32 "}",
			     p->pid, p->pid);
		}
		if (tr && tr->has_rank) {
			begin_event(o);
			putf(o, "\"ph\":\"M\",\"name\":\"process_sort_index\","
				"\"pid\":%" PRId32 ",\"tid\":%" PRId32
				",\"args\":{\"sort_index\":%" PRId32 "}}",
			     p->pid, p->pid, tr->rank);
		}
	}
	for (size_t i = 0; i < m->n_threads; i++) {
		const struct ptw_tp_thread *th = &m->threads[i];
		const struct ptw_trace_track *tr =
			ptw_trace_find_track(c->t, th->track_uuid);
		if (th->name) {
			begin_event(o);
			putf(o, "\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%"
				PRId32 ",\"tid\":%" PRId64 ",\"args\":{\"name\":",
			     th->pid, th->tid);
			put_str(o, th->name);
			puts_(o, "}}");
		} else if (oom || !has_slices(&with, th->track_uuid)) {
			/* as process_exists: a thread without slices of its
			 * own (the converter keeps every thread an event
			 * named, e.g. an async event's) */
			begin_event(o);
			putf(o, "\"ph\":\"M\",\"name\":\"thread_exists\","
				"\"pid\":%" PRId32 ",\"tid\":%" PRId64 "}",
			     th->pid, th->tid);
		}
		if (tr && tr->has_rank) {
			begin_event(o);
			putf(o, "\"ph\":\"M\",\"name\":\"thread_sort_index\","
				"\"pid\":%" PRId32 ",\"tid\":%" PRId64
				",\"args\":{\"sort_index\":%" PRId32 "}}",
			     th->pid, th->tid, tr->rank);
		}
	}
	ptw_map_free(&with);
}

/* x_mode, and the instants written as B + E: those with flows and those
 * that instants with flows are stacked on (a B pops an instant below
 * it, so an 'i' under a B + E would not hold it), with the place of
 * each one's E: after its descendants (the instants stacked on it at its
 * ts; slice ids are in creation order, parents first). */
static int prepare_thread_forms(struct ctx *c)
{
	const struct ptw_tp_model *m = c->m;
	int inst_flows = 0;
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		if (s->owner.owner != PTW_TP_OWNER_THREAD || s->owner.broken)
			continue;
		/* a complete slice of one event (legacy phase X) has no END
		 * to place an E at: X, as it came */
		if (!on_own_thread_track(c, s) ||
		    (s->begin && s->begin->type == PTW_TRACE_COMPLETE))
			c->x_mode = 1;
		else if (s->is_instant && has_flows(c, s))
			inst_flows = 1;
	}
	if (c->x_mode || !inst_flows)
		return 0;
	c->inst_end = malloc(m->n_slices * sizeof(*c->inst_end));
	c->inst_be = malloc(m->n_slices);
	if (!c->inst_end || !c->inst_be)
		return -1;
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		c->inst_end[i] = event_index(c, s->begin);
		c->inst_be[i] = s->is_instant && has_flows(c, s);
	}
	for (size_t i = m->n_slices; i-- > 0;) {
		int64_t p = m->slices[i].parent_id;
		if (p < 0 || (size_t)p >= i || !m->slices[p].is_instant)
			continue;
		if (c->inst_end[p] < c->inst_end[i])
			c->inst_end[p] = c->inst_end[i];
		c->inst_be[p] |= c->inst_be[i];
	}
	return 0;
}

/* Flow ids per slice, and which tracks carry real (non-instant) slices. */
static int prepare(struct ctx *c)
{
	const struct ptw_tp_model *m = c->m;
	size_t ns = m->n_slices ? m->n_slices : 1;
	c->sf = calloc(ns, sizeof(*c->sf));
	c->async_track = calloc(ns, 1);
	if (!c->sf || !c->async_track)
		return -1;
	c->link_v1 = calloc(m->n_flows ? m->n_flows : 1, 1);
	c->link_id = calloc(m->n_flows ? m->n_flows : 1, sizeof(uint64_t));
	if (!c->link_v1 || !c->link_id)
		return -1;
	struct ptw_map ids = {0};
	for (size_t i = 0; i < m->n_flows; i++) {
		uint64_t v;
		if (!ptw_map_get(&ids, m->flows[i].flow_id, &v)) {
			v = (1ull << 63) + ids.count;
			if (ptw_map_put(&ids, m->flows[i].flow_id, v)) {
				ptw_map_free(&ids);
				return -1;
			}
		}
		c->link_id[i] = v;
	}
	ptw_map_free(&ids);
	/* Each link goes as v2 (bind_id on both slices' events) when both
	 * ends are free or already carry that id (a step); else as v1 s/f
	 * events at both ends (thread slices only: v1 binds to threads). */
	for (size_t i = 0; i < m->n_flows; i++) {
		const struct ptw_tp_flow *f = &m->flows[i];
		if (f->slice_out >= m->n_slices || f->slice_in >= m->n_slices)
			continue;
		struct slice_flows *so = &c->sf[f->slice_out];
		struct slice_flows *si = &c->sf[f->slice_in];
		uint64_t id = c->link_id[i];
		int free_o = !(so->in || so->out) || so->id == id;
		int free_i = !(si->in || si->out) || si->id == id;
		if (free_o && free_i) {
			so->id = si->id = id;
			so->out = 1;
			si->in = 1;
		} else {
			c->link_v1[i] = 1;
			so->v1 = si->v1 = 1;
		}
	}
	/* a track with any non-instant slice is an async track: its
	 * instants are 'n' events there. Quadratic-free: two passes keyed by
	 * the slice order (tracks are few; use a small open table). */
	size_t cap = 64;
	while (cap < 2 * ns)
		cap *= 2;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	if (!keys)
		return -1;
	for (size_t i = 0; i < m->n_slices; i++) {
		if (m->slices[i].is_instant)
			continue;
		uint64_t u = m->slices[i].track_uuid + 1; /* 0 = empty */
		size_t h = (size_t)(u * 0x9E3779B97F4A7C15ull) & (cap - 1);
		while (keys[h] && keys[h] != u)
			h = (h + 1) & (cap - 1);
		keys[h] = u;
	}
	for (size_t i = 0; i < m->n_slices; i++) {
		uint64_t u = m->slices[i].track_uuid + 1;
		size_t h = (size_t)(u * 0x9E3779B97F4A7C15ull) & (cap - 1);
		while (keys[h] && keys[h] != u)
			h = (h + 1) & (cap - 1);
		c->async_track[i] = keys[h] == u;
	}
	free(keys);
	return prepare_thread_forms(c);
}

/* One line of output, for ordering. */
struct item {
	int64_t ts;
	int kind;       /* 0: async end, 1: anything else */
	uint32_t depth; /* ends: deeper first */
	size_t seq;     /* place: the index of the event in the protobuf
			 * import's order (x_mode: model order, slices then
			 * counters) */
	int sub;        /* at one place: 0 the event, 1 an E, 2 a counter */
	int what;       /* 0: slice, 1: async end, 2: counter, 3: thread E */
	size_t id;      /* the slice's or counter's index */
};

static int cmp_item(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind == 0 && a->depth != b->depth)
		return a->depth > b->depth ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->sub != b->sub)
		return a->sub < b->sub ? -1 : 1;
	if (a->depth != b->depth) /* E's of stacked instants: inner first */
		return a->depth > b->depth ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The items of the slices and counters. */
static size_t list_items(struct ctx *c, struct item *it)
{
	const struct ptw_tp_model *m = c->m;
	size_t ni = 0;
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		struct ptw_tp_track_owner ow;
		int async = slice_is_async(c, s, &ow);
		size_t place = c->x_mode ? i : event_index(c, s->begin);
		it[ni++] = (struct item){ s->ts, 1, 0, place, 0, 0, i };
		if (ow.broken)
			continue;
		if (async && !s->is_instant && s->dur > 0)
			it[ni++] = (struct item){ s->ts + s->dur, 0, s->depth,
						  place, 0, 1, i };
		if (async || ow.owner != PTW_TP_OWNER_THREAD ||
		    thread_form(c, s) != 'B')
			continue;
		if (s->is_instant)
			it[ni++] = (struct item){ s->ts, 1, s->depth,
						  c->inst_end[i], 1, 3, i };
		else if (s->end)
			it[ni++] = (struct item){ s->ts + s->dur, 1, s->depth,
						  event_index(c, s->end), 1, 3,
						  i };
	}
	for (size_t k = 0; k < m->n_counters; k++) {
		size_t place = c->x_mode ? m->n_slices + k
					 : event_index(c, m->counters[k].event);
		it[ni++] = (struct item){ m->counters[k].ts, 1, 0, place, 2, 2,
					  k };
	}
	return ni;
}

int ptw_cv_export_json(const char *pftrace_path, FILE *out,
		       struct ptw_error *err)
{
	if (!pftrace_path || !out)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_cv_export_json: NULL argument");
	struct ptw_trace *t = ptw_trace_load_file(pftrace_path, NULL, err);
	if (!t)
		return err ? (err->code ? err->code : PTW_ERR_IO) : PTW_ERR_IO;
	const struct ptw_error *fatal = ptw_trace_fatal(t);
	if (fatal) {
		if (err)
			*err = *fatal;
		ptw_trace_free(t);
		return PTW_ERR_FORMAT;
	}
	struct ptw_tp_model *m = ptw_tp_model_build(t, err);
	if (!m) {
		ptw_trace_free(t);
		return PTW_ERR_NOMEM;
	}
	struct out *o = malloc(sizeof(*o));
	size_t n_evs;
	struct ctx c = { .t = t, .m = m, .o = o,
			 .evs = ptw_trace_events(t, &n_evs) };
	int rc = 0;
	if (!o || prepare(&c)) {
		rc = ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		goto done;
	}
	o->f = out;
	o->n = 0;
	o->failed = 0;
	o->first = 1;
	/* with callstacks, the object form: "stackFrames" after the events */
	for (size_t i = 0; i < n_evs && !c.stacks; i++)
		if (c.evs[i].stack && c.evs[i].stack->n &&
		    !(c.stacks = ptw_cv_stacks_create())) {
			rc = ptw_error_set(err, PTW_ERR_NOMEM, 0,
					   "out of memory");
			goto done;
		}
	puts_(o, c.stacks ? "{\"traceEvents\":[" : "[");
	export_names(&c);
	/* Everything in time order; at equal ts the async ends first,
	 * innermost first (LIFO), then the rest in the protobuf import's
	 * order (see the top; x_mode: model order, parents before
	 * children). */
	size_t cap = 2 * m->n_slices + m->n_counters + 1;
	struct item *it = malloc(cap * sizeof(*it));
	if (!it) {
		rc = ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		goto done;
	}
	size_t ni = list_items(&c, it);
	qsort(it, ni, sizeof(*it), cmp_item);
	for (size_t i = 0; i < ni; i++) {
		if (it[i].what == 2) {
			export_counter(&c, &m->counters[it[i].id]);
		} else if (it[i].what == 1) {
			const struct ptw_tp_slice *s = &m->slices[it[i].id];
			struct ptw_tp_track_owner ow = s->owner;
			async_end(&c, s, &ow);
		} else if (it[i].what == 3) {
			thread_end(&c, &m->slices[it[i].id]);
		} else {
			export_slice(&c, &m->slices[it[i].id]);
		}
	}
	free(it);
	puts_(o, "\n]");
	if (c.stacks)
		put_stack_frames(&c);
	puts_(o, c.stacks ? "}\n" : "\n");
	if (c.stacks_nomem) {
		rc = ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		goto done;
	}
	flush_out(o);
	if (o->failed || fflush(out) != 0 || ferror(out))
		rc = ptw_error_set(err, PTW_ERR_IO, errno,
				   "writing the JSON export failed");
done:
	ptw_cv_stacks_destroy(c.stacks);
	free(c.sf);
	free(c.async_track);
	free(c.link_v1);
	free(c.link_id);
	free(c.inst_end);
	free(c.inst_be);
	free(o);
	ptw_tp_model_free(m);
	ptw_trace_free(t);
	return rc;
}
