"""The host side every device-resident search shares: chunks of iterations and the improvements
they found, read back between chunks (the search itself never leaves the device)."""
import time
from abc import abstractmethod

import numpy as np
from numba import config, cuda

from lsbench.errors import LsbenchError
from lsbench.interfaces import Engine, SearchResult
from lsbench.search.common import ChunkLength, ImprovementLog, Stop, Trajectory

SIM = config.ENABLE_CUDASIM
IMPROVEMENT_CAP = 1 << 12  # improvements recorded per chunk (chunks are no longer than this)
MAX_THREADS = 1024
NO_ASPIRATION = -(np.int64(1) << np.int64(62))
STATE_FIELDS = 5  # a whole-GPU search's STATE: iteration, current, best, improvements recorded, error


@cuda.jit(device=True, inline=True)
def save_state(STATE, RNG, it, current, best, n_imp, state):
    """The search's state at the end of a chunk, for the host and the next chunk (one thread)."""
    STATE[0] = it
    STATE[1] = current
    STATE[2] = best
    STATE[3] = n_imp
    RNG[0] = state


@cuda.jit(device=True, inline=True)
def load_state(STATE, RNG):
    """(stream state, current, best) where the last chunk's save_state left them."""
    return RNG[0], STATE[1], STATE[2]



def run_chunks(launch, STATE, IMP_IT, IMP_OBJ, BEST_SOL, stop, moves, start_objective, prm, progress=None, chunk=None,
               what="gpu-resident"):
    """The host side of a whole-GPU search: launch chunks of iterations (`launch(it, n_iter, target)`),
    each as long as the budget allows and doubling while a chunk takes under 20 ms; read back only
    the state and the improvements. Returns (the search's result as the CPU search returns it,
    seconds in kernels)."""
    target = np.int64(stop.target) if stop.target is not None else np.int64(-(1 << 62))
    traj = Trajectory()
    traj.improved(0, int(start_objective))
    chunks = ChunkLength(chunk or (2 if SIM else 16), IMPROVEMENT_CAP, grow=not SIM)
    it = 0
    best = start_objective
    t_start = traj.start
    kernel_s = 0.0
    while not stop.reached(it, it * moves, time.perf_counter() - t_start, best):
        n_iter = chunks.next(stop, it, moves)
        t0 = time.perf_counter()
        launch(it, n_iter, target)
        st = STATE.copy_to_host()
        t1 = time.perf_counter()
        kernel_s += t1 - t0
        if st[4]:
            raise LsbenchError(f"{what}: the device's incremental state disagrees with the tracked objective at "
                               f"iteration {int(st[4])} (internal error)")
        if st[3]:
            imp_it, imp_obj = IMP_IT[:st[3]].copy_to_host(), IMP_OBJ[:st[3]].copy_to_host()
            for q in range(int(st[3])):
                traj.improved(int(imp_it[q]), int(imp_obj[q]), seconds=t1 - t_start)
        it, best = int(st[0]), int(st[2])
        if best <= target:
            break
        chunks.took(t1 - t0)
        if progress:
            progress.tick(it, best, int(st[1]))
    st = STATE.copy_to_host()
    result = SearchResult(int(st[2]), BEST_SOL.copy_to_host().astype(np.int64), it, it * moves, traj.points,
                          dict(prm), int(st[1]))
    return result, kernel_s


def run_searches(launch, dev, stop, moves, starts, prm, progress=None, chunk=None, what="gpu-resident"):
    """The host side of K device-resident searches in one kernel: launch chunks of iterations
    (`launch(n_iter, target)`), each as long as the budget allows and doubling while a chunk takes
    under 20 ms; read back only the searches' states (`dev["STATE"]`: iterations done, current,
    best, improvements this chunk) and their improvements (`IMP_IT`, `IMP_OBJ`: [m, search]). A
    search ends at its target; the run when all have. Returns ([SearchResult] as the CPU search
    returns them, seconds in kernels)."""
    target = np.int64(stop.target) if stop.target is not None else np.int64(-(1 << 62))
    log = ImprovementLog(starts)
    chunks = ChunkLength(chunk or (2 if SIM else 16), IMPROVEMENT_CAP, grow=not SIM)
    it = 0
    st = np.stack([np.zeros_like(starts), starts, starts, np.zeros_like(starts)], axis=1)
    t_start = time.perf_counter()
    kernel_s = 0.0
    while not stop.reached(it, it * moves, time.perf_counter() - t_start, int(st[:, 2].max())):
        n_iter = chunks.next(stop, it, moves)
        t0 = time.perf_counter()
        launch(n_iter, target)
        st = dev["STATE"].copy_to_host()
        err = dev["ERR"].copy_to_host()
        t1 = time.perf_counter()
        kernel_s += t1 - t0
        if err[1] < 0:
            raise LsbenchError(f"{what}: a queue item waited too long for its search's previous item (internal error)")
        if err[1]:
            raise LsbenchError(f"{what}: search {int(err[1]) - 1}'s incremental state disagrees with its tracked "
                               f"objective at iteration {int(err[0])} (internal error)")
        if st[:, 3].any():
            rows = int(st[:, 3].max())
            log.add_chunk(dev["IMP_IT"][:rows].copy_to_host(), dev["IMP_OBJ"][:rows].copy_to_host(), st[:, 3], 0,
                          t1 - t_start)
        it += n_iter
        if (st[:, 2] <= target).all():
            break
        chunks.took(t1 - t0)
        if progress:
            progress.tick(it, int(st[:, 2].min()))
    best_sol = dev["BEST_SOL"].copy_to_host().astype(np.int64)
    trajectories = log.trajectories()
    results = [SearchResult(int(st[q, 2]), best_sol[q], int(st[q, 0]), int(st[q, 0]) * moves, trajectories[q],
                            dict(prm), int(st[q, 1])) for q in range(len(starts))]
    return results, kernel_s


class WholeGpuEngine(Engine):
    """The registry's engine for one tabu search over the whole GPU; subclasses `build` the search
    object (gpu/resident_pfsp.py, gpu/whole_gpu_tabu.py), whose run(seed, stop, progress) returns a
    SearchResult and sets kernel_s."""

    name = "gpu-resident"

    def __init__(self, problem, neighbourhood, search, params, threads=None):
        self.search = self.build(problem, neighbourhood, search.params(neighbourhood), params)

    @abstractmethod
    def build(self, problem, neighbourhood, prm, params):
        """The search object, from the tabu parameters and the engine's own."""

    def warm_up(self, seeds, iterations):
        """Compiles the kernel (two untimed iterations, whatever `iterations` says)."""
        self.search.run(seeds[0], Stop(iterations=2))

    def run(self, seeds, stop, progress=None):
        results = []
        for seed in seeds:
            result = self.search.run(seed, stop, progress)
            result.seed = seed
            results.append(result)
        return results

    def describe(self):
        return {**self.search.describe(), "kernel_s": round(self.search.kernel_s, 6)}
