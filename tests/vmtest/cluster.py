#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""cluster.py DIR [SUITE] - make vmtest-cluster (docs/vmtest.md "Cluster", issue 45).

Three qemu guests (SUITE's Debian cloud kernel, default bookworm-backports,
TCG, pure cgroup v2) are three nodes of a cluster. Each runs the daemon as
docs/deploy/daemonset.yaml does (tests/vmtest/node.sh) behind a port that
qemu forwards to the host's loopback; one real Prometheus on the host
(Debian's) scrapes the three with the node name as `instance` (the
DaemonSet's relabeling) and evaluates docs/deploy/memacct-jobs.rules.yml;
Alertmanager (Debian's) delivers to a webhook receiver of this script on
loopback. One Slurm job, 4711, has a cgroup on each node: a 256 MiB file
mapped and read by two processes and a forked heap (64, 96 and 128 MiB,
4 workers copying an eighth each). Checked, each against what the nodes'
kernels say:
  - the job's charge from the rules = Σ of the nodes' memory.current of the
    job cgroup within 1%, Σ RSS printed beside it;
  - its file class = Σ of the nodes' memory.stat file within 1%; the worst
    node of its anon is the 128 MiB one;
  - its CoW copies summed over the nodes = the workers' writes within 1%;
  - one node's daemon restarted while the job runs: no reset of any
    memacct counter of the job in Prometheus, the CoW sum unchanged;
  - an OOM kill on another node fires MemacctJobOomKill, which reaches the
    webhook with the post-mortem's cause (anon) in its labels;
  - the uninstall (`memacct daemon --stop-kernel-side`) leaves no pin;
  - no Oops, BUG or WARNING on any console.
DIR is make's .output/vmtest (bin/: the static memacct and workloads); the
kernel, its virtio_net module, the initramfs, disks and logs go to
DIR/cluster. Exit 0 when every check passed, 1 otherwise, 3 when a tool is
missing.
"""
import http.server
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
JOB_ID = 4711
MJOB = 'slurm/%d' % JOB_ID
HEAP_MIB = (64, 96, 128)	# node1..3: node3 is the worst node of anon
FILE_MIB = 256
WORKERS = 4
T0 = time.time()
failures = []


def log(msg):
    print('[%6.1f s] %s' % (time.time() - T0, msg), flush=True)


def check(ok, msg):
    print('%s %s' % ('PASS' if ok else 'FAIL', msg), flush=True)
    if not ok:
        failures.append(msg)
    return ok


def num(v):
    """a value of a query as an integer, or None"""
    return None if v is None else '%.0f' % v


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def http_get(port, path, timeout=10):
    with urllib.request.urlopen('http://127.0.0.1:%d%s' % (port, path), timeout=timeout) as r:
        return r.read().decode()


class Node:
    """One guest: its qemu, its forwarded metrics (9443) and control (8080) ports."""

    def __init__(self, i, work, kernel, initrd):
        self.name = 'node%d' % (i + 1)
        self.heap = HEAP_MIB[i]
        self.metrics, self.control = free_port(), free_port()
        self.console = os.path.join(work, self.name + '.console')
        disk = os.path.join(work, 'disk-%s.img' % self.name)
        with open(disk, 'wb') as f:	# an empty sparse disk: the guest formats it
            f.truncate(1 << 30)
        fwd = 'hostfwd=tcp:127.0.0.1:%d-:9443,hostfwd=tcp:127.0.0.1:%d-:8080' % (
            self.metrics, self.control)
        cmd = ['timeout', '1800', 'qemu-system-x86_64', '-accel', 'tcg,thread=single',
               '-cpu', 'max,-cx16', '-m', '1536M', '-smp', '1',
               '-kernel', kernel, '-initrd', initrd,
               '-drive', 'file=%s,if=none,id=d0,format=raw' % disk,
               '-device', 'nvme,serial=memacct,drive=d0',
               '-netdev', 'user,id=n0,' + fwd, '-device', 'virtio-net-pci,netdev=n0',
               '-append', 'console=ttyS0 panic=-1 oops=panic loglevel=4 memacct.node=%s '
               'memacct.node_job=%d' % (self.name, JOB_ID),
               '-nographic', '-no-reboot', '-nodefaults', '-serial', 'stdio']
        self.qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=open(self.console, 'w'), stderr=subprocess.STDOUT)

    def step(self, *args, timeout=600):
        """node.sh STEP ARGS in the guest: its "key value" lines as a dict"""
        out = http_get(self.control, '/cgi-bin/node?' + '&'.join(str(a) for a in args),
                       timeout=timeout)
        kv = {}
        for line in out.splitlines():
            k, _, v = line.partition(' ')
            kv[k] = v
        if 'error' in kv:
            raise RuntimeError('%s: %s: %s' % (self.name, args[0], kv['error']))
        return kv

    def serving(self):
        try:
            return 'memacct_' in http_get(self.metrics, '/metrics', timeout=20)
        except OSError:
            return False

    def wait_up(self, deadline):
        while time.time() < deadline:
            if self.qemu.poll() is not None:
                raise RuntimeError('%s: qemu exited %d (%s)' % (self.name, self.qemu.returncode,
                                                                self.console))
            if self.serving():
                return
            time.sleep(2)
        raise RuntimeError('%s: its daemon not serving through port %d' % (self.name,
                                                                          self.metrics))


class Hook(http.server.BaseHTTPRequestHandler):
    """Alertmanager's webhook receiver: each POSTed body into Hook.got"""
    got = queue.Queue()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        self.send_response(200)
        self.end_headers()
        Hook.got.put(json.loads(body or b'{}'))

    def log_message(self, *args):
        pass


class Prom:
    """Debian's Prometheus and Alertmanager on loopback, the job rules loaded"""

    def __init__(self, work, nodes):
        self.port, am, hook = free_port(), free_port(), free_port()
        self.hookd = http.server.HTTPServer(('127.0.0.1', hook), Hook)
        threading.Thread(target=self.hookd.serve_forever, daemon=True).start()
        d = os.path.join(work, 'prom')
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        targets = ''.join("      - targets: ['127.0.0.1:%d']\n        labels: {node: %s}\n" %
                          (n.metrics, n.name) for n in nodes)
        with open(os.path.join(d, 'prometheus.yml'), 'w') as f:
            f.write('global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\n'
                    '  evaluation_interval: 1s\n'
                    'rule_files:\n  - %s/docs/deploy/memacct-jobs.rules.yml\n'
                    "alerting:\n  alertmanagers:\n    - static_configs:\n"
                    "        - targets: ['127.0.0.1:%d']\n"
                    'scrape_configs:\n  - job_name: memacct\n    static_configs:\n%s'
                    # the DaemonSet's relabeling: the node's name as instance
                    '    relabel_configs:\n      - source_labels: [node]\n'
                    '        target_label: instance\n' % (TOP, am, targets))
        with open(os.path.join(d, 'alertmanager.yml'), 'w') as f:
            f.write('route:\n  receiver: hook\n  group_by: [memacct_job]\n  group_wait: 1s\n'
                    '  group_interval: 1s\n  repeat_interval: 1h\nreceivers:\n  - name: hook\n'
                    '    webhook_configs:\n      - url: http://127.0.0.1:%d/\n'
                    '        send_resolved: false\n' % hook)
        self.procs = [
            subprocess.Popen(['prometheus', '--config.file=%s/prometheus.yml' % d,
                              '--storage.tsdb.path=%s/data' % d,
                              '--web.listen-address=127.0.0.1:%d' % self.port,
                              '--log.level=warn'], stdout=open(d + '/prometheus.log', 'w'),
                             stderr=subprocess.STDOUT),
            subprocess.Popen(['prometheus-alertmanager', '--config.file=%s/alertmanager.yml' % d,
                              '--storage.path=%s/am' % d,
                              '--web.listen-address=127.0.0.1:%d' % am,
                              '--cluster.listen-address='],
                             stdout=open(d + '/alertmanager.log', 'w'), stderr=subprocess.STDOUT)]
        for port, path in ((self.port, '/-/ready'), (am, '/-/ready')):
            for _ in range(240):
                try:
                    http_get(port, path)
                    break
                except OSError:
                    time.sleep(0.25)
            else:
                raise RuntimeError('Prometheus or Alertmanager not ready in 60 s (%s)' % d)

    def query(self, q):
        """the instant vector of q: [(labels, value)]"""
        r = json.loads(http_get(self.port, '/api/v1/query?query=' + urllib.parse.quote(q)))
        return [(s['metric'], float(s['value'][1])) for s in r['data']['result']]

    def one(self, q):
        r = self.query(q)
        return r[0][1] if r else None

    def stop(self):
        for p in self.procs:
            p.terminate()
            p.wait()
        self.hookd.shutdown()


def initramfs(out, work, suite):
    """busybox, DIR/bin (static memacct and workloads), init.sh as /init,
    node.sh, and the kernel's modules (virtio_net) for /init to load"""
    root = os.path.join(work, 'root')
    shutil.rmtree(root, ignore_errors=True)
    for d in ('bin', 'proc', 'sys', 'dev', 'tmp', 'etc'):
        os.makedirs(os.path.join(root, d))
    shutil.copy(shutil.which('busybox') or '/bin/busybox', root + '/bin/busybox')
    bindir = os.path.join(os.path.dirname(work), 'bin')
    for f in os.listdir(bindir):
        shutil.copy(os.path.join(bindir, f), root + '/bin/')
    shutil.copy(HERE + '/init.sh', root + '/init')
    shutil.copy(HERE + '/node.sh', root + '/bin/node.sh')
    os.symlink('busybox', root + '/bin/sh')
    with open(os.path.join(work, 'version-' + suite)) as f:
        release = f.read().strip()
    shutil.copytree(os.path.join(work, 'modules-' + suite),
                    os.path.join(root, 'modules', release))
    cpio = 'cpio' if shutil.which('cpio') else 'busybox cpio'
    subprocess.run('cd %s && find . | %s -o -H newc 2>/dev/null | gzip -1 > %s' % (
        root, cpio, out), shell=True, check=True)


def parallel(fns):
    """each of fns in a thread of its own, at once: their results in order;
    the first exception raised again"""
    res = [None] * len(fns)

    def one(i):
        try:
            res[i] = fns[i]()
        except Exception as e:	# noqa: BLE001 (raised again below)
            res[i] = e
    ts = [threading.Thread(target=one, args=(i,)) for i in range(len(fns))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for r in res:
        if isinstance(r, Exception):
            raise r
    return res


def settled(prom, q, n=3, tries=240):
    """the value of q once n evaluations in a row agree within 0.1%, each
    with the job's cgroup on the 3 nodes (a failed scrape marks a node's
    series stale at once: a sum without it is no settled figure)"""
    nodes = 'count(memacct_usage_bytes{memacct_job="%s",job_root="true"})' % MJOB
    last, same = None, 0
    for _ in range(tries):
        v = prom.one(q)
        same = same + 1 if v and last and abs(v - last) <= v / 1000 and \
            prom.one(nodes) == 3 else 0
        last = v
        if same >= n:
            return v
        time.sleep(1)
    return last


def counter_resets(prom):
    """{family: resets} of every memacct counter of the job, whole run"""
    names = json.loads(http_get(prom.port, '/api/v1/label/__name__/values'))['data']
    out = {}
    for name in names:
        if name.startswith('memacct_') and name.endswith('_total'):
            out[name] = prom.one('sum(resets(%s{memacct_job="%s"}[30m]))' % (name, MJOB)) or 0
    return out


def run(dirname, suite):
    work = os.path.join(dirname, 'cluster')
    os.makedirs(work, exist_ok=True)
    for tool in ('qemu-system-x86_64', 'busybox', 'prometheus', 'prometheus-alertmanager'):
        if not shutil.which(tool):
            print('vmtest-cluster: %s missing (make deps installs it)' % tool, file=sys.stderr)
            return 3
    env = dict(os.environ, FETCH_MODULES='virtio_net')
    subprocess.run([HERE + '/fetch-kernels.sh', work, suite], env=env, check=True)
    if not os.path.isfile(os.path.join(work, 'modules-%s/order' % suite)):
        print('vmtest-cluster: no virtio_net module for %s' % suite, file=sys.stderr)
        return 3
    initrd = os.path.join(work, 'initramfs.gz')
    initramfs(initrd, work, suite)
    kernel = os.path.join(work, 'vmlinuz-' + suite)
    with open(os.path.join(work, 'version-' + suite)) as f:
        log('booting 3 nodes (%s, TCG, 1 CPU and 1.5 GiB each)' % f.read().strip())
    nodes = [Node(i, work, kernel, initrd) for i in range(3)]
    prom = None
    try:
        for n in nodes:
            n.wait_up(time.time() + 900)
            log('%s: daemon serving (metrics 127.0.0.1:%d, control :%d)' % (n.name, n.metrics,
                                                                            n.control))
        prom = Prom(work, nodes)
        log('Prometheus on 127.0.0.1:%d, 3 targets, the job rules loaded' % prom.port)
        # the job started on the 3 nodes at once, as a scheduler does
        steps = parallel([lambda n=n: n.step('job', n.heap) for n in nodes])
        truth = {n.name: WORKERS * int(kv['truth_cow_bytes_per_worker'])
                 for n, kv in zip(nodes, steps)}
        log('job %d runs on the 3 nodes: on each a %d MiB file mapped by 2 processes, and '
            'heaps of %s MiB forked to %d workers' % (JOB_ID, FILE_MIB,
                                                      '/'.join(str(h) for h in HEAP_MIB), WORKERS))
        checks_charge(prom, nodes)
        cow0 = checks_cow(prom, truth)
        # a node's daemon restarted while the job copies more: a heap of
        # 32 MiB forked there as the daemon stops
        nodes[1].step('restart', 'stop')
        more, kv = parallel([lambda: nodes[1].step('fork', 32),
                             lambda: nodes[1].step('restart', 'start')])
        log('%s: daemon stopped while 32 MiB more were forked and copied, then started on its '
            'pins: serving again after %s s' % (nodes[1].name, kv.get('daemon_up_s')))
        time.sleep(10)	# scraped again, several times
        resets = counter_resets(prom)
        bad = {k: v for k, v in resets.items() if v}
        check(len(resets) >= 6 and not bad,
              'after %s\'s daemon restarted: %d counter families of job %s, resets %s' %
              (nodes[1].name, len(resets), MJOB, bad or 'none'))
        cow1 = settled(prom, 'sum(memacct_cow_copied_bytes_total{memacct_job="%s",'
                       'job_root="true"})' % MJOB)
        add = WORKERS * int(more['truth_cow_bytes_per_worker'])
        check(cow1 is not None and cow0 + add <= cow1 <= cow0 + add * 1.01,
              'job CoW after the restart %s bytes: before %.0f + %d copied meanwhile' % (
                  num(cow1), cow0, add))
        checks_oom(prom, nodes[0])
        for n in nodes:
            kv = n.step('stop')
            check(kv.get('pinned_left') == '0', '%s: uninstall: %s pins left in /sys/fs/bpf' %
                  (n.name, kv.get('pinned_left')))
    except (RuntimeError, OSError, KeyError, ValueError) as e:
        check(False, 'the run stopped: %s' % e)
    finally:
        if prom:
            prom.stop()
        for n in nodes:
            try:
                n.qemu.wait(timeout=60)
            except subprocess.TimeoutExpired:
                n.qemu.kill()
                n.qemu.wait()
    for n in nodes:
        with open(n.console, errors='replace') as f:
            bad = [line.strip() for line in f if re.search(r'Oops|BUG:|WARNING:', line)]
        check(not bad, '%s: console (%s) %s' % (n.name, n.console, bad[:3] or 'clean'))
    log('%d checks failed' % len(failures) if failures else 'all checks passed')
    return 1 if failures else 0


def checks_charge(prom, nodes):
    """the job's charge, file class and worst node against the nodes' kernels"""
    settled(prom, 'memacct_job:usage_bytes:sum{memacct_job="%s"}' % MJOB)
    charge = {n.name: n.step('charge') for n in nodes}
    total = prom.one('memacct_job:usage_bytes:sum{memacct_job="%s"}' % MJOB)
    usage = sum(int(c['usage']) for c in charge.values())
    rss = sum(int(c['rss']) for c in charge.values())
    rules_rss = prom.one('memacct_job:rss_bytes:sum{memacct_job="%s"}' % MJOB)
    for n in nodes:
        log('%s: job cgroup memory.current %s, anon %s, file %s, Σ VmRSS %s' % (
            n.name, charge[n.name]['usage'], charge[n.name]['anon'], charge[n.name]['file'],
            charge[n.name]['rss']))
    check(total is not None and abs(total - usage) <= usage / 100,
          'job %s over 3 nodes: rules %s bytes, Σ memory.current %d (Σ RSS %s in the rules, '
          '%d from the nodes\' /proc)' % (MJOB, num(total), usage, num(rules_rss), rss))
    check(rules_rss is not None and abs(rules_rss - rss) <= rss / 50,
          'Σ RSS: rules %s, the nodes\' VmRSS %d (within 2%%)' % (num(rules_rss), rss))
    f = prom.one('memacct_job:class_bytes:sum{memacct_job="%s",class="file"}' % MJOB)
    want = sum(int(c['file']) for c in charge.values())
    check(f is not None and abs(f - want) <= want / 100 and want >= 3 * FILE_MIB << 20,
          'its file class: rules %s, Σ memory.stat file %d (3 × %d MiB mapped)' % (
              num(f), want, FILE_MIB))
    r = prom.query('memacct_job:class_bytes:worst_node{memacct_job="%s",class="anon"}' % MJOB)
    worst = r[0][0].get('instance') if r else None
    check(worst == nodes[2].name, 'worst node of its anon: %s (%s bytes), the %d MiB heap\'s %s'
          % (worst, num(r[0][1] if r else None), HEAP_MIB[2], nodes[2].name))


def checks_cow(prom, truth):
    """the job's CoW copies over the nodes against the workers' writes"""
    want = sum(truth.values())
    cow = settled(prom, 'sum(memacct_cow_copied_bytes_total{memacct_job="%s",job_root="true"})'
                  % MJOB)
    check(cow is not None and want <= cow <= want * 1.01,
          'job CoW copies over the nodes: %s bytes, the workers wrote %d' % (num(cow), want))
    return cow or 0


def checks_oom(prom, node):
    """an OOM kill on one node: the alert, at the webhook with its cause"""
    kv = node.step('oom')
    log('%s: OOM in the job\'s step_oom: oom exit %s, oom_kill %s' % (
        node.name, kv.get('oom_rc'), kv.get('oom_kill')))
    q = 'ALERTS{alertname="MemacctJobOomKill",alertstate="firing",memacct_job="%s"}' % MJOB
    fired = None
    for _ in range(120):
        fired = prom.one(q)
        if fired:
            break
        time.sleep(1)
    check(fired is not None, 'MemacctJobOomKill firing for %s: %s' % (MJOB, bool(fired)))
    # the alert may reach the webhook first without a cause (the daemon's
    # post-mortem series not scraped yet), then with it: a resend a
    # minute later included
    cause, end = None, time.time() + 150
    while not cause and time.time() < end:
        try:
            body = Hook.got.get(timeout=5)
        except queue.Empty:
            continue
        for a in body.get('alerts', []):
            lab = a.get('labels', {})
            if lab.get('alertname') == 'MemacctJobOomKill' and lab.get('memacct_job') == MJOB:
                cause = lab.get('cause') or cause
    check(cause == 'anon', 'the webhook got MemacctJobOomKill{memacct_job="%s"} with cause %r'
          % (MJOB, cause))


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(run(os.path.abspath(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else
                 'bookworm-backports'))
