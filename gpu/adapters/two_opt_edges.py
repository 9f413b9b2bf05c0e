"""What both TSP 2-opt adapters (gpu/adapters/tsp_two_opt.py, coordinates; tsp_two_opt_matrix.py,
a distance matrix) share: the tabu attribute of a reversal as lsbench.problems.tsp.two_opt_tabu_*
(the two removed edges, as directed city pairs, each with its expiry) kept in a per-search list of
2 (tenure_max + 1) entries in global memory: an expiry matrix that stores only the entries that can
still be live, so the same moves are tabu as on the CPU, in O(tenure) memory a search.
"""
import numpy as np
from numba import cuda

from .. import device as dv


@cuda.jit(device=True, inline=True)
def tabu_list_has(TA, TB, TU, s, a, b, it):
    """Whether edge a -> b was removed and its tabu expiry has not passed."""
    for q in range(TA.shape[1]):
        if TA[s, q] == a and TB[s, q] == b and TU[s, q] >= it:
            return True
    return False


@cuda.jit(device=True, inline=True)
def tabu_list_put(TA, TB, TU, s, a, b, until, it):
    """expiry[a, b] = until: the pair's entry if it has one, else a slot whose expiry has passed."""
    free = -1
    for q in range(TA.shape[1]):
        if TA[s, q] == a and TB[s, q] == b:
            TU[s, q] = until
            return
        if free < 0 and TU[s, q] < it:
            free = q
    TA[s, free] = a
    TB[s, free] = b
    TU[s, free] = until


@cuda.jit(device=True, inline=True)
def wrap(p, n):
    """p mod n for -n <= p < 2n, without a 64-bit division."""
    if p < 0:
        return p + n
    if p >= n:
        return p - n
    return p


@cuda.jit(device=True)
def two_opt_is_tabu(MEM, SOL, s, h, i, j, nx, it):
    """Whether reversal (i, j) adds back a removed edge still tabu (two_opt_tabu_flags)."""
    TA, TB, TU = MEM[0], MEM[1], MEM[2]
    return (tabu_list_has(TA, TB, TU, s, SOL[s, h], SOL[s, j], it)
            or tabu_list_has(TA, TB, TU, s, SOL[s, i], SOL[s, nx], it))


@cuda.jit(device=True)
def record(data, SOL, MEM, s, move, it, until):
    """lsbench.problems.tsp.two_opt_tabu_record: the removed edges (i-1, i) and (j, j+1)."""
    n = SOL.shape[1]
    TA, TB, TU = MEM[0], MEM[1], MEM[2]
    i, j = dv.index_to_pair(move, n)
    tabu_list_put(TA, TB, TU, s, SOL[s, wrap(i - 1, n)], SOL[s, i], until, it)
    tabu_list_put(TA, TB, TU, s, SOL[s, j], SOL[s, wrap(j + 1, n)], until, it)


def tabu_lists(K, tenure_max):
    """K empty lists of removed edges (TA, TB, TU; every expiry -1), each with room for every entry
    that can be live at once."""
    size = 2 * (int(tenure_max) + 1)
    return (cuda.to_device(np.full((K, size), -1, np.int32)), cuda.to_device(np.full((K, size), -1, np.int32)),
            cuda.to_device(np.full((K, size), -1, np.int64)))
