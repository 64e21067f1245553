/* os_fork.h - keeping ptw's locks and state sound across fork().
 * Internal, not API.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Implemented once per OS (lib/os/fork_posix.c, for any POSIX system); a
 * port to a system without fork() adds a file where it does nothing.
 * Contract:
 * - ptw_os_atfork(prepare, parent, child): when any thread of the process
 *   forks, prepare() runs in the forking thread before the fork, parent()
 *   in the parent and child() in the child after it (handlers registered
 *   later: their prepare first, their parent/child last). Used to hold a
 *   mutex across the fork, so the child's copy is consistent and
 *   unlocked, and to forget in the child what belongs to the parent's
 *   threads. Call it once per set of handlers (under pthread_once): they
 *   cannot be removed. Registration failure (no memory) is ignored: a
 *   fork then works as without the handlers. */
#ifndef PTW_OS_FORK_H
#define PTW_OS_FORK_H

void ptw_os_atfork(void (*prepare)(void), void (*parent)(void),
		   void (*child)(void));

#endif /* PTW_OS_FORK_H */
