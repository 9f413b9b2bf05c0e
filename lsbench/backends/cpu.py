"""CPU evaluators: Numba njit on one core (`cpu`) and on all cores with prange (`cpu-parallel`).

Both run the compiled neighbourhood code of one source (its serial and parallel builds), so the move
costs, and hence the search trajectories, are identical whichever build runs.
"""
import time
from contextlib import nullcontext

import numba
import numpy as np

from ..errors import LsbenchError
from ..interfaces import COMPILED_LOOP, Evaluator
from ..neighborhoods import SLICE_SECONDS, RowSlicer
from ..threads import one_thread, use_threads

PROBE_MOVES = 20_000_000  # a larger neighbourhood of rows is timed on its first rows
PARALLEL_MIN_SECONDS = 100e-6  # a neighbourhood cheaper than this on one core runs the serial build
TIMING_SECONDS = 0.05  # timing a build at bind stops once its evaluations took this long (at least one)


class CpuEvaluator(Evaluator):
    """One core, on the faster of the two builds: Numba's parallel build run on one thread is up to
    3.4x faster than the serial build on some neighbourhoods and slower on others
    (benchmarks/research/cpu_builds.py), so bind times both on one thread and keeps the faster. A
    neighbourhood cheaper than PARALLEL_MIN_SECONDS keeps the serial build without compiling the
    other (its parallel region's fork and join would cost more than it saves). The record says
    which ran."""

    name = "cpu"
    capabilities = frozenset({COMPILED_LOOP})  # searches may run their whole loop compiled here

    def __init__(self, threads=None):
        self.threads = threads

    def bind(self, problem, neighbourhood):
        self._attach(problem, neighbourhood)
        self.serial_s = self._evaluation_seconds(parallel=False)
        self.one_thread_parallel_s = None
        if self.serial_s >= PARALLEL_MIN_SECONDS:
            with one_thread():
                self.one_thread_parallel_s = self._evaluation_seconds(parallel=True)
        self.parallel = self.one_thread_parallel_s is not None and self.one_thread_parallel_s < self.serial_s
        self.slicer = self._slicer(self.one_thread_parallel_s if self.parallel else self.serial_s)
        return self

    def _attach(self, problem, neighbourhood):
        self.problem = problem
        self.nb = neighbourhood
        shape, dtype = neighbourhood.out_shape(), np.dtype(neighbourhood.delta_dtype())
        try:
            self.out = np.empty(shape, dtype=dtype)
        except MemoryError:  # (pla85900's 2-opt: 3.7 G move costs, 27.5 GiB)
            raise LsbenchError(f"--backend cpu: {problem.name}'s {neighbourhood.name} neighbourhood holds "
                               f"{int(np.prod(shape)):,} move costs ({np.prod(shape) * dtype.itemsize / 2**30:.1f} "
                               "GiB), more memory than this host gives") from None

    def _evaluation_seconds(self, parallel):
        """Median seconds of one evaluation of a random solution by one build, after an untimed call
        that compiles it; a slow neighbourhood is timed once rather than five times, and one of rows
        that is beyond PROBE_MOVES or takes TIMING_SECONDS on its first rows, as many as take that
        long (scaled by their share of the moves)."""
        from .. import rng
        solution = self.problem.random_solution(rng.new_state(0))
        if self.nb.rows_alone:  # (timed on its first rows first: a neighbourhood may take hours)
            seconds = self._probe_seconds(solution, parallel)
            if self.nb.size > PROBE_MOVES or seconds >= TIMING_SECONDS:
                return seconds
        state = self.nb.state(solution, parallel)
        self.nb.evaluate(solution, state, self.out, parallel)
        times = []
        while len(times) < 5 and sum(times) < TIMING_SECONDS:
            t = time.perf_counter()
            self.nb.evaluate(solution, state, self.out, parallel)
            times.append(time.perf_counter() - t)
        return sorted(times)[len(times) // 2]

    def _probe_seconds(self, solution, parallel):
        """Seconds of one evaluation, from its first rows: 1, 4, 16, ... until they take TIMING_SECONDS."""
        starts = self.nb.row_starts()
        rows = 1
        self.nb.evaluate_rows(solution, 0, rows, self.out, parallel)  # (compiles it)
        while True:
            t = time.perf_counter()
            self.nb.evaluate_rows(solution, 0, rows, self.out, parallel)
            seconds = time.perf_counter() - t
            if seconds >= TIMING_SECONDS or rows == len(starts) - 1:
                return seconds * starts[-1] / max(1, starts[rows])
            rows = min(len(starts) - 1, rows * 4)

    def _slicer(self, seconds):
        """A RowSlicer paced for an evaluation that takes `seconds`, or None (one call)."""
        if not self.nb.rows_alone or seconds <= SLICE_SECONDS:
            return None
        slicer = RowSlicer(self.nb)
        slicer.moves_a_call = max(1, int(self.nb.size * SLICE_SECONDS / seconds))
        return slicer

    def _scope(self):
        """The parallel build runs on this thread alone for `cpu`."""
        return one_thread() if self.parallel else nullcontext()

    def reset(self, solution):
        self.solution = np.array(solution, copy=True)
        with self._scope():
            self.state = self.nb.state(self.solution, self.parallel)

    def evaluate(self):
        with self._scope():
            if self.slicer is None:
                self.nb.evaluate(self.solution, self.state, self.out, self.parallel)
            else:  # the same rows, the same deltas, a Python step between slices
                self.slicer.evaluate(self.solution, 0, len(self.slicer.starts) - 1, self.out, self.parallel,
                                     self.deadline)
        return self.out

    def apply(self, move):
        with self._scope():
            self.nb.apply(self.solution, self.state, move, self.parallel)

    def describe(self):
        build = "parallel build on one thread" if self.parallel else "serial build"
        timings = f"one evaluation {self.serial_s * 1e6:.3g} us serial"
        if self.one_thread_parallel_s is not None:
            timings += f", {self.one_thread_parallel_s * 1e6:.3g} us parallel on one thread"
        return {"backend": self.name, "threads": 1, "build": f"{build} ({timings})"}


class CpuParallelEvaluator(CpuEvaluator):
    """The neighbourhood on all cores, where that pays: a neighbourhood that one core evaluates in
    under PARALLEL_MIN_SECONDS runs the serial build instead (same source, same deltas), since a
    parallel region's fork and join cost microseconds idle and a whole time slice when another
    process holds a core (ta001: 8 ms an iteration under load). The record says which ran."""

    name = "cpu-parallel"
    capabilities = frozenset()

    def bind(self, problem, neighbourhood):
        use_threads(self.threads)
        self._attach(problem, neighbourhood)
        self.serial_s = self._evaluation_seconds(parallel=False)
        self.parallel = self.serial_s >= PARALLEL_MIN_SECONDS
        self.slicer = self._slicer(self.serial_s)  # (all cores: slices shorter than SLICE_SECONDS)
        return self

    def _scope(self):
        return nullcontext()

    def describe(self):
        info = {"backend": self.name, "threads": numba.get_num_threads() if self.parallel else 1}
        if not self.parallel:
            info["serial"] = (f"one evaluation takes {self.serial_s * 1e6:.2g} us on one core, below the "
                              f"{PARALLEL_MIN_SECONDS * 1e6:.0f} us a parallel region needs to pay off")
        return info
