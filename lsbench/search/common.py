"""Pieces every search shares: chunk lengths, improvement trajectories, progress lines."""
import gc
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit



class ChunkLength:
    """Iterations per compiled or on-device chunk: doubled while a chunk takes under 20 ms, so that
    clock checks and host round trips stay a small share of the time; never above `cap`; under a
    time budget, no longer than the last chunk's pace says the budget's rest allows."""

    def __init__(self, first, cap, grow=True):
        self.length, self.cap, self.grow = first, cap, grow
        self.iteration_s = None  # the last chunk's seconds an iteration

    def next(self, stop, done, moves, elapsed=None):
        """The next chunk's iterations, cut to what the budget leaves (see Stop.chunk) and, `elapsed`
        seconds into a run with a time budget, to what its rest holds at the last chunk's pace."""
        n = min(self.length, self.cap)
        if stop.seconds is not None and elapsed is not None and self.iteration_s:
            n = min(n, max(1, math.ceil((stop.seconds - elapsed) / self.iteration_s)))
        return stop.chunk(done, n, moves)

    def took(self, seconds, iterations=None):
        if iterations:
            self.iteration_s = seconds / iterations
        if self.grow and seconds < 0.02:
            self.length = min(self.length * 2, self.cap)


@dataclass
class Trajectory:
    """[iteration, seconds, objective] at each improvement of the best solution."""

    start: float = field(default_factory=time.perf_counter)
    points: list = field(default_factory=list)

    def elapsed(self):
        return time.perf_counter() - self.start

    def deadline(self, stop):
        """When the run's time budget ends (time.perf_counter()), or None: an evaluator may abandon
        an evaluation that runs past it (interfaces.OutOfTime)."""
        return None if stop.seconds is None else self.start + stop.seconds

    def improved(self, iteration, objective, seconds=None):
        self.points.append([int(iteration), round(self.elapsed() if seconds is None else seconds, 6),
                            objective])


class ImprovementLog:
    """The improvements of K searches, chunk by chunk, kept as arrays during the run and turned
    into per-search trajectories after it: with thousands of searches, a Python call per
    improvement between chunks had cost more than the chunks (most improvements come early)."""

    def __init__(self, starts):
        self.starts = [int(v) for v in starts]
        self.parts = []  # (searches, iterations, objectives, seconds), in the order they happened

    def add(self, searches, iterations, objectives, seconds):
        if len(searches):
            self.parts.append((np.asarray(searches), np.asarray(iterations), np.asarray(objectives), seconds))

    def add_chunk(self, imp_it, imp_obj, counts, base, seconds):
        """A chunk's IMP_IT/IMP_OBJ rows [m, search] (m < counts[search]), iterations from `base`;
        returns (searches, iterations) of its improvements, search by search."""
        rows = imp_it.shape[0]
        searches, m = np.nonzero(np.arange(rows)[None, :] < np.asarray(counts)[:, None])
        iterations = base + imp_it[m, searches]
        self.add(searches, iterations, imp_obj[m, searches], seconds)
        return searches, iterations

    def trajectories(self):
        """[[iteration, seconds, objective], ...] per search, starting at its start's objective:
        the points that lower the search's best (one started afresh climbs back from its new start
        and reports improvements above its record: left out)."""
        points = [[[0, 0.0, v]] for v in self.starts]
        if not self.parts:
            return points
        searches, iterations, objectives, seconds = (np.concatenate(column) for column in zip(*(
            (q, i, o, np.full(len(q), round(t, 6))) for q, i, o, t in self.parts)))
        kept = lowers_best(searches.astype(np.int64), objectives.astype(np.int64), np.array(self.starts, np.int64))
        searches, iterations, objectives, seconds = (a[kept] for a in (searches, iterations, objectives, seconds))
        order = np.argsort(searches, kind="stable")
        ends = np.cumsum(np.bincount(searches, minlength=len(points)))
        collecting = gc.isenabled()
        gc.disable()  # millions of small lists: the collector's passes over them cost 6x the building
        try:
            rows = list(map(list, zip(iterations[order].tolist(), seconds[order].tolist(),
                                      objectives[order].tolist())))
            for q, start in enumerate(ends - np.bincount(searches, minlength=len(points))):
                points[q] += rows[start:ends[q]]
        finally:
            if collecting:
                gc.enable()
        return points


@njit(cache=True)
def lowers_best(searches, objectives, best):
    """Which improvements, in the order they happened, lower their search's best so far (`best`:
    the starts' objectives, updated in place)."""
    kept = np.zeros(len(searches), np.bool_)
    for k in range(len(searches)):
        q = searches[k]
        if objectives[k] < best[q]:
            best[q] = objectives[k]
            kept[k] = True
    return kept


class Progress:
    """One status line per search on stderr, at most every `every` seconds."""

    def __init__(self, label, every=2.0, enabled=True):
        self.label = label
        self.every = every
        self.enabled = enabled and every > 0
        self.last = time.perf_counter()

    def tick(self, iteration, best, current=None, force=False):
        now = time.perf_counter()
        if self.enabled and (force or now - self.last >= self.every):
            self.last = now
            cur = "" if current is None else f" current {current}"
            print(f"[{self.label}] iteration {iteration} best {best}{cur}", file=sys.stderr, flush=True)


def start_solution(problem, rng_state, search):
    """The search's first solution: drawn from its stream, or the one it was given
    (`search.initial`, e.g. an elite received from another island); the draw happens either
    way, so the rest of the stream does not depend on where the start came from."""
    drawn = problem.random_solution(rng_state)
    given = getattr(search, "initial", None)
    if given is None:
        return drawn
    sol = problem.solution_from_list(given)
    problem.check_solution(sol)
    return sol.astype(drawn.dtype)
