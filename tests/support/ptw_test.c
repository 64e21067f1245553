/* ptw_test.c - helpers for every Criterion suite (see ptw_test.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include "ptw_test.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ptw_test_src_root(char *buf, size_t len)
{
	snprintf(buf, len, "%s", __FILE__); /* <root>/tests/support/ptw_test.c */
	for (int k = 0; k < 3; k++) {
		char *s = strrchr(buf, '/');
		if (s)
			*s = '\0';
	}
}

/* BUILDDIR/bin-run/NAME: "exec $PTW_TEST_RUNNER BUILDDIR/bin/NAME", as
 * the kernel cannot run a cross-built program itself (qemu-user without
 * binfmt_misc). Written to a temporary name and renamed: suites run at
 * the same time may write it too. */
static void ptw_test_runner_script(char *buf, size_t len, const char *build,
				   const char *name, const char *prog,
				   const char *runner)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 32];
	int n = snprintf(dir, sizeof(dir), "%s/bin-run", build);
	cr_assert(n > 0 && (size_t)n < sizeof(dir));
	cr_assert(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s: %s",
		  dir, strerror(errno));
	n = snprintf(buf, len, "%s/%s", dir, name);
	cr_assert(n > 0 && (size_t)n < len);
	snprintf(tmp, sizeof(tmp), "%s.%ld", buf, (long)getpid());
	FILE *f = fopen(tmp, "w");
	cr_assert_not_null(f, "%s: %s", tmp, strerror(errno));
	fprintf(f, "#!/bin/sh\nexec %s '%s' \"$@\"\n", runner, prog);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(tmp, 0755), 0);
	cr_assert_eq(rename(tmp, buf), 0, "rename to %s: %s", buf,
		     strerror(errno));
}

int ptw_test_bin(char *buf, size_t len, const char *name)
{
	char exe[PATH_MAX], prog[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = '\0';
	const char *build = dirname(dirname(exe));
	int k = snprintf(prog, sizeof(prog), "%s/bin/%s", build, name);
	cr_assert(k > 0 && (size_t)k < sizeof(prog));
	if (access(prog, X_OK) != 0) {
		snprintf(buf, len, "%s", prog);
		return -1;
	}
	const char *runner = getenv("PTW_TEST_RUNNER");
	if (runner && *runner) {
		ptw_test_runner_script(buf, len, build, name, prog, runner);
		return 0;
	}
	k = snprintf(buf, len, "%s", prog);
	cr_assert(k > 0 && (size_t)k < len);
	return 0;
}

const char *ptw_test_bin_or_skip(const char *name)
{
	static char path[PATH_MAX];
	if (ptw_test_bin(path, sizeof(path), name) != 0)
		cr_skip_test("%s not built at %s", name, path);
	return path;
}

void ptw_test_corpus_dir(char *buf, size_t len)
{
	const char *env = getenv("PTW_SHARED_DIR");
	if (env && *env) {
		snprintf(buf, len, "%s/corpus", env);
		return;
	}
	char root[4096];
	ptw_test_src_root(root, sizeof(root));
	snprintf(buf, len, "%s/../shared/corpus", root);
}

void ptw_test_corpus_dir_or_skip(char *buf, size_t len)
{
	ptw_test_corpus_dir(buf, len);
	struct stat st;
	if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
		cr_skip_test("no corpus at %s (set PTW_SHARED_DIR)", buf);
}

char *ptw_test_tmp_path(char *buf, size_t len, const char *tag)
{
	/* one counter per test process; Criterion runs each test in its own
	 * process, so pid + counter is unique */
	static unsigned counter;
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int n = snprintf(buf, len, "%s/ptw-%s-%ld-%u.pftrace", dir,
			 tag ? tag : "test", (long)getpid(), counter++);
	if (n < 0 || (size_t)n >= len)
		cr_assert_fail("ptw_test_tmp_path: buffer of %zu bytes too small",
			       len);
	return buf;
}

uint8_t *ptw_test_read_file_or_fail(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		cr_assert_fail("%s: cannot open: %s", path, strerror(errno));
	size_t cap = 65536, n = 0;
	uint8_t *buf = malloc(cap + 1);
	cr_assert_not_null(buf, "out of memory");
	for (;;) {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2 + 1);
			cr_assert_not_null(nb, "out of memory");
			buf = nb;
			cap *= 2;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad)
		cr_assert_fail("%s: read error", path);
	buf[n] = 0;
	*len = n;
	return buf;
}

void ptw_test_write_file_or_fail(const char *path, const void *data,
				 size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		cr_assert_fail("%s: cannot create: %s", path, strerror(errno));
	size_t w = len ? fwrite(data, 1, len, f) : 0;
	int bad = w != len;
	if (fclose(f) != 0)
		bad = 1;
	if (bad)
		cr_assert_fail("%s: write error", path);
}

static struct ptw_trace *check_loaded(struct ptw_trace *t,
				      const struct ptw_error *err)
{
	if (!t)
		cr_assert_fail("trace does not load: %s", err->msg);
	const struct ptw_error *f = ptw_trace_fatal(t);
	if (f) {
		char msg[PTW_ERROR_MSG_MAX];
		snprintf(msg, sizeof(msg), "%s", f->msg);
		ptw_trace_free(t);
		cr_assert_fail("trace_processor would refuse it: %s", msg);
	}
	return t;
}

struct ptw_trace *ptw_test_load_or_fail(const char *path)
{
	struct ptw_error err;
	return check_loaded(ptw_trace_load_file(path, NULL, &err), &err);
}

struct ptw_trace *ptw_test_load_mem_or_fail(const void *data, size_t len)
{
	struct ptw_error err;
	return check_loaded(ptw_trace_load_mem(data, len, NULL, NULL, &err),
			    &err);
}

struct ptw_trace *ptw_test_load_checked_or_fail(const char *path,
						uint32_t flags)
{
	struct ptw_trace *t = ptw_test_load_or_fail(path);
	struct ptw_error err;
	if (ptw_trace_check(t, flags, &err) != 0) {
		char msg[PTW_ERROR_MSG_MAX];
		snprintf(msg, sizeof(msg), "%s", err.msg);
		ptw_trace_free(t);
		cr_assert_fail("%s: %s", path, msg);
	}
	return t;
}

struct ptw_tp_model *ptw_test_model_or_fail(const struct ptw_trace *t)
{
	struct ptw_error err;
	struct ptw_tp_model *m = ptw_tp_model_build(t, &err);
	if (!m)
		cr_assert_fail("model: %s", err.msg);
	return m;
}

const struct ptw_trace_event *ptw_test_find_event(const struct ptw_trace *t,
						  int type, const char *name,
						  size_t nth)
{
	size_t n;
	const struct ptw_trace_event *e = ptw_trace_events(t, &n);
	for (size_t i = 0; i < n; i++) {
		if (type && (int)e[i].type != type)
			continue;
		if (name && (!e[i].name || strcmp(e[i].name, name) != 0))
			continue;
		if (nth-- == 0)
			return &e[i];
	}
	return NULL;
}

const struct ptw_tp_slice *ptw_test_find_slice(const struct ptw_tp_model *m,
					       const char *name, size_t nth)
{
	for (size_t i = 0; i < m->n_slices; i++) {
		const char *s = m->slices[i].name;
		if (name && (!s || strcmp(s, name) != 0))
			continue;
		if (nth-- == 0)
			return &m->slices[i];
	}
	return NULL;
}

const struct ptw_trace_arg *ptw_test_find_arg(const struct ptw_trace_event *e,
					      const char *name)
{
	for (uint32_t i = 0; i < e->n_args; i++)
		if (strcmp(e->args[i].name, name) == 0)
			return &e->args[i];
	return NULL;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

uint8_t *ptw_test_hex_or_fail(const char *hex, size_t *len)
{
	size_t n = strlen(hex);
	uint8_t *out = malloc(n / 2 + 1);
	cr_assert_not_null(out, "out of memory");
	size_t o = 0;
	int hi = -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)hex[i];
		if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
			continue;
		int v = hexval(c);
		if (v < 0)
			cr_assert_fail("bad hex digit '%c' at %zu", c, i);
		if (hi < 0) {
			hi = v;
		} else {
			out[o++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi >= 0)
		cr_assert_fail("odd number of hex digits");
	*len = o;
	return out;
}

void ptw_test_skip_if_no_thread_after_fork(void)
{
	const char *why = getenv("PTW_TEST_NO_THREAD_AFTER_FORK");
	if (why && *why)
		cr_skip_test("%s", why);
}

size_t ptw_test_scale(size_t normal, size_t small)
{
	const char *s = getenv("PTW_TEST_SCALE");
	return s && strcmp(s, "small") == 0 ? small : normal;
}

void ptw_test_same_files_or_fail(const char *pa, const char *pb,
				 const char *tag)
{
	size_t la, lb;
	uint8_t *a = ptw_test_read_file_or_fail(pa, &la);
	uint8_t *b = ptw_test_read_file_or_fail(pb, &lb);
	cr_assert_gt(la, 1000);
	cr_assert_eq(lb, la, "%s: %zu bytes vs %zu", tag, lb, la);
	size_t at = 0;
	while (at < la && a[at] == b[at])
		at++;
	cr_assert_eq(at, la, "%s: files differ from byte %zu", tag, at);
	ptw_trace_free(ptw_test_load_checked_or_fail(pa, 0));
	free(a);
	free(b);
	unlink(pa);
	unlink(pb);
}

void ptw_test_start_or_fail(const struct ptw_config *cfg)
{
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	cr_assert_eq(ptw_start_ex(cfg, &err), 0, "ptw_start: %s", err.msg);
}

void ptw_test_start_file(char *path, size_t len, const char *tag)
{
	ptw_test_tmp_path(path, len, tag);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	ptw_test_start_or_fail(&cfg);
}
