"""Processes sharing one GPU take turns by chunk.

Without MPS, kernels of two processes (two CUDA contexts) time-share the GPU: the driver preempts
one to run the other, and two ranks of resident Ro-TS searches on one H200 gave 0.76x the
throughput of one (docs/performance.md). Taking turns instead -- a process holds the GPU from a
chunk's launch to its last copy back, under an advisory file lock per physical GPU -- leaves the
driver nothing to preempt; the other process's host work between chunks overlaps this one's
chunk. `lsbench multistart` turns it on where ranks of one node outnumber its GPUs;
LSBENCH_GPU_TURNS=1 turns it on for any process, LSBENCH_GPU_TURNS=0 off.
"""
import contextlib
import fcntl
import os
import tempfile
import time

from lsbench.errors import LsbenchError

TURN_WAIT_S = 600.0  # a chunk is seconds at most: a turn not given back by then is a hung process
_enabled = False


def take_turns(enabled=True):
    """From now on, this process's resident engines take turns on their GPU with other processes."""
    global _enabled
    _enabled = enabled


def enabled():
    forced = os.environ.get("LSBENCH_GPU_TURNS")
    return forced == "1" if forced in ("0", "1") else _enabled


class GpuTurn:
    """An exclusive turn on the current GPU: `with turn: launch, wait, copy back`."""

    def __init__(self, device_key, wait_s=TURN_WAIT_S):
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(device_key))
        self.path = os.path.join(tempfile.gettempdir(), f"lsbench-gpu-{safe}.lock")
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        self.wait_s = wait_s
        self.waited_s = 0.0  # time spent waiting for the other processes' turns
        self.turns = 0

    def __enter__(self):
        t0 = time.perf_counter()
        pause = 2e-5
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.perf_counter() - t0 > self.wait_s:
                    raise LsbenchError(f"GPU turns: {self.path} held by another process for over "
                                       f"{self.wait_s:.0f} s (a hung process on this GPU?)") from None
                time.sleep(pause)
                pause = min(pause * 2, 2e-4)
        self.waited_s += time.perf_counter() - t0
        self.turns += 1
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        return False

    def close(self):
        os.close(self.fd)


def turn_for_current_device():
    """A GpuTurn on the current device where turns are on, else a context that does nothing."""
    if not enabled():
        return contextlib.nullcontext()
    from numba import cuda
    dev = cuda.get_current_device()
    key = getattr(dev, "uuid", None) or f"{os.uname().nodename}-{getattr(dev, 'id', 0)}"
    return GpuTurn(key)
