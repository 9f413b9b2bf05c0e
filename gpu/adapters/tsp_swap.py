"""The TSP swap adapter of the resident local search engine (gpu/engine/local_search.py): hill
climbing and tabu search exchanging two cities' tour positions, on any TSPLIB instance (the
distance matrix in global memory, each move's O(1) cost `tsp_swap_delta`).

Tabu attribute (lsbench.problems.permutation.position_swap_tabu_*): expiry[a, b] per search forbids
city a before city b.
"""
import numpy as np
from numba import cuda, int64

from lsbench.neighborhoods import pair_count
from lsbench.problems.permutation import position_swap_tabu_record

from .. import device as dv
from .numbered_moves import make_scan, pair_moves, swap_positions

record_swap = dv.twin(position_swap_tabu_record)


@cuda.jit(device=True)
def load(data, SOL, MEM, s, sh, tid, T):
    """This thread's edges of the tour (lsbench.problems.tsp.tour_length)."""
    D = data[0]
    n = SOL.shape[1]
    part = int64(0)
    for k in range(tid, n, T):
        part += D[SOL[s, k], SOL[s, (k + 1) % n]]
    return part


@cuda.jit(device=True)
def move_delta(data, SOL, MEM, s, sh, k, current, work):
    i, j = dv.index_to_pair(k, SOL.shape[1])
    return dv.tsp_swap_delta(data[0], SOL[s], i, j)


@cuda.jit(device=True)
def is_tabu(data, SOL, MEM, s, k, it):
    i, j = dv.index_to_pair(k, SOL.shape[1])
    return MEM[s, SOL[s, j], SOL[s, i]] >= it


@cuda.jit(device=True)
def record(data, SOL, MEM, s, move, it, until):
    i, j = dv.index_to_pair(move, SOL.shape[1])
    record_swap(SOL[s], i, j, MEM[s], until)


class TspSwapAdapter:
    """Host side: the distance matrix on the device, an n x n expiry matrix a search."""

    compile_key = None
    shared_bytes = 0

    def __init__(self, problem, nb):
        self.n = problem.n
        self.moves = pair_count(self.n)
        self.data = (cuda.to_device(problem.d),)

    def memory(self, K, tenure_max):
        return cuda.to_device(np.full((K, self.n, self.n), -1, np.int64))

    def device_functions(self):
        return load, make_scan(pair_moves, move_delta, is_tabu), record, swap_positions, dv.fill_permutation
