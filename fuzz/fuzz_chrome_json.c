/* fuzz_chrome_json.c - libFuzzer target for the Chrome JSON importer.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Each input is given to:
 *  1. ptw_cv_json_parse_object() (one AppleTrace text line / one event);
 *  2. ptw_cv_json_read_mem() (the whole streaming reader, in place, through
 *     a parse window of a few bytes chosen by the second byte; strict or
 *     lenient by the first byte's top bit);
 *  3. ptw_cv_json_read_fd() on a memfd with a tiny read size chosen by the
 *     first byte, so that every event straddles buffer refills.
 * 2 and 3 must agree exactly (return code, events, and a digest of every
 * decoded field): refilling must never change what is parsed. Every byte
 * of every string view is read, so ASan catches dangling views.
 *  4. the events of 2 through the reorder window (cv_sort.h), once with a
 *     window that holds them all (they must come out in (ts, arrival)
 *     order, those without ts first) and once with a tiny one: the same
 *     events (an order-free digest of their copies) either way. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "converters/chrome_json/chrome_json.h"
#include "converters/chrome_json/cv_sort.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct digest {
	uint64_t events, h;
};

static void mix(struct digest *d, uint64_t v)
{
	d->h = (d->h ^ v) * 0x100000001b3ull;
}

static void mix_str(struct digest *d, struct ptw_cv_str s)
{
	if (!s.p) {
		mix(d, 0xabcdu);
		return;
	}
	mix(d, s.n);
	for (size_t i = 0; i < s.n; i++)
		mix(d, (unsigned char)s.p[i]);
}

static void digest_event(struct digest *d, const struct ptw_cv_event *ev)
{
	mix(d, (unsigned char)ev->ph);
	mix(d, ev->flags);
	mix_str(d, ev->name);
	mix_str(d, ev->cat);
	mix(d, ev->pid);
	mix(d, ev->tid);
	mix_str(d, ev->pid_str);
	mix_str(d, ev->tid_str);
	if (ev->flags & PTW_CV_HAS_TS)
		mix(d, (uint64_t)ev->ts_ns);
	if (ev->flags & PTW_CV_HAS_DUR)
		mix(d, (uint64_t)ev->dur_ns);
	if (ev->flags & PTW_CV_HAS_TTS)
		mix(d, (uint64_t)ev->tts_ns);
	if (ev->flags & PTW_CV_HAS_TDUR)
		mix(d, (uint64_t)ev->tdur_ns);
	mix(d, ev->id_num);
	mix_str(d, ev->id_str);
	mix_str(d, ev->bind_id);
	mix(d, (unsigned char)ev->scope);
	mix(d, (unsigned char)ev->bp);
	mix(d, ev->n_args);
	for (uint32_t i = 0; i < ev->n_args; i++) {
		const struct ptw_cv_arg *a = &ev->args[i];
		mix_str(d, a->key);
		mix(d, a->type);
		if (a->type == PTW_CV_VAL_INT)
			mix(d, (uint64_t)a->i);
		if (a->type == PTW_CV_VAL_BOOL)
			mix(d, (uint64_t)a->b);
		if (a->type == PTW_CV_VAL_STRING || a->type == PTW_CV_VAL_JSON)
			mix_str(d, a->s);
	}
	mix(d, ev->line);
	mix(d, ev->offset);
}

static int on_event(void *ctx, const struct ptw_cv_event *ev,
		    struct ptw_error *err)
{
	(void)err;
	struct digest *d = ctx;
	d->events++;
	digest_event(d, ev);
	return 0;
}

/* After the reorder window: an order-free sum of event digests, and
 * whether the timestamps came out in order. */
struct sorted {
	uint64_t events, sum;
	int has_last, in_order;
	int64_t last;
};

static int on_sorted(void *ctx, const struct ptw_cv_event *ev,
		     struct ptw_error *err)
{
	(void)err;
	struct sorted *o = ctx;
	struct digest d = { 0, 0xcbf29ce484222325ull };
	digest_event(&d, ev);
	o->events++;
	o->sum += d.h;
	int64_t ts = (ev->flags & PTW_CV_HAS_TS) ? ev->ts_ns : INT64_MIN;
	if (o->has_last && ts < o->last)
		o->in_order = 0;
	o->has_last = 1;
	o->last = ts;
	return 0;
}

static void check_sort(const uint8_t *data, size_t size,
		       const struct ptw_cv_json_read_opts *mo, size_t window,
		       struct sorted *o)
{
	struct ptw_error err;
	memset(o, 0, sizeof(*o));
	o->in_order = 1;
	struct ptw_cv_sort *s = ptw_cv_sort_create(window, on_sorted, o, &err);
	if (!s)
		abort();
	int r = ptw_cv_json_read_mem(data, size, mo, ptw_cv_sort_event, s,
				     NULL, &err);
	if (r != 0 && r != PTW_ERR_FORMAT && r != PTW_ERR_LIMIT)
		abort();
	if (ptw_cv_sort_drain(s, &err))
		abort();
	ptw_cv_sort_destroy(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptw_error err;
	struct ptw_cv_event ev;
	struct digest a = { 0, 0xcbf29ce484222325ull }, b = a, c = a;

	struct ptw_cv_json_parser *jp = ptw_cv_json_parser_create(&err);
	if (!jp)
		abort();
	int rc = ptw_cv_json_parse_object(jp, (const char *)data, size, &ev,
					  &err);
	if (rc == 0)
		digest_event(&c, &ev);
	else if (rc != PTW_ERR_FORMAT && rc != PTW_ERR_LIMIT)
		abort();
	else if (err.offset > size)
		abort();
	ptw_cv_json_parser_destroy(jp);

	struct ptw_cv_json_read_stats sa, sb;
	/* a small parse window, so that it widens inside events */
	/* the top bit of the first byte: strict RFC 8259 or lenient (the
	 * default, trace_processor's leniency) */
	int strict = size && (data[0] & 0x80);
	struct ptw_cv_json_read_opts mo = {
		.chunk_bytes = 1 + (size > 1 ? data[1] % 29 : 0),
		.strict = strict,
	};
	int ra = ptw_cv_json_read_mem(data, size, &mo, on_event, &a, &sa, &err);
	if (ra != 0 && ra != PTW_ERR_FORMAT && ra != PTW_ERR_LIMIT)
		abort();

	int fd = memfd_create("fuzz", 0);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	lseek(fd, 0, SEEK_SET);
	struct ptw_cv_json_read_opts o = {
		.chunk_bytes = 1 + (size ? data[0] % 13 : 0),
		.strict = strict,
	};
	int rb = ptw_cv_json_read_fd(fd, &o, on_event, &b, &sb, &err);
	close(fd);
	if (ra != rb || a.events != b.events || a.h != b.h || sa.cut != sb.cut ||
	    sa.form != sb.form || sa.repairs != sb.repairs ||
	    sa.stopped != sb.stopped || sa.stop_offset != sb.stop_offset ||
	    sa.stop_bytes_left != sb.stop_bytes_left)
		abort(); /* refilling changed the result */
	if (strict && sa.repairs)
		abort(); /* strict mode repairs nothing */

	struct sorted all, tiny;
	check_sort(data, size, &mo, size + 1, &all);
	check_sort(data, size, &mo, 1 + (size > 2 ? data[2] % 4 : 0), &tiny);
	if (all.events != a.events || tiny.events != a.events ||
	    all.sum != tiny.sum || !all.in_order)
		abort(); /* the window lost, changed or misordered events */
	return 0;
}
