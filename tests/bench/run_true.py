#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""run_true.py MEMACCT [--runs N] [--base BASE_MEMACCT] [--check]

make bench's `run -- /bin/true` workload (issue 30): the wall time that
`memacct run` adds to a command that does nothing, as its caller waits for
it (from fork to the caller's wait returning), median of N runs (default 20)
with a 95% interval (percentile bootstrap of the median, 2,000 resamples)
and the breakdown memacct prints with MEMACCT_PHASES=1 (medians of each
phase, ms). The arms (/bin/true alone, memacct, memacct --dma-pins on, and
BASE_MEMACCT when given:
another build, e.g. main's, so that before and after come from one run) are
visited in a random order in each of N rounds, back to back as a CI job or a
person would run them. After the last run: every memacct-release helper
must end within 10 s and no BPF link or program may be left (exit 1
otherwise); --check: 3 runs with --dma-pins on (perf events: the release
helper's path), that and a kill -9 test only (make bench-check).
"""
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import time


def bpf_ids(kind):
    out = subprocess.run(["bpftool", kind, "show"], capture_output=True, text=True).stdout
    return {int(m.group(1)) for m in re.finditer(r"^(\d+):", out, re.M)}


def helpers():
    out = subprocess.run(["pgrep", "-x", "memacct-release"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def wait_clean(links0, progs0, what):
    """Helpers gone within 10 s, then no link or program above the start's."""
    t0 = time.monotonic()
    while helpers() and time.monotonic() - t0 < 10:
        time.sleep(0.05)
    left = helpers()
    if left:
        sys.exit(f"run_true: FAIL: memacct-release helpers {left} alive 10 s after {what}")
    gone = time.monotonic() - t0
    # a closed link or program goes after an RCU grace period, freed from
    # a work item: 2 s was too short once beside CI's guests (17 links and
    # 18 programs of a killed helper still there), so up to 10 s
    t1 = time.monotonic()
    while True:
        links, progs = bpf_ids("link") - links0, bpf_ids("prog") - progs0
        if not links and not progs:
            return gone
        if time.monotonic() - t1 >= 10:
            break
        time.sleep(0.1)
    sys.exit(f"run_true: FAIL: after {what}: {len(links)} links, {len(progs)} programs left "
             f"10 s after the helpers ended")


def one(argv, env=None):
    t = time.monotonic()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=env)
    wall = time.monotonic() - t
    if r.returncode != 0:
        sys.exit(f"run_true: {argv} exited {r.returncode}: {r.stderr[-500:]}")
    return wall, r.stderr


def median_ci(v, rng):
    meds = sorted(statistics.median(rng.choices(v, k=len(v))) for _ in range(2000))
    return statistics.median(v), meds[49], meds[1949]


def kill9_check(memacct, links0, progs0):
    """kill -9 of memacct while loading, while CMD runs, and right after
    CMD's end (its helper then lives on its own), with --dma-pins on (so
    that there are perf events, and a helper): nothing may be left."""
    # CMD is exec'd directly: memacct's death kills it (PR_SET_PDEATHSIG)
    for delay, cmd in ((0.05, ["sleep", "5"]), (1.0, ["sleep", "5"]), (None, ["true"])):
        p = subprocess.Popen([memacct, "run", "--dma-pins", "on", "--"] + cmd,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if delay is None:
            p.wait()
            for h in helpers():
                os.kill(h, signal.SIGKILL)
            what = "kill -9 of the release helper"
        else:
            time.sleep(delay)
            p.send_signal(signal.SIGKILL)
            p.wait()
            what = f"kill -9 of memacct run {delay} s after its start"
        gone = wait_clean(links0, progs0, what)
        print(f"  {what}: nothing left ({gone:.2f} s until the last helper ended)")


def main():
    args = sys.argv[1:]
    memacct = args.pop(0)
    runs, base, check = 20, None, False
    while args:
        a = args.pop(0)
        if a == "--runs":
            runs = int(args.pop(0))
        elif a == "--base":
            base = args.pop(0)
        elif a == "--check":
            check = True
    if check:
        runs = 3
    rng = random.Random(30)
    links0, progs0 = bpf_ids("link"), bpf_ids("prog")
    env = dict(os.environ, MEMACCT_PHASES="1")
    arms = {"true": ["/bin/true"], "memacct": [memacct, "run", "--", "/bin/true"]}
    if check:	# the release helper's path: perf events to release
        arms["memacct"][2:2] = ["--dma-pins", "on"]
    else:
        arms["dma_on"] = [memacct, "run", "--dma-pins", "on", "--", "/bin/true"]
    if base:
        arms["base"] = [base, "run", "--", "/bin/true"]
    walls = {a: [] for a in arms}
    phases = {}
    for _ in range(runs):
        order = list(arms)
        rng.shuffle(order)
        for a in order:
            wall, err = one(arms[a], env)
            walls[a].append(wall)
            m = re.search(r"memacct phases \(ms\): (.*?) slowest: (.*)", err)
            if a == "memacct" and m:	# the default: --dma-pins auto
                f = m.group(1).split()
                for k, v in zip(f[0::2], f[1::2]):
                    phases.setdefault(k, []).append(float(v))
                phases.setdefault("_slowest", []).append(m.group(2))
    gone = wait_clean(links0, progs0, f"{runs} runs")
    t, _, _ = median_ci(walls["true"], rng)
    print(f"== memacct run -- /bin/true: wall time its caller waits, {runs} runs "
          f"(median [95% interval], min..max, ms)")
    print(f"  /bin/true alone        {t * 1e3:8.1f}")
    for a in [x for x in ("memacct", "dma_on", "base") if x in arms]:
        added = [w - t for w in walls[a]]
        m, lo, hi = median_ci(added, rng)
        name = {"memacct": "this memacct", "dma_on": "  with --dma-pins on",
                "base": "BASE_MEMACCT"}[a]
        print(f"  {name:22s} added {m * 1e3:8.1f} [{lo * 1e3:.1f}, {hi * 1e3:.1f}], "
              f"{min(added) * 1e3:.1f}..{max(added) * 1e3:.1f} (target: <= 250)")
    if phases:
        keys = [k for k in phases if k not in ("_slowest", "programs")]
        print("  breakdown (medians, ms): " +
              ", ".join(f"{k} {statistics.median(phases[k]):.1f}" for k in keys) +
              f"; {statistics.median(phases['programs']):.0f} programs, slowest to verify: "
              + phases["_slowest"][-1])
    print(f"  nothing attached afterwards; the last release helper ended {gone:.2f} s "
          f"after the last run")
    if check:
        kill9_check(memacct, links0, progs0)


if __name__ == "__main__":
    main()
