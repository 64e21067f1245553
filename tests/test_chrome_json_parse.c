/* test_chrome_json_parse.c - the strict per-object JSON event parser:
 * member semantics (units, coercions, ids, args) and invalid-text detection
 * with positions (rule 4 of AppleTrace text lines).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/chrome_json/json_internal.h"

static struct ptw_cv_json_parser *jp;

static void setup(void)
{
	struct ptw_error err;
	jp = ptw_cv_json_parser_create(&err);
	cr_assert_not_null(jp);
}

static void teardown(void)
{
	ptw_cv_json_parser_destroy(jp);
}

TestSuite(json_parse, .init = setup, .fini = teardown);

static struct ptw_cv_event parse_ok(const char *s)
{
	struct ptw_cv_event ev;
	struct ptw_error err = { 0 };
	int rc = ptw_cv_json_parse_object(jp, s, strlen(s), &ev, &err);
	cr_assert_eq(rc, 0, "parse of %s failed: %s", s, err.msg);
	return ev;
}

static int str_is(struct ptw_cv_str s, const char *want)
{
	return s.p && s.n == strlen(want) && memcmp(s.p, want, s.n) == 0;
}

/* ---- trace_processor's number conversion, transcribed ----------------
 * An independent, line-by-line transcription of trace_processor v58.2's
 * util/json_parser.h (StringToInt64, StringToDouble, ParseNumber) and
 * json_trace_tokenizer.cc CoerceToTs, to check the parser (its fast
 * paths and its general path) against. Its int64 arithmetic wraps on the
 * machines it runs on: done here in uint64. */

static int64_t ref_wrap(uint64_t u)
{
	int64_t v;
	memcpy(&v, &u, sizeof(v)); /* two's complement */
	return v;
}

/* StringToDouble: [start, end) is a valid JSON number. */
static int ref_string_to_double(const char *start, size_t n, double *out)
{
	const char *cur = start, *end = start + n;
	int negative = 0;
	if (*cur == '-') {
		negative = 1;
		++cur;
	}
	uint64_t int_part = 0;
	for (; cur != end && *cur >= '0' && *cur <= '9'; ++cur)
		int_part = int_part * 10 + (uint64_t)(*cur - '0');
	double fraction = 0;
	if (cur != end && *cur == '.') {
		++cur;
		uint64_t fract_int = 0, divisor = 1;
		for (; cur != end && *cur >= '0' && *cur <= '9'; ++cur) {
			fract_int = (uint64_t)(*cur - '0') + fract_int * 10;
			divisor *= 10;
		}
		fraction = (double)ref_wrap(fract_int) / (double)divisor;
	}
	uint64_t exponent_part = 0;
	int exp_neg = 0;
	if (cur != end && (*cur == 'e' || *cur == 'E')) {
		++cur;
		if (cur != end && (*cur == '+' || *cur == '-'))
			exp_neg = *cur++ == '-';
		for (; cur != end && *cur >= '0' && *cur <= '9'; ++cur)
			exponent_part = exponent_part * 10 + (uint64_t)(*cur - '0');
	}
	*out = (double)ref_wrap(int_part) + fraction;
	if (exp_neg)
		*out /= pow(10, (double)ref_wrap(exponent_part));
	else if (ref_wrap(exponent_part) > 0)
		*out *= pow(10, (double)ref_wrap(exponent_part));
	if (isinf(*out) || isnan(*out))
		return -1;
	*out = negative ? -*out : *out;
	return 0;
}

/* CoerceToTs of a number's text: 1 with *ns, or 0 (trace_processor
 * rejects the number). ParseNumber: no '.' or 'e' and StringToInt64
 * fits -> int64 * 1000; else a double. */
static int ref_ts_ns(const char *text, int64_t *ns)
{
	size_t n = strlen(text);
	if (!strpbrk(text, ".eE")) {
		__int128 v = 0;
		const char *d = text + (text[0] == '-');
		for (; *d; d++)
			if ((v = v * 10 + (*d - '0')) > (__int128)INT64_MAX + 1)
				break;
		if (text[0] == '-')
			v = -v;
		if (!*d && v >= INT64_MIN && v <= INT64_MAX) {
			*ns = ref_wrap((uint64_t)(int64_t)v * 1000u);
			return 1;
		}
	}
	double d;
	if (ref_string_to_double(text, n, &d))
		return 0;
	if (d == trunc(d)) {
		/* static_cast<int64_t>: cvttsd2si, INT64_MIN out of range */
		int64_t i = d >= -0x1p63 && d < 0x1p63 ? (int64_t)d : INT64_MIN;
		*ns = ref_wrap((uint64_t)i * 1000u);
	} else {
		*ns = (int64_t)llround(d * 1000.0);
	}
	return 1;
}

/* Parses n bytes expecting failure with 'code' at 'offset' and a message
 * containing 'needle'. */
static void parse_bad_n(const char *s, size_t n, int code, size_t offset,
			const char *needle)
{
	struct ptw_cv_event ev;
	struct ptw_error err = { 0 };
	int rc = ptw_cv_json_parse_object(jp, s, n, &ev, &err);
	cr_assert_eq(rc, code, "'%.*s': rc %d, want %d (%s)", (int)n, s, rc,
		     code, err.msg);
	cr_assert_eq(err.code, code);
	cr_assert_eq(err.offset, offset, "'%.*s': offset %llu, want %zu (%s)",
		     (int)n, s, (unsigned long long)err.offset, offset, err.msg);
	cr_assert_eq(err.column, offset + 1);
	cr_assert(strstr(err.msg, needle), "'%.*s': message '%s' lacks '%s'",
		  (int)n, s, err.msg, needle);
}

static void parse_bad(const char *s, size_t offset, const char *needle)
{
	parse_bad_n(s, strlen(s), PTW_ERR_FORMAT, offset, needle);
}

Test(json_parse, appletrace_line_members)
{
	struct ptw_cv_event ev = parse_ok(
		"{\"name\":\"[AppDelegate]myTest\",\"cat\":\"catname\",\"ph\":\"B\","
		"\"pid\":666,\"tid\":577811,\"ts\":662}");
	cr_assert(str_is(ev.name, "[AppDelegate]myTest"));
	cr_assert(str_is(ev.cat, "catname"));
	cr_assert_eq(ev.ph, 'B');
	cr_assert_eq(ev.pid, 666);
	cr_assert_eq(ev.tid, 577811);
	cr_assert_eq(ev.ts_ns, 662000);
	cr_assert_eq(ev.flags, PTW_CV_HAS_PID | PTW_CV_HAS_TID | PTW_CV_HAS_TS);
	cr_assert_eq(ev.n_args, 0);
	cr_assert_null(ev.input);
	cr_assert_eq(ev.line, 0);
	cr_assert_eq(ev.scope, 0);
	cr_assert_eq(ev.bp, 0);
}

Test(json_parse, absent_members_stay_absent)
{
	struct ptw_cv_event ev = parse_ok("{}");
	cr_assert_null(ev.name.p);
	cr_assert_null(ev.cat.p);
	cr_assert_eq(ev.ph, 0);
	cr_assert_eq(ev.flags, 0);
	ev = parse_ok(" \t\r\n{ }\n ");
	cr_assert_eq(ev.flags, 0);
	/* non-string name/cat/ph are treated as absent */
	ev = parse_ok("{\"name\":1,\"cat\":null,\"ph\":true,\"pid\":[1],"
		      "\"tid\":{},\"ts\":false}");
	cr_assert_null(ev.name.p);
	cr_assert_null(ev.cat.p);
	cr_assert_eq(ev.ph, 0);
	cr_assert_eq(ev.flags, 0);
}

Test(json_parse, ts_and_dur_to_nanoseconds)
{
	struct ptw_cv_event ev = parse_ok("{\"ts\":1000.125,\"dur\":10.5}");
	cr_assert_eq(ev.ts_ns, 1000125);
	cr_assert_eq(ev.dur_ns, 10500);
	cr_assert_eq(ev.flags, PTW_CV_HAS_TS | PTW_CV_HAS_DUR);
	ev = parse_ok("{\"ts\":1122.125}");
	cr_assert_eq(ev.ts_ns, 1122125);
	ev = parse_ok("{\"ts\":0.0005}"); /* llround(0.5) rounds away from 0 */
	cr_assert_eq(ev.ts_ns, llround(0.0005 * 1000.0));
	ev = parse_ok("{\"ts\":1.0004}");
	cr_assert_eq(ev.ts_ns, 1000);
	ev = parse_ok("{\"ts\":-5}");
	cr_assert_eq(ev.ts_ns, -5000);
	ev = parse_ok("{\"ts\":1e3}");
	cr_assert_eq(ev.ts_ns, 1000000);
	ev = parse_ok("{\"ts\":1.5E-3}");
	cr_assert_eq(ev.ts_ns, 2); /* llround(1.5) */
	ev = parse_ok("{\"ts\":123456789012.345678}");
	cr_assert_eq(ev.ts_ns, llround(123456789012.345678 * 1000.0));
	ev = parse_ok("{\"ts\":9223372036854775}"); /* largest that fits */
	cr_assert_eq(ev.ts_ns, 9223372036854775000LL);
	/* numeric strings are numbers, as trace_processor reads them */
	ev = parse_ok("{\"ts\":\"12.5\",\"dur\":\"7\"}");
	cr_assert_eq(ev.ts_ns, 12500);
	cr_assert_eq(ev.dur_ns, 7000);
	cr_assert_eq(ev.flags, PTW_CV_HAS_TS | PTW_CV_HAS_DUR);
	/* not numbers: the flag stays clear (the reader, in
	 * trace_processor mode, stops at such a dur: test_chrome_json_read) */
	ev = parse_ok("{\"ts\":\"abc\",\"dur\":\"12x\"}");
	cr_assert_eq(ev.flags, 0);
	ev = parse_ok("{\"ts\":null,\"dur\":\" 1\"}");
	cr_assert_eq(ev.flags, 0);
	/* out of range: CoerceToTs's int64 product wraps (json_trace_
	 * tokenizer.cc: value * 1000), and a double beyond int64 converts
	 * to INT64_MIN (x86-64 cvttsd2si), whose product wraps to 0 */
	ev = parse_ok("{\"ts\":9223372036854776,\"dur\":1e300}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_TS | PTW_CV_HAS_DUR);
	cr_assert_eq(ev.ts_ns, (int64_t)(9223372036854776000ull -
					 18446744073709551615ull - 1));
	cr_assert_eq(ev.dur_ns, 0);
	/* a ts CoerceToTs fails on leaves an earlier one (ParseTraceEvent-
	 * Contents: "On failure, ts remains" what it was); a later valid
	 * one wins */
	ev = parse_ok("{\"ts\":1,\"ts\":\"bad\"}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_TS);
	cr_assert_eq(ev.ts_ns, 1000);
	ev = parse_ok("{\"ts\":\"bad\",\"ts\":2}");
	cr_assert_eq(ev.ts_ns, 2000);
}

/* {"ts":X,"dur":X} (fast paths for plain numbers) and {"ts":"X","dur":"X"}
 * (numeric strings: always the general number path) must agree, and so
 * must "pid":X and "pid":Xe0 (a double). */
static void same_as_string_path(const char *num)
{
	char a[128], b[128];
	snprintf(a, sizeof(a), "{\"ts\":%s,\"dur\":%s,\"pid\":%s}", num, num,
		 num);
	snprintf(b, sizeof(b), "{\"ts\":\"%s\",\"dur\":\"%s\",\"pid\":%se0}",
		 num, num, num);
	struct ptw_cv_event ea = parse_ok(a), eb = parse_ok(b);
	cr_assert_eq(ea.flags, eb.flags, "%s: flags %x vs %x", num, ea.flags,
		     eb.flags);
	if (ea.flags & PTW_CV_HAS_TS) {
		cr_assert_eq(ea.ts_ns, eb.ts_ns, "%s: %lld vs %lld", num,
			     (long long)ea.ts_ns, (long long)eb.ts_ns);
		cr_assert_eq(ea.dur_ns, eb.dur_ns, "%s", num);
	}
	cr_assert_eq(ea.pid, eb.pid, "%s: pid %u vs %u", num, ea.pid, eb.pid);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

Test(json_parse, plain_ts_dur_pid_match_the_general_number_path)
{
	static const char *edges[] = {
		"0", "1", "9", "10", "0.5", "0.001", "0.0005", "1.0", "1.00",
		"1.000", "1.0004", "1000.125", "4294967295", "4294967296",
		"1125899906842.623", "1125899906842.624", "1125899906842.625",
		"1125899906842.6", "1125899906842", "1125899906843",
		"999999999999999.9", "9999999999999999.9", "999999999999999",
		"9223372036854775", "9223372036854776", "99999999999999999",
		"999999999999999999", "12345678901234567890", "0.999",
		"18446744073709551615", "18446744073709551616",
	};
	for (size_t k = 0; k < sizeof(edges) / sizeof(edges[0]); k++)
		same_as_string_path(edges[k]);
	/* random digit strings, 1 to 19 integer digits and 0 to 5 decimals */
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (int r = 0; r < 20000; r++) {
		char num[40];
		size_t n = 0;
		unsigned ni = 1 + (unsigned)(xorshift(&x) % 19);
		unsigned nf = (unsigned)(xorshift(&x) % 6);
		for (unsigned d = 0; d < ni; d++)
			num[n++] = (char)('0' + xorshift(&x) % 10);
		if (num[0] == '0')
			n = 1; /* no leading zeros */
		if (nf) {
			num[n++] = '.';
			for (unsigned d = 0; d < nf; d++)
				num[n++] = (char)('0' + xorshift(&x) % 10);
		}
		num[n] = '\0';
		same_as_string_path(num);
	}
}

/* "ts":X (the fast path for plain numbers, else the general one), and
 * "ts":"X", "dur":X, "tts":X, "tdur":X must all give ref_ts_ns(X). */
static void ts_is_reference(const char *num)
{
	char a[512];
	int64_t want = 0;
	int ok = ref_ts_ns(num, &want);
	static const char *const keys[] = {"ts", "dur", "tts", "tdur"};
	static const uint32_t has[] = {PTW_CV_HAS_TS, PTW_CV_HAS_DUR,
				       PTW_CV_HAS_TTS, PTW_CV_HAS_TDUR};
	for (int k = 0; k < 4; k++) {
		for (int quoted = 0; quoted < 2; quoted++) {
			snprintf(a, sizeof(a), quoted ? "{\"%s\":\"%s\"}"
						      : "{\"%s\":%s}",
				 keys[k], num);
			struct ptw_cv_event ev = parse_ok(a);
			int64_t got = k == 0 ? ev.ts_ns : k == 1 ? ev.dur_ns
				      : k == 2 ? ev.tts_ns : ev.tdur_ns;
			cr_assert_eq(!!(ev.flags & has[k]), ok, "%s: flags %x",
				     a, ev.flags);
			if (ok)
				cr_assert_eq(got, want, "%s: %lld, want %lld", a,
					     (long long)got, (long long)want);
		}
	}
}

Test(json_parse, times_are_trace_processors_coerce_to_ts)
{
	/* the example: an integral double is (int64)d * 1000, not
	 * d * 1000.0 (which rounds to ...5120) */
	struct ptw_cv_event ev = parse_ok("{\"ts\":1850244461563845.0}");
	cr_assert_eq(ev.ts_ns, 1850244461563845000LL);
	ev = parse_ok("{\"ts\":\"1850244461563845.0\",\"dur\":1.5e1,"
		      "\"tts\":-2.5,\"tdur\":\"0.001\"}");
	cr_assert_eq(ev.ts_ns, 1850244461563845000LL);
	cr_assert_eq(ev.dur_ns, 15000);   /* (1 + 0.5) * pow(10, 1) = 15 */
	cr_assert_eq(ev.tts_ns, -2500);   /* llround(-2500.0) */
	cr_assert_eq(ev.tdur_ns, 1);      /* llround(0.001 * 1000.0) */
	cr_assert_eq(ev.flags, PTW_CV_HAS_TS | PTW_CV_HAS_DUR |
				       PTW_CV_HAS_TTS | PTW_CV_HAS_TDUR);
	/* a string must hold exactly one number (ParseValue, then
	 * "Unexpected trailing characters") */
	ev = parse_ok("{\"ts\":\"5 \",\"dur\":\"+5\",\"tts\":\"0x10\","
		      "\"tdur\":\"\"}");
	cr_assert_eq(ev.flags, 0);
	ev = parse_ok("{\"ts\":\"\\u0035\"}"); /* decoded: "5" */
	cr_assert_eq(ev.ts_ns, 5000);

	static const char *edges[] = {
		"0", "-0", "-0.0", "1", "0.5", "0.0005", "1.0004", "1000.125",
		"-1.5", "-1000.125", "1e3", "1E3", "1.5e-3", "2.5e+2", "1e-400",
		"1e400", "0e400", "1e22", "1e23", "123456789012.345678",
		"1850244461563845.0", "1850244461563845.5", "9007199254740993",
		"9007199254740993.0", "9223372036854775", "9223372036854776",
		"9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809",
		"18446744073709551616", "99999999999999999999999",
		"1125899906842.623", "1125899906842.624", "1125899906842.625",
		"999999999999999.9", "9999999999999999.9",
		"0.1000000000000000055511151231257827021181583404541015625",
		"1.0000000000000000000000000000000000000000000000000000000000000001",
		"0.00000000000000000000000000000000000000000000000000000000000000001",
		"3.14159265358979323846", "1e9999999999999999999",
		"1e-9999999999999999999", "12345678901234567890123e-5",
	};
	for (size_t k = 0; k < sizeof(edges) / sizeof(edges[0]); k++)
		ts_is_reference(edges[k]);
}

Test(json_parse, fast_paths_match_the_reference_on_random_numbers)
{
	/* random numbers of every shape: sign, 1 to 21 integer digits, 0 to
	 * 20 decimals, an exponent; and the fast path's own shapes (up to 17
	 * digits, up to 3 decimals) often */
	uint64_t x = 0x243F6A8885A308D3ull;
	for (int r = 0; r < 60000; r++) {
		char num[80];
		size_t n = 0;
		uint64_t shape = xorshift(&x);
		int fast = shape % 3 != 0;
		unsigned ni = 1 + (unsigned)(xorshift(&x) % (fast ? 17 : 21));
		unsigned nf = (unsigned)(xorshift(&x) % (fast ? 4 : 21));
		if (!fast && (shape >> 8) % 4 == 0)
			num[n++] = '-';
		size_t d0 = n;
		for (unsigned d = 0; d < ni; d++)
			num[n++] = (char)('0' + xorshift(&x) % 10);
		if (num[d0] == '0')
			n = d0 + 1; /* no leading zeros */
		if (nf) {
			num[n++] = '.';
			for (unsigned d = 0; d < nf; d++)
				num[n++] = (char)('0' + xorshift(&x) % 10);
		}
		if (!fast && (shape >> 12) % 3 == 0)
			n += (size_t)snprintf(num + n, sizeof(num) - n, "e%s%u",
					      (shape >> 16) & 1 ? "-" : "",
					      (unsigned)((shape >> 20) % 40));
		num[n] = '\0';
		ts_is_reference(num);
	}
}

Test(json_parse, pid_tid_coercion)
{
	struct ptw_cv_event ev = parse_ok("{\"pid\":4294967295,\"tid\":0}");
	cr_assert_eq(ev.pid, 4294967295u);
	cr_assert_eq(ev.tid, 0);
	cr_assert_eq(ev.flags, PTW_CV_HAS_PID | PTW_CV_HAS_TID);
	ev = parse_ok("{\"pid\":4294967296,\"tid\":-1}");
	cr_assert_eq(ev.pid, 0);
	cr_assert_eq(ev.tid, 0);
	cr_assert_eq(ev.flags, PTW_CV_HAS_PID | PTW_CV_HAS_TID);
	ev = parse_ok("{\"pid\":99999999999999999999999,\"tid\":12.9}");
	cr_assert_eq(ev.pid, 0);
	cr_assert_eq(ev.tid, 12);
	ev = parse_ok("{\"pid\":-0.5,\"tid\":1e3}");
	cr_assert_eq(ev.pid, 0);
	cr_assert_eq(ev.tid, 1000);
	/* CoerceToUint32(double): static_cast<int64_t> first, so a fraction
	 * above 2^32-1 still fits, and -1 does not */
	ev = parse_ok("{\"pid\":4294967295.5,\"tid\":-1.0}");
	cr_assert_eq(ev.pid, 4294967295u);
	cr_assert_eq(ev.tid, 0);
	ev = parse_ok("{\"pid\":4294967296.0,\"tid\":-0.99}");
	cr_assert_eq(ev.pid, 0);
	cr_assert_eq(ev.tid, 0);
	ev = parse_ok("{\"pid\":\"Browser\",\"tid\":\"CrRendererMain\"}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_PID | PTW_CV_HAS_TID |
				       PTW_CV_PID_IS_STRING |
				       PTW_CV_TID_IS_STRING);
	cr_assert(str_is(ev.pid_str, "Browser"));
	cr_assert(str_is(ev.tid_str, "CrRendererMain"));
	cr_assert_eq(ev.pid, 0);
	/* a later number replaces an earlier string */
	ev = parse_ok("{\"pid\":\"x\",\"pid\":7}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_PID);
	cr_assert_eq(ev.pid, 7);
}

Test(json_parse, ids_numeric_string_hex_and_id2)
{
	struct ptw_cv_event ev = parse_ok("{\"id\":5}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_ID);
	cr_assert_eq(ev.id_num, 5);
	cr_assert_null(ev.id_str.p);
	ev = parse_ok("{\"id\":\"0x2a\"}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_ID | PTW_CV_ID_IS_STRING);
	cr_assert_eq(ev.id_num, 42);
	cr_assert(str_is(ev.id_str, "0x2a"));
	ev = parse_ok("{\"id\":\"0XFF\"}");
	cr_assert_eq(ev.id_num, 255);
	ev = parse_ok("{\"id\":\"7\"}");
	cr_assert_eq(ev.id_num, 7);
	cr_assert(str_is(ev.id_str, "7"));
	ev = parse_ok("{\"id\":\"req-1\"}");
	cr_assert_eq(ev.id_num, 0);
	cr_assert(str_is(ev.id_str, "req-1"));
	ev = parse_ok("{\"id\":18446744073709551615}"); /* > int64: no id */
	cr_assert_eq(ev.flags, 0);
	ev = parse_ok("{\"id\":1.5}");
	cr_assert_eq(ev.flags, 0);
	ev = parse_ok("{\"id\":-1}");
	cr_assert_eq(ev.id_num, UINT64_MAX);
	ev = parse_ok("{\"id2\":{\"local\":\"0x10\"}}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_ID | PTW_CV_ID_IS_STRING |
				       PTW_CV_ID2_LOCAL | PTW_CV_ID_FROM_ID2);
	cr_assert_eq(ev.id_num, 16);
	ev = parse_ok("{\"id2\":{\"global\":\"9\",\"other\":[1,2]}}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_ID | PTW_CV_ID_IS_STRING |
				       PTW_CV_ID_FROM_ID2);
	cr_assert_eq(ev.id_num, 9);
	/* integer id2 values are ids too (json_trace_tokenizer.cc ParseId2
	 * -> ExtractId: a string or an int64), other values are not */
	ev = parse_ok("{\"id2\":{\"global\":9}}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_ID | PTW_CV_ID_FROM_ID2);
	cr_assert_eq(ev.id_num, 9);
	ev = parse_ok("{\"id2\":{\"local\":-2}}");
	cr_assert_eq(ev.flags,
		     PTW_CV_HAS_ID | PTW_CV_ID2_LOCAL | PTW_CV_ID_FROM_ID2);
	cr_assert_eq(ev.id_num, (uint64_t)-2);
	ev = parse_ok("{\"id2\":{\"global\":1.5,\"local\":true}}");
	cr_assert_eq(ev.flags, 0);
	/* global before local, whatever their order */
	ev = parse_ok("{\"id2\":{\"local\":\"1\",\"global\":2}}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_ID | PTW_CV_ID_FROM_ID2);
	cr_assert_eq(ev.id_num, 2);
	/* a later member replaces an earlier one; one that is no id clears
	 * it (id2_global = ExtractId(...) = nullopt), so local counts */
	ev = parse_ok("{\"id2\":{\"global\":2,\"local\":3,"
		      "\"global\":null}}");
	cr_assert_eq(ev.flags,
		     PTW_CV_HAS_ID | PTW_CV_ID2_LOCAL | PTW_CV_ID_FROM_ID2);
	cr_assert_eq(ev.id_num, 3);
	/* two id2 objects: each sets only the members it has */
	ev = parse_ok("{\"id2\":{\"local\":\"a\"},\"id2\":{\"global\":\"b\"}}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_ID | PTW_CV_ID_IS_STRING |
				       PTW_CV_ID_FROM_ID2);
	cr_assert(str_is(ev.id_str, "b"));
	/* an "id" that is no id leaves id2 in charge */
	ev = parse_ok("{\"id2\":{\"local\":5},\"id\":1.5}");
	cr_assert_eq(ev.flags,
		     PTW_CV_HAS_ID | PTW_CV_ID2_LOCAL | PTW_CV_ID_FROM_ID2);
	cr_assert_eq(ev.id_num, 5);
	/* "id" wins over "id2", in either order */
	ev = parse_ok("{\"id2\":{\"local\":\"3\"},\"id\":4}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_ID);
	cr_assert_eq(ev.id_num, 4);
	ev = parse_ok("{\"id\":\"a\",\"id2\":{\"local\":\"3\"}}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_ID | PTW_CV_ID_IS_STRING);
	cr_assert(str_is(ev.id_str, "a"));
	ev = parse_ok("{\"id\":1.5,\"id2\":{\"local\":\"3\"}}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_ID | PTW_CV_ID_IS_STRING |
				       PTW_CV_ID2_LOCAL | PTW_CV_ID_FROM_ID2);
	ev = parse_ok("{\"id\":null,\"id2\":\"x\"}");
	cr_assert_eq(ev.flags, 0);
}

Test(json_parse, scope_bp_and_flows)
{
	struct ptw_cv_event ev = parse_ok(
		"{\"ph\":\"f\",\"bp\":\"e\",\"s\":\"g\",\"bind_id\":\"0xab\","
		"\"flow_in\":true,\"flow_out\":false}");
	cr_assert_eq(ev.ph, 'f');
	cr_assert_eq(ev.bp, 'e');
	cr_assert_eq(ev.scope, 'g');
	cr_assert(str_is(ev.bind_id, "0xab"));
	cr_assert_eq(ev.flags, PTW_CV_HAS_BIND_ID | PTW_CV_FLOW_IN);
	ev = parse_ok("{\"s\":\"p\",\"bind_id\":12,\"flow_out\":true}");
	cr_assert_eq(ev.scope, 'p');
	cr_assert(str_is(ev.bind_id, "12"));
	cr_assert_eq(ev.bind_num, 12);
	cr_assert_eq(ev.flags, PTW_CV_HAS_BIND_ID | PTW_CV_BIND_ID_IS_NUM |
				       PTW_CV_FLOW_OUT);
	ev = parse_ok("{\"bind_id\":1.5}");
	cr_assert_eq(ev.flags, 0);
	ev = parse_ok("{\"s\":\"t\",\"bp\":\"x\"}");
	cr_assert_eq(ev.scope, 't');
	cr_assert_eq(ev.bp, 0);
	ev = parse_ok("{\"s\":\"x\"}");
	cr_assert_eq(ev.scope, 0);
	ev = parse_ok("{\"s\":\"tt\"}");
	cr_assert_eq(ev.scope, 0);
	/* json_trace_tokenizer.cc: another string keeps an earlier "s",
	 * a value that is not a string clears it */
	ev = parse_ok("{\"s\":\"g\",\"s\":\"x\"}");
	cr_assert_eq(ev.scope, 'g');
	ev = parse_ok("{\"s\":\"g\",\"s\":1}");
	cr_assert_eq(ev.scope, 0);
	ev = parse_ok("{\"ph\":\"Xyz\"}");
	cr_assert_eq(ev.ph, 'X');
	ev = parse_ok("{\"ph\":\"\"}");
	cr_assert_eq(ev.ph, 0);
}

Test(json_parse, args_of_every_type_in_order)
{
	struct ptw_cv_event ev = parse_ok(
		"{\"ph\":\"C\",\"args\":{\"i\":-42,\"d\":2.5,\"s\":\"a\\\"b\","
		"\"t\":true,\"f\":false,\"n\":null,\"o\":{\"x\":[1, {}]},"
		"\"a\":[ ],\"big\":12345678901234567890,\"i\":3}}");
	cr_assert_eq(ev.n_args, 10);
	const struct ptw_cv_arg *a = ev.args;
	cr_assert(str_is(a[0].key, "i"));
	cr_assert_eq(a[0].type, PTW_CV_VAL_INT);
	cr_assert_eq(a[0].i, -42);
	cr_assert_eq(a[1].type, PTW_CV_VAL_DOUBLE);
	cr_assert_eq(a[1].d, 2.5);
	cr_assert_eq(a[2].type, PTW_CV_VAL_STRING);
	cr_assert(str_is(a[2].s, "a\"b"));
	cr_assert_eq(a[3].type, PTW_CV_VAL_BOOL);
	cr_assert_eq(a[3].b, 1);
	cr_assert_eq(a[4].type, PTW_CV_VAL_BOOL);
	cr_assert_eq(a[4].b, 0);
	cr_assert_eq(a[5].type, PTW_CV_VAL_NULL);
	cr_assert_eq(a[6].type, PTW_CV_VAL_JSON);
	cr_assert(str_is(a[6].s, "{\"x\":[1, {}]}"));
	cr_assert_eq(a[7].type, PTW_CV_VAL_JSON);
	cr_assert(str_is(a[7].s, "[ ]"));
	/* beyond int64: StringToInt64 fails, and StringToDouble's int64
	 * int_part wraps (trace_processor shows this value) */
	cr_assert_eq(a[8].type, PTW_CV_VAL_DOUBLE);
	cr_assert_eq(a[8].d, (double)(int64_t)-6101065172474983726LL);
	cr_assert(str_is(a[9].key, "i"));
	cr_assert_eq(a[9].i, 3);
	/* counter values: integral vs fractional */
	ev = parse_ok("{\"args\":{\"value\":60,\"v2\":60.0,\"v3\":-1.25e2}}");
	cr_assert_eq(ev.args[0].type, PTW_CV_VAL_INT);
	cr_assert_eq(ev.args[0].i, 60);
	cr_assert_eq(ev.args[1].type, PTW_CV_VAL_DOUBLE);
	cr_assert_eq(ev.args[1].d, 60.0);
	cr_assert_eq(ev.args[2].d, -125.0);
	/* a non-object args is ignored: an earlier object stays (the
	 * tokenizer copies "args" only when GetObjectValue is not empty) */
	ev = parse_ok("{\"args\":{\"a\":1},\"args\":[1]}");
	cr_assert_eq(ev.n_args, 1);
	ev = parse_ok("{\"args\":[1]}");
	cr_assert_eq(ev.n_args, 0);
	ev = parse_ok("{\"args\":{}}");
	cr_assert_eq(ev.n_args, 0);
}

Test(json_parse, int64_edges_and_doubles)
{
	struct ptw_cv_event ev = parse_ok(
		"{\"args\":{\"max\":9223372036854775807,"
		"\"min\":-9223372036854775808,\"over\":9223372036854775808,"
		"\"neg0\":-0,\"tiny\":1e-320,\"long\":"
		"0.1000000000000000055511151231257827021181583404541015625,"
		"\"prec\":3.14159265358979323846}}");
	cr_assert_eq(ev.args[0].type, PTW_CV_VAL_INT);
	cr_assert_eq(ev.args[0].i, INT64_MAX);
	cr_assert_eq(ev.args[1].type, PTW_CV_VAL_INT);
	cr_assert_eq(ev.args[1].i, INT64_MIN);
	/* doubles are trace_processor's StringToDouble values (what its
	 * args table shows), not correctly rounded: 2^63 wraps to -2^63 in
	 * its int64 int_part; 1e-320 is 1 / pow(10, 320) = 1 / inf = 0; long
	 * fractions wrap its int64 fract_int and uint64 divisor */
	cr_assert_eq(ev.args[2].type, PTW_CV_VAL_DOUBLE);
	cr_assert_eq(ev.args[2].d, -9223372036854775808.0);
	cr_assert_eq(ev.args[3].type, PTW_CV_VAL_INT);
	cr_assert_eq(ev.args[3].i, 0);
	cr_assert_eq(ev.args[4].d, 0.0);
	double want;
	cr_assert_eq(ref_string_to_double(ev.args[5].s.p, ev.args[5].s.n,
					  &want), 0);
	cr_assert_eq(ev.args[5].d, want);
	cr_assert_neq(want, 0.1);
	cr_assert_eq(ref_string_to_double(ev.args[6].s.p, ev.args[6].s.n,
					  &want), 0);
	cr_assert_eq(ev.args[6].d, want);
	cr_assert(str_is(ev.args[6].s, "3.14159265358979323846"));
}

Test(json_parse, escapes_and_unicode_are_decoded)
{
	struct ptw_cv_event ev = parse_ok(
		"{\"na\\u006De\":\"tab\\there\\n\\\\ \\/ \\b\\f\\r\\\"q\","
		"\"cat\":\"\\u00e9\\u20AC\\uD83D\\uDE00\\u0000end\","
		"\"args\":{\"k\\u00e9y\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}}");
	cr_assert(str_is(ev.name, "tab\there\n\\ / \b\f\r\"q"));
	cr_assert_eq(ev.cat.n, 2 + 3 + 4 + 1 + 3);
	cr_assert_eq(memcmp(ev.cat.p, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\0end",
			    ev.cat.n), 0);
	cr_assert(str_is(ev.args[0].key, "k\xc3\xa9y"));
	cr_assert(str_is(ev.args[0].s, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
	/* strings without escapes point into the input */
	const char *in = "{\"name\":\"plain\"}";
	struct ptw_cv_event e2;
	struct ptw_error err;
	cr_assert_eq(ptw_cv_json_parse_object(jp, in, strlen(in), &e2, &err), 0);
	cr_assert_eq(e2.name.p, in + 9);
	/* DEL and every other non-control byte is fine unescaped */
	ev = parse_ok("{\"name\":\"\x7f~\"}");
	cr_assert(str_is(ev.name, "\x7f~"));
}

Test(json_parse, long_strings_and_many_events_reuse_the_parser)
{
	size_t n = 100000;
	char *s = malloc(n + n / 100 + 64);
	cr_assert_not_null(s);
	strcpy(s, "{\"name\":\"");
	size_t k = strlen(s);
	for (size_t i = 0; i < n; i++) {
		if (i % 100 == 99) {
			s[k++] = '\\';
			s[k++] = 'n';
		} else {
			s[k++] = (char)('a' + (char)(i % 26));
		}
	}
	strcpy(s + k, "\",\"ph\":\"i\"}");
	struct ptw_cv_event ev = parse_ok(s);
	cr_assert_eq(ev.ph, 'i');
	cr_assert_eq(ev.name.n, n);
	cr_assert_eq(ev.name.p[99], '\n');
	ev = parse_ok("{\"name\":\"x\\n\"}");
	cr_assert(str_is(ev.name, "x\n"));
	free(s);
}

Test(json_parse, cut_text_is_invalid_with_offset_at_end)
{
	/* rule 4: cut in a string, an escape, a UTF-8 character, a number */
	parse_bad("{\"name\":\"cut", 12, "unexpected end of input");
	parse_bad("{\"name\":\"cut\\", 13, "escape character");
	parse_bad("{\"name\":\"cut\\u00", 16, "4 hex digits");
	parse_bad("{\"name\":\"\\uD83D", 15, "low surrogate");
	parse_bad("{\"name\":\"\xe2\x82", 11, "UTF-8 character");
	/* a number at the end of the text may have been cut: it is not read */
	parse_bad("{\"name\":\"x\",\"ts\":12", 19, "the rest of a number");
	parse_bad("{\"name\":\"x\",\"ts\":12 ", 20, "',' or '}'");
	parse_bad("{\"name\":\"x\",\"ts\":-", 18, "digit after '-'");
	parse_bad("{\"name\":\"x\",\"ts\":1.", 19, "digit after '.'");
	parse_bad("{\"a\":1e", 7, "exponent");
	parse_bad("{\"a\":tr", 7, "literal");
	parse_bad("{\"name\":\"cut\",\"ph\":\"B\",", 23, "member name");
	parse_bad("{\"a\":{\"b\":[1,", 13, "a value");
	parse_bad("{\"a\"", 4, "':'");
	parse_bad("{", 1, "'\"' or '}'");
	parse_bad("", 0, "'{'");
	parse_bad("   ", 3, "'{'");
}

Test(json_parse, invalid_text_is_found_where_it_is)
{
	parse_bad("{\"a\":1,}", 7, "'\"' starting a member name");
	parse_bad("{\"a\":1},", 7, "end of the text");
	parse_bad("{\"a\":1}{}", 7, "end of the text");
	parse_bad("{\"a\" 1}", 5, "':'");
	parse_bad("{\"a\":1 \"b\":2}", 7, "',' or '}' after a member");
	parse_bad("{\"a\":[1 2]}", 8, "',' or ']'");
	parse_bad("{\"a\":[1,]}", 8, "value");
	parse_bad("{a:1}", 1, "'\"' starting a member name");
	parse_bad("{'a':1}", 1, "found '''");
	parse_bad("[{\"a\":1}]", 0, "'{'");
	parse_bad("{\"a\":01}", 6, "leading zeros");
	parse_bad("{\"a\":+1}", 5, "value");
	parse_bad("{\"a\":.5}", 5, "value");
	parse_bad("{\"a\":1.e3}", 7, "digit after '.'");
	parse_bad("{\"a\":NaN}", 5, "value");
	parse_bad("{\"a\":-Infinity}", 6, "digit after '-'");
	parse_bad("{\"a\":truth}", 8, "value");
	parse_bad("{\"a\":nul}", 8, "value");
	parse_bad("{\"a\":\"\\x\"}", 7, "escape character");
	parse_bad("{\"a\":\"\\u12G4\"}", 10, "hex digit");
	parse_bad("{\"a\":\"\\uDC00\"}", 6, "unpaired low surrogate");
	parse_bad("{\"a\":\"\\uD800x\"}", 6, "not followed by a low one");
	parse_bad("{\"a\":\"\\uD800\\n\"}", 6, "not followed by a low one");
	parse_bad("{\"a\":\"\\uD800\\u0041\"}", 6, "followed by \\u0041");
	parse_bad("{\"a\":\"tab\there\"}", 9, "control character 0x09");
	parse_bad("{\"a\":\"line\nbreak\"}", 10, "control character 0x0a");
	parse_bad("{\"a\":1} // c", 8, "end of the text");
	parse_bad("{\"a\":1,\"b\":2,,\"c\":3}", 13, "member name");
	/* a second trailing comma is the text-line reader's business: after
	 * it removes one, the object still has one after it */
	parse_bad("{\"a\":1},", 7, "end of the text");
}

Test(json_parse, invalid_utf8_is_rejected)
{
	parse_bad("{\"a\":\"\xc0\x80\"}", 6, "cannot start");      /* overlong */
	parse_bad("{\"a\":\"\xc1\xbf\"}", 6, "cannot start");
	parse_bad("{\"a\":\"\xe0\x80\x80\"}", 7, "sequence");       /* overlong */
	parse_bad("{\"a\":\"\xed\xa0\x80\"}", 7, "sequence");       /* surrogate */
	parse_bad("{\"a\":\"\xf4\x90\x80\x80\"}", 7, "sequence");   /* > 10FFFF */
	parse_bad("{\"a\":\"\xf5\x80\x80\x80\"}", 6, "cannot start");
	parse_bad("{\"a\":\"\x80\"}", 6, "cannot start");
	parse_bad("{\"a\":\"\xc3(\"}", 7, "sequence");
	parse_bad("{\"a\":\"\xe2\x82(\"}", 8, "sequence");
	parse_bad("{\"\xff\":1}", 2, "cannot start");
	parse_bad("{\"a\":1,\xff}", 7, "byte 0xff");
	/* valid boundaries */
	struct ptw_cv_event ev = parse_ok(
		"{\"a\":\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80"
		"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"}");
	(void)ev;
}

Test(json_parse, nul_bytes_are_invalid)
{
	parse_bad_n("{\"a\":\"x\0y\"}", 11, PTW_ERR_FORMAT, 7, "NUL byte inside a string");
	parse_bad_n("{\"a\":1}\0", 8, PTW_ERR_FORMAT, 7, "NUL byte");
	parse_bad_n("{\"a\":1\0}", 8, PTW_ERR_FORMAT, 6, "NUL byte");
	parse_bad_n("\0{}", 3, PTW_ERR_FORMAT, 0, "NUL byte");
	parse_bad_n("{\"name\":\"cut\",\"ph\":\0\0\0\0", 23, PTW_ERR_FORMAT, 19,
		    "NUL byte");
}

/* As trace_processor (json_parser.h Iterator, json_args.cc: an explicit
 * stack, no limit): any nesting depth and any number of "args" members;
 * an error deep inside is still found, at its byte. */
Test(json_parse, no_depth_or_args_limit)
{
	enum { DEEP = 100000 };
	char *deep = malloc(7 * DEEP + 64);
	cr_assert_not_null(deep);
	/* {"a":{"k":[[{"k":[[ ... 1 ... ]]}]]}} */
	size_t k = (size_t)sprintf(deep, "{\"a\":");
	for (int i = 0; i < DEEP; i++) {
		if (i % 3)
			deep[k++] = '[';
		else
			k += (size_t)sprintf(deep + k, "{\"k\":");
	}
	size_t mid = k;
	deep[k++] = '1';
	for (int i = DEEP - 1; i >= 0; i--)
		deep[k++] = i % 3 ? ']' : '}';
	deep[k++] = '}';
	struct ptw_cv_event ev;
	struct ptw_error err;
	cr_assert_eq(ptw_cv_json_parse_object(jp, deep, k, &ev, &err), 0,
		     "%s", err.msg);
	deep[mid] = 'x';
	parse_bad_n(deep, k, PTW_ERR_FORMAT, mid, "expected a value");
	deep[mid] = '1';
	deep[k - 2] = ']'; /* the outermost '{' closed by ']' */
	cr_assert_eq(ptw_cv_json_parse_object(jp, deep, k, &ev, &err),
		     PTW_ERR_FORMAT);
	free(deep);

	enum { N = 1000 };
	char *args = malloc(16 * N + 64);
	cr_assert_not_null(args);
	k = (size_t)sprintf(args, "{\"args\":{");
	for (int i = 0; i < N; i++)
		k += (size_t)sprintf(args + k, "%s\"k%d\":%d", i ? "," : "", i, i);
	k += (size_t)sprintf(args + k, "}}");
	cr_assert_eq(ptw_cv_json_parse_object(jp, args, k, &ev, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(ev.n_args, N);
	for (int i = 0; i < N; i++) {
		char key[16];
		int kn = snprintf(key, sizeof(key), "k%d", i);
		cr_assert_eq(ev.args[i].key.n, (size_t)kn);
		cr_assert_eq(memcmp(ev.args[i].key.p, key, (size_t)kn), 0);
		cr_assert_eq(ev.args[i].type, PTW_CV_VAL_INT);
		cr_assert_eq(ev.args[i].i, i);
	}
	free(args);
}

Test(json_parse, bad_arguments)
{
	struct ptw_cv_event ev;
	struct ptw_error err;
	cr_assert_eq(ptw_cv_json_parse_object(NULL, "{}", 2, &ev, &err),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_cv_json_parse_object(jp, NULL, 2, &ev, &err),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_cv_json_parse_object(jp, "{}", 2, NULL, &err),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_cv_json_parse_object(jp, NULL, 0, &ev, NULL),
		     PTW_ERR_FORMAT);
	/* err may be NULL */
	cr_assert_eq(ptw_cv_json_parse_object(jp, "{x}", 3, &ev, NULL),
		     PTW_ERR_FORMAT);
	ptw_cv_json_parser_destroy(NULL);
}

Test(json_parse, error_locate_names_file_line_and_column)
{
	struct ptw_cv_event ev;
	struct ptw_error err = { 0 };
	const char *line = "{\"name\":\"x\" \"ph\":\"B\"}";
	cr_assert_eq(ptw_cv_json_parse_object(jp, line, strlen(line), &ev, &err),
		     PTW_ERR_FORMAT);
	/*               {"name":"x" "ph":"B"}
	 *                           ^ byte 12 */
	cr_assert_eq(err.offset, 12);
	ptw_cv_json_error_locate(&err, "trace_3.appletrace", 7, 1000);
	cr_assert_str_eq(err.msg, "trace_3.appletrace:7:13 (byte 1012): expected "
				  "',' or '}' after a member, found '\"'");
	cr_assert_eq(err.line, 7);
	cr_assert_eq(err.column, 13);
	cr_assert_eq(err.offset, 1012);
	cr_assert_str_eq(err.input, "trace_3.appletrace");
	cr_assert_eq(err.code, PTW_ERR_FORMAT);
	ptw_cv_json_error_locate(NULL, "x", 1, 0);
}

Test(json_parse, error_locate_without_line_or_input)
{
	struct ptw_cv_event ev;
	struct ptw_error err = { 0 };
	const char *line = "{\"ph\":tru}";
	cr_assert_eq(ptw_cv_json_parse_object(jp, line, strlen(line), &ev, &err),
		     PTW_ERR_FORMAT);
	cr_assert_str_eq(err.msg, "byte 9: expected a value (object, array, "
				  "string, number, true, false or null), "
				  "found '}'");
	ptw_cv_json_error_locate(&err, "t.json", 0, 100);
	cr_assert_str_eq(err.msg, "t.json (byte 109): expected a value (object, "
				  "array, string, number, true, false or "
				  "null), found '}'");
	cr_assert_eq(err.column, 10);
	cr_assert_eq(err.line, 0);
	/* located again: the offset is now 109 within the 'line' */
	ptw_cv_json_error_locate(&err, NULL, 5, 1);
	cr_assert_str_eq(err.msg, "byte 110: t.json (byte 109): expected a value "
				  "(object, array, string, number, true, false "
				  "or null), found '}'");
	cr_assert_eq(err.column, 110);
	cr_assert_eq(err.line, 5);
	cr_assert_null(err.input);
}

Test(json_parse, every_prefix_of_a_valid_object_is_invalid)
{
	const char *s = "{\"name\":\"caf\xc3\xa9 \\u00e9\\uD83D\\uDE00\",\"ph\":\"X\","
			"\"ts\":-1.5e+3,\"args\":{\"a\":[true,false,null,{}]}}";
	size_t n = strlen(s);
	struct ptw_cv_event ev;
	struct ptw_error err;
	for (size_t k = 0; k < n; k++) {
		int rc = ptw_cv_json_parse_object(jp, s, k, &ev, &err);
		cr_assert_eq(rc, PTW_ERR_FORMAT, "prefix %zu accepted", k);
		cr_assert_eq(err.offset, k, "prefix %zu: offset %llu (%s)", k,
			     (unsigned long long)err.offset, err.msg);
	}
	cr_assert_eq(ptw_cv_json_parse_object(jp, s, n, &ev, &err), 0);
	cr_assert_eq(ev.ts_ns, -1500000);
}

/* AppleTrace text lines are judged by this parser (corpus README section
 * 3): trace_processor's leniency is for Chrome JSON files only, so
 * ptw_cv_json_parse_object stays strict whatever mode the reader put a
 * parser in. */
Test(json_parse, the_object_parser_stays_strict_in_every_mode)
{
	ptw_cv_json_i_set_mode(jp, 1, 1);
	parse_bad("{\"a\":1,}", 7, "member name");
	parse_bad("{\"a\":\"x\ty\"}", 7, "control character");
	parse_bad("{\"a\":\"\\q\"}", 7, "escape character");
	parse_bad("{\"a\":{\"b\":1,}}", 12, "member name");
	parse_bad("{\"a\":[1,]}", 8, "a value");
	/* and a dur it cannot read is just absent (no stop) */
	struct ptw_cv_event ev = parse_ok("{\"ph\":\"X\",\"dur\":\"x\",\"ts\":1}");
	cr_assert_eq(ev.flags, PTW_CV_HAS_TS);
}
