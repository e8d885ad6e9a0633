#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# bench_cgroups.sh OUTPUT_DIR [BASE_MEMACCT] - the daemon's CPU per collection
# with PROCS (1000) sleeping processes spread over CGROUPS (200) memory
# cgroups of its own (memacct-bench-cg-PID/cN below the memory hierarchy's
# root; each holds tests/bench/spawn with PROCS/CGROUPS - 1 children), as
# docs/overhead.md "Per-cgroup files" reports it. With BASE_MEMACCT (another
# build, e.g. main's) the two daemons are measured in ROUNDS (4) alternating
# rounds, each a fresh daemon at --interval 1s: after 4 s, the median of 9
# collections' memacct_scrape_cpu_seconds (the collection thread's CPU).
# Prints per arm the median over rounds [min..max of the rounds' medians].
# NEW_MEMACCT: the build measured as "new" (default OUTPUT_DIR/memacct).
# LIMIT (bytes): each cgroup gets that memory limit (the daemon forecasts
# limited cgroups: docs/metrics.md "OOM forecast"); WARM (4): seconds a
# daemon runs before its collections are measured (the forecast needs 20).
# Needs root; removes its cgroups, processes and pins at the end.
set -euo pipefail
OUT=${1:?usage: bench_cgroups.sh OUTPUT_DIR [BASE_MEMACCT]}
NEW=${NEW_MEMACCT:-$OUT/memacct}
BASE=${2:-}
PROCS=${PROCS:-1000}
CGROUPS=${CGROUPS:-200}
ROUNDS=${ROUNDS:-4}
LIMIT=${LIMIT:-}
WARM=${WARM:-4}
PORT=${PORT:-29465}
PIN=/sys/fs/bpf/memacct-bench-cg-$$
B=$OUT/bench
[ "$(id -u)" = 0 ] || { echo "bench_cgroups: needs root" >&2; exit 3; }
[ -x "$B/spawn" ] || { echo "bench_cgroups: $B/spawn missing (make builds it)" >&2; exit 4; }

if [ -d /sys/fs/cgroup/memory ] && [ -f /sys/fs/cgroup/memory/memory.stat ]; then
	ROOT=/sys/fs/cgroup/memory
else
	ROOT=/sys/fs/cgroup
	grep -qw memory "$ROOT/cgroup.subtree_control" || echo +memory >"$ROOT/cgroup.subtree_control"
fi
TOP=$ROOT/memacct-bench-cg-$$
FIFO=$(mktemp -u /tmp/memacct-bench-cg-XXXXXX)
DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null || true
	"$NEW" detach --pin-path "$PIN" >/dev/null 2>&1 || true
	exec 9>&- 2>/dev/null || true	# EOF: every spawn ends with its children
	for i in $(seq 100); do
		procs=$(cat "$TOP"/c[0-9]*/cgroup.procs 2>/dev/null || true)
		[ -z "$procs" ] && break
		# ours: what is left in our cgroups after 5 s
		[ "$i" -gt 50 ] && kill -KILL $procs 2>/dev/null
		sleep 0.1
	done
	rmdir "$TOP"/c[0-9]* "$TOP" 2>/dev/null || true
	rm -f "$FIFO"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

mkfifo "$FIFO"
exec 9<>"$FIFO"
mkdir "$TOP"
[ "$ROOT" = /sys/fs/cgroup ] && echo +memory >"$TOP/cgroup.subtree_control"
per=$((PROCS / CGROUPS))
for i in $(seq "$CGROUPS"); do
	mkdir "$TOP/c$i"
	if [ -n "$LIMIT" ]; then
		if [ "$ROOT" = /sys/fs/cgroup ]; then echo "$LIMIT" >"$TOP/c$i/memory.max"
		else echo "$LIMIT" >"$TOP/c$i/memory.limit_in_bytes"; fi
	fi
	# fd 9 (the FIFO's only writer) closed in the workload: EOF ends it
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" "$3" <"$4" >/dev/null' sh \
		"$TOP/c$i" "$B/spawn" $((per - 1)) "$FIFO" 9>&- &
done
for _ in $(seq 300); do
	n=$(cat "$TOP"/c[0-9]*/cgroup.procs | wc -l)
	[ "$n" -ge $((per * CGROUPS)) ] && break
	sleep 0.1
done
echo "bench_cgroups: $n processes in $CGROUPS cgroups below $TOP${LIMIT:+, each limited to $LIMIT bytes}"

scrape() {
	exec 3<>"/dev/tcp/127.0.0.1/$PORT"
	printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3
	cat <&3
	exec 3<&-
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

one_round() {	# MEMACCT: prints the median CPU ms of 9 collections
	local m=$1
	"$m" daemon --listen "127.0.0.1:$PORT" --pin-path "$PIN" --interval 1s \
		>/dev/null 2>"$B/daemon-cg.log" &
	DPID=$!
	for _ in $(seq 300); do
		grep -q 'serving on port' "$B/daemon-cg.log" && break
		sleep 0.1
	done
	sleep "$WARM"
	for _ in $(seq 9); do
		scrape | awk '/^memacct_scrape_cpu_seconds /{print $2*1000}'
		sleep 1
	done | median
	kill "$DPID"
	wait "$DPID" || true
	DPID=
	"$m" detach --pin-path "$PIN" >/dev/null
}

declare -A res
arms=(new)
[ -n "$BASE" ] && arms=(base new)
for r in $(seq "$ROUNDS"); do
	for a in "${arms[@]}"; do
		[ "$a" = base ] && m=$BASE || m=$NEW
		v=$(one_round "$m")
		res[$a]="${res[$a]:-} $v"
		echo "round $r $a: $v ms"
	done
done
for a in "${arms[@]}"; do
	printf "%-4s CPU per collection, %d processes / %d cgroups: %s ms [%s..%s] (%d rounds)\n" \
		"$a" "$n" "$CGROUPS" "$(tr ' ' '\n' <<<"${res[$a]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${res[$a]}" | grep . | sort -g | head -1)" \
		"$(tr ' ' '\n' <<<"${res[$a]}" | grep . | sort -g | tail -1)" "$ROUNDS"
done
