#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# bench.sh OUTPUT_DIR - memacct's overhead, A/B/A/B (without / with the daemon's
# kernel side attached), medians of $ROUNDS rounds; then the daemon's own CPU
# per collection and RSS with 1,000 and 10,000 processes alive. Needs root.
# Targets (issue 6): <= 150 ns per page fault, <= 1% on the realistic workload,
# <= 5 ms CPU per collection at 10,000 processes, RSS <= 30 MiB.
set -euo pipefail
OUT=${1:?usage: bench.sh OUTPUT_DIR}
ROUNDS=${ROUNDS:-3}
MEMACCT=$OUT/memacct
PIN=/sys/fs/bpf/memacct-bench-$$
PORT=${PORT:-29464}
B=$OUT/bench
mkdir -p "$B"
for f in fault cow loader spawn; do
	cc -O2 -Wall -Werror -D_GNU_SOURCE "$(dirname "$0")/bench/$f.c" -o "$B/$f"
done
[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 3; }

DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null || true
	"$MEMACCT" detach --pin-path "$PIN" >/dev/null 2>&1 || true
}
trap cleanup EXIT

scrape() {
	exec 3<>"/dev/tcp/127.0.0.1/$PORT"
	printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3
	cat <&3
	exec 3<&-
}

start_daemon() {
	"$MEMACCT" daemon --listen "127.0.0.1:$PORT" --pin-path "$PIN" --interval "$1" \
		>/dev/null 2>"$B/daemon.log" &
	DPID=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench: daemon did not start" >&2
	cat "$B/daemon.log" >&2
	exit 4
}

stop_daemon() {
	kill "$DPID"
	wait "$DPID" || true
	DPID=
	"$MEMACCT" detach --pin-path "$PIN"
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

declare -A res
[ "${SKIP_AB:-0}" = 1 ] && ROUNDS=0
for r in $(seq "$ROUNDS"); do
	for mode in off on; do
		[ $mode = on ] && start_daemon 10s
		res[fault_$mode]+="$("$B/fault" 256 8 | awk '{print $2}') "
		res[cow_$mode]+="$("$B/cow" 256 4 | awk '{print $2}') "
		res[loader_$mode]+="$("$B/loader" 6 | awk '{print $2}') "
		[ $mode = on ] && stop_daemon
	done
	echo "round $r: fault ${res[fault_off]##* }/${res[fault_on]##* } done" >/dev/null
done
m() { tr ' ' '\n' <<<"${res[$1]}" | grep . | median; }
[ "$ROUNDS" -gt 0 ] && {
fo=$(m fault_off); fn=$(m fault_on); co=$(m cow_off); cn=$(m cow_on)
lo=$(m loader_off); ln=$(m loader_on)
echo "== memacct overhead (medians of $ROUNDS A/B rounds) =="
awk -v a="$fo" -v b="$fn" 'BEGIN {printf "page fault:      %8.1f -> %8.1f ns/fault   added %+7.1f ns (target <= 150)\n", a, b, b-a}'
awk -v a="$co" -v b="$cn" 'BEGIN {printf "fork+CoW copy:   %8.1f -> %8.1f ns/copy    added %+7.1f ns\n", a, b, b-a}'
awk -v a="$lo" -v b="$ln" 'BEGIN {printf "dataloader-like: %8.4f -> %8.4f s          slowdown %+6.2f%% (target <= 1%%)\n", a, b, (b/a-1)*100}'
}

echo "== daemon cost per collection (interval 1s) =="
for n in ${SIZES:-1000 10000}; do
	coproc SP { "$B/spawn" "$n"; }
	read -r _ <&"${SP[0]}"
	start_daemon 1s
	sleep 4
	cpu=$(for _ in 1 2 3 4 5; do scrape | awk '/^memacct_scrape_cpu_seconds /{print $2*1000}'; sleep 1; done | median)
	wall=$(scrape | awk '/^memacct_scrape_duration_seconds /{print $2*1000}')
	procs=$(scrape | awk '/^memacct_processes /{print $2}')
	rss=$(awk '/VmRSS/{print $2/1024}' "/proc/$DPID/status")
	printf "%6d processes (%s seen): CPU %.2f ms per collection (target <= 5), wall %.2f ms, daemon RSS %.1f MiB (target <= 30)\n" \
		"$n" "$procs" "$cpu" "$wall" "$rss"
	stop_daemon
	eval "exec ${SP[1]}>&-"
	wait "$SP_PID" 2>/dev/null || true
done

echo "== memacct explain on a process with 10,000 mappings"
"$(dirname "$0")/bench_explain.sh" "$OUT"
