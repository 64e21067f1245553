/* fork_posix.c - os_fork.h on POSIX systems (pthread_atfork).
 * SPDX-License-Identifier: Apache-2.0 */
#include "os_fork.h"

#include <pthread.h>

void ptw_os_atfork(void (*prepare)(void), void (*parent)(void),
		   void (*child)(void))
{
	(void)pthread_atfork(prepare, parent, child);
}
