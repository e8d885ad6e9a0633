#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""check.py RESULTS CONSOLE [--integration] - judge one vmtest guest run.

RESULTS holds the sections tests/vmtest/init.sh wrote to the guest's ttyS1:
memacct's JSON next to the workloads' ground truth and the guest kernel's own
figures (memory.stat, memory.events, numa_maps, numa_stat, limit files).
Prints one line per check ("ok ..." / "SKIP ..." / "FAIL ...") with both
figures; exits 1 if any check failed. docs/vmtest.md lists the checks.
--integration: the guest also ran the whole integration suite
(tests/integration*.c), or the part memacct.suites= selected; every test
registered there (in that part) must have passed, or skipped itself with a
printed reason. --integration-only: the guest ran that part alone."""
import glob
import json
import os
import re
import sys


def sections(text):
    out, cur, name, part = {}, None, None, 'out'
    for line in text.splitlines():
        m = re.match(r'@@(BEGIN|STDERR|END) (\S+)(?: (-?\d+))?(?: ([\d.]+))?$', line)
        if m:
            kind, name = m.group(1), m.group(2)
            if kind == 'BEGIN':
                cur = out[name] = {'out': [], 'err': [], 'rc': None}
                part = 'out'
            elif kind == 'STDERR':
                part = 'err'
            elif cur is not None:
                cur['rc'] = int(m.group(3))
                cur['uptime'] = float(m.group(4)) if m.group(4) else None
                cur = None
            continue
        if cur is not None:
            cur[part].append(line)
    return out


def parse_run(sec):
    truth, report = {}, None
    for line in sec['out']:
        f = line.split()
        if len(f) >= 3 and f[0] == 'truth':
            truth[f[1]] = int(f[-1])
        elif line.startswith('{'):
            try:
                report = json.loads(line)
            except ValueError:
                pass
    return truth, report


def num(v):
    try:
        return int(v, 0)
    except ValueError:
        return v


class Sec:
    """The lines of a section of the cgroup v2 tests: "truth K V" (the
    workload's ground truth), "kernel K V" (a kernel file read in the guest),
    "rc K N" (a command's exit status), "memstat K V" (memory.stat), "json K
    {...}" (a labelled memacct JSON), "plain K text", and unlabelled JSON (the
    last one is the report)."""

    def __init__(self, sec):
        self.sec = sec
        self.truth, self.kernel, self.rc, self.memstat = {}, {}, {}, {}
        self.json, self.plain, self.report = {}, {}, None
        for line in sec['out']:
            f = line.split(' ', 2)
            if line.startswith('{'):
                try:
                    self.report = json.loads(line)
                except ValueError:
                    pass
            elif len(f) == 3 and f[0] in ('truth', 'kernel', 'rc', 'memstat'):
                getattr(self, f[0])[f[1]] = num(f[2].strip())
            elif len(f) == 3 and f[0] == 'json':
                try:
                    self.json[f[1]] = json.loads(f[2])
                except ValueError:
                    pass
            elif len(f) == 3 and f[0] in ('plain', 'numa_maps', 'numa_stat'):
                self.plain.setdefault(f[0] + ' ' + f[1], []).append(f[2])

    def dump(self, n=25):
        print('\n'.join('     | ' + l for l in (self.sec['out'] + self.sec['err'])[-n:]))


# the guest's base page size (env: page_size_kb; 16 KiB on arm64-16k kernels)
PAGE = 4096


def tol(want):
    """1% or 16 pages, whichever is larger (as tests/integration.c)"""
    return max(abs(want) // 100, 16 * PAGE)


def proc(report, pid):
    for p in report.get('processes', []):
        if p.get('pid') == pid:
            return p
    return None


fails = []
# memacct leaves these programs out on kernels without what they need
# (user/kernel/bpf_loader.c choose_fallbacks()): the metric is then not
# measured. Every kernel of the matrix (5.10 on) has what they need, so there
# memacct's own "unavailable" is a loader regression and fails the check
# (issue 47: it was a SKIP, and CI stayed green); VMTEST_ALLOW_UNAVAILABLE=1
# makes it a SKIP, for a kernel outside the matrix.
NO_FAULT_PROGS = re.compile(r'accounting unavailable on this kernel')
ALLOW_UNAVAILABLE = os.environ.get('VMTEST_ALLOW_UNAVAILABLE') == '1'


def check(name, ok, detail, skip=None):
    if not ok and skip and ALLOW_UNAVAILABLE:
        print('SKIP ' + name + ': ' + detail + ' (' + skip + ')')
        return
    if not ok and skip:
        detail += (' (memacct: ' + skip + '; every kernel of the matrix has the '
                   'fault programs: VMTEST_ALLOW_UNAVAILABLE=1 for one outside it)')
    print(('ok   ' if ok else 'FAIL ') + name + ': ' + detail)
    if not ok:
        fails.append(name)


def unsupported(sec):
    m = [l for l in sec['err'] if NO_FAULT_PROGS.search(l)]
    return m[0].split(': ', 1)[-1] if m else None


def near(got, want, tol=0.01):
    """within tol (1%) of want, or 16 pages: tests/integration.c's tolerance (a
    4 MiB truth is 2.5 pages at 1% on a 16K kernel; libc's fork on arm64 writes
    a few pages more than x86's raw fork, tests/workloads/raw_fork.h)"""
    return want > 0 and abs(got - want) <= max(tol * want, 16 * PAGE)


def check_oom(s):
    """run --memory-max 64M -- oom 128: killed, OOM kill count = memory.events"""
    t = (s.report or {}).get('totals', {})
    got, ker = t.get('oom_kills_total', -1), s.kernel.get('oom_kill', -2)
    check('oom.exit', s.rc.get('run') == 128 + 9,
          'memacct run exit %s (128+SIGKILL: oom %s was OOM-killed)'
          % (s.rc.get('run'), s.truth.get('pid')))
    check('oom.memory_max', s.kernel.get('memory_max') == 64 << 20,
          'memory.max %s, asked 64M' % s.kernel.get('memory_max'))
    check('oom.kills', got == ker and isinstance(ker, int) and ker >= 1,
          'oom_kills_total %d, kernel memory.events oom_kill %s' % (got, ker))
    # the post-mortem (docs/metrics.md "OOM kills"): the victim, the limit
    # found from the page counters, the cause; before 6.7 from a pid only
    ks = (s.report or {}).get('oom_kills') or [{}]
    k, pid = ks[0], s.truth.get('pid')
    victim = proc(s.report or {}, pid) or {}
    check('oom.postmortem', k.get('pid') == pid and k.get('limit_bytes') == 64 << 20 and
          k.get('cause') == 'anon' and victim.get('oom_killed') is True and
          victim.get('exit_signal') == 9,
          'oom_kills[0] pid %s (truth %s), limit_bytes %s, cause %s, at_kill %s; row '
          'oom_killed %s exit_signal %s: %s' % (
              k.get('pid'), pid, k.get('limit_bytes'), k.get('cause'),
              (k.get('victim') or {}).get('at_kill'), victim.get('oom_killed'),
              victim.get('exit_signal'), k.get('verdict')))


def check_oom_host(s):
    """run -- oom 16384, no limit: the host-wide OOM killer's post-mortem"""
    k = ((s.report or {}).get('oom_kills') or [{}])[0]
    st, pid = k.get('cgroup_stocks') or {}, s.truth.get('pid')
    check('oom_host.postmortem',
          s.rc.get('run') == 128 + 9 and k.get('pid') == pid and
          k.get('host_wide') is True and k.get('limit_bytes') is None and
          st.get('source') == '/proc/meminfo' and
          st.get('mem_total_bytes') == s.kernel.get('mem_total_kb', -1) * 1024 and
          k.get('cause') == 'anon',
          'run exit %s; oom_kills[0] pid %s (truth %s), host_wide %s, limit_bytes %s, stocks '
          'from %s, MemTotal %s (kernel %s kB), cause %s: %s' % (
              s.rc.get('run'), k.get('pid'), pid, k.get('host_wide'), k.get('limit_bytes'),
              st.get('source'), st.get('mem_total_bytes'), s.kernel.get('mem_total_kb'),
              k.get('cause'), k.get('verdict')))


def check_attach(s):
    """attach --cgroup job_4711 while cow_fork 64 4 runs in it"""
    rep = s.report or {}
    check('attach.load', s.rc.get('attach') == 0 and rep.get('final') is True
          and rep.get('command') == 'attach' and rep.get('cgroup', {}).get('version') == 2,
          'memacct attach exit %s, final v%s report %s' % (
              s.rc.get('attach'), rep.get('cgroup', {}).get('version'), 'yes' if rep else 'no'))
    if not rep or 'child_pid' not in s.truth:
        s.dump()
        return
    p = proc(rep, s.truth['child_pid']) or {}
    want = s.truth['child_cow_bytes']
    got = p.get('cow_copied_bytes', -1)
    check('attach.child_cow', near(got, want),
          'child cow_copied_bytes %d, truth %d' % (got, want), unsupported(s.sec))
    got = rep.get('totals', {}).get('cow_copied_bytes', -1)
    check('attach.cgroup_cow', near(got, want),
          'cgroup cow_copied_bytes %d, truth %d' % (got, want), unsupported(s.sec))


def check_limits(s):
    """attach --memory-high 100M --memory-max 200M [--memory-swap-max 50M]"""
    k = s.kernel
    files = [f for f in ('max', 'high', 'swap.max') if 'before_' + f in k]
    want = {'max': 200 << 20, 'high': 100 << 20, 'swap.max': 50 << 20}

    def vals(label):
        return dict((f, k.get(label + '_' + f)) for f in files)
    before = vals('before')
    check('limits.written', 'max' in files and 'high' in files
          and vals('sigint_during') == dict((f, want[f]) for f in files)
          and k.get('sigint_during_state_file') == 1,
          'while attached %s (before %s), state file %s' % (
              vals('sigint_during'), before, k.get('sigint_during_state_file')))
    check('limits.sigint', vals('sigint_after') == before and s.rc.get('sigint') == 0
          and k.get('sigint_after_state_file') == 0,
          'after SIGINT %s, exit %s, state file %s' % (
              vals('sigint_after'), s.rc.get('sigint'), k.get('sigint_after_state_file')))
    check('limits.sigkill', vals('sigkill_after') == dict((f, want[f]) for f in files)
          and k.get('sigkill_after_state_file') == 1,
          'after SIGKILL %s (still set), state file %s' % (
              vals('sigkill_after'), k.get('sigkill_after_state_file')))
    check('limits.next_start', vals('next_start') == before and s.rc.get('next_start') == 0
          and k.get('next_start_state_file') == 0,
          'next memacct attach restored %s, exit %s, state file %s' % (
              vals('next_start'), s.rc.get('next_start'), k.get('next_start_state_file')))
    cur = k.get('below_usage_current', 0)
    check('limits.below_usage', isinstance(cur, int) and cur > 8 << 20
          and s.rc.get('below_usage_max') == 2 and s.rc.get('below_usage_high') == 2
          and vals('below_usage') == before,
          'usage %s > 8M: --memory-max 8M exit %s, --memory-high 8M exit %s (2: refused), '
          'limits %s' % (cur, s.rc.get('below_usage_max'), s.rc.get('below_usage_high'),
                         vals('below_usage')))
    check('limits.swap_max', 'swap.max' in files, 'memory.swap.max present: %s'
          % ('swap.max' in files), 'kernel without swap accounting')
    if fails and fails[-1].startswith('limits.'):
        s.dump()


def check_explain(s):
    """explain --cgroup: a 32 MiB clean file mmap'd on ext2, vs memory.stat"""
    rep = s.report or {}
    check('explain.load', s.rc.get('explain') == 0 and bool(rep),
          'memacct explain --cgroup exit %s' % s.rc.get('explain'))
    if not rep or 'file_bytes' not in s.truth:
        s.dump()
        return
    want = s.truth['file_bytes']
    f = [x for x in rep.get('files', []) if x.get('path') == '/mnt/data']
    f = f[0] if f else {}
    got = f.get('reclaimable_bytes', -1)
    check('explain.file_reclaimable', got == want,
          'files[/mnt/data] reclaimable_bytes %d, truth %d (cached_bytes %s)'
          % (got, want, f.get('cached_bytes')))
    check('explain.file_cached', f.get('cached_bytes') == want,
          'files[/mnt/data] cached_bytes %s, truth %d' % (f.get('cached_bytes'), want))
    m, ms, t = s.memstat, rep.get('memory_stat') or {}, rep.get('totals', {})
    # memory.stat itself lags behind the pages by the per-CPU batches the
    # kernel folds lazily (MEMCG_CHARGE_BATCH, 32 pages per CPU and counter;
    # seen on 5.10: active+inactive_file 40 pages short of the file): against
    # the truth, memory.stat figures get the tolerance of tol()
    low = want - tol(want)
    check('explain.charged', m.get('file', 0) >= low,
          'kernel memory.stat file %s >= truth %d (the file\'s page cache is the cgroup\'s)'
          % (m.get('file'), want))
    pairs = [('anon_bytes', 'anon'), ('file_bytes', 'file'), ('active_file_bytes', 'active_file'),
             ('inactive_file_bytes', 'inactive_file'), ('dirty_bytes', 'file_dirty'),
             ('writeback_bytes', 'file_writeback'), ('shmem_bytes', 'shmem'),
             ('unevictable_bytes', 'unevictable'),
             ('slab_reclaimable_bytes', 'slab_reclaimable'),
             ('usage_bytes', None)]
    bad = []
    for j, kkey in pairs:
        kv = s.kernel.get('memory_current') if kkey is None else m.get(kkey)
        if not isinstance(kv, int) or abs(ms.get(j, -1 << 40) - kv) > tol(kv):
            bad.append('%s %s vs %s' % (j, ms.get(j), kv))
    check('explain.memory_stat', not bad,
          '%d figures = memory.stat/memory.current (anon %s, file %s)%s' % (
              len(pairs) - len(bad), ms.get('anon_bytes'), ms.get('file_bytes'),
              ': ' + ', '.join(bad) if bad else ''))
    clean = (m.get('active_file', 0) + m.get('inactive_file', 0) - m.get('file_dirty', 0)
             - m.get('file_writeback', 0))
    got = t.get('file_clean_bytes', -1)
    check('explain.file_clean', abs(got - clean) <= tol(clean) and got >= low,
          'totals file_clean_bytes %d, memory.stat active+inactive_file-dirty-writeback %d, '
          'truth %d' % (got, clean, want))
    # reclaimable_bytes: the clean page cache, the one formula of every
    # report (user/proc/cgroup.c memcg_reclaimable(); slab is no longer added)
    got = t.get('reclaimable_bytes', -1)
    check('explain.reclaimable', abs(got - clean) <= tol(clean) and got >= low,
          'totals reclaimable_bytes %d, memory.stat active+inactive_file-dirty-writeback %d, '
          'truth %d' % (got, clean, want))


def check_audit(s):
    """audit --cgroup audit_test: 64 MiB mlocked, caps 32M and 96M"""
    pid = s.truth.get('pid', -1)
    lck = s.truth.get('exit_locked_bytes', -1)

    def row(j):
        for c in j.get('cgroups', []):
            for p in c.get('processes', []):
                if p.get('pid') == pid:
                    return p
        return {}
    j32, j96 = s.json.get('cap32', {}), s.json.get('cap96', {})
    p = row(j32)
    maps = p.get('locked_mappings') or [{}]
    check('audit.exceeded', s.rc.get('cap32') == 1 and j32.get('verdict') == 'exceeded'
          and p.get('mlocked_bytes') == lck and lck == 64 << 20
          and maps[0].get('locked_bytes') == lck,
          '--pinned-cap 32M: exit %s, verdict %s, pid %d mlocked_bytes %s, locked mapping %s, '
          'VmLck %d' % (s.rc.get('cap32'), j32.get('verdict'), pid, p.get('mlocked_bytes'),
                        maps[0].get('locked_bytes'), lck))
    plain = '\n'.join(s.plain.get('plain cap32', []))
    check('audit.plain', s.rc.get('cap32_plain') == 1 and 'EXCEEDED' in plain
          and re.search(r'\b%d mlock_steps' % pid, plain) is not None,
          'plain --pinned-cap 32M: exit %s, names pid %d: %s' % (
              s.rc.get('cap32_plain'), pid, bool(re.search(r'\b%d mlock_steps' % pid, plain))))
    check('audit.within', s.rc.get('cap96') == 0 and j96.get('verdict') == 'ok'
          and row(j96).get('mlocked_bytes') == lck,
          '--pinned-cap 96M: exit %s, verdict %s' % (s.rc.get('cap96'), j96.get('verdict')))
    if fails and fails[-1].startswith('audit.'):
        s.dump()


def check_dma(s):
    """dma: dma_pin 64 0 0 under memacct run (a 64 MiB AF_XDP UMEM)"""
    if s.kernel.get('foll_pin_counters') != 1:
        check('dma.counters', False, 'no nr_foll_pin_acquired in /proc/vmstat',
              'kernel without FOLL_PIN counters')
        return
    if s.rc.get('run') == 77:
        check('dma.umem', False, ' '.join(s.sec['err'][-1:]), 'no AF_XDP sockets')
        return
    rep = s.report or {}
    p = next((p for p in rep.get('processes', []) if p.get('comm') == 'dma_pin'), {})
    peak, want = p.get('dma_pinned_peak_bytes', -1), 64 << 20
    check('dma.umem', s.rc.get('run') == 0 and abs(peak - want) <= PAGE
          and rep.get('host', {}).get('foll_pin_counters') is True,
          'memacct run exit %s, dma_pinned_peak_bytes %s, truth %d (FOLL_PIN delta %s pages)'
          % (s.rc.get('run'), peak, want, s.truth.get('foll_pin_delta_pages')))
    if fails and fails[-1].startswith('dma.'):
        s.dump()


def check_cpuless(s):
    """cpuless: node 2 (no CPU), 1,000 pages of ext2 page cache read with the
    policy bound to it; memacct's host JSON against node2/meminfo, exact"""
    k, t = s.kernel, s.truth
    pages = t.get('pages', -1)
    host = s.json.get('audit', {}).get('host', {})
    n2 = next((n for n in host.get('nodes', []) if n.get('node') == 2), {})
    cl = s.plain.get('plain cpulist2', ['?'])[0]
    check('cpuless.node', n2.get('cpuless') is True and cl == '[]'
          and all(n.get('cpuless') is False for n in host.get('nodes', []) if n.get('node') != 2),
          'node 2 cpuless %s (cpulist %s, has_cpu %s), others %s' % (
              n2.get('cpuless'), cl, s.plain.get('plain has_cpu', ['?'])[0],
              [n.get('cpuless') for n in host.get('nodes', [])]))
    check('cpuless.workload', s.rc.get('workload') == 0 and pages == 1000
          and t.get('resident_before') == 0 and t.get('resident_after') == pages
          and t.get('pages_on_node') == pages,
          'exit %s: resident before %s, after %s, on node 2 %s of %s pages' % (
              s.rc.get('workload'), t.get('resident_before'), t.get('resident_after'),
              t.get('pages_on_node'), pages))

    def lru(w):
        return k.get(w + '_Active_file_kb', -1) + k.get(w + '_Inactive_file_kb', -1)
    d_lru, d_fp = lru('after') - lru('before'), (k.get('after_file_pages_kb', -1)
                                                   - k.get('before_file_pages_kb', -1))
    kb = PAGE // 1024
    check('cpuless.kernel_delta', d_lru == pages * kb and d_fp == pages * kb,
          'node2/meminfo: file LRU +%d kB, FilePages +%d kB; read %d pages = %d kB' % (
              d_lru, d_fp, pages, pages * kb))
    pc, fp = n2.get('page_cache_bytes', -1), n2.get('file_pages_bytes', -1)
    check('cpuless.page_cache', s.rc.get('audit') == 0
          and pc == lru('after_audit') * 1024 and fp == k.get('after_audit_file_pages_kb', -1) * 1024
          and pc - lru('before') * 1024 == pages * PAGE
          and n2.get('reclaimable_page_cache_bytes') == pc and n2.get('mem_available_bytes', 0) is None,
          'memacct node 2 page_cache_bytes %s (node2/meminfo %d), file_pages_bytes %s (%d), '
          'reclaimable %s; +%d pages since before (read %d)' % (
              pc, lru('after_audit') * 1024, fp, k.get('after_audit_file_pages_kb', -1) * 1024,
              n2.get('reclaimable_page_cache_bytes'), (pc - lru('before') * 1024) // PAGE, pages))
    if fails and fails[-1].startswith('cpuless.'):
        s.dump()


def numa_maps_nodes(lines):
    """/proc/PID/numa_maps: ({start: {node: bytes}}, {node: bytes} summed)"""
    maps, total = {}, {}
    for line in lines:
        f = line.split()
        psize = PAGE
        for w in f:
            if w.startswith('kernelpagesize_kB='):
                psize = int(w.split('=')[1]) * 1024
        nodes = {}
        for w in f:
            m = re.match(r'N(\d+)=(\d+)$', w)
            if m:
                nodes[m.group(1)] = int(m.group(2)) * psize
                total[m.group(1)] = total.get(m.group(1), 0) + int(m.group(2)) * psize
        maps[int(f[0], 16)] = nodes
    return maps, total


def numa_stat_nodes(lines):
    """v2 memory.numa_stat: {node: bytes} of anon + file, else of the LRU
    lines, as memacct sums them (user/proc/numa.c parse_numa_stat())"""
    sums = {'anon+file': {}, 'lru': {}}
    lru = ('active_anon', 'inactive_anon', 'active_file', 'inactive_file', 'unevictable')
    for line in lines:
        f = line.split()
        which = 'anon+file' if f and f[0] in ('anon', 'file') else \
            'lru' if f and f[0] in lru else None
        if which:
            for w in f[1:]:
                m = re.match(r'N(\d+)=(\d+)$', w)
                if m:
                    d = sums[which]
                    d[m.group(1)] = d.get(m.group(1), 0) + int(m.group(2))
    return sums['anon+file'] or sums['lru']


def check_numa_stock(s):
    """numa_bind 32 --pause in a cgroup with cpuset.cpus 0: explain at each stop"""
    pid, start = s.truth.get('pid', -1), s.truth.get('buffer_start', -1)
    buf, moved = s.truth.get('buffer_bytes', -1), s.truth.get('move_pages_bytes', -1)
    expect = {'bound': buf, 'moved': buf - moved, 'migrated': buf}
    check('numa_stock.steps', s.rc.get('numa_bind') == 0 and all(
        s.rc.get('explain_' + st) == 0 and s.rc.get('explain_cg_' + st) == 0 for st in expect),
        'numa_bind --pause exit %s, 3 stops x explain PID and explain --cgroup exit 0: %s'
        % (s.rc.get('numa_bind'), sorted(s.rc.items())))
    remote = {}
    for st, want in expect.items():
        rep = s.json.get(st, {})
        maps, total = numa_maps_nodes(s.plain.get('numa_maps ' + st, []))
        kremote = sum(v for n, v in total.items() if n != '0')
        numa = rep.get('numa') or {}
        np = [x for x in numa.get('processes', []) if x.get('pid') == pid]
        np = np[0] if np else {}
        p = proc(rep, pid) or {}
        got = p.get('remote_numa_bytes', -1)
        remote[st] = got
        check('numa_stock.%s.process' % st,
              got == kremote and np.get('remote_numa_bytes') == kremote
              and np.get('home_node') == 0 and np.get('home_node_source') == 'affinity'
              and np.get('bytes_by_node') == dict(
                  (n, total.get(n, 0)) for n in set(('0', '1')) | set(np.get('bytes_by_node') or {})),
              'processes[].remote_numa_bytes %d, numa.processes[] %s (home %s by %s), '
              'numa_maps off node 0 %d, by node %s' % (
                  got, np.get('remote_numa_bytes'), np.get('home_node'),
                  np.get('home_node_source'), kremote, json.dumps(np.get('bytes_by_node'))))
        mp = [m for m in numa.get('mappings', []) if m.get('pid') == pid
              and num(m.get('start', '-1')) == start]
        mp = mp[0] if mp else {}
        kbuf = maps.get(start, {}).get('1', -1)
        check('numa_stock.%s.buffer' % st,
              mp.get('remote_bytes') == want and (mp.get('bytes_by_node') or {}).get('1') == want
              and kbuf == want,
              'buffer mapping remote_bytes %s, on node 1 %s; numa_maps N1 %d; truth %d' % (
                  mp.get('remote_bytes'), (mp.get('bytes_by_node') or {}).get('1'), kbuf, want))
        cg = (s.json.get('cg_' + st, {}).get('numa') or {}).get('cgroup') or {}
        ks = numa_stat_nodes(s.plain.get('numa_stat cg_' + st, []))
        bn = cg.get('bytes_by_node') or {}
        ok = cg.get('home_node') == 0 and cg.get('home_node_source') == 'cpuset' and all(
            abs(bn.get(n, -1 << 40) - ks.get(n, 0)) <= tol(ks.get(n, 0)) for n in ('0', '1'))
        ok = ok and cg.get('remote_numa_bytes') == bn.get('1', -1) and \
            bn.get('1', 0) >= want - tol(want)
        check('numa_stock.%s.cgroup' % st, ok,
              'numa.cgroup by node %s (home %s by %s, remote %s), memory.numa_stat %s, '
              'buffer on node 1 %d' % (json.dumps(bn), cg.get('home_node'),
                                       cg.get('home_node_source'), cg.get('remote_numa_bytes'),
                                       json.dumps(ks), want))
    check('numa_stock.bound.truth', remote.get('bound') == buf,
          'processes[].remote_numa_bytes %s once bound, truth %d (all else of the process is '
          'on node 0)' % (remote.get('bound'), buf))
    drop = remote.get('bound', 0) - remote.get('moved', 0)
    check('numa_stock.drop', drop == moved and moved > 0,
          'remote_numa_bytes dropped by %d after move_pages, which moved %d' % (drop, moved))
    # issue 40: the daemon's remote_numa_peak_bytes was the sample of that
    # collection, as remote_numa_bytes; it is the largest one it took
    dc = [c for c in (s.json.get('daemon_end') or {}).get('cgroups', [])
          if c.get('cgroup', '').endswith('/numa_test')]
    dc = dc[0] if dc else {}
    peak, now = dc.get('remote_numa_peak_bytes', -1), dc.get('remote_numa_bytes', -1)
    check('numa_stock.daemon_peak', s.rc.get('numa_daemon') == 0 and 0 <= now < buf // 2
          and peak >= buf - tol(buf),
          'daemon JSON log once numa_bind exited: numa_test remote_numa_bytes %s, '
          'remote_numa_peak_bytes %s (the buffer was off node 0 at each stop: %d); daemon '
          'exit %s: %s' % (now, peak, buf, s.rc.get('numa_daemon'),
                           ' | '.join(s.plain.get('plain numa_daemon_err', []))[-600:]))
    err0 = ' | '.join(s.plain.get('plain numa_daemon_err', []))
    err1 = ' | '.join(s.plain.get('plain numa_daemon_restart_err', []))
    held = 'cannot be pinned here' in err0
    check('numa_stock.daemon_restart', s.rc.get('numa_daemon_restart') == 0
          and 'serving on port' in err1
          and (('are gone' in err1) if held else ('re-attached' in err1)),
          'a daemon restarted on the pins: exit %s after %.1f s, %s (the first one held '
          'tracepoint links: %s): %s' % (
              s.rc.get('numa_daemon_restart'), s.kernel.get('daemon_restart_ds', -1) / 10,
              'programs loaded again' if 'are gone' in err1 else 're-attached', held,
              err1[-500:]))
    if fails and fails[-1].startswith('numa_stock'):
        s.dump()


def check_nomem(s):
    """v2 cgroups without the memory controller: run enables it, attach --pid
    follows the charge to the ancestor, attach --cgroup of such a cgroup is refused"""
    k, rep = s.kernel, s.report or {}
    # the guest prints these lists comma-separated, ended by "."
    before = str(k.get('root_subtree_before', '?')).rstrip('.').split(',')
    after = str(k.get('root_subtree_after', '?')).rstrip('.').split(',')
    leaf = str(k.get('leaf_controllers', '?')).rstrip('.').split(',')
    check('nomem.run_enables', 'memory' not in before and 'memory' in after,
          'root cgroup.subtree_control before run %s, after %s' % (before, after))
    pids = [p.get('pid') for p in rep.get('processes', [])]
    ok = s.rc.get('run') == 0 and s.truth.get('parent_pid') in pids and \
        s.truth.get('child_pid') in pids
    check('nomem.run_accounts', ok, 'memacct run exit %s, parent %s and child %s in %s'
          % (s.rc.get('run'), s.truth.get('parent_pid'), s.truth.get('child_pid'), pids))
    if ok:
        got = (proc(rep, s.truth['child_pid']) or {}).get('cow_copied_bytes', -1)
        check('nomem.run_cow', near(got, s.truth['child_cow_bytes']),
              'child cow_copied_bytes %d, truth %d' % (got, s.truth['child_cow_bytes']),
              unsupported(s.sec))
    a = s.json.get('attach_pid', {})
    pid = s.truth.get('pid_pid', -1)
    row = proc(a, pid) if a else None
    check('nomem.attach_pid', 'memory' not in leaf and s.rc.get('attach_pid') == 0 and
          a.get('cgroup', {}).get('path') == '/nomem_parent' and row is not None,
          'leaf controllers %s; attach --pid %d exit %s, accounted cgroup %s, pid in report %s'
          % (leaf, pid, s.rc.get('attach_pid'), a.get('cgroup', {}).get('path'),
             row is not None))
    if a and 'pid_child_pid' in s.truth:
        got = (proc(a, s.truth['pid_child_pid']) or {}).get('cow_copied_bytes', -1)
        check('nomem.attach_pid_cow', near(got, s.truth['pid_child_cow_bytes']),
              'attach --pid: child cow_copied_bytes %d, truth %d'
              % (got, s.truth['pid_child_cow_bytes']), unsupported(s.sec))
    check('nomem.attach_cgroup', s.rc.get('attach_leaf') == 3,
          'attach --cgroup leaf (no memory controller) exit %s (3: environment)'
          % s.rc.get('attach_leaf'))
    if fails and fails[-1].startswith('nomem.'):
        s.dump()


# libcheck's verdict of a test with CK_VERBOSITY=verbose:
# FILE:LINE:P|F|E:TCASE:TEST:ITERATION: MESSAGE
CK_RESULT = re.compile(r'^(\S+?):(\d+):([PFE]):([^:]+):(\w+):(\d+): ?(.*)$')
CK_SUMMARY = re.compile(r'^(\d+)%: Checks: (\d+), Failures: (\d+), Errors: (\d+)')


def registered_tests(selection=None):
    """the tests tests/integration*.c register (tcase_add_test) for a guest,
    by name (not those of a case tagged host-only); with @selection (MEMACCT_SUITES: "a,b" or "-a,-b"), those of the
    suites it selects, as tests/integration.c's suite_wanted() does"""
    here = os.path.dirname(os.path.abspath(__file__))
    sel = [w for w in (selection or '').split(',') if w]
    inc = [w for w in sel if not w.startswith('-')]
    exc = [w[1:] for w in sel if w.startswith('-')]
    names = []
    for f in sorted(glob.glob(os.path.join(here, '..', 'integration*.c'))):
        text = open(f).read()
        suite = re.search(r'suite_create\("(\w+)"\)', text)
        suite = suite.group(1) if suite else None
        if suite in exc or (inc and suite not in inc):
            continue
        # a test case tagged HOST_ONLY_TAG (tests/integration.h) does not
        # run in a guest (init.sh: CK_EXCLUDE_TAGS)
        for case in re.split(r'(?=\btcase_(?:swept|create)\()', text):
            if 'tcase_set_tags(tc, HOST_ONLY_TAG)' not in case:
                names += re.findall(r'tcase_add_test\(\s*\w+\s*,\s*(\w+)\s*\)', case)
    return names


def check_integration(sec, uptime_before):
    """the whole integration suite on pure cgroup v2: each registered test
    passed (or skipped itself, saying why: a "SKIP ..." line it printed
    before its verdict), none failed, none missing, no cgroup left behind"""
    s = Sec(sec)
    results, skips, last = {}, {}, None
    unnamed = []
    for line in sec['out']:
        m = CK_RESULT.match(line)
        sk = re.match(r'SKIP (test_\w+): (.*)', line)
        if re.match(r'\s*SKIP\b', line) and not sk:
            unnamed.append(line.strip())	# a skip no test owns: it would pass unseen
        if m:
            last = m.group(5)
            results[last] = [m.group(3), m.group(7), m.group(1) + ':' + m.group(2)]
        elif sk:
            skips.setdefault(sk.group(1), []).append(sk.group(2))
        elif last and not CK_SUMMARY.match(line) and not line.startswith('rc '):
            results[last][1] += '\n' + line	# a message of several lines
    mnt = ' '.join(s.plain.get('plain mount', []))
    opts = mnt.split(' - ')[-1].split()[-1].split(',') if ' - cgroup2 ' in mnt else []
    check('integration.layout', s.kernel.get('cgroup1_mounts') == 0 and 'nsdelegate' in opts,
          'cgroup2 on /sys/fs/cgroup (%s), cgroup v1 mounts: %s' % (
              ','.join(opts) or mnt or 'not found', s.kernel.get('cgroup1_mounts')))
    # memacct.suites= (run.sh's parts of the suite, one guest each)
    part = s.plain.get('plain ck_suites')
    want = registered_tests(part[0] if part else None)
    if part:
        print('     this guest\'s part of the suite: %s (%d tests)' % (part[0], len(want)))
    selected = s.plain.get('plain ck_selected')
    if selected:
        # memacct.ck_run_suite / ck_run_case: a part of the suite, by hand
        print('     part of the suite only (%s): the %d tests that ran are judged'
              % (' '.join(selected), len(results)))
        want = [n for n in want if n in results]
    counts = {'ok': 0, 'skip': 0, 'fail': 0}
    for name in want:
        r = results.get(name)
        if r is None:
            check('integration.' + name, False, 'no verdict (the suite stopped before it)')
            counts['fail'] += 1
            continue
        kind, msg, where = r
        if kind == 'P' and name in skips:
            print('SKIP integration.%s: %s' % (name, '; '.join(skips[name])))
            counts['skip'] += 1
        elif kind == 'P':
            check('integration.' + name, True, 'passed')
            counts['ok'] += 1
        else:
            check('integration.' + name, False, '%s at %s' % (msg, where))
            counts['fail'] += 1
    if counts['fail']:
        # the suite's own lines before libcheck's verdicts (assert_near()
        # figures, memacct's stderr): the whole is in the results file
        end = [i for i, l in enumerate(sec['out']) if CK_SUMMARY.match(l)]
        out = sec['out'][:end[-1] if end else len(sec['out'])]
        print('\n'.join('     | ' + l for l in out[-40:]))
    check('integration.skips_named', not unnamed,
          'every SKIP line names its test (SKIP_TEST())%s' % (
              ': ' + '; '.join(unnamed[:5]) if unnamed else ''))
    extra = sorted(set(results) - set(want))
    check('integration.registered', not extra and len(want) > 0,
          '%d tests registered in tests/integration*.c%s' % (
              len(want), ', verdicts of unknown tests: ' + ', '.join(extra) if extra else ''))
    summ = [CK_SUMMARY.match(l) for l in sec['out'] if CK_SUMMARY.match(l)]
    summ = summ[-1] if summ else None
    check('integration.exit', s.rc.get('test_integration') == 0 and summ is not None
          and int(summ.group(3)) + int(summ.group(4)) == 0 and int(summ.group(2)) == len(want),
          'test_integration exit %s, libcheck: %s' % (
              s.rc.get('test_integration'), summ.group(0) if summ else 'no summary'))
    check('integration.cleanup', s.kernel.get('leftover_cgroups') == 0,
          'cgroups left behind below /sys/fs/cgroup: %s%s' % (
              s.kernel.get('leftover_cgroups'),
              ' (' + ', '.join(s.plain['plain leftover']) + ')'
              if 'plain leftover' in s.plain else ''))
    secs = sorted(((float(v.split()[1]), v.split()[0]) for v in s.plain.get('plain ck_suite_seconds', [])
                   if len(v.split()) == 2), reverse=True)
    if secs:
        print('     seconds by suite (libcheck): ' + ', '.join('%s %.0f' % (n, t) for t, n in secs))
    took = sec.get('uptime') - uptime_before if sec.get('uptime') and uptime_before else None
    print('     integration suite on pure cgroup v2: %d passed, %d skipped, %d failed of %d%s'
          % (counts['ok'], counts['skip'], counts['fail'], len(want),
             ', %.0f s' % took if took is not None else ''))


def check_process_anon(name, s, p):
    """a process that never forked nor freed anon memory (zero_fill): its zero
    fills are the anonymous pages its page tables hold outside file mappings,
    exact but the exec's argument pages (tests/integration.c
    assert_anon_truth()), its file CoW those in private file mappings"""
    every = s.truth.get('process_zero_fill_bytes', -1)
    arg = s.kernel.get('exec_arg_bytes', 0)
    got = p.get('zero_fill_bytes', -1)
    check(name + '.process', every > 0 and every - arg <= got <= every,
          'process zero_fill_bytes %d, its anonymous pages %d (less up to the exec\'s %d)'
          % (got, every, arg), unsupported(s.sec))
    got = p.get('cow_file_copied_bytes', -1)
    want = s.truth.get('process_cow_file_bytes', -2)
    check(name + '.process_file_cow', got == want,
          'process cow_file_copied_bytes %d, its anonymous pages in private file mappings %d'
          % (got, want), unsupported(s.sec))
    # fault_alloc_bytes: counted where allocations are placed on nodes (the
    # guests have several), every page the faults allocated: the anonymous
    # pages (less the exec's) up to the page tables and 16 page-cache pages
    # more (tests/integration.c assert_fault_alloc())
    nodes = len((s.report or {}).get('host', {}).get('nodes', []))
    got = p.get('fault_alloc_bytes')
    lo = every + want - arg
    hi = every + want + s.kernel.get('vm_pte_bytes', 0) + 16 * PAGE
    if nodes > 1:
        check(name + '.fault_alloc', got is not None and lo <= got <= hi,
              'process fault_alloc_bytes %s on %d nodes, truth %d to %d (anon pages, page '
              'tables)' % (got, nodes, lo, hi), unsupported(s.sec))
    else:
        check(name + '.fault_alloc', got is None,
              'process fault_alloc_bytes %s on one node: not measured, null' % got,
              unsupported(s.sec))


# in the order tests/vmtest/init.sh runs them
def check_zero_fill(s):
    """zero_fill 32: read then write fresh anon; truth from pagemap"""
    rep = s.report or {}
    t = rep.get('totals', {})
    want = s.truth.get('zero_fill_bytes', -1)
    got = t.get('zero_fill_bytes', -1)
    check('zero_fill.bytes', near(got, want) or abs(got - want) <= tol(want),
          'zero_fill_bytes %d, truth %d (pagemap: %s pages left the zero page, %s had '
          'their own frame after the read)' % (got, want, s.kernel.get('zero_page_pages'),
                                               s.kernel.get('own_frame_pages')),
          unsupported(s.sec))
    got = t.get('cow_copied_bytes', -1)
    check('zero_fill.no_cow', 0 <= got <= tol(0), 'cow_copied_bytes %d, truth 0' % got,
          unsupported(s.sec))
    check_process_anon('zero_fill', s, proc(rep, s.truth.get('pid', -1)) or {})
    if not rep:
        s.dump()


def check_thp(s):
    """zero_fill --thp 64: every resident page of the MADV_HUGEPAGE buffer is a
    zero fill (THPs as their bytes); truth: its smaps Rss; memacct adds the
    loader's few (up to 32 pages)"""
    rep = s.report or {}
    p = proc(rep, s.truth.get('pid', -1)) or {}
    want = s.truth.get('zero_fill_bytes', -1)
    got = p.get('zero_fill_bytes', -1)
    check('thp.zero_fill', want > 0 and want <= got <= want + 32 * PAGE,
          'zero_fill_bytes %d, truth %d (AnonHugePages %s, THP %s)'
          % (got, want, s.kernel.get('anon_huge_bytes'),
             'never' if s.kernel.get('thp_never') == 1 else 'enabled'),
          unsupported(s.sec))
    check_process_anon('thp', s, p)
    if not rep:
        s.dump()


def check_thread_exit(s):
    """thread_exit 4096 256: faults of a process whose leader exits first are
    every thread's (getrusage before exit_group), to 4 faults of its exit"""
    rep = s.report or {}
    p = proc(rep, s.truth.get('pid', -1)) or {}
    want = s.truth.get('faults', -1)
    got = p.get('page_faults_total', -1)
    check('thread_exit.faults', want > 0 and want <= got <= want + 4,
          'page_faults_total %d, getrusage before exit %d' % (got, want))
    if not rep:
        s.dump()


def check_page_cache(s):
    """page_cache_files /mnt/pc pca:16 pcb:8: each file's page cache charged
    to the run's cgroup (issue 43), within 4 pages of what the workload's
    mincore() saw its read bring in"""
    rep = s.report or {}
    files = (rep.get('page_cache_by_file') or {}).get('files', [])
    for name in ('pca', 'pcb'):
        want = s.truth.get(name + '_bytes', -1)
        ino = s.truth.get(name + '_ino', -1)
        got = next((f.get('bytes', -1) for f in files if f.get('inode') == ino), 0)
        check('page_cache.' + name, want > 0 and abs(got - want) <= 4 * PAGE,
              '%s: page_cache_by_file %d bytes, mincore %d' % (name, got, want))
    if not rep:
        s.dump()


def check_cow_maps(s):
    """cow_maps 4 8 16 4: per worker, the copies in each of its parent's
    heap, anon mmap and private file mapping by mapping (issue 42), exact
    (the heap - 16 pages: COWM_MIN_PAGES; + 16 pages, fault_cow_maps()), the parent's resident bytes within 16
    pages of its smaps Rss, fewer than 16 pages unattributed (those before its
    first 16: bpf/faults.bpf.h COWM_MIN_PAGES); before 5.17 (no
    bpf_find_vma()) none attributed"""
    rep = s.report or {}
    rel = str(s.kernel.get('release', '0.0'))
    m = re.match(r'(\d+)\.(\d+)', rel)
    attributed = m and (int(m.group(1)), int(m.group(2))) >= (5, 17)
    for w in range(s.truth.get('workers', 0) or 0):
        p = proc(rep, s.truth.get('worker_%d' % w, -1)) or {}
        maps = p.get('cow_by_mapping')
        allb = p.get('cow_copied_bytes', 0) + p.get('cow_file_copied_bytes', 0)
        un = p.get('cow_by_mapping_unattributed_bytes', -1)
        if not attributed:
            check('cow_maps.worker%d' % w, maps == [] and un == allb,
                  'kernel %s: %s entries, unattributed %d of %d'
                  % (rel, len(maps) if maps is not None else None, un, allb))
            continue
        bad = []
        for kind in ('heap', 'anon', 'file'):
            lo, hi = s.truth.get('map_%s_start' % kind), s.truth.get('map_%s_end' % kind)
            rss, want = s.truth.get('map_%s_rss' % kind), s.truth.get('copied_%s' % kind)
            e = next((e for e in maps or [] if lo <= e['start'] < hi), None)
            if e is None:
                bad.append('%s: no entry' % kind)
                continue
            got, par = e['bytes'], e['parent_resident_bytes'] or -1
            # within 5% or 16 pages below, the larger (the heap, copied first,
            # loses the pages before the process's 16th when a switch folds
            # them: COWM_MIN_PAGES, 12.5% of its 2 MiB with 16 KiB pages, 8
            # pages short once in trixie-16k; TCG guests lost up to 3% more,
            # not explained yet: stop 55's note), 16 pages above (libc's own
            # in the heap; a copy made twice, suspected: integration.c
            # fault_cow_maps()); the parent's resident bytes within 16 pages
            # of its Rss (read at a child's first copy)
            ok = e['kind'] == kind and want - max(want // 20, 16 * PAGE) <= got <= want + 16 * PAGE
            ok = ok and rss - 16 * PAGE <= par <= rss + 16 * PAGE
            (bad if not ok else []).append('%s: %s %d (truth %d), parent %d (Rss %d)'
                                          % (kind, e['kind'], got, want, par, rss))
        # unattributed: the copies before its first 16 pages (COWM_MIN_PAGES)
        check('cow_maps.worker%d' % w, not bad and 0 <= un <= max(16 * PAGE, allb // 20),
              '; '.join(bad) if bad else 'heap, anon, file within 5%% or 16 pages below and '
              '16 pages above the truth; unattributed %d' % un,
              unsupported(s.sec))
    if not rep or not s.truth.get('workers'):
        check('cow_maps', False, 'no report or no truth')
        s.dump()


def check_cow_busy(s):
    """cow_mmap_churn 32 3: child CoW = pagemap truth while mmap_lock is busy;
    nothing unclassified where the maple tree walk exists (>= 6.1)"""
    rep = s.report or {}
    p = proc(rep, s.truth.get('child_pid', -1)) or {}
    want = s.truth.get('child_cow_bytes', -1)
    cow = p.get('cow_copied_bytes', -1)
    unc = p.get('fault_unclassified_bytes', -1)
    rel = str(s.kernel.get('release', '0.0'))
    maple = tuple(int(x) for x in re.findall(r'\d+', rel)[:2]) >= (6, 1)
    missed = rep.get('bpf_runs_skipped')
    check('cow_busy.child', near(cow if maple else cow + unc, want),
          'cow_copied_bytes %d%s, truth %d (%s VMAs by the lockless walk, %s churn rounds, '
          '%s BPF runs the kernel skipped)'
          % (cow, '' if maple else ' + unclassified %d (< 6.1)' % unc, want,
             rep.get('vma_lockless_lookups'), s.kernel.get('churn_ops'), missed),
          unsupported(s.sec))
    if maple:
        check('cow_busy.unclassified', unc == 0, 'fault_unclassified_bytes %d' % unc,
              unsupported(s.sec))
    vb = rep.get('dropped_events_by_cause', {}).get('vma_busy', -1)
    check('cow_busy.vma_busy', vb == 0, 'dropped vma_busy %d' % vb)
    if not rep:
        s.dump()


def check_reclaim(s):
    """memacct reclaim --file-only (docs/reclaim.md) on 64 MiB of page cache in
    a cgroup: >= 90% of it freed, anon within 1 MiB (memory.stat's flush
    threshold), the reported file freed = memory.stat's delta within 1 MiB,
    "swappiness=0" on 6.11+ and the no-swap fallback before; without
    memory.reclaim (< 5.19) refused with exit 3"""
    j, rc = s.json.get('reclaim') or {}, s.rc.get('reclaim')
    rel = str(s.kernel.get('release', '0.0'))
    ver = tuple(int(x) for x in re.findall(r'\d+', rel)[:2])
    if not s.kernel.get('has_reclaim'):
        check('reclaim.refused', rc == 3 and not j,
              'kernel %s has no memory.reclaim: exit %s (want 3)' % (rel, rc))
        return
    if not s.kernel.get('disk'):
        check('reclaim', False, 'no ext2 disk at /mnt', 'page cache would be shmem')
        return
    mib = 1 << 20
    fb, fa = s.memstat.get('before_file', 0), s.memstat.get('after_file', -1)
    ab, aa = s.memstat.get('before_anon', 0), s.memstat.get('after_anon', -1)
    want = 'swappiness=0' if ver >= (6, 11) else 'no_swap'
    check('reclaim.status', rc == 0 and j.get('method') == want,
          'kernel %s: exit %s, method %s (want %s)' % (rel, rc, j.get('method'), want))
    check('reclaim.file', fb >= 62 * mib and fb - fa >= 64 * mib * 9 // 10,
          'memory.stat file %d -> %d' % (fb, fa))
    check('reclaim.anon', abs(aa - ab) <= mib, 'memory.stat anon %d -> %d' % (ab, aa))
    got = j.get('freed_bytes', {}).get('file', -1 << 40)
    check('reclaim.reported', abs(got - (fb - fa)) <= mib,
          'freed_bytes.file %d, memory.stat delta %d' % (got, fb - fa))
    if fails and fails[-1].startswith('reclaim'):
        s.dump()


def check_totals(s, name, want, above=None, below=None):
    """memacct run's totals against the workload's truth: {field: truth key
    or 0}, exact (issue 47: these truths are exact to the page; 16 pages of
    tolerance let a file CoW of 0 pass). The workloads' file_cow_bytes
    include the loader's relocation writes, read from smaps. above: {field:
    pages} that may come on top of the truth, below: {field: pages} that
    may be missing from it, each with the reason where used"""
    t = (s.report or {}).get('totals', {})
    for field, key in want.items():
        w = s.truth.get(key, -1) if key else 0
        got = t.get(field, -1)
        extra = (above or {}).get(field, 0) * PAGE
        less = (below or {}).get(field, 0) * PAGE
        check(name + '.' + field, w >= 0 and w - less <= got <= w + extra,
              '%s %d, truth %d%s%s%s' % (field, got, w, ' (%s)' % key if key else '',
                                         ' + up to %d' % extra if extra else '',
                                         ' - up to %d' % less if less else '',
                                         ) + ('' if extra or less else ' (exact)'),
              unsupported(s.sec))
    if not s.report:
        s.dump()


def check_file_cow(s):
    """file_private 32 /mnt: every page written copies a page-cache page"""
    check_totals(s, 'file_cow', {'cow_file_copied_bytes': 'file_cow_bytes',
                                 'cow_copied_bytes': None})


def check_file_cow_read(s):
    """file_private 32 --read-first: the same after a read mapped each page;
    one page may be missing where the fault hook is the perf event (arm64:
    1 of 2,050 on 6.12 16K, 2026-11-29, a known miss: docs/vmtest.md)"""
    check_totals(s, 'file_cow_read', {'cow_file_copied_bytes': 'file_cow_bytes',
                                      'cow_copied_bytes': None},
                 below={'cow_file_copied_bytes': 1})


def check_file_shared(s):
    """file_shared 32 --read-first: MAP_SHARED writes dirty in place, no copy"""
    check_totals(s, 'file_shared', {'cow_file_copied_bytes': 'file_cow_bytes',
                                    'cow_copied_bytes': None})


def check_reuse(s):
    """reuse_tmpfs 32 8: write faults that reuse the page copy nothing; the
    buffer's pages the kernel copied instead (pagemap) are its cow_bytes, and
    up to 8 pages outside the buffer (stack, .bss, stdio) written after the
    fork may be copied rather than reused the same way"""
    check_totals(s, 'reuse', {'cow_copied_bytes': 'cow_bytes',
                              'cow_file_copied_bytes': 'file_cow_bytes'},
                 above={'cow_copied_bytes': 8,
                        # a plain fork (arm64): the child may copy libc's
                        # .data before it exits (one page on 5.10)
                        'cow_file_copied_bytes': 0 if s.truth.get('exact') == 1 else 8})


def check_pinned(s, name, fields):
    p = proc(s.report or {}, s.truth.get('pid', -1)) or {}
    for field, key in fields:
        got, w = p.get(field, -1), s.truth.get(key, -1)
        check(name + '.' + field, w > 0 and got == w, '%s %d, truth %d (%s)' % (field, got, w, key))
    if not s.report:
        s.dump()


def check_mlock(s):
    """mlock_steps mlock 64: mlocked bytes at exit and peak = VmLck"""
    check_pinned(s, 'mlock', [('mlocked_bytes', 'exit_locked_bytes'),
                              ('mlocked_peak_bytes', 'peak_locked_bytes')])


def check_io_uring(s):
    """mlock_steps io_uring 64: IORING_REGISTER_BUFFERS, pinned_vm = VmPin"""
    check_pinned(s, 'io_uring', [('pinned_vm_bytes', 'exit_pinned_vm_bytes'),
                                 ('pinned_vm_peak_bytes', 'peak_pinned_vm_bytes')])


# memacct.faults=1 (run.sh: arm64): judged when --faults is given
FAULT_TESTS = [('file_cow', check_file_cow), ('file_cow_read', check_file_cow_read),
               ('file_shared', check_file_shared), ('reuse', check_reuse),
               ('mlock', check_mlock), ('io_uring', check_io_uring)]

V2_TESTS = [('zero_fill', check_zero_fill), ('thp', check_thp),
            ('thread_exit', check_thread_exit), ('cow_busy', check_cow_busy),
            ('cow_maps', check_cow_maps), ('page_cache', check_page_cache),
            ('numa_stock', check_numa_stock), ('oom', check_oom), ('oom_host', check_oom_host),
            ('attach', check_attach),
            ('limits', check_limits), ('explain', check_explain), ('audit', check_audit),
            ('dma', check_dma), ('cpuless', check_cpuless), ('reclaim', check_reclaim),
            ('nomem', check_nomem)]


def main():
    text = open(sys.argv[1], errors='replace').read()
    console = open(sys.argv[2], errors='replace').read() if len(sys.argv) > 2 else ''
    secs = sections(text)
    check('boot', '@@VMTEST done' in text, 'guest ran its tests to the end')
    bad = re.findall(r'.*(?:Oops|BUG:|WARNING:|Kernel panic).*', console)
    check('console', not bad, bad[0].strip() if bad else 'no Oops/BUG/WARNING')
    if bad:
        # the report's own lines (registers, call trace) say where: the run's
        # console tail comes much later and may be cut from a CI log
        lines = console.splitlines()
        first = next(i for i, l in enumerate(lines) if bad[0] in l)
        print('\n'.join('     | ' + l for l in lines[first + 1:first + 40]))
    global PAGE
    env = secs.get('env')
    if env:
        for line in env['out'][:3]:
            print('     ' + line)
        for line in env['out']:
            if line.startswith('page_size_kb ') and line.split()[1].isdigit():
                PAGE = int(line.split()[1]) * 1024
    if '--integration-only' in sys.argv[3:]:
        # a guest of a part of the integration suite only (run.sh: the
        # matrix sections ran in the first part's guest)
        sec = secs.get('integration')
        if sec is None:
            check('integration', False, 'section missing')
        else:
            check_integration(sec, secs.get('env', {}).get('uptime'))
        return 1 if fails else 0
    sec = secs.get('cow')
    if sec:
        truth, rep = parse_run(sec)
        check('cow.load', sec['rc'] == 0 and rep is not None,
              'memacct run exit %s, report %s' % (sec['rc'], 'yes' if rep else 'no'))
        if rep:
            # every fault needs its task storage: none may fail to allocate
            # (>= 6.19 on a CPU without cmpxchg16b: run.sh, docs/vmtest.md)
            ts = rep.get('dropped_events_by_cause', {}).get('task_storage', -1)
            check('cow.task_storage', ts == 0,
                  'dropped task-storage events %d (dropped_events %s)'
                  % (ts, rep.get('dropped_events')))
        if rep and 'child_pid' in truth:
            p = proc(rep, truth['child_pid'])
            got = p['cow_copied_bytes'] if p else -1
            # exact where cow_fork's fork is raw (x86-64: truth exact 1)
            exact = truth.get('exact') == 1
            check('cow.child', got == truth['child_cow_bytes'] if exact
                  else near(got, truth['child_cow_bytes']),
                  'cow_copied_bytes %d, truth %d%s' % (got, truth['child_cow_bytes'],
                                                       ' (exact)' if exact else ''),
                  unsupported(sec))
        if sec['rc'] != 0 or not rep:
            print('\n'.join('     | ' + l for l in sec['err'][-25:]))
    else:
        check('cow', False, 'section missing')
    sec = secs.get('numa')
    if sec:
        truth, rep = parse_run(sec)
        check('numa.load', sec['rc'] == 0 and rep is not None,
              'memacct run exit %s, report %s' % (sec['rc'], 'yes' if rep else 'no'))
        if rep and 'pid' in truth:
            p = proc(rep, truth['pid']) or {}
            got = p.get('remote_numa_alloc_bytes', -1)
            check('numa.remote_alloc', near(got, truth['remote_numa_alloc_bytes']),
                  'remote_numa_alloc_bytes %d, truth %d' % (got, truth['remote_numa_alloc_bytes']),
                  unsupported(sec))
            got = p.get('numa_migrated_bytes', -1)
            check('numa.migrated', near(got, truth['numa_migrated_bytes']),
                  'numa_migrated_bytes %d, truth %d (move_pages %d, migrate_pages %d), by reason %s'
                  % (got, truth['numa_migrated_bytes'], truth.get('move_pages_bytes', -1),
                     truth.get('migrate_pages_bytes', -1),
                     json.dumps(p.get('numa_migrated_bytes_by_reason'))))
        if sec['rc'] != 0 or not rep:
            print('\n'.join('     | ' + l for l in (sec['out'] + sec['err'])[-25:]))
    else:
        check('numa', False, 'section missing')
    if '--integration' in sys.argv[3:]:
        sec = secs.get('integration')
        if sec is None:
            check('integration', False, 'section missing')
        else:
            check_integration(sec, secs.get('audit', {}).get('uptime'))
    for name, fn in V2_TESTS + (FAULT_TESTS if '--faults' in sys.argv[3:] else []):
        sec = secs.get(name)
        if sec is None:
            check(name, False, 'section missing')
            continue
        fn(Sec(sec))
    sec = secs.get('bench_cgroups')	# memacct.bench=1: a measurement, no check
    if sec is not None:
        for l in sec['out'] + sec['err']:
            if re.match(r'(bench_cgroups:|round |new )', l):
                print('     bench_cgroups (TCG: relative only) | ' + l)
        check('bench_cgroups', sec['rc'] == 0, 'tests/bench_cgroups.sh exit %s' % sec['rc'])
    times = ['%s %.1f' % (n, secs[n]['uptime']) for n in secs if secs[n].get('uptime')]
    if times:
        print('     guest uptime at the end of each section (s): ' + ', '.join(times))
    return 1 if fails else 0


sys.exit(main())
