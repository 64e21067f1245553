/* callstack.c - the callstack of an event: inline frames, or interned per
 * sequence as trace_processor's StackProfileSequenceState reads them
 * (InternedData function_names, source_paths, build_ids, mapping_paths,
 * mappings, frames, callstacks; TrackEvent.callstack_iid).
 * SPDX-License-Identifier: Apache-2.0
 *
 * Mappings, frames and callstacks are interned by their encoded body
 * without the iid (which refers to strings and mappings by their iids of
 * the same generation): the tables that key strings by content key these
 * messages too, and a new entry is written as its iid + that body. A
 * stack seen again thus costs its frames' look-ups on the writer side and
 * one callstack_iid field in the trace. */
#include <stdlib.h>
#include <string.h>

#include "callstack.h"
#include "lib/encode/pb_fields.h"
#include "lib/util/utf8.h"
#include "writer_state.h"

#define PTW_STK_BUILD_ID_MAX 64u

enum {
	PTW_STK_FN,   /* function_names */
	PTW_STK_SRC,  /* source_paths */
	PTW_STK_BID,  /* build_ids */
	PTW_STK_PATH, /* mapping_paths */
	PTW_STK_MAP,  /* mappings */
	PTW_STK_FRM,  /* frames */
	PTW_STK_CS,   /* callstacks */
	PTW_STK_TABLES
};

static const uint32_t ptw_stk_field[PTW_STK_TABLES] = {
	PTW_F_ID_FUNCTION_NAMES, PTW_F_ID_SOURCE_PATHS, PTW_F_ID_BUILD_IDS,
	PTW_F_ID_MAPPING_PATHS, PTW_F_ID_MAPPINGS, PTW_F_ID_FRAMES,
	PTW_F_ID_CALLSTACKS,
};

struct ptw_stk {
	struct ptw_intern *t[PTW_STK_TABLES];
	uint32_t gen;              /* s->cp_gen the tables belong to */
	struct ptw_pb_buf id, te;  /* the output of one encode */
	struct ptw_pb_buf key;     /* the body being interned */
	uint64_t *frame_iids;      /* PTW_MAX_FRAMES */
};

void ptw_w_stk_free(struct ptw_stk *k)
{
	if (!k)
		return;
	for (int i = 0; i < PTW_STK_TABLES; i++)
		ptw_intern_destroy(k->t[i]);
	ptw_pb_buf_free(&k->id);
	ptw_pb_buf_free(&k->te);
	ptw_pb_buf_free(&k->key);
	free(k->frame_iids);
	free(k);
}

static struct ptw_stk *ptw_stk_create(uint32_t cp_gen)
{
	struct ptw_stk *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	int bad = 0;
	for (int i = 0; i < PTW_STK_TABLES; i++)
		bad |= !(k->t[i] = ptw_intern_create(64));
	bad |= ptw_pb_buf_init(&k->id, 1024) != 0;
	bad |= ptw_pb_buf_init(&k->te, 256) != 0;
	bad |= ptw_pb_buf_init(&k->key, 256) != 0;
	bad |= !(k->frame_iids = calloc(PTW_MAX_FRAMES, sizeof(uint64_t)));
	if (bad) {
		ptw_w_stk_free(k);
		return NULL;
	}
	k->gen = cp_gen;
	return k;
}

static const char *ptw_stk_check_str(const char *s)
{
	if (s && strnlen(s, PTW_MAX_STRING_LEN + 1) > PTW_MAX_STRING_LEN)
		return "callstack string too long";
	return NULL;
}

const char *ptw_w_stk_check(const struct ptw_callstack *cs)
{
	if (cs->n_frames > PTW_MAX_FRAMES)
		return "callstack of more than PTW_MAX_FRAMES frames";
	if (cs->n_frames && !cs->frames)
		return "NULL callstack frames with a non-zero count";
	if (cs->flags & ~PTW_CS_INLINE)
		return "unknown callstack flags";
	for (uint32_t i = 0; i < cs->n_frames; i++) {
		const struct ptw_frame *f = &cs->frames[i];
		const char *why;
		if ((why = ptw_stk_check_str(f->function)) ||
		    (why = ptw_stk_check_str(f->file)))
			return why;
		const struct ptw_mapping *m = f->mapping;
		if (!m)
			continue;
		if ((why = ptw_stk_check_str(m->path)))
			return why;
		if (m->build_id_len > PTW_STK_BUILD_ID_MAX ||
		    (m->build_id_len && !m->build_id))
			return "callstack mapping build id over 64 bytes, or NULL";
	}
	return NULL;
}

/* A string field, what is not UTF-8 written as U+FFFD. */
static void ptw_stk_put_str(struct ptw_pb_buf *b, uint32_t field,
			    const char *s, size_t len)
{
	int fix;
	size_t out = ptw_utf8_fixed_len(s, len, &fix);
	if (!ptw_pb_reserve(b, 2 * PTW_PB_VARINT_MAX + out))
		return;
	uint8_t *p = ptw_pb_write_len_tag(b->data + b->len, field);
	p = ptw_pb_write_varint(p, out);
	if (fix) {
		p = (uint8_t *)ptw_utf8_fix((char *)p, s, len);
	} else {
		memcpy(p, s, len);
		p += len;
	}
	b->len = (size_t)(p - b->data);
}

/* The iid of bytes (s, len) in table i; a new one is added to k->id as
 * an InternedString (raw: bytes as they are, for build ids). 0: no
 * memory. */
static uint64_t ptw_stk_str(struct ptw_stk *k, int i, const char *s,
			    size_t len, int raw)
{
	int is_new;
	uint64_t iid = ptw_intern_get(k->t[i], s, len, &is_new);
	if (!iid || !is_new)
		return iid;
	size_t m = ptw_pb_begin_nested(&k->id, ptw_stk_field[i]);
	ptw_pb_append_varint_field(&k->id, PTW_F_ISTR_IID, iid);
	if (raw)
		ptw_pb_append_bytes_field(&k->id, PTW_F_ISTR_STR, s, len);
	else
		ptw_stk_put_str(&k->id, PTW_F_ISTR_STR, s, len);
	ptw_pb_end_nested(&k->id, m);
	return iid;
}

/* The iid of the message body in k->key in table i (mappings, frames,
 * callstacks); a new one is added to k->id. 0: no memory. */
static uint64_t ptw_stk_msg(struct ptw_stk *k, int i)
{
	if (k->key.oom)
		return 0;
	int is_new;
	uint64_t iid = ptw_intern_get(k->t[i], (const char *)k->key.data,
				      k->key.len, &is_new);
	if (!iid || !is_new)
		return iid;
	size_t m = ptw_pb_begin_nested(&k->id, ptw_stk_field[i]);
	ptw_pb_append_varint_field(&k->id, 1, iid); /* .iid = 1 in all three */
	ptw_pb_append_raw(&k->id, k->key.data, k->key.len);
	ptw_pb_end_nested(&k->id, m);
	return iid;
}

static uint64_t ptw_stk_mapping(struct ptw_stk *k, const struct ptw_mapping *m)
{
	uint64_t bid = 0, path = 0;
	if (m->build_id_len &&
	    !(bid = ptw_stk_str(k, PTW_STK_BID, (const char *)m->build_id,
				m->build_id_len, 1)))
		return 0;
	if (m->path &&
	    !(path = ptw_stk_str(k, PTW_STK_PATH, m->path, strlen(m->path), 0)))
		return 0;
	struct ptw_pb_buf *b = &k->key;
	ptw_pb_buf_reset(b);
	if (bid)
		ptw_pb_append_varint_field(b, PTW_F_MAP_BUILD_ID, bid);
	ptw_pb_append_varint_field(b, PTW_F_MAP_START_OFFSET, m->exact_offset);
	ptw_pb_append_varint_field(b, PTW_F_MAP_START, m->start);
	ptw_pb_append_varint_field(b, PTW_F_MAP_END, m->end);
	ptw_pb_append_varint_field(b, PTW_F_MAP_LOAD_BIAS, m->load_bias);
	if (path)
		ptw_pb_append_varint_field(b, PTW_F_MAP_PATH_STRING_IDS, path);
	ptw_pb_append_varint_field(b, PTW_F_MAP_EXACT_OFFSET, m->exact_offset);
	return ptw_stk_msg(k, PTW_STK_MAP);
}

static uint64_t ptw_stk_frame(struct ptw_stk *k, const struct ptw_frame *f)
{
	uint64_t fn = 0, src = 0, map = 0;
	if (f->function &&
	    !(fn = ptw_stk_str(k, PTW_STK_FN, f->function, strlen(f->function), 0)))
		return 0;
	if (f->file &&
	    !(src = ptw_stk_str(k, PTW_STK_SRC, f->file, strlen(f->file), 0)))
		return 0;
	if (f->mapping && !(map = ptw_stk_mapping(k, f->mapping)))
		return 0;
	struct ptw_pb_buf *b = &k->key;
	ptw_pb_buf_reset(b);
	if (fn)
		ptw_pb_append_varint_field(b, PTW_F_FRAME_FUNCTION_NAME_ID, fn);
	if (map) {
		ptw_pb_append_varint_field(b, PTW_F_FRAME_MAPPING_ID, map);
		ptw_pb_append_varint_field(b, PTW_F_FRAME_REL_PC, f->rel_pc);
	}
	if (src)
		ptw_pb_append_varint_field(b, PTW_F_FRAME_SOURCE_PATH_IID, src);
	if (f->line)
		ptw_pb_append_varint_field(b, PTW_F_FRAME_LINE_NUMBER, f->line);
	return ptw_stk_msg(k, PTW_STK_FRM);
}

/* TrackEvent.callstack: the frames inline. */
static void ptw_stk_inline(struct ptw_pb_buf *b, const struct ptw_callstack *cs)
{
	size_t top = ptw_pb_begin_nested(b, PTW_F_TE_CALLSTACK);
	for (uint32_t i = 0; i < cs->n_frames; i++) {
		const struct ptw_frame *f = &cs->frames[i];
		size_t m = ptw_pb_begin_nested(b, PTW_F_ICS_FRAMES);
		if (f->function)
			ptw_stk_put_str(b, PTW_F_ICS_FUNCTION_NAME, f->function,
					strlen(f->function));
		if (f->file)
			ptw_stk_put_str(b, PTW_F_ICS_SOURCE_FILE, f->file,
					strlen(f->file));
		if (f->line)
			ptw_pb_append_varint_field(b, PTW_F_ICS_LINE_NUMBER,
						   f->line);
		ptw_pb_end_nested(b, m);
	}
	ptw_pb_end_nested(b, top);
}

int ptw_w_stk_encode(struct ptw_seq *s, const struct ptw_callstack *cs,
		     struct ptw_stk_out *out)
{
	struct ptw_stk *k = s->stk;
	if (!k && !(k = s->stk = ptw_stk_create(s->cp_gen)))
		return PTW_ERR_NOMEM;
	if (k->gen != s->cp_gen) { /* a checkpoint forgot every iid */
		for (int i = 0; i < PTW_STK_TABLES; i++)
			ptw_intern_reset(k->t[i]);
		k->gen = s->cp_gen;
	}
	ptw_pb_buf_reset(&k->id);
	ptw_pb_buf_reset(&k->te);
	ptw_pb_buf_reset(&k->key);
	if (cs->flags & PTW_CS_INLINE) {
		ptw_stk_inline(&k->te, cs);
	} else {
		for (uint32_t i = 0; i < cs->n_frames; i++)
			if (!(k->frame_iids[i] = ptw_stk_frame(k, &cs->frames[i])))
				return PTW_ERR_NOMEM;
		ptw_pb_buf_reset(&k->key);
		for (uint32_t i = 0; i < cs->n_frames; i++)
			ptw_pb_append_varint_field(&k->key, PTW_F_CS_FRAME_IDS,
						   k->frame_iids[i]);
		uint64_t iid = ptw_stk_msg(k, PTW_STK_CS);
		if (!iid)
			return PTW_ERR_NOMEM;
		ptw_pb_append_varint_field(&k->te, PTW_F_TE_CALLSTACK_IID, iid);
	}
	if (k->id.oom || k->te.oom || k->key.oom)
		return PTW_ERR_NOMEM;
	uint32_t cap = s->w->opt.max_interned;
	for (int i = 0; i < PTW_STK_TABLES; i++)
		if (ptw_intern_count(k->t[i]) >= cap)
			s->need_cp = 1;
	out->id = k->id.data;
	out->id_len = k->id.len;
	out->te = k->te.data;
	out->te_len = k->te.len;
	return 0;
}
