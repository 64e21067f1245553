#!/bin/sh
# run.sh BUILDDIR SECONDS [SEED] - runs each libFuzzer target for SECONDS
# from its seed corpus (fuzz/corpus/<target>/), into a scratch copy of the
# corpus. SEED 0 (default) is random; make test passes a fixed one so a
# failure it reports can be reproduced.
# SPDX-License-Identifier: Apache-2.0
B=$1
S=$2
SEED=${3:-0}
n=0
for f in "$B"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	work="$B/fuzz/work/$name"
	mkdir -p "$work"
	[ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$work/" 2>/dev/null
	echo "fuzz: $name for ${S}s"
	"$f" -seed="$SEED" -max_total_time="$S" -max_len=65536 -rss_limit_mb=2048 \
		-artifact_prefix="$B/fuzz/$name-" -print_final_stats=0 \
		"$work" > "$B/fuzz/$name.log" 2>&1 || {
		tail -n 40 "$B/fuzz/$name.log"
		echo "fuzz: $name found a problem (log: $B/fuzz/$name.log)" >&2
		exit 1
	}
	n=$((n + 1))
done
echo "fuzz: $n targets ran clean"
