/* test_writer_nested.c - nested debug annotations (PTW_ARG_TYPE_DICT /
 * PTW_ARG_TYPE_ARRAY): written by the writer, decoded by the reader into the
 * same tree, and flattened into the args rows trace_processor's protobuf
 * import makes of them (src/trace_processor/util/proto_to_args_parser.cc,
 * v58.2: names sanitized, dicts ".name", arrays "[i]" with indexes that
 * advance only past values that added an entry); the writer's limits.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptw/writer.h"
#include "support/ptw_test.h"
#include "reader/trace_read.h"

#define A_INT(n, x) {.name = (n), .type = PTW_ARG_TYPE_INT, .v.i = (x)}
#define A_STR(n, x) {.name = (n), .type = PTW_ARG_TYPE_STRING, .v.s = (x)}
#define A_NEST(n, t, items, cnt) \
	{.name = (n), .type = (t), .v.nested = {(items), (cnt)}}

/* Writes one instant with 'args' on a fresh writer; returns the writer's
 * result for the event; the file is at 'path'. */
static int write_instant(const char *path, const struct ptw_arg *args,
			 uint32_t n)
{
	struct ptw_error err = {0};
	struct ptw_writer *w = ptw_writer_open(path, NULL, &err);
	cr_assert_not_null(w, "%s", err.msg);
	uint64_t tr = ptw_writer_add_track(w, "t", 0, -1);
	struct ptw_event ev = {.track = tr, .ts = 1, .name = "e",
			       .args = args, .n_args = n};
	int rc = ptw_seq_instant(ptw_writer_sim_seq(w), &ev);
	int crc = ptw_writer_close(w, NULL);
	if (rc == 0)
		cr_assert_eq(crc, 0);
	return rc;
}

/* The rows of the single event in 'path', "key=value" joined by ' '. */
static void rows_of(const char *path, char *out, size_t len)
{
	struct ptw_trace *t = ptw_test_load_or_fail(path);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	cr_assert_eq(n, 1);
	struct ptw_trace_args_table tab = {0};
	cr_assert_eq(ptw_trace_args_add(&tab, ev->args, ev->n_args), 0);
	size_t k = 0;
	out[0] = '\0';
	for (size_t i = 0; i < tab.n && k < len; i++) {
		const struct ptw_trace_arg_row *r = &tab.rows[i];
		if (r->type == PTW_TRACE_ARG_INT)
			k += (size_t)snprintf(out + k, len - k, "%s%s=%" PRId64,
					      i ? " " : "", r->key, r->v.i);
		else if (r->type == PTW_TRACE_ARG_STRING)
			k += (size_t)snprintf(out + k, len - k, "%s%s=%s",
					      i ? " " : "", r->key, r->v.s);
		else
			k += (size_t)snprintf(out + k, len - k, "%s%s=?",
					      i ? " " : "", r->key);
	}
	ptw_trace_args_free(&tab);
	ptw_trace_free(t);
}

Test(writer_nested, tree_round_trips_through_the_reader)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "nested_tree");
	struct ptw_arg inner[] = { A_INT("x", -3), A_STR("s", "hello") };
	struct ptw_arg arr[] = {
		A_INT(NULL, 1),
		A_NEST("ignored", PTW_ARG_TYPE_DICT, inner, 2),
		{.type = PTW_ARG_TYPE_DOUBLE, .v.d = 0.5},
		{.type = PTW_ARG_TYPE_BOOL, .v.b = 1},
		{.type = PTW_ARG_TYPE_UINT, .v.u = UINT64_MAX},
		{.type = PTW_ARG_TYPE_POINTER, .v.u = 0x1000},
	};
	struct ptw_arg top[] = {
		A_NEST("d", PTW_ARG_TYPE_DICT, inner, 2),
		A_NEST("a", PTW_ARG_TYPE_ARRAY, arr, 6),
		A_INT("plain", 9),
	};
	cr_assert_eq(write_instant(path, top, 3), 0);
	struct ptw_trace *t = ptw_test_load_or_fail(path);
	size_t n;
	const struct ptw_trace_event *ev = ptw_trace_events(t, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(ev->n_args, 3);
	const struct ptw_trace_arg *d = &ev->args[0], *a = &ev->args[1];
	cr_assert_str_eq(d->name, "d");
	cr_assert_eq(d->type, PTW_TRACE_ARG_DICT);
	cr_assert_eq(d->v.nested.n, 2);
	cr_assert_str_eq(d->v.nested.items[0].name, "x");
	cr_assert_eq(d->v.nested.items[0].type, PTW_TRACE_ARG_INT);
	cr_assert_eq(d->v.nested.items[0].v.i, -3);
	cr_assert_str_eq(d->v.nested.items[1].v.s, "hello");
	cr_assert_eq(a->type, PTW_TRACE_ARG_ARRAY);
	cr_assert_eq(a->v.nested.n, 6);
	cr_assert_null(a->v.nested.items[1].name); /* array values: none */
	cr_assert_eq(a->v.nested.items[1].type, PTW_TRACE_ARG_DICT);
	cr_assert_eq(a->v.nested.items[2].v.d, 0.5);
	cr_assert_eq(a->v.nested.items[3].v.b, 1);
	cr_assert_eq(a->v.nested.items[4].type, PTW_TRACE_ARG_UINT);
	cr_assert_eq(a->v.nested.items[4].v.u, UINT64_MAX);
	cr_assert_eq(a->v.nested.items[5].type, PTW_TRACE_ARG_POINTER);
	cr_assert_eq(ev->args[2].v.i, 9);
	ptw_trace_free(t);

	char rows[512];
	rows_of(path, rows, sizeof(rows));
	cr_assert_str_eq(rows, "debug.d.x=-3 debug.d.s=hello debug.a[0]=1 "
			       "debug.a[1].x=-3 debug.a[1].s=hello debug.a[2]=? "
			       "debug.a[3]=? debug.a[4]=? debug.a[5]=? "
			       "debug.plain=9");
	unlink(path);
}

/* proto_to_args_parser.cc StepDebugAnnotation: an array value that added
 * no entry (an empty dict or array, an array of such) leaves the index
 * where it was; a dict with entries counts even if they add nothing.
 * SanitizeDebugAnnotationName: '.', '[' and ']' -> '_' in every name. */
Test(writer_nested, empty_values_take_no_index_and_names_are_sanitized)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "nested_index");
	struct ptw_arg empty_dict[] = {
		A_NEST("", PTW_ARG_TYPE_DICT, NULL, 0),
	};
	struct ptw_arg empties[] = {
		A_NEST(NULL, PTW_ARG_TYPE_ARRAY, NULL, 0),
	};
	struct ptw_arg arr[] = {
		A_NEST(NULL, PTW_ARG_TYPE_DICT, NULL, 0),        /* no index */
		A_NEST(NULL, PTW_ARG_TYPE_ARRAY, empties, 1),    /* no index */
		A_INT(NULL, 7),                             /* [0] */
		A_NEST(NULL, PTW_ARG_TYPE_DICT, empty_dict, 1),  /* [1], no row */
		A_INT(NULL, 8),                             /* [2] */
	};
	struct ptw_arg named[] = { A_INT("x.y[0]", 1) };
	struct ptw_arg top[] = {
		A_NEST("a", PTW_ARG_TYPE_ARRAY, arr, 5),
		A_NEST("n.m", PTW_ARG_TYPE_DICT, named, 1),
		A_NEST("e", PTW_ARG_TYPE_DICT, NULL, 0),
	};
	cr_assert_eq(write_instant(path, top, 3), 0);
	char rows[256];
	rows_of(path, rows, sizeof(rows));
	cr_assert_str_eq(rows, "debug.a[0]=7 debug.a[2]=8 debug.n_m.x_y_0_=1");
	unlink(path);
}

/* Annotations given again: array indexes go on per key, a repeated key
 * replaces its value in place (args_tracker.cc AddArg kAddOrUpdate), as
 * for a slice's BEGIN and END annotations. */
Test(writer_nested, keys_merge_across_annotations)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "nested_merge");
	struct ptw_arg v1[] = { A_INT(NULL, 1) }, v2[] = { A_INT(NULL, 2) };
	struct ptw_arg top[] = {
		A_NEST("a", PTW_ARG_TYPE_ARRAY, v1, 1), A_INT("k", 1),
		A_NEST("a", PTW_ARG_TYPE_ARRAY, v2, 1), A_INT("k", 2),
	};
	cr_assert_eq(write_instant(path, top, 4), 0);
	char rows[256];
	rows_of(path, rows, sizeof(rows));
	cr_assert_str_eq(rows, "debug.a[0]=1 debug.k=2 debug.a[1]=2");
	unlink(path);
}

/* A chain of 'depth' non-empty arrays (levels 1..depth below the
 * top-level annotation), the last one holding an int. */
static int write_depth(const char *path, unsigned depth)
{
	struct ptw_arg *chain = calloc(depth + 1, sizeof(*chain));
	cr_assert_not_null(chain);
	chain[depth] = (struct ptw_arg)A_INT(NULL, 1);
	for (unsigned i = depth; i-- > 0;)
		chain[i] = (struct ptw_arg)A_NEST(NULL, PTW_ARG_TYPE_ARRAY,
						  &chain[i + 1], 1);
	struct ptw_arg top = A_NEST("deep", PTW_ARG_TYPE_ARRAY, &chain[0], 1);
	int rc = write_instant(path, &top, 1);
	free(chain);
	return rc;
}

Test(writer_nested, limits)
{
	char path[256];
	ptw_test_tmp_path(path, sizeof(path), "nested_limits");
	/* top-level array's values at level 1, the chain's last array's
	 * values at level depth + 1 */
	cr_assert_eq(write_depth(path, PTW_MAX_ARG_DEPTH - 1), 0);
	cr_assert_eq(write_depth(path, PTW_MAX_ARG_DEPTH), PTW_ERR_INVALID);

	struct ptw_arg *many = calloc(PTW_MAX_ARG_NODES + 1, sizeof(*many));
	cr_assert_not_null(many);
	for (unsigned i = 0; i <= PTW_MAX_ARG_NODES; i++)
		many[i] = (struct ptw_arg)A_INT(NULL, i);
	struct ptw_arg top = A_NEST("m", PTW_ARG_TYPE_ARRAY, many, PTW_MAX_ARG_NODES);
	cr_assert_eq(write_instant(path, &top, 1), 0);
	top.v.nested.n = PTW_MAX_ARG_NODES + 1;
	cr_assert_eq(write_instant(path, &top, 1), PTW_ERR_INVALID);
	free(many);

	struct ptw_arg unnamed[] = { A_INT(NULL, 1) };
	struct ptw_arg d = A_NEST("d", PTW_ARG_TYPE_DICT, unnamed, 1);
	cr_assert_eq(write_instant(path, &d, 1), PTW_ERR_INVALID);
	struct ptw_arg bad = A_NEST("d", PTW_ARG_TYPE_DICT, NULL, 2);
	cr_assert_eq(write_instant(path, &bad, 1), PTW_ERR_INVALID);
	struct ptw_arg nostr[] = { {.name = "s", .type = PTW_ARG_TYPE_STRING} };
	struct ptw_arg ds = A_NEST("d", PTW_ARG_TYPE_DICT, nostr, 1);
	cr_assert_eq(write_instant(path, &ds, 1), PTW_ERR_INVALID);
	unlink(path);
}
