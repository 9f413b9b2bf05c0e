"""What most adapters share: the scan of a numbered neighbourhood, one move at a time, its delta
from the adapter's own move cost (gpu/engine/local_search.py names what the scan returns), and the
position swap's moves, tabu attribute and host side.

make_scan(moves, move_delta, is_tabu, scratch) builds an adapter's `scan` from three device functions:
    moves(data, SOL) -> the neighbourhood's size
    move_delta(data, SOL, MEM, s, sh, k, current, work) -> move k's delta (`work`: this thread's
        zeroed int64 array of `scratch` entries, left zeroed)
    is_tabu(data, SOL, MEM, s, k, it) -> whether move k's attributes are tabu at iteration it
Thread tid takes moves tid, tid + T, ...: hill climbing keeps the least delta (lowest move on ties),
tabu search the least admissible delta, ties by the move's rank under the iteration's key
(lsbench.search.tabu), so the block's minimum is the CPU's choice.
"""
import numpy as np
from numba import cuda, int64, uint64

from lsbench.neighborhoods import pair_count
from lsbench.problems.permutation import position_swap_tabu_record

from .. import device as dv

NO_MOVE = int64(1) << int64(61)  # above every delta


def make_scan(moves, move_delta, is_tabu, scratch=1):
    @cuda.jit(device=True)
    def scan(data, SOL, MEM, s, sh, tabu_rule, use_tabu, it, current, asp, key, tid, T):
        work = cuda.local.array(scratch, int64)
        for v in range(scratch):
            work[v] = 0
        bd, br, bk = NO_MOVE, uint64(0), int64(-1)
        for k in range(tid, moves(data, SOL), T):
            d = int64(move_delta(data, SOL, MEM, s, sh, k, current, work))
            if not tabu_rule:
                if d < bd:
                    bd, bk = d, int64(k)
                continue
            if d > bd:
                continue
            r = dv.tie_rank(k, key)
            if d == bd and r >= br:
                continue
            if use_tabu and not current + d < asp and is_tabu(data, SOL, MEM, s, k, it):
                continue
            bd, br, bk = d, r, int64(k)
        return bd, br, bk

    return scan


@cuda.jit(device=True)
def pair_moves(data, SOL):
    """Swaps of two positions: n (n - 1) / 2."""
    n = SOL.shape[1]
    return n * (n - 1) // 2


@cuda.jit(device=True)
def swap_positions(data, SOL, MEM, s, sh, move, tid, T):
    """Swap move (i, j) of search s, by one thread; the block waits for it."""
    if tid == 0:
        i, j = dv.index_to_pair(move, SOL.shape[1])
        SOL[s, i], SOL[s, j] = SOL[s, j], SOL[s, i]
    cuda.syncthreads()


record_position_swap = dv.twin(position_swap_tabu_record)


@cuda.jit(device=True)
def position_swap_is_tabu(data, SOL, MEM, s, k, it):
    """lsbench.problems.permutation.position_swap_tabu_flags for swap k: it would put SOL[s, j]
    before SOL[s, i] while that is forbidden."""
    i, j = dv.index_to_pair(k, SOL.shape[1])
    return MEM[s, SOL[s, j], SOL[s, i]] >= it


@cuda.jit(device=True)
def position_swap_record(data, SOL, MEM, s, move, it, until):
    """position_swap_tabu_record, before the move."""
    i, j = dv.index_to_pair(move, SOL.shape[1])
    record_position_swap(SOL[s], i, j, MEM[s], until)


def expiry_matrices(K, n):
    """K searches' n x n tabu expiries (expiry[a, b]), every one passed (-1)."""
    return cuda.to_device(np.full((K, n, n), -1, np.int64))


class PairSwapAdapter:
    """Host side of an adapter whose moves swap two positions: n (n - 1) / 2 moves, an n x n expiry
    matrix a search, nothing in shared memory; `data` is the problem's device arrays."""

    compile_key = None
    shared_bytes = 0

    def __init__(self, problem, data):
        self.n = problem.n
        self.moves = pair_count(self.n)
        self.data = data

    def memory(self, K, tenure_max):
        return expiry_matrices(K, self.n)
