#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# user/ by layer (README "Layout"): a file includes headers of its own layer
# and of those before it, never of a later one. Fails naming each upward
# include. Layers, first to last:
#   user/         util, signals: no memacct header
#   user/proc/    parsers of the kernel's files (/proc, memcg files)
#   user/kernel/  the BPF side: loader, pins, task walk, BPF map readers
#   user/model/   the report model, metric table, the collectors
#   user/out/     writers: table, JSON, OpenMetrics, HTTP, recordings
#   user/cmd/     one file per command, main, help text
set -euo pipefail
cd "$(dirname "$0")/../user"
layers=(. proc kernel model out cmd)
declare -A rank where
for i in "${!layers[@]}"; do
	rank[${layers[$i]}]=$i
	for h in "${layers[$i]}"/*.h; do
		[ -e "$h" ] && where[$(basename "$h")]=${layers[$i]}
	done
done
bad=0
for d in "${layers[@]}"; do
	for f in "$d"/*.[ch]; do
		[ -e "$f" ] || continue
		while read -r h; do
			l=${where[$h]:-}
			[ -n "$l" ] || continue	# include/, the skeletons, system
			if [ "${rank[$l]}" -gt "${rank[$d]}" ]; then
				echo "layers: user/${f#./} includes $h of user/$l/, a later layer" >&2
				bad=1
			fi
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	done
done
[ -z "$(ls ./*.c ./*.h 2>/dev/null | grep -v -e util -e signals)" ] ||
	{ echo "layers: user/ holds a file outside the layers" >&2; bad=1; }
exit $bad
