#!/bin/sh
# test-cross.sh BUILDDIR ARCH [SUITE...] - builds ptw for ARCH (aarch64,
# s390x) with Debian's cross gcc into BUILDDIR/ARCH (./configure
# cross-ARCH, against the libraries tools/cross-sysroot.sh unpacks) and
# runs its test suites (the SUITEs named, else the lists below) under
# qemu-user, with PTW_TEST_SCALE=small, each killed after 5 minutes. What
# is missing is installed as root on Debian (tools/install-deps.sh
# cross-ARCH); otherwise the run is skipped with one line saying what is
# missing, and the exit status is 0.
#
# Which suites: qemu-user is slow, so each architecture runs what it
# tests that x86-64 does not. On aarch64, the weakly ordered memory (the
# rings and the tracer's threads) and the generic timer: the CPU counter
# and its conversion (test_arch, and test_tracer_tight's exactness tests
# on the TSC path), the ring, the tracer, the writer, reader and corpus,
# and the frame-pointer walk of the _STACK macros (test_tracer_stack).
# On s390x, the big-endian host, the suites that read or write bytes of
# the wire formats (encoder, writer, reader, converters and corpus,
# ptw-dump) and the tracer's main suite; not the slow ones under
# emulation (test_tracer_tight and test_tracer_unload do not finish in
# 2 minutes, test_dump_flips runs ptw-dump thousands of times, and
# test_convert, 60 s, and test_writer_ctr, 27 s, pass but add little to
# the suites above for the byte order) nor
# test_tracer_fork (qemu-s390x aborts in the child of a multi-threaded
# fork).
# SPDX-License-Identifier: Apache-2.0
set -u
B=$1
A=$2
shift 2
AARCH64_SUITES="test_arch test_ring test_tracer test_tracer_tight
test_tracer_async test_tracer_threads test_pb test_seq_fast test_writer
test_writer_prep test_reader test_corpus test_tracer_stack"
S390X_SUITES="test_arch test_abi_sized test_pb test_pb_fields test_seq_fast
test_writer test_writer_callstack test_writer_check test_writer_deflate
test_writer_errors test_writer_finish test_writer_nested test_writer_prep
test_writer_random test_writer_utf8
test_writer_tracks test_reader test_reader_check test_reader_model
test_appletrace_bin test_appletrace_text test_chrome_json_parse
test_chrome_json_read test_corpus test_emit_fast
test_export_json test_export_roundtrip test_clock_stream
test_clock_stream_math test_clock_stream_store test_dump test_ring
test_tracer test_tracer_async test_tracer_cxx"
case "$A" in
aarch64) D=arm64
	[ $# -gt 0 ] || set -- $AARCH64_SUITES ;;
s390x) D=s390x
	[ $# -gt 0 ] || set -- $S390X_SUITES ;;
*) echo "test-cross: unknown architecture '$A' (aarch64|s390x)" >&2; exit 2 ;;
esac
T=$A-linux-gnu
X=$B/$A
start=$(date +%s)
if ! why=$(sh tools/install-deps.sh "cross-$A" 2>&1); then
	echo "test-cross-$A: skipped, missing: $(echo "$why" | awk '/Debian\/Ubuntu:/ {printf "%s ", $3}')(install them, or run make test as root on Debian)"
	exit 0
fi
if ! why=$(sh tools/cross-sysroot.sh "$D" "$(pwd)/$X/sysroot" 2>&1); then
	echo "test-cross-$A: skipped: $why"
	exit 0
fi
./configure "$X" "cross-$A" || exit 1
# the library, the programs (test_convert, test_corpus and test_dump run
# them) and the suites that run: not the benchmarks and examples
targets="lib tools"
for s in "$@"; do targets="$targets tests/$s"; done
# shellcheck disable=SC2086
nice ninja -C "$X" $targets >/dev/null || ninja -C "$X" $targets || exit 1
built=$(date +%s)
# -L: the cross libc's loader; LD_LIBRARY_PATH: its libc too, not the
# one of an installed libc6:arm64 of another version (with a mismatched
# pair, pthread_create and fork hang)
PTW_TEST_RUNNER="qemu-$A -L /usr/$T -E LD_LIBRARY_PATH=/usr/$T/lib" \
PTW_TEST_SCALE=small PTW_TEST_TIMEOUT=300 \
	sh tests/run.sh "$X" "$A" "$@"
rc=$?
echo "test-cross-$A: built in $((built - start)) s, tests ran in $(($(date +%s) - built)) s"
exit $rc
