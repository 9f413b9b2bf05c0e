"""The permuted perceptron adapter of the resident local search engine (gpu/engine/local_search.py):
hill climbing and tabu search flipping 1, 2 or 3 bits (hamming1..3), the matrix A in global memory,
each search's Y = AV and its histogram in MEM, each move's O(m) cost `ppp_flip_delta` (the CPU's
arithmetic) with a thread's scratch histogram in local memory.

Tabu attribute (lsbench.problems.ppp.bits_tabu_flags): expiry[bit] per search; a move is tabu
while any bit it flips is.
"""
import numpy as np
from numba import cuda, int64

from lsbench.neighborhoods import hamming_count
from lsbench.problems.ppp import PENALTY

from .. import device as dv
from .numbered_moves import make_scan


@cuda.jit(device=True, inline=True)
def flip_indices(idx, n, k):
    """PPP Hamming-k move idx as the bits it flips (k1, k2, k3), -1 for the ones it has not."""
    if k == 1:
        return idx, -1, -1
    if k == 2:
        k1, k2 = dv.index_to_pair(idx, n)
        return k1, k2, -1
    return dv.index_to_triple(idx, n)


@cuda.jit(device=True)
def load(data, SOL, MEM, s, sh, tid, T):
    """Y = A (2x - 1) and its histogram into MEM; this thread's share of the fitness
    (lsbench.problems.ppp.ppp_fitness_from_y)."""
    A, TH = data[0], data[1]
    Y, HIST = MEM[0], MEM[1]
    m, n = A.shape
    n1 = TH.shape[0]
    for v in range(tid, n1, T):
        HIST[s, v] = 0
    cuda.syncthreads()
    part = int64(0)
    for j in range(tid, m, T):
        y = int64(0)
        for i in range(n):
            y += A[j, i] * (2 * SOL[s, i] - 1)
        Y[s, j] = y
        if y < 0:
            part += PENALTY * (-2 * y)
        elif y < n1:
            cuda.atomic.add(HIST, (s, y), 1)
    cuda.syncthreads()
    for v in range(tid, n1, T):
        part += abs(HIST[s, v] - TH[v])
    return part


@cuda.jit(device=True)
def moves(data, SOL):
    n = SOL.shape[1]
    k = data[2]
    return n if k == 1 else (n * (n - 1) // 2 if k == 2 else n * (n - 1) * (n - 2) // 6)


@cuda.jit(device=True)
def move_delta(data, SOL, MEM, s, sh, k, current, work):
    k1, k2, k3 = flip_indices(k, SOL.shape[1], data[2])
    return dv.ppp_flip_delta(data[0], SOL[s], MEM[0][s], MEM[1][s], data[1], k1, k2, k3, work)


@cuda.jit(device=True)
def is_tabu(data, SOL, MEM, s, k, it):
    EXP = MEM[2]
    k1, k2, k3 = flip_indices(k, SOL.shape[1], data[2])
    return EXP[s, k1] >= it or (k2 >= 0 and EXP[s, k2] >= it) or (k3 >= 0 and EXP[s, k3] >= it)


@cuda.jit(device=True)
def record(data, SOL, MEM, s, move, it, until):
    """lsbench.problems.ppp.PppHamming.tabu_record: every flipped bit."""
    EXP = MEM[2]
    k1, k2, k3 = flip_indices(move, SOL.shape[1], data[2])
    EXP[s, k1] = until
    if k2 >= 0:
        EXP[s, k2] = until
    if k3 >= 0:
        EXP[s, k3] = until


@cuda.jit(device=True)
def apply(data, SOL, MEM, s, sh, move, tid, T):
    """Y's rows and the histogram (lsbench.problems.ppp.flip_bits), then the bits."""
    A, TH = data[0], data[1]
    Y, HIST = MEM[0], MEM[1]
    n1 = TH.shape[0]
    k1, k2, k3 = flip_indices(move, SOL.shape[1], data[2])
    x = SOL[s]
    c1, c2, c3 = dv.flip_signs(x, k1, k2, k3)
    for j in range(tid, A.shape[0], T):
        was = Y[s, j]
        now = dv.row_after_flip(A, Y[s], j, k1, k2, k3, c1, c2, c3)
        if now != was:
            if 0 <= was < n1:
                cuda.atomic.add(HIST, (s, was), -1)
            if 0 <= now < n1:
                cuda.atomic.add(HIST, (s, now), 1)
            Y[s, j] = now
    cuda.syncthreads()
    if tid == 0:
        for b in (k1, k2, k3):
            if b >= 0:
                x[b] = 1 - x[b]
    cuda.syncthreads()


class PppFlipAdapter:
    """Host side: A and the target histogram on the device; per search Y, its histogram and the
    bits' expiries."""

    shared_bytes = 0

    def __init__(self, problem, nb):
        self.m, self.n = problem.m, problem.n
        self.n1 = problem.target_hist.shape[0]
        self.compile_key = self.n1  # the scratch histogram's length
        self.moves = hamming_count(self.n, nb.k)
        self.data = (cuda.to_device(problem.a), cuda.to_device(problem.target_hist), np.int64(nb.k))

    def memory(self, K, tenure_max):
        return (cuda.device_array((K, self.m), np.int64), cuda.device_array((K, self.n1), np.int64),
                cuda.to_device(np.full((K, self.n), -1, np.int64)))

    def device_functions(self):
        return load, make_scan(moves, move_delta, is_tabu, self.n1), record, apply, dv.fill_bits
