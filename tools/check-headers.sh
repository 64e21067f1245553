#!/bin/sh
# check-headers.sh - compiles each public header alone, strict C11, gcc and clang.
# SPDX-License-Identifier: Apache-2.0
set -e
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for cc in gcc clang; do
	for h in include/ptw/*.h; do
		printf '#include "%s"\n' "${h#include/}" > "$t/h.c"
		$cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -c "$t/h.c" -o "$t/h.o" ||
			{ echo "check-headers: $h does not compile alone with $cc" >&2; exit 1; }
	done
done
echo "check-headers: ok"
