"""Random sampling on the permutation flow shop (`--algorithm sample`): N random permutations, each
drawn from the run's SplitMix64 stream (lsbench.rng.fill_permutation) and evaluated from scratch,
the first lowest makespan kept. It is the workload of Bożejko, Smutnicki & Uchroński (ICCS 2009,
Table 1): the makespan of ONE permutation at a time, on one core here, or with p threads over the
anti-diagonals of one block on the GPU (gpu/solution/sampling.py, `--backend gpu --param block=p`); the
same stream gives the same permutations, so both keep the same best at the same iteration.
"""
import time

import numpy as np
from numba import njit

from .. import rng
from ..errors import LsbenchError
from ..interfaces import Engine, SearchResult
from ..params import Rule
from ..problems.pfsp import schedule_objectives
from ..search.common import Trajectory

IMPROVEMENTS_CAP = 1024  # improvements of the best kept per run (about ln N are expected)
NO_BEST = np.int64(1) << np.int64(62)  # above every makespan
CHUNK_CELLS = 1 << 26  # schedule cells a launch or call evaluates at most: each wait for one is bounded


class RandomSampling:
    """The sampling's rules (it has no parameters); an engine evaluates the permutations."""

    name = "sample"
    problems = ("pfsp",)
    rules = (
        Rule(lambda v, run: v.get("objective", "makespan") != "makespan",
             "--algorithm sample: Bożejko et al.'s solution level evaluates the makespan, not {objective}"),
        Rule(lambda v, run: run.stop.iterations is None or run.stop.iterations < 1 or run.stop.seconds is not None
             or run.stop.target is not None or run.stop.evaluations is not None,
             "--algorithm sample: evaluates a fixed number of permutations: give --iterations N alone (N >= 1)"),
    )
    parameters = ()

    def params(self, problem):
        return {}


@njit(cache=True)
def sample_permutations(pt, due, state, first, count, best, found, best_perm, imp_it, imp_obj):
    """Permutations first+1 .. first+count from `state`, each's makespan from scratch; a lower one
    than `best` into best_perm, each improvement (1-based iteration, makespan) into imp_it/imp_obj
    row `found` on. Returns (best makespan, improvements)."""
    perm = np.empty(pt.shape[0], dtype=np.int64)
    for k in range(first, first + count):
        rng.fill_permutation(state, perm)
        cmax = schedule_objectives(pt, due, perm)[0]
        if cmax < best:
            best = cmax
            best_perm[:] = perm
            if found < imp_it.shape[0]:
                imp_it[found], imp_obj[found] = k + 1, cmax
            found += 1
    return best, found


def chunks(problem, count):
    """(first, length) of a run's launches or calls, CHUNK_CELLS schedule cells each at most (a 500
    x 20 flow shop: 6,710 permutations)."""
    step = max(1, CHUNK_CELLS // (problem.n * problem.m))
    return [(first, min(step, count - first)) for first in range(0, count, step)]


def sampling_result(seed, count, best, best_perm, imp_it, imp_obj, found, seconds):
    """The SearchResult of a sampling run (CPU or GPU): every improvement at its iteration."""
    if found > IMPROVEMENTS_CAP:
        raise LsbenchError(f"--algorithm sample: {found} improvements of the best, more than the "
                           f"{IMPROVEMENTS_CAP} a run keeps")
    traj = Trajectory()
    for k in range(found):  # (their times are the run's end: the kernel does not stop for them)
        traj.improved(int(imp_it[k]), int(imp_obj[k]), seconds)
    return SearchResult(int(best), best_perm.astype(np.int64), count, count, traj.points, {}, int(best), seed)


class SamplingEngine(Engine):
    """`--backend cpu`: one core evaluates the permutations one after another."""

    name = "cpu"

    def __init__(self, problem, neighbourhood, search, params, threads=None):
        self.problem = problem

    def run(self, seeds, stop, progress=None):
        pr = self.problem
        seed, count = seeds[0], int(stop.iterations)
        best_perm = np.empty(pr.n, dtype=np.int64)
        imp_it = np.zeros(IMPROVEMENTS_CAP, dtype=np.int64)
        imp_obj = np.zeros(IMPROVEMENTS_CAP, dtype=np.int64)
        t0 = time.perf_counter()
        state, best, found = rng.new_state(seed), NO_BEST, 0
        for first, length in chunks(pr, count):
            best, found = sample_permutations(pr.pt, pr.due, state, first, length, best, found, best_perm, imp_it,
                                              imp_obj)
            if progress:
                progress.tick(first + length, best)
        return [sampling_result(seed, count, best, best_perm, imp_it, imp_obj, found, time.perf_counter() - t0)]

    def describe(self):
        return {"backend": self.name, "threads": 1}
