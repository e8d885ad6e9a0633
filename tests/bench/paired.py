#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""paired.py - memacct's per-event cost as paired differences with 95%
confidence intervals (tests/bench.sh runs it; docs/overhead.md).

Design: BLOCKS blocks; in each, every arm is visited once in a random order,
and each visit runs every workload once. An arm's cost in a block is its value
minus the value of "off" in the same block (or of another arm: memacct over
the floor, memacct against bpftrace), so drift of the machine over minutes
(other work, frequency, caches) cancels within a block. Each arm settles
SETTLE seconds (default 1) after its start before its first workload: in the
first second after the daemon started, CoW copies measured ~300 ns cheaper
than later, and every arm's start and the previous arm's stop (detach, map
frees) have transients of their own. Reported: the median
of the paired differences and its 95% interval by a percentile bootstrap of
the median (BOOT resamples, seeded), beside the median of "off" itself.

Arms:
  off       nothing attached
  floor     empty programs on every tracepoint memacct's hot paths use: the
            fault, allocation, scheduler ones (bench/empty.bpf.c) and the
            syscalls:sys_exit_* ones of its pinned-memory tracking
            (bench/empty_sys.bpf.c)
  floor_hot the same without the syscall tracepoints: floor - floor_hot is
            what putting every syscall on the slow path costs
  on        memacct's daemon kernel side (bpf_stats off, the default)
  base      the same with another memacct binary (--base PATH, e.g. a build
            of main): on - base is what a change to memacct did
  bpftrace  Debian's bpftrace running the one-line per-process fault counter
            tracepoint:exceptions:page_fault_user { @[pid] = count(); }
            (what a user would write instead; skipped if bpftrace is missing)
Workloads (CPU time of the workload, the figure the kernel charges it):
  fault     bench/fault: write faults on fresh anon memory (zero fills)
  cow       bench/cow: fork, then the child writes every page (CoW copies)
  switch    bench/switch: pipe ping-pong of two processes on one CPU
  syscall   bench/syscall: getppid() in a loop (no program on it): the slow
            syscall path that any syscalls:* tracepoint imposes on every task
  fork      bench/fork: fork a child that exits at once, wait (fork + exit)
  loader    bench/loader: a DataLoader-like fork/read/copy workload (seconds)
  demo      the README's main job: tests/workloads/dataloader_demo.py (a
            PyTorch DataLoader, 4 forked workers) under PYTHON (default
            /usr/bin/python3, which must import torch and numpy), with
            DEMO_ARGS (default none: the README's sizes); CPU seconds of the
            interpreter and its workers (getrusage of waited-for children).
            Not in the default set (it needs PyTorch): name it in --workloads

Every value is also written to --raw (default OUTPUT_DIR/bench/paired-raw.csv:
block, position in the block, arm, workload, value), so that drift between
blocks can be looked at after a run.

Usage: paired.py OUTPUT_DIR [--blocks N] [--quick] [--arms a,b,c] [--workloads w,x]
                 [--base MEMACCT] [--settle S] [--boot N] [--raw CSV]
Needs root. Exit 0; 2 on bad arguments; 4 when an arm cannot start.
"""
import argparse
import os
import random
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

WORKLOADS = [  # name, argv (below OUTPUT/bench), output key, unit
    ('fault', ['fault', '64', '4'], 'cpu_ns_per_fault', 'ns'),
    ('cow', ['cow', '64', '2'], 'cpu_ns_per_cow', 'ns'),
    ('switch', ['switch', '50000'], 'cpu_ns_per_switch', 'ns'),
    ('syscall', ['syscall', '500000'], 'cpu_ns_per_syscall', 'ns'),
    ('fork', ['fork', '2000'], 'cpu_ns_per_fork', 'ns'),
    ('loader', ['loader', '4'], 'cpu_seconds', 's'),
    ('demo', None, 'cpu_seconds', 's'),
]
DEFAULT_WORKLOADS = 'fault,cow,switch,syscall,fork,loader'
DEMO = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'workloads',
                    'dataloader_demo.py')
BPFTRACE_PROG = 'tracepoint:exceptions:page_fault_user { @[pid] = count(); }'
PORT = int(os.environ.get('PORT', '29465'))


def fail(why):
    """an arm cannot start: exit 4 (its process is stopped by the caller)"""
    print('paired: ' + why, file=sys.stderr)
    raise SystemExit(4)


class Arm:
    def __init__(self, name, out, base=None):
        self.name, self.out, self.proc = name, out, None
        self.memacct = base if name == 'base' else os.path.join(out, 'memacct')
        self.pin = '/sys/fs/bpf/memacct-paired-%d' % os.getpid()

    def start(self):
        b = os.path.join(self.out, 'bench')
        if self.name in ('floor', 'floor_hot'):
            objs = ['empty.bpf.o'] + (['empty_sys.bpf.o'] if self.name == 'floor' else [])
            self.proc = subprocess.Popen([os.path.join(b, 'empty_attach')] +
                                         [os.path.join(b, o) for o in objs],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            if self.proc.stdout.readline().strip() != 'ready':
                fail('empty_attach did not attach')
        elif self.name in ('on', 'base'):
            self.proc = subprocess.Popen([self.memacct, 'daemon',
                                          '--listen', '127.0.0.1:%d' % PORT,
                                          '--pin-path', self.pin, '--interval', '60s'],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(200):
                try:
                    socket.create_connection(('127.0.0.1', PORT), 0.2).close()
                    return
                except OSError:
                    if self.proc.poll() is not None:
                        break
                    time.sleep(0.05)
            fail('memacct daemon did not start')
        elif self.name == 'bpftrace':
            self.proc = subprocess.Popen(['bpftrace', '-e', BPFTRACE_PROG],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True)
            line = self.proc.stdout.readline()
            if not line.startswith('Attaching'):
                fail('bpftrace did not attach')
            time.sleep(0.2)

    def stop(self):
        if not self.proc:
            return
        if self.name in ('floor', 'floor_hot'):
            self.proc.stdin.close()
        else:
            self.proc.send_signal(signal.SIGINT if self.name == 'bpftrace' else signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        if self.name in ('on', 'base'):
            subprocess.run([self.memacct, 'detach', '--pin-path', self.pin],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_workload(out, argv, key):
    if argv is None:    # demo: the CPU time the kernel charged its whole tree
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([os.environ.get('PYTHON', '/usr/bin/python3'), DEMO] +
                       os.environ.get('DEMO_ARGS', '').split(),
                       stdout=subprocess.DEVNULL, check=True, start_new_session=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    # own session: timeout(1)'s SIGTERM to its process group must not end it
    o = subprocess.run([os.path.join(out, 'bench', argv[0])] + argv[1:], capture_output=True,
                       text=True, check=True, start_new_session=True).stdout.split()
    return float(o[o.index(key) + 1])


def boot_ci(diffs, boot, rng):
    """median and the 2.5/97.5 percentiles of the bootstrapped median"""
    n = len(diffs)
    meds = sorted(statistics.median(rng.choices(diffs, k=n)) for _ in range(boot))
    return statistics.median(diffs), meds[int(0.025 * boot)], meds[int(0.975 * boot) - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--blocks', type=int, default=int(os.environ.get('BLOCKS', '20')))
    ap.add_argument('--quick', action='store_true', help='5 blocks, for development')
    ap.add_argument('--arms', default=os.environ.get('PAIRED_ARMS',
                                                     'off,floor_hot,floor,on,bpftrace'))
    ap.add_argument('--boot', type=int, default=2000)
    ap.add_argument('--settle', type=float, default=float(os.environ.get('SETTLE', '1')),
                    help='seconds between an arm\'s start and its first workload')
    ap.add_argument('--base', default=os.environ.get('BASE_MEMACCT'),
                    help='memacct binary of the base arm')
    ap.add_argument('--workloads', default=os.environ.get('PAIRED_WORKLOADS',
                                                          DEFAULT_WORKLOADS))
    ap.add_argument('--raw', help='CSV of every value (default OUTPUT_DIR/bench/paired-raw.csv)')
    a = ap.parse_args()
    if os.geteuid():
        sys.exit('paired: needs root')
    blocks = 5 if a.quick else a.blocks
    arms = a.arms.split(',')
    want = a.workloads.split(',')
    unknown = set(want) - set(w[0] for w in WORKLOADS)
    if unknown:
        ap.error('unknown workload(s) %s' % ','.join(sorted(unknown)))
    WORKLOADS[:] = [w for w in WORKLOADS if w[0] in want]
    if 'bpftrace' in arms and not shutil.which('bpftrace'):
        print('paired: bpftrace not installed: its arm is left out', file=sys.stderr)
        arms.remove('bpftrace')
    if 'off' not in arms:
        ap.error('the off arm is needed')
    if 'base' in arms and not (a.base and os.access(a.base, os.X_OK)):
        ap.error('the base arm needs --base MEMACCT (an executable)')
    rng = random.Random(20261123)
    val = {(arm, w[0]): [] for arm in arms for w in WORKLOADS}
    raw = open(a.raw or os.path.join(a.out, 'bench', 'paired-raw.csv'), 'w')
    raw.write('block,position,arm,workload,value\n')
    # SIGTERM (a time limit): finish the arm in progress, stop it, then
    # report the blocks done; a cut block still pairs arms by block
    cut = []
    signal.signal(signal.SIGTERM, lambda *_: cut.append(1))
    t0 = time.time()
    done = 0
    for blk in range(blocks):
        order = arms[:]
        rng.shuffle(order)
        for pos, name in enumerate(order):
            if cut:
                break
            arm = Arm(name, a.out, a.base)
            try:
                arm.start()
                time.sleep(a.settle)
                for w, argv, key, _ in WORKLOADS:
                    v = run_workload(a.out, argv, key)
                    val[(name, w)].append(v)
                    raw.write('%d,%d,%s,%s,%r\n' % (blk, pos, name, w, v))
            finally:
                arm.stop()
        raw.flush()
        if cut:
            print('paired: stopped by SIGTERM in block %d' % (blk + 1), file=sys.stderr)
            break
        done = blk + 1
        print('block %d/%d done (%.0f s)' % (blk + 1, blocks, time.time() - t0), file=sys.stderr)

    if not all(val[('off', w[0])] for w in WORKLOADS):
        print('paired: no block done')
        return 1

    def diff(x, y, w):
        return [p - q for p, q in zip(val[(x, w)], val[(y, w)])]

    print('== memacct overhead: medians of paired differences [95%% CI, bootstrap], '
          '%d blocks, %.0f s, CPU time ==' % (done, time.time() - t0))
    pairs = [(arm, 'off') for arm in arms if arm != 'off']
    if 'floor' in arms and 'floor_hot' in arms:
        pairs.append(('floor', 'floor_hot'))
    if 'on' in arms and 'floor' in arms:
        pairs.append(('on', 'floor'))
    if 'on' in arms and 'bpftrace' in arms:
        pairs.append(('on', 'bpftrace'))
    if 'on' in arms and 'base' in arms:
        pairs.append(('on', 'base'))
    for w, _, _, unit in WORKLOADS:
        base = statistics.median(val[('off', w)])
        fmt = (lambda v: '%+.1f ns' % v) if unit == 'ns' else \
              (lambda v, b=base: '%+.2f%%' % (100 * v / b))
        line = '%-7s off %s' % (w, ('%.1f ns' % base) if unit == 'ns' else ('%.4f s' % base))
        for x, y in pairs:
            m, lo, hi = boot_ci(diff(x, y, w), a.boot, rng)
            line += '  %s-%s %s [%s, %s]' % (x, y, fmt(m), fmt(lo), fmt(hi))
        print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
