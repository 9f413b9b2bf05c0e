"""The TSP swap adapter of the resident local search engine (gpu/engine/local_search.py): hill
climbing and tabu search exchanging two cities' tour positions, on any TSPLIB instance (the
distance matrix in global memory, each move's O(1) cost `tsp_swap_delta`).

Tabu attribute (lsbench.problems.permutation.position_swap_tabu_*, numbered_moves.position_swap_*):
expiry[a, b] per search forbids city a before city b.
"""
from numba import cuda, int64

from .. import device as dv
from .numbered_moves import (PairSwapAdapter, make_scan, pair_moves, position_swap_is_tabu, position_swap_record,
                             swap_positions)


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


class TspSwapAdapter(PairSwapAdapter):
    """Host side: the distance matrix on the device."""

    def __init__(self, problem, nb):
        super().__init__(problem, (cuda.to_device(problem.matrix("the TSP swap adapter")),))

    def device_functions(self):
        return (load, make_scan(pair_moves, move_delta, position_swap_is_tabu), position_swap_record, swap_positions,
                dv.fill_permutation)
