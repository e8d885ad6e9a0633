#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""kmem.py OUTPUT_DIR [N ...] - the kernel memory of memacct's kernel side

make bench's part 5 (issue 30, 3): for each N (default 100 10000), the
memacct daemon's kernel side (every process of the host: the largest kernel
side) loaded, then N sleeping processes started (bench/spawn: each forked
and faulted under the programs, so each has its procs record) and two
collections done; then the kernel's own accounting of each BPF object the
daemon holds, from /proc/DAEMON/fdinfo: maps ("memlock", which since v6.4
is bpf_map_memory_usage(): for a hash map without preallocation its buckets
plus the elements in use, for a preallocated one every element, for a ring
buffer its pages) and programs ("memlock": the JIT image's pages). Prints
one line per map and a total per N, in KiB. A memacct run's kernel side
holds the same maps with only its CMD's processes in procs.
"""
import os
import re
import signal
import subprocess
import sys
import time

PORT = int(os.environ.get("PORT", "29465"))


def fdinfo(pid):
    """{("map"|"prog", id): memlock bytes} of every BPF fd of @pid"""
    objs = {}
    d = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            text = open(os.path.join(d, fd)).read()
        except OSError:
            continue
        m = re.search(r"^memlock:\s+(\d+)", text, re.M)
        i = re.search(r"^(map|prog)_id:\s+(\d+)", text, re.M)
        if m and i:
            objs[(i.group(1), int(i.group(2)))] = int(m.group(1))
    return objs


def names(kind):
    out = subprocess.run(["bpftool", kind, "show"], capture_output=True, text=True).stdout
    return {int(m.group(1)): m.group(2)
            for m in re.finditer(r"^(\d+): \S+\s+name (\S+)", out, re.M)}


def measure(out, n):
    pin = "/sys/fs/bpf/memacct-kmem-%d" % os.getpid()
    log = os.path.join(out, "bench", "kmem-daemon.log")
    memacct = os.path.join(out, "memacct")
    with open(log, "w") as lf:
        d = subprocess.Popen([memacct, "daemon", "--listen", "127.0.0.1:%d" % PORT,
                              "--pin-path", pin, "--interval", "1s"],
                             stdout=subprocess.DEVNULL, stderr=lf)
    spawn = None
    try:
        for _ in range(600):
            if "serving on port" in open(log).read() or d.poll() is not None:
                break
            time.sleep(0.05)
        # spawned after the load: every child forks and faults under the
        # programs, so each has its procs record (sleepers from before the
        # load would have none until they do something)
        spawn = subprocess.Popen([os.path.join(out, "bench", "spawn"), str(n)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        got = spawn.stdout.readline().split()
        time.sleep(2.5)	# two collections
        objs = fdinfo(d.pid)
        mnames, pnames = names("map"), names("prog")
    finally:
        d.send_signal(signal.SIGTERM)
        d.wait(30)
        subprocess.run([memacct, "detach", "--pin-path", pin],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if spawn:
            spawn.stdin.close()
            spawn.wait(120)
    maps = sorted(((v, mnames.get(k[1], "?")) for k, v in objs.items() if k[0] == "map"),
                  reverse=True)
    progs = [v for k, v in objs.items() if k[0] == "prog"]
    tm, tp = sum(v for v, _ in maps), sum(progs)
    print("  %s processes (%s spawned): maps %.0f KiB, programs %.0f KiB (%d), total %.1f MiB"
          % (format(n, ","), got[-1] if got else "?", tm / 1024, tp / 1024, len(progs),
             (tm + tp) / 2**20))
    print("    " + ", ".join("%s %.0f" % (name, v / 1024) for v, name in maps if v >= 8192)
          + " KiB; the rest %.0f KiB" % (sum(v for v, _ in maps if v < 8192) / 1024))


def main():
    out = sys.argv[1]
    sizes = [int(x) for x in sys.argv[2:]] or [100, 10000]
    print("== kernel memory of the daemon's kernel side (fdinfo memlock; pid_max %s)"
          % open("/proc/sys/kernel/pid_max").read().strip())
    for n in sizes:
        measure(out, n)


if __name__ == "__main__":
    main()
