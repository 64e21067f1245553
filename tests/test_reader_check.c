/* test_reader_check.c - each checker rule is detected at the right byte.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/ptw_test.h"
#include "support/trace_build.h"

/* TracePacket / TrackEvent field numbers used below */
#define TS 8          /* TracePacket.timestamp */
#define CLOCK_ID 58   /* TracePacket.timestamp_clock_id */
#define EVENT 11      /* TracePacket.track_event */
#define TYPE 9        /* TrackEvent.type */
#define TRACK 11      /* TrackEvent.track_uuid */
#define NAME 23       /* TrackEvent.name */
#define NAME_IID 10   /* TrackEvent.name_iid */
#define CAT_IIDS 3    /* TrackEvent.category_iids */
#define COUNTER 30    /* TrackEvent.counter_value */

enum { BEGIN = 1, END = 2, INSTANT = 3, CNT = 4 };

/* seq 2: CLEARED + defaults (clock 64, track 2) + snapshot at 1e9, then
 * process 1 (pid 1234), thread 2 (tid 1235), counter 3 under process 1 */
static void base_tracks(struct ptw_tb *b)
{
	ptw_tb_start_seq(b, 2, 64, 2, 1000000000);
	ptw_tb_begin_on(b, 2, 0);
	ptw_tb_process_track(b, 1, 1234, "demo");
	ptw_tb_end(b);
	ptw_tb_begin_on(b, 2, 0);
	ptw_tb_thread_track(b, 2, 1234, 1235, "main");
	ptw_tb_end(b);
	ptw_tb_begin_on(b, 2, 0);
	ptw_tb_counter_track(b, 3, 1, "queue");
	ptw_tb_end(b);
}

static void base(struct ptw_tb *b)
{
	ptw_tb_init(b);
	base_tracks(b);
}

/* An event on seq 2 (NEEDS), timestamp delta on clock 64. */
static uint64_t ev(struct ptw_tb *b, uint64_t delta, int type,
		   const char *name)
{
	ptw_tb_begin_on(b, 2, delta);
	ptw_tb_open(b, EVENT);
	ptw_tb_varint(b, TYPE, (uint64_t)type);
	if (name)
		ptw_tb_string(b, NAME, name);
	ptw_tb_close(b);
	return ptw_tb_end(b);
}

static struct ptw_trace *load(struct ptw_tb *b)
{
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_mem(b->out.data, b->out.len,
						 "t.pftrace", NULL, &err);
	cr_assert_not_null(t, "%s", err.msg);
	return t;
}

static void expect_problem(struct ptw_tb *b, uint32_t flags, uint64_t off,
			   const char *needle)
{
	struct ptw_trace *t = load(b);
	struct ptw_error err;
	int r = ptw_trace_check(t, flags, &err);
	cr_assert_eq(r, PTW_ERR_FORMAT,
		     "expected a problem at byte %llu (%s), got none",
		     (unsigned long long)off, needle);
	cr_assert_eq(err.code, PTW_ERR_FORMAT);
	cr_assert_eq(err.offset, off, "%s", err.msg);
	cr_assert_str_eq(err.input, "t.pftrace");
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "byte %llu", (unsigned long long)off);
	cr_assert(strncmp(err.msg, prefix, strlen(prefix)) == 0, "%s", err.msg);
	cr_assert(strstr(err.msg, needle) != NULL, "'%s' not in '%s'", needle,
		  err.msg);
	ptw_trace_free(t);
	ptw_tb_free(b);
}

static void expect_ok(struct ptw_tb *b, uint32_t flags)
{
	struct ptw_trace *t = load(b);
	struct ptw_error err;
	cr_assert_eq(ptw_trace_check(t, flags, &err), 0, "%s", err.msg);
	ptw_trace_free(t);
	ptw_tb_free(b);
}

Test(check, balanced_trace_passes)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, "a");
	ev(&b, 10, BEGIN, "b");
	ev(&b, 5, INSTANT, "i");
	ev(&b, 10, END, NULL);
	ev(&b, 10, END, "a");
	expect_ok(&b, 0);
}

Test(check, packet_without_sequence_id)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, 1000000100); /* absolute on BOOTTIME */
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, TRACK, 2);
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "without trusted_packet_sequence_id");
}

Test(check, first_packet_of_a_sequence_must_clear)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, INSTANT, "ok");
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, 1000000100);
	ptw_tb_varint(&b, CLOCK_ID, 6);
	ptw_tb_seq(&b, 7, 0);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, TRACK, 2);
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "does not set SEQ_INCREMENTAL_STATE_CLEARED");
}

Test(check, needs_packet_after_data_loss_is_dropped)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, 0);
	ptw_tb_seq(&b, 2, 0);
	ptw_tb_varint(&b, 42, 1); /* previous_packet_dropped */
	uint64_t loss = ptw_tb_end(&b);
	uint64_t off = ev(&b, 10, INSTANT, "lost");
	struct ptw_tb b2;
	memset(&b2, 0, sizeof(b2));
	ptw_tb_init(&b2);
	ptw_pb_append_raw(&b2.out, b.out.data, b.out.len);
	expect_problem(&b, 0, loss, "previous_packet_dropped");
	expect_problem(&b2, PTW_CHECK_ALLOW_DATA_LOSS, off,
		       "SEQ_NEEDS_INCREMENTAL_STATE packet");
}

Test(check, iid_must_be_defined_before_use)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, NAME_IID, 7);
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "event name iid 7");
}

Test(check, category_iid_from_an_older_generation_is_rejected)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_interned(&b, 1, 1, "cat");
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, CAT_IIDS, 1);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	/* checkpoint: new generation, defaults and snapshot again */
	ptw_tb_start_seq(&b, 2, 64, 2, 1000001000);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, CAT_IIDS, 1);
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "category iid 1");
}

Test(check, track_event_without_timestamp)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin(&b);
	ptw_tb_seq(&b, 2, 2);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "without timestamp");
}

Test(check, negative_trace_time)
{
	struct ptw_tb b;
	base(&b);
	/* a delta of -2e9 on clock 64 (uint64 two's complement) */
	uint64_t off = ev(&b, (uint64_t)-(int64_t)2000000000, INSTANT, "neg");
	expect_problem(&b, 0, off, "negative trace time");
}

Test(check, sequence_clock_used_before_its_snapshot)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin(&b);
	ptw_tb_seq(&b, 5, 1);
	ptw_tb_end(&b);
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, 10);
	ptw_tb_varint(&b, CLOCK_ID, 64);
	ptw_tb_seq(&b, 5, 2);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, TRACK, 2);
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "clock 64, which no earlier ClockSnapshot");
}

static uint64_t snapshot(struct ptw_tb *b, uint32_t c1, uint64_t v1,
			 uint32_t c2, uint64_t v2)
{
	ptw_tb_begin(b);
	ptw_tb_seq(b, 2, 0);
	ptw_tb_open(b, 6);
	ptw_tb_open(b, 1);
	ptw_tb_varint(b, 1, c1);
	ptw_tb_varint(b, 2, v1);
	ptw_tb_close(b);
	ptw_tb_open(b, 1);
	ptw_tb_varint(b, 1, c2);
	ptw_tb_varint(b, 2, v2);
	ptw_tb_close(b);
	ptw_tb_close(b);
	return ptw_tb_end(b);
}

Test(check, snapshot_with_a_clock_twice)
{
	struct ptw_tb b;
	base(&b);
	uint64_t off = snapshot(&b, 3, 5, 3, 6);
	expect_problem(&b, 0, off, "appears twice");
}

Test(check, trace_clock_going_backwards)
{
	struct ptw_tb b;
	base(&b);
	snapshot(&b, 6, 5000, 3, 5);
	ev(&b, 10, INSTANT, "x");
	uint64_t off = snapshot(&b, 6, 999, 3, 6);
	expect_problem(&b, 0, off, "goes backwards");
}

/* trace_processor keeps one series of readings per set of clocks: the
 * trace clock may go back in a snapshot of other clocks (as each
 * sequence's own snapshot does, clocks 64 and 65 being its own). */
Test(check, trace_clock_going_back_in_another_set_of_clocks)
{
	struct ptw_tb b;
	base(&b);
	snapshot(&b, 6, 5000, 3, 5);
	ev(&b, 10, INSTANT, "x");
	snapshot(&b, 6, 999, 4, 6);
	ev(&b, 10, INSTANT, "y");
	expect_ok(&b, 0);
}

Test(check, counter_before_its_descriptor)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, CNT);
	ptw_tb_varint(&b, TRACK, 9);
	ptw_tb_int64(&b, COUNTER, 5);
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	ptw_tb_begin_on(&b, 2, 0);
	ptw_tb_counter_track(&b, 9, 1, "late");
	ptw_tb_end(&b);
	expect_problem(&b, 0, off, "no counter descriptor earlier");
}

Test(check, counter_on_a_thread_track)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, CNT);
	ptw_tb_int64(&b, COUNTER, 5); /* default track 2 = thread */
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "is not a counter track");
}

Test(check, end_without_begin)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, "a");
	ev(&b, 10, END, NULL);
	uint64_t off = ev(&b, 10, END, NULL);
	expect_problem(&b, 0, off, "SLICE_END without an open slice");
}

Test(check, end_with_another_name)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, "a");
	uint64_t off = ev(&b, 10, END, "b");
	ev(&b, 10, END, NULL);
	expect_problem(&b, 0, off, "matches no open slice");
}

Test(check, end_closing_a_slice_with_open_children)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, "a");
	ev(&b, 10, BEGIN, "b");
	uint64_t off = ev(&b, 10, END, "a");
	ev(&b, 10, END, NULL);
	expect_problem(&b, PTW_CHECK_ALLOW_OPEN, off, "still has open slices");
}

Test(check, loss_reported_with_a_checkpoint_is_fine)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin(&b);
	ptw_tb_seq(&b, 2, 1);
	ptw_tb_varint(&b, 42, 1); /* previous_packet_dropped + CLEARED */
	ptw_tb_defaults(&b, 64, 2);
	ptw_tb_clock64(&b, 1000000500);
	ptw_tb_end(&b);
	ev(&b, 10, INSTANT, "after");
	struct ptw_trace *t = load(&b);
	cr_assert_eq(ptw_trace_get_stats(t)->previous_packet_dropped, 1);
	ptw_trace_free(t);
	expect_ok(&b, 0);
}

Test(check, slice_left_open)
{
	struct ptw_tb b;
	base(&b);
	uint64_t off = ev(&b, 10, BEGIN, "a");
	ev(&b, 10, BEGIN, "b");
	ev(&b, 10, END, NULL); /* closes "b", the innermost */
	expect_problem(&b, 0, off, "never ended");
}

Test(check, open_slices_allowed_on_request)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, BEGIN, "a");
	expect_ok(&b, PTW_CHECK_ALLOW_OPEN);
}

Test(check, nesting_follows_timestamps_not_file_order)
{
	/* END written before its BEGIN in the file, but later in time:
	 * trace_processor sorts by timestamp, so this is balanced */
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, 1000000500);
	ptw_tb_varint(&b, CLOCK_ID, 6);
	ptw_tb_seq(&b, 2, 2);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, END);
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ev(&b, 100, BEGIN, "a"); /* clock 64: 1e9 + 100 */
	expect_ok(&b, 0);
}

Test(check, packed_repeated_field)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_interned(&b, 1, 1, "cat");
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_bytes(&b, CAT_IIDS, "\x01", 1); /* packed */
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "packed");
}

Test(check, needs_with_sequence_zero_is_fatal)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin(&b);
	ptw_tb_varint(&b, TS, 1000000100);
	ptw_tb_varint(&b, 13, 2); /* NEEDS, no sequence id */
	uint64_t off = ptw_tb_end(&b);
	ev(&b, 10, INSTANT, "after");
	struct ptw_trace *t = load(&b);
	cr_assert_not_null(ptw_trace_fatal(t));
	size_t n;
	ptw_trace_events(t, &n);
	cr_assert_eq(n, 0, "the walk stops at a fatal error");
	ptw_trace_free(t);
	/* the missing sequence id is the first problem at that byte */
	expect_problem(&b, 0, off, "trusted_packet_sequence_id");
}

Test(check, payload_next_to_a_snapshot)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin(&b);
	ptw_tb_seq(&b, 2, 2);
	ptw_tb_clock64(&b, 1000002000);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "ClockSnapshot has another payload");
}

Test(check, conflicting_descriptor)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 0);
	ptw_tb_thread_track(&b, 2, 1234, 999, "other");
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "described again with a different pid/tid");
}

Test(check, identical_descriptor_again_is_fine)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 0);
	ptw_tb_thread_track(&b, 2, 1234, 1235, "renamed");
	ptw_tb_end(&b);
	struct ptw_trace *t = load(&b);
	const struct ptw_trace_track *tr = ptw_trace_find_track(t, 2);
	cr_assert_str_eq(tr->name, "renamed", "thread names: last one wins");
	cr_assert_eq(tr->n_descriptors, 2);
	ptw_trace_free(t);
	expect_ok(&b, 0);
}

Test(check, parent_never_described)
{
	struct ptw_tb b;
	base(&b);
	ptw_tb_begin_on(&b, 2, 0);
	ptw_tb_open(&b, 60);
	ptw_tb_varint(&b, 1, 50);  /* uuid */
	ptw_tb_varint(&b, 5, 99);  /* parent_uuid: never described */
	ptw_tb_string(&b, 2, "orphan");
	ptw_tb_close(&b);
	ptw_tb_end(&b);
	ptw_tb_begin_on(&b, 2, 10);
	ptw_tb_open(&b, EVENT);
	ptw_tb_varint(&b, TYPE, INSTANT);
	ptw_tb_varint(&b, TRACK, 50);
	ptw_tb_close(&b);
	uint64_t off = ptw_tb_end(&b);
	expect_problem(&b, 0, off, "parent is never described");
}

Test(check, truncated_tail_only_with_complete)
{
	struct ptw_tb b;
	base(&b);
	ev(&b, 10, INSTANT, "x");
	uint64_t off = ev(&b, 10, INSTANT, "y");
	b.out.len -= 2;
	struct ptw_tb b2;
	ptw_tb_init(&b2);
	ptw_pb_append_raw(&b2.out, b.out.data, b.out.len);
	expect_ok(&b, 0);
	expect_problem(&b2, PTW_CHECK_COMPLETE, off, "ends inside a record");
}

Test(check, problem_inside_a_batch_names_its_position)
{
	struct ptw_tb b;
	base(&b);
	struct ptw_tb inner;
	ptw_tb_init(&inner);
	ptw_tb_begin_on(&inner, 2, 10);
	ptw_tb_open(&inner, EVENT);
	ptw_tb_varint(&inner, TYPE, INSTANT);
	ptw_tb_varint(&inner, NAME_IID, 3);
	ptw_tb_close(&inner);
	ptw_tb_end(&inner);
	uint64_t off = ptw_tb_compressed(&b, inner.out.data, inner.out.len, 0);
	ptw_tb_free(&inner);
	struct ptw_trace *t = load(&b);
	struct ptw_error err;
	cr_assert_eq(ptw_trace_check(t, 0, &err), PTW_ERR_FORMAT);
	cr_assert_eq(err.offset, off);
	cr_assert(strstr(err.msg, "(batch 1, inflated byte 0)") != NULL, "%s",
		  err.msg);
	ptw_trace_free(t);
	ptw_tb_free(&b);
}

/* A trace of the Perfetto SDK's shape (in-process backend): the service's
 * packets on sequence 1 (a ClockSnapshot, no sequence_flags), then the
 * track event sequence starting with CLEARED, and a slice still open at
 * the end. trace_processor v58.2 imports it with no error stat and shows
 * the slice with dur -1; so ptw_trace_check(PTW_CHECK_AS_TP), i.e.
 * `ptw-dump --check`, passes it. ptw's own rules (no flag, `--check
 * --strict`) refuse the first packet, and the open slice. */
static void sdk_shaped(struct ptw_tb *b)
{
	ptw_tb_init(b);
	ptw_tb_begin(b);
	ptw_tb_varint(b, 10, 1); /* trusted_packet_sequence_id, no flags */
	ptw_tb_clock64(b, 1000000000);
	ptw_tb_end(b);
	base_tracks(b);
	ev(b, 10, BEGIN, "a");
	ev(b, 10, BEGIN, "open");
	ev(b, 5, END, NULL);
}

Test(check, sdk_shaped_trace_passes_as_trace_processor_judges)
{
	struct ptw_tb b;
	sdk_shaped(&b);
	if (getenv("PTW_TEST_KEEP_SDK_TRACE")) { /* to check it with TP */
		FILE *f = fopen(getenv("PTW_TEST_KEEP_SDK_TRACE"), "wb");
		cr_assert(f && fwrite(b.out.data, 1, b.out.len, f) == b.out.len &&
			  fclose(f) == 0);
	}
	expect_ok(&b, PTW_CHECK_AS_TP);
	sdk_shaped(&b);
	expect_problem(&b, 0, 0, "does not set SEQ_INCREMENTAL_STATE_CLEARED");
	/* the open slice: an error of ptw's own rules only */
	base(&b);
	uint64_t off = ev(&b, 10, BEGIN, "open");
	expect_problem(&b, 0, off, "slice never ended");
	base(&b);
	ev(&b, 10, BEGIN, "open");
	expect_ok(&b, PTW_CHECK_AS_TP);
}
