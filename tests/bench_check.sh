#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# bench_check.sh OUTPUT - `make bench-check` (part of make check): make bench's
# paired part, toggled, in 3 short blocks (arms off / floor_hot / on,
# workloads fault and switch), so that the bench cannot rot between runs:
# toggle must take the programs of empty_attach and of a real memacct daemon,
# every arm must give a figure, and nothing may stay attached or loaded
# afterwards; and `memacct run -- /bin/true` 3 times and killed with -9 at
# three points (bench/run_true.py --check): every memacct-release helper
# ends, nothing stays attached. Its figures are not checked (3 blocks
# resolve nothing: make bench measures). Needs root and BTF; skipped (exit 0)
# without them.
set -eu
OUT=$1
fail() { echo "bench-check: FAIL: $*" >&2; exit 1; }
if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	echo "bench-check: skipped (needs root and BTF)"
	exit 0
fi
# the highest link and program ids now: any above them left afterwards is ours
ids() { bpftool "$1" show 2>/dev/null | sed -n 's/^\([0-9]*\):.*/\1/p'; }
top() { ids "$1" | sort -n | tail -1; }
newer() { ids "$1" | awk -v t="${2:-0}" '$1 > t' | wc -l; }
l0=$(top link) p0=$(top prog)
res=$(/usr/bin/python3 "$(dirname "$0")/bench/paired.py" "$OUT" --blocks 3 --mode toggle \
	--arms off,floor_hot,on --workloads fault,switch --raw "$OUT/bench/check-raw.csv" 2>&1) ||
	fail "paired.py exited $?: $res"
echo "$res" | grep -q '3 blocks, toggle mode' || fail "not 3 toggled blocks: $res"
for w in fault switch; do
	echo "$res" | grep "^$w " | grep -q 'floor_hot-off .* on-off ' ||
		fail "no $w line with both arms: $res"
done
# 3 blocks x 2 workloads x 3 arms, and the CSV's header
[ "$(wc -l <"$OUT/bench/check-raw.csv")" = 19 ] || fail "$OUT/bench/check-raw.csv: not 18 values"
# memacct run -- /bin/true 3 times, then kill -9 at three points: every
# release helper must end and nothing may stay attached (bench/run_true.py)
res=$(/usr/bin/python3 "$(dirname "$0")/bench/run_true.py" "$OUT/memacct" --check 2>&1) ||
	fail "run_true.py --check: $res"
echo "$res" | grep -q 'nothing attached afterwards' || fail "run_true.py: $res"
[ "$(echo "$res" | grep -c ': nothing left')" = 3 ] || fail "run_true.py kill -9: $res"
# a closed program goes after an RCU grace period: give it a second
sleep 1
[ "$(newer link "$l0")" = 0 ] || fail "$(newer link "$l0") links left attached"
[ "$(newer prog "$p0")" = 0 ] || fail "$(newer prog "$p0") programs left loaded"
echo "bench-check: ok ($(echo "$res" | grep -c 'floor_hot-off .* on-off ') workloads, 3 toggled arms)"
