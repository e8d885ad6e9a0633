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
# pure cgroup v2, mounted as systemd mounts it on a v2-only host
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup ||
	mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
echo +memory > /sys/fs/cgroup/cgroup.subtree_control
# what this kernel builds as modules and the guest needs (run.sh: the disk's
# nvme and ext4 on arm64-16k)
if [ -s /modules/$(uname -r)/order ]; then
	for m in $(cat /modules/$(uname -r)/order); do
		insmod /modules/$(uname -r)/$m || echo "init: insmod $m failed"
	done
	i=0
	while [ ! -b /dev/nvme0n1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
fi
# loopback, as on any host: the daemon tests listen and scrape on 127.0.0.1 and ::1
ip link set lo up
mkdir -p /tmp /run /mnt /dev/shm && mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /dev/shm
# a real block filesystem for page cache tests (tmpfs pages are shmem):
# run.sh attaches an empty image as NVMe (the cloud kernels build nvme and
# ext4 in, not virtio-blk)
[ -b /dev/nvme0n1 ] && mke2fs -q /dev/nvme0n1 > /dev/null && mount -t ext2 /dev/nvme0n1 /mnt
# /var/tmp on it too, as on a host (the integration suite's files)
mkdir -p /mnt/vartmp /var/tmp && chmod 1777 /mnt/vartmp && mount --bind /mnt/vartmp /var/tmp
# memacct.node=NAME (make vmtest-cluster): a node of a cluster, driven by
# the host over its network card (tests/vmtest/node.sh, cluster.py) until
# the host's last step; no sections
if grep -q 'memacct.node=' /proc/cmdline; then
	/bin/node.sh up || echo "init: node.sh up failed"
	while [ ! -e /run/poweroff ]; do sleep 1; done
	sync
	poweroff -f
fi
# the results' serial port: memacct.out=ttyS0 on arm64 (run.sh)
out=/dev/$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^memacct.out=//p')
[ "$out" = /dev/ ] && out=/dev/ttyS1
# opened once for the whole run: on 7.2 (arm64, PCI 16550) a close of the
# port after each write lost what it had not sent yet (a 6.6 KB JSON line
# cut at ~3.9 KB, and the lines after it)
exec 3> $out
cg=/sys/fs/cgroup

section() {	# section NAME CMD...: stdout and stderr of CMD, then its status
	name=$1; shift
	echo "@@BEGIN $name" >&3
	"$@" > /tmp/o 2> /tmp/e 3>&-	# the tests do not inherit the port
	rc=$?
	cat /tmp/o >&3
	echo "@@STDERR $name" >&3
	# -v makes libbpf verbose: keep what tells why, and the end
	grep -E 'left out|unavailable' /tmp/e >&3
	grep -E 'failed|invalid|prohibited|rror|relo #[0-9]+: no matching' /tmp/e |
		tail -n 30 >&3
	echo "@@TAIL" >&3
	tail -n 30 /tmp/e >&3
	echo "@@END $name $rc $(cut -d' ' -f1 /proc/uptime)" >&3
}

# wait_line FILE ERE [SECONDS=30]: until a line of FILE matches
wait_line() {
	i=0
	while ! grep -q -E "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt $((${3:-30} * 10)) ] && { echo "error: no '$2' in $1" >&2; return 1; }
		sleep 0.1
	done
}

# wait_value FILE VALUE: until FILE (a cgroup file) reads VALUE, 30 s at most
wait_value() {
	i=0
	while [ "$(cat "$1")" != "$2" ]; do
		i=$((i + 1))
		[ $i -gt 300 ] && { echo "error: $1 is $(cat "$1"), not $2" >&2; return 1; }
		sleep 0.1
	done
}

# start_in CGROUP OUTFILE CMD...: run CMD in the cgroup (background, stdout to
# OUTFILE); $! is its pid once it wrote "ready"
start_in() {
	d=$1 f=$2; shift 2
	sh -c 'echo $$ > '"$d"'/cgroup.procs && exec "$@"' sh "$@" > "$f" &
	wait_line "$f" '^ready'
}

# limits LABEL DIR: the cgroup's v2 limit files as "kernel LABEL_FILE VALUE"
limits() {
	for f in memory.max memory.high memory.swap.max; do
		[ -e "$2/$f" ] && echo "kernel $1_${f#memory.} $(cat "$2/$f")"
	done
	echo "kernel $1_state_file $([ -e /run/memacct/limits-$(stat -c %i "$2").state ] &&
		echo 1 || echo 0)"
}

# jsonl_grow FILE N: until FILE has N more lines, 60 s at most
jsonl_grow() {
	n=$(($(wc -l < "$1") + $2)) i=0
	while [ "$(wc -l < "$1")" -lt $n ]; do
		i=$((i + 1))
		[ $i -gt 600 ] && { echo "error: $1 did not grow by $2 lines" >&2; return 1; }
		sleep 0.1
	done
}

# daemon_up PID ERRFILE: until the daemon serves or is gone (its reason in
# ERRFILE), 2 min at most: a restart that loads the programs again took over
# 30 s in the arm64 guests beside CI's other steps. ERRFILE must be new to
# this boot: `2> FILE &` truncates it only once the child runs
daemon_up() {
	i=0
	while ! grep -q 'serving on port' "$2" && kill -0 "$1" 2>/dev/null && [ $i -lt 1200 ]; do
		i=$((i + 1))
		sleep 0.1
	done
}

# remote_numa_bytes (explain PID, explain --cgroup) at each stop of
# numa_bind --pause, run in a cgroup whose cpuset is CPU 0 (node 0), against
# the guest's numa_maps and memory.numa_stat; a daemon's JSON log beside, its
# cgroup's remote_numa_peak_bytes read once the buffer is gone
t_numa_stock() {
	d=$cg/numa_test
	echo +cpuset > $cg/cgroup.subtree_control
	mkdir $d
	echo 0 > $d/cpuset.cpus
	echo "kernel cpuset_cpus_effective $(cat $d/cpuset.cpus.effective)"
	# its own copy, written from CPU 0: the initramfs unpacked /bin/numa_bind
	# wherever it ran, often on node 1, which would add its pages to the remote
	taskset 1 cp /bin/numa_bind /tmp/numa_bind
	: > /tmp/nd.jsonl
	memacct daemon --listen 127.0.0.1:9471 --interval 200ms --oom-log none \
		--pin-path /sys/fs/bpf/numa_daemon --json-log /tmp/nd.jsonl 2> /tmp/nd.err &
	nd=$!
	daemon_up $nd /tmp/nd.err
	on=$nd; kill -0 $nd 2>/dev/null || on=
	start_in $d /tmp/n.out /tmp/numa_bind 32 --pause
	p=$!
	for step in bound moved migrated; do
		wait_line /tmp/n.out "^ready $step" || break
		sed "s/^/numa_maps $step /" /proc/$p/numa_maps
		sed "s/^/numa_stat $step /" $d/memory.numa_stat
		memacct -j explain $p > /tmp/nx
		echo "rc explain_$step $?"
		sed "s/^/json $step /" /tmp/nx
		memacct -j explain --cgroup numa_test > /tmp/nx
		echo "rc explain_cg_$step $?"
		sed "s/^/json cg_$step /" /tmp/nx
		sed "s/^/numa_stat cg_$step /" $d/memory.numa_stat
		[ -z "$on" ] || jsonl_grow /tmp/nd.jsonl 2	# a collection begun at this stop
		kill -USR1 $p
	done
	wait $p
	echo "rc numa_bind $?"
	cat /tmp/n.out
	# one begun after the buffer was gone, and whole (a later line began)
	[ -z "$on" ] || { jsonl_grow /tmp/nd.jsonl 3 &&
		echo "json daemon_end $(tail -n 2 /tmp/nd.jsonl | head -n 1)"; kill $nd; }
	wait $nd
	echo "rc numa_daemon $?"
	sed "s/^/plain numa_daemon_err /" /tmp/nd.err
	# restarted on its pins: re-attached, or (links it held, before 5.15)
	# its programs loaded again on the pinned maps. Its own stderr file: the
	# shell truncates a redirection in the child, after `&` returned, so a
	# reused /tmp/nd.err could still show the first daemon's "serving" line
	# to daemon_up, whose kill then found a child without handlers (CI's
	# bullseye guest: exit 143 after 0.0 s)
	memacct daemon --listen 127.0.0.1:9471 --interval 200ms --oom-log none \
		--pin-path /sys/fs/bpf/numa_daemon 2> /tmp/nd2.err &
	nd=$!
	daemon_up $nd /tmp/nd2.err
	echo "kernel daemon_restart_ds $i"
	kill $nd
	wait $nd
	echo "rc numa_daemon_restart $?"
	sed "s/^/plain numa_daemon_restart_err /" /tmp/nd2.err
	memacct daemon --stop-kernel-side --pin-path /sys/fs/bpf/numa_daemon
	rmdir $d
	echo -cpuset > $cg/cgroup.subtree_control
}

# v2 cgroups without the memory controller (their parent's
# cgroup.subtree_control lacks it: the kernel charges their tasks to the
# nearest ancestor that has it). Runs last: it turns +memory off at the root.
t_nomem() {
	echo -memory > $cg/cgroup.subtree_control
	echo "kernel root_subtree_before $(cat $cg/cgroup.subtree_control | tr ' ' ,)."
	# run enables it for its own cgroup
	memacct -j run -- cow_fork 16 4
	echo "rc run $?"
	echo "kernel root_subtree_after $(cat $cg/cgroup.subtree_control | tr ' ' ,)."
	# attach --pid: the cgroup that is charged; --cgroup of one without: refused
	mkdir $cg/nomem_parent $cg/nomem_parent/leaf
	echo "kernel leaf_controllers $(cat $cg/nomem_parent/leaf/cgroup.controllers | tr ' ' ,)."
	rm -f /tmp/go
	sh -c 'echo $$ > '$cg'/nomem_parent/leaf/cgroup.procs && echo ready &&
		while [ ! -e /tmp/go ]; do sleep 0.1; done && exec cow_fork 16 4' > /tmp/nm.out &
	p=$!
	wait_line /tmp/nm.out '^ready'
	memacct -j attach --pid $p --interval 1s > /tmp/nma.out &
	m=$!
	wait_line /tmp/nma.out '^[{]' 60
	memacct -j attach --cgroup leaf --duration 1s > /dev/null
	echo "rc attach_leaf $?"
	touch /tmp/go
	wait $p
	kill -INT $m
	wait $m
	echo "rc attach_pid $?"
	tail -n 1 /tmp/nma.out | sed 's/^/json attach_pid /'
	sed 's/^truth /truth pid_/' /tmp/nm.out
	echo "truth pid_pid $p"
	rmdir $cg/nomem_parent/leaf $cg/nomem_parent
}

# run --memory-max below what the workload needs: OOM kill, as memory.events says
t_oom() {
	memacct -j run --keep-cgroup --memory-max 64M -- oom 128 > /tmp/oom.out
	echo "rc run $?"
	cat /tmp/oom.out
	p=$(sed -n 's/.*"fs_path": *"\([^"]*\)".*/\1/p' /tmp/oom.out | tail -n 1)
	echo "kernel memory_max $(cat "$p/memory.max")"
	echo "kernel oom_kill $(sed -n 's/^oom_kill //p' "$p/memory.events")"
	rmdir "$p"
}

# a host-wide OOM (no memory cgroup at its limit: run's cgroup has none):
# the allocator, at oom_score_adj 1000, is the victim; this shell and
# memacct out of the OOM killer's reach (-1000, inherited)
t_oom_host() {
	# a subshell: section() runs this in init's own shell, whose -1000
	# every later section would inherit (an OOM then finds no victim and
	# the allocating task waits for ever: the integration run hung so)
	(
		echo -1000 > /proc/self/oom_score_adj
		exec memacct -j run -- sh -c 'echo 1000 > /proc/self/oom_score_adj; exec oom 16384'
	) > /tmp/oomh.out
	echo "rc run $?"
	cat /tmp/oomh.out
	echo "kernel mem_total_kb $(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)"
}

# zero fills read from pagemap (the kernel maps the zero page, or not)
t_zero_fill() {
	echo "kernel release $(uname -r)"
	memacct -j run -- zero_fill 32
}

# first-touch writes of MADV_HUGEPAGE memory: zero fills of whole huge pages
t_thp() {
	if grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
		echo "kernel thp_never 1"
	else
		echo "kernel thp_never 0"
	fi
	memacct -j run -- zero_fill --thp 64
}

# CoW by mapping: 4 workers copy parts of a heap, an anon mmap and a
# private file mapping of their parent (issue 42)
t_cow_maps() {
	echo "kernel release $(uname -r)"
	memacct -j run -- cow_maps 4 8 16 4
}

# page cache by file (issue 43): two files on the ext2 disk, dropped from
# the page cache and read; the filemap raw tracepoints on every kernel
t_page_cache() {
	mkdir -p /mnt/pc
	memacct -j run -- page_cache_files /mnt/pc pca:16 pcb:8
	rm -rf /mnt/pc
}

# the leader exits first, its helper thread ends the process (exit_group)
t_thread_exit() {
	memacct -j run -- thread_exit 4096 256
}

# CoW while another thread holds mmap_lock for write in a loop
t_cow_busy() {
	echo "kernel release $(uname -r)"
	memacct -j run -- cow_mmap_churn 32 3
}

# attach --cgroup NAME to a cgroup a CoW workload then runs in
t_attach() {
	d=$cg/job_4711
	mkdir $d
	memacct -j attach --cgroup job_4711 --interval 1s > /tmp/att.out &
	m=$!
	wait_line /tmp/att.out '^[{]' 60
	sh -c 'echo $$ > '$d'/cgroup.procs && exec cow_fork 64 4'
	sleep 1.2	# one more interval report
	kill -INT $m
	wait $m
	echo "rc attach $?"
	cat /tmp/att.out
	rmdir $d
}

# attach --memory-high/--memory-max/--memory-swap-max: written while it
# runs, restored after SIGINT, and after SIGKILL by the next memacct attach;
# a limit below usage is refused without --force
t_limits() {
	d=$cg/lim_test
	mkdir $d
	set -- --memory-high 100M --memory-max 200M
	[ -e $d/memory.swap.max ] && set -- "$@" --memory-swap-max 50M
	limits before $d
	memacct attach --cgroup lim_test "$@" --interval 10s > /dev/null &
	m=$!
	wait_value $d/memory.high 104857600
	limits sigint_during $d
	kill -INT $m
	wait $m
	echo "rc sigint $?"
	limits sigint_after $d

	memacct attach --cgroup lim_test "$@" --interval 10s > /dev/null &
	m=$!
	wait_value $d/memory.high 104857600
	sleep 0.5
	kill -KILL $m
	wait $m
	limits sigkill_after $d
	memacct attach --cgroup lim_test --duration 500ms > /dev/null
	echo "rc next_start $?"
	limits next_start $d

	start_in $d /tmp/lim.out mlock_steps mlock 32 60
	p=$!
	memacct attach --cgroup lim_test --memory-max 8M --duration 1s > /dev/null
	echo "rc below_usage_max $?"
	memacct attach --cgroup lim_test --memory-high 8M --duration 1s > /dev/null
	echo "rc below_usage_high $?"
	echo "kernel below_usage_current $(cat $d/memory.current)"
	limits below_usage $d
	kill -KILL $p
	wait $p
	rmdir $d
}

# explain --cgroup: a clean mmap'd file on ext2, against memory.stat
t_explain() {
	d=$cg/explain_test
	mkdir $d
	start_in $d /tmp/x.out explain_file_mmap /mnt/data 32 --seconds 60
	p=$!
	cat /tmp/x.out
	memacct -j explain --cgroup explain_test
	echo "rc explain $?"
	sed 's/^/memstat /' $d/memory.stat
	echo "kernel memory_current $(cat $d/memory.current)"
	kill -TERM $p
	wait $p
	rmdir $d
}

# audit: 64 MiB mlocked in a cgroup, caps 32M (exceeded) and 96M (ok)
t_audit() {
	d=$cg/audit_test
	mkdir $d
	start_in $d /tmp/a.out mlock_steps mlock 64 60
	p=$!
	cat /tmp/a.out
	grep -E '^Vm(Lck|Pin)' /proc/$p/status | sed 's/^/kernel /'
	memacct -j audit --cgroup audit_test --pinned-cap 32M > /tmp/a32
	echo "rc cap32 $?"
	sed 's/^/json cap32 /' /tmp/a32
	memacct audit --cgroup audit_test --pinned-cap 32M > /tmp/a32
	echo "rc cap32_plain $?"
	sed 's/^/plain cap32 /' /tmp/a32
	memacct -j audit --cgroup audit_test --pinned-cap 96M > /tmp/a96
	echo "rc cap96 $?"
	sed 's/^/json cap96 /' /tmp/a96
	kill -KILL $p
	wait $p
	rmdir $d
}

# dma: a 64 MiB AF_XDP UMEM (FOLL_PIN pages no mm counter shows) under
# memacct run, on every kernel of the matrix: which kernels have the FOLL_PIN
# counters (nr_foll_pin_acquired/released in /proc/vmstat) and the process's
# dma_pinned_peak_bytes against the workload's truth
t_dma() {
	if grep -q '^nr_foll_pin_acquired ' /proc/vmstat; then
		echo "kernel foll_pin_counters 1"
	else
		echo "kernel foll_pin_counters 0"
	fi
	printf 'pin\nexit\n' | memacct -j run --dma-pins on -- dma_pin 64 0 0
	echo "rc run $?"
}

# the whole integration suite (tests/integration*.c) on this pure v2 layout,
# from a session scope as a login shell on a systemd host runs it, the memory
# controller enabled down to it; libcheck's verdict per test
# (CK_VERBOSITY=verbose), judged by check.py --integration. As on a host,
# the binaries are on a disk file system (on the initramfs, tmpfs, their
# text would be shmem) and /bin/sh is dash.
t_integration() {
	s=$cg/user.slice/user-0.slice/session-1.scope
	mkdir -p $s /mnt/bin
	echo +memory > $cg/user.slice/cgroup.subtree_control
	echo +memory > $cg/user.slice/user-0.slice/cgroup.subtree_control
	grep ' /sys/fs/cgroup ' /proc/self/mountinfo | sed 's/^/plain mount /'
	echo "kernel cgroup1_mounts $(grep -c ' - cgroup ' /proc/self/mountinfo)"
	for f in /bin/*; do [ -L $f ] || cp $f /mnt/bin/; done
	[ -x /usr/bin/dash ] && ln -sf /usr/bin/dash /bin/sh
	# memacct.ck_run_case=NAME / memacct.ck_run_suite=NAME on the kernel
	# command line (VMTEST_APPEND) run that test case / suite only
	# (check.py then judges the tests that ran)
	ck_case=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^memacct.ck_run_case=//p')
	ck_suite=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^memacct.ck_run_suite=//p')
	[ -n "$ck_case" ] && export CK_RUN_CASE=$ck_case
	[ -n "$ck_suite" ] && export CK_RUN_SUITE=$ck_suite
	[ -n "$ck_case$ck_suite" ] && echo "plain ck_selected suite=$ck_suite case=$ck_case"
	# the test cases tagged HOST_ONLY_TAG (tests/integration.h: memacct's
	# own userspace, the same on every kernel) are the host's only
	# (CK_EXCLUDE_TAGS below; check.py leaves them out too)
	# memacct.suites=LIST: this guest's part of the suite (run.sh boots
	# the parts side by side); MEMACCT_SUITES of tests/integration.c
	parts=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^memacct.suites=//p')
	[ -n "$parts" ] && export MEMACCT_SUITES=$parts && echo "plain ck_suites $parts"
	sh -c 'echo $$ > '$s'/cgroup.procs && cd /tmp && exec env PATH=/usr/sbin:/usr/bin:/bin \
		MEMACCT=/mnt/bin/memacct WORKLOADS=/mnt/bin TESTS=/tests CK_VERBOSITY=verbose \
		MEMACCT_VMTEST=1 CK_XML_LOG_FILE_NAME=/tmp/ck.xml CK_EXCLUDE_TAGS=host-only \
		/mnt/bin/test_integration 2>&1'
	echo "rc test_integration $?"
	# each suite's seconds in this guest, from libcheck's XML log
	# (check.py prints them: what the v2 guests cost, docs/vmtest.md)
	awk -v prefix='plain ' -f /tests/ck_seconds.awk /tmp/ck.xml
	unset CK_RUN_CASE CK_RUN_SUITE MEMACCT_SUITES
	ln -sf busybox /bin/sh
	# a run's memacct-release helper (docs/run.md "Start and end") may
	# still be in the session's scope for a few seconds
	i=0
	while [ -n "$(cat $s/cgroup.procs)" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "plain scope emptied after $i x 0.1 s: $(cat $s/cgroup.procs | tr '\n' ' ')"
	rmdir $s $cg/user.slice/user-0.slice $cg/user.slice
	echo "kernel leftover_cgroups $(find $cg -mindepth 1 -type d | wc -l)"
	find $cg -mindepth 1 -type d | sed 's/^/plain leftover /'
}

# cpuless: node 2 has memory and no CPU (run.sh's third -numa node, as the
# GPU's HBM of a GH200 in NUMA mode); page_cache_node reads 1,000 pages of
# an ext2 file (real page cache, not shmem) with its policy bound to node
# 2; memacct's host JSON against node2/meminfo before and after, both read
# after stat_refresh (memacct refreshes too)
node2() {
	echo 1 > /proc/sys/vm/stat_refresh
	sed -n 's/^Node 2 \([A-Za-z]*\)(file): *\([0-9]*\) kB/kernel '$1'_\1_file_kb \2/p;
		s/^Node 2 FilePages: *\([0-9]*\) kB/kernel '$1'_file_pages_kb \1/p' \
		/sys/devices/system/node/node2/meminfo
}
t_cpuless() {
	echo "plain cpulist2 [$(cat /sys/devices/system/node/node2/cpulist 2>&1)]"
	echo "plain has_cpu [$(cat /sys/devices/system/node/has_cpu)]"
	node2 before
	page_cache_node 2 /mnt/pc_node2 1000
	echo "rc workload $?"
	node2 after
	memacct -j audit > /tmp/cl
	echo "rc audit $?"
	node2 after_audit
	sed 's/^/json audit /' /tmp/cl
	rm -f /mnt/pc_node2
}

# memacct reclaim --file-only on every kernel (docs/reclaim.md): 64 MiB of
# page cache on the ext2 disk read by a process in a cgroup of ours (it stays
# charged there after the process exits); memory.stat around the command
t_reclaim() {
	r=$cg/memacct-vm-reclaim f=/var/tmp/memacct-vm-reclaim
	mkdir $r
	echo "kernel release $(uname -r)"
	echo "kernel disk $(grep -c ' /mnt ' /proc/mounts)"
	echo "kernel has_reclaim $([ -e $r/memory.reclaim ] && echo 1 || echo 0)"
	echo "kernel swap_kb $(awk '/^SwapTotal/ {print $2}' /proc/meminfo)"
	dd if=/dev/zero of=$f bs=1M count=64 conv=fsync 2> /dev/null
	echo 1 > /proc/sys/vm/drop_caches	# the guest's own: the read charges $r
	sh -c "echo \$\$ > $r/cgroup.procs && exec cat $f > /dev/null"
	# nothing dirty left in the cgroup's page cache (an atime or log page
	# once was: reclaim freed all but that page, complete false, exit 1)
	sync
	grep -E '^(anon|file) ' $r/memory.stat | sed 's/^/memstat before_/'
	j=$(/bin/memacct -j reclaim --cgroup memacct-vm-reclaim --file-only)
	echo "rc reclaim $?"
	echo "json reclaim $j"
	grep -E '^(anon|file) ' $r/memory.stat | sed 's/^/memstat after_/'
	rm -f $f
	rmdir $r
}

# memacct.bench=1: tests/bench_cgroups.sh (the daemon's CPU per collection
# at 1,000 processes in 200 cgroups) on pure v2, from the ext2 disk; under
# TCG a figure to compare with another taken the same way only: with
# /bench/memacct-base (another static build put in $(VMTEST_DIR)/bench/,
# docs/vmtest.md) the two builds alternate in the same guest; with
# /bench/memacct-new that one is "new" instead of /bin/memacct
t_bench_cgroups() {
	mkdir -p /mnt/benchout/bench
	cp /bin/memacct /mnt/benchout/ && cp /bench/spawn /mnt/benchout/bench/
	# /bench/memacct-new: measured as "new" instead of the guest's own
	[ -x /bench/memacct-new ] && export NEW_MEMACCT=/bench/memacct-new
	# memacct.bench_rounds=N: N alternating rounds (default 3)
	ROUNDS=$(sed -n 's/.*memacct\.bench_rounds=\([0-9][0-9]*\).*/\1/p' /proc/cmdline)
	ROUNDS=${ROUNDS:-3} bash /tests/bench_cgroups.sh /mnt/benchout \
		$([ -x /bench/memacct-base ] && echo /bench/memacct-base)
	rm -rf /mnt/benchout
}

# memacct.faults=1 (run.sh: the arm64 matrix, whose only fault hook is the
# perf event with no error code): the classifier's other cases, each under
# memacct run. A private file mapping on the ext2 disk written at once and
# after a read (file CoW), a shared one written (no copy), pages a fork had
# write-protected written again after the child left (reuse, no copy), 64 MiB
# mlocked and 64 MiB registered with io_uring (pinned_vm)
t_file_cow() {
	memacct -j run -- file_private 32 /mnt
}
t_file_cow_read() {
	memacct -j run -- file_private 32 --read-first /mnt
}
t_file_shared() {
	memacct -j run -- file_shared 32 --read-first /mnt
}
t_reuse() {
	memacct -j run -- reuse_tmpfs 32 8
}
t_mlock() {
	memacct -j run -- mlock_steps mlock 64
}
t_io_uring() {
	memacct -j run -- mlock_steps io_uring 64
}

env_info() {
	echo "kernel $(uname -r)"
	echo "nodes $(ls -d /sys/devices/system/node/node* | wc -l)"
	# the base page size (4096; 16384 on arm64-16k): check.py's unit
	echo "page_size_kb $(sed -n 's/^KernelPageSize: *\([0-9]*\) kB/\1/p' /proc/self/smaps | head -1)"
	echo "cgroup_controllers $(cat /sys/fs/cgroup/cgroup.subtree_control)"
	grep -c . /proc/zoneinfo > /dev/null && grep -E '^Node|start_pfn' /proc/zoneinfo
}

echo "@@VMTEST start" >&3
section env env_info
# memacct.integration_only=1 (run.sh): a guest of a later part of the
# integration suite, whose first part's guest runs the matrix sections
matrix=1
grep -q 'memacct.integration_only=1' /proc/cmdline && matrix=
if [ -n "$matrix" ]; then
	section cow /bin/memacct -v -j run -- /bin/cow_fork 100 4
	section zero_fill t_zero_fill
	section thp t_thp
	section thread_exit t_thread_exit
	section cow_busy t_cow_busy
	section cow_maps t_cow_maps
	section page_cache t_page_cache
	section numa /bin/memacct -v -j run -- /bin/numa_bind 32
	section numa_stock t_numa_stock
	section oom t_oom
	section oom_host t_oom_host
	section attach t_attach
	section limits t_limits
	section explain t_explain
	section audit t_audit
	section dma t_dma
	if grep -q 'memacct.faults=1' /proc/cmdline; then
		section file_cow t_file_cow
		section file_cow_read t_file_cow_read
		section file_shared t_file_shared
		section reuse t_reuse
		section mlock t_mlock
		section io_uring t_io_uring
	fi
	section cpuless t_cpuless
	section reclaim t_reclaim
	grep -q 'memacct.bench=1' /proc/cmdline && section bench_cgroups t_bench_cgroups
fi
grep -q 'memacct.integration=1' /proc/cmdline && section integration t_integration
[ -n "$matrix" ] && section nomem t_nomem
echo "@@VMTEST done" >&3
sleep 1		# the port sends what it holds, then the close waits for the rest
exec 3>&-
sync
poweroff -f
