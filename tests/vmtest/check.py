#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""check.py RESULTS CONSOLE - judge one vmtest guest run.

RESULTS holds the sections tests/vmtest/init.sh wrote to the guest's ttyS1.
Prints one line per check ("ok ..." / "FAIL ...") and the NUMA figures;
exits 1 if any check failed."""
import json
import re
import sys


def sections(text):
    out, cur, name, part = {}, None, None, 'out'
    for line in text.splitlines():
        m = re.match(r'@@(BEGIN|STDERR|END) (\S+)(?: (-?\d+))?$', line)
        if m:
            kind, name = m.group(1), m.group(2)
            if kind == 'BEGIN':
                cur = out[name] = {'out': [], 'err': [], 'rc': None}
                part = 'out'
            elif kind == 'STDERR':
                part = 'err'
            else:
                cur['rc'] = int(m.group(3))
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


def proc(report, pid):
    for p in report.get('processes', []):
        if p.get('pid') == pid:
            return p
    return None


fails = []
# memacct leaves these programs out on kernels without what they need
# (user/bpf_loader.c choose_fallbacks()): the metric is then not measured,
# which is reported as SKIP, not as a pass.
NO_FAULT_PROGS = re.compile(r'accounting unavailable on this kernel')


def check(name, ok, detail, skip=None):
    if not ok and skip:
        print('SKIP ' + name + ': ' + detail + ' (' + skip + ')')
        return
    print(('ok   ' if ok else 'FAIL ') + name + ': ' + detail)
    if not ok:
        fails.append(name)


def unsupported(sec):
    m = [l for l in sec['err'] if NO_FAULT_PROGS.search(l)]
    return m[0].split(': ', 1)[-1] if m else None


def near(got, want, tol=0.01):
    return want > 0 and abs(got - want) <= tol * want


def main():
    text = open(sys.argv[1], errors='replace').read()
    console = open(sys.argv[2], errors='replace').read() if len(sys.argv) > 2 else ''
    secs = sections(text)
    check('boot', '@@VMTEST done' in text, 'guest ran its tests to the end')
    bad = re.findall(r'.*(?:Oops|BUG:|WARNING:|Kernel panic).*', console)
    check('console', not bad, bad[0].strip() if bad else 'no Oops/BUG/WARNING')
    env = secs.get('env')
    if env:
        for line in env['out'][:3]:
            print('     ' + line)
    sec = secs.get('cow')
    if sec:
        truth, rep = parse_run(sec)
        check('cow.load', sec['rc'] == 0 and rep is not None,
              'memacct run exit %s, report %s' % (sec['rc'], 'yes' if rep else 'no'))
        if rep and 'child_pid' in truth:
            p = proc(rep, truth['child_pid'])
            got = p['cow_copied_bytes'] if p else -1
            check('cow.child', near(got, truth['child_cow_bytes']),
                  'cow_copied_bytes %d, truth %d' % (got, truth['child_cow_bytes']),
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
    return 1 if fails else 0


sys.exit(main())
