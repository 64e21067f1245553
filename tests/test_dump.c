/* test_dump.c - the ptw-dump command line: modes, exit codes, messages.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "ptw/tracer.h"
#include "ptw/writer.h"
#include "support/trace_build.h"

static const char *dump_path(void)
{
	return ptw_test_bin_or_skip("ptw-dump");
}

struct run {
	int status; /* exit code, or 128 + signal */
	char *out;  /* stdout */
	char *err;  /* stderr */
};

static struct run run_dump(const char *args)
{
	char o[256], e[256], cmd[PATH_MAX + 2048];
	ptw_test_tmp_path(o, sizeof(o), "dump-out");
	ptw_test_tmp_path(e, sizeof(e), "dump-err");
	int len = snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>'%s'",
			   dump_path(), args, o, e);
	cr_assert(len > 0 && (size_t)len < sizeof(cmd));
	int st = system(cmd);
	cr_assert_neq(st, -1);
	struct run r;
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	size_t n;
	r.out = (char *)ptw_test_read_file_or_fail(o, &n);
	r.err = (char *)ptw_test_read_file_or_fail(e, &n);
	unlink(o);
	unlink(e);
	return r;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static size_t count_lines(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* seq 2: clear + snapshot, thread 2, then BEGIN "a" / END; uuid 9 gets an
 * undefined name iid when 'bad' is set */
static void write_trace(const char *path, int bad, int batch)
{
	struct ptw_tb b, in;
	ptw_tb_init(&b);
	ptw_tb_init(&in);
	ptw_tb_start_seq(&b, 2, 64, 2, 1000);
	struct ptw_tb *x = batch ? &in : &b;
	ptw_tb_begin_on(x, 2, 0);
	ptw_tb_thread_track(x, 2, 5, 6, "main");
	ptw_tb_end(x);
	ptw_tb_begin_on(x, 2, 10);
	ptw_tb_open(x, 11);
	ptw_tb_varint(x, 9, 1);
	if (bad)
		ptw_tb_varint(x, 10, 9);
	else
		ptw_tb_string(x, 23, "a");
	ptw_tb_close(x);
	ptw_tb_end(x);
	ptw_tb_begin_on(x, 2, 10);
	ptw_tb_open(x, 11);
	ptw_tb_varint(x, 9, 2);
	ptw_tb_close(x);
	ptw_tb_end(x);
	if (batch)
		ptw_tb_compressed(&b, in.out.data, in.out.len, 0);
	ptw_test_write_file_or_fail(path, b.out.data, b.out.len);
	ptw_tb_free(&b);
	ptw_tb_free(&in);
}

Test(dump, check_ok_prints_a_summary)
{
	char p[256], a[600];
	ptw_test_tmp_path(p, sizeof(p), "dump-ok");
	write_trace(p, 0, 0);
	snprintf(a, sizeof(a), "--check '%s'", p);
	struct run r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, ": ok: 4 packets") != NULL, "%s", r.out);
	cr_assert(strstr(r.out, "2 events") != NULL, "%s", r.out);
	run_free(&r);
	unlink(p);
}

/* An undefined iid: trace_processor loads the file (it counts a stat),
 * so --check passes with a warning naming the byte; --strict fails. */
Test(dump, check_failure_names_file_and_byte)
{
	char p[256], a[600], want[400], warn[420];
	ptw_test_tmp_path(p, sizeof(p), "dump-bad");
	write_trace(p, 1, 0);
	struct ptw_trace *t = ptw_test_load_or_fail(p);
	const struct ptw_trace_event *e = ptw_test_find_event(t, 1, NULL, 0);
	cr_assert_not_null(e);
	snprintf(want, sizeof(want), "%s: byte %llu: event name iid 9", p,
		 (unsigned long long)e->offset);
	snprintf(warn, sizeof(warn), "%s: warning: byte %llu: event name iid 9",
		 p, (unsigned long long)e->offset);
	ptw_trace_free(t);
	snprintf(a, sizeof(a), "-c '%s'", p);
	struct run r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strncmp(r.err, warn, strlen(warn)) == 0, "got '%s' want '%s'",
		  r.err, warn);
	cr_assert(strstr(r.out, ": ok: ") && strstr(r.out, ", 1 warning(s)"),
		  "%s", r.out);
	run_free(&r);
	snprintf(a, sizeof(a), "-c --strict '%s'", p);
	r = run_dump(a);
	cr_assert_eq(r.status, 1);
	cr_assert(strncmp(r.err, want, strlen(want)) == 0, "got '%s' want '%s'",
		  r.err, want);
	cr_assert_str_eq(r.out, "");
	run_free(&r);

	snprintf(a, sizeof(a), "--diags '%s'", p);
	r = run_dump(a);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "seq=2: event name iid 9") != NULL, "%s", r.out);
	run_free(&r);
	unlink(p);
}

Test(dump, packets_and_batches_are_printed)
{
	char p[256], a[600];
	ptw_test_tmp_path(p, sizeof(p), "dump-batch");
	write_trace(p, 0, 1);
	snprintf(a, sizeof(a), "'%s'", p);
	struct run r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "@0 #0 seq=2 flags=CLEARED") != NULL, "%s",
		  r.out);
	cr_assert(strstr(r.out, "compressed_packets") != NULL, "%s", r.out);
	cr_assert_eq(count_lines(r.out, "\n    +"), 3, "%s", r.out);
	cr_assert(strstr(r.out, "track_event SLICE_BEGIN track=2 name=\"a\"") !=
			  NULL, "%s", r.out);
	cr_assert(strstr(r.out, "-> 1010") != NULL, "%s", r.out);
	run_free(&r);

	snprintf(a, sizeof(a), "--events '%s'", p);
	r = run_dump(a);
	cr_assert_eq(r.status, 0);
	cr_assert_eq(count_lines(r.out, "\n"), 2);
	cr_assert(strncmp(r.out, "1010 seq=2", 10) == 0, "%s", r.out);
	run_free(&r);

	snprintf(a, sizeof(a), "--slices '%s'", p);
	r = run_dump(a);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "slice 0 ts=1010 dur=10 track=2 depth=0") !=
			  NULL, "%s", r.out);
	run_free(&r);

	snprintf(a, sizeof(a), "--check - <'%s'", p);
	r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, ": ok: 4 packets (3 in 1 compressed batches)") !=
			  NULL, "%s", r.out);
	run_free(&r);

	snprintf(a, sizeof(a), "--tracks '%s'", p);
	r = run_dump(a);
	cr_assert(strstr(r.out, "track 2 thread name=\"main\" pid=5 tid=6") !=
			  NULL, "%s", r.out);
	run_free(&r);

	snprintf(a, sizeof(a), "--stats '%s'", p);
	r = run_dump(a);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "batches") != NULL);
	run_free(&r);
	unlink(p);
}

Test(dump, usage_and_input_errors)
{
	/* a mistake: one line saying what, one pointing to --help */
	struct run r = run_dump("");
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.err, "ptw-dump: no TRACE given\n"
				"Try 'ptw-dump --help' for more information.\n");
	run_free(&r);
	r = run_dump("--bogus x");
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "'--bogus'\nTry 'ptw-dump --help'") != NULL,
		  "%s", r.err);
	cr_assert_null(strstr(r.err, "usage:"));
	run_free(&r);
	r = run_dump("--check --events x");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	r = run_dump("--help");
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "--check") != NULL);
	run_free(&r);
	r = run_dump("/nonexistent/trace.pftrace");
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "/nonexistent/trace.pftrace: cannot open") !=
			  NULL, "%s", r.err);
	run_free(&r);

	char p[256], a[600];
	ptw_test_tmp_path(p, sizeof(p), "dump-json");
	ptw_test_write_file_or_fail(p, "[{\"ph\":\"B\"}]", 12);
	snprintf(a, sizeof(a), "--check '%s'", p);
	r = run_dump(a);
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, "not a Perfetto proto trace") != NULL, "%s",
		  r.err);
	run_free(&r);
	unlink(p);
}

Test(dump, garbage_gives_an_exit_code_not_a_crash)
{
	char p[256], a[600];
	ptw_test_tmp_path(p, sizeof(p), "dump-garbage");
	uint64_t s = 88172645463325252ull;
	for (int round = 0; round < 20; round++) {
		uint8_t buf[200];
		for (size_t i = 0; i < sizeof(buf); i++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			buf[i] = (uint8_t)s;
		}
		buf[0] = 0x0a;
		ptw_test_write_file_or_fail(p, buf, sizeof(buf));
		static const char *const modes[] = { "", "--check", "--slices" };
		for (int m = 0; m < 3; m++) {
			snprintf(a, sizeof(a), "%s '%s'", modes[m], p);
			struct run r = run_dump(a);
			cr_assert(r.status == 0 || r.status == 1,
				  "round %d mode '%s': status %d", round,
				  modes[m], r.status);
			run_free(&r);
		}
	}
	unlink(p);
}

/* Several traces: each checked on its own line; the exit status is the
 * worst one's. A trace with a slice left open (a snapshot, a crash dump)
 * passes --check, as trace_processor loads it without an error; --strict
 * (ptw's own rules) refuses it unless --allow-open. */
Test(dump, check_takes_several_traces_and_open_slices)
{
	struct ptw_error err = {0};
	char ok[256], open[256], a[1200];
	ptw_test_tmp_path(ok, sizeof(ok), "dump-ok");
	ptw_test_tmp_path(open, sizeof(open), "dump-open");
	for (int i = 0; i < 2; i++) {
		struct ptw_writer *w = ptw_writer_open(i ? open : ok, NULL, &err);
		cr_assert(w, "%s", err.msg);
		uint64_t th = ptw_writer_add_thread_track(w, 1, 2, "t");
		struct ptw_seq *s = ptw_writer_sim_seq(w);
		struct ptw_event e = {.track = th, .ts = 10, .name = "a"};
		cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
		e.ts = 20;
		if (!i)
			cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
		cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	}
	snprintf(a, sizeof(a), "--check '%s' '%s'", ok, open);
	struct run r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "dump-ok") && strstr(r.out, "dump-open"), "%s",
		  r.out);
	run_free(&r);
	snprintf(a, sizeof(a), "--check --strict '%s' '%s'", ok, open);
	r = run_dump(a);
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.out, "dump-ok") != NULL, "%s", r.out);
	cr_assert(strstr(r.err, "slice never ended") != NULL, "%s", r.err);
	run_free(&r);
	snprintf(a, sizeof(a), "--check --strict --allow-open '%s'", open);
	r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(a, sizeof(a), "--check --allow-open '%s' /nonexistent.pftrace",
		 open);
	r = run_dump(a);
	cr_assert_eq(r.status, 2);
	run_free(&r);
	unlink(ok);
	unlink(open);
}

/* The machine options show by name: machine_id on each packet and the
 * SystemInfo packet's fields (not as an unknown payload). */
Test(dump, machine_id_and_system_info_are_printed)
{
	struct ptw_error err = {0};
	char p[256], a[600];
	ptw_test_tmp_path(p, sizeof(p), "dump-machine");
	struct ptw_writer_options o = {.machine_id = 5, .machine_name = "n\"5",
				       .machine_uname = 1};
	struct ptw_writer *w = ptw_writer_open(p, &o, &err);
	cr_assert(w, "%s", err.msg);
	uint64_t th = ptw_writer_add_thread_track(w, 1, 2, "t");
	struct ptw_event e = {.track = th, .ts = 10, .name = "a"};
	cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &e), 0);
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	snprintf(a, sizeof(a), "'%s'", p);
	struct run r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "system_info{machine_name=\"n\\\"5\" "
				"utsname{sysname=\"") != NULL, "%s", r.out);
	cr_assert(strstr(r.out, "payload field") == NULL, "%s", r.out);
	size_t lines = count_lines(r.out, "\n");
	cr_assert_gt(lines, 3);
	cr_assert_eq(count_lines(r.out, " machine=5 "), lines, "%s", r.out);
	run_free(&r);
	unlink(p);
}

/* The tracer declares its clock as trace metadata (trace_processor's
 * metadata table, "cr-ptw.clock"): ptw-dump prints the entries by name, and
 * both checks accept the packet. */
Test(dump, tracer_metadata_is_printed_by_name)
{
	char path[256], a[600];
	ptw_test_tmp_path(path, sizeof(path), "dump-meta");
	struct ptw_config cfg = {.output_path = path,
				 .clock = PTW_CLOCK_MONOTONIC};
	cr_assert_eq(ptw_start(&cfg), 0);
	PTW_INSTANT("c", "x");
	cr_assert_eq(ptw_stop(), 0);
	snprintf(a, sizeof(a), "'%s'", path);
	struct run r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(count_lines(r.out, "metadata{\"ptw.clock\"=\"monotonic\"}"),
		     1, "%s", r.out);
	run_free(&r);
	snprintf(a, sizeof(a), "--check --strict '%s'", path);
	r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	unlink(path);
}

/* Slices left open (docs/dump.md "Slices left open"). Writer API traces
 * of one thread: 'broken' loses the END of the first "frame", so the
 * later "frame"s nest under it (the shape a tracer leaves when a
 * category is switched off between BEGIN and END); the other has a
 * legitimately open outer "main" (a scope around main(), a snapshot)
 * with complete children of other names. */
static void write_open_trace(const char *path, int broken)
{
	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(path, NULL, &err);
	cr_assert(w, "%s", err.msg);
	uint64_t th = ptw_writer_add_thread_track(w, 1, 2, "t");
	struct ptw_seq *s = ptw_writer_sim_seq(w);
	struct ptw_event e = {.track = th, .category = "c"};
	if (!broken) {
		e.ts = 1;
		e.name = "main";
		cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
	}
	for (int i = 0; i < 4; i++) {
		e.name = "frame";
		e.ts = 100 * (i + 1);
		cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
		e.name = "draw";
		e.ts += 10;
		cr_assert_eq(ptw_seq_slice_begin(s, &e), 0);
		e.ts += 20;
		cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
		e.name = "frame";
		e.ts += 50;
		if (!(broken && i == 0)) /* the lost END */
			cr_assert_eq(ptw_seq_slice_end(s, &e), 0);
	}
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
}

Test(dump, check_flags_nesting_broken_by_a_lost_end)
{
	char p[256], a[600];
	ptw_test_tmp_path(p, sizeof(p), "dump-broken");
	write_open_trace(p, 1);
	snprintf(a, sizeof(a), "--check '%s'", p);
	struct run r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err); /* trace_processor loads it */
	cr_assert(strstr(r.err, ": warning: byte ") &&
			  strstr(r.err, "slice nesting looks broken: \"frame\" "
					"(ts 100, depth 0) never ended, and 3 "
					"later \"frame\" slice(s) nest "
					"directly under it"),
		  "%s", r.err);
	cr_assert(strstr(r.err, ": note: byte ") &&
			  strstr(r.err, "slice never ended (dur -1): "
					"SLICE_BEGIN at ts 100"),
		  "%s", r.err);
	cr_assert(strstr(r.out, ", 1 warning(s), 1 slice(s) left open"), "%s",
		  r.out);
	run_free(&r);
	const char *tp = ptw_test_tp_find(NULL);
	if (tp) { /* the shape, as trace_processor shows it */
		char *rows = ptw_test_tp_run(
			tp, p,
			"select name, dur, depth from slice where name = "
			"'frame' order by ts");
		cr_assert(rows && strcmp(rows, "\"frame\",-1,0\n"
					       "\"frame\",80,1\n"
					       "\"frame\",80,1\n"
					       "\"frame\",80,1\n") == 0,
			  "%s", rows ? rows : "(failed)");
		free(rows);
	}
	snprintf(a, sizeof(a), "--check --strict --allow-open '%s'", p);
	r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "slice nesting looks broken"), "%s", r.err);
	run_free(&r);
	snprintf(a, sizeof(a), "--check --strict '%s'", p);
	r = run_dump(a);
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, "slice never ended"), "%s", r.err);
	run_free(&r);
	unlink(p);
}

Test(dump, check_takes_a_legitimately_open_outer_slice)
{
	char p[256], a[600];
	ptw_test_tmp_path(p, sizeof(p), "dump-main");
	write_open_trace(p, 0);
	snprintf(a, sizeof(a), "--check '%s'", p);
	struct run r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "warning") == NULL, "%s", r.err);
	cr_assert(strstr(r.err, "slice never ended (dur -1): SLICE_BEGIN at "
				"ts 1 on track"),
		  "%s", r.err);
	cr_assert(strstr(r.out, ", 0 warning(s), 1 slice(s) left open"), "%s",
		  r.out);
	run_free(&r);
	snprintf(a, sizeof(a), "--check --strict '%s'", p);
	r = run_dump(a);
	cr_assert_eq(r.status, 1);
	run_free(&r);
	unlink(p);
}

/* A trace that records data loss (a packet flagged
 * previous_packet_dropped): --check passes it, as trace_processor loads
 * it, and its summary says so. */
Test(dump, check_summary_mentions_data_loss)
{
	char p[256], a[600];
	ptw_test_tmp_path(p, sizeof(p), "dump-loss");
	struct ptw_tb b;
	ptw_tb_init(&b);
	ptw_tb_start_seq(&b, 2, 64, 2, 1000);
	ptw_tb_begin_on(&b, 2, 0);
	ptw_tb_thread_track(&b, 2, 5, 6, "main");
	ptw_tb_varint(&b, 42, 1); /* previous_packet_dropped */
	ptw_tb_end(&b);
	ptw_test_write_file_or_fail(p, b.out.data, b.out.len);
	ptw_tb_free(&b);
	snprintf(a, sizeof(a), "--check '%s'", p);
	struct run r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, ", data loss: 1 packet(s) flagged "
				"previous_packet_dropped"),
		  "%s", r.out);
	run_free(&r);
	write_trace(p, 0, 0);
	r = run_dump(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "data loss") == NULL, "%s", r.out);
	run_free(&r);
	unlink(p);
}

/* ptw-dump reads a complete event (legacy_event phase 'X', as ptw-convert
 * writes a Chrome X of whole microseconds): -e prints it as COMPLETE with
 * its duration in ns, -s its slice, and --check counts no open slice. */
Test(dump, complete_events_are_printed_with_their_duration)
{
	char p[256];
	ptw_test_tmp_path(p, sizeof(p), "dump-x");
	struct ptw_tb b;
	ptw_tb_init(&b);
	ptw_tb_start_seq(&b, 2, 64, 2, 1000);
	ptw_tb_begin_on(&b, 2, 0);
	ptw_tb_thread_track(&b, 2, 5, 6, "main");
	ptw_tb_end(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_open(&b, 11);            /* track_event */
	ptw_tb_string(&b, 23, "x");     /* name */
	ptw_tb_open(&b, 6);             /* legacy_event */
	ptw_tb_varint(&b, 2, 'X');      /* phase */
	ptw_tb_varint(&b, 3, 7);        /* duration_us */
	ptw_tb_close(&b);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ptw_test_write_file_or_fail(p, b.out.data, b.out.len);
	ptw_tb_free(&b);
	char args[PATH_MAX];
	snprintf(args, sizeof(args), "-e '%s'", p);
	struct run r = run_dump(args);
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "COMPLETE track=2 name=\"x\" dur=7000"), "%s",
		  r.out);
	run_free(&r);
	snprintf(args, sizeof(args), "-s '%s'", p);
	r = run_dump(args);
	cr_expect(strstr(r.out, "ts=1010 dur=7000 track=2 depth=0"), "%s",
		  r.out);
	run_free(&r);
	snprintf(args, sizeof(args), "--check --strict '%s'", p);
	r = run_dump(args);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(!strstr(r.err, "never ended"), "%s", r.err);
	run_free(&r);
	unlink(p);
}
