#!/bin/sh
# check-install.sh BUILDDIR - `make install` into a temporary DESTDIR, then
# builds the README's writer, tracer and C++ examples against that install
# three ways, as users would: pkg-config (shared), pkg-config with the static
# library, and CMake find_package(ptw) (ptw::ptw and ptw::ptw_static). Each
# program runs, and the installed ptw-dump --check accepts the trace it
# wrote. A program linked against the shared library must need libptw.so.ABI
# (MAJOR, or MAJOR.MINOR while MAJOR is 0)
# and run with only the installed library on its path. Then the same
# examples in a CMake project that vendors the source tree
# (add_subdirectory, no install), which must compile the library from the
# same source list as ./configure.
# SPDX-License-Identifier: Apache-2.0
set -eu
B=$1
root=$(pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
prefix=/usr/local
dest="$d/root"
inst="$dest$prefix"
make -s --no-print-directory install B="$B" PREFIX="$prefix" DESTDIR="$dest" >/dev/null
major=$(make -s --no-print-directory version | cut -d. -f1)
# the SONAME's version: the major, or major.minor while the major is 0
[ "$major" = 0 ] && major=$(make -s --no-print-directory version | cut -d. -f1,2)

fail() { echo "check-install: $*" >&2; exit 1; }
for f in include/ptw/writer.h include/ptw/tracer.h include/ptw/version.h \
	 lib/libptw.a "lib/libptw.so.$major" lib/libptw.so lib/pkgconfig/ptw.pc \
	 lib/cmake/ptw/ptwConfig.cmake lib/cmake/ptw/ptwConfigVersion.cmake \
	 share/man/man1/ptw-convert.1 share/man/man1/ptw-dump.1 \
	 bin/ptw-convert bin/ptw-dump; do
	[ -e "$inst/$f" ] || fail "$prefix/$f not installed"
done
readelf -d "$inst/lib/libptw.so" | grep -q "SONAME.*\[libptw.so.$major\]" ||
	fail "libptw.so has no SONAME libptw.so.$major"

# the README's examples, as written there
src="$d/src"
mkdir -p "$src"
example() { sh tools/readme-example.sh "$@"; }
example "## Writing a trace with the writer API" c > "$src/writer.c"
example "## Instrumenting a multi-threaded program" c > "$src/tracer.c"
example "## Using ptw from C++" cpp > "$src/cxx.cc"
[ -s "$src/writer.c" ] && [ -s "$src/tracer.c" ] && [ -s "$src/cxx.cc" ] ||
	fail "README examples not found"

# run PROGRAM TRACE [LIBDIR]: runs it in its folder with only the installed
# library (or LIBDIR's) on the path, then checks the trace with the
# installed ptw-dump
run() {
	dir=$(dirname "$1")
	(cd "$dir" && LD_LIBRARY_PATH="${3-$inst/lib}" "./$(basename "$1")") ||
		fail "$1 failed"
	"$inst/bin/ptw-dump" --check "$dir/$2" >/dev/null || fail "$dir/$2: check failed"
	# the writer example's flow goes from "handle" to "parse"
	if [ "$2" = example.pftrace ] &&
	   [ "$("$inst/bin/ptw-dump" --flows "$dir/$2")" != "flow id=42 out=0 in=1" ]; then
		fail "$dir/$2: the README's flow 42 is not complete"
	fi
	rm -f "$dir/$2"
}
needs_so() { # needs_so PROGRAM 1|0
	if readelf -d "$1" | grep -q "NEEDED.*\[libptw.so.$major\]"; then n=1; else n=0; fi
	[ "$n" = "$2" ] || fail "$1: NEEDED libptw.so.$major is $n, expected $2"
}

export PKG_CONFIG_PATH="$inst/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
[ "$(pkg-config --modversion ptw)" = "$(make -s --no-print-directory version)" ] ||
	fail "pkg-config --modversion ptw is not the version"
cflags=$(pkg-config --cflags ptw)
for p in writer tracer cxx; do
	out=example.pftrace
	[ "$p" = tracer ] && out=app.pftrace
	f="$src/$p.c"
	build="cc -std=c11"
	if [ "$p" = cxx ]; then
		out=app-cxx.pftrace
		f="$src/$p.cc"
		build="c++ -std=c++11 -pthread"
	fi
	mkdir -p "$d/pc-shared" "$d/pc-static"
	# shellcheck disable=SC2086
	$build $cflags "$f" -o "$d/pc-shared/$p" $(pkg-config --libs ptw) ||
		fail "$p: pkg-config (shared) build failed"
	needs_so "$d/pc-shared/$p" 1
	run "$d/pc-shared/$p" "$out"
	# shellcheck disable=SC2086
	$build $cflags "$f" -o "$d/pc-static/$p" \
		-Wl,-Bstatic $(pkg-config --static --libs ptw) -Wl,-Bdynamic ||
		fail "$p: pkg-config --static build failed"
	needs_so "$d/pc-static/$p" 0
	run "$d/pc-static/$p" "$out"
done

# the README's way for a PREFIX outside the system's paths: an rpath, so
# the program starts with no LD_LIBRARY_PATH
mkdir -p "$d/rpath"
# shellcheck disable=SC2086
cc -std=c11 $cflags "$src/writer.c" -o "$d/rpath/writer" $(pkg-config --libs ptw) \
	-Wl,-rpath,"$inst/lib" || fail "writer: build with an rpath failed"
(cd "$d/rpath" && ./writer) || fail "writer built with an rpath does not start"
rm -f "$d/rpath/example.pftrace"

# cmake_project DIR LINE: a CMake project in DIR that gets ptw by LINE and
# builds each example against ptw::ptw (NAME_shared) and ptw::ptw_static
# (NAME_static)
cmake_project() {
	mkdir -p "$1"
	cat > "$1/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(ptw_test C CXX)
$2
foreach(p writer.c tracer.c cxx.cc)
  get_filename_component(n \${p} NAME_WE)
  add_executable(\${n}_shared "$src/\${p}")
  target_link_libraries(\${n}_shared PRIVATE ptw::ptw)
  add_executable(\${n}_static "$src/\${p}")
  target_link_libraries(\${n}_static PRIVATE ptw::ptw_static)
endforeach()
CMAKE
}

# CMake: find_package(ptw 0.5 REQUIRED), both imported targets
cm="$d/cmake"
cmake_project "$cm" "find_package(ptw 0.5 REQUIRED)"
cmake -S "$cm" -B "$cm/build" -DCMAKE_PREFIX_PATH="$inst" \
	-DCMAKE_SKIP_RPATH=ON >"$d/cmake.log" 2>&1 ||
	{ cat "$d/cmake.log" >&2; fail "cmake configure failed"; }
cmake --build "$cm/build" >>"$d/cmake.log" 2>&1 ||
	{ cat "$d/cmake.log" >&2; fail "cmake build failed"; }
needs_so "$cm/build/writer_shared" 1
needs_so "$cm/build/writer_static" 0
run "$cm/build/writer_shared" example.pftrace
run "$cm/build/writer_static" example.pftrace
run "$cm/build/tracer_shared" app.pftrace
run "$cm/build/tracer_static" app.pftrace
needs_so "$cm/build/cxx_shared" 1
run "$cm/build/cxx_shared" app-cxx.pftrace
run "$cm/build/cxx_static" app-cxx.pftrace
# a request for another major version must not be satisfied
sed -i 's/find_package(ptw 0.5 REQUIRED)/find_package(ptw 1.0 REQUIRED)/' "$cm/CMakeLists.txt"
if cmake -S "$cm" -B "$cm/build2" -DCMAKE_PREFIX_PATH="$inst" >/dev/null 2>&1; then
	fail "find_package(ptw 1.0) accepted version $(make -s --no-print-directory version)"
fi
# nor one for an older 0.x minor version (another ABI)
sed -i 's/find_package(ptw 1.0 REQUIRED)/find_package(ptw 0.1 REQUIRED)/' "$cm/CMakeLists.txt"
if cmake -S "$cm" -B "$cm/build3" -DCMAKE_PREFIX_PATH="$inst" >/dev/null 2>&1; then
	fail "find_package(ptw 0.1) accepted version $(make -s --no-print-directory version)"
fi

# CMake subproject: a project that vendors the source tree with
# add_subdirectory() builds and runs the examples with no install step
# (the shared ones find libptw.so in the subproject's build folder through
# CMake's build rpath: no LD_LIBRARY_PATH)
cd "$root"
sub="$d/subproject"
cmake_project "$sub" "add_subdirectory(\"$root\" ptw)"
# (pkg-config finds libdeflate and libzstd on the system, not in DESTDIR)
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
cmake -S "$sub" -B "$sub/build" >"$d/sub.log" 2>&1 ||
	{ cat "$d/sub.log" >&2; fail "subproject: cmake configure failed"; }
cmake --build "$sub/build" --parallel "$(nproc)" >>"$d/sub.log" 2>&1 ||
	{ cat "$d/sub.log" >&2; fail "subproject: cmake build failed"; }
# one list of library sources: CMake's (tools/build.vars) is configure's
sed -n 's|^build obj/\(lib/[^ ]*\)\.o: cc .*|\1.c|p' "$B/build.ninja" | sort > "$d/configure-sources"
sort "$sub/build/ptw/ptw-sources.txt" > "$d/cmake-sources"
[ -s "$d/configure-sources" ] && cmp -s "$d/configure-sources" "$d/cmake-sources" ||
	{ diff "$d/configure-sources" "$d/cmake-sources" >&2;
	  fail "the CMake subproject and ./configure build different library sources"; }
for p in writer tracer cxx; do
	out=example.pftrace
	[ "$p" = tracer ] && out=app.pftrace
	[ "$p" = cxx ] && out=app-cxx.pftrace
	needs_so "$sub/build/${p}_shared" 1
	ldd "$sub/build/${p}_shared" | grep -q "=> $sub/build/ptw/libptw.so.$major " ||
		fail "subproject: ${p}_shared does not load the subproject's libptw.so.$major"
	run "$sub/build/${p}_shared" "$out" ""
	needs_so "$sub/build/${p}_static" 0
	run "$sub/build/${p}_static" "$out" ""
done
echo "check-install: ok (C and C++; pkg-config shared and static, CMake ptw::ptw and ptw::ptw_static installed and as a subproject)"
