/* test_sink.c - the writer's output sink: the bytes it writes, the disk
 * space it reserves ahead of them and gives back at close, the writes
 * that end on PTW_SINK_ALIGN boundaries (and what they hold back), and
 * how it carries on when reserving fails (no support, no space).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ptw/writer.h"
#include "lib/writer/sink.h"
#include "lib/writer/writer_state.h"
#include "test_writer_util.h"

/* A scratch file in a directory whose file system reserves space the
 * way the sink does (not tmpfs, fallocate works), or NULL. /tmp first,
 * then the working directory (the build tree). */
static char *reserving_path(void)
{
	static const char *const dirs[] = {"/tmp", "."};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *p = NULL;
		if (asprintf(&p, "%s/ptw_test_sink_XXXXXX", dirs[i]) < 0)
			return NULL;
		int fd = mkstemp(p);
		if (fd < 0) {
			free(p);
			continue;
		}
		struct statfs fs;
		struct stat st;
		int ok = fstatfs(fd, &fs) == 0 && fs.f_type != TMPFS_MAGIC &&
			 fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20) == 0 &&
			 fstat(fd, &st) == 0 && st.st_blocks * 512 >= (1 << 20) &&
			 ftruncate(fd, 0) == 0;
		close(fd);
		if (ok)
			return p;
		unlink(p);
		free(p);
	}
	return NULL;
}

/* reserving_path(), or the test is skipped. */
static char *reserving_path_or_skip(void)
{
	char *path = reserving_path();
	if (!path)
		cr_skip_test("no file system here reserves space (tmpfs only?)");
	return path;
}

/* reserving_path_or_skip() opened for writing. */
static int open_reserving(char **path)
{
	*path = reserving_path_or_skip();
	int fd = open(*path, O_WRONLY | O_TRUNC);
	cr_assert_geq(fd, 0, "%s: %s", *path, strerror(errno));
	return fd;
}

/* A sink on a fresh file of a reserving file system (owning the fd or
 * not); the test is skipped without one. */
static void sink_on_reserving_file(struct ptw_sink *s, char **path,
				   int own_fd)
{
	ptw_sink_init(s, open_reserving(path), own_fd);
}

static struct stat stat_of(const char *path)
{
	struct stat st;
	cr_assert_eq(stat(path, &st), 0, "stat %s: %s", path, strerror(errno));
	return st;
}

/* Bytes of disk the file takes. */
static long long disk_bytes(const struct stat *st)
{
	return (long long)st->st_blocks * 512;
}

/* Fills buf with a pattern that depends on the offset. */
static void pattern(unsigned char *buf, size_t n, size_t at)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)((at + i) * 131u >> 3);
}

/* 1 if the file holds exactly 'n' pattern bytes from offset 'from'. */
static int holds_pattern(const char *path, size_t from, size_t n)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	cr_assert_eq(fseek(f, (long)from, SEEK_SET), 0);
	unsigned char *got = malloc(n + 1), *want = malloc(n);
	cr_assert(got && want);
	size_t k = fread(got, 1, n + 1, f);
	pattern(want, n, from);
	int same = k == n && memcmp(got, want, n) == 0;
	fclose(f);
	free(got);
	free(want);
	return same;
}

/* Writes 'total' pattern bytes through s in pieces of 'piece'. */
static void write_pattern(struct ptw_sink *s, size_t from, size_t total,
			  size_t piece)
{
	unsigned char *buf = malloc(piece);
	cr_assert_not_null(buf);
	for (size_t at = 0; at < total; at += piece) {
		size_t n = total - at < piece ? total - at : piece;
		pattern(buf, n, from + at);
		cr_assert_eq(ptw_sink_write(s, buf, n), 0, "write at %zu: %s",
			     at, strerror(s->failed_errno));
	}
	free(buf);
}

Test(sink, reserves_ahead_and_gives_back_at_close)
{
	char *path;
	struct ptw_sink s;
	sink_on_reserving_file(&s, &path, 1);
	cr_assert_eq(s.prealloc, 1);
	cr_assert_not_null(s.carry);
	/* 3 MiB in odd pieces: one reservation covers them all */
	size_t total = (3u << 20) + 12345;
	write_pattern(&s, 0, total, 70001);
	cr_assert_eq(s.pos + s.carry_len, total);
	cr_assert_eq(s.bytes_written, s.pos);
	cr_assert_eq(s.alloc_end, PTW_SINK_PREALLOC_STEP);
	struct stat st = stat_of(path);
	cr_assert_eq((uint64_t)st.st_size, s.pos, "the size counts bytes written only");
	cr_assert_geq(disk_bytes(&st), (long long)PTW_SINK_PREALLOC_STEP,
		      "space reserved past the end: %lld bytes on disk",
		      disk_bytes(&st));
	/* past the reservation: the next one starts where it ended */
	write_pattern(&s, total, PTW_SINK_PREALLOC_STEP, 1u << 20);
	cr_assert_eq(s.alloc_end, 2ull * PTW_SINK_PREALLOC_STEP);
	total += PTW_SINK_PREALLOC_STEP;
	cr_assert_eq(ptw_sink_close(&s), 0);
	cr_assert_null(s.carry);
	st = stat_of(path);
	cr_assert_eq((size_t)st.st_size, total, "close wrote what was held back");
	cr_assert_lt(disk_bytes(&st), (long long)total + (256 << 10),
		     "the reserve was given back: %lld bytes on disk for %zu",
		     disk_bytes(&st), total);
	cr_assert(holds_pattern(path, 0, total));
	unlink(path);
	free(path);
}

Test(sink, large_writes_end_on_a_boundary_and_hold_back_the_rest)
{
	char *path;
	struct ptw_sink s;
	sink_on_reserving_file(&s, &path, 1);
	const size_t a = PTW_SINK_ALIGN;
	size_t total = 0;
	/* pieces of PTW_SINK_ALIGN bytes and more: every write ends at a
	 * boundary, the rest waits (fewer than PTW_SINK_ALIGN bytes) */
	const size_t pieces[] = {a, a + 1, 3 * a - 1, 100000, a, 262150, 262150};
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		write_pattern(&s, total, pieces[i], pieces[i]);
		total += pieces[i];
		cr_assert_eq(s.pos, total / a * a, "piece %zu", i);
		cr_assert_eq(s.carry_len, total % a, "piece %zu", i);
		cr_assert_eq((uint64_t)stat_of(path).st_size, s.pos);
		cr_assert(holds_pattern(path, 0, (size_t)s.pos));
	}
	/* a smaller write goes out whole, after what was held back */
	write_pattern(&s, total, 10, 10);
	total += 10;
	cr_assert_eq(s.carry_len, 0);
	cr_assert_eq((size_t)stat_of(path).st_size, total);
	/* sync writes what is held back, and the next boundary is absolute */
	write_pattern(&s, total, 100000, 100000);
	cr_assert_eq(s.pos % a, 0);
	cr_assert_eq(ptw_sink_sync(&s), 0);
	total += 100000;
	cr_assert_eq(s.carry_len, 0);
	cr_assert_eq(s.pos, total);
	cr_assert_eq((size_t)stat_of(path).st_size, total);
	cr_assert_eq(ptw_sink_sync(&s), 0, "nothing held back: no-op");
	write_pattern(&s, total, 2 * a, 2 * a);
	total += 2 * a;
	cr_assert_eq(s.pos, total / a * a);
	cr_assert_eq(ptw_sink_close(&s), 0);
	cr_assert_eq((size_t)stat_of(path).st_size, total);
	cr_assert(holds_pattern(path, 0, total));
	unlink(path);
	free(path);
}

Test(sink, a_write_larger_than_the_step_is_reserved_whole)
{
	char *path;
	struct ptw_sink s;
	sink_on_reserving_file(&s, &path, 1);
	size_t big = PTW_SINK_PREALLOC_STEP + PTW_SINK_ALIGN + 1;
	write_pattern(&s, 0, big, big);
	cr_assert_eq(s.pos, PTW_SINK_PREALLOC_STEP + PTW_SINK_ALIGN);
	cr_assert_eq(s.alloc_end, 2ull * PTW_SINK_PREALLOC_STEP);
	cr_assert_eq(ptw_sink_close(&s), 0);
	cr_assert(holds_pattern(path, 0, big));
	unlink(path);
	free(path);
}

Test(sink, starts_reserving_at_the_fds_offset)
{
	char *path;
	int fd = open_reserving(&path);
	unsigned char head[1000];
	pattern(head, sizeof(head), 0);
	cr_assert_eq(write(fd, head, sizeof(head)), (ssize_t)sizeof(head));
	struct ptw_sink s;
	ptw_sink_init(&s, fd, 1);
	cr_assert_eq(s.pos, sizeof(head));
	write_pattern(&s, sizeof(head), 5000, 5000);
	cr_assert_eq(s.alloc_end, sizeof(head) + PTW_SINK_PREALLOC_STEP);
	/* boundaries are file offsets, not counts of bytes given */
	write_pattern(&s, 6000, 100000, 100000);
	cr_assert_eq(s.pos, PTW_SINK_ALIGN);
	cr_assert_eq(ptw_sink_close(&s), 0);
	cr_assert_eq(stat_of(path).st_size, 106000);
	cr_assert(holds_pattern(path, 0, 106000));
	unlink(path);
	free(path);
}

Test(sink, reserves_nothing_for_an_fd_it_does_not_own)
{
	char *path;
	struct ptw_sink s;
	sink_on_reserving_file(&s, &path, 0);
	cr_assert_eq(s.prealloc, 0);
	cr_assert_null(s.carry);
	write_pattern(&s, 0, 100000, 70000);
	cr_assert_eq(s.alloc_end, 0);
	cr_assert_eq(stat_of(path).st_size, 100000, "nothing held back");
	int fd = s.fd;
	cr_assert_eq(ptw_sink_close(&s), 0);
	cr_assert_eq(close(fd), 0, "the caller's fd stays open");
	cr_assert(holds_pattern(path, 0, 100000));
	unlink(path);
	free(path);
}

Test(sink, reserves_nothing_for_pipes_devices_and_tmpfs)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	struct ptw_sink s;
	ptw_sink_init(&s, p[1], 1);
	cr_assert_eq(s.prealloc, 0, "a pipe");
	cr_assert_null(s.carry);
	cr_assert_eq(ptw_sink_write(&s, "abc", 3), 0);
	cr_assert_eq(ptw_sink_close(&s), 0);
	char got[4] = {0};
	cr_assert_eq(read(p[0], got, sizeof(got)), 3);
	cr_assert_str_eq(got, "abc");
	close(p[0]);

	int fd = open("/dev/null", O_WRONLY);
	cr_assert_geq(fd, 0);
	ptw_sink_init(&s, fd, 1);
	cr_assert_eq(s.prealloc, 0, "a device");
	cr_assert_eq(ptw_sink_close(&s), 0);

	struct statfs fs;
	if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC)
		return; /* no tmpfs to check */
	char shm[] = "/dev/shm/ptw_test_sink_XXXXXX";
	fd = mkstemp(shm);
	cr_assert_geq(fd, 0);
	ptw_sink_init(&s, fd, 1);
	cr_assert_eq(s.prealloc, 0, "tmpfs");
	cr_assert_null(s.carry);
	cr_assert_eq(ptw_sink_close(&s), 0);
	unlink(shm);
}

/* Makes fallocate fail with 'err' in this process (each test runs in a
 * process of its own); 0, or -1 if the kernel does not let us. */
static int fail_fallocate_with(int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fallocate, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0 ? 0 : -1;
}

/* The file system cannot reserve (err): the sink stops trying and
 * writes on as before. */
static void carries_on_when_reserving_fails(int err)
{
	char *path;
	int fd = open_reserving(&path);
	if (fail_fallocate_with(err) != 0)
		cr_skip_test("cannot install a seccomp filter here");
	struct ptw_sink s;
	ptw_sink_init(&s, fd, 1);
	cr_assert_eq(s.prealloc, 1);
	errno = 0;
	write_pattern(&s, 0, 300000, 30000);
	cr_assert_eq(s.prealloc, 0, "reserving turned off");
	cr_assert_eq(s.alloc_end, 0);
	cr_assert_eq(s.failed_errno, 0);
	cr_assert_eq(ptw_sink_close(&s), 0);
	cr_assert_eq(stat_of(path).st_size, 300000);
	cr_assert(holds_pattern(path, 0, 300000));
	unlink(path);
	free(path);
}

Test(sink, carries_on_when_the_fs_cannot_reserve)
{
	carries_on_when_reserving_fails(EOPNOTSUPP);
}

Test(sink, carries_on_when_no_space_is_left_to_reserve)
{
	carries_on_when_reserving_fails(ENOSPC);
}

/* A writer on a file of a reserving file system (the test is skipped
 * without one) after n instants at 1000, 1001, ... on one track. */
static struct ptw_writer *writer_with_instants(char **path, uint32_t n)
{
	*path = reserving_path_or_skip();
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(*path, NULL, &err);
	cr_assert_not_null(w, "open: %s", err.msg);
	uint64_t tr = ptw_writer_add_track(w, "t", 0, -1);
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	cr_assert(tr && s);
	for (uint32_t i = 0; i < n; i++) {
		struct ptw_event ev = {.track = tr, .ts = 1000 + i, .name = "e"};
		cr_assert_eq(ptw_seq_instant(s, &ev), 0);
	}
	return w;
}

/* Through the writer: a trace file of its own reserves while it is
 * written, takes no more disk than its size once closed, and decodes. */
Test(sink, writer_trace_is_whole_and_gives_its_reserve_back)
{
	char *path;
	const uint32_t n = 100000;
	struct ptw_writer *w = writer_with_instants(&path, n);
	struct ptw_error err;
	/* flushes at the threshold end on a boundary of the file */
	struct ptw_writer_stats ws;
	ptw_writer_get_stats(w, &ws);
	struct stat st = stat_of(path);
	cr_assert_gt(st.st_size, 256 << 10);
	cr_assert_eq(st.st_size % PTW_SINK_ALIGN, 0);
	cr_assert_eq((uint64_t)st.st_size, ws.bytes_written);
	cr_assert_geq(disk_bytes(&st), (long long)PTW_SINK_PREALLOC_STEP);
	/* an explicit flush puts every packet in the file */
	cr_assert_eq(ptw_writer_flush(w), 0);
	ptw_writer_get_stats(w, &ws);
	st = stat_of(path);
	cr_assert_eq((uint64_t)st.st_size, ws.bytes_written);
	struct tw_trace t;
	cr_assert_eq(tw_decode_file(&t, path), 0, "%s", t.err);
	cr_assert_eq(t.n_ev, n, "all events in the file after ptw_writer_flush");
	tw_trace_free(&t);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	st = stat_of(path);
	cr_assert_lt(disk_bytes(&st), (long long)st.st_size + (256 << 10));
	cr_assert_eq(tw_decode_file(&t, path), 0, "%s", t.err);
	cr_assert_eq(t.n_ev, n);
	for (uint32_t i = 0; i < n; i++)
		cr_assert_eq(t.ev[i].ts, 1000 + i);
	tw_trace_free(&t);
	unlink(path);
	free(path);
}

/* Writing what the sink held back can fail too (here the fd is turned
 * into /dev/full behind the writer's back): ptw_writer_flush and close
 * report it. */
Test(sink, writer_reports_a_failed_write_of_what_was_held_back)
{
	char *path;
	struct ptw_writer *w = writer_with_instants(&path, 40000);
	struct ptw_error err;
	cr_assert_gt(w->sink.pos, 0);
	cr_assert_gt(w->sink.carry_len, 0, "this workload leaves bytes held back");
	int full = open("/dev/full", O_WRONLY);
	if (full < 0)
		cr_skip_test("no /dev/full");
	cr_assert_geq(dup2(full, w->sink.fd), 0);
	close(full);
	cr_assert_eq(ptw_writer_flush(w), PTW_ERR_IO);
	cr_assert_eq(ptw_writer_error(w)->sys_errno, ENOSPC);
	cr_assert(strstr(ptw_writer_error(w)->msg, "trace write failed"),
		  "%s", ptw_writer_error(w)->msg);
	cr_assert_eq(ptw_writer_close(w, &err), PTW_ERR_IO);
	unlink(path);
	free(path);
}
