#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# tests/gpu/reference.sh RESULTS: issue 13's reference figures on the 16-CPU
# GPU host that the `device` tool lends (docs/overhead.md "16-CPU reference
# host"), from the repository root, as root, with the bundle of
# tests/gpu/bundle.sh carried in .output/gpu (that host has no libbpf of ours
# and no package registry). NOT RUN in CI. Each part has its own time limit
# and writes its file in RESULTS as it goes, so a run cut short keeps what
# it measured:
#   host.txt      kernel, CPUs, memory, pid_max, the interpreter's torch
#   paired.txt    make bench's paired per-event part, toggled arms (BLOCKS,
#                 default 80; PAIRED_MODE=process: the older design, 14
#                 blocks), arms off / floor_hot / floor / on (+ bpftrace if
#                 installed), cut at PAIRED_LIMIT s (270; paired.py reports the blocks
#                 done)
#   demo.txt      the README's DataLoader job, arms off / on (DEMO_BLOCKS, 5)
#   stats.txt     per program, kernel bpf_stats; then the daemon per
#                 collection at 1,000, 10,000 and 100,000 processes (pid_max
#                 raised for it and put back)
#   gpu.txt       tests/gpu/run.sh: CUDA pinned memory against FOLL_PIN
#   pindemo.txt   dataloader_demo.py --pin-memory alone (no memacct): the
#                 FOLL_PIN deltas it prints, for run.sh's second check
# Environment: PYTHON (python3: the one with torch there), BLOCKS, DEMO_BLOCKS,
# DEMO_ARGS, SIZES, PAIRED_MODE, PARTS (default "paired stats demo gpu pindemo",
# most wanted first).
set -u
R=${1:?usage: reference.sh RESULTS}
G=$PWD/.output/gpu
[ -x "$G/memacct" ] || { echo "reference: $G missing (tests/gpu/bundle.sh)" >&2; exit 4; }
mkdir -p "$R"
export PATH=$G/sbin:$PATH PYTHON=${PYTHON:-python3}
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
t0=$(date +%s)
part() { echo "== $1 $(($(date +%s) - t0)) s" | tee -a "$R/parts.txt"; }

{
	uname -a
	echo "cpus $(nproc)"
	grep -m1 'model name' /proc/cpuinfo
	grep MemTotal /proc/meminfo
	echo "pid_max $(cat /proc/sys/kernel/pid_max)"
	echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "cgroup $(stat -fc %T /sys/fs/cgroup)"
	command -v bpftrace || echo "bpftrace: none"
	"$PYTHON" -c 'import sys, torch, numpy; print(sys.version.split()[0], "torch", torch.__version__, "numpy", numpy.__version__, "cuda", torch.cuda.is_available())'
	bpftool prog show | grep -c '^[0-9]*:' | sed 's/^/BPF programs loaded before: /'
} >"$R/host.txt" 2>&1

for p in ${PARTS:-paired stats demo gpu pindemo}; do
	part "$p"
	case $p in
	paired)
		mode=${PAIRED_MODE:-toggle}
		[ "$mode" = toggle ] && blocks=${BLOCKS:-80} || blocks=${BLOCKS:-14}
		timeout "${PAIRED_LIMIT:-270}" "$PYTHON" tests/bench/paired.py "$G" --blocks "$blocks" --mode "$mode" \
			--arms off,floor_hot,floor,on,bpftrace --raw "$R/paired-raw.csv" \
			>"$R/paired.txt" 2>&1
		;;
	demo)
		timeout 110 "$PYTHON" tests/bench/paired.py "$G" --blocks "${DEMO_BLOCKS:-5}" \
			--arms off,on --workloads demo --raw "$R/demo-raw.csv" >"$R/demo.txt" 2>&1
		;;
	stats)
		old=$(cat /proc/sys/kernel/pid_max)
		[ "$old" -ge 200000 ] || echo 4194304 >/proc/sys/kernel/pid_max
		SKIP_PAIRED=1 SKIP_EXPLAIN=1 SIZES="${SIZES:-1000 10000 100000}" timeout "${STATS_LIMIT:-130}" \
			tests/bench.sh "$G" >"$R/stats.txt" 2>&1
		echo "$old" >/proc/sys/kernel/pid_max
		;;
	gpu)
		timeout 100 tests/gpu/run.sh "$G/memacct" tests/workloads >"$R/gpu.txt" 2>&1
		;;
	pindemo)
		timeout 45 "$PYTHON" tests/workloads/dataloader_demo.py --pin-memory --objects 20000 \
			--workers 4 --batch-size 16 >"$R/pindemo.txt" 2>&1
		;;
	esac
	echo "exit $?" | tee -a "$R/parts.txt"
done
part end
