#!/bin/sh
# run.sh BUILDDIR VARIANT [SUITE...] - runs every Criterion suite built in
# BUILDDIR/tests (or the SUITEs named, as test_writer), sums Criterion's
# synthesis lines and prints "N passed, N failed". With PTW_TEST_RUNNER
# set (as "qemu-aarch64 -L /usr/aarch64-linux-gnu"), each suite is run by
# it (a cross build: tools/test-cross.sh), and killed after
# PTW_TEST_TIMEOUT seconds if set. With PTW_TEST_PARALLEL=N (N > 1), N
# suites run at a time (for the Criterion stand-in, which runs one test
# at a time); their lines print in the same order once all have run.
# SPDX-License-Identifier: Apache-2.0

# run.sh --one DIR SUITE: runs one suite; DIR/NAME.out gets its output,
# DIR/NAME.res "PASSED FAILED SKIPPED" (a suite that exits non-zero with no
# test failed counts one failure; skipped tests, among the passed, are
# counted when the Criterion stand-in names them: "[SKIP] ...").
if [ "$1" = --one ]; then
	o=$2/$(basename "$3")
	# shellcheck disable=SC2086
	${PTW_TEST_TIMEOUT:+timeout -s KILL $PTW_TEST_TIMEOUT} ${PTW_TEST_RUNNER:-} "$3" --jobs=2 >"$o.out" 2>&1
	rc=$?
	syn=$(grep 'Synthesis:' "$o.out" | tail -n 1)
	p=$(printf '%s\n' "$syn" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
	f=$(printf '%s\n' "$syn" | sed -n 's/.*Failing: \([0-9]*\).*Crashing: \([0-9]*\).*/\1 \2/p')
	# shellcheck disable=SC2086
	set -- $f
	nf=$(( ${1:-0} + ${2:-0} ))
	if [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ]; then nf=1; fi
	sk=$(grep -c '^\[SKIP\]' "$o.out")
	echo "${p:-0} $nf $sk" >"$o.res"
	exit 0
fi

B=$1
V=$2
shift 2
if [ $# -eq 0 ]; then
	for t in "$B"/tests/test_*; do set -- "$@" "${t##*/}"; done
fi
suites=""
for s in "$@"; do [ -x "$B/tests/$s" ] && suites="$suites $B/tests/$s"; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ptw-run.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
par=${PTW_TEST_PARALLEL:-1}
if [ "$par" -gt 1 ]; then
	# shellcheck disable=SC2086
	printf '%s\n' $suites | xargs -P "$par" -n 1 sh "$0" --one "$tmp"
fi
pass=0
fail=0
bad=""
for t in $suites; do
	n=$(basename "$t")
	[ "$par" -gt 1 ] || sh "$0" --one "$tmp" "$t"
	read -r p nf sk <"$tmp/$n.res"
	pass=$((pass + p))
	fail=$((fail + nf))
	if [ "$nf" -ne 0 ]; then
		bad="$bad $n"
		tail -n 60 "$tmp/$n.out"
	fi
	[ "$sk" -eq 0 ] && skipped="" || skipped=" ($sk skipped)"
	echo "[$V] $n: $p passed$skipped, $nf failed"
done
echo "$V: $pass passed, $fail failed"
[ -n "${PTW_TEST_SUMMARY:-}" ] && echo "$V $pass $fail" >> "$PTW_TEST_SUMMARY"
[ "$fail" -eq 0 ] || { echo "failing suites ($V):$bad" >&2; exit 1; }
