#!/bin/sh
# check-symbols.sh LIB.a... - fails on any global symbol without the ptw_ prefix.
# SPDX-License-Identifier: Apache-2.0
bad=$(for lib in "$@"; do nm -g --defined-only "$lib" 2>/dev/null; done |
	awk 'NF==3 {print $3}' | grep -v '^ptw_' | sort -u)
if [ -n "$bad" ]; then
	echo "check-symbols: global symbols without ptw_ prefix:" >&2
	echo "$bad" >&2
	exit 1
fi
echo "check-symbols: ok"
