"""The QAP swap adapter of the resident local search engine (gpu/engine/local_search.py): hill
climbing and tabu search on any QAP instance, the matrices in global memory, each move's O(n) cost
(Luong et al.'s per-thread delta, `qap_swap_delta`). Ro-TS has its own engine (gpu/engine/rots/kernel.py).

Tabu attribute (lsbench.problems.qap.facility_swap_tabu_*): expiry[r, location] per search; swap
(r, t) is tabu while both facilities would go back to locations still forbidden to them.
"""
from numba import cuda, int64

from lsbench.problems.qap import facility_swap_tabu_record

from .. import device as dv
from .numbered_moves import PairSwapAdapter, make_scan, pair_moves, swap_positions

record_swap = dv.twin(facility_swap_tabu_record)


@cuda.jit(device=True)
def load(data, SOL, MEM, s, sh, tid, T):
    """This thread's rows of sum_ik a[i, k] b[p_i, p_k] (lsbench.problems.qap.qap_cost)."""
    A, B = data
    n = SOL.shape[1]
    part = int64(0)
    for i in range(tid, n, T):
        pi = SOL[s, i]
        for k in range(n):
            part += A[i, k] * B[pi, SOL[s, k]]
    return part


@cuda.jit(device=True)
def move_delta(data, SOL, MEM, s, sh, k, current, work):
    r, t = dv.index_to_pair(k, SOL.shape[1])
    return dv.qap_swap_delta(data[0], data[1], SOL[s], r, t)


@cuda.jit(device=True)
def is_tabu(data, SOL, MEM, s, k, it):
    r, t = dv.index_to_pair(k, SOL.shape[1])
    return MEM[s, r, SOL[s, t]] >= it and MEM[s, t, SOL[s, r]] >= it


@cuda.jit(device=True)
def record(data, SOL, MEM, s, move, it, until):
    r, t = dv.index_to_pair(move, SOL.shape[1])
    record_swap(SOL[s], r, t, MEM[s], until)


class QapSwapAdapter(PairSwapAdapter):
    """Host side: the flow and distance matrices on the device."""

    def __init__(self, problem, nb):
        super().__init__(problem, (cuda.to_device(problem.a), cuda.to_device(problem.b)))

    def device_functions(self):
        return load, make_scan(pair_moves, move_delta, is_tabu), record, swap_positions, dv.fill_permutation
