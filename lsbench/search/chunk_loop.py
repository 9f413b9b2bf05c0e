"""The one host loop of the engines that run K searches in chunks: on the GPU (launches of some
iterations each) or compiled on the CPU (iterated greedy). Between chunks the host reads back only
what it needs -- each search's best, its iterations and the improvements the chunk recorded --,
ends the searches at their target, and lets the engine act at the boundary (restarts, islands'
migration).

An engine supplies a ChunkedSearches: how a chunk runs and is read back; run_chunks does the
rest, the same for every engine (gpu/runtime/chunks.py: the STATE layout of the resident local searches;
gpu/engine/rots/host.py: the Ro-TS engine's packed buffers; lsbench/engines/iterated_greedy.py: IG on
the CPU and, through gpu/engine/iterated_greedy.py, on the GPU).
"""
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .common import ImprovementLog

NO_TARGET = np.int64(-(1 << 62))  # a target no objective reaches: the searches run their whole budget


@dataclass
class ChunkRead:
    """What a chunk leaves on the host: each search's best, its iterations so far, the improvements
    it recorded in the chunk (rows of its improvement records) and whether it ended by itself
    (hill climbing without restarts at a local optimum)."""

    best: np.ndarray
    iterations: np.ndarray
    improvements: np.ndarray
    ended: np.ndarray = None


class ChunkedSearches(ABC):
    """K searches advanced a chunk at a time (on the GPU, or compiled on the CPU); the hooks' defaults
    do nothing."""

    base = 0  # the iteration the kernel's improvement records count from (Ro-TS rebases its clock)

    @abstractmethod
    def run_chunk(self, first, n_iter, target, finished):
        """Launches n_iter iterations (from iteration `first`) of the searches not `finished`, waits
        for them, and returns a ChunkRead; raises LsbenchError on the device's error flags."""

    @abstractmethod
    def improvement_rows(self, rows):
        """The first `rows` rows of the chunk's improvement records: (iterations, objectives), [m, search]."""

    def before_chunk(self, it, best, log, seconds):
        """At a boundary, before the next chunk is launched (Ro-TS: the restarts decided go up)."""

    def improved(self, searches, iterations):
        """The chunk's improvements, search by search (Ro-TS: the restarts' stagnation clocks)."""

    def after_chunk(self, it, best, finished, reached):
        """At a boundary, after the chunk; True ends every search (an island reached the target)."""
        return False

    def finish(self, finished):
        """The searches `finished` (a mask) end: their blocks return at once from the next chunk."""


@dataclass
class LoopOutcome:
    best: np.ndarray
    iterations: np.ndarray
    log: ImprovementLog
    it: int  # iterations of the run (the longest search's)
    kernel_s: float
    max_chunk_s: float
    chunks_run: int
    loop_s: float  # the loop's wall time, chunks, copies and host work included (the benchmarks' clock)


def run_chunks(searches, stop, moves, starts, chunks, target=None, progress=None, joint=False, log=None,
               started=None):
    """Advances `searches` (a ChunkedSearches of K searches from objectives `starts`, `moves`
    evaluations an iteration) chunk by chunk (`chunks`: a ChunkLength) until `stop` or until every
    search has ended: at its target, by itself, or with all the others where `joint` (restarts and
    islands make the K searches one parallel search, which ends when any of them reaches the
    target). `log` and `started` (a perf_counter time): an ImprovementLog and a clock that began
    before the loop (a start's local search)."""
    target = NO_TARGET if target is None else np.int64(target)
    best = np.array(starts, dtype=np.int64)
    iterations = np.zeros(len(best), dtype=np.int64)
    finished = np.zeros(len(best), dtype=bool)
    log = log or ImprovementLog(best)
    it = chunks_run = 0
    kernel_s = max_chunk_s = 0.0
    t_start = started or time.perf_counter()
    while not stop.reached(it, it * moves, time.perf_counter() - t_start, int(best.min() if joint else best.max())):
        n_iter = chunks.next(stop, it, moves, time.perf_counter() - t_start)
        searches.before_chunk(it, best, log, time.perf_counter() - t_start)
        t0 = time.perf_counter()
        read = searches.run_chunk(it, n_iter, target, finished)
        t1 = time.perf_counter()
        kernel_s += t1 - t0
        max_chunk_s = max(max_chunk_s, t1 - t0)
        chunks_run += 1
        best, iterations = read.best, read.iterations
        if read.improvements.any():
            imp_it, imp_obj = searches.improvement_rows(int(read.improvements.max()))
            searches.improved(*log.add_chunk(imp_it, imp_obj, read.improvements, searches.base, t1 - t_start))
        it += n_iter
        reached = best <= target
        if joint and reached.any():
            finished[:] = True
        ended = reached | (read.ended if read.ended is not None else False)
        if (ended & ~finished).any():
            finished |= ended
            searches.finish(finished)
        if searches.after_chunk(it, best, finished, bool(reached.any())):
            finished[:] = True
        if finished.all():
            break
        chunks.took(t1 - t0, n_iter)
        if progress:
            progress.tick(it, int(best.min()))
    return LoopOutcome(best, iterations, log, it, kernel_s, max_chunk_s, chunks_run, time.perf_counter() - t_start)
