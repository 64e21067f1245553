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
# Which suites: on aarch64, every suite (the weakly ordered memory of
# the rings and the tracer's threads, the generic timer, the frame-pointer
# walk, and the rest as on x86-64). On s390x, the big-endian host, the
# suites that read or write bytes of the wire formats (encoder, writer,
# reader, converters and corpus, ptw-dump) and the tracer's. The suites
# run two at a time (the Criterion stand-in runs one test at a time).
#
# What qemu-user cannot do is skipped with the reason, by the tests
# themselves: qemu-user 7.2 aborts when the child of a fork() taken while
# other threads ran starts a thread (a plain program shows it:
# tests/cross/threaded_fork.c, run first; when it fails, the tests that
# need it skip, PTW_TEST_NO_THREAD_AFTER_FORK); /proc's signal mask of a
# thread is the emulator's, whose real-time signals have other numbers
# (test_tracer_signals leaves SIGRTMIN's bit unchecked); no seccomp
# filter can be installed (two tests of test_sink skip). The programs a
# test runs with system() or popen() (the shell, trace_processor_shell,
# tracebox) are x86-64 ones and run natively: qemu-user's execve() hands
# them to the kernel. The lines say how many tests skipped, and the
# stand-in's output of a failing suite says why each did.
# SPDX-License-Identifier: Apache-2.0
set -u
B=$1
A=$2
shift 2
S390X_SUITES="test_arch test_abi_sized test_pb test_pb_fields test_seq_fast
test_writer test_writer_callstack test_writer_check test_writer_deflate
test_writer_errors test_writer_finish test_writer_nested test_writer_prep
test_writer_random test_writer_utf8
test_writer_tracks test_reader test_reader_check test_reader_model
test_appletrace_bin test_appletrace_text test_chrome_json_parse
test_chrome_json_read test_corpus test_emit_fast
test_export_json test_export_roundtrip test_clock_stream
test_clock_stream_math test_clock_stream_store test_dump test_ring
test_tracer test_tracer_async test_tracer_cxx test_tracer_tight
test_tracer_unload test_dump_flips test_tracer_fork test_convert
test_writer_ctr"
case "$A" in
aarch64) D=arm64
	if [ $# -eq 0 ]; then
		for f in tests/test_*.c tests/test_*.cc; do
			f=${f##*/}
			case "${f%%.*}" in
			# the real service's suites: natively only (under
			# qemu a session once did not start within 10 s)
			test_system|test_system_multi) continue ;;
			esac
			set -- "$@" "${f%%.*}"
		done
		echo "test-cross-$A: test_system and test_system_multi (the real tracebox) run natively only" 
	fi ;;
s390x) D=s390x
	# shellcheck disable=SC2086
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
# qemu-user's known limits, probed with plain programs
why=""
if "$T-gcc" -std=c11 -D_GNU_SOURCE -O2 -pthread tests/cross/threaded_fork.c \
	-o "$X/threaded_fork" && ! "qemu-$A" -L "/usr/$T" -E "LD_LIBRARY_PATH=/usr/$T/lib" \
	"$X/threaded_fork" >/dev/null 2>&1; then
	why="qemu-$A cannot start a thread in the child of a multi-threaded fork (tests/cross/threaded_fork.c)"
	echo "test-cross-$A: $why: the tests that need it skip"
fi
# -L: the cross libc's loader; LD_LIBRARY_PATH: its libc too, not the
# one of an installed libc6:arm64 of another version (with a mismatched
# pair, pthread_create and fork hang)
PTW_TEST_RUNNER="qemu-$A -L /usr/$T -E LD_LIBRARY_PATH=/usr/$T/lib" \
PTW_TEST_SCALE=small PTW_TEST_TIMEOUT=300 PTW_TEST_PARALLEL=2 \
PTW_TEST_NO_THREAD_AFTER_FORK=$why \
	sh tests/run.sh "$X" "$A" "$@"
rc=$?
echo "test-cross-$A: built in $((built - start)) s, tests ran in $(($(date +%s) - built)) s"
exit $rc
