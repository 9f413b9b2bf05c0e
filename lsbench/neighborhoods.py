"""Move numbering: pure index functions shared by the CPU evaluators and the GPU kernels; and a
neighbourhood's rows split among ranks or workers (`split_rows`) and into short calls (`RowSlicer`).

Every neighbourhood numbers its moves 0..size-1; these functions map a move index to its
parameters and back. They are integer arithmetic only, compiled with `numba.njit`, which CUDA
kernels can call as device functions too, so CPU and GPU number moves identically.
"""
import math
import time

import numpy as np
from numba import njit

from .interfaces import OutOfTime


@njit(cache=True)
def c2(m):
    return m * (m - 1) // 2 if m >= 2 else 0


@njit(cache=True)
def c3(m):
    return m * (m - 1) * (m - 2) // 6 if m >= 3 else 0


def pair_count(n):
    """Moves of a pair neighbourhood (swap, 2-opt, Hamming-2) on n elements: n(n-1)/2."""
    return n * (n - 1) // 2


@njit(cache=True)
def pair_to_index(i, j, n):
    """(i, j), 0 <= i < j < n -> row-major index over the upper triangle."""
    return i * (2 * n - i - 1) // 2 + (j - i - 1)


@njit(cache=True)
def index_to_pair(k, n):
    """Inverse of pair_to_index: closed form with one square root, corrected for rounding."""
    # Row i starts at s(i) = i(2n-i-1)/2; i is the largest row with s(i) <= k.
    i = int(n - 2 - math.floor((math.sqrt(4.0 * n * (n - 1) - 8.0 * k - 7.0) - 1.0) / 2.0))
    if i < 0:
        i = 0
    while i > 0 and i * (2 * n - i - 1) // 2 > k:
        i -= 1
    while (i + 1) * (2 * n - i - 2) // 2 <= k:
        i += 1
    return i, k - i * (2 * n - i - 1) // 2 + i + 1


def insertion_count(n):
    """Insertion moves: remove the element at position i, reinsert it at position k != i."""
    return n * (n - 1)


@njit(cache=True)
def insertion_to_index(i, k, n):
    return i * (n - 1) + (k if k < i else k - 1)


@njit(cache=True)
def index_to_insertion(idx, n):
    i = idx // (n - 1)
    k = idx % (n - 1)
    if k >= i:
        k += 1
    return i, k


def triple_count(n):
    """Moves on three distinct elements (Hamming-3, 3-exchange): C(n, 3)."""
    return n * (n - 1) * (n - 2) // 6


@njit(cache=True)
def triple_to_index(i, j, k, n):
    """(i < j < k) -> lexicographic rank among the C(n, 3) triples."""
    before_i = c3(n) - c3(n - i)
    m = n - i - 1
    before_j = c2(m) - c2(m - (j - i - 1))
    return before_i + before_j + (k - j - 1)


@njit(cache=True)
def index_to_triple(idx, n):
    i = 0
    while idx >= c2(n - i - 1):
        idx -= c2(n - i - 1)
        i += 1
    j = i + 1
    while idx >= n - j - 1:
        idx -= n - j - 1
        j += 1
    return i, j, j + 1 + idx


def hamming_count(n, k):
    """Moves flipping exactly k of n bits (k = 1, 2, 3)."""
    return (n, pair_count(n), triple_count(n))[k - 1]


# -- rows: how a neighbourhood's moves split into contiguous slices (COW and grid workers) --------
def pair_row_starts(n):
    """First move index of each row i of a pair neighbourhood, then the size: n entries."""
    return [i * (2 * n - i - 1) // 2 for i in range(n)]


def triple_row_starts(n):
    """First move index of the triples starting with i = 0..n-3, then the size."""
    return [triple_count(n) - triple_count(n - i) for i in range(n - 1)]


def split_rows(starts, parts):
    """Row boundaries cutting the moves into `parts` contiguous slices of near-equal move counts.

    Moves are split at row boundaries because one kernel row shares work (a prefix, heads and
    tails) across its moves. Returns parts + 1 row indices; a slice may be empty.
    """
    import bisect
    size = starts[-1]
    bounds = [0]
    for p in range(1, parts):
        target = size * p // parts
        r = bisect.bisect_left(starts, target)
        if r > 0 and target - starts[r - 1] < starts[r] - target:
            r -= 1
        bounds.append(max(bounds[-1], min(r, len(starts) - 1)))
    bounds.append(len(starts) - 1)
    return bounds


SLICE_SECONDS = 0.25  # a longer evaluation runs in row slices of about this long: Ctrl-C is answered between them


class RowSlicer:
    """A neighbourhood's rows lo..hi evaluated in calls of about SLICE_SECONDS, each as many rows as
    the last call's pace allows (the first: one row), so that Ctrl-C is answered between calls and
    a deadline (time.perf_counter()) checked there: a CPU evaluation that takes long, a cow rank's
    or a grid worker's share."""

    def __init__(self, nb):
        self.nb = nb
        self.starts = np.asarray(nb.row_starts(), dtype=np.int64)
        self.moves_a_call = None

    def evaluate(self, solution, lo, hi, out, parallel=False, deadline=None):
        """evaluate_rows over lo..hi in slices; past `deadline`, OutOfTime is raised."""
        r = lo
        while r < hi:
            if deadline is not None and time.perf_counter() >= deadline:
                raise OutOfTime()
            end = r + 1 if self.moves_a_call is None else \
                int(np.searchsorted(self.starts, self.starts[r] + self.moves_a_call, side="right")) - 1
            end = min(hi, max(r + 1, end))
            t = time.perf_counter()
            self.nb.evaluate_rows(solution, r, end, out, parallel)
            took = max(time.perf_counter() - t, 1e-6)
            self.moves_a_call = max(1, int((self.starts[end] - self.starts[r]) * SLICE_SECONDS / took))
            r = end
