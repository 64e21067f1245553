/* test_tracer.c - the instrumentation macros end to end: log from threads,
 * stop, decode the file with protobuf-c and compare with what was logged.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptw/tracer.h"
#include "ptw_trace.pb-c.h"
#include "reader/trace_check.h"
#include "reader/trace_read.h"
#include "lib/arch/arch.h"
#include "lib/tracer/tracer_internal.h" /* the backend's map, tested directly */

/* ASan/UBSan builds run ~4x slower: the stress test scales down there. */
#if defined(__SANITIZE_ADDRESS__)
#define PTW_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PTW_TEST_ASAN 1
#endif
#endif
#ifndef PTW_TEST_ASAN
#define PTW_TEST_ASAN 0
#endif

static int small_scale(void)
{
	const char *s = getenv("PTW_TEST_SCALE");
	return s && strcmp(s, "small") == 0;
}

static void tmp_path(char *buf, size_t n, const char *tag)
{
	snprintf(buf, n, "/tmp/ptw_test_tracer_%s_%d.pftrace", tag, (int)getpid());
}

/* ---- a small decoder: packets in file order, per-sequence interning and
 * incremental clock, track descriptors ------------------------------------ */

#define MAX_SEQ 4096
#define MAX_TRACKS 8192
#define MAX_ARGS 16

struct dseq {
	int used;
	uint64_t default_track;
	uint64_t base;      /* clock 64 running value */
	char **names;       /* iid -> event name */
	size_t n_names;
	char **anames;      /* iid -> annotation name */
	size_t n_anames;
	char **svals;       /* iid -> interned string value */
	size_t n_svals;
	uint64_t dropped_flags; /* packets with previous_packet_dropped */
};

struct dtrack {
	uint64_t uuid, parent;
	int kind; /* 1 process, 2 thread, 3 counter, 4 plain */
	char name[128];
	int64_t tid;
};

struct darg {
	const char *name;
	int type; /* PTW_ARG_* */
	int64_t i;
	uint64_t u;
	double d;
	const char *s;
};

struct dev {
	uint32_t seq;
	int type; /* TrackEvent.Type */
	const char *name;
	uint64_t track;
	int explicit_track;
	uint64_t ts;
	int64_t ival;
	double dval;
	int is_double;
	uint64_t flow, tflow;
	struct darg args[MAX_ARGS];
	int nargs;
};

/* A ChromeEventBundle.metadata entry (trace_processor's metadata table,
 * key "cr-<name>"): where the tracer declares its clock. */
#define MAX_META 16
struct dmeta {
	char name[64];
	char str[64];      /* "" for an int value */
	int64_t i;
};

struct dec {
	struct dseq seqs[MAX_SEQ];
	struct dtrack tracks[MAX_TRACKS];
	int n_tracks;
	struct dmeta meta[MAX_META];
	int n_meta, n_bundles;  /* entries, chrome_events packets */
	uint64_t packets, events, bad;
	void (*on_event)(struct dec *d, const struct dev *e, void *ctx);
	void *ctx;
};

static void intern_put(char ***tab, size_t *n, uint64_t iid, const char *s,
		       size_t len)
{
	if (iid >= *n) {
		size_t nn = (iid + 1) * 2;
		*tab = realloc(*tab, nn * sizeof(**tab));
		cr_assert_not_null(*tab);
		memset(*tab + *n, 0, (nn - *n) * sizeof(**tab));
		*n = nn;
	}
	if ((*tab)[iid])
		return; /* first definition wins within a generation */
	char *c = malloc(len + 1);
	cr_assert_not_null(c);
	memcpy(c, s, len);
	c[len] = '\0';
	(*tab)[iid] = c;
}

static void intern_clear(char **tab, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(tab[i]);
		tab[i] = NULL;
	}
}

static const char *intern_get(char **tab, size_t n, uint64_t iid)
{
	return iid < n ? tab[iid] : NULL;
}

static struct dtrack *dec_track(struct dec *d, uint64_t uuid)
{
	for (int i = 0; i < d->n_tracks; i++)
		if (d->tracks[i].uuid == uuid)
			return &d->tracks[i];
	return NULL;
}

static void dec_packet(struct dec *d, const Perfetto__Protos__TracePacket *p)
{
	d->packets++;
	uint32_t sid = p->optional_trusted_packet_sequence_id_case ==
				       PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID
			       ? p->trusted_packet_sequence_id
			       : 0;
	cr_assert_lt(sid, MAX_SEQ);
	struct dseq *s = &d->seqs[sid];
	s->used = 1;
	if (p->has_sequence_flags && (p->sequence_flags & 1)) {
		intern_clear(s->names, s->n_names);
		intern_clear(s->anames, s->n_anames);
		intern_clear(s->svals, s->n_svals);
		s->default_track = 0;
	}
	if (p->has_previous_packet_dropped && p->previous_packet_dropped)
		s->dropped_flags++;
	if (p->trace_packet_defaults &&
	    p->trace_packet_defaults->track_event_defaults &&
	    p->trace_packet_defaults->track_event_defaults->has_track_uuid)
		s->default_track =
			p->trace_packet_defaults->track_event_defaults->track_uuid;
	if (p->interned_data) {
		const Perfetto__Protos__InternedData *in = p->interned_data;
		for (size_t i = 0; i < in->n_event_names; i++)
			intern_put(&s->names, &s->n_names, in->event_names[i]->iid,
				   in->event_names[i]->name,
				   strlen(in->event_names[i]->name));
		for (size_t i = 0; i < in->n_debug_annotation_names; i++)
			intern_put(&s->anames, &s->n_anames,
				   in->debug_annotation_names[i]->iid,
				   in->debug_annotation_names[i]->name,
				   strlen(in->debug_annotation_names[i]->name));
		for (size_t i = 0; i < in->n_debug_annotation_string_values; i++)
			intern_put(&s->svals, &s->n_svals,
				   in->debug_annotation_string_values[i]->iid,
				   (const char *)in->debug_annotation_string_values[i]->str.data,
				   in->debug_annotation_string_values[i]->str.len);
	}
	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT) {
		for (size_t i = 0; i < p->clock_snapshot->n_clocks; i++)
			if (p->clock_snapshot->clocks[i]->clock_id == 64)
				s->base = p->clock_snapshot->clocks[i]->timestamp;
		return;
	}
	if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR) {
		const Perfetto__Protos__TrackDescriptor *td = p->track_descriptor;
		struct dtrack *t = dec_track(d, td->uuid);
		if (!t) {
			cr_assert_lt(d->n_tracks, MAX_TRACKS);
			t = &d->tracks[d->n_tracks++];
			memset(t, 0, sizeof(*t));
			t->uuid = td->uuid;
		}
		t->parent = td->has_parent_uuid ? td->parent_uuid : 0;
		const char *nm = NULL;
		if (td->thread) {
			t->kind = 2;
			t->tid = td->thread->tid;
			nm = td->thread->thread_name;
		} else if (td->process) {
			t->kind = 1;
			nm = td->process->process_name;
		} else if (td->counter) {
			t->kind = 3;
			nm = td->name;
		} else {
			t->kind = 4;
			nm = td->name;
		}
		if (nm)
			snprintf(t->name, sizeof(t->name), "%s", nm);
		return;
	}
	if (p->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT)
		return;
	cr_assert(p->has_timestamp, "TrackEvent without timestamp");
	const Perfetto__Protos__TrackEvent *te = p->track_event;
	struct dev e;
	memset(&e, 0, sizeof(e));
	e.seq = sid;
	if (p->has_timestamp_clock_id && p->timestamp_clock_id != 64)
		e.ts = p->timestamp;
	else
		e.ts = (s->base += p->timestamp);
	e.type = te->type;
	e.explicit_track = te->has_track_uuid;
	e.track = te->has_track_uuid ? te->track_uuid : s->default_track;
	if (te->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID) {
		e.name = intern_get(s->names, s->n_names, te->name_iid);
		if (!e.name)
			d->bad++;
	} else if (te->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME)
		e.name = te->name;
	if (te->counter_value_field_case ==
	    PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE)
		e.ival = te->counter_value;
	else if (te->counter_value_field_case ==
		 PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE) {
		e.dval = te->double_counter_value;
		e.is_double = 1;
	}
	if (te->n_flow_ids)
		e.flow = te->flow_ids[0];
	if (te->n_terminating_flow_ids)
		e.tflow = te->terminating_flow_ids[0];
	for (size_t i = 0; i < te->n_debug_annotations && i < MAX_ARGS; i++) {
		const Perfetto__Protos__DebugAnnotation *a = te->debug_annotations[i];
		struct darg *da = &e.args[e.nargs++];
		da->name = a->name_field_case ==
					   PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID
				   ? intern_get(s->anames, s->n_anames, a->name_iid)
				   : a->name;
		switch (a->value_case) {
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE:
			da->type = PTW_ARG_TYPE_BOOL;
			da->i = a->bool_value;
			break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE:
			da->type = PTW_ARG_TYPE_INT;
			da->i = a->int_value;
			break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE:
			da->type = PTW_ARG_TYPE_UINT;
			da->u = a->uint_value;
			break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE:
			da->type = PTW_ARG_TYPE_POINTER;
			da->u = a->pointer_value;
			break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE:
			da->type = PTW_ARG_TYPE_DOUBLE;
			da->d = a->double_value;
			break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE:
			da->type = PTW_ARG_TYPE_STRING;
			da->s = a->string_value;
			break;
		case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID:
			da->type = PTW_ARG_TYPE_STRING;
			da->s = intern_get(s->svals, s->n_svals, a->string_value_iid);
			break;
		default:
			da->type = 0;
			break;
		}
	}
	d->events++;
	if (d->on_event)
		d->on_event(d, &e, d->ctx);
}

static int read_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && *pos < n; shift += 7) {
		uint8_t b = p[(*pos)++];
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

/* Skips one field of wire type 'wt' at *pos. */
static int skip_field(const uint8_t *p, size_t n, size_t *pos, uint32_t wt)
{
	uint64_t v;
	switch (wt) {
	case 0: return read_varint(p, n, pos, &v);
	case 1: *pos += 8; return *pos <= n;
	case 2:
		if (!read_varint(p, n, pos, &v) || v > n - *pos)
			return 0;
		*pos += v;
		return 1;
	case 5: *pos += 4; return *pos <= n;
	default: return 0;
	}
}

/* Calls fn(ctx, field, bytes, len) for every length-delimited field of a
 * message (the test's proto has no ChromeEventBundle). */
static void each_len_field(const uint8_t *p, size_t n,
			   void (*fn)(void *ctx, uint32_t field,
				      const uint8_t *b, size_t len),
			   void *ctx)
{
	size_t pos = 0;
	while (pos < n) {
		uint64_t tag, len;
		cr_assert(read_varint(p, n, &pos, &tag));
		if ((tag & 7) != 2) {
			cr_assert(skip_field(p, n, &pos, (uint32_t)(tag & 7)));
			continue;
		}
		cr_assert(read_varint(p, n, &pos, &len) && len <= n - pos);
		fn(ctx, (uint32_t)(tag >> 3), p + pos, (size_t)len);
		pos += len;
	}
}

static void meta_entry_field(void *ctx, uint32_t f, const uint8_t *b,
			     size_t len)
{
	struct dmeta *m = ctx;
	char *dst = f == 1 ? m->name : f == 2 ? m->str : NULL;
	if (!dst)
		return;
	cr_assert_lt(len, sizeof(m->name));
	memcpy(dst, b, len);
	dst[len] = '\0';
}

static void meta_bundle_field(void *ctx, uint32_t f, const uint8_t *b,
			      size_t len)
{
	struct dec *d = ctx;
	if (f != 2) /* ChromeEventBundle.metadata */
		return;
	cr_assert_lt(d->n_meta, MAX_META);
	struct dmeta *m = &d->meta[d->n_meta++];
	memset(m, 0, sizeof(*m));
	each_len_field(b, len, meta_entry_field, m);
	/* int_value (4) is a varint: read it here */
	size_t pos = 0;
	while (pos < len) {
		uint64_t tag, v;
		cr_assert(read_varint(b, len, &pos, &tag));
		if (tag == (4u << 3)) {
			cr_assert(read_varint(b, len, &pos, &v));
			m->i = (int64_t)v;
		} else {
			cr_assert(skip_field(b, len, &pos, (uint32_t)(tag & 7)));
		}
	}
}

static void meta_packet_field(void *ctx, uint32_t f, const uint8_t *b,
			      size_t len)
{
	struct dec *d = ctx;
	if (f != 5) /* TracePacket.chrome_events */
		return;
	d->n_bundles++;
	each_len_field(b, len, meta_bundle_field, d);
}

/* The metadata entry 'name', or NULL. */
static const struct dmeta *dec_meta(const struct dec *d, const char *name)
{
	for (int i = 0; i < d->n_meta; i++)
		if (strcmp(d->meta[i].name, name) == 0)
			return &d->meta[i];
	return NULL;
}

/* protobuf-c allocations of one packet come from a bump arena that is
 * reset after the packet (16M packets: malloc/free would dominate). */
struct bump {
	unsigned char *buf;
	size_t used, cap;
};

static void *bump_alloc(void *ctx, size_t size)
{
	struct bump *b = ctx;
	size = (size + 15) & ~(size_t)15;
	if (b->used + size > b->cap)
		return malloc(size); /* rare: leaked into the test's heap */
	void *p = b->buf + b->used;
	b->used += size;
	return p;
}

static void bump_free(void *ctx, void *p)
{
	struct bump *b = ctx;
	if (p && ((unsigned char *)p < b->buf ||
		  (unsigned char *)p >= b->buf + b->cap))
		free(p);
}

/* Decodes a whole file; the decoder stays valid for the track table. */
static struct dec *decode_file(const char *path,
			       void (*on_event)(struct dec *, const struct dev *, void *),
			       void *ctx)
{
	struct dec *d = calloc(1, sizeof(*d));
	cr_assert_not_null(d);
	d->on_event = on_event;
	d->ctx = ctx;
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0, "cannot open %s", path);
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	size_t n = (size_t)st.st_size;
	if (n == 0) {
		close(fd);
		return d;
	}
	const uint8_t *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
	cr_assert_neq(p, MAP_FAILED);
	struct bump b = {malloc(1 << 20), 0, 1 << 20};
	cr_assert_not_null(b.buf);
	ProtobufCAllocator alloc = {bump_alloc, bump_free, &b};
	size_t pos = 0;
	while (pos < n) {
		cr_assert_eq(p[pos], 0x0a, "byte %zu: not a packet record", pos);
		pos++;
		uint64_t len;
		cr_assert(read_varint(p, n, &pos, &len));
		cr_assert_leq(pos + len, n, "truncated record at %zu", pos);
		Perfetto__Protos__TracePacket *pk =
			perfetto__protos__trace_packet__unpack(&alloc, (size_t)len, p + pos);
		cr_assert_not_null(pk, "undecodable packet at byte %zu", pos);
		cr_assert_neq(pk->data_case,
			      PERFETTO__PROTOS__TRACE_PACKET__DATA_COMPRESSED_PACKETS);
		dec_packet(d, pk);
		each_len_field(p + pos, (size_t)len, meta_packet_field, d);
		perfetto__protos__trace_packet__free_unpacked(pk, &alloc);
		b.used = 0;
		pos += len;
	}
	free(b.buf);
	munmap((void *)p, n);
	close(fd);
	return d;
}

static void dec_free(struct dec *d)
{
	for (int i = 0; i < MAX_SEQ; i++) {
		struct dseq *s = &d->seqs[i];
		intern_clear(s->names, s->n_names);
		intern_clear(s->anames, s->n_anames);
		intern_clear(s->svals, s->n_svals);
		free(s->names);
		free(s->anames);
		free(s->svals);
	}
	free(d);
}

/* Per-sequence nesting checker: counts events and verifies END never
 * exceeds BEGIN on the sequence's default track. */
struct nest {
	int64_t depth[MAX_SEQ];
	uint64_t count[MAX_SEQ];
	uint64_t total, bad_nesting, slices, instants, counters;
	uint64_t last_ts[MAX_SEQ];
	uint64_t backwards;
};

static void nest_cb(struct dec *d, const struct dev *e, void *ctx)
{
	(void)d;
	struct nest *n = ctx;
	if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER) {
		n->counters++;
		return;
	}
	if (e->explicit_track)
		return;
	n->total++;
	n->count[e->seq]++;
	if (e->ts < n->last_ts[e->seq])
		n->backwards++;
	n->last_ts[e->seq] = e->ts;
	if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN) {
		n->depth[e->seq]++;
		n->slices++;
	} else if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END) {
		if (--n->depth[e->seq] < 0)
			n->bad_nesting++;
		n->slices++;
	} else {
		n->instants++;
	}
}

/* The trace also passes ptw's trace_processor-model checker (reader/:
 * sequence rules, interning, clocks, tracks, balanced slices). */
static void reader_check(const char *path, uint32_t flags)
{
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	struct ptw_trace *t = ptw_trace_load_file(path, NULL, &err);
	cr_assert_not_null(t, "load %s: %s", path, err.msg);
	int rc = ptw_trace_check(t, flags, &err);
	cr_assert_eq(rc, 0, "check %s: %s", path, err.msg);
	ptw_trace_free(t);
}

static void start_or_die(struct ptw_config *cfg)
{
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	int rc = ptw_start_ex(cfg, &err);
	cr_assert_eq(rc, 0, "ptw_start: %s", err.msg);
}

/* ---- stress: every event exactly once, in order, nested, named ---------- */

#define STRESS_THREADS 8

static const char *const stress_names[STRESS_THREADS][4] = {
	{"t0.a", "t0.b", "t0.c", "t0.d"}, {"t1.a", "t1.b", "t1.c", "t1.d"},
	{"t2.a", "t2.b", "t2.c", "t2.d"}, {"t3.a", "t3.b", "t3.c", "t3.d"},
	{"t4.a", "t4.b", "t4.c", "t4.d"}, {"t5.a", "t5.b", "t5.c", "t5.d"},
	{"t6.a", "t6.b", "t6.c", "t6.d"}, {"t7.a", "t7.b", "t7.c", "t7.d"},
};

struct stress_arg {
	int k;
	uint64_t pairs;
	pthread_barrier_t *bar;
};

/* Two pairs per round: an outer slice with a run-time (copied) name and a
 * literal inner slice. */
static void *stress_worker(void *p)
{
	struct stress_arg *a = p;
	char tname[16];
	snprintf(tname, sizeof(tname), "stress %d", a->k);
	ptw_set_thread_name(tname);
	pthread_barrier_wait(a->bar);
	for (uint64_t i = 0; i < a->pairs / 2; i++) {
		PTW_BEGIN_DYN("stress", stress_names[a->k][i & 3]);
		PTW_BEGIN("stress", "inner");
		PTW_END("stress");
		PTW_END("stress");
	}
	return NULL;
}

struct stress_check {
	int seq_thread[MAX_SEQ];   /* 0: unknown, else k + 1 */
	uint64_t pos[MAX_SEQ];     /* events seen on the sequence */
	uint64_t errors;
	char first_error[256];
};

static void stress_cb(struct dec *d, const struct dev *e, void *ctx)
{
	(void)d;
	struct stress_check *c = ctx;
	if (e->explicit_track || e->seq >= MAX_SEQ)
		return;
	uint64_t i = c->pos[e->seq]++;
	int k = c->seq_thread[e->seq] - 1;
	int want_type;
	const char *want_name = NULL;
	switch (i % 4) {
	case 0:
		want_type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
		if (k < 0 && e->name && e->name[0] == 't' && e->name[1] >= '0' &&
		    e->name[1] < '0' + STRESS_THREADS) {
			k = e->name[1] - '0';
			c->seq_thread[e->seq] = k + 1;
		}
		want_name = k >= 0 ? stress_names[k][(i / 4) & 3] : "?";
		break;
	case 1:
		want_type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
		want_name = "inner";
		break;
	default:
		want_type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
		break;
	}
	int ok = e->type == want_type &&
		 (!want_name ? e->name == NULL
			     : (e->name && strcmp(e->name, want_name) == 0));
	if (!ok && c->errors++ == 0)
		snprintf(c->first_error, sizeof(c->first_error),
			 "seq %u event %llu: type %d name %s, want type %d name %s",
			 e->seq, (unsigned long long)i, e->type,
			 e->name ? e->name : "(null)", want_type,
			 want_name ? want_name : "(null)");
}

Test(tracer, stress_8_threads_every_event_once_in_order_and_nested,
     .timeout = 240)
{
	uint64_t pairs = small_scale() ? 20000 : PTW_TEST_ASAN ? 100000 : 1000000;
	char path[128];
	tmp_path(path, sizeof(path), "stress");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.ring_slots = 1u << 16;
	cfg.overflow = PTW_OVERFLOW_WAIT; /* no loss allowed here */
	start_or_die(&cfg);

	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, STRESS_THREADS);
	pthread_t th[STRESS_THREADS];
	struct stress_arg args[STRESS_THREADS];
	for (int k = 0; k < STRESS_THREADS; k++) {
		args[k] = (struct stress_arg){k, pairs, &bar};
		cr_assert_eq(pthread_create(&th[k], NULL, stress_worker, &args[k]), 0);
	}
	for (int k = 0; k < STRESS_THREADS; k++)
		pthread_join(th[k], NULL);
	pthread_barrier_destroy(&bar);
	cr_assert_eq(ptw_stop(), 0);

	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.invalid, 0);
	cr_assert_eq(st.events, STRESS_THREADS * pairs * 2);
	cr_assert_eq(st.threads, STRESS_THREADS);

	struct stress_check *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, stress_cb, c);
	cr_assert_eq(c->errors, 0, "%llu errors, first: %s",
		     (unsigned long long)c->errors, c->first_error);
	cr_assert_eq(d->bad, 0, "unresolved name iids");
	int seen[STRESS_THREADS] = {0};
	for (int s = 0; s < MAX_SEQ; s++) {
		if (!c->seq_thread[s])
			continue;
		int k = c->seq_thread[s] - 1;
		seen[k]++;
		cr_assert_eq(c->pos[s], pairs * 2, "thread %d: %llu events", k,
			     (unsigned long long)c->pos[s]);
		/* its track is a thread track named after the thread */
		struct dtrack *t = dec_track(d, d->seqs[s].default_track);
		cr_assert_not_null(t);
		cr_assert_eq(t->kind, 2);
		char want[32];
		snprintf(want, sizeof(want), "stress %d", k);
		cr_assert_str_eq(t->name, want);
	}
	for (int k = 0; k < STRESS_THREADS; k++)
		cr_assert_eq(seen[k], 1, "thread %d on %d sequences", k, seen[k]);
	if (pairs <= 100000) /* the model keeps every event in memory */
		reader_check(path, 0);
	dec_free(d);
	free(c);
	unlink(path);
}

/* ---- tiny rings, drop policy: present + dropped == logged -------------- */

struct drop_arg {
	uint64_t rounds;
	pthread_barrier_t *bar;
};

static void *drop_worker(void *p)
{
	struct drop_arg *a = p;
	pthread_barrier_wait(a->bar);
	for (uint64_t i = 0; i < a->rounds; i++) {
		PTW_BEGIN("drop", "outer");
		PTW_INSTANT("drop", "tick");
		PTW_BEGIN("drop", "inner");
		PTW_END("drop");
		PTW_END("drop");
	}
	return NULL;
}

struct drop_count {
	uint64_t present;
	uint64_t last_drop_counter[MAX_SEQ];
	int64_t depth[MAX_SEQ];
	uint64_t bad_nesting;
};

static void drop_cb(struct dec *d, const struct dev *e, void *ctx)
{
	struct drop_count *c = ctx;
	if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER) {
		struct dtrack *t = dec_track(d, e->track);
		cr_assert_not_null(t);
		cr_assert_str_eq(t->name, "dropped events");
		cr_assert_geq((uint64_t)e->ival, c->last_drop_counter[e->seq]);
		c->last_drop_counter[e->seq] = (uint64_t)e->ival;
		return;
	}
	c->present++;
	if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN)
		c->depth[e->seq]++;
	else if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END &&
		 --c->depth[e->seq] < 0)
		c->bad_nesting++;
}

Test(tracer, tiny_rings_drop_policy_counts_every_lost_event_exactly)
{
	enum { T = 4 };
	uint64_t rounds = small_scale() ? 5000 : 50000;
	char path[128];
	tmp_path(path, sizeof(path), "drop");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.ring_slots = 64;
	cfg.drain_interval_us = 2000;
	start_or_die(&cfg);
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, T);
	pthread_t th[T];
	struct drop_arg a = {rounds, &bar};
	for (int k = 0; k < T; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, drop_worker, &a), 0);
	for (int k = 0; k < T; k++)
		pthread_join(th[k], NULL);
	pthread_barrier_destroy(&bar);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);

	struct drop_count *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, drop_cb, c);
	uint64_t logged = (uint64_t)T * rounds * 5;
	cr_assert_eq(c->present + st.dropped, logged,
		     "present %llu + dropped %llu != logged %llu",
		     (unsigned long long)c->present,
		     (unsigned long long)st.dropped, (unsigned long long)logged);
	cr_assert_eq(st.events, c->present);
	cr_assert_eq(c->bad_nesting, 0, "an END without its BEGIN");
	cr_assert_eq(st.invalid, 0);
	/* the trace itself tells how much was lost, per thread */
	uint64_t announced = 0, flagged = 0;
	for (int s = 0; s < MAX_SEQ; s++) {
		announced += c->last_drop_counter[s];
		flagged += d->seqs[s].dropped_flags;
	}
	cr_assert_eq(announced, st.dropped);
	if (st.dropped)
		cr_assert_gt(flagged, 0, "no previous_packet_dropped packet");
	reader_check(path, PTW_CHECK_ALLOW_DATA_LOSS);
	dec_free(d);
	free(c);
	unlink(path);
}

/* ---- thread churn, stop while logging, two sessions --------------------- */

static void *short_worker(void *p)
{
	int n = *(int *)p;
	for (int i = 0; i < n; i++) {
		PTW_SCOPE("churn", "work");
		PTW_INSTANT("churn", "step");
	}
	return NULL;
}

Test(tracer, threads_starting_and_exiting_get_their_own_sequence_and_track)
{
	char path[128];
	tmp_path(path, sizeof(path), "churn");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.ring_slots = 1024;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	start_or_die(&cfg);
	enum { WAVES = 12, PER_WAVE = 4 };
	int n = 500;
	for (int w = 0; w < WAVES; w++) {
		pthread_t th[PER_WAVE];
		for (int k = 0; k < PER_WAVE; k++)
			cr_assert_eq(pthread_create(&th[k], NULL, short_worker, &n), 0);
		for (int k = 0; k < PER_WAVE; k++)
			pthread_join(th[k], NULL);
	}
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	ptw_get_stats(&st);
	cr_assert_eq(st.threads, WAVES * PER_WAVE);
	cr_assert_eq(st.dropped, 0);

	struct nest *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, nest_cb, c);
	cr_assert_eq(c->total, (uint64_t)WAVES * PER_WAVE * n * 3);
	cr_assert_eq(c->bad_nesting, 0);
	cr_assert_eq(c->backwards, 0);
	int seqs = 0;
	for (int s = 0; s < MAX_SEQ; s++) {
		if (!c->count[s])
			continue;
		seqs++;
		cr_assert_eq(c->count[s], (uint64_t)n * 3);
		cr_assert_eq(c->depth[s], 0);
	}
	cr_assert_eq(seqs, WAVES * PER_WAVE, "one sequence per thread");
	int thread_tracks = 0;
	for (int i = 0; i < d->n_tracks; i++)
		thread_tracks += d->tracks[i].kind == 2;
	cr_assert_eq(thread_tracks, WAVES * PER_WAVE);
	reader_check(path, 0);
	dec_free(d);
	free(c);
	unlink(path);
}

static atomic_int keep_logging;

static void *endless_worker(void *p)
{
	atomic_fetch_add((atomic_int *)p, 1);
	while (atomic_load(&keep_logging)) {
		PTW_SCOPE("live", "loop");
		PTW_COUNTER_INT("live", "value", 7);
		PTW_INSTANT_ARGS("live", "tick", PTW_ARG_STR("s", "text"));
	}
	return NULL;
}

Test(tracer, stop_while_threads_still_log_leaves_a_valid_trace)
{
	char path[128];
	tmp_path(path, sizeof(path), "live");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.ring_slots = 256;
	start_or_die(&cfg);
	atomic_store(&keep_logging, 1);
	atomic_int started = 0;
	pthread_t th[3];
	for (int k = 0; k < 3; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, endless_worker, &started), 0);
	while (atomic_load(&started) < 3)
		sched_yield();
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	cr_assert_eq(ptw_flush(), 0);
	cr_assert_eq(ptw_stop(), 0);
	cr_assert_eq(ptw_stop(), 0, "stop is idempotent");
	cr_assert_eq(ptw_is_running(), 0);
	nanosleep(&ts, NULL); /* they keep calling the macros: no effect */
	atomic_store(&keep_logging, 0);
	for (int k = 0; k < 3; k++)
		pthread_join(th[k], NULL);

	struct nest *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, nest_cb, c);
	cr_assert_gt(c->total, 0);
	cr_assert_gt(c->counters, 0);
	cr_assert_eq(c->bad_nesting, 0);
	cr_assert_eq(d->bad, 0);
	reader_check(path, PTW_CHECK_ALLOW_OPEN);
	dec_free(d);
	free(c);
	unlink(path);
}

static void *one_slice(void *p)
{
	(void)p;
	PTW_BEGIN("s", "from thread");
	PTW_END("s");
	return NULL;
}

Test(tracer, start_stop_twice_in_one_process)
{
	char p1[128], p2[128];
	tmp_path(p1, sizeof(p1), "twice1");
	tmp_path(p2, sizeof(p2), "twice2");
	for (int round = 0; round < 2; round++) {
		struct ptw_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.output_path = round ? p2 : p1;
		start_or_die(&cfg);
		struct ptw_error err;
		cr_assert_eq(ptw_start_ex(&cfg, &err), PTW_ERR_STATE);
		if (round == 0)
			ptw_set_thread_name("main thread");
		PTW_BEGIN("s", "main work");
		PTW_END("s");
		pthread_t th;
		pthread_create(&th, NULL, one_slice, NULL);
		pthread_join(th, NULL);
		cr_assert_eq(ptw_stop(), 0);
		struct ptw_stats st;
		ptw_get_stats(&st);
		cr_assert_eq(st.events, 4);
		cr_assert_eq(st.threads, 2);
	}
	for (int round = 0; round < 2; round++) {
		struct nest *c = calloc(1, sizeof(*c));
		struct dec *d = decode_file(round ? p2 : p1, nest_cb, c);
		cr_assert_eq(c->total, 4);
		cr_assert_eq(c->bad_nesting, 0);
		int named = 0;
		for (int i = 0; i < d->n_tracks; i++)
			named += d->tracks[i].kind == 2 &&
				 strcmp(d->tracks[i].name, "main thread") == 0;
		cr_assert_eq(named, 1, "the thread name carries into session 2");
		dec_free(d);
		free(c);
	}
	unlink(p1);
	unlink(p2);
}

/* ---- content: names, args, counters, async, flows, categories ----------- */

struct collect {
	struct dev ev[256];
	char names[256][64];
	char svals[256][1100];
	int n;
};

static void collect_cb(struct dec *d, const struct dev *e, void *ctx)
{
	(void)d;
	struct collect *c = ctx;
	if (c->n >= 256)
		return;
	c->ev[c->n] = *e;
	if (e->name) {
		snprintf(c->names[c->n], 64, "%s", e->name);
		c->ev[c->n].name = c->names[c->n];
	}
	for (int a = 0; a < e->nargs; a++)
		if (e->args[a].type == PTW_ARG_TYPE_STRING && e->args[a].s) {
			snprintf(c->svals[c->n], sizeof(c->svals[0]), "%s", e->args[a].s);
			c->ev[c->n].args[a].s = c->svals[c->n];
		}
	/* annotation names point into the decoder's tables, which live on */
	c->n++;
}

static const struct dev *find_ev(const struct collect *c, const char *name,
				 int type)
{
	for (int i = 0; i < c->n; i++)
		if (c->ev[i].name && strcmp(c->ev[i].name, name) == 0 &&
		    c->ev[i].type == type)
			return &c->ev[i];
	return NULL;
}

static void *async_ender(void *p)
{
	(void)p;
	ptw_set_thread_name("ender");
	PTW_ASYNC_END("net", 42);
	PTW_FLOW_END("net", "received", 7);
	return NULL;
}

Test(tracer, args_counters_async_flows_and_dynamic_names_decode_as_logged)
{
	char path[128];
	tmp_path(path, sizeof(path), "content");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.process_name = "content test";
	cfg.disabled_categories = "off1, off2";
	start_or_die(&cfg);
	ptw_set_thread_name("sender");
	PTW_INSTANT_ARGS("c", "with args", PTW_ARG_I64("i", -5),
			 PTW_ARG_U64("u", 18446744073709551615ull),
			 PTW_ARG_DBL("d", 2.5), PTW_ARG_BOOL("b", 1),
			 PTW_ARG_STR("s", "hello"));
	static int pointee;
	PTW_INSTANT_ARGS("c", "with pointer", PTW_ARG_PTR("p", &pointee),
			 PTW_ARG_PTR("null", NULL));
	/* A type the ring does not carry is dropped and counted, never
	 * written as a made-up value. */
	struct ptw_arg odd = PTW_ARG_I64("odd", 5);
	odd.type = (enum ptw_arg_type)77;
	/* Nested annotations (PTW_ARG_TYPE_DICT / _ARRAY) are not carried either
	 * (writer.h): dropped and counted too. */
	struct ptw_arg kid = PTW_ARG_I64("k", 1);
	struct ptw_arg nest = {.name = "nest", .type = PTW_ARG_TYPE_DICT,
			       .v.nested = {&kid, 1}};
	PTW_INSTANT_ARGS("c", "with odd arg", PTW_ARG_I64("kept", 3), odd,
			 nest);
	char dyn[32];
	snprintf(dyn, sizeof(dyn), "dyn-%d", 12345);
	PTW_BEGIN_DYN("c", dyn);
	PTW_END_ARGS("c", PTW_ARG_I64("result", 99));
	snprintf(dyn, sizeof(dyn), "instant-%s", "dyn");
	PTW_INSTANT_DYN("c", dyn);
	dyn[0] = 'X'; /* the name was copied at the call */
	PTW_COUNTER_INT("c", "ints", -3);
	PTW_COUNTER_DOUBLE("c", "doubles", 0.25);
	PTW_INSTANT("off1", "never");
	PTW_INSTANT("off2", "never");
	ptw_set_category_enabled("off1", 1);
	PTW_INSTANT("off1", "now on");
	ptw_set_category_enabled("c", 0);
	PTW_INSTANT("c", "never");
	ptw_set_category_enabled("c", 1);
	PTW_ASYNC_BEGIN("net", "request", 42);
	PTW_FLOW_START("net", "sent", 7);
	pthread_t th;
	pthread_create(&th, NULL, async_ender, NULL);
	pthread_join(th, NULL);
	{
		PTW_SCOPE("c", "scoped");
		PTW_INSTANT("c", "inside");
	}
	ptw_set_process_name("renamed process");
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert_eq(st.invalid, 2, "the arguments of unknown and nested type");

	struct collect *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, collect_cb, c);
	const int BEGIN = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
	const int END = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	const int INSTANT = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
	const int COUNTER = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;

	const struct dev *e = find_ev(c, "with args", INSTANT);
	cr_assert_not_null(e);
	cr_assert_eq(e->nargs, 5);
	cr_assert_str_eq(e->args[0].name, "i");
	cr_assert_eq(e->args[0].type, PTW_ARG_TYPE_INT);
	cr_assert_eq(e->args[0].i, -5);
	cr_assert_eq(e->args[1].type, PTW_ARG_TYPE_UINT);
	cr_assert_eq(e->args[1].u, 18446744073709551615ull);
	cr_assert_eq(e->args[2].type, PTW_ARG_TYPE_DOUBLE);
	cr_assert_eq(e->args[2].d, 2.5);
	cr_assert_eq(e->args[3].type, PTW_ARG_TYPE_BOOL);
	cr_assert_eq(e->args[3].i, 1);
	cr_assert_eq(e->args[4].type, PTW_ARG_TYPE_STRING);
	cr_assert_str_eq(e->args[4].s, "hello");

	e = find_ev(c, "with pointer", INSTANT);
	cr_assert_not_null(e);
	cr_assert_eq(e->nargs, 2);
	cr_assert_eq(e->args[0].type, PTW_ARG_TYPE_POINTER);
	cr_assert_eq(e->args[0].u, (uint64_t)(uintptr_t)&pointee);
	cr_assert_eq(e->args[1].type, PTW_ARG_TYPE_POINTER);
	cr_assert_eq(e->args[1].u, 0);
	e = find_ev(c, "with odd arg", INSTANT);
	cr_assert_not_null(e);
	cr_assert_eq(e->nargs, 1);
	cr_assert_str_eq(e->args[0].name, "kept");
	cr_assert_eq(e->args[0].i, 3);

	cr_assert_not_null(find_ev(c, "dyn-12345", BEGIN));
	cr_assert_not_null(find_ev(c, "instant-dyn", INSTANT));
	int found_end_args = 0;
	for (int i = 0; i < c->n; i++)
		if (c->ev[i].type == END && c->ev[i].nargs == 1 &&
		    strcmp(c->ev[i].args[0].name, "result") == 0 &&
		    c->ev[i].args[0].i == 99)
			found_end_args = 1;
	cr_assert(found_end_args);

	int ints = 0, doubles = 0;
	for (int i = 0; i < c->n; i++) {
		if (c->ev[i].type != COUNTER)
			continue;
		struct dtrack *t = dec_track(d, c->ev[i].track);
		cr_assert_not_null(t);
		cr_assert_eq(t->kind, 3);
		if (strcmp(t->name, "ints") == 0) {
			ints++;
			cr_assert_eq(c->ev[i].ival, -3);
		} else if (strcmp(t->name, "doubles") == 0) {
			doubles++;
			cr_assert(c->ev[i].is_double);
			cr_assert_eq(c->ev[i].dval, 0.25);
		}
		struct dtrack *parent = dec_track(d, t->parent);
		cr_assert_not_null(parent);
		cr_assert_eq(parent->kind, 1);
	}
	cr_assert_eq(ints, 1);
	cr_assert_eq(doubles, 1);

	cr_assert_null(find_ev(c, "never", INSTANT), "disabled category");
	cr_assert_not_null(find_ev(c, "now on", INSTANT));

	/* async: BEGIN from one thread, END from another, same own track */
	const struct dev *ab = find_ev(c, "request", BEGIN);
	cr_assert_not_null(ab);
	cr_assert(ab->explicit_track);
	int async_end = 0;
	for (int i = 0; i < c->n; i++)
		if (c->ev[i].type == END && c->ev[i].explicit_track &&
		    c->ev[i].track == ab->track) {
			async_end++;
			cr_assert_neq(c->ev[i].seq, ab->seq);
			cr_assert_geq(c->ev[i].ts, ab->ts);
		}
	cr_assert_eq(async_end, 1);
	struct dtrack *at = dec_track(d, ab->track);
	cr_assert_not_null(at);
	cr_assert_str_eq(at->name, "request");

	const struct dev *fs = find_ev(c, "sent", INSTANT);
	const struct dev *fe = find_ev(c, "received", INSTANT);
	cr_assert_not_null(fs);
	cr_assert_not_null(fe);
	cr_assert_eq(fs->flow, 7);
	cr_assert_eq(fe->tflow, 7);

	const struct dev *sb = find_ev(c, "scoped", BEGIN);
	cr_assert_not_null(sb);
	const struct dev *in = find_ev(c, "inside", INSTANT);
	cr_assert_not_null(in);
	cr_assert_gt(in - sb, 0);
	int end_after = 0;
	for (const struct dev *x = in + 1; x < c->ev + c->n; x++)
		if (x->type == END && !x->explicit_track && x->seq == sb->seq)
			end_after = 1;
	cr_assert(end_after, "the scope ended after its inner event");

	int proc = 0, sender = 0, ender = 0;
	for (int i = 0; i < d->n_tracks; i++) {
		if (d->tracks[i].kind == 1 &&
		    strcmp(d->tracks[i].name, "renamed process") == 0)
			proc = 1;
		if (d->tracks[i].kind == 2)
			sender += strcmp(d->tracks[i].name, "sender") == 0,
				ender += strcmp(d->tracks[i].name, "ender") == 0;
	}
	cr_assert(proc);
	cr_assert_eq(sender, 1);
	cr_assert_eq(ender, 1);
	reader_check(path, 0);
	dec_free(d);
	free(c);
	unlink(path);
}

static int early_return(int x)
{
	PTW_SCOPE("s", "early");
	if (x)
		return 1;
	PTW_INSTANT("s", "not reached");
	return 0;
}

Test(tracer, scope_ends_on_every_exit_path_and_category_disabled_mid_way)
{
	char path[128];
	tmp_path(path, sizeof(path), "scope");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	start_or_die(&cfg);
	for (int i = 0; i < 10; i++)
		early_return(1);
	/* BEGIN in an enabled category, then disable it: the END with the
	 * category is dropped too (no dangling END); scopes never dangle. */
	PTW_BEGIN("x", "outer");
	{
		PTW_SCOPE("y", "scope y");
		ptw_set_category_enabled("y", 0);
	}
	ptw_set_category_enabled("y", 1);
	PTW_END("x");
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	ptw_get_stats(&st);
	cr_assert_eq(st.invalid, 0);
	struct nest *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, nest_cb, c);
	cr_assert_eq(c->total, 10 * 2 + 4);
	cr_assert_eq(c->bad_nesting, 0);
	for (int s = 0; s < MAX_SEQ; s++)
		cr_assert_eq(c->depth[s], 0);
	reader_check(path, 0);
	dec_free(d);
	free(c);
	unlink(path);
}

/* ---- the macros' gate: one call site through every state --------------- */

/* The same call sites (one of each path: ptw_i_ev_val, ptw_i_ev,
 * ptw_i_emit_n, ptw_i_emit_fmt, a scope) reached with tracing stopped,
 * with their category off (then skipped inline by the site's cached
 * 'off'), on again, off again, after an unrelated category change and
 * across sessions. */
static void gate_sites(int64_t i)
{
	PTW_COUNTER_INT("g", "gate counter", i);
	PTW_INSTANT_ARGS("g", "gate args", PTW_ARG_I64("i", i));
	PTW_INSTANT_FMT("g", "gate fmt %d", (int)i);
	PTW_BEGIN("g", "gate slice");
	PTW_END("g");
	{
		PTW_SCOPE("g", "gate scope");
	}
}

/* Bit i of each mask: the events of gate_sites(i) in the trace. */
struct gate_seen {
	uint32_t counter, args, fmt;
	int slices, scopes, ends;
};

static void gate_read(const char *path, struct gate_seen *g)
{
	struct collect *c = calloc(1, sizeof(*c));
	cr_assert_not_null(c);
	struct dec *d = decode_file(path, collect_cb, c);
	const int BEGIN = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
	const int END = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	const int COUNTER = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < c->n; i++) {
		const struct dev *e = &c->ev[i];
		int v;
		if (e->type == COUNTER) {
			struct dtrack *t = dec_track(d, e->track);
			cr_assert_not_null(t);
			if (strcmp(t->name, "gate counter") == 0)
				g->counter |= 1u << e->ival;
		} else if (e->type == END) {
			g->ends++;
		} else if (!e->name) {
			continue;
		} else if (strcmp(e->name, "gate args") == 0) {
			cr_assert_eq(e->nargs, 1);
			g->args |= 1u << e->args[0].i;
		} else if (sscanf(e->name, "gate fmt %d", &v) == 1) {
			g->fmt |= 1u << v;
		} else if (e->type == BEGIN && !strcmp(e->name, "gate slice")) {
			g->slices++;
		} else if (e->type == BEGIN && !strcmp(e->name, "gate scope")) {
			g->scopes++;
		}
	}
	reader_check(path, 0);
	dec_free(d);
	free(c);
	unlink(path);
}

Test(tracer, a_call_site_follows_start_stop_and_category_changes)
{
	char path[128];
	struct ptw_config cfg;
	struct gate_seen g;
	const uint32_t want1 = (1u << 3) | (1u << 4) | (1u << 7);

	gate_sites(0); /* stopped, sites never reached before */
	tmp_path(path, sizeof(path), "gate1");
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.disabled_categories = "g";
	start_or_die(&cfg);
	gate_sites(1); /* off: the sites learn it */
	gate_sites(2); /* off, skipped inline */
	ptw_set_category_enabled("g", 1);
	gate_sites(3);
	gate_sites(4);
	ptw_set_category_enabled("g", 0);
	gate_sites(5);
	ptw_set_category_enabled("other", 0); /* every site checks again, "g" stays off */
	gate_sites(6);
	ptw_set_category_enabled("g", 1);
	gate_sites(7);
	cr_assert_eq(ptw_stop(), 0);
	gate_sites(8); /* stopped */
	gate_read(path, &g);
	cr_assert_eq(g.counter, want1, "counter mask %#x", g.counter);
	cr_assert_eq(g.args, want1, "args mask %#x", g.args);
	cr_assert_eq(g.fmt, want1, "fmt mask %#x", g.fmt);
	cr_assert_eq(g.slices, 3);
	cr_assert_eq(g.scopes, 3);
	cr_assert_eq(g.ends, 6);

	/* A new session with "g" off: ptw_start sets every listed site to
	 * check again, so they learn it again. */
	tmp_path(path, sizeof(path), "gate2");
	cfg.output_path = path;
	start_or_die(&cfg);
	gate_sites(9);
	cr_assert_eq(ptw_stop(), 0);
	gate_read(path, &g);
	cr_assert_eq(g.counter | g.args | g.fmt, 0);
	cr_assert_eq(g.slices + g.scopes + g.ends, 0);

	/* And with "g" on from the start: recorded although the sites last
	 * saw it off. */
	tmp_path(path, sizeof(path), "gate3");
	cfg.output_path = path;
	cfg.disabled_categories = NULL;
	start_or_die(&cfg);
	gate_sites(10);
	cr_assert_eq(ptw_stop(), 0);
	ptw_set_category_enabled("other", 1);
	gate_read(path, &g);
	cr_assert_eq(g.counter, 1u << 10);
	cr_assert_eq(g.args, 1u << 10);
	cr_assert_eq(g.fmt, 1u << 10);
	cr_assert_eq(g.slices, 1);
	cr_assert_eq(g.scopes, 1);
	cr_assert_eq(g.ends, 2);
}

Test(tracer, flush_makes_logged_events_durable_before_stop)
{
	char path[128];
	tmp_path(path, sizeof(path), "flush");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	start_or_die(&cfg);
	cr_assert_eq(ptw_flush(), 0);
	for (int i = 0; i < 100; i++)
		PTW_INSTANT("f", "durable");
	cr_assert_eq(ptw_flush(), 0);
	struct nest *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, nest_cb, c);
	cr_assert_eq(c->instants, 100, "%llu instants in the file after flush",
		     (unsigned long long)c->instants);
	dec_free(d);
	free(c);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), 0);
	cr_assert(st.running);
	cr_assert_gt(st.bytes_written, 0);
	cr_assert_eq(ptw_stop(), 0);
	cr_assert_eq(ptw_flush(), PTW_ERR_STATE);
	unlink(path);
}

Test(tracer, child_after_fork_is_not_tracing_and_parent_trace_is_intact)
{
	char path[128];
	tmp_path(path, sizeof(path), "fork");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	start_or_die(&cfg);
	PTW_INSTANT("f", "before fork");
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int ok = !ptw_is_running();
		PTW_INSTANT("f", "in child"); /* no effect */
		ok = ok && ptw_stop() == 0 && ptw_flush() == PTW_ERR_STATE;
		_exit(ok ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	PTW_INSTANT("f", "after fork");
	cr_assert_eq(ptw_stop(), 0);
	struct collect *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, collect_cb, c);
	const int INSTANT = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
	cr_assert_not_null(find_ev(c, "before fork", INSTANT));
	cr_assert_not_null(find_ev(c, "after fork", INSTANT));
	cr_assert_null(find_ev(c, "in child", INSTANT));
	dec_free(d);
	free(c);
	unlink(path);
}

/* One instant traced with 'clock' between two readings of 'clk_id'; the
 * decoded trace is kept for the caller's checks (stamp_free). */
struct stamp {
	char path[128];
	uint64_t lo, hi;          /* clk_id readings around the event, ns */
	struct ptw_stats st;
	struct collect *c;
	struct dec *d;
	const struct dev *ev;     /* the instant */
	const struct dmeta *clk;  /* the "ptw.clock" metadata entry */
};

/* 'system': in system mode beside the file, with no service to connect
 * to (the file records as ever). */
static void stamp_with(struct stamp *s, const char *tag, enum ptw_clock clock,
		       clockid_t clk_id, int system)
{
	tmp_path(s->path, sizeof(s->path), tag);
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = s->path;
	cfg.clock = clock;
	if (system) {
		setenv("PERFETTO_PRODUCER_SOCK_NAME",
		       "/nonexistent/ptw-test-no-service.sock", 1);
		cfg.system = 1;
	}
	start_or_die(&cfg);
	struct timespec a, b;
	clock_gettime(clk_id, &a);
	PTW_INSTANT("t", "stamp");
	clock_gettime(clk_id, &b);
	ptw_get_stats(&s->st);
	cr_assert_eq(ptw_stop(), 0);
	s->lo = (uint64_t)a.tv_sec * 1000000000u + (uint64_t)a.tv_nsec;
	s->hi = (uint64_t)b.tv_sec * 1000000000u + (uint64_t)b.tv_nsec;
	s->c = calloc(1, sizeof(*s->c));
	cr_assert_not_null(s->c);
	s->d = decode_file(s->path, collect_cb, s->c);
	s->ev = find_ev(s->c, "stamp",
			PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT);
	cr_assert_not_null(s->ev);
	/* the trace holds the user's one event, and the clock in its
	 * metadata (one ChromeEventBundle), not as an event */
	cr_assert_eq(s->c->n, 1, "%d events, the program logged 1", s->c->n);
	cr_assert_eq(s->d->n_bundles, 1);
	s->clk = dec_meta(s->d, "ptw.clock");
	cr_assert_not_null(s->clk, "the clock is declared in the trace");
}

static void stamp_with_clock(struct stamp *s, const char *tag,
			     enum ptw_clock clock, clockid_t clk_id)
{
	stamp_with(s, tag, clock, clk_id, 0);
}

static void stamp_free(struct stamp *s)
{
	dec_free(s->d);
	free(s->c);
	unlink(s->path);
}

Test(tracer, tsc_clock_maps_to_monotonic_nanoseconds)
{
	struct stamp s;
	stamp_with_clock(&s, "tsc", PTW_CLOCK_FASTEST, CLOCK_MONOTONIC);
	/* calibration error allowance: 1 ms (the check is of the mapping,
	 * not of timing) */
	cr_assert_geq(s.ev->ts + 1000000, s.lo);
	cr_assert_leq(s.ev->ts, s.hi + 1000000);
	cr_assert_str_eq(s.clk->str,
			 s.st.clock == PTW_CLOCK_TSC ? "tsc" : "monotonic");
	if (s.st.clock == PTW_CLOCK_TSC) {
		cr_assert_gt(s.st.tsc_hz, 0);
		const struct dmeta *hz = dec_meta(s.d, "ptw.tsc_hz");
		cr_assert_not_null(hz);
		cr_assert_eq((uint64_t)hz->i, s.st.tsc_hz);
		cr_assert_not_null(dec_meta(s.d, "ptw.ns_per_tick_q32"));
		cr_assert_not_null(dec_meta(s.d, "ptw.tsc0"));
		cr_assert_not_null(dec_meta(s.d, "ptw.mono0_ns"));
	}
	stamp_free(&s);
}

Test(tracer, bad_configs_are_refused_with_a_reason)
{
	struct ptw_config cfg;
	struct ptw_error err;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = "/tmp/x.pftrace";
	cfg.ring_slots = 1000;
	cr_assert_eq(ptw_start_ex(&cfg, &err), PTW_ERR_INVALID);
	cr_assert(strstr(err.msg, "ring_slots") != NULL);
	cfg.ring_slots = 0;
	cfg.overflow = 7;
	cr_assert_eq(ptw_start_ex(&cfg, &err), PTW_ERR_INVALID);
	cfg.overflow = 0;
	cfg.output_path = "/nonexistent-dir/x.pftrace";
	cr_assert_eq(ptw_start_ex(&cfg, &err), PTW_ERR_IO);
	cr_assert_eq(ptw_start_ex(NULL, &err), PTW_ERR_INVALID);
	cr_assert_eq(ptw_is_running(), 0);
	struct ptw_stats st;
	cr_assert_eq(ptw_get_stats(&st), PTW_ERR_STATE);
	cr_assert_eq(ptw_stop(), 0);
	/* macros before any start are harmless */
	PTW_BEGIN("a", "b");
	PTW_END();
	cr_assert_eq(ptw_set_thread_name(NULL), PTW_ERR_INVALID);
	cr_assert_eq(ptw_set_thread_name("early name"), 0);
}

static void *wait_worker(void *p)
{
	int n = *(int *)p;
	for (int i = 0; i < n; i++) {
		PTW_BEGIN_ARGS("w", "with arg", PTW_ARG_STR("s", "a string value that spans two ring slots"));
		PTW_INSTANT("w", "tick");
		PTW_END("w");
	}
	return NULL;
}

Test(tracer, wait_policy_with_tiny_rings_loses_nothing)
{
	char path[128];
	tmp_path(path, sizeof(path), "wait");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.ring_slots = 64;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	start_or_die(&cfg);
	int n = small_scale() ? 2000 : 20000;
	pthread_t th[3];
	for (int k = 0; k < 3; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, wait_worker, &n), 0);
	for (int k = 0; k < 3; k++)
		pthread_join(th[k], NULL);
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	ptw_get_stats(&st);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.events, (uint64_t)3 * n * 3);
	struct nest *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, nest_cb, c);
	cr_assert_eq(c->total, (uint64_t)3 * n * 3);
	cr_assert_eq(c->bad_nesting, 0);
	cr_assert_eq(c->backwards, 0, "per-thread timestamps never go back");
	reader_check(path, 0);
	dec_free(d);
	free(c);
	unlink(path);
}

Test(tracer, end_with_arguments_larger_than_the_ring_still_ends_the_slice)
{
	char path[128];
	tmp_path(path, sizeof(path), "bigend");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	cfg.ring_slots = 64;
	start_or_die(&cfg);
	static char big[1001];
	memset(big, 'x', 1000);
	PTW_BEGIN("b", "big");
	/* 3 string args of 1000 bytes: ~96 slots, more than the ring */
	PTW_END_ARGS("b", PTW_ARG_STR("a", big), PTW_ARG_STR("b", big),
		     PTW_ARG_STR("c", big));
	PTW_INSTANT_ARGS("b", "fits", PTW_ARG_STR("a", big));
	cr_assert_eq(ptw_stop(), 0);
	struct ptw_stats st;
	ptw_get_stats(&st);
	cr_assert_eq(st.dropped, 0);
	struct collect *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, collect_cb, c);
	int ends = 0;
	for (int i = 0; i < c->n; i++)
		ends += c->ev[i].type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	cr_assert_eq(ends, 1);
	const struct dev *f = find_ev(c, "fits",
				      PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT);
	cr_assert_not_null(f);
	cr_assert_eq(strlen(f->args[0].s), 1000, "copied through 33 ring slots");
	dec_free(d);
	free(c);
	unlink(path);
}

static void find_last_words(struct dec *d, const struct dev *e, void *ctx)
{
	(void)d;
	if (e->name && strcmp(e->name, "last words") == 0)
		++*(int *)ctx;
}

static atomic_int exit_logger_state; /* 0 log, 1 asked to park, 2 parked */

static void *exit_logger(void *p)
{
	(void)p;
	while (atomic_load(&exit_logger_state) == 0) {
		PTW_SCOPE("x", "busy");
		PTW_INSTANT("x", "tick");
	}
	/* Parked inside an open slice: still alive at exit (LeakSanitizer
	 * cannot suspend a thread that spins, and would warn). */
	PTW_BEGIN("x", "parked");
	atomic_store(&exit_logger_state, 2);
	for (;;)
		pause();
	return NULL;
}

Test(tracer, stop_at_exit_completes_the_trace_when_the_program_exits)
{
	char path[128];
	tmp_path(path, sizeof(path), "atexit");
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct ptw_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.output_path = path;
		cfg.stop_at_exit = 1;
		if (ptw_start(&cfg) != 0)
			_exit(3);
		PTW_BEGIN("x", "main");
		PTW_INSTANT("x", "last words");
		pthread_t th;
		pthread_create(&th, NULL, exit_logger, NULL);
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
		atomic_store(&exit_logger_state, 1);
		while (atomic_load(&exit_logger_state) != 2)
			sched_yield();
		exit(0); /* no ptw_stop(): atexit does it; a thread is alive */
	}
	int status = 0;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child status %d", status);
	int found = 0;
	struct dec *d = decode_file(path, find_last_words, &found);
	cr_assert_eq(found, 1);
	cr_assert_gt(d->events, 2);
	dec_free(d);
	unlink(path);
}

Test(tracer, boottime_clock_stamps_events_in_boottime_nanoseconds)
{
	struct stamp s;
	stamp_with_clock(&s, "boot", PTW_CLOCK_BOOT, CLOCK_BOOTTIME);
	cr_assert_eq(s.st.clock, PTW_CLOCK_BOOT);
	cr_assert_geq(s.ev->ts, s.lo);
	cr_assert_leq(s.ev->ts, s.hi);
	cr_assert_str_eq(s.clk->str, "boottime");
	stamp_free(&s);
}

/* A file beside system mode is on the service's clock, BOOTTIME, and
 * with the CPU's counter the producers read the counter (converted by
 * the backend as for the system sessions); without a usable counter
 * they read BOOTTIME. */
Test(tracer, cpu_counter_beside_system_mode_maps_to_boottime_nanoseconds)
{
	struct stamp s;
	stamp_with(&s, "systsc", PTW_CLOCK_FASTEST, CLOCK_BOOTTIME, 1);
	if (!ptw_arch_counter_usable()) {
		cr_assert_eq(s.st.clock, PTW_CLOCK_BOOT);
		cr_assert_str_eq(s.clk->str, "boottime");
		cr_assert_geq(s.ev->ts, s.lo);
		cr_assert_leq(s.ev->ts, s.hi);
		stamp_free(&s);
		return;
	}
	cr_assert_eq(s.st.clock, PTW_CLOCK_TSC, "the counter, not %d",
		     (int)s.st.clock);
	cr_assert_gt(s.st.tsc_hz, 0);
	cr_assert_str_eq(s.clk->str, "tsc_boottime");
	const struct dmeta *hz = dec_meta(s.d, "ptw.tsc_hz");
	cr_assert_not_null(hz);
	cr_assert_eq((uint64_t)hz->i, s.st.tsc_hz);
	/* calibration error allowance: 1 ms (the check is of the mapping,
	 * not of timing) */
	cr_assert_geq(s.ev->ts + 1000000, s.lo);
	cr_assert_leq(s.ev->ts, s.hi + 1000000);
	stamp_free(&s);
}

Test(tracer, write_error_is_reported_by_stop_and_producers_never_hang)
{
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		cr_skip_test("no /dev/full");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = NULL;
	cfg.output_fd = fd;
	cfg.close_fd = 1;
	cfg.ring_slots = 64;
	cfg.overflow = PTW_OVERFLOW_WAIT;
	struct ptw_writer_options wo = {.flush_bytes = 4096};
	cfg.writer = &wo;
	start_or_die(&cfg);
	for (int i = 0; i < 20000; i++) {
		PTW_BEGIN("e", "x");
		PTW_END("e");
	}
	int frc = ptw_flush();
	cr_assert_eq(frc, PTW_ERR_IO, "flush reports the sticky error (%d)", frc);
	struct ptw_error err;
	memset(&err, 0, sizeof(err));
	cr_assert_eq(ptw_stop_ex(&err), PTW_ERR_IO);
	cr_assert_eq(err.code, PTW_ERR_IO);
	cr_assert_neq(err.msg[0], '\0');
	cr_assert_eq(ptw_stop(), 0, "the error belongs to the finished session");
}

/* ---- tid reuse ---------------------------------------------------------- */

static atomic_long reuse_tid;

static void *reuse_first(void *p)
{
	(void)p;
	reuse_tid = (long)gettid();
	PTW_BEGIN("reuse", "first life");
	PTW_END();
	return NULL;
}

static void *reuse_second(void *p)
{
	(void)p;
	*(long *)p = (long)gettid();
	PTW_BEGIN("reuse", "second life");
	PTW_END();
	return NULL;
}

/* Linux hands out a tid again only after the pid space wraps; as root,
 * /proc/sys/kernel/ns_last_pid makes the next thread get the tid of one that
 * exited. Skipped where that file cannot be written. */
Test(tracer, thread_reusing_a_tid_gets_a_fresh_sequence_and_track)
{
	char path[128];
	tmp_path(path, sizeof(path), "tidreuse");
	struct ptw_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.output_path = path;
	start_or_die(&cfg);

	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, reuse_first, NULL), 0);
	pthread_join(th, NULL);
	long second = 0;
	for (int attempt = 0; attempt < 5 && second != reuse_tid; attempt++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		if (!f || fprintf(f, "%ld", reuse_tid - 1) < 0 || fclose(f) != 0) {
			ptw_stop();
			unlink(path);
			cr_skip_test("cannot write /proc/sys/kernel/ns_last_pid");
		}
		cr_assert_eq(pthread_create(&th, NULL, reuse_second, &second), 0);
		pthread_join(th, NULL);
	}
	cr_assert_eq(ptw_stop(), 0);
	if (second != reuse_tid) {
		unlink(path);
		cr_skip_test("the kernel did not hand out tid %ld again", reuse_tid);
	}

	struct collect *c = calloc(1, sizeof(*c));
	struct dec *d = decode_file(path, collect_cb, c);
	const struct dev *a = find_ev(c, "first life", 1);
	const struct dev *b = find_ev(c, "second life", 1);
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert_neq(a->seq, b->seq, "a reused tid must get a fresh sequence");
	int tracks_with_tid = 0;
	for (int i = 0; i < d->n_tracks; i++)
		tracks_with_tid += d->tracks[i].kind == 2 &&
				   d->tracks[i].tid == reuse_tid;
	cr_assert_geq(tracks_with_tid, 2, "one thread track per life of the tid");
	reader_check(path, 0);
	dec_free(d);
	free(c);
	unlink(path);
}

/* A thread named before tracing ever started, then a macro, still before
 * any ptw_start(): nothing is logged and nothing crashes (the name-only
 * record was once taken for a registered ring while the generation and
 * the site's state were both still 0). */
Test(tracer, a_macro_after_naming_a_thread_before_any_start)
{
	cr_assert_eq(ptw_set_thread_name("early"), 0);
	PTW_INSTANT("cat", "before any start");
	PTW_BEGIN("cat", "also before");
	PTW_END("cat");
	cr_assert_eq(ptw_is_running(), 0);
}
