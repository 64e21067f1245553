/* json_parse.c - strict RFC 8259 parser of one Chrome trace event object.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A single pass over the object's bytes that validates everything (grammar,
 * UTF-8, escapes, nesting at any depth) and fills struct ptw_cv_event
 * directly: no tree, no allocation per event (the buffers grow with the
 * largest event seen). Strings without escapes are views into
 * the input; strings with escapes are decoded into one scratch buffer sized
 * to the input before parsing starts (a decoded string is never longer than
 * its JSON text), so views never move during a parse.
 *
 * The common shapes take fast paths that give exactly what the general
 * code would: member names compared with their ':' in one go (fast_key),
 * plain ts/dur/pid/tid numbers in integers (fast_us, fast_uint), strings
 * scanned 16 (SSE2) or 8 (SWAR) bytes at a time. Anything unusual (spaces,
 * escapes, exponents, errors, the end of the text) falls back to the
 * general code, which alone reports errors.
 *
 * Every read of p[i] is preceded by an i < n check (or a check that the
 * whole word or constant read fits); running out of input inside the
 * object is reported as PTW_CV_JSON_INCOMPLETE so the streaming reader can
 * fetch more bytes and parse again. Why hand-written rather than
 * json-c/jansson/yajl: see docs/json.md (throughput and the incomplete vs
 * invalid distinction). */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "lib/util/grow.h"
#include "json_internal.h"

/* A scalar value, or the span of a skipped object/array. */
struct val {
	enum ptw_cv_val_type t;
	int b;
	int64_t i;
	double d;
	struct ptw_cv_str s;   /* STRING: decoded; JSON: raw text */
	struct ptw_cv_str raw; /* raw text of a number */
	uint8_t tp_bad;        /* a number trace_processor rejects (inf/NaN) */
	uint8_t int_overflow;  /* an integer that does not fit int64 */
};

struct ptw_cv_json_parser {
	char *scratch;      /* decoded strings of the current parse */
	size_t scratch_cap;
	char *num;          /* NUL-terminated number text for strtod_l */
	size_t num_cap;
	locale_t c_locale;  /* strtod must not follow the program's LC_NUMERIC */
	struct ptw_cv_json_lines lines; /* of the last successful event */
	struct ptw_cv_json_info info;   /* of the last parse */
	uint8_t lenient, tp;            /* ptw_cv_json_i_set_mode() */
	struct ptw_cv_arg *args; /* members of "args" (grows, never shrinks) */
	size_t args_cap;
	uint64_t *nest;  /* skip_container: one bit per open container, */
	size_t nest_cap; /* 1 = object (grows with the deepest nesting) */
	struct val id2_vals[2]; /* "id2" global / local (struct pctx) */
	struct ptw_cv_stack_refs stk;   /* the event's callstacks */
};

/* One parse: the input, the cursor, and where decoded strings go. */
struct pctx {
	struct ptw_cv_json_parser *jp;
	const unsigned char *p;
	size_t n;
	size_t i;
	char *out; /* next free byte of jp->scratch */
	struct ptw_error *err;
	int id_set; /* a valid "id" was seen: "id2" no longer counts */
	/* The last "id2" "global" / "local" members (trace_processor's
	 * ParseId2: each later member replaces the earlier one, a value that
	 * is neither a string nor an int64 clears it); applied once the
	 * event is read, global first, only if no valid "id" came. */
	struct val *id2_global, *id2_local; /* into jp->id2_vals */
	size_t name_at; /* the '"' of the last member name (next_member) */
	uint64_t nl;    /* LFs skipped as whitespace */
	size_t last_nl; /* offset of the last of them */
	uint8_t lenient;      /* accept what trace_processor accepts */
	uint8_t tp;           /* trace_processor's tokenizer rules (reader) */
	uint8_t int_overflow; /* an event member was an integer beyond int64 */
	uint64_t repairs;     /* lenient repairs in this parse */
	size_t repair_at;     /* the first one */
	const char *repair_what;
	const char *stop_member; /* PTW_CV_JSON_STOP: "dur", "tts" or "tdur" */
	size_t stop_at, stop_end; /* ... and its value's text */
	uint8_t num_text;     /* p[0, n) is one number's text (a numeric
			       * string): a number may end at n */
};


/* ---- errors ---------------------------------------------------------- */

static int fail(struct pctx *c, size_t at, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

static int fail(struct pctx *c, size_t at, int code, const char *fmt, ...)
{
	if (!c->err)
		return code;
	va_list ap;
	va_start(ap, fmt);
	ptw_error_vset(c->err, code, 0, fmt, ap);
	va_end(ap);
	ptw_cv_json_i_error_at(c->err, 0, NULL, 0, (uint64_t)at + 1, at);
	return code;
}

/* The text ended where 'what' was expected. */
static int incomplete(struct pctx *c, const char *what)
{
	fail(c, c->n, PTW_ERR_FORMAT, "unexpected end of input, expected %s",
	     what);
	return PTW_CV_JSON_INCOMPLETE;
}

static int bad_byte(struct pctx *c, size_t at, const char *what)
{
	unsigned char ch = c->p[at];
	if (ch == 0)
		return fail(c, at, PTW_ERR_FORMAT, "expected %s, found a NUL byte",
			    what);
	if (ch >= 0x20 && ch < 0x7f)
		return fail(c, at, PTW_ERR_FORMAT, "expected %s, found '%c'",
			    what, ch);
	return fail(c, at, PTW_ERR_FORMAT, "expected %s, found byte 0x%02x",
		    what, ch);
}

/* ---- lexical helpers ------------------------------------------------- */

#define IS_DIGIT(ch) ((unsigned)((ch) - '0') < 10)

static inline void skip_ws(struct pctx *c)
{
	const unsigned char *p = c->p;
	size_t i = c->i, n = c->n;
	if (i < n && p[i] > ' ')
		return; /* the common case: no whitespace at all */
	while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' ||
			 p[i] == '\t')) {
		if (p[i] == '\n') {
			/* raw LFs occur only here in valid JSON: counting them
			 * spares the reader a second pass for line numbers */
			c->nl++;
			c->last_nl = i;
		}
		i++;
	}
	c->i = i;
}

/* SWAR: a word with a byte that needs a closer look in a string ('"',
 * '\\', a control character or a non-ASCII byte) is non-zero here. */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static inline uint64_t special_bytes(uint64_t x)
{
	uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
	return ((q - ONES) & ~q) | ((b - ONES) & ~b) | ((x - ONES * 0x20) & ~x) |
	       x;
}

/* Bytes a string can hold without a closer look: printable ASCII other
 * than '"' and '\\'. */
static const unsigned char plain[256] = {
#define P16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
	P16(0), P16(0),
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20: '"' */
	P16(1), P16(1),
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50: '\\' */
	P16(1), P16(1),
	P16(0), P16(0), P16(0), P16(0), P16(0), P16(0), P16(0), P16(0),
#undef P16
};

/* Validates the UTF-8 sequence starting at *pi (lead byte >= 0x80), per
 * RFC 3629 (no overlongs, no surrogates, max U+10FFFF). */
static int utf8_seq(struct pctx *c, size_t *pi)
{
	const unsigned char *p = c->p;
	size_t i = *pi;
	unsigned b0 = p[i], need;
	unsigned lo = 0x80, hi = 0xBF;
	if (b0 >= 0xC2 && b0 <= 0xDF) {
		need = 1;
	} else if (b0 == 0xE0) {
		need = 2;
		lo = 0xA0;
	} else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) {
		need = 2;
	} else if (b0 == 0xED) {
		need = 2;
		hi = 0x9F;
	} else if (b0 == 0xF0) {
		need = 3;
		lo = 0x90;
	} else if (b0 >= 0xF1 && b0 <= 0xF3) {
		need = 3;
	} else if (b0 == 0xF4) {
		need = 3;
		hi = 0x8F;
	} else {
		return fail(c, i, PTW_ERR_FORMAT,
			    "invalid UTF-8: byte 0x%02x cannot start a character",
			    b0);
	}
	for (unsigned k = 1; k <= need; k++) {
		if (i + k >= c->n)
			return incomplete(c, "the rest of a UTF-8 character");
		unsigned b = p[i + k];
		unsigned l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
		if (b < l || b > h)
			return fail(c, i + k, PTW_ERR_FORMAT,
				    "invalid UTF-8: byte 0x%02x in a sequence "
				    "starting with 0x%02x", b, b0);
	}
	*pi = i + need + 1;
	return 0;
}

static int hex4(struct pctx *c, size_t i, unsigned *cp)
{
	unsigned v = 0;
	for (size_t k = 0; k < 4; k++) {
		if (i + k >= c->n)
			return incomplete(c, "4 hex digits after \\u");
		unsigned ch = c->p[i + k], d;
		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else
			return bad_byte(c, i + k, "a hex digit in a \\u escape");
		v = v * 16 + d;
	}
	*cp = v;
	return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xC0 | (cp >> 6));
		*o++ = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xE0 | (cp >> 12));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*o++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*o++ = (char)(0xF0 | (cp >> 18));
		*o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*o++ = (char)(0x80 | (cp & 0x3F));
	}
	return o;
}

/* Counts one lenient repair (trace_processor accepts what RFC 8259 does
 * not); the first one's place and kind are kept for the summary. */
static void repair(struct pctx *c, size_t at, const char *what)
{
	if (!c->repairs++) {
		c->repair_at = at;
		c->repair_what = what;
	}
}

/* Decodes an escape whose backslash is at p[*pi]; writes to *po. */
static int escape(struct pctx *c, size_t *pi, char **po)
{
	size_t i = *pi + 1;
	char *o = *po;
	if (i >= c->n)
		return incomplete(c, "an escape character after '\\'");
	switch (c->p[i]) {
	case '"': *o++ = '"'; break;
	case '\\': *o++ = '\\'; break;
	case '/': *o++ = '/'; break;
	case 'b': *o++ = '\b'; break;
	case 'f': *o++ = '\f'; break;
	case 'n': *o++ = '\n'; break;
	case 'r': *o++ = '\r'; break;
	case 't': *o++ = '\t'; break;
	case 'u': {
		unsigned cp, lo;
		int rc = hex4(c, i + 1, &cp);
		if (rc)
			return rc;
		i += 5;
		if (cp >= 0xDC00 && cp <= 0xDFFF)
			return fail(c, *pi, PTW_ERR_FORMAT,
				    "invalid \\u escape: unpaired low surrogate "
				    "\\u%04X", cp);
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (i >= c->n)
				return incomplete(c, "\\u and a low surrogate");
			if (c->p[i] != '\\')
				return fail(c, *pi, PTW_ERR_FORMAT,
					    "invalid \\u escape: high surrogate "
					    "\\u%04X not followed by a low one",
					    cp);
			if (i + 1 >= c->n)
				return incomplete(c, "\\u and a low surrogate");
			if (c->p[i + 1] != 'u')
				return fail(c, *pi, PTW_ERR_FORMAT,
					    "invalid \\u escape: high surrogate "
					    "\\u%04X not followed by a low one",
					    cp);
			rc = hex4(c, i + 2, &lo);
			if (rc)
				return rc;
			if (lo < 0xDC00 || lo > 0xDFFF)
				return fail(c, *pi, PTW_ERR_FORMAT,
					    "invalid \\u escape: high surrogate "
					    "\\u%04X followed by \\u%04X", cp, lo);
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			i += 6;
		}
		*po = put_utf8(o, cp);
		*pi = i;
		return 0;
	}
	default:
		if (c->lenient) {
			/* trace_processor's UnescapeString drops an unknown
			 * escape, backslash and character both */
			repair(c, *pi, "an unknown escape (dropped)");
			*pi = i + 1;
			return 0;
		}
		return bad_byte(c, i, "an escape character (one of \"\\/bfnrtu) "
				"after '\\'");
	}
	*po = o;
	*pi = i + 1;
	return 0;
}

/* A byte a strict string refuses at p[i] (a control character or the
 * start of invalid UTF-8), taken as it is in lenient mode, as
 * trace_processor's ScanString takes any byte but '"'. Returns 1 if it
 * was taken (then i moves past it), else 0. One repair per string. */
static int lenient_byte(struct pctx *c, size_t *pi, int *repaired)
{
	if (!c->lenient)
		return 0;
	size_t i = *pi;
	if (!*repaired) {
		*repaired = 1;
		repair(c, i, c->p[i] < 0x20 ? "a raw control character in a "
					       "string"
					     : "invalid UTF-8 in a string");
	}
	if (c->p[i] == '\n') {
		c->nl++; /* a raw LF: still a new line in the file */
		c->last_nl = i;
	}
	*pi = i + 1;
	return 1;
}

/* The error for the control character (or NUL) at p[i] in a string. */
static int bad_ctrl(struct pctx *c, size_t i)
{
	if (c->p[i] == 0)
		return fail(c, i, PTW_ERR_FORMAT, "NUL byte inside a string");
	return fail(c, i, PTW_ERR_FORMAT,
		    "unescaped control character 0x%02x inside a string",
		    c->p[i]);
}

/* The rest of the string from its first escape at p[i]: copies what was
 * scanned from 'start' into c->out, then decodes the escapes. */
static int parse_escaped_str(struct pctx *c, struct ptw_cv_str *out,
			     size_t start, size_t i, int repaired)
{
	const unsigned char *p = c->p;
	size_t n = c->n;
	int rc;
	char *o0 = c->out, *o = o0;
	memcpy(o, p + start, i - start);
	o += i - start;
	for (;;) {
		if (i >= n)
			return incomplete(c, "'\"' closing the string");
		unsigned ch = p[i];
		if (ch == '"') {
			out->p = o0;
			out->n = (size_t)(o - o0);
			c->out = o;
			c->i = i + 1;
			return 0;
		}
		if (ch == '\\') {
			if ((rc = escape(c, &i, &o)))
				return rc;
		} else if (ch < 0x20) {
			if (!lenient_byte(c, &i, &repaired))
				return bad_ctrl(c, i);
			*o++ = (char)ch;
		} else if (ch >= 0x80) {
			size_t s = i;
			if ((rc = utf8_seq(c, &i))) {
				if (rc != PTW_ERR_FORMAT ||
				    !lenient_byte(c, &i, &repaired))
					return rc;
			}
			memcpy(o, p + s, i - s);
			o += i - s;
		} else {
			*o++ = (char)ch;
			i++;
		}
	}
}

/* Parses the string whose opening quote is at c->i. A string without
 * escapes points into the input; one with escapes is decoded into
 * c->out. */
static int parse_str(struct pctx *c, struct ptw_cv_str *out)
{
	const unsigned char *p = c->p;
	size_t n = c->n;
	size_t start = c->i + 1, i = start;
	int rc, repaired = 0;
	for (;;) {
		/* Skip the bytes that need no closer look. */
#if defined(__SSE2__)
		/* 16 bytes at a time: '"', '\\', and (signed compare) bytes
		 * below 0x20 or above 0x7f */
		const __m128i quote = _mm_set1_epi8('"'),
			      bslash = _mm_set1_epi8('\\'),
			      space = _mm_set1_epi8(0x20);
		while (i + 16 <= n) {
			__m128i x = _mm_loadu_si128((const __m128i *)(p + i));
			__m128i hit = _mm_or_si128(
				_mm_or_si128(_mm_cmpeq_epi8(x, quote),
					     _mm_cmpeq_epi8(x, bslash)),
				_mm_cmplt_epi8(x, space));
			unsigned m = (unsigned)_mm_movemask_epi8(hit);
			if (m) {
				i += (size_t)__builtin_ctz(m);
				goto look;
			}
			i += 16;
		}
#endif
		while (i + 8 <= n) {
			uint64_t w, m;
			memcpy(&w, p + i, 8);
			if ((m = special_bytes(w) & HIGHS)) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				/* the lowest flagged byte is a real hit (the
				 * borrow tricks only over-flag above it);
				 * little-endian load: byte k is bits 8k.. */
				i += (size_t)__builtin_ctzll(m) >> 3;
				goto look;
#else
				break;
#endif
			}
			i += 8;
		}
		while (i < n && plain[p[i]])
			i++;
#if defined(__SSE2__) || \
	(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
	look:
#endif
		if (i >= n)
			return incomplete(c, "'\"' closing the string");
		unsigned ch = p[i];
		if (ch == '"') {
			out->p = (const char *)p + start;
			out->n = i - start;
			c->i = i + 1;
			return 0;
		}
		if (ch == '\\')
			return parse_escaped_str(c, out, start, i, repaired);
		if (ch < 0x20) {
			if (lenient_byte(c, &i, &repaired))
				continue;
			return bad_ctrl(c, i);
		}
		if ((rc = utf8_seq(c, &i))) {
			if (rc != PTW_ERR_FORMAT ||
			    !lenient_byte(c, &i, &repaired))
				return rc;
		}
	}
}

/* ---- the object member loop ----------------------------------------- */

/* The members of an event that mean something (others are validated and
 * ignored). */
enum key {
	K_OTHER, K_NAME, K_CAT, K_PH, K_PID, K_TID, K_TS, K_DUR, K_ARGS, K_ID,
	K_ID2, K_S, K_BP, K_BIND_ID, K_FLOW_IN, K_FLOW_OUT, K_TTS, K_TDUR,
	K_SF, K_ESF, K_STACK, K_ESTACK,
};

static int key_is(struct ptw_cv_str k, const char *lit, size_t len)
{
	return k.n == len && memcmp(k.p, lit, len) == 0;
}
#define KEY_IS(k, lit) key_is((k), lit, sizeof(lit) - 1)

/* A decoded member name's enum key. */
static enum key key_of(struct ptw_cv_str k)
{
	switch (k.n) {
	case 1: return k.p[0] == 's' ? K_S : K_OTHER;
	case 2:
		return KEY_IS(k, "ph") ? K_PH : KEY_IS(k, "ts") ? K_TS
		       : KEY_IS(k, "id") ? K_ID : KEY_IS(k, "bp") ? K_BP
		       : KEY_IS(k, "sf") ? K_SF : K_OTHER;
	case 3:
		return KEY_IS(k, "pid") ? K_PID : KEY_IS(k, "tid") ? K_TID
		       : KEY_IS(k, "cat") ? K_CAT : KEY_IS(k, "dur") ? K_DUR
		       : KEY_IS(k, "id2") ? K_ID2 : KEY_IS(k, "tts") ? K_TTS
		       : KEY_IS(k, "esf") ? K_ESF : K_OTHER;
	case 4:
		return KEY_IS(k, "name") ? K_NAME : KEY_IS(k, "args") ? K_ARGS
		       : KEY_IS(k, "tdur") ? K_TDUR : K_OTHER;
	case 5: return KEY_IS(k, "stack") ? K_STACK : K_OTHER;
	case 6: return KEY_IS(k, "estack") ? K_ESTACK : K_OTHER;
	case 7:
		return KEY_IS(k, "bind_id") ? K_BIND_ID
		       : KEY_IS(k, "flow_in") ? K_FLOW_IN : K_OTHER;
	case 8: return KEY_IS(k, "flow_out") ? K_FLOW_OUT : K_OTHER;
	default: return K_OTHER;
	}
}

/* The common member names written plainly and followed at once by ':'
 * ("ts": ...), at c->i (a '"' with at least 8 bytes from it): one small
 * constant memcmp each (the compiler turns it into loads and compares).
 * Returns the key and moves c->i past the ':', or K_OTHER and moves
 * nothing (the caller decodes the name the slow way). */
static inline enum key fast_key(struct pctx *c)
{
	const unsigned char *p = c->p + c->i;
#define FK(lit, k) \
	if (memcmp(p, lit, sizeof(lit) - 1) == 0) { \
		c->i += sizeof(lit) - 1; \
		return k; \
	}
	switch (p[1]) {
	case 'n': FK("\"name\":", K_NAME) break;
	case 'c': FK("\"cat\":", K_CAT) break;
	case 'p': FK("\"ph\":", K_PH) FK("\"pid\":", K_PID) break;
	case 't':
		FK("\"ts\":", K_TS) FK("\"tid\":", K_TID) FK("\"tts\":", K_TTS)
		FK("\"tdur\":", K_TDUR) break;
	case 'd': FK("\"dur\":", K_DUR) break;
	case 'a': FK("\"args\":", K_ARGS) break;
	case 'i': FK("\"id\":", K_ID) FK("\"id2\":", K_ID2) break;
	case 's': FK("\"s\":", K_S) break;
	default: break;
	}
#undef FK
	return K_OTHER;
}

#define MEMBERS_END 2 /* next_member(): the closing '}' was consumed */

#if defined(__GNUC__)
#define ALWAYS_INLINE __attribute__((always_inline))
#else
#define ALWAYS_INLINE
#endif

/* The member loop of every object (the event, "args", "id2" and skipped
 * ones), one call per member: the first with c->i at '{', later ones just
 * after the previous member's value. Returns 0 with the name decoded into
 * *k (its '"' at c->name_at) and c->i at the value, whitespace skipped;
 * MEMBERS_END once the closing '}' is consumed; or an error. With 'key'
 * (event members) it also sets *key; *k is then set only if the name took
 * the slow path (fast_key() found nothing). */
static inline ALWAYS_INLINE int next_member(struct pctx *c, int first,
					    struct ptw_cv_str *k, enum key *key)
{
	int rc;
	if (first) {
		c->i++; /* '{' */
		skip_ws(c);
		if (c->i >= c->n)
			return incomplete(c, "'\"' or '}'");
		if (c->p[c->i] == '}') {
			c->i++;
			return MEMBERS_END;
		}
	} else {
		skip_ws(c);
		if (c->i >= c->n)
			return incomplete(c, "',' or '}'");
		if (c->p[c->i] == '}') {
			c->i++;
			return MEMBERS_END;
		}
		if (c->p[c->i] != ',')
			return bad_byte(c, c->i, "',' or '}' after a member");
		c->i++;
		skip_ws(c);
		if (c->i >= c->n)
			return incomplete(c, "'\"' starting a member name");
		if (c->p[c->i] == '}' && c->lenient) {
			repair(c, c->i, "a trailing comma before '}'");
			c->i++;
			return MEMBERS_END;
		}
	}
	if (c->p[c->i] != '"')
		return bad_byte(c, c->i, "'\"' starting a member name");
	c->name_at = c->i;
	if (key && c->n - c->i >= 8 && (*key = fast_key(c)) != K_OTHER) {
		skip_ws(c);
		return 0;
	}
	if ((rc = parse_str(c, k)))
		return rc;
	if (key)
		*key = key_of(*k);
	skip_ws(c);
	if (c->i >= c->n)
		return incomplete(c, "':' after a member name");
	if (c->p[c->i] != ':')
		return bad_byte(c, c->i, "':' after a member name");
	c->i++;
	skip_ws(c);
	return 0;
}

/* ---- values ---------------------------------------------------------- */

/* Converts a validated number's text with strtod in the C locale (only
 * for a number trace_processor's own conversion cannot give, see
 * parse_num). */
static int slow_double(struct pctx *c, size_t s, size_t e, double *d)
{
	struct ptw_cv_json_parser *jp = c->jp;
	size_t len = e - s;
	char *nb = ptw_grow(jp->num, &jp->num_cap, len + 1, 64, 1);
	if (!nb)
		return fail(c, s, PTW_ERR_NOMEM, "out of memory");
	jp->num = nb;
	memcpy(jp->num, c->p + s, len);
	jp->num[len] = '\0';
	*d = strtod_l(jp->num, NULL, jp->c_locale);
	return 0;
}

/* trace_processor's int64 arithmetic on number text wraps around (signed
 * overflow, undefined in C++, is two's complement on the machines it
 * runs on); ours is done in uint64 and mapped back without overflow. */
static inline int64_t wrap_i64(uint64_t u)
{
	return u <= (uint64_t)INT64_MAX ? (int64_t)u
					: -(int64_t)(UINT64_MAX - u) - 1;
}

int ptw_cv_json_i_tp_double(const char *text, size_t n, double *out)
{
	/* trace_processor v58.2 util/json_parser.h StringToDouble, operation
	 * for operation (so every rounding is the same): the integer part
	 * as int64, the fraction as int64 fract_int / uint64 divisor (both
	 * wrap past 19 digits; divisor is 0 from 64 decimals on), then
	 * int_part + fraction, then * or / pow(10, exponent as an int64),
	 * inf or NaN rejected, the sign applied last. Not correctly rounded. */
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0;
	int neg = 0;
	if (i < n && p[i] == '-') {
		neg = 1;
		i++;
	}
	uint64_t int_part = 0;
	for (; i < n && IS_DIGIT(p[i]); i++)
		int_part = int_part * 10 + (unsigned)(p[i] - '0');
	double fraction = 0;
	if (i < n && p[i] == '.') {
		uint64_t fract_int = 0, divisor = 1;
		for (i++; i < n && IS_DIGIT(p[i]); i++) {
			fract_int = (unsigned)(p[i] - '0') + fract_int * 10;
			divisor *= 10;
		}
		fraction = (double)wrap_i64(fract_int) / (double)divisor;
	}
	uint64_t exponent_part = 0;
	int exp_neg = 0;
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			exp_neg = p[i++] == '-';
		for (; i < n && IS_DIGIT(p[i]); i++)
			exponent_part = exponent_part * 10 + (unsigned)(p[i] - '0');
	}
	double d = (double)wrap_i64(int_part) + fraction;
	int64_t e = wrap_i64(exponent_part);
	if (exp_neg)
		d /= pow(10, (double)e);
	else if (e > 0)
		d *= pow(10, (double)e);
	if (isinf(d) || isnan(d))
		return -1;
	*out = neg ? -d : d;
	return 0;
}

/* Parses a number at c->i (first byte '-' or a digit), with RFC 8259's
 * grammar, which is also trace_processor's (ParseNumber). Integers that
 * fit int64 become INT; everything else DOUBLE, with the value
 * trace_processor computes (ptw_cv_json_i_tp_double). If that is inf or
 * NaN (trace_processor rejects the number), v->tp_bad is set and the
 * value is strtod's. */
static int parse_num(struct pctx *c, struct val *v)
{
	const unsigned char *p = c->p;
	size_t n = c->n, s = c->i, i = s;
	int neg = 0;
	if (p[i] == '-') {
		neg = 1;
		if (++i >= n)
			return incomplete(c, "a digit after '-'");
	}
	if (p[i] < '0' || p[i] > '9')
		return bad_byte(c, i, "a digit after '-'");
	uint64_t m = 0;
	unsigned nd = 0;  /* significant digits accumulated in m */
	int drop = 0;     /* digits not accumulated (m would overflow) */
	if (p[i] == '0') {
		i++;
		if (i < n && p[i] >= '0' && p[i] <= '9')
			return fail(c, i, PTW_ERR_FORMAT,
				    "leading zeros are not allowed in numbers");
	} else {
		while (i < n && p[i] >= '0' && p[i] <= '9') {
			if (nd < 19) {
				m = m * 10 + (p[i] - '0');
				nd++;
			} else {
				drop = 1;
			}
			i++;
		}
	}
	int is_int = 1;
	if (i < n && p[i] == '.') {
		is_int = 0;
		if (++i >= n)
			return incomplete(c, "a digit after '.'");
		if (p[i] < '0' || p[i] > '9')
			return bad_byte(c, i, "a digit after '.'");
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		is_int = 0;
		if (++i >= n)
			return incomplete(c, "a digit or sign after the exponent mark");
		if (p[i] == '+' || p[i] == '-') {
			if (++i >= n)
				return incomplete(c, "a digit in the exponent");
		}
		if (p[i] < '0' || p[i] > '9')
			return bad_byte(c, i, "a digit in the exponent");
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	/* In JSON text a number is always followed by something (at least
	 * the '}' of its event): one that reaches the end of the window was
	 * cut by it and must not be read yet, whatever its digits say. */
	if (i == n && !c->num_text)
		return incomplete(c, "the rest of a number");
	c->i = i;
	v->raw.p = (const char *)p + s;
	v->raw.n = i - s;
	v->tp_bad = 0;
	v->int_overflow = 0;
	if (is_int && !drop) {
		/* m <= 9999999999999999999 < 2^64 */
		if (!neg && m <= (uint64_t)INT64_MAX) {
			v->t = PTW_CV_VAL_INT;
			v->i = (int64_t)m;
			return 0;
		}
		if (neg && m <= (uint64_t)INT64_MAX + 1) {
			v->t = PTW_CV_VAL_INT;
			v->i = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN
							    : -(int64_t)m;
			return 0;
		}
	}
	/* an integer beyond int64: trace_processor's StringToInt64 fails
	 * (leaving its parser's error status set) and it takes a double */
	v->int_overflow = (uint8_t)is_int;
	v->t = PTW_CV_VAL_DOUBLE;
	if (ptw_cv_json_i_tp_double(v->raw.p, v->raw.n, &v->d) == 0)
		return 0;
	v->tp_bad = 1;
	return slow_double(c, s, i, &v->d);
}

static int literal(struct pctx *c, const char *lit, size_t len)
{
	for (size_t k = 0; k < len; k++) {
		if (c->i + k >= c->n)
			return incomplete(c, "a literal (true, false or null)");
		if (c->p[c->i + k] != (unsigned char)lit[k])
			return bad_byte(c, c->i + k,
					"a value (object, array, string, number, "
					"true, false or null)");
	}
	c->i += len;
	return 0;
}

static int parse_value(struct pctx *c, unsigned depth, struct val *v);

/* Records at nesting level d (0: the outermost container of a skip)
 * whether that container is an object. */
static int nest_set(struct pctx *c, size_t d, int is_obj)
{
	struct ptw_cv_json_parser *jp = c->jp;
	size_t w = d / 64;
	if (w >= jp->nest_cap) {
		size_t old = jp->nest_cap;
		uint64_t *nb = ptw_grow(jp->nest, &jp->nest_cap, w + 1, 4,
					sizeof(*nb));
		if (!nb)
			return fail(c, c->i, PTW_ERR_NOMEM, "out of memory");
		memset(nb + old, 0, (jp->nest_cap - old) * sizeof(*nb));
		jp->nest = nb;
	}
	uint64_t bit = 1ull << (d % 64);
	jp->nest[w] = is_obj ? jp->nest[w] | bit : jp->nest[w] & ~bit;
	return 0;
}

static inline int nest_is_obj(const struct pctx *c, size_t d)
{
	return (int)((c->jp->nest[d / 64] >> (d % 64)) & 1);
}

/* Object or array at c->i, validated and skipped, without recursion and
 * at any depth (as trace_processor's parsers: a bit of parser memory per
 * level, which the event's size bounds). */
static int skip_container(struct pctx *c)
{
	size_t d = 0;  /* nesting level of the innermost open container */
	int first = 1; /* at its opener: no element read yet */
	struct val v;
	struct ptw_cv_str k;
	int rc;
	if ((rc = nest_set(c, 0, c->p[c->i] == '{')))
		return rc;
	for (;;) {
		if (nest_is_obj(c, d)) {
			rc = next_member(c, first, &k, NULL);
			if (rc && rc != MEMBERS_END)
				return rc;
		} else if (first) {
			c->i++; /* '[' */
			skip_ws(c);
			if (c->i >= c->n)
				return incomplete(c, "a value or ']'");
			rc = 0;
			if (c->p[c->i] == ']') {
				c->i++;
				rc = MEMBERS_END;
			}
		} else {
			skip_ws(c);
			if (c->i >= c->n)
				return incomplete(c, "',' or ']'");
			unsigned ch = c->p[c->i];
			if (ch != ']' && ch != ',')
				return bad_byte(c, c->i,
						"',' or ']' after an element");
			c->i++;
			rc = ch == ']' ? MEMBERS_END : 0;
			if (!rc) {
				skip_ws(c);
				if (c->i >= c->n)
					return incomplete(c, "a value");
				if (c->p[c->i] == ']' && c->lenient) {
					repair(c, c->i,
					       "a trailing comma before ']'");
					c->i++;
					rc = MEMBERS_END;
				}
			}
		}
		if (rc == MEMBERS_END) { /* the container at d is closed */
			if (d == 0)
				return 0;
			d--;
			first = 0;
			continue;
		}
		/* c->i at a value of the container at d */
		if (c->i < c->n && (c->p[c->i] == '{' || c->p[c->i] == '[')) {
			if ((rc = nest_set(c, ++d, c->p[c->i] == '{')))
				return rc;
			first = 1;
			continue;
		}
		if ((rc = parse_value(c, 0, &v)))
			return rc;
		first = 0;
	}
}

/* trace_processor's ScanToEndOfDelimitedBlock: the object or array at
 * 'from' ends at the closer that balances its opener, counting only that
 * pair of brackets and skipping strings (to the first '"' after an even
 * run of backslashes); nothing else is looked at. This is all its
 * tokenizer checks of an event member's object or array value. Counts
 * the block's LFs anew. Sets c->i past the closer, or returns
 * PTW_CV_JSON_INCOMPLETE. */
static int tp_scan_block(struct pctx *c, size_t from, uint64_t nl0,
			 size_t last_nl0)
{
	const unsigned char *p = c->p;
	unsigned char open = p[from], close = open == '{' ? '}' : ']';
	uint64_t bal = 1, nl = nl0;
	size_t last_nl = last_nl0;
	int in_str = 0;
	for (size_t i = from + 1; i < c->n; i++) {
		unsigned char ch = p[i];
		if (ch == '\n') {
			nl++;
			last_nl = i;
		}
		if (in_str) {
			if (ch == '\\' && i + 1 < c->n) {
				if (p[++i] == '\n') {
					nl++;
					last_nl = i;
				}
			} else if (ch == '"')
				in_str = 0;
		} else if (ch == '"') {
			in_str = 1;
		} else if (ch == open) {
			bal++;
		} else if (ch == close && --bal == 0) {
			c->i = i + 1;
			c->nl = nl;
			c->last_nl = last_nl;
			return 0;
		}
	}
	return incomplete(c, "the end of an object or array");
}

/* Lenient mode, after the strict parse of the event member's object or
 * array at 'from' failed with rc: if trace_processor's tokenizer takes
 * it (tp_scan_block), so do we, as a repair. */
static int tp_take_block(struct pctx *c, int rc, size_t from, uint64_t nl0,
			 size_t last_nl0)
{
	if (rc != PTW_ERR_FORMAT || !c->lenient)
		return rc;
	if ((rc = tp_scan_block(c, from, nl0, last_nl0)))
		return rc;
	repair(c, from, "an object or array trace_processor does not parse "
			"(kept as text)");
	return 0;
}

/* Any value at c->i (after whitespace). Objects and arrays are returned as
 * raw text (PTW_CV_VAL_JSON). 'depth' is the value's own depth. */
static int parse_value(struct pctx *c, unsigned depth, struct val *v)
{
	if (c->i >= c->n)
		return incomplete(c, "a value");
	size_t s = c->i;
	int rc;
	switch (c->p[s]) {
	case '"':
		v->t = PTW_CV_VAL_STRING;
		return parse_str(c, &v->s);
	case '{':
	case '[': {
		uint64_t nl0 = c->nl;
		size_t last_nl0 = c->last_nl;
		if ((rc = skip_container(c)) && depth == 2)
			rc = tp_take_block(c, rc, s, nl0, last_nl0);
		if (rc)
			return rc;
		v->t = PTW_CV_VAL_JSON;
		v->s.p = (const char *)c->p + s;
		v->s.n = c->i - s;
		return 0;
	}
	case 't':
		v->t = PTW_CV_VAL_BOOL;
		v->b = 1;
		return literal(c, "true", 4);
	case 'f':
		v->t = PTW_CV_VAL_BOOL;
		v->b = 0;
		return literal(c, "false", 5);
	case 'n':
		v->t = PTW_CV_VAL_NULL;
		return literal(c, "null", 4);
	case '-':
	case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return parse_num(c, v);
	default:
		return bad_byte(c, s, "a value (object, array, string, number, "
				"true, false or null)");
	}
}

/* ---- member semantics (trace_processor's coercions) ------------------ */

/* A number given as a JSON string ("12.5"): trace_processor's CoerceToTs
 * parses the string's (decoded) text with ParseValue, which must take
 * all of it as one number (no sign but '-', no spaces, no trailing
 * characters, no number it rejects). Returns 1 and fills *v, or 0. */
static int numeric_string(struct pctx *c, struct ptw_cv_str s, struct val *v)
{
	if (s.n == 0 || !(s.p[0] == '-' || (s.p[0] >= '0' && s.p[0] <= '9')))
		return 0;
	struct pctx sc = { .jp = c->jp, .p = (const unsigned char *)s.p,
			   .n = s.n, .i = 0, .out = NULL, .err = NULL,
			   .num_text = 1 };
	if (parse_num(&sc, v) != 0 || sc.i != s.n || v->tp_bad)
		return 0;
	return 1;
}

/* trace_processor's CoerceToTs (json_trace_tokenizer.cc) of microseconds
 * to nanoseconds. An int64: us * 1000, an int64 product that wraps
 * around past +-9.2e18 (two's complement; computed here in uint64). */
static inline int64_t int_us_to_ns(int64_t us)
{
	return wrap_i64((uint64_t)us * 1000u);
}

/* A double d: d == trunc(d) ? (int64_t)d * 1000 : llround(d * 1000.0).
 * An integral d beyond int64 converts (on x86-64, cvttsd2si) to INT64_MIN,
 * whose product wraps to 0; a non-integral d is below 2^52, so llround
 * always fits. */
static inline int64_t double_us_to_ns(double d)
{
	if (d == trunc(d)) {
		int64_t i = d >= -0x1p63 && d < 0x1p63 ? (int64_t)d : INT64_MIN;
		return int_us_to_ns(i);
	}
	return (int64_t)llround(d * 1000.0);
}

int64_t ptw_cv_json_i_tp_double_to_ns(double us)
{
	return double_us_to_ns(us);
}

/* ts/dur/tts/tdur: microseconds -> ns as CoerceToTs does. Returns 1, or
 * 0 where it fails: not a number, nor a string holding exactly one. */
static int to_ns(struct pctx *c, const struct val *v0, int64_t *ns)
{
	struct val tmp;
	const struct val *v = v0;
	if (v->t == PTW_CV_VAL_STRING) {
		if (!numeric_string(c, v->s, &tmp))
			return 0;
		v = &tmp;
	}
	if (v->t == PTW_CV_VAL_INT) {
		*ns = int_us_to_ns(v->i);
		return 1;
	}
	if (v->t == PTW_CV_VAL_DOUBLE && !v->tp_bad) {
		*ns = double_us_to_ns(v->d);
		return 1;
	}
	return 0;
}

/* pid/tid: trace_processor's CoerceToUint32: an int64 outside
 * [0, 2^32-1] is 0; a double is first truncated to int64 (beyond int64:
 * INT64_MIN, see double_us_to_ns), so (-1, 2^32) keeps its integer part.
 * Strings are kept as strings. */
static int to_u32(const struct val *v, uint32_t *out, struct ptw_cv_str *str,
		  uint32_t *flags, uint32_t has, uint32_t is_string)
{
	if (v->t == PTW_CV_VAL_INT) {
		*out = v->i >= 0 && v->i <= (int64_t)UINT32_MAX ? (uint32_t)v->i
								 : 0;
	} else if (v->t == PTW_CV_VAL_DOUBLE) {
		*out = v->d > -1.0 && v->d < 4294967296.0
			       ? (uint32_t)(int64_t)v->d
			       : 0;
	} else if (v->t == PTW_CV_VAL_STRING) {
		*out = 0;
		*str = v->s;
		*flags |= is_string;
	} else {
		return 0;
	}
	*flags |= has;
	return 1;
}

/* "42", "0x2a": the number an id string spells, if any. */
static uint64_t id_from_string(struct ptw_cv_str s)
{
	size_t i = 0;
	uint64_t v = 0;
	if (s.n > 2 && s.p[0] == '0' && (s.p[1] == 'x' || s.p[1] == 'X')) {
		if (s.n - 2 > 16)
			return 0;
		for (i = 2; i < s.n; i++) {
			char ch = s.p[i];
			unsigned d;
			if (ch >= '0' && ch <= '9')
				d = (unsigned)(ch - '0');
			else if (ch >= 'a' && ch <= 'f')
				d = (unsigned)(ch - 'a' + 10);
			else if (ch >= 'A' && ch <= 'F')
				d = (unsigned)(ch - 'A' + 10);
			else
				return 0;
			v = v * 16 + d;
		}
		return v;
	}
	if (s.n == 0 || s.n > 20)
		return 0;
	for (i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return 0;
		unsigned d = (unsigned)(s.p[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	return v;
}

/* "id" (or an "id2" member): a string, or an integral number that fits
 * int64, as trace_processor's tokenizer takes them; other types are not
 * an id. Returns 1 if the value was an id. */
static int set_id(struct ptw_cv_event *ev, const struct val *v, int local)
{
	uint32_t f = ev->flags & ~(PTW_CV_HAS_ID | PTW_CV_ID_IS_STRING |
				   PTW_CV_ID2_LOCAL | PTW_CV_ID_FROM_ID2);
	if (v->t == PTW_CV_VAL_INT) {
		ev->id_num = (uint64_t)v->i;
		ev->id_str.p = NULL;
		ev->id_str.n = 0;
	} else if (v->t == PTW_CV_VAL_STRING) {
		ev->id_num = id_from_string(v->s);
		ev->id_str = v->s;
		f |= PTW_CV_ID_IS_STRING;
	} else {
		return 0;
	}
	f |= PTW_CV_HAS_ID;
	if (local)
		f |= PTW_CV_ID2_LOCAL;
	ev->flags = f;
	return 1;
}

/* "args": each member in order into jp->args. trace_processor's args
 * parser (json_args.cc AddJsonValueToArgs) stops at the first value it
 * cannot parse and keeps the args before it: so do we at a number it
 * rejects, and in lenient mode at any text its tokenizer lets through
 * (tp_take_block). */
static int parse_args(struct pctx *c, struct ptw_cv_event *ev)
{
	struct ptw_cv_json_parser *jp = c->jp;
	size_t from = c->i, last_nl0 = c->last_nl;
	uint64_t nl0 = c->nl;
	uint32_t na = 0;
	int rc, stop = 0;
	struct ptw_cv_str k;
	struct val v;
	for (int first = 1;; first = 0) {
		if ((rc = next_member(c, first, &k, NULL))) {
			if (rc != MEMBERS_END)
				goto failed;
			break;
		}
		if ((rc = parse_value(c, 3, &v)))
			goto failed;
		if (v.t == PTW_CV_VAL_DOUBLE && v.tp_bad && c->tp)
			stop = 1;
		if (stop)
			continue;
		if (na == jp->args_cap) {
			struct ptw_cv_arg *nb = ptw_grow(jp->args, &jp->args_cap,
							 (size_t)na + 1, 64,
							 sizeof(*nb));
			if (!nb)
				return fail(c, c->name_at, PTW_ERR_NOMEM,
					    "out of memory");
			jp->args = nb;
		}
		struct ptw_cv_arg *a = &jp->args[na++];
		a->key = k;
		a->type = v.t;
		a->b = v.t == PTW_CV_VAL_BOOL ? v.b : 0;
		a->i = v.t == PTW_CV_VAL_INT ? v.i : 0;
		/* a double is already the one trace_processor's JSON import
		 * shows (and its C counters use), see parse_num */
		a->d = v.t == PTW_CV_VAL_INT      ? (double)v.i
		       : v.t == PTW_CV_VAL_DOUBLE ? v.d
						  : 0;
		if (v.t == PTW_CV_VAL_STRING || v.t == PTW_CV_VAL_JSON) {
			a->s = v.s;
		} else if (v.t == PTW_CV_VAL_INT || v.t == PTW_CV_VAL_DOUBLE) {
			a->s = v.raw; /* the number as written */
		} else {
			a->s.p = NULL;
			a->s.n = 0;
		}
	}
	ev->args = jp->args;
	ev->n_args = na;
	return 0;
failed:
	if ((rc = tp_take_block(c, rc, from, nl0, last_nl0)))
		return rc;
	ev->args = jp->args;
	ev->n_args = na;
	return 0;
}

/* An "id2" object: remembers its last "global" and "local" members (see
 * struct pctx); a member that is not an id (double, bool, null, object,
 * array) clears the earlier one, as ExtractId's nullopt does. In lenient
 * mode, text ParseId2 stops at keeps what came before (tp_take_block). */
static int parse_id2(struct pctx *c)
{
	size_t from = c->i, last_nl0 = c->last_nl;
	uint64_t nl0 = c->nl;
	int rc;
	struct ptw_cv_str k;
	struct val v;
	for (int first = 1;; first = 0) {
		if ((rc = next_member(c, first, &k, NULL)))
			break;
		if ((rc = parse_value(c, 3, &v)))
			break;
		int is_id = v.t == PTW_CV_VAL_STRING || v.t == PTW_CV_VAL_INT;
		struct val **slot = KEY_IS(k, "global") ? &c->id2_global
				    : KEY_IS(k, "local") ? &c->id2_local
							 : NULL;
		if (!slot)
			continue;
		struct val *keep = slot == &c->id2_global ? &c->jp->id2_vals[0]
							  : &c->jp->id2_vals[1];
		*keep = v;
		*slot = is_id ? keep : NULL;
	}
	return rc == MEMBERS_END ? 0
				 : tp_take_block(c, rc, from, nl0, last_nl0);
}

/* Sets a time member (already in ns). */
static inline void put_time(struct ptw_cv_event *ev, enum key key,
			    int64_t ns)
{
	switch (key) {
	case K_TS:
		ev->ts_ns = ns;
		ev->flags |= PTW_CV_HAS_TS;
		break;
	case K_DUR:
		ev->dur_ns = ns;
		ev->flags |= PTW_CV_HAS_DUR;
		break;
	case K_TTS:
		ev->tts_ns = ns;
		ev->flags |= PTW_CV_HAS_TTS;
		break;
	default:
		ev->tdur_ns = ns;
		ev->flags |= PTW_CV_HAS_TDUR;
		break;
	}
}

/* ts, dur, tts or tdur whose value 'v' (text from 'at' to c->i) is
 * parsed. A ts that CoerceToTs fails on is ignored (an earlier valid ts
 * stays, as in trace_processor; none: the event is dropped, except M).
 * A dur, tts or tdur it fails on makes ParseTraceEventContents return
 * false with its iterator's status OK, so HandleTraceEvent returns with
 * the event unconsumed, waiting for more input that never changes the
 * answer: the tokenizer stops there for good. In reader mode (c->tp)
 * that is PTW_CV_JSON_STOP, unless an integer beyond int64 came earlier
 * in the event: its StringToInt64 error is still in the iterator's
 * status, and trace_processor fails with it instead. Elsewhere the
 * member is left absent. */
static int set_time(struct pctx *c, enum key key, const struct val *v,
		    size_t at, struct ptw_cv_event *ev)
{
	int64_t ns;
	if (to_ns(c, v, &ns)) {
		put_time(ev, key, ns);
		return 0;
	}
	if (key == K_TS)
		return 0;
	const char *member = key == K_DUR ? "dur" : key == K_TTS ? "tts"
								 : "tdur";
	if (!c->tp) {
		ev->flags &= ~(key == K_DUR ? PTW_CV_HAS_DUR
			       : key == K_TTS ? PTW_CV_HAS_TTS
					      : PTW_CV_HAS_TDUR);
		return 0;
	}
	if (c->int_overflow)
		return fail(c, at, PTW_ERR_FORMAT,
			    "\"%s\" is not a number, after an integer beyond "
			    "int64 in the same event: trace_processor fails to "
			    "load the file here (its 'Integer overflow' error)",
			    member);
	c->stop_member = member;
	c->stop_at = at;
	c->stop_end = c->i;
	return PTW_CV_JSON_STOP;
}

/* After the event's members: "id2" gives the id when no valid "id" did,
 * global before local (json_trace_tokenizer.cc, the async cookie at the
 * end of ParseTraceEventContents). */
static void apply_id2(struct pctx *c, struct ptw_cv_event *ev)
{
	if (c->id_set)
		return;
	if (c->id2_global && set_id(ev, c->id2_global, 0))
		ev->flags |= PTW_CV_ID_FROM_ID2;
	else if (c->id2_local && set_id(ev, c->id2_local, 1))
		ev->flags |= PTW_CV_ID_FROM_ID2;
}

/* The event's callstack members, cleared on the first one of the event. */
static struct ptw_cv_stack_refs *stack_refs(struct pctx *c,
					    struct ptw_cv_event *ev)
{
	if (!ev->stacks) {
		memset(&c->jp->stk, 0, sizeof(c->jp->stk));
		ev->stacks = &c->jp->stk;
	}
	return &c->jp->stk;
}

/* A value's meaning for the event member 'key' (trace_processor's
 * coercions); 'v' was parsed by parse_value() from offset 'at'. Returns
 * 0, or PTW_CV_JSON_STOP / an error from set_time(). */
static int apply_member(struct pctx *c, enum key key, const struct val *v,
			size_t at, struct ptw_cv_event *ev)
{
	switch (key) {
	case K_S:
		/* json_trace_tokenizer.cc: "p", "t", "g" set the scope, a
		 * value that is not a string clears it, any other string
		 * leaves it as an earlier "s" of the event set it */
		if (v->t != PTW_CV_VAL_STRING)
			ev->scope = 0;
		else if (v->s.n == 1 && (v->s.p[0] == 't' || v->s.p[0] == 'p' ||
					 v->s.p[0] == 'g'))
			ev->scope = v->s.p[0];
		break;
	case K_PH:
		ev->ph = v->t == PTW_CV_VAL_STRING && v->s.n ? v->s.p[0] : 0;
		break;
	case K_TS:
	case K_DUR:
	case K_TTS:
	case K_TDUR:
		return set_time(c, key, v, at, ev);
	case K_ID:
		if (set_id(ev, v, 0))
			c->id_set = 1;
		break;
	case K_BP:
		ev->bp = v->t == PTW_CV_VAL_STRING && v->s.n == 1 &&
				 v->s.p[0] == 'e'
			 ? 'e'
			 : 0;
		break;
	case K_PID:
		ev->flags &= ~(PTW_CV_HAS_PID | PTW_CV_PID_IS_STRING);
		to_u32(v, &ev->pid, &ev->pid_str, &ev->flags, PTW_CV_HAS_PID,
		       PTW_CV_PID_IS_STRING);
		break;
	case K_TID:
		ev->flags &= ~(PTW_CV_HAS_TID | PTW_CV_TID_IS_STRING);
		to_u32(v, &ev->tid, &ev->tid_str, &ev->flags, PTW_CV_HAS_TID,
		       PTW_CV_TID_IS_STRING);
		break;
	case K_CAT:
		if (v->t == PTW_CV_VAL_STRING)
			ev->cat = v->s;
		else
			ev->cat.p = NULL, ev->cat.n = 0;
		break;
	case K_NAME:
		if (v->t == PTW_CV_VAL_STRING)
			ev->name = v->s;
		else
			ev->name.p = NULL, ev->name.n = 0;
		break;
	case K_ARGS:
		/* not an object: ignored (trace_processor keeps any earlier
		 * "args" object) */
		break;
	case K_BIND_ID:
		ev->flags &= ~PTW_CV_BIND_ID_IS_NUM;
		if (v->t == PTW_CV_VAL_STRING) {
			ev->bind_id = v->s;
			ev->flags |= PTW_CV_HAS_BIND_ID;
		} else if (v->t == PTW_CV_VAL_INT) {
			ev->bind_id = v->raw;
			ev->bind_num = (uint64_t)v->i;
			ev->flags |= PTW_CV_HAS_BIND_ID | PTW_CV_BIND_ID_IS_NUM;
		}
		break;
	case K_FLOW_IN:
		ev->flags &= ~PTW_CV_FLOW_IN;
		if (v->t == PTW_CV_VAL_BOOL && v->b)
			ev->flags |= PTW_CV_FLOW_IN;
		break;
	case K_FLOW_OUT:
		ev->flags &= ~PTW_CV_FLOW_OUT;
		if (v->t == PTW_CV_VAL_BOOL && v->b)
			ev->flags |= PTW_CV_FLOW_OUT;
		break;
	case K_SF:
	case K_ESF: {
		/* a stackFrames key: a string, or an integer as written */
		struct ptw_cv_stack_refs *k = stack_refs(c, ev);
		struct ptw_cv_str *f = key == K_SF ? &k->sf : &k->esf;
		f->p = NULL, f->n = 0;
		if (v->t == PTW_CV_VAL_STRING)
			*f = v->s;
		else if (v->t == PTW_CV_VAL_INT)
			*f = v->raw;
		if (f->p)
			ev->flags |= PTW_CV_HAS_STACK;
		break;
	}
	case K_STACK:
	case K_ESTACK: {
		struct ptw_cv_stack_refs *k = stack_refs(c, ev);
		struct ptw_cv_str *f = key == K_STACK ? &k->stack : &k->estack;
		f->p = NULL, f->n = 0;
		if (v->t == PTW_CV_VAL_JSON && v->s.n && v->s.p[0] == '[') {
			*f = v->s;
			ev->flags |= PTW_CV_HAS_STACK;
		}
		break;
	}
	case K_ID2:
	case K_OTHER:
		break;
	}
	return 0;
}

/* The common number of pid/tid: at most 17 digits, no sign, fraction,
 * exponent or leading zero, and a byte after it. Returns 1 with its value
 * and c->i past it; 0 (nothing moved) leaves it to parse_num(), which
 * also reports errors and the end of the text. */
static inline int fast_uint(struct pctx *c, uint64_t *out)
{
	const unsigned char *p = c->p;
	size_t s = c->i, i = s, end = c->n - s > 18 ? s + 18 : c->n;
	uint64_t v = 0;
	while (i < end && IS_DIGIT(p[i]))
		v = v * 10 + (unsigned)(p[i++] - '0');
	if (i == end || i == s || (p[s] == '0' && i > s + 1) || p[i] == '.' ||
	    p[i] == 'e' || p[i] == 'E')
		return 0;
	c->i = i;
	*out = v;
	return 1;
}

/* The common ts/dur/tts/tdur: a number as fast_uint() takes it (an int64
 * for trace_processor: us * 1000, wrapping as int_us_to_ns does), or one
 * with up to 15 integer digits and 1 to 3 decimals ("1234.125") whose
 * exact value in ns, N, is below 2^50. trace_processor computes
 * d = I + F / 10^k (the fraction rounded once, the sum once), then
 * llround(d * 1000.0) unless F == 0 (then I * 1000 = N exactly). With
 * d < 2^40 the sum errs by at most 2^-13 + 2^-53, so d * 1000 by 0.123,
 * and rounding that product (below 2^50) adds at most 0.125: llround
 * gives N. (test_chrome_json_parse.c checks this against the reference
 * algorithm.) Returns 1 with *ns and c->i past the number, or 0 as
 * fast_uint() does. */
static inline int fast_us(struct pctx *c, int64_t *ns)
{
	const unsigned char *p = c->p;
	size_t s = c->i, n = c->n, i = s, end = n - s > 18 ? s + 18 : n;
	uint64_t v = 0, scale = 1000;
	while (i < end && IS_DIGIT(p[i]))
		v = v * 10 + (unsigned)(p[i++] - '0');
	if (i == end || i == s || (p[s] == '0' && i > s + 1) || p[i] == 'e' ||
	    p[i] == 'E')
		return 0;
	if (p[i] != '.') {
		c->i = i;
		*ns = int_us_to_ns((int64_t)v); /* v < 10^17 */
		return 1;
	}
	size_t f = ++i; /* the first decimal */
	if (f - s > 16)
		return 0;
	while (i < n && i - f < 3 && IS_DIGIT(p[i])) {
		v = v * 10 + (unsigned)(p[i++] - '0');
		scale /= 10;
	}
	if (i == f || i >= n || IS_DIGIT(p[i]) || p[i] == 'e' || p[i] == 'E' ||
	    v * scale >= (1ull << 50))
		return 0;
	c->i = i;
	*ns = (int64_t)(v * scale);
	return 1;
}

/* One member of the event, c->i at its value: the common shapes of the
 * common members directly, everything else through parse_value(). */
static int event_member(struct pctx *c, enum key key, struct ptw_cv_event *ev)
{
	struct val v;
	uint64_t u;
	int64_t ns;
	int rc;
	if (c->i >= c->n)
		return incomplete(c, "a value");
	size_t at = c->i;
	const unsigned char *p = c->p + at;
	switch (key) {
	case K_NAME:
		if (p[0] == '"')
			return parse_str(c, &ev->name);
		break;
	case K_CAT:
		if (p[0] == '"')
			return parse_str(c, &ev->cat);
		break;
	case K_PH: /* "B": a plain byte between quotes */
		if (p[0] == '"' && c->n - c->i >= 3 && plain[p[1]] &&
		    p[2] == '"') {
			ev->ph = (char)p[1];
			c->i += 3;
			return 0;
		}
		break;
	case K_TS:
	case K_DUR:
	case K_TTS:
	case K_TDUR:
		if (fast_us(c, &ns)) {
			put_time(ev, key, ns);
			return 0;
		}
		break;
	case K_PID:
		if (fast_uint(c, &u)) {
			ev->flags &= ~PTW_CV_PID_IS_STRING;
			ev->flags |= PTW_CV_HAS_PID;
			ev->pid = u <= UINT32_MAX ? (uint32_t)u : 0;
			return 0;
		}
		break;
	case K_TID:
		if (fast_uint(c, &u)) {
			ev->flags &= ~PTW_CV_TID_IS_STRING;
			ev->flags |= PTW_CV_HAS_TID;
			ev->tid = u <= UINT32_MAX ? (uint32_t)u : 0;
			return 0;
		}
		break;
	case K_ARGS:
		if (p[0] == '{') {
			ev->n_args = 0;
			return parse_args(c, ev);
		}
		break;
	case K_ID2:
		if (p[0] == '{')
			return parse_id2(c);
		break;
	default:
		break;
	}
	v.tp_bad = 0;
	v.int_overflow = 0;
	if ((rc = parse_value(c, 2, &v)))
		return rc;
	if (v.t == PTW_CV_VAL_DOUBLE) {
		/* trace_processor's tokenizer parses every member's number */
		if (v.tp_bad && c->tp)
			return fail(c, at, PTW_ERR_FORMAT,
				    "number %.*s: trace_processor's parser makes "
				    "it infinite or NaN and fails to load the "
				    "file here", (int)(v.raw.n > 40 ? 40 : v.raw.n),
				    v.raw.p);
		c->int_overflow |= v.int_overflow;
	}
	return apply_member(c, key, &v, at, ev);
}

/* The event object at c->i (which holds '{'). */
static int parse_event(struct pctx *c, struct ptw_cv_event *ev)
{
	static const struct ptw_cv_event zero_ev;
	struct ptw_cv_str k;
	enum key key = K_OTHER;
	int rc;
	*ev = zero_ev; /* vector moves; memset compiled to a slow rep stos */
	c->id2_global = c->id2_local = NULL;
	for (int first = 1;; first = 0) {
		if ((rc = next_member(c, first, &k, &key))) {
			if (rc != MEMBERS_END)
				return rc;
			if (__builtin_expect(c->id2_global || c->id2_local, 0))
				apply_id2(c, ev);
			return 0;
		}
		if ((rc = event_member(c, key, ev)))
			return rc;
	}
}

/* ---- API ------------------------------------------------------------- */

struct ptw_cv_json_parser *ptw_cv_json_parser_create(struct ptw_error *err)
{
	struct ptw_cv_json_parser *jp = calloc(1, sizeof(*jp));
	if (!jp) {
		ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	jp->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (jp->c_locale == (locale_t)0) {
		free(jp);
		ptw_error_set(err, PTW_ERR_NOMEM, errno,
			      "cannot create the C locale");
		return NULL;
	}
	return jp;
}

void ptw_cv_json_parser_destroy(struct ptw_cv_json_parser *jp)
{
	if (!jp)
		return;
	free(jp->scratch);
	free(jp->num);
	free(jp->args);
	free(jp->nest);
	freelocale(jp->c_locale);
	free(jp);
}

/* Makes the scratch buffer hold at least n bytes (decoded strings of an
 * n-byte text never exceed n bytes). */
static int reserve_scratch(struct ptw_cv_json_parser *jp, size_t n,
			   struct ptw_error *err)
{
	if (n <= jp->scratch_cap && jp->scratch)
		return 0;
	size_t cap = jp->scratch_cap ? jp->scratch_cap : 4096;
	while (cap < n) {
		if (cap > SIZE_MAX / 2)
			return ptw_error_set(err, PTW_ERR_NOMEM, 0,
					     "out of memory");
		cap *= 2;
	}
	char *nb = malloc(cap);
	if (!nb)
		return ptw_error_set(err, PTW_ERR_NOMEM, 0, "out of memory");
	free(jp->scratch);
	jp->scratch = nb;
	jp->scratch_cap = cap;
	return 0;
}

/* What the caller may want to know about the parse that just ended
 * (copied only when there is something to say: this runs per event). */
static inline void keep_info(struct ptw_cv_json_parser *jp,
			     const struct pctx *c, int rc)
{
	if (!c->repairs && rc != PTW_CV_JSON_STOP) {
		jp->info.repairs = 0;
		return;
	}
	jp->info.repairs = c->repairs;
	jp->info.repair_at = c->repair_at;
	jp->info.repair_what = c->repair_what;
	jp->info.stop_member = c->stop_member;
	jp->info.stop_at = c->stop_at;
	jp->info.stop_end = c->stop_end;
}

/* Sets up a parse of p[0, n) that must begin with 'open' (what: its
 * description for the messages). */
static int start(struct pctx *c, struct ptw_cv_json_parser *jp, const char *p,
		 size_t n, char open, const char *what, struct ptw_error *err)
{
	int rc = reserve_scratch(jp, n, err);
	if (rc) {
		c->repairs = 0; /* all keep_info() reads then */
		return rc;
	}
	/* field by field: zeroing the whole struct costs per event */
	c->jp = jp;
	c->p = (const unsigned char *)p;
	c->n = n;
	c->i = 0;
	c->out = jp->scratch;
	c->err = err;
	c->id_set = 0;
	c->nl = 0;
	c->last_nl = 0;
	c->lenient = jp->lenient;
	c->tp = jp->tp;
	c->int_overflow = 0;
	c->repairs = 0;
	c->num_text = 0;
	if (n == 0)
		return incomplete(c, what);
	if (p[0] != open)
		return bad_byte(c, 0, what);
	return 0;
}

int ptw_cv_json_i_parse_event(struct ptw_cv_json_parser *jp, const char *p,
			      size_t n, size_t *end, struct ptw_cv_event *ev,
			      struct ptw_error *err)
{
	struct pctx c;
	int rc = start(&c, jp, p, n, '{', "'{' starting an event object", err);
	if (!rc)
		rc = parse_event(&c, ev);
	keep_info(jp, &c, rc);
	if (rc)
		return rc;
	*end = c.i;
	jp->lines.nl = c.nl;
	jp->lines.last_nl = c.last_nl;
	jp->lines.repairs = c.repairs;
	return 0;
}

const struct ptw_cv_json_info *
ptw_cv_json_i_info(const struct ptw_cv_json_parser *jp)
{
	return &jp->info;
}

void ptw_cv_json_i_set_mode(struct ptw_cv_json_parser *jp, int lenient,
			    int tp)
{
	jp->lenient = lenient != 0;
	jp->tp = tp != 0;
}

const struct ptw_cv_json_lines *
ptw_cv_json_i_lines(const struct ptw_cv_json_parser *jp)
{
	return &jp->lines;
}

int ptw_cv_json_i_parse_string(struct ptw_cv_json_parser *jp, const char *p,
			       size_t n, size_t *end, struct ptw_cv_str *out,
			       struct ptw_error *err)
{
	struct pctx c;
	int rc = start(&c, jp, p, n, '"', "'\"' starting a string", err);
	if (!rc)
		rc = parse_str(&c, out);
	keep_info(jp, &c, rc);
	if (rc)
		return rc;
	*end = c.i;
	return 0;
}

int ptw_cv_json_parse_object(struct ptw_cv_json_parser *jp, const char *p,
			     size_t n, struct ptw_cv_event *ev,
			     struct ptw_error *err)
{
	if (!jp || !ev || (!p && n))
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_cv_json_parse_object: NULL argument");
	int rc = reserve_scratch(jp, n, err);
	if (rc)
		return rc;
	static const char empty = 0;
	struct pctx c = { .jp = jp, .p = (const unsigned char *)(p ? p : &empty),
			  .n = n, .i = 0, .out = jp->scratch, .err = err };
	skip_ws(&c);
	if (c.i >= n) {
		incomplete(&c, "'{' starting an object");
		return PTW_ERR_FORMAT;
	}
	if (c.p[c.i] != '{')
		return bad_byte(&c, c.i, "'{' starting an object");
	rc = parse_event(&c, ev);
	if (rc == PTW_CV_JSON_INCOMPLETE)
		return PTW_ERR_FORMAT;
	if (rc)
		return rc;
	skip_ws(&c);
	if (c.i < n)
		return bad_byte(&c, c.i, "the end of the text after the object");
	return 0;
}

static uint32_t clamp_u32(uint64_t v)
{
	return (uint32_t)(v > UINT32_MAX ? UINT32_MAX : v);
}

void ptw_cv_json_i_error_at(struct ptw_error *err, int replace,
			    const char *input, uint64_t line, uint64_t col,
			    uint64_t off)
{
	if (!err)
		return;
	char *m = err->msg;
	m[sizeof(err->msg) - 1] = '\0'; /* a caller's record may be garbage */
	if (replace && strncmp(m, "byte ", 5) == 0) {
		const char *colon = strstr(m, ": ");
		if (colon)
			memmove(m, colon + 2, strlen(colon + 2) + 1);
	}
	char pre[PTW_ERROR_MSG_MAX];
	int k;
	if (input && line)
		k = snprintf(pre, sizeof(pre), "%s:%llu:%llu (byte %llu): ",
			     input, (unsigned long long)line,
			     (unsigned long long)col, (unsigned long long)off);
	else if (input)
		k = snprintf(pre, sizeof(pre), "%s (byte %llu): ", input,
			     (unsigned long long)off);
	else
		k = snprintf(pre, sizeof(pre), "byte %llu: ",
			     (unsigned long long)off);
	size_t pl = k < 0 ? 0 : strlen(pre), ml = strlen(m);
	if (pl + ml > sizeof(err->msg) - 1)
		ml = sizeof(err->msg) - 1 - pl;
	memmove(m + pl, m, ml);
	memcpy(m, pre, pl);
	m[pl + ml] = '\0';
	err->input = input;
	err->line = clamp_u32(line);
	err->column = clamp_u32(col);
	err->offset = off;
}

void ptw_cv_json_error_locate(struct ptw_error *err, const char *input,
			      uint32_t line, uint64_t base_offset)
{
	if (!err)
		return;
	err->sys_errno = 0;
	ptw_cv_json_i_error_at(err, 1, input, line,
			       clamp_u32(err->offset + 1),
			       base_offset + err->offset);
}

/* ---- walks of nested values ------------------------------------------- */

int ptw_cv_json_walk_start(struct ptw_cv_json_parser *jp,
			   struct ptw_cv_json_walk *w, const char *p,
			   size_t n)
{
	if (n == 0 || (p[0] != '{' && p[0] != '['))
		return PTW_ERR_FORMAT;
	if (reserve_scratch(jp, n, NULL))
		return PTW_ERR_NOMEM;
	*w = (struct ptw_cv_json_walk){ .jp = jp, .p = p, .n = n,
					.base = jp->scratch,
					.out = jp->scratch,
					.is_obj = p[0] == '{', .first = 1 };
	return 0;
}

void ptw_cv_json_walk_child(const struct ptw_cv_json_walk *parent,
			    struct ptw_cv_json_walk *w,
			    const struct ptw_cv_arg *a)
{
	/* The child decodes after what the parent's last value holds; the
	 * keys on the path are disjoint parts of the text, so the whole
	 * tree fits the n bytes of scratch. */
	*w = (struct ptw_cv_json_walk){ .jp = parent->jp, .p = a->s.p,
					.n = a->s.n, .base = parent->out,
					.out = parent->out,
					.is_obj = a->s.p[0] == '{',
					.first = 1 };
}

/* The next array element at c->i ('[' when first): 0, or MEMBERS_END
 * after the closing ']'. */
static int next_element(struct pctx *c, int first)
{
	c->i++; /* '[' or ',' */
	skip_ws(c);
	if (c->i >= c->n)
		return incomplete(c, "a value or ']'");
	if (c->p[c->i] == ']') {
		if (!first)
			return bad_byte(c, c->i, "a value");
		c->i++;
		return MEMBERS_END;
	}
	return 0;
}

/* After an element: at ',' (more) or past ']' (MEMBERS_END). */
static int after_element(struct pctx *c)
{
	skip_ws(c);
	if (c->i >= c->n)
		return incomplete(c, "',' or ']'");
	if (c->p[c->i] == ']') {
		c->i++;
		return MEMBERS_END;
	}
	if (c->p[c->i] != ',')
		return bad_byte(c, c->i, "',' or ']' after an element");
	return 0;
}

int ptw_cv_json_walk_next(struct ptw_cv_json_walk *w, struct ptw_cv_arg *a)
{
	if (w->first < 0)
		return 0; /* ended */
	struct pctx c = { .jp = w->jp, .p = (const unsigned char *)w->p,
			  .n = w->n, .i = w->i, .out = w->base, .err = NULL };
	struct val v;
	int rc;
	a->key.p = NULL;
	a->key.n = 0;
	if (w->is_obj) {
		rc = next_member(&c, w->first, &a->key, NULL);
	} else {
		if (!w->first && (rc = after_element(&c)) != 0)
			goto out;
		rc = next_element(&c, w->first);
	}
	if (rc)
		goto out;
	char *after_key = c.out;
	if ((rc = parse_value(&c, 0, &v)))
		goto out;
	if (v.t == PTW_CV_VAL_JSON)
		c.out = after_key; /* what skipping decoded is not needed */
	a->type = v.t;
	a->b = v.t == PTW_CV_VAL_BOOL ? v.b : 0;
	a->i = v.t == PTW_CV_VAL_INT ? v.i : 0;
	a->d = 0;
	a->s.p = NULL;
	a->s.n = 0;
	if (v.t == PTW_CV_VAL_DOUBLE) {
		a->d = v.d; /* trace_processor's double, see parse_num */
		a->s = v.raw;
	} else if (v.t == PTW_CV_VAL_INT) {
		a->d = (double)v.i;
		a->s = v.raw;
	} else if (v.t == PTW_CV_VAL_STRING || v.t == PTW_CV_VAL_JSON) {
		a->s = v.s;
	}
	w->first = 0;
	w->i = c.i;
	w->out = c.out;
	return 1;
out:
	w->first = -1;
	if (rc == MEMBERS_END)
		return 0;
	return rc == PTW_CV_JSON_INCOMPLETE ? PTW_ERR_FORMAT : rc;
}
