/* chrome_json.h - Chrome Trace Event Format JSON: per-object parser,
 * streaming reader, and exporter from our protobuf traces.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Three pieces share this header:
 *
 *  - ptw_cv_json_parse_object() decodes exactly one JSON object (one event)
 *    into a struct ptw_cv_event. It is a strict RFC 8259 parser (UTF-8
 *    validated, \uXXXX escapes with surrogate pairs, no NUL or raw control
 *    characters in strings, no trailing commas, no comments), so it also
 *    decides whether an AppleTrace text line is valid (corpus README,
 *    section 3 rule 4).
 *  - ptw_cv_json_read*() streams a whole Chrome JSON file (array form,
 *    object form, gzip or not, possibly cut short by a crash) and calls a
 *    ptw_cv_event_fn for every event, holding one event in memory at a time.
 *    Unless opts->strict, it also accepts what trace_processor's JSON
 *    reader accepts beyond RFC 8259 (docs/json.md, "Leniency"), and it
 *    stops where trace_processor's tokenizer stops.
 *  - ptw_cv_export_json() writes Chrome JSON (array form) from a protobuf
 *    trace, for the JSON -> proto -> JSON round trip.
 *
 * Units and coercions follow trace_processor's JSON importer (v58.2):
 *  - numbers: an integer that fits int64 is an int64, any other number the
 *    double trace_processor's StringToDouble computes (not always the
 *    correctly rounded one; docs/json.md "Numbers").
 *  - ts/dur/tts/tdur are microseconds; ts_ns/dur_ns/tts_ns/tdur_ns are
 *    nanoseconds as its CoerceToTs computes them: an int64 times 1000, a
 *    double d: d == trunc(d) ? (int64)d * 1000 : llround(d * 1000.0), with
 *    its int64 wrap-around reproduced (in uint64). A JSON string holding
 *    exactly one number ("12.5") is accepted the same way. A ts that is
 *    not one is ignored (PTW_CV_HAS_TS stays as an earlier ts left it:
 *    trace_processor drops the event, except M). A dur/tts/tdur that is
 *    not one leaves its PTW_CV_HAS_* flag clear here; the reader stops at
 *    such an event (see ptw_cv_json_read).
 *  - pid/tid numbers become uint32 as CoerceToUint32: an int64 outside
 *    [0, 2^32-1] reads as 0, a double is truncated to int64 first. A string pid/tid
 *    sets PTW_CV_PID_IS_STRING / PTW_CV_TID_IS_STRING with the decoded
 *    string in pid_str / tid_str and pid/tid 0 (trace_processor interns the
 *    string and uses it as the process/thread name). A missing or zero tid
 *    is left as is: replacing it with the pid is the consumer's job.
 *  - id: an integral number that fits int64 sets id_num (as uint64); a
 *    string sets PTW_CV_ID_IS_STRING with id_str as written (decoded) and,
 *    when the string spells a number ("42", "0x2a", "0X2A"), id_num too.
 *    Other types are not an id (as in trace_processor). "id2":{"local":s}
 *    or {"global":s} with a string s sets the id the same way (plus
 *    PTW_CV_ID2_LOCAL for local), but only when the event has no valid
 *    "id" (trace_processor ignores id2 then). Both set PTW_CV_HAS_ID;
 *    an id from id2 also sets PTW_CV_ID_FROM_ID2 (flows ignore it).
 *  - "s" ("t", "p" or "g") -> scope; "bp":"e" -> bp 'e'; "bind_id" (a
 *    string, or an integral number kept as its JSON text, with
 *    PTW_CV_BIND_ID_IS_NUM and its value in bind_num) -> bind_id +
 *    PTW_CV_HAS_BIND_ID (trace_processor reads a string bind_id, and a
 *    string v1 flow id, as hexadecimal: strtoull(s, 16));
 *    "flow_in"/"flow_out": true -> PTW_CV_FLOW_IN / PTW_CV_FLOW_OUT.
 *  - ph: the first byte of the "ph" string (0 if absent, empty, or not a
 *    string).
 *  - args: the members of the "args" object in input order (duplicates
 *    kept), each a null, bool, int64, double, decoded string, or (nested
 *    object or array) its raw JSON text; all of them, at any nesting
 *    depth, as trace_processor takes them (consumers with limits, such as
 *    the emitter, cut and count). A non-object "args" is ignored (an earlier "args"
 *    object stays).
 *  - "sf"/"esf" (a string, or an integer kept as its text) -> sf/esf;
 *    "stack"/"estack" (an array) -> stack/estack as raw JSON text; any
 *    of them sets PTW_CV_HAS_STACK (callstacks: cv_stacks.h).
 *  - Unknown members are validated and ignored. A repeated member: the last
 *    one wins (args: see above).
 *
 * Thread rule: a parser, and a reader call, are used by one thread at a
 * time; separate parsers are independent. Nothing here prints. */
#ifndef PTW_CHROME_JSON_H
#define PTW_CHROME_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "converters/common/cv_event.h"
#include "ptw/error.h"

struct ptw_cv_stacks;

/* ==== Per-object parser =============================================== */

struct ptw_cv_json_parser;

/* Creates a parser (its scratch buffers grow with the largest event seen,
 * never per event). Returns NULL and fills *err (if not NULL) with
 * PTW_ERR_NOMEM on failure. */
struct ptw_cv_json_parser *ptw_cv_json_parser_create(struct ptw_error *err);

/* Frees the parser. NULL is a no-op. */
void ptw_cv_json_parser_destroy(struct ptw_cv_json_parser *jp);

/* Parses 'p'[0..'n') as exactly one JSON object, optionally surrounded by
 * JSON whitespace (space, TAB, LF, CR), into *ev (fully overwritten; its
 * input/line/offset are set to NULL/0/0 for the caller to fill in).
 *
 * Strings in *ev (name, cat, pid_str, tid_str, id_str, bind_id, arg keys and
 * values) point either into 'p' or into the parser's scratch buffer: they
 * stay valid until the next call on 'jp' and while 'p' is unchanged.
 * 'p' need not be NUL-terminated.
 *
 * Returns 0, or:
 *  PTW_ERR_FORMAT  the text is not exactly one valid JSON object (including
 *                  text cut short, invalid UTF-8, NUL bytes, a second value
 *                  after the object); err->offset is the byte offset in 'p'
 *                  of the offending byte (n if the text ends too early),
 *                  err->column is offset + 1, err->line is 0, and err->msg
 *                  is "byte N: expected ..." (what was expected or what is
 *                  wrong). ptw_cv_json_error_locate() rewrites it with a
 *                  file name and line.
 *  PTW_ERR_NOMEM   scratch buffer growth failed.
 *  PTW_ERR_INVALID jp, p (with n > 0) or ev is NULL. */
int ptw_cv_json_parse_object(struct ptw_cv_json_parser *jp, const char *p,
			     size_t n, struct ptw_cv_event *ev,
			     struct ptw_error *err);

/* Rewrites the message of an error returned by ptw_cv_json_parse_object()
 * so that it names where the object came from:
 *   "INPUT:LINE:COL (byte OFF): expected ..."
 * where COL = err->offset + 1 and OFF = base_offset + err->offset (the byte
 * offset of the object's text in its file), and sets err->input, err->line
 * and err->offset accordingly. 'input' must outlive *err (static or owned by
 * the caller); 'line' is 1-based (0: left out). NULL err is a no-op. */
void ptw_cv_json_error_locate(struct ptw_error *err, const char *input,
			      uint32_t line, uint64_t base_offset);

/* ==== Streaming reader ================================================ */

/* Largest single event (bytes of JSON text) the reader will hold; a larger
 * one is PTW_ERR_LIMIT. Also bounds the reader's memory. */
#define PTW_CV_JSON_DEFAULT_MAX_EVENT (16u << 20)

enum ptw_cv_json_form {
	PTW_CV_JSON_FORM_NONE = 0,   /* not determined (error before '[' / '{') */
	PTW_CV_JSON_FORM_ARRAY = 1,  /* [ {...}, ... ] */
	PTW_CV_JSON_FORM_OBJECT = 2, /* { ..., "traceEvents": [ ... ], ... } */
};

enum ptw_cv_json_cut {
	PTW_CV_JSON_COMPLETE = 0,      /* the array (and object) was closed */
	PTW_CV_JSON_CUT_AFTER_EVENT = 1, /* array form, no ']' (after an event,
					  * a trailing comma, or '[') */
	PTW_CV_JSON_CUT_MID_EVENT = 2, /* array form, the last event was cut:
					* it was dropped */
};

/* Optional settings; a zeroed struct (or NULL) means the defaults. */
struct ptw_cv_json_read_opts {
	const char *input_name; /* name used in messages and ev->input; NULL:
				 * the path ("-" for stdin), or "<memory>" */
	size_t max_event_bytes; /* 0: PTW_CV_JSON_DEFAULT_MAX_EVENT */
	size_t chunk_bytes;     /* read size; 0: 1 MiB */
	int strict;             /* non-zero: RFC 8259 only, none of
				 * trace_processor's leniencies (see
				 * ptw_cv_json_read) */
	/* Non-NULL: the object form's "stackFrames" is read into it
	 * (cv_stacks.h), and when an event has an "sf" or "esf" before
	 * "stackFrames" was read, a file or memory input is first scanned
	 * for it (its "traceEvents" skipped); other inputs cannot be read
	 * twice: stats->stacks_late is set instead. */
	struct ptw_cv_stacks *stacks;
};

/* What a read saw; filled on success and on error (as far as it got). */
struct ptw_cv_json_read_stats {
	enum ptw_cv_json_form form;
	enum ptw_cv_json_cut cut;
	int gzip;               /* 1 if the input was gzip-compressed */
	uint64_t events;        /* events passed to the callback */
	uint64_t bytes_in;      /* bytes read from the file (compressed size) */
	uint64_t bytes_json;    /* bytes of JSON text scanned (decompressed) */
	uint64_t cut_offset;    /* for CUT_MID_EVENT: byte offset of the
				 * dropped event's '{' */
	uint64_t cut_line;      /* ... and its 1-based line */
	/* Lenient repairs: places that are not RFC 8259 JSON, accepted as
	 * trace_processor accepts them (0 with opts->strict). */
	uint64_t repairs;
	uint64_t repair_offset, repair_line; /* the first one */
	const char *repair_what;             /* ... what it was (static) */
	/* Array form: reading stopped at an event whose "dur", "tts" or
	 * "tdur" trace_processor cannot read, as its tokenizer does. */
	int stopped;
	uint64_t stop_offset, stop_line;     /* that event's '{' */
	const char *stop_member;             /* "dur", "tts" or "tdur" */
	char stop_value[48];                 /* its value as written (cut) */
	uint64_t stop_bytes_left;            /* JSON bytes from its '{' on,
					      * not converted */
	/* Object form: it also had "systemTraceEvents" (ftrace text), which
	 * trace_processor imports and the reader skips. */
	int system_trace_events;
	/* opts->stacks: "stackFrames" was read, its frames; an event had
	 * an "sf"/"esf" before it on an input that cannot be read twice
	 * (a pipe): those ids stay unknown. */
	int stack_frames;
	uint32_t stack_frame_count;
	int stacks_late;
};

/* Reads the Chrome JSON file at 'path' ("-": standard input) and calls
 * fn(ctx, ev, err) for every event of the trace, in file order. Gzip input
 * (magic 1f 8b, one or more members) is detected and decompressed.
 *
 * Accepted input (leading/trailing JSON whitespace allowed, and an optional
 * UTF-8 byte order mark):
 *  - the array form: '[' events ']'. Between events a comma is required
 *    with opts->strict only; extra commas (",,", a trailing comma before
 *    ']') are tolerated. Elements must be objects ("{}" included: it is
 *    passed on as an event with nothing set); a first element that is not
 *    is "not a Chrome JSON trace".
 *  - the object form: '{' members '}' with a "traceEvents" array member;
 *    every other member, before or after it, is skipped (its brackets,
 *    braces and strings are checked for balance, not fully validated).
 *    Must be complete. A "traceEvents" that is not an array is an error
 *    (as in trace_processor). An object without "traceEvents", or a JSON
 *    string, number, boolean or null, is PTW_ERR_FORMAT "not a Chrome JSON
 *    trace: ..." naming what it is (Gecko profiler JSON, a V8 CPU profile,
 *    an object without "traceEvents", a JSON string, ...).
 *  - an event whose "dur", "tts" or "tdur" trace_processor's CoerceToTs
 *    cannot read: trace_processor's tokenizer stops there for good. In the
 *    array form the events before it are delivered and stats->stopped
 *    says where (nothing after it is parsed); in the object form it is
 *    PTW_ERR_FORMAT (trace_processor then fails: "JSON trace file is
 *    incomplete"). An event member number trace_processor rejects (inf or
 *    NaN, "1e400") is PTW_ERR_FORMAT too.
 *  - unless opts->strict, trace_processor's leniency: trailing commas in
 *    events, raw control characters and invalid UTF-8 in strings, unknown
 *    escapes dropped, no comma between events, loose commas between the
 *    object form's members, an event member's object or array that only
 *    balances its brackets, text after the trace; each counted in
 *    stats->repairs.
 *  - an array-form file cut short: no ']' (after an event, a trailing comma
 *    or whitespace), or cut inside the last event, which is dropped. Every
 *    complete event is delivered; stats->cut says which case it was.
 * Each event is parsed with the rules of ptw_cv_json_parse_object() (plus
 * the leniency above, and the stop), and
 * ev->input, ev->line, ev->offset give its file name, the 1-based line of
 * its '{', and the byte offset of that '{' in the (decompressed) JSON text.
 *
 * Memory is bounded: the reader keeps one read chunk plus the current
 * event (at most max_event_bytes), whatever the file size.
 *
 * 'opts' and 'stats' may be NULL. Returns 0, or:
 *  PTW_ERR_FORMAT  malformed JSON (an invalid event, a cut object form,
 *                  text after the closing bracket, ...): err->msg is
 *                  "NAME:LINE:COL (byte OFF): expected ...", err->input,
 *                  err->line, err->column, err->offset set (offsets in
 *                  the decompressed text), also for corrupt gzip data.
 *  PTW_ERR_LIMIT   an event larger than max_event_bytes.
 *  PTW_ERR_IO      open/read failed (err->sys_errno).
 *  PTW_ERR_NOMEM
 *  PTW_ERR_INVALID bad arguments.
 *  any negative code returned by 'fn' (its *err is passed through). */
int ptw_cv_json_read(const char *path, const struct ptw_cv_json_read_opts *opts,
		     ptw_cv_event_fn fn, void *ctx,
		     struct ptw_cv_json_read_stats *stats, struct ptw_error *err);

/* Same, from an open file descriptor (read until EOF, not closed). */
int ptw_cv_json_read_fd(int fd, const struct ptw_cv_json_read_opts *opts,
			ptw_cv_event_fn fn, void *ctx,
			struct ptw_cv_json_read_stats *stats,
			struct ptw_error *err);

/* Same, from memory ('data' need not be NUL-terminated; gzip detected).
 * Uncompressed input is parsed in place, without copying. */
int ptw_cv_json_read_mem(const void *data, size_t n,
			 const struct ptw_cv_json_read_opts *opts,
			 ptw_cv_event_fn fn, void *ctx,
			 struct ptw_cv_json_read_stats *stats,
			 struct ptw_error *err);

/* ==== Export: protobuf trace -> Chrome JSON ============================ */

/* Writes the protobuf trace at 'pftrace_path' (as written by our writer,
 * compressed packets included) to 'out' as Chrome JSON, array form, one
 * event per line, such that trace_processor's JSON importer shows the rows
 * it shows for the protobuf trace. The trace is decoded with the reader
 * library (reader/trace_read.h) and paired into slices with its
 * trace_processor model (tp_model.h):
 *  - process/thread names -> M process_name / thread_name (and
 *    process_sort_index / thread_sort_index from sibling_order_rank); an
 *    unnamed process -> M "process_exists" (creates the process row only);
 *  - slices on thread tracks -> X with dur (B if never ended);
 *  - instants -> i with "s" t (thread), p (process) or g (global track);
 *  - counters -> C on the owning process, name and arg key split at the
 *    last space of the track name ("<name> <key>", which also keeps
 *    "<name> id: <id> <key>" as it was);
 *  - slices on other tracks -> b + e with "id":"0x<track uuid>" (global)
 *    or "id2":{"local":...} (process-scoped); instants there -> n;
 *  - flows -> "bind_id":"0x<flow id>" + flow_out / flow_in (v2) on the
 *    slices' events; a link whose slice already carries another id as v1
 *    s / f ("bp":"e") events at both ends (thread slices only);
 *  - debug annotations -> args; categories -> cat; ts/dur in microseconds
 *    with the nanoseconds kept exactly (1000125 ns -> 1000.125);
 *  - callstacks -> "sf" (slices, instants, an E) and "esf" (an X's end)
 *    ids of a "stackFrames" member: when the trace has any, the output
 *    is the object form {"traceEvents":[...],"stackFrames":{...}}.
 * The whole trace is loaded in memory (the exporter is not streaming).
 * Returns 0, PTW_ERR_IO (reading the trace or writing 'out'), PTW_ERR_FORMAT
 * (not a protobuf trace, or a record trace_processor would reject; err
 * says where), PTW_ERR_NOMEM or PTW_ERR_INVALID. 'out' is flushed but not
 * closed. */
int ptw_cv_export_json(const char *pftrace_path, FILE *out,
		       struct ptw_error *err);

#endif /* PTW_CHROME_JSON_H */
