/* cv_event.h - the legacy trace event every converter input is decoded into.
 * SPDX-License-Identifier: Apache-2.0
 *
 * AppleTrace text lines, APLTRC01 binary records and Chrome JSON events are
 * all Chrome Trace Event Format events; each reader decodes its input into a
 * struct ptw_cv_event and hands it to a callback (the emitter, which turns
 * events into Perfetto packets through the writer, or a test). Strings are
 * views into the reader's buffers, valid only during the callback: copy what
 * must outlive it. A struct ptw_cv_str with p == NULL means "absent". */
#ifndef PTW_CV_EVENT_H
#define PTW_CV_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "ptw/error.h"

struct ptw_cv_str {
	const char *p; /* NULL: member absent; not NUL-terminated */
	size_t n;
};

enum ptw_cv_val_type {
	PTW_CV_VAL_NULL = 0,
	PTW_CV_VAL_BOOL,
	PTW_CV_VAL_INT,    /* integral JSON number that fits int64: i */
	PTW_CV_VAL_DOUBLE, /* any other number: d */
	PTW_CV_VAL_STRING, /* decoded (unescaped) UTF-8: s */
	PTW_CV_VAL_JSON,   /* nested object or array, raw JSON text: s */
};

/* An event's callstacks: "sf" / "esf" (the event's, or its begin's, and
 * an X's end stack) as the id's text (a string decoded, a number as
 * written), keys of the file's "stackFrames"; "stack" / "estack" inline,
 * as the raw JSON array text (outermost first). p NULL: absent. */
struct ptw_cv_stack_refs {
	struct ptw_cv_str sf, esf, stack, estack;
};

struct ptw_cv_arg {
	struct ptw_cv_str key; /* decoded */
	enum ptw_cv_val_type type;
	int b;
	int64_t i;
	double d;
	struct ptw_cv_str s;
};

/* Flags telling which optional members were present. */
#define PTW_CV_HAS_PID 0x001u
#define PTW_CV_HAS_TID 0x002u
#define PTW_CV_HAS_TS 0x004u
#define PTW_CV_HAS_DUR 0x008u
#define PTW_CV_HAS_ID 0x010u       /* "id" (or id2) present: see id_* */
#define PTW_CV_ID_IS_STRING 0x020u /* id given as a JSON string (id_str) */
#define PTW_CV_ID2_LOCAL 0x040u    /* id came from "id2":{"local":...} */
#define PTW_CV_HAS_BIND_ID 0x080u
#define PTW_CV_FLOW_IN 0x100u
#define PTW_CV_FLOW_OUT 0x200u
#define PTW_CV_PID_IS_STRING 0x400u /* pid was a string: pid_str */
#define PTW_CV_TID_IS_STRING 0x800u /* tid was a string: tid_str */
#define PTW_CV_ID_FROM_ID2 0x1000u   /* the id came from "id2" (not "id") */
#define PTW_CV_BIND_ID_IS_NUM 0x2000u /* bind_id was an integral number:
				       * bind_num (bind_id keeps its text) */
#define PTW_CV_HAS_TTS 0x4000u  /* "tts" (thread time) valid: tts_ns */
#define PTW_CV_HAS_TDUR 0x8000u /* "tdur" (thread duration) valid: tdur_ns */
#define PTW_CV_HAS_STACK 0x10000u /* "sf", "esf", "stack" or "estack" */

struct ptw_cv_event {
	char ph;                 /* phase letter; 0 if absent */
	uint32_t flags;          /* PTW_CV_* */
	struct ptw_cv_str name;  /* decoded; p == NULL if absent */
	struct ptw_cv_str cat;   /* decoded; p == NULL if absent */
	/* Optional (0: none): numbers the reader gives the text of 'name' /
	 * 'cat' when it knows them from a table, e.g. APLTRC01 name ids. Within
	 * one input, a number always stands for the same text (a redefined id
	 * gets a new number), so the emitter can skip looking the text up. */
	uint64_t name_sym, cat_sym;
	uint32_t pid, tid;       /* as trace_processor coerces them (uint32) */
	struct ptw_cv_str pid_str, tid_str;
	int64_t ts_ns;           /* ts in ns, as trace_processor's CoerceToTs */
	int64_t dur_ns;
	int64_t tts_ns;          /* thread time, as ts_ns (PTW_CV_HAS_TTS) */
	int64_t tdur_ns;         /* thread duration (PTW_CV_HAS_TDUR) */
	uint64_t id_num;         /* numeric id (or hash-free parse of "0x2a") */
	struct ptw_cv_str id_str;/* id as written, when it was a string */
	struct ptw_cv_str bind_id;
	uint64_t bind_num;       /* PTW_CV_BIND_ID_IS_NUM: the number */
	char scope;              /* "s": 't', 'p', 'g', or 0 */
	char bp;                 /* "bp": 'e' or 0 */
	/* Callstacks (PTW_CV_HAS_STACK; NULL: none): see below. */
	const struct ptw_cv_stack_refs *stacks;
	const struct ptw_cv_arg *args; /* members of "args", in input order */
	uint32_t n_args;
	/* Where the event came from, for messages. */
	const char *input;       /* file name, or "-" */
	uint64_t line;           /* 1-based line, 0 if unknown */
	uint64_t offset;         /* byte offset of the event in its input */
};

/* Receives each decoded event. Returns 0 to go on, or a negative PTW_ERR_*
 * (with *err filled) to stop the reader, which then returns that code. */
typedef int (*ptw_cv_event_fn)(void *ctx, const struct ptw_cv_event *ev,
			       struct ptw_error *err);

/* A run of simple events a reader may hand over in one call instead of
 * one callback per event (optional; see ptw_cv_batch_fn): phases B, E and
 * i with scope t, with a timestamp, a non-empty name known by its number
 * and no arguments, ids or flows, and counter samples (C) with one
 * numeric argument and a non-empty name; everything else they would have
 * in a struct ptw_cv_event (pid, category, the argument's name, input) is
 * in the batch. The name's text is not: a consumer that needs it (not
 * knowing it by its number) takes no more events, and the reader hands
 * that one over in full (so a batch event carries no name length: the
 * name is known non-empty). Kept small (32 bytes, two to a cache line in
 * a 64-byte aligned batch): a batch is read twice. */
struct ptw_cv_simple {
	int64_t ts_ns;           /* >= 0 */
	uint64_t name_sym;       /* non-zero (ptw_cv_event.name_sym); the
				  * name's text (name_sym's) is non-empty */
	double d;                /* C: the value (ptw_cv_double_is_int) */
	uint32_t tid;
	char ph;                 /* 'B', 'E', 'i' or 'C' */
};
_Static_assert(sizeof(struct ptw_cv_simple) == 32,
	       "a batch event is half a cache line");

/* How a counter value read as a double (APLTRC01) is typed: an integer
 * (PTW_CV_VAL_INT) when an int64_t holds it exactly, else a double.
 * Returns 1 with *i set, else 0; without a branch on the value (the
 * readers' batch hands the value over as read, the consumer types it). */
static inline int ptw_cv_double_is_int(double v, int64_t *i)
{
	int in = __builtin_fabs(v) < 9.2e18; /* 0 for NaN and infinities */
	int64_t x = (int64_t)(in ? v : 0.0);
	*i = x;
	return in & ((double)x == v);
}

struct ptw_cv_batch {
	const struct ptw_cv_simple *ev;
	size_t n;
	uint32_t pid;
	struct ptw_cv_str cat;   /* p NULL: none */
	uint64_t cat_sym;
	struct ptw_cv_str value_key; /* name of a C event's argument */
};

/* Takes events from the front of a batch, exactly as the event callback
 * would take them one by one. Sets *taken to how many it took: fewer than
 * b->n means event *taken must go to the event callback as a full struct
 * ptw_cv_event (the reader does that, then goes on after it). Returns 0
 * or an error code as the event callback does (the failing event counts
 * as taken). */
typedef int (*ptw_cv_batch_fn)(void *ctx, const struct ptw_cv_batch *b,
			       size_t *taken, struct ptw_error *err);

#endif /* PTW_CV_EVENT_H */
