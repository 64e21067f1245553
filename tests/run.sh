#!/bin/sh
# run.sh BUILDDIR VARIANT [SUITE...] - runs every Criterion suite built in
# BUILDDIR/tests (or the SUITEs named, as test_writer), sums Criterion's
# synthesis lines and prints "N passed, N failed". With PTW_TEST_RUNNER
# set (as "qemu-aarch64 -L /usr/aarch64-linux-gnu"), each suite is run by
# it (a cross build: tools/test-cross.sh), and killed after
# PTW_TEST_TIMEOUT seconds if set.
# SPDX-License-Identifier: Apache-2.0
B=$1
V=$2
shift 2
suites=""
for s in "$@"; do suites="$suites $B/tests/$s"; done
pass=0
fail=0
bad=""
for t in ${suites:-"$B"/tests/test_*}; do
	[ -x "$t" ] || continue
	# shellcheck disable=SC2086
	out=$(${PTW_TEST_TIMEOUT:+timeout -s KILL $PTW_TEST_TIMEOUT} ${PTW_TEST_RUNNER:-} "$t" --jobs=2 2>&1)
	rc=$?
	syn=$(printf '%s\n' "$out" | grep 'Synthesis:' | tail -n 1)
	p=$(printf '%s\n' "$syn" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
	f=$(printf '%s\n' "$syn" | sed -n 's/.*Failing: \([0-9]*\).*Crashing: \([0-9]*\).*/\1 \2/p')
	p=${p:-0}
	set -- $f
	nf=$(( ${1:-0} + ${2:-0} ))
	if [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ]; then nf=1; fi
	pass=$((pass + p))
	fail=$((fail + nf))
	if [ "$nf" -ne 0 ]; then
		bad="$bad $(basename "$t")"
		printf '%s\n' "$out" | tail -n 60
	fi
	echo "[$V] $(basename "$t"): $p passed, $nf failed"
done
echo "$V: $pass passed, $fail failed"
[ -n "${PTW_TEST_SUMMARY:-}" ] && echo "$V $pass $fail" >> "$PTW_TEST_SUMMARY"
[ "$fail" -eq 0 ] || { echo "failing suites ($V):$bad" >&2; exit 1; }
