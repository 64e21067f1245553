/* cv_sort.h - puts Chrome JSON events back in timestamp order within a
 * bounded window before they reach the emitter, as trace_processor sorts a
 * JSON trace before it imports it.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A ptw_cv_event_fn filter: ptw_cv_sort_event() copies each event into a
 * window of at most 'window' events; when the window is full, the event
 * with the smallest (ts, arrival) leaves it and goes to the next callback.
 * So events are handed on in timestamp order (ties in file order) as long
 * as no event arrives more than 'window' events after one with a later
 * timestamp; such a late event is handed on late (the emitter counts it,
 * out_of_order). Events without a timestamp (M events may lack one) leave
 * first. ptw_cv_sort_drain() hands on the rest at the end of an input. */
#ifndef PTW_CV_SORT_H
#define PTW_CV_SORT_H

#include <stddef.h>

#include "converters/common/cv_event.h"

/* Default window: events held at most (their copies, with strings and
 * args). */
#define PTW_CV_SORT_WINDOW 65536u

struct ptw_cv_sort;

/* Returns NULL with *err on allocation failure. 'window' 0: the default. */
struct ptw_cv_sort *ptw_cv_sort_create(size_t window, ptw_cv_event_fn next,
				       void *next_ctx, struct ptw_error *err);

/* ptw_cv_event_fn: 's' is the struct ptw_cv_sort. Returns 0, or the next
 * callback's error, or PTW_ERR_NOMEM. */
int ptw_cv_sort_event(void *s, const struct ptw_cv_event *ev,
		      struct ptw_error *err);

/* Hands on every held event, in order. Returns as ptw_cv_sort_event(). */
int ptw_cv_sort_drain(struct ptw_cv_sort *s, struct ptw_error *err);

/* Frees the held events too (NULL: no-op). */
void ptw_cv_sort_destroy(struct ptw_cv_sort *s);

#endif /* PTW_CV_SORT_H */
