"""A cas generation's ants built on the device (`--algorithm cas --backend gpu-resident`): one
thread per ant, before the generation's local searches, each ant written over its donor in START
(where the Ro-TS kernel's first chunk starts its search). Same ants as the CPU's
(lsbench.engines.cas.construct), word by word from the same stream.
"""
import numpy as np
from numba import cuda

from ..device import GOLDEN, mix64, unit_interval

U64 = np.uint64


@cuda.jit(device=True, inline=True)
def roulette(x, tau, f, loc, last, chosen):
    """One location of the CPU's roulette pass, branch-free: a free one (f = 1) takes tau off x
    and is the last free one so far, the first that drives x below 0 is chosen."""
    x -= tau * np.float64(f)
    last = np.int32(loc) if f else last
    chosen = np.int32(loc) if f and x < 0 and chosen < 0 else chosen
    return x, last, chosen


@cuda.jit(device=True)
def construct_ant(p, free, todo, TAU, gamma, seed):
    """lsbench.engines.cas.construct: facilities leave the donor p with probability gamma, then in
    random order each takes a free location with probability proportional to tau -- the float64
    sums in the CPU's order, branch-free (a taken location adds tau * 0.0, which leaves a sum
    unchanged), four locations a step so that their pheromone loads are in flight together."""
    n = p.shape[0]
    n_fours = n - n % 4
    cs = seed
    m = 0
    for q in range(n):
        free[q] = 0
    for i in range(n):
        cs += GOLDEN
        if unit_interval(mix64(cs)) < gamma:
            free[p[i]] = 1
            todo[m] = i
            m += 1
    for t in range(m - 1, 0, -1):
        cs += GOLDEN
        u = np.int64((mix64(cs) >> np.uint64(11)) % np.uint64(t + 1))
        x = todo[t]
        todo[t] = todo[u]
        todo[u] = x
    for t in range(m):
        row = U64(todo[t] * n)
        total = 0.0
        for b in range(0, n_fours, 4):
            t0, t1, t2, t3 = TAU[row + U64(b)], TAU[row + U64(b + 1)], TAU[row + U64(b + 2)], TAU[row + U64(b + 3)]
            total += t0 * np.float64(free[b])
            total += t1 * np.float64(free[b + 1])
            total += t2 * np.float64(free[b + 2])
            total += t3 * np.float64(free[b + 3])
        for loc in range(n_fours, n):
            total += TAU[row + U64(loc)] * np.float64(free[loc])
        cs += GOLDEN
        x = unit_interval(mix64(cs)) * total
        chosen = np.int32(-1)
        last = np.int32(-1)
        for b in range(0, n_fours, 4):
            t0, t1, t2, t3 = TAU[row + U64(b)], TAU[row + U64(b + 1)], TAU[row + U64(b + 2)], TAU[row + U64(b + 3)]
            x, last, chosen = roulette(x, t0, free[b], b, last, chosen)
            x, last, chosen = roulette(x, t1, free[b + 1], b + 1, last, chosen)
            x, last, chosen = roulette(x, t2, free[b + 2], b + 2, last, chosen)
            x, last, chosen = roulette(x, t3, free[b + 3], b + 3, last, chosen)
        for loc in range(n_fours, n):
            x, last, chosen = roulette(x, TAU[row + U64(loc)], free[loc], loc, last, chosen)
        chosen = chosen if chosen >= 0 else last
        p[todo[t]] = chosen
        free[chosen] = 0


@cuda.jit
def ant_kernel(START, STATE, TAU, FREE, TODO, gamma):
    """Ant q built from its donor START[q] with stream state STATE[q, 1], written over it."""
    q = cuda.grid(1)
    if q < START.shape[0]:
        construct_ant(START[q], FREE[q], TODO[q], TAU, gamma, STATE[q, 1])


def build_ants(b, gamma, stream):
    """Queue the ants of a generation of K = b.searches searches (ResidentRots.buffers) on stream."""
    K = b.START.shape[0]
    ant_kernel[-(-K // 32), 32, stream](b.START, b.STATE, b.TAU, b.FREE, b.TODO, gamma)
