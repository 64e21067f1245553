#!/bin/sh
# cross-sysroot.sh DEBARCH DIR - the libraries ptw and its tests link
# (libdeflate, libzstd, zlib, protobuf-c, json-c), for Debian architecture
# DEBARCH (arm64, s390x), unpacked into DIR (DIR/usr/include,
# DIR/usr/lib/TRIPLE): what ./configure's cross variants compile and link
# against, and what the cross-built programs load under qemu-user.
#
# The packages are fetched with `apt-get download` and unpacked with
# `dpkg -x`, not installed as multiarch packages: those must have the very
# version of the host's, and Debian 12's security updates (zlib1g,
# libzstd1) are not built for s390x. apt needs to know DEBARCH's packages
# (`dpkg --add-architecture DEBARCH && apt-get update`): done here when
# running as root on Debian; otherwise the exit status is 1 with a message.
# Nothing is fetched when DIR is already complete.
# SPDX-License-Identifier: Apache-2.0
set -eu
A=$1
S=$2
PKGS="libdeflate0 libdeflate-dev libzstd1 libzstd-dev zlib1g zlib1g-dev
libprotobuf-c1 libprotobuf-c-dev libjson-c5 libjson-c-dev"
[ -f "$S/.complete" ] && exit 0

if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
	echo "cross-sysroot: needs Debian's apt-get and dpkg to fetch the $A libraries" >&2
	exit 1
fi
if ! dpkg --print-foreign-architectures | grep -qx "$A"; then
	if [ "$(id -u)" != 0 ]; then
		echo "cross-sysroot: apt does not list $A packages; as root: dpkg --add-architecture $A && apt-get update" >&2
		exit 1
	fi
	dpkg --add-architecture "$A"
	apt-get update -qq >/dev/null
fi
rm -rf "$S"
mkdir -p "$S/debs"
list=""
for p in $PKGS; do list="$list $p:$A"; done
# shellcheck disable=SC2086
(cd "$S/debs" && apt-get download -qq $list >/dev/null 2>&1) || {
	# the lists may be stale (a new point release removed the version)
	[ "$(id -u)" = 0 ] && apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	(cd "$S/debs" && apt-get download -qq $list >/dev/null)
} || { echo "cross-sysroot: apt-get download failed for:$list" >&2; exit 1; }
for d in "$S"/debs/*.deb; do
	dpkg -x "$d" "$S"
done
rm -rf "$S/debs"
# absolute links (libz.so -> /lib/...) point into the sysroot
find "$S" -type l | while read -r l; do
	t=$(readlink "$l")
	case "$t" in /*) ln -sf "$S$t" "$l" ;; esac
done
touch "$S/.complete"
