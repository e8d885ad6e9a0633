#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
#
# sweep.sh MEMACCT CGROOT [RUNNER] - remove what integration tests left
# behind: a failed ck_assert() ends the test there (longjmp: the runner is
# CK_NOFORK), so the test's own cleanup after it never runs, and its
# cgroup, its workloads, a daemon and the daemon's pins stay, failing later
# tests that count cgroups, pins or the host's pinned pages.
#
# Only names the tests make are touched: a cgroup at a memory cgroup root or
# a bpffs directory named memacct-WORD...-PID[-N], whose PID (the first field
# of digits only) is no live process, or is RUNNER: the test runner, which
# calls this between test cases, when none of its tests runs (the tests name
# what they make with the runner's PID). Another live owner (a user's
# `memacct run`, a concurrent run) is left alone; so is the daemon's default
# /sys/fs/bpf/memacct. Prints one line per thing removed; exits 0.

memacct=$1
cgroot=$2	# the tests' memory cgroup root (integration.c memcg_root())
runner=${3:-none}

# whether the owner @1 is gone, or is the runner
swept() {
	[ -n "$1" ] && { [ "$1" = "$runner" ] || [ ! -d "/proc/$1" ]; }
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
	for cg in "$root"/memacct-*; do
		[ -d "$cg" ] || continue
		name=${cg##*/}
		pid=$(owner "$name")
		swept "$pid" || continue
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
