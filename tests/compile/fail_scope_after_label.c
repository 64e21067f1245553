/* fail_scope_after_label.c - in C, PTW_SCOPE is a declaration: it may not
 * directly follow a label (tracer.h: give the case a block). The build
 * stops instead of tracing something else (tools/check-headers.sh).
 * SPDX-License-Identifier: Apache-2.0 */
#include "ptw/tracer.h"

void after_label(int x);
void after_label(int x)
{
	switch (x) {
	case 1:
		PTW_SCOPE("c", "n");
		break;
	}
}
