"""Max-Cut's device adapter for lsbench's resident local search engine (`--backend gpu-resident`):
each search's sides in lsbench's SOL row, its gain vector and its vertices' tabu expiries in global
memory; a move's delta is its gain (O(1)), and an applied flip updates the gains of its neighbours
(O(degree)), by the CPU's own functions compiled for the device (lsbench.gpu.device.twin).
"""
import numpy as np
from numba import cuda, int64

from lsbench.gpu import device as dv
from lsbench.gpu.adapters.numbered_moves import make_scan

from .problem import flip, flip_deltas

flip_on_device = dv.twin(flip)
gains_on_device = dv.twin(flip_deltas)


@cuda.jit(device=True)
def load(data, SOL, MEM, s, sh, tid, T):
    """Each vertex's gain (flip_deltas); this thread's share of minus the cut (each edge from its
    lower end)."""
    indptr, indices, weights = data
    GAINS = MEM[0]
    n = SOL.shape[1]
    part = int64(0)
    for v in range(tid, n, T):
        gains_on_device(indptr, indices, weights, SOL[s], v, v + 1, GAINS[s])
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if u > v and SOL[s, u] != SOL[s, v]:
                part -= weights[e]
    return part


@cuda.jit(device=True)
def moves(data, SOL):
    return SOL.shape[1]


@cuda.jit(device=True)
def move_delta(data, SOL, MEM, s, sh, k, current, work):
    return MEM[0][s, k]


@cuda.jit(device=True)
def is_tabu(data, SOL, MEM, s, k, it):
    return MEM[1][s, k] >= it


@cuda.jit(device=True)
def record(data, SOL, MEM, s, move, it, until):
    """OneFlip.tabu_record: the vertex."""
    MEM[1][s, move] = until


@cuda.jit(device=True)
def apply(data, SOL, MEM, s, sh, move, tid, T):
    """The flip and its neighbours' gains, by one thread (O(degree)); the block waits."""
    indptr, indices, weights = data
    if tid == 0:
        flip_on_device(indptr, indices, weights, SOL[s], MEM[0][s], move)
    cuda.syncthreads()


class MaxCutFlipAdapter:
    """Host side: the graph's CSR arrays on the device; per search the gains and the expiries."""

    compile_key = None
    shared_bytes = 0

    def __init__(self, problem, nb):
        self.n = problem.n
        self.moves = problem.n
        self.data = (cuda.to_device(problem.indptr), cuda.to_device(problem.indices), cuda.to_device(problem.weights))

    def memory(self, K, tenure_max):
        return cuda.device_array((K, self.n), np.int64), cuda.to_device(np.full((K, self.n), -1, np.int64))

    def move_cost(self):
        """(move_delta, scratch): what `--backend gpu` (the iteration level) evaluates a move a thread from."""
        return move_delta, 1

    def device_functions(self):
        return load, make_scan(moves, move_delta, is_tabu), record, apply, dv.fill_bits
