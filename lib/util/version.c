/* version.c - the version libptw was built with.
 * SPDX-License-Identifier: Apache-2.0 */
#include "ptw/version.h"

const char *ptw_version(void)
{
	return PTW_VERSION;
}
