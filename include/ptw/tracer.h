/* tracer.h - in-process instrumentation: one-line macros on any thread,
 * per-thread lock-free rings, one backend thread writing a Perfetto trace.
 * SPDX-License-Identifier: Apache-2.0
 *
 *     struct ptw_config cfg = {.output_path = "app.pftrace"};
 *     if (ptw_start(&cfg) != 0) ...;     // ptw_start_ex(&cfg, &err): why
 *     ptw_set_thread_name("main");
 *     {
 *         PTW_SCOPE("io", "load config");        // ends at the closing brace
 *         PTW_COUNTER_INT("mem", "heap bytes", heap_bytes());
 *         PTW_INSTANT_ARGS("io", "opened", PTW_ARG_STR("path", path),
 *                          PTW_ARG_I64("fd", fd));
 *     }
 *     PTW_BEGIN("work", "step");  ...  PTW_END("work");
 *     ptw_stop();
 *
 * Each thread gets its own ring on its first event (the only allocation a
 * producer ever makes) and its own Perfetto sequence and thread track. The
 * backend thread drains every ring, in order per thread, into a
 * struct ptw_writer. Event names and categories must be string literals
 * (they are interned by pointer and never copied); the _DYN variants copy
 * a run-time name into the ring instead.
 *
 * Cost: with tracing stopped every macro is one relaxed load of a global
 * word and one predictable branch. When running, an event costs a clock
 * read plus a few stores into the thread's ring: no lock, malloc or syscall
 * after the thread's first event (a category change makes each thread take
 * a mutex once, on its next event).
 *
 * Thread rule: the macros and ptw_set_thread_name() may be used from any
 * thread at any time, also before ptw_start() and after ptw_stop() (they do
 * nothing then); not from signal handlers (a thread's first event, or its
 * first after a category change, takes a mutex). ptw_start/ptw_stop/ptw_flush/ptw_get_stats and the category
 * and process-name calls are serialised internally and may be called from
 * any thread, but not from a signal handler. ptw_stop() is idempotent and
 * may run from atexit (cfg.stop_at_exit does that for you).
 *
 * fork(): the child never inherits a running tracer. In the child tracing
 * is stopped, the macros do nothing, ptw_stop() returns 0 without touching
 * the parent's file, and ptw_start() may open a new trace. */
#ifndef PTW_TRACER_H
#define PTW_TRACER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ptw/error.h"
#include "ring.h"
#include "ptw/writer.h"

/* ---- configuration ----------------------------------------------------- */

#define PTW_DEFAULT_RING_SLOTS 32768u   /* per thread: 32 B each, 1 MiB */
#define PTW_DEFAULT_DRAIN_US 1000u      /* longest idle sleep of the backend */
#define PTW_TRACER_MAX_ARGS 8u          /* typed arguments per event */
#define PTW_TRACER_MAX_NAME 1024u       /* bytes of a copied (dynamic) string;
					 * longer ones are cut between UTF-8
					 * characters */
#define PTW_TRACER_SLOT_SIZE 32u        /* bytes per ring slot */

#define PTW_DEFAULT_RING_BYTES (64u << 20) /* flight recorder: 64 MiB */

/* Where the encoded trace goes. */
enum ptw_mode {
	/* Written to the output as tracing goes (default). */
	PTW_MODE_STREAM = 0,
	/* Flight recorder: only the most recent ring_bytes of encoded trace
	 * are kept, in memory; ptw_snapshot() writes them as a complete
	 * trace while tracing goes on; ptw_stop() writes them to the output
	 * only if one was named (output_path, or output_fd > 0). */
	PTW_MODE_RING = 1,
};

/* What a producer does when its ring is full. */
enum ptw_overflow {
	/* Drop the event and count it (default). The END of a slice whose
	 * BEGIN was recorded is never dropped: it waits for space, so slice
	 * nesting stays exact; the END of a dropped BEGIN is dropped too. */
	PTW_OVERFLOW_DROP = 0,
	/* Wait (yielding) until the backend frees space: nothing is lost
	 * while tracing runs, but a slow disk slows the program down. */
	PTW_OVERFLOW_WAIT = 1,
};

/* Where event timestamps come from. Trace time is CLOCK_MONOTONIC
 * nanoseconds (CLOCK_BOOTTIME with PTW_CLOCK_BOOT). */
enum ptw_clock {
	/* clock_gettime(CLOCK_MONOTONIC) through the vDSO (default). */
	PTW_CLOCK_MONOTONIC = 0,
	/* The x86-64 time-stamp counter (rdtsc), calibrated against
	 * CLOCK_MONOTONIC at ptw_start() and converted to nanoseconds by the
	 * backend with a fixed-point multiplier; falls back to MONOTONIC if
	 * the CPU has no invariant TSC. The frequency is declared in the
	 * trace (args of the "ptw.clock" instant on the process track). */
	PTW_CLOCK_TSC = 1,
	/* The cheapest clock available: TSC if usable, else MONOTONIC. */
	PTW_CLOCK_FASTEST = 2,
	/* clock_gettime(CLOCK_BOOTTIME) through the vDSO: like MONOTONIC but
	 * counts time suspended; the clock of Perfetto's system traces, so
	 * the trace lines up with them. Trace time is then BOOTTIME ns. */
	PTW_CLOCK_BOOT = 3,
};

/* Zeroed means defaults (except that an output must be named). */
struct ptw_config {
	/* File to create (truncated). NULL: write to output_fd. */
	const char *output_path;
	/* Writable fd used when output_path is NULL (e.g. a pipe). */
	int output_fd;
	/* With output_fd: non-zero to close it at ptw_stop(). */
	int close_fd;
	/* Writer options (checkpoints, compression, flush size); zeroed:
	 * writer defaults. close_fd inside is ignored (use the field above). */
	struct ptw_writer_options writer;
	/* Ring slots per thread, a power of two >= 64. 0: 32768. An event
	 * takes one 32-byte slot; arguments, async/flow ids and copied
	 * strings take more. */
	uint32_t ring_slots;
	/* PTW_OVERFLOW_DROP (0, default) or PTW_OVERFLOW_WAIT. */
	enum ptw_overflow overflow;
	/* PTW_CLOCK_MONOTONIC (0, default), _TSC, _FASTEST or _BOOT. */
	enum ptw_clock clock;
	/* Process track name. NULL: the program's short name. */
	const char *process_name;
	/* Comma-separated categories that start disabled. NULL: none. */
	const char *disabled_categories;
	/* Longest sleep of the idle backend, microseconds. 0: 1000. */
	uint32_t drain_interval_us;
	/* Non-zero: register ptw_stop() with atexit() (once per process). */
	int stop_at_exit;
	/* PTW_MODE_STREAM (0, default) or PTW_MODE_RING. */
	enum ptw_mode mode;
	/* PTW_MODE_RING: bytes of encoded trace kept (>= 64 KiB). 0: 64 MiB.
	 * Allocated at ptw_start(), touched as the ring fills. */
	uint64_t ring_bytes;
	/* Non-NULL: on SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT write what
	 * can be written to this file (ring mode: the window; stream mode:
	 * the encoded packets not yet written to the output), with
	 * async-signal-safe calls only, then restore the previous handler
	 * and re-raise the signal (docs/tracer.md, "Crash dump"). Copied. */
	const char *crash_path;
};

/* Figures of the running session, or of the last one after ptw_stop(). */
struct ptw_stats {
	uint64_t events;     /* events handed to the writer */
	uint64_t dropped;    /* events lost (full ring, or racing ptw_stop) */
	uint64_t invalid;    /* events the backend refused: an END with no
			      * open slice on its thread, an async BEGIN or
			      * END never matched, an argument of a type the
			      * ring does not carry, or a writer error */
	uint64_t waits;      /* times a producer had to wait for ring space */
	uint64_t threads;    /* threads that registered a ring */
	uint64_t bytes_written; /* trace bytes written so far */
	uint64_t tsc_hz;     /* TSC frequency used; 0 with MONOTONIC */
	enum ptw_clock clock;/* PTW_CLOCK_MONOTONIC, _TSC or _BOOT (in use) */
	int running;         /* 1 between ptw_start and ptw_stop */
};

/* ---- lifecycle --------------------------------------------------------- */

/* Starts tracing: opens the output, starts the backend thread and enables
 * the macros. Returns 0, PTW_ERR_STATE if tracing already runs,
 * PTW_ERR_INVALID for a bad config (e.g. ring_slots not a power of two),
 * PTW_ERR_IO/NOMEM if the output or thread cannot be created; with
 * ptw_start_ex, *err (may be NULL) explains. */
int ptw_start(const struct ptw_config *cfg);
int ptw_start_ex(const struct ptw_config *cfg, struct ptw_error *err);

/* Makes every event logged before the call durable in the output: the
 * backend drains all rings and flushes the writer. Returns 0, the writer's
 * sticky error, or PTW_ERR_STATE if tracing is not running. */
int ptw_flush(void);

/* Stops tracing: disables the macros, drains every ring, closes the
 * writer (and the file). Returns 0 or the first error of the session (also
 * in *err when given). Idempotent: returns 0 when not running. Events that
 * race with the stop on other threads may be lost without being counted.
 * Not from a signal handler. */
int ptw_stop_ex(struct ptw_error *err);
int ptw_stop(void);
/* Same, with the void(void) signature atexit() needs. */
void ptw_stop_atexit(void);

/* PTW_MODE_RING: writes the window held now (plus every event logged on
 * any thread before the call) as a complete trace to 'path' (created,
 * truncated) or to 'fd' (left open), while tracing goes on. Returns 0,
 * PTW_ERR_STATE (not running, stopping, or stream mode), PTW_ERR_IO
 * (errno kept) or PTW_ERR_NOMEM. Snapshots are serialised. */
int ptw_snapshot(const char *path);
int ptw_snapshot_fd(int fd);

/* Fills *out (see struct ptw_stats). Returns 0, or PTW_ERR_STATE if no
 * session ever ran. */
int ptw_get_stats(struct ptw_stats *out);

/* 1 while tracing runs. */
int ptw_is_running(void);

/* ---- names and categories ---------------------------------------------- */

/* Names the calling thread's track (copied; longer than 63 bytes is cut
 * at the last UTF-8 character boundary within 63 bytes).
 * The default is the OS thread name. Kept for later sessions while the
 * thread lives. Returns 0, or PTW_ERR_INVALID for NULL. */
int ptw_set_thread_name(const char *name);

/* Renames the process track (copied). Effective at once when running and
 * for later sessions. Returns 0, PTW_ERR_INVALID or PTW_ERR_NOMEM. */
int ptw_set_process_name(const char *name);

/* Enables or disables a category at run time, at once on every thread (the
 * empty category is always enabled). Lasts until the next ptw_start(),
 * which resets the set to cfg->disabled_categories. Returns 0,
 * PTW_ERR_INVALID (NULL) or PTW_ERR_NOMEM. */
int ptw_set_category_enabled(const char *category, int enabled);

/* ---- typed arguments ------------------------------------------------- */

/* An argument of an _ARGS event is the writer's struct ptw_arg (writer.h),
 * built with the macros below: the name must be a string literal, string
 * values are copied into the ring. */

#define PTW_ARG_I64(name, val) \
	((struct ptw_arg){("" name), PTW_ARG_TYPE_INT, {.i = (int64_t)(val)}})
#define PTW_ARG_U64(name, val) \
	((struct ptw_arg){("" name), PTW_ARG_TYPE_UINT, {.u = (uint64_t)(val)}})
#define PTW_ARG_DBL(name, val) \
	((struct ptw_arg){("" name), PTW_ARG_TYPE_DOUBLE, {.d = (double)(val)}})
#define PTW_ARG_BOOL(name, val) \
	((struct ptw_arg){("" name), PTW_ARG_TYPE_BOOL, {.b = !!(val)}})
#define PTW_ARG_STR(name, val) \
	((struct ptw_arg){("" name), PTW_ARG_TYPE_STRING, {.s = (val)}})
/* A pointer, shown as hex (0x...) like the writer's PTW_ARG_TYPE_POINTER. */
#define PTW_ARG_PTR(name, val) \
	((struct ptw_arg){("" name), PTW_ARG_TYPE_POINTER,                        \
			  {.u = (uint64_t)(uintptr_t)(const void *)(val)}})

/* ---- instrumentation macros -------------------------------------------
 * 'cat' and 'name' are string literals. Every macro is a statement. */

/* Slice begin and end on the calling thread's track. Give PTW_END the
 * BEGIN's category (PTW_END("io")) so that disabling the category drops
 * both; PTW_END() is always emitted while tracing runs. */
#define PTW_BEGIN(cat, name) PTW_I_EV1(cat, PTW_I_K_BEGIN, ("" name), 0)
#define PTW_END(...) PTW_I_EV1("" __VA_ARGS__, PTW_I_K_END, NULL, 0)

/* Slice that ends when the enclosing block is left (any exit path). */
#define PTW_SCOPE(cat, name)                                                 \
	PTW_I_SITE(PTW_I_CAT(ptw_i_ss_, __LINE__), cat);                     \
	int PTW_I_CAT(ptw_i_sc_, __LINE__)                                   \
		__attribute__((cleanup(ptw_i_scope_end), unused)) =          \
			ptw_i_ev1(&PTW_I_CAT(ptw_i_ss_, __LINE__),           \
				  PTW_I_K_BEGIN, ("" name), 0)

/* Zero-duration event on the thread's track. */
#define PTW_INSTANT(cat, name) PTW_I_EV1(cat, PTW_I_K_INSTANT, ("" name), 0)

/* With 1..PTW_TRACER_MAX_ARGS PTW_ARG_* arguments. */
#define PTW_BEGIN_ARGS(cat, name, ...) \
	PTW_I_EVN(cat, PTW_I_K_BEGIN, ("" name), NULL, 0, __VA_ARGS__)
#define PTW_INSTANT_ARGS(cat, name, ...) \
	PTW_I_EVN(cat, PTW_I_K_INSTANT, ("" name), NULL, 0, __VA_ARGS__)
/* Arguments merged into the innermost open slice when it ends. */
#define PTW_END_ARGS(cat, ...) \
	PTW_I_EVN(cat, PTW_I_K_END, NULL, NULL, 0, __VA_ARGS__)

/* Run-time names (copied into the ring, interned by content). */
#define PTW_BEGIN_DYN(cat, name_expr) \
	PTW_I_EVN(cat, PTW_I_K_BEGIN, NULL, (name_expr), 0, PTW_I_NOARG)
#define PTW_INSTANT_DYN(cat, name_expr) \
	PTW_I_EVN(cat, PTW_I_K_INSTANT, NULL, (name_expr), 0, PTW_I_NOARG)

/* A sample on the process-wide counter track 'name' (created on first
 * use; its name is the literal). */
#define PTW_COUNTER_INT(cat, name, value) \
	PTW_I_EVC(cat, PTW_I_K_COUNTER_INT, ("" name), (uint64_t)(int64_t)(value))
#define PTW_COUNTER_DOUBLE(cat, name, value) \
	PTW_I_EVC(cat, PTW_I_K_COUNTER_DOUBLE, ("" name), ptw_i_dbl_bits(value))

/* Asynchronous slice 'id' (any 64-bit value, 0 and UINT64_MAX included):
 * begin and end may come from different threads. While an id is open all
 * its events go on one track under the process, named after its first
 * BEGIN (tracks of the same name are merged by the UI), and
 * trace_processor pairs its BEGINs and ENDs in timestamp order, whatever
 * order the backend drained the threads' rings in; a BEGIN of an id that
 * is still open nests inside it. An END or BEGIN never matched by the end
 * of the session counts in ptw_get_stats().invalid. */
#define PTW_ASYNC_BEGIN(cat, name, id) \
	PTW_I_EVN(cat, PTW_I_K_ASYNC_BEGIN, ("" name), NULL, (id), PTW_I_NOARG)
#define PTW_ASYNC_END(cat, id) \
	PTW_I_EVN(cat, PTW_I_K_ASYNC_END, NULL, NULL, (id), PTW_I_NOARG)

/* Flow arrows between events of any threads: an instant 'name' on the
 * calling thread that starts, continues or ends flow 'id'. */
#define PTW_FLOW_START(cat, name, id) \
	PTW_I_EVN(cat, PTW_I_K_FLOW_START, ("" name), NULL, (id), PTW_I_NOARG)
#define PTW_FLOW_STEP(cat, name, id) \
	PTW_I_EVN(cat, PTW_I_K_FLOW_STEP, ("" name), NULL, (id), PTW_I_NOARG)
#define PTW_FLOW_END(cat, name, id) \
	PTW_I_EVN(cat, PTW_I_K_FLOW_END, ("" name), NULL, (id), PTW_I_NOARG)

/* ---- inline implementation, not API -------------------------------- */

/* Record kinds (struct ptw_i_rec.kind). */
enum ptw_i_kind {
	PTW_I_K_BEGIN = 1,
	PTW_I_K_END,
	PTW_I_K_INSTANT,
	PTW_I_K_COUNTER_INT,
	PTW_I_K_COUNTER_DOUBLE,
	PTW_I_K_ASYNC_BEGIN,
	PTW_I_K_ASYNC_END,
	PTW_I_K_FLOW_START,
	PTW_I_K_FLOW_STEP,
	PTW_I_K_FLOW_END,
	PTW_I_K_THREAD_NAME, /* control: name bytes follow */
	PTW_I_K_DROPPED,     /* control: v = events lost just before */
};

/* One ring slot. Extra slots follow when 'extra' > 0: the copied name
 * (name_len - 1 bytes + NUL, padded to slots), then the id (one slot), then per
 * argument one slot (struct ptw_i_arg_rec) followed by its copied string. */
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

/* One per macro call site: its category and whether it is enabled in the
 * current generation (== ptw_i_gen: on; == ~ptw_i_gen: off; else
 * unknown and resolved on the slow path). */
struct ptw_i_site {
	const char *cat;
	_Atomic uint32_t state;
};

/* The public head of a registered thread (the rest is private to lib/).
 * Fields after the ring are touched only by the owning thread, except
 * the atomics, which the backend reads. */
struct ptw_i_thread {
	struct ptw_ring ring;
	_Alignas(PTW_RING_CACHELINE) uint32_t gen; /* generation validated */
	uint32_t depth;          /* open BEGINs (producer view) */
	uint64_t lost_levels;    /* bit d: BEGIN at depth d was dropped */
	uint64_t pending_drops;  /* drops not yet announced in the ring */
	_Atomic uint64_t dropped;/* all drops of this thread (exact) */
};

/* THE GLOBAL STATE of ptw (documented exception to "no globals"):
 * ptw_i_gen is the enable word every macro reads: even = tracing stopped,
 * odd = running; bit 1 = TSC clock, bit 2 = BOOTTIME clock; bits 3.. count
 * generations (start, stop and each category change bump it). ptw_i_self is the calling
 * thread's ring (NULL until its first event). Both live in lib/tracer.c. */
#define PTW_I_GEN_ON 1u
#define PTW_I_GEN_TSC 2u
#define PTW_I_GEN_BOOT 4u
#define PTW_I_GEN_CLOCKS (PTW_I_GEN_TSC | PTW_I_GEN_BOOT)
#define PTW_I_GEN_STEP 8u
extern _Atomic uint32_t ptw_i_gen;
/* initial-exec: one %fs-relative load, no __tls_get_addr call, also when
 * libptw is a shared library loaded at program start (not dlopen). */
extern _Thread_local struct ptw_i_thread *ptw_i_self
	__attribute__((tls_model("initial-exec")));

/* Slow paths (lib/tracer_thread.c). ptw_i_thread_slow resolves the site
 * and registers the thread; it returns NULL when the event must be skipped
 * (tracing stopped, category off), else the thread with 'gen' current. */
struct ptw_i_thread *ptw_i_thread_slow(struct ptw_i_site *site, uint32_t g);
int ptw_i_reserve_slow(struct ptw_i_thread *t, uint32_t kind, uint64_t n,
		       uint64_t *idx);
int ptw_i_emit_n(struct ptw_i_site *site, uint32_t kind, const char *name,
		 const char *dyn_name, uint64_t id,
		 const struct ptw_arg *args, size_t nargs);
uint64_t ptw_i_now_slow(uint32_t g);
int ptw_i_end_lost(struct ptw_i_thread *t);

#define PTW_I_CAT2(a, b) a##b
#define PTW_I_CAT(a, b) PTW_I_CAT2(a, b)
#define PTW_I_SITE(var, cat) \
	static struct ptw_i_site var = {("" cat), 0}
#define PTW_I_NOARG ((struct ptw_arg){NULL, PTW_ARG_TYPE_INT, {.i = 0}})

#define PTW_I_EV1(cat, kind, name, val)                                      \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, cat);                                \
		(void)ptw_i_ev1(&ptw_i_site_, (kind), (name), (val));        \
	} while (0)
#define PTW_I_EVC(cat, kind, name, val)                                      \
	do {                                                                 \
		if (atomic_load_explicit(&ptw_i_gen, memory_order_relaxed) & \
		    PTW_I_GEN_ON) {                                          \
			PTW_I_SITE(ptw_i_site_, cat);                        \
			(void)ptw_i_ev1_on(&ptw_i_site_, (kind), (name),     \
					   (val));                           \
		}                                                            \
	} while (0)
#define PTW_I_EVN(cat_, kind_, name_, dyn_, id_, ...)                        \
	do {                                                                 \
		if (atomic_load_explicit(&ptw_i_gen, memory_order_relaxed) & \
		    PTW_I_GEN_ON) {                                          \
			PTW_I_SITE(ptw_i_site_, cat_);                        \
			const struct ptw_arg ptw_i_a_[] = {__VA_ARGS__};    \
			size_t ptw_i_n_ = sizeof(ptw_i_a_) /                 \
					  sizeof(ptw_i_a_[0]);               \
			if (ptw_i_a_[0].name == NULL)                        \
				ptw_i_n_ = 0;                                \
			(void)ptw_i_emit_n(&ptw_i_site_, (kind_), (name_),   \
					   (dyn_), (uint64_t)(id_), ptw_i_a_,\
					   ptw_i_n_);                        \
		}                                                            \
	} while (0)

static inline uint64_t ptw_i_dbl_bits(double d)
{
	union {
		double d;
		uint64_t u;
	} x;
	x.d = d;
	return x.u;
}

/* A clock reading for generation g: TSC ticks, or ns of the chosen clock. */
static inline uint64_t ptw_i_now(uint32_t g)
{
#if defined(__x86_64__)
	if (g & PTW_I_GEN_TSC)
		return __builtin_ia32_rdtsc();
#endif
#if defined(CLOCK_MONOTONIC) && defined(CLOCK_BOOTTIME)
	struct timespec ts;
	clock_gettime((g & PTW_I_GEN_BOOT) ? CLOCK_BOOTTIME : CLOCK_MONOTONIC,
		      &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#else
	return ptw_i_now_slow(g);
#endif
}

/* Tracing is known to run (generation g): resolve site and thread, then
 * write one slot (lib/tracer_event.c). Returns 1 if a BEGIN/END was
 * recorded or accounted for (the scope guard's state), else 0. Out of
 * line: each macro site inlines only the enable check and a call, so
 * disabled macros do not bloat the code around them. */
int ptw_i_ev1_gen(struct ptw_i_site *site, uint32_t g, uint32_t kind,
		  const char *name, uint64_t val);

/* Tracing runs (g): the site's cached "category off" is checked inline
 * too, the rest is one call. */
static inline __attribute__((always_inline)) int
ptw_i_ev1_site(struct ptw_i_site *site, uint32_t g, uint32_t kind,
	       const char *name, uint64_t val)
{
	uint32_t s = atomic_load_explicit(&site->state, memory_order_relaxed);
	if (__builtin_expect(s == ~g, 0))
		return 0; /* category disabled (cached) */
	return ptw_i_ev1_gen(site, g, kind, name, val);
}

static inline __attribute__((always_inline)) int
ptw_i_ev1_on(struct ptw_i_site *site, uint32_t kind, const char *name,
	     uint64_t val)
{
	uint32_t g = atomic_load_explicit(&ptw_i_gen, memory_order_relaxed);
	if (!(g & PTW_I_GEN_ON))
		return 0;
	return ptw_i_ev1_site(site, g, kind, name, val);
}

/* The whole disabled cost: one relaxed load and one branch (and, with the
 * category off, a second load and branch). */
static inline __attribute__((always_inline)) int
ptw_i_ev1(struct ptw_i_site *site, uint32_t kind, const char *name,
	  uint64_t val)
{
	uint32_t g = atomic_load_explicit(&ptw_i_gen, memory_order_relaxed);
	if (!(g & PTW_I_GEN_ON))
		return 0;
	return ptw_i_ev1_site(site, g, kind, name, val);
}

/* Cleanup handler of PTW_SCOPE: ends the slice if its BEGIN counted. */
static inline void ptw_i_scope_end(int *began)
{
	static struct ptw_i_site end_site = {"", 0};
	if (*began)
		(void)ptw_i_ev1(&end_site, PTW_I_K_END, NULL, 0);
}

#endif /* PTW_TRACER_H */
