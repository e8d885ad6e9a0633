#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""pinned_cuda: memacct's DMA pins against the kernel's FOLL_PIN counter on a
CUDA node (issue 11's table, issue 29's ranges), one step at a time.

Run by tests/gpu/run.sh (root, a memacct daemon pinned under --pin-path and
listening on --metrics, this process in the cgroup --cgroup, with
tests/gpu/nvioctl_log.so preloaded and NVIOCTL_LOG set).  NOT RUN in CI: it
needs an NVIDIA GPU, PyTorch with CUDA and numpy.

Each step changes what the process pins, then compares, as bytes:
  truth: host nr_foll_pin_acquired - released now minus before CUDA init
         (/proc/vmstat after stat_refresh; the node must be otherwise idle)
  memacct: `memacct -j explain --pid PID --pin-path DIR` dma_pinned_bytes of
         this process, and the daemon's memacct_dma_pinned_bytes{cgroup}
  ranges: the process's own log of its driver calls (nvioctl_log.so: each
         NV_ESC_RM_ALLOC_MEMORY of an OS descriptor that returned NV_OK, less
         those NV_ESC_RM_FREE'd) against explain's dma_pinned_ranges
         (source "nvidia"): the same set of [start, end), each in a mapping
  host: explain's host object (MemFree, unowned kernel memory) per step
Steps: cuda_init (torch.zeros on the GPU), pin_1g (torch.empty(1 GiB,
pin_memory=True): cudaHostAlloc, a "/dev/zero (deleted)" rw-s mapping),
register_256m (cudaHostRegister of a 256 MiB numpy array), cudamalloc_10g (10
GiB on the GPU: no host pin, the driver's host-side memory shows in unowned
kernel memory if anywhere), unregister_free (cudaHostUnregister, the tensor
freed, torch._C._host_emptyCache()).

--pair N: two processes (--child N) pin at once: CUDA init each, then on
"go" N cudaHostRegister calls of 64 MiB each as fast as they can; each one's
dma_pinned_bytes must equal the ranges its own driver log holds (exact when
the ranges are known, however the pins overlap), and their sum the host's
FOLL_PIN delta ("pair ..." lines).

Output: "step NAME truth B memacct B cgroup B ranges ok|FAIL ok|FAIL" per
step (FAIL: off by more than 1% of the truth, or 1 page; ranges not equal),
the explain verdict lines after pin_1g and register_256m, "host NAME k v"
lines, and exit 1 when a step failed, 77 ("skip: ...") without CUDA.
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


def explain(memacct, pin_path, pid):
    out = subprocess.run([memacct, "-j", "explain", "--pid", str(pid), "--pin-path",
                          pin_path], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def cgroup_gauge(args):
    text = urllib.request.urlopen(args.metrics, timeout=5).read().decode()
    pat = r'^memacct_dma_pinned_bytes\{cgroup="%s"\} (\d+)' % re.escape(args.cgroup)
    m = re.search(pat, text, re.M)
    return int(m.group(1)) if m else None


def logged_ranges(pid):
    """The OS-descriptor ranges process @pid's driver log says it holds:
    {(root, handle): (start, end)}, page-aligned; None without a log."""
    path = "%s.%d" % (os.environ.get("NVIOCTL_LOG", ""), pid)
    if not os.path.exists(path):
        return None
    live, parent, ret = {}, {}, None
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[:1] == ["ret"]:
                ret = int(w[1])
            elif w[:2] == ["exit", "ALLOC_MEMORY"] and ret == 0:
                kv = dict(zip(w[2::2], w[3::2]))
                if int(kv["class"], 16) == 0x71 and int(kv["status"], 16) == 0:
                    start, limit = int(kv["pmemory"], 16), int(kv["limit"], 16)
                    lo = start & ~(PAGE - 1)
                    hi = (start + limit + PAGE) & ~(PAGE - 1)
                    key = (kv["root"], kv["new"])
                    live[key] = (lo, hi)
                    parent[key] = kv["parent"]
            elif w[:2] == ["exit", "FREE"] and ret == 0:
                kv = dict(zip(w[2::2], w[3::2]))
                if int(kv["status"], 16):
                    continue
                root, old = kv["root"], kv["old"]
                for key in list(live):
                    if key == (root, old) or (key[0] == root and
                                              (old == root or parent[key] == old)):
                        del live[key]
    return live


def uvm_calls(pid):
    """{cmd: count} of process @pid's /dev/nvidia-uvm ioctls (its driver log)."""
    path = "%s.%d" % (os.environ.get("NVIOCTL_LOG", ""), pid)
    calls = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                w = line.split()
                if w[:1] == ["uvm"]:
                    calls[int(w[4])] = calls.get(int(w[4]), 0) + 1
    return calls


def ranges_of(rep):
    """explain's NVIDIA ranges of its first process: {(start, end): mapping}."""
    p = rep["processes"][0]
    out = {}
    for r in p.get("dma_pinned_ranges") or []:
        if r["source"] == "nvidia":
            out[(int(r["start"], 16), int(r["end"], 16))] = r["mapping"]
    return out


def host_line(name, rep):
    h = rep.get("host") or {}
    keys = sorted(k for k in h if any(s in k for s in ("unowned", "mem_free", "mem_available",
                                                      "foll_pinned_bytes")))
    print("host %s %s" % (name, " ".join("%s %s" % (k, h[k]) for k in keys)))


def child(n):
    import numpy as np
    import torch

    torch.zeros(1, device="cuda")
    cudart = torch.cuda.cudart()
    bufs = [np.ones(64 << 20, dtype=np.uint8) for _ in range(n)]
    print("ready %d" % os.getpid(), flush=True)
    sys.stdin.readline()  # go
    for b in bufs:
        if cudart.cudaHostRegister(b.ctypes.data, b.nbytes, 0) != 0:
            print("cudaHostRegister failed", file=sys.stderr)
            return 1
    print("done", flush=True)
    sys.stdin.read()
    return 0


def pair(args, n):
    """Two --child N pinners at once: each one's dma_pinned_bytes against its
    own logged ranges, exact; their sum against the host's FOLL_PIN delta."""
    base = foll_pinned()
    kids = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", str(n)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for _ in range(2)]
    pids = [int(k.stdout.readline().split()[1]) for k in kids]
    for k in kids:
        k.stdin.write("go\n")
    for k in kids:
        k.stdin.flush()
    for k in kids:
        if k.stdout.readline().strip() != "done":
            print("pair: a child failed", file=sys.stderr)
            return 1
    time.sleep(1)
    truth_host = foll_pinned() - base
    failed, total = False, 0
    for pid in pids:
        rep = explain(args.memacct, args.pin_path, pid)
        p = rep["processes"][0]
        want = sum(hi - lo for lo, hi in (logged_ranges(pid) or {}).values())
        got = sum(hi - lo for lo, hi in ranges_of(rep))
        total += p["dma_pinned_bytes"] or 0
        ok = p["dma_pinned_bytes"] == want and got == want
        failed |= not ok
        print("pair pid %d dma_pinned %s estimate %s ranges %d truth (its driver calls) %d %s" % (
            pid, p["dma_pinned_bytes"], p.get("dma_pinned_estimate"), got, want,
            "ok" if ok else "FAIL"))
        print("pair pid %d uvm ioctls %s" % (pid, sorted(uvm_calls(pid).items())))
    ok = total == truth_host
    failed |= not ok
    print("pair sum %d host FOLL_PIN delta %d %s" % (total, truth_host, "ok" if ok else "FAIL"))
    for k in kids:
        k.stdin.close()
        k.wait()
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memacct")
    ap.add_argument("--pin-path")
    ap.add_argument("--metrics", help="the daemon's /metrics URL (loopback)")
    ap.add_argument("--cgroup", help="this process's cgroup, as the daemon labels it")
    ap.add_argument("--child", type=int, help="a concurrent pinner (--pair)")
    ap.add_argument("--pair", type=int, help="two concurrent pinners of N x 64 MiB")
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    if args.pair:
        return pair(args, args.pair)

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
        rep = explain(args.memacct, args.pin_path, pid)
        mine = rep["processes"][0]["dma_pinned_bytes"]
        cg = cgroup_gauge(args)
        ok = all(v is not None and abs(v - truth) <= max(truth // 100, PAGE)
                 for v in (mine, cg))
        want = logged_ranges(pid)
        got = ranges_of(rep)
        rok = want is not None and set(want.values()) == set(got) and \
            all(m is not None for m in got.values())
        failed |= not ok or not rok
        print("step %s truth %d memacct %s cgroup %s ranges %d/%d %s %s" % (
            name, truth, mine, cg, len(got), len(want or {}), "ok" if ok else "FAIL",
            "ok" if rok else "FAIL"))
        if not rok:
            print("  want %s\n  got %s" % (sorted(set((want or {}).values())), sorted(got)))
        host_line(name, rep)
        sys.stdout.flush()
        return rep

    host_line("before_cuda", explain(args.memacct, args.pin_path, pid))
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
    rep = step("register_256m")
    for line in rep.get("verdict", []):
        if "NVIDIA" in line:
            print("verdict %s" % line)
    g = torch.empty(10 << 30, dtype=torch.uint8, device="cuda")
    g.fill_(1)
    torch.cuda.synchronize()
    step("cudamalloc_10g")
    del g
    torch.cuda.empty_cache()
    cudart.cudaHostUnregister(a.ctypes.data)
    del t
    torch._C._host_emptyCache()
    step("unregister_free")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
