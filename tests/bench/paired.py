#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""paired.py - memacct's per-event cost as paired differences with 95%
confidence intervals (tests/bench.sh runs it; docs/overhead.md).

Design (--mode toggle, the default): every arm's programs are loaded once
and then attached (~2 ms) and detached by bench/toggle (an arm's process,
the memacct daemon, empty_attach or bpftrace, is started once, its programs
are taken over by toggle, and the process is stopped). BLOCKS blocks; in
each, for each workload in turn, every arm is visited once in a random
order: attach, run the workload once (short runs, ~10-50 ms), detach. An
arm's cost in a block is its value minus the value of "off" for the same
workload in the same block (or of another arm: memacct over the floor,
memacct against bpftrace), taken within 1-10 s (a detach of the syscall
tracepoints waits for RCU grace periods: 30-650 ms here), so the machine's
drift over minutes (other work, frequency, caches) cancels. Reported: the
median of the paired differences and its 95% interval by a percentile
bootstrap of the median (BOOT resamples, seeded), beside the median of
"off" itself.

--mode process (the design until 2026-11-26, and the fallback where toggle
cannot take the programs: kernels before 6.6): every arm is started and
stopped as a process for each visit, which runs every workload once with
longer runs, after SETTLE seconds (default 1) once the arm is attached.

Arms:
  off       nothing attached
  floor     empty programs on every tracepoint memacct's hot paths use: the
            fault, allocation, scheduler ones (bench/empty.bpf.c) and the
            syscalls:sys_exit_* ones of its pinned-memory tracking
            (bench/empty_sys.bpf.c)
  floor_perf the floor with the perf event fault hook in place of the
            fault tracepoints (bench/empty_perf.bpf.c: an empty program on
            PERF_COUNT_SW_PAGE_FAULTS of every CPU, plus empty_sys.bpf.c):
            the floor of on_perf
  floor_hot the same without the syscall tracepoints: floor - floor_hot is
            what putting every syscall on the slow path costs
  on        memacct's daemon kernel side (bpf_stats off, the default;
            --dma-pins auto: no DMA-pin window on a host without a device
            that pins, and then no syscall tracepoint at all on kernels with
            (mm, write) mmap_lock tracepoints)
  on_perf   the same with the perf event fault hook forced
            (MEMACCT_FAULT_HOOK=perf: PERF_COUNT_SW_PAGE_FAULTS on every CPU
            instead of exceptions:page_fault_user, docs/metrics.md "Fault
            hooks"): on_perf - on is what the portable hook costs more per
            fault. Process mode only (toggle re-creates tracepoint links,
            not per-CPU software events): naming it (or floor_perf) selects
            process mode
  on_dma    the same with --dma-pins on (the DMA-pin windows' syscall
            tracepoints attached): on_dma - on is what they cost
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
block, position of the arm in its visit order, arm, workload, value), so that
drift between blocks can be looked at after a run.

Usage: paired.py OUTPUT_DIR [--blocks N] [--quick] [--arms a,b,c] [--workloads w,x]
                 [--mode toggle|process] [--base MEMACCT] [--settle S] [--boot N]
                 [--raw CSV]
Needs root. Exit 0; 1 when no block was done; 2 on bad arguments; 4 when an
arm cannot start or be taken over.
"""
import argparse
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time

WORKLOADS = [  # name, argv (below OUTPUT/bench): process mode, toggle mode; key, unit
    ('fault', ['fault', '64', '4'], ['fault', '16', '1'], 'cpu_ns_per_fault', 'ns'),
    ('cow', ['cow', '64', '2'], ['cow', '16', '1'], 'cpu_ns_per_cow', 'ns'),
    ('switch', ['switch', '50000'], ['switch', '10000'], 'cpu_ns_per_switch', 'ns'),
    ('syscall', ['syscall', '500000'], ['syscall', '100000'], 'cpu_ns_per_syscall', 'ns'),
    ('fork', ['fork', '2000'], ['fork', '200'], 'cpu_ns_per_fork', 'ns'),
    ('loader', ['loader', '4'], ['loader', '1'], 'cpu_seconds', 's'),
    ('demo', None, None, 'cpu_seconds', 's'),
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
        self.log = os.path.join(out, 'bench', 'paired-daemon.log')

    def start(self):
        b = os.path.join(self.out, 'bench')
        if self.name in ('floor', 'floor_hot', 'floor_perf'):
            objs = ['empty_perf.bpf.o' if self.name == 'floor_perf' else 'empty.bpf.o'] + \
                (['empty_sys.bpf.o'] if self.name != 'floor_hot' else [])
            self.proc = subprocess.Popen([os.path.join(b, 'empty_attach')] +
                                         [os.path.join(b, o) for o in objs],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            if self.proc.stdout.readline().strip() != 'ready':
                fail('empty_attach did not attach')
        elif self.name in ('on', 'on_dma', 'on_perf', 'base'):
            # ready when it says "serving on port": it listens before it
            # loads, so an open port is no sign of attached programs (the
            # first workloads after it ran with none attached)
            with open(self.log, 'w') as log:
                self.proc = subprocess.Popen([self.memacct, 'daemon',
                                              '--listen', '127.0.0.1:%d' % PORT,
                                              '--pin-path', self.pin, '--interval', '60s'] +
                                             (['--dma-pins', 'on'] if self.name == 'on_dma'
                                              else []),
                                             stdout=subprocess.DEVNULL, stderr=log,
                                             env=dict(os.environ, MEMACCT_FAULT_HOOK='perf')
                                             if self.name == 'on_perf' else None)
            for _ in range(600):
                with open(self.log) as log:
                    if 'serving on port' in log.read():
                        return
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
            fail('memacct daemon did not start (%s)' % self.log)
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
        if self.name in ('floor', 'floor_hot', 'floor_perf'):
            self.proc.stdin.close()
        else:
            self.proc.send_signal(signal.SIGINT if self.name == 'bpftrace' else signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        if self.name in ('on', 'on_dma', 'on_perf', 'base'):
            subprocess.run([self.memacct, 'detach', '--pin-path', self.pin],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Toggler:
    """bench/toggle: every arm's programs, attached and detached on demand"""

    def __init__(self, out):
        self.proc = subprocess.Popen([os.path.join(out, 'bench', 'toggle')],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     start_new_session=True)

    def cmd(self, line):
        self.proc.stdin.write(line + '\n')
        self.proc.stdin.flush()
        r = self.proc.stdout.readline().split()
        if not r or r[0] != 'ok':
            return -1, ' '.join(r) or 'toggle exited'
        return int(r[1]), ''

    def take(self, arm):
        """start ARM's process, take its programs over, stop it: None, or why not"""
        try:
            arm.start()
            n, why = self.cmd('take %s%s' % (arm.name, ' exceptions/page_fault_user'
                                              if arm.name == 'bpftrace' else ''))
        finally:
            arm.stop()
        if n <= 0:
            return why or 'no program of %s to take' % arm.name
        return None

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()


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
    ap.add_argument('--blocks', type=int, default=int(os.environ.get('BLOCKS', '0')),
                    help='default 40 (toggle: ~9 min here), 20 (process)')
    ap.add_argument('--quick', action='store_true', help='a fifth of the blocks, for development')
    ap.add_argument('--mode', choices=('toggle', 'process'),
                    default=os.environ.get('PAIRED_MODE', 'toggle'))
    ap.add_argument('--arms', default=os.environ.get('PAIRED_ARMS',
                                                     'off,floor_hot,floor,on,bpftrace'))
    ap.add_argument('--boot', type=int, default=2000)
    ap.add_argument('--settle', type=float, default=float(os.environ.get('SETTLE', '-1')),
                    help='seconds between an arm\'s start and its first workload '
                    '(default 1 in process mode, 0 in toggle mode)')
    ap.add_argument('--base', default=os.environ.get('BASE_MEMACCT'),
                    help='memacct binary of the base arm')
    ap.add_argument('--workloads', default=os.environ.get('PAIRED_WORKLOADS',
                                                          DEFAULT_WORKLOADS))
    ap.add_argument('--raw', help='CSV of every value (default OUTPUT_DIR/bench/paired-raw.csv)')
    a = ap.parse_args()
    if os.geteuid():
        sys.exit('paired: needs root')
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
    tog = None
    if a.mode == 'toggle':
        tog = Toggler(a.out)
        for name in arms:
            why = ('its perf event links are per-CPU software events'
                   if name in ('on_perf', 'floor_perf') else
                   name != 'off' and tog.take(Arm(name, a.out, a.base)))
            if why:
                print('paired: toggle cannot take %s (%s): process mode' % (name, why),
                      file=sys.stderr)
                tog.close()
                tog, a.mode = None, 'process'
                break
    mode_i = 2 if a.mode == 'toggle' else 1
    blocks = a.blocks or (40 if a.mode == 'toggle' else 20)
    if a.quick:
        blocks = max(blocks // 5, 3)
    settle = a.settle if a.settle >= 0 else (0 if a.mode == 'toggle' else 1)
    rng = random.Random(20261123)
    val = {(arm, w[0]): [] for arm in arms for w in WORKLOADS}
    raw = open(a.raw or os.path.join(a.out, 'bench', 'paired-raw.csv'), 'w')
    raw.write('block,position,arm,workload,value\n')
    # SIGTERM (a time limit): finish the visit in progress, detach, then
    # report the blocks done; a cut block still pairs arms by block
    cut = []
    signal.signal(signal.SIGTERM, lambda *_: cut.append(1))

    def visit(blk, pos, name, works):
        if tog:
            if name != 'off':
                n, why = tog.cmd('on ' + name)
                if n <= 0:
                    fail('toggle on %s: %s' % (name, why))
            arm = None
        else:
            arm = Arm(name, a.out, a.base)
            arm.start()
        try:
            time.sleep(settle)
            for w in works:
                v = run_workload(a.out, w[mode_i], w[3])
                val[(name, w[0])].append(v)
                raw.write('%d,%d,%s,%s,%r\n' % (blk, pos, name, w[0], v))
        finally:
            if arm:
                arm.stop()
            elif name != 'off':
                tog.cmd('off ' + name)

    t0 = time.time()
    done = 0
    try:
        for blk in range(blocks):
            # toggle: the arms in turn for one workload, then the next one;
            # process: each arm started once for all the workloads
            groups = [[w] for w in WORKLOADS] if tog else [WORKLOADS]
            for works in groups:
                order = arms[:]
                rng.shuffle(order)
                for pos, name in enumerate(order):
                    if cut:
                        break
                    visit(blk, pos, name, works)
            raw.flush()
            if cut:
                print('paired: stopped by SIGTERM in block %d' % (blk + 1), file=sys.stderr)
                break
            done = blk + 1
            if done % (5 if tog else 1) == 0 or done == blocks:
                print('block %d/%d done (%.0f s)' % (done, blocks, time.time() - t0),
                      file=sys.stderr)
    finally:
        if tog:
            tog.close()
    raw.close()

    if not all(val[('off', w[0])] for w in WORKLOADS):
        print('paired: no block done')
        return 1

    def diff(x, y, w):
        return [p - q for p, q in zip(val[(x, w)], val[(y, w)])]

    print('== memacct overhead: medians of paired differences [95%% CI, bootstrap], '
          '%d blocks, %s mode, %.0f s, CPU time ==' % (done, a.mode, time.time() - t0))
    pairs = [(arm, 'off') for arm in arms if arm != 'off']
    if 'floor' in arms and 'floor_hot' in arms:
        pairs.append(('floor', 'floor_hot'))
    if 'on' in arms and 'floor' in arms:
        pairs.append(('on', 'floor'))
    if 'on' in arms and 'bpftrace' in arms:
        pairs.append(('on', 'bpftrace'))
    if 'on' in arms and 'base' in arms:
        pairs.append(('on', 'base'))
    if 'on' in arms and 'on_perf' in arms:
        pairs.append(('on_perf', 'on'))
    if 'on_perf' in arms and 'floor_perf' in arms:
        pairs.append(('on_perf', 'floor_perf'))
    if 'floor_perf' in arms and 'floor' in arms:
        pairs.append(('floor_perf', 'floor'))
    if 'on' in arms and 'on_dma' in arms:
        pairs.append(('on_dma', 'on'))
    for w in WORKLOADS:
        base = statistics.median(val[('off', w[0])])
        fmt = (lambda v: '%+.1f ns' % v) if w[4] == 'ns' else \
              (lambda v, b=base: '%+.2f%%' % (100 * v / b))
        line = '%-7s off %s' % (w[0], ('%.1f ns' % base) if w[4] == 'ns' else ('%.4f s' % base))
        for x, y in pairs:
            m, lo, hi = boot_ci(diff(x, y, w[0]), a.boot, rng)
            line += '  %s-%s %s [%s, %s]' % (x, y, fmt(m), fmt(lo), fmt(hi))
        print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
