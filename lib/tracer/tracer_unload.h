/* tracer_unload.h - what a session keeps so that a library that logged
 * may be unloaded (tracer_unload.c; docs/tracer.md, "Libraries that are
 * unloaded"). Internal, not API.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TRACER_UNLOAD_H
#define PTW_TRACER_UNLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "lib/util/hashmap.h"
#include "lib/os/os_object.h"

struct ptw_tracer;

struct ptw_tr_unload {
	/* under the ctl mutex */
	uint64_t req, done;        /* unloads asked of the backend / served */
	int dirty;                 /* a thread retired since the last one */
	struct ptw_obj_range last; /* the object of the last unload served */
	int have_last;
	/* backend-private: copies of the strings of open slices whose
	 * literals were forgotten, one per content, kept for the session */
	char **strs;
	size_t n_strs, cap_strs;
	struct ptw_map strs_ix;    /* content hash -> index + 1 */
};

/* Backend, inside a pass whose drain began after unload request 'req'
 * was made: forgets every string address the session kept (the writer's
 * and the backend's caches, the counters' map, the async tracks' names),
 * copies the strings of the open slices it describes, notes where each
 * thread's ring was drained to, and answers the request. */
void ptw_tr_unload_serve(struct ptw_tracer *tr, uint64_t req, size_t n);
/* At the session's end (ptw_tr_backend_free). */
void ptw_tr_unload_free(struct ptw_tracer *tr);

#endif /* PTW_TRACER_UNLOAD_H */
