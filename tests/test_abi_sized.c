/* test_abi_sized.c - the rule "Structs that grow" (writer.h): the library
 * reads a caller's options and config as large as the caller's header knew
 * them, defaults the rest, refuses fields it does not know, and fills
 * stats only as far as the caller's struct goes (issue 22 item 5).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "ptw/clock_stream.h"
#include "ptw/tracer.h"
#include "ptw/writer.h"
#include "ptw_trace.pb-c.h"
#include "support/ptw_test.h"

static int fd_is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

Test(abi_sized, an_old_program_gets_defaults_for_writer_options_it_did_not_know)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "abi-old");
	/* An "old" header ended before close_fd: the byte the library would
	 * read there is set, but not passed, so the fd stays open. */
	struct ptw_writer_options o;
	memset(&o, 0, sizeof(o));
	o.close_fd = 1;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open_fd_sized(
		fd, &o, offsetof(struct ptw_writer_options, close_fd), &err);
	cr_assert_not_null(w, "%s", err.msg);
	cr_assert_eq(ptw_writer_close(w, &err), 0);
	cr_assert(fd_is_open(fd), "close_fd beyond the old size was read");
	/* the whole struct: close_fd counts */
	w = ptw_writer_open_fd(fd, &o, &err);
	cr_assert_not_null(w);
	cr_assert_eq(ptw_writer_close(w, &err), 0);
	cr_assert(!fd_is_open(fd));
	unlink(path);
}

Test(abi_sized, a_newer_program_with_unknown_fields_set_is_refused)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "abi-new");
	struct {
		struct ptw_writer_options o;
		uint64_t later_field;
	} newer;
	memset(&newer, 0, sizeof(newer));
	newer.later_field = 7;
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	cr_assert_null(ptw_writer_open_sized(path, &newer.o, sizeof(newer), &err));
	cr_assert_eq(err.code, PTW_ERR_INVALID);
	cr_assert(strstr(err.msg, "does not know"), "%s", err.msg);
	/* unknown fields left at zero (their default): accepted */
	newer.later_field = 0;
	struct ptw_writer *w =
		ptw_writer_open_sized(path, &newer.o, sizeof(newer), &err);
	cr_assert_not_null(w, "%s", err.msg);
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	unlink(path);
}

Test(abi_sized, ptw_start_reads_the_config_and_writer_options_as_sized)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "abi-cfg");
	struct ptw_writer_options wo;
	memset(&wo, 0, sizeof(wo));
	wo.compress = 99; /* invalid if read */
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.writer = &wo;
	cfg.ring_slots = 3; /* invalid if read */
	struct ptw_error err;
	/* an old config ending before ring_slots, old options before compress */
	cr_assert_eq(ptw_start_sized(&cfg, offsetof(struct ptw_config, ring_slots),
				     offsetof(struct ptw_writer_options, compress),
				     &err),
		     0, "%s", err.msg);
	PTW_INSTANT("abi", "old program");
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(path, 0);
	cr_assert_not_null(ptw_test_find_event(t, 0, "old program", 0));
	ptw_trace_free(t);
	/* the same structs in full: both fields are read and refused */
	cr_assert_eq(ptw_start_ex(&cfg, &err), PTW_ERR_INVALID);
	cfg.ring_slots = 0;
	cr_assert_eq(ptw_start_ex(&cfg, &err), PTW_ERR_INVALID);
	cr_assert_eq(ptw_is_running(), 0);
	/* a newer config with a field this library does not know */
	struct {
		struct ptw_config c;
		uint32_t later_field;
	} newer;
	memset(&newer, 0, sizeof(newer));
	newer.c.output_path = path;
	newer.later_field = 1;
	cr_assert_eq(ptw_start_sized(&newer.c, sizeof(newer),
				     sizeof(struct ptw_writer_options), &err),
		     PTW_ERR_INVALID);
	cr_assert(strstr(err.msg, "does not know"), "%s", err.msg);
	unlink(path);
}

static int count_machine_ids(void *ctx, const struct ptw_trace_packet_info *in,
			     const void *pkt)
{
	const Perfetto__Protos__TracePacket *p = pkt;
	if (p && !in->is_batch && p->has_machine_id)
		++*(uint64_t *)ctx;
	return 0;
}

/* Packets of the trace at 'path' that carry a machine_id. */
static uint64_t machine_ids(const char *path)
{
	uint64_t n = 0;
	struct ptw_trace_options opt = {.on_packet = count_machine_ids,
					.ctx = &n};
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_file(path, &opt, &err);
	cr_assert_not_null(t, "%s", err.msg);
	ptw_trace_free(t);
	return n;
}

/* The machine options came last (issue 26): a program built before them
 * passes structs that end before machine_id, and whatever lies there is
 * not read; in full they are. */
Test(abi_sized, machine_options_are_read_only_from_programs_that_know_them)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "abi-machine");
	struct ptw_writer_options o;
	memset(&o, 0, sizeof(o));
	o.machine_id = 5;
	o.machine_name = "n5";
	size_t old_wo = offsetof(struct ptw_writer_options, machine_id);
	struct ptw_error err;
	for (int full = 0; full < 2; full++) {
		struct ptw_writer *w = ptw_writer_open_sized(
			path, &o, full ? sizeof(o) : old_wo, &err);
		cr_assert_not_null(w, "%s", err.msg);
		uint64_t th = ptw_writer_add_thread_track(w, 1, 2, "t");
		struct ptw_event ev = {.track = th, .ts = 10, .name = "e"};
		cr_assert_eq(ptw_seq_instant(ptw_writer_sim_seq(w), &ev), 0);
		cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
		cr_assert_eq(machine_ids(path) > 0, full, "writer, full %d", full);
	}
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.machine_id = 6;
	cfg.writer = &o;
	for (int full = 0; full < 2; full++) {
		cr_assert_eq(ptw_start_sized(&cfg, full ? sizeof(cfg)
						   : offsetof(struct ptw_config,
							      machine_id),
					     full ? sizeof(o) : old_wo, &err),
			     0, "%s", err.msg);
		PTW_INSTANT("abi", "one");
		cr_assert_eq(ptw_stop(), 0);
		cr_assert_eq(machine_ids(path) > 0, full, "tracer, full %d", full);
	}
	unlink(path);
}

Test(abi_sized, stats_are_filled_only_as_far_as_the_caller_knows_them)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "abi-stats");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cr_assert_eq(ptw_start(&cfg), 0);
	PTW_INSTANT("abi", "one");
	cr_assert_eq(ptw_flush(), 0);
	struct ptw_stats st;
	memset(&st, 0xAB, sizeof(st));
	size_t old = offsetof(struct ptw_stats, threads);
	cr_assert_eq(ptw_get_stats_sized(&st, old), 0);
	cr_assert_eq(st.events, 1u);
	const unsigned char *tail = (const unsigned char *)&st + old;
	for (size_t i = 0; i < sizeof(st) - old; i++)
		cr_assert_eq(tail[i], 0xAB, "byte %zu past the old size written", i);
	struct {
		struct ptw_stats s;
		uint64_t later_field;
	} newer;
	memset(&newer, 0xAB, sizeof(newer));
	cr_assert_eq(ptw_get_stats_sized(&newer.s, sizeof(newer)), 0);
	cr_assert_eq(newer.later_field, 0u, "a field the library does not know is 0");
	cr_assert_eq(newer.s.running, 1);
	cr_assert_eq(ptw_stop(), 0);

	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, NULL, &err);
	cr_assert_not_null(w);
	struct {
		struct ptw_writer_stats s;
		uint64_t later_field;
	} ws;
	memset(&ws, 0xAB, sizeof(ws));
	ptw_writer_get_stats_sized(w, &ws.s, sizeof(ws));
	cr_assert_eq(ws.later_field, 0u);
	cr_assert_eq(ws.s.events, 0u);
	struct {
		struct ptw_clock_streams_options o;
		uint64_t later_field;
	} co;
	memset(&co, 0, sizeof(co));
	co.later_field = 1;
	cr_assert_null(ptw_clock_streams_attach_sized(w, &co.o, sizeof(co), &err));
	cr_assert_eq(err.code, PTW_ERR_INVALID);
	co.later_field = 0;
	struct ptw_clock_streams *cs =
		ptw_clock_streams_attach_sized(w, &co.o, sizeof(co), &err);
	cr_assert_not_null(cs, "%s", err.msg);
	struct {
		struct ptw_clock_streams_stats s;
		uint64_t later_field;
	} cst;
	memset(&cst, 0xAB, sizeof(cst));
	ptw_clock_streams_get_stats_sized(cs, &cst.s, sizeof(cst));
	cr_assert_eq(cst.later_field, 0u);
	cr_assert_eq(cst.s.submitted, 0u);
	cr_assert_eq(ptw_writer_close(w, NULL), 0);
	unlink(path);
}
