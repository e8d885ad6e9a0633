#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""soak_oom.py - `make soak-oom` (docs/soak-oom.md; issue 44): the OOM
forecast of `memacct run` over many runs of each leak shape, and the calm
shapes for half an hour.

Leak shapes (tests/workloads/oom_leak.c, each under `memacct -j run
--memory-max 256M`, reaching the limit in 85-100 s): an anon leak (3 MiB/s),
an mlocked buffer that grows (3 MiB/s), a tmpfs file that grows (3 MiB/s), a
forked worker copying its parent's 160 MiB (1 MiB/s of CoW copies). Each run
must be killed; its lead is the kill's time minus the first warning's (both
Unix times of the report), its class the first warning's growing_class. The
issue's bar: a warning >= 30 s before the kill in >= 90% of the runs of each
shape, the right class in >= 95%.

Calm shapes, for SOAK_OOM_CALM_S (1800) each, beside the leaks: a sawtooth
(anon written at 24 MiB/s to 216 MiB of a 256M limit, freed, again: a data
loader's epochs, 9 s each) and page cache (a 384 MiB file written at 16 MiB/s
and read back, again and again, through a 128M limit). Each must give 0
warnings and 0 kills.

SOAK_OOM_JOBS (8) runs at a time: each run loads its own kernel side, so the
events of one run through the others' programs too (the leaks are paced by
the clock: they do not slow). Prints the table of docs/soak-oom.md and writes
SOAK_OOM_OUT (.output/soak-oom.json); exit 1 when a bar is missed. Root.
Environment: MEMACCT, WORKLOADS (set by make), SOAK_OOM_RUNS (20),
SOAK_OOM_JOBS, SOAK_OOM_CALM_S, SOAK_OOM_OUT.
"""
import json
import os
import statistics
import subprocess
import sys
import threading
import time

MEMACCT = os.environ.get("MEMACCT", ".output/memacct")
WORKLOADS = os.environ.get("WORKLOADS", ".output/workloads")
RUNS = int(os.environ.get("SOAK_OOM_RUNS", "20"))
JOBS = int(os.environ.get("SOAK_OOM_JOBS", "8"))
CALM_S = int(os.environ.get("SOAK_OOM_CALM_S", "1800"))
OUT = os.environ.get("SOAK_OOM_OUT", ".output/soak-oom.json")

# shape, oom_leak's arguments ({path}: a tmpfs file of the run), the class
LEAKS = [
    ("anon", "anon 3 512", "anon"),
    ("mlock", "mlock 3 512", "mlocked"),
    ("tmpfs", "shm 3 512 {path}", "shmem"),
    ("cow", "cow 1 160", "cow"),
]


def report_of(out):
    """The JSON report of `memacct -j run`: its stdout's last object (the
    workload's "truth" lines come before it)."""
    start = 0 if out.startswith("{") else out.find("\n{")
    if start < 0:
        return None
    try:
        return json.loads(out[start:])
    except ValueError:
        return None


def run(limit, command, timeout):
    """`memacct -j run --memory-max LIMIT -- COMMAND`: its report, or None."""
    p = subprocess.run([MEMACCT, "-j", "run", "--memory-max", limit, "--"] + command,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                       timeout=timeout, check=False)
    return report_of(p.stdout)


def leak_run(shape, args, index):
    path = "/dev/shm/memacct-soak-oom-%d-%s-%d" % (os.getpid(), shape, index)
    cmd = [WORKLOADS + "/oom_leak"] + args.format(path=path).split()
    try:
        r = run("256M", cmd, 600)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    res = {"shape": shape, "killed": False, "lead_s": None, "class": None, "eta_s": None}
    if not r:
        return res
    kills, warns = r.get("oom_kills") or [], r.get("oom_warnings") or []
    res["killed"] = bool(kills)
    if warns:
        res["class"] = warns[0]["growing_class"]
        res["eta_s"] = warns[0]["eta_s"]
        if kills:
            res["lead_s"] = kills[0]["time"] - warns[0]["time"]
    return res


def calm_run(shape):
    path = "/var/tmp/memacct-soak-oom-%d-cache" % os.getpid()
    if shape == "sawtooth":
        limit, cmd = "256M", ["timeout", str(CALM_S), WORKLOADS + "/oom_leak", "saw", "24",
                              "216"]
    else:
        limit, cmd = "128M", ["sh", "-c", 'end=$(($(date +%%s) + %d)); while [ $(date +%%s) '
                              '-lt $end ]; do "$0" cache 16 384 "$1" || exit 1; done'
                              % CALM_S, WORKLOADS + "/oom_leak", path]
    try:
        r = run(limit, cmd, CALM_S + 300)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    if not r:
        return {"shape": shape, "warnings": None, "kills": None}
    return {"shape": shape, "warnings": len(r.get("oom_warnings") or []) +
            (r.get("oom_warnings_unlisted") or 0), "kills": len(r.get("oom_kills") or [])}


def main():
    if os.geteuid():
        sys.exit("soak_oom.py: needs root (memacct run loads BPF)")
    t0 = time.time()
    calm, leaks, lock = [], [], threading.Lock()
    calm_threads = [threading.Thread(target=lambda s=s: calm.append(calm_run(s)))
                    for s in ("sawtooth", "page cache")]
    for t in calm_threads:
        t.start()
    todo = [(s, a, c, i) for i in range(RUNS) for s, a, c in LEAKS]

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                shape, args, _, i = todo.pop(0)
            res = leak_run(shape, args, i)
            with lock:
                leaks.append(res)
                print("  %-6s run %2d: killed %s, lead %s s, class %s" %
                      (shape, i + 1, res["killed"],
                       "%.1f" % res["lead_s"] if res["lead_s"] is not None else "-",
                       res["class"]), flush=True)

    workers = [threading.Thread(target=worker) for _ in range(max(JOBS - 2, 1))]
    for t in workers:
        t.start()
    for t in workers + calm_threads:
        t.join()

    ok = True
    rows = ["| shape | runs | killed | warned >= 30 s before | lead median | lead min | "
            "class right | false warnings |", "|---|---|---|---|---|---|---|---|"]
    summary = {"runs": RUNS, "calm_s": CALM_S, "seconds": round(time.time() - t0), "shapes": []}
    for shape, _, want in LEAKS:
        rs = [r for r in leaks if r["shape"] == shape]
        leads = [r["lead_s"] for r in rs if r["lead_s"] is not None]
        early = sum(1 for x in leads if x >= 30)
        right = sum(1 for r in rs if r["class"] == want)
        killed = sum(1 for r in rs if r["killed"])
        bar = len(rs) > 0 and early >= 0.9 * len(rs) and right >= 0.95 * len(rs)
        ok = ok and bar
        rows.append("| %s (%s) | %d | %d | %d (%.0f%%) | %s | %s | %d (%.0f%%) | |" % (
            shape, want, len(rs), killed, early, 100.0 * early / max(len(rs), 1),
            "%.1f s" % statistics.median(leads) if leads else "-",
            "%.1f s" % min(leads) if leads else "-", right, 100.0 * right / max(len(rs), 1)))
        summary["shapes"].append({"shape": shape, "class": want, "runs": len(rs),
                                  "killed": killed, "warned_30s_before": early,
                                  "lead_median_s": statistics.median(leads) if leads else None,
                                  "lead_min_s": min(leads) if leads else None,
                                  "class_right": right, "bar_met": bar})
    for c in calm:
        good = c["warnings"] == 0 and c["kills"] == 0
        ok = ok and good
        rows.append("| %s, %d min | 1 | %s | | | | | %s |" % (
            c["shape"], CALM_S // 60, c["kills"] if c["kills"] is not None else "no report",
            c["warnings"] if c["warnings"] is not None else "no report"))
        summary["shapes"].append(dict(c, minutes=CALM_S / 60, bar_met=good))
    print("\n".join(rows))
    print("soak-oom: %d s, %s" % (time.time() - t0, "every bar met" if ok else "A BAR MISSED"))
    summary["ok"] = ok
    with open(OUT, "w") as f:
        json.dump(summary, f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
