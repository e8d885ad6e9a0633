#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# record_cost.sh [SECONDS] [PROCS]: what `memacct run --record` costs
# (docs/overhead.md "Recording"). PROCS python3 processes (default 10) that
# each allocate and free 1 MiB blocks every 100 ms for SECONDS (default 60)
# run under `memacct run -i 100ms` without and with --record, and under
# `run --record` alone (a sample a second), and with -i 100ms without and
# with --record beside a shell that starts a short-lived process every 50 ms (rows come
# and go: the patches' worst case); for each: memacct's own CPU time
# (utime + stime of its process, /proc/PID/stat, sampled every 0.5 s until it
# exits: the last half second is not counted) and the recording's size, per
# minute and extrapolated to 10 minutes. Root; MEMACCT names the binary,
# ARMS the arms to run (default: all of them).
set -eu
SECONDS_RUN=${1:-60}
PROCS=${2:-10}
MEMACCT=${MEMACCT:-$(dirname "$0")/../.output/memacct}
DIR=$(mktemp -d /tmp/memacct-record-cost-$$-XXXXXX)
trap 'rm -rf "$DIR"' EXIT
TCK=$(getconf CLK_TCK)

cat > "$DIR/w.py" <<PY
import time
end = time.time() + $SECONDS_RUN
blocks, i = [], 0
while time.time() < end:
    blocks.append(bytearray(1 << 20))
    i += 1
    if len(blocks) > 32:
        del blocks[:16]
    time.sleep(0.1)
PY
CMD="i=0; while [ \$i -lt $PROCS ]; do /usr/bin/python3 $DIR/w.py & i=\$((i+1)); done; wait"
CHURN="end=\$((\$(date +%s) + $SECONDS_RUN)); while [ \$(date +%s) -lt \$end ]; do /bin/sleep 0.05; done"

arm() {	# NAME ARGS...
	name=$1
	shift
	case " ${ARMS:-$name} " in *" $name "*) ;; *) return 0 ;; esac
	"$MEMACCT" -o "$DIR/$name.out" run "$@" -- sh -c "$CMD" &
	pid=$!
	ticks=0
	while t=$(awk '{print $14 + $15}' /proc/$pid/stat 2>/dev/null); do
		ticks=$t
		sleep 0.5
	done
	wait $pid || true
	bytes=0
	[ -f "$DIR/$name.jsonl" ] && bytes=$(stat -c %s "$DIR/$name.jsonl")
	awk -v n="$name" -v t="$ticks" -v hz="$TCK" -v s="$SECONDS_RUN" -v b="$bytes" \
	    -v l="$( [ -f "$DIR/$name.jsonl" ] && wc -l < "$DIR/$name.jsonl" || echo 0)" 'BEGIN {
		printf "%-22s cpu %6.2f s = %5.2f%% of a CPU; file %8.2f MiB/min = %7.1f MiB per 10 min (%d lines)\n",
		       n, t / hz, 100 * t / hz / s, b / s * 60 / 1048576, b / s * 600 / 1048576, l }'
}

echo "record_cost: $PROCS processes, $SECONDS_RUN s each, $(nproc) CPUs, $(uname -r)"
arm interval -i 100ms
arm interval_record -i 100ms --record "$DIR/interval_record.jsonl"
arm record_only --record "$DIR/record_only.jsonl"
CMD="$CMD & $CHURN; wait"
arm churn_interval -i 100ms
arm churn_interval_record -i 100ms --record "$DIR/churn_interval_record.jsonl"
