"""A toy problem added the way docs/architecture.md says ("Add a problem"): weighted positions.

A permutation p of n jobs costs sum_i w[p_i] * i (the job at position i pays its weight times i):
the optimum orders the jobs by decreasing weight. Moves swap positions i < j; a move's delta is
w[p_j] i + w[p_i] j - w[p_i] i - w[p_j] j = (j - i) (w[p_i] - w[p_j]), O(1).
Instance file: n, then n integer weights.

Step 7 of the walk-through: `ToySwapAdapter`, its device adapter, so that hill climbing and tabu
search run whole on the GPU (`--backend gpu-resident`, gpu/engine/local_search.py).
"""
import os

import numpy as np
from numba import cuda, int64, njit, prange

from lsbench import rng
from lsbench.errors import InstanceFormatError
from lsbench.gpu import device as dv
from lsbench.gpu.adapters.numbered_moves import (PairSwapAdapter, make_scan, pair_moves, position_swap_is_tabu,
                                                 position_swap_record, swap_positions)
from lsbench.neighborhoods import pair_count, pair_row_starts
from lsbench.params import Param
from lsbench.problems.base import (Neighbourhood, Problem, check_permutation, read_numbers, serial_and_parallel,
                                   sha256_of)
from lsbench.problems.permutation import PositionSwapMoves


@njit(cache=True)
def weighted_positions(w, p):
    total = 0
    for i in range(p.shape[0]):
        total += w[p[i]] * i
    return total


def _swap_deltas(w, p, lo, hi, out):
    """Step 3 of the walk-through: one source, compiled for one core and for all cores."""
    n = p.shape[0]
    for i in prange(lo, hi):
        k = i * (2 * n - i - 1) // 2
        for j in range(i + 1, n):
            out[k] = (j - i) * (w[p[i]] - w[p[j]])
            k += 1


swap_deltas, swap_deltas_parallel = serial_and_parallel(_swap_deltas)


class PositionSwap(PositionSwapMoves, Neighbourhood):
    name = "swap"

    def __init__(self, problem):
        super().__init__(problem)
        self.n = problem.n
        self.size = pair_count(self.n)

    def evaluate(self, solution, state, out, parallel=False):
        self.evaluate_rows(solution, 0, self.n - 1, out, parallel)

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        (swap_deltas_parallel if parallel else swap_deltas)(self.problem.w, solution, lo, hi, out)

    def row_starts(self):
        return pair_row_starts(self.n)

    def tabu_memory(self):
        return np.full((self.n, self.n), -1, dtype=np.int64)

    def default_tenure(self, n):
        return 3, 3


class WeightedPositions(Problem):
    kind = "toy"
    neighbourhoods = {"swap": PositionSwap}
    default_neighbourhood = "swap"
    parameters = (Param("scale", int, "every weight multiplied by this", default=1, low=1, high=1000),)

    def __init__(self, w, name="toy", source=None, sha256=None, scale=1):
        super().__init__(name, source, sha256)
        self.w = np.asarray(w, dtype=np.int64) * scale
        self.n = self.size = self.w.shape[0]

    @classmethod
    def from_file(cls, path, name=None, **params):
        nums = read_numbers(path)
        if nums.size < 1 or nums.size != 1 + nums[0] or nums[0] < 2:
            raise InstanceFormatError(path, "expected n >= 2, then n integer weights")
        return cls(nums[1:], name or os.path.basename(path).rsplit(".", 1)[0], str(path), sha256_of(path), **params)

    def objective(self, solution):
        return int(weighted_positions(self.w, np.asarray(solution, dtype=np.int64)))

    def random_solution(self, rng_state):
        return rng.permutation(rng_state, self.n)

    def check_solution(self, solution):
        check_permutation(solution, self.n)

    def describe(self):
        return {"n": self.n, "weights": self.w[:12].tolist()}


# Step 7: the device adapter. The engine owns the search loop, the rule's ties, tenures and
# aspiration, the block reduction and the records; the adapter says what a solution costs, what
# each move changes, how a move is done and what it makes tabu, per search s (SOL[s]): here the
# position swap's own tabu attribute and move, as the CPU side's PositionSwapMoves.
@cuda.jit(device=True)
def toy_load(data, SOL, MEM, s, sh, tid, T):
    """This thread's share of the objective (the engine sums the block's)."""
    w = data[0]
    part = int64(0)
    for k in range(tid, SOL.shape[1], T):
        part += w[SOL[s, k]] * k
    return part


@cuda.jit(device=True)
def toy_move_delta(data, SOL, MEM, s, sh, k, current, work):
    i, j = dv.index_to_pair(k, SOL.shape[1])
    w = data[0]
    return (j - i) * (w[SOL[s, i]] - w[SOL[s, j]])


class ToySwapAdapter(PairSwapAdapter):
    """Host side: the weights on the device (PairSwapAdapter: the n (n - 1) / 2 swaps, an n x n expiry
    matrix a search, no shared memory)."""

    def __init__(self, problem, nb):
        super().__init__(problem, (cuda.to_device(problem.w),))

    def move_cost(self):
        """(move_delta, scratch) for the iteration level (`--backend gpu`)."""
        return toy_move_delta, 1

    def device_functions(self):
        return (toy_load, make_scan(pair_moves, toy_move_delta, position_swap_is_tabu), position_swap_record,
                swap_positions, dv.fill_permutation)
