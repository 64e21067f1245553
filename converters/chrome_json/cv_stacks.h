/* cv_stacks.h - Chrome JSON callstacks: the "stackFrames" table of a trace
 * and the stacks events refer to ("sf"/"esf" ids, "stack"/"estack" inline
 * arrays), as a tree of frames (each frame: a name and its caller).
 * SPDX-License-Identifier: Apache-2.0
 *
 * The reader fills the table from "stackFrames" (ptw_cv_stacks_add, then
 * ptw_cv_stacks_resolve links parents by id); the emitter finds an event's
 * stack as a frame (its innermost) and walks the callers. Inline stacks
 * become frames of the same tree, one per (caller, name), so equal stacks
 * are one frame. A frame whose parent is unknown ends its chain; a chain
 * that loops is marked and never walked. Not thread-safe. */
#ifndef PTW_CV_STACKS_H
#define PTW_CV_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "converters/common/cv_event.h"
#include "ptw/error.h"

struct ptw_cv_json_parser;
struct ptw_cv_stacks;

/* Depth of a frame that is part of a loop of parent links. */
#define PTW_CV_STACK_CYCLE UINT32_MAX

struct ptw_cv_stacks *ptw_cv_stacks_create(void);
void ptw_cv_stacks_destroy(struct ptw_cv_stacks *s);

/* Adds one stackFrames entry (copied); parent.p NULL: a root. A repeated
 * id: the last one wins. Returns 0 or PTW_ERR_NOMEM. */
int ptw_cv_stacks_add(struct ptw_cv_stacks *s, struct ptw_cv_str id,
		      struct ptw_cv_str name, struct ptw_cv_str parent);

/* After the last ptw_cv_stacks_add of a "stackFrames": links each frame
 * to its parent, computes depths, marks loops. Marks the table loaded.
 * Returns 0 or PTW_ERR_NOMEM. */
int ptw_cv_stacks_resolve(struct ptw_cv_stacks *s);

/* A new input: its stackFrames ids are its own (frames of earlier inputs
 * stay valid), none read yet. */
void ptw_cv_stacks_next_input(struct ptw_cv_stacks *s);

/* Was a "stackFrames" read (resolved) for this input? */
int ptw_cv_stacks_loaded(const struct ptw_cv_stacks *s);

/* The frame of id (1-based), or 0 if unknown. */
uint32_t ptw_cv_stacks_find(const struct ptw_cv_stacks *s,
			    struct ptw_cv_str id);

/* The innermost frame (1-based) of an inline stack: the raw JSON array
 * text of strings, outermost first; *frame 0 for an empty array.
 * Returns 0, PTW_ERR_FORMAT (not an array of strings) or PTW_ERR_NOMEM. */
int ptw_cv_stacks_inline(struct ptw_cv_stacks *s,
			 struct ptw_cv_json_parser *jp, struct ptw_cv_str text,
			 uint32_t *frame);

/* The frame 'name' (n bytes) called by frame 'caller' (1-based; 0: a
 * root), made if new: equal stacks pushed frame by frame from the root
 * end in the same frame. Returns 0 or PTW_ERR_NOMEM. */
int ptw_cv_stacks_push(struct ptw_cv_stacks *s, uint32_t caller,
		       const char *name, size_t n, uint32_t *frame);

/* Frame f's name (NUL-terminated; "" if it had none), caller (0: none)
 * and depth (frames from it to its root, itself included, or
 * PTW_CV_STACK_CYCLE). */
const char *ptw_cv_stacks_name(const struct ptw_cv_stacks *s, uint32_t f);
uint32_t ptw_cv_stacks_parent(const struct ptw_cv_stacks *s, uint32_t f);
uint32_t ptw_cv_stacks_depth(const struct ptw_cv_stacks *s, uint32_t f);

/* Frames of the table (added and inline). */
uint32_t ptw_cv_stacks_count(const struct ptw_cv_stacks *s);

/* Parent links that named no frame (each ended its chain). */
uint64_t ptw_cv_stacks_bad_parents(const struct ptw_cv_stacks *s);

#endif /* PTW_CV_STACKS_H */
