/* catdecl.h - the categories a program declares for system mode
 * (ptw_declare_category, cfg.categories): what ptw registers with the
 * service (its TrackEventDescriptor) and the tags a session's config
 * matches. Kept for the process's life, across sessions. Private to
 * lib/system.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_SYS_CATDECL_H
#define PTW_SYS_CATDECL_H

#include <stddef.h>
#include <stdint.h>

#include "producer.h"

/* Declares each name of a comma-separated list (no description, no
 * tags). 0 or PTW_ERR_NOMEM. */
int ptw_sys_decl_list(const char *list);

/* Changes so far (a new declaration bumps it). */
uint64_t ptw_sys_decl_version(void);

/* Registers (update: updates) the declared categories with the service;
 * returns the version sent. */
uint64_t ptw_sys_decl_register(struct ptw_sys_prod *p, int update);

/* Does the session's config enable 'cat' (len bytes), with its declared
 * tags? */
int ptw_sys_decl_enabled(const struct ptw_sys_te_cfg *te, const char *cat,
			 size_t len);

/* system.c: wakes the system thread to send a new declaration. */
void ptw_sys_decl_changed(void);

/* fork() child: the lock may have been held by a thread of the parent. */
void ptw_sys_decl_atfork_child(void);

#endif /* PTW_SYS_CATDECL_H */
