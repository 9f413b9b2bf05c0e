"""A block's best candidate: candidates ordered by (class, delta, rank, index), reduced in shared
memory (plain syncthreads: the simulator runs it). Used by the iteration level's selection and the
whole-GPU tabu searches."""
from numba import cuda


@cuda.jit(device=True, inline=True)
def key_less(c1, d1, r1, i1, c2, d2, r2, i2):
    if c1 != c2:
        return c1 < c2
    if d1 != d2:
        return d1 < d2
    if r1 != r2:
        return r1 < r2
    return i1 < i2


@cuda.jit(device=True)
def block_min(sc, sd, sr, si, tid, size, c, d, r, i):
    """Shared-memory tree reduction of the block's candidates (class, delta, rank, index) into
    slot 0 over `size` threads (a power of two); a thread without a candidate brings i = -1. Plain
    syncthreads: the simulator runs it."""
    sc[tid] = c if i >= 0 else 3
    sd[tid] = d
    sr[tid] = r
    si[tid] = i
    cuda.syncthreads()
    step = size // 2
    while step > 0:
        if tid < step:
            o = tid + step
            if si[o] >= 0 and (si[tid] < 0 or key_less(sc[o], sd[o], sr[o], si[o], sc[tid], sd[tid], sr[tid], si[tid])):
                sc[tid] = sc[o]
                sd[tid] = sd[o]
                sr[tid] = sr[o]
                si[tid] = si[o]
        cuda.syncthreads()
        step //= 2
