"""CPU evaluators: Numba njit on one core (`cpu`) and on all cores with prange (`cpu-parallel`).

Both run the same compiled neighbourhood code (serial and parallel builds of one source), so the
move costs, and hence the search trajectories, are identical.
"""
import time

import numba
import numpy as np

from ..interfaces import COMPILED_LOOP, Evaluator
from ..threads import use_threads


class CpuEvaluator(Evaluator):
    name = "cpu"
    capabilities = frozenset({COMPILED_LOOP})  # searches may run their whole loop compiled here

    def __init__(self, threads=None):
        self.threads = threads

    def bind(self, problem, neighbourhood):
        self.problem = problem
        self.nb = neighbourhood
        self.out = np.empty(neighbourhood.out_shape(), dtype=neighbourhood.delta_dtype())
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


PARALLEL_MIN_SECONDS = 100e-6  # a neighbourhood cheaper than this on one core runs on one core


class CpuParallelEvaluator(CpuEvaluator):
    """The neighbourhood on all cores, where that pays: a neighbourhood that one core evaluates in
    under PARALLEL_MIN_SECONDS runs the serial build instead (same source, same deltas), since a
    parallel region's fork and join cost microseconds idle and a whole time slice when another
    process holds a core (ta001: 8 ms an iteration under load). The record says which ran."""

    name = "cpu-parallel"
    parallel = True
    capabilities = frozenset()

    def bind(self, problem, neighbourhood):
        use_threads(self.threads)
        super().bind(problem, neighbourhood)
        self.serial_s = self._serial_seconds()
        self.parallel = self.serial_s >= PARALLEL_MIN_SECONDS
        return self

    def _serial_seconds(self):
        """Median seconds of one serial evaluation of a random solution (compiled first)."""
        from .. import rng
        solution = self.problem.random_solution(rng.new_state(0))
        state = self.nb.state(solution, False)
        times = []
        for _ in range(5):
            t = time.perf_counter()
            self.nb.evaluate(solution, state, self.out, False)
            times.append(time.perf_counter() - t)
        return sorted(times)[2]

    def describe(self):
        info = {"backend": self.name, "threads": numba.get_num_threads() if self.parallel else 1}
        if not self.parallel:
            info["serial"] = (f"one evaluation takes {self.serial_s * 1e6:.2g} us on one core, below the "
                              f"{PARALLEL_MIN_SECONDS * 1e6:.0f} us a parallel region needs to pay off")
        return info
