/* criterion.h (stand-in) - the subset of Criterion's API that ptw's tests
 * use, for the ThreadSanitizer build: real Criterion aborts at start under
 * TSan ("Could not initialize inheritable arena", Snaipe/Criterion issue
 * #274); and for the cross builds run under qemu-user (Debian 12 has no
 * s390x Criterion; the arm64 one would bring a dozen libraries into the
 * sysroot). Each test runs in its own forked child, like Criterion.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_TSAN_CRITERION_H
#define PTW_TSAN_CRITERION_H
#include <stdbool.h>
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
void ptw_shim_register_suite(const struct ptw_shim_test *t);
/* 'what' is the failed condition as written (may hold a '%'), fmt and
 * what follows the message the test gave. */
void ptw_shim_fail(const char *file, int line, const char *what,
		   const char *fmt, ...)
	__attribute__((noreturn, format(printf, 4, 5)));
/* Says why on stderr ("[SKIP] file:line: why"), then ends the test as
 * skipped (counted as passing, as Criterion does). */
void ptw_shim_skip(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
/* C++ warns of the fields a designated initializer leaves out */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
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

/* The suite's .init and .fini, for its tests that name none. */
#define TestSuite(suite, ...)                                                \
	__attribute__((constructor)) static void suite##_suite_reg(void)     \
	{                                                                    \
		struct ptw_shim_test t = {.t_suite = #suite, __VA_ARGS__};    \
		ptw_shim_register_suite(&t);                                 \
	}

#define PTW_SHIM_CHECK(cond, what, ...)                                      \
	do {                                                                 \
		if (!(cond))                                                 \
			ptw_shim_fail(__FILE__, __LINE__, what,              \
				      " " __VA_ARGS__);                      \
	} while (0)
#define cr_assert(c, ...) PTW_SHIM_CHECK((c), #c, __VA_ARGS__)
#define cr_assert_not(c, ...) PTW_SHIM_CHECK(!(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_eq(a, b, ...) PTW_SHIM_CHECK((a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) PTW_SHIM_CHECK((a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) PTW_SHIM_CHECK((a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) PTW_SHIM_CHECK((a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) PTW_SHIM_CHECK((a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) PTW_SHIM_CHECK((a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_assert_null(a, ...) PTW_SHIM_CHECK((a) == NULL, #a " == NULL", __VA_ARGS__)
#define cr_assert_not_null(a, ...) PTW_SHIM_CHECK((a) != NULL, #a " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) \
	PTW_SHIM_CHECK(strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) \
	PTW_SHIM_CHECK(strcmp((a), (b)) != 0, #a " != " #b, __VA_ARGS__)
#define cr_assert_fail(...) ptw_shim_fail(__FILE__, __LINE__, "", " " __VA_ARGS__)
#define cr_fail(...) ptw_shim_fail(__FILE__, __LINE__, "", " " __VA_ARGS__)
#define cr_assert_float_eq(a, b, eps, ...)                                   \
	PTW_SHIM_CHECK((a) - (b) <= (eps) && (b) - (a) <= (eps),             \
		       #a " == " #b " (within " #eps ")", __VA_ARGS__)
/* A failed expectation ends the test here (Criterion goes on and fails
 * it at its end): the same verdict. */
#define cr_expect cr_assert
#define cr_expect_not cr_assert_not
#define cr_expect_eq cr_assert_eq
#define cr_expect_neq cr_assert_neq
#define cr_expect_lt cr_assert_lt
#define cr_expect_leq cr_assert_leq
#define cr_expect_gt cr_assert_gt
#define cr_expect_null cr_assert_null
#define cr_expect_not_null cr_assert_not_null
#define cr_expect_str_eq cr_assert_str_eq
#define cr_expect_fail cr_assert_fail
#define cr_skip_test(...) ptw_shim_skip(__FILE__, __LINE__, " " __VA_ARGS__)
#define cr_log_info(...) ((void)0)
#define cr_log_warn(...) ((void)0)
#define cr_log_error(...) ((void)0)
#endif
