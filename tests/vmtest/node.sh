#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# node.sh STEP [ARG] - one node of make vmtest-cluster (tests/vmtest/cluster.py,
# docs/vmtest.md "Cluster"). The guest's /init runs `node.sh up`: its network
# card (qemu user networking: 10.0.2.15, the host's forwarded ports reach it),
# the daemon as docs/deploy/daemonset.yaml runs it (on 127.0.0.1:9464, the
# kernel side pinned, the state in /run/memacct) but for its interval (1 s:
# the host's Prometheus scrapes every second), a relay of port 9443 to it in
# place of kube-rbac-proxy, and busybox httpd on port 8080, which runs this
# script as a CGI for each step the host asks for: GET /cgi-bin/node?STEP&ARG.
# Each step prints "key value" lines; a line "error ..." fails it.
#   job MIB     the job's cgroup as slurmd lays it out (system.slice/
#               slurmstepd.scope/job_ID/step_0, ID from the kernel's
#               memacct.node_job=), and in it a 256 MiB file on the ext2
#               disk mapped and read by 2 processes (explain_file_mmap
#               --mappers 2) and a forked heap of MIB with 4 workers that
#               copy an eighth each (explain_fork)
#   fork MIB    another forked heap of MIB in step_0 (explain_fork, 4 workers)
#   charge      the job cgroup's memory.current, anon and file (memory.stat)
#               and Σ VmRSS of its processes, read now
#   restart [stop|start]
#               the daemon stopped (SIGTERM) and started again on its pins
#               (or only the one or the other)
#   oom         a step_oom cgroup of the job with memory.max 32M, and in it
#               an allocation of 128 MiB of anon that the OOM killer ends
#   stop        the workloads ended, the daemon stopped, its kernel side
#               removed (the uninstall), then /init powers off
PATH=/bin
cg=/sys/fs/cgroup
id=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^memacct.node_job=//p')
job=$cg/system.slice/slurmstepd.scope/job_${id:-4711}

# alive PID: running (a zombie that init has not reaped yet is not)
alive() {
	[ -e /proc/$1 ] && ! grep -q '^State:.*Z' /proc/$1/status 2> /dev/null
}

# gone PID: not alive
gone() {
	! alive "$1"
}

# wait_until SECONDS CMD...: until CMD succeeds, every 0.1 s: 0; 1 after
# SECONDS; CMD's own status above 1 at once (it will never succeed)
wait_until() {
	n=$(($1 * 10)) i=0
	shift
	until "$@"; do
		rc=$?
		[ $rc -gt 1 ] && return $rc
		i=$((i + 1))
		[ $i -gt $n ] && return 1
		sleep 0.1
	done
}

# serving: the daemon answers /healthz with 200 (503 while it loads); 2 when
# it exited
serving() {
	wget -q -O /dev/null http://127.0.0.1:9464/healthz 2> /dev/null && return 0
	alive "$(cat /run/memacct-daemon.pid)" || return 2
	return 1
}

daemon_start() {
	setsid memacct daemon --listen 127.0.0.1:9464 --interval 1s < /dev/null > /dev/null \
		2>> /run/memacct-daemon.log &
	echo $! > /run/memacct-daemon.pid
	t0=$(cut -d' ' -f1 /proc/uptime)
	# TCG: tens of seconds to load
	wait_until 300 serving
	case $? in
	0) echo "daemon_up_s $(awk -v a="$t0" '{ print $1 - a }' /proc/uptime)" ;;
	1) echo "error daemon not serving in 300 s"; return 1 ;;
	*) echo "error daemon exited: $(tail -n 3 /run/memacct-daemon.log)"; return 1 ;;
	esac
}

# daemon_stop: SIGTERM, then until it is gone
daemon_stop() {
	p=$(cat /run/memacct-daemon.pid)
	kill "$p" 2> /dev/null
	wait_until 60 gone "$p" ||
		{ echo "error daemon $p still running 60 s after SIGTERM"; return 1; }
}

# start_ready OUT CGROUP CMD...: CMD in CGROUP, detached (the CGI returns),
# once it printed "ready"
start_ready() {
	out=$1 dir=$2
	shift 2
	setsid sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$dir" "$@" \
		< /dev/null > "$out" 2>&1 &
	wait_until 180 grep -q '^ready' "$out" ||
		{ echo "error $out not ready in 180 s: $(tail -n 3 "$out")"; return 1; }
}

# job_pids: the processes of the job's cgroups
job_pids() {
	cat $(find "$job" -name cgroup.procs)
}

step_up() {
	ip link set lo up
	ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 &&
		ip route add default via 10.0.2.2 || { echo "error no eth0"; return 1; }
	mkdir -p /run/memacct /www/cgi-bin
	cp /bin/node.sh /www/cgi-bin/node
	daemon_start || return 1
	# kube-rbac-proxy's place: the node's port 9443 to the daemon's loopback
	nc -ll -p 9443 -e nc 127.0.0.1 9464 < /dev/null > /dev/null 2>&1 &
	httpd -p 8080 -h /www
}

step_job() {
	mkdir -p "$job/step_0" || return 1
	for d in $cg/system.slice $cg/system.slice/slurmstepd.scope "$job"; do
		echo +memory > "$d/cgroup.subtree_control"
	done
	start_ready /tmp/file.out "$job/step_0" explain_file_mmap /mnt/dataset 256 --mappers 2 \
		--seconds 1800 || return 1
	step_fork "$1"
}

step_fork() {
	start_ready /tmp/fork-$$.out "$job/step_0" explain_fork "${1:-64}" 4 --seconds 1800 ||
		return 1
	sed -n 's/^truth /truth_/p' /tmp/fork-$$.out
}

step_charge() {
	echo "usage $(cat "$job/memory.current")"
	grep -E '^(anon|file) ' "$job/memory.stat"
	rss=0
	for p in $(job_pids); do
		k=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$p/status 2> /dev/null)
		rss=$((rss + ${k:-0} * 1024))
	done
	echo "rss $rss"
}

step_restart() {
	case $1 in
	stop) daemon_stop ;;
	start) daemon_start ;;
	*) daemon_stop && daemon_start ;;
	esac
}

step_oom() {
	mkdir -p "$job/step_oom" && echo 32M > "$job/step_oom/memory.max" || return 1
	sh -c 'echo $$ > "$0/cgroup.procs" && exec oom 128' "$job/step_oom" > /tmp/oom.out 2>&1
	echo "oom_rc $?"
	sed -n 's/^oom_kill /oom_kill /p' "$job/step_oom/memory.events"
}

step_stop() {
	for p in $(job_pids); do kill "$p"; done
	daemon_stop
	memacct daemon --stop-kernel-side 2>&1 | tail -n 1
	echo "pinned_left $(find /sys/fs/bpf -type f | wc -l)"
	: > /run/poweroff
}

if [ $# -eq 0 ]; then	# a CGI of httpd: GET /cgi-bin/node?STEP&ARG
	printf 'Content-Type: text/plain\r\n\r\n'
	set -- $(echo "$QUERY_STRING" | tr '&' ' ')
fi
case $1 in
up | job | fork | charge | restart | oom | stop) s=$1; shift; step_$s "$@" ;;
*) echo "error unknown step '$1'" ;;
esac
