#!/bin/sh
# check-symbols.sh LIB.a... [--exports LIBPTW.so LIST] - fails on any global
# symbol without the ptw_ prefix; with --exports, also unless the shared
# library exports exactly the symbols LIST names (tools/libptw.symbols).
# SPDX-License-Identifier: Apache-2.0
libs=""
so=""
list=""
while [ $# -gt 0 ]; do
	case "$1" in
	--exports) so=$2; list=$3; shift 3 ;;
	*) libs="$libs $1"; shift ;;
	esac
done
# shellcheck disable=SC2086
bad=$(for lib in $libs; do nm -g --defined-only "$lib" 2>/dev/null; done |
	awk 'NF==3 {print $3}' | grep -v '^ptw_' | sort -u)
if [ -n "$bad" ]; then
	echo "check-symbols: global symbols without ptw_ prefix:" >&2
	echo "$bad" >&2
	exit 1
fi
if [ -n "$so" ]; then
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	nm -D --defined-only "$so" | awk 'NF == 3 && $1 != "" {print $3}' |
		sed 's/@.*//' | grep -v '^PTW_' | sort -u > "$t/have"
	grep -v '^#' "$list" | sort -u > "$t/want"
	if ! cmp -s "$t/have" "$t/want"; then
		echo "check-symbols: $so exports differ from $list (< exported, > listed):" >&2
		diff "$t/have" "$t/want" | grep '^[<>]' >&2
		exit 1
	fi
fi
echo "check-symbols: ok"
