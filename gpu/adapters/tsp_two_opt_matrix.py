"""The TSP 2-opt adapter of the resident local search engine for instances without coordinates the
device can compute from (GEO, explicit weights): the symmetric distance matrix in global memory,
each move's O(1) cost read from it (lsbench.problems.tsp.two_opt_delta, whose path terms cancel on
symmetric distances), one move a thread (gpu/adapters/numbered_moves.py). Tabu attribute:
gpu/adapters/two_opt_edges.py.
"""
from numba import cuda, int64

from lsbench.errors import LsbenchError
from lsbench.problems.tsp import pair_count

from .. import device as dv
from .numbered_moves import make_scan, pair_moves
from .two_opt_edges import record, tabu_lists, two_opt_is_tabu, wrap


@cuda.jit(device=True)
def load(data, SOL, MEM, s, sh, tid, T):
    """This thread's edges of the tour (lsbench.problems.tsp.tour_length)."""
    D = data[0]
    n = SOL.shape[1]
    part = int64(0)
    for k in range(tid, n, T):
        part += D[SOL[s, k], SOL[s, wrap(k + 1, n)]]
    return part


@cuda.jit(device=True)
def move_delta(data, SOL, MEM, s, sh, k, current, work):
    D = data[0]
    n = SOL.shape[1]
    i, j = dv.index_to_pair(k, n)
    if i == 0 and j == n - 1:  # reversing the whole tour changes nothing
        return int64(0)
    a, b, c, e = SOL[s, wrap(i - 1, n)], SOL[s, i], SOL[s, j], SOL[s, wrap(j + 1, n)]
    return int64(D[a, c]) + D[b, e] - D[a, b] - D[c, e]


@cuda.jit(device=True)
def is_tabu(data, SOL, MEM, s, k, it):
    n = SOL.shape[1]
    i, j = dv.index_to_pair(k, n)
    return two_opt_is_tabu(MEM, SOL, s, wrap(i - 1, n), i, j, wrap(j + 1, n), it)


@cuda.jit(device=True)
def apply(data, SOL, MEM, s, sh, move, tid, T):
    """Reverses positions i..j of the tour."""
    i, j = dv.index_to_pair(move, SOL.shape[1])
    for k in range(tid, (j - i + 1) // 2, T):
        SOL[s, i + k], SOL[s, j - k] = SOL[s, j - k], SOL[s, i + k]
    cuda.syncthreads()


class TspTwoOptMatrixAdapter:
    """Host side: the distance matrix on the device and the per-search tabu lists."""

    neighbourhood = "2opt"
    compile_key = None
    shared_bytes = 0
    layout = "matrix"

    def __init__(self, problem, nb):
        if nb.name != "2opt" or not problem.symmetric:
            raise LsbenchError(f"{problem.name}: the 2-opt adapters need symmetric distances (asymmetric 2-opt "
                               "runs on the tabu matrix kernel)")
        self.n = problem.n
        self.moves = pair_count(self.n)
        self.data = (cuda.to_device(problem.matrix("the 2-opt matrix adapter")),)

    def memory(self, K, tenure_max):
        return tabu_lists(K, tenure_max)

    def device_functions(self):
        return load, make_scan(pair_moves, move_delta, is_tabu), record, apply, dv.fill_permutation
