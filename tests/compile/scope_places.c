/* scope_places.c - the tracer macros where tracer.h says they may stand, in C
 * (compiled, not run, by tools/check-headers.sh).
 * SPDX-License-Identifier: Apache-2.0 */
#include "ptw/tracer.h"

#define TWO_SCOPES(a, b) PTW_SCOPE("c", a); PTW_SCOPE("c", b)

int scope_places(int x, const char *s);
int scope_places(int x, const char *s)
{
	PTW_SCOPE("c", "first"); PTW_SCOPE("c", "second");
	TWO_SCOPES("third", "fourth");
	PTW_SCOPE_ARGS("c", "args", PTW_ARG_I64("x", x), PTW_ARG_STR("s", s));
	PTW_SCOPE_DYN("c", s); PTW_SCOPE_FMT("c", "fmt %d", x);
	switch (x) {
	case 1: {
		PTW_SCOPE("c", "in the case's block");
		x++;
		break;
	}
	case 2:
		PTW_INSTANT("c", "a statement after a label");
		break;
	default:
		break;
	}
	if (x) {
		PTW_SCOPE("c", "braced if body");
	}
	/* every other macro is one statement */
	if (x) PTW_BEGIN("c", "b"); else PTW_END("c");
	if (x) PTW_END(); else PTW_INSTANT("c", "i");
	if (x) PTW_BEGIN_ARGS("c", "b", PTW_ARG_U64("u", 1)); else PTW_END_ARGS("c", PTW_ARG_BOOL("b", 1));
	if (x) PTW_INSTANT_ARGS("c", "i", PTW_ARG_DBL("d", 1), PTW_ARG_PTR("p", s)); else PTW_BEGIN_DYN("c", s);
	if (x) PTW_INSTANT_DYN("c", s); else PTW_BEGIN_FMT("c", "%s", s);
	if (x) PTW_INSTANT_FMT("c", "%d", x); else PTW_COUNTER_INT("c", "n", x);
	if (x) PTW_COUNTER_DOUBLE("c", "d", 0.5); else PTW_COUNTER_INT_DYN("c", s, x);
	if (x) PTW_COUNTER_DOUBLE_DYN("c", s, 1.5); else PTW_ASYNC_BEGIN("c", "a", 1);
	if (x) PTW_ASYNC_BEGIN_ARGS("c", "a", 2, PTW_ARG_I64("x", x)); else PTW_ASYNC_END("c", 1);
	if (x) PTW_FLOW_START("c", "f", 1); else PTW_FLOW_STEP("c", "f", 1);
	if (x) PTW_FLOW_END("c", "f", 1);
	return x;
}
