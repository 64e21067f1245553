/* test_convert_load.c - what ptw-convert writes so that trace_processor
 * loads a converted trace fast (docs/convert.md, "Loading in
 * trace_processor"): times that cannot be deltas on the trace clock and
 * no sequence clock beyond one per thread sequence (few misses of
 * trace_processor's 8-slot clock conversion cache), the same rows as
 * trace_processor's import of the JSON, and a top-level field that stops
 * pprof's format sniffer early.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/emit/emit.h"
#include "reader/pb_wire.h"
#include "support/ptw_test.h"
#include "support/tp_shell.h"
#include "test_convert_json.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* A Chrome JSON array shaped like bench_convert's chrome.json: 'threads'
 * threads (at most 64) of 3 processes whose events interleave in the
 * file, X events with an int and a string arg, instants, and counters of
 * every process (their times go back and forth), timestamps with
 * fractions of a microsecond. malloc'd. */
static char *chrome_like(unsigned events, int threads)
{
	size_t cap = (size_t)events * 200 + 16, len = 0;
	char *s = malloc(cap);
	cr_assert(s);
	double cur[64];
	uint64_t x = 0x9E3779B97F4A7C15ull;
	cr_assert(threads > 0 && threads <= 64);
	for (int t = 0; t < threads; t++)
		cur[t] = 1000.0 + t;
	len += (size_t)snprintf(s, cap, "[\n");
	for (unsigned i = 0; i < events; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int t = (int)(x % (unsigned)threads), pid = 1 + t % 3, tid = 100 + t;
		unsigned r = (unsigned)((x >> 8) % 100);
		cur[t] += (double)(1 + (x >> 20) % 40000) / 1000.0;
		const char *sep = i ? ",\n" : "";
		unsigned nm = (unsigned)((x >> 40) % 40);
		int n;
		if (r < 50)
			n = snprintf(s + len, cap - len,
				     "%s{\"name\":\"Task%02u\",\"cat\":\"c\","
				     "\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
				     "\"ts\":%.3f,\"dur\":0,\"args\":{\"n\":%u,"
				     "\"url\":\"u/%u\"}}", sep, nm, pid, tid,
				     cur[t], (unsigned)(x >> 12) % 1000,
				     (unsigned)(x >> 45) % 1000);
		else if (r < 80)
			n = snprintf(s + len, cap - len,
				     "%s{\"name\":\"Task%02u\",\"cat\":\"c\","
				     "\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,"
				     "\"tid\":%d,\"ts\":%.3f}", sep, nm, pid, tid,
				     cur[t]);
		else
			n = snprintf(s + len, cap - len,
				     "%s{\"name\":\"Counter%u\",\"ph\":\"C\","
				     "\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
				     "\"args\":{\"value\":%u}}", sep, nm % 6,
				     pid, tid, cur[t],
				     (unsigned)(x >> 24) % 100000);
		cr_assert(n > 0 && (size_t)n < cap - len);
		len += (size_t)n;
	}
	cr_assert(len + 3 < cap);
	memcpy(s + len, "\n]\n", 4);
	return s;
}

/* Converts JSON text 'json' into 'out' as ptw-convert does (the emitter
 * on a writer with options 'o', NULL: the defaults). */
static void convert_opt(const char *json, const char *out,
			const struct ptw_writer_options *o)
{
	ptw_test_convert_json_with(out, json, 0, 0, NULL, o);
}

static void convert(const char *json, const char *out)
{
	convert_opt(json, out, NULL);
}

/* Converts chrome_like(events, 8) into the test file 'name' (its path
 * into pf[0, n)). */
static void convert_chrome_like(char *pf, size_t n, const char *name,
				unsigned events)
{
	ptw_test_tmp_path(pf, n, name);
	char *text = chrome_like(events, 8);
	convert(text, pf);
	free(text);
}

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	cr_assert(f, "%s", path);
	cr_assert_eq(fputs(s, f) >= 0 && fclose(f) == 0, 1);
}

static void skip_without_tp(void)
{
	if (!ptw_test_tp_shell())
		cr_skip_test("no trace_processor_shell (PTW_SHARED_DIR/tp)");
}

/* Converts chrome_like(events, threads) and checks that the converted
 * trace has the rows trace_processor's JSON import makes (slices with
 * their times and args, counters), and that trace_processor converted
 * its timestamps with clock cache misses for under 0.5 % of the events. */
static void expect_json_rows_and_few_misses(unsigned events, int threads,
					    const struct ptw_writer_options *o)
{
	char json[256], pf[256];
	ptw_test_tmp_path(json, sizeof(json), "load.json");
	ptw_test_tmp_path(pf, sizeof(pf), "load.pftrace");
	char *text = chrome_like(events, threads);
	write_file(json, text);
	convert_opt(text, pf, o);
	free(text);
	ptw_test_tp_expect_no_error_stats(pf);
	static const char *const q[] = {
		"select count(*), sum(ts), sum(dur), count(distinct track_id) "
		"from slice",
		/* (the JSON's args are args.*, debug annotations debug.*) */
		"select count(*), sum(int_value), count(string_value) from "
		"args join slice using(arg_set_id) where key like 'args.%' "
		"or key like 'debug.%'",
		"select count(*), sum(ts), sum(value) from counter",
	};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		char a[512], b[512];
		ptw_test_tp_rows(json, q[i], a, sizeof(a));
		ptw_test_tp_rows(pf, q[i], b, sizeof(b));
		cr_expect_str_eq(b, a, "%s", q[i]);
	}
	char miss[64];
	ptw_test_tp_rows(pf, "select coalesce(sum(value), 0) from stats "
			 "where name = 'clock_sync_cache_miss'", miss,
			 sizeof(miss));
	long m = strtol(miss, NULL, 10);
	cr_expect(m < (long)events / 200,
		  "%ld clock cache misses for %u events on %d threads", m,
		  events, threads);
	unlink(json);
	unlink(pf);
}

/* 8 thread sequences, the shared one (the counters) on the trace clock.
 * Before, the shared sequence's clocks 64 and 65 made 10 clocks for the
 * cache's 8 slots: about one conversion in six missed. */
Test(convert_load, few_clock_cache_misses_and_the_json_imports_rows)
{
	skip_without_tp();
	expect_json_rows_and_few_misses(20000, 8, NULL);
}

/* 32 threads: 16 thread sequences (PTW_EM_THREAD_SEQS), each with a
 * clock of its own, for 8 cache slots. Each batch of packets goes out
 * sequence by sequence (lib/writer/group.c), so a sequence's clock
 * misses about once per batch. Before, packets interleaved one by one in
 * time order and about half the conversions missed. */
Test(convert_load, more_threads_than_clock_cache_slots)
{
	skip_without_tp();
	expect_json_rows_and_few_misses(40000, 32, NULL);
}

/* The same with compressed batches (-z): a batch past the compression
 * limit is split at its newest packet, which regrouping keeps last. */
Test(convert_load, more_threads_than_clock_cache_slots_compressed)
{
	skip_without_tp();
	struct ptw_writer_options o = {.compress = PTW_COMPRESS_DEFLATE};
	expect_json_rows_and_few_misses(40000, 32, &o);
}

/* The shared sequence (counters of every process, whose times go back
 * and forth between processes) writes its times absolute on BOOTTIME,
 * the clock its defaults name: its packets need no timestamp_clock_id
 * (3 bytes each). Before, each counter sample that went back in time was
 * absolute on clock 65 with that field. */
Test(convert_load, shared_sequence_times_need_no_clock_field)
{
	enum { EVENTS = 20000 };
	char pf[256];
	convert_chrome_like(pf, sizeof(pf), "shared.pftrace", EVENTS);
	struct ptw_trace *t = ptw_test_load_checked_or_fail(pf, 0);
	const struct ptw_trace_stats *st = ptw_trace_get_stats(t);
	size_t n_ev, counters = 0;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n_ev);
	for (size_t i = 0; i < n_ev; i++)
		counters += ev[i].type == PTW_TRACE_COUNTER;
	/* (chrome_like: a fifth of the events are counter samples) */
	cr_assert_gt(counters, EVENTS / 10u);
	cr_expect_lt(st->absolute_timestamps, EVENTS / 100u,
		     "%llu packets with a timestamp_clock_id",
		     (unsigned long long)st->absolute_timestamps);
	ptw_trace_free(t);
	unlink(pf);
}

/* A converted file's packets carry no SEQ_NEEDS_INCREMENTAL_STATE: the
 * file is written whole and each sequence starts with a
 * SEQ_INCREMENTAL_STATE_CLEARED packet, so the flag never changed what
 * trace_processor reads, and it cost it about 400 instructions a packet.
 * Every packet of a sequence comes after that sequence's CLEARED packet,
 * and trace_processor skips none and imports the JSON's rows
 * (expect_json_rows_and_few_misses, above). */
Test(convert_load, packets_need_no_incremental_state_flag)
{
	enum { EVENTS = 20000 };
	char pf[256];
	convert_chrome_like(pf, sizeof(pf), "flags.pftrace", EVENTS);
	size_t n, packets = 0, needs = 0, before_cleared = 0;
	uint8_t *d = ptw_test_read_file_or_fail(pf, &n);
	uint8_t cleared[256] = {0};
	struct ptw_wire_cursor c, pc;
	struct ptw_wire_field f, pff;
	ptw_wire_init(&c, d, n);
	while (ptw_wire_next(&c, &f) == PTW_WIRE_FIELD) {
		if (f.num != 1 || f.wt != 2)
			continue;
		uint64_t seq = 0, flags = 0;
		ptw_wire_init(&pc, f.data, f.len);
		while (ptw_wire_next(&pc, &pff) == PTW_WIRE_FIELD) {
			if (pff.num == 10 && pff.wt == 0)
				seq = pff.varint;
			if (pff.num == 13 && pff.wt == 0)
				flags = pff.varint;
		}
		packets++;
		needs += (flags & 2) != 0;
		cr_assert_lt(seq, 256u);
		if (flags & 1)
			cleared[seq] = 1;
		else if (seq && !cleared[seq])
			before_cleared++;
	}
	free(d);
	cr_assert_gt(packets, (size_t)EVENTS);
	cr_expect_eq(needs, 0u, "%zu of %zu packets SEQ_NEEDS_INCREMENTAL_STATE",
		     needs, packets);
	cr_expect_eq(before_cleared, 0u);
	if (ptw_test_tp_shell()) {
		ptw_test_tp_expect_no_error_stats(pf);
		ptw_test_tp_expect_rows(pf, "select coalesce(sum(value), 0) "
					"from stats where name like "
					"'packet_skipped%'", "0\n");
	}
	unlink(pf);
}

static int varint(const uint8_t *d, size_t n, size_t *p, uint64_t *v)
{
	*v = 0;
	for (unsigned sh = 0; *p < n && sh < 64; sh += 7) {
		uint8_t b = d[(*p)++];
		*v |= (uint64_t)(b & 0x7F) << sh;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

/* The bytes trace_processor's pprof sniffer (IsPprofProfile, tried before
 * the proto importer's) reads from the start of d[0, n) before a field
 * that no pprof Profile has stops it; n if none does. */
static size_t pprof_sniff_walk(const uint8_t *d, size_t n)
{
	size_t p = 0;
	while (p < n) {
		size_t at = p;
		uint64_t tag, v;
		if (!varint(d, n, &p, &tag))
			return n;
		uint64_t f = tag >> 3;
		unsigned wt = (unsigned)(tag & 7);
		/* Profile's length-delimited and varint fields */
		int len_ok = (f >= 1 && f <= 6) || f == 11 || f == 13;
		int var_ok = (f >= 7 && f <= 10) || f == 12 || f == 13 ||
			     f == 14;
		if (wt == 2 && len_ok) {
			if (!varint(d, n, &p, &v) || v > n - p)
				return n;
			p += (size_t)v;
		} else if (wt == 0 && var_ok) {
			if (!varint(d, n, &p, &v))
				return n;
		} else {
			return at;
		}
	}
	return n;
}

/* A converted trace (uncompressed) stops pprof's sniffer after its first
 * batch of packets (the writer's flush, 256 KiB): a top-level field 2,
 * which trace_processor's proto reader skips. Without it the sniffer
 * read every packet of the file (each is field 1, pprof's sample_type)
 * before the proto importer was tried. */
Test(convert_load, pprof_sniffing_stops_after_the_first_batch)
{
	enum { EVENTS = 48000 };
	char pf[256];
	convert_chrome_like(pf, sizeof(pf), "sniff.pftrace", EVENTS);
	size_t n;
	uint8_t *d = ptw_test_read_file_or_fail(pf, &n);
	cr_assert_gt(n, 4u * PTW_DEFAULT_FLUSH_BYTES, "%zu bytes", n);
	size_t walk = pprof_sniff_walk(d, n);
	cr_expect_leq(walk, PTW_DEFAULT_FLUSH_BYTES + 1024u,
		      "the sniffer reads %zu of %zu bytes", walk, n);
	if (walk + 2 <= n) {
		cr_expect_eq(d[walk], 0x10, "field 2, a varint");
		cr_expect_eq(d[walk + 1], 0x00);
	}
	free(d);
	if (ptw_test_tp_shell()) {
		ptw_test_tp_expect_no_error_stats(pf);
		ptw_test_tp_expect_rows(pf, "select count(*) > 0 from slice",
					"1\n");
	}
	unlink(pf);
}
