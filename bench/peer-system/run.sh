#!/bin/sh
# run.sh - the system-mode side-by-side: ptw (cfg.system) and the Perfetto
# SDK (kSystemBackend) run the same workload (workload.h) as producers of
# one private tracing service (tracebox traced on sockets in a temp dir),
# each recorded by the same TraceConfig, alternately, ROUNDS times; prints
# every run and the medians: producer CPU ns/event (the producer threads'
# CPU over their loop), whole-process CPU ns/event (from the loop's start
# until the session has ended: every thread of the library that carried
# the events into the service), trace bytes/event, events lost (BEGIN/END
# pairs missing from trace_processor's slice table, and its data-loss and
# error stats), and the service's (traced's) CPU ns/event over the run. Not part of make test or CI (the SDK is no dependency).
#
#   sh bench/peer-system/run.sh [BUILD_DIR]        # after make lib
#
# Environment:
#   SDK_BENCH  bench_sdk_system built against your SDK copy (see
#              bench_sdk_system.cc); unset: ptw's half only
#   ROUNDS (3), EVENTS per thread (4000000), VARIANT a|b|c (a),
#   SMB_KB (32768), KEEP=1 keeps the traces (in the temp dir it names),
#   PTW_CLOCK boot|tsc (boot): ptw's producers read CLOCK_BOOTTIME or the
#   CPU's counter (converted to BOOTTIME by ptw's backend)
#   tracebox and trace_processor_shell: from $PTW_SHARED_DIR/tp (else
#   ../shared/tp), else PATH
# SPDX-License-Identifier: Apache-2.0
set -u
B=${1:-build}
here=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${ROUNDS:-3}
EVENTS=${EVENTS:-4000000}
VARIANT=${VARIANT:-a}
SMB_KB=${SMB_KB:-32768}
SDK_BENCH=${SDK_BENCH:-}
PTW_CLOCK=${PTW_CLOCK:-boot}
tp_dir=${PTW_SHARED_DIR:-$here/../shared}/tp

find_tool() {
	if [ -x "$tp_dir/$1" ]; then echo "$tp_dir/$1"; else command -v "$1" 2>/dev/null; fi
}
tb=$(find_tool tracebox)
tps=$(find_tool trace_processor_shell)
if [ -z "$tb" ] || [ -z "$tps" ]; then
	echo "peer-system: needs tracebox and trace_processor_shell ($tp_dir or PATH)" >&2
	exit 1
fi
if [ ! -f "$B/lib/libptw.a" ]; then
	echo "peer-system: no $B/lib/libptw.a (make lib first)" >&2
	exit 1
fi
if [ -n "$SDK_BENCH" ] && [ ! -x "$SDK_BENCH" ]; then
	echo "peer-system: SDK_BENCH=$SDK_BENCH is not an executable" >&2
	exit 1
fi
ptw_bench=$B/bench_ptw_system
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -I"$here" -I"$here/include" -I"$here/bench/peer-system" \
	-o "$ptw_bench" "$here/bench/peer-system/bench_ptw_system.c" "$B/lib/libptw.a" \
	-ldeflate -lzstd -lpthread -lm || exit 1

d=$(mktemp -d /tmp/ptw_peer_system_XXXXXX)
export PERFETTO_PRODUCER_SOCK_NAME=$d/producer.sock PERFETTO_CONSUMER_SOCK_NAME=$d/consumer.sock
"$tb" traced > "$d/traced.log" 2>&1 & traced_pid=$!
cleanup() {
	kill "$traced_pid" 2>/dev/null
	wait "$traced_pid" 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then echo "traces kept in $d"; else rm -rf "$d"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
i=0
while [ ! -S "$d/producer.sock" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done

nthreads=1
[ "$VARIANT" = c ] && nthreads=2
total=$((EVENTS * nthreads))
# room for every event at 40 bytes, so that the service's buffer never
# fills (DISCARD: a loss would show in the stats, not be overwritten)
buf_kb=$((total * 40 / 1024 + 16384))
cat > "$d/cfg.txt" <<CFG
buffers { size_kb: $buf_kb fill_policy: DISCARD }
data_sources { config { name: "track_event"
    track_event_config { disabled_categories: "*" enabled_categories: "bench" enabled_categories: "warmup" } } }
duration_ms: 600000
CFG

# field NAME JSON: a number's value in a one-line JSON object
field() { printf '%s\n' "$2" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
# sum of every "cpu_ns" (or "wall_ns") of the threads array
tsum() { printf '%s\n' "$2" | sed 's/.*"threads":\[\([^]]*\)\].*/\1/' |
	tr ',{}' '\n\n\n' | sed -n "s/\"$1\":\([0-9]*\)/\1/p" | awk '{s += $1} END {print s}'; }

# the service's CPU time so far, clock ticks (utime + stime)
traced_ticks() { sed 's/.*) //' "/proc/$traced_pid/stat" | awk '{print $12 + $13}'; }
hz=$(getconf CLK_TCK)

# run LIB PROGRAM: one recorded run; appends a result row to $d/rows
run() {
	lib=$1 prog=$2 out=$d/$1.$r.pftrace
	t0=$(traced_ticks)
	rm -f "$out" "$d/prog.err"
	"$tb" perfetto --txt -c "$d/cfg.txt" -o "$out" > "$d/perfetto.log" 2>&1 & pf=$!
	"$prog" "$VARIANT" "$EVENTS" smb_kb="$SMB_KB" clock="$PTW_CLOCK" > "$d/prog.out" 2> "$d/prog.err" & pid=$!
	i=0
	while ! grep -q workload-done "$d/prog.err" 2>/dev/null; do
		if ! kill -0 "$pid" 2>/dev/null || [ $i -ge 3000 ]; then
			echo "peer-system: $lib did not finish its workload:" >&2
			cat "$d/prog.err" "$d/perfetto.log" >&2
			kill "$pid" "$pf" 2>/dev/null
			exit 1
		fi
		sleep 0.05; i=$((i + 1))
	done
	kill -INT "$pf"          # perfetto stops the session: flush, then the trace
	wait "$pf"
	wait "$pid" || { echo "peer-system: $lib failed:" >&2; cat "$d/prog.err" >&2; exit 1; }
	t1=$(traced_ticks)
	line=$(cat "$d/prog.out")
	slices=$("$tps" -Q "select 'N=' || count(*) as n from slice where category = 'bench'" "$out" 2>/dev/null |
		sed -n 's/.*N=\([0-9]*\).*/\1/p')
	stats=$("$tps" -Q "select 'S=' || name || '[' || idx || ']=' || value as s from stats
		where value > 0 and severity in ('error', 'data_loss')" "$out" 2>/dev/null |
		sed -n 's/.*S=\([^ ]*\).*/\1/p' | tr '\n' ' ')
	bytes=$(wc -c < "$out")
	cpu=$(tsum cpu_ns "$line")
	wall=$(tsum wall_ns "$line")
	proc=$(field proc_cpu_ns "$line")
	lost=$((total - 2 * ${slices:-0}))
	awk -v lib="$lib" -v r="$r" -v n="$total" -v cpu="$cpu" -v wall="$wall" -v proc="$proc" \
		-v bytes="$bytes" -v lost="$lost" -v stats="${stats:-none}" \
		-v traced="$(( (t1 - t0) * 1000000000 / hz ))" 'BEGIN {
		printf "%s %d %.2f %.2f %.2f %.3f %d %.1f %s\n", lib, r, cpu / n, wall / n,
			proc / n, bytes / n, lost, traced / n, stats }' >> "$d/rows"
	tail -n 1 "$d/rows"
	[ "${KEEP:-0}" = 1 ] || rm -f "$out"
}

echo "variant $VARIANT, $EVENTS events per thread, $nthreads thread(s), $ROUNDS rounds, shared memory $SMB_KB KiB"
[ -n "$SDK_BENCH" ] || echo "(SDK_BENCH unset: ptw only)"
echo "lib round producer_cpu_ns/ev producer_wall_ns/ev process_cpu_ns/ev bytes/ev events_lost traced_cpu_ns/ev loss_stats"
: > "$d/rows"
r=1
while [ $r -le "$ROUNDS" ]; do
	# alternate which goes first
	if [ -n "$SDK_BENCH" ] && [ $((r % 2)) -eq 0 ]; then run sdk "$SDK_BENCH"; fi
	run ptw "$ptw_bench"
	if [ -n "$SDK_BENCH" ] && [ $((r % 2)) -eq 1 ]; then run sdk "$SDK_BENCH"; fi
	r=$((r + 1))
done

echo "medians:"
echo "lib producer_cpu_ns/ev producer_wall_ns/ev process_cpu_ns/ev bytes/ev events_lost(max) traced_cpu_ns/ev"
for lib in ptw sdk; do
	grep -q "^$lib " "$d/rows" || continue
	med() { grep "^$lib " "$d/rows" | awk -v c="$1" '{print $c}' | sort -g |
		awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
	lmax=$(grep "^$lib " "$d/rows" | awk 'BEGIN {m = 0} $7 > m {m = $7} END {print m}')
	echo "$lib $(med 3) $(med 4) $(med 5) $(med 6) $lmax $(med 8)"
done
