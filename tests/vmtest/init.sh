#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# /init of the vmtest guest (busybox): mount what memacct needs, run each
# test and write its output between markers to /dev/ttyS1 (the host's
# results file; ttyS0 is the console), then power off. Checked on the host
# by tests/vmtest/check.py.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t bpf bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo +memory > /sys/fs/cgroup/cgroup.subtree_control
mkdir -p /tmp && mount -t tmpfs tmpfs /tmp
out=/dev/ttyS1

section() {	# section NAME CMD...: stdout and stderr of CMD, then its status
	name=$1; shift
	echo "@@BEGIN $name" > $out
	"$@" > /tmp/o 2> /tmp/e
	rc=$?
	cat /tmp/o > $out
	echo "@@STDERR $name" > $out
	# -v makes libbpf verbose: keep what tells why, and the end
	grep -E 'left out|unavailable' /tmp/e > $out
	grep -E 'failed|invalid|prohibited|rror|relo #[0-9]+: no matching' /tmp/e |
		tail -n 30 > $out
	echo "@@TAIL" > $out
	tail -n 30 /tmp/e > $out
	echo "@@END $name $rc" > $out
}

env_info() {
	echo "kernel $(uname -r)"
	echo "nodes $(ls -d /sys/devices/system/node/node* | wc -l)"
	echo "cgroup_controllers $(cat /sys/fs/cgroup/cgroup.subtree_control)"
	grep -c . /proc/zoneinfo > /dev/null && grep -E '^Node|start_pfn' /proc/zoneinfo
}

echo "@@VMTEST start" > $out
section env env_info
section cow /bin/memacct -v -j run -- /bin/cow_fork 100 4
section numa /bin/memacct -v -j run -- /bin/numa_bind 32
section numa_maps cat /proc/vmstat
echo "@@VMTEST done" > $out
sync
poweroff -f
