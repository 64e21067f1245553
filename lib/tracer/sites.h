/* sites.h - the list of macro call sites the tracer knows, so that a
 * change (ptw_start, ptw_stop, a category switched) reaches each site's
 * inline word directly.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Contract:
 * - A site joins the list on its first out-of-line call (its 'live' word
 *   starts as PTW_I_SITE_CHECK, so that first call always comes), under
 *   ptw_tr_ctl.mu, and stays until the object holding it is unloaded
 *   (ptw_tr_sites_forget_range).
 * - Every function here runs under ptw_tr_ctl.mu; the list is touched
 *   nowhere else. The producers only read a site's 'live' word (relaxed):
 *   a stale 0 skips at most the events a producer starts before the
 *   store reaches it; a stale non-zero goes out of line, where the
 *   generation check (ptw_i_gen, site->state) decides, so a site never
 *   logs for a category that is off.
 * - Out of memory: a site that cannot join keeps PTW_I_SITE_CHECK for
 *   good (it always goes out of line: slower, never wrong). */
#ifndef PTW_TR_SITES_H
#define PTW_TR_SITES_H

#include <stdint.h>

#include "ptw/tracer.h"

/* Lists 'site' if it is not yet. 0, or PTW_ERR_NOMEM (not listed). */
int ptw_tr_sites_add(struct ptw_i_site *site);
/* Writes 'live' into the word of every listed site: 0 when tracing
 * stops, PTW_I_SITE_CHECK when it starts or a category changes. */
void ptw_tr_sites_set_all(uint32_t live);
/* Sets the word of a site whose category was just looked up: 'on' as
 * found, when tracing runs (running != 0); 0 when it is stopped. A site
 * that is not listed keeps PTW_I_SITE_CHECK. */
void ptw_tr_sites_settle(struct ptw_i_site *site, int running, int on);
/* Forgets the sites that lie in [lo, hi) (an object being unloaded). */
void ptw_tr_sites_forget_range(uintptr_t lo, uintptr_t hi);

#endif /* PTW_TR_SITES_H */
