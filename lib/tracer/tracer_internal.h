/* tracer_internal.h - state shared by the tracer's lib/ files (control,
 * producer slow paths, backend, TSC). Not installed, not API.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TRACER_INTERNAL_H
#define PTW_TRACER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <time.h>

#include "lib/arch/arch.h"
#include "lib/util/hashmap.h"
#include "ptw/tracer.h"
#include "ptw/writer.h"
#include "ring.h"
#include "tracer_unload.h"
#include "lib/writer/writer_internal.h"

/* ---- the producer's records and thread head (the macros do not see them) */

/* One ring slot. Extra slots follow when 'extra' > 0: the copied name
 * (name_len - 1 bytes + NUL, padded to slots), then the id (one slot: an
 * async or flow id, a log line's site and priority, a track handle of
 * ptw_track_new), then per argument one slot (struct ptw_i_arg_rec)
 * followed by its copied string (PTW_I_ARG_FLOW and
 * PTW_I_ARG_TERMINATING_FLOW arguments carry a flow id, no name).
 * Counters keep their value in v.u (a copied name before it). 'name' is
 * a literal, which for the sites of tracer.h's PTW_I_SITEN lies right
 * after the site; with a copied name (name_len > 0) it is the site itself
 * (ptw_tr_rec_site) or NULL. A counter's record always has its site in
 * 'name' (the category is the site's, the name too unless copied), as
 * has a sample on a counter track of one's own (PTW_I_K_TRACK_COUNTER_*).
 * Read by ptw_tr_decode_at, and by tracer_unload.c for the string
 * pointers of open slices' copies (ptw_tr_own_copied). */
struct ptw_i_rec {
	uint64_t ts;       /* raw clock reading (ns, or TSC ticks) */
	uint8_t kind;      /* enum ptw_i_kind */
	uint8_t nargs;
	uint16_t name_len; /* copied name length + 1; 0: no copied name */
	uint32_t extra;    /* slots after this one */
	const char *name;
	union {
		const char *cat;
		uint64_t u;
	} v;
};

/* ptw_i_arg_rec.type of an argument whose type the ring does not carry
 * (the backend drops it and counts it as invalid). */
#define PTW_I_ARG_UNKNOWN 0xFFu

struct ptw_i_arg_rec {
	const char *name;
	uint8_t type;      /* enum ptw_arg_type */
	uint8_t pad[3];
	uint32_t str_len;  /* PTW_ARG_TYPE_STRING: bytes that follow (+ NUL) */
	uint64_t val;      /* bits of the value */
	uint64_t pad2;
};

#define PTW_TR_CAT_LEVELS 64u /* levels whose category is kept (= bits of
				* lost_levels) */

/* The head of a registered thread (struct ptw_tr_thread has the rest).
 * Fields after the ring are touched only by the owning thread, except
 * the atomics, which the backend reads. */
struct ptw_i_thread {
	struct ptw_ring ring;
	_Alignas(PTW_RING_CACHELINE) uint32_t gen; /* generation validated */
	uint32_t depth;          /* open BEGINs (producer view) */
	uint64_t lost_levels;    /* bit d: BEGIN at depth d was not written */
	uint64_t pending_drops;  /* drops not yet announced in the ring */
	_Atomic uint64_t dropped;/* all drops of this thread (exact) */
	/* bit d: the BEGIN at depth d was skipped, its category being off
	 * (a lost level that is no loss: its END is dropped uncounted) */
	uint64_t skip_levels;
	/* cats[d]: category of the BEGIN at depth d (written, dropped or
	 * skipped), so that an END of a category that was switched off
	 * during the session closes only a slice of its own category (see
	 * ptw_tr_end_belongs) */
	const char *cats[PTW_TR_CAT_LEVELS];
};

/* THE GLOBAL STATE of ptw (documented exception to "no globals"):
 * ptw_i_gen is the generation the out-of-line paths check: even =
 * tracing stopped, odd = running; bit 1 = TSC clock, bit 2 = BOOTTIME
 * clock; bits 3.. count generations (start, stop and each category change
 * bump it). ptw_i_self is the calling thread's ring (NULL until its first
 * event). Both live in lib/tracer/tracer.c and are accessed with __atomic
 * builtins only (ptw_i_self: thread-local). The macros read neither: each
 * reads its own site's word, which the list of sites (sites.h) sets. */
#define PTW_I_GEN_ON 1u
#define PTW_I_GEN_TSC 2u
#define PTW_I_GEN_BOOT 4u
#define PTW_I_GEN_CLOCKS (PTW_I_GEN_TSC | PTW_I_GEN_BOOT)
#define PTW_I_GEN_STEP 8u
extern uint32_t ptw_i_gen __attribute__((visibility("hidden")));
/* initial-exec: one %fs-relative load, no __tls_get_addr call, also when
 * libptw is a shared library loaded at program start (not dlopen). */
extern _Thread_local struct ptw_i_thread *ptw_i_self
	__attribute__((tls_model("initial-exec")));

/* What the out-of-line paths do with a call site in generation g, its
 * site->state (set under the mutex from the site's kind and its
 * category's history in the session, ptw_tr_site_state):
 *   g                 write the event (an END closes the innermost level);
 *   ~g                skip it (its word then skips it inline too);
 *   PTW_TR_ST_ALT(g)  the category has a history: a BEGIN of a category
 *                     off now but on earlier notes a skipped level
 *                     (ptw_tr_note_skip), so that its END is dropped; an
 *                     END of a category that was off at some time closes
 *                     the innermost level only if it is of its category
 *                     (ptw_tr_end_belongs); an async END is written
 *                     marked PTW_TR_SOFT_END.
 * An END site is skipped only while its category was never on in the
 * session (no BEGIN of it can have been written or noted). */
#define PTW_TR_ST_ALT(g) ((g) ^ PTW_I_GEN_ON)
/* A one-slot BEGIN site of a category of cfg.stack_categories, on: its
 * events go out of line with the caller's stack (ptw_i_emit_stack). Never
 * a generation (same counter, other clock bits). Elsewhere the same as g
 * (ptw_tr_st_plain). */
#define PTW_TR_ST_STACK(g) ((g) ^ PTW_I_GEN_TSC)
static inline uint32_t ptw_tr_st_plain(uint32_t s, uint32_t g)
{
	return s == PTW_TR_ST_STACK(g) ? g : s;
}

/* The 'name' of an ASYNC_END record whose category was off at some time
 * in the session: its BEGIN may have been skipped, so the backend does
 * not count it as an error when no BEGIN of its id comes (tracer.c). */
extern const char ptw_tr_soft_end[] __attribute__((visibility("hidden")));

/* Slow paths (tracer_thread.c). ptw_i_thread_slow resolves the site (of
 * 'kind') and registers the thread; it returns NULL when the event must
 * be skipped (tracing stopped, category off, a skipped BEGIN on a thread
 * with nothing written in this session), else the thread with 'gen'
 * current and the site's state for it in *st (may be NULL). */
struct ptw_i_thread *ptw_i_thread_slow(struct ptw_i_site *site, uint32_t kind,
				       uint32_t g, uint32_t *st);
/* A site called while tracing is stopped: listed, and its word set to 0
 * so that its next calls stay inline (sites.h). */
void ptw_i_site_stopped(struct ptw_i_site *site);
int ptw_i_reserve_slow(struct ptw_i_thread *t, uint32_t kind, uint64_t n,
		       uint64_t *idx);
uint64_t ptw_i_now_slow(uint32_t g);
int ptw_i_end_lost(struct ptw_i_thread *t);

/* A clock reading for generation g: ticks of the CPU's counter (the
 * "TSC" of the names here: lib/arch/), or ns of the chosen clock. */
static inline uint64_t ptw_i_now(uint32_t g)
{
	if (PTW_ARCH_COUNTER && (g & PTW_I_GEN_TSC))
		return ptw_arch_counter();
#if defined(CLOCK_MONOTONIC) && defined(CLOCK_BOOTTIME)
	struct timespec ts;
	clock_gettime((g & PTW_I_GEN_BOOT) ? CLOCK_BOOTTIME : CLOCK_MONOTONIC,
		      &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#else
	return ptw_i_now_slow(g);
#endif
}

#define PTW_TR_NAME_MAX 64u     /* thread name bytes incl. NUL */
#define PTW_TR_MIN_SLOTS 64u
#define PTW_TR_MAX_SLOTS (1u << 28)

/* Outputs of one session besides its own writer: the system sessions of
 * the tracing service (lib/system; as many as the Perfetto SDK serves). */
#define PTW_TR_MAX_SINKS 8u

/* One-slot BEGIN, END and INSTANT records as the writer prepared them
 * (struct ptw_seq_prep), per thread, looked up by the record's words as
 * the producer wrote them (kind, name and category pointers, which are
 * literals): most of a trace is a few such events. */
#define PTW_TR_PREP_SLOTS 64u
struct ptw_tr_prep {
	uint64_t word;      /* kind, nargs, name_len, extra; 0: empty */
	const char *name;
	const char *cat;
	struct ptw_seq_prep p;
};

/* A prepared event as the backend's tight run uses it (tracer_backend.c,
 * ptw_tr_run_gen): the key, then the packet's first word for a one- and
 * a two-byte time step (ptw_pkt_step_head), the depth change, the tail's
 * length and the tail. A thread keeps PTW_TR_HOT of them, all of one
 * generation of its sequence (hot_gen), at a hash of their key. */
#define PTW_TR_HOT_BITS 5
#define PTW_TR_HOT (1u << PTW_TR_HOT_BITS)
struct ptw_tr_hot {
	uint64_t word;
	const char *name;
	const char *cat;
	uint64_t head[2];
	int32_t depth_d;
	uint32_t len;
	uint8_t tail[PTW_SEQ_PREP_TAIL];
	/* a sink's shadow only: a key of a category the sink does not
	 * take (no packet; depth_d 1 for a BEGIN, else 0) */
	uint8_t skip;
	uint8_t pad[47]; /* 128 bytes: an entry's address is a shift */
};
_Static_assert(sizeof(struct ptw_tr_hot) == 128, "entries of 128 bytes");

/* One open slice of a thread or an async track, kept for the flight
 * recorder's snapshot prefix (tracer_open.c): a one-slot BEGIN keeps its
 * literal name and category; any other BEGIN (arguments, run-time name)
 * is copied whole, its ring slots, into the stack's 'buf' at 'off'. */
struct ptw_tr_open {
	const char *name;   /* NULL: copied at buf + u.off */
	union {
		const char *cat;
		size_t off;
	} u;
};

/* The open slices of one track, level d at lv[d]; grown as nesting
 * deepens, reused. The backend's prepared runs store level 'depth' for
 * every event without a check: each makes room for as many levels as it
 * may open first (tracer_backend.c). */
struct ptw_tr_ostack {
	struct ptw_tr_open *lv;
	uint32_t cap;
	unsigned char *buf;
	size_t buf_cap;
};

/* A registered producer thread. The head (struct ptw_i_thread) is what
 * the producer fast path (tracer_event.c) touches; 'refs' counts the
 * owners (the thread itself until it exits or re-registers, the session
 * until it has drained the ring). */
struct ptw_tr_thread {
	struct ptw_i_thread pub;

	/* set once before the record is published, then read-only */
	uint64_t session;
	int64_t tid;
	int wait;                     /* overflow policy: PTW_OVERFLOW_WAIT */
	char init_name[PTW_TR_NAME_MAX];
	void *ring_mem;               /* ring_mem.h: ring_bytes of it */
	size_t ring_bytes;

	_Atomic int refs;
	_Atomic int exited;           /* set by the thread's key destructor */
	_Atomic uint64_t waits;

	/* producer-private */
	char carry_name[PTW_TR_NAME_MAX]; /* latest ptw_set_thread_name */

	/* backend-private (and the last owner's, to free the ring) */
	int ring_warm;                /* every page of the ring faulted in */
	struct ptw_seq *seq;
	uint64_t track;
	uint64_t drop_track;
	uint64_t drops_noted;         /* sum of the DROPPED notes drained */
	uint64_t drops_announced;     /* drops in the trace (never above the
				       * notes, except a snapshot's or the
				       * end's exact total, see announce) */
	uint32_t depth;               /* open slices written to the writer */
	struct ptw_tr_ostack open;    /* and what they are (ring mode) */
	int created;                  /* track and sequence exist */
	uint64_t unload_mark;         /* under ctl mutex: ring drained to here
				       * by the last unload (tracer_unload.c) */
	struct ptw_tr_prep prep[PTW_TR_PREP_SLOTS];
	struct ptw_tr_hot hot[PTW_TR_HOT]; /* valid if hot_ok */
	uint32_t hot_gen;
	int hot_ok;

	/* backend-private: the thread as each sink writes it (a "shadow":
	 * a struct of its own per sink, whose ring is a view of this one's,
	 * tracer_backend.c); NULL until the sink first drains it */
	struct ptw_tr_thread *sh[PTW_TR_MAX_SINKS];
	/* the latest name its records gave (a sink that joins later names
	 * its track so) */
	char be_name[PTW_TR_NAME_MAX];
	struct ptw_tr_thread *sh_real; /* a shadow's thread */
	/* a shadow's: the first slot of the real ring that its sink takes,
	 * the thread's drops before it, and the slice levels of the ring
	 * that its sink has seen (a sink that filters: bit d of 'got' set
	 * if the BEGIN at level d went to it, so its END goes too; levels
	 * from 64 on in 'got_deep', grown as deep as the nesting goes,
	 * tracer_sink.c) */
	uint64_t sh_pos;
	uint64_t sh_drop_base;
	uint32_t sh_rdepth;
	uint64_t sh_got;
	uint64_t *sh_got_deep;
	size_t sh_got_deep_n;
};



/* Tests only: while non-zero, the backend drains nothing (it still stops
 * when asked), so that producer rings fill and the stop drains them one
 * after the other, far behind their producers (test_tracer_lag.c). */
extern _Atomic int ptw_tr_test_hold;
/* Slots of a ring that each sink, then the session, drain in turn (set
 * before ptw_start: tests make chunks end inside records). */
extern uint32_t ptw_tr_sink_chunk;

/* Async ids and their tracks (tracer_async.c). */
struct ptw_tr_async_ent {
	uint64_t id;
	uint64_t track;
	const char *name;     /* the first BEGIN's name (a literal; NULL
			       * once forgotten at an unload) */
	uint64_t bal;         /* BEGINs written minus ENDs written */
	uint64_t open_ts;     /* earliest BEGIN written since bal was 0 */
	uint64_t last_ts;     /* latest event written on the track */
	uint64_t zero_pass;   /* pass at which bal last became 0 */
	uint32_t gen;         /* bumped when the slot is (re)used or freed */
};

struct ptw_tr_async {
	struct ptw_map ix;    /* id + 1 -> entry index + 1 */
	uint64_t max_id_ix;   /* the same for id UINT64_MAX */
	struct ptw_tr_async_ent *v;
	size_t n, cap;
	size_t *unused;       /* free entry slots */
	size_t n_unused;
	struct { uint32_t ix, gen; uint64_t pass; } *zq; /* ids whose bal hit 0 */
	size_t zq_head, zq_n, zq_cap;
	struct { uint64_t id, ts; int soft; } *pend; /* ENDs drained before
						   * any BEGIN */
	size_t n_pend, cap_pend;
	struct { uint64_t track, last_ts; const char *name; } *free;
	size_t n_free;        /* idle tracks for reuse */
	uint64_t pass;        /* full backend passes so far */
};

int ptw_tr_async_init(struct ptw_tr_async *a);
void ptw_tr_async_free(struct ptw_tr_async *a);
/* The track for a BEGIN of 'id' at 'ts' (a new one is named 'name' under
 * 'parent'); 0 if out of memory or the writer failed. */
uint64_t ptw_tr_async_track(struct ptw_tr_async *a, struct ptw_writer *w,
			    uint64_t parent, uint64_t id, const char *name,
			    uint64_t ts);
/* After that BEGIN was written. */
void ptw_tr_async_begun(struct ptw_tr_async *a, uint64_t id, uint64_t ts);
/* An END of 'id' (soft: see tracer_async.c): 1 with *track: write it
 * now; 0: queued until a BEGIN of the id is written; -1: the queue is full
 * (the END is lost). */
int ptw_tr_async_end(struct ptw_tr_async *a, uint64_t id, uint64_t ts,
		     int soft, uint64_t *track);
/* After a BEGIN of 'id' at begin_ts: 1 with a queued END (*ts, *track) to
 * write now. */
int ptw_tr_async_pending_end(struct ptw_tr_async *a, uint64_t id,
			     uint64_t begin_ts, uint64_t *ts, uint64_t *track);
/* After each full pass over the rings: releases ids idle long enough. */
void ptw_tr_async_pass(struct ptw_tr_async *a);
/* BEGINs never ended plus ENDs never begun, soft ones left out (at
 * stop). */
uint64_t ptw_tr_async_unmatched(const struct ptw_tr_async *a);

/* One piece of the ticks-to-ns mapping: from tick t0 (at ns y0) on,
 * 'mult' ns per tick in 32.32 fixed point. */
struct ptw_tr_tsc_seg {
	uint64_t t0;
	uint64_t y0;
	uint64_t mult;
};

#define PTW_TR_TSC_OLD 8 /* pieces kept for events still in the rings */

/* TSC to nanoseconds: ns = mono0 + ((tsc - tsc0) * mult) >> 32 from
 * tsc0 on. Anchored to CLOCK_BOOTTIME (system mode, 'boot'), the backend
 * re-anchors it each pass (ptw_tr_tsc_reanchor): the earlier pieces, in
 * old[] (newest first), convert the ticks before tsc0. */
struct ptw_tr_tsc {
	uint64_t hz;
	uint64_t tsc0;
	uint64_t mono0;
	uint64_t mult;
	int boot;                /* anchored to CLOCK_BOOTTIME, slewed */
	uint32_t n_old;
	uint64_t mult_nominal;   /* from hz */
	uint64_t last_t, last_b; /* the last (ticks, boottime) pair read */
	struct ptw_tr_tsc_seg old[PTW_TR_TSC_OLD];
};

/* A ptw_snapshot_fd() request, on the caller's stack until 'done'. */
struct ptw_tr_snap_req {
	int fd;
	int done;
	int rc;
};

/* The open slices of a track no live thread owns: an async track, or
 * the track of a thread that exited with slices open (ring mode). */
struct ptw_tr_otrack {
	uint64_t track;
	uint32_t depth;
	struct ptw_tr_ostack st;
};

/* A sink's output (a system session's, lib/system): its writer's bytes go
 * to 'fn' (the shared memory buffer) instead of a file, and 'pass' runs on
 * the backend thread after each pass with the writer (NULL: none). */
struct ptw_tr_output {
	int (*fn)(void *ctx, const uint8_t *p, size_t n);
	void (*pass)(void *ctx, struct ptw_writer *w);
	void *ctx;
};

/* A request to the backend to add or remove a sink (ptw_tr_sink_add,
 * ptw_tr_sink_remove), on the caller's stack until 'done'. */
struct ptw_tr_sink_req {
	struct ptw_tracer *add;       /* a sink to set up and add, or NULL */
	uint64_t remove;              /* id of a sink to drain and close */
	int done;
	int rc;
};

/* One tracing session, from ptw_start to ptw_stop. A "sink" (a system
 * session's output beside the session's own) is a struct ptw_tracer too,
 * of which only the writer's part is used (w, tracks, counters, async,
 * the open stacks, stats), and 'sinks' of the session list them. */
struct ptw_tracer {
	uint64_t session;
	struct ptw_writer *w;
	pthread_t thread;
	uint32_t ring_slots;
	int wait;
	int general_only;         /* cfg->general_path_only */
	int srcloc;               /* cfg->source_locations */
	uint32_t drain_us;
	int use_tsc;
	uint32_t clock_bits;          /* PTW_I_GEN_TSC / PTW_I_GEN_BOOT / 0 */
	struct ptw_tr_tsc tsc;
	int32_t pid;
	int ring;                     /* PTW_MODE_RING */
	int crash;                    /* cfg.crash_path set */
	char *out_path;               /* ring mode: output at stop, owned */
	int out_fd;                   /* ring mode: output fd at stop, or -1 */
	int out_close;                /* close out_fd at stop */

	/* under ctl mutex */
	struct ptw_tr_snap_req *snap_req; /* pending snapshot (one at a time) */
	int snap_busy;                /* a snapshot call is in progress */
	struct ptw_tr_thread **threads;
	size_t n_threads, cap_threads;
	int stop_req;
	uint64_t flush_req, flush_done;
	int flush_rc;
	char *new_process_name;       /* rename request, owned */
	uint64_t n_registered;
	uint64_t dropped_gone;        /* drops of finished threads */
	uint64_t waits_gone;

	/* backend-private, published to ptw_get_stats() through atomics */
	_Atomic uint64_t events;
	_Atomic uint64_t invalid;
	_Atomic uint64_t bytes;
	_Atomic uint64_t drops_announced; /* drops in the trace so far */
	uint64_t proc_track;
	struct ptw_seq *ctl_seq;
	struct ptw_map counters;   /* name pointer -> counter track */
	struct ptw_map trks;       /* tracks of ptw_track_new in this session
				    * (tracer_tracks.c) */
	char **counter_names;         /* distinct counter names (copies) */
	uint64_t *counter_uuids;
	size_t n_counter_names, cap_counter_names;
	struct ptw_tr_async async;    /* async ids -> tracks */
	char *scratch;                /* copied strings of one record */
	size_t scratch_cap;
	struct ptw_tr_thread **snap;  /* backend's copy of the thread list */
	size_t cap_snap, n_snap;      /* NULL entries: retired this pass */
	struct ptw_tr_otrack *otracks; /* ring mode (tracer_open.c) */
	size_t n_otracks, cap_otracks;
	struct ptw_map otrack_ix;     /* async track uuid -> index + 1 */
	char *oscratch;               /* decoding a copied BEGIN */
	struct ptw_tr_unload unl;     /* libraries unloaded (tracer_unload.c) */
	struct ptw_stk_sym *sym;      /* names of stack frames (lib/stack/),
				       * made at the first stack */
	struct ptw_tr_output out;     /* system mode; fn NULL otherwise */
	int rc;                       /* first error of the session */
	struct ptw_error err;

	/* Sinks (tracer_sink.c). The session's: its own writer writes
	 * nothing (system mode without a file: only the sinks do); the
	 * pending request (under ctl mutex); the sinks (backend's). */
	int mute;
	struct ptw_tr_sink_req *sink_req;
	struct ptw_tracer *sinks[PTW_TR_MAX_SINKS];
	uint32_t n_sinks;
	/* of sinks closed */
	uint64_t sink_events_gone, sink_invalid_gone, sink_bytes_gone;
	/* A sink's: its id, slot in 'sinks', its writer's options and
	 * process name (the caller's until the add is done), the categories
	 * it wants, and whether it skips the others ('filt', once another
	 * output runs beside it: records of categories no output wants are
	 * never written, so a sole output takes all). The cache maps a
	 * category's address to 1 (wanted) or 2 (not). */
	uint64_t sink_id;
	uint32_t sink_ix;
	const struct ptw_writer_options *sink_wo;
	const char *sink_pname;
	int (*want)(void *ctx, const char *cat, size_t len);
	void *want_ctx;
	int filt;
	struct ptw_map want_cat;
};

/* A ptw_set_category_enabled() call or an item of
 * cfg.disabled_categories: a category name, or a pattern with '*'. */
struct ptw_tr_cat_rule {
	char *pat;
	int on;
};

/* A category (the text of a call site's 'cat') in this session: on now,
 * ever on, ever off since a call site first asked about it. Before that
 * no event of it was logged, so its earlier history does not matter. */
struct ptw_tr_cat_seen {
	char *cat;
	uint8_t on, ever_on, ever_off;
};

/* The control block (tracer.c): the one mutex guarding sessions,
 * categories and requests, and the backend's wake-up condition. */
struct ptw_tr_ctl {
	pthread_mutex_t mu;
	pthread_cond_t wake;      /* backend sleeps here (CLOCK_MONOTONIC) */
	pthread_cond_t done;      /* flush/stop completions */
	struct ptw_tracer *tr;    /* running session, or NULL */
	int stopping;
	uint32_t gen;             /* mirror of ptw_i_gen, written under mu */
	uint64_t next_session;
	/* Category rules, oldest first (the latest that matches decides),
	 * and the categories the session's call sites asked about, with
	 * their history in the session (tracer.c, ptw_tr_site_state). */
	struct ptw_tr_cat_rule *rules;
	size_t n_rules, cap_rules;
	struct ptw_tr_cat_seen *seen;
	size_t n_seen, cap_seen;
	char *process_name;       /* set by ptw_set_process_name, owned */
	char *stack_cats;         /* cfg.stack_categories of the session */
	struct ptw_stats last;
	int have_last;
	pthread_key_t key;        /* runs the thread-exit destructor */
	/* System mode without a file: the running system sessions'
	 * TrackEventConfigs (any of them) also decide each category member
	 * (lib/system); NULL: none. Called under mu. */
	int (*cat_filter)(void *ctx, const char *cat, size_t len);
	void *cat_ctx;
};

extern struct ptw_tr_ctl ptw_tr_ctl;

/* tracer.c */
void ptw_tr_ctl_init_once(void);
/* lib/system: stops the running session (not system mode itself). */
int ptw_tr_stop_session(struct ptw_error *err);
/* A sink to add (tracer_sink.c): its writer writes through out.fn, with
 * options wo, the categories 'want' accepts; pname: the process name
 * unless ptw_set_process_name gave one. */
struct ptw_tr_sink_cfg {
	struct ptw_tr_output out;
	const struct ptw_writer_options *wo;
	const char *pname;
	int (*want)(void *ctx, const char *cat, size_t len);
	void *want_ctx;
};
/* lib/system without a file: starts a session whose own writer writes
 * nothing, with its first sink 'first' (*id) in place before any event
 * is logged; 'filter' as above. */
int ptw_tr_start_muted(const struct ptw_config *cfg,
		       int (*filter)(void *ctx, const char *cat, size_t len),
		       void *filter_ctx, const struct ptw_tr_sink_cfg *first,
		       uint64_t *id, struct ptw_error *err);
/* Under no lock: the category filter's answers changed (a system session
 * started or stopped): every category is looked up again. */
void ptw_tr_filter_changed(void);

/* tracer_sink.c: adds a sink to the running session (its writer is
 * opened and set up on the backend thread before this returns; sc->wo
 * stays the caller's until then). *id: the sink's. Events committed
 * after the call began may reach it. 0, PTW_ERR_STATE (no session, or
 * PTW_TR_MAX_SINKS sinks), PTW_ERR_NOMEM, or the writer's error. */
int ptw_tr_sink_add(const struct ptw_tr_sink_cfg *sc, uint64_t *id);
/* Under ctl mutex: a new sink of session tr (NULL: out of memory); its
 * process name is a copy to free (ptw_tr_sink_name_free) once opened. */
struct ptw_tracer *ptw_tr_sink_new_locked(const struct ptw_tracer *tr,
					  const struct ptw_tr_sink_cfg *sc);
void ptw_tr_sink_name_free(struct ptw_tracer *sk);
/* tracer_backend.c: sets sink sk up (writer, first packets, a shadow of
 * each of the n threads of tr->snap) and adds it. 0 or an error (sk is
 * the caller's to free then). */
int ptw_tr_sink_open(struct ptw_tracer *tr, struct ptw_tracer *sk, size_t n);
/* Drains every ring into sink 'id' up to now, writes its last packets,
 * closes and frees it. 0, or its first error. */
int ptw_tr_sink_remove(uint64_t id);
/* The backend's side: does sink tr take record rec of thread shadow th?
 * ptw_tr_sink_wants answers and follows the record's nesting (a BEGIN
 * or an END, whether taken or not) in one: ptw_tr_sink_peek answers
 * only, ptw_tr_sink_step then follows its nesting given the answer. */
int ptw_tr_sink_wants(struct ptw_tracer *tr, struct ptw_tr_thread *th,
		      const struct ptw_i_rec *rec);
int ptw_tr_sink_peek(struct ptw_tracer *tr, const struct ptw_tr_thread *th,
		     const struct ptw_i_rec *rec);
void ptw_tr_sink_step(struct ptw_tr_thread *th, const struct ptw_i_rec *rec,
		      int on);
/* The sink of shadow th starts filtering while th has 'depth' slices
 * open, all of them the sink's. */
void ptw_tr_sink_got_all(struct ptw_tr_thread *th, uint32_t depth);
/* pthread_create for ptw's threads (every asynchronous signal blocked,
 * named 'name'). 0 or an errno. */
int ptw_tr_spawn(pthread_t *th, const char *name,
			 void *(*fn)(void *), void *arg);
/* Under ctl mutex: site->state for a call site of 'kind' in category
 * 'cat' in generation g (see PTW_TR_ST_ALT). */
uint32_t ptw_tr_site_state(const char *cat, uint32_t kind, uint32_t g);

/* tracer_thread.c */
void ptw_tr_thread_unref(struct ptw_tr_thread *t);

/* tracer_tracks.c: the writer track of handle h in this session (made on
 * first use, its parents first; a per-thread counter's under
 * thread_track), or 0: h unknown or not of that kind (counter or not),
 * out of memory or the writer failed. */
uint64_t ptw_tr_track_uuid(struct ptw_tracer *tr, uint64_t thread_track,
			   uint64_t h, int counter);

/* An END on thread t (producer side): closes t's innermost open level.
 * Returns 1 if that level's BEGIN was dropped (the END is dropped too and
 * counted) or skipped (dropped, not counted): the caller writes nothing. Shared by the
 * one-slot path (tracer_event.c) and ptw_tr_write_n. */
static inline int ptw_tr_end_was_lost(struct ptw_i_thread *t)
{
	if (t->depth)
		t->depth--;
	return __builtin_expect(t->lost_levels != 0, 0) && t->depth < 64 &&
	       (t->lost_levels & ((uint64_t)1 << t->depth)) &&
	       ptw_i_end_lost(t);
}

/* An END of category cat whose site is in PTW_TR_ST_ALT: its BEGIN may
 * have been skipped unnoted (its category off and never on before). It
 * closes t's innermost level only if that level is of cat (same pointer
 * or text); beyond the levels whose category is kept, always (the rule of
 * a category on all session long); with no level open, never. */
static inline int ptw_tr_end_belongs(const struct ptw_i_thread *t,
				     const char *cat)
{
	if (!t->depth)
		return 0;
	if (t->depth > PTW_TR_CAT_LEVELS)
		return 1;
	const char *c = t->cats[t->depth - 1];
	return c == cat || (c && cat && __builtin_strcmp(c, cat) == 0);
}

/* A BEGIN of cat was written: one level deeper, of category cat. */
static inline void ptw_tr_push_cat(struct ptw_i_thread *t, const char *cat)
{
	if (t->depth < PTW_TR_CAT_LEVELS)
		t->cats[t->depth] = cat;
	t->depth++;
}

/* A BEGIN of cat was dropped (full ring; ptw_i_reserve_slow made it a
 * lost level): its level's category. Returns 1 (the BEGIN counted). */
static inline int ptw_tr_lost_cat(struct ptw_i_thread *t, const char *cat)
{
	if (t->depth - 1 < PTW_TR_CAT_LEVELS)
		t->cats[t->depth - 1] = cat;
	return 1;
}

/* A BEGIN of cat skipped while its category is off after being on: noted
 * as a level that was not written, so that its END is dropped too.
 * Returns 1 if noted (a scope's guard then ends it), 0 past the levels
 * that can be noted. */
static inline int ptw_tr_note_skip(struct ptw_i_thread *t, const char *cat)
{
	if (t->depth >= PTW_TR_CAT_LEVELS)
		return 0;
	uint64_t bit = (uint64_t)1 << t->depth;
	t->cats[t->depth++] = cat;
	t->lost_levels |= bit;
	t->skip_levels |= bit;
	return 1;
}
void ptw_tr_thread_key_destructor(void *p);

/* tracer_backend.c */
/* A decoded record with its extra slots. */
struct ptw_tr_ev {
	struct ptw_i_rec rec;
	const struct ptw_ring *r;     /* where it was decoded from, at h */
	uint64_t h;
	uint64_t ts;
	const char *name;
	int static_name;
	uint64_t id;
	struct ptw_arg args[PTW_TRACER_MAX_ARGS];
	uint32_t nargs;
	/* A _STACK event's return addresses, innermost first (+1: the NUL
	 * the ring's byte copy appends), and (ptw_tr_decode) their frames */
	uint32_t n_pcs;
	uint64_t pcs[PTW_TRACER_MAX_STACK + 1];
	struct ptw_frame frames[PTW_TRACER_MAX_STACK];
	struct ptw_callstack cs;
	const struct ptw_source_location *src; /* cfg.source_locations */
	/* PTW_ARG_FLOW / PTW_ARG_TERMINATING_FLOW pseudo-arguments */
	uint64_t flows[PTW_TRACER_MAX_ARGS];
	uint64_t tflows[PTW_TRACER_MAX_ARGS];
	uint32_t n_flows, n_tflows;
};

/* A counter's kind (its record's 'name' is its site). */
static inline int ptw_tr_kind_is_counter(uint32_t kind)
{
	return kind == PTW_I_K_COUNTER_INT || kind == PTW_I_K_COUNTER_DOUBLE ||
	       kind == PTW_I_K_TRACK_COUNTER_INT ||
	       kind == PTW_I_K_TRACK_COUNTER_DOUBLE;
}

/* The site of a record: a literal name is the n[] that follows its site
 * (PTW_I_SITEN in tracer.h), a copied name's record and a counter's have
 * the site in 'name'. NULL for records no site wrote (controls, bare
 * ENDs). Valid while the record is in the ring (an unloaded object's
 * records are all written before it goes, tracer_unload.c). */
static inline const struct ptw_i_site *ptw_tr_rec_site(const struct ptw_i_rec *rec)
{
	if (!rec->name)
		return NULL;
	if (rec->name_len || ptw_tr_kind_is_counter(rec->kind))
		return (const struct ptw_i_site *)(const void *)rec->name;
	return (const struct ptw_i_site *)(uintptr_t)((uintptr_t)rec->name -
						       sizeof(struct ptw_i_site));
}
/* name + every argument string, each at most PTW_TRACER_MAX_NAME + NUL */
#define PTW_TR_SCRATCH ((PTW_TRACER_MAX_ARGS + 1) * (PTW_TRACER_MAX_NAME + 1))
/* Decodes the record at slot h of r; its strings go to 'scratch'
 * (PTW_TR_SCRATCH bytes), arguments of unknown type are left out and
 * counted in *unknown. */
void ptw_tr_decode_at(const struct ptw_tracer *tr, const struct ptw_ring *r,
		      uint64_t h, struct ptw_tr_ev *e, char *scratch,
		      uint64_t *unknown);
void *ptw_tr_backend_main(void *arg);
int ptw_tr_backend_setup(struct ptw_tracer *tr, const char *process_name);
void ptw_tr_backend_free(struct ptw_tracer *tr);

/* tracer_open.c: the open slices of every track, for the snapshot
 * prefix (ring mode) */
/* Room for levels 0..d+1 (the prepared runs store level 'depth' for
 * every event). 0 or PTW_ERR_NOMEM. */
int ptw_tr_ostack_room(struct ptw_tr_ostack *st, uint32_t d);
/* Level d of st is a one-slot BEGIN (literal name and category). 0 or
 * PTW_ERR_NOMEM. */
int ptw_tr_open_lit(struct ptw_tr_ostack *st, uint32_t d, const char *name,
		    const char *cat);
/* Level d of st is the BEGIN decoded as e (its slots are copied). */
int ptw_tr_open_copy(struct ptw_tr_ostack *st, uint32_t d,
		     const struct ptw_tr_ev *e);
void ptw_tr_ostack_free(struct ptw_tr_ostack *st);
/* An async BEGIN / END was written on 'track'. 0 or PTW_ERR_NOMEM. */
int ptw_tr_open_async_begin(struct ptw_tracer *tr, uint64_t track,
			    const struct ptw_tr_ev *e);
void ptw_tr_open_async_end(struct ptw_tracer *tr, uint64_t track);
/* A thread retires: its open slices stay described (ring mode) or are
 * freed. 0 or PTW_ERR_NOMEM. */
int ptw_tr_open_retire(struct ptw_tracer *tr, struct ptw_tr_thread *th);
/* The writer's hook (ptw_i_writer_recorder_set_open_fn): every open slice. */
int ptw_tr_open_fill(void *ctx, struct ptw_pb_buf *b);
void ptw_tr_open_free(struct ptw_tracer *tr);

/* tracer_crash.c: the backend's pass lock and the crash handler */
int ptw_tr_pass_begin(void);
void ptw_tr_pass_end(void);
void ptw_tr_backend_tid(void);
int ptw_tr_crash_install(struct ptw_tracer *tr, const char *path);
void ptw_tr_crash_uninstall(void);
void ptw_tr_crash_atfork_child(void);

/* tsc.c: the CPU's counter (lib/arch/) as the clock, PTW_ERR_INVALID
 * if it has none usable, anchored to CLOCK_BOOTTIME if 'boot' (else
 * CLOCK_MONOTONIC). ptw_tr_tsc_set: the conversion for a counter of 'hz'
 * ticks per second that read tsc0 at mono0 (ns of the anchor clock). */
int ptw_tr_tsc_calibrate(struct ptw_tr_tsc *c, int boot);
int ptw_tr_tsc_set(struct ptw_tr_tsc *c, uint64_t hz, uint64_t tsc0,
		   uint64_t mono0);
/* Anchored to BOOTTIME: takes a fresh (ticks, boottime) pair and bends
 * the mapping towards it (ptw_tr_tsc_slew). Backend only, each pass. */
void ptw_tr_tsc_reanchor(struct ptw_tr_tsc *c);
/* The pair 'ticks' read at 'boot_ns': from 'ticks' on, the mapping goes
 * on from where it is (continuous, increasing) with the slope that meets
 * the anchor clock one interval (the time since the last pair) later.
 * 1 if it re-anchored, 0 if the pair came too soon after the last one. */
int ptw_tr_tsc_slew(struct ptw_tr_tsc *c, uint64_t ticks, uint64_t boot_ns);

static inline uint64_t ptw_tr_tsc_seg_ns(uint64_t t0, uint64_t y0,
					 uint64_t mult, uint64_t ticks)
{
	if (__builtin_expect(ticks >= t0, 1))
		return y0 + (uint64_t)(((unsigned __int128)(ticks - t0) *
					mult) >> 32);
	uint64_t back = (uint64_t)(((unsigned __int128)(t0 - ticks) *
				    mult) >> 32);
	return back < y0 ? y0 - back : 0;
}

/* Ticks before the newest piece: the piece they fall in (the oldest one
 * kept, stretched back, for older ones). */
uint64_t ptw_tr_tsc_to_ns_old(const struct ptw_tr_tsc *c, uint64_t ticks);

/* Ticks to ns, inline: the backend converts every event. */
static inline uint64_t ptw_tr_tsc_to_ns(const struct ptw_tr_tsc *c,
					uint64_t ticks)
{
	if (__builtin_expect(ticks >= c->tsc0 || !c->n_old, 1))
		return ptw_tr_tsc_seg_ns(c->tsc0, c->mono0, c->mult, ticks);
	return ptw_tr_tsc_to_ns_old(c, ticks);
}

#endif /* PTW_TRACER_INTERNAL_H */
