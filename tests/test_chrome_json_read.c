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

#include "chrome_json.h"
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
	free(c.r);
	/* an empty traceEvents is a trace without events */
	cr_assert_eq(read_str("{\"metadata\":{},\"traceEvents\":[]}", &c, &st,
			      &err), 0, "%s", err.msg);
	cr_assert_eq(c.n, 0);
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
	ptw_test_corpus_dir(dir, sizeof(dir));
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
