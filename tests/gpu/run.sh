#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# tests/gpu/run.sh MEMACCT WORKLOADS_DIR: issues 11 and 29's ground truth on
# a CUDA node (root, cgroup v2, an otherwise idle host: the truth is the
# host's FOLL_PIN counter and each process's own log of its driver calls,
# tests/gpu/nvioctl_log.c built here with the host's cc). NOT RUN in CI; run
# on the device GPU host (docs/gpu.md "On the H100 host").
#  1. tests/gpu/pinned_cuda.py under a memacct daemon, in a cgroup of ours:
#     CUDA init, pin_memory=True 1 GiB, cudaHostRegister 256 MiB, a 10 GiB
#     cudaMalloc, unregister and free; each step's dma_pinned_bytes (process
#     and the daemon's per-cgroup gauge) against the FOLL_PIN delta within
#     1%, explain's NVIDIA ranges against the process's driver log (the same
#     set, each in a mapping), and the host object (unowned kernel memory).
#  2. pinned_cuda.py --pair 16: two processes registering 16 x 64 MiB at
#     once, each exact against its own driver log, the sum against FOLL_PIN.
#  3. `memacct -j run` of dataloader_demo.py --pin-memory: the process's
#     dma_pinned_peak_bytes against the demo's foll_pin_delta_peak_pages.
# Exit 0 when all agree, 1 when a figure is off, 77 when CUDA is missing.
set -u
MEMACCT=${1:?usage: run.sh MEMACCT WORKLOADS_DIR}
WL=${2:?usage: run.sh MEMACCT WORKLOADS_DIR}
HERE=$(dirname "$0")
PY=${PYTHON:-/usr/bin/python3}
CG=/sys/fs/cgroup/memacct-test-gpu-$$
PIN=/sys/fs/bpf/memacct-test-gpu-$$
LOGD=/tmp/memacct-test-gpu-$$
PORT=$((40000 + $$ % 20000))
rc=0

[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || { echo "skip: /sys/fs/cgroup is not cgroup v2"; exit 77; }
mkdir "$CG" "$LOGD" || exit 3
PRELOAD=
if cc -shared -fPIC -O2 -o "$LOGD/nvioctl_log.so" "$HERE/nvioctl_log.c" -ldl; then
	PRELOAD=$LOGD/nvioctl_log.so
else
	echo "no cc: the ranges cannot be checked against the driver calls"
fi
"$MEMACCT" daemon --listen 127.0.0.1:$PORT --interval 300ms --pin-path "$PIN" >/dev/null 2>&1 &
D=$!
i=0
while [ ! -e "$PIN/links" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
sh -c "echo \$\$ > $CG/cgroup.procs; NVIOCTL_LOG=$LOGD/log LD_PRELOAD=$PRELOAD exec $PY \
	$HERE/pinned_cuda.py --memacct $MEMACCT --pin-path $PIN \
	--metrics http://127.0.0.1:$PORT/metrics --cgroup /memacct-test-gpu-$$"
st=$?
[ $st -ne 0 ] && rc=$st

if [ $rc -ne 77 ]; then
	NVIOCTL_LOG=$LOGD/log LD_PRELOAD=$PRELOAD $PY $HERE/pinned_cuda.py --memacct "$MEMACCT" \
		--pin-path "$PIN" --pair 16 || rc=1
	$PY -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:$PORT/metrics').read().decode())" |
		grep '^memacct_nvidia_pin_calls_total\|^memacct_host_' | sed 's/^/metric /'
	DEMO=$("$MEMACCT" -j run -- $PY "$WL/dataloader_demo.py" --pin-memory \
		--objects 20000 --workers 4 --batch-size 16)
	printf '%s\n' "$DEMO" | grep '^kernel foll_pin'
	# pages to bytes in Python: on the GPU host this awk line printed 0
	# where the demo had printed 84,480 pages (cause not found), which an
	# earlier run took for the demo's own figure
	peak=$(printf '%s\n' "$DEMO" | $PY -c 'import sys
for l in sys.stdin:
    w = l.split()
    if w[:2] == ["kernel", "foll_pin_delta_peak_pages"]:
        print(int(w[2]) * 4096)')
	mine=$(printf '%s\n' "$DEMO" | grep '^{' | tail -1 | $PY -c \
		'import json,sys; r=json.load(sys.stdin); print(max(p["dma_pinned_peak_bytes"] for p in r["processes"]), r["nvidia_pin_calls"])')
	echo "dataloader pin_memory=True: dma_pinned_peak, nvidia_pin_calls: memacct $mine truth (FOLL_PIN peak) $peak"
	$PY -c "import sys; m,t=int(sys.argv[1]),int(sys.argv[2]); sys.exit(abs(m-t) > max(t//100, 4096))" \
		"${mine%% *}" "$peak" || rc=1
fi

kill -INT $D; wait $D
"$MEMACCT" detach --pin-path "$PIN" >/dev/null 2>&1
rmdir "$CG"
rm -rf "$LOGD"
exit $rc
