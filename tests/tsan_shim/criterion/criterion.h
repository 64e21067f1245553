/* criterion.h (TSan stand-in) - the subset of Criterion's API that ptw's
 * tests use, for the ThreadSanitizer build: real Criterion aborts at start
 * under TSan ("Could not initialize inheritable arena", Snaipe/Criterion
 * issue #274). Each test runs in its own forked child, like Criterion.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TSAN_CRITERION_H
#define PTW_TSAN_CRITERION_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ptw_shim_test {
	const char *t_suite, *t_name;
	void (*t_fn)(void);
	/* Named like Criterion's Test() options, so that
	 * Test(s, n, .init = f, .timeout = 10) works unchanged. */
	void (*init)(void);
	void (*fini)(void);
	double timeout;
	int disabled;
};
#ifdef __cplusplus
extern "C" {
#endif
void ptw_shim_register(const struct ptw_shim_test *t);
void ptw_shim_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
void ptw_shim_skip(void) __attribute__((noreturn));
#ifdef __cplusplus
}
#endif

#define Test(suite, name, ...)                                               \
	static void suite##_##name##_impl(void);                             \
	__attribute__((constructor)) static void suite##_##name##_reg(void)  \
	{                                                                    \
		struct ptw_shim_test t = {.t_suite = #suite, .t_name = #name,\
					  .t_fn = suite##_##name##_impl,      \
					  __VA_ARGS__};                       \
		ptw_shim_register(&t);                                       \
	}                                                                    \
	static void suite##_##name##_impl(void)

#define PTW_SHIM_CHECK(cond, ...)                                            \
	do {                                                                 \
		if (!(cond))                                                 \
			ptw_shim_fail(__FILE__, __LINE__, "" __VA_ARGS__);   \
	} while (0)
#define cr_assert(c, ...) PTW_SHIM_CHECK((c), "assertion " #c " " __VA_ARGS__)
#define cr_assert_not(c, ...) PTW_SHIM_CHECK(!(c), "!(" #c ") " __VA_ARGS__)
#define cr_assert_eq(a, b, ...) PTW_SHIM_CHECK((a) == (b), #a " == " #b " " __VA_ARGS__)
#define cr_assert_neq(a, b, ...) PTW_SHIM_CHECK((a) != (b), #a " != " #b " " __VA_ARGS__)
#define cr_assert_lt(a, b, ...) PTW_SHIM_CHECK((a) < (b), #a " < " #b " " __VA_ARGS__)
#define cr_assert_leq(a, b, ...) PTW_SHIM_CHECK((a) <= (b), #a " <= " #b " " __VA_ARGS__)
#define cr_assert_gt(a, b, ...) PTW_SHIM_CHECK((a) > (b), #a " > " #b " " __VA_ARGS__)
#define cr_assert_geq(a, b, ...) PTW_SHIM_CHECK((a) >= (b), #a " >= " #b " " __VA_ARGS__)
#define cr_assert_null(a, ...) PTW_SHIM_CHECK((a) == NULL, #a " == NULL " __VA_ARGS__)
#define cr_assert_not_null(a, ...) PTW_SHIM_CHECK((a) != NULL, #a " != NULL " __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) \
	PTW_SHIM_CHECK(strcmp((a), (b)) == 0, #a " == " #b " " __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) \
	PTW_SHIM_CHECK(strcmp((a), (b)) != 0, #a " != " #b " " __VA_ARGS__)
#define cr_assert_fail(...) ptw_shim_fail(__FILE__, __LINE__, "" __VA_ARGS__)
#define cr_fail(...) ptw_shim_fail(__FILE__, __LINE__, "" __VA_ARGS__)
#define cr_expect cr_assert
#define cr_expect_eq cr_assert_eq
#define cr_skip_test(...) ptw_shim_skip()
#define cr_log_info(...) ((void)0)
#define cr_log_warn(...) ((void)0)
#endif
