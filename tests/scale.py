#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""scale.py - `make scale` (docs/deploy/scale.md; not in CI, ~6 min, root): what
one node costs a Prometheus, measured, and what a cluster would, from it.

1. One node: SCALE_CGROUPS (default "100 1000") cgroups laid out as Slurm
   jobs (memacct-test-scale-PID/job_K, one sleeping process in each), the
   daemon at its defaults (--interval 10s) with its own kernel side. For
   each count, once two collections passed: the series of one scrape, its
   bytes as text and gzip-compressed (what Prometheus fetches), the scrape's
   wall time, and the daemon's CPU time per collection
   (memacct_scrape_cpu_seconds).
2. A replay: the first count's scrape (a node of 100 cgroups: a busy
   Kubernetes node's pods and containers) served as SCALE_TARGETS (64)
   targets on loopback (one thread each; every target the same text, as a
   job spread over the nodes would be), scraped every 15 s for SCALE_SECONDS
   (150) by Debian's prometheus with docs/deploy/memacct-jobs.rules.yml and
   memacct-alerts.rules.yml. Then from Prometheus itself: head series,
   samples appended a second, its RSS, the job rules' evaluation time
   (prometheus_rule_group_last_duration_seconds), and the latency of a job
   query (the recorded job totals, and the same sum from the raw series),
   best of 5.

Prints a table and writes SCALE_OUT (JSON, default .output/scale.json).
Everything made (cgroups, pins, the daemon, prometheus, its TSDB in /tmp)
is removed at the end, also on Ctrl-C. Environment: MEMACCT (set by make).
"""
import gzip
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

from soak import memcg_root  # the memory hierarchy's mount (v1 memory, else cgroup2)

MEMACCT = os.environ.get("MEMACCT", ".output/memacct")
COUNTS = [int(x) for x in os.environ.get("SCALE_CGROUPS", "100 1000").split()]
TARGETS = int(os.environ.get("SCALE_TARGETS", "64"))
SECONDS = int(os.environ.get("SCALE_SECONDS", "150"))
OUT = os.environ.get("SCALE_OUT", ".output/scale.json")
RULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "deploy")
TAG = "memacct-test-scale-%d" % os.getpid()
PIN = "/sys/fs/bpf/" + TAG
PORT = 30000 + os.getpid() % 20000
PROM_PORT = PORT + 1
TSDB = "/tmp/" + TAG


ROOT = memcg_root()[0]
TOP = os.path.join(ROOT, TAG)
procs = []
daemon = None
prom = None


def get(url, gz=False):
    """GET url: (body bytes, seconds)."""
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gz else {})
    t = time.monotonic()
    with urllib.request.urlopen(req, timeout=60) as r:
        body = r.read()
    return body, time.monotonic() - t


def metric(text, name):
    """The first unlabelled sample of name in exposition text, or None."""
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def add_cgroups(n):
    """Cgroups TOP/job_K up to n, one sleeping process in each."""
    os.makedirs(TOP, exist_ok=True)
    if os.path.exists(os.path.join(ROOT, "cgroup.controllers")) and \
            "memory" not in open(os.path.join(TOP, "cgroup.subtree_control")).read():
        with open(os.path.join(TOP, "cgroup.subtree_control"), "w") as f:
            f.write("+memory")
    for k in range(len(procs), n):
        d = os.path.join(TOP, "job_%d" % (100000 + k))
        os.mkdir(d)
        p = subprocess.Popen(["sh", "-c", "echo $$ > %s/cgroup.procs && exec sleep 100000" % d])
        procs.append((p, d))


def one_node(n):
    """The daemon's scrape at n cgroups: its figures."""
    add_cgroups(n)
    seen = set()
    while len(seen) < 3:  # two collections begun after every cgroup was made
        body, _ = get("http://127.0.0.1:%d/metrics" % PORT)
        seen.add(metric(body.decode(), "memacct_last_collection_timestamp_seconds"))
        time.sleep(1)
    best = None
    for _ in range(3):
        body, t = get("http://127.0.0.1:%d/metrics" % PORT)
        gzb, tg = get("http://127.0.0.1:%d/metrics" % PORT, gz=True)
        best = min(best or t, t)
    text = body.decode()
    series = sum(1 for l in text.splitlines() if l and not l.startswith("#"))
    cg_series = sum(1 for l in text.splitlines() if TAG in l and not l.startswith("#"))
    cpu = metric(text, "memacct_scrape_cpu_seconds")
    wall = metric(text, "memacct_scrape_duration_seconds")
    return text, {"cgroups": n, "series": series, "series_of_the_cgroups": cg_series,
                  "series_per_cgroup": round(cg_series / n, 1), "text_bytes": len(body),
                  "gzip_bytes": len(gzb), "scrape_s": round(best, 4),
                  "collection_cpu_s": cpu, "collection_wall_s": wall}


class Target(http.server.BaseHTTPRequestHandler):
    body = b""  # the scrape, gzip-compressed once

    def do_GET(self):
        body = self.body
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def prom_query(q):
    url = "http://127.0.0.1:%d/api/v1/query?query=%s" % (PROM_PORT, urllib.parse.quote(q))
    body, t = get(url)
    return json.loads(body)["data"]["result"], t


def replay(text):
    """TARGETS targets of text scraped by prometheus with the rules: its figures."""
    global prom
    Target.body = gzip.compress(text.encode(), 1)
    servers = []
    for i in range(TARGETS):
        s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Target)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        servers.append(s)
    os.makedirs(TSDB, exist_ok=True)
    targets = ", ".join("'127.0.0.1:%d'" % s.server_address[1] for s in servers)
    cfg = os.path.join(TSDB, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 15s\n  scrape_timeout: 10s\n"
                "  evaluation_interval: 15s\n"
                "rule_files:\n  - %s/memacct-jobs.rules.yml\n  - %s/memacct-alerts.rules.yml\n"
                "scrape_configs:\n  - job_name: memacct\n    static_configs:\n"
                "      - targets: [%s]\n  - job_name: prometheus\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % (RULES, RULES, targets, PROM_PORT))
    prom = subprocess.Popen(["prometheus", "--config.file=" + cfg,
                             "--storage.tsdb.path=" + TSDB + "/data",
                             "--web.listen-address=127.0.0.1:%d" % PROM_PORT,
                             "--log.level=warn"], stderr=open(TSDB + "/log", "w"))
    time.sleep(SECONDS)

    def one(q):
        r, _ = prom_query(q)
        return float(r[0]["value"][1]) if r else None

    res = {"targets": TARGETS, "seconds": SECONDS,
           "up": one('sum(up{job="memacct"})'),
           "head_series": one("prometheus_tsdb_head_series"),
           "samples_per_s": one("rate(prometheus_tsdb_head_samples_appended_total[1m])"),
           "prometheus_rss_bytes": one('process_resident_memory_bytes{job="prometheus"}'),
           "scrape_duration_s_max": one('max(scrape_duration_seconds{job="memacct"})'),
           "job_rules_eval_s": one('max(prometheus_rule_group_last_duration_seconds'
                                   '{rule_group=~".*;memacct-jobs"})'),
           "alert_rules_eval_s": one('max(prometheus_rule_group_last_duration_seconds'
                                     '{rule_group=~".*;memacct-alerts"})')}
    for name, q in (("query_recorded_s", 'topk(10, memacct_job:usage_bytes:sum)'),
                    ("query_raw_s", 'topk(10, sum by (memacct_job) '
                                    '(memacct_usage_bytes{job_root="true"}))'),
                    ("query_one_job_s", 'memacct_job:class_bytes:worst_node'
                                        '{memacct_job="slurm/100000"}')):
        best = None
        for _ in range(5):
            r, t = prom_query(q)
            best = min(best or t, t)
        res[name] = round(best, 4)
        res[name.replace("_s", "_results")] = len(r)
    rules, _ = get("http://127.0.0.1:%d/api/v1/rules" % PROM_PORT)
    slow = sorted(((r["evaluationTime"], r["name"]) for g in json.loads(rules)["data"]["groups"]
                   for r in g["rules"]), reverse=True)[:4]
    res["slowest_rules_s"] = [[n, round(t, 4)] for t, n in slow]
    for s in servers:
        s.shutdown()
    return res


def cleanup(*_):
    for p, _ in procs:
        p.kill()
        p.wait()
    for proc in (daemon, prom):
        if proc and proc.poll() is None:
            proc.terminate()
            proc.wait()
    subprocess.run([MEMACCT, "detach", "--pin-path", PIN], capture_output=True)
    for _, d in reversed(procs):
        for _ in range(50):
            try:
                os.rmdir(d)
                break
            except OSError:
                time.sleep(0.1)
    try:
        os.rmdir(TOP)
    except OSError:
        pass
    shutil.rmtree(TSDB, ignore_errors=True)


def main():
    global daemon
    if os.geteuid():
        sys.exit("scale.py: needs root (the daemon loads BPF)")
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    try:
        daemon = subprocess.Popen([MEMACCT, "daemon", "--listen", "127.0.0.1:%d" % PORT,
                                   "--pin-path", PIN, "--oom-log", "none"],
                                  stderr=subprocess.DEVNULL)
        for _ in range(600):
            try:
                get("http://127.0.0.1:%d/metrics" % PORT)
                break
            except Exception:
                time.sleep(0.1)
        nodes = []
        text = None
        for n in COUNTS:
            t, r = one_node(n)
            text = text or t
            nodes.append(r)
            print("node, %(cgroups)5d cgroups: %(series)6d series (%(series_per_cgroup)s a "
                  "cgroup), %(text_bytes)8d bytes, gzip %(gzip_bytes)7d, scrape "
                  "%(scrape_s).3f s, collection CPU %(collection_cpu_s)s s" % r, flush=True)
        rep = replay(text)
        print("replay: %s" % json.dumps(rep), flush=True)
        with open(OUT, "w") as f:
            json.dump({"node": nodes, "replay": rep}, f, indent=1)
    finally:
        cleanup()


if __name__ == "__main__":
    main()
