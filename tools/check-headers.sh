#!/bin/sh
# check-headers.sh - compiles each public header alone and all together:
# strict C11 with gcc and clang, and C++11/14/17/20 with g++ and clang++
# (-Wall -Wextra -Werror -pedantic); then the tracer macros where tracer.h
# says they may stand (tests/compile/*.c, *.cc must compile), and where
# they may not (tests/compile/fail_*.c, *.cc must fail, with the message
# the header promises).
# SPDX-License-Identifier: Apache-2.0
set -e
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
strict="-Wall -Wextra -Werror -pedantic -Iinclude"
all=""
for h in include/ptw/*.h; do all="$all#include \"${h#include/}\"
"; done
for cc in gcc clang; do
	for h in include/ptw/*.h; do
		printf '#include "%s"\n' "${h#include/}" > "$t/h.c"
		$cc -std=c11 $strict -c "$t/h.c" -o "$t/h.o" ||
			{ echo "check-headers: $h does not compile alone with $cc" >&2; exit 1; }
	done
	printf '%s' "$all" > "$t/all.c"
	$cc -std=c11 $strict -c "$t/all.c" -o "$t/h.o" ||
		{ echo "check-headers: the headers do not compile together with $cc" >&2; exit 1; }
done
for cxx in g++ clang++; do
	for std in c++11 c++14 c++17 c++20; do
		for h in include/ptw/*.h; do
			printf '#include "%s"\n' "${h#include/}" > "$t/h.cc"
			$cxx -std=$std $strict -c "$t/h.cc" -o "$t/h.o" ||
				{ echo "check-headers: $h does not compile alone with $cxx -std=$std" >&2; exit 1; }
		done
		printf '%s' "$all" > "$t/all.cc"
		$cxx -std=$std $strict -c "$t/all.cc" -o "$t/h.o" ||
			{ echo "check-headers: the headers do not compile together with $cxx -std=$std" >&2; exit 1; }
		for f in tests/compile/[!f]*.cc; do
			$cxx -std=$std $strict -c "$f" -o "$t/h.o" ||
				{ echo "check-headers: $f does not compile with $cxx -std=$std" >&2; exit 1; }
			# extern "C": the library's functions keep their C names
			! nm -u "$t/h.o" | grep '_Z.*ptw_' ||
				{ echo "check-headers: C++ mangles a ptw_ function ($cxx -std=$std)" >&2; exit 1; }
		done
	done
done
for cc in gcc clang; do
	for f in tests/compile/[!f]*.c; do
		$cc -std=c11 $strict -c "$f" -o "$t/h.o" ||
			{ echo "check-headers: $f does not compile with $cc" >&2; exit 1; }
	done
done
# must not compile; the first line of each says what the error must mention
for f in tests/compile/fail_*.c tests/compile/fail_*.cc; do
	want=$(sed -n '1s/.*must mention: *\(.*[^ ]\) *\*\/.*/\1/p;1s/.*must mention: *\([^ ]*\)$/\1/p' "$f")
	case "$f" in *.cc) cs="g++ clang++"; std=c++17 ;; *) cs="gcc clang"; std=c11 ;; esac
	for cc in $cs; do
		if $cc -std=$std $strict -c "$f" -o "$t/h.o" > "$t/err" 2>&1; then
			echo "check-headers: $f compiles with $cc, but must not" >&2; exit 1
		fi
		[ -z "$want" ] || grep -q -- "$want" "$t/err" ||
			{ echo "check-headers: $cc's error for $f does not mention $want:" >&2; cat "$t/err" >&2; exit 1; }
	done
done
# ptw.pc's Version (the Makefile reads version.h) is PTW_VERSION
printf '#include "ptw/version.h"\nptw_version_is PTW_VERSION\n' > "$t/v.c"
hv=$(gcc -E -P -Iinclude "$t/v.c" | sed -n 's/^ptw_version_is //p' | tr -d '" ')
mv=$(make -s --no-print-directory version)
[ -n "$hv" ] && [ "$hv" = "$mv" ] ||
	{ echo "check-headers: version.h says '$hv', the Makefile '$mv'" >&2; exit 1; }
echo "check-headers: ok"
