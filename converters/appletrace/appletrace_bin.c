/* appletrace_bin.c - decodes APLTRC01 binary fragments into cv events.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Layout (corpus README section 4): "APLTRC01", pid:u32, then records
 * until a 0x00 tag or the end of the file: 0x01 id:u32 len:u32 bytes[len]
 * defines a string; a phase letter (B E i C b e M) followed by
 * name_id:u32 tid:u64 ts:u64 arg:u64 is an event. A record that would
 * extend past the end of the file was cut by a crash and ends the fragment
 * quietly. The decoder works on chunks: it consumes whole records and asks
 * for more bytes when the next record is not complete in the chunk, so a
 * fragment of any size is read with one small buffer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "appletrace.h"
#include "converters/common/cursor.h"
#include "lib/util/grow.h"

#define PTW_AT_CHUNK (256u << 10)

static const char ptw_at_cat[] = "appletrace";
#define PTW_AT_CAT_SYM 1u /* below PTW_APPLETRACE_FIRST_SYM */

/* Simple events handed to a batch callback in one call, at most. */
#define PTW_AT_BATCH 1024u

struct ptw_at_bin {
	const char *name;
	struct ptw_appletrace_names *names;
	ptw_cv_event_fn fn;
	ptw_cv_batch_fn batch; /* NULL: every event goes to fn */
	void *ctx;
	enum ptw_appletrace_kind kind;
	uint64_t total; /* file size: records past it are truncated */
	uint64_t base;  /* file offset of the current chunk's first byte */
	uint32_t pid;
	int header_done;
	int done;
	struct ptw_cv_event ev; /* the event handed out (input set) */
	struct ptw_cv_arg arg;  /* its argument (C, M) */
	/* a batch being handed out; aligned, its events do not straddle
	 * cache lines */
	_Alignas(64) struct ptw_cv_simple sb[PTW_AT_BATCH];
};

static int ptw_at_bin_fail(struct ptw_at_bin *b, struct ptw_error *err,
			   enum ptw_appletrace_kind kind, uint64_t off,
			   const char *what, unsigned a, unsigned long long c)
{
	b->kind = kind;
	switch (kind) {
	case PTW_APPLETRACE_UNKNOWN_TAG:
		ptw_error_set(err, PTW_ERR_FORMAT, 0,
			      "%s: offset %llu: unknown record tag 0x%02x "
			      "(expected 0x00, 0x01 or one of B E i C b e M)",
			      b->name, (unsigned long long)off, a);
		break;
	case PTW_APPLETRACE_UNDEFINED_NAME_ID:
		ptw_error_set(err, PTW_ERR_FORMAT, 0,
			      "%s: offset %llu: '%c' event %s name_id %llu, "
			      "which no earlier string definition defined "
			      "(undefined_name_id)",
			      b->name, (unsigned long long)off, (char)a, what, c);
		break;
	case PTW_APPLETRACE_BAD_MAGIC:
		ptw_error_set(err, PTW_ERR_FORMAT, 0,
			      "%s: offset 0: not an APLTRC01 fragment "
			      "(expected magic \"APLTRC01\")", b->name);
		break;
	default:
		ptw_error_set(err, PTW_ERR_LIMIT, 0,
			      "%s: offset %llu: string definition of %llu bytes "
			      "is longer than %u", b->name,
			      (unsigned long long)off, c,
			      PTW_APPLETRACE_MAX_STRING);
		break;
	}
	if (err) {
		err->input = b->name;
		err->offset = off;
	}
	return kind == PTW_APPLETRACE_OTHER ? PTW_ERR_LIMIT : PTW_ERR_FORMAT;
}

/* Counter values: an integral double is an integer (so -0.0 is 0), as the
 * exporter writes it; anything else stays a double. Returns 1 for an
 * integer (*i set), else 0 (*d set). */
static inline int ptw_at_counter_value(uint64_t bits, int64_t *i, double *d)
{
	double v;
	int64_t x;
	memcpy(&v, &bits, sizeof(v));
	if (ptw_cv_double_is_int(v, &x)) {
		*i = x;
		return 1;
	}
	*d = v;
	return 0;
}

static const char ptw_at_value_key[] = "value";

static void ptw_at_counter_arg(struct ptw_cv_arg *a, uint64_t bits)
{
	a->key.p = ptw_at_value_key;
	a->key.n = sizeof(ptw_at_value_key) - 1;
	a->type = ptw_at_counter_value(bits, &a->i, &a->d) ? PTW_CV_VAL_INT
							    : PTW_CV_VAL_DOUBLE;
}

/* A record's tid as trace_processor reads it: above 2^32-1, 0. */
static inline uint32_t ptw_at_tid(uint64_t tid)
{
	return tid > UINT32_MAX ? 0 : (uint32_t)tid;
}

/* A record's ts (microseconds) in ns if representable; else the event
 * has no timestamp. */
static inline int ptw_at_ts_ns(uint64_t ts, int64_t *ns)
{
	if (ts > (uint64_t)INT64_MAX / 1000u)
		return 0;
	*ns = (int64_t)ts * 1000;
	return 1;
}

static inline int ptw_at_is_event_tag(uint8_t tag)
{
	return tag == 'B' || tag == 'E' || tag == 'i' || tag == 'C' ||
	       tag == 'b' || tag == 'e' || tag == 'M';
}

/* The fields of b->ev that every event shares (set once per fragment,
 * and again after an event that changed them). */
static void ptw_at_bin_defaults(struct ptw_at_bin *b)
{
	struct ptw_cv_event *ev = &b->ev;
	ev->pid = b->pid;
	ev->cat.p = ptw_at_cat;
	ev->cat.n = sizeof(ptw_at_cat) - 1;
	ev->cat_sym = PTW_AT_CAT_SYM;
	ev->scope = 0;
	ev->args = NULL;
	ev->n_args = 0;
	ev->id_num = 0;
}

/* Decodes the event record at p (tag, then name_id:u32 tid:u64 ts:u64
 * arg:u64; the caller checked that all of it is in the chunk) and hands it
 * to the callback. b->ev is filled in place: a B, E or i sets only the
 * fields that differ between events (a copy or memset per record was a
 * tenth of the decoding time); the rarer records restore the shared ones
 * after their callback. */
static int ptw_at_bin_event(struct ptw_at_bin *b, const uint8_t *p,
			    uint64_t off, struct ptw_error *err)
{
	uint8_t tag = p[0];
	uint32_t id = ptw_load_le32(p + 1);
	uint64_t tid = ptw_load_le64(p + 5);
	uint64_t ts = ptw_load_le64(p + 13);
	uint64_t arg = ptw_load_le64(p + 21);

	struct ptw_cv_event *ev = &b->ev;
	struct ptw_cv_arg *a = &b->arg;
	ev->name = ptw_appletrace_names_lookup(b->names, id, &ev->name_sym);
	if (__builtin_expect(!ev->name.p, 0))
		return ptw_at_bin_fail(b, err, PTW_APPLETRACE_UNDEFINED_NAME_ID,
				       off, "references", tag, id);
	ev->ph = (char)tag;
	ev->tid = ptw_at_tid(tid);
	ev->offset = off;
	ev->flags = PTW_CV_HAS_PID | PTW_CV_HAS_TID;
	ev->ts_ns = 0;
	if (ptw_at_ts_ns(ts, &ev->ts_ns))
		ev->flags |= PTW_CV_HAS_TS;
	if (tag == 'B' || tag == 'E')
		return b->fn(b->ctx, ev, err);
	switch (tag) {
	case 'i':
		ev->scope = 't';
		break;
	case 'C':
		memset(a, 0, sizeof(*a));
		ptw_at_counter_arg(a, arg);
		ev->args = a;
		ev->n_args = 1;
		break;
	case 'b':
	case 'e':
		ev->flags |= PTW_CV_HAS_ID;
		ev->id_num = arg;
		break;
	case 'M':
		memset(a, 0, sizeof(*a));
		if (arg > UINT32_MAX ||
		    !(a->s = ptw_appletrace_names_get(b->names, (uint32_t)arg)).p)
			return ptw_at_bin_fail(b, err,
					       PTW_APPLETRACE_UNDEFINED_NAME_ID,
					       off, "value references", tag,
					       (unsigned long long)arg);
		a->key.p = "name";
		a->key.n = 4;
		a->type = PTW_CV_VAL_STRING;
		ev->args = a;
		ev->n_args = 1;
		/* metadata has no category and no time */
		ev->cat.p = NULL;
		ev->cat.n = 0;
		ev->cat_sym = 0;
		ev->ts_ns = 0;
		ev->flags &= ~(uint32_t)PTW_CV_HAS_TS;
		break;
	default:
		break;
	}
	int rc = b->fn(b->ctx, ev, err);
	ptw_at_bin_defaults(b);
	return rc;
}

/* 1 for the tags of simple records (B, E, i, C): one load in the hot
 * loop instead of four compares. */
static const uint8_t ptw_at_simple_tag[256] = {
	['B'] = 1, ['E'] = 1, ['i'] = 1, ['C'] = 1};

/* Decodes the simple event records (B, E, i and C with a
 * timestamp and a defined, non-empty name) at the start of p[0, avail)
 * into b->sb, up to PTW_AT_BATCH of them, exactly as ptw_at_bin_event
 * would; returns how many. A record that is not simple ends the run (the
 * caller gives it to ptw_at_bin_event, which also reports an undefined
 * name). */
static __attribute__((noinline)) size_t
ptw_at_bin_simple_records(struct ptw_at_bin *b, const uint8_t *p, size_t avail)
{
	const struct ptw_appletrace_dense *dense =
		ptw_appletrace_names_dense(b->names);
	size_t max = avail / PTW_APPLETRACE_EVENT_LEN;
	if (max > PTW_AT_BATCH)
		max = PTW_AT_BATCH;
	const uint8_t *end = p + max * PTW_APPLETRACE_EVENT_LEN;
	struct ptw_cv_simple *e = b->sb;
	for (; p < end; p += PTW_APPLETRACE_EVENT_LEN, e++) {
		uint8_t tag = p[0];
		if (!ptw_at_simple_tag[tag] ||
		    !ptw_at_ts_ns(ptw_load_le64(p + 13), &e->ts_ns))
			break;
		uint32_t id = ptw_load_le32(p + 1);
		size_t name_n;
		if (id < PTW_APPLETRACE_DENSE) {
			name_n = dense[id].s.n;
			e->name_sym = dense[id].sym;
		} else {
			name_n = ptw_appletrace_names_lookup(b->names, id,
							     &e->name_sym).n;
		}
		if (!name_n)
			break; /* undefined (n 0 too) or empty: in full */
		e->tid = ptw_at_tid(ptw_load_le64(p + 5));
		e->ph = (char)tag;
		/* a C's value, as read (every record's: a branch on the tag
		 * would mispredict, the kinds come in random order) */
		uint64_t bits = ptw_load_le64(p + 21);
		memcpy(&e->d, &bits, sizeof(e->d));
	}
	return (size_t)(e - b->sb);
}

/* Hands the simple records at p (see ptw_at_bin_simple_records; file
 * offset 'off') to the batch callback, and each record it leaves to
 * ptw_at_bin_event; sets *done to the records handled (0 if the first is
 * not simple). Returns 0 or an error. */
static int ptw_at_bin_batch(struct ptw_at_bin *b, const uint8_t *p,
			    size_t avail, uint64_t off, size_t *done,
			    struct ptw_error *err)
{
	size_t k = ptw_at_bin_simple_records(b, p, avail), i = 0;
	*done = 0;
	while (i < k) {
		struct ptw_cv_batch bt = {
			.ev = b->sb + i, .n = k - i, .pid = b->pid,
			.cat = b->ev.cat, .cat_sym = b->ev.cat_sym,
			.value_key = {ptw_at_value_key,
				      sizeof(ptw_at_value_key) - 1}};
		size_t taken = 0;
		int rc = b->batch(b->ctx, &bt, &taken, err);
		i += taken;
		*done = i;
		if (rc)
			return rc;
		if (i < k) {
			size_t at = i * PTW_APPLETRACE_EVENT_LEN;
			rc = ptw_at_bin_event(b, p + at, off + at, err);
			*done = ++i;
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Reads the fragment's header (magic, pid) at the start of p[0, n) and
 * sets *used past it; consumes nothing while the chunk holds less of the
 * file than a header (the caller reads more). A file shorter than a
 * header was cut by a crash: fine (b->done, no events) if what is there
 * is (a prefix of) the magic. */
static int ptw_at_bin_header(struct ptw_at_bin *b, const uint8_t *p, size_t n,
			     size_t *used, struct ptw_error *err)
{
	*used = 0;
	if (b->total < PTW_APPLETRACE_HEADER_LEN) {
		if (n < b->total)
			return 0;
		size_t k = n < 8 ? n : 8;
		if (memcmp(p, PTW_APPLETRACE_MAGIC, k) != 0)
			return ptw_at_bin_fail(b, err, PTW_APPLETRACE_BAD_MAGIC,
					       0, NULL, 0, 0);
		b->done = 1;
		*used = n;
		return 0;
	}
	if (n < PTW_APPLETRACE_HEADER_LEN)
		return 0;
	if (memcmp(p, PTW_APPLETRACE_MAGIC, 8) != 0)
		return ptw_at_bin_fail(b, err, PTW_APPLETRACE_BAD_MAGIC, 0, NULL,
				       0, 0);
	b->pid = ptw_load_le32(p + 8);
	b->ev.pid = b->pid;
	b->header_done = 1;
	*used = PTW_APPLETRACE_HEADER_LEN;
	return 0;
}

/* Takes the event records at p[*pos, end) (all inside the chunk and the
 * file) while there are any, in batches when b->batch is set; advances
 * *pos past those taken. Returns 0 or an error. */
static int ptw_at_bin_events(struct ptw_at_bin *b, const uint8_t *p,
			     size_t *pos, size_t end, struct ptw_error *err)
{
	size_t at = *pos;
	int rc = 0;
	while (at + PTW_APPLETRACE_EVENT_LEN <= end &&
	       ptw_at_is_event_tag(p[at])) {
		if (b->batch) {
			size_t done;
			rc = ptw_at_bin_batch(b, p + at, end - at, b->base + at,
					      &done, err);
			at += done * PTW_APPLETRACE_EVENT_LEN;
			if (rc)
				break;
			if (done)
				continue;
		}
		rc = ptw_at_bin_event(b, p + at, b->base + at, err);
		if (rc)
			break;
		at += PTW_APPLETRACE_EVENT_LEN;
	}
	*pos = at;
	return rc;
}

/* Defines the string of the definition record at p[0, avail) (file
 * offset 'off') and sets *len to the record's length; *len 0 when the
 * record is in the file but not yet all in the chunk. One cut by the end
 * of the file sets b->done. Returns 0 or an error. */
static int ptw_at_bin_strdef(struct ptw_at_bin *b, const uint8_t *p,
			     size_t avail, uint64_t off, size_t *len,
			     struct ptw_error *err)
{
	*len = 0;
	if (off + PTW_APPLETRACE_STRDEF_HDR > b->total) {
		b->done = 1; /* truncated definition header */
		return 0;
	}
	if (avail < PTW_APPLETRACE_STRDEF_HDR)
		return 0;
	uint32_t id = ptw_load_le32(p + 1);
	uint32_t n = ptw_load_le32(p + 5);
	if (off + PTW_APPLETRACE_STRDEF_HDR + n > b->total) {
		b->done = 1; /* truncated string bytes */
		return 0;
	}
	if (n > PTW_APPLETRACE_MAX_STRING)
		return ptw_at_bin_fail(b, err, PTW_APPLETRACE_OTHER, off, NULL,
				       0, n);
	if (avail - PTW_APPLETRACE_STRDEF_HDR < n)
		return 0; /* in the file, not yet in the chunk */
	if (ptw_appletrace_names_define(b->names, id,
					p + PTW_APPLETRACE_STRDEF_HDR, n))
		return ptw_error_set(err, PTW_ERR_NOMEM, 0, "%s: out of memory",
				     b->name);
	*len = PTW_APPLETRACE_STRDEF_HDR + (size_t)n;
	return 0;
}

/* The record at p[pos] that the event loop left (tag 0x00, a string
 * definition, an event not all in the chunk or the file, an unknown tag;
 * pos < n): sets *len to its length when it was taken, 0 when the chunk
 * ends here (b->done set if the fragment does). Returns 0 or an error. */
static int ptw_at_bin_other(struct ptw_at_bin *b, const uint8_t *p, size_t n,
			    size_t pos, size_t *len, struct ptw_error *err)
{
	uint64_t off = b->base + pos;
	uint8_t tag = p[pos];
	*len = 0;
	if (tag == 0x00) {
		b->done = 1;
		return 0;
	}
	if (tag == 0x01)
		return ptw_at_bin_strdef(b, p + pos, n - pos, off, len, err);
	if (!ptw_at_is_event_tag(tag))
		return ptw_at_bin_fail(b, err, PTW_APPLETRACE_UNKNOWN_TAG, off,
				       NULL, tag, 0);
	/* (a complete one was taken by the event loop) */
	if (off + PTW_APPLETRACE_EVENT_LEN > b->total)
		b->done = 1; /* truncated event */
	return 0; /* else: the rest is in the next chunk */
}

/* Consumes whole records of p[0..n) (file offset b->base); sets *used.
 * Stops early when the next record is incomplete in the chunk but inside
 * the file (the caller reads more), or sets b->done at the end. */
static int ptw_at_bin_chunk(struct ptw_at_bin *b, const uint8_t *p, size_t n,
			    size_t *used, struct ptw_error *err)
{
	size_t pos = 0;
	int rc = 0;
	*used = 0;
	if (!b->header_done) {
		rc = ptw_at_bin_header(b, p, n, &pos, err);
		if (rc || !b->header_done) {
			*used = pos;
			return rc;
		}
	}
	/* Records wholly inside both the chunk and the file end before
	 * 'fast_end': events there need no other bound check. */
	size_t fast_end = n;
	if (b->total - b->base < (uint64_t)n)
		fast_end = (size_t)(b->total - b->base);
	while (!b->done) {
		size_t len;
		rc = ptw_at_bin_events(b, p, &pos, fast_end, err);
		*used = pos;
		if (rc)
			return rc;
		if (b->base + pos >= b->total) {
			b->done = 1;
			break;
		}
		if (pos >= n)
			break;
		rc = ptw_at_bin_other(b, p, n, pos, &len, err);
		if (rc || !len)
			break;
		pos += len;
		*used = pos;
	}
	if (b->done)
		*used = n;
	return rc;
}

int ptw_appletrace_bin_read_mem(const void *data, size_t n, const char *name,
				struct ptw_appletrace_names *names,
				ptw_cv_event_fn fn, void *ctx,
				enum ptw_appletrace_kind *kind,
				struct ptw_error *err)
{
	return ptw_appletrace_bin_read_mem_batch(data, n, name, names, fn, NULL,
						 ctx, kind, err);
}

int ptw_appletrace_bin_read_mem_batch(const void *data, size_t n,
				      const char *name,
				      struct ptw_appletrace_names *names,
				      ptw_cv_event_fn fn,
				      ptw_cv_batch_fn batch, void *ctx,
				      enum ptw_appletrace_kind *kind,
				      struct ptw_error *err)
{
	if ((!data && n) || !names || !fn)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "appletrace bin: bad arguments");
	struct ptw_at_bin b = {.name = name ? name : "<memory>",
			       .names = names, .fn = fn, .batch = batch,
			       .ctx = ctx, .total = n};
	b.ev.input = b.name;
	ptw_at_bin_defaults(&b);
	size_t used;
	int rc = ptw_at_bin_chunk(&b, data, n, &used, err);
	if (kind)
		*kind = rc ? (b.kind ? b.kind : PTW_APPLETRACE_OTHER)
			   : PTW_APPLETRACE_OK;
	return rc;
}

int ptw_appletrace_bin_read_fd(int fd, const char *name,
			       struct ptw_appletrace_names *names,
			       ptw_cv_event_fn fn, void *ctx,
			       enum ptw_appletrace_kind *kind,
			       struct ptw_error *err)
{
	return ptw_appletrace_bin_read_fd_batch(fd, name, names, fn, NULL, ctx,
						kind, err);
}

int ptw_appletrace_bin_read_fd_batch(int fd, const char *name,
				     struct ptw_appletrace_names *names,
				     ptw_cv_event_fn fn,
				     ptw_cv_batch_fn batch, void *ctx,
				     enum ptw_appletrace_kind *kind,
				     struct ptw_error *err)
{
	struct ptw_appletrace_buf buf = {NULL, 0};
	int rc = ptw_appletrace_bin_read_fd_buf(fd, name, names, fn, batch, ctx,
						&buf, kind, err);
	ptw_appletrace_buf_free(&buf);
	return rc;
}

void ptw_appletrace_buf_free(struct ptw_appletrace_buf *buf)
{
	if (!buf)
		return;
	free(buf->p);
	buf->p = NULL;
	buf->cap = 0;
}

/* Reads fd into the buffer at the fragment's offset b->base + *len
 * (*len bytes are there already) until it is full or the file ends
 * (*eof). Returns 0 or PTW_ERR_IO. */
static int ptw_at_bin_fill(struct ptw_at_bin *b, int fd,
			   const struct ptw_appletrace_buf *buf, size_t *len,
			   int *eof, struct ptw_error *err)
{
	while (*len < buf->cap) {
		ssize_t r = read(fd, buf->p + *len, buf->cap - *len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return ptw_error_set(err, PTW_ERR_IO, errno,
					     "%s: read failed: %s", b->name,
					     strerror(errno));
		}
		if (r == 0) {
			*eof = 1;
			break;
		}
		*len += (size_t)r;
	}
	return 0;
}

int ptw_appletrace_bin_read_fd_buf(int fd, const char *name,
				   struct ptw_appletrace_names *names,
				   ptw_cv_event_fn fn, ptw_cv_batch_fn batch,
				   void *ctx, struct ptw_appletrace_buf *buf,
				   enum ptw_appletrace_kind *kind,
				   struct ptw_error *err)
{
	if (kind)
		*kind = PTW_APPLETRACE_OTHER;
	if (fd < 0 || !names || !fn || !buf)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "appletrace bin: bad arguments");
	struct ptw_at_bin b = {.name = name ? name : "<fd>", .names = names,
			       .fn = fn, .batch = batch, .ctx = ctx};
	b.ev.input = b.name;
	ptw_at_bin_defaults(&b);
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return ptw_error_set(err, PTW_ERR_IO, errno,
				     "%s: not a regular file", b.name);
	b.total = (uint64_t)st.st_size;
	if (!buf->p) {
		buf->p = malloc(PTW_AT_CHUNK);
		if (!buf->p)
			return ptw_error_set(err, PTW_ERR_NOMEM, 0,
					     "%s: out of memory", b.name);
		buf->cap = PTW_AT_CHUNK;
	}

	size_t len = 0;
	int rc = 0, eof = 0;
	while (!b.done) {
		if (!eof && (rc = ptw_at_bin_fill(&b, fd, buf, &len, &eof, err)))
			break;
		if (eof && b.base + len < b.total)
			b.total = b.base + len; /* file shrank under us */
		size_t used;
		rc = ptw_at_bin_chunk(&b, buf->p, len, &used, err);
		if (rc || b.done)
			break;
		if (used == 0 && len == buf->cap) {
			/* One record longer than the buffer: grow. */
			uint8_t *nb = ptw_grow(buf->p, &buf->cap, buf->cap + 1,
					       0, 1);
			if (!nb) {
				rc = ptw_error_set(err, PTW_ERR_NOMEM, 0,
						   "%s: out of memory", b.name);
				break;
			}
			buf->p = nb;
			continue;
		}
		if (eof && used == 0)
			break; /* cannot happen: total was trimmed */
		memmove(buf->p, buf->p + used, len - used);
		len -= used;
		b.base += used;
	}
	if (kind)
		*kind = rc ? (b.kind ? b.kind : PTW_APPLETRACE_OTHER)
			   : PTW_APPLETRACE_OK;
	return rc;
}
