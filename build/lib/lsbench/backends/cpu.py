"""CPU evaluators: Numba njit on one core (`cpu`) and on all cores with prange (`cpu-parallel`).

Both run the same compiled neighbourhood code (serial and parallel builds of one source), so the
move costs, and hence the search trajectories, are identical.
"""
import numba
import numpy as np

from ..errors import LsbenchError
from ..interfaces import COMPILED_LOOP, Evaluator


class CpuEvaluator(Evaluator):
    name = "cpu"
    capabilities = frozenset({COMPILED_LOOP})  # searches may run their whole loop compiled here

    def __init__(self, threads=None):
        self.threads = threads

    def bind(self, problem, neighbourhood):
        self.problem = problem
        self.nb = neighbourhood
        self.out = np.empty(neighbourhood.size, dtype=neighbourhood.delta_dtype())
        return self

    def reset(self, solution):
        self.solution = np.array(solution, copy=True)
        self.state = self.nb.state(self.solution, self.parallel)

    def evaluate(self):
        self.nb.evaluate(self.solution, self.state, self.out, self.parallel)
        return self.out

    def apply(self, move):
        self.nb.apply(self.solution, self.state, move, self.parallel)

    def describe(self):
        return {"backend": self.name, "threads": 1}


class CpuParallelEvaluator(CpuEvaluator):
    name = "cpu-parallel"
    parallel = True
    capabilities = frozenset()

    def bind(self, problem, neighbourhood):
        use_threads(self.threads)
        return super().bind(problem, neighbourhood)

    def describe(self):
        return {"backend": self.name, "threads": numba.get_num_threads()}


def use_threads(threads):
    """Numba's parallel code on `threads` cores (None: all of them)."""
    if threads:
        if threads > numba.config.NUMBA_NUM_THREADS:
            raise LsbenchError(f"--threads {threads}: this host runs at most {numba.config.NUMBA_NUM_THREADS} "
                               "Numba threads")
        numba.set_num_threads(int(threads))
