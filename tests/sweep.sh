#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
#
# sweep.sh MEMACCT CGROOT [RUNNER] - remove what integration tests left
# behind: a failed ck_assert() ends the test there (longjmp: the runner is
# CK_NOFORK), so the test's own cleanup after it never runs, and its
# cgroup, its workloads, a daemon and the daemon's pins stay, failing later
# tests that count cgroups, pins or the host's pinned pages.
#
# Only names the tests make are touched: a cgroup anywhere in a memory
# cgroup hierarchy (`memacct run` makes its cgroup below its caller's:
# docs/run.md) or a bpffs directory named memacct-WORD...-PID[-N], whose PID
# (the first field of digits only) is no live process, or is RUNNER: the
# test runner, which calls this between test cases, when none of its tests
# runs (the tests name what they make with the runner's PID). Another live
# owner (a user's `memacct run`, a concurrent run) is left alone, and so is
# a cgroup whose flock(1) is held (a live run holds its cgroup's: PIDs in
# names are the owners' in their own PID namespaces); so is the daemon's
# default /sys/fs/bpf/memacct. Prints one line per thing removed; exits 0.

memacct=$1
cgroot=$2	# the tests' memory cgroup root (integration.c memcg_root())
runner=${3:-none}

# whether the owner @1 is gone, or is the runner
swept() {
	[ -n "$1" ] && { [ "$1" = "$runner" ] || [ ! -d "/proc/$1" ]; }
}

# whether a live `memacct run` holds the lock of cgroup @1
held() {
	command -v flock > /dev/null 2>&1 && ! flock -n "$1" true 2>/dev/null
}

owner() {	# memacct-dma-audit-123-4 -> 123; nothing when no field is all digits
	echo "$1" | tr '-' '\n' | sed -n '2,$p' | grep -m1 -x '[0-9][0-9]*'
}

# stop the processes whose command line names $1 (daemons, attach), and wait
kill_naming() {
	for c in /proc/[0-9]*/cmdline; do
		p=${c#/proc/}
		p=${p%/cmdline}
		[ "$p" = $$ ] && continue
		tr '\0' ' ' < "$c" 2>/dev/null | grep -qE -- "$1[ /]" || continue
		kill -INT "$p" 2>/dev/null
		for i in 1 2 3 4 5 6 7 8 9 10; do
			[ -d "/proc/$p" ] || break
			sleep 0.2
		done
		kill -KILL "$p" 2>/dev/null
	done
}

for root in $(printf '%s\n' "$cgroot" /sys/fs/cgroup/memory /sys/fs/cgroup | sort -u); do
	[ -f "$root/cgroup.procs" ] || continue
	# parents first: a removed one's children go with it
	find "$root" -mindepth 1 -type d -name 'memacct-*' 2>/dev/null | while read -r cg; do
		[ -d "$cg" ] || continue
		name=${cg##*/}
		pid=$(owner "$name")
		swept "$pid" || continue
		held "$cg" && continue
		kill_naming "$name"
		find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL
		for i in 1 2 3 4 5 6 7 8 9 10; do
			find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
			[ -d "$cg" ] || break
			sleep 0.2
		done
		if [ -d "$cg" ]; then
			echo "sweep: $cg (owner $pid) could not be removed"
		else
			echo "sweep: removed $cg, left by $pid"
		fi
	done
done

for dir in /sys/fs/bpf/memacct-*; do
	[ -d "$dir" ] || continue
	pid=$(owner "${dir##*/}")
	swept "$pid" || continue
	kill_naming "$dir"
	if "$memacct" detach --pin-path "$dir" > /dev/null 2>&1 && [ ! -e "$dir" ]; then
		echo "sweep: detached $dir, left by $pid"
	else
		echo "sweep: $dir (owner $pid) could not be detached"
	fi
done
exit 0
