/* fail_scope_if_body.c - in C, PTW_SCOPE is a declaration: as the unbraced
 * body of an if it stops the build (it would otherwise trace whatever the
 * condition) (tools/check-headers.sh).
 * SPDX-License-Identifier: Apache-2.0 */
#include "ptw/tracer.h"

void if_body(int x);
void if_body(int x)
{
	if (x)
		PTW_SCOPE("c", "n");
}
