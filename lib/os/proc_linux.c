/* proc_linux.c - os_proc.h on Linux (glibc and musl).
 * SPDX-License-Identifier: Apache-2.0 */
#if defined(__linux__)
#include "os_proc.h"

#include <errno.h>

const char *ptw_os_process_name(void)
{
	return program_invocation_short_name ? program_invocation_short_name
					     : "";
}
#endif /* __linux__ */
