/* catcfg.c - which categories a session's TrackEventConfig enables, as
 * the Perfetto SDK decides (google/perfetto v58
 * src/tracing/internal/track_event_internal.cc, IsCategoryEnabled): for
 * exact matches first, then patterns ("name*"), then the wildcard "*":
 * an enabled category, a disabled category, a disabled tag (by default
 * "slow" and "debug", unless the config names disabled or enabled tags),
 * an enabled tag decide in this order; nothing matching means enabled.
 * SPDX-License-Identifier: Apache-2.0 */
#include "producer.h"

#include <string.h>

enum { PTW_SYS_EXACT, PTW_SYS_PATTERN, PTW_SYS_WILDCARD };

/* The SDK supports one '*', at the end of a pattern; "*" alone is the
 * wildcard. */
static int ptw_sys_match(const char *pat, size_t plen, const char *name,
			 size_t len, int type)
{
	const char *star = memchr(pat, '*', plen);
	if (star) {
		size_t pre = (size_t)(star - pat);
		if (pre == 0)
			return type == PTW_SYS_WILDCARD;
		if (type != PTW_SYS_PATTERN)
			return 0;
		return len >= pre && memcmp(name, pat, pre) == 0;
	}
	return type == PTW_SYS_EXACT && plen == len && memcmp(pat, name, len) == 0;
}

static int ptw_sys_match_list(const struct ptw_sys_strs *l, const char *name,
			      size_t len, int type)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (ptw_sys_match(l->s[i], l->len[i], name, len, type))
			return 1;
	return 0;
}

/* Does any tag of 'tags' (comma-separated) match the list (or, with
 * 'dflt', the default disabled tags "slow" and "debug")? */
static int ptw_sys_match_tags(const struct ptw_sys_strs *l, int dflt,
			      const char *tags, int type)
{
	static const struct ptw_sys_strs def = {{"slow", "debug"}, {4, 5}, 2};
	for (const char *t = tags; t && *t;) {
		size_t len = strcspn(t, ",");
		if (len && ptw_sys_match_list(dflt ? &def : l, t, len, type))
			return 1;
		t += len + (t[len] == ',');
	}
	return 0;
}

int ptw_sys_te_enabled(const struct ptw_sys_te_cfg *c, const char *cat,
		       size_t len, const char *tags)
{
	int dflt = c->dis_tag.n == 0 && c->en_tag.n == 0;
	for (int type = PTW_SYS_EXACT; type <= PTW_SYS_WILDCARD; type++) {
		if (ptw_sys_match_list(&c->en_cat, cat, len, type))
			return 1;
		if (ptw_sys_match_list(&c->dis_cat, cat, len, type))
			return 0;
		if ((c->dis_tag.n || dflt) &&
		    ptw_sys_match_tags(&c->dis_tag, dflt, tags, type))
			return 0;
		if (ptw_sys_match_tags(&c->en_tag, 0, tags, type))
			return 1;
	}
	return 1;
}
