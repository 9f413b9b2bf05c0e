"""The iteration level (`--backend gpu`) for a problem gpu/iteration/kernels.py has no kernel for (a
plug-in's), through its device adapter's move cost (gpu/adapters/numbered_moves.py): each time the
current solution changes it goes to the device and the adapter's `load` rebuilds the adapter's state
there (one block); each evaluation is one thread a move writing that move's delta; the host selects.
"""
import time

import numpy as np
from numba import cuda, float32, int64

from lsbench.errors import LsbenchError

from .. import device_name
from ..adapters import adapter_for

THREADS = 256
_KERNELS = {}


def kernels_for(load, move_delta, scratch):
    """(prepare, deltas): the adapter's state and objective from SOL[0]; every move's delta."""

    @cuda.jit
    def prepare(data, SOL, MEM, CURRENT):
        sh = cuda.shared.array(0, float32)
        tid = cuda.threadIdx.x
        part = load(data, SOL, MEM, 0, sh, tid, cuda.blockDim.x)
        cuda.atomic.add(CURRENT, 0, part)

    @cuda.jit
    def deltas(data, SOL, MEM, CURRENT, out):
        sh = cuda.shared.array(0, float32)
        work = cuda.local.array(scratch, int64)
        for v in range(scratch):
            work[v] = 0
        k = cuda.grid(1)
        if k < out.shape[0]:
            out[k] = move_delta(data, SOL, MEM, 0, sh, k, CURRENT[0], work)

    return prepare, deltas


class AdapterEvaluator:
    """An evaluator (lsbench.interfaces.Evaluator) over a device adapter that gives `move_cost()`:
    (move_delta, scratch) as numbered_moves.make_scan takes them."""

    name = "gpu"
    capabilities = frozenset()
    is_worker = False

    def bind(self, problem, nb):
        adapter = adapter_for(problem, nb)
        if not hasattr(adapter, "move_cost"):
            raise LsbenchError(f"--backend gpu: {problem.kind}'s device adapter ({type(adapter).__name__}) gives no "
                               "move_cost(), which the iteration level evaluates a move a thread from; run it on "
                               "gpu-resident, cpu, cpu-parallel, cow or grid")
        load = adapter.device_functions()[0]
        move_delta, scratch = adapter.move_cost()
        key = (type(adapter), adapter.compile_key)
        if key not in _KERNELS:
            _KERNELS[key] = kernels_for(load, move_delta, scratch)
        self.prepare, self.deltas = _KERNELS[key]
        self.adapter, self.nb, self.problem = adapter, nb, problem
        self.SOL = cuda.device_array((1, problem.size), np.int32)
        self.MEM = adapter.memory(1, 0)
        self.CURRENT = cuda.device_array(1, np.int64)
        self.out = cuda.device_array(nb.size, np.int64)
        self.host_out = np.empty(nb.size, np.int64)
        self.kernel_s = 0.0
        return self

    def reset(self, solution):
        self.solution = np.array(solution, copy=True)
        self._push()

    def apply(self, move):
        self.nb.perform(self.solution, int(move))
        self._push()

    def _push(self):
        self.SOL.copy_to_device(self.solution.astype(np.int32).reshape(1, -1))
        self.CURRENT.copy_to_device(np.zeros(1, np.int64))
        self.prepare[1, THREADS, 0, self.adapter.shared_bytes](self.adapter.data, self.SOL, self.MEM, self.CURRENT)

    def evaluate(self):
        t = time.perf_counter()
        blocks = (self.nb.size + THREADS - 1) // THREADS
        self.deltas[blocks, THREADS, 0, self.adapter.shared_bytes](self.adapter.data, self.SOL, self.MEM,
                                                                     self.CURRENT, self.out)
        self.out.copy_to_host(self.host_out)
        self.kernel_s += time.perf_counter() - t
        return self.host_out

    def reset_timers(self):
        self.kernel_s = 0.0

    def close(self):
        pass

    def describe(self):
        return {"backend": self.name, "device": device_name(),
                "model": f"{self.nb.name} moves of {self.problem.kind}, one a thread, from the device adapter "
                         f"{type(self.adapter).__name__}; the host selects", "time_split": {"evaluation_s": self.kernel_s}}
