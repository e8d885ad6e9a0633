#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# bench_explain.sh OUTPUT_DIR - wall time of `memacct explain` on a process
# with 10,000 mappings (workloads/many_maps), median and min of $ROUNDS runs,
# JSON and plain, next to the time the kernel takes to produce its smaps
# (`cat /proc/PID/smaps`). Target (issue 46): 50 ms for -j. Reports only;
# no assertion. Root is not needed (the process is our own child).
set -euo pipefail
OUT=${1:?usage: bench_explain.sh OUTPUT_DIR}
ROUNDS=${ROUNDS:-15}
MAPS=${MAPS:-10000}
MEMACCT=$OUT/memacct

coproc MM { exec "$OUT/workloads/many_maps" "$MAPS" 120; }
MMPID=$MM_PID
trap 'kill "$MMPID" 2>/dev/null; wait "$MMPID" 2>/dev/null || true' EXIT
PID=
while read -r k v <&"${MM[0]}"; do
	[ "$k" = ready ] && { PID=$v; break; }
done
[ -n "$PID" ] || { echo "bench_explain: many_maps did not start" >&2; exit 4; }

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
# ms of wall time for each of $ROUNDS runs of "$@"
times() {
	for _ in $(seq "$ROUNDS"); do
		t0=$(date +%s%N)
		"$@" >/dev/null
		t1=$(date +%s%N)
		echo $(( (t1 - t0) / 1000 ))
	done | awk '{printf "%.1f\n", $1 / 1000}'
}
report() {
	local what=$1; shift
	local t; t=$(times "$@")
	printf "%-34s median %7.1f ms   min %7.1f ms\n" "$what" \
		"$(median <<<"$t")" "$(sort -g <<<"$t" | head -1)"
}
echo "== memacct explain, $(grep -c . "/proc/$PID/maps") mappings ($ROUNDS runs; target of -j: 50 ms) =="
report "kernel: cat /proc/PID/smaps" cat "/proc/$PID/smaps"
report "memacct -j explain PID" "$MEMACCT" -j explain "$PID"
report "memacct explain PID (table)" "$MEMACCT" explain "$PID"
report "memacct explain --by file PID" "$MEMACCT" explain --by file "$PID"
