/* trace_clock.c - trace_processor's clock model for the reader.
 * SPDX-License-Identifier: Apache-2.0 */
#include "trace_clock.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"
#include "u64map.h"

struct u32vec {
	uint32_t *v;
	uint32_t n;
	size_t cap;
};

static int u32vec_push(struct u32vec *a, uint32_t x)
{
	if (a->n == a->cap) {
		uint32_t *p = ptw_grow(a->v, &a->cap, (size_t)a->n + 1, 4,
				       sizeof(*p));
		if (!p)
			return -1;
		a->v = p;
	}
	a->v[a->n++] = x;
	return 0;
}

/* A clock domain: builtin/global clocks have seq 0; 64..127 carry their
 * sequence. */
struct domain {
	uint32_t seq, id;
	int64_t unit_ns;
	int is_incremental;
	int non_monotonic;  /* demoted to "target only" */
	int64_t running_ns; /* incremental clocks: last absolute value */
	int has_snapshot;
	struct u32vec snaps; /* snapshots holding this clock, in order */
	struct u32vec adj;   /* clocks sharing a snapshot with this one */
	/* cached conversion path to 'path_target', valid for 'path_gen' */
	uint32_t path[PTW_CLOCK_MAX_HOPS + 1];
	int path_len; /* 0: no path */
	uint32_t path_target;
	uint64_t path_gen; /* 0: nothing cached */
};

/* One accepted snapshot: readings in ns, by domain index. */
struct snapshot {
	uint32_t n;
	uint32_t *dom;
	int64_t *ns;
};

struct ptw_clocks {
	struct domain *doms;
	uint32_t n_doms;
	size_t cap_doms;
	struct snapshot *snaps;
	uint32_t n_snaps;
	size_t cap_snaps;
	struct ptw_u64map idx;	/* (seq << 32 | id) -> domain index + 1 */
	/* (clock set, domain) -> its last reading (ns): trace_processor
	 * checks that readings grow per clock among the snapshots of the
	 * same clocks in the same order (clock_synchronizer.cc AddSnapshot:
	 * one time series per snapshot hash), not across all snapshots */
	struct ptw_map last;
	uint64_t gen;		/* bumped by every accepted snapshot */
	uint32_t trace_clock;	/* 0: TRACE_FILE, not chosen yet */
	uint32_t default_clock; /* 0: none */
	int converted;		/* a conversion happened: trace clock fixed */
};

/* Wrapping arithmetic: garbage input must not be signed-overflow UB. */
static int64_t wadd(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t wmul(uint64_t a, int64_t b)
{
	return (int64_t)(a * (uint64_t)b);
}

struct ptw_clocks *ptw_clocks_new(void)
{
	return calloc(1, sizeof(struct ptw_clocks));
}

void ptw_clocks_free(struct ptw_clocks *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->n_snaps; i++) {
		free(c->snaps[i].dom);
		free(c->snaps[i].ns);
	}
	free(c->snaps);
	for (uint32_t i = 0; i < c->n_doms; i++) {
		free(c->doms[i].snaps.v);
		free(c->doms[i].adj.v);
	}
	free(c->doms);
	ptw_u64map_free(&c->idx);
	ptw_map_free(&c->last);
	free(c);
}

static long find_dom(const struct ptw_clocks *c, uint32_t seq, uint32_t id)
{
	if (!ptw_clock_is_seq(id))
		seq = 0;
	uintptr_t i =
		(uintptr_t)ptw_u64map_get(&c->idx, (uint64_t)seq << 32 | id);
	return i ? (long)i - 1 : -1;
}

static long add_dom(struct ptw_clocks *c, uint32_t seq, uint32_t id)
{
	long i = find_dom(c, seq, id);
	if (i >= 0)
		return i;
	if (c->n_doms == c->cap_doms) {
		struct domain *d = ptw_grow(c->doms, &c->cap_doms,
					    (size_t)c->n_doms + 1, 8, sizeof(*d));
		if (!d)
			return -1;
		c->doms = d;
	}
	struct domain *d = &c->doms[c->n_doms];
	memset(d, 0, sizeof(*d));
	d->seq = ptw_clock_is_seq(id) ? seq : 0;
	d->id = id;
	d->unit_ns = 1;
	if (ptw_u64map_put(&c->idx, (uint64_t)d->seq << 32 | id,
			   (void *)(uintptr_t)(c->n_doms + 1)) < 0)
		return -1;
	return (long)c->n_doms++;
}

uint32_t ptw_clocks_default(const struct ptw_clocks *c)
{
	return c->default_clock;
}

uint32_t ptw_clocks_trace_clock(const struct ptw_clocks *c)
{
	return c->trace_clock;
}

int ptw_clocks_is_incremental(const struct ptw_clocks *c, uint32_t seq,
			      uint32_t id)
{
	long i = find_dom(c, seq, id);
	return i >= 0 && c->doms[i].has_snapshot && c->doms[i].is_incremental;
}

/* The key of the snapshot's clock set (domain indices, in snapshot order,
 * as trace_processor hashes clock ids), or 0 if a clock has no domain yet
 * (then none of its readings has a predecessor in the set). */
static uint64_t set_key(const struct ptw_clocks *c, uint32_t seq,
			const struct ptw_clock_reading *r, uint32_t n)
{
	uint64_t h = PTW_FNV_INIT;
	for (uint32_t i = 0; i < n; i++) {
		long d = find_dom(c, seq, r[i].id);
		if (d < 0)
			return 0;
		uint32_t u = (uint32_t)d;
		h = ptw_fnv1a(h, &u, sizeof(u));
	}
	return h | 1;
}

/* The key of domain d's reading in clock set 'set'. */
static uint64_t last_key(uint64_t set, long d)
{
	uint32_t u = (uint32_t)d;
	return ptw_fnv1a(set, &u, sizeof(u));
}

/* The trace default / global clock is chosen before the snapshot is
 * validated (proto_trace_reader.cc ParseClockSnapshot): the primary
 * clock, else BOOTTIME when present without TRACE_FILE. The global clock
 * only changes while nothing was converted yet (clock_tracker.cc
 * SetGlobalClock). */
static void choose_trace_clock(struct ptw_clocks *c,
			       const struct ptw_clock_reading *r, uint32_t n,
			       uint32_t primary)
{
	uint32_t chosen = primary;
	if (!chosen) {
		int boot = 0, file = 0;
		for (uint32_t i = 0; i < n; i++) {
			boot |= r[i].id == PTW_CLOCK_BOOTTIME;
			file |= r[i].id == PTW_CLOCK_TRACE_FILE;
		}
		if (boot && !file)
			chosen = PTW_CLOCK_BOOTTIME;
	}
	if (chosen) {
		c->default_clock = chosen;
		if (!c->converted)
			c->trace_clock = chosen;
	}
}

/* Is the snapshot one trace_processor rejects? Says why (*why) and
 * returns 1, else 0. */
static int snapshot_invalid(struct ptw_clocks *c, uint32_t seq,
			    const struct ptw_clock_reading *r, uint32_t n,
			    const char **why)
{
	uint64_t set = set_key(c, seq, r, n), prev;
	for (uint32_t i = 0; i < n; i++) {
		int64_t unit = r[i].unit_ns ? (int64_t)r[i].unit_ns : 1;
		for (uint32_t j = 0; j < i; j++) {
			if (r[j].id == r[i].id) {
				*why = "a clock appears twice in one snapshot";
				return 1;
			}
		}
		long d = find_dom(c, seq, r[i].id);
		if (d < 0 || !c->doms[d].has_snapshot) {
			if (r[i].is_incremental && !ptw_clock_is_seq(r[i].id)) {
				*why = "is_incremental on a clock that is not "
				       "sequence-scoped (64..127)";
				return 1;
			}
		} else if (c->doms[d].unit_ns != unit ||
			   c->doms[d].is_incremental != !!r[i].is_incremental) {
			*why = "a clock changed unit_multiplier_ns or "
			       "is_incremental between snapshots";
			return 1;
		}
		uint32_t tc =
			c->trace_clock ? c->trace_clock : PTW_CLOCK_TRACE_FILE;
		if (r[i].id == tc && unit != 1) {
			*why = "the trace clock must have unit 1 ns";
			return 1;
		}
		if (r[i].id == tc && set &&
		    ptw_map_get(&c->last, last_key(set, d), &prev) &&
		    wmul(r[i].timestamp, unit) < (int64_t)prev) {
			*why = "the trace clock goes backwards between "
			       "snapshots";
			return 1;
		}
	}
	return 0;
}

/* Indexes snapshot number c->n_snaps: per clock, its snapshots and its
 * neighbours. Returns 0 or -1 (out of memory). */
static int index_snapshot(struct ptw_clocks *c, const struct snapshot *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		struct domain *dm = &c->doms[s->dom[i]];
		if (u32vec_push(&dm->snaps, c->n_snaps))
			return -1;
		for (uint32_t j = 0; j < s->n; j++) {
			if (j == i)
				continue;
			int known = 0;
			for (uint32_t k = 0; k < dm->adj.n && !known; k++)
				known = dm->adj.v[k] == s->dom[j];
			if (!known && u32vec_push(&dm->adj, s->dom[j]))
				return -1;
		}
	}
	return 0;
}

int ptw_clocks_add_snapshot(struct ptw_clocks *c, uint32_t seq,
			    const struct ptw_clock_reading *r, uint32_t n,
			    uint32_t primary, const char **why)
{
	choose_trace_clock(c, r, n, primary);
	/* Validate everything first: a rejected snapshot adds nothing (TP
	 * may have recorded the readings before the offending clock; a
	 * valid trace never depends on that). */
	if (snapshot_invalid(c, seq, r, n, why))
		return 1;

	struct snapshot s = {0};
	uint64_t prev;
	for (uint32_t i = 0; i < n; i++) /* every clock gets its domain */
		if (add_dom(c, seq, r[i].id) < 0)
			return -1;
	uint64_t set = set_key(c, seq, r, n);
	s.dom = malloc((n ? n : 1) * sizeof(*s.dom));
	s.ns = malloc((n ? n : 1) * sizeof(*s.ns));
	if (!s.dom || !s.ns)
		goto nomem;
	for (uint32_t i = 0; i < n; i++) {
		long d = add_dom(c, seq, r[i].id);
		if (d < 0)
			goto nomem;
		struct domain *dm = &c->doms[d];
		int64_t unit = r[i].unit_ns ? (int64_t)r[i].unit_ns : 1;
		int64_t ns = wmul(r[i].timestamp, unit);
		uint64_t k = last_key(set, d);
		if (ptw_map_get(&c->last, k, &prev) && ns < (int64_t)prev)
			dm->non_monotonic = 1;
		if (ptw_map_put(&c->last, k, (uint64_t)ns))
			goto nomem;
		dm->has_snapshot = 1;
		dm->unit_ns = unit;
		dm->is_incremental = !!r[i].is_incremental;
		/* clock_synchronizer.h ClockDomain: the snapshot resets the
		 * running value of an incremental clock */
		dm->running_ns = ns;
		s.dom[i] = (uint32_t)d;
		s.ns[i] = ns;
	}
	s.n = n;
	if (c->n_snaps == c->cap_snaps) {
		struct snapshot *p = ptw_grow(c->snaps, &c->cap_snaps,
					      (size_t)c->n_snaps + 1, 8,
					      sizeof(*p));
		if (!p)
			goto nomem;
		c->snaps = p;
	}
	if (index_snapshot(c, &s))
		goto nomem;
	c->snaps[c->n_snaps++] = s;
	c->gen++;
	return 0;
nomem:
	free(s.dom);
	free(s.ns);
	return -1;
}

/* Reading of domain 'd' in snapshot 's', or -1 if absent. */
static long reading(const struct snapshot *s, uint32_t d)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->dom[i] == d)
			return (long)i;
	return -1;
}

/* One hop src -> dst: the latest snapshot holding both whose src reading
 * is <= v, else the first one holding both (clock_synchronizer.cc). The
 * newest snapshots are tried first: values mostly grow. Returns 0 and
 * *out, or 1. */
static int hop(const struct ptw_clocks *c, uint32_t src, uint32_t dst,
	       int64_t v, int64_t *out)
{
	const struct u32vec *sl = &c->doms[src].snaps;
	long best = -1, first = -1;
	for (uint32_t k = sl->n; k-- > 0;) {
		const struct snapshot *s = &c->snaps[sl->v[k]];
		long a = reading(s, src), b = reading(s, dst);
		if (a < 0 || b < 0)
			continue;
		first = sl->v[k];
		if (s->ns[a] <= v) {
			best = sl->v[k];
			break;
		}
	}
	if (best < 0)
		best = first;
	if (best < 0)
		return 1;
	const struct snapshot *s = &c->snaps[best];
	*out = wadd(s->ns[reading(s, dst)],
		    (int64_t)((uint64_t)v - (uint64_t)s->ns[reading(s, src)]));
	return 0;
}

/* Breadth-first search (at most PTW_CLOCK_MAX_HOPS hops) from 'src' to
 * the global clock 'target'; the path is cached per source until the next
 * snapshot. Returns 0 and the converted value, 1 if no path, -1 out of
 * memory. */
static int search(struct ptw_clocks *c, uint32_t src, uint32_t target,
		  int64_t v, int64_t *out)
{
	struct domain *sd = &c->doms[src];
	if (sd->path_gen != c->gen || sd->path_target != target) {
		uint32_t n = c->n_doms;
		long *prev = malloc(n * sizeof(*prev));
		uint32_t *queue = malloc(n * sizeof(*queue));
		int *depth = malloc(n * sizeof(*depth));
		if (!prev || !queue || !depth) {
			free(prev);
			free(queue);
			free(depth);
			return -1;
		}
		for (uint32_t i = 0; i < n; i++)
			prev[i] = -2;
		uint32_t qh = 0, qt = 0;
		queue[qt++] = src;
		prev[src] = -1;
		depth[src] = 0;
		long found = -1;
		while (qh < qt) {
			uint32_t u = queue[qh++];
			if (c->doms[u].id == target && c->doms[u].seq == 0) {
				found = u;
				break;
			}
			/* non-monotonic clocks are targets only */
			if (depth[u] >= PTW_CLOCK_MAX_HOPS ||
			    (u != src && c->doms[u].non_monotonic))
				continue;
			const struct u32vec *adj = &c->doms[u].adj;
			for (uint32_t k = 0; k < adj->n; k++) {
				uint32_t w = adj->v[k];
				if (prev[w] != -2)
					continue;
				prev[w] = u;
				depth[w] = depth[u] + 1;
				queue[qt++] = w;
			}
		}
		sd->path_len = 0;
		if (found >= 0) {
			int len = 0;
			for (long x = found; x >= 0; x = prev[x])
				len++;
			int i = len;
			for (long x = found; x >= 0; x = prev[x])
				sd->path[--i] = (uint32_t)x; /* src first */
			sd->path_len = len;
		}
		sd->path_target = target;
		sd->path_gen = c->gen;
		free(prev);
		free(queue);
		free(depth);
	}
	if (!sd->path_len)
		return 1;
	int64_t val = v;
	for (int i = 0; i + 1 < sd->path_len; i++)
		if (hop(c, sd->path[i], sd->path[i + 1], val, &val))
			return 1;
	*out = val;
	return 0;
}

int ptw_clocks_convert(struct ptw_clocks *c, uint32_t seq, uint32_t id,
		       uint64_t ts, int64_t *out)
{
	uint32_t tc = c->trace_clock ? c->trace_clock : PTW_CLOCK_TRACE_FILE;
	long d = find_dom(c, seq, id);
	int64_t v;
	if (d >= 0 && c->doms[d].has_snapshot) {
		struct domain *dm = &c->doms[d];
		/* ClockDomain::ToNs: deltas advance the running value, in
		 * file order, only for packets converted through it */
		if (dm->is_incremental) {
			dm->running_ns =
				wadd(dm->running_ns, wmul(ts, dm->unit_ns));
			v = dm->running_ns;
		} else {
			v = wmul(ts, dm->unit_ns);
		}
	} else if (id == tc || (id == PTW_CLOCK_BOOTTIME && !c->trace_clock)) {
		v = (int64_t)ts;
	} else {
		return 1; /* clock_sync_failure_unknown_source_clock */
	}
	c->converted = 1;
	if (id == tc) {
		*out = v;
		return 0;
	}
	int r;
	if (d >= 0 && (r = search(c, (uint32_t)d, tc, v, out)) <= 0)
		return r;
	/* forwarding_trace_parser.cc: proto traces get a fallback identity
	 * edge BOOTTIME -> trace time when nothing else links BOOTTIME */
	if (!c->trace_clock || c->trace_clock == PTW_CLOCK_TRACE_FILE) {
		if (id == PTW_CLOCK_BOOTTIME) {
			*out = v;
			return 0;
		}
		if (d >= 0 && (r = search(c, (uint32_t)d, PTW_CLOCK_BOOTTIME, v,
					  out)) <= 0)
			return r;
	}
	return 2;
}
