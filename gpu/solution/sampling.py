"""`--algorithm sample --backend gpu`: Bożejko et al.'s solution level (ICCS 2009, Table 1). One
block of p threads evaluates the run's random permutations one after another, each by the
anti-diagonal wavefront of gpu/solution/makespan.py; thread 0 draws each permutation from the run's stream
(the CPU's fill_permutation, compiled for the device), so the permutations, the best and the
iteration it was found at are lsbench.engines.sampling's on the CPU.
"""
import time

import numpy as np
from numba import config, cuda, int64, uint64

from lsbench.engines.sampling import IMPROVEMENTS_CAP, NO_BEST, chunks, sampling_result
from lsbench.interfaces import Engine
from lsbench.params import Param
from lsbench import rng

from .. import device_name
from ..device import fill_permutation
from ..runtime.launch import allow_dynamic_shared, within_a_block
from ..runtime.waits import wait_for
from .makespan import wavefront


@cuda.jit
def sampling_kernel(pt, state_io, first, count, result, best_perm, imp_it, imp_obj):
    """Permutations first+1 .. first+count from the stream state_io[0] (written back); result =
    (best makespan, improvements found) in and out; improvements (1-based iteration, makespan). The
    permutation and the wavefront's two rows sit in the block's dynamic shared memory (n + 2m words)."""
    words = cuda.shared.array(0, int64)
    state = cuda.shared.array(1, uint64)
    flow = cuda.shared.array(1, int64)
    tid = cuda.threadIdx.x
    n = pt.shape[0]
    m = pt.shape[1]
    mine = words[:n]
    prev = words[n:n + m]
    cur = words[n + m:n + 2 * m]
    best, found = result[0], result[1]
    if tid == 0:
        state[0] = state_io[0]
    for k in range(first, first + count):
        if tid == 0:
            fill_permutation(state, mine)
        cuda.syncthreads()
        cmax, _total = wavefront(pt, mine, prev, cur, flow, tid, cuda.blockDim.x)
        if tid == 0 and cmax < best:
            best = cmax
            for j in range(n):
                best_perm[j] = mine[j]
            if found < imp_it.shape[0]:
                imp_it[found] = k + 1
                imp_obj[found] = cmax
            found += 1
    if tid == 0:
        state_io[0] = state[0]
        result[0] = best
        result[1] = found


class SolutionLevelEngine(Engine):
    """One block of p threads (default: one a machine, as the paper) evaluates one permutation at a
    time; the run is one kernel."""

    name = "gpu"
    parameters = (Param("block", int, "p: threads evaluating each permutation (default: the machines, m)", low=1,
                        high=1024),)

    def __init__(self, problem, neighbourhood, search, params, threads=None):
        self.need = within_a_block(8 * (problem.n + 2 * problem.m), f"--algorithm sample on gpu: {problem.name}'s "
                                   f"permutation and two rows of {problem.m} machines")
        self.problem = problem
        self.block = params.get("block") or problem.m
        self.pt = cuda.to_device(np.ascontiguousarray(problem.pt, dtype=np.int64))

    def run(self, seeds, stop, progress=None):
        t0 = time.perf_counter()
        pr = self.problem
        seed, count = seeds[0], int(stop.iterations)
        state = cuda.to_device(rng.new_state(seed))
        result = cuda.to_device(np.array([NO_BEST, 0], dtype=np.int64))
        best_perm = cuda.device_array(pr.n, np.int64)
        imp_it = cuda.device_array(IMPROVEMENTS_CAP, np.int64)
        imp_obj = cuda.device_array(IMPROVEMENTS_CAP, np.int64)
        args = (self.pt, state, 0, 0, result, best_perm, imp_it, imp_obj)
        if not config.ENABLE_CUDASIM:
            allow_dynamic_shared(sampling_kernel._compile_for_args(*args), self.need)
        for first, length in chunks(pr, count):  # (each a bounded wait)
            sampling_kernel[1, self.block, 0, self.need](self.pt, state, first, length, result, best_perm, imp_it,
                                                         imp_obj)
            wait_for()
            best, found = (int(v) for v in result.copy_to_host())
            if progress:
                progress.tick(first + length, best)
        return [sampling_result(seed, count, best, best_perm.copy_to_host(), imp_it.copy_to_host(),
                                imp_obj.copy_to_host(), found, time.perf_counter() - t0)]

    def describe(self):
        return {"backend": self.name, "device": device_name(), "threads_per_evaluation": self.block,
                "model": "solution level (Bożejko et al.): one block of p threads evaluates one permutation at a "
                         "time over the anti-diagonals"}
