#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""dataloader_demo: the classic PyTorch DataLoader copy-on-write blow-up.

Ground truth it produces: the parent builds a large in-memory Python list of
samples (OBJECTS tuples (int, float), each tuple and both members a separate
heap object) BEFORE the DataLoader forks its workers, and the dataset also
reads an np.memmap'd file (mode "r", MEMMAP_MIB).  Every worker then fetches
its share of a shuffled epoch: __getitem__ touches the list element (reference
count updates write to the tuple, int and float objects, so each worker gets
private copies of almost every page holding them: copy-on-write) and reads a
slice of the memmap (page cache, shared, no copy).  With shuffling, each
worker touches nearly every page of the objects, so each ends up with about
list_bytes of copied memory, while the memmap stays shared.

Run with /usr/bin/python3 (Debian's torch and numpy).  Needs no network.

Usage: dataloader_demo.py [--objects N] [--memmap-mib M] [--workers W]
         [--batch-size B] [--hold SECONDS] [--memmap PATH] [--keep]
         [--seed S] [--freeze] [--storage list|numpy] [--no-shuffle]
         [--pin-memory [--sample-kib K]] [--cow-truth]

--freeze calls gc.freeze() before the fork and --storage numpy keeps the same
samples in two numpy arrays instead of Python objects: the two fixes people
try, for the verdict to name what each does (docs/metrics.md "Verdicts").

The memmap file is PATH (default $TMPDIR or /tmp /memacct-demo-<M>MiB-<seed>.bin);
it is created (fixed seed) if missing and removed at the end if this run
created it, unless --keep.

After its share of the epoch each worker reads its own /proc/self/smaps_rollup
(the last batch each worker receives is a report request: batches go to the
workers round-robin, so the last W batches reach W different workers, after
everything else they were given); with --hold it then prints
"holding PID SECONDS" on stdout and sleeps, still alive, so that an external
tool can read /proc/PID/smaps_rollup.

--pin-memory (needs CUDA; exits 77 with "skip: ..." on stderr without it):
DataLoader(pin_memory=True) as training jobs run it.  Each sample is also a
uint8 tensor of K KiB (default 4096: the issue's 4 MiB samples), batches are
stacked tensors, and the loader's pin thread copies each into pinned host
memory (PyTorch's CachingHostAllocator: cudaHostAlloc, pages pinned by
FOLL_PIN and kept cached after the batch is freed).  With --hold, half-way
through the epoch the parent prints its truth lines so far and
"holding-pinned PID SECONDS", then sleeps holding the batch.  Extra lines:
  truth pin_memory 1
  truth sample_bytes B
  truth pinned_batches N           batches that arrived pinned (is_pinned())
  truth pinned_batch_bytes B       one pinned batch (the largest)
  kernel foll_pin_delta_pages N    host nr_foll_pin_acquired - released now
                                   minus before CUDA init (per-CPU diffs
                                   folded when root: /proc/sys/vm/stat_refresh)
  kernel foll_pin_delta_peak_pages N  the largest such delta seen per batch
  kernel foll_pin_base_pages N     the baseline: host FOLL_PIN pages before
                                   CUDA init, once unchanged for 0.5 s

Output (stdout), at the end:
  truth list_objects N             samples in the list
  truth list_bytes B               sys.getsizeof of the list + tuples + members
  truth memmap_bytes B
  truth memmap_created 0|1         this run wrote the file (and removed it at
                                   the end unless --keep): all of its page
                                   cache was then this run's
  truth memmap_inode N             the file's inode
  truth num_workers W
  truth samples_fetched N          each sample fetched exactly once
  truth parent_pid PID
  truth worker_pid PID             (W lines)
  truth worker_private_dirty_bytes PID B   (W lines; Private_Dirty read by the
  truth worker_anonymous_bytes PID B        worker itself after its share)
  truth cow_map_PID START B        (--cow-truth, root: per worker and private
  truth cow_map_end_PID START END  writable mapping [START, END) of the parent,
                                   the bytes whose page frame (pagemap) differs
                                   from the parent's just before its fork: its
                                   copies)
  truth array_labels|array_weights START END   (--storage numpy) the two
                                   arrays' data [START, END)
  truth array_copied_bytes PID B   (--storage numpy --cow-truth) the worker's
                                   copies (as cow_map_) of the pages holding
                                   them
  kernel parent_maxrss_bytes B     getrusage(RUSAGE_SELF).ru_maxrss
  kernel children_maxrss_bytes B   getrusage(RUSAGE_CHILDREN).ru_maxrss
  kernel children_faults N         getrusage(RUSAGE_CHILDREN) minflt + majflt:
                                   the workers' (reaped) at their exit
  kernel worker_KEY PID V          (W lines each) what each worker reads of
  kernel parent_KEY V              itself after its share, and the parent just
                                   before it returns: KEY is faults
                                   (getrusage minflt + majflt, every thread),
                                   rss_bytes, anon_bytes, file_bytes,
                                   shmem_bytes, hwm_bytes, locked_bytes,
                                   pinned_vm_bytes (/proc/self/status VmRSS,
                                   RssAnon, RssFile, RssShmem, VmHWM, VmLck,
                                   VmPin), anon_huge_bytes (smaps_rollup
                                   AnonHugePages)
  time elapsed_ms MS
"""
import argparse
import gc
import os
import resource
import sys
import tempfile
import time
import warnings
import zlib

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

# memacct's phase marks (user/memacct.py, installed by make install; from the
# source tree otherwise): no-ops when not run by memacct run
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "user"))
try:
    import memacct
except ImportError:
    memacct = None

REPORT = -1  # index of the "report and hold" pseudo-sample
SLICE = 64   # bytes read from the memmap per sample


def foll_pinned_pages():
    """Host FOLL_PIN pages now (nr_foll_pin_acquired - released), or None."""
    try:
        with open("/proc/sys/vm/stat_refresh", "w") as f:
            f.write("1\n")
    except OSError:
        pass  # not root: per-CPU diffs not folded (off by a few pages)
    v = {}
    with open("/proc/vmstat") as f:
        for line in f:
            k, _, n = line.partition(" ")
            if k in ("nr_foll_pin_acquired", "nr_foll_pin_released"):
                v[k] = int(n)
    if len(v) != 2:
        return None
    return v["nr_foll_pin_acquired"] - v["nr_foll_pin_released"]


def settled_foll_pinned_pages(timeout_s=10.0):
    """Host FOLL_PIN pages once unchanged for 0.5 s (at most @timeout_s):
    a process that exited just before (the previous step of a test) may
    still be unpinning, and a baseline taken meanwhile makes every later
    delta too small (GPU host, 2026-11-26: a peak delta of 0 printed for a
    run that pinned 330 MiB)."""
    last, t0 = foll_pinned_pages(), time.monotonic()
    stable = t0
    while last is not None and time.monotonic() - t0 < timeout_s:
        time.sleep(0.1)
        now = foll_pinned_pages()
        if now != last:
            last, stable = now, time.monotonic()
        elif time.monotonic() - stable >= 0.5:
            break
    return last


# /proc/self/status keys of the cells memacct prints (kernel_cells())
STATUS_CELLS = (("VmRSS", "rss_bytes"), ("RssAnon", "anon_bytes"), ("RssFile", "file_bytes"),
                ("RssShmem", "shmem_bytes"), ("VmHWM", "hwm_bytes"), ("VmLck", "locked_bytes"),
                ("VmPin", "pinned_vm_bytes"))


def kernel_cells():
    """What this process reads of itself: the truth of each cell of its row."""
    cells = {}
    with open("/proc/self/status") as f:
        for line in f:
            parts = line.split()
            for key, name in STATUS_CELLS:
                if parts and parts[0] == key + ":":
                    cells[name] = int(parts[1]) * 1024
    ru = resource.getrusage(resource.RUSAGE_SELF)
    cells["faults"] = ru.ru_minflt + ru.ru_majflt
    cells["anon_huge_bytes"] = smaps_rollup().get("AnonHugePages", -1)
    return cells


# --cow-truth: the parent's private writable mappings and their page frames
# just before each fork (os.register_at_fork), [(start, end, pfns)]: the
# worker forked then inherits the one of its own fork
COW_TRUTH = None
# --storage numpy: the two arrays' data [start, end), set before the fork
ARRAYS = []


def private_maps():
    """(start, end) of this process's private writable mappings (/proc/self/maps)."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            r, perms = line.split()[:2]
            s, e = (int(x, 16) for x in r.split("-"))
            if perms[1] == "w" and perms[3] == "p" and e - s <= (8 << 30):
                out.append((s, e))
    return out


def frames(ranges):
    """Per range, the page frame numbers from /proc/self/pagemap (0: not
    present; all 0 without CAP_SYS_ADMIN)."""
    page = os.sysconf("SC_PAGE_SIZE")
    out = []
    with open("/proc/self/pagemap", "rb") as f:
        for s, e in ranges:
            f.seek(s // page * 8)
            a = np.frombuffer(f.read((e - s) // page * 8), dtype=np.uint64)
            present = (a >> np.uint64(63)) & np.uint64(1)
            out.append(np.where(present == 1, a & np.uint64((1 << 55) - 1), np.uint64(0)))
    return out


def cow_snapshot():
    """--cow-truth: this process's private writable mappings and their frames."""
    global COW_TRUTH
    ranges = private_maps()
    COW_TRUTH = [(a, b, f) for (a, b), f in zip(ranges, frames(ranges))]


def cow_truth():
    """In a worker: per mapping of the parent's snapshot, the bytes whose frame
    is now another than the parent's (both present): the copies it made."""
    page = os.sysconf("SC_PAGE_SIZE")
    ranges = [(s, e) for s, e, _ in COW_TRUTH]
    out = {}
    for (s, e, before), now in zip(COW_TRUTH, frames(ranges)):
        n = int(np.count_nonzero((before != 0) & (now != 0) & (before != now)))
        if n:
            out[s] = (e, n * page)
    return out


def array_copies():
    """In a worker: the bytes of the pages holding --storage numpy's arrays
    whose frame is now another than the parent's (as cow_truth())."""
    page = os.sysconf("SC_PAGE_SIZE")
    ranges = [(s, e) for s, e, _ in COW_TRUTH]
    n = 0
    for (s, e, before), now in zip(COW_TRUTH, frames(ranges)):
        for a0, a1 in ARRAYS:
            lo, hi = max(s, a0 // page * page), min(e, a1)
            if lo < hi:
                i, j = (lo - s) // page, (hi - s + page - 1) // page
                b, w = before[i:j], now[i:j]
                n += int(np.count_nonzero((b != 0) & (w != 0) & (b != w)))
    return n * page


def smaps_rollup():
    vals = {}
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                vals[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return vals


class ArraySamples:
    """--storage numpy: the samples in two numpy arrays (16 bytes a sample, no
    Python object each).  Reading one writes no reference count into the
    pages shared at fork: the workers copy (almost) nothing."""

    def __init__(self, n):
        self.labels = np.arange(1000, 1000 + n, dtype=np.int64)
        self.weights = np.arange(n, dtype=np.float64) * 0.5

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return int(self.labels[i]), float(self.weights[i])

    def nbytes(self):
        return self.labels.nbytes + self.weights.nbytes


class SampleDataset(Dataset):
    def __init__(self, samples, memmap_path, memmap_bytes, hold, sample_bytes=0):
        self.samples = samples
        self.sample_bytes = sample_bytes  # --pin-memory: a tensor per sample
        self.path = memmap_path
        self.nbytes = memmap_bytes
        self.stride = max(1, (memmap_bytes - SLICE) // max(1, len(samples)))
        self.hold = hold
        self.arr = None  # opened lazily, in each worker

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        if i == REPORT:
            return self.report()
        if self.arr is None:
            self.arr = np.asarray(np.memmap(self.path, dtype=np.uint8, mode="r"))
        label, weight = self.samples[i]          # refcounts: tuple, int, float
        off = i * self.stride
        value = label + weight + zlib.crc32(self.arr[off:off + SLICE])
        if not self.sample_bytes:
            return value
        t = torch.empty(self.sample_bytes, dtype=torch.uint8)
        t.fill_(int(value) & 0xff)
        return t

    def report(self):
        pid = os.getpid()
        # first: its own faults and pages count in what the worker reads below
        cow = cow_truth() if COW_TRUTH else {}
        arrays = array_copies() if COW_TRUTH and ARRAYS else -1
        v = smaps_rollup()
        if self.hold > 0:
            os.write(1, b"holding %d %d\n" % (pid, self.hold))
            time.sleep(self.hold)
        return ("report", pid, v.get("Private_Dirty", -1), v.get("Anonymous", -1),
                kernel_cells(), cow, arrays)


class EpochBatches:
    """Shuffled (or sequential) batches of the whole dataset, then one report
    request per worker.  Yields lists of indices (a batch_sampler)."""

    def __init__(self, n, batch_size, workers, seed, shuffle):
        self.n, self.bs, self.workers = n, batch_size, workers
        self.seed, self.shuffle = seed, shuffle

    def __iter__(self):
        # built lazily, after the workers were forked
        if self.shuffle:
            order = np.random.default_rng(self.seed).permutation(self.n)
        else:
            order = np.arange(self.n)
        for s in range(0, self.n, self.bs):
            yield order[s:s + self.bs].tolist()
        for _ in range(self.workers):
            yield [REPORT]

    def __len__(self):
        return (self.n + self.bs - 1) // self.bs + self.workers


def summarize(items):
    """collate_fn: a small summary instead of tensors (keeps IPC cheap)."""
    if len(items) == 1 and isinstance(items[0], tuple):
        return items[0]
    return ("batch", os.getpid(), len(items), float(sum(items)))


def stack(items):
    """collate_fn of --pin-memory: one uint8 tensor per batch (pinned by the
    loader's pin thread); report requests pass as they are."""
    if len(items) == 1 and isinstance(items[0], tuple):
        return items[0]
    return torch.stack(items)


def make_memmap(path, nbytes, seed):
    rng = np.random.default_rng(seed)
    tmp = path + ".tmp%d" % os.getpid()
    chunk = 16 << 20
    with open(tmp, "wb") as f:
        left = nbytes
        while left > 0:
            n = min(chunk, left)
            f.write(rng.bytes(n))
            left -= n
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=3_000_000)
    ap.add_argument("--memmap-mib", type=int, default=256)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--hold", type=int, default=0, metavar="SECONDS")
    ap.add_argument("--memmap", default=None, metavar="PATH")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--freeze", action="store_true",
                    help="gc.freeze() before forking (does not stop refcount CoW)")
    ap.add_argument("--storage", choices=("list", "numpy"), default="list",
                    help="samples as a list of Python tuples, or in numpy arrays")
    ap.add_argument("--no-shuffle", action="store_true")
    ap.add_argument("--cow-truth", action="store_true",
                    help="each worker's copies per mapping of the parent, from pagemap")
    ap.add_argument("--pin-memory", action="store_true",
                    help="DataLoader(pin_memory=True) with tensor samples (needs CUDA)")
    ap.add_argument("--sample-kib", type=int, default=4096,
                    help="--pin-memory: KiB of tensor per sample")
    args = ap.parse_args()
    if args.objects < 1 or args.memmap_mib < 1 or args.workers < 1 or args.batch_size < 1 \
            or args.sample_kib < 1:
        ap.error("sizes must be positive")
    foll0 = None
    if args.pin_memory:
        if not torch.cuda.is_available():
            print("skip: --pin-memory needs CUDA (pin_memory=True pins nothing without it)",
                  file=sys.stderr)
            return 77
        foll0 = settled_foll_pinned_pages()
        if foll0 is None:
            print("skip: no nr_foll_pin_* in /proc/vmstat (kernel < 5.7)", file=sys.stderr)
            return 77
        torch.zeros(1, device="cuda")  # CUDA init: its own pinned pages count too

    t0 = time.monotonic()
    warnings.filterwarnings("ignore", message="This DataLoader will create")
    torch.set_num_threads(1)
    memmap_bytes = args.memmap_mib << 20
    path = args.memmap or os.path.join(
        tempfile.gettempdir(), "memacct-demo-%dMiB-%d.bin" % (args.memmap_mib, args.seed))
    created = False
    if not os.path.exists(path) or os.path.getsize(path) != memmap_bytes:
        make_memmap(path, memmap_bytes, args.seed)
        created = True
    memmap_inode = os.stat(path).st_ino

    if memacct:
        memacct.mark("build list")
    try:
        # The big in-memory list, built in the parent before the fork.
        if args.storage == "numpy":
            samples = ArraySamples(args.objects)
            list_bytes = samples.nbytes()
            ARRAYS.extend((a.ctypes.data, a.ctypes.data + a.nbytes)
                          for a in (samples.labels, samples.weights))
        else:
            samples = [(i + 1000, i * 0.5) for i in range(args.objects)]
            list_bytes = sys.getsizeof(samples) + sum(
                sys.getsizeof(s) + sys.getsizeof(s[0]) + sys.getsizeof(s[1]) for s in samples)
        if args.freeze:
            gc.freeze()

        sample_bytes = args.sample_kib << 10 if args.pin_memory else 0
        ds = SampleDataset(samples, path, memmap_bytes, args.hold, sample_bytes)
        batches = EpochBatches(len(ds), args.batch_size, args.workers, args.seed,
                               not args.no_shuffle)
        loader = DataLoader(ds, batch_sampler=batches,
                            collate_fn=stack if args.pin_memory else summarize,
                            num_workers=args.workers, persistent_workers=False,
                            pin_memory=args.pin_memory)

        if memacct:
            memacct.mark("epoch")
        if args.cow_truth:
            # in the parent just before each fork: the worker forked then
            # inherits the snapshot of its own fork
            os.register_at_fork(before=cow_snapshot)
        fetched = 0
        batch_pids, reports = set(), {}
        pinned_batches = pinned_batch_bytes = nbatch = 0
        foll_peak = None  # the largest delta seen, negative ones too
        half = (len(ds) + args.batch_size - 1) // args.batch_size // 2
        for out in loader:
            if isinstance(out, torch.Tensor):
                fetched += out.shape[0]
                nbatch += 1
                if out.is_pinned():
                    pinned_batches += 1
                    pinned_batch_bytes = max(pinned_batch_bytes, out.nbytes)
                d = foll_pinned_pages() - foll0
                foll_peak = d if foll_peak is None else max(foll_peak, d)
                if nbatch == half and args.hold > 0:
                    print("truth pinned_batches %d" % pinned_batches)
                    print("truth pinned_batch_bytes %d" % pinned_batch_bytes)
                    print("kernel foll_pin_delta_pages %d" % (foll_pinned_pages() - foll0))
                    print("holding-pinned %d %d" % (os.getpid(), args.hold))
                    sys.stdout.flush()
                    time.sleep(args.hold)
            elif out[0] == "batch":
                batch_pids.add(out[1])
                fetched += out[2]
            else:
                if out[1] in reports:
                    print("dataloader_demo: worker %d got two report requests" % out[1],
                          file=sys.stderr)
                    return 1
                reports[out[1]] = out[2:]
        del loader
    finally:
        if created and not args.keep:
            try:
                os.unlink(path)
            except OSError:
                pass

    if fetched != args.objects:
        print("dataloader_demo: fetched %d samples, expected %d" % (fetched, args.objects),
              file=sys.stderr)
        return 1
    if (not args.pin_memory and set(reports) != batch_pids) or len(reports) != args.workers:
        print("dataloader_demo: worker reports %s != batch workers %s"
              % (sorted(reports), sorted(batch_pids)), file=sys.stderr)
        return 1

    if memacct:
        memacct.end()
    print("truth list_objects %d" % args.objects)
    print("truth list_bytes %d" % list_bytes)
    print("truth memmap_bytes %d" % memmap_bytes)
    print("truth memmap_created %d" % created)
    print("truth memmap_inode %d" % memmap_inode)
    print("truth num_workers %d" % args.workers)
    print("truth samples_fetched %d" % fetched)
    print("truth parent_pid %d" % os.getpid())
    if args.storage == "numpy":
        for name in ("labels", "weights"):
            a = getattr(samples, name)
            print("truth array_%s %d %d" % (name, a.ctypes.data, a.ctypes.data + a.nbytes))
    if args.pin_memory:
        print("truth pin_memory 1")
        print("truth sample_bytes %d" % sample_bytes)
        print("truth pinned_batches %d" % pinned_batches)
        print("truth pinned_batch_bytes %d" % pinned_batch_bytes)
        print("kernel foll_pin_delta_pages %d" % (foll_pinned_pages() - foll0))
        print("kernel foll_pin_base_pages %d" % foll0)
        print("kernel foll_pin_delta_peak_pages %d" % (foll_peak or 0))
    for pid in sorted(reports):
        print("truth worker_pid %d" % pid)
    for pid in sorted(reports):
        print("truth worker_private_dirty_bytes %d %d" % (pid, reports[pid][0]))
        print("truth worker_anonymous_bytes %d %d" % (pid, reports[pid][1]))
        for name, v in sorted(reports[pid][2].items()):
            print("kernel worker_%s %d %d" % (name, pid, v))
        for start, (end, v) in sorted(reports[pid][3].items()):
            print("truth cow_map_%d %d %d" % (pid, start, v))
            print("truth cow_map_end_%d %d %d" % (pid, start, end))
        if reports[pid][4] >= 0:
            print("truth array_copied_bytes %d %d" % (pid, reports[pid][4]))
    ru_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    ru_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print("kernel parent_maxrss_bytes %d" % ru_self)
    print("kernel children_maxrss_bytes %d" % ru_children)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("kernel children_faults %d" % (ru.ru_minflt + ru.ru_majflt))
    print("time elapsed_ms %d" % int((time.monotonic() - t0) * 1000))
    for name, v in sorted(kernel_cells().items()):
        print("kernel parent_%s %d" % (name, v))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
