/* appletrace.h - readers of legacy AppleTrace runs: binary "APLTRC01"
 * fragments, JSON-line text fragments, and run directories.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The format reference is ../shared/corpus/README.md sections 2-4. Each
 * reader decodes its input into struct ptw_cv_event (cv_event.h) and calls
 * a ptw_cv_event_fn for every event, in file order; nothing is sorted or
 * paired here (the emitter, emit.h, does that).
 *
 *  - Binary fragments share one name table per run (struct
 *    ptw_appletrace_names): definitions take effect in stream order across
 *    the run's binary fragments; a redefinition replaces the string.
 *  - Text fragments are read line by line (rules 1-5); each line is one
 *    JSON object parsed by chrome_json.h's strict parser. A crash-cut
 *    unterminated final line is dropped and reported through a warning
 *    callback; a broken LF-terminated line is an error.
 *  - A run (ptw_appletrace_run_read) is every trace[_N].appletrace[bin] in
 *    a directory, in numeric order of N.
 *
 * Errors are PTW_ERR_FORMAT with a message "FILE: offset N: ..." (binary)
 * or "FILE:LINE: ..." (text), err->offset / err->line set, and a kind
 * (enum ptw_appletrace_kind) that ptw_appletrace_run_kind() returns.
 * Memory: one read buffer per fragment (grows to the longest record or
 * line), plus the name table. Thread rule: one thread per object. */
#ifndef PTW_APPLETRACE_H
#define PTW_APPLETRACE_H

#include <stddef.h>
#include <stdint.h>

#include "converters/common/cv_event.h"
#include "ptw/error.h"

#define PTW_APPLETRACE_MAGIC "APLTRC01"
#define PTW_APPLETRACE_HEADER_LEN 12u
#define PTW_APPLETRACE_EVENT_LEN 29u  /* tag + id + tid + ts + arg */
#define PTW_APPLETRACE_STRDEF_HDR 9u  /* tag + id + len */
/* Longest text line accepted (bytes); longer is PTW_ERR_LIMIT. */
#define PTW_APPLETRACE_MAX_LINE (16u << 20)
/* Longest string definition accepted (bytes); longer is PTW_ERR_LIMIT. */
#define PTW_APPLETRACE_MAX_STRING (16u << 20)

/* What went wrong, for messages and tests (names as in the corpus). */
enum ptw_appletrace_kind {
	PTW_APPLETRACE_OK = 0,
	PTW_APPLETRACE_INVALID_JSON_LINE,  /* "invalid_json_line" */
	PTW_APPLETRACE_UNDEFINED_NAME_ID,  /* "undefined_name_id" */
	PTW_APPLETRACE_UNKNOWN_TAG,        /* "unknown_tag" */
	PTW_APPLETRACE_BAD_MAGIC,          /* "bad_magic" */
	PTW_APPLETRACE_NO_FRAGMENT,        /* "no_fragment" */
	PTW_APPLETRACE_OTHER,              /* I/O, memory, limits */
};

/* The corpus name of a kind ("invalid_json_line", ...). */
const char *ptw_appletrace_kind_name(enum ptw_appletrace_kind k);

/* Receives warnings (a dropped crash-cut line): 'file' is the fragment's
 * name as given, 'line' 1-based, 'msg' a complete sentence.
 * If 'error_fn' is set, a run keeps going after a fragment that fails
 * (bad line, undefined id, unknown tag, ...): the error is reported to
 * error_fn, the rest of that fragment is skipped, the following fragments
 * are read, and the run returns the first error at the end. */
struct ptw_appletrace_warn {
	void (*fn)(void *ctx, const char *file, uint64_t line, const char *msg);
	void *ctx;
	void (*error_fn)(void *ctx, const struct ptw_error *err);
};

/* ==== Name table (shared by the binary fragments of one run) ========== */

struct ptw_appletrace_names;

struct ptw_appletrace_names *ptw_appletrace_names_create(void);
void ptw_appletrace_names_destroy(struct ptw_appletrace_names *t);
/* Defines or redefines 'id'. Returns 0 or PTW_ERR_NOMEM. */
int ptw_appletrace_names_define(struct ptw_appletrace_names *t, uint32_t id,
				const void *s, size_t n);
/* The string of 'id' (valid until the id is redefined or the table is
 * destroyed), or NULL (p == NULL) if undefined. */
struct ptw_cv_str ptw_appletrace_names_get(const struct ptw_appletrace_names *t,
					   uint32_t id);
/* Like ptw_appletrace_names_get(); *sym (if found) gets the number of
 * this definition: unique in the table, never reused, so equal numbers mean
 * equal text (struct ptw_cv_event's name_sym). Numbers start at
 * PTW_APPLETRACE_FIRST_SYM; lower ones are free for the reader's own. */
#define PTW_APPLETRACE_FIRST_SYM 16u
struct ptw_cv_str ptw_appletrace_names_lookup(
	const struct ptw_appletrace_names *t, uint32_t id, uint64_t *sym);
/* Number of ids defined. */
size_t ptw_appletrace_names_count(const struct ptw_appletrace_names *t);
/* The table's directly indexed part, for hot loops: entry 'id' (below
 * PTW_APPLETRACE_DENSE) holds what ptw_appletrace_names_lookup() returns
 * for it (s.p NULL: undefined); valid as long as the table. */
#define PTW_APPLETRACE_DENSE 4096u
struct ptw_appletrace_dense {
	struct ptw_cv_str s;
	uint64_t sym;
};
const struct ptw_appletrace_dense *
ptw_appletrace_names_dense(const struct ptw_appletrace_names *t);

/* ==== Binary fragments ================================================= */

/* Decodes a whole binary fragment held in memory. 'name' names it in
 * messages and ev->input. Stops quietly at a 0x00 tag or a truncated last
 * record; a file shorter than the header that is a prefix of the magic has
 * no events. Returns 0, PTW_ERR_FORMAT (*kind set: BAD_MAGIC, UNKNOWN_TAG,
 * UNDEFINED_NAME_ID), PTW_ERR_LIMIT, PTW_ERR_NOMEM or fn's code. 'kind' may
 * be NULL. */
int ptw_appletrace_bin_read_mem(const void *data, size_t n, const char *name,
				struct ptw_appletrace_names *names,
				ptw_cv_event_fn fn, void *ctx,
				enum ptw_appletrace_kind *kind,
				struct ptw_error *err);

/* Same from an open file descriptor, read in chunks (memory bounded by the
 * longest record), until EOF. PTW_ERR_IO on read errors. */
int ptw_appletrace_bin_read_fd(int fd, const char *name,
			       struct ptw_appletrace_names *names,
			       ptw_cv_event_fn fn, void *ctx,
			       enum ptw_appletrace_kind *kind,
			       struct ptw_error *err);

/* Same, also handing runs of simple events (B, E, i without arguments,
 * C with its value) to 'batch' (NULL: every event goes to fn). */
int ptw_appletrace_bin_read_fd_batch(int fd, const char *name,
				     struct ptw_appletrace_names *names,
				     ptw_cv_event_fn fn,
				     ptw_cv_batch_fn batch, void *ctx,
				     enum ptw_appletrace_kind *kind,
				     struct ptw_error *err);
/* A read buffer that outlives one fragment: a run reads all its fragments
 * through one (a fresh buffer costs a page fault per 4 KiB page, each
 * time). Zero-initialised when new. */
struct ptw_appletrace_buf {
	uint8_t *p;
	size_t cap;
};
void ptw_appletrace_buf_free(struct ptw_appletrace_buf *buf);
/* ptw_appletrace_bin_read_fd_batch reading through 'buf' (allocated or
 * grown as needed, kept for the next fragment; free it with
 * ptw_appletrace_buf_free). */
int ptw_appletrace_bin_read_fd_buf(int fd, const char *name,
				   struct ptw_appletrace_names *names,
				   ptw_cv_event_fn fn, ptw_cv_batch_fn batch,
				   void *ctx, struct ptw_appletrace_buf *buf,
				   enum ptw_appletrace_kind *kind,
				   struct ptw_error *err);
int ptw_appletrace_bin_read_mem_batch(const void *data, size_t n,
				      const char *name,
				      struct ptw_appletrace_names *names,
				      ptw_cv_event_fn fn,
				      ptw_cv_batch_fn batch, void *ctx,
				      enum ptw_appletrace_kind *kind,
				      struct ptw_error *err);

/* ==== Text fragments =================================================== */

/* Reads a text fragment from memory / an fd with rules 1-5. Each event's
 * line is ev->line and the byte offset of its line ev->offset. Returns 0,
 * PTW_ERR_FORMAT (*kind INVALID_JSON_LINE, "FILE:LINE: ..."),
 * PTW_ERR_LIMIT, PTW_ERR_IO, PTW_ERR_NOMEM or fn's code. 'warn' may be
 * NULL. */
int ptw_appletrace_text_read_mem(const void *data, size_t n, const char *name,
				 ptw_cv_event_fn fn, void *ctx,
				 const struct ptw_appletrace_warn *warn,
				 enum ptw_appletrace_kind *kind,
				 struct ptw_error *err);
int ptw_appletrace_text_read_fd(int fd, const char *name,
				ptw_cv_event_fn fn, void *ctx,
				const struct ptw_appletrace_warn *warn,
				enum ptw_appletrace_kind *kind,
				struct ptw_error *err);

/* ==== Runs ============================================================= */

/* Fragment file names: "trace.appletrace[bin]" (number 0) or
 * "trace_N.appletrace[bin]" with N decimal digits. Returns 1 and sets
 * *num and *is_bin for a fragment name, else 0. */
int ptw_appletrace_fragment_name(const char *name, uint64_t *num, int *is_bin);

struct ptw_appletrace_run;

/* A reader that keeps the run's name table and the last error's kind and
 * fragment name (so err->input stays valid until the run is destroyed). */
struct ptw_appletrace_run *ptw_appletrace_run_create(struct ptw_error *err);
void ptw_appletrace_run_destroy(struct ptw_appletrace_run *r);
/* Binary fragments of the run hand runs of simple events to 'batch'
 * (with the ctx of the read call); NULL (the default): none. */
void ptw_appletrace_run_set_batch(struct ptw_appletrace_run *r,
				  ptw_cv_batch_fn batch);

/* Reads the run in directory 'dir': every fragment in numeric order, the
 * binary ones sharing one fresh name table. No fragment at all is
 * PTW_ERR_FORMAT (kind NO_FRAGMENT). Messages name the fragment by its
 * file name (not the full path). */
int ptw_appletrace_run_read_dir(struct ptw_appletrace_run *r, const char *dir,
				ptw_cv_event_fn fn, void *ctx,
				const struct ptw_appletrace_warn *warn,
				struct ptw_error *err);

/* Is 'path' a regular file that starts with the APLTRC01 magic? 0 if
 * not, or if it cannot be read (the read itself then reports why). */
int ptw_appletrace_has_bin_magic(const char *path);

/* Reads one fragment file, with a fresh name table. Its extension gives
 * its kind (".appletracebin" binary, ".appletrace" text, as in a run);
 * with neither, it is binary if it starts with the APLTRC01 magic, else
 * text. */
int ptw_appletrace_run_read_file(struct ptw_appletrace_run *r,
				 const char *path, ptw_cv_event_fn fn,
				 void *ctx,
				 const struct ptw_appletrace_warn *warn,
				 struct ptw_error *err);

/* Kind of the last error of a read call (OK after success). */
enum ptw_appletrace_kind ptw_appletrace_run_kind(const struct ptw_appletrace_run *r);
/* Fragment file name of the last error ("" if none). */
const char *ptw_appletrace_run_file(const struct ptw_appletrace_run *r);
/* Fragments read by the last call, and their total size in bytes. */
uint64_t ptw_appletrace_run_fragments(const struct ptw_appletrace_run *r);
uint64_t ptw_appletrace_run_bytes(const struct ptw_appletrace_run *r);

#endif /* PTW_APPLETRACE_H */
