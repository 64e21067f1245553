/* emit_internal.h - the emitter's state, shared by its files: emit.c
 * (inputs, dispatch), emit_procs.c (processes, threads, names),
 * emit_track_events.c (counters, async, scoped instants), emit_thread.c
 * (per-thread reorder queue) and emit_fast.c (short path). Private.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_EMIT_INTERNAL_H
#define PTW_EMIT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "emit.h"
#include "lib/util/hashmap.h"
#include "lib/writer/seq_ctr.h"
#include "lib/writer/seq_lane.h"

#define PTW_EM_NO_NAME "[No name]"

/* The numbers given to string pids/tids: trace_processor uses the raw id
 * of the interned string (an offset in its string pool, not reproducible
 * outside it); ours count up from here, below 2^31 so that the int32 pid
 * of a ProcessDescriptor stays positive. */
#define PTW_EM_STR_ID_BASE 0x7F000000u
#define PTW_EM_STR_ID_MAX (0x7FFFFFFFu - PTW_EM_STR_ID_BASE)

/* A growable byte buffer holding packed event payloads (see emit_thread.c
 * for the layout). */
struct ptw_em_buf {
	char *p;
	size_t len, cap;
	int oom;
};

/* A payload unpacked for the writer; strings point into a ptw_em_buf. */
struct ptw_em_payload {
	const char *name;     /* never NULL */
	size_t name_len;
	const char *cat;      /* NULL: no category */
	struct ptw_arg args[PTW_MAX_ANNOTATIONS];
	uint32_t n_args;
	/* a v2 flow (JSON bind_id, flow_in/flow_out) on this slice: written
	 * as the event's legacy_event; flow_dir PTW_FLOW_NONE: none */
	uint8_t flow_dir;
	uint64_t bind_id;
	int has_tts;                  /* thread time (JSON tts), ns */
	int64_t tts;
	uint32_t cs;                  /* callstack: its innermost frame in
				       * em->stacks (1-based); 0: none */
};

enum ptw_em_kind {
	PTW_EM_BEGIN = 1,
	PTW_EM_END,
	PTW_EM_INSTANT,
	PTW_EM_FLOW,
	PTW_EM_OVL_END, /* end of a spilled X, on overlap lane flow_id */
	PTW_EM_X_END,   /* end of an X written as one packet (is_x 2): its
			 * place in the model only, nothing written */
};

enum ptw_em_state {
	PTW_EM_UNRESOLVED = 0, /* X-form B waiting for its E */
	PTW_EM_COMPLETE,       /* X-form pair or Chrome X: dur known */
	PTW_EM_RAW,            /* Chrome B: an "other" event */
	PTW_EM_DEAD,           /* E before its B in time: dropped */
};

struct ptw_em_item {
	int64_t ts;
	const char *sname; /* stable name / category (see ptw_em_strs), */
	const char *scat;  /* when 'stable'; else in the payload */
	int64_t dur;       /* PTW_EM_COMPLETE begins */
	uint64_t seq;      /* position in the (X-form) event list */
	uint64_t id;       /* unique, to find an unresolved B */
	uint64_t flow_id;  /* PTW_EM_FLOW: the JSON id (its number) */
	uint32_t data;     /* payload offset in the thread's arena */
	uint32_t data_len;
	uint8_t kind;      /* enum ptw_em_kind */
	uint8_t state;     /* enum ptw_em_state */
	uint8_t flow_ph;   /* 's', 't', 'f' (enclosing) or 'n' (next slice) */
	uint8_t raw_end;   /* Chrome E: matched by name and category */
	uint8_t e_late;    /* Chrome E sorted in file order (no X yet) */
	uint8_t cls;       /* sort class while flushing */
	uint8_t stable;    /* sname/scat hold the strings */
	uint8_t is_x;      /* BEGIN of a Chrome X (may spill, see
			    * ptw_em_spill); 2: written as one packet
			    * unless it spills (its END is a PTW_EM_X_END) */
};

/* A slice open on the thread, in trace_processor's order (for Chrome E
 * matching). */
struct ptw_em_open {
	uint64_t name_h, cat_h; /* 0: none (wildcard); both PTW_EM_OPEN_X:
				 * an X written as one packet */
};

/* An X written as one packet is complete in trace_processor from its
 * start: no END closes it (SliceTracker matches incomplete slices only),
 * and it leaves the stack lazily (MaybeCloseStack), as in its JSON
 * import. */
#define PTW_EM_OPEN_X UINT64_MAX
static inline int ptw_em_open_is_x(const struct ptw_em_open *o)
{
	return (o->name_h & o->cat_h) == PTW_EM_OPEN_X;
}

struct ptw_em_proc {
	uint32_t pid;
	uint32_t gen;      /* input that owns this pid number's process */
	uint64_t uuid;     /* 0 until written */
	char *name;        /* current name (NULL: none) */
	char *written;     /* name in the last descriptor written */
	int32_t sort_index;/* M process_sort_index (has_sort) */
	int has_sort;
};

#define PTW_EM_LANE_SLOTS 64u

/* What the X-form lane's loop needs of an event's kind (emit_fast.c). */
struct ptw_em_lane_kind {
	uint64_t keep, flip; /* body: (the slot's & keep) ^ flip */
	uint64_t key_mask;   /* the slot's key must match the name's */
	uint64_t head;       /* the packet's head (ptw_pkt_step21_head) */
	uint8_t pre[16];     /* the packet's prefix */
	uint64_t blen;       /* the body's length */
	uint64_t be;         /* counts: begins (low half), ends (high) */
	int64_t d16;         /* depth change, in stack and model bytes */
	int d;               /* depth change */
	char pad[128 - 76];  /* (the index is a shift) */
};
_Static_assert(sizeof(struct ptw_em_lane_kind) == 128,
	       "a kind's index is a shift");

struct ptw_em_thread {
	uint32_t pid, tid, gen;
	size_t proc;       /* index in procs */
	uint64_t uuid;     /* 0 until written */
	struct ptw_seq *seq; /* its events' sequence (set with uuid) */
	int own_seq;       /* seq is the thread's own (default track) */
	char *name;
	char *written;
	int32_t sort_index;/* M thread_sort_index (has_sort) */
	int has_sort;
	/* reorder queue: items [head, n) sorted by ts */
	struct ptw_em_item *q;
	size_t head, n, cap;
	struct ptw_em_buf arena;
	size_t compact_at; /* arena size at which to try compacting */
	int64_t last_ts;   /* latest event ts seen (the flush limit) */
	int has_last;
	/* The packet of the queued item, prepared by the short path when it
	 * queued the item (emit_fast.c): used when the short path releases
	 * it, if 'id' is still the queued item's and lane_epoch is still
	 * em->epoch (no general-path call or flush came in between; then
	 * nothing wrote on the thread's sequence in between either, so its
	 * iids are still valid). */
	struct ptw_em_prep {
		uint64_t id;       /* the item's id; 0: none */
		uint32_t gen;      /* the iids' generation (seq_lane.h) */
		int8_t depth_d;    /* +1 begin, -1 end, 0 instant */
		uint8_t body_len;
		uint8_t body[PTW_SEQ_BODY_MAX];
	} prep;
	/* The X-form lane (emit_fast.c ptw_em_lane) and the prepared
	 * packet: open while lane_epoch is em->epoch; the iids of names by
	 * their numbers (key: the number, 0: none; with the stable name)
	 * and of the category lane_scat, for the sequence's interning
	 * generation lane_gen (lib/writer/seq_lane.h). */
	uint64_t lane_epoch;
	uint32_t lane_gen;
	uint8_t lane_ci;
	const char *lane_scat;
	/* The fixed parts of the lane's packets, for lane_ci, by kind
	 * (their prefixes: the sequence header, 5A and the TrackEvent
	 * length byte, lane_pre_len bytes, 0: no lane); the length of a
	 * begin's or an instant's body (lane_blen). */
	struct ptw_em_lane_kind lane_kinds[4];
	uint8_t lane_pre_len, lane_blen;
	struct ptw_em_lane_slot {
		uint64_t key;
		const char *sname;
		uint64_t body;   /* a begin's body with this name */
	} lane_slot[PTW_EM_LANE_SLOTS];
	int xform_open;    /* X-form B's of this input still unpaired */
	/* X-form stacks of open B's (item id, ts), one per raw tid as the
	 * exporter pairs them: [1] for events written with tid 0, which
	 * trace_processor shows on this same thread (tid = pid). */
	struct ptw_em_lifo {
		struct ptw_em_open_b {
			uint64_t id;
			int64_t ts;
		} *b;
		size_t n, cap;
	} lifo[2];
	struct ptw_em_open *model;
	size_t model_n, model_cap;
	/* An X written as one packet ended (its PTW_EM_X_END) below slices
	 * still open: trace_processor truncates them and pops the X at the
	 * next slice event after its end (MaybeCloseStack, as in its JSON
	 * import), at which point the model drops entries [trunc_level, ...)
	 * (trunc_on: pending) */
	int trunc_on;
	size_t trunc_level;
	int64_t trunc_end;
	uint64_t tt_uuid;  /* thread-time counter track; 0 until needed */
	/* Chrome X slices open on the thread's track, as trace_processor's
	 * JSON importer keeps them on its stack: the model level of the
	 * slice and its end (entries above the model or ended are stale). */
	struct ptw_em_xopen {
		size_t level;
		int64_t end;
	} *xo;
	size_t xo_n, xo_cap;
	/* Overlap lanes: the tracks that take X slices partly overlapping
	 * an X on the thread's track (TrackCompressor
	 * InternLegacyOverlappingScoped): each with the ends of its open
	 * slices, outermost first. */
	struct ptw_em_lane_ovl {
		uint64_t uuid; /* 0 until written */
		int64_t *ends;
		size_t n, cap;
	} *ovl;
	size_t n_ovl;
	/* Where a v1 flow event binds (ptw_em_flow_ts): the ts of the last
	 * slice event written (a begin, an instant or a Chrome E), and the
	 * ts + 1 of the first end of a complete slice (X, or an X-form pair)
	 * written after it (0: none); the latest ts of both written. Unknown
	 * (fl_unknown) after a write that went back in time (trace_processor
	 * reads it earlier than the ones before it) or by the lane (which
	 * keeps no such state), until the next slice event in time order. */
	int64_t fl_ts;
	int64_t fl_end1;
	int64_t fl_max;
	int fl_unknown;
};


/* Stable copies of the names and categories that repeat, so queued
 * events carry a pointer instead of a copy and the writer interns them by
 * pointer (PTW_EV_STATIC_STRINGS). A string is copied once, on its first
 * sighting, until PTW_EM_STRS_MAX strings or PTW_EM_STRS_BYTES bytes are
 * stored; later new strings take the copying path. Copies are never moved
 * or freed before ptw_emit_destroy(). A direct-mapped cache, indexed by a
 * cheap hash of the length and the first and last 8 bytes and checked
 * with memcmp, answers most look-ups; a full-hash map finds the rest. */
#define PTW_EM_STRS_CACHE 4096u
#define PTW_EM_STRS_MAX 65536u
#define PTW_EM_STRS_BYTES (8u << 20)
#define PTW_EM_STRS_BLOCK 65536u

struct ptw_em_strs {
	struct ptw_em_sslot {
		const char *s; /* NULL: empty slot */
		size_t n;
	} cache[PTW_EM_STRS_CACHE];
	struct ptw_map map;   /* FNV-1a(string) -> pointer */
	char **blocks;           /* storage, never moved */
	size_t n_blocks, blocks_cap;
	size_t block_used;       /* bytes used in the last block */
	size_t count, bytes;
};

/* The stable copy of s[0, n), or NULL (then copy it): too long, holds a
 * NUL, the store is full, or out of memory. */
const char *ptw_em_strs_get(struct ptw_em_strs *t, const char *s, size_t n);
void ptw_em_strs_free(struct ptw_em_strs *t);
/* Same, found by the reader's number 'sym' for the string when it gave
 * one (0: none; see ptw_cv_event.name_sym). */
const char *ptw_em_stable(struct ptw_emit *em, uint64_t sym, const char *s,
			  size_t n);

/* Counter tracks by (process track, stable name, stable arg key): skips
 * building and hashing "<name> <key>" for each sample. Direct-mapped. */
#define PTW_EM_CTR_CACHE 1024u
struct ptw_em_ctr_slot {
	uint64_t parent;   /* 0: empty */
	const char *name, *key;
	uint64_t track;
};

/* The cache slot of (process track, stable name, stable key). */
static inline struct ptw_em_ctr_slot *
ptw_em_ctr_slot(struct ptw_em_ctr_slot *cache, uint64_t parent,
		const char *sn, const char *sk)
{
	uint64_t h = (parent * 0x9E3779B97F4A7C15ull) ^
		     ((uint64_t)(uintptr_t)sn * 0xC2B2AE3D27D4EB4Full) ^
		     ((uint64_t)(uintptr_t)sk * 0x165667B19E3779F9ull);
	return &cache[(h >> 32) & (PTW_EM_CTR_CACHE - 1)];
}

/* Counter samples of the batch path (emit_fast.c), by name number: the
 * known bytes of the packets of the counter track of (process track, the
 * number's text, em->ctr_key) on em->seq, made under em->ctr_stamp
 * 'stamp'. The stamp moves when the input, the process track or the key
 * of a batch round changes, and when the caches the short path finds the
 * track through (sym_cache, ctr_cache) lose an entry: an entry of this
 * stamp is thus one the short path would find too. Direct-mapped. */
#define PTW_EM_CTR_PREP 256u
struct ptw_em_ctr_prep {
	uint64_t sym; /* 0: empty */
	uint64_t stamp;
	uint64_t track;
	struct ptw_seq_ctr_known k;
};

/* Threads that get a sequence of their own, whose default track is the
 * thread's: their events carry no track uuid and their timestamps are
 * deltas (one shared sequence interleaves threads, whose clocks are
 * unrelated, so most timestamps there are absolute). The rest share the
 * writer's simulation sequence. Bounded because each sequence has its own
 * intern tables; a finished input's sequences are ended and their slots
 * reused. */
#define PTW_EM_THREAD_SEQS 16u

/* Stable strings by the reader's numbers (ptw_cv_event name_sym and
 * cat_sym), for the current input. Direct-mapped. */
#define PTW_EM_SYM_CACHE 1024u
struct ptw_em_sym_slot {
	uint64_t sym; /* 0: empty */
	const char *s;
};

static inline size_t ptw_em_sym_index(uint64_t sym)
{
	return (size_t)(sym ^ (sym >> 10)) & (PTW_EM_SYM_CACHE - 1);
}

/* Slot of a tid in ptw_emit's th_cache. */
static inline size_t ptw_em_th_slot(uint32_t tid)
{
	return (tid ^ (tid >> 6)) & 63u;
}

struct ptw_emit {
	struct ptw_em_strs strs;
	struct ptw_em_sym_slot sym_cache[PTW_EM_SYM_CACHE];
	struct ptw_em_ctr_slot ctr_cache[PTW_EM_CTR_CACHE];
	struct ptw_em_ctr_prep ctr_prep[PTW_EM_CTR_PREP];
	uint64_t ctr_stamp;           /* see struct ptw_em_ctr_prep */
	uint64_t ctr_stamp_parent;    /* what the stamp was made for */
	const char *ctr_stamp_key;
	uint32_t ctr_stamp_input;
	struct ptw_writer *w;
	struct ptw_seq *seq;          /* shared: processes, counters, async */
	uint32_t n_thread_seqs;       /* threads with their own sequence */
	struct ptw_em_proc *procs;
	size_t n_procs, procs_cap;
	struct ptw_map proc_map;   /* (gen, pid) -> index */
	struct ptw_map pid_owner;  /* pid -> owning input + 1 */
	struct ptw_em_thread **threads;
	size_t n_threads, threads_cap;
	struct ptw_map thread_map; /* hash(gen, pid, tid) -> index */
	/* Async cookies: hash(cat, id) for "id" and id2.global, hash(cat,
	 * id, process) for id2.local (see emit_track_events.c) -> the
	 * cookie's number. */
	struct ptw_map async_map;
	int64_t async_last;          /* latest async (b/e/n) ts written */
	uint64_t async_cookies;      /* cookies numbered so far */
	struct ptw_map counter_map;/* hash(process uuid, name) -> uuid */
	uint64_t global_track;     /* carries global instants without a
				    * thread (see ptw_em_scoped_instant) */
	/* default names from the command line */
	char **cli_names;
	size_t n_cli, cli_cap;
	struct ptw_map cli_proc;   /* pid -> index in cli_names */
	struct ptw_map cli_thread; /* pid << 32 | tid -> index */
	/* current input */
	int in_input;
	uint32_t input_index;         /* 0-based */
	enum ptw_emit_mode mode;
	int fast_ok;                  /* the short path may take events */
	int seen_x;                   /* an X event was read in this input */
	uint32_t max_held;            /* queue bound while an open B waits */
	int64_t shift_ns;
	int64_t ts_in_max;            /* largest input ts that shift_ns
				       * cannot push past INT64_MAX */
	struct ptw_map pid_remap, tid_remap;
	uint64_t next_seq, next_item;
	/* Counts the calls that may change queued items in place (general
	 * path, flushes, inputs): a prepared packet (ptw_em_prep) made
	 * under another epoch is not used. */
	uint64_t epoch;
	struct ptw_em_thread *th_cache[64]; /* by tid: lookup cache of the
					     * current input */
	uint32_t last_pid;
	size_t last_proc;             /* index + 1; 0: none */
	struct ptw_em_buf tmp;        /* payload of an immediate event */
	/* Nested args: the parser that walks their JSON text (created on
	 * first use) and the annotations of the payload being written
	 * (ptw_em_unpack). */
	struct ptw_cv_json_parser *jp;
	struct ptw_arg nest_pool[PTW_MAX_ARG_NODES];
	/* string pids/tids: each distinct string gets a number
	 * (PTW_EM_STR_ID_BASE + index), shared by pids and tids */
	struct ptw_map str_ids;    /* hash(string) -> index (probed) */
	char **str_names;
	size_t *str_lens;
	size_t n_str, str_cap;
	const char *ctr_key;          /* the last counter arg key's stable */
	size_t ctr_key_n;             /* copy (short path), and its length */
	char *strbuf;                 /* scratch for counter track names */
	size_t strbuf_cap;
	struct ptw_emit_stats st;
	/* Chrome JSON callstacks (last: the fields above keep their places):
	 * the frames (created on first use), the stack of the item being
	 * queued (0: none; ptw_em_queue takes it), and the writer's frames
	 * of the event being written. */
	struct ptw_cv_stacks *stacks;
	struct ptw_frame *frames;
	uint32_t pend_cs;
};

/* ---- emit_thread.c ---------------------------------------------------- */

/* Packs a payload into 'b'; returns its offset (check b->oom). 'name' is
 * stored as given (callers substitute "[No name]"); cat NULL/empty: none.
 * Arguments come from 'ev' (may be NULL): each JSON arg becomes a debug
 * annotation whose rows in trace_processor's args table are those of its
 * JSON import (see emit_thread.c); a v2 flow is flow_dir (PTW_FLOW_NONE:
 * none) with bind_id. */
size_t ptw_em_pack(struct ptw_emit *em, struct ptw_em_buf *b,
		   const char *name, size_t name_len,
		   const char *cat, size_t cat_len,
		   const struct ptw_cv_event *ev, uint8_t flow_dir,
		   uint64_t bind_id, const int64_t *tts);
/* Unpacks a payload; nested annotations go to em->nest_pool (valid until
 * the next unpack). */
void ptw_em_unpack(struct ptw_emit *em, const struct ptw_em_buf *b,
		   size_t off, struct ptw_em_payload *pl);
void ptw_em_buf_free(struct ptw_em_buf *b);

/* Adds an item with a payload to the thread's queue; *id_out (may be NULL)
 * gets its id; 'tts' (may be NULL) is its thread time in ns. Returns 0 or
 * PTW_ERR_NOMEM. */
int ptw_em_queue(struct ptw_emit *em, struct ptw_em_thread *th,
		 const struct ptw_em_item *it, const char *name,
		 size_t name_len, const char *cat, size_t cat_len,
		 const struct ptw_cv_event *ev, uint8_t flow_dir,
		 uint64_t bind_id, const int64_t *tts, uint64_t *id_out);
/* The stable empty string (no stored hash in front of it). */
extern const char ptw_em_empty[];
/* Writes one released item to the writer. */
int ptw_em_write_item(struct ptw_emit *em, struct ptw_em_thread *th,
		      const struct ptw_em_item *it, struct ptw_error *err);
/* Finds a queued item by id, or NULL. */
struct ptw_em_item *ptw_em_find(struct ptw_em_thread *th, uint64_t id);
/* Writes out the queued groups with ts below the thread's last ts (all of
 * them if 'final'). */
int ptw_em_flush(struct ptw_emit *em, struct ptw_em_thread *th, int final,
		 struct ptw_error *err);
void ptw_em_thread_free(struct ptw_em_thread *th);

/* ---- emit_procs.c ------------------------------------------------------- */

/* The process of 'pid' in the current input (created on first use; each
 * input has its own, so equal pids of different inputs stay apart); NULL
 * with *err on allocation failure. '*index' (if not NULL) gets its index
 * in em->procs. */
struct ptw_em_proc *ptw_em_proc_get(struct ptw_emit *em, uint32_t pid,
				    size_t *index, struct ptw_error *err);
/* The writer track of a process / thread, written on first use (for a
 * thread, with its sequence); 0 with *err on failure. */
uint64_t ptw_em_proc_track(struct ptw_emit *em, struct ptw_em_proc *pr,
			   struct ptw_error *err);
uint64_t ptw_em_thread_track(struct ptw_emit *em, struct ptw_em_thread *th,
			     struct ptw_error *err);
/* The same without giving the thread a sequence of its own (for a thread
 * that has no events: its row only). */
uint64_t ptw_em_thread_descriptor(struct ptw_emit *em,
				  struct ptw_em_thread *th,
				  struct ptw_error *err);
/* The thread (pid, tid) of the current input, created on first use. */
struct ptw_em_thread *ptw_em_thread_get(struct ptw_emit *em, uint32_t pid,
					uint32_t tid, struct ptw_error *err);
/* The number standing for a string pid/tid (PTW_EM_STR_ID_BASE + n). */
int ptw_em_str_id(struct ptw_emit *em, struct ptw_cv_str s, uint32_t *out,
		  struct ptw_error *err);
/* A string pid/tid names its process/thread (as trace_processor shows). */
int ptw_em_string_names(struct ptw_emit *em, const struct ptw_cv_event *ev,
			uint32_t pid, uint32_t tid, struct ptw_error *err);
/* 'p' for an M process_sort_index, 't' for thread_sort_index, else 0. */
int ptw_em_sort_kind(const struct ptw_cv_event *ev);
/* An M *_sort_index event: the rank of its process / thread track. */
int ptw_em_sort_index(struct ptw_emit *em, const struct ptw_cv_event *ev,
		      uint32_t pid, uint32_t tid, struct ptw_error *err);
/* Any M event: names and sort indexes (others make no table row). */
int ptw_em_metadata(struct ptw_emit *em, const struct ptw_cv_event *ev,
		    uint32_t pid, uint32_t tid, struct ptw_error *err);

/* ---- emit_track_events.c --------------------------------------------- */

/* The name an event is shown with: "[No name]" for an empty one. */
void ptw_em_display_name(const struct ptw_cv_event *ev, const char **p,
			 size_t *n);
/* Folds a string (or its absence) into key hash h (FNV-1a). */
uint64_t ptw_em_str_key(uint64_t h, struct ptw_cv_str s);
/* A C event: one sample per numeric arg, each on its counter track. */
int ptw_em_counter(struct ptw_emit *em, const struct ptw_cv_event *ev,
		   uint32_t pid, int64_t ts, struct ptw_error *err);
/* A b, e or n event on its async track. */
int ptw_em_async(struct ptw_emit *em, const struct ptw_cv_event *ev,
		 uint32_t pid, int64_t ts, struct ptw_error *err);
/* An instant of scope p or g, on its process track or the global one. */
int ptw_em_scoped_instant(struct ptw_emit *em, const struct ptw_cv_event *ev,
			  uint32_t pid, uint32_t tid, int64_t ts,
			  struct ptw_error *err);

/* ---- emit.c --------------------------------------------------------------- */

/* "converter: out of memory" in *err; returns PTW_ERR_NOMEM. */
int ptw_em_nomem(struct ptw_error *err);
/* Doubles an X-form stack's room: 0, or -1 out of memory. */
int ptw_em_lifo_grow(struct ptw_em_lifo *l);
/* s[0, n) as a NUL-terminated copy (malloc), or NULL. */
char *ptw_em_strndup(const char *s, size_t n);
/* The v2 flow of an event (bind_id with flow_in / flow_out): its
 * direction (enum ptw_flow_dir; PTW_FLOW_NONE: none) and *bind. */
uint8_t ptw_em_v2_flow(const struct ptw_cv_event *ev, uint64_t *bind);
/* An event of the current input, on the general path (ptw_emit_event
 * without the short path). */
int ptw_em_general_event(struct ptw_emit *em, const struct ptw_cv_event *ev,
			 struct ptw_error *err);

/* Copies the writer's error into *err and returns its code (or 'dflt'). */
int ptw_em_writer_fail(struct ptw_emit *em, int dflt, struct ptw_error *err);

/* Pushes an open slice on the thread's model (names hashed for Chrome E
 * matching if 'hash'; pl may be NULL then). 0 or PTW_ERR_NOMEM. */
int ptw_em_push_model(struct ptw_em_thread *th,
		      const struct ptw_em_payload *pl, int hash, int stable);

/* Writes one counter sample on 'track' (the shared sequence) and counts
 * it; 0 or the writer's error in *err. */
static inline int ptw_em_counter_sample(struct ptw_emit *em, uint64_t track,
					int64_t ts, int is_int, int64_t iv,
					double dv, struct ptw_error *err)
{
	int rc = is_int ? ptw_seq_counter_int(em->seq, track, (uint64_t)ts, iv)
			: ptw_seq_counter_double(em->seq, track, (uint64_t)ts,
						 dv);
	if (rc)
		return ptw_em_writer_fail(em, rc, err);
	em->st.counters++;
	return 0;
}

/* Removes the innermost model entry that is (want_x 1) or is not (0) an
 * X written as one packet (the top if there is none). */
void ptw_em_model_pop(struct ptw_em_thread *th, int want_x);

/* Room for at least n model entries: 0 or PTW_ERR_NOMEM. */
int ptw_em_model_reserve(struct ptw_em_thread *th, size_t n);

/* ptw_em_push_model(th, NULL, 0, 1) with its common case inline: an open
 * slice without names (X form) while the model has room. */
static inline int ptw_em_push_model_plain(struct ptw_em_thread *th)
{
	if (th->model_n == th->model_cap)
		return ptw_em_push_model(th, NULL, 0, 1); /* grows it */
	struct ptw_em_open *o = &th->model[th->model_n++];
	o->name_h = o->cat_h = 0;
	return 0;
}

/* Where v1 flows bind (ptw_em_flow_ts): a slice event (a begin, an
 * instant or a Chrome E; is_end 0) or the end of a complete slice
 * (is_end 1) was written at ts. With selects: kinds come in random
 * order. */
static inline void ptw_em_fl_note(struct ptw_em_thread *th, int64_t ts,
				  int is_end)
{
	int back = ts < th->fl_max;
	int64_t end1 = th->fl_end1 ? th->fl_end1 : ts + 1;
	th->fl_end1 = back ? th->fl_end1 : is_end ? end1 : 0;
	th->fl_ts = back | is_end ? th->fl_ts : ts;
	th->fl_unknown = back | (is_end & th->fl_unknown);
	th->fl_max = back ? th->fl_max : ts;
}

/* The common item - stable names, no payload, on a thread whose track is
 * written: an X-form B, an end of a complete slice, or an instant -
 * written without unpacking a payload (a quarter of such an event's
 * cost). Returns 0 (nothing done) for any other item; *rc is a writer
 * code (see ptw_em_writer_fail). Inline: the short path (emit_fast.c)
 * calls it first, and ptw_em_write_item() for anything else. */
static inline __attribute__((always_inline)) int
ptw_em_write_simple(struct ptw_emit *em, struct ptw_em_thread *th,
		    const struct ptw_em_item *it, int *rc)
{
	if (!it->stable || it->data_len || !th->uuid || it->raw_end ||
	    it->kind >= PTW_EM_FLOW)
		return 0;
	if (it->kind == PTW_EM_END) {
		if (!th->model_n ||
		    ptw_em_open_is_x(&th->model[th->model_n - 1]))
			return 0;
		*rc = ptw_seq_simple(th->seq, PTW_SIMPLE_END, th->uuid,
				     (uint64_t)it->ts, NULL, NULL);
		th->model_n--;
		ptw_em_fl_note(th, it->ts, 1);
	} else if (it->kind == PTW_EM_INSTANT) {
		*rc = ptw_seq_simple(th->seq, PTW_SIMPLE_INSTANT, th->uuid,
				     (uint64_t)it->ts, it->scat, it->sname);
		em->st.instants++;
		ptw_em_fl_note(th, it->ts, 0);
	} else if (it->state == PTW_EM_UNRESOLVED) {
		*rc = ptw_seq_simple(th->seq, PTW_SIMPLE_BEGIN, th->uuid,
				     (uint64_t)it->ts, it->scat, it->sname);
		ptw_em_fl_note(th, it->ts, 0);
		/* X form: the model needs no names (its ends are nameless) */
		if (!*rc)
			*rc = ptw_em_push_model_plain(th);
		em->st.open_slices++;
	} else {
		return 0;
	}
	return 1;
}

#endif /* PTW_EMIT_INTERNAL_H */
