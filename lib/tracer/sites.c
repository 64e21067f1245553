/* sites.c - the list of macro call sites the tracer knows (sites.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include "sites.h"

#include <stdlib.h>

#include "lib/util/grow.h"
#include "ptw/error.h"

/* Under ptw_tr_ctl.mu (sites.h). */
static struct ptw_i_site **ptw_tr_site_v;
static size_t ptw_tr_site_n, ptw_tr_site_cap;

int ptw_tr_sites_add(struct ptw_i_site *site)
{
	if (site->known)
		return 0;
	struct ptw_i_site **v = ptw_grow(ptw_tr_site_v, &ptw_tr_site_cap,
					 ptw_tr_site_n + 1, 64, sizeof(*v));
	if (!v)
		return PTW_ERR_NOMEM;
	ptw_tr_site_v = v;
	ptw_tr_site_v[ptw_tr_site_n++] = site;
	site->known = 1;
	return 0;
}

void ptw_tr_sites_set_all(uint32_t live)
{
	for (size_t i = 0; i < ptw_tr_site_n; i++)
		__atomic_store_n(&ptw_tr_site_v[i]->live, live,
				 __ATOMIC_RELAXED);
}

void ptw_tr_sites_settle(struct ptw_i_site *site, int running, int on)
{
	if (ptw_tr_sites_add(site) != 0)
		return;
	__atomic_store_n(&site->live,
			 running && on ? PTW_I_SITE_CHECK : 0u,
			 __ATOMIC_RELAXED);
}

void ptw_tr_sites_forget_range(uintptr_t lo, uintptr_t hi)
{
	size_t k = 0;
	for (size_t i = 0; i < ptw_tr_site_n; i++) {
		uintptr_t a = (uintptr_t)ptw_tr_site_v[i];
		if (a >= lo && a < hi)
			continue;
		ptw_tr_site_v[k++] = ptw_tr_site_v[i];
	}
	ptw_tr_site_n = k;
}
