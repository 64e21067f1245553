# Makefile - the front door: make, make test, make bench, make demo,
# make install, make fuzz, make clean. The build itself is Ninja
# (./configure writes build/build.ninja from the source folders).
# SPDX-License-Identifier: Apache-2.0

B ?= build
PREFIX ?= /usr/local
DESTDIR ?=
FUZZ_SECONDS ?= 20
FUZZ_SEED ?= 1

# Debian 12 packages the build and tests need; `make deps` (run by every
# target) installs the missing ones with apt-get when running as root.
DEBS = gcc clang libclang-rt-14-dev ninja-build pkg-config binutils \
       protobuf-c-compiler libprotobuf-c-dev zlib1g-dev libdeflate-dev \
       libcriterion-dev libjson-c-dev libzstd-dev

.PHONY: all deps build test test-reset test-plain test-asan test-tsan test-fuzz test-bench \
        check-symbols check-headers bench demo install fuzz clean

all: build

deps:
	@sh tools/install-deps.sh $(DEBS)

build: deps
	@./configure $(B) plain
	@ninja -C $(B) -j$$(nproc) all >/dev/null || ninja -C $(B) all

# The reference corpus the converter tests read: ../shared beside this
# checkout or, for a clone of a local checkout (as `git clone . /tmp/x`),
# beside the checkout it was cloned from. Set PTW_SHARED_DIR to override.
PTW_SHARED_DIR ?= $(firstword $(wildcard $(abspath $(CURDIR)/../shared)) \
  $(wildcard $(abspath $(shell git -C $(CURDIR) config --get remote.origin.url 2>/dev/null)/../shared)))
export PTW_SHARED_DIR

# Each suite run appends "variant passed failed" here; the last line of
# `make test` is the sum over all variants.
export PTW_TEST_SUMMARY = $(CURDIR)/$(B)/test-summary.txt

test: build test-reset test-plain test-asan test-tsan check-symbols check-headers test-fuzz test-bench
	@awk '{p += $$2; f += $$3} END {printf "tests: %d passed, %d failed\n", p, f}' $(PTW_TEST_SUMMARY)

test-reset: build
	@rm -f $(PTW_TEST_SUMMARY)

test-plain: build
	@sh tests/run.sh $(B) plain

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

test-fuzz: deps
	@./configure $(B)/fuzz fuzz
	@ninja -C $(B)/fuzz all >/dev/null || ninja -C $(B)/fuzz all
	@sh fuzz/run.sh $(B)/fuzz $(FUZZ_SECONDS) $(FUZZ_SEED)

fuzz:
	@$(MAKE) --no-print-directory test-fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-300} FUZZ_SEED=0

check-symbols: build
	@sh tools/check-symbols.sh $(B)/lib/libptw.a $(B)/lib/libptwconv.a

check-headers: build
	@sh tools/check-headers.sh

bench: build
	@sh bench/run.sh $(B)

# Every benchmark once on a tiny input, so they never rot (figures not judged).
test-bench: build
	@PTW_BENCH_QUICK=1 sh bench/run.sh $(B) > $(B)/bench-quick.txt 2>&1 || \
	  { cat $(B)/bench-quick.txt; echo "test-bench: a benchmark failed" >&2; exit 1; }
	@echo "test-bench: $$(grep -c '^[a-z]' $(B)/bench-quick.txt) figures printed (quick run, $(B)/bench-quick.txt)"

demo: build
	@sh examples/demo.sh $(B)

install: build
	install -d $(DESTDIR)$(PREFIX)/include/ptw $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/ptw/*.h $(DESTDIR)$(PREFIX)/include/ptw/
	install -m 644 $(B)/lib/libptw.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/lib/libptw.so $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|g' tools/ptw.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/ptw.pc
	@if ls $(B)/bin/ptw-* >/dev/null 2>&1; then \
	  install -d $(DESTDIR)$(PREFIX)/bin && install -m 755 $(B)/bin/ptw-* $(DESTDIR)$(PREFIX)/bin/; fi

clean:
	rm -rf $(B)
