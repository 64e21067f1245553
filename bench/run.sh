#!/bin/sh
# run.sh BUILDDIR - runs every benchmark; each prints "name value unit" lines.
# SPDX-License-Identifier: Apache-2.0
B=$1
rc=0
for b in "$B"/bin/bench_*; do
	[ -x "$b" ] || continue
	echo "# $(basename "$b")"
	"$b" || { echo "bench: $(basename "$b") failed" >&2; rc=1; }
done
exit $rc
