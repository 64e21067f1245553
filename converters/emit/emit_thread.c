/* emit_thread.c - the emitter's per-thread reorder queue: holds a thread's
 * events until their order at equal timestamps is known, then writes them
 * in trace_processor's JSON order (see emit.h).
 * SPDX-License-Identifier: Apache-2.0
 *
 * Payload layout in a ptw_em_buf (all integers little-endian as in
 * memory, read back with memcpy):
 *   u32 name_len, name bytes, NUL
 *   u8 has_cat [u32 cat_len, cat bytes, NUL]
 *   u8 n_args, each: u32 key_len, key, NUL, u8 type, value
 *       (bool/int/double: 8 bytes; string: u32 len, bytes, NUL;
 *       dict/array: u32 n, then n entries/values in the same form,
 *       array values with an empty key)
 *   u8 flow_dir (enum ptw_flow_dir), [u64 bind_id if flow_dir]
 *   u8 has: bit 0 tts, bit 1 cs; [i64 tts] [u32 cs] */
#include <stdlib.h>
#include <string.h>

#include "emit_internal.h"
#include "lib/writer/seq_complete.h"
#include "lib/util/grow.h"
#include "converters/chrome_json/json_internal.h"
#include "converters/chrome_json/cv_stacks.h"

/* ---- payloads ------------------------------------------------------- */

static void ptw_em_reserve_slow(struct ptw_em_buf *b, size_t k)
{
	if (b->oom)
		return;
	char *np = ptw_grow_by(b->p, &b->cap, b->len, k, 4096, 1);
	if (!np) {
		b->oom = 1;
		return;
	}
	b->p = np;
}

static inline void ptw_em_reserve(struct ptw_em_buf *b, size_t k)
{
	if (__builtin_expect(b->cap - b->len < k, 0))
		ptw_em_reserve_slow(b, k);
}

static void ptw_em_put(struct ptw_em_buf *b, const void *p, size_t n)
{
	ptw_em_reserve(b, n);
	if (b->oom)
		return;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void ptw_em_put_u8(struct ptw_em_buf *b, unsigned v)
{
	uint8_t x = (uint8_t)v;
	ptw_em_put(b, &x, 1);
}

/* Longest string the writer takes, cut back to a UTF-8 boundary. */
static size_t ptw_em_clip(const char *s, size_t n)
{
	if (n < PTW_MAX_STRING_LEN)
		return n;
	n = PTW_MAX_STRING_LEN - 1;
	while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

/* Strings may contain NUL bytes (\u0000 in JSON): the writer takes C
 * strings, so they end at the first NUL. */
static void ptw_em_put_str(struct ptw_em_buf *b, const char *s, size_t n)
{
	if (n) {
		const char *z = memchr(s, '\0', n);
		if (z)
			n = (size_t)(z - s);
	}
	n = ptw_em_clip(s, n);
	uint32_t len = (uint32_t)n;
	ptw_em_put(b, &len, 4);
	ptw_em_put(b, s, n);
	ptw_em_put_u8(b, 0);
}

static void ptw_em_put_u32(struct ptw_em_buf *b, uint32_t v)
{
	ptw_em_put(b, &v, 4);
}

/* ---- nested args --------------------------------------------------------
 * A JSON arg whose value is an object or an array becomes a debug
 * annotation with dict entries / array values whose rows in
 * trace_processor's args table are those its JSON import gives (v58.2:
 * util/json_args.cc AddJsonValueToArgs for the JSON, util/
 * proto_to_args_parser.cc StepDebugAnnotation for the protobuf):
 *   - null values give no row and use up no array index on either side:
 *     they are left out;
 *   - a key is appended to its parent's with '.', so "a.b" is written as
 *     a dict "a" with an entry "b" (the protobuf import would show a
 *     name's '.' as '_'), at every level;
 *   - an object or array that is an array value uses up an index in the
 *     JSON import even when it adds no row; in the protobuf import only a
 *     value that added a row, or a dict with entries, does: such a value
 *     that would be written without entries is written as a dict whose
 *     one entry (named "") is an empty dict (no row);
 *   - '[' and ']' in keys cannot be kept (the protobuf import shows them
 *     as '_'): counted in args_renamed;
 *   - values beyond the writer's PTW_MAX_ARG_NODES / PTW_MAX_ARG_DEPTH,
 *     and top-level args past its PTW_MAX_ANNOTATIONS, are left out:
 *     counted in args_dropped. */

struct ptw_em_nest {
	struct ptw_emit *em;
	uint32_t nodes; /* nested annotations packed for the event */
};

static void ptw_em_pack_value(struct ptw_em_buf *b, struct ptw_em_nest *nx,
			      const struct ptw_cv_json_walk *parent,
			      const struct ptw_cv_arg *v, uint32_t level,
			      int in_array);

/* Packs member 'v' under key k[0, kn) (split on '.') whose first part is
 * at nesting level 'level' (0: a top-level annotation). Returns 1, or 0
 * if it does not fit the limits (nothing packed). */
static int ptw_em_pack_member(struct ptw_em_buf *b, struct ptw_em_nest *nx,
			      const struct ptw_cv_json_walk *parent,
			      const char *k, size_t kn,
			      const struct ptw_cv_arg *v, uint32_t level)
{
	uint32_t dots = 0;
	int brackets = 0;
	for (size_t i = 0; i < kn; i++) {
		dots += k[i] == '.';
		brackets |= k[i] == '[' || k[i] == ']';
	}
	uint32_t need = dots + (level > 0);
	if (need > PTW_MAX_ARG_NODES - nx->nodes ||
	    level + dots > PTW_MAX_ARG_DEPTH) {
		nx->em->st.args_dropped++;
		return 0;
	}
	nx->nodes += need;
	if (brackets)
		nx->em->st.args_renamed++;
	for (;;) {
		const char *dot = memchr(k, '.', kn);
		size_t part = dot ? (size_t)(dot - k) : kn;
		ptw_em_put_str(b, k, part);
		if (!dot)
			break;
		ptw_em_put_u8(b, PTW_ARG_TYPE_DICT);
		ptw_em_put_u32(b, 1);
		k += part + 1;
		kn -= part + 1;
		level++;
	}
	ptw_em_pack_value(b, nx, parent, v, level, 0);
	return 1;
}

/* The walk of a container value: a child of 'parent', or a new one. */
static int ptw_em_walk(struct ptw_em_nest *nx,
		       const struct ptw_cv_json_walk *parent,
		       const struct ptw_cv_arg *v, struct ptw_cv_json_walk *w)
{
	if (parent) {
		ptw_cv_json_walk_child(parent, w, v);
		return 0;
	}
	struct ptw_emit *em = nx->em;
	if (!em->jp && !(em->jp = ptw_cv_json_parser_create(NULL)))
		return PTW_ERR_NOMEM;
	return ptw_cv_json_walk_start(em->jp, w, v->s.p, v->s.n);
}

/* Packs the type and value of non-null 'v' at nesting level 'level';
 * 'in_array': v is an array value. Recursion is bounded by
 * PTW_MAX_ARG_DEPTH. */
static void ptw_em_pack_value(struct ptw_em_buf *b, struct ptw_em_nest *nx,
			      const struct ptw_cv_json_walk *parent,
			      const struct ptw_cv_arg *v, uint32_t level,
			      int in_array)
{
	uint64_t x = 0;
	switch (v->type) {
	case PTW_CV_VAL_BOOL:
		ptw_em_put_u8(b, PTW_ARG_TYPE_BOOL);
		x = v->b != 0;
		ptw_em_put(b, &x, 8);
		return;
	case PTW_CV_VAL_INT:
		ptw_em_put_u8(b, PTW_ARG_TYPE_INT);
		ptw_em_put(b, &v->i, 8);
		return;
	case PTW_CV_VAL_DOUBLE:
		ptw_em_put_u8(b, PTW_ARG_TYPE_DOUBLE);
		ptw_em_put(b, &v->d, 8);
		return;
	case PTW_CV_VAL_STRING:
		ptw_em_put_u8(b, PTW_ARG_TYPE_STRING);
		ptw_em_put_str(b, v->s.p ? v->s.p : "", v->s.p ? v->s.n : 0);
		return;
	default: /* JSON; null is never packed */
		break;
	}
	struct ptw_cv_json_walk w;
	int is_obj = v->s.n && v->s.p[0] == '{';
	size_t type_at = b->len;
	ptw_em_put_u8(b, is_obj ? PTW_ARG_TYPE_DICT : PTW_ARG_TYPE_ARRAY);
	size_t count_at = b->len;
	ptw_em_put_u32(b, 0);
	if (ptw_em_walk(nx, parent, v, &w)) {
		b->oom = 1;
		return;
	}
	uint32_t n = 0;
	uint64_t dropped = nx->em->st.args_dropped;
	struct ptw_cv_arg m;
	while (ptw_cv_json_walk_next(&w, &m) > 0) {
		if (m.type == PTW_CV_VAL_NULL)
			continue;
		if (is_obj) {
			n += (uint32_t)ptw_em_pack_member(
				b, nx, &w, m.key.p, m.key.n, &m, level + 1);
		} else if (nx->nodes < PTW_MAX_ARG_NODES &&
			   level + 1 <= PTW_MAX_ARG_DEPTH) {
			nx->nodes++;
			ptw_em_put_str(b, "", 0);
			ptw_em_pack_value(b, nx, &w, &m, level + 1, 1);
			n++;
		} else {
			nx->em->st.args_dropped++;
		}
	}
	if (!n && in_array) {
		/* uses up its index, as in the JSON import: a dict with one
		 * empty dict entry (an empty container needs no deeper
		 * level) */
		if (nx->nodes < PTW_MAX_ARG_NODES &&
		    level + 1 <= PTW_MAX_ARG_DEPTH) {
			nx->nodes++;
			if (!b->oom)
				b->p[type_at] = PTW_ARG_TYPE_DICT;
			ptw_em_put_str(b, "", 0);
			ptw_em_put_u8(b, PTW_ARG_TYPE_DICT);
			ptw_em_put_u32(b, 0);
			n = 1;
		} else if (nx->em->st.args_dropped == dropped) {
			nx->em->st.args_dropped++; /* its index is lost */
		}
	}
	if (!b->oom)
		memcpy(b->p + count_at, &n, 4);
}

size_t ptw_em_pack(struct ptw_emit *em, struct ptw_em_buf *b,
		   const char *name, size_t name_len,
		   const char *cat, size_t cat_len,
		   const struct ptw_cv_event *ev, uint8_t flow_dir,
		   uint64_t bind_id, const int64_t *tts)
{
	size_t off = b->len;
	ptw_em_put_str(b, name ? name : "", name ? name_len : 0);
	if (cat && cat_len) {
		ptw_em_put_u8(b, 1);
		ptw_em_put_str(b, cat, cat_len);
	} else {
		ptw_em_put_u8(b, 0);
	}
	uint32_t na = 0;
	size_t na_at = b->len;
	ptw_em_put_u8(b, 0);
	struct ptw_em_nest nx = { .em = em };
	for (uint32_t i = 0; ev && i < ev->n_args; i++) {
		const struct ptw_cv_arg *a = &ev->args[i];
		if (a->type == PTW_CV_VAL_NULL)
			continue; /* nothing to show */
		if (na == PTW_MAX_ANNOTATIONS) {
			em->st.args_dropped++; /* beyond the writer's limit */
			continue;
		}
		na += (uint32_t)ptw_em_pack_member(
			b, &nx, NULL, a->key.p ? a->key.p : "",
			a->key.p ? a->key.n : 0, a, 0);
	}
	if (!b->oom)
		b->p[na_at] = (char)na;
	ptw_em_put_u8(b, flow_dir);
	if (flow_dir)
		ptw_em_put(b, &bind_id, 8);
	ptw_em_put_u8(b, (uint8_t)((tts != NULL) | (em->pend_cs ? 2 : 0)));
	if (tts)
		ptw_em_put(b, tts, 8);
	if (em->pend_cs)
		ptw_em_put(b, &em->pend_cs, 4);
	return off;
}

static const char *ptw_em_get_str(const char *p, size_t *pos, size_t *len)
{
	uint32_t n;
	memcpy(&n, p + *pos, 4);
	const char *s = p + *pos + 4;
	*pos += 4u + n + 1u;
	if (len)
		*len = n;
	return s;
}

/* Unpacks one arg at *pos into a; nested ones take places in the pool
 * (which the packing's PTW_MAX_ARG_NODES bound keeps in range). */
static void ptw_em_unpack_arg(const char *p, size_t *pos, struct ptw_arg *a,
			      struct ptw_arg *pool, uint32_t *used)
{
	a->name = ptw_em_get_str(p, pos, NULL);
	a->type = (enum ptw_arg_type)(uint8_t)p[(*pos)++];
	if (a->type == PTW_ARG_TYPE_STRING) {
		a->v.s = ptw_em_get_str(p, pos, NULL);
	} else if (a->type == PTW_ARG_TYPE_DICT || a->type == PTW_ARG_TYPE_ARRAY) {
		uint32_t n;
		memcpy(&n, p + *pos, 4);
		*pos += 4;
		struct ptw_arg *items = pool + *used;
		*used += n;
		a->v.nested.items = items;
		a->v.nested.n = n;
		for (uint32_t i = 0; i < n; i++)
			ptw_em_unpack_arg(p, pos, &items[i], pool, used);
	} else {
		uint64_t v;
		memcpy(&v, p + *pos, 8);
		*pos += 8;
		if (a->type == PTW_ARG_TYPE_BOOL)
			a->v.b = v != 0;
		else if (a->type == PTW_ARG_TYPE_INT)
			memcpy(&a->v.i, &v, 8);
		else
			memcpy(&a->v.d, &v, 8);
	}
}

void ptw_em_unpack(struct ptw_emit *em, const struct ptw_em_buf *b,
		   size_t off, struct ptw_em_payload *pl)
{
	const char *p = b->p;
	size_t pos = off;
	uint32_t used = 0;
	pl->name = ptw_em_get_str(p, &pos, &pl->name_len);
	pl->cat = NULL;
	if (p[pos++])
		pl->cat = ptw_em_get_str(p, &pos, NULL);
	pl->n_args = (uint8_t)p[pos++];
	for (uint32_t i = 0; i < pl->n_args; i++)
		ptw_em_unpack_arg(p, &pos, &pl->args[i], em->nest_pool, &used);
	pl->flow_dir = (uint8_t)p[pos++];
	pl->bind_id = 0;
	if (pl->flow_dir) {
		memcpy(&pl->bind_id, p + pos, 8);
		pos += 8;
	}
	uint8_t has = (uint8_t)p[pos++];
	pl->has_tts = has & 1;
	if (pl->has_tts) {
		memcpy(&pl->tts, p + pos, 8);
		pos += 8;
	}
	pl->cs = 0;
	if (has & 2)
		memcpy(&pl->cs, p + pos, 4);
}

void ptw_em_buf_free(struct ptw_em_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

/* ---- stable strings ----------------------------------------------------- */

static inline uint64_t ptw_em_load8(const char *p, size_t n)
{
	uint64_t v = 0;
	memcpy(&v, p, n < 8 ? n : 8);
	return v;
}

static inline size_t ptw_em_strs_slot(const char *s, size_t n)
{
	uint64_t h = ptw_em_load8(s, n) * 0x9E3779B97F4A7C15ull;
	if (n > 8)
		h ^= ptw_em_load8(s + n - 8, 8) * 0xC2B2AE3D27D4EB4Full;
	h ^= (uint64_t)n * 0x165667B19E3779F9ull;
	h ^= h >> 29;
	return (size_t)(h >> 20) & (PTW_EM_STRS_CACHE - 1);
}

const char ptw_em_empty[] = "";

static const char *ptw_em_strs_add(struct ptw_em_strs *t, const char *s,
				   size_t n)
{
	if (t->count >= PTW_EM_STRS_MAX ||
	    t->bytes + 8 + n + 1 > PTW_EM_STRS_BYTES ||
	    memchr(s, '\0', n))
		return NULL;
	uint64_t h = ptw_fnv1a(PTW_FNV_INIT, s, n), v;
	if (ptw_map_get(&t->map, h, &v)) {
		const char *old = (const char *)(uintptr_t)v;
		/* a full-hash collision with other text: not stored */
		return strlen(old) == n && memcmp(old, s, n) == 0 ? old : NULL;
	}
	/* Each copy is preceded by its FNV-1a hash (ptw_em_strs_hash). */
	if (!t->n_blocks || t->block_used + 8 + n + 1 > PTW_EM_STRS_BLOCK) {
		if (t->n_blocks == t->blocks_cap) {
			char **nb = ptw_grow(t->blocks, &t->blocks_cap,
					     t->n_blocks + 1, 8, sizeof(*nb));
			if (!nb)
				return NULL;
			t->blocks = nb;
		}
		/* n < PTW_MAX_STRING_LEN, far below a block */
		char *b = malloc(PTW_EM_STRS_BLOCK);
		if (!b)
			return NULL;
		t->blocks[t->n_blocks++] = b;
		t->block_used = 0;
	}
	char *copy = t->blocks[t->n_blocks - 1] + t->block_used + 8;
	memcpy(copy - 8, &h, 8);
	memcpy(copy, s, n);
	copy[n] = '\0';
	if (ptw_map_put(&t->map, h, (uint64_t)(uintptr_t)copy))
		return NULL;
	t->block_used += 8 + n + 1;
	t->bytes += 8 + n + 1;
	t->count++;
	return copy;
}

const char *ptw_em_strs_get(struct ptw_em_strs *t, const char *s, size_t n)
{
	if (n == 0)
		return ptw_em_empty;
	if (n >= PTW_MAX_STRING_LEN)
		return NULL;
	struct ptw_em_sslot *sl = &t->cache[ptw_em_strs_slot(s, n)];
	if (sl->s && sl->n == n && memcmp(sl->s, s, n) == 0)
		return sl->s;
	const char *c = ptw_em_strs_add(t, s, n);
	if (c) {
		sl->s = c;
		sl->n = n;
	}
	return c;
}

void ptw_em_strs_free(struct ptw_em_strs *t)
{
	for (size_t i = 0; i < t->n_blocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	ptw_map_free(&t->map);
	memset(t, 0, sizeof(*t));
}

const char *ptw_em_stable(struct ptw_emit *em, uint64_t sym, const char *s,
			  size_t n)
{
	struct ptw_em_sym_slot *sl =
		&em->sym_cache[ptw_em_sym_index(sym)];
	if (sym && sl->sym == sym)
		return sl->s;
	const char *c = ptw_em_strs_get(&em->strs, s, n);
	if (sym && c) {
		if (sl->sym)
			em->ctr_stamp++; /* (struct ptw_em_ctr_prep) */
		sl->sym = sym;
		sl->s = c;
	}
	return c;
}

/* ---- queue ------------------------------------------------------------ */

/* Moves the live payloads to a fresh arena when the old one is mostly
 * dead (items flushed while others were still waiting). */
static int ptw_em_compact(struct ptw_em_thread *th)
{
	size_t live = 0;
	for (size_t i = th->head; i < th->n; i++)
		live += th->q[i].data_len;
	if (th->arena.len < 65536 || th->arena.len < 4 * live)
		return 0;
	struct ptw_em_buf nb = {0};
	ptw_em_reserve(&nb, live + 1);
	if (nb.oom)
		return PTW_ERR_NOMEM;
	for (size_t i = th->head; i < th->n; i++) {
		struct ptw_em_item *it = &th->q[i];
		size_t off = nb.len;
		ptw_em_put(&nb, th->arena.p + it->data, it->data_len);
		it->data = (uint32_t)off;
	}
	ptw_em_buf_free(&th->arena);
	th->arena = nb;
	return 0;
}

int ptw_em_queue(struct ptw_emit *em, struct ptw_em_thread *th,
		 const struct ptw_em_item *it, const char *name,
		 size_t name_len, const char *cat, size_t cat_len,
		 const struct ptw_cv_event *ev, uint8_t flow_dir,
		 uint64_t bind_id, const int64_t *tts, uint64_t *id_out)
{
	if (th->head == th->n) {
		th->head = th->n = 0;
		th->arena.len = 0;
	} else if (th->arena.len >= th->compact_at && th->arena.len > (1u << 20)) {
		/* Checked again only after the arena doubles: amortised O(1). */
		if (ptw_em_compact(th))
			return PTW_ERR_NOMEM;
		th->compact_at = 2 * th->arena.len;
	}
	if (th->n == th->cap) {
		if (th->head > 0) {
			memmove(th->q, th->q + th->head,
				(th->n - th->head) * sizeof(*th->q));
			th->n -= th->head;
			th->head = 0;
		}
		void *p = ptw_grow(th->q, &th->cap, th->n + 1, 16,
				   sizeof(*th->q));
		if (!p)
			return PTW_ERR_NOMEM;
		th->q = p;
	}
	struct ptw_em_item x = *it;
	/* Repeated names and categories travel as stable pointers; only
	 * args and a v2 flow (if any) are copied. */
	uint64_t nsym = 0, csym = 0;
	if (ev) {
		/* the reader's numbers hold for its own strings only */
		if (name == ev->name.p && name_len == ev->name.n)
			nsym = ev->name_sym;
		if (cat == ev->cat.p && cat_len == ev->cat.n)
			csym = ev->cat_sym;
	}
	x.sname = ptw_em_stable(em, nsym, name ? name : "", name ? name_len : 0);
	x.scat = NULL;
	if (x.sname && cat && cat_len &&
	    !(x.scat = ptw_em_stable(em, csym, cat, cat_len)))
		x.sname = NULL;
	x.stable = x.sname != NULL;
	size_t off = th->arena.len;
	if (!x.stable)
		off = ptw_em_pack(em, &th->arena, name, name_len, cat, cat_len,
				  ev, flow_dir, bind_id, tts);
	else if ((ev && ev->n_args) || flow_dir || tts || em->pend_cs)
		off = ptw_em_pack(em, &th->arena, "", 0, NULL, 0, ev, flow_dir,
				  bind_id, tts);
	em->pend_cs = 0;
	if (th->arena.oom || th->arena.len > UINT32_MAX)
		return PTW_ERR_NOMEM;
	x.data = (uint32_t)off;
	x.data_len = (uint32_t)(th->arena.len - off);
	x.id = ++em->next_item;
	/* Keep the queue sorted by ts, stable: insert after equal ts. */
	size_t lo = th->head, hi = th->n;
	if (hi > lo && th->q[hi - 1].ts > x.ts) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (th->q[mid].ts <= x.ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(th->q + lo + 1, th->q + lo,
			(th->n - lo) * sizeof(*th->q));
		th->q[lo] = x;
	} else {
		th->q[th->n] = x;
	}
	th->n++;
	if (th->n - th->head > em->st.max_queue)
		em->st.max_queue = th->n - th->head;
	if (id_out)
		*id_out = x.id;
	return 0;
}

struct ptw_em_item *ptw_em_find(struct ptw_em_thread *th, uint64_t id)
{
	for (size_t i = th->n; i > th->head; i--)
		if (th->q[i - 1].id == id)
			return &th->q[i - 1];
	return NULL;
}

/* ---- writing ----------------------------------------------------------- */

static uint64_t ptw_em_str_hash(const char *s, size_t n)
{
	if (!s || !n || strcmp(s, PTW_EM_NO_NAME) == 0)
		return 0;
	uint64_t h = ptw_fnv1a(PTW_FNV_INIT, s, n);
	return h ? h : 1;
}

/* ptw_em_str_hash() of a stable string (from ptw_em_strs_get), without
 * reading it: its hash is stored in front of it. */
static uint64_t ptw_em_stable_hash(const char *s)
{
	static const char nn[] = PTW_EM_NO_NAME;
	if (!s || !*s)
		return 0; /* ptw_em_empty has no stored hash */
	uint64_t h;
	memcpy(&h, s - 8, 8);
	if (!h)
		return 1;
	if (s[0] == nn[0] && strcmp(s, nn) == 0)
		return 0;
	return h;
}

int ptw_em_model_reserve(struct ptw_em_thread *th, size_t n)
{
	void *p = ptw_grow(th->model, &th->model_cap, n, 16,
			   sizeof(*th->model));
	if (!p)
		return PTW_ERR_NOMEM;
	th->model = p;
	return 0;
}

int ptw_em_push_model(struct ptw_em_thread *th,
		      const struct ptw_em_payload *pl, int hash, int stable)
{
	if (th->model_n == th->model_cap &&
	    ptw_em_model_reserve(th, th->model_cap + 1) != 0)
		return PTW_ERR_NOMEM;
	struct ptw_em_open *o = &th->model[th->model_n++];
	o->name_h = o->cat_h = 0;
	/* Names only matter to Chrome E events (X-form ends are nameless). */
	if (hash) {
		if (stable) {
			o->name_h = ptw_em_stable_hash(pl->name);
			o->cat_h = ptw_em_stable_hash(pl->cat);
		} else {
			o->name_h = ptw_em_str_hash(pl->name, pl->name_len);
			o->cat_h = pl->cat ? ptw_em_str_hash(pl->cat,
							     strlen(pl->cat))
					   : 0;
		}
	}
	return 0;
}

/* ---- complete slices that partly overlap (Chrome X) -------------------
 * trace_processor's JSON importer (json_trace_parser.cc case 'X') gives
 * an X that starts inside an X on its thread's track and ends after it
 * (slice_tracker.cc MaybeCloseStack: the first complete slice, from the
 * top of the stack, that has not ended and is not above an open B) a
 * track of its own (TrackCompressor::InternLegacyOverlappingScoped) and
 * keeps both durations. The converter makes the same decision, at the
 * same point of trace_processor's order (the flush writes items in that
 * order), and writes such a slice on a separate child track of the
 * thread, which trace_processor's protobuf import shows on the same
 * thread. */

/* The end of the X on top of the thread's track, or INT64_MIN if the
 * top is no X (or the track is empty). The X's of the track nest, so only
 * the top one can overlap. Entries closed since (their level is gone) or
 * ended by 'ts' are dropped. */
static int64_t ptw_em_x_top_end(struct ptw_em_thread *th, int64_t ts)
{
	while (th->xo_n) {
		const struct ptw_em_xopen *x = &th->xo[th->xo_n - 1];
		if (x->level < th->model_n && x->end > ts)
			break;
		th->xo_n--;
	}
	if (!th->xo_n || th->xo[th->xo_n - 1].level + 1 != th->model_n)
		return INT64_MIN;
	return th->xo[th->xo_n - 1].end;
}

/* Records the X just pushed on the model (its end 'end'). */
static int ptw_em_x_push(struct ptw_em_thread *th, int64_t end)
{
	if (th->xo_n == th->xo_cap) {
		void *p = ptw_grow(th->xo, &th->xo_cap, th->xo_n + 1, 8,
				   sizeof(*th->xo));
		if (!p)
			return PTW_ERR_NOMEM;
		th->xo = p;
	}
	th->xo[th->xo_n].level = th->model_n - 1;
	th->xo[th->xo_n++].end = end;
	return 0;
}

/* TrackCompressor::LegacyOverlappingScopedInternal: the first lane on
 * which [ts, end) nests in the innermost open slice or follows all of
 * them (slices ended by ts are popped first), else a new lane. Pushes
 * the slice's end there and returns the lane's index, or -1 (no
 * memory). */
static long ptw_em_ovl_pick(struct ptw_em_thread *th, int64_t ts, int64_t end)
{
	size_t i = 0;
	for (; i < th->n_ovl; i++) {
		struct ptw_em_lane_ovl *l = &th->ovl[i];
		while (l->n && l->ends[l->n - 1] <= ts)
			l->n--;
		if (!l->n || end <= l->ends[l->n - 1])
			break;
	}
	if (i == th->n_ovl) {
		/* one more lane; lanes are few, so no spare capacity */
		void *p = ptw_realloc_array(th->ovl, i + 1, sizeof(*th->ovl));
		if (!p)
			return -1;
		th->ovl = p;
		memset(&th->ovl[i], 0, sizeof(th->ovl[i]));
		th->n_ovl++;
	}
	struct ptw_em_lane_ovl *l = &th->ovl[i];
	if (l->n == l->cap) {
		void *p = ptw_grow(l->ends, &l->cap, l->n + 1, 4,
				   sizeof(*l->ends));
		if (!p)
			return -1;
		l->ends = p;
	}
	l->ends[l->n++] = end;
	return (long)i;
}

/* Writes X item 'it' (ev made by ptw_em_write_full, with its v2 flow)
 * on an overlap lane and sends its END item there. Flows bound to the
 * next slice of the thread's track stay waiting (trace_processor binds
 * them per track). */
static int ptw_em_spill(struct ptw_emit *em, struct ptw_em_thread *th,
			const struct ptw_em_item *it, struct ptw_event *ev,
			int64_t end, struct ptw_error *err)
{
	long k = ptw_em_ovl_pick(th, it->ts, end);
	if (k < 0)
		return ptw_em_nomem(err);
	struct ptw_em_lane_ovl *l = &th->ovl[k];
	if (!l->uuid) {
		l->uuid = ptw_writer_add_separate_track(em->w, NULL, th->uuid);
		if (!l->uuid)
			return ptw_em_writer_fail(em, PTW_ERR_INVALID, err);
	}
	ev->track = l->uuid;
	int rc = ptw_seq_slice_begin(th->seq, ev);
	if (rc)
		return ptw_em_writer_fail(em, rc, err);
	/* the X's END was queued right after it (emit.c) */
	struct ptw_em_item *e = ptw_em_find(th, it->id + 1);
	if (e && (e->kind == PTW_EM_END || e->kind == PTW_EM_X_END) &&
	    e->ts == end) {
		e->kind = PTW_EM_OVL_END;
		e->flow_id = (uint64_t)k;
	}
	em->st.flows += ev->legacy != NULL;
	em->st.slices++;
	em->st.spilled++;
	return 0;
}

/* The thread's thread-time counter track, created on first use. */
static uint64_t ptw_em_tt_track(struct ptw_emit *em, struct ptw_em_thread *th,
				struct ptw_error *err)
{
	if (!th->tt_uuid) {
		th->tt_uuid = ptw_writer_add_thread_time_track(em->w, th->uuid);
		if (!th->tt_uuid)
			ptw_em_writer_fail(em, PTW_ERR_INVALID, err);
	}
	return th->tt_uuid;
}

/* When trace_processor reads a v1 flow event at ts T, it binds it to the
 * slice on top of the thread track's stack. The JSON import's stack pops
 * a complete slice (X) only when a later slice event comes (MaybeCloseStack
 * in SliceTracker::StartSlice and End), while the protobuf import pops it
 * at its END. So after such an END, the JSON top is still the slice the
 * protobuf import popped (or an instant inside it): the flow event is
 * then written just before that END, at its ts - 1 (or at the last slice
 * event's ts, if that is later), where the protobuf stack is still the
 * JSON one. Only the flow's own time moves (no table shows it); other
 * flow events on the same id between the two times are then read in
 * another order (docs/convert.md). An 'f' without "bp":"e" binds to the
 * next slice and keeps its ts. */
static int64_t ptw_em_flow_ts(const struct ptw_em_thread *th,
			      const struct ptw_em_item *it)
{
	if (it->flow_ph == 'n' || th->fl_unknown || !th->fl_end1 ||
	    it->ts < th->fl_max)
		return it->ts;
	int64_t end = th->fl_end1 - 1;
	return end > th->fl_ts ? end - 1 : th->fl_ts;
}

/* A v1 flow event (s, t, f): a typeless TrackEvent whose legacy_event
 * carries the phase and the JSON id, with the event's own name and
 * category (trace_processor scopes the id by them; an empty one is none,
 * as in JSON). */
static int ptw_em_write_flow(struct ptw_emit *em, struct ptw_em_thread *th,
			     const struct ptw_em_item *it,
			     const struct ptw_em_payload *pl, struct ptw_event *ev,
			     struct ptw_error *err)
{
	uint64_t track = ptw_em_thread_track(em, th, err);
	if (!track)
		return err ? err->code : PTW_ERR_NOMEM;
	struct ptw_legacy lg;
	memset(&lg, 0, sizeof(lg));
	lg.phase = (char)(it->flow_ph == 'n' ? 'f' : it->flow_ph);
	lg.bind_to_enclosing = it->flow_ph == 'f';
	lg.id = it->flow_id;
	ev->track = track;
	ev->ts = (uint64_t)ptw_em_flow_ts(th, it);
	ev->name = pl->name && pl->name[0] ? pl->name : NULL;
	ev->category = pl->cat && pl->cat[0] ? pl->cat : NULL;
	ev->n_args = 0;
	ev->legacy = &lg;
	int rc = ptw_seq_legacy_flow(th->seq, ev);
	if (rc)
		return ptw_em_writer_fail(em, rc, err);
	em->st.flows++;
	return 0;
}

/* A Chrome E (raw END): the open slice it closes is the innermost one
 * with its name and category (none: any). Only the innermost can be
 * closed by a nameless END; a deeper match is closed through it, as LIFO
 * pairing would. Is there one? */
static inline int ptw_em_raw_end_matches(const struct ptw_em_thread *th,
					 const struct ptw_em_item *it,
					 const struct ptw_em_payload *pl)
{
	uint64_t nh, ch;
	if (it->stable) {
		nh = ptw_em_stable_hash(pl->name);
		ch = ptw_em_stable_hash(pl->cat);
	} else {
		nh = ptw_em_str_hash(pl->name, pl->name_len);
		ch = pl->cat ? ptw_em_str_hash(pl->cat, strlen(pl->cat)) : 0;
	}
	for (size_t k = th->model_n; k > 0; k--) {
		const struct ptw_em_open *o = &th->model[k - 1];
		if (ptw_em_open_is_x(o))
			continue;
		if ((!ch || o->cat_h == ch) &&
		    (!nh || !o->name_h || o->name_h == nh))
			return 1;
	}
	return 0;
}

/* The innermost model entry that is (want_x) or is not an X written as
 * one packet, or model_n if none. */
static size_t ptw_em_model_find(const struct ptw_em_thread *th, int want_x)
{
	for (size_t k = th->model_n; k > 0; k--)
		if (ptw_em_open_is_x(&th->model[k - 1]) == want_x)
			return k - 1;
	return th->model_n;
}

void ptw_em_model_pop(struct ptw_em_thread *th, int want_x)
{
	if (!th->model_n)
		return;
	size_t k = ptw_em_model_find(th, want_x);
	if (k == th->model_n)
		k = th->model_n - 1;
	memmove(th->model + k, th->model + k + 1,
		(th->model_n - k - 1) * sizeof(*th->model));
	th->model_n--;
	/* the X's recorded above it move down one level; its own is stale */
	for (size_t i = 0; i < th->xo_n; i++) {
		if (th->xo[i].level == k)
			th->xo[i].end = INT64_MIN;
		else if (th->xo[i].level > k)
			th->xo[i].level--;
	}
}

/* An END item: closes the innermost open slice (dropped, and counted,
 * when it closes nothing). Xs written as one packet above it stay (they
 * are complete in trace_processor). */
static inline int ptw_em_write_end(struct ptw_emit *em,
				   struct ptw_em_thread *th,
				   const struct ptw_em_item *it,
				   const struct ptw_em_payload *pl,
				   struct ptw_event *ev, struct ptw_error *err)
{
	if (ptw_em_model_find(th, 0) == th->model_n ||
	    (it->raw_end && !ptw_em_raw_end_matches(th, it, pl))) {
		em->st.dropped++; /* closes nothing */
		return 0;
	}
	ev->name = NULL;
	ev->category = NULL;
	int rc = ptw_seq_slice_end(th->seq, ev);
	ptw_em_model_pop(th, 0);
	if (rc)
		return ptw_em_writer_fail(em, rc, err);
	ptw_em_fl_note(th, it->ts, !it->raw_end); /* raw: a JSON E */
	return 0;
}

/* A BEGIN or INSTANT item, with its v2 flow (if any). A complete slice
 * (X) that partly overlaps the one it is in is spilled to an overlap
 * track. */
static inline int ptw_em_write_begin(struct ptw_emit *em,
				     struct ptw_em_thread *th,
				     const struct ptw_em_item *it,
				     const struct ptw_em_payload *pl,
				     struct ptw_event *ev,
				     struct ptw_error *err)
{
	int rc;
	struct ptw_legacy lg;
	if (pl->flow_dir) {
		memset(&lg, 0, sizeof(lg));
		lg.flow_dir = (enum ptw_flow_dir)pl->flow_dir;
		lg.bind_id = pl->bind_id;
		ev->legacy = &lg;
	}
	int64_t x_end = 0;
	if (it->is_x && it->dur > 0) {
		if (__builtin_add_overflow(it->ts, it->dur, &x_end))
			x_end = INT64_MAX;
		int64_t top = ptw_em_x_top_end(th, it->ts);
		if (top != INT64_MIN && x_end > top)
			return ptw_em_spill(em, th, it, ev, x_end, err);
	}
	em->st.flows += pl->flow_dir != 0;
	ptw_em_fl_note(th, it->ts, 0);
	if (it->is_x == 2) {
		/* one packet; its END item (PTW_EM_X_END) writes nothing */
		rc = ptw_seq_legacy_complete(th->seq, ev,
					     (uint64_t)(it->dur / 1000));
		if (!rc)
			rc = ptw_em_push_model(th, pl, 0, it->stable);
		if (!rc)
			th->model[th->model_n - 1].name_h =
				th->model[th->model_n - 1].cat_h =
					PTW_EM_OPEN_X;
		if (!rc && ptw_em_x_push(th, x_end))
			return ptw_em_nomem(err);
		em->st.slices++;
	} else if (it->kind == PTW_EM_INSTANT ||
	    (it->state == PTW_EM_COMPLETE && it->dur == 0)) {
		rc = ptw_seq_instant(th->seq, ev);
		em->st.instants++;
	} else {
		rc = ptw_seq_slice_begin(th->seq, ev);
		if (!rc)
			rc = ptw_em_push_model(th, pl,
					       em->mode == PTW_EMIT_CHROME,
					       it->stable);
		if (!rc && it->is_x && ptw_em_x_push(th, x_end))
			return ptw_em_nomem(err);
		if (it->state == PTW_EM_UNRESOLVED)
			em->st.open_slices++;
		else if (it->state == PTW_EM_COMPLETE)
			em->st.slices++;
	}
	if (rc)
		return ptw_em_writer_fail(em, rc, err);
	return 0;
}

/* The writer's callstack of frame f (its innermost) of em->stacks:
 * outermost first, the innermost PTW_MAX_FRAMES of a deeper stack.
 * Returns 0 if it has none to write. */
static int ptw_em_callstack(struct ptw_emit *em, uint32_t f,
			    struct ptw_callstack *cs)
{
	uint32_t d = ptw_cv_stacks_depth(em->stacks, f);
	if (d == PTW_CV_STACK_CYCLE || d == 0)
		return 0;
	if (!em->frames &&
	    !(em->frames = calloc(PTW_MAX_FRAMES, sizeof(*em->frames))))
		return 0; /* out of memory: the event without its stack */
	if (d > PTW_MAX_FRAMES) {
		d = PTW_MAX_FRAMES;
		em->st.stack_truncated++;
	}
	for (uint32_t k = d; k > 0 && f; k--) {
		const char *nm = ptw_cv_stacks_name(em->stacks, f);
		em->frames[k - 1].function = nm[0] ? nm : NULL;
		f = ptw_cv_stacks_parent(em->stacks, f);
	}
	cs->frames = em->frames;
	cs->n_frames = d;
	cs->flags = 0;
	em->st.stacks++;
	return 1;
}

/* Any other item. Kept out of line: its frame (a payload with an
 * argument array) would otherwise be set up for the common item too. */
__attribute__((noinline)) static int
ptw_em_write_full(struct ptw_emit *em, struct ptw_em_thread *th,
		  const struct ptw_em_item *it, struct ptw_error *err)
{
	struct ptw_em_payload pl;
	struct ptw_event ev;
	memset(&ev, 0, sizeof(ev));
	if (!it->stable || it->data_len)
		ptw_em_unpack(em, &th->arena, it->data, &pl);
	else
		pl.n_args = pl.flow_dir = pl.has_tts = 0, pl.cs = 0;
	if (it->stable) {
		pl.name = it->sname;
		pl.name_len = 0; /* unused: hashes come from the store */
		pl.cat = it->scat;
		ev.flags = PTW_EV_STATIC_STRINGS;
	}
	ev.ts = (uint64_t)it->ts;
	ev.name = pl.name;
	ev.category = pl.cat;
	ev.args = pl.args;
	ev.n_args = pl.n_args;
	struct ptw_callstack cs;
	if (pl.cs && ptw_em_callstack(em, pl.cs, &cs))
		ev.callstack = &cs;

	if (it->kind == PTW_EM_FLOW)
		return ptw_em_write_flow(em, th, it, &pl, &ev, err);
	if (it->kind == PTW_EM_BEGIN && it->state == PTW_EM_DEAD)
		return 0;
	uint64_t track = ptw_em_thread_track(em, th, err);
	if (!track)
		return err ? err->code : PTW_ERR_NOMEM;
	ev.track = track;
	if (pl.has_tts) {
		ev.thread_time_track = ptw_em_tt_track(em, th, err);
		if (!ev.thread_time_track)
			return err ? err->code : PTW_ERR_INVALID;
		ev.thread_time = pl.tts;
		ev.flags |= PTW_EV_THREAD_TIME;
		em->st.thread_times++;
	}

	if (it->kind == PTW_EM_OVL_END) {
		ev.track = th->ovl[it->flow_id].uuid;
		ev.name = NULL;
		ev.category = NULL;
		int rc = ptw_seq_slice_end(th->seq, &ev);
		return rc ? ptw_em_writer_fail(em, rc, err) : 0;
	}
	if (it->kind == PTW_EM_END)
		return ptw_em_write_end(em, th, it, &pl, &ev, err);
	return ptw_em_write_begin(em, th, it, &pl, &ev, err);
}

int ptw_em_write_item(struct ptw_emit *em, struct ptw_em_thread *th,
		      const struct ptw_em_item *it, struct ptw_error *err)
{
	int rc;
	if (__builtin_expect(th->trunc_on, 0) && it->ts > th->trunc_end &&
	    (it->kind == PTW_EM_BEGIN || it->kind == PTW_EM_INSTANT ||
	     it->kind == PTW_EM_END)) {
		if (th->model_n > th->trunc_level)
			th->model_n = th->trunc_level;
		th->trunc_on = 0;
	}
	if (it->kind == PTW_EM_X_END) {
		/* trace_processor ends the X by its duration and pops it
		 * from its stack as its JSON import does (MaybeCloseStack);
		 * slices left open above it are truncated later */
		size_t k = th->model_n;
		while (k > 0 && !ptw_em_open_is_x(&th->model[k - 1]))
			k--;
		if (k == th->model_n || k == 0) {
			ptw_em_model_pop(th, 1);
		} else if (!th->trunc_on || k - 1 < th->trunc_level) {
			th->trunc_on = 1;
			th->trunc_level = k - 1;
			th->trunc_end = it->ts;
		}
		return 0;
	}
	if (ptw_em_write_simple(em, th, it, &rc))
		return rc ? ptw_em_writer_fail(em, rc, err) : 0;
	return ptw_em_write_full(em, th, it, err);
}

static int ptw_em_item_cmp(const void *a, const void *b)
{
	const struct ptw_em_item *x = a, *y = b;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->cls == 1 && x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1; /* longest first */
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

/* Sort class of an item within its timestamp group (trace_processor's
 * JSON order: E, then X by decreasing dur, then the rest in file order;
 * B's left open come last, as the exporter appends them). trace_processor
 * only moves E's first once it has seen an X event (its "slow" sort);
 * before that, Chrome E's keep their file order. */
static uint8_t ptw_em_class(const struct ptw_em_item *it)
{
	if (it->kind == PTW_EM_END || it->kind == PTW_EM_OVL_END ||
	    it->kind == PTW_EM_X_END)
		return it->e_late ? 2 : 0;
	if (it->kind == PTW_EM_BEGIN) {
		if (it->state == PTW_EM_COMPLETE)
			return it->dur > 0 ? 1 : 2;
		if (it->state == PTW_EM_UNRESOLVED)
			return 3;
	}
	return 2;
}

int ptw_em_flush(struct ptw_emit *em, struct ptw_em_thread *th, int final,
		 struct ptw_error *err)
{
	em->epoch++;
	while (th->head < th->n) {
		int64_t t = th->q[th->head].ts;
		if (!final && th->has_last && t >= th->last_ts)
			break;
		size_t g = th->head, others = 0, open = 0;
		while (g < th->n && th->q[g].ts == t) {
			const struct ptw_em_item *it = &th->q[g];
			if (it->kind != PTW_EM_END &&
			    it->kind != PTW_EM_OVL_END &&
			    it->kind != PTW_EM_X_END)
				others++;
			if (it->kind == PTW_EM_BEGIN &&
			    it->state == PTW_EM_UNRESOLVED)
				open++;
			g++;
		}
		if (!final && open && others >= 2) {
			/* An open B shares its ts: its place depends on its
			 * end (or on it never ending). Wait, within bounds. */
			if (th->n - th->head <= em->max_held)
				break;
			em->st.forced_releases++;
			for (size_t i = th->head; i < g; i++)
				if (th->q[i].kind == PTW_EM_BEGIN &&
				    th->q[i].state == PTW_EM_UNRESOLVED) {
					th->q[i].state = PTW_EM_COMPLETE;
					th->q[i].dur = INT64_MAX;
				}
		}
		for (size_t i = th->head; i < g; i++)
			th->q[i].cls = ptw_em_class(&th->q[i]);
		if (g - th->head > 1)
			qsort(th->q + th->head, g - th->head, sizeof(*th->q),
			      ptw_em_item_cmp);
		for (size_t i = th->head; i < g; i++) {
			int rc = ptw_em_write_item(em, th, &th->q[i], err);
			if (rc)
				return rc;
		}
		th->head = g;
	}
	if (th->head == th->n) {
		th->head = th->n = 0;
		th->arena.len = 0;
		th->compact_at = 0;
	}
	return 0;
}

void ptw_em_thread_free(struct ptw_em_thread *th)
{
	if (!th)
		return;
	free(th->name);
	free(th->written);
	free(th->q);
	ptw_em_buf_free(&th->arena);
	free(th->lifo[0].b);
	free(th->lifo[1].b);
	free(th->model);
	free(th->xo);
	for (size_t i = 0; i < th->n_ovl; i++)
		free(th->ovl[i].ends);
	free(th->ovl);
	free(th);
}
