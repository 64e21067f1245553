/* clock_stream.c - clock streams: per-domain exact time conversion,
 * buffering until a watermark, ordered emission into the writer.
 * SPDX-License-Identifier: Apache-2.0 */
#include "ptw/clock_stream.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "clock_stream_math.h"
#include "clock_stream_meta.h"
#include "clock_stream_store.h"
#include "lib/util/grow.h"
#include "lib/util/sized.h"
#include "lib/writer/writer_internal.h"

/* Record kinds (struct ptw_clock_rec.kind). */
enum cs_kind {
	CS_INSTANT = 1,
	CS_BEGIN,
	CS_END,
	CS_COUNTER_INT,
	CS_COUNTER_DOUBLE,
};

struct cs_stream {
	char *name;
	struct ptw_clock_rate rate;
	struct ptw_seq *seq; /* owned by the writer */
	uint64_t track;      /* the stream's own track */
	uint64_t next_seq;   /* index of the next event in this stream */
};

/* Tracks clock events may use: uuid -> name (sort key) and kind. Open
 * addressing, power-of-two size, at most half full; uuid 0 = empty. */
struct cs_track {
	uint64_t uuid;
	char *name;
	int is_counter;
};

struct ptw_clock_streams {
	struct ptw_writer *w;
	struct cs_stream *streams;
	uint32_t n_streams;
	struct cs_track *tracks;
	uint32_t cap_tracks;
	uint32_t n_tracks;
	uint64_t group; /* "Clock streams": the parent of the stream tracks */
	struct ptw_clock_store store;
	uint64_t watermark;
	int started; /* an event was submitted: no more streams */
	uint64_t submitted;
	uint64_t emitted;
	uint64_t first_output_ns;
	uint64_t noted_records, noted_bytes; /* last peak told the writer */
	uint8_t *meta; /* PTW_CLOCK_STREAMS_MAX_META bytes of scratch */
};

/* ---- helpers --------------------------------------------------------- */

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

/* The writer's sticky error (NOMEM, IO), or 0. */
static int sticky(const struct ptw_clock_streams *cs)
{
	int code = ptw_writer_error(cs->w)->code;
	if (code == PTW_ERR_NOMEM || code == PTW_ERR_IO)
		return code;
	return 0;
}

static uint32_t track_slot(uint64_t uuid, uint32_t cap)
{
	/* Fibonacci hashing: uuids are often small consecutive integers. */
	return (uint32_t)((uuid * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static const struct cs_track *track_find(const struct ptw_clock_streams *cs,
					 uint64_t uuid)
{
	if (!cs->cap_tracks || uuid == 0)
		return NULL;
	for (uint32_t i = track_slot(uuid, cs->cap_tracks);;
	     i = (i + 1) & (cs->cap_tracks - 1)) {
		if (cs->tracks[i].uuid == uuid)
			return &cs->tracks[i];
		if (cs->tracks[i].uuid == 0)
			return NULL;
	}
}

/* Makes room for one more track, so that track_put cannot fail. */
static int track_reserve(struct ptw_clock_streams *cs)
{
	if ((uint64_t)(cs->n_tracks + 1) * 2 <= cs->cap_tracks)
		return 0;
	uint32_t ncap = cs->cap_tracks ? cs->cap_tracks * 2 : 64;
	struct cs_track *t = calloc(ncap, sizeof(*t));
	if (!t)
		return PTW_ERR_NOMEM;
	for (uint32_t i = 0; i < cs->cap_tracks; i++) {
		if (!cs->tracks[i].uuid)
			continue;
		uint32_t j = track_slot(cs->tracks[i].uuid, ncap);
		while (t[j].uuid)
			j = (j + 1) & (ncap - 1);
		t[j] = cs->tracks[i];
	}
	free(cs->tracks);
	cs->tracks = t;
	cs->cap_tracks = ncap;
	return 0;
}

static void track_put(struct ptw_clock_streams *cs, uint64_t uuid, char *name,
		      int is_counter)
{
	uint32_t j = track_slot(uuid, cs->cap_tracks);
	while (cs->tracks[j].uuid)
		j = (j + 1) & (cs->cap_tracks - 1);
	cs->tracks[j].uuid = uuid;
	cs->tracks[j].name = name;
	cs->tracks[j].is_counter = is_counter;
	cs->n_tracks++;
}

static void note_peak(struct ptw_clock_streams *cs)
{
	if (cs->store.peak_records == cs->noted_records &&
	    cs->store.peak_bytes == cs->noted_bytes)
		return;
	cs->noted_records = cs->store.peak_records;
	cs->noted_bytes = cs->store.peak_bytes;
	ptw_i_writer_note_clock_peak(cs->w, cs->noted_records, cs->noted_bytes);
}

/* ---- emission ---------------------------------------------------------- */

/* Writes every buffered record with ns below 'below', in key order.
 * Stops at a sticky writer error; remembers the first event the writer
 * rejected (misuse) and carries on with the others. */
static int emit_below(struct ptw_clock_streams *cs, uint64_t below)
{
	struct ptw_clock_rec rec;
	uint64_t flows[PTW_MAX_FLOWS], term[PTW_MAX_FLOWS];
	struct ptw_arg args[PTW_MAX_ANNOTATIONS];
	int first_err = 0;

	int rc = sticky(cs);
	if (rc)
		return rc;
	while (ptw_clock_store_pop_below(&cs->store, below, &rec, cs->meta)) {
		struct cs_stream *st = &cs->streams[rec.stream];
		if (cs->emitted == 0) {
			uint64_t now = ptw_writer_now_ns(cs->w);
			cs->first_output_ns = now ? now : 1;
		}
		cs->emitted++;
		switch (rec.kind) {
		case CS_COUNTER_INT:
			rc = ptw_seq_counter_int(st->seq, rec.track, rec.t.ns,
						 rec.value.i);
			break;
		case CS_COUNTER_DOUBLE:
			rc = ptw_seq_counter_double(st->seq, rec.track, rec.t.ns,
						    rec.value.d);
			break;
		default: {
			struct ptw_event ev;
			memset(&ev, 0, sizeof(ev));
			rc = ptw_clock_meta_decode(cs->meta, rec.meta_len, &ev,
						   flows, term, args);
			if (rc) {
				rc = ptw_i_writer_fail(cs->w, PTW_ERR_FORMAT, 0,
					"clock stream %s: corrupt buffered "
					"record at cycle %" PRIu64,
					st->name, rec.cycle);
				break;
			}
			ev.track = rec.track;
			ev.ts = rec.t.ns;
			if (rec.kind == CS_BEGIN)
				rc = ptw_seq_slice_begin(st->seq, &ev);
			else if (rec.kind == CS_END)
				rc = ptw_seq_slice_end(st->seq, &ev);
			else
				rc = ptw_seq_instant(st->seq, &ev);
			break;
		}
		}
		if (rc) {
			int s = sticky(cs);
			if (s)
				return s;
			if (!first_err)
				first_err = rc;
		}
	}
	return first_err;
}

static int cs_close_hook(void *ctx)
{
	struct ptw_clock_streams *cs = ctx;
	/* Every ns is <= INT64_MAX < UINT64_MAX: releases everything. */
	int rc = emit_below(cs, UINT64_MAX);
	note_peak(cs);
	return rc;
}

static void cs_free(struct ptw_clock_streams *cs)
{
	if (!cs)
		return;
	for (uint32_t i = 0; i < cs->n_streams; i++)
		free(cs->streams[i].name);
	free(cs->streams);
	for (uint32_t i = 0; i < cs->cap_tracks; i++)
		free(cs->tracks[i].name);
	free(cs->tracks);
	ptw_clock_store_free(&cs->store);
	free(cs->meta);
	free(cs);
}

static void cs_free_hook(void *ctx) { cs_free(ctx); }

/* ---- set-up ------------------------------------------------------------ */

struct ptw_clock_streams *ptw_clock_streams_attach_sized(
	struct ptw_writer *w, const struct ptw_clock_streams_options *user_opt,
	size_t opt_size, struct ptw_error *err)
{
	struct ptw_clock_streams_options o;
	const struct ptw_clock_streams_options *opt = &o;
	if (ptw_sized_in(&o, sizeof(o), user_opt, opt_size)) {
		ptw_error_set(err, PTW_ERR_INVALID, 0,
			      "clock streams: options of %zu bytes set fields "
			      "this library (%zu bytes) does not know",
			      opt_size, sizeof(o));
		return NULL;
	}
	if (!w) {
		ptw_error_set(err, PTW_ERR_INVALID, 0,
			      "clock streams: NULL writer");
		return NULL;
	}
	struct ptw_clock_streams *cs = calloc(1, sizeof(*cs));
	uint8_t *meta = malloc(PTW_CLOCK_STREAMS_MAX_META);
	if (!cs || !meta) {
		free(cs);
		free(meta);
		ptw_error_set(err, PTW_ERR_NOMEM, 0,
			      "clock streams: out of memory");
		return NULL;
	}
	cs->w = w;
	cs->meta = meta;
	uint32_t max_records = opt && opt->max_records
				       ? opt->max_records
				       : PTW_CLOCK_STREAMS_DEFAULT_MAX_RECORDS;
	uint64_t max_bytes = opt && opt->max_bytes
				     ? opt->max_bytes
				     : PTW_CLOCK_STREAMS_DEFAULT_MAX_BYTES;
	ptw_clock_store_init(&cs->store, max_records, max_bytes);

	int rc = ptw_i_writer_set_mode(w, PTW_I_MODE_CLOCK);
	if (rc) {
		ptw_error_set(err, rc, 0,
			      "clock streams: the writer already carries "
			      "host-time events; they cannot share a file");
		cs_free(cs);
		return NULL;
	}
	rc = ptw_i_writer_set_close_hook(w, cs_close_hook, cs_free_hook, cs);
	if (rc) {
		ptw_error_set(err, rc, 0,
			      "clock streams: already attached to this writer");
		cs_free(cs);
		return NULL;
	}
	return cs;
}

int ptw_clock_streams_add(struct ptw_clock_streams *cs,
			 const struct ptw_clock_streams_domain *d, uint32_t *stream_out)
{
	if (!cs)
		return PTW_ERR_INVALID;
	int rc = sticky(cs);
	if (rc)
		return rc;
	if (!d || !d->name || !d->name[0] || !stream_out)
		return ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
			"clock stream: a domain needs a non-empty name");
	if (cs->started)
		return ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
			"clock stream %s: streams must be added before the "
			"first event", d->name);
	if (cs->n_streams >= PTW_CLOCK_STREAMS_MAX_STREAMS)
		return ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
			"clock stream %s: more than %u streams", d->name,
			PTW_CLOCK_STREAMS_MAX_STREAMS);
	struct ptw_clock_rate rate;
	if (ptw_clock_rate_init(&rate, d->hz, d->hz_den, d->offset,
				d->offset_ns))
		return ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
			"clock stream %s: frequency must be at least 1 Hz "
			"(hz is 0)", d->name);

	/* Everything that can fail before the writer is touched. */
	struct cs_stream *ns = ptw_realloc_array(cs->streams,
						 (size_t)cs->n_streams + 1,
						 sizeof(*ns));
	if (!ns)
		return ptw_i_writer_fail(cs->w, PTW_ERR_NOMEM, 0,
					 "clock stream: out of memory");
	cs->streams = ns;
	char *name = dup_str(d->name);
	char *tname = dup_str(d->name);
	if (!name || !tname || track_reserve(cs)) {
		free(name);
		free(tname);
		return ptw_i_writer_fail(cs->w, PTW_ERR_NOMEM, 0,
					 "clock stream: out of memory");
	}
	/* The UI orders tracks by sibling_order_rank only under a parent
	 * with explicit child ordering (root tracks go by name), so the
	 * streams hang under one root track, in stream order. */
	if (!cs->group)
		cs->group = ptw_writer_add_track(cs->w, PTW_CLOCK_STREAM_GROUP,
						 0, -1);
	uint64_t track = cs->group ? ptw_writer_add_track(cs->w, d->name,
							  cs->group,
							  (int32_t)cs->n_streams)
				   : 0;
	if (!track) {
		free(name);
		free(tname);
		rc = ptw_writer_error(cs->w)->code;
		return rc ? rc : PTW_ERR_INVALID;
	}
	track_put(cs, track, tname, 0);
	struct ptw_seq *seq = ptw_i_writer_add_clock_seq(cs->w, track);
	if (!seq) {
		free(name);
		rc = ptw_writer_error(cs->w)->code;
		return rc ? rc : PTW_ERR_NOMEM;
	}
	struct cs_stream *st = &cs->streams[cs->n_streams];
	st->name = name;
	st->rate = rate;
	st->seq = seq;
	st->track = track;
	st->next_seq = 0;
	*stream_out = cs->n_streams++;
	return 0;
}

static uint64_t add_track_common(struct ptw_clock_streams *cs,
				 const char *name, const char *unit,
				 uint64_t parent, int32_t rank, int counter)
{
	if (!cs || sticky(cs))
		return 0;
	if (!name) {
		ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
				  "clock stream: a track needs a name");
		return 0;
	}
	char *copy = dup_str(name);
	if (!copy || track_reserve(cs)) {
		free(copy);
		ptw_i_writer_fail(cs->w, PTW_ERR_NOMEM, 0,
				  "clock stream: out of memory");
		return 0;
	}
	uint64_t uuid = counter ? ptw_writer_add_counter_track(cs->w, name, unit,
							       parent, rank)
				: ptw_writer_add_track(cs->w, name, parent, rank);
	if (!uuid) {
		free(copy);
		return 0;
	}
	track_put(cs, uuid, copy, counter);
	return uuid;
}

uint64_t ptw_clock_streams_add_track(struct ptw_clock_streams *cs,
				    const char *name, uint64_t parent_uuid,
				    int32_t rank)
{
	return add_track_common(cs, name, NULL, parent_uuid, rank, 0);
}

uint64_t ptw_clock_streams_add_counter_track(struct ptw_clock_streams *cs,
					    const char *name,
					    const char *unit_name,
					    uint64_t parent_uuid, int32_t rank)
{
	return add_track_common(cs, name, unit_name, parent_uuid, rank, 1);
}

uint64_t ptw_clock_streams_track(const struct ptw_clock_streams *cs,
				uint32_t stream)
{
	return cs && stream < cs->n_streams ? cs->streams[stream].track : 0;
}

int ptw_clock_streams_to_ns(const struct ptw_clock_streams *cs,
			   uint32_t stream, uint64_t cycle, uint64_t *ns_out)
{
	if (!cs || !ns_out || stream >= cs->n_streams)
		return PTW_ERR_INVALID;
	struct ptw_clock_time t;
	int rc = ptw_clock_rate_convert(&cs->streams[stream].rate, cycle, &t);
	if (rc)
		return rc;
	*ns_out = t.ns;
	return 0;
}

/* ---- events -------------------------------------------------------------- */

/* Validates and buffers one record. 'ev' is NULL for counters. Nothing is
 * changed unless it returns 0. */
static int submit(struct ptw_clock_streams *cs, uint32_t stream,
		  enum cs_kind kind, uint64_t track, uint64_t cycle,
		  const struct ptw_clock_streams_event *ev, int64_t ival, double dval)
{
	if (!cs)
		return PTW_ERR_INVALID;
	int rc = sticky(cs);
	if (rc)
		return rc;
	if (stream >= cs->n_streams)
		return ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
			"clock stream: no stream %" PRIu32 " (%" PRIu32
			" added)", stream, cs->n_streams);
	struct cs_stream *st = &cs->streams[stream];
	if (!ev && kind != CS_COUNTER_INT && kind != CS_COUNTER_DOUBLE)
		return ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
			"clock stream %s: NULL event", st->name);
	if (track == 0)
		track = st->track;
	const struct cs_track *tr = track_find(cs, track);
	int counter = kind == CS_COUNTER_INT || kind == CS_COUNTER_DOUBLE;
	if (!tr)
		return ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
			"clock stream %s: cycle %" PRIu64 ": track %" PRIu64
			" was not added with ptw_clock_streams_add_track",
			st->name, cycle, track);
	if (tr->is_counter != counter)
		return ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
			"clock stream %s: cycle %" PRIu64 ": %s on %s track "
			"'%s'", st->name, cycle,
			counter ? "counter value" : "slice or instant",
			counter ? "non-counter" : "counter", tr->name);

	struct ptw_clock_rec rec;
	memset(&rec, 0, sizeof(rec));
	rc = ptw_clock_rate_convert(&st->rate, cycle, &rec.t);
	if (rc)
		return ptw_i_writer_fail(cs->w, rc, 0,
			"clock stream %s: cycle %" PRIu64 " is beyond "
			"INT64_MAX ns", st->name, cycle);
	if (rec.t.ns < cs->watermark)
		return ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
			"clock stream %s: late event at cycle %" PRIu64
			" (%" PRIu64 " ns) below the watermark %" PRIu64 " ns",
			st->name, cycle, rec.t.ns, cs->watermark);

	struct ptw_clock_meta_keys keys = { 0, 0, 0 };
	uint32_t meta_len = 0;
	if (!counter) {
		const char *why = "";
		rc = ptw_clock_meta_encode(ev, kind != CS_END, cs->meta,
					   &meta_len, &keys, &why);
		if (rc)
			return ptw_i_writer_fail(cs->w, rc, 0,
				"clock stream %s: cycle %" PRIu64 ": %s",
				st->name, cycle, why);
	} else if (kind == CS_COUNTER_INT) {
		rec.value.i = ival;
	} else {
		rec.value.d = dval;
	}
	rec.phase = keys.phase;
	rec.ordinal = keys.has_ordinal ? keys.ordinal : st->next_seq;
	rec.seq = st->next_seq;
	rec.cycle = cycle;
	rec.track = track;
	rec.track_name = tr->name;
	rec.stream = stream;
	rec.kind = kind;
	rec.meta_len = meta_len;

	rc = ptw_clock_store_insert(&cs->store, &rec, cs->meta);
	if (rc == PTW_ERR_LIMIT)
		return ptw_i_writer_fail(cs->w, rc, 0,
			"clock stream %s: cycle %" PRIu64 ": store full "
			"(%" PRIu32 " records, %" PRIu64 " of %" PRIu64
			" bytes buffered): advance the watermark",
			st->name, cycle, cs->store.n_recs, cs->store.bytes,
			cs->store.max_bytes);
	if (rc)
		return ptw_i_writer_fail(cs->w, rc, 0,
			"clock stream %s: out of memory", st->name);
	st->next_seq++;
	cs->started = 1;
	cs->submitted++;
	note_peak(cs);
	return 0;
}

int ptw_clock_streams_instant(struct ptw_clock_streams *cs, uint32_t stream,
			     const struct ptw_clock_streams_event *ev)
{
	return submit(cs, stream, CS_INSTANT, ev ? ev->track : 0,
		      ev ? ev->cycle : 0, ev, 0, 0.0);
}

int ptw_clock_streams_slice_begin(struct ptw_clock_streams *cs,
				 uint32_t stream,
				 const struct ptw_clock_streams_event *ev)
{
	return submit(cs, stream, CS_BEGIN, ev ? ev->track : 0,
		      ev ? ev->cycle : 0, ev, 0, 0.0);
}

int ptw_clock_streams_slice_end(struct ptw_clock_streams *cs, uint32_t stream,
			       const struct ptw_clock_streams_event *ev)
{
	return submit(cs, stream, CS_END, ev ? ev->track : 0,
		      ev ? ev->cycle : 0, ev, 0, 0.0);
}

int ptw_clock_streams_counter_int(struct ptw_clock_streams *cs,
				 uint32_t stream, uint64_t track,
				 uint64_t cycle, int64_t value)
{
	return submit(cs, stream, CS_COUNTER_INT, track, cycle, NULL, value,
		      0.0);
}

int ptw_clock_streams_counter_double(struct ptw_clock_streams *cs,
				    uint32_t stream, uint64_t track,
				    uint64_t cycle, double value)
{
	return submit(cs, stream, CS_COUNTER_DOUBLE, track, cycle, NULL, 0,
		      value);
}

/* ---- watermarks ------------------------------------------------------------ */

int ptw_clock_streams_advance_watermark(struct ptw_clock_streams *cs,
				       uint64_t exclusive_ns)
{
	if (!cs)
		return PTW_ERR_INVALID;
	int rc = sticky(cs);
	if (rc)
		return rc;
	if (exclusive_ns < cs->watermark)
		return ptw_i_writer_fail(cs->w, PTW_ERR_INVALID, 0,
			"clock streams: watermark %" PRIu64 " ns is below the "
			"current watermark %" PRIu64 " ns", exclusive_ns,
			cs->watermark);
	cs->watermark = exclusive_ns;
	return emit_below(cs, exclusive_ns);
}

uint64_t ptw_clock_streams_event_bytes(uint32_t meta_bytes)
{
	return ptw_clock_store_rec_bytes(meta_bytes);
}

void ptw_clock_streams_get_stats_sized(const struct ptw_clock_streams *cs,
				       struct ptw_clock_streams_stats *user_out,
				       size_t out_size)
{
	if (!user_out)
		return;
	struct ptw_clock_streams_stats st;
	struct ptw_clock_streams_stats *out = &st;
	memset(out, 0, sizeof(*out));
	if (!cs) {
		ptw_sized_out(user_out, out_size, out, sizeof(*out));
		return;
	}
	out->buffered_records = cs->store.n_recs;
	out->buffered_bytes = cs->store.bytes;
	out->peak_records = cs->store.peak_records;
	out->peak_bytes = cs->store.peak_bytes;
	out->submitted = cs->submitted;
	out->emitted = cs->emitted;
	out->watermark = cs->watermark;
	out->first_output_ns = cs->first_output_ns;
	ptw_sized_out(user_out, out_size, out, sizeof(*out));
}
