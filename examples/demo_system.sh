#!/bin/sh
# demo_system.sh BUILD_DIR - records a Perfetto system trace in which
# demo-system (a program in ptw's system mode) logs beside the kernel's
# process data (and the scheduler where tracefs allows), with a private
# tracing service: tracebox from ../shared/tp or PATH, or traced +
# traced_probes + perfetto on PATH. Without one it says so and skips.
# SPDX-License-Identifier: Apache-2.0
set -u
B=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
tb=""
for c in "${PTW_SHARED_DIR:-$here/../shared}/tp/tracebox" "$(command -v tracebox 2>/dev/null)"; do
	if [ -n "$c" ] && [ -x "$c" ]; then tb=$c; break; fi
done
if [ -n "$tb" ]; then
	traced="$tb traced"; probes="$tb traced_probes"; perfetto="$tb perfetto"
elif command -v traced >/dev/null && command -v perfetto >/dev/null; then
	traced=traced; probes=traced_probes; perfetto=perfetto
else
	echo "demo-system: no Perfetto tracing service (tracebox, or traced and perfetto, on PATH): skipped"
	exit 0
fi
d=$(mktemp -d)
export PERFETTO_PRODUCER_SOCK_NAME=$d/producer.sock PERFETTO_CONSUMER_SOCK_NAME=$d/consumer.sock
$traced > "$d/traced.log" 2>&1 & tpid=$!
$probes > "$d/probes.log" 2>&1 & ppid=$!
i=0
while [ ! -S "$d/producer.sock" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
sched=""
if [ "$(id -u)" = 0 ] && { [ -d /sys/kernel/tracing/events ] || [ -d /sys/kernel/debug/tracing/events ]; }; then
	sched='data_sources { config { name: "linux.ftrace" ftrace_config { ftrace_events: "sched/sched_switch" } } }'
fi
cat > "$d/cfg.txt" <<CFG
buffers { size_kb: 16384 }
data_sources { config { name: "track_event" track_event_config { enabled_categories: "demo" enabled_categories: "io" disabled_categories: "*" } } }
data_sources { config { name: "linux.process_stats" process_stats_config { scan_all_processes_on_start: true } } }
$sched
duration_ms: 3000
CFG
out="$B/demo-system.pftrace"
"$B/bin/demo-system" 5 & dpid=$!
$perfetto --txt -c "$d/cfg.txt" -o "$out" > "$d/perfetto.log" 2>&1
rc=$?
wait $dpid
kill $ppid $tpid 2>/dev/null
wait $ppid $tpid 2>/dev/null
if [ $rc -ne 0 ]; then
	echo "demo-system: perfetto failed:"; cat "$d/perfetto.log"; rm -rf "$d"; exit 1
fi
rm -rf "$d"
printf '  %-28s %s (%s bytes)\n' "system trace (traced):" "$out" "$(wc -c < "$out")"
cat <<TXT

The system trace holds demo-system's slices (categories demo and io) beside
linux.process_stats${sched:+ and the scheduler}. Open it: drag $out onto
https://ui.perfetto.dev, or: trace_processor_shell $out
TXT
