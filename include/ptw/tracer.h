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
 * Cost: with tracing stopped, and for a category that is off, every macro
 * is one relaxed load of its call site's word and one predictable branch
 * (a site's first call, and its first after ptw_start() or a category
 * change, goes out of line once to look its category up). (Exception:
 * once a category was on in a session and is then switched off, its
 * BEGINs, scopes and ENDs keep calling the library, which notes a skipped
 * BEGIN so that slices stay exact; their arguments are then evaluated.)
 * When running, an event costs a clock read plus a few stores into the
 * thread's ring: no lock, malloc or syscall after the thread's first
 * event (a category change makes each thread take a mutex once, on its
 * next event).
 *
 * Thread rule: the macros and ptw_set_thread_name() may be used from any
 * thread at any time, also before ptw_start() and after ptw_stop() (they do
 * nothing then); not from signal handlers (a thread's first event, or its
 * first after a category change, takes a mutex). ptw_start/ptw_stop/ptw_flush/ptw_get_stats and the category
 * and process-name calls are serialised internally and may be called from
 * any thread, but not from a signal handler. ptw_stop() is idempotent and
 * may run from atexit (cfg.stop_at_exit does that for you).
 *
 * Structs that grow: struct ptw_config and struct ptw_stats follow the
 * rule atop writer.h (fields only appended, zero = default, start from a
 * zeroed struct; ptw_start and ptw_get_stats pass the sizes this header
 * knows).
 *
 * fork(): the child never inherits a running tracer. In the child tracing
 * is stopped, the macros do nothing, ptw_stop() returns 0 without touching
 * the parent's file, and ptw_start() may open a new trace. */
#ifndef PTW_TRACER_H
#define PTW_TRACER_H

#include <stddef.h>
#include <stdint.h>

#include "ptw/error.h"
#include "ptw/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- configuration ----------------------------------------------------- */

#define PTW_DEFAULT_RING_SLOTS 32768u   /* per thread: 32 B each, 1 MiB */
#define PTW_DEFAULT_DRAIN_US 1000u      /* longest idle sleep of the backend */
#define PTW_TRACER_MAX_ARGS 8u          /* typed arguments per event */
#define PTW_TRACER_MAX_NAME 1024u       /* bytes of a copied (dynamic) string;
					 * longer ones are cut between UTF-8
					 * characters */
#define PTW_TRACER_MAX_STACK 64u        /* frames of a _STACK event */
#define PTW_TRACER_SLOT_SIZE 32u        /* bytes per ring slot */

#define PTW_DEFAULT_RING_BYTES (64u << 20) /* flight recorder: 64 MiB */

/* Where the encoded trace goes. */
enum ptw_mode {
	/* Written to the output as tracing goes (default). */
	PTW_MODE_STREAM = 0,
	/* Flight recorder: only the most recent ring_bytes of encoded trace
	 * are kept, in memory; ptw_snapshot() writes them as a complete
	 * trace while tracing goes on; ptw_stop() writes them to the output
	 * only if one was named (output_path, or output_fd as above). */
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
	 * the CPU has no invariant TSC. The clock and the frequency are
	 * declared in the trace's metadata (trace_processor's metadata
	 * table: "cr-ptw.clock", "cr-ptw.tsc_hz", ...), not as an event.
	 * In system mode (cfg.system) converted to CLOCK_BOOTTIME instead,
	 * re-anchored to it by the backend as the session runs. */
	PTW_CLOCK_TSC = 1,
	/* The cheapest clock available: TSC if usable, else MONOTONIC. */
	PTW_CLOCK_FASTEST = 2,
	/* clock_gettime(CLOCK_BOOTTIME) through the vDSO: like MONOTONIC but
	 * counts time suspended; the clock of Perfetto's system traces, so
	 * the trace lines up with them. Trace time is then BOOTTIME ns. */
	PTW_CLOCK_BOOT = 3,
};

/* Zeroed means defaults, except that an output must be named: a path
 * (output_path), an fd (output_fd > 0, or any fd >= 0 with output_fd_set),
 * or PTW_MODE_RING, where the output is optional (snapshots only).
 * Otherwise ptw_start() fails with PTW_ERR_INVALID: fd 0 is never written
 * unless asked for with output_fd_set. */
struct ptw_config {
	/* File to create (truncated). NULL: write to output_fd. */
	const char *output_path;
	/* Writable fd used when output_path is NULL (e.g. a pipe): counts
	 * when > 0, or when output_fd_set is non-zero. */
	int output_fd;
	/* With output_fd: non-zero to close it at ptw_stop(). */
	int close_fd;
	/* Non-zero: output_fd names the output whatever its value, so that
	 * fd 0 can be asked for (a negative fd is then PTW_ERR_INVALID). */
	int output_fd_set;
	/* Writer options (checkpoints, compression, flush size); NULL:
	 * writer defaults. close_fd inside is ignored (use the field above).
	 * A pointer, not a member, so that both structs can grow (see
	 * "Structs that grow" in writer.h). */
	const struct ptw_writer_options *writer;
	/* Ring slots per thread, a power of two >= 64. 0: 32768. An event
	 * takes one 32-byte slot; arguments, async/flow ids and copied
	 * strings take more. Reserved at a thread's first event; its pages
	 * take memory as the ring reaches them (docs/tracer.md). */
	uint32_t ring_slots;
	/* PTW_OVERFLOW_DROP (0, default) or PTW_OVERFLOW_WAIT. */
	enum ptw_overflow overflow;
	/* PTW_CLOCK_MONOTONIC (0, default), _TSC, _FASTEST or _BOOT. */
	enum ptw_clock clock;
	/* Process track name. NULL: the program's short name. */
	const char *process_name;
	/* Comma-separated categories that start disabled; '*' matches any
	 * run of characters ("debug.*"). NULL: none. See
	 * ptw_set_category_enabled for the rules. */
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
	/* Several machines (docs/tracer.md): non-zero, every packet carries
	 * TracePacket.machine_id = machine_id (overrides writer->machine_id);
	 * with it or machine_name, a SystemInfo packet names the machine
	 * and carries this host's uname(2). Traces opened together (one TAR)
	 * in trace_processor or the UI then keep each machine's processes
	 * apart. 0 / NULL: none (writer->machine_* apply). Every tracer
	 * trace relates its clock to CLOCK_REALTIME, with or without them. */
	uint32_t machine_id;
	const char *machine_name; /* copied at ptw_start */
	/* Non-zero: the backend writes every event by its general path, none
	 * by its faster ways for one-slot BEGIN, END and INSTANT records. The
	 * trace is the same (tests compare the two); for tests and for
	 * telling a fast-path problem from another. */
	int general_path_only;
	/* Comma-separated categories ('*' as in disabled_categories) whose
	 * PTW_BEGIN and PTW_SCOPE events record the calling thread's
	 * callstack, as the _STACK macros do (docs/tracer.md, "Callstacks").
	 * NULL: none. Copied at ptw_start. */
	const char *stack_categories;
	/* System tracing (docs/tracer.md, "System tracing"): non-zero, ptw
	 * is a producer of Perfetto's tracing service (traced) instead of
	 * writing a file: ptw_start() connects to the producer socket
	 * ($PERFETTO_PRODUCER_SOCK_NAME, else the SDK's default path) from a
	 * thread of its own and registers the data source "track_event";
	 * the macros stay off until a session of the service starts it, for
	 * the categories its TrackEventConfig enables (and this config's
	 * disabled_categories and ptw_set_category_enabled() allow). No
	 * service, or one that goes away: ptw_start() still succeeds and
	 * ptw retries in the background. Up to 8 sessions of the service at
	 * once, each with its own categories. An output (output_path/fd,
	 * ring mode) may be named with it: it records from ptw_start every
	 * category this config enables, beside the service's sessions. The
	 * clock is CLOCK_BOOTTIME (the service's), also for that output:
	 * read by the producers, or with PTW_CLOCK_TSC / _FASTEST read from
	 * the CPU's counter and converted to it by the backend, the same
	 * way for that output and every session; compression off for the
	 * service. */
	int system;
	/* System mode: comma-separated categories declared to the service
	 * (its TrackEventDescriptor, what the UI offers); more with
	 * ptw_declare_category(). NULL: none. Copied. */
	const char *categories;
	/* System mode: the shared memory buffer asked of the service, KiB
	 * (the service may give less). 0: 2048. */
	uint32_t system_buffer_kb;
	/* Non-zero: each slice, instant, async BEGIN and flow event carries
	 * its macro's call site (TrackEvent.source_location_iid, interned
	 * per thread), which trace_processor shows as the slice's args
	 * source.file_name, source.function_name and source.line_number.
	 * The producer's cost is the same (the site is static); the trace
	 * grows by the bytes docs/tracer.md measures. Log lines (PTW_LOG)
	 * always carry theirs. 0: off (default). */
	int source_locations;
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
	/* System mode: trace packets the service's shared memory buffer had
	 * no room for, or left out after such a loss until the sequence's
	 * next checkpoint (trace_processor shows the loss on the sequence) */
	uint64_t system_lost;
};

/* ---- lifecycle --------------------------------------------------------- */

/* Starts tracing: opens the output, starts the backend thread and enables
 * the macros. Returns 0, PTW_ERR_STATE if tracing already runs,
 * PTW_ERR_INVALID for a bad config (e.g. ring_slots not a power of two),
 * PTW_ERR_IO/NOMEM if the output or thread cannot be created; with
 * ptw_start_ex, *err (may be NULL) explains. */
static inline int ptw_start(const struct ptw_config *cfg);
static inline int ptw_start_ex(const struct ptw_config *cfg,
			       struct ptw_error *err);

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
static inline int ptw_get_stats(struct ptw_stats *out);

/* 1 while tracing runs. */
int ptw_is_running(void);

/* ---- names and categories ---------------------------------------------- */

/* Names the calling thread's track (copied; longer than 63 bytes is cut
 * at the last UTF-8 character boundary within 63 bytes).
 * The default is the OS thread name. Kept for later sessions while the
 * thread lives (in a child after fork() too). Returns 0, or
 * PTW_ERR_INVALID for NULL. */
int ptw_set_thread_name(const char *name);

/* Renames the process track (copied). Effective at once when running and
 * for later sessions. Returns 0, PTW_ERR_INVALID or PTW_ERR_NOMEM. */
int ptw_set_process_name(const char *name);

/* Enables or disables a category at run time, at once on every thread (the
 * empty category is always enabled). 'category' may be a pattern where
 * '*' matches any run of characters ("debug.*", "*.verbose", "*"), or a
 * comma-separated list of names and patterns, applied in order. Rules
 * apply in the order of the calls: a category is what the latest call
 * (or cfg->disabled_categories item, which come first) matching it says,
 * whether that was its exact name or a pattern, and on if none matches;
 * so ptw_set_category_enabled("debug.*", 0) then ("debug.io", 1) leaves
 * "debug.io" on, and a later ("debug.*", 0) turns it off again. Rules
 * also decide categories first used after the call. An event's category
 * may itself be a group "a,b" (as in the Perfetto SDK): on if any of its
 * members is. Lasts until the next ptw_start(), which resets the rules to
 * cfg->disabled_categories. Switching a category while slices of it are
 * open keeps them exact (PTW_END below). Returns 0, PTW_ERR_INVALID
 * (NULL) or PTW_ERR_NOMEM. */
int ptw_set_category_enabled(const char *category, int enabled);

/* System mode: declares category 'name' to the tracing service, with a
 * 'description' and comma-separated 'tags' (both may be NULL; the tags
 * "slow" and "debug" are off unless a session's config names tags, as
 * in the Perfetto SDK). Declared categories are listed to the service at
 * once when connected (UpdateDataSource) and at each (re)connection, and
 * their tags count in sessions' enabled_tags / disabled_tags. Returns 0,
 * PTW_ERR_INVALID (NULL or empty name) or PTW_ERR_NOMEM. Any time, any
 * thread (not a signal handler); kept across ptw_start/ptw_stop. */
int ptw_declare_category(const char *name, const char *description,
			 const char *tags);

/* ---- the sized entry points behind the wrappers -----------------------
 * (the rule "Structs that grow" in writer.h: struct ptw_config, its
 * writer options and struct ptw_stats only grow at their end; call the
 * wrappers above, which pass the sizes this header knows) */

int ptw_start_sized(const struct ptw_config *cfg, size_t cfg_size,
		    size_t writer_size, struct ptw_error *err);
int ptw_get_stats_sized(struct ptw_stats *out, size_t out_size);

static inline int ptw_start(const struct ptw_config *cfg)
{
	return ptw_start_sized(cfg, sizeof(struct ptw_config),
			       sizeof(struct ptw_writer_options), NULL);
}
static inline int ptw_start_ex(const struct ptw_config *cfg,
			       struct ptw_error *err)
{
	return ptw_start_sized(cfg, sizeof(struct ptw_config),
			       sizeof(struct ptw_writer_options), err);
}
static inline int ptw_get_stats(struct ptw_stats *out)
{
	return ptw_get_stats_sized(out, sizeof(struct ptw_stats));
}

/* ---- typed arguments ------------------------------------------------- */

/* An argument of an _ARGS event is the writer's struct ptw_arg (writer.h),
 * built with the macros below (the same in C and C++): the name must be a
 * string literal; string values are copied into the ring (a C++
 * std::string's c_str() is fine). */

#define PTW_ARG_I64(name, val) ptw_i_arg_i64(PTW_I_LIT(name), (int64_t)(val))
#define PTW_ARG_U64(name, val) ptw_i_arg_u64(PTW_I_LIT(name), (uint64_t)(val))
#define PTW_ARG_DBL(name, val) ptw_i_arg_dbl(PTW_I_LIT(name), (double)(val))
#define PTW_ARG_BOOL(name, val) ptw_i_arg_bool(PTW_I_LIT(name), !!(val))
#define PTW_ARG_STR(name, val) ptw_i_arg_str(PTW_I_LIT(name), (val))
/* A pointer, shown as hex (0x...) like the writer's PTW_ARG_TYPE_POINTER. */
#define PTW_ARG_PTR(name, val) \
	ptw_i_arg_ptr(PTW_I_LIT(name), (const void *)(val))

/* ---- instrumentation macros -------------------------------------------
 * 'cat' and 'name' are string literals (a run-time string there stops the
 * build with a note naming PTW_NAME_MUST_BE_A_LITERAL__USE_THE_DYN_FORM:
 * use the _DYN or _FMT form). The macros mean the same and cost the same
 * in C and C++.
 *
 * Where they may stand: every macro except the PTW_SCOPE family is one
 * statement (usable as the body of an if, after a label, ...). PTW_SCOPE,
 * PTW_SCOPE_ARGS, PTW_SCOPE_DYN, PTW_SCOPE_DYN_ARGS and PTW_SCOPE_FMT are
 * declarations: they
 * begin a slice that ends when the enclosing block is left, so they stand
 * in a block where a declaration may (any number of them, also on one line
 * or from one macro expansion). In C (before C23) a declaration may not
 * directly follow a label: write `case 1: { PTW_SCOPE(...); ... }`; as the
 * body of an if or loop, give it braces (its block is then the body). In
 * C++ they are declarations of a guard object and may stand wherever a
 * declaration may (the slice ends with the guard). */

/* Slice begin and end on the calling thread's track. Give PTW_END the
 * BEGIN's category (PTW_END("io")): an END closes the slice whose BEGIN
 * was recorded, also when its category was switched off in between, and
 * is dropped with a BEGIN that was not, also when its category was
 * switched on in between (on any thread); PTW_END() closes the innermost
 * slice whatever its category. Exact for the first 64 nested levels of a
 * thread; deeper, an END of a category that was off at some time in the
 * session closes the innermost slice. */
#define PTW_BEGIN(cat, name) PTW_I_EV1N(cat, PTW_I_K_BEGIN, name)
#define PTW_END(...) PTW_I_EV1("" __VA_ARGS__, PTW_I_K_END, NULL)

/* Slice that ends when the enclosing block is left (any exit path; in C++
 * also by an exception): a cleanup attribute in C, a guard object's
 * destructor in C++. */
#define PTW_SCOPE(cat, name) \
	PTW_I_SCOPE1(PTW_I_CAT(ptw_i_scope_, __COUNTER__), cat, name)

/* Zero-duration event on the thread's track. */
#define PTW_INSTANT(cat, name) PTW_I_EV1N(cat, PTW_I_K_INSTANT, name)

/* With 1..PTW_TRACER_MAX_ARGS PTW_ARG_* arguments (evaluated only while
 * tracing runs). */
#define PTW_BEGIN_ARGS(cat, name, ...) \
	PTW_I_EVNN(cat, PTW_I_K_BEGIN, name, 0, __VA_ARGS__)
#define PTW_INSTANT_ARGS(cat, name, ...) \
	PTW_I_EVNN(cat, PTW_I_K_INSTANT, name, 0, __VA_ARGS__)
#define PTW_SCOPE_ARGS(cat, name, ...)                                      \
	PTW_I_SCOPENN(PTW_I_CAT(ptw_i_scope_, __COUNTER__), cat, name,       \
		      __VA_ARGS__)
/* Arguments merged into the innermost open slice when it ends. */
#define PTW_END_ARGS(cat, ...) \
	PTW_I_EVN(cat, PTW_I_K_END, NULL, NULL, 0, __VA_ARGS__)

/* Run-time names (a const char *, copied into the ring, interned by
 * content; a C++ std::string's c_str() is fine). */
#define PTW_BEGIN_DYN(cat, name_expr) \
	PTW_I_EV0(cat, PTW_I_K_BEGIN, NULL, (name_expr), 0)
#define PTW_INSTANT_DYN(cat, name_expr) \
	PTW_I_EV0(cat, PTW_I_K_INSTANT, NULL, (name_expr), 0)
#define PTW_SCOPE_DYN(cat, name_expr)                                       \
	PTW_I_SCOPED(PTW_I_CAT(ptw_i_scope_, __COUNTER__), cat, (name_expr))
/* Run-time names with 1..PTW_TRACER_MAX_ARGS PTW_ARG_* arguments. */
#define PTW_BEGIN_DYN_ARGS(cat, name_expr, ...) \
	PTW_I_EVN(cat, PTW_I_K_BEGIN, NULL, (name_expr), 0, __VA_ARGS__)
#define PTW_INSTANT_DYN_ARGS(cat, name_expr, ...) \
	PTW_I_EVN(cat, PTW_I_K_INSTANT, NULL, (name_expr), 0, __VA_ARGS__)
#define PTW_SCOPE_DYN_ARGS(cat, name_expr, ...)                             \
	PTW_I_SCOPEN(PTW_I_CAT(ptw_i_scope_, __COUNTER__), cat, NULL,        \
		     (name_expr), __VA_ARGS__)

/* With the calling thread's callstack (lib/stack/): the return addresses
 * of up to PTW_TRACER_MAX_STACK frames, from the function that uses the
 * macro outwards, read by walking frame pointers (build the code whose
 * frames you want with -fno-omit-frame-pointer; a frame without one ends
 * the walk) and copied into the ring (8 bytes a frame). The backend names
 * them from the symbol tables (.symtab, else .dynsym) of the loaded ELF
 * objects and writes them interned with their mappings and build ids, so
 * that trace_processor shows them in stack_profile_callsite / _frame and
 * an unnamed frame can be symbolized later (docs/tracer.md,
 * "Callstacks"). */
#define PTW_BEGIN_STACK(cat, name)                                          \
	PTW_I_EVS(cat, PTW_I_K_BEGIN, PTW_I_LIT(name))
#define PTW_INSTANT_STACK(cat, name)                                        \
	PTW_I_EVS(cat, PTW_I_K_INSTANT, PTW_I_LIT(name))
#define PTW_SCOPE_STACK(cat, name)                                          \
	PTW_I_SCOPES(PTW_I_CAT(ptw_i_scope_, __COUNTER__), cat, PTW_I_LIT(name))

/* printf-style names: PTW_BEGIN_FMT("io", "read %s", path). The name is
 * formatted on the calling thread, only while tracing runs and the
 * category is on, into a stack buffer and copied into the ring like a
 * _DYN name (at most PTW_TRACER_MAX_NAME bytes). Costs the vsnprintf on
 * top of a _DYN event (bench_tracer: producer_ns_instant_fmt_1t). */
#define PTW_BEGIN_FMT(cat, ...) PTW_I_EVF(cat, PTW_I_K_BEGIN, __VA_ARGS__)
#define PTW_INSTANT_FMT(cat, ...) PTW_I_EVF(cat, PTW_I_K_INSTANT, __VA_ARGS__)
#define PTW_SCOPE_FMT(cat, ...)                                             \
	PTW_I_SCOPEF(PTW_I_CAT(ptw_i_scope_, __COUNTER__), cat, __VA_ARGS__)

/* A sample on the process-wide counter track 'name' (created on first
 * use; its name is the literal, or the run-time string of the _DYN forms:
 * samples of the same text share one track). */
#define PTW_COUNTER_INT(cat, name, value) \
	PTW_I_EVC(cat, PTW_I_K_COUNTER_INT, PTW_I_LIT(name), \
		  (uint64_t)(int64_t)(value))
#define PTW_COUNTER_DOUBLE(cat, name, value) \
	PTW_I_EVC(cat, PTW_I_K_COUNTER_DOUBLE, PTW_I_LIT(name), \
		  ptw_i_dbl_bits(value))
#define PTW_COUNTER_INT_DYN(cat, name_expr, value) \
	PTW_I_EV0(cat, PTW_I_K_COUNTER_INT, NULL, (name_expr), \
		  (uint64_t)(int64_t)(value))
#define PTW_COUNTER_DOUBLE_DYN(cat, name_expr, value) \
	PTW_I_EV0(cat, PTW_I_K_COUNTER_DOUBLE, NULL, (name_expr), \
		  ptw_i_dbl_bits(value))
/* printf-style track names, the value first:
 * PTW_COUNTER_INT_FMT("mem", bytes, "heap %d", arena). */
#define PTW_COUNTER_INT_FMT(cat, value, ...) \
	PTW_I_EVFI(cat, PTW_I_K_COUNTER_INT, (uint64_t)(int64_t)(value), \
		   __VA_ARGS__)
#define PTW_COUNTER_DOUBLE_FMT(cat, value, ...) \
	PTW_I_EVFI(cat, PTW_I_K_COUNTER_DOUBLE, ptw_i_dbl_bits(value), \
		   __VA_ARGS__)

/* Asynchronous slice 'id' (any 64-bit value, 0 and UINT64_MAX included):
 * begin and end may come from different threads. While an id is open all
 * its events go on one track under the process, named after its first
 * BEGIN (tracks of the same name are merged by the UI), and
 * trace_processor pairs its BEGINs and ENDs in timestamp order, whatever
 * order the backend drained the threads' rings in; a BEGIN of an id that
 * is still open nests inside it. An END or BEGIN never matched by the end
 * of the session counts in ptw_get_stats().invalid. */
#define PTW_ASYNC_BEGIN(cat, name, id) \
	PTW_I_EV0N(cat, PTW_I_K_ASYNC_BEGIN, name, (id))
#define PTW_ASYNC_BEGIN_ARGS(cat, name, id, ...) \
	PTW_I_EVNN(cat, PTW_I_K_ASYNC_BEGIN, name, (id), __VA_ARGS__)
#define PTW_ASYNC_END(cat, id) \
	PTW_I_EV0(cat, PTW_I_K_ASYNC_END, NULL, NULL, (id))
/* Run-time and printf-style names (the id before the format). */
#define PTW_ASYNC_BEGIN_DYN(cat, name_expr, id) \
	PTW_I_EV0(cat, PTW_I_K_ASYNC_BEGIN, NULL, (name_expr), (id))
#define PTW_ASYNC_BEGIN_DYN_ARGS(cat, name_expr, id, ...) \
	PTW_I_EVN(cat, PTW_I_K_ASYNC_BEGIN, NULL, (name_expr), (id), \
		  __VA_ARGS__)
#define PTW_ASYNC_BEGIN_FMT(cat, id, ...) \
	PTW_I_EVFI(cat, PTW_I_K_ASYNC_BEGIN, (uint64_t)(id), __VA_ARGS__)
/* As a slice: the END of an id whose BEGIN was recorded is written also
 * when the category was switched off in between; one whose BEGIN was
 * skipped (category off) pairs with no BEGIN logged before it and, left
 * unpaired, is no error. (Exception: an END of an id while another BEGIN
 * of the same id is open pairs with that one.) */

/* Flow arrows between events of any threads: an instant 'name' on the
 * calling thread that starts, continues or ends flow 'id'. */
#define PTW_FLOW_START(cat, name, id) \
	PTW_I_EV0N(cat, PTW_I_K_FLOW_START, name, (id))
#define PTW_FLOW_STEP(cat, name, id) \
	PTW_I_EV0N(cat, PTW_I_K_FLOW_STEP, name, (id))
#define PTW_FLOW_END(cat, name, id) \
	PTW_I_EV0N(cat, PTW_I_K_FLOW_END, name, (id))
#define PTW_FLOW_START_DYN(cat, name_expr, id) \
	PTW_I_EV0(cat, PTW_I_K_FLOW_START, NULL, (name_expr), (id))
#define PTW_FLOW_STEP_DYN(cat, name_expr, id) \
	PTW_I_EV0(cat, PTW_I_K_FLOW_STEP, NULL, (name_expr), (id))
#define PTW_FLOW_END_DYN(cat, name_expr, id) \
	PTW_I_EV0(cat, PTW_I_K_FLOW_END, NULL, (name_expr), (id))
#define PTW_FLOW_START_FMT(cat, id, ...) \
	PTW_I_EVFI(cat, PTW_I_K_FLOW_START, (uint64_t)(id), __VA_ARGS__)
#define PTW_FLOW_STEP_FMT(cat, id, ...) \
	PTW_I_EVFI(cat, PTW_I_K_FLOW_STEP, (uint64_t)(id), __VA_ARGS__)
#define PTW_FLOW_END_FMT(cat, id, ...) \
	PTW_I_EVFI(cat, PTW_I_K_FLOW_END, (uint64_t)(id), __VA_ARGS__)

/* Log lines: PTW_LOG(PTW_LOG_PRIO_WARN, "disk %d%% full", pct) puts
 * the formatted text on the calling thread's track as a log message
 * (TrackEvent.log_message, an INSTANT "LogMessage" of category "log",
 * as Chrome writes them) with its priority (enum ptw_log_prio in
 * writer.h) and the call site's __FILE__, __func__ and __LINE__.
 * trace_processor lists it in android_logs (ts, thread, prio, tag
 * "file:line", msg), the UI in its log panel. Formatted on the calling
 * thread as the _FMT names are (only while tracing runs and category
 * "log" is on; at most PTW_TRACER_MAX_NAME bytes, cut between UTF-8
 * characters) and copied into the ring; PTW_LOG_DYN copies a run-time
 * string (a C++ std::string's c_str() is fine). Only the priority's low
 * 3 bits are kept (0..7). Switch them off with
 * ptw_set_category_enabled("log", 0). */
#define PTW_LOG(prio, ...) PTW_I_LOGF((prio), __VA_ARGS__)
#define PTW_LOG_DYN(prio, msg_expr) PTW_I_LOGD((prio), (msg_expr))

/* ---- tracks of your own -----------------------------------------------
 * A queue, a device, a connection: a named track under the process (or
 * under another such track), on which any thread logs slices, instants or
 * counter samples:
 *
 *     static uint64_t q;                   // once, e.g. at start-up:
 *     q = ptw_track_new("queue 0", 0);
 *     PTW_TRACK_BEGIN("io", q, "request"); ... PTW_TRACK_END("io", q);
 *     uint64_t depth = ptw_counter_track_new("queue depth", "items", q, 0);
 *     PTW_TRACK_COUNTER_INT("io", depth, n);
 *
 * The handles are the process's, valid in every session (before
 * ptw_start() too): the backend creates a track's descriptor in a session
 * on its first event there. At most PTW_MAX_TRACKS tracks. The calls take
 * the tracer's mutex (not on a hot path: make the handle once). Returns
 * the handle (> 0), or 0: NULL name, unknown parent or a counter track as
 * parent, PTW_MAX_TRACKS reached, out of memory. */
#define PTW_MAX_TRACKS 4096u
uint64_t ptw_track_new(const char *name, uint64_t parent);
/* A counter track, with its unit shown after the values (unit_name NULL:
 * none). per_thread non-zero: each thread that samples it gets its own
 * counter track of that name under its thread (parent must be 0). */
uint64_t ptw_counter_track_new(const char *name, const char *unit_name,
			       uint64_t parent, int per_thread);

/* Slices on a track: a BEGIN and its END may come from different threads;
 * trace_processor pairs them by timestamp on the track (they must nest
 * there, as on a thread). A handle that is not a slice track counts the
 * event in ptw_get_stats().invalid. */
#define PTW_TRACK_BEGIN(cat, track, name) \
	PTW_I_EV0N(cat, PTW_I_K_TRACK_BEGIN, name, (track))
#define PTW_TRACK_BEGIN_ARGS(cat, track, name, ...) \
	PTW_I_EVNN(cat, PTW_I_K_TRACK_BEGIN, name, (track), __VA_ARGS__)
#define PTW_TRACK_BEGIN_DYN(cat, track, name_expr) \
	PTW_I_EV0(cat, PTW_I_K_TRACK_BEGIN, NULL, (name_expr), (track))
#define PTW_TRACK_BEGIN_FMT(cat, track, ...) \
	PTW_I_EVFI(cat, PTW_I_K_TRACK_BEGIN, (uint64_t)(track), __VA_ARGS__)
#define PTW_TRACK_END(cat, track) \
	PTW_I_EV0(cat, PTW_I_K_TRACK_END, NULL, NULL, (track))
#define PTW_TRACK_END_ARGS(cat, track, ...) \
	PTW_I_EVN(cat, PTW_I_K_TRACK_END, NULL, NULL, (track), __VA_ARGS__)
#define PTW_TRACK_INSTANT(cat, track, name) \
	PTW_I_EV0N(cat, PTW_I_K_TRACK_INSTANT, name, (track))
#define PTW_TRACK_INSTANT_ARGS(cat, track, name, ...) \
	PTW_I_EVNN(cat, PTW_I_K_TRACK_INSTANT, name, (track), __VA_ARGS__)
#define PTW_TRACK_INSTANT_DYN(cat, track, name_expr) \
	PTW_I_EV0(cat, PTW_I_K_TRACK_INSTANT, NULL, (name_expr), (track))
#define PTW_TRACK_INSTANT_FMT(cat, track, ...) \
	PTW_I_EVFI(cat, PTW_I_K_TRACK_INSTANT, (uint64_t)(track), __VA_ARGS__)
/* A sample on a counter track of ptw_counter_track_new ('value' is
 * evaluated only while the site is live). */
#define PTW_TRACK_COUNTER_INT(cat, track, value) \
	PTW_I_EVTC(cat, PTW_I_K_TRACK_COUNTER_INT, (track), \
		   (uint64_t)(int64_t)(value))
#define PTW_TRACK_COUNTER_DOUBLE(cat, track, value) \
	PTW_I_EVTC(cat, PTW_I_K_TRACK_COUNTER_DOUBLE, (track), \
		   ptw_i_dbl_bits(value))

/* Flows on slices: a pseudo-argument of any _ARGS macro (BEGIN, SCOPE,
 * END, INSTANT, TRACK_BEGIN, ...) that makes the event's slice start or
 * continue flow 'id' (PTW_ARG_FLOW), or end it
 * (PTW_ARG_TERMINATING_FLOW); on an END, the slice it ends. The arrows
 * then join slices, as TRACE_EVENT's perfetto::Flow and TerminatingFlow
 * do, without an instant of their own: PTW_SCOPE_ARGS("net", "send",
 * PTW_ARG_FLOW(req)) on one thread, PTW_SCOPE_ARGS("net", "handle",
 * PTW_ARG_TERMINATING_FLOW(req)) on another. Each counts as one of the
 * event's PTW_TRACER_MAX_ARGS arguments. */
#define PTW_ARG_FLOW(id) ptw_i_arg_flow(PTW_I_ARG_FLOW, (uint64_t)(id))
#define PTW_ARG_TERMINATING_FLOW(id) \
	ptw_i_arg_flow(PTW_I_ARG_TERMINATING_FLOW, (uint64_t)(id))

/* ---- inline implementation: NOT API ----------------------------------
 * What the macros above expand to. The names below (ptw_i_*, PTW_I_*) may
 * change in any release; the library exports the ptw_i_* functions only
 * because the macros call them. */

/* Record kinds (lib/tracer/tracer_internal.h has the record layout). */
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
	PTW_I_K_LOG,         /* log message: copied text, id = site | prio */
	PTW_I_K_TRACK_BEGIN, /* on a track of ptw_track_new: id = handle */
	PTW_I_K_TRACK_END,
	PTW_I_K_TRACK_INSTANT,
	PTW_I_K_TRACK_COUNTER_INT,    /* id = handle, v = value */
	PTW_I_K_TRACK_COUNTER_DOUBLE,
};

/* Argument types the tracer carries besides enum ptw_arg_type: a flow id
 * on a slice's BEGIN or END or on an instant (PTW_ARG_FLOW,
 * PTW_ARG_TERMINATING_FLOW). */
#define PTW_I_ARG_FLOW 0x40
#define PTW_I_ARG_TERMINATING_FLOW 0x41

/* One per macro call site. The macros test 'live' inline (see
 * ptw_i_live); everything else is read out of line. 'live' is 0 while the
 * site is known to be off (tracing stopped, or its category off), else
 * the call goes out of line: PTW_I_SITE_CHECK (the static initial value,
 * and what the library writes into every site it knows at ptw_start() and
 * at each category change) makes it look its category up, and the
 * library then keeps the site in its list of sites and sets the word.
 * 'name' and 'kind' are the event's for the one-slot macros (PTW_BEGIN,
 * PTW_END, PTW_INSTANT, the counters), so that their call passes the site
 * only; NULL and 0 for the others. 'state' caches whether the category is
 * on in the current generation, 'known' whether the library lists the
 * site (lib/, under its mutex). 'live' and 'state' are accessed with
 * __atomic builtins only (valid in C and C++). */
#define PTW_I_SITE_CHECK 1u
struct ptw_i_site {
	uint32_t live;
	uint32_t kind;
	const char *cat;
	const char *name;
	uint32_t state;
	uint32_t known;
	/* The call site (__FILE__, __func__, __LINE__): written with the
	 * site's events when cfg.source_locations is set, and with every
	 * log line; the writer interns it by its address. */
	struct ptw_source_location loc;
};

/* Out-of-line producer paths (lib/tracer/tracer_event.c, lib/tracer/tracer_thread.c),
 * called only when ptw_i_live(site). Each returns 1 if a BEGIN was
 * recorded or accounted for (the scope guard's state), else 0. */
int ptw_i_ev(struct ptw_i_site *site);
int ptw_i_ev_val(struct ptw_i_site *site, uint64_t val);
int ptw_i_emit_n(struct ptw_i_site *site, uint32_t kind, const char *name,
		 const char *dyn_name, uint64_t id,
		 const struct ptw_arg *args, size_t nargs);
int ptw_i_emit_fmt(struct ptw_i_site *site, uint32_t kind, const char *fmt,
		   ...) __attribute__((format(printf, 3, 4)));
/* The _STACK macros: captures the caller's stack (lib/stack/). */
int ptw_i_emit_stack(struct ptw_i_site *site, uint32_t kind,
		     const char *name);
/* A sample on a counter track of ptw_counter_track_new. */
int ptw_i_emit_val(struct ptw_i_site *site, uint32_t kind, uint64_t track,
		   uint64_t val);
/* The same with an id (async, flow) or a counter's value bits. */
int ptw_i_emit_fmt_id(struct ptw_i_site *site, uint32_t kind, uint64_t id,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A string literal, or a build error whose notes name this macro. */
#define PTW_I_LIT(s) PTW_NAME_MUST_BE_A_LITERAL__USE_THE_DYN_FORM(s)
#define PTW_NAME_MUST_BE_A_LITERAL__USE_THE_DYN_FORM(s) ("" s "")

#define PTW_I_CAT2(a, b) a##b
#define PTW_I_CAT(a, b) PTW_I_CAT2(a, b)
/* Every site knows where it is (__func__: an array of static storage, so
 * the initializer stays constant; in C++ the sites of scopes are in
 * statement expressions, not lambdas, for the same __func__). */
#define PTW_I_LOC {__FILE__, __func__, __LINE__}
#define PTW_I_SITE(var, cat, name, kind) \
	static struct ptw_i_site var = {PTW_I_SITE_CHECK, (kind),            \
					PTW_I_LIT(cat), (name), 0, 0, PTW_I_LOC}
/* A site whose literal name is copied right after it (var.s is the
 * site, var.n its name): the name pointer a record carries then also
 * gives the backend its site (lib/tracer: ptw_tr_site_of_name), so that
 * an event's call site costs the producer nothing more. */
#define PTW_I_SITEN(var, cat, name, kind)                                    \
	static struct {                                                      \
		struct ptw_i_site s;                                         \
		char n[sizeof(PTW_I_LIT(name))];                             \
	} var = {{PTW_I_SITE_CHECK, (kind), PTW_I_LIT(cat), var.n, 0, 0,     \
		  PTW_I_LOC},                                                \
		 "" name ""}

/* The whole disabled cost of a macro: a load of the site's word and one
 * branch, for tracing stopped and for a category found off alike (the
 * Perfetto SDK's check is the same: one load of its category's state). */
static inline __attribute__((always_inline)) int
ptw_i_live(const struct ptw_i_site *site)
{
	return __builtin_expect(__atomic_load_n(&site->live, __ATOMIC_RELAXED) !=
					0,
				0);
}

/* The argument constructors: the same code in C and C++ (no compound
 * literals). */
#define PTW_I_ARG_CTOR(fn, ctype, arg_type, member)                          \
	static inline struct ptw_arg fn(const char *n, ctype v)              \
	{                                                                    \
		struct ptw_arg a;                                            \
		a.name = n;                                                  \
		a.type = arg_type;                                           \
		a.v.member = v;                                              \
		return a;                                                    \
	}
PTW_I_ARG_CTOR(ptw_i_arg_i64, int64_t, PTW_ARG_TYPE_INT, i)
PTW_I_ARG_CTOR(ptw_i_arg_u64, uint64_t, PTW_ARG_TYPE_UINT, u)
PTW_I_ARG_CTOR(ptw_i_arg_dbl, double, PTW_ARG_TYPE_DOUBLE, d)
PTW_I_ARG_CTOR(ptw_i_arg_bool, int, PTW_ARG_TYPE_BOOL, b)
PTW_I_ARG_CTOR(ptw_i_arg_str, const char *, PTW_ARG_TYPE_STRING, s)
static inline struct ptw_arg ptw_i_arg_ptr(const char *n, const void *v)
{
	struct ptw_arg a = ptw_i_arg_u64(n, (uint64_t)(uintptr_t)v);
	a.type = PTW_ARG_TYPE_POINTER;
	return a;
}

static inline struct ptw_arg ptw_i_arg_flow(int type, uint64_t id)
{
	struct ptw_arg a = ptw_i_arg_u64(0, id);
	a.type = (enum ptw_arg_type)type;
	return a;
}

static inline uint64_t ptw_i_dbl_bits(double d)
{
	uint64_t u;
	__builtin_memcpy(&u, &d, sizeof(u));
	return u;
}

/* Ends the slice of a scope whose BEGIN counted. */
static inline void ptw_i_scope_end_now(void)
{
	static struct ptw_i_site end_site = {PTW_I_SITE_CHECK, PTW_I_K_END,
					     "", NULL, 0, 0, {0, 0, 0}};
	if (ptw_i_live(&end_site))
		(void)ptw_i_ev(&end_site);
}

/* BEGIN of PTW_SCOPE: 1 if it counted (the guard's value). */
static inline __attribute__((always_inline)) int
ptw_i_scope_begin(struct ptw_i_site *site)
{
	return ptw_i_live(site) ? ptw_i_ev(site) : 0;
}

/* Cleanup handler of PTW_SCOPE in C. */
static inline void ptw_i_scope_end(int *began)
{
	if (*began)
		ptw_i_scope_end_now();
}

/* The one-slot macros: the call passes the site only (or the site and
 * the counter's value, evaluated only when the site is live). */
#define PTW_I_EV1(cat, kind, name)                                           \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, cat, (name), (kind));                \
		if (ptw_i_live(&ptw_i_site_))                                \
			(void)ptw_i_ev(&ptw_i_site_);                        \
	} while (0)
#define PTW_I_EV1N(cat, kind, name)                                          \
	do {                                                                 \
		PTW_I_SITEN(ptw_i_site_, cat, name, (kind));                 \
		if (ptw_i_live(&ptw_i_site_.s))                              \
			(void)ptw_i_ev(&ptw_i_site_.s);                      \
	} while (0)
#define PTW_I_EVC(cat, kind, name, val)                                      \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, cat, (name), (kind));                \
		if (ptw_i_live(&ptw_i_site_))                                \
			(void)ptw_i_ev_val(&ptw_i_site_, (val));             \
	} while (0)
#define PTW_I_EV0(cat_, kind_, name_, dyn_, id_)                             \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, cat_, NULL, 0);                      \
		if (ptw_i_live(&ptw_i_site_))                                \
			(void)ptw_i_emit_n(&ptw_i_site_, (kind_), (name_),   \
					   (dyn_), (uint64_t)(id_), NULL, 0);\
	} while (0)
#define PTW_I_EVTC(cat_, kind_, track_, val_)                                 \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, cat_, NULL, 0);                      \
		if (ptw_i_live(&ptw_i_site_))                                \
			(void)ptw_i_emit_val(&ptw_i_site_, (kind_),          \
					     (uint64_t)(track_), (val_));    \
	} while (0)
#define PTW_I_EV0N(cat_, kind_, name_, id_)                                  \
	do {                                                                 \
		PTW_I_SITEN(ptw_i_site_, cat_, name_, 0);                    \
		if (ptw_i_live(&ptw_i_site_.s))                              \
			(void)ptw_i_emit_n(&ptw_i_site_.s, (kind_),          \
					   ptw_i_site_.n, NULL,              \
					   (uint64_t)(id_), NULL, 0);        \
	} while (0)
#define PTW_I_EVNN(cat_, kind_, name_, id_, ...)                             \
	do {                                                                 \
		PTW_I_SITEN(ptw_i_site_, cat_, name_, 0);                    \
		if (ptw_i_live(&ptw_i_site_.s)) {                            \
			const struct ptw_arg ptw_i_a_[] = {__VA_ARGS__};     \
			(void)ptw_i_emit_n(&ptw_i_site_.s, (kind_),          \
					   ptw_i_site_.n, NULL,              \
					   (uint64_t)(id_), ptw_i_a_,        \
					   sizeof(ptw_i_a_) /                \
						   sizeof(ptw_i_a_[0]));     \
		}                                                            \
	} while (0)
#define PTW_I_EVN(cat_, kind_, name_, dyn_, id_, ...)                        \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, cat_, NULL, 0);                      \
		if (ptw_i_live(&ptw_i_site_)) {                              \
			const struct ptw_arg ptw_i_a_[] = {__VA_ARGS__};     \
			(void)ptw_i_emit_n(&ptw_i_site_, (kind_), (name_),   \
					   (dyn_), (uint64_t)(id_), ptw_i_a_,\
					   sizeof(ptw_i_a_) /                \
						   sizeof(ptw_i_a_[0]));     \
		}                                                            \
	} while (0)
#define PTW_I_EVF(cat_, kind_, ...)                                          \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, cat_, NULL, 0);                      \
		if (ptw_i_live(&ptw_i_site_))                                \
			(void)ptw_i_emit_fmt(&ptw_i_site_, (kind_),          \
					     __VA_ARGS__);                   \
	} while (0)

#define PTW_I_EVS(cat_, kind_, name_)                                        \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, cat_, NULL, 0);                      \
		if (ptw_i_live(&ptw_i_site_))                                \
			(void)ptw_i_emit_stack(&ptw_i_site_, (kind_),        \
					       (name_));                     \
	} while (0)

#define PTW_I_EVFI(cat_, kind_, id_, ...)                                    \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, cat_, NULL, 0);                      \
		if (ptw_i_live(&ptw_i_site_))                                \
			(void)ptw_i_emit_fmt_id(&ptw_i_site_, (kind_), (id_),\
						__VA_ARGS__);                \
	} while (0)

/* PTW_LOG: the record's id carries the site (8-byte aligned) and the
 * priority in its low 3 bits. */
static inline uint64_t ptw_i_log_id(const struct ptw_i_site *site, int prio)
{
	return (uint64_t)(uintptr_t)site | ((uint64_t)(unsigned)prio & 7u);
}
#define PTW_I_LOGF(prio_, ...)                                               \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, "log", NULL, PTW_I_K_LOG);           \
		if (ptw_i_live(&ptw_i_site_))                                \
			(void)ptw_i_emit_fmt_id(                             \
				&ptw_i_site_, PTW_I_K_LOG,                   \
				ptw_i_log_id(&ptw_i_site_, (prio_)),         \
				__VA_ARGS__);                                \
	} while (0)
#define PTW_I_LOGD(prio_, msg_)                                              \
	do {                                                                 \
		PTW_I_SITE(ptw_i_site_, "log", NULL, PTW_I_K_LOG);           \
		if (ptw_i_live(&ptw_i_site_))                                \
			(void)ptw_i_emit_n(&ptw_i_site_, PTW_I_K_LOG, NULL,  \
					   (msg_),                           \
					   ptw_i_log_id(&ptw_i_site_,        \
							(prio_)),            \
					   NULL, 0);                         \
	} while (0)

/* The scopes: 'v' is unique per expansion (__COUNTER__, expanded once by
 * the caller), so several scopes may share a line or a macro. A scope is
 * its site (PTW_I_SCOPE_SITE, a static object declared first in C, a
 * static inside a statement expression in C++, so that the whole scope
 * is one declaration there) and a guard whose value says whether BEGIN
 * counted. */
#define PTW_I_SCOPE1(v, cat, name)                                           \
	PTW_I_SCOPE_SITEN(v, cat, name, PTW_I_K_BEGIN)                       \
	PTW_I_GUARD(v, ptw_i_scope_begin(                                    \
			       PTW_I_SITEN_PTR(v, cat, name, PTW_I_K_BEGIN)))
/* GNU statement expressions (gcc and clang, C and C++) name the site once
 * and keep the name and arguments unevaluated unless the site is live, as
 * in PTW_BEGIN_DYN and PTW_BEGIN_ARGS. */
#define PTW_I_SCOPED(v, cat, dyn)                                            \
	PTW_I_SCOPE_SITE(v, cat, NULL, 0)                                    \
	PTW_I_GUARD(v, __extension__({                                       \
		struct ptw_i_site *ptw_i_s_ = PTW_I_SITE_PTR(v, cat, NULL, 0); \
		ptw_i_live(ptw_i_s_) ? ptw_i_emit_n(ptw_i_s_, PTW_I_K_BEGIN, \
						    NULL, dyn, 0, NULL, 0)   \
				     : 0;                                    \
	}))
#define PTW_I_SCOPES(v, cat, name)                                           \
	PTW_I_SCOPE_SITE(v, cat, NULL, 0)                                    \
	PTW_I_GUARD(v, __extension__({                                       \
		struct ptw_i_site *ptw_i_s_ = PTW_I_SITE_PTR(v, cat, NULL, 0); \
		ptw_i_live(ptw_i_s_) ? ptw_i_emit_stack(ptw_i_s_,            \
							PTW_I_K_BEGIN, name) \
				     : 0;                                    \
	}))
#define PTW_I_SCOPEF(v, cat, ...)                                            \
	PTW_I_SCOPE_SITE(v, cat, NULL, 0)                                    \
	PTW_I_GUARD(v, __extension__({                                       \
		struct ptw_i_site *ptw_i_s_ = PTW_I_SITE_PTR(v, cat, NULL, 0); \
		ptw_i_live(ptw_i_s_) ? ptw_i_emit_fmt(ptw_i_s_,              \
						      PTW_I_K_BEGIN,         \
						      __VA_ARGS__)           \
				     : 0;                                    \
	}))
#define PTW_I_SCOPENN(v, cat, nm_, ...)                                      \
	PTW_I_SCOPE_SITEN(v, cat, nm_, 0)                                    \
	PTW_I_GUARD(v, __extension__({                                       \
		struct ptw_i_site *ptw_i_s_ = PTW_I_SITEN_PTR(v, cat, nm_, 0); \
		int ptw_i_r_ = 0;                                            \
		if (ptw_i_live(ptw_i_s_)) {                                  \
			const struct ptw_arg ptw_i_a_[] = {__VA_ARGS__};     \
			ptw_i_r_ = ptw_i_emit_n(                             \
				ptw_i_s_, PTW_I_K_BEGIN, ptw_i_s_->name,     \
				NULL, 0, ptw_i_a_,                           \
				sizeof(ptw_i_a_) / sizeof(ptw_i_a_[0]));     \
		}                                                            \
		ptw_i_r_;                                                    \
	}))
#define PTW_I_SCOPEN(v, cat, name, dyn, ...)                                 \
	PTW_I_SCOPE_SITE(v, cat, NULL, 0)                                    \
	PTW_I_GUARD(v, __extension__({                                       \
		struct ptw_i_site *ptw_i_s_ = PTW_I_SITE_PTR(v, cat, NULL, 0); \
		int ptw_i_r_ = 0;                                            \
		if (ptw_i_live(ptw_i_s_)) {                                  \
			const struct ptw_arg ptw_i_a_[] = {__VA_ARGS__};     \
			ptw_i_r_ = ptw_i_emit_n(                             \
				ptw_i_s_, PTW_I_K_BEGIN, name, dyn, 0,       \
				ptw_i_a_,                                    \
				sizeof(ptw_i_a_) / sizeof(ptw_i_a_[0]));     \
		}                                                            \
		ptw_i_r_;                                                    \
	}))

/* Unloading: a library that logs may be dlclose()d at any time (no
 * ptw_flush() needed). Each translation unit that includes this header
 * gets this destructor, which runs when its object is unloaded (and at
 * exit) after the object's other destructors (priority 101 runs last):
 * ptw_i_unload() then has the backend write everything logged so far and
 * forget the addresses of string literals it kept (lib/tracer/
 * tracer_unload.c; docs/tracer.md, "Libraries that are unloaded"). Cheap
 * when nothing was logged since the last unload. */
void ptw_i_unload(const void *where);
extern void *__dso_handle __attribute__((visibility("hidden")));
static void ptw_i_unload_hook(void) __attribute__((destructor(101), used));
static void ptw_i_unload_hook(void) { ptw_i_unload(&__dso_handle); }

#ifdef __cplusplus
} /* extern "C" */

/* C++: the scope's guard object ends the slice in its destructor. */
class ptw_i_scope_guard {
public:
	explicit ptw_i_scope_guard(int began) : began_(began) {}
	~ptw_i_scope_guard()
	{
		if (began_)
			ptw_i_scope_end_now();
	}
	ptw_i_scope_guard(const ptw_i_scope_guard &) = delete;
	ptw_i_scope_guard &operator=(const ptw_i_scope_guard &) = delete;

private:
	int began_;
};
#define PTW_I_SCOPE_SITE(v, cat, name, kind)
#define PTW_I_SCOPE_SITEN(v, cat, name, kind)
#define PTW_I_SITE_PTR(v, cat, name, kind)                                   \
	__extension__({                                                      \
		PTW_I_SITE(ptw_i_l_, cat, name, kind);                       \
		&ptw_i_l_;                                                   \
	})
#define PTW_I_SITEN_PTR(v, cat, name, kind)                                  \
	__extension__({                                                      \
		PTW_I_SITEN(ptw_i_l_, cat, name, kind);                      \
		&ptw_i_l_.s;                                                 \
	})
#define PTW_I_GUARD(v, begin) const ptw_i_scope_guard v((begin))
#else
#define PTW_I_SCOPE_SITE(v, cat, name, kind)                                 \
	PTW_I_SITE(PTW_I_CAT(v, _site), cat, name, kind);
#define PTW_I_SCOPE_SITEN(v, cat, name, kind)                                \
	PTW_I_SITEN(PTW_I_CAT(v, _site), cat, name, kind);
#define PTW_I_SITE_PTR(v, cat, name, kind) (&PTW_I_CAT(v, _site))
#define PTW_I_SITEN_PTR(v, cat, name, kind) (&PTW_I_CAT(v, _site).s)
#define PTW_I_GUARD(v, begin)                                                \
	int v __attribute__((cleanup(ptw_i_scope_end), unused)) = (begin)
#endif

#endif /* PTW_TRACER_H */
