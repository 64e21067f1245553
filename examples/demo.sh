#!/bin/sh
# demo.sh BUILDDIR - writes the demo traces and says how to open them.
# SPDX-License-Identifier: Apache-2.0
set -e
B=$1
out="$B/demo.pftrace"
# ptw-dump --check on a demo trace: silent unless it fails (a snapshot and a
# crash dump have slices open by nature: those notes are not shown).
check() { # check TRACE [OPTION]
	"$B/bin/ptw-dump" --check --strict $2 "$1" >/dev/null 2>"$B/demo-check.txt" ||
		{ cat "$B/demo-check.txt" >&2; echo "demo: $1 fails ptw-dump --check" >&2; exit 1; }
}
run() { # run BINARY OUTPUT WHAT
	if [ -x "$B/bin/$1" ]; then
		"$B/bin/$1" "$2"
		if [ -x "$B/bin/ptw-dump" ]; then
			check "$2"
		fi
		printf '  %-28s %s (%s bytes)\n' "$3" "$2" "$(wc -c < "$2")"
	fi
}
echo "ptw demo traces:"
run demo-threads "$B/demo-threads.pftrace" "multi-threaded tracer:"
run demo-cxx "$B/demo-cxx.pftrace" "tracer from C++:"
run demo-clocks "$B/demo-clocks.pftrace" "clock streams (3 domains):"
run demo "$out" "writer API, every feature:"
# The flight recorder: a snapshot of a wrapped ring, and a crash dump.
if [ -x "$B/bin/demo-flight" ]; then
	"$B/bin/demo-flight" "$B/demo-flight.pftrace" "$B/demo-crash.pftrace"
	for f in "$B/demo-flight.pftrace" "$B/demo-crash.pftrace"; do
		check "$f" --allow-open
	done
	printf '  %-28s %s (%s bytes)\n' "flight recorder snapshot:" \
		"$B/demo-flight.pftrace" "$(wc -c < "$B/demo-flight.pftrace")"
	printf '  %-28s %s (%s bytes)\n' "crash dump (SIGABRT):" \
		"$B/demo-crash.pftrace" "$(wc -c < "$B/demo-crash.pftrace")"
fi
# The converter on the legacy examples (examples/legacy/).
convert() { # convert INPUT OUTPUT WHAT
	if [ -x "$B/bin/ptw-convert" ]; then
		"$B/bin/ptw-convert" -q -o "$2" "$1"
		check "$2" --allow-open
		printf '  %-28s %s (%s bytes, from %s)\n' "$3" "$2" \
			"$(wc -c < "$2")" "$1"
	fi
}
convert examples/legacy/appletrace "$B/demo-appletrace.pftrace" \
	"AppleTrace fragments:"
convert examples/legacy/chrome.json "$B/demo-chrome.pftrace" \
	"Chrome JSON:"
cat <<TXT

Open a trace: drag the file onto https://ui.perfetto.dev (Open trace file).
Query it:     trace_processor_shell $out
              > select ts, dur, name, depth from slice order by ts limit 20;
Inspect it:   $B/bin/ptw-dump $out | less     ($B/bin/ptw-dump --check $out validates)
TXT
echo "$out"
