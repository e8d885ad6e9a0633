#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""offload_demo: ZeRO-Offload's host memory, phase by phase (issue 28 part 5).

DeepSpeed issue #7693: ZeRO-2 with the optimizer offloaded to the CPU took 28
bytes per parameter of host memory where 16 were expected, and bracketing each
call with see_memory_usage could not tell a pinned staging buffer from a leaked
fp32 copy.  This demo allocates a small but real model's training state on the
CPU in the same order and marks the phases with memacct.py (user/memacct.py,
imported from the repository), so that

    memacct run --params N -- /usr/bin/python3 tests/workloads/offload_demo.py

shows what each phase cost in bytes per parameter and what exceeds 16.

  "init"        the model built in fp32: the master weights (4 B/param), as
                DeepSpeed's optimizer keeps them on the host; an fp16 copy of
                them (2 B/param: what ZeRO-Offload sends to the GPU; here it
                stays in host memory); the optimizer object (no state yet).
  "first step"  fp32 gradients in one flat buffer (4 B/param: the params'
                .grad are views of it, as DeepSpeed's flat partitions), a
                forward and backward pass of a batch, the gradients copied to
                a staging buffer the size of the fp32 gradients (4 B/param)
                that is pinned where the host allows it:
                  - CUDA available: torch.empty(..., pin_memory=True)
                    (cudaHostAlloc: FOLL_PIN, memacct's dma_pinned; the
                    CUDA context is made before the phases; this path is
                    not yet checked on a GPU host);
                  - otherwise an anonymous mapping locked with mlock(2)
                    (VmLck: memacct's mlocked), as a pinned host buffer is
                    unswappable host memory too;
                  - mlock refused (RLIMIT_MEMLOCK): plain anonymous memory,
                    said so;
                then Adam's first step: exp_avg and exp_avg_sq (4 + 4
                B/param) appear, the fp16 copy is refreshed.
  "second step" the same step again: no new state (truth 0).

So the demo holds 4 + 2 + 4 + 4 + 4 = 18 B/param of training state (2 above
mixed-precision Adam's 16: the gradients are fp32 here, fp16 in the 16) plus
the staging buffer's 4: 22 B/param by the end of "first step".

Run with /usr/bin/python3 (Debian's torch).  Needs no GPU and no network.

Usage: offload_demo.py [--hidden H] [--ffn F] [--blocks B] [--batch N]
         [--staging fp32_grads|fp16_params|none] [--no-second-step]
       offload_demo.py --count-params [--hidden H] [--ffn F] [--blocks B]
         (the count alone, for memacct run --params)
Default 4 blocks of Linear(1024, 4096) + GELU + Linear(4096, 1024):
33,574,912 parameters.

Output (stdout): one line saying which staging buffer the host allowed
("staging: ..."), then, machine-readable (tests/integration.h):
  truth pid PID
  truth params N                     the model's parameter count
  truth tensor_bytes NAME B          numel() * element_size() of each piece:
                                     fp32_master, fp16_params, fp32_grads,
                                     adam_exp_avg, adam_exp_avg_sq, staging
  truth phase_bytes PHASE B          the tensors a phase allocated and kept
  truth phase_locked_bytes PHASE B   of which mlock'd
  truth phase_pinned_bytes PHASE B   of which pinned by CUDA (pin_memory)
  truth staging_mlocked 0|1
  truth staging_pinned 0|1
  truth staging_addr ADDR            first address of the staging buffer
  kernel anon_at PHASE B             RssAnon (/proc/self/status) right after
  kernel locked_at PHASE B           the mark that opened PHASE was answered,
                                     VmLck; PHASE "end": after the last end()
  truth malloc_free_at PHASE B       then, glibc's own count of the freed bytes
                                     it keeps in its arenas (mallinfo2()
                                     fordblks; absent without glibc 2.33):
                                     the backward pass's and Adam's freed
                                     temporaries, resident, not tensors
  kernel final_KEY V                 what the process reads of itself just
                                     before it returns: faults (getrusage
                                     RUSAGE_SELF minflt + majflt, every
                                     thread), hwm_bytes (VmHWM), locked_bytes
                                     (VmLck), pinned_vm_bytes (VmPin)
PHASE is init, first_step or second_step.  Exit 1 on a failed expectation.
"""
import argparse
import ctypes
import errno
import mmap
import os
import resource
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "user"))

import memacct  # noqa: E402  (user/memacct.py of this repository)
import torch  # noqa: E402

MiB = 1 << 20


def status_bytes(key):
    """A /proc/self/status field (kB) in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


class MallInfo2(ctypes.Structure):
    _fields_ = [(f, ctypes.c_size_t) for f in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                               "usmblks", "fsmblks", "uordblks", "fordblks",
                                               "keepcost")]


LIBC = ctypes.CDLL(None, use_errno=True)
try:
    LIBC.mallinfo2.restype = MallInfo2
except AttributeError:      # not glibc >= 2.33
    LIBC = None


def kernel_at(phase):
    print("kernel anon_at %s %d" % (phase, status_bytes("RssAnon")))
    print("kernel locked_at %s %d" % (phase, status_bytes("VmLck")))
    if LIBC:
        # freed memory glibc keeps in its arenas (resident: only the top
        # beyond M_TRIM_THRESHOLD goes back): what RssAnon holds beyond
        # the live tensors once temporaries were freed
        print("truth malloc_free_at %s %d" % (phase, LIBC.mallinfo2().fordblks))


def nbytes(t):
    return t.numel() * t.element_size()


class Staging:
    """A host buffer of @numel fp32 elements, pinned where the host allows."""

    def __init__(self, numel):
        self.locked = self.pinned = False
        self.map = None
        size = numel * 4
        if torch.cuda.is_available():
            self.tensor = torch.empty(numel, dtype=torch.float32, pin_memory=True)
            self.pinned = True
            self.how = "pinned by CUDA (torch.empty(pin_memory=True): cudaHostAlloc)"
        else:
            # its own mapping, so that memacct's mapping list shows it whole
            self.map = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            libc = ctypes.CDLL(None, use_errno=True)
            buf = ctypes.c_char.from_buffer(self.map)
            addr = ctypes.addressof(buf)
            del buf
            if libc.mlock(ctypes.c_void_p(addr), ctypes.c_size_t(size)) == 0:
                self.locked = True
                self.how = "mlock'd anonymous mapping (no CUDA here: VmLck, memacct's mlocked)"
            else:
                e = ctypes.get_errno()
                self.how = ("plain anonymous mapping: mlock failed (%s; RLIMIT_MEMLOCK?), "
                            "neither pinned nor locked" % errno.errorcode.get(e, e))
            self.tensor = torch.frombuffer(self.map, dtype=torch.float32)
        self.addr = self.tensor.data_ptr()


def build(hidden, ffn, blocks):
    layers = []
    for _ in range(blocks):
        layers += [torch.nn.Linear(hidden, ffn), torch.nn.GELU(), torch.nn.Linear(ffn, hidden)]
    return torch.nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--ffn", type=int, default=4096)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--staging", choices=["fp32_grads", "fp16_params", "none"],
                    default="fp32_grads")
    ap.add_argument("--no-second-step", action="store_true")
    ap.add_argument("--count-params", action="store_true",
                    help="print the parameter count (for --params) and exit")
    args = ap.parse_args()
    if args.count_params:
        print(sum(p.numel() for p in build(args.hidden, args.ffn, args.blocks).parameters()))
        return 0

    torch.manual_seed(0)
    torch.set_num_threads(1)        # no thread pools appearing mid-phase
    x = torch.randn(args.batch, args.hidden)
    y = torch.randn(args.batch, args.hidden)
    if torch.cuda.is_available():
        # the CUDA context and the host allocator's first block before the
        # phases: "first step" then holds the staging buffer, not them
        torch.empty(1, pin_memory=True)
    truth = {}                      # tensor name -> bytes
    phase = {}                      # phase -> [bytes, locked, pinned]
    print("truth pid %d" % os.getpid())

    with memacct.phase("init"):
        kernel_at("init")
        model = build(args.hidden, args.ffn, args.blocks)
        params = list(model.parameters())
        n = sum(p.numel() for p in params)
        truth["fp32_master"] = sum(nbytes(p) for p in params)
        fp16 = torch.empty(n, dtype=torch.float16)
        off = 0
        for p in params:
            fp16[off:off + p.numel()].copy_(p.detach().reshape(-1))
            off += p.numel()
        truth["fp16_params"] = nbytes(fp16)
        opt = torch.optim.Adam(params, lr=1e-4, foreach=False)
        phase["init"] = [truth["fp32_master"] + truth["fp16_params"], 0, 0]

    with memacct.phase("first step"):
        kernel_at("first_step")
        grads = torch.zeros(n, dtype=torch.float32)
        off = 0
        for p in params:
            p.grad = grads[off:off + p.numel()].view_as(p)
            off += p.numel()
        truth["fp32_grads"] = nbytes(grads)
        torch.nn.functional.mse_loss(model(x), y).backward()
        # the flat buffer was accumulated into, not replaced
        end = grads.data_ptr() + nbytes(grads)
        assert all(grads.data_ptr() <= p.grad.data_ptr() < end for p in params)
        staged = {"fp32_grads": n, "fp16_params": n // 2, "none": 0}[args.staging]
        staging = Staging(staged) if staged else None
        if staging:
            staging.tensor[:min(staged, n)].copy_(grads[:min(staged, n)])
            truth["staging"] = nbytes(staging.tensor)
            print("staging: %d bytes, %s" % (truth["staging"], staging.how))
        else:
            truth["staging"] = 0
            print("staging: none (--staging none)")
        opt.step()
        st = opt.state[params[0]]
        truth["adam_exp_avg"] = sum(nbytes(opt.state[p]["exp_avg"]) for p in params)
        truth["adam_exp_avg_sq"] = sum(nbytes(opt.state[p]["exp_avg_sq"]) for p in params)
        assert st["exp_avg"].dtype == torch.float32
        off = 0
        for p in params:
            fp16[off:off + p.numel()].copy_(p.detach().reshape(-1))
            off += p.numel()
        phase["first_step"] = [truth["fp32_grads"] + truth["staging"] + truth["adam_exp_avg"] +
                               truth["adam_exp_avg_sq"],
                               truth["staging"] if staging and staging.locked else 0,
                               truth["staging"] if staging and staging.pinned else 0]

    if not args.no_second_step:
        with memacct.phase("second step"):
            kernel_at("second_step")
            opt.zero_grad(set_to_none=False)
            torch.nn.functional.mse_loss(model(x), y).backward()
            if staging:
                staging.tensor[:min(staged, n)].copy_(grads[:min(staged, n)])
            opt.step()
            phase["second_step"] = [0, 0, 0]
    kernel_at("end")

    print("truth params %d" % n)
    for k, v in truth.items():
        print("truth tensor_bytes %s %d" % (k, v))
    for k, (b, locked, pinned) in phase.items():
        print("truth phase_bytes %s %d" % (k, b))
        print("truth phase_locked_bytes %s %d" % (k, locked))
        print("truth phase_pinned_bytes %s %d" % (k, pinned))
    print("truth staging_mlocked %d" % (1 if staging and staging.locked else 0))
    print("truth staging_pinned %d" % (1 if staging and staging.pinned else 0))
    print("truth staging_addr %d" % (staging.addr if staging else 0))
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print("kernel final_faults %d" % (ru.ru_minflt + ru.ru_majflt))
    for key, field in (("hwm_bytes", "VmHWM"), ("locked_bytes", "VmLck"),
                       ("pinned_vm_bytes", "VmPin")):
        print("kernel final_%s %d" % (key, status_bytes(field)))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
