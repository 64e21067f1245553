/* catdecl.c - declared categories (catdecl.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include "catdecl.h"

#include "ptw/tracer.h"
#include "lib/util/grow.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t ptw_sys_decl_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ptw_sys_cat_decl *ptw_sys_decls; /* strings owned */
static size_t ptw_sys_n_decls, ptw_sys_cap_decls;
static _Atomic uint64_t ptw_sys_decl_ver;

static char *ptw_sys_strndup(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* Under the lock: adds or replaces 'name' (len bytes). 0 or NOMEM. */
static int ptw_sys_decl_locked(const char *name, size_t len, const char *desc,
			       const char *tags)
{
	char *n = ptw_sys_strndup(name, len);
	char *d = desc ? strdup(desc) : NULL;
	char *t = tags ? strdup(tags) : NULL;
	if (!n || (desc && !d) || (tags && !t))
		goto nomem;
	for (size_t i = 0; i < ptw_sys_n_decls; i++) {
		struct ptw_sys_cat_decl *e = &ptw_sys_decls[i];
		if (strcmp(e->name, n) == 0) {
			free(n);
			free((char *)e->desc);
			free((char *)e->tags);
			e->desc = d;
			e->tags = t;
			return 0;
		}
	}
	if (ptw_sys_n_decls == ptw_sys_cap_decls) {
		size_t nc = ptw_grow_cap(ptw_sys_cap_decls, ptw_sys_n_decls + 1,
					 16, sizeof(*ptw_sys_decls));
		void *nd = ptw_realloc_array(ptw_sys_decls, nc,
					     sizeof(*ptw_sys_decls));
		if (!nd)
			goto nomem;
		ptw_sys_decls = nd;
		ptw_sys_cap_decls = nc;
	}
	ptw_sys_decls[ptw_sys_n_decls++] = (struct ptw_sys_cat_decl){n, d, t};
	return 0;
nomem:
	free(n);
	free(d);
	free(t);
	return PTW_ERR_NOMEM;
}

int ptw_declare_category(const char *name, const char *description,
			 const char *tags)
{
	if (!name || !*name)
		return PTW_ERR_INVALID;
	pthread_mutex_lock(&ptw_sys_decl_mu);
	int rc = ptw_sys_decl_locked(name, strlen(name), description, tags);
	pthread_mutex_unlock(&ptw_sys_decl_mu);
	if (rc)
		return rc;
	atomic_fetch_add(&ptw_sys_decl_ver, 1);
	ptw_sys_decl_changed();
	return 0;
}

int ptw_sys_decl_list(const char *list)
{
	int rc = 0;
	pthread_mutex_lock(&ptw_sys_decl_mu);
	for (const char *p = list; *p && !rc;) {
		while (*p == ',' || *p == ' ')
			p++;
		size_t len = strcspn(p, ",");
		size_t l = len;
		while (l && p[l - 1] == ' ')
			l--;
		if (l)
			rc = ptw_sys_decl_locked(p, l, NULL, NULL);
		p += len;
	}
	pthread_mutex_unlock(&ptw_sys_decl_mu);
	atomic_fetch_add(&ptw_sys_decl_ver, 1);
	return rc;
}

uint64_t ptw_sys_decl_version(void) { return atomic_load(&ptw_sys_decl_ver); }

uint64_t ptw_sys_decl_register(struct ptw_sys_prod *p, int update)
{
	pthread_mutex_lock(&ptw_sys_decl_mu);
	uint64_t v = atomic_load(&ptw_sys_decl_ver);
	(void)ptw_sys_prod_register(p, update, ptw_sys_decls, ptw_sys_n_decls);
	pthread_mutex_unlock(&ptw_sys_decl_mu);
	return v;
}

int ptw_sys_decl_enabled(const struct ptw_sys_te_cfg *te, const char *cat,
			 size_t len)
{
	pthread_mutex_lock(&ptw_sys_decl_mu);
	const char *tags = NULL;
	for (size_t i = 0; i < ptw_sys_n_decls; i++) {
		const char *n = ptw_sys_decls[i].name;
		if (strlen(n) == len && memcmp(n, cat, len) == 0) {
			tags = ptw_sys_decls[i].tags;
			break;
		}
	}
	int on = ptw_sys_te_enabled(te, cat, len, tags);
	pthread_mutex_unlock(&ptw_sys_decl_mu);
	return on;
}

void ptw_sys_decl_atfork_child(void)
{
	pthread_mutex_init(&ptw_sys_decl_mu, NULL);
}
