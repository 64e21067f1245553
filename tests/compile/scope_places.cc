// scope_places.cc - the tracer macros where tracer.h says they may stand, in
// C++: all the C places (scope_places.c, compiled as C++ here) and those
// only C++ allows (compiled, not run, by tools/check-headers.sh).
// SPDX-License-Identifier: Apache-2.0
#include "scope_places.c"

int scope_places_cxx(int x);
int scope_places_cxx(int x)
{
	// C++ only: a scope is one declaration, so it may also stand right
	// after a label and as the body of an if or loop (ending at once)
	if (x)
		PTW_SCOPE("c", "if body");
	switch (x) {
	case 3:
		PTW_SCOPE("c", "after the last label");
		x++;
		break;
	}
	for (int i = 0; i < x; i++)
		PTW_SCOPE_ARGS("c", "loop body", PTW_ARG_I64("i", i));
	return x;
}
