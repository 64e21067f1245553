#!/bin/sh
# check-nonroot.sh BUILDDIR - the README's "Building without root": a user
# who is not root, with only a C compiler, Ninja, pkg-config, libdeflate,
# libzstd and zlib, runs `make && make install PREFIX=$HOME/.local` in a
# copy of the source tree, then builds the README's C examples against that
# with pkg-config and runs them; BUILDDIR's ptw-dump --check accepts their
# traces. First, without libdeflate, `make` must stop with one message
# naming its package on Debian/Ubuntu, Fedora and Arch.
# The user is a throwaway one (useradd), so this needs root and skips
# otherwise. This machine's other packages are hidden from that user, not
# removed: its PATH holds links to every program but protoc-c, CMake,
# clang and git, and its pkg-config sees only libdeflate, libzstd and zlib
# (headers in /usr/include stay visible; the NEEDED check below catches a
# library linking what it should not).
# SPDX-License-Identifier: Apache-2.0
set -eu
B=$1
if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v runuser >/dev/null; then
	echo "check-nonroot: skipped (needs root, useradd and runuser for a throwaway user)"
	exit 0
fi
root=$(pwd)
fail() { echo "check-nonroot: $*" >&2; exit 1; }
d=$(mktemp -d)
chmod 755 "$d"
user=ptwcheck$$
trap 'userdel "$user" 2>/dev/null; rm -rf "$d"' EXIT
useradd -M -d "$d/home" -s /bin/sh "$user" || fail "useradd failed"
mkdir -p "$d/home/ptw" "$d/bin" "$d/pc" "$d/pc-nodeflate"

# the source tree as a clone has it (tracked and new files, no build output)
if git -C "$root" rev-parse >/dev/null 2>&1; then
	git -C "$root" ls-files -co --exclude-standard |
		while IFS= read -r f; do [ -e "$root/$f" ] && echo "$f"; done |
		tar -C "$root" -cf - -T -
else
	tar -C "$root" --exclude="./$B" --exclude=./.git -cf - .
fi | tar -C "$d/home/ptw" -xf -
sh tools/readme-example.sh "## Writing a trace with the writer API" c > "$d/home/writer.c"
sh tools/readme-example.sh "## Instrumenting a multi-threaded program" c > "$d/home/tracer.c"
chown -R "$user" "$d/home"

for f in /usr/local/bin/* /usr/bin/*; do
	n=${f##*/}
	case "$n" in protoc*|cmake|ctest|cpack|clang*|git*) continue ;; esac
	[ -e "$d/bin/$n" ] || ln -s "$f" "$d/bin/$n"
done
for m in libdeflate libzstd zlib; do
	pc="$(pkg-config --variable pcfiledir $m)/$m.pc"
	ln -s "$pc" "$d/pc/$m.pc"
	[ $m = libdeflate ] || ln -s "$pc" "$d/pc-nodeflate/$m.pc"
done

as_user() { # as_user PKG_CONFIG_LIBDIR COMMAND: in ~/ptw, with a clean environment
	runuser -u "$user" -- env -i HOME="$d/home" PATH="$d/bin" LANG=C.UTF-8 \
		PKG_CONFIG_LIBDIR="$1" sh -c "cd \$HOME/ptw && $2"
}

# without libdeflate: one message naming it, nothing built
if as_user "$d/pc-nodeflate" "make" >"$d/nodeflate.log" 2>&1; then
	cat "$d/nodeflate.log" >&2; fail "make without libdeflate succeeded"
fi
grep -q 'libdeflate .*Debian/Ubuntu: libdeflate-dev .*Fedora: libdeflate-devel .*Arch: libdeflate' "$d/nodeflate.log" &&
	[ "$(grep -c 'Debian/Ubuntu:' "$d/nodeflate.log")" = 1 ] ||
	{ cat "$d/nodeflate.log" >&2; fail "make without libdeflate: not one message naming libdeflate's packages"; }
[ ! -e "$d/home/ptw/build/build.ninja" ] || fail "make without libdeflate configured the build"

# the README's way: make, make install into ~/.local, then an example
as_user "$d/pc" "make && make install PREFIX=\$HOME/.local" >"$d/make.log" 2>&1 ||
	{ cat "$d/make.log" >&2; fail "make && make install PREFIX=~/.local failed"; }
# protobuf-c is hidden: the programs are left out with a note naming it
grep -q 'protobuf-c .*Debian/Ubuntu: libprotobuf-c-dev' "$d/make.log" ||
	{ cat "$d/make.log" >&2; fail "no note that ptw-convert and ptw-dump need protobuf-c"; }
lib="$d/home/.local/lib"
[ -f "$lib/libptw.a" ] && [ -f "$d/home/.local/include/ptw/writer.h" ] ||
	fail "make install PREFIX=~/.local installed no library or headers"
needed=$(readelf -d "$lib/libptw.so" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')
for n in $needed; do
	case "$n" in libdeflate.so.*|libzstd.so.*|libc.so.*|libpthread.so.*|libm.so.*) ;;
	*) fail "libptw.so needs $n (only libdeflate, libzstd and libc expected)" ;;
	esac
done
for p in writer tracer; do
	as_user "$d/pc" "cd .. && export PKG_CONFIG_PATH=\$HOME/.local/lib/pkgconfig &&
		cc -std=c11 $p.c \$(pkg-config --cflags --libs ptw) -Wl,-rpath,\$HOME/.local/lib -o $p && ./$p" \
		>"$d/$p.log" 2>&1 || { cat "$d/$p.log" >&2; fail "README $p example: build or run failed"; }
done
for t in example.pftrace app.pftrace; do
	"$B/bin/ptw-dump" --check "$d/home/$t" >/dev/null || fail "$t: ptw-dump --check failed"
done
echo "check-nonroot: ok (non-root make && make install PREFIX=~/.local with only cc, ninja, pkg-config, libdeflate, libzstd, zlib; README C examples built and run; missing libdeflate named)"
