"""A cas generation's ants built on the device (`--algorithm cas --backend gpu-resident`): one
block per ant, before the generation's local searches, each ant written over its donor in START
(where the Ro-TS kernel's first chunk starts its search). Same ants as the CPU's
(lsbench.engines.cas.construct), word by word from the same stream.

The stream is counter-based (word w of a state s is mix64(s + w GOLDEN)), so the block draws every
word at once; but the roulette's float64 sums must run in the CPU's order, so one thread sums and
subtracts, while the block gathers each facility's pheromone at the free locations for it. The free
locations are kept as an ascending list: the CPU's loops skip the taken ones, so the operations
and their order are the CPU's, over the free locations instead of all n. (On an H200, one thread an
ant over global memory cost a generation 0.13 ms on tai40a and 0.27 ms on tai60b; this 0.05 and
0.08 ms; every value gathered before the roulettes, with taken flags, 0.06 and 0.16 ms.)
"""
import numpy as np
from numba import cuda, float64, int32

from ..device import GOLDEN, mix64, unit_interval

ANT_THREADS = 64
U64 = np.uint64


def ant_shared_bytes(n):
    """Dynamic shared memory of an ant's block: the gathered pheromone and the roulette draws
    (float64), the leaving flags, the facilities to place, their shuffle draws and two copies of the
    free list (int32)."""
    return 8 * 2 * n + 4 * 5 * n


@cuda.jit(device=True, inline=True)
def word(seed, w):
    """The stream's w-th word from state `seed` (w = 1: the first draw)."""
    return mix64(seed + U64(w) * GOLDEN)


@cuda.jit(device=True, inline=True)
def roulette(vals, free, draw):
    """The CPU's roulette over the pheromone of the `free` locations: their sum, the draw scaled
    by it, then the first location that drives it below 0 (else the last); four loads a step."""
    total = 0.0
    j = 0
    while j + 4 <= free:
        v0, v1, v2, v3 = vals[j], vals[j + 1], vals[j + 2], vals[j + 3]
        total += v0
        total += v1
        total += v2
        total += v3
        j += 4
    for r in range(j, free):
        total += vals[r]
    x = draw * total
    j = 0
    while j + 4 <= free:
        v0, v1, v2, v3 = vals[j], vals[j + 1], vals[j + 2], vals[j + 3]
        x -= v0
        if x < 0:
            return j
        x -= v1
        if x < 0:
            return j + 1
        x -= v2
        if x < 0:
            return j + 2
        x -= v3
        if x < 0:
            return j + 3
        j += 4
    for r in range(j, free):
        x -= vals[r]
        if x < 0:
            return r
    return free - 1


@cuda.jit(device=True, inline=True)
def leaving_facilities(p, leaving, todo, free_list, n):
    """The leaving facilities (flags in `leaving`) in order into todo, the locations they free in
    ascending order into free_list. Returns how many."""
    m = 0
    for i in range(n):
        if leaving[i]:
            todo[m] = i
            m += 1
    for i in range(n):
        leaving[i] = 0
    for t in range(m):
        leaving[p[todo[t]]] = 1
    free = 0
    for loc in range(n):
        if leaving[loc]:
            free_list[free] = loc
            free += 1
    return m


@cuda.jit
def ant_kernel(START, STATE, TAU, gamma):
    """Ant q = blockIdx.x built from its donor START[q] with stream state STATE[q, 1], written over it."""
    q = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    T = cuda.blockDim.x
    n = START.shape[1]
    reals = cuda.shared.array(0, float64)
    ints = cuda.shared.array(0, int32)
    vals, draws = reals[:n], reals[n:2 * n]
    leaving, todo, shuffle = ints[4 * n:5 * n], ints[5 * n:6 * n], ints[6 * n:7 * n]  # (after the float64)
    count = cuda.shared.array(2, int32)  # facilities to place; the index the roulette chose
    p = START[q]
    seed = STATE[q, 1]
    for i in range(tid, n, T):  # words 1 .. n: each facility leaves with probability gamma
        leaving[i] = 1 if unit_interval(word(seed, i + 1)) < gamma else 0
    cuda.syncthreads()
    if tid == 0:
        count[0] = leaving_facilities(p, leaving, todo, ints[7 * n:8 * n], n)
    cuda.syncthreads()
    m = count[0]
    shuffles = max(m - 1, 0)
    for k in range(tid, shuffles, T):  # words n + 1 .. n + m - 1: the shuffle's swaps, t = m - 1 .. 1
        t = m - 1 - k
        shuffle[t] = int32((word(seed, n + k + 1) >> U64(11)) % U64(t + 1))
    for t in range(tid, m, T):  # then a word for each facility's roulette
        draws[t] = unit_interval(word(seed, n + shuffles + t + 1))
    cuda.syncthreads()
    if tid == 0:
        for t in range(m - 1, 0, -1):
            u = shuffle[t]
            x = todo[t]
            todo[t] = todo[u]
            todo[u] = x
    cuda.syncthreads()
    for t in range(m):
        free = m - t
        now = ints[(7 + t % 2) * n:(8 + t % 2) * n]  # the free list, and its next copy
        after = ints[(8 - t % 2) * n:(9 - t % 2) * n]
        row = U64(todo[t] * n)
        for j in range(tid, free, T):
            vals[j] = TAU[row + U64(now[j])]
        cuda.syncthreads()
        if tid == 0:
            chosen = roulette(vals, free, draws[t])
            count[1] = chosen
            p[todo[t]] = now[chosen]
        cuda.syncthreads()
        chosen = count[1]
        for j in range(tid, free - 1, T):  # the chosen location is taken: the list stays ascending
            after[j] = now[j] if j < chosen else now[j + 1]
        cuda.syncthreads()


def build_ants(b, gamma, stream):
    """Queue the ants of a generation of K = b.searches searches (ResidentRots.buffers) on stream."""
    K, n = b.START.shape
    ant_kernel[K, ANT_THREADS, stream, ant_shared_bytes(n)](b.START, b.STATE, b.TAU, gamma)
