#!/bin/sh
# install-deps.sh [--optional WHAT] PART... - checks that what each PART of
# the build needs is installed, by looking for the command or the
# pkg-config module itself (so on any distribution):
#   lib       the library: a C compiler, Ninja, pkg-config, binutils,
#             libdeflate, libzstd
#   tools     ptw-convert and ptw-dump: zlib
#   protobuf  the trace reader inside ptw-convert and ptw-dump: protobuf-c
#             (library and protoc-c)
#   cxx       the C++ example and tests: a C++ compiler
#   test      the tests: clang with its sanitizer runtimes, Criterion,
#             json-c, CMake
#   cross-aarch64, cross-s390x
#             the cross builds make test runs under qemu-user
#             (tools/test-cross.sh): the cross gcc and g++, qemu-user
# What is missing is installed with apt-get when running as root on Debian
# or Ubuntu; otherwise one message names it with its Debian/Ubuntu, Fedora
# and Arch package, and the exit status is 1. With --optional WHAT the
# message says that WHAT is not built (the caller builds without it).
# SPDX-License-Identifier: Apache-2.0
set -u
optional=""
if [ "${1:-}" = --optional ]; then
	optional=$2
	shift 2
fi

# PART NAME CHECK DEBIAN FEDORA ARCH ("-": that distribution has no
# package; build it from its sources). The library packages' names were
# checked in each distribution's package index (README, "Building without
# root / on other distributions").
table() {
	cat <<EOF
lib      C-compiler    cmd:${CC:-gcc}    gcc                 gcc                 gcc
lib      ninja         cmd:ninja         ninja-build         ninja-build         ninja
lib      pkg-config    cmd:pkg-config    pkg-config          pkgconf-pkg-config  pkgconf
lib      binutils      cmd:nm            binutils            binutils            binutils
lib      libdeflate    pc:libdeflate     libdeflate-dev      libdeflate-devel    libdeflate
lib      libzstd       pc:libzstd        libzstd-dev         libzstd-devel       zstd
tools    zlib          pc:zlib           zlib1g-dev          zlib-devel          zlib
protobuf protobuf-c    pc:libprotobuf-c  libprotobuf-c-dev   protobuf-c-devel    protobuf-c
protobuf protoc-c      cmd:protoc-c      protobuf-c-compiler protobuf-c-compiler protobuf-c
cxx      C++-compiler  cmd:${CXX:-g++}   g++                 gcc-c++             gcc
test     clang         cmd:clang         clang               clang               clang
test     clang-rt      asan:clang        libclang-rt-14-dev  compiler-rt         compiler-rt
test     criterion     pc:criterion      libcriterion-dev    -                   criterion
test     json-c        pc:json-c         libjson-c-dev       json-c-devel        json-c
test     cmake         cmd:cmake         cmake               cmake               cmake
cross-aarch64 aarch64-gcc cmd:aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu gcc-aarch64-linux-gnu aarch64-linux-gnu-gcc
cross-aarch64 aarch64-g++ cmd:aarch64-linux-gnu-g++ g++-aarch64-linux-gnu gcc-c++-aarch64-linux-gnu aarch64-linux-gnu-gcc
cross-aarch64 qemu-aarch64 cmd:qemu-aarch64 qemu-user qemu-user qemu-user
cross-s390x s390x-gcc  cmd:s390x-linux-gnu-gcc gcc-s390x-linux-gnu gcc-s390x-linux-gnu -
cross-s390x s390x-g++  cmd:s390x-linux-gnu-g++ g++-s390x-linux-gnu gcc-c++-s390x-linux-gnu -
cross-s390x qemu-s390x cmd:qemu-s390x  qemu-user           qemu-user           qemu-user
EOF
}

have() { # have CHECK
	case "$1" in
	cmd:*) command -v "${1#cmd:}" >/dev/null 2>&1 ;;
	pc:*) pkg-config --exists "${1#pc:}" 2>/dev/null ;;
	asan:*) command -v "${1#asan:}" >/dev/null 2>&1 &&
		echo 'int main(void) { return 0; }' |
		"${1#asan:}" -fsanitize=address,undefined -x c - -o /dev/null 2>/dev/null ;;
	esac
}

missing() { # the table lines of PARTS ($@) whose check fails
	table | while read -r part name check deb fed arch; do
		for p in "$@"; do
			[ "$p" = "$part" ] && ! have "$check" &&
				echo "$name $deb $fed $arch"
		done
	done
}

miss=$(missing "$@")
[ -z "$miss" ] && exit 0

if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ] && command -v apt-get >/dev/null; then
	debs=$(echo "$miss" | awk '{print $2}' | sort -u | tr '\n' ' ')
	echo "installing: $debs"
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	apt-get update -qq >/dev/null && apt-get install -y -qq $debs >/dev/null ||
		echo "apt-get install failed for: $debs" >&2
	miss=$(missing "$@")
	[ -z "$miss" ] && exit 0
fi

{
	if [ -n "$optional" ]; then
		echo "note: $optional not built; missing:"
	else
		echo "error: the build needs what is not installed:"
	fi
	echo "$miss" | awk '{for (i = 2; i <= 4; i++) if ($i == "-") $i = "(none: from source)"
		printf "  %-13s Debian/Ubuntu: %-20s Fedora: %-20s Arch: %s\n", $1, $2, $3, $4}'
	# the install commands, without what has no package
	pk() { echo "$miss" | awk -v c="$1" '$c != "-" {print $c}' | sort -u | sed 's/^/ /' | tr -d '\n'; }
	printf '  (apt-get install%s, dnf install%s, pacman -S%s)\n' "$(pk 2)" "$(pk 3)" "$(pk 4)"
} >&2
exit 1
