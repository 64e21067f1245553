/* tracer_sink.c - outputs of a session besides its own writer ("sinks":
 * the system sessions of Perfetto's service, lib/system): adding and
 * removing one while the session runs, and which records each takes.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Every sink has a writer of its own (interning and incremental state
 * are per writer), and the backend feeds each ring record it drains to
 * the session's writer and to every sink that wants it; each thread has
 * a struct per sink for the writer's per-thread state (tracer_backend.c,
 * "shadows"). The producers write a record when any output wants its
 * category (ptw_tr_ctl.cat_filter is the union, lib/system); a sink
 * beside other outputs skips the records of categories it does not want,
 * looked up once per category address and cached (a counter's record
 * has its call site, whose category it is). A slice END goes exactly to
 * the sinks that took its BEGIN: each sink follows the nesting of the
 * ring's BEGINs and ENDs (sh_rdepth, sh_got, at any depth), so that a
 * scope's END, which carries no category, still finds its BEGIN's
 * outputs. */
#include "tracer_internal.h"

#include "lib/os/os_proc.h"
#include "lib/util/grow.h"
#include <stdint.h>

#include <stdlib.h>
#include <string.h>

struct ptw_tracer *ptw_tr_sink_new_locked(const struct ptw_tracer *tr,
					  const struct ptw_tr_sink_cfg *sc)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	struct ptw_tracer *sk = calloc(1, sizeof(*sk));
	/* the name ptw_set_process_name gave, else the config's */
	char *name = strdup(c->process_name ? c->process_name
			    : sc->pname     ? sc->pname
					    : ptw_os_process_name());
	if (!sk || !name) {
		free(sk);
		free(name);
		return NULL;
	}
	static uint64_t next_id; /* under the mutex */
	sk->sink_id = ++next_id;
	sk->out = sc->out;
	sk->sink_wo = sc->wo;
	sk->sink_pname = name;
	sk->want = sc->want;
	sk->want_ctx = sc->want_ctx;
	sk->out_fd = -1;
	/* the clock and what the events carry are the session's */
	sk->pid = tr->pid;
	sk->use_tsc = tr->use_tsc; /* its conversion: ptw_tr_sink_open */
	sk->clock_bits = tr->clock_bits;
	sk->srcloc = tr->srcloc;
	sk->general_only = tr->general_only;
	sk->ring_slots = tr->ring_slots;
	sk->drain_us = tr->drain_us;
	sk->session = tr->session;
	return sk;
}

void ptw_tr_sink_name_free(struct ptw_tracer *sk)
{
	free((char *)(uintptr_t)sk->sink_pname);
	sk->sink_pname = NULL;
}

/* Hands request rq to the running session's backend (one at a time:
 * the system thread is the only caller) and waits for its answer; for an
 * add (sc), the sink is made here. */
static int ptw_tr_sink_ask(struct ptw_tr_sink_req *rq,
			   const struct ptw_tr_sink_cfg *sc, uint64_t *id)
{
	ptw_tr_ctl_init_once();
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	struct ptw_tracer *tr = c->tr;
	uint64_t session = tr ? tr->session : 0;
	while (tr && c->tr == tr && c->tr->session == session &&
	       !c->stopping && tr->sink_req)
		pthread_cond_wait(&c->done, &c->mu);
	/* stopping: the stop closes every sink */
	if (!c->tr || c->tr->session != session || c->stopping) {
		pthread_mutex_unlock(&c->mu);
		return PTW_ERR_STATE;
	}
	if (sc && !(rq->add = ptw_tr_sink_new_locked(tr, sc))) {
		pthread_mutex_unlock(&c->mu);
		return PTW_ERR_NOMEM;
	}
	if (sc)
		*id = rq->add->sink_id;
	tr->sink_req = rq;
	pthread_cond_signal(&c->wake);
	/* the backend answers every request, also at its stop, and frees a
	 * sink it refuses (the backend refuses one beyond PTW_TR_MAX_SINKS) */
	while (!rq->done)
		pthread_cond_wait(&c->done, &c->mu);
	pthread_mutex_unlock(&c->mu);
	return rq->rc;
}

int ptw_tr_sink_add(const struct ptw_tr_sink_cfg *sc, uint64_t *id)
{
	struct ptw_tr_sink_req rq = {0};
	uint64_t sid = 0;
	int rc = ptw_tr_sink_ask(&rq, sc, &sid);
	if (!rc)
		*id = sid;
	return rc;
}

int ptw_tr_sink_remove(uint64_t id)
{
	struct ptw_tr_sink_req rq = {.remove = id};
	return ptw_tr_sink_ask(&rq, NULL, NULL);
}

/* Does the sink want category 'cat' (a group "a,b": any member)? The
 * empty category is every output's. */
static int ptw_tr_sink_cat(struct ptw_tracer *tr, const char *cat)
{
	if (!cat || !*cat)
		return 1;
	uint64_t v;
	if (ptw_map_get(&tr->want_cat, (uint64_t)(uintptr_t)cat, &v))
		return v == 1;
	int on = 0;
	for (const char *m = cat; !on;) {
		size_t len = strcspn(m, ",");
		on = len && tr->want(tr->want_ctx, m, len);
		if (!m[len])
			break;
		m += len + 1;
	}
	/* out of memory: asked again next time */
	(void)ptw_map_put(&tr->want_cat, (uint64_t)(uintptr_t)cat, on ? 1 : 2);
	return on;
}

/* A counter's record has its value where others have the category, and
 * its call site in 'name' (tracer_internal.h): the site's category. */
static int ptw_tr_sink_counter(struct ptw_tracer *tr, const struct ptw_i_rec *rec)
{
	const struct ptw_i_site *site = ptw_tr_rec_site(rec);
	return !site || ptw_tr_sink_cat(tr, site->cat);
}

/* The word of th's 'got' bits that holds level d (sh_got, then
 * sh_got_deep, grown as needed), or NULL: out of memory. */
static uint64_t *ptw_tr_sink_got_word(struct ptw_tr_thread *th, uint32_t d)
{
	if (d < 64)
		return &th->sh_got;
	size_t w = d / 64 - 1, cap = th->sh_got_deep_n;
	if (w >= cap) {
		uint64_t *v = ptw_grow(th->sh_got_deep, &cap, w + 1, 4,
				       sizeof(*v));
		if (!v)
			return NULL;
		memset(v + th->sh_got_deep_n, 0,
		       (cap - th->sh_got_deep_n) * sizeof(*v));
		th->sh_got_deep = v;
		th->sh_got_deep_n = cap;
	}
	return &th->sh_got_deep[w];
}

/* Level d's bit of th's 'got' bits, or -1: not grown that deep. */
static int ptw_tr_sink_got_bit(const struct ptw_tr_thread *th, uint32_t d)
{
	const uint64_t *w = d < 64 ? &th->sh_got
			    : d / 64 - 1 < th->sh_got_deep_n
				    ? &th->sh_got_deep[d / 64 - 1]
				    : NULL;
	return w ? (int)((*w >> (d % 64)) & 1) : -1;
}

void ptw_tr_sink_got_all(struct ptw_tr_thread *th, uint32_t depth)
{
	th->sh_rdepth = depth;
	for (uint32_t d = 0; d < depth; d++) {
		uint64_t *w = ptw_tr_sink_got_word(th, d);
		if (w)
			*w |= (uint64_t)1 << (d % 64);
	}
}

int ptw_tr_sink_peek(struct ptw_tracer *tr, const struct ptw_tr_thread *th,
		     const struct ptw_i_rec *rec)
{
	switch (rec->kind) {
	case PTW_I_K_END: {
		/* its BEGIN came before the sink did: not this sink's */
		if (!th->sh_rdepth)
			return 0;
		int bit = ptw_tr_sink_got_bit(th, th->sh_rdepth - 1);
		if (bit >= 0)
			return bit;
		/* no room was left for its level's bit: by category (a
		 * scope's END has none: every sink's) */
		return ptw_tr_sink_cat(tr, rec->v.cat);
	}
	case PTW_I_K_COUNTER_INT:
	case PTW_I_K_COUNTER_DOUBLE:
	case PTW_I_K_TRACK_COUNTER_INT:
	case PTW_I_K_TRACK_COUNTER_DOUBLE:
		return ptw_tr_sink_counter(tr, rec);
	case PTW_I_K_THREAD_NAME:
	case PTW_I_K_DROPPED:
		return 1;
	default: /* a BEGIN too */
		return ptw_tr_sink_cat(tr, rec->v.cat);
	}
}

void ptw_tr_sink_step(struct ptw_tr_thread *th, const struct ptw_i_rec *rec,
		      int on)
{
	if (rec->kind == PTW_I_K_BEGIN) {
		uint64_t *w = ptw_tr_sink_got_word(th, th->sh_rdepth);
		if (w) {
			uint64_t bit = (uint64_t)1 << (th->sh_rdepth % 64);
			*w = on ? *w | bit : *w & ~bit;
		}
		th->sh_rdepth++;
	} else if (rec->kind == PTW_I_K_END && th->sh_rdepth) {
		th->sh_rdepth--;
	}
}

int ptw_tr_sink_wants(struct ptw_tracer *tr, struct ptw_tr_thread *th,
		      const struct ptw_i_rec *rec)
{
	int on = ptw_tr_sink_peek(tr, th, rec);
	ptw_tr_sink_step(th, rec, on);
	return on;
}
