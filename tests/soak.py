#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""soak.py - `make soak` (docs/daemon.md "Soak"): the daemon under 1,000
concurrent scrapes on loopback plus cgroup and process churn for SOAK_SECONDS
(default 600), then its counters against ground truth and its RSS over time.

Workloads of known truth (tests/workloads/cow_fork: exact anonymous CoW bytes)
run in two cgroups that live through the soak: "live" (one cow_fork 8 MiB a
second) and "proc" (cow_fork 1 MiB back to back: process churn, two processes
each). Beside them cgroups come and go, each with short_lived 50 processes
(cgroup churn; their counters vanish with them), and fork_churn 20,000
children at a time, back to back, in an "exits" cgroup (exit churn as fast as
the host forks: its cow_copied_bytes_total within 0.1% of the children times a
control run's pages a child; flows_lost_bytes_total 0). At the end, once the
workloads stopped and three collections passed, every counter of live and proc
must equal its truth: cow_copied_bytes_total = sum of the runs' truths (within
1% or 16 pages, the tolerance of the integration tests; the difference is
printed),
page_faults_total and major_faults_total = memory.stat, oom_kills_total =
memory.events/oom_control; events_dropped_total (map full) = 0; no series of a
removed cgroup. RSS of the daemon: start (first collection served), at a
third of the run (at most 60 s: the 1,000 connections' buffers held), peak and
end; flat = end within 10% + 2 MiB of the RSS at that third.

Loopback only (127.0.0.1, a port of our pid), every loop bounded by the
deadline, everything we made (cgroups memacct-test-soak-*, the pin directory,
the daemon) removed at the end, also on Ctrl-C. Needs root (it loads BPF):
run it under the integration lock on shared machines.
Environment: MEMACCT, WORKLOADS (set by make), SOAK_SECONDS, SOAK_CLIENTS
(default 1000), SOAK_OUT (JSON summary, default .output/soak.json).
"""
import asyncio
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time

MEMACCT = os.environ.get("MEMACCT", ".output/memacct")
WORKLOADS = os.environ.get("WORKLOADS", ".output/workloads")
SECONDS = int(os.environ.get("SOAK_SECONDS", "600"))
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "1000"))
OUT = os.environ.get("SOAK_OUT", ".output/soak.json")
TAG = "memacct-test-soak-%d" % os.getpid()
PORT = 30000 + os.getpid() % 20000
PIN = "/sys/fs/bpf/" + TAG
INTERVAL_S = 1.0


def memcg_root():
    """The memory controller's mount point: v1 'memory' first, else cgroup2."""
    v2 = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            mnt = left.split()[4]
            fstype, _src, opts = right.split()[:3]
            if fstype == "cgroup" and "memory" in opts.split(","):
                return mnt, 1
            if fstype == "cgroup2" and v2 is None:
                v2 = mnt
    if v2 is None:
        sys.exit("soak: no memory cgroup hierarchy mounted")
    return v2, 2


ROOT, VERSION = memcg_root()
LIVE, PROC = ROOT + "/" + TAG + "-live", ROOT + "/" + TAG + "-proc"
EXITS = ROOT + "/" + TAG + "-exits"
CHURN_ARGS = ["64", "4"]        # fork_churn churn N 64 4: K pages a child, 4 alive
stop = threading.Event()
lock = threading.Lock()
truth = {"live_cow": 0, "proc_cow": 0, "live_runs": 0, "proc_runs": 0,
         "processes": 0, "cgroups_churned": 0, "workload_failures": 0,
         "exits": 0, "exit_seconds": 0.0}


def pdeathsig():
    """Children die with us (prctl PR_SET_PDEATHSIG SIGKILL)."""
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)


def run_in(cg, argv):
    """argv inside cgroup cg; its stdout. No preexec_fn: with one, Python
    fork()s and the child runs Python before exec, copying ~1.9 MB of this
    process by CoW (refcounts), flows that the process takes into cg with it
    (memacct counts them there: docs/metrics.md, cgroup moves) but that are
    no workload's truth; without one it vfork()s (no copy). The workloads
    end within seconds, so they need no PR_SET_PDEATHSIG."""
    r = subprocess.run(["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg] + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                       timeout=120)
    if r.returncode != 0:
        raise RuntimeError("%s in %s: status %d" % (argv, cg, r.returncode))
    return r.stdout


def cow_truth(out):
    t = dict(re.findall(r"^truth (\w+) (\d+)$", out, re.M))
    return int(t["child_cow_bytes"]) + int(t["parent_cow_bytes"])


def cow_loop(cg, key, args, pause):
    while not stop.is_set():
        try:
            v = cow_truth(run_in(cg, [WORKLOADS + "/cow_fork"] + args))
            with lock:
                truth[key + "_cow"] += v
                truth[key + "_runs"] += 1
                truth["processes"] += 2
        except (RuntimeError, KeyError, subprocess.TimeoutExpired):
            with lock:
                truth["workload_failures"] += 1
        stop.wait(pause)


def cgroup_churn():
    i = 0
    while not stop.is_set():
        cg = "%s/%s-churn-%d" % (ROOT, TAG, i)
        os.mkdir(cg)
        try:
            run_in(cg, [WORKLOADS + "/short_lived", "50", "4"])
            with lock:
                truth["processes"] += 51
        except (RuntimeError, subprocess.TimeoutExpired):
            with lock:
                truth["workload_failures"] += 1
        for _ in range(100):
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.05)
        with lock:
            truth["cgroups_churned"] += 1
        i += 1
        stop.wait(0.1)


def exit_churn():
    """Exit churn (issue #23): fork_churn churn 20,000 children at a time,
    as fast as this host forks, in the exits cgroup; the truth is their
    count times a control's CoW pages a child (exit_control())."""
    while not stop.is_set():
        t = time.monotonic()
        try:
            out = run_in(EXITS, [WORKLOADS + "/fork_churn", "churn", "20000"] + CHURN_ARGS)
            n = int(re.search(r"^truth children (\d+)$", out, re.M).group(1))
            with lock:
                truth["exits"] += n
                truth["exit_seconds"] += time.monotonic() - t
                truth["processes"] += n
        except (RuntimeError, AttributeError, subprocess.TimeoutExpired):
            with lock:
                truth["workload_failures"] += 1


def exit_control():
    """CoW pages a child of fork_churn makes, from `memacct run` of 4,000
    (fork_churn execs itself settled: the same pages in every launch)."""
    r = subprocess.run([MEMACCT, "-j", "run", "--", WORKLOADS + "/fork_churn", "churn",
                        "4000"] + CHURN_ARGS, stdout=subprocess.PIPE, text=True, timeout=300)
    rep = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")][-1]
    return rep["totals"]["cow_copied_bytes"] / 4096 / 4000


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


class Scrapes:
    def __init__(self):
        self.ok = self.failed = self.bytes = 0
        self.lat = [0] * 64          # log2 buckets of milliseconds
        self.max_ms = 0.0

    def add(self, ms):
        self.lat[min(63, int(ms).bit_length())] += 1
        self.max_ms = max(self.max_ms, ms)

    def pct(self, p):
        want, n = p * self.ok, 0
        for b, c in enumerate(self.lat):
            n += c
            if n >= want and c:
                return 2 ** b    # upper bound of the bucket, ms
        return 0


async def scrape_once(path="/metrics", timeout=60):
    r, w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", PORT), timeout)
    try:
        w.write(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path).encode())
        await w.drain()
        data = await asyncio.wait_for(r.read(), timeout)
    finally:
        w.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


async def client(s, deadline):
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        try:
            code, body = await scrape_once()
            if code != 200:
                raise ValueError(code)
            s.ok += 1
            s.bytes += len(body)
            s.add((time.monotonic() - t0) * 1e3)
        except (OSError, ValueError, IndexError, asyncio.TimeoutError):
            s.failed += 1
            await asyncio.sleep(0.1)


async def storm(deadline):
    s = Scrapes()
    await asyncio.gather(*(client(s, deadline) for _ in range(CLIENTS)))
    return s


def metrics(text):
    """{(name, labels): value} of a Prometheus text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = re.match(r"^([a-zA-Z_:][\w:]*)(\{.*\})? (\S+)$", line)
        if m:
            out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def memstat(cg, key):
    with open(cg + "/memory.stat") as f:
        for line in f:
            k, v = line.split()
            if k == key:
                return int(v)
    return 0


def oom_kills(cg):
    name = "memory.oom_control" if VERSION == 1 else "memory.events"
    with open(cg + "/" + name) as f:
        for line in f:
            k, v = line.split()
            if k == "oom_kill":
                return int(v)
    return 0


def main():
    if os.geteuid() != 0:
        sys.exit("soak: needs root (BPF, cgroups)")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < CLIENTS + 100:
        sys.exit("soak: RLIMIT_NOFILE %d is below %d clients" % (hard, CLIENTS))
    per_child = exit_control()
    print("soak: control: %.4f CoW pages a fork_churn child" % per_child, flush=True)
    for cg in (LIVE, PROC, EXITS):
        os.mkdir(cg)
    log = open(os.path.splitext(OUT)[0] + "-daemon.log", "w")
    daemon = subprocess.Popen([MEMACCT, "daemon", "--listen", "127.0.0.1:%d" % PORT,
                               "--interval", "1s", "--pin-path", PIN, "--top-processes", "50"],
                              stdout=log, stderr=subprocess.STDOUT, preexec_fn=pdeathsig)
    threads, rc = [], 1
    try:
        for _ in range(300):             # /healthz answers after the first collection
            try:
                if asyncio.run(scrape_once("/healthz", 2))[0] == 200:
                    break
            except (OSError, IndexError, asyncio.TimeoutError):
                pass
            if daemon.poll() is not None:
                sys.exit("soak: the daemon exited %d (%s-daemon.log)"
                         % (daemon.returncode, os.path.splitext(OUT)[0]))
            time.sleep(0.1)
        else:
            sys.exit("soak: the daemon did not answer /healthz in 30 s")
        rss = {"start_kib": rss_kib(daemon.pid)}
        rss["peak_kib"] = rss["start_kib"]
        samples = []
        t0 = time.monotonic()
        deadline = t0 + SECONDS
        threads = [threading.Thread(target=cow_loop, args=(LIVE, "live", ["8", "2"], 1.0)),
                   threading.Thread(target=cow_loop, args=(PROC, "proc", ["1", "4"], 0.0)),
                   threading.Thread(target=cgroup_churn),
                   threading.Thread(target=exit_churn)]

        def sampler():
            while not stop.is_set():
                k = rss_kib(daemon.pid)
                rss["peak_kib"] = max(rss["peak_kib"], k)
                samples.append((round(time.monotonic() - t0), k))
                stop.wait(5)
        threads.append(threading.Thread(target=sampler))
        for t in threads:
            t.start()
        print("soak: %d s, %d concurrent scrapers on 127.0.0.1:%d, daemon pid %d, RSS %d KiB"
              % (SECONDS, CLIENTS, PORT, daemon.pid, rss["start_kib"]), flush=True)
        s = asyncio.run(storm(deadline))
        stop.set()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        time.sleep(3.5 * INTERVAL_S)     # the last exits harvested, published
        rss["end_kib"] = rss_kib(daemon.pid)
        m = metrics(asyncio.run(scrape_once())[1].decode())
        checks = []

        def check(what, got, want, tol=0):
            checks.append({"what": what, "memacct": got, "truth": want,
                           "ok": abs(got - want) <= tol})

        for key, cg in (("live", LIVE), ("proc", PROC)):
            lab = '{cgroup="/%s-%s"}' % (TAG, key)
            # the tolerance of the integration tests' assert_near(): 1% or 16 pages
            check("%s cow_copied_bytes_total" % key,
                  int(m.get(("memacct_cow_copied_bytes_total", lab), -1)), truth[key + "_cow"],
                  max(truth[key + "_cow"] // 100, 16 * 4096))
            check("%s page_faults_total" % key,
                  int(m.get(("memacct_page_faults_total", lab), -1)), memstat(cg, "pgfault"))
            check("%s major_faults_total" % key,
                  int(m.get(("memacct_major_faults_total", lab), -1)), memstat(cg, "pgmajfault"))
            check("%s oom_kills_total" % key,
                  int(m.get(("memacct_oom_kills_total", lab), -1)), oom_kills(cg))
        # exit churn: within 0.1% of the control's pages a child, none lost
        want = round(per_child * truth["exits"] * 4096)
        check("exits cow_copied_bytes_total",
              int(m.get(("memacct_cow_copied_bytes_total", '{cgroup="/%s-exits"}' % TAG), -1)),
              want, want // 1000)
        check("flows_lost_bytes_total",
              int(m.get(("memacct_flows_lost_bytes_total", ""), -1)), 0)
        for reason in ("proc_map_full", "cgroup_map_full"):
            check("events_dropped_total{reason=%s}" % reason,
                  int(m.get(("memacct_events_dropped_total", '{reason="%s"}' % reason), -1)), 0)
        stale = sorted({lab for (_n, lab) in m if TAG + "-churn-" in lab})
        check("series of removed cgroups", len(stale), 0)
        # the reference: once 1,000 connections hold their buffers (a third
        # of the run, at most 60 s in)
        warm = min(60, SECONDS // 3)
        rss["warm_s"] = warm
        rss["warm_kib"] = next((k for t, k in samples if t >= warm), rss["end_kib"])
        flat = rss["end_kib"] <= rss["warm_kib"] * 1.10 + 2048
        summary = {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds": round(wall), "clients": CLIENTS,
            "scrapes_ok": s.ok, "scrapes_failed": s.failed,
            "scrapes_per_s": round(s.ok / wall), "scrape_mib": round(s.bytes / 2**20),
            "latency_p50_ms_le": s.pct(0.5), "latency_p99_ms_le": s.pct(0.99),
            "latency_max_ms": round(s.max_ms),
            "rss_kib": rss, "rss_flat": flat, "rss_samples": samples,
            "truth": dict(truth), "checks": checks,
            "exits_per_s": round(truth["exits"] / max(truth["exit_seconds"], 1e-9)),
            "collection_s": m.get(("memacct_scrape_duration_seconds", ""), -1),
            "cgroups_map_fill": m.get(("memacct_map_fill_ratio", '{map="cgroups"}'), -1),
            "procs_map_fill": m.get(("memacct_map_fill_ratio", '{map="procs"}'), -1),
        }
        with open(OUT, "w") as f:
            json.dump(summary, f, indent=1)
        print("soak: %d s; scrapes %d ok (%d/s), %d failed; latency p50 <= %d ms, p99 <= %d ms, "
              "max %d ms" % (wall, s.ok, s.ok / wall, s.failed, s.pct(0.5), s.pct(0.99),
                             s.max_ms))
        print("soak: churn: %d cgroups created and removed, %d processes, %d cow_fork runs "
              "(live %d, proc %d), %d workload failures"
              % (truth["cgroups_churned"], truth["processes"],
                 truth["live_runs"] + truth["proc_runs"], truth["live_runs"],
                 truth["proc_runs"], truth["workload_failures"]))
        print("soak: exit churn: %d exits at %d a second (fork_churn, K=%s)"
              % (truth["exits"], truth["exits"] / max(truth["exit_seconds"], 1e-9),
                 CHURN_ARGS[0]))
        print("soak: daemon RSS start %d KiB, at %d s %d KiB, peak %d KiB, end %d KiB: %s"
              % (rss["start_kib"], rss["warm_s"], rss["warm_kib"], rss["peak_kib"],
                 rss["end_kib"], "flat" if flat else "GREW"))
        for c in checks:
            print("soak: %-40s memacct %-14d truth %-14d diff %-8d %s"
                  % (c["what"], c["memacct"], c["truth"], c["memacct"] - c["truth"],
                     "ok" if c["ok"] else "DIFFERS"))
        if stale:
            print("soak: stale series: %s" % ", ".join(stale[:5]))
        rc = 0 if flat and all(c["ok"] for c in checks) and not truth["workload_failures"] \
            and s.ok and s.failed <= s.ok // 1000 else 1
        print("soak: %s (%s)" % ("PASS" if rc == 0 else "FAIL", OUT))
    finally:
        stop.set()
        for t in threads:
            if t.is_alive():
                t.join()
        daemon.terminate()
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        subprocess.run([MEMACCT, "detach", "--pin-path", PIN])
        for cg in (LIVE, PROC, EXITS):
            try:
                os.rmdir(cg)
            except OSError as e:
                print("soak: rmdir %s: %s" % (cg, e))
    return rc


if __name__ == "__main__":
    sys.exit(main())
