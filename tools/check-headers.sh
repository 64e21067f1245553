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
# ptw.pc's Version (the Makefile reads version.h) is PTW_VERSION
printf '#include "ptw/version.h"\nptw_version_is PTW_VERSION\n' > "$t/v.c"
hv=$(gcc -E -P -Iinclude "$t/v.c" | sed -n 's/^ptw_version_is //p' | tr -d '" ')
mv=$(make -s --no-print-directory version)
[ -n "$hv" ] && [ "$hv" = "$mv" ] ||
	{ echo "check-headers: version.h says '$hv', the Makefile '$mv'" >&2; exit 1; }
echo "check-headers: ok"
