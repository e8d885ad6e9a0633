#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# tests/gpu/run.sh MEMACCT WORKLOADS_DIR: issue 11's ground truth on a CUDA
# node (root, cgroup v2, an otherwise idle host: the truth is the host's
# FOLL_PIN counter). NOT RUN in CI; run on the device GPU host on 2026-11-26
# (docs/metrics.md "On a CUDA host": step 1 exact, step 2 open).
#  1. tests/gpu/pinned_cuda.py under a memacct daemon, in a cgroup of ours:
#     CUDA init, pin_memory=True 1 GiB, cudaHostRegister 256 MiB, unregister
#     and free; each step's dma_pinned_bytes (process and the daemon's
#     per-cgroup gauge) against the FOLL_PIN delta, within 1%.
#  2. `memacct -j run` of dataloader_demo.py --pin-memory: the process's
#     dma_pinned_peak_bytes against the demo's foll_pin_delta_peak_pages.
# Exit 0 when all agree, 1 when a figure is off, 77 when CUDA is missing.
set -u
MEMACCT=${1:?usage: run.sh MEMACCT WORKLOADS_DIR}
WL=${2:?usage: run.sh MEMACCT WORKLOADS_DIR}
HERE=$(dirname "$0")
CG=/sys/fs/cgroup/memacct-test-gpu-$$
PIN=/sys/fs/bpf/memacct-test-gpu-$$
PORT=$((40000 + $$ % 20000))
rc=0

[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || { echo "skip: /sys/fs/cgroup is not cgroup v2"; exit 77; }
mkdir "$CG" || exit 3
"$MEMACCT" daemon --listen 127.0.0.1:$PORT --interval 300ms --pin-path "$PIN" >/dev/null 2>&1 &
D=$!
i=0
while [ ! -e "$PIN/links" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
sh -c "echo \$\$ > $CG/cgroup.procs; exec ${PYTHON:-/usr/bin/python3} $HERE/pinned_cuda.py \
	--memacct $MEMACCT --pin-path $PIN --metrics http://127.0.0.1:$PORT/metrics \
	--cgroup /memacct-test-gpu-$$"
st=$?
[ $st -ne 0 ] && rc=$st

if [ $rc -ne 77 ]; then
	OUT=$("$MEMACCT" -j run -- "${PYTHON:-/usr/bin/python3}" "$WL/dataloader_demo.py" --pin-memory \
		--objects 20000 --workers 4 --batch-size 16)
	peak=$(printf '%s\n' "$OUT" | awk '/^kernel foll_pin_delta_peak_pages/ { print $2 * 4096 }')
	mine=$(printf '%s\n' "$OUT" | grep '^{' | tail -1 | python3 -c \
		'import json,sys; r=json.load(sys.stdin); print(max(p["dma_pinned_peak_bytes"] for p in r["processes"]))')
	echo "dataloader pin_memory=True: dma_pinned_peak memacct $mine truth (FOLL_PIN peak) $peak"
	python3 -c "import sys; m,t=int(sys.argv[1]),int(sys.argv[2]); sys.exit(abs(m-t) > max(t//100, 4096))" \
		"$mine" "$peak" || rc=1
fi

kill -INT $D; wait $D
"$MEMACCT" detach --pin-path "$PIN" >/dev/null 2>&1
rmdir "$CG"
exit $rc
