/* system.c - system mode's thread: the connection to traced, its
 * commands, and the tracer sessions they start and stop (system.h).
 * SPDX-License-Identifier: Apache-2.0
 *
 * Threads: the "ptw-system" thread owns the connection (struct
 * ptw_sys_prod) and starts, flushes and stops the tracer's sessions; the
 * backend thread writes a session's packets into the shared memory buffer
 * (the output function below, through the smb router, which only it
 * touches while the session runs) and hands the chunks to commit and the
 * writer ids to register over to the system thread through a queue under
 * 'qmu', waking it with a byte on a pipe. The system thread waits in
 * poll() on the socket and that pipe: with no service, until the next
 * retry (backoff from 100 ms doubling to 2 s); nothing spins. */
#include "system.h"

#include "catdecl.h"
#include "producer.h"
#include "lib/os/os_mem.h"
#include "lib/os/os_proc.h"
#include "lib/shmem/smb.h"
#include "lib/tracer/tracer_internal.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PTW_SYS_BACKOFF_MIN_MS 100u
#define PTW_SYS_BACKOFF_MAX_MS 2000u
#define PTW_SYS_DEFAULT_KB 2048u
#define PTW_SYS_PAGE_HINT (32u * 1024u)
#define PTW_SYS_CHUNK_BYTES (16u * 1024u)
/* Chunks per CommitData (each ~12 bytes: far below a frame). */
#define PTW_SYS_COMMIT_MAX 1024u
/* Longest wait for the last bytes to reach the service at the end. */
#define PTW_SYS_LAST_SEND_MS 2000
/* A full buffer: the backend waits for the service to free chunks at
 * most this many times 1 ms, then drops what has no room (counted) until
 * its next pass. */
#define PTW_SYS_STALL_TRIES 100u
/* At a session's end and a Flush request, for the loss marks still due
 * (ptw_sys_settle): at most this many times 1 ms. */
#define PTW_SYS_SETTLE_TRIES 1000u
/* The largest buffer ptw maps (the service's own limit is 32 MiB). */
#define PTW_SYS_MAX_SMB (64u << 20)

struct ptw_sys_wreg {
	uint32_t id, target;
	int added;
};

struct ptw_sys;

/* A session of the service that started ptw's data source: a sink of the
 * tracer's session (tracer_sink.c) writing through its own router into
 * the connection's buffer, at its target_buffer. */
struct ptw_sys_sess {
	struct ptw_sys *s;
	uint64_t id;                   /* instance id, 0: a free slot */
	uint64_t sink;                 /* the tracer's sink */
	struct ptw_smb_router *router; /* the backend's while it runs */
	uint8_t *te_raw;               /* its TrackEventConfig */
	struct ptw_sys_te_cfg te;
	/* its categories count in the producers' filter (set once te is,
	 * cleared before te goes; read under the tracer's mutex) */
	_Atomic int live;
	_Atomic int clear_req;         /* ClearIncrementalState asked */
	/* from the backend thread, under the connection's qmu */
	uint32_t loss_seq[64];
	size_t n_loss;
	int loss_all;                  /* more losses than loss_seq holds */
	/* the backend's: a wait for room gave up in this pass, the next
	 * packets without room are dropped at once (a service that stopped
	 * reading costs a pass at most PTW_SYS_STALL_TRIES ms, not that much
	 * a packet) */
	int stall_off;
	/* the marks still due wait for room (ptw_sys_settle): asked by a
	 * Flush for the backend's next pass; while it runs, the stall hook's
	 * longer bound */
	_Atomic int settle_req;
	int settling;
};

struct ptw_sys {
	pthread_t th;
	int wake_r, wake_w;        /* self-pipe, both non-blocking */
	_Atomic int woken;         /* a byte is in the pipe, not yet read */
	_Atomic int quit;

	/* the sessions' config (strings are copies owned here) */
	struct ptw_config cfg;
	struct ptw_writer_options wo;
	struct ptw_writer_options swo; /* the sinks' writers' */
	char *process_name, *disabled, *machine_name;

	/* the connection: the system thread's, under sock_mu, which it lets
	 * go while it sleeps in poll() and while it waits for the backend
	 * (a flush, a stop): a backend waiting for room in the buffer then
	 * sends the commits itself (ptw_sys_hook_stall) */
	pthread_mutex_t sock_mu;
	struct ptw_sys_prod prod;

	/* system thread only */
	char path[128];
	uint32_t backoff_ms;
	uint64_t next_try_ms;
	void *smb_mem;
	size_t smb_size;
	struct ptw_smb *smb;
	/* the sessions running; 'own': the program's file or flight
	 * recorder runs the tracer's session, else it runs while a system
	 * session does (writing nothing of its own) */
	struct ptw_sys_sess sess[PTW_TR_MAX_SINKS];
	size_t n_sess;
	int own;
	uint64_t decl_sent;            /* ptw_sys_decl_version registered */
	/* why the last start of ptw's data source recorded nothing, and
	 * how many did so far (ptw_sys_describe) */
	const char *start_why;
	uint64_t starts_refused, connects;

	/* from the backend thread, under qmu */
	pthread_mutex_t qmu;
	struct ptw_smb_commit *q;
	size_t qn, qcap;
	struct ptw_sys_wreg *regs;
	size_t rn, rcap;
};

static pthread_mutex_t ptw_sys_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ptw_sys *ptw_sys_g; /* under ptw_sys_mu */
/* packets lost to full buffers since ptw_start: those of the buffers of
 * earlier connections, plus the current buffer's (ptw_sys_out) */
static _Atomic uint64_t ptw_sys_lost_total, ptw_sys_lost_before;
/* system sessions recording now (ptw_sys_sessions) */
static _Atomic int ptw_sys_n_live;

int ptw_sys_sessions(void)
{
	return atomic_load(&ptw_sys_n_live);
}

uint64_t ptw_sys_lost(void)
{
	return atomic_load_explicit(&ptw_sys_lost_total, memory_order_relaxed);
}

static uint64_t ptw_sys_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void ptw_sys_wake(struct ptw_sys *s)
{
	/* one byte per wake-up of the system thread: the backend's next
	 * batches add no system call while it has not run yet */
	if (atomic_exchange_explicit(&s->woken, 1, memory_order_acq_rel))
		return;
	char b = 1;
	/* a full pipe already wakes it */
	ssize_t n = write(s->wake_w, &b, 1);
	(void)n;
}

/* ---- the backend thread's side ----------------------------------------- */

/* Moves the commit list into the queue and wakes the system thread. */
static void ptw_sys_take(struct ptw_sys *s)
{
	size_t n = ptw_smb_pending_commits(s->smb);
	if (!n)
		return;
	pthread_mutex_lock(&s->qmu);
	if (s->qcap - s->qn < n) {
		size_t nc = ptw_grow_cap(s->qcap, s->qn + n, 256, sizeof(*s->q));
		void *nq = ptw_realloc_array(s->q, nc, sizeof(*s->q));
		if (nq) {
			s->q = nq;
			s->qcap = nc;
		}
	}
	/* out of memory: the rest waits in the smb for the next take */
	s->qn += ptw_smb_take_commits(s->smb, s->q + s->qn, s->qcap - s->qn);
	pthread_mutex_unlock(&s->qmu);
	ptw_sys_wake(s);
}

static void ptw_sys_hook_commit(void *ctx)
{
	struct ptw_sys_sess *ss = ctx;
	ptw_sys_take(ss->s);
}

static void ptw_sys_send_queued(struct ptw_sys *s, uint64_t flush_id);

/* No free chunk (the router completed every open one): the commits go
 * out now, sent from here if the system thread lets go of the connection
 * (it sleeps in poll, or waits for this very backend in a flush or a
 * stop), else by it once woken; then a millisecond for the service to
 * copy and free chunks. The producers never wait: their rings absorb
 * events meanwhile (and count what does not fit). */
static int ptw_sys_hook_stall(void *ctx, unsigned attempt)
{
	struct ptw_sys_sess *ss = ctx;
	struct ptw_sys *s = ss->s;
	unsigned tries = ss->settling ? PTW_SYS_SETTLE_TRIES
				      : PTW_SYS_STALL_TRIES;
	if (ss->stall_off || attempt >= tries) {
		ss->stall_off = 1;
		return 0;
	}
	ptw_sys_take(s);
	if (pthread_mutex_trylock(&s->sock_mu) == 0) {
		if (s->prod.state == PTW_SYS_P_READY) {
			ptw_sys_send_queued(s, 0);
			(void)ptw_sys_ipc_io(&s->prod.ipc, POLLOUT);
		}
		pthread_mutex_unlock(&s->sock_mu);
	}
	struct timespec ts = {0, 1000000L};
	nanosleep(&ts, NULL);
	return 1;
}

static void ptw_sys_hook_writer(void *ctx, uint32_t id, uint32_t target,
				int added)
{
	struct ptw_sys *s = ((struct ptw_sys_sess *)ctx)->s;
	pthread_mutex_lock(&s->qmu);
	if (s->rn == s->rcap) {
		size_t nc = ptw_grow_cap(s->rcap, s->rn + 1, 64, sizeof(*s->regs));
		void *nr = ptw_realloc_array(s->regs, nc, sizeof(*s->regs));
		if (nr) {
			s->regs = nr;
			s->rcap = nc;
		}
	}
	/* out of memory: the writer stays unregistered, which the service
	 * only needs for reading uncommitted chunks (scraping) */
	if (s->rn < s->rcap)
		s->regs[s->rn++] = (struct ptw_sys_wreg){id, target, added};
	pthread_mutex_unlock(&s->qmu);
	ptw_sys_wake(s);
}

/* A sequence lost a packet: its next event is a checkpoint (pass hook;
 * the writer cannot be called from inside its own output). */
static void ptw_sys_hook_loss(void *ctx, uint32_t seq)
{
	struct ptw_sys_sess *ss = ctx;
	struct ptw_sys *s = ss->s;
	pthread_mutex_lock(&s->qmu);
	if (ss->n_loss < sizeof(ss->loss_seq) / sizeof(ss->loss_seq[0]))
		ss->loss_seq[ss->n_loss++] = seq;
	else
		ss->loss_all = 1;
	pthread_mutex_unlock(&s->qmu);
}

/* The session writer's output: every batch of whole packets goes into
 * the buffer, and its chunks to the commit queue at once. */
static int ptw_sys_out(void *ctx, const uint8_t *p, size_t n)
{
	struct ptw_sys_sess *ss = ctx;
	struct ptw_sys *s = ss->s;
	(void)ptw_smb_route(ss->router, p, n); /* malformed: counted there */
	ptw_smb_router_flush(ss->router);
	ptw_sys_take(s);
	struct ptw_smb_stats st;
	ptw_smb_get_stats(s->smb, &st);
	atomic_store_explicit(&ptw_sys_lost_total,
			      atomic_load(&ptw_sys_lost_before) + st.dropped +
				      st.skipped,
			      memory_order_relaxed);
	return 0;
}

/* The router's thread (the backend, or the system thread once the
 * backend is gone), with sock_mu free: the loss marks that found no chunk
 * wait (bounded) for the service to free some, the stall hook committing
 * what is written meanwhile. After it no later packet of a sequence may
 * come to carry its mark (smb.h). */
static void ptw_sys_settle(struct ptw_sys_sess *ss)
{
	ss->stall_off = 0;
	ss->settling = 1;
	ptw_smb_router_settle(ss->router);
	ss->settling = 0;
	ptw_sys_take(ss->s);
}

/* After each backend pass: ClearIncrementalState, losses, a settle. */
static void ptw_sys_pass(void *ctx, struct ptw_writer *w)
{
	struct ptw_sys_sess *ss = ctx;
	struct ptw_sys *s = ss->s;
	if (atomic_exchange_explicit(&ss->settle_req, 0, memory_order_acq_rel))
		ptw_sys_settle(ss);
	ss->stall_off = 0;
	if (atomic_exchange_explicit(&ss->clear_req, 0, memory_order_acq_rel))
		ptw_i_writer_clear_incremental(w, 0);
	uint32_t seqs[sizeof(ss->loss_seq) / sizeof(ss->loss_seq[0])];
	pthread_mutex_lock(&s->qmu);
	size_t n = ss->n_loss;
	int all = ss->loss_all;
	memcpy(seqs, ss->loss_seq, n * sizeof(seqs[0]));
	ss->n_loss = 0;
	ss->loss_all = 0;
	pthread_mutex_unlock(&s->qmu);
	if (all)
		ptw_i_writer_clear_incremental(w, 0);
	else
		for (size_t i = 0; i < n; i++)
			ptw_i_writer_clear_incremental(w, seqs[i]);
}

/* A sink's categories (on the backend thread): its session's
 * TrackEventConfig with the category's declared tags. */
static int ptw_sys_want(void *ctx, const char *cat, size_t len)
{
	struct ptw_sys_sess *ss = ctx;
	return ptw_sys_decl_enabled(&ss->te, cat, len);
}

/* The producers' filter without a file (under the tracer's mutex): a
 * category is on if a running session wants it. */
static int ptw_sys_filter(void *ctx, const char *cat, size_t len)
{
	struct ptw_sys *s = ctx;
	for (size_t i = 0; i < PTW_TR_MAX_SINKS; i++)
		if (atomic_load(&s->sess[i].live) &&
		    ptw_sys_want(&s->sess[i], cat, len))
			return 1;
	return 0;
}

/* ---- the system thread: sends ------------------------------------------ */

/* Sends what the backend queued; with 'flush_id', a CommitData carrying
 * it even if no chunk waits. */
static void ptw_sys_send_queued(struct ptw_sys *s, uint64_t flush_id)
{
	struct ptw_sys_prod *p = &s->prod;
	pthread_mutex_lock(&s->qmu);
	struct ptw_sys_wreg *regs = s->regs;
	size_t rn = s->rn;
	struct ptw_smb_commit *q = s->q;
	size_t qn = s->qn;
	s->regs = NULL;
	s->rn = s->rcap = 0;
	s->q = NULL;
	s->qn = s->qcap = 0;
	pthread_mutex_unlock(&s->qmu);
	for (size_t i = 0; i < rn; i++)
		ptw_sys_prod_trace_writer(p, regs[i].id, regs[i].target,
					  regs[i].added);
	size_t i = 0;
	do {
		struct ptw_sys_chunk_ref refs[PTW_SYS_COMMIT_MAX];
		size_t k = qn - i > PTW_SYS_COMMIT_MAX ? PTW_SYS_COMMIT_MAX
						       : qn - i;
		for (size_t j = 0; j < k; j++)
			refs[j] = (struct ptw_sys_chunk_ref){
				q[i + j].page, q[i + j].chunk,
				q[i + j].target_buffer};
		int last = i + k == qn;
		if (k || (last && flush_id))
			ptw_sys_prod_commit(p, refs, k, last ? flush_id : 0);
		i += k;
	} while (i < qn);
	free(regs);
	free(q);
}

/* ---- the system thread: sessions --------------------------------------- */

static void ptw_sys_unmap(struct ptw_sys *s)
{
	if (s->smb) {
		/* no session: the buffer is this thread's */
		struct ptw_smb_stats st;
		ptw_smb_get_stats(s->smb, &st);
		atomic_fetch_add(&ptw_sys_lost_before, st.dropped + st.skipped);
		atomic_store(&ptw_sys_lost_total, atomic_load(&ptw_sys_lost_before));
		ptw_smb_destroy(s->smb);
	}
	s->smb = NULL;
	if (s->smb_mem)
		munmap(s->smb_mem, s->smb_size);
	s->smb_mem = NULL;
	s->smb_size = 0;
}

static struct ptw_sys_sess *ptw_sys_find(struct ptw_sys *s, uint64_t id)
{
	for (size_t i = 0; i < PTW_TR_MAX_SINKS; i++)
		if (id && s->sess[i].id == id)
			return &s->sess[i];
	return NULL;
}

static void ptw_sys_sess_clear(struct ptw_sys_sess *ss)
{
	free(ss->te_raw);
	ss->te_raw = NULL;
	memset(&ss->te, 0, sizeof(ss->te));
	ss->id = 0;
	ss->sink = 0;
	ss->stall_off = 0;
	ss->settling = 0;
	atomic_store(&ss->settle_req, 0);
}

/* Stops a session: its categories go off (unless another session or the
 * file wants them), then the tracer drains every ring into its sink,
 * writes its last packets and closes it, and every chunk is committed.
 * The last session without a file stops the tracer's session too. The
 * other sessions run on undisturbed. */
static void ptw_sys_end_session(struct ptw_sys *s, struct ptw_sys_sess *ss)
{
	int ready = s->prod.state == PTW_SYS_P_READY && !s->prod.ipc.failed;
	pthread_mutex_unlock(&s->sock_mu); /* see sock_mu */
	if (!s->own && s->n_sess == 1) {
		/* the last: the macros go off with the session at once, and
		 * its stop drains everything into the sink and closes it */
		(void)ptw_tr_stop_session(NULL);
		atomic_store(&ss->live, 0);
	} else {
		atomic_store(&ss->live, 0);
		if (!s->own)
			ptw_tr_filter_changed();
		(void)ptw_tr_sink_remove(ss->sink);
	}
	/* the backend is done with it: the router is this thread's now (a
	 * connection that failed frees no chunk: no wait for the marks) */
	if (ready)
		ptw_sys_settle(ss);
	pthread_mutex_lock(&s->sock_mu);
	ptw_smb_router_destroy(ss->router);
	ss->router = NULL;
	ptw_sys_take(s);
	ptw_sys_send_queued(s, 0);
	ptw_sys_sess_clear(ss);
	s->n_sess--;
	atomic_fetch_sub(&ptw_sys_n_live, 1);
}

static void ptw_sys_end_all(struct ptw_sys *s)
{
	for (size_t i = 0; i < PTW_TR_MAX_SINKS; i++)
		if (s->sess[i].id)
			ptw_sys_end_session(s, &s->sess[i]);
}

/* Chunks of about PTW_SYS_CHUNK_BYTES: a chunk holds at most 1023
 * packets (the ABI's count), and a BEGIN or END is some 15 bytes, so a
 * 32 KiB chunk would stay half empty and the buffer hold half the events
 * it could. */
static uint32_t ptw_sys_chunks_per_page(uint32_t page_size)
{
	static const uint32_t layouts[] = {14, 7, 4, 2};
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (page_size / layouts[i] >= PTW_SYS_CHUNK_BYTES)
			return layouts[i];
	return 1;
}

static int ptw_sys_on_setup_smb(void *ctx, int fd, uint32_t page_size)
{
	struct ptw_sys *s = ctx;
	struct stat st;
	if (s->smb || fstat(fd, &st) != 0 || st.st_size <= 0 ||
	    (uint64_t)st.st_size > PTW_SYS_MAX_SMB ||
	    (uint64_t)st.st_size % page_size) {
		close(fd);
		return -1;
	}
	/* populated now, on this thread: the backend's first writes into
	 * each page then take no page fault */
	void *mem = ptw_os_mem_map_shared(fd, (size_t)st.st_size);
	close(fd);
	if (!mem)
		return -1;
	int err = 0;
	s->smb = ptw_smb_create(mem, (size_t)st.st_size, page_size,
				ptw_sys_chunks_per_page(page_size), &err);
	s->smb_mem = mem;
	s->smb_size = (size_t)st.st_size;
	if (!s->smb) {
		ptw_sys_unmap(s);
		return -1;
	}
	return 0;
}

/* A start that records nothing: noted for ptw_sys_describe. */
static void ptw_sys_refused(struct ptw_sys *s, const char *why)
{
	s->start_why = why;
	s->starts_refused++;
}

static void ptw_sys_on_start(void *ctx, const struct ptw_sys_ds *ds)
{
	struct ptw_sys *s = ctx;
	if (!s->smb) {
		s->prod.protocol_errors++;
		ptw_sys_refused(s, "a start before the shared memory buffer");
		return;
	}
	if (ptw_sys_find(s, ds->id))
		return; /* started already */
	struct ptw_sys_sess *ss = ptw_sys_find(s, 0);
	for (size_t i = 0; !ss && i < PTW_TR_MAX_SINKS; i++)
		if (!s->sess[i].id)
			ss = &s->sess[i];
	if (!ss) {
		/* more sessions than the SDK serves (README) */
		ptw_sys_refused(s, "more sessions than ptw serves");
		return;
	}
	ss->s = s;
	ss->te_raw = malloc(ds->te_len ? ds->te_len : 1);
	if (!ss->te_raw) {
		ptw_sys_refused(s, "out of memory");
		return;
	}
	if (ds->te_len)
		memcpy(ss->te_raw, ds->te_raw, ds->te_len);
	const char *why = "malformed TrackEventConfig";
	if (ptw_sys_te_parse(ss->te_raw, ds->te_len, &ss->te))
		goto fail;
	struct ptw_smb_hooks h = {
		.ctx = ss,
		.writer = ptw_sys_hook_writer,
		.loss = ptw_sys_hook_loss,
		.commit_due = ptw_sys_hook_commit,
		.stall = ptw_sys_hook_stall,
	};
	why = "out of memory";
	ss->router = ptw_smb_router_create(s->smb, ds->target_buffer, &h);
	if (!ss->router)
		goto fail;
	const struct ptw_tr_sink_cfg sc = {
		{ptw_sys_out, ptw_sys_pass, ss}, &s->swo, s->process_name,
		ptw_sys_want, ss};
	atomic_store(&ss->clear_req, 0);
	ss->n_loss = 0;
	ss->loss_all = 0;
	pthread_mutex_unlock(&s->sock_mu); /* see sock_mu */
	int rc;
	if (!s->own && !s->n_sess) {
		/* the first: the tracer's session starts with its sink in
		 * place and its categories on */
		atomic_store(&ss->live, 1);
		rc = ptw_tr_start_muted(&s->cfg, ptw_sys_filter, s, &sc,
					&ss->sink, NULL);
	} else {
		/* the sink first, then its categories on: it misses
		 * nothing */
		rc = ptw_tr_sink_add(&sc, &ss->sink);
		if (!rc) {
			atomic_store(&ss->live, 1);
			if (!s->own)
				ptw_tr_filter_changed();
		}
	}
	if (rc)
		atomic_store(&ss->live, 0);
	pthread_mutex_lock(&s->sock_mu);
	if (rc) {
		ptw_smb_router_destroy(ss->router);
		ss->router = NULL;
		why = "the tracer's session did not start";
		goto fail;
	}
	ss->id = ds->id;
	s->n_sess++;
	atomic_fetch_add(&ptw_sys_n_live, 1);
	return;
fail:
	ptw_sys_refused(s, why);
	ptw_sys_sess_clear(ss);
}

static void ptw_sys_on_stop(void *ctx, uint64_t id)
{
	struct ptw_sys *s = ctx;
	struct ptw_sys_sess *ss = ptw_sys_find(s, id);
	if (ss)
		ptw_sys_end_session(s, ss);
	/* registered with will_notify_on_stop: always answer */
	ptw_sys_prod_stopped(&s->prod, id);
}

static int ptw_sys_has(const uint64_t *ids, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

static void ptw_sys_on_flush(void *ctx, uint64_t req, const uint64_t *ids,
			     size_t n)
{
	struct ptw_sys *s = ctx;
	/* drains every ring up to now into the buffer (ptw_sys_out) */
	int ours = 0;
	for (size_t i = 0; i < PTW_TR_MAX_SINKS; i++)
		ours |= s->sess[i].id && ptw_sys_has(ids, n, s->sess[i].id);
	if (ours) {
		pthread_mutex_unlock(&s->sock_mu); /* see sock_mu */
		(void)ptw_flush();
		/* after a loss, a second pass settles the marks of what the
		 * first one wrote (ptw_sys_pass) */
		if (ptw_sys_lost() != atomic_load(&ptw_sys_lost_before)) {
			for (size_t i = 0; i < PTW_TR_MAX_SINKS; i++)
				if (s->sess[i].id &&
				    ptw_sys_has(ids, n, s->sess[i].id))
					atomic_store(&s->sess[i].settle_req, 1);
			(void)ptw_flush();
		}
		pthread_mutex_lock(&s->sock_mu);
	}
	ptw_sys_send_queued(s, req);
}

static void ptw_sys_on_clear(void *ctx, const uint64_t *ids, size_t n)
{
	struct ptw_sys *s = ctx;
	for (size_t i = 0; i < PTW_TR_MAX_SINKS; i++)
		if (s->sess[i].id && ptw_sys_has(ids, n, s->sess[i].id))
			atomic_store(&s->sess[i].clear_req, 1);
}

static void ptw_sys_on_ready(void *ctx)
{
	struct ptw_sys *s = ctx;
	s->backoff_ms = PTW_SYS_BACKOFF_MIN_MS;
	s->decl_sent = ptw_sys_decl_register(&s->prod, 0);
}

static const struct ptw_sys_ops ptw_sys_ops = {
	.ready = ptw_sys_on_ready,
	.setup_smb = ptw_sys_on_setup_smb,
	.start = ptw_sys_on_start,
	.stop = ptw_sys_on_stop,
	.flush = ptw_sys_on_flush,
	.clear = ptw_sys_on_clear,
};

/* ---- the system thread: the connection --------------------------------- */

/* The connection is gone (or ptw stops): the session ends, the buffer is
 * unmapped, and the next attempt is scheduled. */
static void ptw_sys_disconnect(struct ptw_sys *s)
{
	ptw_sys_end_all(s);
	ptw_sys_prod_close(&s->prod);
	ptw_sys_unmap(s);
	s->next_try_ms = ptw_sys_now_ms() + s->backoff_ms;
	s->backoff_ms = s->backoff_ms * 2 > PTW_SYS_BACKOFF_MAX_MS
				? PTW_SYS_BACKOFF_MAX_MS
				: s->backoff_ms * 2;
}

static void ptw_sys_drain_wake(struct ptw_sys *s)
{
	char buf[64];
	/* the bytes first, then the flag: the other order let a wake-up
	 * between the two leave the flag set with its byte already read, and
	 * every later wake-up (ptw_stop's too) skipped its write while this
	 * thread slept in poll for ever. A wake-up that sees the flag still
	 * set here published its state before: this thread's checks after
	 * the (sequentially consistent) store see it. */
	while (read(s->wake_r, buf, sizeof(buf)) > 0)
		;
	atomic_store(&s->woken, 0);
}

/* At the end: waits (bounded) until the queued output left. */
static void ptw_sys_last_send(struct ptw_sys *s)
{
	struct ptw_sys_ipc *c = &s->prod.ipc;
	uint64_t end = ptw_sys_now_ms() + PTW_SYS_LAST_SEND_MS;
	while (c->fd >= 0 && !c->failed && c->tx_off < c->tx.len) {
		uint64_t now = ptw_sys_now_ms();
		if (now >= end)
			break;
		struct pollfd pf = {c->fd, POLLOUT, 0};
		if (poll(&pf, 1, (int)(end - now)) < 0 && errno != EINTR)
			break;
		if (ptw_sys_ipc_io(c, pf.revents))
			break;
	}
}

static void *ptw_sys_main(void *arg)
{
	struct ptw_sys *s = arg;
	struct ptw_sys_prod *p = &s->prod;
	pthread_mutex_lock(&s->sock_mu);
	while (!atomic_load(&s->quit)) {
		if (p->state == PTW_SYS_P_CLOSED && ptw_sys_now_ms() >= s->next_try_ms) {
			s->connects++;
			if (ptw_sys_prod_connect(p, s->path))
				ptw_sys_disconnect(s);
		}
		struct pollfd pf[2] = {{s->wake_r, POLLIN, 0}, {-1, 0, 0}};
		nfds_t nf = 1;
		int timeout = -1;
		if (p->state != PTW_SYS_P_CLOSED) {
			pf[1].fd = p->ipc.fd;
			pf[1].events = ptw_sys_ipc_events(&p->ipc);
			nf = 2;
		} else {
			uint64_t now = ptw_sys_now_ms();
			timeout = s->next_try_ms > now ? (int)(s->next_try_ms - now) : 0;
		}
		pthread_mutex_unlock(&s->sock_mu);
		int rc = poll(pf, nf, timeout);
		pthread_mutex_lock(&s->sock_mu);
		if (rc < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			ptw_sys_drain_wake(s);
		if (atomic_load(&s->quit))
			break;
		if (nf == 2 && pf[1].revents) {
			if (ptw_sys_ipc_io(&p->ipc, pf[1].revents) ||
			    ptw_sys_prod_dispatch(p)) {
				ptw_sys_disconnect(s);
				continue;
			}
		}
		if (p->state == PTW_SYS_P_READY) {
			ptw_sys_send_queued(s, 0);
			uint64_t v = ptw_sys_decl_version();
			if (v != s->decl_sent)
				s->decl_sent = ptw_sys_decl_register(p, 1);
		}
		if (p->ipc.failed)
			ptw_sys_disconnect(s);
	}
	/* ptw_stop(): the sessions' last events, then goodbye */
	ptw_sys_end_all(s);
	if (p->state == PTW_SYS_P_READY)
		ptw_sys_last_send(s);
	ptw_sys_prod_close(p);
	ptw_sys_unmap(s);
	pthread_mutex_unlock(&s->sock_mu);
	return NULL;
}

/* ---- start / stop / fork ----------------------------------------------- */

static char *ptw_sys_dup(const char *str, int *oom)
{
	if (!str)
		return NULL;
	char *d = strdup(str);
	if (!d)
		*oom = 1;
	return d;
}

static void ptw_sys_free(struct ptw_sys *s)
{
	if (!s)
		return;
	ptw_sys_prod_free(&s->prod);
	if (s->wake_r >= 0)
		close(s->wake_r);
	if (s->wake_w >= 0)
		close(s->wake_w);
	pthread_mutex_destroy(&s->qmu);
	pthread_mutex_destroy(&s->sock_mu);
	free(s->q);
	free(s->regs);
	for (size_t i = 0; i < PTW_TR_MAX_SINKS; i++)
		free(s->sess[i].te_raw);

	free(s->process_name);
	free(s->disabled);
	free(s->machine_name);
	free(s);
}

/* The sessions' config, from the program's (copied). */
static int ptw_sys_set_config(struct ptw_sys *s, const struct ptw_config *cfg,
			      const struct ptw_writer_options *wo)
{
	int oom = 0;
	s->wo = *wo;
	s->cfg = *cfg;
	s->process_name = ptw_sys_dup(cfg->process_name, &oom);
	s->disabled = ptw_sys_dup(cfg->disabled_categories, &oom);
	s->machine_name = ptw_sys_dup(cfg->machine_name ? cfg->machine_name
							: wo->machine_name,
				      &oom);
	s->cfg.process_name = s->process_name;
	s->cfg.disabled_categories = s->disabled;
	s->cfg.machine_name = s->machine_name;
	s->wo.machine_name = NULL;
	s->wo.compress = PTW_COMPRESS_NONE;
	s->cfg.writer = &s->wo;
	s->cfg.system = 0;
	s->cfg.categories = NULL;
	s->cfg.stop_at_exit = 0;     /* ptw_start registered it */
	s->cfg.crash_path = NULL;    /* not in system mode (README) */
	/* the service's clock, BOOTTIME: read directly, or the CPU's
	 * counter converted to it (tsc.c) when asked for */
	if (cfg->clock != PTW_CLOCK_TSC && cfg->clock != PTW_CLOCK_FASTEST)
		s->cfg.clock = PTW_CLOCK_BOOT;
	/* as ptw_tr_open_writer completes a session's */
	s->swo = s->wo;
	s->swo.close_fd = 0;
	if (cfg->machine_id)
		s->swo.machine_id = cfg->machine_id;
	s->swo.machine_name = s->machine_name;
	s->swo.machine_uname = s->swo.machine_id || s->swo.machine_name;
	s->swo.wall_realtime = 0;
	return oom ? PTW_ERR_NOMEM : 0;
}

int ptw_sys_start(const struct ptw_config *cfg,
		  const struct ptw_writer_options *wo, int own,
		  struct ptw_error *err)
{
	if (cfg->categories && ptw_sys_decl_list(cfg->categories))
		return ptw_error_set(err, PTW_ERR_NOMEM, 0,
				     "ptw_start: out of memory");
	struct ptw_sys *s = calloc(1, sizeof(*s));
	if (!s)
		return ptw_error_set(err, PTW_ERR_NOMEM, 0,
				     "ptw_start: out of memory");
	s->wake_r = s->wake_w = -1;
	pthread_mutex_init(&s->qmu, NULL);
	pthread_mutex_init(&s->sock_mu, NULL);
	int fds[2];
	if (ptw_sys_prod_init(&s->prod, &ptw_sys_ops, s,
			      ptw_os_process_name()) ||
	    ptw_sys_set_config(s, cfg, wo) ||
	    pipe2(fds, O_CLOEXEC | O_NONBLOCK)) {
		ptw_sys_free(s);
		return ptw_error_set(err, PTW_ERR_NOMEM, errno,
				     "ptw_start: out of memory or fds");
	}
	s->wake_r = fds[0];
	s->wake_w = fds[1];
	uint32_t kb = cfg->system_buffer_kb ? cfg->system_buffer_kb
					    : PTW_SYS_DEFAULT_KB;
	s->prod.smb_size_hint = kb > UINT32_MAX / 1024u ? UINT32_MAX & ~4095u
							: kb * 1024u;
	s->prod.smb_page_hint = PTW_SYS_PAGE_HINT;
	if (!ptw_sys_socket_path(s->path, sizeof(s->path))) {
		ptw_sys_free(s);
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: PERFETTO_PRODUCER_SOCK_NAME "
				     "is longer than a socket path");
	}
	s->backoff_ms = PTW_SYS_BACKOFF_MIN_MS;
	s->own = own;

	pthread_mutex_lock(&ptw_sys_mu);
	if (ptw_sys_g || (!own && ptw_is_running())) {
		pthread_mutex_unlock(&ptw_sys_mu);
		ptw_sys_free(s);
		return ptw_error_set(err, PTW_ERR_STATE, 0,
				     "ptw_start: tracing is already running");
	}
	atomic_store(&ptw_sys_lost_before, 0);
	atomic_store(&ptw_sys_lost_total, 0);
	int rc = ptw_tr_spawn(&s->th, "ptw-system", ptw_sys_main, s);
	if (rc) {
		pthread_mutex_unlock(&ptw_sys_mu);
		ptw_sys_free(s);
		return ptw_error_set(err, PTW_ERR_NOMEM, rc,
				     "ptw_start: cannot create the system thread");
	}
	ptw_sys_g = s;
	pthread_mutex_unlock(&ptw_sys_mu);
	return 0;
}

int ptw_sys_on(void)
{
	pthread_mutex_lock(&ptw_sys_mu);
	int on = ptw_sys_g != NULL;
	pthread_mutex_unlock(&ptw_sys_mu);
	return on;
}

int ptw_sys_stop(int *own)
{
	pthread_mutex_lock(&ptw_sys_mu);
	struct ptw_sys *s = ptw_sys_g;
	ptw_sys_g = NULL;
	pthread_mutex_unlock(&ptw_sys_mu);
	if (!s)
		return 0;
	*own = s->own;
	atomic_store(&s->quit, 1);
	char b = 1; /* whatever the wake-up flag says */
	ssize_t n = write(s->wake_w, &b, 1);
	(void)n;
	pthread_join(s->th, NULL);
	ptw_sys_free(s);
	return 1;
}

void ptw_sys_atfork_child(void)
{
	/* the parent's thread does not exist here; its mutexes may be held:
	 * take none, close the connection's fds, unmap the buffer, and
	 * leave the rest (a small leak, as the tracer leaves its session) */
	struct ptw_sys *s = ptw_sys_g;
	ptw_sys_g = NULL;
	pthread_mutex_init(&ptw_sys_mu, NULL);
	ptw_sys_decl_atfork_child();
	if (!s)
		return;
	if (s->prod.ipc.fd >= 0)
		close(s->prod.ipc.fd);
	if (s->prod.pending_fd >= 0)
		close(s->prod.pending_fd);
	close(s->wake_r);
	close(s->wake_w);
	if (s->smb_mem)
		munmap(s->smb_mem, s->smb_size);
}

/* tell the service about categories declared after the start */
void ptw_sys_decl_changed(void)
{
	pthread_mutex_lock(&ptw_sys_mu);
	if (ptw_sys_g)
		ptw_sys_wake(ptw_sys_g);
	pthread_mutex_unlock(&ptw_sys_mu);
}

void ptw_sys_describe(char *out, size_t n)
{
	static const char *const states[] = {"closed", "binding", "initializing",
					     "ready"};
	pthread_mutex_lock(&ptw_sys_mu);
	struct ptw_sys *s = ptw_sys_g;
	if (!s) {
		pthread_mutex_unlock(&ptw_sys_mu);
		snprintf(out, n, "system mode is off");
		return;
	}
	/* the system thread holds sock_mu but while it sleeps in poll() or
	 * waits for the backend: one stuck with it is worth saying */
	int locked = 0;
	for (int i = 0; i < 1000 && !locked; i++) {
		locked = pthread_mutex_trylock(&s->sock_mu) == 0;
		if (!locked) {
			struct timespec ts = {0, 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	if (!locked) {
		pthread_mutex_unlock(&ptw_sys_mu);
		snprintf(out, n, "the system thread held its mutex for 1 s");
		return;
	}
	const struct ptw_sys_prod *p = &s->prod;
	snprintf(out, n,
		 "connection %s after %llu attempts; %llu protocol errors "
		 "(last: %s); buffer %s; %zu sessions; %llu starts refused "
		 "(last: %s); categories registered: version %llu of %llu",
		 p->state >= 0 && p->state <= PTW_SYS_P_READY ? states[p->state]
							      : "?",
		 (unsigned long long)s->connects,
		 (unsigned long long)p->protocol_errors,
		 p->why ? p->why : "none", s->smb ? "mapped" : "none",
		 s->n_sess, (unsigned long long)s->starts_refused,
		 s->start_why ? s->start_why : "none",
		 (unsigned long long)s->decl_sent,
		 (unsigned long long)ptw_sys_decl_version());
	pthread_mutex_unlock(&s->sock_mu);
	pthread_mutex_unlock(&ptw_sys_mu);
}
