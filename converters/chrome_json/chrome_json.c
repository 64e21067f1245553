/* chrome_json.c - streams a Chrome JSON trace file event by event.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Scans the container (array form, or the object form's members) itself
 * and hands every event object to the strict per-object parser
 * (json_parse.c). The text sits in one buffer that holds the current read
 * chunk plus the event being parsed:
 *
 *   buf                pos                       len           cap
 *    | consumed (moved out) | unparsed text ...   | free        |
 *    ^ absolute offset 'base'
 *
 * When an event runs past 'len', the parser answers "incomplete"; fill()
 * moves the unparsed tail to the front, reads more (growing the buffer
 * only while a single event is larger than it, up to max_event_bytes, and
 * reading geometrically so a long event is re-parsed O(log n) times), and
 * the event is parsed again. Uncompressed memory input is parsed in place
 * through a window that widens the same way. Line numbers: the parser
 * counts the LFs inside each event (they can only be whitespace), the
 * scanner those between events (advance_lines), always before any text is
 * discarded, so every event and message carries line:column.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/os/os_file.h"
#include "lib/util/grow.h"
#include "json_internal.h"
#include "cv_stacks.h"

#define DEFAULT_CHUNK (1u << 20)
#define RAW_CHUNK (256u << 10) /* compressed bytes per read */
#define SKIP_MAX_DEPTH 4096    /* nesting of skipped object-form members */

struct rd {
	const char *name;
	int fd; /* -1 for memory input */
	const unsigned char *mem;
	size_t mem_n;
	/* gzip */
	int gz;
	int zs_init;
	z_stream zs;
	unsigned char *raw; /* compressed read buffer (fd input) */
	int raw_eof;
	int gz_err;            /* a gzip error, reported once the text */
	uint64_t gz_err_at;    /* before it has been parsed (so chunking */
	char gz_err_msg[160];  /* never changes which error wins) */
	/* text buffer */
	char *buf;
	size_t cap, len, pos;
	int zero_copy; /* buf is the caller's memory */
	int eof;       /* no more text after buf[len) */
	uint64_t base; /* absolute offset of buf[0] in the text */
	/* lazy line counting */
	uint64_t lines_pos, line, line_start;
	size_t chunk, max_event;
	size_t win; /* parse window (memory input): see window() */
	struct ptw_cv_json_parser *jp;
	struct ptw_cv_json_read_stats *st;
	struct ptw_error *err;
	ptw_cv_event_fn fn;
	void *ctx;
	int lenient;     /* not opts->strict: trace_processor's leniency */
	unsigned keys;   /* KEY_*: top-level members of the object form */
	int stopped;     /* stopped where trace_processor stops (array form) */
	uint64_t events; /* events parsed (delivered or not) */
	uint64_t repairs;
	unsigned char skip_stack[SKIP_MAX_DEPTH];
	/* callstacks (opts->stacks) */
	struct ptw_cv_stacks *stacks;
	const char *path;  /* a file that can be read again, or NULL */
	int only_stacks;   /* a scan for "stackFrames" only */
	int stacks_tried;  /* an sf/esf before "stackFrames" was handled */
	const struct ptw_cv_json_read_opts *opts;
};

/* run(): the scan for "stackFrames" has what it came for. */
#define RD_STACKS_DONE 7

static int pre_read_stacks(struct rd *r);

/* ---- positions and errors ------------------------------------------- */

/* Counts lines up to absolute offset 'to' (which must still be in buf). */
static inline void advance_lines(struct rd *r, uint64_t to)
{
	if (to <= r->lines_pos)
		return;
	const char *s = r->buf + (r->lines_pos - r->base);
	const char *e = r->buf + (to - r->base);
	const char *q;
	if (e - s < 32) { /* between events: ",\n" */
		for (q = s; q < e; q++)
			if (*q == '\n') {
				r->line++;
				r->line_start = r->base + (uint64_t)(q - r->buf) + 1;
			}
		r->lines_pos = to;
		return;
	}
	while (s < e && (q = memchr(s, '\n', (size_t)(e - s)))) {
		r->line++;
		r->line_start = r->base + (uint64_t)(q - r->buf) + 1;
		s = q + 1;
	}
	r->lines_pos = to;
}

static int rd_fail(struct rd *r, uint64_t at, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/* Puts the file position of absolute offset 'at' (clamped to the text
 * read so far) in front of r->err's message; 'replace': instead of the
 * parser's "byte N: ". */
static void place(struct rd *r, uint64_t at, int replace)
{
	if (at > r->base + r->len)
		at = r->base + r->len;
	advance_lines(r, at);
	ptw_cv_json_i_error_at(r->err, replace, r->name, r->line,
			       at - r->line_start + 1, at);
}

static int rd_fail(struct rd *r, uint64_t at, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ptw_error_vset(r->err, code, 0, fmt, ap);
	va_end(ap);
	place(r, at, 0);
	return code;
}

/* Re-reports a parser error (offset relative to the text at buf[pos]) at
 * its place in the file. */
static int relocate(struct rd *r, int code)
{
	if (!r->err)
		return code;
	r->err->code = code;
	r->err->sys_errno = 0;
	place(r, r->base + r->pos + r->err->offset, 1);
	return code;
}

/* Counts n lenient repairs, the first at absolute offset 'at' on line
 * 'line' (0: the line of 'at', which must be in the buffer). */
static void rd_repair(struct rd *r, uint64_t at, uint64_t line, uint64_t n,
		      const char *what)
{
	if (!n)
		return;
	if (!r->repairs && r->st) {
		if (!line) {
			advance_lines(r, at);
			line = r->line;
		}
		r->st->repair_offset = at;
		r->st->repair_line = line;
		r->st->repair_what = what;
	}
	r->repairs += n;
	if (r->st)
		r->st->repairs = r->repairs;
}

/* Text at absolute offset 'at' (in the buffer) that is not JSON but that
 * trace_processor reads: with --strict the error 'strict' (PTW_ERR_FORMAT),
 * else one lenient repair 'what'. Returns 0 or the error. */
static int rd_lenient(struct rd *r, uint64_t at, const char *strict,
		      const char *what)
{
	if (!r->lenient)
		return rd_fail(r, at, PTW_ERR_FORMAT, "%s", strict);
	rd_repair(r, at, 0, 1, what);
	return 0;
}

/* The repairs the parser made in the event at buf[pos] (line r->line). */
static void event_repairs(struct rd *r, const struct ptw_cv_json_info *in)
{
	uint64_t line = r->line;
	if (!r->repairs) { /* the first: count its line */
		const char *e = r->buf + r->pos;
		for (size_t k = 0; k < in->repair_at; k++)
			line += e[k] == '\n';
	}
	rd_repair(r, r->base + r->pos + in->repair_at, line, in->repairs,
		  in->repair_what);
}

/* ---- input ---------------------------------------------------------- */

static int read_fd(struct rd *r, void *dst, size_t n, size_t *got)
{
	for (;;) {
		ssize_t k = read(r->fd, dst, n);
		if (k >= 0) {
			*got = (size_t)k;
			if (r->st)
				r->st->bytes_in += (uint64_t)k;
			return 0;
		}
		if (errno == EINTR)
			continue;
		int e = errno;
		ptw_error_set(r->err, PTW_ERR_IO, e, "%s: read failed", r->name);
		if (r->err)
			r->err->input = r->name;
		return PTW_ERR_IO;
	}
}

/* Bytes to add to the buffer next: a chunk, or as much as is already
 * pending when one event spans more than a chunk, so that the parse of a
 * long event is retried a logarithmic number of times, not len/chunk. */
static size_t read_size(const struct rd *r)
{
	size_t want = r->len - r->pos > r->chunk ? r->len - r->pos : r->chunk;
	size_t room = r->cap - r->len;
	return room < want ? room : want;
}

/* Records a gzip error at the current end of the text; it is reported
 * when the parser needs text beyond that point. */
static void gz_defer(struct rd *r, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

static void gz_defer(struct rd *r, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(r->gz_err_msg, sizeof(r->gz_err_msg), fmt, ap);
	va_end(ap);
	if (k < 0)
		r->gz_err_msg[0] = '\0';
	r->gz_err = code;
	r->gz_err_at = r->base + (uint64_t)((char *)r->zs.next_out - r->buf);
}

/* Reads more compressed bytes from the file once zlib has used up the
 * previous ones (nothing for in-memory input or after EOF). */
static int refill_raw(struct rd *r)
{
	z_stream *zs = &r->zs;
	if (zs->avail_in || r->fd < 0 || r->raw_eof)
		return 0;
	size_t got;
	int rc = read_fd(r, r->raw, RAW_CHUNK, &got);
	if (rc)
		return rc;
	if (got == 0)
		r->raw_eof = 1;
	zs->next_in = r->raw;
	zs->avail_in = (uInt)got;
	return 0;
}

/* Decompresses into buf[len..cap). Sets eof at the end of the last member. */
static int inflate_more(struct rd *r)
{
	z_stream *zs = &r->zs;
	if (r->gz_err) {
		if (r->gz_err == PTW_ERR_NOMEM || r->gz_err == PTW_ERR_IO)
			return ptw_error_set(r->err, r->gz_err, 0, "%s: %s",
					     r->name, r->gz_err_msg);
		return rd_fail(r, r->gz_err_at, r->gz_err, "%s", r->gz_err_msg);
	}
	size_t room = read_size(r);
	if (room > UINT32_MAX / 2) /* zlib counts in uInt */
		room = UINT32_MAX / 2;
	zs->next_out = (unsigned char *)r->buf + r->len;
	zs->avail_out = (uInt)room;
	while (zs->avail_out == room && !r->gz_err) {
		int rc = refill_raw(r);
		if (rc)
			return rc;
		int have_in = zs->avail_in > 0;
		int zr = inflate(zs, Z_NO_FLUSH);
		if (zr == Z_STREAM_END) {
			/* Another gzip member may follow. */
			if ((rc = refill_raw(r)))
				return rc;
			if (zs->avail_in == 0) {
				r->eof = 1;
				break;
			}
			if (zs->next_in[0] != 0x1f) {
				gz_defer(r, PTW_ERR_FORMAT,
					 "unexpected bytes after the gzip data "
					 "(compressed byte %llu)",
					 (unsigned long long)zs->total_in);
				break;
			}
			inflateReset(zs);
			continue;
		}
		if (zr == Z_BUF_ERROR && !have_in && (r->fd < 0 || r->raw_eof)) {
			/* Compressed stream cut short: the text ends here. */
			r->eof = 1;
			break;
		}
		if (zr == Z_MEM_ERROR)
			gz_defer(r, PTW_ERR_NOMEM, "out of memory in zlib");
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			gz_defer(r, PTW_ERR_FORMAT,
				 "corrupt gzip data near compressed byte %llu: %s",
				 (unsigned long long)zs->total_in,
				 zs->msg ? zs->msg : "inflate failed");
	}
	size_t before = r->len;
	r->len = (size_t)((char *)zs->next_out - r->buf);
	if (r->gz_err && r->len == before)
		return inflate_more(r); /* nothing new: report it now */
	return 0;
}

/* Makes more text available after buf[len), or sets eof. May move the
 * unparsed text (buf[pos..len)) to the front: offsets relative to buf are
 * invalidated, pos-relative ones are not. */
static int fill(struct rd *r)
{
	if (r->eof)
		return 0;
	if (r->pos > 0) {
		advance_lines(r, r->base + r->pos);
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->base += r->pos;
		r->len -= r->pos;
		r->pos = 0;
	}
	/* after the move, buf[0..len) is what the parser still needs */
	if (r->len >= r->max_event)
		return rd_fail(r, r->base, PTW_ERR_LIMIT,
			       "an event (or member name) larger than %zu bytes",
			       r->max_event);
	if (r->len == r->cap) {
		size_t ncap = ptw_grow_cap(r->cap, r->cap + 1, 0, 1);
		if (ncap > r->max_event + r->chunk)
			ncap = r->max_event + r->chunk;
		char *nb = ptw_realloc_array(r->buf, ncap, 1);
		if (!nb)
			return ptw_error_set(r->err, PTW_ERR_NOMEM, 0,
					     "out of memory");
		r->buf = nb;
		r->cap = ncap;
	}
	int rc = 0;
	if (r->gz) {
		rc = inflate_more(r);
	} else {
		size_t room = read_size(r), got;
		rc = read_fd(r, r->buf + r->len, room, &got);
		if (!rc) {
			if (got == 0)
				r->eof = 1;
			r->len += got;
		}
	}
	if (r->st)
		r->st->bytes_json = r->base + r->len;
	return rc;
}

/* Next byte without consuming it, or -1 at the end of the text. */
static int peek(struct rd *r, int *ch)
{
	while (r->pos >= r->len) {
		if (r->eof) {
			*ch = -1;
			return 0;
		}
		int rc = fill(r);
		if (rc)
			return rc;
	}
	*ch = (unsigned char)r->buf[r->pos];
	return 0;
}

/* Skips whitespace; *ch is the next byte, or -1 at the end of the text. */
static inline int skip_ws(struct rd *r, int *ch)
{
	for (;;) {
		while (r->pos < r->len) { /* the buffered text, without peek() */
			unsigned char c = (unsigned char)r->buf[r->pos];
			if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
				*ch = c;
				return 0;
			}
			r->pos++;
		}
		if (r->eof) {
			*ch = -1;
			return 0;
		}
		int rc = fill(r);
		if (rc)
			return rc;
	}
}

/* ---- events --------------------------------------------------------- */

/* How much of the unparsed text the parser is shown. Memory input is not
 * copied, so without a window the parser would size its scratch buffer to
 * the whole rest of the input; start at a chunk and widen on demand. */
static size_t window(const struct rd *r)
{
	size_t avail = r->len - r->pos;
	return avail < r->win ? avail : r->win;
}

static int widen(struct rd *r)
{
	if (r->win > r->max_event)
		return rd_fail(r, r->base + r->pos, PTW_ERR_LIMIT,
			       "an event (or member name) larger than %zu bytes",
			       r->max_event);
	r->win = r->win > SIZE_MAX / 2 ? SIZE_MAX : r->win * 2;
	return 0;
}

/* The event at buf[pos] has a "dur", "tts" or "tdur" trace_processor
 * cannot read: its tokenizer stops there (json_parse.c set_time). In the
 * array form it then imports the events before it, which is all we
 * deliver: the rest is not parsed, only measured. In the object form it
 * fails at the end of the file, its "traceEvents" array never closed
 * (OnPushDataToSorter: "JSON trace file is incomplete"): an error. */
static int stop_here(struct rd *r, int array_form)
{
	const struct ptw_cv_json_info *in = ptw_cv_json_i_info(r->jp);
	uint64_t at = r->base + r->pos;
	char val[48];
	size_t vn = in->stop_end - in->stop_at, k, o = 0;
	const char *v = r->buf + r->pos + in->stop_at;
	for (k = 0; k < vn && o + 4 < sizeof(val); k++)
		val[o++] = v[k] >= 0x20 && v[k] < 0x7f ? v[k] : '?';
	if (k < vn)
		val[o++] = '.', val[o++] = '.', val[o++] = '.';
	val[o] = '\0';
	advance_lines(r, at);
	if (!array_form)
		return rd_fail(r, at, PTW_ERR_FORMAT,
			       "\"%s\": %s is not a number: trace_processor "
			       "stops reading the JSON here, then fails to load "
			       "it ('JSON trace file is incomplete': "
			       "\"traceEvents\" is never closed)",
			       in->stop_member, val);
	r->stopped = 1;
	if (r->st) {
		r->st->stopped = 1;
		r->st->stop_offset = at;
		r->st->stop_line = r->line;
		r->st->stop_member = in->stop_member;
		memcpy(r->st->stop_value, val, o + 1);
	}
	/* What trace_processor does not read: measured, not parsed. */
	struct stat sb;
	uint64_t total;
	if (!r->gz && r->fd >= 0 && fstat(r->fd, &sb) == 0 &&
	    S_ISREG(sb.st_mode) && (uint64_t)sb.st_size >= at) {
		total = (uint64_t)sb.st_size;
	} else {
		struct ptw_error keep;
		if (r->err)
			keep = *r->err;
		r->pos = r->len;
		while (!r->eof && fill(r) == 0)
			r->pos = r->len;
		if (r->err) /* a read error past the stop is not ours */
			*r->err = keep;
		total = r->base + r->len;
	}
	r->pos = r->len;
	if (r->st)
		r->st->stop_bytes_left = total - at;
	return 0;
}

/* Parses the event whose '{' is at pos and calls the callback. Sets *cut
 * if the text ended inside it. */
static int one_event(struct rd *r, int cut_ok, int *cut)
{
	struct ptw_cv_event ev;
	size_t end;
	int rc;
	*cut = 0;
	for (;;) {
		size_t avail = r->len - r->pos, win = window(r);
		rc = ptw_cv_json_i_parse_event(r->jp, r->buf + r->pos, win,
					       &end, &ev, r->err);
		if (rc != PTW_CV_JSON_INCOMPLETE)
			break;
		if (win < avail) {
			if ((rc = widen(r)))
				return rc;
			continue;
		}
		if (r->eof) {
			if (!cut_ok)
				return relocate(r, PTW_ERR_FORMAT);
			uint64_t at = r->base + r->pos;
			advance_lines(r, at);
			if (r->st) {
				r->st->cut = PTW_CV_JSON_CUT_MID_EVENT;
				r->st->cut_offset = at;
				r->st->cut_line = r->line;
			}
			if (r->err) /* the incomplete report is not an error */
				memset(r->err, 0, sizeof(*r->err));
			r->pos = r->len;
			*cut = 1;
			return 0;
		}
		if ((rc = fill(r)))
			return rc;
	}
	if (rc == PTW_CV_JSON_STOP)
		return stop_here(r, cut_ok);
	if (rc)
		return relocate(r, rc);
	uint64_t at = r->base + r->pos;
	if (end > r->max_event) /* same answer whatever the read size */
		return rd_fail(r, at, PTW_ERR_LIMIT,
			       "an event (or member name) larger than %zu bytes",
			       r->max_event);
	advance_lines(r, at);
	/* the parser counted the event's own LFs: skip past it */
	const struct ptw_cv_json_lines *nl = ptw_cv_json_i_lines(r->jp);
	if (nl->repairs)
		event_repairs(r, ptw_cv_json_i_info(r->jp));
	ev.input = r->name;
	ev.line = r->line;
	ev.offset = at;
	if (nl->nl) {
		r->line += nl->nl;
		r->line_start = at + nl->last_nl + 1;
	}
	r->lines_pos = at + end;
	if (__builtin_expect(ev.flags & PTW_CV_HAS_STACK, 0) &&
	    ev.stacks && (ev.stacks->sf.p || ev.stacks->esf.p) &&
	    r->stacks && !r->stacks_tried &&
	    !ptw_cv_stacks_loaded(r->stacks) && (rc = pre_read_stacks(r)))
		return rc;
	rc = r->fn(r->ctx, &ev, r->err);
	if (rc)
		return rc < 0 ? rc : PTW_ERR_INVALID;
	if (r->st)
		r->st->events++;
	r->pos += end;
	return 0;
}

/* What a JSON value starting with 'ch' is, for messages: "string",
 * "number", "boolean", "null", "array", or NULL (not JSON). */
static const char *value_kind(int ch)
{
	switch (ch) {
	case '"': return "string";
	case '[': return "array";
	case 't': case 'f': return "boolean";
	case 'n': return "null";
	default:
		return ch == '-' || (ch >= '0' && ch <= '9') ? "number" : NULL;
	}
}

/* The event array, after its '['. cut_ok: the array form may end early. */
static int read_array(struct rd *r, int cut_ok)
{
	int need_comma = 0, after_comma = 0, ch, rc, cut;
	for (;;) {
		if ((rc = skip_ws(r, &ch)))
			return rc;
		switch (ch) {
		case -1:
			if (cut_ok) {
				if (r->st && r->st->cut == PTW_CV_JSON_COMPLETE)
					r->st->cut = PTW_CV_JSON_CUT_AFTER_EVENT;
				return 0;
			}
			return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
				       "unexpected end of input, expected ',' or "
				       "']' in \"traceEvents\" (the object form "
				       "must be complete)");
		case ']':
			/* RFC 8259: no ',' before the ']' (trace_processor
			 * reads one) */
			if (after_comma &&
			    (rc = rd_lenient(r, r->base + r->pos,
					     "expected '{' starting an event "
					     "after ',', found ']'",
					     "a trailing comma before ']'")))
				return rc;
			r->pos++;
			return 0;
		case ',':
			/* RFC 8259: one ',' between two events, none first */
			if (!need_comma &&
			    (rc = rd_lenient(r, r->base + r->pos,
					     r->events ? "expected '{' starting "
							 "an event, found a "
							 "second ','"
						       : "expected '{' starting "
							 "an event, or ']', "
							 "found ','",
					     "an extra ',' between events")))
				return rc;
			r->pos++;
			need_comma = 0;
			after_comma = 1;
			break;
		case '{':
			after_comma = 0;
			if (need_comma) {
				/* trace_processor's HandleTraceEvent needs no
				 * comma between events */
				if ((rc = rd_lenient(
					     r, r->base + r->pos,
					     "expected ',' or ']' after an "
					     "event, found '{'",
					     "a missing ',' between events")))
					return rc;
			}
			if ((rc = one_event(r, cut_ok, &cut)))
				return rc;
			if (cut || r->stopped)
				return 0;
			r->events++;
			need_comma = 1;
			break;
		default:
			if (!need_comma && !r->events && cut_ok)
				return rd_fail(r, r->base + r->pos,
					       PTW_ERR_FORMAT,
					       "not a Chrome JSON trace: an array "
					       "whose first element is %s%s, not "
					       "an event object",
					       !value_kind(ch) ? "not JSON"
					       : ch == 'n' ? "" : ch == '[' ? "an "
					       : "a ",
					       value_kind(ch) ? value_kind(ch)
							      : "");
			return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
				       need_comma ? "expected ',' or ']' after an "
						    "event"
						  : "expected '{' starting an "
						    "event, or ']'");
		}
	}
}

/* ---- object form ---------------------------------------------------- */

/* Members of a top-level object that tell what the file is. */
enum {
	KEY_EVENTS = 1u << 0,    /* traceEvents */
	KEY_META = 1u << 1,      /* Gecko: meta */
	KEY_THREADS = 1u << 2,   /* Gecko: threads */
	KEY_PROCESSES = 1u << 3, /* Gecko: processes */
	KEY_NODES = 1u << 4,     /* V8 .cpuprofile: nodes */
	KEY_SAMPLES = 1u << 5,   /* .cpuprofile: samples (Chrome JSON too) */
	KEY_SYSTEM = 1u << 6,    /* Chrome: systemTraceEvents */
	KEY_STACKS = 1u << 7,    /* Chrome: stackFrames */
};

static unsigned key_bit(struct ptw_cv_str k)
{
	static const struct { const char *s; unsigned bit; } tab[] = {
		{"traceEvents", KEY_EVENTS}, {"meta", KEY_META},
		{"threads", KEY_THREADS}, {"processes", KEY_PROCESSES},
		{"nodes", KEY_NODES}, {"samples", KEY_SAMPLES},
		{"systemTraceEvents", KEY_SYSTEM}, {"stackFrames", KEY_STACKS},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (k.n == strlen(tab[i].s) && memcmp(k.p, tab[i].s, k.n) == 0)
			return tab[i].bit;
	return 0;
}

/* An object without "traceEvents" (at its end, or cut short): not a
 * Chrome JSON trace; the message names what it looks like. */
static int not_chrome_object(struct rd *r, uint64_t at)
{
	unsigned k = r->keys;
	const char *what =
		(k & KEY_META) && (k & (KEY_THREADS | KEY_PROCESSES))
			? "Gecko profiler JSON (Firefox Profiler: \"meta\" and "
			  "\"threads\" or \"processes\")"
		: (k & KEY_NODES) && (k & KEY_SAMPLES)
			? "a V8 CPU profile (.cpuprofile: \"nodes\" and "
			  "\"samples\")"
		: (k & KEY_SYSTEM)
			? "a Chrome JSON object with only \"systemTraceEvents\" "
			  "(ftrace text, which ptw-convert does not convert)"
			: "a JSON object without \"traceEvents\"";
	return rd_fail(r, at, PTW_ERR_FORMAT,
		       "not a Chrome JSON trace: %s (expected an array of "
		       "events, or an object with \"traceEvents\")", what);
}

static int eof_in_object(struct rd *r)
{
	if (!(r->keys & KEY_EVENTS) &&
	    (r->keys & (KEY_META | KEY_NODES | KEY_SYSTEM)))
		return not_chrome_object(r, r->base + r->pos);
	return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
		       "unexpected end of input inside the trace object (the "
		       "object form must be complete)");
}

/* Skips the rest of a string whose opening quote was read: up to and
 * including its closing quote (a raw control character is an error). */
static int skip_string_rest(struct rd *r)
{
	int ch, rc, esc = 0;
	for (;;) {
		if ((rc = peek(r, &ch)))
			return rc;
		if (ch == -1)
			return eof_in_object(r);
		if (ch < 0x20)
			return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
				       "control character 0x%02x inside a "
				       "string", ch);
		r->pos++;
		if (esc)
			esc = 0;
		else if (ch == '\\')
			esc = 1;
		else if (ch == '"')
			return 0;
	}
}

/* Lenient mode: one member value of the object form, skipped as
 * trace_processor's SkipOneJsonValue skips it: up to the ',' or '}'
 * outside any bracket, strings skipped whole (a raw control character
 * in one is an error, as there), '[' ']' and '{' '}' counted apart (a
 * closer with nothing open is an error), anything else taken. It must
 * start as a JSON value does. Counts one repair if the text was not
 * valid JSON (as far as a typed bracket stack and a scalar's bytes
 * tell). */
static int tp_skip_value(struct rd *r)
{
	uint64_t at = r->base + r->pos;
	uint32_t braces = 0, brackets = 0;
	unsigned depth = 0; /* typed stack in r->skip_stack */
	int ch, rc, odd = 0, ws = 0, closed = 0;
	if ((rc = peek(r, &ch)))
		return rc;
	if (ch == -1)
		return eof_in_object(r);
	if (!(ch == '[' || ch == '{' || ch == '-' || ch == '"' ||
	      (ch >= '0' && ch <= '9') || ch == 't' || ch == 'f' || ch == 'n'))
		return rd_fail(r, at, PTW_ERR_FORMAT, "expected a value");
	for (;;) {
		if ((rc = peek(r, &ch)))
			return rc;
		if (ch == -1)
			return eof_in_object(r);
		int top = !braces && !brackets;
		if (top && (ch == ',' || ch == '}'))
			break;
		if (top && (ws || closed) && ch != ' ' && ch != '\n' &&
		    ch != '\r' && ch != '\t')
			odd = 1; /* a second value where one was expected */
		r->pos++;
		if (ch == '"') {
			if ((rc = skip_string_rest(r)))
				return rc;
			closed = top;
		} else if (ch == '{' || ch == '[') {
			if (ch == '{')
				braces++;
			else
				brackets++;
			if (depth < SKIP_MAX_DEPTH)
				r->skip_stack[depth] = (unsigned char)ch;
			depth++;
		} else if (ch == '}' || ch == ']') {
			uint32_t *cnt = ch == '}' ? &braces : &brackets;
			if (!*cnt)
				return rd_fail(r, r->base + r->pos - 1,
					       PTW_ERR_FORMAT, "unbalanced '%c'", ch);
			(*cnt)--;
			if (!depth || (depth <= SKIP_MAX_DEPTH &&
				       r->skip_stack[depth - 1] !=
					       (ch == '}' ? '{' : '[')))
				odd = 1;
			depth -= depth > 0;
			closed = !braces && !brackets;
		} else if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') {
			ws = top;
		} else if (top && !((ch >= '0' && ch <= '9') ||
				    (ch >= 'a' && ch <= 'z') ||
				    (ch >= 'A' && ch <= 'Z') || ch == '-' ||
				    ch == '+' || ch == '.')) {
			odd = 1;
		}
	}
	if (odd)
		rd_repair(r, at, 0, 1, "a member value of the trace object "
				       "that is not valid JSON");
	return 0;
}

/* Skips one member value of the object form, streaming (it may be far
 * larger than the buffer): strings, escapes and bracket balance are
 * checked, scalars only for their characters. */
static int skip_member(struct rd *r)
{
	int ch, rc;
	unsigned depth = 0;
	if ((rc = peek(r, &ch)))
		return rc;
	if (ch == -1)
		return eof_in_object(r);
	if (ch != '{' && ch != '[' && ch != '"') {
		size_t k = 0;
		for (;;) {
			if ((rc = peek(r, &ch)))
				return rc;
			if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
			      (ch >= 'A' && ch <= 'Z') || ch == '-' || ch == '+' ||
			      ch == '.'))
				break;
			r->pos++;
			k++;
		}
		if (k == 0)
			return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
				       "expected a value");
		return 0;
	}
	for (;;) {
		if ((rc = peek(r, &ch)))
			return rc;
		if (ch == -1)
			return eof_in_object(r);
		r->pos++;
		if (ch == '"') {
			if ((rc = skip_string_rest(r)))
				return rc;
		} else if (ch == '{' || ch == '[') {
			if (depth == SKIP_MAX_DEPTH)
				return rd_fail(r, r->base + r->pos - 1,
					       PTW_ERR_LIMIT,
					       "nesting deeper than %d levels",
					       SKIP_MAX_DEPTH);
			r->skip_stack[depth++] = (unsigned char)ch;
		} else if (ch == '}' || ch == ']') {
			if (depth == 0 ||
			    r->skip_stack[depth - 1] != (ch == '}' ? '{' : '['))
				return rd_fail(r, r->base + r->pos - 1,
					       PTW_ERR_FORMAT,
					       "unbalanced '%c'", ch);
			depth--;
		}
		if (depth == 0)
			return 0;
	}
}

/* A member name at pos ('"'): decoded into *key (parser scratch). */
static int member_name(struct rd *r, struct ptw_cv_str *key)
{
	size_t end;
	for (;;) {
		size_t avail = r->len - r->pos, win = window(r);
		int rc = ptw_cv_json_i_parse_string(r->jp, r->buf + r->pos, win,
						    &end, key, r->err);
		if (rc == 0) {
			r->pos += end;
			return 0;
		}
		if (rc != PTW_CV_JSON_INCOMPLETE)
			return relocate(r, rc);
		if (win < avail) {
			if ((rc = widen(r)))
				return rc;
			continue;
		}
		if (r->eof)
			return relocate(r, PTW_ERR_FORMAT);
		if ((rc = fill(r)))
			return rc;
	}
}

/* After a member of the object form: its ',' (lenient mode: any number
 * of them, or none, as trace_processor's ReadOneJsonKey skips commas)
 * and the next member name, or the closing '}'. Returns 0 with *ch the
 * next byte ('"' or '}'). */
static int object_next(struct rd *r, int *ch)
{
	int rc, commas = 0;
	for (;;) {
		if ((rc = skip_ws(r, ch)))
			return rc;
		if (*ch != ',')
			break;
		r->pos++;
		if (commas++ &&
		    (rc = rd_lenient(r, r->base + r->pos - 1,
				     "expected '\"' starting a member name",
				     "an extra ',' in the trace object")))
			return rc;
	}
	if (*ch == -1)
		return eof_in_object(r);
	if (*ch == '}')
		return commas ? rd_lenient(r, r->base + r->pos,
					   "expected '\"' starting a member name",
					   "a trailing comma before '}'")
			      : 0;
	if (*ch == '"' && !commas &&
	    (rc = rd_lenient(r, r->base + r->pos,
			     "expected ',' or '}' after a member of the trace "
			     "object",
			     "a missing ',' in the trace object")))
		return rc;
	if (*ch != '"')
		return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
			       commas ? "expected '\"' starting a member name"
				      : "expected ',' or '}' after a member of "
					"the trace object");
	return 0;
}

/* The length of the object or array at p[0] (its brackets balanced,
 * strings skipped), or 0 if p[0, n) ends inside it. Whether it is valid
 * JSON is for the walk to say. */
static size_t value_len(const char *p, size_t n)
{
	size_t depth = 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == '"') {
			for (i++; i < n && p[i] != '"'; i++)
				if (p[i] == '\\')
					i++;
			if (i >= n)
				return 0;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if ((c == '}' || c == ']') && --depth == 0) {
			return i + 1;
		}
	}
	return 0;
}

/* One "stackFrames" entry: {"name": s, "parent": id, ...}. */
static int stack_frame(struct rd *r, const struct ptw_cv_json_walk *top,
		       const struct ptw_cv_arg *e)
{
	struct ptw_cv_json_walk w;
	struct ptw_cv_arg a;
	struct ptw_cv_str name = {NULL, 0}, parent = {NULL, 0};
	char num[24];
	int rc;
	if (e->type != PTW_CV_VAL_JSON || e->s.p[0] != '{')
		return 0; /* not a frame: no stack can use it */
	ptw_cv_json_walk_child(top, &w, e);
	while ((rc = ptw_cv_json_walk_next(&w, &a)) == 1) {
		if (a.key.n == 4 && memcmp(a.key.p, "name", 4) == 0)
			name = a.type == PTW_CV_VAL_STRING ? a.s
							   : (struct ptw_cv_str){0};
		else if (a.key.n == 6 && memcmp(a.key.p, "parent", 6) == 0) {
			parent.p = NULL;
			if (a.type == PTW_CV_VAL_STRING) {
				parent = a.s;
			} else if (a.type == PTW_CV_VAL_INT) {
				int k = snprintf(num, sizeof(num), "%lld",
						 (long long)a.i);
				parent.p = num;
				parent.n = (size_t)k;
			}
		}
	}
	if (rc < 0)
		return rc;
	return ptw_cv_stacks_add(r->stacks, e->key, name, parent);
}

/* The object form's "stackFrames" member value, at pos: read whole (at
 * most max_event bytes) into r->stacks. A value that is not an object
 * is skipped, as other members are. */
static int read_stack_frames(struct rd *r)
{
	int ch, rc;
	size_t end;
	if ((rc = peek(r, &ch)))
		return rc;
	if (ch != '{')
		return r->lenient ? tp_skip_value(r) : skip_member(r);
	for (;;) {
		size_t avail = r->len - r->pos, win = window(r);
		if ((end = value_len(r->buf + r->pos, win)))
			break;
		if (win < avail) {
			if ((rc = widen(r)))
				return rc;
			continue;
		}
		if (r->eof)
			return eof_in_object(r);
		if ((rc = fill(r)))
			return rc;
	}
	uint64_t at = r->base + r->pos;
	if (end > r->max_event)
		return rd_fail(r, at, PTW_ERR_LIMIT,
			       "\"stackFrames\" larger than %zu bytes",
			       r->max_event);
	struct ptw_cv_json_walk w;
	struct ptw_cv_arg e;
	rc = ptw_cv_json_walk_start(r->jp, &w, r->buf + r->pos, end);
	while (!rc && (rc = ptw_cv_json_walk_next(&w, &e)) == 1)
		rc = stack_frame(r, &w, &e);
	if (rc == PTW_ERR_NOMEM)
		return ptw_error_set(r->err, PTW_ERR_NOMEM, 0, "out of memory");
	if (rc && !r->lenient)
		return rd_fail(r, at, PTW_ERR_FORMAT,
			       "\"stackFrames\" is not a valid JSON object of "
			       "frames");
	if (rc) /* trace_processor loads the file (it ignores stackFrames) */
		rd_repair(r, at, 0, 1, "a \"stackFrames\" that is not valid "
				       "JSON (frames after the error not read)");
	if (ptw_cv_stacks_resolve(r->stacks))
		return ptw_error_set(r->err, PTW_ERR_NOMEM, 0, "out of memory");
	if (r->st) {
		r->st->stack_frames = 1;
		r->st->stack_frame_count = ptw_cv_stacks_count(r->stacks);
	}
	r->pos += end;
	return 0;
}

static int read_object(struct rd *r)
{
	int ch, rc;
	uint64_t at0 = r->base + r->pos;
	r->pos++; /* '{' */
	if ((rc = skip_ws(r, &ch)))
		return rc;
	if (ch == ',' && r->lenient) {
		rd_repair(r, r->base + r->pos, 0, 1,
			  "a ',' before the first member of the trace object");
		if ((rc = object_next(r, &ch)))
			return rc;
	}
	for (;;) {
		struct ptw_cv_str key;
		if (ch == '}')
			break;
		if (ch == -1)
			return eof_in_object(r);
		if (ch != '"')
			return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
				       "expected '\"' starting a member name");
		if ((rc = member_name(r, &key)))
			return rc;
		unsigned bit = key_bit(key);
		r->keys |= bit;
		if ((rc = skip_ws(r, &ch)))
			return rc;
		if (ch == -1)
			return eof_in_object(r);
		if (ch != ':')
			return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
				       "expected ':' after a member name");
		r->pos++;
		if ((rc = skip_ws(r, &ch)))
			return rc;
		if (bit == KEY_EVENTS && r->only_stacks) {
			rc = r->lenient ? tp_skip_value(r) : skip_member(r);
		} else if (bit == KEY_STACKS && r->stacks &&
			   !ptw_cv_stacks_loaded(r->stacks)) {
			rc = read_stack_frames(r);
			if (!rc && r->only_stacks)
				return RD_STACKS_DONE;
		} else if (bit == KEY_EVENTS) {
			/* trace_processor rejects a non-array traceEvents */
			if (ch == -1)
				return eof_in_object(r);
			if (ch != '[')
				return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
					       "expected '[' starting the "
					       "\"traceEvents\" array");
			r->pos++;
			rc = read_array(r, 0);
		} else {
			rc = r->lenient ? tp_skip_value(r) : skip_member(r);
		}
		if (rc)
			return rc;
		if ((rc = object_next(r, &ch)))
			return rc;
	}
	r->pos++; /* '}' */
	if (!(r->keys & KEY_EVENTS))
		return not_chrome_object(r, at0);
	return 0;
}

/* ---- driver --------------------------------------------------------- */

/* Reads until at least 3 bytes (gzip magic, UTF-8 BOM) are buffered or
 * the input ends. */
static int fill_first_bytes(struct rd *r)
{
	int rc;
	if ((rc = fill(r)))
		return rc;
	while (r->len < 3 && !r->eof)
		if ((rc = fill(r)))
			return rc;
	return 0;
}

/* The input starts with gzip's magic: moves what was read to the
 * compressed side and reads again through zlib. */
static int start_gzip(struct rd *r)
{
	r->gz = 1;
	if (r->st)
		r->st->gzip = 1;
	if (inflateInit2(&r->zs, 15 + 16) != Z_OK)
		return ptw_error_set(r->err, PTW_ERR_NOMEM, 0,
				     "cannot initialise zlib");
	r->zs_init = 1;
	if (r->fd >= 0) {
		r->raw = malloc(RAW_CHUNK > r->len ? RAW_CHUNK : r->len);
		if (!r->raw)
			return ptw_error_set(r->err, PTW_ERR_NOMEM, 0,
					     "out of memory");
		memcpy(r->raw, r->buf, r->len);
		r->zs.next_in = r->raw;
		r->zs.avail_in = (uInt)r->len;
	} else {
		/* memory: buf was the caller's data; get our own */
		r->zs.next_in = (unsigned char *)r->mem;
		r->zs.avail_in = (uInt)r->mem_n;
		r->raw_eof = 1;
		if (r->mem_n > UINT32_MAX)
			return rd_fail(r, 0, PTW_ERR_LIMIT,
				       "compressed memory input larger than "
				       "4 GiB");
		r->zero_copy = 0;
		r->win = SIZE_MAX;
		r->buf = malloc(r->chunk);
		if (!r->buf)
			return ptw_error_set(r->err, PTW_ERR_NOMEM, 0,
					     "out of memory");
		r->cap = r->chunk;
	}
	r->len = 0;
	r->eof = 0;
	return fill_first_bytes(r);
}

/* The error for an input whose first byte 'ch' starts neither an array
 * nor an object (-1: the input is empty). */
static int not_a_trace(struct rd *r, int ch)
{
	if (ch == -1)
		return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
			       "empty input: expected '[' or '{' starting a "
			       "Chrome JSON trace");
	const char *k = value_kind(ch);
	if (!k) {
		char shown[8] = "";
		if (ch >= 0x20 && ch < 0x7f)
			snprintf(shown, sizeof(shown), " '%c'", ch);
		return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
			       "not a Chrome JSON trace: not JSON at all "
			       "(expected '[' or '{' starting a Chrome "
			       "JSON trace, found byte 0x%02x%s)", ch,
			       shown);
	}
	return rd_fail(r, r->base + r->pos, PTW_ERR_FORMAT,
		       "not a Chrome JSON trace: the input is a JSON %s "
		       "(expected '[' or '{' starting a Chrome JSON "
		       "trace)", k);
}

/* Reads the whole input: gzip and a UTF-8 BOM are recognised, then the
 * array form or the object form with its "traceEvents". */
static int run(struct rd *r)
{
	int ch, rc;
	/* Gzip magic or UTF-8 BOM: look at the first bytes. */
	if (r->fd >= 0 && (rc = fill_first_bytes(r)))
		return rc;
	if (r->len >= 2 && (unsigned char)r->buf[0] == 0x1f &&
	    (unsigned char)r->buf[1] == 0x8b && (rc = start_gzip(r)))
		return rc;
	if (r->len - r->pos >= 3 && memcmp(r->buf + r->pos, "\xEF\xBB\xBF", 3) == 0)
		r->pos += 3;
	if ((rc = skip_ws(r, &ch)))
		return rc;
	if (ch == '[' && r->only_stacks)
		return 0;
	if (ch == '[') {
		if (r->st)
			r->st->form = PTW_CV_JSON_FORM_ARRAY;
		r->pos++;
		rc = read_array(r, 1);
	} else if (ch == '{') {
		if (r->st)
			r->st->form = PTW_CV_JSON_FORM_OBJECT;
		rc = read_object(r);
		if (r->st && (r->keys & KEY_SYSTEM))
			r->st->system_trace_events = 1;
	} else {
		return not_a_trace(r, ch);
	}
	if (rc || r->stopped)
		return rc;
	if ((rc = skip_ws(r, &ch)))
		return rc;
	if (ch != -1) {
		/* trace_processor ignores what follows the trace in the
		 * same read (it fails on a later read: rare) */
		return rd_lenient(r, r->base + r->pos,
				  "expected the end of the input after the "
				  "trace",
				  "text after the end of the trace (ignored)");
	}
	return 0;
}

static int start(struct rd *r, const struct ptw_cv_json_read_opts *opts,
		 const char *default_name, ptw_cv_event_fn fn, void *ctx,
		 struct ptw_cv_json_read_stats *stats, struct ptw_error *err)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->name = opts && opts->input_name ? opts->input_name : default_name;
	r->chunk = opts && opts->chunk_bytes ? opts->chunk_bytes : DEFAULT_CHUNK;
	r->max_event = opts && opts->max_event_bytes ? opts->max_event_bytes
						     : PTW_CV_JSON_DEFAULT_MAX_EVENT;
	if (r->chunk > UINT32_MAX / 2)
		r->chunk = UINT32_MAX / 2;
	if (r->max_event > SIZE_MAX / 4) /* keeps buffer arithmetic in range */
		r->max_event = SIZE_MAX / 4;
	r->line = 1;
	r->win = SIZE_MAX; /* buffered input: the buffer is the window */
	r->fn = fn;
	r->ctx = ctx;
	r->st = stats;
	r->stacks = opts ? opts->stacks : NULL;
	r->opts = opts;
	r->err = err;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!fn)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_cv_json_read: NULL callback");
	r->jp = ptw_cv_json_parser_create(err);
	if (!r->jp)
		return PTW_ERR_NOMEM;
	r->lenient = !(opts && opts->strict);
	ptw_cv_json_i_set_mode(r->jp, r->lenient, 1);
	return 0;
}

static void finish(struct rd *r)
{
	if (r->zs_init)
		inflateEnd(&r->zs);
	free(r->raw);
	if (!r->zero_copy)
		free(r->buf);
	ptw_cv_json_parser_destroy(r->jp);
}

static int read_fd_named(int fd, const char *name, const char *path,
			 int only_stacks,
			 const struct ptw_cv_json_read_opts *opts,
			 ptw_cv_event_fn fn, void *ctx,
			 struct ptw_cv_json_read_stats *stats,
			 struct ptw_error *err)
{
	struct rd *r = malloc(sizeof(*r));
	if (!r)
		return ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
	int rc = start(r, opts, name, fn, ctx, stats, err);
	if (!rc) {
		r->fd = fd;
		r->path = path;
		r->only_stacks = only_stacks;
		r->cap = r->chunk;
		r->buf = malloc(r->cap);
		if (!r->buf)
			rc = ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		else
			rc = run(r);
	}
	finish(r);
	free(r);
	return rc;
}

int ptw_cv_json_read_fd(int fd, const struct ptw_cv_json_read_opts *opts,
			ptw_cv_event_fn fn, void *ctx,
			struct ptw_cv_json_read_stats *stats,
			struct ptw_error *err)
{
	if (fd < 0)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_cv_json_read_fd: bad descriptor");
	return read_fd_named(fd, "<fd>", NULL, 0, opts, fn, ctx, stats, err);
}

int ptw_cv_json_read(const char *path, const struct ptw_cv_json_read_opts *opts,
		     ptw_cv_event_fn fn, void *ctx,
		     struct ptw_cv_json_read_stats *stats, struct ptw_error *err)
{
	if (!path)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_cv_json_read: NULL path");
	if (strcmp(path, "-") == 0)
		return read_fd_named(0, "-", NULL, 0, opts, fn, ctx, stats,
				     err);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		const char *name = opts && opts->input_name ? opts->input_name
							    : path;
		ptw_error_set(err, PTW_ERR_IO, e, "%s: cannot open", name);
		if (err)
			err->input = name;
		return PTW_ERR_IO;
	}
	ptw_os_file_sequential(fd);
	struct stat sb;
	int again = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
	int rc = read_fd_named(fd, path, again ? path : NULL, 0, opts, fn, ctx,
			       stats, err);
	close(fd);
	return rc;
}

static int read_mem(const void *data, size_t n, int only_stacks,
		    const struct ptw_cv_json_read_opts *opts,
		    ptw_cv_event_fn fn, void *ctx,
		    struct ptw_cv_json_read_stats *stats, struct ptw_error *err);

int ptw_cv_json_read_mem(const void *data, size_t n,
			 const struct ptw_cv_json_read_opts *opts,
			 ptw_cv_event_fn fn, void *ctx,
			 struct ptw_cv_json_read_stats *stats,
			 struct ptw_error *err)
{
	return read_mem(data, n, 0, opts, fn, ctx, stats, err);
}

static int no_event(void *ctx, const struct ptw_cv_event *ev,
		    struct ptw_error *err)
{
	(void)ctx, (void)ev, (void)err;
	return 0;
}

/* An event has an "sf" or "esf" and "stackFrames" was not read yet (it
 * usually comes after "traceEvents"): reads the input again up to it,
 * skipping the events, when it can be read again. */
static int pre_read_stacks(struct rd *r)
{
	struct ptw_cv_json_read_stats st;
	int rc;
	r->stacks_tried = 1;
	if (r->path) {
		int fd = open(r->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return rd_fail(r, r->base + r->pos, PTW_ERR_IO,
				       "cannot open again to read its "
				       "\"stackFrames\"");
		rc = read_fd_named(fd, r->name, NULL, 1, r->opts, no_event,
				   NULL, &st, r->err);
		close(fd);
	} else if (r->fd < 0) {
		rc = read_mem(r->mem, r->mem_n, 1, r->opts, no_event, NULL,
			      &st, r->err);
	} else {
		if (r->st)
			r->st->stacks_late = 1;
		return 0;
	}
	if (rc == RD_STACKS_DONE)
		rc = 0;
	if (!rc && r->st && st.stack_frames) {
		r->st->stack_frames = 1;
		r->st->stack_frame_count = st.stack_frame_count;
	}
	return rc;
}

static int read_mem(const void *data, size_t n, int only_stacks,
		    const struct ptw_cv_json_read_opts *opts,
		    ptw_cv_event_fn fn, void *ctx,
		    struct ptw_cv_json_read_stats *stats, struct ptw_error *err)
{
	if (!data && n)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_cv_json_read_mem: NULL data");
	struct rd *r = malloc(sizeof(*r));
	if (!r)
		return ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
	int rc = start(r, opts, "<memory>", fn, ctx, stats, err);
	if (!rc) {
		static const char empty = 0;
		r->mem = data ? data : (const void *)&empty;
		r->mem_n = n;
		r->zero_copy = 1;
		r->win = r->chunk;
		r->buf = (char *)(uintptr_t)r->mem; /* never written */
		r->len = r->cap = n;
		r->eof = 1;
		r->only_stacks = only_stacks;
		if (stats) {
			stats->bytes_in = n;
			stats->bytes_json = n;
		}
		rc = run(r);
	}
	finish(r);
	free(r);
	return rc;
}
