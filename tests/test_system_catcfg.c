/* test_system_catcfg.c - which categories a session's TrackEventConfig
 * enables (lib/system/catcfg.c), case by case as the Perfetto SDK decides
 * (google/perfetto v58 track_event_internal.cc, IsCategoryEnabled, and
 * the examples in track_event_config.proto).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "lib/encode/pb.h"
#include "lib/system/producer.h"

/* A TrackEventConfig from four '|'-separated lists (NULL: empty). */
struct te {
	struct ptw_pb_buf b;
	struct ptw_sys_te_cfg c;
};

static void add_list(struct ptw_pb_buf *b, uint32_t field, const char *list)
{
	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, "|");
		ptw_pb_append_bytes_field(b, field, p, n);
		p += n + (p[n] == '|');
	}
}

static void make(struct te *t, const char *dis_cat, const char *en_cat,
		 const char *dis_tag, const char *en_tag)
{
	cr_assert_eq(ptw_pb_buf_init(&t->b, 256), 0);
	add_list(&t->b, 1, dis_cat);
	add_list(&t->b, 2, en_cat);
	add_list(&t->b, 3, dis_tag);
	add_list(&t->b, 4, en_tag);
	cr_assert_eq(ptw_sys_te_parse(t->b.data, t->b.len, &t->c), 0);
}

static int on(const struct te *t, const char *cat, const char *tags)
{
	return ptw_sys_te_enabled(&t->c, cat, strlen(cat), tags);
}

Test(system_catcfg, an_empty_config_enables_all_but_slow_and_debug_tags)
{
	struct te t;
	make(&t, NULL, NULL, NULL, NULL);
	cr_assert(on(&t, "app", NULL));
	cr_assert(on(&t, "app", "io"));
	cr_assert(!on(&t, "verbose", "slow"));
	cr_assert(!on(&t, "verbose", "io,debug"));
	ptw_pb_buf_free(&t.b);
}

Test(system_catcfg, one_category_of_disabled_star)
{
	struct te t;
	make(&t, "*", "app", NULL, NULL);
	cr_assert(on(&t, "app", NULL));
	cr_assert(!on(&t, "io", NULL));
	cr_assert(!on(&t, "application", NULL));
	ptw_pb_buf_free(&t.b);
}

Test(system_catcfg, exact_beats_pattern_beats_wildcard)
{
	struct te t;
	/* "net*" disabled by pattern, "net.rx" enabled exactly */
	make(&t, "net*", "net.rx|*", NULL, NULL);
	cr_assert(on(&t, "net.rx", NULL));
	cr_assert(!on(&t, "net.tx", NULL));
	/* the wildcard enables what no pattern decided */
	cr_assert(on(&t, "disk", NULL));
	ptw_pb_buf_free(&t.b);
}

Test(system_catcfg, enabled_before_disabled_at_the_same_level)
{
	struct te t;
	make(&t, "app", "app", NULL, NULL);
	cr_assert(on(&t, "app", NULL));
	ptw_pb_buf_free(&t.b);
}

Test(system_catcfg, tags_only_with_a_tag)
{
	struct te t;
	make(&t, NULL, NULL, "*", "gfx");
	cr_assert(on(&t, "draw", "gfx"));
	cr_assert(!on(&t, "io", "disk"));
	/* a category without tags: no tag rule applies, enabled */
	cr_assert(on(&t, "plain", NULL));
	ptw_pb_buf_free(&t.b);
}

Test(system_catcfg, naming_tags_lifts_the_default_slow_debug_rule)
{
	struct te t;
	make(&t, NULL, NULL, NULL, "io");
	cr_assert(on(&t, "verbose", "slow"));
	ptw_pb_buf_free(&t.b);
	make(&t, NULL, NULL, "io", NULL);
	cr_assert(on(&t, "verbose", "slow"));
	cr_assert(!on(&t, "disk", "io"));
	ptw_pb_buf_free(&t.b);
}

Test(system_catcfg, a_disabled_category_beats_an_enabled_tag)
{
	struct te t;
	make(&t, "disk", NULL, NULL, "io");
	cr_assert(!on(&t, "disk", "io"));
	ptw_pb_buf_free(&t.b);
}

Test(system_catcfg, malformed_config_bytes_are_refused)
{
	static const uint8_t bad[] = {0x0A, 0x05, 'a', 'b'}; /* length past end */
	struct ptw_sys_te_cfg c;
	cr_assert_eq(ptw_sys_te_parse(bad, sizeof(bad), &c), -1);
	static const uint8_t wt[] = {0x0B}; /* wire type 3 */
	cr_assert_eq(ptw_sys_te_parse(wt, sizeof(wt), &c), -1);
}
