/* tp_stack.c - see tp_stack.h.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "tp_shell.h"
#include "tp_stack.h"

/* Frames of each callsite, walked up to the root, then joined outermost
 * first (SQLite's group_concat keeps the order of its ordered input). */
#define PTW_TP_STACK_SQL                                                     \
	"with recursive up(row, cs, depth, fname) as ("                      \
	" select r.id, c.id, c.depth, f.name"                                \
	" from (select t.id, coalesce(t.callsite_id, t.end_callsite_id) cs"  \
	"  from __intrinsic_track_event_callstacks t) r"\
	" join stack_profile_callsite c on c.id = r.cs"                      \
	" join stack_profile_frame f on f.id = c.frame_id"                   \
	" union all"                                                         \
	" select up.row, p.id, p.depth, f.name from up"                      \
	" join stack_profile_callsite c on c.id = up.cs"                     \
	" join stack_profile_callsite p on p.id = c.parent_id"               \
	" join stack_profile_frame f on f.id = p.frame_id)"                  \
	" select s.name || (case when t.end_callsite_id is not null"         \
	"  then '/end' else '' end) || ':' || ("                             \
	"  select group_concat(fname, '>') from"                             \
	"  (select fname from up where up.row = t.id order by depth))"       \
	" from __intrinsic_track_event_callstacks t join slice s on s.id = t.slice_id" \
	" order by s.ts, s.name, t.id"

int ptw_test_tp_stacks(const char *trace, char *out, size_t max)
{
	char stats[512];
	if (ptw_test_tp_rows(trace,
			     "select name, idx, value from stats where value > 0"
			     " and severity in ('error', 'data_loss')",
			     stats, sizeof(stats)) < 0) {
		if (max)
			out[0] = '\0';
		return -1;
	}
	cr_assert_str_eq(stats, "", "trace_processor stats: %s", stats);
	return ptw_test_tp_rows(trace, PTW_TP_STACK_SQL, out, max);
}
