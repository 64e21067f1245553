#!/bin/sh
# check-os-calls.sh - fails when an OS-specific call, header or macro
# appears in lib/, converters/, reader/ or tools/ outside lib/os/, where
# each concern sits behind one small interface (lib/os/os_*.h) so that a
# port to another OS is new files there, not edits across the tree
# (README, "Platforms"). Comments are ignored (the compiler strips them
# first); string literals count ("/proc/...").
# SPDX-License-Identifier: Apache-2.0
#
#   sh tools/check-os-calls.sh [ROOT]
set -eu
cd "${1:-$(dirname "$0")/..}"

# Names beyond POSIX, or whose behaviour differs between systems. Plain
# POSIX (open, write, pthread_create, clock_gettime(CLOCK_MONOTONIC),
# uname, getpid, nanosleep, mmap of a file...) is fine anywhere; an
# anonymous mapping (MAP_ANONYMOUS, POSIX only since 2024) is not.
names='gettid|SYS_[a-z_]+|syscall|prctl|pthread_[gs]et_?name_np|pthread_getattr_np'
names="$names|/proc/|sigaction|pthread_sigmask|sigprocmask|sigaltstack"
names="$names|sigtimedwait|sigwaitinfo|MSG_NOSIGNAL|SO_NOSIGPIPE"
names="$names|pthread_atfork|fork|vfork|mremap|madvise|MADV_[A-Z_]+"
names="$names|MAP_(ANON|ANONYMOUS|POPULATE|HUGETLB|NORESERVE|LOCKED|GROWSDOWN|STACK)"
names="$names|MAP_(SYNC|FIXED_NOREPLACE|UNINITIALIZED|SHARED_VALIDATE|32BIT)"
names="$names|fallocate|posix_fallocate|posix_fadvise|FALLOC_FL_[A-Z_]+"
names="$names|f?statfs|TMPFS_MAGIC|CLOCK_BOOTTIME|dl_iterate_phdr|dladdr|dlinfo"
names="$names|program_invocation_(short_)?name|__progname|getauxval"
names="$names|getrandom|getentropy|sched_getcpu|sched_[gs]etaffinity"
names="$names|pthread_[gs]etaffinity_np|epoll_[a-z]+|inotify_[a-z]+|eventfd"
names="$names|signalfd|timerfd_[a-z]+|memfd_create|splice|sendfile"
names="$names|copy_file_range|futex|__linux__|__APPLE__|__FreeBSD__|_WIN32"
headers='linux/|sys/(syscall|prctl|vfs|statfs|epoll|eventfd)\.h|link\.h|dlfcn\.h'

# The clock concern (TSC calibration, the inline clock reads) moves into
# per-architecture files on its own branch: until then these places may
# name CLOCK_BOOTTIME. "file:name" pairs.
allow='lib/tracer/tsc.c:CLOCK_BOOTTIME
lib/tracer/tracer_internal.h:CLOCK_BOOTTIME
lib/tracer/tracer.c:CLOCK_BOOTTIME'

bad=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for f in $(find lib converters reader tools -name '*.[ch]' -not -path 'lib/os/*' |
	   sort); do
	# -fpreprocessed: strip comments, expand nothing, include nothing
	gcc -fpreprocessed -dD -E -P -x c "$f" 2>/dev/null > "$tmp" ||
		{ echo "check-os-calls: cannot read $f" >&2; exit 1; }
	# (/proc/ starts with no word character: \b cannot bound it)
	hits=$( { grep -noE "\\b($names)\\b|/proc/" "$tmp" || true
		  grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*<($headers)" "$tmp" |
			sed 's/:.*</:</' || true; } )
	[ -n "$hits" ] || continue
	for name in $(printf '%s\n' "$hits" | sed 's/^[0-9]*://' | sort -u); do
		if printf '%s\n' "$allow" | grep -qxF "$f:$name"; then
			continue
		fi
		echo "check-os-calls: $f: $name outside lib/os/ (see lib/os/os_*.h)" >&2
		bad=1
	done
done
if [ "$bad" -ne 0 ]; then
	echo "check-os-calls: put OS-specific code behind an interface in lib/os/" >&2
	exit 1
fi
echo "check-os-calls: no OS-specific call outside lib/os/"
