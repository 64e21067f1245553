/* test_writer_random.c - random operation sequences (several sequences and
 * tracks, backwards time, static and dynamic strings, annotations, flows,
 * misuse) under random options; the decoded trace must equal a model of
 * what was accepted, and every rejected call must be predicted.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "ptw/writer.h"
#include "test_writer_util.h"

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)((rng_state >> 11) % n);
}

static const char *const pool[] = {"alpha", "beta", "gamma", "delta", "",
				   "a.b[c]", "long-name-long-name-long-name"};
#define POOL_N (sizeof(pool) / sizeof(pool[0]))

struct model {
	struct tw_event *ev;
	size_t n, cap;
	uint32_t depth[16];
};

static struct tw_event *model_add(struct model *m, uint32_t seq, int type,
				  uint64_t track, uint64_t ts)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 1024;
		m->ev = realloc(m->ev, m->cap * sizeof(*m->ev));
	}
	struct tw_event *e = &m->ev[m->n++];
	memset(e, 0, sizeof(*e));
	e->seq = seq;
	e->type = type;
	e->track = track;
	e->ts = ts;
	return e;
}

static void run_one(uint64_t seed)
{
	rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
	struct ptw_writer_options o = {
		.checkpoint_packets = 1 + rnd(40),
		.max_interned = 1 + rnd(6),
		.flush_bytes = 64 + rnd(4000),
		.compress = (int)rnd(2),
		.compress_level = 1 + (int)rnd(9),
	};
	char *path = tw_tmp_path();
	struct ptw_error err;
	struct ptw_writer *w = ptw_writer_open(path, &o, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t tracks[6];
	int is_counter[7] = {0};
	tracks[0] = ptw_writer_add_process_track(w, 1, "p");
	tracks[1] = ptw_writer_add_thread_track(w, 1, 2, "t");
	tracks[2] = ptw_writer_add_track(w, "n", tracks[0], 1);
	tracks[3] = ptw_writer_add_track(w, "g", 0, -1);
	tracks[4] = ptw_writer_add_counter_track(w, "c", "u", tracks[0], -1);
	tracks[5] = ptw_writer_add_counter_track(w, "d", NULL, 0, -1);
	is_counter[5] = is_counter[6] = 1; /* uuids 5 and 6 */
	struct ptw_seq *seqs[3] = {ptw_writer_sim_seq(w), ptw_writer_wall_seq(w),
				   ptw_writer_add_seq(w, tracks[1])};
	uint32_t seq_ids[3] = {3, 4, 5};
	uint64_t dflt[3] = {0, 0, tracks[1]};
	uint64_t now[3] = {1000, 50, 100000};
	struct model m = {0};
	char dyn[3][16];
	for (int step = 0; step < 600; step++) {
		int si = (int)rnd(3);
		struct ptw_seq *s = seqs[si];
		now[si] += rnd(5) == 0 ? 0 : rnd(3000);
		uint64_t ts = rnd(8) == 0 ? now[si] - rnd((uint32_t)now[si] + 1) : now[si];
		uint64_t track = rnd(4) == 0 ? 0 : tracks[rnd(6)];
		uint64_t eff = track ? track : dflt[si];
		uint32_t op = rnd(6);
		if (op >= 4) { /* counter */
			int good = eff && is_counter[eff];
			int64_t v = (int64_t)rnd(2000) - 1000;
			int rc = op == 4 ? ptw_seq_counter_int(s, track, ts, v)
					 : ptw_seq_counter_double(s, track, ts, v / 8.0);
			cr_assert_eq(rc, good ? 0 : PTW_ERR_INVALID, "step %d", step);
			if (good) {
				struct tw_event *e = model_add(&m, seq_ids[si], 4, eff, ts);
				e->has_value = 1;
				e->is_double = op == 5;
				if (op == 5)
					e->dval = v / 8.0;
				else
					e->ival = v;
			}
			continue;
		}
		struct ptw_event ev = {.track = track, .ts = ts};
		uint32_t flags = rnd(2) ? PTW_EV_STATIC_STRINGS : 0;
		if (rnd(4)) {
			if (flags) {
				ev.name = pool[rnd(POOL_N)];
			} else {
				snprintf(dyn[0], sizeof(dyn[0]), "dyn%u", rnd(9));
				ev.name = dyn[0];
			}
		}
		if (rnd(3))
			ev.category = flags ? pool[rnd(3)] : (snprintf(dyn[1], sizeof(dyn[1]), "c%u", rnd(4)), dyn[1]);
		ev.flags = flags;
		struct ptw_arg args[3];
		ev.n_args = rnd(4);
		for (uint32_t a = 0; a < ev.n_args; a++) {
			args[a].name = pool[rnd(POOL_N)];
			args[a].type = (enum ptw_arg_type)(1 + rnd(6));
			args[a].v.u = rng_state;
			if (args[a].type == PTW_ARG_TYPE_BOOL)
				args[a].v.b = (int)rnd(2);
			if (args[a].type == PTW_ARG_TYPE_DOUBLE)
				args[a].v.d = rnd(100) / 3.0;
			if (args[a].type == PTW_ARG_TYPE_STRING) {
				snprintf(dyn[2], sizeof(dyn[2]), "v%u", rnd(20));
				args[a].v.s = rnd(2) ? dyn[2] : pool[rnd(POOL_N)];
			}
		}
		ev.args = args;
		uint64_t flows[2] = {rnd(50), rnd(50)};
		if (rnd(5) == 0) {
			ev.flow_ids = flows;
			ev.n_flow_ids = 1 + rnd(2);
		}
		if (rnd(7) == 0) {
			ev.terminating_flow_ids = flows + 1;
			ev.n_terminating_flow_ids = 1;
		}
		int type = op == 0 ? 1 : op == 1 ? 2 : op == 2 ? 3 : 5;
		int good = eff && !is_counter[eff];
		if (type == 2 && good && m.depth[eff] == 0)
			good = 0;
		int rc;
		uint64_t dur = rnd(500);
		switch (type) {
		case 1: rc = ptw_seq_slice_begin(s, &ev); break;
		case 2: rc = ptw_seq_slice_end(s, &ev); break;
		case 3: rc = ptw_seq_instant(s, &ev); break;
		default: rc = ptw_seq_slice_complete(s, &ev, dur); break;
		}
		cr_assert_eq(rc, good ? 0 : PTW_ERR_INVALID, "step %d type %d: %s", step,
			     type, ptw_writer_error(w)->msg);
		if (!good)
			continue;
		struct tw_event *e = model_add(&m, seq_ids[si], type == 5 ? 1 : type, eff, ts);
		if (type != 2) {
			e->has_name = ev.name != NULL;
			tw_copy(e->name, sizeof(e->name), ev.name);
			e->has_cat = ev.category != NULL;
			tw_copy(e->cat, sizeof(e->cat), ev.category);
		}
		e->n_args = ev.n_args;
		e->args = e->n_args ? calloc(e->n_args, sizeof(*e->args)) : NULL;
		for (uint32_t a = 0; a < ev.n_args; a++) {
			struct tw_arg *x = &e->args[a];
			tw_copy(x->name, sizeof(x->name), args[a].name);
			switch (args[a].type) {
			case PTW_ARG_TYPE_BOOL: x->type = 1; x->b = args[a].v.b != 0; break;
			case PTW_ARG_TYPE_INT: x->type = 2; x->i = args[a].v.i; break;
			case PTW_ARG_TYPE_UINT: x->type = 3; x->u = args[a].v.u; break;
			case PTW_ARG_TYPE_DOUBLE: x->type = 4; x->d = args[a].v.d; break;
			case PTW_ARG_TYPE_STRING: x->type = 5; tw_copy(x->s, sizeof(x->s), args[a].v.s); break;
			case PTW_ARG_TYPE_POINTER: x->type = 6; x->u = args[a].v.u; break;
			case PTW_ARG_TYPE_DICT: case PTW_ARG_TYPE_ARRAY: break; /* not used here */
			}
		}
		e->n_flows = ev.n_flow_ids;
		memcpy(e->flows, flows, sizeof(flows));
		e->n_tflows = ev.n_terminating_flow_ids;
		if (e->n_tflows)
			e->tflows[0] = flows[1];
		if (type == 1)
			m.depth[eff]++;
		else if (type == 2)
			m.depth[eff]--;
		else if (type == 5)
			model_add(&m, seq_ids[si], 2, eff, ts + dur);
		if (rnd(50) == 0)
			ptw_seq_mark_dropped(s, 1 + rnd(5));
	}
	cr_assert_eq(ptw_writer_close(w, &err), 0, "%s", err.msg);
	struct tw_trace t;
	cr_assert_eq(tw_decode_file(&t, path), 0, "seed %llu: %s",
		     (unsigned long long)seed, t.err);
	cr_assert_eq(t.n_ev, m.n, "seed %llu", (unsigned long long)seed);
	for (size_t i = 0; i < m.n; i++) {
		const char *d = tw_event_diff(&t.ev[i], &m.ev[i]);
		cr_assert_null(d, "seed %llu event %zu differs in %s",
			       (unsigned long long)seed, i, d);
	}
	tw_trace_free(&t);
	for (size_t i = 0; i < m.n; i++)
		free(m.ev[i].args);
	free(m.ev);
	unlink(path);
	free(path);
}

Test(writer_random, random_operations_match_the_model)
{
	const char *sc = getenv("PTW_TEST_SCALE");
	int n = sc && strcmp(sc, "small") == 0 ? 10 : 40;
	for (int seed = 1; seed <= n; seed++)
		run_one((uint64_t)seed);
}
