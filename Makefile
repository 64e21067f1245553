# Makefile - the front door: make, make test, make bench, make demo,
# make install, make fuzz, make clean. The build itself is Ninja
# (./configure writes build/build.ninja from the source folders).
# SPDX-License-Identifier: Apache-2.0

B ?= build
PREFIX ?= /usr/local
DESTDIR ?=
FUZZ_SECONDS ?= 20
FUZZ_SEED ?= 1

# What each target needs is checked (and installed with apt-get when
# running as root on Debian) by tools/install-deps.sh, by parts: lib
# (compiler, Ninja, pkg-config, libdeflate, libzstd), tools (zlib),
# protobuf (protobuf-c: the reader in ptw-convert and ptw-dump), cxx, test.
DEPS = sh tools/install-deps.sh
# ninja TARGETS quietly, again verbosely if it fails
NINJA = ninja -C $(B) -j$$(nproc) $(1) >/dev/null || ninja -C $(B) $(1)

# The version: include/ptw/version.h's three numbers (their only copy).
VERSION := $(shell sed -n 's/^\#define PTW_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9][0-9]*\).*/\2/p' include/ptw/version.h | paste -sd.)

.PHONY: all version deps build lib test test-reset test-plain test-no-shared test-asan test-tsan test-fuzz test-bench \
        test-cross check-symbols check-headers check-install check-nonroot bench demo demo-system install fuzz clean

# `make`: the library and the programs `make install` installs, with only
# a C compiler, Ninja, pkg-config, libdeflate, libzstd and zlib; without
# protobuf-c, the library alone (with a note naming the packages).
all:
	@$(DEPS) lib tools
	@t="lib tools"; $(DEPS) --optional "ptw-convert and ptw-dump (they read traces with protobuf-c)" protobuf || t=lib; \
	  ./configure $(B) plain && { $(call NINJA,$$t); }

# The library alone.
lib:
	@$(DEPS) lib
	@./configure $(B) plain
	@$(call NINJA,lib)

# Prints the version the install target writes into ptw.pc.
version:
	@echo $(VERSION)

# everything the tests need
deps:
	@$(DEPS) lib tools protobuf cxx test

# Everything: library, programs, examples, benchmarks, tests.
build: deps
	@./configure $(B) plain
	@$(call NINJA,all)

# The reference corpus the converter tests read: ../shared beside this
# checkout or, for a clone of a local checkout (as `git clone . /tmp/x`),
# beside the checkout it was cloned from. Set PTW_SHARED_DIR to override.
PTW_SHARED_DIR ?= $(firstword $(wildcard $(abspath $(CURDIR)/../shared)) \
  $(wildcard $(abspath $(shell git -C $(CURDIR) config --get remote.origin.url 2>/dev/null)/../shared)))
export PTW_SHARED_DIR

# Each suite run appends "variant passed failed" here; the last line of
# `make test` is the sum over all variants.
export PTW_TEST_SUMMARY = $(CURDIR)/$(B)/test-summary.txt

test: build test-reset test-plain test-no-shared test-asan test-tsan test-cross check-symbols check-headers check-os-calls check-install check-nonroot test-fuzz test-bench
	@awk '{p += $$2; f += $$3} END {printf "tests: %d passed, %d failed\n", p, f}' $(PTW_TEST_SUMMARY)

test-reset: build
	@rm -f $(PTW_TEST_SUMMARY)

test-plain: build
	@sh tests/run.sh $(B) plain

# The suites again as on a machine without ../shared: whatever needs the
# corpus or trace_processor must skip, not fail.
test-no-shared: build
	@PTW_SHARED_DIR=/nonexistent/ptw-no-shared sh tests/run.sh $(B) no-shared

test-asan: deps
	@./configure $(B)/asan asan
	@ninja -C $(B)/asan all >/dev/null || ninja -C $(B)/asan all
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  sh tests/run.sh $(B)/asan asan

test-tsan: deps
	@./configure $(B)/tsan tsan
	@ninja -C $(B)/tsan all >/dev/null || ninja -C $(B)/tsan all
	@TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 PTW_TEST_SCALE=small \
	  sh tests/run.sh $(B)/tsan tsan

# The library, tools and suites cross-built for 64-bit ARM and for s390x
# (big-endian) and run under qemu-user (tools/test-cross.sh; skipped with
# one line when neither root nor installed).
test-cross: build
	@sh tools/test-cross.sh $(B) aarch64
	@sh tools/test-cross.sh $(B) s390x

test-fuzz: deps
	@./configure $(B)/fuzz fuzz
	@ninja -C $(B)/fuzz all >/dev/null || ninja -C $(B)/fuzz all
	@sh fuzz/run.sh $(B)/fuzz $(FUZZ_SECONDS) $(FUZZ_SEED)

fuzz:
	@$(MAKE) --no-print-directory test-fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-300} FUZZ_SEED=0

check-symbols: build
	@sh tools/check-symbols.sh $(B)/lib/libptw.a $(B)/lib/libptwconv.a \
	  --exports $(B)/lib/libptw.so tools/libptw.symbols

check-headers: build
	@sh tools/check-headers.sh

# OS-specific calls only in lib/os/ (README, "Platforms").
.PHONY: check-os-calls
check-os-calls:
	@sh tools/check-os-calls.sh

bench: build
	@sh bench/run.sh $(B)

# Every benchmark once on a tiny input, so they never rot (figures not judged).
test-bench: build
	@PTW_BENCH_QUICK=1 sh bench/run.sh $(B) > $(B)/bench-quick.txt 2>&1 || \
	  { cat $(B)/bench-quick.txt; echo "test-bench: a benchmark failed" >&2; exit 1; }
	@echo "test-bench: $$(grep -c '^[a-z]' $(B)/bench-quick.txt) figures printed (quick run, $(B)/bench-quick.txt)"

demo:
	@$(DEPS) lib tools protobuf cxx
	@./configure $(B) plain
	@$(call NINJA,lib tools examples)
	@sh examples/demo.sh $(B)
	@echo "(make demo-system records a Perfetto system trace with ptw's system mode)"

# A system trace: demo-system in ptw's system mode beside linux.process_stats
# (and sched_switch where tracefs allows), recorded by a private tracing
# service (tracebox); says so and skips without one.
demo-system:
	@$(DEPS) lib tools
	@./configure $(B) plain
	@$(call NINJA,lib bin/demo-system)
	@sh examples/demo_system.sh $(B)

MAJOR = $(word 1,$(subst ., ,$(VERSION)))
MINOR = $(word 2,$(subst ., ,$(VERSION)))
# The SONAME's version: MAJOR, or MAJOR.MINOR while MAJOR is 0 (configure)
ABI = $(if $(filter 0,$(MAJOR)),$(MAJOR).$(MINOR),$(MAJOR))
LIBDIR = $(DESTDIR)$(PREFIX)/lib
# headers, both libraries (libptw.so.X.Y.Z with its libptw.so.ABI and
# libptw.so links), ptw.pc, the CMake package, the programs and their man
# pages (if built: they need protobuf-c)
install: all
	@test -n "$(VERSION)" || { echo "install: no version in include/ptw/version.h" >&2; exit 1; }
	install -d $(DESTDIR)$(PREFIX)/include/ptw $(LIBDIR)/pkgconfig $(LIBDIR)/cmake/ptw \
	  $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/ptw/*.h $(DESTDIR)$(PREFIX)/include/ptw/
	install -m 644 $(B)/lib/libptw.a $(LIBDIR)/
	install -m 755 $(B)/lib/libptw.so.$(VERSION) $(LIBDIR)/
	ln -sf libptw.so.$(VERSION) $(LIBDIR)/libptw.so.$(ABI)
	ln -sf libptw.so.$(ABI) $(LIBDIR)/libptw.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' tools/ptw.pc.in > $(LIBDIR)/pkgconfig/ptw.pc
	for f in ptwConfig ptwConfigVersion; do \
	  sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@MAJOR@|$(MAJOR)|g' -e 's|@MINOR@|$(MINOR)|g' -e 's|@ABI@|$(ABI)|g' \
	    tools/cmake/$$f.cmake.in > $(LIBDIR)/cmake/ptw/$$f.cmake || exit 1; done
	@if [ -x $(B)/bin/ptw-convert ] && [ -x $(B)/bin/ptw-dump ]; then \
	  echo install -m 755 $(B)/bin/ptw-convert $(B)/bin/ptw-dump $(DESTDIR)$(PREFIX)/bin/; \
	  install -m 755 $(B)/bin/ptw-convert $(B)/bin/ptw-dump $(DESTDIR)$(PREFIX)/bin/ && \
	  echo "install docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/" && \
	  for m in docs/man/*.1; do \
	    sed -e 's|@VERSION@|$(VERSION)|g' $$m > $(DESTDIR)$(PREFIX)/share/man/man1/$${m##*/} || exit 1; done; \
	else echo "install: ptw-convert and ptw-dump not built (see the note above), not installed"; fi

# The install, built against three ways (tools/check-install.sh), and the
# man pages against --help (tools/check-man.sh).
check-install: build
	@sh tools/check-man.sh $(B)/bin
	@sh tools/check-install.sh $(B)

# `make && make install PREFIX=~/.local` as a throwaway non-root user with
# only the library's dependencies visible (as root; skips otherwise).
check-nonroot: build
	@sh tools/check-nonroot.sh $(B)

clean:
	rm -rf $(B)
