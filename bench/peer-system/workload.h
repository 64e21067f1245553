/* workload.h - the loop both programs of the system-mode side-by-side run,
 * as macros, so that bench_ptw_system.c (C) and bench_sdk_system.cc (C++,
 * the Perfetto SDK) expand the very same loop around their own macros.
 * The same shape as the file-mode side-by-side (README, Performance):
 * per thread, groups of 8 events, 4 nested BEGINs (depth 1 to 4) then 4
 * ENDs; the BEGINs' names cycle through 16 string literals, one call site
 * per name behind a switch (both libraries intern literal names); one
 * category, "bench". The _ARG form gives each BEGIN one int64 argument "v".
 *
 * The includer defines PS_BEGIN(lit), PS_BEGIN_ARG(lit, v) and PS_END(),
 * then expands PS_WORKLOAD, which defines ps_workload_plain(n) and
 * ps_workload_arg(n) (n: events, a multiple of 8).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_PEER_SYSTEM_WORKLOAD_H
#define PTW_PEER_SYSTEM_WORKLOAD_H

#include <stdint.h>

#define PS_CAT "bench"

#define PS_NAMES(X)                                                   \
	X(0, "alpha") X(1, "bravo") X(2, "charlie") X(3, "delta")      \
	X(4, "echo") X(5, "foxtrot") X(6, "golf") X(7, "hotel")        \
	X(8, "india") X(9, "juliett") X(10, "kilo") X(11, "lima")      \
	X(12, "mike") X(13, "november") X(14, "oscar") X(15, "papa")

#define PS_CASE_PLAIN(i, lit) case i: PS_BEGIN(lit); break;
#define PS_CASE_ARG(i, lit) case i: PS_BEGIN_ARG(lit, v); break;

#define PS_GROUP(begin)                                                   \
	do {                                                              \
		begin;                                                    \
		begin;                                                    \
		begin;                                                    \
		begin;                                                    \
		PS_END();                                                 \
		PS_END();                                                 \
		PS_END();                                                 \
		PS_END();                                                 \
	} while (0)

#define PS_WORKLOAD                                                       \
	static inline __attribute__((always_inline)) void                 \
	ps_begin_plain(unsigned k)                                        \
	{                                                                 \
		switch (k & 15u) { PS_NAMES(PS_CASE_PLAIN) }              \
	}                                                                 \
	static inline __attribute__((always_inline)) void                 \
	ps_begin_arg(unsigned k, int64_t v)                               \
	{                                                                 \
		switch (k & 15u) { PS_NAMES(PS_CASE_ARG) }                \
	}                                                                 \
	static __attribute__((noinline)) void ps_workload_plain(uint64_t n) \
	{                                                                 \
		unsigned k = 0;                                           \
		for (uint64_t g = 0; g < n / 8; g++)                      \
			PS_GROUP(ps_begin_plain(k++));                    \
	}                                                                 \
	static __attribute__((noinline)) void ps_workload_arg(uint64_t n)  \
	{                                                                 \
		unsigned k = 0;                                           \
		int64_t v = 0;                                            \
		for (uint64_t g = 0; g < n / 8; g++)                      \
			PS_GROUP(ps_begin_arg(k++, v++));                 \
	}

#endif /* PTW_PEER_SYSTEM_WORKLOAD_H */
