/* ptw_dump.c - prints, checks and models a Perfetto trace (ptw-dump).
 * SPDX-License-Identifier: Apache-2.0 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptw/version.h"
#include "ptw_trace.pb-c.h"
#include "reader/tp_model.h"
#include "reader/trace_check.h"
#include "reader/trace_read.h"

enum mode { M_PACKETS, M_CHECK, M_EVENTS, M_SLICES, M_COUNTERS, M_FLOWS,
	    M_TRACKS, M_STATS, M_DIAGS };

static void usage(FILE *f)
{
	fprintf(f,
"usage: ptw-dump [MODE] [OPTIONS] TRACE...\n"
"Decodes Perfetto protobuf traces (.pftrace), compressed batches and\n"
"gzip files included. TRACE '-' reads standard input. With several\n"
"traces, each one's output follows a '==> TRACE <==' line (--check: its\n"
"own 'TRACE: ...' line).\n"
"\n"
"Modes (default: print every packet):\n"
"  -c, --check       does trace_processor load it? Where it would refuse\n"
"                    the file print 'TRACE: byte N: message' (stderr)\n"
"                    and exit 1, else a summary (stdout); stats it would\n"
"                    count are 'TRACE: warning: ...' lines, slices left\n"
"                    open 'TRACE: note: ...' lines (stderr)\n"
"  -d, --diags       every diagnostic the reader recorded, in file order\n"
"  -e, --events      one resolved TrackEvent per line (trace-time ns)\n"
"  -s, --slices      the slice rows trace_processor would show\n"
"      --counters    the counter rows\n"
"      --flows       the flow rows (slice ids)\n"
"  -t, --tracks      the track table (descriptors)\n"
"      --stats       packet counts and trace_processor-like stats\n"
"\n"
"Options:\n"
"      --strict      --check: also ptw's own rules, for traces ptw wrote\n"
"                    (first packet of a sequence CLEARED, every slice\n"
"                    ended, no packed fields, ...)\n"
"      --allow-open  --check --strict: slices left open are not an error\n"
"      --complete    --check: a truncated final record is an error\n"
"      --allow-loss  --check: previous_packet_dropped is not a warning\n"
"  -h, --help        this text\n"
"      --version     print \"ptw-dump VERSION\" and exit\n"
"\n"
"Exit status: 0 ok, 1 check failed (without --strict: trace_processor\n"
"would refuse the file) or the trace is malformed, 2 usage or I/O error.\n");
}

/* ---- packet printing ---------------------------------------------------- */

static void print_str(const char *s)
{
	if (!s) {
		fputs("NULL", stdout);
		return;
	}
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\x%02x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void print_value(const struct ptw_trace_arg *a);

/* Dict entries as {name=value ...}, array values as [value ...]. */
static void print_nested(const struct ptw_trace_arg *a)
{
	int dict = a->type == PTW_TRACE_ARG_DICT;
	putchar(dict ? '{' : '[');
	for (uint32_t i = 0; i < a->v.nested.n; i++) {
		const struct ptw_trace_arg *e = &a->v.nested.items[i];
		if (i)
			putchar(' ');
		if (dict)
			printf("%s=", e->name ? e->name : "?");
		print_value(e);
	}
	putchar(dict ? '}' : ']');
}

static void print_value(const struct ptw_trace_arg *a)
{
	switch (a->type) {
	case PTW_TRACE_ARG_BOOL:
		fputs(a->v.b ? "true" : "false", stdout);
		break;
	case PTW_TRACE_ARG_INT:
		printf("%" PRId64, a->v.i);
		break;
	case PTW_TRACE_ARG_UINT:
		printf("%" PRIu64 "u", a->v.u);
		break;
	case PTW_TRACE_ARG_POINTER:
		printf("0x%" PRIx64, a->v.u);
		break;
	case PTW_TRACE_ARG_DOUBLE:
		printf("%.17g", a->v.d);
		break;
	case PTW_TRACE_ARG_STRING:
	case PTW_TRACE_ARG_JSON:
		print_str(a->v.s);
		break;
	case PTW_TRACE_ARG_DICT:
	case PTW_TRACE_ARG_ARRAY:
		print_nested(a);
		break;
	case PTW_TRACE_ARG_BAD:
		fputs("<unresolved>", stdout);
		break;
	default:
		fputs("<none>", stdout);
		break;
	}
}

static void print_args(const struct ptw_trace_arg *a, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		printf(" %s=", a[i].name);
		print_value(&a[i]);
	}
}

static void print_ids(const char *what, const uint64_t *v, uint32_t n)
{
	if (!n)
		return;
	printf(" %s=", what);
	for (uint32_t i = 0; i < n; i++)
		printf("%s%" PRIu64, i ? "," : "", v[i]);
}

static void print_event(const struct ptw_trace_event *e)
{
	printf("%s track=%" PRIu64, ptw_trace_event_type_name(e->type),
	       e->track_uuid);
	if (e->name) {
		fputs(" name=", stdout);
		print_str(e->name);
	}
	if (e->category) {
		fputs(" cat=", stdout);
		print_str(e->category);
	}
	if (e->counter_kind == PTW_TRACE_COUNTER_INT)
		printf(" value=%" PRId64, e->counter_int);
	else if (e->counter_kind == PTW_TRACE_COUNTER_DOUBLE)
		printf(" value=%.17g", e->counter_double);
	print_ids("flows", e->flow_ids, e->n_flow_ids);
	print_ids("terminating_flows", e->terminating_flow_ids,
		  e->n_terminating_flow_ids);
	if (e->type == PTW_TRACE_COMPLETE)
		printf(" dur=%" PRId64, e->dur);
	else if (e->legacy_phase)
		printf(" phase=%c id=%" PRIu64 "%s", e->legacy_phase,
		       e->legacy_id, e->bind_to_enclosing ? " bp=e" : "");
	if (e->has_bind_id)
		printf(" bind_id=%" PRIu64 " flow_direction=%d", e->bind_id,
		       e->flow_direction);
	for (uint32_t i = 0; i < e->n_extra_counters; i++)
		printf(" extra[%" PRIu64 "]=%.17g", e->extra_counter_tracks[i],
		       e->extra_counter_values[i]);
	print_args(e->args, e->n_args);
}

static void print_interned(const Perfetto__Protos__InternedData *d)
{
	fputs(" interned{", stdout);
	const char *sep = "";
	for (size_t i = 0; i < d->n_event_categories; i++, sep = " ") {
		printf("%scat %" PRIu64 "=", sep, d->event_categories[i]->iid);
		print_str(d->event_categories[i]->name);
	}
	for (size_t i = 0; i < d->n_event_names; i++, sep = " ") {
		printf("%sname %" PRIu64 "=", sep, d->event_names[i]->iid);
		print_str(d->event_names[i]->name);
	}
	for (size_t i = 0; i < d->n_debug_annotation_names; i++, sep = " ") {
		printf("%sarg %" PRIu64 "=", sep,
		       d->debug_annotation_names[i]->iid);
		print_str(d->debug_annotation_names[i]->name);
	}
	for (size_t i = 0; i < d->n_debug_annotation_string_values; i++,
		    sep = " ") {
		const Perfetto__Protos__InternedString *s =
			d->debug_annotation_string_values[i];
		printf("%sstr %" PRIu64 "=\"%.*s\"", sep, s->iid,
		       (int)(s->str.len > 200 ? 200 : s->str.len),
		       s->str.data ? (const char *)s->str.data : "");
	}
	putchar('}');
}

static void print_descriptor(const Perfetto__Protos__TrackDescriptor *d)
{
	printf(" track_descriptor uuid=%" PRIu64, d->uuid);
	if (d->has_parent_uuid)
		printf(" parent=%" PRIu64, d->parent_uuid);
	if (d->static_or_dynamic_name_case !=
	    PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME__NOT_SET) {
		fputs(" name=", stdout);
		print_str(d->name);
	}
	if (d->thread) {
		printf(" thread{pid=%d tid=%" PRId64, d->thread->pid,
		       d->thread->tid);
		if (d->thread->thread_name) {
			fputs(" name=", stdout);
			print_str(d->thread->thread_name);
		}
		putchar('}');
	}
	if (d->process) {
		printf(" process{pid=%d", d->process->pid);
		if (d->process->process_name) {
			fputs(" name=", stdout);
			print_str(d->process->process_name);
		}
		putchar('}');
	}
	if (d->counter) {
		fputs(" counter{", stdout);
		if (d->counter->has_unit)
			printf("unit=%d", (int)d->counter->unit);
		if (d->counter->unit_name) {
			fputs(" unit_name=", stdout);
			print_str(d->counter->unit_name);
		}
		if (d->counter->has_unit_multiplier)
			printf(" multiplier=%" PRId64,
			       d->counter->unit_multiplier);
		if (d->counter->has_is_incremental && d->counter->is_incremental)
			fputs(" incremental", stdout);
		putchar('}');
	}
	if (d->has_sibling_order_rank)
		printf(" rank=%d", d->sibling_order_rank);
	if (d->has_child_ordering)
		printf(" child_ordering=%d", (int)d->child_ordering);
}

/* Trace metadata entries (ChromeEventBundle.metadata: the tracer's clock),
 * which trace_processor shows as "cr-<name>" in its metadata table. */
static void print_metadata(const Perfetto__Protos__ChromeEventBundle *b)
{
	fputs(" metadata{", stdout);
	for (size_t i = 0; i < b->n_metadata; i++) {
		const Perfetto__Protos__ChromeMetadata *m = b->metadata[i];
		if (i)
			putchar(' ');
		print_str(m->name ? m->name : "");
		putchar('=');
		switch (m->value_case) {
		case PERFETTO__PROTOS__CHROME_METADATA__VALUE_STRING_VALUE:
			print_str(m->string_value);
			break;
		case PERFETTO__PROTOS__CHROME_METADATA__VALUE_JSON_VALUE:
			print_str(m->json_value);
			break;
		case PERFETTO__PROTOS__CHROME_METADATA__VALUE_INT_VALUE:
			printf("%lld", (long long)m->int_value);
			break;
		case PERFETTO__PROTOS__CHROME_METADATA__VALUE_BOOL_VALUE:
			fputs(m->bool_value ? "true" : "false", stdout);
			break;
		default:
			fputs("?", stdout);
			break;
		}
	}
	putchar('}');
}

/* SystemInfo: the machine's name and utsname (the fields ptw writes). */
static void print_system_info(const Perfetto__Protos__SystemInfo *si)
{
	fputs(" system_info{", stdout);
	const char *sep = "";
	if (si->machine_name) {
		fputs("machine_name=", stdout);
		print_str(si->machine_name);
		sep = " ";
	}
	const Perfetto__Protos__Utsname *u = si->utsname;
	if (u) {
		const char *k[4] = {"sysname", "release", "version", "machine"};
		const char *v[4] = {u->sysname, u->release, u->version,
				    u->machine};
		printf("%sutsname{", sep);
		sep = "";
		for (int i = 0; i < 4; i++) {
			if (!v[i])
				continue;
			printf("%s%s=", sep, k[i]);
			print_str(v[i]);
			sep = " ";
		}
		putchar('}');
	}
	putchar('}');
}

/* The packet's header fields: sequence, flags, machine, timestamp. */
static void print_packet_header(const struct ptw_trace_packet_info *in,
				const Perfetto__Protos__TracePacket *p)
{
	if (p->optional_trusted_packet_sequence_id_case ==
	    PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID)
		printf(" seq=%u", p->trusted_packet_sequence_id);
	else
		fputs(" seq=-", stdout);
	if (p->has_sequence_flags && p->sequence_flags)
		printf(" flags=%s%s%s",
		       (p->sequence_flags & 1) ? "CLEARED" : "",
		       (p->sequence_flags & 3) == 3 ? "|" : "",
		       (p->sequence_flags & 2) ? "NEEDS" : "");
	if (p->has_incremental_state_cleared && p->incremental_state_cleared)
		fputs(" incremental_state_cleared", stdout);
	if (p->has_first_packet_on_sequence && p->first_packet_on_sequence)
		fputs(" first", stdout);
	if (p->has_machine_id)
		printf(" machine=%u", p->machine_id);
	if (p->has_previous_packet_dropped && p->previous_packet_dropped)
		printf(" previous_packet_dropped=%u", p->previous_packet_dropped);
	if (p->has_timestamp) {
		printf(" ts=%" PRIu64, p->timestamp);
		if (p->has_timestamp_clock_id)
			printf("@clock%u", p->timestamp_clock_id);
		if (in->has_ts)
			printf(" -> %" PRId64, in->ts);
	}
}

/* TracePacketDefaults: the clock and the default track. */
static void print_defaults(const Perfetto__Protos__TracePacketDefaults *d)
{
	fputs(" defaults{", stdout);
	if (d->has_timestamp_clock_id)
		printf("clock=%u", d->timestamp_clock_id);
	if (d->track_event_defaults && d->track_event_defaults->has_track_uuid)
		printf(" track=%" PRIu64, d->track_event_defaults->track_uuid);
	putchar('}');
}

/* ClockSnapshot: each clock's id and time, and the primary clock. */
static void print_clock_snapshot(const Perfetto__Protos__ClockSnapshot *c)
{
	fputs(" clock_snapshot{", stdout);
	for (size_t i = 0; i < c->n_clocks; i++) {
		printf("%s%u=%" PRIu64, i ? " " : "", c->clocks[i]->clock_id,
		       c->clocks[i]->timestamp);
		if (c->clocks[i]->is_incremental)
			fputs("(incremental)", stdout);
		if (c->clocks[i]->has_unit_multiplier_ns)
			printf("(x%" PRIu64 "ns)",
			       c->clocks[i]->unit_multiplier_ns);
	}
	if (c->has_primary_trace_clock)
		printf(" primary=%d", (int)c->primary_trace_clock);
	putchar('}');
}

/* The packet's payload (its data oneof). */
static void print_payload(const struct ptw_trace_packet_info *in,
			  const Perfetto__Protos__TracePacket *p)
{
	switch (p->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT:
		print_clock_snapshot(p->clock_snapshot);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR:
		print_descriptor(p->track_descriptor);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT:
		fputs(" track_event ", stdout);
		if (in->event)
			print_event(in->event);
		else if (p->track_event->has_type)
			fputs(ptw_trace_event_type_name(p->track_event->type),
			      stdout);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO:
		print_system_info(p->system_info);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_CHROME_EVENTS:
		print_metadata(p->chrome_events);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA__NOT_SET:
		break;
	default:
		printf(" payload field %d", (int)p->data_case);
		break;
	}
}

/* One line per packet (and per compressed batch). */
static int on_packet(void *ctx, const struct ptw_trace_packet_info *in,
		     const void *vp)
{
	(void)ctx;
	const Perfetto__Protos__TracePacket *p = vp;
	if (in->is_batch) {
		printf("@%" PRIu64 " compressed_packets %u bytes -> %" PRIu64
		       " bytes inflated\n", in->offset, in->size,
		       in->inflated_size);
		return 0;
	}
	if (in->batch)
		printf("    +%" PRIu64, in->inner_offset);
	else
		printf("@%" PRIu64, in->offset);
	printf(" #%" PRIu64, in->packet_index);
	if (!p) {
		putchar('\n');
		return 0;
	}
	print_packet_header(in, p);
	if (p->trace_packet_defaults)
		print_defaults(p->trace_packet_defaults);
	if (p->interned_data)
		print_interned(p->interned_data);
	print_payload(in, p);
	if (in->dropped)
		printf("  DROPPED (%s)", in->drop_reason ? in->drop_reason : "?");
	putchar('\n');
	return 0;
}

/* ---- other modes -------------------------------------------------------- */

static void print_events(const struct ptw_trace *t)
{
	size_t n;
	const struct ptw_trace_event *e = ptw_trace_events(t, &n);
	for (size_t i = 0; i < n; i++) {
		printf("%" PRId64 " seq=%u @%" PRIu64, e[i].ts, e[i].seq_id,
		       e[i].offset);
		if (e[i].batch)
			printf("+%" PRIu64, e[i].inner_offset);
		putchar(' ');
		print_event(&e[i]);
		putchar('\n');
	}
}

/* The slice's rows of trace_processor's args table (BEGIN's then END's
 * annotations through one inserter), as " key=value". */
static void print_arg_rows(const struct ptw_tp_slice *s)
{
	struct ptw_trace_args_table tab = { 0 };
	int rc = 0;
	for (uint32_t k = 0; k < s->n_args && !rc; k++)
		rc = ptw_trace_args_add(&tab, s->args[k], 1);
	for (size_t r = 0; r < tab.n; r++) {
		struct ptw_trace_arg v = { .type = tab.rows[r].type };
		memcpy(&v.v, &tab.rows[r].v, sizeof(tab.rows[r].v));
		printf(" %s=", tab.rows[r].key);
		print_value(&v);
	}
	if (rc)
		fputs(" <out of memory>", stdout);
	ptw_trace_args_free(&tab);
}

static void print_slices(const struct ptw_tp_model *m)
{
	for (size_t i = 0; i < m->n_slices; i++) {
		const struct ptw_tp_slice *s = &m->slices[i];
		printf("slice %u ts=%" PRId64 " dur=%" PRId64 " track=%" PRIu64
		       " depth=%u parent=%" PRId64 " name=", s->id, s->ts,
		       s->dur, s->track_uuid, s->depth, s->parent_id);
		print_str(s->name);
		fputs(" cat=", stdout);
		print_str(s->category);
		print_arg_rows(s);
		putchar('\n');
	}
}

static void print_tracks(const struct ptw_trace *t)
{
	size_t n;
	const struct ptw_trace_track *tr = ptw_trace_tracks(t, &n);
	for (size_t i = 0; i < n; i++) {
		struct ptw_tp_track_owner o = ptw_tp_model_owner(t, tr[i].uuid);
		printf("track %" PRIu64 " %s", tr[i].uuid,
		       ptw_trace_track_kind_name(tr[i].kind));
		if (tr[i].has_parent)
			printf(" parent=%" PRIu64, tr[i].parent_uuid);
		fputs(" name=", stdout);
		print_str(tr[i].name);
		if (tr[i].kind == PTW_TRACE_TRACK_PROCESS ||
		    tr[i].kind == PTW_TRACE_TRACK_THREAD)
			printf(" pid=%d", tr[i].pid);
		if (tr[i].kind == PTW_TRACE_TRACK_THREAD)
			printf(" tid=%" PRId64, tr[i].tid);
		if (tr[i].unit) {
			fputs(" unit=", stdout);
			print_str(tr[i].unit);
		}
		if (tr[i].has_rank)
			printf(" rank=%d", tr[i].rank);
		if (o.broken)
			fputs(" owner=BROKEN", stdout);
		else if (o.owner == PTW_TP_OWNER_THREAD)
			printf(" owner=thread:%" PRId64, o.tid);
		else if (o.owner == PTW_TP_OWNER_PROCESS)
			printf(" owner=process:%d", o.pid);
		else
			fputs(" owner=global", stdout);
		printf(" @%" PRIu64 "\n", tr[i].offset);
	}
}

static void print_stats(const struct ptw_trace *t)
{
	const struct ptw_trace_stats *s = ptw_trace_get_stats(t);
#define S(f) printf("%-52s %" PRIu64 "\n", #f, s->f)
	S(bytes); S(records); S(packets); S(batches); S(batch_packets);
	S(inflated_bytes); S(skipped_fields); S(empty_records);
	S(checkpoints); S(sequences); S(track_events); S(events);
	S(track_descriptors); S(clock_snapshots); S(interned_entries);
	S(defaults); S(absolute_timestamps);
	S(packet_skipped_seq_needs_incremental_state_invalid);
	S(interned_data_skipped_incremental_state_invalid);
	S(interned_data_tokenizer_errors);
	S(interned_data_missing_sequence_id);
	S(trace_packet_defaults_missing_sequence_id);
	S(incremental_state_cleared_missing_sequence_id);
	S(previous_packet_dropped_missing_sequence_id);
	S(previous_packet_dropped);
	S(track_event_missing_sequence_id); S(track_event_missing_timestamp);
	S(track_event_invalid_timestamp); S(track_event_parser_errors);
	S(track_descriptor_missing_uuid);
	S(track_descriptor_thread_missing_pid_tid);
	S(track_descriptor_process_missing_pid);
	S(track_descriptor_conflicting_reservation);
	S(track_descriptor_invalid_child_ordering);
	S(track_descriptor_default_track_with_parent);
	S(track_event_counter_missing_track_uuid);
	S(track_event_counter_missing_value);
	S(track_event_counter_invalid_track_uuid);
	S(invalid_clock_snapshots);
	S(clock_sync_failure_unknown_source_clock);
	S(clock_sync_failure_no_path);
	S(trace_sorter_negative_timestamp_dropped);
	S(packed_repeated_fields);
	S(zstd_batches);
	S(trace_stats_packets);
#undef S
	/* TraceStats, as trace_processor's stats table shows them */
	for (uint32_t i = 0; i < PTW_TRACE_MAX_BUFFERS; i++) {
		const struct ptw_trace_buf_stats *b = &s->buf[i];
		if (i >= s->n_buffers && !b->has_sequence_stats)
			continue;
		char n[80];
#define B(f) snprintf(n, sizeof(n), "traced_buf_" #f "[%u]", i), \
	     printf("%-52s %" PRIu64 "\n", n, b->f)
		if (i < s->n_buffers) {
			B(buffer_size); B(bytes_written); B(bytes_overwritten);
			B(trace_writer_packet_loss);
		}
		if (b->has_sequence_stats)
			B(sequence_packet_loss);
#undef B
	}
	uint64_t off;
	if (ptw_trace_truncated(t, &off))
		printf("%-52s %" PRIu64 "\n", "truncated_at", off);
}

static void print_diags(const struct ptw_trace *t)
{
	size_t n;
	const struct ptw_trace_diag *d = ptw_trace_diags(t, &n);
	for (size_t i = 0; i < n; i++) {
		printf("byte %" PRIu64, d[i].offset);
		if (d[i].batch)
			printf(" (batch %u, inflated byte %" PRIu64 ")",
			       d[i].batch, d[i].inner_offset);
		if (d[i].seq_id)
			printf(" seq=%u", d[i].seq_id);
		printf(": %s%s\n", d[i].kind > PTW_TRACE_DIAG_NOTE_ ? "note: " : "",
		       d[i].msg);
	}
}

static int dump_one(const char *path, enum mode mode, uint32_t flags);

/* ---- --check -------------------------------------------------------------
 * Without --strict the verdict is trace_processor's: the trace fails only
 * where trace_processor refuses the file (PTW_CHECK_FATAL), or ends inside
 * a record under --complete; everything else it imports is a warning (a
 * stat it counts, a packet it drops) and slices left open are notes. With
 * --strict every problem of level PTW_CHECK_ERROR fails. */

#define CHECK_SHOWN 10 /* warning and note lines printed, each */

struct check {
	const char *path;
	int strict;
	uint64_t warnings, notes, open;
	int failed;
	struct ptw_check_problem fail; /* the earliest failure */
	char fail_msg[PTW_ERROR_MSG_MAX];
};

static void print_problem(const char *path, const char *level,
			  const struct ptw_check_problem *p)
{
	fprintf(stderr, "%s: %sbyte %" PRIu64, path, level, p->offset);
	if (p->batch)
		fprintf(stderr, " (batch %u, inflated byte %" PRIu64 ")",
			p->batch, p->inner_offset);
	fprintf(stderr, ": %s\n", p->msg);
}

static void on_problem(void *ctx, const struct ptw_check_problem *p)
{
	struct check *c = ctx;
	int fails = p->level == PTW_CHECK_FATAL ||
		    (c->strict && p->level == PTW_CHECK_ERROR);
	if (fails) {
		if (c->failed && (p->offset > c->fail.offset ||
				  (p->offset == c->fail.offset &&
				   p->inner_offset >= c->fail.inner_offset)))
			return;
		c->failed = 1;
		c->fail = *p;
		snprintf(c->fail_msg, sizeof(c->fail_msg), "%s", p->msg);
		c->fail.msg = c->fail_msg;
		return;
	}
	if (strncmp(p->msg, "slice never ended", 17) == 0)
		c->open++;
	if (p->level == PTW_CHECK_NOTE) {
		if (c->notes++ < CHECK_SHOWN)
			print_problem(c->path, "note: ", p);
	} else if (c->warnings++ < CHECK_SHOWN) {
		print_problem(c->path, "warning: ", p);
	}
}

/* ", data loss: ..." when the trace records some, else "". */
static void data_loss(const struct ptw_trace_stats *s, char *buf, size_t len)
{
	uint64_t writer = 0, seq = 0;
	for (uint32_t i = 0; i < s->n_buffers && i < PTW_TRACE_MAX_BUFFERS;
	     i++) {
		writer += s->buf[i].trace_writer_packet_loss;
		seq += s->buf[i].sequence_packet_loss;
	}
	buf[0] = '\0';
	if (!s->previous_packet_dropped && !writer && !seq)
		return;
	snprintf(buf, len,
		 ", data loss: %" PRIu64 " packet(s) flagged "
		 "previous_packet_dropped, trace stats: %" PRIu64
		 " traced_buf_trace_writer_packet_loss, %" PRIu64
		 " traced_buf_sequence_packet_loss",
		 s->previous_packet_dropped, writer, seq);
}

/* --check of one loaded trace: 0 ok, 1 failed, 2 out of memory. */
static int check_one(const char *path, const struct ptw_trace *t,
		     uint32_t flags)
{
	struct check c = { .path = path, .strict = !(flags & PTW_CHECK_AS_TP) };
	struct ptw_error err;
	uint32_t each = c.strict ? flags : flags & ~PTW_CHECK_COMPLETE;
	if (ptw_trace_check_each(t, each, on_problem, &c, &err)) {
		fprintf(stderr, "ptw-dump: %s\n", err.msg);
		return 2;
	}
	uint64_t off;
	int truncated = ptw_trace_truncated(t, &off);
	if (!c.failed && truncated && (flags & PTW_CHECK_COMPLETE)) {
		c.failed = 1;
		c.fail = (struct ptw_check_problem){
			.offset = off, .msg = "the file ends inside a record" };
	}
	if (c.failed) {
		print_problem(path, "", &c.fail);
		return 1;
	}
	if (c.warnings > CHECK_SHOWN || c.notes > CHECK_SHOWN)
		fprintf(stderr, "%s: %" PRIu64 " more warning(s) and note(s) "
				"(ptw-dump --diags lists the reader's)\n",
			path, (c.warnings > CHECK_SHOWN ? c.warnings - CHECK_SHOWN
							: 0) +
				      (c.notes > CHECK_SHOWN ? c.notes - CHECK_SHOWN
							     : 0));
	const struct ptw_trace_stats *s = ptw_trace_get_stats(t);
	size_t nt;
	ptw_trace_tracks(t, &nt);
	char loss[300], more[120];
	data_loss(s, loss, sizeof(loss));
	more[0] = '\0';
	if (c.warnings || c.open)
		snprintf(more, sizeof(more),
			 ", %" PRIu64 " warning(s), %" PRIu64
			 " slice(s) left open", c.warnings, c.open);
	printf("%s: ok: %" PRIu64 " packets (%" PRIu64 " in %" PRIu64
	       " compressed batches), %" PRIu64 " sequences, %" PRIu64
	       " checkpoints, %zu tracks, %" PRIu64 " events%s%s%s\n", path,
	       s->packets, s->batch_packets, s->batches, s->sequences,
	       s->checkpoints, nt, s->events,
	       truncated ? " (truncated tail ignored)" : "", more, loss);
	return 0;
}

/* A command-line mistake: what was wrong was said; point to --help, as
 * common Unix tools do. Returns the exit status 2. */
static int usage_error(void)
{
	fputs("Try 'ptw-dump --help' for more information.\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	enum { O_COUNTERS = 256, O_FLOWS, O_STATS, O_ALLOW_OPEN, O_COMPLETE,
	       O_ALLOW_LOSS, O_VERSION, O_STRICT };
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "events", no_argument, NULL, 'e' },
		{ "slices", no_argument, NULL, 's' },
		{ "tracks", no_argument, NULL, 't' },
		{ "counters", no_argument, NULL, O_COUNTERS },
		{ "flows", no_argument, NULL, O_FLOWS },
		{ "stats", no_argument, NULL, O_STATS },
		{ "diags", no_argument, NULL, 'd' },
		{ "allow-open", no_argument, NULL, O_ALLOW_OPEN },
		{ "complete", no_argument, NULL, O_COMPLETE },
		{ "allow-loss", no_argument, NULL, O_ALLOW_LOSS },
		{ "strict", no_argument, NULL, O_STRICT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	enum mode mode = M_PACKETS;
	int nmodes = 0;
	uint32_t flags = 0;
	int strict = 0;
	int c;
	while ((c = getopt_long(argc, argv, "cdesth", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': mode = M_CHECK; nmodes++; break;
		case 'e': mode = M_EVENTS; nmodes++; break;
		case 'd': mode = M_DIAGS; nmodes++; break;
		case 's': mode = M_SLICES; nmodes++; break;
		case 't': mode = M_TRACKS; nmodes++; break;
		case O_COUNTERS: mode = M_COUNTERS; nmodes++; break;
		case O_FLOWS: mode = M_FLOWS; nmodes++; break;
		case O_STATS: mode = M_STATS; nmodes++; break;
		case O_ALLOW_OPEN: flags |= PTW_CHECK_ALLOW_OPEN; break;
		case O_COMPLETE: flags |= PTW_CHECK_COMPLETE; break;
		case O_ALLOW_LOSS: flags |= PTW_CHECK_ALLOW_DATA_LOSS; break;
		case O_STRICT: strict = 1; break;
		case 'h': usage(stdout); return 0;
		case O_VERSION: puts("ptw-dump " PTW_VERSION); return 0;
		default: return usage_error(); /* getopt said why */
		}
	}
	if (nmodes > 1) {
		fprintf(stderr, "ptw-dump: choose one mode\n");
		return usage_error();
	}
	if (optind >= argc) {
		fprintf(stderr, "ptw-dump: no TRACE given\n");
		return usage_error();
	}
	if (!strict)
		flags |= PTW_CHECK_AS_TP;
	int rc = 0;
	for (int i = optind; i < argc; i++) {
		if (argc - optind > 1 && mode != M_CHECK)
			printf("%s==> %s <==\n", i > optind ? "\n" : "",
			       argv[i]);
		int r = dump_one(argv[i], mode, flags);
		if (r > rc)
			rc = r;
	}
	return rc;
}

/* One trace in 'mode'. Returns the exit status for it: 0, 1 (check failed
 * or malformed) or 2 (I/O). */
static int dump_one(const char *path, enum mode mode, uint32_t flags)
{
	if (strcmp(path, "-") == 0)
		path = "/dev/stdin";
	struct ptw_trace_options opt;
	memset(&opt, 0, sizeof(opt));
	if (mode == M_PACKETS)
		opt.on_packet = on_packet;
	struct ptw_error err;
	struct ptw_trace *t = ptw_trace_load_file(path, &opt, &err);
	if (!t) {
		fprintf(stderr, "ptw-dump: %s\n", err.msg);
		return err.code == PTW_ERR_FORMAT ? 1 : 2;
	}
	int rc = 0;
	struct ptw_tp_model *m = NULL;
	switch (mode) {
	case M_CHECK:
		rc = check_one(path, t, flags);
		break;
	case M_EVENTS:
		print_events(t);
		break;
	case M_TRACKS:
		print_tracks(t);
		break;
	case M_STATS:
		print_stats(t);
		break;
	case M_DIAGS:
		print_diags(t);
		break;
	case M_SLICES:
	case M_COUNTERS:
	case M_FLOWS:
		m = ptw_tp_model_build(t, &err);
		if (!m) {
			fprintf(stderr, "ptw-dump: %s\n", err.msg);
			rc = 2;
			break;
		}
		if (mode == M_SLICES)
			print_slices(m);
		for (size_t i = 0; mode == M_COUNTERS && i < m->n_counters; i++)
			printf("counter ts=%" PRId64 " track=%" PRIu64
			       " value=%.17g\n", m->counters[i].ts,
			       m->counters[i].track_uuid, m->counters[i].value);
		for (size_t i = 0; mode == M_FLOWS && i < m->n_flows; i++)
			printf("flow id=%" PRIu64 " out=%u in=%u\n",
			       m->flows[i].flow_id, m->flows[i].slice_out,
			       m->flows[i].slice_in);
		ptw_tp_model_free(m);
		break;
	case M_PACKETS:
		break;
	}
	if (rc == 0 && mode != M_CHECK) {
		const struct ptw_error *f = ptw_trace_fatal(t);
		if (f) {
			fprintf(stderr, "ptw-dump: %s\n", f->msg);
			rc = 1;
		}
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "ptw-dump: write error on stdout\n");
		rc = 2;
	}
	ptw_trace_free(t);
	return rc;
}
