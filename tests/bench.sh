#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# bench.sh OUTPUT_DIR - memacct's overhead. Arms, interleaved in every round
# (the order rotates from round to round), medians and spread of $ROUNDS:
#   off     nothing attached
#   floor   empty programs on the same hot tracepoints (bench/empty.bpf.c):
#           what any always-on tracepoint program costs here
#   on      the daemon's kernel side (daemon started, workload, daemon stopped
#           and `memacct detach`), kernel bpf_stats off (the default)
#   stats   the same with `--bpf-stats` (kernel bpf_stats on)
# Figures are CPU time of the workload (thread/rusage CPU: other load on the
# machine disturbs it less than wall time), wall time alongside. Then the
# per-program cost from kernel bpf_stats (run_time_ns / run_cnt), then the
# daemon's own CPU per collection and RSS with 1,000 and 10,000 processes.
# Targets (issue 6): <= 150 ns per page fault, <= 1% on the realistic workload,
# <= 5 ms CPU per collection at 10,000 processes, RSS <= 30 MiB. Needs root.
# ROUNDS (default 7), SIZES ("1000 10000"), SKIP_AB=1, ARMS ("off floor on stats").
# Other memacct instances (other users' tests) attached to the same tracepoints
# would make any arm slower: before each arm the bench waits (up to QUIET_WAIT
# seconds, default 60) until no foreign mm_page_alloc program is loaded, and a
# sample during which one appeared is measured again (reported as "redone").
set -euo pipefail
OUT=${1:?usage: bench.sh OUTPUT_DIR}
ROUNDS=${ROUNDS:-7}
ARMS=(${ARMS:-off floor on stats})
MEMACCT=$OUT/memacct
PIN=/sys/fs/bpf/memacct-bench-$$
PORT=${PORT:-29464}
B=$OUT/bench
EMPTY_OBJ=$B/empty.bpf.o
EMPTY_ATTACH=$B/empty_attach
mkdir -p "$B"
for f in fault cow switch loader spawn; do
	cc -O2 -Wall -Werror -D_GNU_SOURCE "$(dirname "$0")/bench/$f.c" -o "$B/$f"
done
[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 3; }
[ -x "$EMPTY_ATTACH" ] && [ -f "$EMPTY_OBJ" ] ||
	{ echo "bench: $EMPTY_ATTACH or $EMPTY_OBJ missing (make bench builds them)" >&2; exit 4; }

DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null || true
	[ -n "${EA_PID:-}" ] && { eval "exec ${EA[1]}>&-"; wait "$EA_PID" 2>/dev/null || true; }
	"$MEMACCT" detach --pin-path "$PIN" >/dev/null 2>&1 || true
}
trap cleanup EXIT

scrape() {
	exec 3<>"/dev/tcp/127.0.0.1/$PORT"
	printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3
	cat <&3
	exec 3<&-
}

start_daemon() {	# INTERVAL [daemon options]
	local iv=$1
	shift
	"$MEMACCT" daemon --listen "127.0.0.1:$PORT" --pin-path "$PIN" --interval "$iv" "$@" \
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

start_floor() {
	coproc EA { BPF_STATS=${1:-0} "$EMPTY_ATTACH" "$EMPTY_OBJ"; }
	read -r _ <&"${EA[0]}"
}

stop_floor() {
	eval "exec ${EA[1]}>&-"
	wait "$EA_PID" 2>/dev/null || true
	EA_PID=
}

# mm_page_alloc programs loaded now (ours: 1 in arms floor/on/stats, 0 in off)
nprogs() { bpftool prog show 2>/dev/null | grep -c ' name mm_page_alloc ' || true; }
QUIET_WAIT=${QUIET_WAIT:-60}
: >"$B/redone"
wait_quiet() {
	for _ in $(seq $((QUIET_WAIT * 2))); do
		[ "$(nprogs)" = 0 ] && return 0
		sleep 0.5
	done
	echo "bench: foreign mm_page_alloc programs stay loaded; measuring anyway" >&2
}
# run "$@" until no foreign program came or went during it (3 tries)
clean_run() {	# EXPECTED CMD...
	local want=$1 o
	shift
	for t in 1 2 3; do
		o=$("$@")
		[ "$(nprogs)" = "$want" ] && break
		echo "$*" >>"$B/redone"	# counted at the end (this runs in a subshell)
	done
	echo "$o"
}

arm_start() {
	case $1 in
	off) ;;
	floor) start_floor ;;
	on) start_daemon 10s ;;
	stats) start_daemon 10s --bpf-stats ;;
	esac
}

arm_stop() {
	case $1 in
	off) ;;
	floor) stop_floor ;;
	on | stats) stop_daemon ;;
	esac
}

# median, then min and max, of the numbers on stdin
stats3() { sort -g | awk '{v[NR]=$1} END {m=(NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; print m, v[1], v[NR]}'; }
field() { awk -v k="$1" '{for (i = 1; i < NF; i++) if ($i == k) print $(i+1)}'; }

declare -A res
[ "${SKIP_AB:-0}" = 1 ] && ROUNDS=0
na=${#ARMS[@]}
for r in $(seq "$ROUNDS"); do
	for i in $(seq 0 $((na - 1))); do
		arm=${ARMS[$(((i + r) % na))]}
		wait_quiet
		arm_start "$arm"
		want=1
		[ "$arm" = off ] && want=0
		o=$(clean_run $want "$B/fault" 256 8)
		res[fault_$arm]+="$(field cpu_ns_per_fault <<<"$o") "
		res[faultw_$arm]+="$(field ns_per_fault <<<"$o") "
		o=$(clean_run $want "$B/cow" 256 4)
		res[cow_$arm]+="$(field cpu_ns_per_cow <<<"$o") "
		res[coww_$arm]+="$(field ns_per_cow <<<"$o") "
		o=$(clean_run $want "$B/switch" 200000)
		res[switch_$arm]+="$(field cpu_ns_per_switch <<<"$o") "
		res[switchw_$arm]+="$(field ns_per_switch <<<"$o") "
		for _ in 1 2; do
			o=$(clean_run $want "$B/loader" 12)
			res[loader_$arm]+="$(field cpu_seconds <<<"$o") "
			res[loaderw_$arm]+="$(field seconds <<<"$o") "
		done
		arm_stop "$arm"
	done
	echo "round $r/$ROUNDS done" >&2
done
m() { tr ' ' '\n' <<<"${res[$1]}" | grep . | stats3; }
has() { [[ " ${ARMS[*]} " == *" $1 "* ]]; }

# "median [min..max]" of a measure per arm, and the median added over "off"
report() {	# KEY UNIT LABEL
	local key=$1 unit=$2 label=$3 base
	base=$(m "${key}_off" | cut -d' ' -f1)
	printf "%-22s" "$label"
	for a in off floor on stats; do
		has "$a" || continue
		m "${key}_$a" | awk -v a="$a" -v b="$base" -v u="$unit" '{
			if (u == "%") printf "  %s %.4f s [%.4f..%.4f] %+.2f%%", a, $1, $2, $3, ($1/b-1)*100;
			else printf "  %s %.1f [%.1f..%.1f] %+.1f", a, $1, $2, $3, $1-b }'
	done
	echo
}

if [ "$ROUNDS" -gt 0 ]; then
	echo "== memacct overhead: medians [min..max] of $ROUNDS interleaved rounds, CPU time ($(wc -l <"$B/redone") samples redone) =="
	echo "   (arms: off = nothing attached, floor = empty programs on the same tracepoints,"
	echo "    on = memacct's kernel side, stats = memacct with --bpf-stats; +N: over off)"
	report fault ns "page fault ns/fault"
	report cow ns "fork+CoW ns/copy"
	report switch ns "context switch ns"
	report loader % "dataloader-like"
	echo "-- wall clock, same runs --"
	report faultw ns "page fault ns/fault"
	report coww ns "fork+CoW ns/copy"
	report switchw ns "context switch ns"
	report loaderw % "dataloader-like"
	if has floor && has on; then
		f=$(m fault_off | cut -d' ' -f1); fl=$(m fault_floor | cut -d' ' -f1)
		fo=$(m fault_on | cut -d' ' -f1)
		awk -v a="$f" -v b="$fl" -v c="$fo" 'BEGIN {
			printf "page fault: floor (empty programs) %+.1f ns, memacct %+.1f ns, of which memacct'"'"'s own code %+.1f ns (target <= 150 added)\n", b-a, c-a, c-b }'
	fi
	if has on && has stats; then
		fo=$(m fault_on | cut -d' ' -f1); fs=$(m fault_stats | cut -d' ' -f1)
		awk -v a="$fo" -v b="$fs" 'BEGIN {printf "kernel bpf_stats: %+.1f ns per fault\n", b-a}'
	fi
fi

# Per-program cost from kernel bpf_stats: one fault and one cow run under the
# daemon with --bpf-stats; run_time_ns / run_cnt and runs per event.
progstats() {	# id name run_time_ns run_cnt of the programs loaded since $B/ids0
	bpftool -j prog show | python3 -c '
import json, sys
old = set(open(sys.argv[1]).read().split())
for p in json.load(sys.stdin):
    if p.get("name") and "run_cnt" in p and str(p["id"]) not in old:
        print(p["id"], p["name"], p["run_time_ns"], p["run_cnt"])' "$B/ids0"
}
perprog() {	# LABEL EVENTS CMD...
	local label=$1 events=$2
	shift 2
	progstats >"$B/ps0"
	"$@" >/dev/null
	progstats >"$B/ps1"
	echo "-- $label ($events events): per program, ns/run and runs/event --"
	awk -v ev="$events" 'NR == FNR {t[$1] = $3; c[$1] = $4; next}
		($1 in t) && $4 > c[$1] {
			dt = $3 - t[$1]; dc = $4 - c[$1];
			printf "   %-22s %7.1f ns/run %7.3f runs/event %7.1f ns/event\n", $2, dt/dc, dc/ev, dt/ev;
			s += dt }
		END {printf "   %-22s %25s %7.1f ns/event (inside programs; bpf_stats on)\n", "total", "", s/ev}' \
		"$B/ps0" "$B/ps1"
}
if [ "${SKIP_AB:-0}" != 1 ]; then
	wait_quiet
	bpftool -j prog show | python3 -c 'import json, sys; print(*[p["id"] for p in json.load(sys.stdin)])' >"$B/ids0"
	start_daemon 10s --bpf-stats
	perprog "page fault bench" $((256 * 256 * 8)) "$B/fault" 256 8
	perprog "fork+CoW bench" $((256 * 256 * 4)) "$B/cow" 256 4
	stop_daemon
fi

echo "== daemon cost per collection (interval 1s) =="
for n in ${SIZES:-1000 10000}; do
	coproc SP { "$B/spawn" "$n"; }
	read -r _ <&"${SP[0]}"
	start_daemon 1s
	sleep 4
	cpu=$(for _ in 1 2 3 4 5 6 7; do scrape | awk '/^memacct_scrape_cpu_seconds /{print $2*1000}'; sleep 1; done | stats3)
	wall=$(scrape | awk '/^memacct_scrape_duration_seconds /{print $2*1000}')
	procs=$(scrape | awk '/^memacct_processes /{print $2}')
	rss=$(awk '/VmRSS/{print $2/1024}' "/proc/$DPID/status")
	read -r c1 c2 c3 <<<"$cpu"
	printf "%6d processes (%s seen): CPU %.2f ms [%.2f..%.2f] per collection (target <= 5), wall %.2f ms, daemon RSS %.1f MiB (target <= 30)\n" \
		"$n" "$procs" "$c1" "$c2" "$c3" "$wall" "$rss"
	stop_daemon
	eval "exec ${SP[1]}>&-"
	wait "$SP_PID" 2>/dev/null || true
done

if [ "${SKIP_EXPLAIN:-0}" != 1 ]; then
	echo "== memacct explain on a process with 10,000 mappings"
	"$(dirname "$0")/bench_explain.sh" "$OUT"
fi
