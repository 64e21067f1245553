/* tracer.c - tracing sessions: start, stop, flush, stats, categories,
 * process name, fork handling. Producer slow paths are in tracer_thread.c,
 * the drain loop in tracer_backend.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include "tracer_internal.h"

#include "ptw/version.h"
#include "lib/os/os_fork.h"
#include "lib/os/os_proc.h"
#include "lib/os/os_signal.h"
#include "lib/os/os_thread.h"
#include "lib/util/grow.h"
#include "lib/recorder/window.h"
#include "lib/util/sized.h"
#include "lib/writer/writer_internal.h"
#include "sites.h"
#include "lib/system/system.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the global state (the documented exception to "no globals") ------
 * Each call site's own 'live' word is what a macro reads first (sites.h
 * lists the sites and sets the words). ptw_i_gen: the generation the out-of-line paths check
 * (relaxed too: the data a producer then uses is published under
 * ptw_tr_ctl.mu and re-checked there on the slow path). ptw_i_self: the
 * calling thread's registered ring. ptw_tr_ctl: the control block behind
 * ptw_start & co. */
uint32_t ptw_i_gen = 0; /* __atomic builtins only */
_Thread_local struct ptw_i_thread *ptw_i_self
	__attribute__((tls_model("initial-exec"))) = NULL;

struct ptw_tr_ctl ptw_tr_ctl = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

static pthread_once_t ptw_tr_once = PTHREAD_ONCE_INIT;
static pthread_once_t ptw_tr_atexit_once = PTHREAD_ONCE_INIT;

/* fork(): hold the mutex across the fork so the child gets it unlocked
 * and consistent; in the child, forget the parent's session (its backend
 * thread does not exist there; its writer and rings are abandoned, never
 * touched) and disable the macros. */
static void ptw_tr_atfork_prepare(void) { pthread_mutex_lock(&ptw_tr_ctl.mu); }
static void ptw_tr_atfork_parent(void) { pthread_mutex_unlock(&ptw_tr_ctl.mu); }
static void ptw_tr_atfork_child(void)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	c->tr = NULL;
	c->stopping = 0;
	ptw_tr_crash_atfork_child();
	ptw_sys_atfork_child();
	c->cat_filter = NULL;
	c->gen = (c->gen + PTW_I_GEN_STEP) & ~(PTW_I_GEN_ON | PTW_I_GEN_CLOCKS);
	__atomic_store_n(&ptw_i_gen, c->gen, __ATOMIC_SEQ_CST);
	ptw_tr_sites_set_all(0);
	/* The forking thread's record (ptw_i_self) stays: its ring belongs
	 * to the parent's session and is never written here (the child's
	 * next session finds the session differs and registers anew), but
	 * the name set with ptw_set_thread_name carries over from it, as the
	 * OS name stays with the thread. */
	pthread_mutex_unlock(&c->mu);
}

static void ptw_tr_init(void)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_condattr_t a;
	if (pthread_condattr_init(&a) == 0) {
		if (pthread_condattr_setclock(&a, CLOCK_MONOTONIC) == 0) {
			pthread_cond_destroy(&c->wake);
			pthread_cond_init(&c->wake, &a);
		}
		pthread_condattr_destroy(&a);
	}
	pthread_key_create(&c->key, ptw_tr_thread_key_destructor);
	ptw_os_atfork(ptw_tr_atfork_prepare, ptw_tr_atfork_parent,
		      ptw_tr_atfork_child);
}

void ptw_tr_ctl_init_once(void) { pthread_once(&ptw_tr_once, ptw_tr_init); }

static void ptw_tr_register_atexit(void) { atexit(ptw_stop_atexit); }

uint64_t ptw_i_now_slow(uint32_t g)
{
	if (PTW_ARCH_COUNTER && (g & PTW_I_GEN_TSC))
		return ptw_arch_counter();
	struct timespec ts;
	clock_gettime((g & PTW_I_GEN_BOOT) ? CLOCK_BOOTTIME : CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- categories --------------------------------------------------------
 * The rules are every ptw_set_category_enabled() call of the session (one
 * per distinct text, at the place of its latest call) after the items of
 * cfg.disabled_categories: the latest rule matching a category decides,
 * none means on. A category "a,b" (a group, as in the Perfetto SDK) is on
 * if any of its members is. */

const char ptw_tr_soft_end[] = "";

/* Does 'cat' (len bytes) match 'pat'? '*' matches any run of bytes. */
static int ptw_tr_glob(const char *pat, const char *cat, size_t len)
{
	const char *star = NULL, *resume = NULL, *end = cat + len;
	while (cat < end) {
		if (*pat == '*') {
			star = ++pat;
			resume = cat;
		} else if (*pat && *pat == *cat) {
			pat++;
			cat++;
		} else if (star) {
			pat = star;
			cat = ++resume;
		} else {
			return 0;
		}
	}
	while (*pat == '*')
		pat++;
	return *pat == '\0';
}

/* One member (len bytes) by the rules, latest first. */
static int ptw_tr_member_on(const char *cat, size_t len)
{
	const struct ptw_tr_ctl *c = &ptw_tr_ctl;
	if (!len)
		return 1;
	/* system mode: the session's config, then the program's rules */
	if (c->cat_filter && !c->cat_filter(c->cat_ctx, cat, len))
		return 0;
	for (size_t i = c->n_rules; i-- > 0;)
		if (ptw_tr_glob(c->rules[i].pat, cat, len))
			return c->rules[i].on;
	return 1;
}

/* Under mu: is 'cat' on now? */
static int ptw_tr_category_on(const char *cat)
{
	if (!cat)
		return 1;
	for (;;) {
		size_t len = strcspn(cat, ",");
		if (ptw_tr_member_on(cat, len))
			return 1;
		if (!cat[len])
			return 0;
		cat += len + 1;
	}
}

/* Under mu: does a member of 'cat' match cfg.stack_categories? Its copy
 * (ctl.stack_cats) holds the patterns NUL-separated, an empty one last. */
static int ptw_tr_stack_cat(const char *cat)
{
	const char *pat = ptw_tr_ctl.stack_cats;
	for (; pat && *pat; pat += strlen(pat) + 1)
		for (const char *m = cat;;) {
			size_t len = strcspn(m, ",");
			if (len && ptw_tr_glob(pat, m, len))
				return 1;
			if (!m[len])
				break;
			m += len + 1;
		}
	return 0;
}

/* Under mu: keeps cfg.stack_categories for ptw_tr_stack_cat (NULL: none;
 * empty items dropped). 0 or PTW_ERR_NOMEM. */
static int ptw_tr_set_stack_cats_locked(const char *list)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	free(c->stack_cats);
	c->stack_cats = NULL;
	if (!list)
		return 0;
	size_t n = strlen(list);
	char *q = c->stack_cats = malloc(n + 2);
	if (!q)
		return PTW_ERR_NOMEM;
	for (const char *p = list; *p; p++)
		if (*p != ',')
			*q++ = *p;
		else if (q > c->stack_cats && q[-1] != '\0')
			*q++ = '\0';
	if (q > c->stack_cats && q[-1] != '\0')
		*q++ = '\0';
	*q = '\0';
	return 0;
}

/* Under mu: the session's record of 'cat', added on its first use; NULL
 * when out of memory. */
static struct ptw_tr_cat_seen *ptw_tr_seen(const char *cat)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	for (size_t i = 0; i < c->n_seen; i++)
		if (strcmp(c->seen[i].cat, cat) == 0)
			return &c->seen[i];
	struct ptw_tr_cat_seen *ns = ptw_grow(c->seen, &c->cap_seen,
					      c->n_seen + 1, 16, sizeof(*ns));
	if (!ns)
		return NULL;
	c->seen = ns;
	char *copy = strdup(cat);
	if (!copy)
		return NULL;
	int on = ptw_tr_category_on(cat);
	struct ptw_tr_cat_seen *e = &c->seen[c->n_seen++];
	e->cat = copy;
	e->on = (uint8_t)on;
	e->ever_on = (uint8_t)on;
	e->ever_off = (uint8_t)!on;
	return e;
}

uint32_t ptw_tr_site_state(const char *cat, uint32_t kind, uint32_t g)
{
	if (!cat || !*cat)
		return g; /* the empty category: always on */
	struct ptw_tr_cat_seen *e = ptw_tr_seen(cat);
	/* Out of memory: assume every history; slower, still exact. */
	int on = e ? e->on : ptw_tr_category_on(cat);
	int ever_on = e ? e->ever_on : 1, ever_off = e ? e->ever_off : 1;
	switch (kind) {
	case PTW_I_K_BEGIN:
		if (on && ptw_tr_stack_cat(cat))
			return PTW_TR_ST_STACK(g);
		return on ? g : ever_on ? PTW_TR_ST_ALT(g) : ~g;
	case PTW_I_K_END:
	case PTW_I_K_ASYNC_END:
		return !ever_on ? ~g : ever_off ? PTW_TR_ST_ALT(g) : g;
	default:
		return on ? g : ~g;
	}
}

/* Under mu: after a rule change, every seen category's state. */
static void ptw_tr_seen_update_locked(void)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	for (size_t i = 0; i < c->n_seen; i++) {
		struct ptw_tr_cat_seen *e = &c->seen[i];
		int on = ptw_tr_category_on(e->cat);
		e->on = (uint8_t)on;
		e->ever_on |= (uint8_t)on;
		e->ever_off |= (uint8_t)!on;
	}
}

/* Under mu: appends the rule (len bytes of pat, on), replacing an
 * earlier rule of the same text. Returns 0 or PTW_ERR_NOMEM. */
static int ptw_tr_rule_locked(const char *pat, size_t len, int on)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	for (size_t i = 0; i < c->n_rules; i++) {
		if (strlen(c->rules[i].pat) == len &&
		    memcmp(c->rules[i].pat, pat, len) == 0) {
			struct ptw_tr_cat_rule r = c->rules[i];
			memmove(c->rules + i, c->rules + i + 1,
				(c->n_rules - i - 1) * sizeof(*c->rules));
			r.on = on;
			c->rules[c->n_rules - 1] = r;
			return 0;
		}
	}
	struct ptw_tr_cat_rule *nr = ptw_grow(c->rules, &c->cap_rules,
					      c->n_rules + 1, 8, sizeof(*nr));
	if (!nr)
		return PTW_ERR_NOMEM;
	c->rules = nr;
	char *s = malloc(len + 1);
	if (!s)
		return PTW_ERR_NOMEM;
	memcpy(s, pat, len);
	s[len] = '\0';
	c->rules[c->n_rules].pat = s;
	c->rules[c->n_rules++].on = on;
	return 0;
}

/* Under mu: one rule per item of a comma-separated list (spaces around
 * items ignored), in order. Returns 0 or PTW_ERR_NOMEM. */
static int ptw_tr_rules_locked(const char *list, int on)
{
	const char *p = list;
	while (*p) {
		while (*p == ',' || *p == ' ')
			p++;
		const char *e = p;
		while (*e && *e != ',')
			e++;
		size_t len = (size_t)(e - p);
		while (len && p[len - 1] == ' ')
			len--;
		if (len && ptw_tr_rule_locked(p, len, on))
			return PTW_ERR_NOMEM;
		p = e;
	}
	return 0;
}

/* Under mu: no rules, no category seen (a new session). */
static void ptw_tr_clear_categories_locked(void)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	for (size_t i = 0; i < c->n_rules; i++)
		free(c->rules[i].pat);
	c->n_rules = 0;
	for (size_t i = 0; i < c->n_seen; i++)
		free(c->seen[i].cat);
	c->n_seen = 0;
}

/* Under mu: a new generation, so every call site and thread re-validates
 * on its next event. */
static void ptw_tr_bump_gen_locked(uint32_t flags)
{
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	c->gen = ((c->gen + PTW_I_GEN_STEP) & ~(PTW_I_GEN_STEP - 1)) | flags;
	/* Running: every known site goes out of line once more and looks
	 * its category up, and only then is the generation published
	 * (release; ptw_is_running acquires it): a thread that sees tracing
	 * run finds every site live (a site reached before that takes the
	 * mutex, held here, on its way out of line). Stopped: every known
	 * site is skipped inline. */
	int on = (flags & PTW_I_GEN_ON) != 0;
	if (on)
		ptw_tr_sites_set_all(PTW_I_SITE_CHECK);
	__atomic_store_n(&ptw_i_gen, c->gen, __ATOMIC_RELEASE);
	if (!on)
		ptw_tr_sites_set_all(0);
}

int ptw_set_category_enabled(const char *category, int enabled)
{
	if (!category)
		return PTW_ERR_INVALID;
	if (!*category)
		return 0;
	ptw_tr_ctl_init_once();
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	int rc = ptw_tr_rules_locked(category, enabled != 0);
	ptw_tr_seen_update_locked();
	ptw_tr_bump_gen_locked(c->gen & (PTW_I_GEN_ON | PTW_I_GEN_CLOCKS));
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int ptw_set_process_name(const char *name)
{
	if (!name)
		return PTW_ERR_INVALID;
	ptw_tr_ctl_init_once();
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	char *a = strdup(name), *b = strdup(name);
	if (!a || !b) {
		free(a);
		free(b);
		return PTW_ERR_NOMEM;
	}
	pthread_mutex_lock(&c->mu);
	free(c->process_name);
	c->process_name = a;
	if (c->tr && !c->stopping) {
		free(c->tr->new_process_name);
		c->tr->new_process_name = b;
		b = NULL;
		pthread_cond_signal(&c->wake);
	}
	pthread_mutex_unlock(&c->mu);
	free(b);
	return 0;
}

/* ---- start ------------------------------------------------------------- */

/* pthread_create for ptw's own threads: they start with every
 * asynchronous signal blocked (a new thread inherits the caller's mask,
 * restored right after), so a signal meant for the program (a timer's
 * SIGALRM, SIGCHLD, SIGTERM...) never runs the program's handler on
 * ptw's thread, where a macro in that handler would deadlock the backend
 * on its own mutex. Faults stay deliverable there: the crash dump
 * relies on them. The thread is given 'name' (top -H, gdb, /proc). */
int ptw_tr_spawn(pthread_t *th, const char *name,
			 void *(*fn)(void *), void *arg)
{
	sigset_t old;
	int rc = ptw_os_signals_hold_async(&old);
	if (rc)
		return rc;
	rc = pthread_create(th, NULL, fn, arg);
	ptw_os_signals_restore(&old);
	if (rc == 0)
		ptw_os_thread_set_name(*th, name); /* cosmetic if it fails */
	return rc;
}

static int ptw_tr_parse_categories_locked(const char *list)
{
	ptw_tr_clear_categories_locked();
	return list ? ptw_tr_rules_locked(list, 0) : 0;
}

static int ptw_tr_pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* Checks a config (the library's own copy); fills what ptw_start takes
 * from it. 0 or PTW_ERR_INVALID with *err saying which field. */
static int ptw_tr_check_config(const struct ptw_config *cfg, uint32_t *slots_out,
			       uint64_t *ring_bytes_out, int *have_fd_out,
			       int sys_out, struct ptw_error *err)
{
	uint32_t slots = cfg->ring_slots ? cfg->ring_slots : PTW_DEFAULT_RING_SLOTS;
	*slots_out = slots;
	if (!ptw_tr_pow2(slots) || slots < PTW_TR_MIN_SLOTS ||
	    slots > PTW_TR_MAX_SLOTS)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: ring_slots %u is not a power "
				     "of two in [%u, %u]",
				     slots, PTW_TR_MIN_SLOTS, PTW_TR_MAX_SLOTS);
	if (cfg->overflow != PTW_OVERFLOW_DROP &&
	    cfg->overflow != PTW_OVERFLOW_WAIT)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: unknown overflow policy %d",
				     (int)cfg->overflow);
	if (cfg->clock != PTW_CLOCK_MONOTONIC && cfg->clock != PTW_CLOCK_TSC &&
	    cfg->clock != PTW_CLOCK_FASTEST && cfg->clock != PTW_CLOCK_BOOT)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: unknown clock %d", (int)cfg->clock);
	if (cfg->mode != PTW_MODE_STREAM && cfg->mode != PTW_MODE_RING)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: unknown mode %d", (int)cfg->mode);
	int ring = cfg->mode == PTW_MODE_RING;
	uint64_t ring_bytes = cfg->ring_bytes ? cfg->ring_bytes
					      : PTW_DEFAULT_RING_BYTES;
	*ring_bytes_out = ring_bytes;
	if (ring && ring_bytes < PTW_RS_MIN_BYTES)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: ring_bytes %llu is below %u",
				     (unsigned long long)ring_bytes,
				     PTW_RS_MIN_BYTES);
	/* An fd counts when > 0, or when the caller said so: a zeroed
	 * config must never write to fd 0 (standard input). */
	int have_fd = cfg->output_fd > 0 || cfg->output_fd_set;
	*have_fd_out = have_fd;
	if (cfg->output_fd_set && !cfg->output_path && cfg->output_fd < 0)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: output_fd_set with output_fd %d",
				     cfg->output_fd);
	if (!ring && !cfg->output_path && !have_fd && !sys_out)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: no output named: set output_path, "
				     "or output_fd (> 0; for fd 0 also "
				     "output_fd_set), or mode PTW_MODE_RING "
				     "(snapshots only)");
	return 0;
}

/* The session's writer, with the writer options wo (the caller's copy)
 * completed from the config; NULL with *err filled. */
static struct ptw_writer *ptw_tr_open_writer(const struct ptw_config *cfg,
					     struct ptw_writer_options *wo,
					     uint64_t ring_bytes,
					     const struct ptw_tr_output *out,
					     struct ptw_error *err)
{
	wo->close_fd = cfg->close_fd;
	if (cfg->machine_id)
		wo->machine_id = cfg->machine_id;
	if (cfg->machine_name)
		wo->machine_name = cfg->machine_name;
	/* a trace of this host: its uname; its own REALTIME snapshots */
	wo->machine_uname = wo->machine_id || wo->machine_name;
	wo->wall_realtime = 0;
	if (out)
		return ptw_i_writer_open_output(wo, out->fn, out->ctx, err);
	if (cfg->mode == PTW_MODE_RING)
		return ptw_i_writer_open_recorder(wo, ring_bytes, err);
	if (cfg->output_path)
		return ptw_writer_open(cfg->output_path, wo, err);
	return ptw_writer_open_fd(cfg->output_fd, wo, err);
}

/* A session's tracer, set from its checked config (no writer, thread or
 * categories yet); NULL when out of memory. 'system': a session of
 * system mode, whose trace time is BOOTTIME (the TSC is anchored to it). */
static struct ptw_tracer *ptw_tr_new(const struct ptw_config *cfg,
				     uint32_t slots, int ring, int have_fd,
				     int system)
{
	struct ptw_tracer *tr = calloc(1, sizeof(*tr));
	if (!tr)
		return NULL;
	tr->ring_slots = slots;
	tr->ring = ring;
	tr->crash = cfg->crash_path != NULL;
	tr->out_fd = -1;
	if (ring && cfg->output_path) {
		tr->out_path = strdup(cfg->output_path);
		if (!tr->out_path) {
			free(tr);
			return NULL;
		}
	} else if (ring && have_fd) {
		tr->out_fd = cfg->output_fd;
		tr->out_close = cfg->close_fd;
	}
	tr->wait = cfg->overflow == PTW_OVERFLOW_WAIT;
	tr->general_only = cfg->general_path_only != 0;
	tr->srcloc = cfg->source_locations != 0;
	tr->drain_us = cfg->drain_interval_us ? cfg->drain_interval_us
					      : PTW_DEFAULT_DRAIN_US;
	tr->pid = (int32_t)getpid();
	if (cfg->clock == PTW_CLOCK_TSC || cfg->clock == PTW_CLOCK_FASTEST)
		tr->use_tsc = ptw_tr_tsc_calibrate(&tr->tsc, system) == 0;
	tr->clock_bits = tr->use_tsc ? PTW_I_GEN_TSC
		       : cfg->clock == PTW_CLOCK_BOOT || system ? PTW_I_GEN_BOOT
								: 0;
	return tr;
}

/* The caller's config and writer options as its header knew them
 * (sized.h), copied into the library's own structs. 0 or
 * PTW_ERR_INVALID. */
static int ptw_tr_copy_config(struct ptw_config *cfg,
			      struct ptw_writer_options *wo,
			      const struct ptw_config *user_cfg, size_t cfg_size,
			      size_t writer_size, struct ptw_error *err)
{
	if (ptw_sized_in(cfg, sizeof(*cfg), user_cfg, cfg_size))
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: a config of %zu bytes sets "
				     "fields this library (%zu bytes, version "
				     "%s) does not know",
				     cfg_size, sizeof(*cfg), PTW_VERSION);
	if (ptw_sized_in(wo, sizeof(*wo), cfg->writer, writer_size))
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: writer options of %zu bytes "
				     "set fields this library (%zu bytes, "
				     "version %s) does not know",
				     writer_size, sizeof(*wo), PTW_VERSION);
	return 0;
}

static int ptw_tr_discard(void *ctx, const uint8_t *p, size_t n);

/* Starts a session of the library's own copy of the config (and writer
 * options wo); 'out' non-NULL: system mode's (lib/system), whose own
 * writer writes nothing (its sinks do); cfg->system: the program's own
 * output beside system mode. Both are on the service's clock. */
static int ptw_tr_start_cfg(const struct ptw_config *cfg,
			    struct ptw_writer_options *wo,
			    const struct ptw_tr_output *out,
			    int (*filter)(void *ctx, const char *cat, size_t len),
			    void *filter_ctx, const struct ptw_tr_sink_cfg *first,
			    uint64_t *first_id, struct ptw_error *err)
{
	uint32_t slots = 0;
	uint64_t ring_bytes = 0;
	int have_fd = 0;
	int crc = ptw_tr_check_config(cfg, &slots, &ring_bytes, &have_fd,
				      out != NULL, err);
	if (crc)
		return crc;
	int ring = cfg->mode == PTW_MODE_RING;
	ptw_tr_ctl_init_once();
	struct ptw_tr_ctl *c = &ptw_tr_ctl;

	/* system mode's session: its muted one, or the program's own
	 * output beside it */
	struct ptw_tracer *tr = ptw_tr_new(cfg, slots, ring, have_fd,
					  out != NULL || cfg->system);
	if (!tr)
		return ptw_error_set(err, PTW_ERR_NOMEM, 0,
				     "ptw_start: out of memory");

	pthread_mutex_lock(&c->mu);
	if (c->tr) {
		pthread_mutex_unlock(&c->mu);
		free(tr->out_path);
		free(tr);
		return ptw_error_set(err, PTW_ERR_STATE, 0,
				     "ptw_start: tracing is already running");
	}
	int rc = ptw_tr_parse_categories_locked(cfg->disabled_categories);
	if (!rc)
		rc = ptw_tr_set_stack_cats_locked(cfg->stack_categories);
	if (out) {
		tr->out = *out;
		tr->mute = out->fn == ptw_tr_discard;
	}
	if (rc) {
		pthread_mutex_unlock(&c->mu);
		free(tr->out_path);
		free(tr);
		return ptw_error_set(err, rc, 0, "ptw_start: out of memory");
	}
	tr->w = ptw_tr_open_writer(cfg, wo, ring_bytes, out, err);
	if (!tr->w) {
		pthread_mutex_unlock(&c->mu);
		free(tr->out_path);
		free(tr);
		return err ? err->code : PTW_ERR_IO;
	}
	const char *pname = c->process_name ? c->process_name
			  : cfg->process_name ? cfg->process_name
					      : ptw_os_process_name();
	rc = ptw_tr_backend_setup(tr, pname);
	if (!rc && first) { /* no backend yet: its writer is this thread's */
		struct ptw_tracer *sk = ptw_tr_sink_new_locked(tr, first);
		rc = sk ? ptw_tr_sink_open(tr, sk, 0) : PTW_ERR_NOMEM;
		if (sk && rc) {
			ptw_error_set(&tr->err, rc, 0, "ptw_start: %s",
				      sk->err.code ? sk->err.msg
						   : "cannot start a sink");
			ptw_tr_sink_name_free(sk);
			free(sk);
		} else if (sk) {
			*first_id = sk->sink_id;
		} else {
			ptw_error_set(&tr->err, rc, 0, "ptw_start: out of memory");
		}
	}
	if (rc) {
		if (err)
			*err = tr->err;
		ptw_writer_close(tr->w, NULL);
		ptw_tr_backend_free(tr);
		pthread_mutex_unlock(&c->mu);
		free(tr);
		return rc;
	}
	rc = ptw_tr_crash_install(tr, cfg->crash_path);
	if (rc) {
		ptw_writer_close(tr->w, NULL);
		ptw_tr_backend_free(tr);
		pthread_mutex_unlock(&c->mu);
		free(tr);
		return ptw_error_set(err, rc, errno,
				     "ptw_start: cannot install the crash "
				     "handler (crash_path too long?)");
	}
	tr->session = ++c->next_session;
	c->tr = tr;
	c->cat_filter = filter;
	c->cat_ctx = filter_ctx;
	c->stopping = 0;
	memset(&c->last, 0, sizeof(c->last));
	c->have_last = 0;
	rc = ptw_tr_spawn(&tr->thread, "ptw-backend",
				  ptw_tr_backend_main, tr);
	if (rc) {
		c->tr = NULL;
		c->cat_filter = NULL;
		ptw_tr_crash_uninstall();
		pthread_mutex_unlock(&c->mu);
		ptw_writer_close(tr->w, NULL);
		ptw_tr_backend_free(tr);
		free(tr);
		return ptw_error_set(err, PTW_ERR_NOMEM, rc,
				     "ptw_start: cannot create the backend thread");
	}
	ptw_tr_bump_gen_locked(PTW_I_GEN_ON | tr->clock_bits);
	pthread_mutex_unlock(&c->mu);
	if (cfg->stop_at_exit)
		pthread_once(&ptw_tr_atexit_once, ptw_tr_register_atexit);
	return 0;
}

int ptw_start_sized(const struct ptw_config *user_cfg, size_t cfg_size,
		    size_t writer_size, struct ptw_error *err)
{
	if (!user_cfg)
		return ptw_error_set(err, PTW_ERR_INVALID, 0,
				     "ptw_start: NULL config");
	struct ptw_config cfg;
	struct ptw_writer_options wo;
	int rc = ptw_tr_copy_config(&cfg, &wo, user_cfg, cfg_size, writer_size,
				    err);
	if (rc)
		return rc;
	if (cfg.system) {
		ptw_tr_ctl_init_once();
		/* with a file or the flight recorder: that session runs from
		 * now on, and system sessions join it as sinks; its clock is
		 * the service's, BOOTTIME, read or converted from the CPU's
		 * counter (cfg.system: ptw_tr_new), so that both traces
		 * agree */
		int own = cfg.output_path || cfg.output_fd > 0 ||
			  cfg.output_fd_set || cfg.mode == PTW_MODE_RING;
		if (own) {
			if (ptw_sys_on())
				return ptw_error_set(err, PTW_ERR_STATE, 0,
						     "ptw_start: tracing is "
						     "already running");
			rc = ptw_tr_start_cfg(&cfg, &wo, NULL, NULL, NULL, NULL,
					      NULL, err);
			if (rc)
				return rc;
		}
		rc = ptw_sys_start(&cfg, &wo, own, err);
		if (rc && own)
			(void)ptw_tr_stop_session(NULL);
		if (rc == 0 && cfg.stop_at_exit)
			pthread_once(&ptw_tr_atexit_once, ptw_tr_register_atexit);
		return rc;
	}
	if (ptw_sys_on())
		return ptw_error_set(err, PTW_ERR_STATE, 0,
				     "ptw_start: system mode is on (ptw_stop "
				     "it first)");
	return ptw_tr_start_cfg(&cfg, &wo, NULL, NULL, NULL, NULL, NULL, err);
}

/* The own writer of a session without a file (system mode): its packets
 * go nowhere, the sinks write. */
static int ptw_tr_discard(void *ctx, const uint8_t *p, size_t n)
{
	(void)ctx;
	(void)p;
	(void)n;
	return 0;
}

int ptw_tr_start_muted(const struct ptw_config *cfg,
		       int (*filter)(void *ctx, const char *cat, size_t len),
		       void *filter_ctx, const struct ptw_tr_sink_cfg *first,
		       uint64_t *id, struct ptw_error *err)
{
	struct ptw_writer_options wo;
	memset(&wo, 0, sizeof(wo));
	if (cfg->writer)
		wo = *cfg->writer;
	wo.compress = PTW_COMPRESS_NONE;
	const struct ptw_tr_output out = {ptw_tr_discard, NULL, NULL};
	return ptw_tr_start_cfg(cfg, &wo, &out, filter, filter_ctx, first, id,
				err);
}

void ptw_tr_filter_changed(void)
{
	ptw_tr_ctl_init_once();
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	ptw_tr_seen_update_locked();
	if (c->gen & PTW_I_GEN_ON)
		ptw_tr_bump_gen_locked(c->gen & (PTW_I_GEN_ON | PTW_I_GEN_CLOCKS));
	pthread_mutex_unlock(&c->mu);
}

/* ---- flush / stop / stats ---------------------------------------------- */

int ptw_flush(void)
{
	ptw_tr_ctl_init_once();
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	struct ptw_tracer *tr = c->tr;
	if (!tr || c->stopping) {
		pthread_mutex_unlock(&c->mu);
		return PTW_ERR_STATE;
	}
	uint64_t session = tr->session;
	uint64_t req = ++tr->flush_req;
	pthread_cond_signal(&c->wake);
	/* The session cannot be freed while c->tr still points at it; the
	 * backend completes every request before it exits. */
	while (c->tr && c->tr->session == session && tr->flush_done < req)
		pthread_cond_wait(&c->done, &c->mu);
	int rc = (c->tr && c->tr->session == session) ? tr->flush_rc : 0;
	pthread_mutex_unlock(&c->mu);
	return rc;
}

/* Under mu: live figures of a session. */
static void ptw_tr_stats_locked(struct ptw_tracer *tr, struct ptw_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->events = atomic_load(&tr->events);
	out->invalid = atomic_load(&tr->invalid);
	out->bytes_written = atomic_load(&tr->bytes);
	out->dropped = tr->dropped_gone;
	out->waits = tr->waits_gone;
	for (size_t i = 0; i < tr->n_threads; i++) {
		out->dropped += atomic_load(&tr->threads[i]->pub.dropped);
		out->waits += atomic_load(&tr->threads[i]->waits);
	}
	out->threads = tr->n_registered;
	out->tsc_hz = tr->use_tsc ? tr->tsc.hz : 0;
	out->clock = tr->use_tsc ? PTW_CLOCK_TSC
		   : (tr->clock_bits & PTW_I_GEN_BOOT) ? PTW_CLOCK_BOOT
						       : PTW_CLOCK_MONOTONIC;
	out->running = 1;
	out->system_lost = ptw_sys_lost();
}

int ptw_stop_ex(struct ptw_error *err)
{
	/* system mode: its thread stops its session (with a last flush into
	 * the service's buffer) and disconnects */
	int own = 0;
	if (ptw_sys_stop(&own) && !own) {
		if (err)
			memset(err, 0, sizeof(*err));
		return 0;
	}
	/* a file or flight recorder (also beside system mode) */
	return ptw_tr_stop_session(err);
}

int ptw_tr_stop_session(struct ptw_error *err)
{
	ptw_tr_ctl_init_once();
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	if (!c->tr) {
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
	if (c->stopping) {
		/* Another thread is stopping this session: wait for it. */
		uint64_t session = c->tr->session;
		while (c->tr && c->tr->session == session)
			pthread_cond_wait(&c->done, &c->mu);
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
	struct ptw_tracer *tr = c->tr;
	c->stopping = 1;
	ptw_tr_bump_gen_locked(0);
	tr->stop_req = 1;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->mu);

	pthread_join(tr->thread, NULL);
	ptw_tr_crash_uninstall();

	pthread_mutex_lock(&c->mu);
	ptw_tr_stats_locked(tr, &c->last);
	c->last.running = 0;
	c->have_last = 1;
	c->tr = NULL;
	c->stopping = 0;
	c->cat_filter = NULL;
	c->cat_ctx = NULL;
	pthread_cond_broadcast(&c->done);
	pthread_mutex_unlock(&c->mu);

	int rc = tr->rc;
	if (err) {
		if (rc)
			*err = tr->err;
		else
			memset(err, 0, sizeof(*err));
	}
	ptw_tr_backend_free(tr);
	free(tr);
	return rc;
}

int ptw_stop(void) { return ptw_stop_ex(NULL); }

/* ---- snapshots (flight recorder) --------------------------------------- */

int ptw_snapshot_fd(int fd)
{
	if (fd < 0)
		return PTW_ERR_INVALID;
	ptw_tr_ctl_init_once();
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	pthread_mutex_lock(&c->mu);
	struct ptw_tracer *tr = c->tr;
	if (!tr || c->stopping || !tr->ring) {
		pthread_mutex_unlock(&c->mu);
		return PTW_ERR_STATE;
	}
	uint64_t session = tr->session;
	/* one at a time: the backend holds one request */
	while (c->tr && c->tr->session == session && !c->stopping &&
	       tr->snap_busy)
		pthread_cond_wait(&c->done, &c->mu);
	if (!c->tr || c->tr->session != session || c->stopping) {
		pthread_mutex_unlock(&c->mu);
		return PTW_ERR_STATE;
	}
	struct ptw_tr_snap_req req = {.fd = fd, .done = 0, .rc = 0};
	tr->snap_busy = 1;
	tr->snap_req = &req;
	pthread_cond_signal(&c->wake);
	/* The backend completes every request before it exits (also when
	 * ptw_stop() races with this call), so 'req' is always answered. */
	while (!req.done)
		pthread_cond_wait(&c->done, &c->mu);
	pthread_mutex_unlock(&c->mu);
	return req.rc;
}

int ptw_snapshot(const char *path)
{
	if (!path)
		return PTW_ERR_INVALID;
	if (!ptw_is_running())
		return PTW_ERR_STATE;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return PTW_ERR_IO;
	int rc = ptw_snapshot_fd(fd);
	if (close(fd) != 0 && !rc)
		rc = PTW_ERR_IO;
	return rc;
}

void ptw_stop_atexit(void) { (void)ptw_stop_ex(NULL); }

int ptw_get_stats_sized(struct ptw_stats *user_out, size_t out_size)
{
	if (!user_out)
		return PTW_ERR_INVALID;
	struct ptw_stats st;
	struct ptw_stats *out = &st;
	ptw_tr_ctl_init_once();
	struct ptw_tr_ctl *c = &ptw_tr_ctl;
	int rc = 0;
	pthread_mutex_lock(&c->mu);
	if (c->tr) {
		ptw_tr_stats_locked(c->tr, out);
		out->running = !c->stopping;
	}
	else if (c->have_last)
		*out = c->last;
	else {
		memset(out, 0, sizeof(*out));
		rc = PTW_ERR_STATE;
	}
	pthread_mutex_unlock(&c->mu);
	ptw_sized_out(user_out, out_size, out, sizeof(*out));
	return rc;
}

int ptw_is_running(void)
{
	/* acquire: the sites made live before (ptw_tr_bump_gen_locked) */
	return (__atomic_load_n(&ptw_i_gen, __ATOMIC_ACQUIRE) &
		PTW_I_GEN_ON) != 0;
}
