# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""Phase marks for a program run by ``memacct run`` (docs/run.md "Phases").

    import memacct

    with memacct.phase("first step"):
        step()
    memacct.mark("eval")    # closes the open phase, opens "eval"
    memacct.end()           # closes it

memacct answers a mark once it has taken its snapshot, so the phase
boundary is exact with respect to the program. Without MEMACCT_MARK_FD
(not under memacct run) every call does nothing and returns False; a mark
memacct refused, or a channel that is gone, gives a RuntimeWarning and
False, never an exception: the job comes first. Pure standard library,
one file; the protocol is include/memacct_mark.h's: the line "phase
NAME\\n" or "end\\n" sent on the inherited SOCK_SEQPACKET socket with one end
of a fresh socketpair (SCM_RIGHTS), the answer ("ok\\n" or "error WHY\\n")
read on the other end, so that concurrent marks of several processes each
get their own answer.
"""

import array
import contextlib
import os
import select
import socket
import warnings

__all__ = ["mark", "end", "phase", "enabled", "ENV", "NAME_MAX"]

ENV = "MEMACCT_MARK_FD"
NAME_MAX = 200          # bytes of NAME (UTF-8)
LINE_MAX = 256
TIMEOUT_S = 10.0        # longest wait for an answer


def _fd():
    value = os.environ.get(ENV, "")
    try:
        fd = int(value, 10)
    except ValueError:
        return None
    return fd if fd >= 0 else None


def enabled():
    """True when the program runs under memacct run (MEMACCT_MARK_FD set)."""
    return _fd() is not None


def _send(line):
    fd = _fd()
    if fd is None:
        return False
    try:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with mine:
            with theirs:
                # a duplicate: closing it leaves the inherited fd open
                with socket.fromfd(fd, socket.AF_UNIX, socket.SOCK_SEQPACKET) as shared:
                    fds = [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                            array.array("i", [theirs.fileno()]))]
                    # never blocked by a full queue: room awaited up to TIMEOUT_S
                    while True:
                        try:
                            shared.sendmsg([line], fds, socket.MSG_DONTWAIT)
                            break
                        except BlockingIOError:
                            if not select.select([], [shared], [], TIMEOUT_S)[1]:
                                raise TimeoutError("memacct took no mark for %g s" % TIMEOUT_S)
            mine.settimeout(TIMEOUT_S)
            answer = mine.recv(LINE_MAX + 1)
    except OSError as e:
        warnings.warn("memacct mark: %s (%s=%s)" % (e, ENV, os.environ.get(ENV)),
                      RuntimeWarning, stacklevel=3)
        return False
    if answer == b"ok\n":
        return True
    why = answer.decode("utf-8", "replace").strip() or "memacct is gone"
    warnings.warn("memacct mark: %s" % why, RuntimeWarning, stacklevel=3)
    return False


def mark(name):
    """Close the open phase and open phase NAME (str, 1 to 200 bytes of UTF-8,
    no control characters). True once memacct took the snapshot."""
    data = str(name).encode("utf-8")
    if not enabled():
        return False
    if not data or len(data) > NAME_MAX:
        warnings.warn("memacct mark: NAME must be 1 to %d bytes" % NAME_MAX,
                      RuntimeWarning, stacklevel=2)
        return False
    return _send(b"phase " + data + b"\n")


def end():
    """Close the open phase. True once memacct took the snapshot."""
    return _send(b"end\n")


@contextlib.contextmanager
def phase(name):
    """``with memacct.phase("step"):`` marks the phase at entry and closes it
    at exit (also on an exception). Phases do not nest: an inner mark closes
    the outer phase."""
    mark(name)
    try:
        yield
    finally:
        end()
