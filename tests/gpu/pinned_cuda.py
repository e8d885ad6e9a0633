#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""pinned_cuda: memacct's DMA pins against the kernel's FOLL_PIN counter on a
CUDA node (issue 11's table), one step at a time.

Run by tests/gpu/run.sh (root, a memacct daemon pinned under --pin-path and
listening on --metrics, this process in the cgroup --cgroup).  NOT RUN in CI:
it needs an NVIDIA GPU, PyTorch with CUDA and numpy.

Each step changes what the process pins, then compares, as bytes:
  truth: host nr_foll_pin_acquired - released now minus before CUDA init
         (/proc/vmstat after stat_refresh; the node must be otherwise idle)
  memacct: `memacct -j explain --pid PID --pin-path DIR` dma_pinned_bytes of
         this process, and the daemon's memacct_dma_pinned_bytes{cgroup}
Steps: cuda_init (torch.zeros on the GPU), pin_1g (torch.empty(1 GiB,
pin_memory=True): cudaHostAlloc, a "/dev/zero (deleted)" rw-s mapping),
register_256m (cudaHostRegister of a 256 MiB numpy array), unregister_free
(cudaHostUnregister, the tensor freed, torch._C._host_emptyCache()).

Output: "step NAME truth B memacct B cgroup B ok|FAIL" per step (FAIL: off by
more than 1% of the truth, or 1 page), the explain verdict lines after pin_1g,
and exit 1 when a step failed, 77 ("skip: ...") without CUDA.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads"))
from dataloader_demo import foll_pinned_pages  # noqa: E402 (torch, numpy too)

PAGE = 4096


def foll_pinned():
    """Host FOLL_PIN bytes now, or None (dataloader_demo's reading)."""
    pages = foll_pinned_pages()
    return None if pages is None else pages * PAGE


def explain(args, pid):
    out = subprocess.run([args.memacct, "-j", "explain", "--pid", str(pid), "--pin-path",
                          args.pin_path], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def cgroup_gauge(args):
    text = urllib.request.urlopen(args.metrics, timeout=5).read().decode()
    pat = r'^memacct_dma_pinned_bytes\{cgroup="%s"\} (\d+)' % re.escape(args.cgroup)
    m = re.search(pat, text, re.M)
    return int(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memacct", required=True)
    ap.add_argument("--pin-path", required=True)
    ap.add_argument("--metrics", required=True, help="the daemon's /metrics URL (loopback)")
    ap.add_argument("--cgroup", required=True, help="this process's cgroup, as the daemon labels it")
    args = ap.parse_args()

    import numpy as np
    import torch

    if not torch.cuda.is_available():
        print("skip: no CUDA", file=sys.stderr)
        return 77
    base = foll_pinned()
    if base is None:
        print("skip: no nr_foll_pin_* in /proc/vmstat", file=sys.stderr)
        return 77
    pid, failed = os.getpid(), False

    def step(name):
        nonlocal failed
        time.sleep(1)  # the daemon's next collection
        truth = foll_pinned() - base
        rep = explain(args, pid)
        mine = rep["processes"][0]["dma_pinned_bytes"]
        cg = cgroup_gauge(args)
        ok = all(v is not None and abs(v - truth) <= max(truth // 100, PAGE)
                 for v in (mine, cg))
        failed |= not ok
        print("step %s truth %d memacct %s cgroup %s %s" % (name, truth, mine, cg,
                                                          "ok" if ok else "FAIL"))
        sys.stdout.flush()
        return rep

    torch.zeros(1, device="cuda")
    step("cuda_init")
    t = torch.empty(1 << 30, dtype=torch.uint8, pin_memory=True)
    rep = step("pin_1g")
    for line in rep.get("verdict", []):
        print("verdict %s" % line)
    a = np.ones(256 << 20, dtype=np.uint8)
    cudart = torch.cuda.cudart()
    if cudart.cudaHostRegister(a.ctypes.data, a.nbytes, 0) != 0:
        print("cudaHostRegister failed", file=sys.stderr)
        return 1
    step("register_256m")
    cudart.cudaHostUnregister(a.ctypes.data)
    del t
    torch._C._host_emptyCache()
    step("unregister_free")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
