/* trace_event.c - resolves TrackEvents (track, names, categories,
 * annotations, counters, flows) like trace_processor's TrackEvent
 * tokenizer and importer (perfetto-wire.md 3.4, 3.10-3.12).
 * SPDX-License-Identifier: Apache-2.0 */
#include "trace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb_wire.h"

/* Short names for protobuf-c's oneof case constants. */
#define DA(x) PERFETTO__PROTOS__DEBUG_ANNOTATION__##x
#define TE(x) PERFETTO__PROTOS__TRACK_EVENT__##x
#define LE(x) PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__##x

/* ---- track events ------------------------------------------------------- */

/* Looks up an iid; on failure returns NULL and sets *missing. */
static const char *lookup(struct gen *g,
			  struct ptw_u64map *(*table)(struct gen *),
			  uint64_t iid, int *missing)
{
	const char *s = g ? ptw_u64map_get(table(g), iid) : NULL;
	if (!s)
		*missing = 1;
	return s;
}

static struct ptw_u64map *tab_names(struct gen *g)
{
	return &g->names;
}

static struct ptw_u64map *tab_cats(struct gen *g)
{
	return &g->cats;
}

static struct ptw_u64map *tab_ann_names(struct gen *g)
{
	return &g->ann_names;
}

static struct ptw_u64map *tab_ann_strings(struct gen *g)
{
	return &g->ann_strings;
}

/* The slice category exactly as track_event_event_importer.h builds it:
 * one interned category -> its name or "unknown(<iid>)"; one literal ->
 * itself; several -> interned (unresolved ones skipped) then literal ones,
 * each joined with "," once something precedes it; empty -> NULL.
 * Returns 0 or -1 out of memory. */
static int resolve_category(struct ptw_trace *t, struct gen *g,
			    const Perfetto__Protos__TrackEvent *te,
			    struct ptw_trace_event *ev, int final, int *failed,
			    const char **what, uint64_t *what_iid)
{
	size_t ni = te->n_category_iids, ns = te->n_categories;
	ev->category = NULL;
	if (ni + ns == 0)
		return 0;
	if (ni == 0 && ns == 1) {
		ev->category = ptw_arena_strdup(&t->arena, te->categories[0]);
		return ev->category ? 0 : -1;
	}
	size_t total = 1;
	for (size_t i = 0; i < ni; i++) {
		int miss = 0;
		const char *c =
			lookup(g, tab_cats, te->category_iids[i], &miss);
		if (miss) {
			*failed = 1;
			*what = "category";
			*what_iid = te->category_iids[i];
			if (final)
				t->stats.interned_data_tokenizer_errors++;
			continue;
		}
		if (ni == 1 && ns == 0) {
			ev->category = c; /* interned: already in the arena */
			return 0;
		}
		total += strlen(c) + 1;
	}
	if (ni == 1 && ns == 0) {
		char buf[40];
		snprintf(buf, sizeof(buf), "unknown(%llu)",
			 (unsigned long long)te->category_iids[0]);
		ev->category = ptw_arena_strdup(&t->arena, buf);
		return ev->category ? 0 : -1;
	}
	for (size_t i = 0; i < ns; i++)
		total += strlen(te->categories[i]) + 1;
	char *cat = ptw_arena_alloc(&t->arena, total);
	if (!cat)
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < ni + ns; i++) {
		int miss = 0;
		const char *c = i < ni ? lookup(g, tab_cats,
						te->category_iids[i], &miss)
				       : te->categories[i - ni];
		if (miss)
			continue;
		if (o)
			cat[o++] = ',';
		size_t l = strlen(c);
		memcpy(cat + o, c, l);
		o += l;
	}
	cat[o] = '\0';
	ev->category = o ? cat : NULL;
	return 0;
}

static int decode_value(struct ptw_trace *t, struct gen *g,
			const Perfetto__Protos__DebugAnnotation *a,
			struct ptw_trace_arg *o, unsigned depth, int *failed,
			const char **what, uint64_t *what_iid);

/* Decodes the dict entries (with names) or array values of 'a' into
 * o->v.nested. Returns 0 or -1 out of memory. */
static int decode_nested(struct ptw_trace *t, struct gen *g,
			 Perfetto__Protos__DebugAnnotation *const *items,
			 size_t n, int dict, struct ptw_trace_arg *o,
			 unsigned depth, int *failed, const char **what,
			 uint64_t *what_iid)
{
	struct ptw_trace_arg *v = ptw_arena_alloc(&t->arena, n * sizeof(*v));
	if (!v)
		return -1;
	o->type = dict ? PTW_TRACE_ARG_DICT : PTW_TRACE_ARG_ARRAY;
	o->v.nested.items = v;
	o->v.nested.n = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		const Perfetto__Protos__DebugAnnotation *a = items[i];
		memset(&v[i], 0, sizeof(v[i]));
		int bad = 0;
		if (dict) {
			/* ParseDebugAnnotationName: name_iid, else name */
			if (a->name_field_case == DA(NAME_FIELD_NAME_IID) &&
			    a->name_iid != 0) {
				v[i].name = lookup(g, tab_ann_names,
						   a->name_iid, &bad);
				if (bad) {
					*failed = 1;
					*what = "debug annotation name";
					*what_iid = a->name_iid;
				}
			} else if (a->name_field_case == DA(NAME_FIELD_NAME)) {
				v[i].name = ptw_arena_strdup(&t->arena, a->name);
				if (!v[i].name)
					return -1;
			} else {
				bad = 1;
			}
		}
		int rc = bad ? 1 : decode_value(t, g, a, &v[i], depth + 1,
						failed, what, what_iid);
		if (rc < 0)
			return -1;
		if (rc > 0)
			v[i].type = PTW_TRACE_ARG_BAD;
	}
	return 0;
}

/* Decodes the value of annotation 'a' into o (in trace_processor's order
 * of precedence, StepDebugAnnotation: dict entries, array values, then
 * the value). Returns 0; 1 if an interned string value does not resolve
 * (or the nesting is too deep); -1 out of memory. */
static int decode_value(struct ptw_trace *t, struct gen *g,
			const Perfetto__Protos__DebugAnnotation *a,
			struct ptw_trace_arg *o, unsigned depth, int *failed,
			const char **what, uint64_t *what_iid)
{
	if ((a->n_dict_entries || a->n_array_values) &&
	    depth >= PTW_TRACE_ARG_MAX_DEPTH)
		return 1;
	if (a->n_dict_entries)
		return decode_nested(t, g, a->dict_entries, a->n_dict_entries,
				     1, o, depth, failed, what, what_iid);
	if (a->n_array_values)
		return decode_nested(t, g, a->array_values, a->n_array_values,
				     0, o, depth, failed, what, what_iid);
	switch (a->value_case) {
	case DA(VALUE_BOOL_VALUE):
		o->type = PTW_TRACE_ARG_BOOL;
		o->v.b = a->bool_value ? 1 : 0;
		break;
	case DA(VALUE_UINT_VALUE):
		o->type = PTW_TRACE_ARG_UINT;
		o->v.u = a->uint_value;
		break;
	case DA(VALUE_INT_VALUE):
		o->type = PTW_TRACE_ARG_INT;
		o->v.i = a->int_value;
		break;
	case DA(VALUE_DOUBLE_VALUE):
		o->type = PTW_TRACE_ARG_DOUBLE;
		o->v.d = a->double_value;
		break;
	case DA(VALUE_POINTER_VALUE):
		o->type = PTW_TRACE_ARG_POINTER;
		o->v.u = a->pointer_value;
		break;
	case DA(VALUE_STRING_VALUE):
		o->type = PTW_TRACE_ARG_STRING;
		o->v.s = ptw_arena_strdup(&t->arena, a->string_value);
		if (!o->v.s)
			return -1;
		break;
	case DA(VALUE_LEGACY_JSON_VALUE):
		o->type = PTW_TRACE_ARG_JSON;
		o->v.s = ptw_arena_strdup(&t->arena, a->legacy_json_value);
		if (!o->v.s)
			return -1;
		break;
	case DA(VALUE_STRING_VALUE_IID): {
		int m2 = 0;
		o->type = PTW_TRACE_ARG_STRING;
		o->v.s = lookup(g, tab_ann_strings, a->string_value_iid, &m2);
		if (m2) {
			*failed = 1;
			*what = "debug annotation string value";
			*what_iid = a->string_value_iid;
			return 1;
		}
		break;
	}
	default:
		o->type = PTW_TRACE_ARG_NESTED;
		break;
	}
	return 0;
}

/* Fills name, category and args of 'ev' from 'te'. With final == 0 a
 * failed lookup only reports (returns 1 so the caller records a fixup);
 * with final == 1 failures degrade as trace_processor does and are
 * counted. Returns 1 if some lookup failed, 0 if all resolved, -1 out of
 * memory. */
static int resolve_strings(struct ptw_trace *t, struct gen *g,
			   const Perfetto__Protos__TrackEvent *te,
			   struct ptw_trace_event *ev, int final,
			   const char **what, uint64_t *what_iid)
{
	int failed = 0;
	ev->name = NULL;
	if (te->name_field_case == TE(NAME_FIELD_NAME_IID) &&
	    te->name_iid != 0) {
		int miss = 0;
		ev->name = lookup(g, tab_names, te->name_iid, &miss);
		if (miss) {
			failed = 1;
			*what = "event name";
			*what_iid = te->name_iid;
			if (final)
				t->stats.interned_data_tokenizer_errors++;
		}
	} else if (te->name_field_case == TE(NAME_FIELD_NAME)) {
		ev->name = ptw_arena_strdup(&t->arena, te->name);
		if (!ev->name)
			return -1;
	}

	if (resolve_category(t, g, te, ev, final, &failed, what, what_iid))
		return -1;

	/* callstack */
	ev->stack = NULL;
	if (te->callstack_field_case == TE(CALLSTACK_FIELD_CALLSTACK_IID)) {
		ev->stack = g ? ptw_u64map_get(&g->callstacks,
					       te->callstack_iid)
			      : NULL;
	} else if (te->callstack_field_case == TE(CALLSTACK_FIELD_CALLSTACK) &&
		   te->callstack->n_frames) {
		const Perfetto__Protos__TrackEvent__InlineCallstack *ic =
			te->callstack;
		struct ptw_trace_stack *k = ptw_arena_alloc(
			&t->arena, sizeof(*k) + ic->n_frames * sizeof(char *));
		if (!k)
			return -1;
		k->n = (uint32_t)ic->n_frames;
		for (size_t i = 0; i < ic->n_frames; i++) {
			const char *fn = ic->frames[i]->function_name;
			k->frames[i] = fn ? ptw_arena_strdup(&t->arena, fn)
					  : "";
			if (!k->frames[i])
				return -1;
		}
		ev->stack = k;
	}

	/* debug annotations */
	ev->args = NULL;
	ev->n_args = 0;
	if (te->n_debug_annotations) {
		struct ptw_trace_arg *args = ptw_arena_alloc(
			&t->arena, te->n_debug_annotations * sizeof(*args));
		if (!args)
			return -1;
		uint32_t na = 0;
		for (size_t i = 0; i < te->n_debug_annotations; i++) {
			const Perfetto__Protos__DebugAnnotation *a =
				te->debug_annotations[i];
			struct ptw_trace_arg *o = &args[na];
			memset(o, 0, sizeof(*o));
			int miss = 0;
			if (a->name_field_case == DA(NAME_FIELD_NAME_IID) &&
			    a->name_iid != 0) {
				o->name = lookup(g, tab_ann_names, a->name_iid,
						 &miss);
				if (miss) {
					failed = 1;
					*what = "debug annotation name";
					*what_iid = a->name_iid;
				}
			} else if (a->name_field_case == DA(NAME_FIELD_NAME)) {
				o->name = ptw_arena_strdup(&t->arena, a->name);
				if (!o->name)
					return -1;
			} else {
				miss = 1; /* neither name nor name_iid */
			}
			int rc = decode_value(t, g, a, o, 0, &failed, what,
					      what_iid);
			if (rc < 0)
				return -1;
			if (rc > 0)
				miss = 1; /* unresolved string value */
			if (miss) {
				/* proto_to_args_parser.cc: the annotation is
				 * dropped. A missing name is counted on the
				 * first pass; a failed lookup on the final
				 * one (after the fixup retry). */
				int lookup_failed =
					a->name_field_case ==
						DA(NAME_FIELD_NAME_IID) ||
					a->value_case ==
						DA(VALUE_STRING_VALUE_IID);
				if (lookup_failed && final) {
					t->stats.track_event_parser_errors++;
					t->stats.interned_data_tokenizer_errors++;
				} else if (!lookup_failed && !final) {
					t->stats.track_event_parser_errors++;
				}
				continue;
			}
			na++;
		}
		ev->args = args;
		ev->n_args = na;
	}
	return failed;
}

/* Counter value after unit_multiplier and is_incremental
 * (track_event_tracker.cc ConvertToAbsoluteCounterValue). Returns 0, or -1
 * out of memory. */
static int counter_convert(struct ptw_trace *t, struct seq *s,
			   const struct ptw_trace_track *tr, double v,
			   double *out)
{
	if (tr->unit_multiplier > 0)
		v *= (double)tr->unit_multiplier;
	if (tr->is_incremental && s) {
		double *sum = ptw_u64map_get(&s->incr, tr->uuid);
		if (!sum) {
			sum = ptw_arena_alloc(&t->arena, sizeof(*sum));
			if (!sum || ptw_u64map_put(&s->incr, tr->uuid, sum) < 0)
				return -1;
			*sum = 0;
		}
		*sum += v;
		v = *sum;
	}
	*out = v;
	return 0;
}

/* Raw scan of a TrackEvent for packed encodings of repeated scalars that
 * TP reads element by element (perfetto-wire.md 2.1). */
static int has_packed(const uint8_t *data, size_t len, uint32_t *field)
{
	struct ptw_wire_cursor c;
	struct ptw_wire_field f;
	ptw_wire_init(&c, data, len);
	while (ptw_wire_next(&c, &f) == PTW_WIRE_FIELD) {
		switch (f.num) {
		case 3:	 /* category_iids */
		case 12: /* extra_counter_values */
		case 31: /* extra_counter_track_uuids */
		case 45: /* extra_double_counter_track_uuids */
		case 46: /* extra_double_counter_values */
		case 47: /* flow_ids */
		case 48: /* terminating_flow_ids */
		case 36: /* flow_ids_old */
		case 42: /* terminating_flow_ids_old */
			if (f.wt == 2) {
				*field = f.num;
				return 1;
			}
			break;
		default:
			break;
		}
	}
	return 0;
}

const uint64_t *ptw_i_trace_copy_u64(struct ptw_trace *t, const uint64_t *v,
				     size_t n)
{
	if (!n)
		return NULL;
	uint64_t *d = ptw_arena_alloc(&t->arena, n * sizeof(*d));
	if (d)
		memcpy(d, v, n * sizeof(*d));
	else
		t->nomem = 1;
	return d;
}

/* Extra counter values (track_event_tokenizer.cc TokenizeTrackEvent):
 * returns 0, or 1 if the event must be dropped (reason in *why). */
static int extra_counters(struct ptw_trace *t, struct seq *s,
			  const Perfetto__Protos__TrackEvent *te,
			  struct ptw_trace_event *ev, const char **why)
{
	size_t ni = te->n_extra_counter_values;
	size_t nd = te->n_extra_double_counter_values;
	if (!ni && !nd)
		return 0;
	const uint64_t *ti = te->extra_counter_track_uuids;
	size_t nti = te->n_extra_counter_track_uuids;
	const uint64_t *td = te->extra_double_counter_track_uuids;
	size_t ntd = te->n_extra_double_counter_track_uuids;
	if (!nti && s) {
		ti = s->def_extra;
		nti = s->n_def_extra;
	}
	if (!ntd && s) {
		td = s->def_extra_d;
		ntd = s->n_def_extra_d;
	}
	if (ni > nti || nd > ntd) {
		*why = "more extra counter values than extra counter tracks";
		return 1;
	}
	uint64_t *tracks =
		ptw_arena_alloc(&t->arena, (ni + nd) * sizeof(*tracks));
	double *vals = ptw_arena_alloc(&t->arena, (ni + nd) * sizeof(*vals));
	if (!tracks || !vals) {
		t->nomem = 1;
		return 1;
	}
	for (size_t i = 0; i < ni + nd; i++) {
		uint64_t uuid = i < ni ? ti[i] : td[i - ni];
		double v = i < ni ? (double)te->extra_counter_values[i]
				  : te->extra_double_counter_values[i - ni];
		const struct ptw_trace_track *tr =
			ptw_i_trace_find_track(t, uuid);
		if (!tr || tr->kind != PTW_TRACE_TRACK_COUNTER) {
			*why = "extra counter on a track that is not a "
			       "counter track described earlier";
			return 1;
		}
		if (counter_convert(t, s, tr, v, &vals[i])) {
			t->nomem = 1;
			return 1;
		}
		tracks[i] = uuid;
	}
	ev->extra_counter_tracks = tracks;
	ev->extra_counter_values = vals;
	ev->n_extra_counters = (uint32_t)(ni + nd);
	return 0;
}

/* The legacy_event fields the model keeps. */
static void read_legacy(struct ptw_trace_event *ev,
			const Perfetto__Protos__TrackEvent__LegacyEvent *le)
{
	ev->legacy_phase = le->has_phase ? (char)le->phase : 0;
	/* int64 arithmetic as trace_processor's (wrapping, not UB here) */
	ev->dur = (int64_t)((uint64_t)le->duration_us * 1000u);
	ev->has_legacy_id = le->id_case == LE(ID_UNSCOPED_ID);
	ev->legacy_id = ev->has_legacy_id ? le->unscoped_id : 0;
	ev->bind_to_enclosing = le->has_bind_to_enclosing &&
				le->bind_to_enclosing;
	ev->has_bind_id = le->has_bind_id;
	ev->bind_id = le->bind_id;
	ev->flow_direction = le->has_flow_direction
				     ? (int)le->flow_direction
				     : 0;
	if ((le->phase == 'i' || le->phase == 'I') &&
	    le->has_instant_event_scope)
		ev->legacy_scope =
			le->instant_event_scope ==
					PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INSTANT_EVENT_SCOPE__SCOPE_GLOBAL
				? 'g'
			: le->instant_event_scope ==
					PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INSTANT_EVENT_SCOPE__SCOPE_PROCESS
				? 'p'
				: 0;
}

/* The event's type (ev->type). A typeless event takes its kind from its
 * legacy phase (TP ParsePhaseOrType); of those, v1 flow events and async
 * b/e/n with an id are modelled, the latter on the track trace_processor
 * makes for the id (*async_kind 1 unscoped/global, 2 local; *async_id).
 * Returns 0, or 1 if the event is dropped (*why set). */
static int read_type(struct ptw_trace *t, const struct pos *at,
		     uint32_t seq_id, const Perfetto__Protos__TrackEvent *te,
		     struct ptw_trace_event *ev, int *async_kind,
		     uint64_t *async_id, const char **why)
{
	const Perfetto__Protos__TrackEvent__LegacyEvent *le = te->legacy_event;
	*async_kind = 0;
	*async_id = 0;
	if (te->has_type && te->type != 0) {
		ev->type = (enum ptw_trace_event_type)te->type;
		return 0;
	}
	char ph = ev->legacy_phase;
	if (le && (ph == 'b' || ph == 'e' || ph == 'n')) {
		if (le->id_case == LE(ID_UNSCOPED_ID)) {
			*async_kind = 1;
			*async_id = le->unscoped_id;
		} else if (le->id_case == LE(ID_GLOBAL_ID)) {
			*async_kind = 1;
			*async_id = le->global_id;
		} else if (le->id_case == LE(ID_LOCAL_ID)) {
			*async_kind = 2;
			*async_id = le->local_id;
		}
	}
	if (ph == 'X') {
		/* ParseThreadCompleteEvent; the model drops it off a thread
		 * (tp_model.c), as trace_processor does */
		if (ev->dur < 0) {
			t->stats.track_event_parser_errors++;
			ptw_i_trace_diag(t, PTW_TRACE_DIAG_EVENT, at, seq_id,
					 "TrackEvent with phase X with "
					 "negative duration: dropped");
			*why = "phase X with negative duration";
			return 1;
		}
		ev->type = PTW_TRACE_COMPLETE;
	} else if (*async_kind) {
		ev->type = ph == 'b'   ? PTW_TRACE_SLICE_BEGIN
			   : ph == 'e' ? PTW_TRACE_SLICE_END
				       : PTW_TRACE_INSTANT;
	} else if (ph != 's' && ph != 't' && ph != 'f') {
		t->stats.track_event_parser_errors++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_EVENT, at, seq_id,
				 ph ? "TrackEvent with legacy phase other than "
				      "s, t, f, X: not read"
				    : "TrackEvent without type is dropped");
		*why = ph ? "legacy phase not read" : "no type";
		return 1;
	} else {
		ev->type = PTW_TRACE_LEGACY_FLOW;
	}
	return 0;
}

/* The event's track (ev->track_uuid): its own, the sequence's default,
 * or the sequence's thread track. Returns 1 if the event named a track
 * (its own or the default), else 0. */
static int read_track(const struct seq *s,
		      const Perfetto__Protos__TrackEvent *te,
		      struct ptw_trace_event *ev)
{
	if (te->has_track_uuid) {
		ev->track_uuid = te->track_uuid;
		ev->track_explicit = 1;
		return 1;
	}
	if (s && s->has_defaults && s->has_def_track) {
		ev->track_uuid = s->def_track;
		return 1;
	}
	ev->track_uuid = s && s->has_thread_track ? s->thread_track : 0;
	return 0;
}

/* A counter event's value, converted at tokenization, so the descriptor
 * must precede it in the file (track_event_tokenizer.cc). Returns 0, or 1
 * if the event is dropped (*why set, or t->nomem). */
static int read_counter(struct ptw_trace *t, const struct pos *at,
			uint32_t seq_id, struct seq *s,
			const Perfetto__Protos__TrackEvent *te, int has_track,
			struct ptw_trace_event *ev, const char **why)
{
	const struct ptw_trace_track *tr =
		has_track ? ptw_i_trace_find_track(t, ev->track_uuid) : NULL;
	if (!has_track) {
		t->stats.track_event_counter_missing_track_uuid++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_COUNTER_TRACK, at, seq_id,
				 "counter event without track uuid is dropped");
		*why = "counter without track";
		return 1;
	}
	if (!tr || tr->kind != PTW_TRACE_TRACK_COUNTER) {
		t->stats.track_event_counter_invalid_track_uuid++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_COUNTER_TRACK, at, seq_id,
				 "counter event on track %llu, which %s; "
				 "dropped",
				 (unsigned long long)ev->track_uuid,
				 tr ? "is not a counter track"
				    : "no counter descriptor earlier in the "
				      "file describes");
		*why = "counter track not described earlier";
		return 1;
	}
	double v;
	if (te->counter_value_field_case ==
	    TE(COUNTER_VALUE_FIELD_COUNTER_VALUE)) {
		ev->counter_kind = PTW_TRACE_COUNTER_INT;
		ev->counter_int = te->counter_value;
		v = (double)te->counter_value;
	} else if (te->counter_value_field_case ==
		   TE(COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE)) {
		ev->counter_kind = PTW_TRACE_COUNTER_DOUBLE;
		ev->counter_double = te->double_counter_value;
		v = te->double_counter_value;
	} else {
		t->stats.track_event_counter_missing_value++;
		ptw_i_trace_diag(t, PTW_TRACE_DIAG_COUNTER_TRACK, at, seq_id,
				 "counter event without value is dropped");
		*why = "counter without value";
		return 1;
	}
	if (counter_convert(t, s, tr, v, &ev->counter_value)) {
		t->nomem = 1;
		return 1;
	}
	return 0;
}

/* The flow ids. TP reads the deprecated varint ones only when the fixed64
 * ones are absent. */
static void read_flow_ids(struct ptw_trace *t,
			  const Perfetto__Protos__TrackEvent *te,
			  struct ptw_trace_event *ev)
{
	if (te->n_flow_ids) {
		ev->flow_ids =
			ptw_i_trace_copy_u64(t, te->flow_ids, te->n_flow_ids);
		ev->n_flow_ids = (uint32_t)te->n_flow_ids;
	} else if (te->n_flow_ids_old) {
		ev->flow_ids = ptw_i_trace_copy_u64(t, te->flow_ids_old,
						    te->n_flow_ids_old);
		ev->n_flow_ids = (uint32_t)te->n_flow_ids_old;
	}
	if (te->n_terminating_flow_ids) {
		ev->terminating_flow_ids =
			ptw_i_trace_copy_u64(t, te->terminating_flow_ids,
					     te->n_terminating_flow_ids);
		ev->n_terminating_flow_ids =
			(uint32_t)te->n_terminating_flow_ids;
	} else if (te->n_terminating_flow_ids_old) {
		ev->terminating_flow_ids =
			ptw_i_trace_copy_u64(t, te->terminating_flow_ids_old,
					     te->n_terminating_flow_ids_old);
		ev->n_terminating_flow_ids =
			(uint32_t)te->n_terminating_flow_ids_old;
	}
}

/* Keeps a copy of the raw TrackEvent that will be event number t->n_events,
 * whose iids are resolved at the end of the file against generation g.
 * Returns 0, or 1 when out of memory (t->nomem). */
static int add_fixup(struct ptw_trace *t, struct gen *g, const uint8_t *raw,
		     size_t raw_len)
{
	void *fx = ptw_grow(t->fixups, &t->cap_fixups, t->n_fixups + 1, 64,
			    sizeof(*t->fixups));
	if (!fx) {
		t->nomem = 1;
		return 1;
	}
	t->fixups = fx;
	uint8_t *copy = ptw_arena_alloc(&t->arena, raw_len ? raw_len : 1);
	if (!copy) {
		t->nomem = 1;
		return 1;
	}
	if (raw_len)
		memcpy(copy, raw, raw_len);
	struct fixup *f = &t->fixups[t->n_fixups++];
	f->event = t->n_events;
	f->gen = g;
	f->bytes = copy;
	f->len = raw_len;
	return 0;
}

/* Tokenizes one TrackEvent. Returns 1 if kept (appended), 0 if dropped
 * (*why set). */
int ptw_i_trace_add_event(struct ptw_trace *t, const struct pos *at,
			  uint32_t seq_id, struct seq *s,
			  const Perfetto__Protos__TrackEvent *te,
			  const uint8_t *raw, size_t raw_len, int64_t ts,
			  const char **why)
{
	struct ptw_trace_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.offset = at->offset;
	ev.inner_offset = at->inner_offset;
	ev.batch = at->batch;
	ev.seq_id = seq_id;
	ev.packet_index = t->packet_index;
	ev.ts = ts;

	uint32_t pf;
	if (raw && has_packed(raw, raw_len, &pf)) {
		t->stats.packed_repeated_fields++;
		ptw_i_trace_diag(
			t, PTW_TRACE_DIAG_PACKED, at, seq_id,
			"TrackEvent field %u is packed; trace_processor reads "
			"repeated fields unpacked only",
			pf);
	}
	if (te->legacy_event)
		read_legacy(&ev, te->legacy_event);
	int async_id_kind;
	uint64_t async_id;
	if (read_type(t, at, seq_id, te, &ev, &async_id_kind, &async_id, why))
		return 0;
	int has_track = read_track(s, te, &ev);
	if (ev.type == PTW_TRACE_COUNTER &&
	    read_counter(t, at, seq_id, s, te, has_track, &ev, why))
		return 0;

	const char *xwhy = NULL;
	if (extra_counters(t, s, te, &ev, &xwhy)) {
		if (xwhy) {
			t->stats.track_event_parser_errors++;
			ptw_i_trace_diag(t, PTW_TRACE_DIAG_EVENT, at, seq_id,
					 "TrackEvent dropped: %s", xwhy);
		}
		*why = xwhy ? xwhy : "out of memory";
		return 0;
	}
	read_flow_ids(t, te, &ev);

	struct gen *g = s ? s->gen : NULL;
	const char *what = NULL;
	uint64_t what_iid = 0;
	int r = resolve_strings(t, g, te, &ev, 0, &what, &what_iid);
	if (r < 0) {
		t->nomem = 1;
		return 0;
	}
	if (async_id_kind) {
		const char *awhy = NULL;
		ev.track_uuid = ptw_i_trace_legacy_async_track(
			t, &ev, async_id_kind == 2, async_id, &awhy);
		if (!ev.track_uuid) {
			if (t->nomem)
				return 0;
			t->stats.track_event_parser_errors++;
			ptw_i_trace_diag(t, PTW_TRACE_DIAG_EVENT, at, seq_id,
					 "TrackEvent dropped: %s", awhy);
			*why = awhy;
			return 0;
		}
		ev.track_explicit = 1;
	}
	void *grown = ptw_grow(t->events, &t->cap_events, t->n_events + 1, 64,
			       sizeof(*t->events));
	if (!grown) {
		t->nomem = 1;
		return 0;
	}
	t->events = grown;
	if (r > 0) {
		ptw_i_trace_diag(
			t, PTW_TRACE_DIAG_UNKNOWN_IID, at, seq_id,
			"%s iid %llu is not defined in the current generation "
			"of sequence %u",
			what, (unsigned long long)what_iid, seq_id);
		if (add_fixup(t, g, raw, raw_len))
			return 0;
	}
	t->events[t->n_events++] = ev;
	return 1;
}

/* End of file: events whose iids did not resolve at tokenization are
 * resolved against their generation as it ended (TP looks interned data
 * up at parse time, after the whole file was tokenized). */
void ptw_i_trace_apply_fixups(struct ptw_trace *t)
{
	for (size_t i = 0; i < t->n_fixups; i++) {
		struct fixup *f = &t->fixups[i];
		Perfetto__Protos__TrackEvent *te =
			perfetto__protos__track_event__unpack(NULL, f->len,
							      f->bytes);
		if (!te) {
			t->nomem = 1;
			continue;
		}
		const char *what;
		uint64_t iid;
		if (resolve_strings(t, f->gen, te, &t->events[f->event], 1,
				    &what, &iid) < 0)
			t->nomem = 1;
		perfetto__protos__track_event__free_unpacked(te, NULL);
	}
}
