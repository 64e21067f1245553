#!/bin/sh
# check-man.sh BINDIR - every option the programs list in --help appears in
# their man page (docs/man/NAME.1), and the pages name the version.
# SPDX-License-Identifier: Apache-2.0
set -eu
bin=$1
bad=0
for p in ptw-convert ptw-dump; do
	page=docs/man/$p.1
	# the page's text with roff's escaped dashes and font changes undone
	text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$page")
	opts=$("$bin/$p" --help | grep -oE -- '(^|[ ,[])--?[a-zA-Z][a-zA-Z-]*' |
		sed 's/^[ ,[]//' | sort -u)
	[ -n "$opts" ] || { echo "check-man: $p --help lists no options" >&2; exit 1; }
	for o in $opts; do
		if ! printf '%s\n' "$text" | grep -qE -- "(^|[^a-zA-Z-])$o([^a-zA-Z-]|\$)"; then
			echo "check-man: $page lacks $o (listed by $p --help)" >&2
			bad=1
		fi
	done
	grep -q '@VERSION@' "$page" ||
		{ echo "check-man: $page: .TH must say ptw @VERSION@" >&2; bad=1; }
done
[ "$bad" -eq 0 ] || exit 1
echo "check-man: ok"
