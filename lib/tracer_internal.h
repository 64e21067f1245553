/* tracer_internal.h - state shared by the tracer's lib/ files (control,
 * producer slow paths, backend, TSC). Not installed, not API.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TRACER_INTERNAL_H
#define PTW_TRACER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "hashmap.h"
#include "ptw/tracer.h"
#include "ptw/writer.h"

#define PTW_TR_NAME_MAX 64u     /* thread name bytes incl. NUL */
#define PTW_TR_MIN_SLOTS 64u
#define PTW_TR_MAX_SLOTS (1u << 28)

/* A registered producer thread. The public head is what the inline
 * macros touch; 'refs' counts the owners (the thread itself until it exits
 * or re-registers, the session until it has drained the ring). */
struct ptw_tr_thread {
	struct ptw_i_thread pub;

	/* set once before the record is published, then read-only */
	uint64_t session;
	int64_t tid;
	int wait;                     /* overflow policy: PTW_OVERFLOW_WAIT */
	char init_name[PTW_TR_NAME_MAX];
	void *ring_mem;

	_Atomic int refs;
	_Atomic int exited;           /* set by the thread's key destructor */
	_Atomic uint64_t waits;

	/* producer-private */
	char carry_name[PTW_TR_NAME_MAX]; /* latest ptw_set_thread_name */

	/* backend-private */
	struct ptw_seq *seq;
	uint64_t track;
	uint64_t drop_track;
	uint64_t drops_announced;     /* DROPPED notes turned into trace marks */
	uint32_t depth;               /* open slices written to the writer */
	int created;                  /* track and sequence exist */
};


/* An ASYNC_END seen before its BEGIN (the BEGIN's thread ring is drained
 * later). */
struct ptw_tr_pending_end {
	uint64_t id;
	uint64_t ts;
};

/* TSC to nanoseconds: ns = mono0 + ((tsc - tsc0) * mult) >> 32. */
struct ptw_tr_tsc {
	uint64_t hz;
	uint64_t tsc0;
	uint64_t mono0;
	uint64_t mult;
};

/* One tracing session, from ptw_start to ptw_stop. */
struct ptw_tracer {
	uint64_t session;
	struct ptw_writer *w;
	pthread_t thread;
	uint32_t ring_slots;
	int wait;
	uint32_t drain_us;
	int use_tsc;
	uint32_t clock_bits;          /* PTW_I_GEN_TSC / PTW_I_GEN_BOOT / 0 */
	struct ptw_tr_tsc tsc;
	int32_t pid;

	/* under ctl mutex */
	struct ptw_tr_thread **threads;
	size_t n_threads, cap_threads;
	int stop_req;
	uint64_t flush_req, flush_done;
	int flush_rc;
	char *new_process_name;       /* rename request, owned */
	uint64_t n_registered;
	uint64_t dropped_gone;        /* drops of finished threads */
	uint64_t waits_gone;

	/* backend-private, published to ptw_stats() through atomics */
	_Atomic uint64_t events;
	_Atomic uint64_t invalid;
	_Atomic uint64_t bytes;
	uint64_t proc_track;
	struct ptw_seq *ctl_seq;
	struct ptw_map counters;   /* name pointer -> counter track */
	const char **counter_names;   /* distinct counter names (literals) */
	uint64_t *counter_uuids;
	size_t n_counter_names, cap_counter_names;
	struct ptw_map async_open; /* async id -> track uuid */
	struct ptw_map async_names;/* async track -> name pointer */
	uint64_t *async_free;         /* idle async tracks */
	size_t n_async_free;
	struct ptw_tr_pending_end *pend;
	size_t n_pend, cap_pend;
	char *scratch;                /* copied strings of one record */
	size_t scratch_cap;
	struct ptw_tr_thread **snap;  /* backend's copy of the thread list */
	size_t cap_snap;
	int rc;                       /* first error of the session */
	struct ptw_error err;
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
	char **disabled;          /* disabled categories, owned strings */
	size_t n_disabled, cap_disabled;
	char *process_name;       /* set by ptw_set_process_name, owned */
	struct ptw_stats last;
	int have_last;
	pthread_key_t key;        /* runs the thread-exit destructor */
};

extern struct ptw_tr_ctl ptw_tr_ctl;

/* tracer.c */
void ptw_tr_ctl_init_once(void);
int ptw_tr_category_enabled(const char *cat); /* under ctl mutex */

/* tracer_thread.c */
void ptw_tr_thread_unref(struct ptw_tr_thread *t);
void ptw_tr_thread_key_destructor(void *p);

/* tracer_backend.c */
void *ptw_tr_backend_main(void *arg);
int ptw_tr_backend_setup(struct ptw_tracer *tr, const char *process_name);
void ptw_tr_backend_free(struct ptw_tracer *tr);

/* tsc.c */
int ptw_tr_tsc_calibrate(struct ptw_tr_tsc *c);
uint64_t ptw_tr_tsc_to_ns(const struct ptw_tr_tsc *c, uint64_t ticks);

#endif /* PTW_TRACER_INTERNAL_H */
