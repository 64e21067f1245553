/* unload_plugin.h - what the test plugins (tests/plugins/unload_a.c and
 * unload_b.c, built as BUILDDIR/tests/plugins/libunload_a.so and
 * libunload_b.so) export, and, with UNLOAD_PLUGIN_PREFIX defined, their
 * one body: the same code with other string literals ("A.slice",
 * "B.slice", ...), so that the two libraries have one layout and, loaded
 * one after the other at the same address, their literals take the same
 * addresses (tests/test_tracer_unload.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef UNLOAD_PLUGIN_H
#define UNLOAD_PLUGIN_H

#include <stdint.h>

/* Events one call of unload_plugin_log() logs on the calling thread, by
 * name (after the prefix "A." or "B."): slices (the async one on its own
 * track), instants, counter samples (on tracks of these names), and the
 * argument names used ("i", "s"). The slice "dynslice" and the instant
 * "dyn" and the counter "dynctr" are _DYN forms; the category of every
 * event is "<prefix>.cat". */
#define UNLOAD_SLICES {"slice", "bargs", "scope", "dynslice"}
#define UNLOAD_N_SLICES 4
#define UNLOAD_INSTANTS {"instant", "args", "dyn"}
#define UNLOAD_N_INSTANTS 3
#define UNLOAD_COUNTERS {"counter", "dcounter", "dynctr"}
#define UNLOAD_N_COUNTERS 3
#define UNLOAD_ASYNC "async"

/* One round: the events above; the async slice has id 'id', every
 * counter the value 'round'. */
void unload_plugin_log(int64_t round, uint64_t id);
/* Begins slices and leaves them open: "open" (PTW_BEGIN), "open_args"
 * (PTW_BEGIN_ARGS, argument "i" = 7) on the calling thread, and the async
 * slice "async_open" of id 'id'. */
void unload_plugin_open(uint64_t id);
/* The library also logs the instant "bye" from a destructor of its own
 * when it is unloaded.
 * The address of the literal this library names its instants with. */
const char *unload_plugin_literal(void);

#ifdef UNLOAD_PLUGIN_PREFIX
#include <stdio.h>

#include "ptw/tracer.h"

#define P_(s) UNLOAD_PLUGIN_PREFIX "." s
#define CAT P_("cat")

void unload_plugin_log(int64_t round, uint64_t id)
{
	char dyn[32];
	PTW_BEGIN(CAT, P_("slice"));
	PTW_INSTANT(CAT, P_("instant"));
	PTW_END(CAT);
	PTW_COUNTER_INT(CAT, P_("counter"), round);
	PTW_COUNTER_DOUBLE(CAT, P_("dcounter"), (double)round + 0.5);
	PTW_INSTANT_ARGS(CAT, P_("args"), PTW_ARG_I64(P_("i"), round),
			 PTW_ARG_STR(P_("s"), "value"));
	PTW_BEGIN_ARGS(CAT, P_("bargs"), PTW_ARG_I64(P_("i"), round));
	PTW_END(CAT);
	{
		PTW_SCOPE(CAT, P_("scope"));
		PTW_ASYNC_BEGIN(CAT, P_("async"), id);
		PTW_ASYNC_END(CAT, id);
	}
	snprintf(dyn, sizeof(dyn), "%s", P_("dyn"));
	PTW_INSTANT_DYN(CAT, dyn);
	snprintf(dyn, sizeof(dyn), "%s", P_("dynslice"));
	PTW_BEGIN_DYN(CAT, dyn);
	PTW_END(CAT);
	snprintf(dyn, sizeof(dyn), "%s", P_("dynctr"));
	PTW_COUNTER_INT_DYN(CAT, dyn, round);
}

void unload_plugin_open(uint64_t id)
{
	PTW_BEGIN(CAT, P_("open"));
	PTW_BEGIN_ARGS(CAT, P_("open_args"), PTW_ARG_I64(P_("i"), 7));
	PTW_ASYNC_BEGIN(CAT, P_("async_open"), id);
}

const char *unload_plugin_literal(void)
{
	return P_("instant");
}

/* Logs the instant "bye" when the library is unloaded: the tracer's own
 * unload hook runs after this destructor and takes it along. */
static void unload_plugin_bye(void) __attribute__((destructor));
static void unload_plugin_bye(void)
{
	PTW_INSTANT(CAT, P_("bye"));
}
#endif /* UNLOAD_PLUGIN_PREFIX */

#endif /* UNLOAD_PLUGIN_H */
