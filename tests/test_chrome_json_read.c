/* test_chrome_json_read.c - the streaming Chrome JSON reader: array and
 * object forms, arrays cut by a crash, gzip, stdin, positions in messages,
 * bounded buffering, and the chrome_* corpus cases.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "converters/chrome_json/chrome_json.h"
#include "support/ptw_test.h"

/* Collected events: a copy of the fields the tests compare. */
struct rec {
	char ph;
	char name[64];
	uint32_t pid, tid, flags, n_args;
	int64_t ts_ns, dur_ns;
	uint64_t line, offset, id_num;
};

struct coll {
	struct rec *r;
	size_t n, cap;
	size_t stop_at; /* fail the callback at this event (1-based), 0: never */
};

static int collect(void *ctx, const struct ptw_cv_event *ev,
		   struct ptw_error *err)
{
	struct coll *c = ctx;
	if (c->stop_at && c->n + 1 == c->stop_at)
		return ptw_error_set(err, PTW_ERR_INVALID, 0, "stop requested");
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->r = realloc(c->r, c->cap * sizeof(*c->r));
		cr_assert_not_null(c->r);
	}
	struct rec *r = &c->r[c->n++];
	memset(r, 0, sizeof(*r));
	r->ph = ev->ph;
	if (ev->name.p)
		snprintf(r->name, sizeof(r->name), "%.*s", (int)ev->name.n,
			 ev->name.p);
	r->pid = ev->pid;
	r->tid = ev->tid;
	r->flags = ev->flags;
	r->n_args = ev->n_args;
	r->ts_ns = ev->ts_ns;
	r->dur_ns = ev->dur_ns;
	r->line = ev->line;
	r->offset = ev->offset;
	r->id_num = ev->id_num;
	cr_assert_not_null(ev->input);
	return 0;
}

static int read_str(const char *s, struct coll *c,
		    struct ptw_cv_json_read_stats *st, struct ptw_error *err)
{
	memset(c, 0, sizeof(*c));
	return ptw_cv_json_read_mem(s, strlen(s), NULL, collect, c, st, err);
}

static int read_str_strict(const char *s, struct coll *c,
			   struct ptw_cv_json_read_stats *st,
			   struct ptw_error *err)
{
	struct ptw_cv_json_read_opts o = {.strict = 1};
	memset(c, 0, sizeof(*c));
	return ptw_cv_json_read_mem(s, strlen(s), &o, collect, c, st, err);
}

static char *tmp_file(const void *data, size_t n)
{
	char *path = strdup("/tmp/test_chrome_json_XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, data, n), (ssize_t)n);
	close(fd);
	return path;
}

static unsigned char *gzip_mem(const void *data, size_t n, size_t *zn)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8,
				  Z_DEFAULT_STRATEGY), Z_OK);
	size_t cap = deflateBound(&zs, (uLong)n) + 64;
	unsigned char *z = malloc(cap);
	cr_assert_not_null(z);
	zs.next_in = (unsigned char *)(uintptr_t)data;
	zs.avail_in = (uInt)n;
	zs.next_out = z;
	zs.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	*zn = zs.total_out;
	deflateEnd(&zs);
	return z;
}

static const char *ARRAY =
	"[\n"
	"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":5100,\"tid\":0,"
	"\"args\":{\"name\":\"demo\"}},\n"
	"{\"name\":\"a\",\"cat\":\"demo\",\"ph\":\"B\",\"pid\":5100,\"tid\":5101,"
	"\"ts\":1122.125},\n"
	"  {\"name\":\"a\",\"cat\":\"demo\",\"ph\":\"E\",\"pid\":5100,"
	"\"tid\":5101,\"ts\":1130.5}\n"
	"]\n";

static void check_array_events(const struct coll *c)
{
	cr_assert_eq(c->n, 3);
	cr_assert_eq(c->r[0].ph, 'M');
	cr_assert_str_eq(c->r[0].name, "process_name");
	cr_assert_eq(c->r[0].n_args, 1);
	cr_assert_eq(c->r[1].ph, 'B');
	cr_assert_eq(c->r[1].ts_ns, 1122125);
	cr_assert_eq(c->r[2].ph, 'E');
	cr_assert_eq(c->r[2].ts_ns, 1130500);
	cr_assert_eq(c->r[2].tid, 5101);
	cr_assert_eq(c->r[0].line, 2);
	cr_assert_eq(c->r[1].line, 3);
	cr_assert_eq(c->r[2].line, 4);
	cr_assert_eq(c->r[0].offset, 2);
	cr_assert_eq(c->r[2].offset, (uint64_t)(strstr(ARRAY, "  {") - ARRAY) + 2);
}

Test(json_read, array_form_with_lines_and_offsets)
{
	struct coll c;
	struct ptw_cv_json_read_stats st;
	struct ptw_error err;
	cr_assert_eq(read_str(ARRAY, &c, &st, &err), 0, "%s", err.msg);
	check_array_events(&c);
	cr_assert_eq(st.form, PTW_CV_JSON_FORM_ARRAY);
	cr_assert_eq(st.cut, PTW_CV_JSON_COMPLETE);
	cr_assert_eq(st.events, 3);
	cr_assert_eq(st.gzip, 0);
	cr_assert_eq(st.bytes_json, strlen(ARRAY));
	free(c.r);
}

Test(json_read, empty_arrays_bom_and_tolerated_commas)
{
	struct coll c;
	struct ptw_cv_json_read_stats st;
	struct ptw_error err;
	cr_assert_eq(read_str("[]", &c, &st, &err), 0);
	cr_assert_eq(c.n, 0);
	cr_assert_eq(read_str(" \n[ ]\n\n", &c, &st, &err), 0);
	cr_assert_eq(read_str("\xEF\xBB\xBF[{}]", &c, &st, &err), 0);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.r[0].flags, 0);
	free(c.r);
	/* trace_processor tolerates extra commas; so do we */
	cr_assert_eq(read_str("[{\"ph\":\"i\"},,{\"ph\":\"B\"},]", &c, &st, &err),
		     0, "%s", err.msg);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(st.cut, PTW_CV_JSON_COMPLETE);
	free(c.r);
	cr_assert_eq(read_str("[,{}]", &c, &st, &err), 0);
	cr_assert_eq(c.n, 1);
	free(c.r);
}

Test(json_read, object_form_skips_other_members)
{
	const char *s =
		"{\"otherData\":{\"v\":\"]}\\\"[{\",\"a\":[1,{\"b\":[]}]},"
		"\"meta\\u0064ata\":[\"x\"],\"n\":-1.5e3,\"t\":true,\"z\":null,"
		"\"traceEvents\":[\n"
		"{\"name\":\"x\",\"ph\":\"X\",\"ts\":1,\"dur\":2.5}\n"
		"],\n"
		"\"displayTimeUnit\":\"ns\",\"systemTraceEvents\":\"line\\nline\","
		"\"after\":{\"traceEvents\":[{\"ph\":\"B\"}]}}\n";
	struct coll c;
	struct ptw_cv_json_read_stats st;
	struct ptw_error err;
	cr_assert_eq(read_str(s, &c, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(st.form, PTW_CV_JSON_FORM_OBJECT);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.r[0].ph, 'X');
	cr_assert_eq(c.r[0].dur_ns, 2500);
	cr_assert_eq(c.r[0].line, 2);
	/* systemTraceEvents is skipped, and said so (ptw-convert warns) */
	cr_assert_eq(st.system_trace_events, 1);
	free(c.r);
	/* an empty traceEvents is a trace without events */
	cr_assert_eq(read_str("{\"metadata\":{},\"traceEvents\":[]}", &c, &st,
			      &err), 0, "%s", err.msg);
	cr_assert_eq(c.n, 0);
	cr_assert_eq(st.system_trace_events, 0);
	/* no traceEvents at all: not a Chrome JSON trace (issue 13) */
	cr_assert_eq(read_str("{\"metadata\":{}}", &c, &st, &err),
		     PTW_ERR_FORMAT);
	cr_assert(strstr(err.msg, "a JSON object without \"traceEvents\""),
		  "%s", err.msg);
	cr_assert_eq(read_str("{}", &c, &st, &err), PTW_ERR_FORMAT);
	/* traceEvents that is not an array is an error, as in trace_processor */
	cr_assert_eq(read_str("{\"traceEvents\":null}", &c, &st, &err),
		     PTW_ERR_FORMAT);
	cr_assert(strstr(err.msg, "1:16 (byte 15): expected '['"), "%s", err.msg);
}

Test(json_read, array_cut_after_an_event_keeps_every_event)
{
	const char *cases[] = {
		"[{\"ph\":\"B\",\"ts\":1},{\"ph\":\"E\",\"ts\":2}",
		"[{\"ph\":\"B\",\"ts\":1},{\"ph\":\"E\",\"ts\":2},",
		"[{\"ph\":\"B\",\"ts\":1},\n{\"ph\":\"E\",\"ts\":2},\n",
		"[\n{\"ph\":\"B\",\"ts\":1},\n{\"ph\":\"E\",\"ts\":2},\n  \n",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct coll c;
		struct ptw_cv_json_read_stats st;
		struct ptw_error err;
		cr_assert_eq(read_str(cases[i], &c, &st, &err), 0, "%s", err.msg);
		cr_assert_eq(c.n, 2, "case %zu", i);
		cr_assert_eq(c.r[1].ts_ns, 2000);
		cr_assert_eq(st.cut, PTW_CV_JSON_CUT_AFTER_EVENT);
		free(c.r);
	}
	struct coll c;
	struct ptw_cv_json_read_stats st;
	struct ptw_error err;
	cr_assert_eq(read_str("[", &c, &st, &err), 0);
	cr_assert_eq(c.n, 0);
	cr_assert_eq(st.cut, PTW_CV_JSON_CUT_AFTER_EVENT);
}

Test(json_read, array_cut_mid_event_drops_only_that_event)
{
	const char *s = "[{\"name\":\"a\",\"ph\":\"B\",\"ts\":1},\n"
			"{\"name\":\"cut short\",\"ph\":\"X\",\"pid\":5450,\"ts\":30";
	struct coll c;
	struct ptw_cv_json_read_stats st;
	struct ptw_error err;
	cr_assert_eq(read_str(s, &c, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(st.cut, PTW_CV_JSON_CUT_MID_EVENT);
	cr_assert_eq(st.cut_line, 2);
	cr_assert_eq(st.cut_offset, (uint64_t)(strchr(s, '\n') - s) + 1);
	free(c.r);
}

/* Cut a valid array after every byte: every event whose '}' survives is
 * delivered, in order; nothing else; never an error. */
Test(json_read, array_cut_at_every_byte)
{
	const char *s =
		"[ {\"name\":\"\xc3\xa9t\xc3\xa9\",\"ph\":\"B\",\"ts\":1.5},\n"
		"{\"name\":\"e\\u00e9\\uD83D\\uDE00\",\"ph\":\"E\",\"ts\":-20,"
		"\"args\":{\"a\":[true,null,{\"b\":\"}\"}]}} ,\n"
		"{\"ph\":\"i\",\"ts\":12345678}\n]\n";
	size_t n = strlen(s);
	size_t ends[3], k = 0;
	for (size_t i = 0, depth = 0, in_str = 0; i < n; i++) {
		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = 0;
		} else if (s[i] == '"') {
			in_str = 1;
		} else if (s[i] == '{') {
			depth++;
		} else if (s[i] == '}' && --depth == 0) {
			ends[k++] = i + 1;
		}
	}
	cr_assert_eq(k, 3);
	for (size_t cut = 1; cut <= n; cut++) {
		struct coll c = { 0 };
		struct ptw_cv_json_read_stats st;
		struct ptw_error err;
		int rc = ptw_cv_json_read_mem(s, cut, NULL, collect, &c, &st, &err);
		cr_assert_eq(rc, 0, "cut %zu: %s", cut, err.msg);
		size_t want = 0;
		while (want < 3 && ends[want] <= cut)
			want++;
		cr_assert_eq(c.n, want, "cut %zu: %zu events, want %zu", cut, c.n,
			     want);
		if (want >= 2) {
			cr_assert_str_eq(c.r[1].name, "e\xc3\xa9\xf0\x9f\x98\x80");
			cr_assert_eq(c.r[1].ts_ns, -20000);
		}
		int closed = strrchr(s, ']') < s + cut;
		cr_assert_eq(st.cut == PTW_CV_JSON_COMPLETE, closed, "cut %zu", cut);
		free(c.r);
	}
}

/* The object form must be complete: every proper prefix that ends before
 * the closing brace is an error naming the end of the input. */
Test(json_read, object_form_cut_anywhere_is_an_error)
{
	const char *s = "{\"a\":[1,\"]\"],\"traceEvents\":[{\"ph\":\"B\",\"ts\":1},"
			"{\"ph\":\"E\",\"ts\":2}],\"b\":{\"c\":\"}\"}}";
	size_t n = strlen(s);
	for (size_t cut = 1; cut < n; cut++) {
		struct coll c = { 0 };
		struct ptw_error err = { 0 };
		int rc = ptw_cv_json_read_mem(s, cut, NULL, collect, &c, NULL, &err);
		cr_assert_eq(rc, PTW_ERR_FORMAT, "cut %zu accepted", cut);
		cr_assert_eq(err.offset, cut, "cut %zu: offset %llu: %s", cut,
			     (unsigned long long)err.offset, err.msg);
		cr_assert(strstr(err.msg, "end of input"), "cut %zu: %s", cut,
			  err.msg);
		free(c.r);
	}
}

Test(json_read, errors_name_line_column_and_byte)
{
	const char *s = "[\n{\"ph\":\"B\"},\n  {\"ph\":\"E\" \"ts\":2}\n]";
	struct coll c;
	struct ptw_error err;
	struct ptw_cv_json_read_opts o = { .input_name = "trace.json" };
	memset(&c, 0, sizeof(c));
	int rc = ptw_cv_json_read_mem(s, strlen(s), &o, collect, &c, NULL, &err);
	cr_assert_eq(rc, PTW_ERR_FORMAT);
	/* line 3: '  {"ph":"E" "ts":2}'
	 *                     ^ column 13 */
	uint64_t at = (uint64_t)(strstr(s, " \"ts\"") - s) + 1;
	cr_assert_eq(err.offset, at);
	cr_assert_eq(err.line, 3);
	cr_assert_eq(err.column, 13);
	cr_assert_str_eq(err.input, "trace.json");
	char want[200];
	snprintf(want, sizeof(want),
		 "trace.json:3:13 (byte %llu): expected ',' or '}' after a member, "
		 "found '\"'", (unsigned long long)at);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(c.n, 1); /* the first event was delivered */
	free(c.r);
}

Test(json_read, long_input_name_cuts_the_message_at_its_limit)
{
	const char *s = "[{\"ph\":\"B\",]";
	char name[300], want[600];
	struct coll c;
	struct ptw_error err;
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (size_t len = 200; len < sizeof(name); len += 20) {
		struct ptw_cv_json_read_opts o = {
			.input_name = name + sizeof(name) - 1 - len };
		memset(&c, 0, sizeof(c));
		int rc = ptw_cv_json_read_mem(s, strlen(s), &o, collect, &c,
					      NULL, &err);
		cr_assert_eq(rc, PTW_ERR_FORMAT);
		/* as if formatted in one go, then cut to PTW_ERROR_MSG_MAX */
		snprintf(want, sizeof(want),
			 "%s:1:12 (byte 11): expected '\"' starting a member "
			 "name, found ']'", o.input_name);
		want[PTW_ERROR_MSG_MAX - 1] = '\0';
		cr_assert_str_eq(err.msg, want);
		cr_assert_eq(err.input, o.input_name);
		cr_assert_eq(err.offset, 11);
		cr_assert_eq(err.column, 12);
		free(c.r);
	}
}

Test(json_read, pretty_printed_events_have_their_own_lines)
{
	const char *s = "[\n"
			"  {\n"
			"    \"ph\": \"B\",\n"
			"    \"args\": {\n"
			"      \"a\": [\n 1,\r\n 2 ]\n"
			"    }\n"
			"  },\n"
			"  {\"ph\": \"E\"}, {\"ph\": \"i\"\n,\"ts\":1}, {\"ph\": \"X\" \"ts\":2}\n"
			"]\n";
	struct coll c = { 0 };
	struct ptw_error err;
	int rc = ptw_cv_json_read_mem(s, strlen(s), NULL, collect, &c, NULL, &err);
	cr_assert_eq(rc, PTW_ERR_FORMAT);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(c.r[0].line, 2);
	cr_assert_eq(c.r[1].line, 10);
	cr_assert_eq(c.r[2].line, 10);
	cr_assert_eq(c.r[2].offset, (uint64_t)(strstr(s, "{\"ph\": \"i\"") - s));
	/* the error is on line 11, after the LF inside the third event */
	cr_assert_eq(err.line, 11, "%s", err.msg);
	const char *bad = strstr(s, " \"ts\":2");
	const char *l10 = strstr(s, ",\"ts\":1");
	cr_assert_eq(err.offset, (uint64_t)(bad - s) + 1);
	cr_assert_eq(err.column, (uint32_t)(bad - l10) + 2, "%s", err.msg);
	free(c.r);
}

Test(json_read, structural_errors)
{
	struct {
		const char *s;
		uint64_t offset;
		const char *needle;
	} cases[] = {
		{ "", 0, "empty input" },
		{ "  \n ", 4, "empty input" },
		{ "x", 0, "expected '[' or '{'" },
		{ "[{}{}]", 3, "expected ',' or ']' after an event" },
		{ "[{} {}]", 4, "expected ',' or ']' after an event" },
		{ "[1]", 1, "not a Chrome JSON trace: an array whose first "
			    "element is a number" },
		{ "[[]]", 1, "first element is an array" },
		{ "[{},1]", 4, "expected '{' starting an event" },
		{ "[{}] x", 5, "end of the input after the trace" },
		{ "[{}]]", 4, "end of the input after the trace" },
		{ "[{\"a\":1,}]", 8, "member name" },
		{ "[{\"a\":\"\x01\"}]", 7, "control character" },
		{ "{\"traceEvents\":[{}] \"x\":1}", 20, "',' or '}'" },
		{ "{\"traceEvents\":[{}],}", 20, "'\"' starting a member name" },
		{ "{\"a\" 1}", 5, "':'" },
		{ "{\"a\":1,\"traceEvents\":[{}]", 25, "end of input" },
		{ "{\"a\":[}", 6, "unbalanced '}'" },
		{ "{\"a\":,\"b\":1}", 5, "expected a value" },
		{ "{\"traceEvents\":[{\"ph\":\"B\"}", 26, "end of input" },
		{ "{\"traceEvents\":[{\"ph\":\"B\"", 25, "end of input" },
		{ "{\"tr\\x\":1}", 5, "escape" },
		/* RFC 8259: no empty element, no trailing comma (issue 24) */
		{ "[{},,{}]", 4, "found a second ','" },
		{ "[{},]", 4, "after ',', found ']'" },
		{ "[,{}]", 1, "found ','" },
		{ "{\"traceEvents\":[{},]}", 19, "after ',', found ']'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct coll c;
		struct ptw_error err = { 0 };
		int rc = read_str_strict(cases[i].s, &c, NULL, &err);
		cr_assert_eq(rc, PTW_ERR_FORMAT, "'%s' accepted", cases[i].s);
		cr_assert_eq(err.offset, cases[i].offset, "'%s': offset %llu: %s",
			     cases[i].s, (unsigned long long)err.offset, err.msg);
		cr_assert(strstr(err.msg, cases[i].needle), "'%s': %s",
			  cases[i].s, err.msg);
		cr_assert(strncmp(err.msg, "<memory>:", 9) == 0, "%s", err.msg);
		free(c.r);
	}
}

Test(json_read, callback_error_stops_the_read)
{
	struct coll c = { .stop_at = 2 };
	struct ptw_error err;
	int rc = ptw_cv_json_read_mem(ARRAY, strlen(ARRAY), NULL, collect, &c,
				      NULL, &err);
	cr_assert_eq(rc, PTW_ERR_INVALID);
	cr_assert_str_eq(err.msg, "stop requested");
	cr_assert_eq(c.n, 1);
	free(c.r);
	cr_assert_eq(ptw_cv_json_read_mem(ARRAY, 3, NULL, NULL, NULL, NULL, &err),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_cv_json_read(NULL, NULL, collect, &c, NULL, &err),
		     PTW_ERR_INVALID);
	cr_assert_eq(ptw_cv_json_read_fd(-1, NULL, collect, &c, NULL, &err),
		     PTW_ERR_INVALID);
}

Test(json_read, missing_file_is_an_io_error)
{
	struct coll c = { 0 };
	struct ptw_error err;
	int rc = ptw_cv_json_read("/nonexistent/trace.json", NULL, collect, &c,
				  NULL, &err);
	cr_assert_eq(rc, PTW_ERR_IO);
	cr_assert(strstr(err.msg, "/nonexistent/trace.json"), "%s", err.msg);
	cr_assert(err.sys_errno != 0);
}

Test(json_read, file_fd_and_stdin_read_the_same_events)
{
	char *path = tmp_file(ARRAY, strlen(ARRAY));
	struct coll c = { 0 };
	struct ptw_cv_json_read_stats st;
	struct ptw_error err;
	cr_assert_eq(ptw_cv_json_read(path, NULL, collect, &c, &st, &err), 0,
		     "%s", err.msg);
	check_array_events(&c);
	cr_assert_eq(st.bytes_in, strlen(ARRAY));
	free(c.r);

	int fd = open(path, O_RDONLY);
	memset(&c, 0, sizeof(c));
	cr_assert_eq(ptw_cv_json_read_fd(fd, NULL, collect, &c, NULL, &err), 0);
	check_array_events(&c);
	close(fd);
	free(c.r);

	/* "-" is standard input (Criterion runs each test in its own process) */
	fd = open(path, O_RDONLY);
	cr_assert_eq(dup2(fd, 0), 0);
	close(fd);
	memset(&c, 0, sizeof(c));
	cr_assert_eq(ptw_cv_json_read("-", NULL, collect, &c, NULL, &err), 0);
	check_array_events(&c);
	free(c.r);
	unlink(path);
	free(path);
}

Test(json_read, gzip_is_detected_in_memory_files_and_stdin)
{
	size_t zn;
	unsigned char *z = gzip_mem(ARRAY, strlen(ARRAY), &zn);
	struct coll c = { 0 };
	struct ptw_cv_json_read_stats st;
	struct ptw_error err;
	cr_assert_eq(ptw_cv_json_read_mem(z, zn, NULL, collect, &c, &st, &err), 0,
		     "%s", err.msg);
	check_array_events(&c);
	cr_assert_eq(st.gzip, 1);
	cr_assert_eq(st.bytes_in, zn);
	cr_assert_eq(st.bytes_json, strlen(ARRAY));
	free(c.r);

	char *path = tmp_file(z, zn);
	memset(&c, 0, sizeof(c));
	struct ptw_cv_json_read_opts o = { .chunk_bytes = 5 };
	cr_assert_eq(ptw_cv_json_read(path, &o, collect, &c, &st, &err), 0,
		     "%s", err.msg);
	check_array_events(&c);
	cr_assert_eq(st.gzip, 1);
	free(c.r);
	int fd = open(path, O_RDONLY);
	cr_assert_eq(dup2(fd, 0), 0);
	close(fd);
	memset(&c, 0, sizeof(c));
	cr_assert_eq(ptw_cv_json_read("-", NULL, collect, &c, NULL, &err), 0);
	check_array_events(&c);
	free(c.r);
	unlink(path);
	free(path);
	free(z);
}

Test(json_read, gzip_members_concatenate_and_corruption_is_reported)
{
	const char *a = "[{\"ph\":\"B\",\"ts\":1},", *b = "{\"ph\":\"E\",\"ts\":2}]";
	size_t an, bn;
	unsigned char *za = gzip_mem(a, strlen(a), &an);
	unsigned char *zb = gzip_mem(b, strlen(b), &bn);
	unsigned char *both = malloc(an + bn);
	memcpy(both, za, an);
	memcpy(both + an, zb, bn);
	struct coll c = { 0 };
	struct ptw_cv_json_read_stats st;
	struct ptw_error err;
	cr_assert_eq(ptw_cv_json_read_mem(both, an + bn, NULL, collect, &c, &st,
					  &err), 0, "%s", err.msg);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(st.cut, PTW_CV_JSON_COMPLETE);
	free(c.r);
	char *path = tmp_file(both, an + bn);
	memset(&c, 0, sizeof(c));
	cr_assert_eq(ptw_cv_json_read(path, NULL, collect, &c, &st, &err), 0);
	cr_assert_eq(c.n, 2);
	free(c.r);
	unlink(path);
	free(path);

	/* flip a byte in the deflate data */
	both[an / 2] ^= 0x55;
	memset(&c, 0, sizeof(c));
	int rc = ptw_cv_json_read_mem(both, an + bn, NULL, collect, &c, NULL,
				      &err);
	cr_assert(rc == PTW_ERR_FORMAT, "rc %d", rc);
	cr_assert(strstr(err.msg, "gzip") || strstr(err.msg, "expected"), "%s",
		  err.msg);
	free(c.r);
	/* junk after the gzip data */
	memcpy(both, za, an);
	both[an] = 'x';
	memset(&c, 0, sizeof(c));
	rc = ptw_cv_json_read_mem(both, an + 1, NULL, collect, &c, NULL, &err);
	cr_assert_eq(rc, PTW_ERR_FORMAT);
	cr_assert(strstr(err.msg, "after the gzip data"), "%s", err.msg);
	free(c.r);
	/* a gzip stream cut short is a JSON text cut short */
	memset(&c, 0, sizeof(c));
	rc = ptw_cv_json_read_mem(zb, bn - 10, NULL, collect, &c, &st, &err);
	(void)rc; /* depends on where deflate put the bytes: no crash */
	free(c.r);
	free(za);
	free(zb);
	free(both);
}

/* Found by fuzzing: a corrupt gzip stream whose good part already holds a
 * JSON error must report the same error whatever the read size (the gzip
 * error is reported only when the parser needs text beyond it). */
Test(json_read, gzip_errors_do_not_depend_on_chunking)
{
	static const unsigned char z[] = {
		0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x8b,
		0xae, 0x56, 0x2a, 0xc8, 0x50, 0xb2, 0x52, 0xca, 0x54, 0xaa, 0xd5,
		0x01, 0x22, 0x70, 0x68, 0x22, 0x3a, 0x22, 0x00, 0x00, 0x00,
	};
	struct coll a = { 0 }, b = { 0 };
	struct ptw_error ea, eb;
	int ra = ptw_cv_json_read_mem(z, sizeof(z), NULL, collect, &a, NULL, &ea);
	char *path = tmp_file(z, sizeof(z));
	struct ptw_cv_json_read_opts o = { .chunk_bytes = 1 };
	int rb = ptw_cv_json_read(path, &o, collect, &b, NULL, &eb);
	cr_assert_eq(ra, PTW_ERR_FORMAT);
	cr_assert_eq(rb, ra);
	cr_assert_eq(a.n, b.n);
	cr_assert_eq(ea.offset, eb.offset);
	cr_assert(strstr(ea.msg, "expected '{' starting an event"), "%s", ea.msg);
	unlink(path);
	free(path);
	free(a.r);
	free(b.r);
}

/* A generated trace read through tiny chunks (every event straddles a
 * refill) gives exactly the events of the in-memory read. */
Test(json_read, tiny_chunks_and_large_events_match_memory_read)
{
	size_t cap = 1 << 20, n = 0;
	char *s = malloc(cap);
	cr_assert_not_null(s);
	n += (size_t)sprintf(s + n, "[\n");
	for (int i = 0; i < 2000; i++) {
		n += (size_t)sprintf(s + n,
				     "%s{\"name\":\"ev%d\",\"ph\":\"%c\",\"pid\":%d,"
				     "\"tid\":%d,\"ts\":%d.%03d,\"args\":{\"s\":\"",
				     i ? ",\n" : "", i, "BEXiC"[i % 5], i % 7,
				     i % 13, i, i % 1000);
		int len = i % 97 == 0 ? 5000 : i % 11;
		for (int k = 0; k < len; k++)
			s[n++] = (char)('a' + k % 26);
		n += (size_t)sprintf(s + n, "\"}}");
	}
	n += (size_t)sprintf(s + n, "\n]\n");
	struct coll m = { 0 }, f = { 0 };
	struct ptw_error err;
	cr_assert_eq(ptw_cv_json_read_mem(s, n, NULL, collect, &m, NULL, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(m.n, 2000);
	char *path = tmp_file(s, n);
	size_t chunks[] = { 1, 7, 4096 };
	for (size_t ci = 0; ci < 3; ci++) {
		struct ptw_cv_json_read_opts o = { .chunk_bytes = chunks[ci] };
		memset(&f, 0, sizeof(f));
		cr_assert_eq(ptw_cv_json_read(path, &o, collect, &f, NULL, &err), 0,
			     "chunk %zu: %s", chunks[ci], err.msg);
		cr_assert_eq(f.n, m.n);
		for (size_t i = 0; i < m.n; i++) {
			cr_assert_eq(memcmp(&f.r[i], &m.r[i], sizeof(f.r[i])), 0,
				     "chunk %zu event %zu differs", chunks[ci], i);
		}
		free(f.r);
	}
	/* an event larger than max_event_bytes */
	struct ptw_cv_json_read_opts o = { .chunk_bytes = 1024,
					   .max_event_bytes = 4096 };
	memset(&f, 0, sizeof(f));
	int rc = ptw_cv_json_read(path, &o, collect, &f, NULL, &err);
	cr_assert_eq(rc, PTW_ERR_LIMIT, "%s", err.msg);
	cr_assert(strstr(err.msg, "larger than 4096 bytes"), "%s", err.msg);
	cr_assert_eq(err.line, 2); /* event 0 has the first 5000-byte arg */
	free(f.r);
	/* memory input is parsed through a window that widens on demand */
	struct ptw_cv_json_read_opts mo = { .chunk_bytes = 16 };
	memset(&f, 0, sizeof(f));
	cr_assert_eq(ptw_cv_json_read_mem(s, n, &mo, collect, &f, NULL, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(f.n, m.n);
	for (size_t i = 0; i < m.n; i++)
		cr_assert_eq(memcmp(&f.r[i], &m.r[i], sizeof(f.r[i])), 0,
			     "window: event %zu differs", i);
	free(f.r);
	mo.max_event_bytes = 4096;
	memset(&f, 0, sizeof(f));
	rc = ptw_cv_json_read_mem(s, n, &mo, collect, &f, NULL, &err);
	cr_assert_eq(rc, PTW_ERR_LIMIT, "%s", err.msg);
	cr_assert_eq(err.line, 2);
	free(f.r);
	/* the limit holds whatever the read size */
	o.chunk_bytes = 1 << 20;
	memset(&f, 0, sizeof(f));
	rc = ptw_cv_json_read(path, &o, collect, &f, NULL, &err);
	cr_assert_eq(rc, PTW_ERR_LIMIT, "%s", err.msg);
	cr_assert_eq(err.line, 2);
	free(f.r);
	unlink(path);
	free(path);
	free(m.r);
	free(s);
}

/* ---- corpus: every chrome_* case reads as its expected/merged.json ---- */


Test(json_read, corpus_chrome_cases_match_their_merged_json)
{
	char dir[512];
	ptw_test_corpus_dir_or_skip(dir, sizeof(dir));
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "cannot open corpus directory %s", dir);
	struct dirent *de;
	int cases = 0;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "chrome_", 7) != 0)
			continue;
		char in[1024], exp[1024];
		snprintf(in, sizeof(in), "%s/%s/input.json", dir, de->d_name);
		snprintf(exp, sizeof(exp), "%s/%s/expected/merged.json", dir,
			 de->d_name);
		struct coll a = { 0 }, b = { 0 };
		struct ptw_cv_json_read_stats sa, sb;
		struct ptw_error err;
		cr_assert_eq(ptw_cv_json_read(in, NULL, collect, &a, &sa, &err), 0,
			     "%s: %s", in, err.msg);
		cr_assert_eq(ptw_cv_json_read(exp, NULL, collect, &b, &sb, &err), 0,
			     "%s: %s", exp, err.msg);
		cr_assert_eq(sb.cut, PTW_CV_JSON_COMPLETE);
		cr_assert_eq(a.n, b.n, "%s: %zu events, merged.json has %zu",
			     de->d_name, a.n, b.n);
		for (size_t i = 0; i < a.n; i++) {
			cr_assert_eq(a.r[i].ph, b.r[i].ph);
			cr_assert_str_eq(a.r[i].name, b.r[i].name);
			cr_assert_eq(a.r[i].ts_ns, b.r[i].ts_ns);
			cr_assert_eq(a.r[i].dur_ns, b.r[i].dur_ns);
			cr_assert_eq(a.r[i].pid, b.r[i].pid);
			cr_assert_eq(a.r[i].tid, b.r[i].tid);
			cr_assert_eq(a.r[i].flags, b.r[i].flags);
			cr_assert_eq(a.r[i].id_num, b.r[i].id_num);
			cr_assert_eq(a.r[i].n_args, b.r[i].n_args);
		}
		if (strstr(de->d_name, "cut_mid_event"))
			cr_assert_eq(sa.cut, PTW_CV_JSON_CUT_MID_EVENT);
		if (strstr(de->d_name, "unterminated"))
			cr_assert_eq(sa.cut, PTW_CV_JSON_CUT_AFTER_EVENT);
		if (strstr(de->d_name, "object"))
			cr_assert_eq(sa.form, PTW_CV_JSON_FORM_OBJECT);
		free(a.r);
		free(b.r);
		cases++;
	}
	closedir(d);
	cr_assert(cases >= 1);
}

/* ---- trace_processor's tokenizer stop (issue 13 item 3) ----------------
 * json_trace_tokenizer.cc ParseTraceEventContents: a "dur", "tts" or
 * "tdur" that CoerceToTs fails on makes it return false with the
 * iterator's status OK; HandleTraceEvent then returns with the event
 * unconsumed ("need more data"), and every later Parse() call fails the
 * same way: nothing from that event on is imported. At the end of the
 * file, OnPushDataToSorter accepts that in the array form
 * (kInsideTraceEventsArray with kOnlyTraceEvents) and fails in the object
 * form ("JSON trace file is incomplete"). */

Test(json_read, array_form_stops_at_an_unreadable_dur_tts_or_tdur)
{
	static const char *bad[] = {
		"\"dur\":\"abc\"", "\"dur\":null", "\"dur\":true", "\"dur\":{}",
		"\"dur\":[1]", "\"dur\":\"1.\"", "\"dur\":\" 1\"",
		"\"tts\":\"x\"", "\"tdur\":false", "\"dur\":\"1e400\"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char s[512];
		/* what follows the stop is never parsed: even garbage */
		snprintf(s, sizeof(s),
			 "[{\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":1},\n"
			 "{\"ph\":\"X\",\"ts\":2,\"name\":\"x\",%s,\"pid\":1},\n"
			 "{\"ph\":\"E\",\"ts\":3,\"pid\":1,\"tid\":1}, garbage",
			 bad[i]);
		struct coll c;
		struct ptw_cv_json_read_stats st;
		struct ptw_error err = {0};
		cr_assert_eq(read_str(s, &c, &st, &err), 0, "%s: %s", bad[i],
			     err.msg);
		cr_assert_eq(c.n, 1, "%s: %zu events", bad[i], c.n);
		cr_assert_eq(c.r[0].ph, 'B');
		cr_assert_eq(st.stopped, 1);
		cr_assert_eq(st.stop_line, 2);
		cr_assert_eq(st.stop_offset, 36);
		cr_assert_eq(st.stop_bytes_left, strlen(s) - 36);
		cr_assert_str_eq(st.stop_member, bad[i][1] == 'd' ? "dur"
						 : bad[i][2] == 't' ? "tts"
								    : "tdur");
		cr_assert(strchr(bad[i], ':') &&
			  strcmp(st.stop_value, strchr(bad[i], ':') + 1) == 0,
			  "%s: value '%s'", bad[i], st.stop_value);
		free(c.r);
		/* strict mode stops the same way (a rule of the tokenizer, not
		 * of the grammar) */
		cr_assert_eq(read_str_strict(s, &c, &st, &err), 0);
		cr_assert_eq(c.n, 1);
		free(c.r);
	}
	/* a numeric string, or a member before the bad one that is fine,
	 * does not stop it; a bad ts only drops its event (ts stays at
	 * max(), "Don't check ts for metadata events") */
	struct coll c;
	struct ptw_cv_json_read_stats st;
	struct ptw_error err = {0};
	cr_assert_eq(read_str("[{\"ph\":\"X\",\"ts\":\"1\",\"dur\":\"2.5\"},"
			      "{\"ph\":\"i\",\"ts\":\"x\"},{\"ph\":\"i\",\"ts\":3}]",
			      &c, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(st.stopped, 0);
	cr_assert_eq(c.r[0].dur_ns, 2500);
	cr_assert_eq(c.r[1].flags & PTW_CV_HAS_TS, 0);
	free(c.r);
}

Test(json_read, object_form_stop_is_an_error_as_in_trace_processor)
{
	struct coll c;
	struct ptw_error err = {0};
	cr_assert_eq(read_str("{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1},\n"
			      "{\"ph\":\"X\",\"ts\":2,\"dur\":\"?\"}]}", &c, NULL,
			      &err), PTW_ERR_FORMAT);
	cr_assert_eq(c.n, 1); /* delivered before the stop */
	cr_assert_eq(err.offset, 35);
	cr_assert(strstr(err.msg, "<memory>:2:1 (byte 35): \"dur\": \"?\" is not "
			 "a number") && strstr(err.msg, "JSON trace file is "
						"incomplete"), "%s", err.msg);
	free(c.r);
}

Test(json_read, an_integer_beyond_int64_before_the_stop_is_trace_processors_error)
{
	/* StringToInt64 sets the iterator's status and ParseNumber goes on
	 * with a double; the stop then finds !it_.status().ok() and fails */
	struct coll c;
	struct ptw_error err = {0};
	cr_assert_eq(read_str("[{\"ph\":\"X\",\"id\":99999999999999999999,"
			      "\"dur\":\"x\"}]", &c, NULL, &err), PTW_ERR_FORMAT);
	cr_assert(strstr(err.msg, "Integer overflow"), "%s", err.msg);
	/* after the dur, or nested in args (not parsed by the tokenizer):
	 * the usual stop */
	struct ptw_cv_json_read_stats st;
	cr_assert_eq(read_str("[{\"ph\":\"X\",\"args\":{\"a\":99999999999999999999},"
			      "\"dur\":\"x\",\"id\":99999999999999999999}]", &c,
			      &st, &err), 0, "%s", err.msg);
	cr_assert_eq(st.stopped, 1);
}

Test(json_read, numbers_trace_processor_rejects)
{
	/* StringToDouble: inf or NaN is an error; in an event member its
	 * tokenizer fails the load ("Failure parsing JSON") */
	struct coll c;
	struct ptw_error err = {0};
	cr_assert_eq(read_str("[{\"ph\":\"i\",\"ts\":1e400}]", &c, NULL, &err),
		     PTW_ERR_FORMAT);
	cr_assert(strstr(err.msg, "number 1e400") &&
		  strstr(err.msg, "(byte 16)"), "%s", err.msg);
	cr_assert_eq(read_str("[{\"ph\":\"i\",\"x\":0e400}]", &c, NULL, &err),
		     PTW_ERR_FORMAT);
	/* in args its args parser stops there and keeps the args before */
	cr_assert_eq(read_str("[{\"ph\":\"i\",\"ts\":1,\"args\":{\"a\":1,"
			      "\"b\":1e999,\"c\":2}}]", &c, NULL, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.r[0].n_args, 1);
	free(c.r);
}

/* ---- leniency (issue 13 item 9) ----------------------------------------
 * What trace_processor's JSON reader accepts beyond RFC 8259: its
 * Iterator (util/json_parser.h) takes a ',' before '}' (OnPostValue
 * consumes it, then '}' ends the scope) and before ']'; ScanString takes
 * any byte but '"' (raw control characters, invalid UTF-8); UnescapeString
 * drops an unknown escape; HandleTraceEvent needs no ',' between events;
 * ReadOneJsonKey skips any commas between the trace object's members;
 * an event member's object or array is only bracket-balanced
 * (ScanToEndOfDelimitedBlock). Each lenient text must read as its strict
 * twin does. */

struct twin {
	const char *lenient, *strict;
	uint64_t repairs;
};

static void same_events(const struct coll *a, const struct coll *b,
			const char *what)
{
	cr_assert_eq(a->n, b->n, "%s: %zu vs %zu events", what, a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		cr_assert_eq(a->r[i].ph, b->r[i].ph, "%s: event %zu", what, i);
		cr_assert_str_eq(a->r[i].name, b->r[i].name, "%s", what);
		cr_assert_eq(a->r[i].flags, b->r[i].flags, "%s", what);
		cr_assert_eq(a->r[i].ts_ns, b->r[i].ts_ns, "%s", what);
		cr_assert_eq(a->r[i].dur_ns, b->r[i].dur_ns, "%s", what);
		cr_assert_eq(a->r[i].pid, b->r[i].pid, "%s", what);
		cr_assert_eq(a->r[i].tid, b->r[i].tid, "%s", what);
		cr_assert_eq(a->r[i].n_args, b->r[i].n_args, "%s", what);
		cr_assert_eq(a->r[i].line, b->r[i].line, "%s: event %zu line",
			     what, i);
	}
}

Test(json_read, lenient_input_reads_as_its_strict_twin)
{
	static const struct twin tw[] = {
		{"[{\"ph\":\"i\",\"ts\":1,},\n{\"ph\":\"i\",\"ts\":2}]",
		 "[{\"ph\":\"i\",\"ts\":1},\n{\"ph\":\"i\",\"ts\":2}]", 1},
		{"[{\"ph\":\"i\",\"ts\":1,\"args\":{\"a\":[1,2,],\"b\":{\"c\":1,},}}]",
		 "[{\"ph\":\"i\",\"ts\":1,\"args\":{\"a\":[1,2],\"b\":{\"c\":1}}}]",
		 3},
		{"[{\"ph\":\"i\",\"ts\":1}\n{\"ph\":\"i\",\"ts\":2} {\"ph\":\"B\",\"ts\":3}]",
		 "[{\"ph\":\"i\",\"ts\":1},\n{\"ph\":\"i\",\"ts\":2},{\"ph\":\"B\",\"ts\":3}]",
		 2},
		{"{,\"traceEvents\":[{\"ph\":\"i\",\"ts\":1}] \"x\":1,,\"y\":2,}",
		 "{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1}],\"x\":1,\"y\":2}", 4},
		{"[{\"ph\":\"i\",\"name\":\"a\tb\",\"ts\":1}]",
		 "[{\"ph\":\"i\",\"name\":\"a\\tb\",\"ts\":1}]", 1},
		{"[{\"ph\":\"i\",\"name\":\"\\x\\qab\",\"ts\":1}]",
		 "[{\"ph\":\"i\",\"name\":\"ab\",\"ts\":1}]", 2},
		{"[{\"ph\":\"i\",\"ts\":1}] trailing",
		 "[{\"ph\":\"i\",\"ts\":1}]", 1},
		{"[,{\"ph\":\"i\",\"ts\":1},,{\"ph\":\"i\",\"ts\":2},]",
		 "[{\"ph\":\"i\",\"ts\":1},{\"ph\":\"i\",\"ts\":2}]", 3},
		/* args: trace_processor's args parser stops at the first value
		 * it cannot parse (NaN from Python's json.dumps), keeping the
		 * args before it */
		{"[{\"ph\":\"i\",\"ts\":1,\"args\":{\"a\":1,\"b\":NaN,\"c\":2}}]",
		 "[{\"ph\":\"i\",\"ts\":1,\"args\":{\"a\":1}}]", 1},
		{"[{\"ph\":\"i\",\"other\":{ not json [ } ,\"ts\":1}]",
		 "[{\"ph\":\"i\",\"other\":{},\"ts\":1}]", 1},
	};
	for (size_t i = 0; i < sizeof(tw) / sizeof(tw[0]); i++) {
		struct coll a, b;
		struct ptw_cv_json_read_stats st;
		struct ptw_error err = {0};
		cr_assert_eq(read_str(tw[i].lenient, &a, &st, &err), 0, "%s: %s",
			     tw[i].lenient, err.msg);
		cr_assert_eq(st.repairs, tw[i].repairs, "%s: %llu repairs",
			     tw[i].lenient, (unsigned long long)st.repairs);
		cr_assert_not_null(st.repair_what);
		cr_assert_eq(read_str_strict(tw[i].strict, &b, NULL, &err), 0,
			     "%s: %s", tw[i].strict, err.msg);
		same_events(&a, &b, tw[i].lenient);
		free(b.r);
		/* --strict refuses the lenient text, saying where */
		cr_assert_eq(read_str_strict(tw[i].lenient, &b, NULL, &err),
			     PTW_ERR_FORMAT, "%s accepted by --strict",
			     tw[i].lenient);
		cr_assert(strncmp(err.msg, "<memory>:", 9) == 0 &&
			  strstr(err.msg, "expected") ? 1
			  : strstr(err.msg, "inside a string") != NULL,
			  "%s", err.msg);
		free(a.r);
		free(b.r);
	}
}

Test(json_read, lenient_repairs_keep_line_numbers_and_the_first_place)
{
	/* a raw LF inside a string is a new line of the file */
	struct coll c;
	struct ptw_cv_json_read_stats st;
	struct ptw_error err = {0};
	cr_assert_eq(read_str("[{\"ph\":\"i\",\"ts\":1},\n{\"ph\":\"i\",\"name\":\"a\nb\","
			      "\"ts\":2},\n{\"ph\":\"i\",\"ts\":3,}]", &c, &st, &err),
		     0, "%s", err.msg);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(c.r[2].line, 4);
	cr_assert_eq(st.repairs, 2);
	cr_assert_eq(st.repair_line, 2);
	cr_assert_eq(st.repair_offset, 39);
	cr_assert(strstr(st.repair_what, "control character"), "%s",
		  st.repair_what);
	free(c.r);
	/* what trace_processor rejects stays an error: a lone surrogate, a
	 * bad \u, two commas in an event, a missing comma in an event */
	static const char *bad[] = {
		"[{\"ph\":\"i\",\"name\":\"\\ud800\"}]",
		"[{\"ph\":\"i\",\"name\":\"\\u12g4\"}]",
		"[{\"ph\":\"i\",,\"ts\":1}]",
		"[{\"ph\":\"i\" \"ts\":1}]",
		"[{\"ph\":\"i\",\"ts\":01}]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(read_str(bad[i], &c, NULL, &err), PTW_ERR_FORMAT,
			     "%s accepted", bad[i]);
		free(c.r);
	}
}

/* ---- not Chrome JSON (issue 13 item 10) -------------------------------- */

Test(json_read, json_that_is_not_a_chrome_trace_is_named)
{
	static const struct {
		const char *s, *needle;
	} cases[] = {
		{"{\"meta\":{\"version\":24},\"libs\":[],\"threads\":[{\"samples\":{}}]}",
		 "Gecko profiler JSON"},
		{"{\"meta\":{},\"processes\":[]}", "Gecko profiler JSON"},
		{"{\"nodes\":[],\"startTime\":0,\"samples\":[]}", "V8 CPU profile"},
		{"{\"systemTraceEvents\":\"# tracer: nop\\n\"}",
		 "only \"systemTraceEvents\""},
		{"{\"displayTimeUnit\":\"ns\",\"metadata\":{}}",
		 "a JSON object without \"traceEvents\""},
		{"{}", "a JSON object without \"traceEvents\""},
		{"\"trace\"", "the input is a JSON string"},
		{"42", "the input is a JSON number"},
		{"true", "the input is a JSON boolean"},
		{"null", "the input is a JSON null"},
		{"<html>", "not JSON at all"},
		{"[\"a\"]", "an array whose first element is a string"},
		/* cut short, but already recognisable */
		{"{\"meta\":{},\"threads\":[", "Gecko profiler JSON"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int strict = 0; strict < 2; strict++) {
			struct coll c;
			struct ptw_error err = {0};
			int rc = strict ? read_str_strict(cases[i].s, &c, NULL, &err)
					: read_str(cases[i].s, &c, NULL, &err);
			cr_assert_eq(rc, PTW_ERR_FORMAT, "%s accepted", cases[i].s);
			cr_assert(strstr(err.msg, "not a Chrome JSON trace") &&
				  strstr(err.msg, cases[i].needle), "%s: %s",
				  cases[i].s, err.msg);
			free(c.r);
		}
	}
	/* the empty forms are fine */
	struct coll c;
	struct ptw_error err = {0};
	cr_assert_eq(read_str("[]", &c, NULL, &err), 0);
	cr_assert_eq(read_str("{\"traceEvents\":[]}", &c, NULL, &err), 0);
}

/* A number cut by the parse window was read as if it ended there: with an
 * exponent of many digits its value (finite or not, which decides whether
 * trace_processor loads the file) then depended on the read size (found
 * by fuzz_chrome_json). Every read size must give the same answer. */
Test(json_read, a_number_cut_by_the_read_window_waits_for_its_end)
{
	const char *s = "[\n{\"name\":\"a\",\"cat\":\"c\",\"pj\":\"B\",\"pid\":"
			"55555555555555555555e55555555555555555555555}\n]\n";
	for (size_t chunk = 1; chunk <= 64; chunk++) {
		struct ptw_cv_json_read_opts o = {.chunk_bytes = chunk};
		struct coll c;
		struct ptw_cv_json_read_stats st;
		struct ptw_error err;
		memset(&c, 0, sizeof(c));
		int rc = ptw_cv_json_read_mem(s, strlen(s), &o, collect, &c, &st,
					      &err);
		cr_assert_eq(rc, 0, "chunk %zu: %s", chunk, err.msg);
		cr_assert_eq(c.n, 1, "chunk %zu", chunk);
		free(c.r);
	}
}
