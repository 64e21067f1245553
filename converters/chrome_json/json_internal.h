/* json_internal.h - hooks shared by the JSON parser and the streaming reader.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Not API: used by converters/chrome_json/json_parse.c (the strict per-object parser)
 * and converters/chrome_json/chrome_json.c (the container scanner that feeds it). */
#ifndef PTW_JSON_INTERNAL_H
#define PTW_JSON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "chrome_json.h"

/* Returned (positive, never to users) when the text ended inside the
 * object: more input may complete it. */
#define PTW_CV_JSON_INCOMPLETE 1

/* Parses one event object starting exactly at p[0] (which must be '{').
 * On success returns 0 and sets *end to the offset just past its '}'
 * (nothing after it is looked at). Returns PTW_CV_JSON_INCOMPLETE if p[0..n)
 * ends inside the object (err->offset = n, err->msg says what was expected
 * next), or a negative PTW_ERR_* with err->offset relative to p and err->msg
 * "expected ..." (no location prefix). */
int ptw_cv_json_i_parse_event(struct ptw_cv_json_parser *jp, const char *p,
			      size_t n, size_t *end, struct ptw_cv_event *ev,
			      struct ptw_error *err);

/* Returned (positive) by ptw_cv_json_i_parse_event() in trace_processor
 * mode: the event has a "dur", "tts" or "tdur" that trace_processor's
 * CoerceToTs cannot read (not a number, nor a string holding exactly
 * one), where its JSON tokenizer stops reading the file for good
 * (json_parse.c set_time). ptw_cv_json_i_info() says which member. */
#define PTW_CV_JSON_STOP 3

/* Parser modes (both off after ptw_cv_json_parser_create(), and always
 * off for ptw_cv_json_parse_object()):
 *  - lenient: accept what trace_processor's JSON parser accepts beyond
 *    RFC 8259 (chrome_json.h lists it), counting each place as a repair;
 *  - tp: trace_processor's tokenizer rules for an event of a Chrome JSON
 *    file: PTW_CV_JSON_STOP, and an error for a member number its parser
 *    rejects (infinite or NaN). */
void ptw_cv_json_i_set_mode(struct ptw_cv_json_parser *jp, int lenient,
			    int tp);

/* About the last ptw_cv_json_i_parse_event() / _parse_string() call. */
struct ptw_cv_json_info {
	uint64_t repairs;        /* lenient repairs in it */
	size_t repair_at;        /* the first one: offset relative to p */
	const char *repair_what; /* ... and what it was (static text) */
	const char *stop_member; /* PTW_CV_JSON_STOP: "dur", "tts", "tdur" */
	size_t stop_at, stop_end; /* ... its value's text, relative to p */
};
const struct ptw_cv_json_info *
ptw_cv_json_i_info(const struct ptw_cv_json_parser *jp);

/* trace_processor's conversion of a JSON number's text (already valid
 * RFC 8259 number grammar) to a double (util/json_parser.h
 * StringToDouble, operation for operation). Returns 0, or -1 where it
 * gives inf or NaN (trace_processor rejects the number). */
int ptw_cv_json_i_tp_double(const char *text, size_t n, double *out);

/* trace_processor's CoerceToTs of a double number of microseconds to
 * nanoseconds (d == trunc(d) ? (int64)d * 1000 : llround(d * 1000)),
 * without undefined behaviour: products wrap as int64 on its machines. */
int64_t ptw_cv_json_i_tp_double_to_ns(double us);

/* LFs inside the last event parsed by ptw_cv_json_i_parse_event() (only
 * whitespace, or in lenient mode raw LFs in strings), so the reader needs
 * no second pass for line numbers. */
struct ptw_cv_json_lines {
	uint64_t nl;    /* number of LFs */
	size_t last_nl; /* offset of the last one (relative to p), if nl */
	uint64_t repairs; /* lenient repairs (ptw_cv_json_i_info() for more) */
};
const struct ptw_cv_json_lines *
ptw_cv_json_i_lines(const struct ptw_cv_json_parser *jp);

/* Decodes the JSON string whose opening quote is p[0] into the parser's
 * key buffer (valid until the next call on jp). Same returns as above;
 * *end is just past the closing quote. */
int ptw_cv_json_i_parse_string(struct ptw_cv_json_parser *jp, const char *p,
			       size_t n, size_t *end, struct ptw_cv_str *out,
			       struct ptw_error *err);

/* Puts where an error happened in front of err->msg, truncating at
 * PTW_ERROR_MSG_MAX as if formatted in one go:
 *   "INPUT:LINE:COL (byte OFF): ..."  with an input and a line,
 *   "INPUT (byte OFF): ..."           with an input only,
 *   "byte OFF: ..."                   otherwise,
 * after removing the "byte N: " a parser error starts with if 'replace'.
 * Sets err->input, err->line, err->column (clamped to uint32) and
 * err->offset; leaves err->code and err->sys_errno. NULL err: no-op. */
void ptw_cv_json_i_error_at(struct ptw_error *err, int replace,
			    const char *input, uint64_t line, uint64_t col,
			    uint64_t off);

/* Walks the members (object) or values (array) of JSON text a reader has
 * validated (a PTW_CV_VAL_JSON value), one per call, as "args" members
 * are read: the key decoded (array values: key.p NULL), a scalar value,
 * or a nested object or array as its raw text (PTW_CV_VAL_JSON) to walk
 * with a child walk. Doubles are trace_processor's (ptw_cv_json_i_tp_double).
 * Escaped strings are decoded into the parser's scratch buffer: a value
 * stays valid until the next call on this walk (a child walk started
 * after it keeps it valid). Not thread-safe on one parser. */
struct ptw_cv_json_walk {
	struct ptw_cv_json_parser *jp;
	const char *p;
	size_t n, i;
	char *base, *out; /* scratch: this walk's start, next free byte */
	int is_obj, first;
};

/* Starts a walk of the top-level text p[0, n) ('{' or '['). Returns 0 or
 * PTW_ERR_NOMEM / PTW_ERR_FORMAT. */
int ptw_cv_json_walk_start(struct ptw_cv_json_parser *jp,
			   struct ptw_cv_json_walk *w, const char *p,
			   size_t n);
/* Starts a walk of 'a' (PTW_CV_VAL_JSON), the value 'parent' returned
 * last. */
void ptw_cv_json_walk_child(const struct ptw_cv_json_walk *parent,
			    struct ptw_cv_json_walk *w,
			    const struct ptw_cv_arg *a);
/* Returns 1 with *a set, 0 at the end, or a negative PTW_ERR_* (text that
 * is not valid JSON). */
int ptw_cv_json_walk_next(struct ptw_cv_json_walk *w, struct ptw_cv_arg *a);

#endif /* PTW_JSON_INTERNAL_H */
