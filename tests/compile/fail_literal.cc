// fail_literal.cc - must mention: PTW_NAME_MUST_BE_A_LITERAL__USE_THE_DYN_FORM
// A run-time name in a literal-only macro stops the build with a note that
// names the _DYN form (tools/check-headers.sh). SPDX-License-Identifier: Apache-2.0
#include "ptw/tracer.h"

void literal_only(const char *name);
void literal_only(const char *name)
{
	PTW_BEGIN("c", name);
}
