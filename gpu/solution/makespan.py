"""Solution level (Bożejko, Smutnicki, Uchroński, ICCS 2009): the flow-shop makespan and total
flow time of ONE permutation, computed by p threads sweeping the anti-diagonals of the m x n grid
of completion times C[machine, position].

Cell (i, j) depends on (i, j-1) and (i-1, j), both on the previous anti-diagonal, so the cells of
one anti-diagonal are independent: thread t takes every p-th of them, then the block synchronises.
Only the previous anti-diagonal is kept (indexed by machine, in the block's dynamic shared memory:
two rows of m words).
"""
import numpy as np
from numba import config, cuda, int64

from ..runtime.launch import allow_dynamic_shared, within_a_block


@cuda.jit(device=True)
def wavefront(pt, perm, prev, cur, flow, tid, p):
    """(Cmax, sum of completion times) of perm, by the block's p threads over the anti-diagonals
    (prev, cur: shared, m each; flow: shared, 1); every thread returns them."""
    n = perm.shape[0]
    m = pt.shape[1]
    if tid == 0:
        flow[0] = 0
    for i in range(tid, m, p):
        prev[i] = 0
        cur[i] = 0
    cuda.syncthreads()
    for d in range(n + m - 1):
        i_lo = max(0, d - n + 1)
        i_hi = min(d, m - 1)
        for i in range(i_lo + tid, i_hi + 1, p):
            j = d - i
            left = prev[i] if j > 0 else 0          # C[i, j-1] sits on diagonal d-1 at machine i
            up = prev[i - 1] if i > 0 else 0       # C[i-1, j] sits on diagonal d-1 at machine i-1
            cur[i] = max(left, up) + pt[perm[j], i]
        cuda.syncthreads()
        for i in range(i_lo + tid, i_hi + 1, p):
            prev[i] = cur[i]
            if i == m - 1:
                flow[0] += cur[i]
        cuda.syncthreads()
    cmax, total = prev[m - 1], flow[0]
    cuda.syncthreads()  # (read by every thread before the next evaluation resets them)
    return cmax, total


@cuda.jit
def wavefront_kernel(pt, perms, repeats, out):
    """Block b evaluates perms[b] `repeats` times (for timing) with blockDim.x threads;
    out[b] = (Cmax, sum of completion times)."""
    rows = cuda.shared.array(0, int64)  # (dynamic: prev, cur)
    m = pt.shape[1]
    prev = rows[:m]
    cur = rows[m:2 * m]
    flow = cuda.shared.array(1, np.int64)
    b = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    for _ in range(repeats):
        cmax, total = wavefront(pt, perms[b], prev, cur, flow, tid, cuda.blockDim.x)
        if tid == 0:
            out[b, 0] = cmax
            out[b, 1] = total


def makespan_flowtime(pt, perms, threads, repeats=1):
    """(Cmax, Csum) of each permutation (rows of `perms`) with `threads` threads per permutation."""
    need = within_a_block(8 * 2 * pt.shape[1], f"a wavefront over {pt.shape[1]} machines")
    perms = np.ascontiguousarray(np.atleast_2d(perms), dtype=np.int64)
    out = cuda.device_array((perms.shape[0], 2), np.int64)
    args = (cuda.to_device(pt), cuda.to_device(perms), repeats, out)
    if not config.ENABLE_CUDASIM:
        allow_dynamic_shared(wavefront_kernel._compile_for_args(*args), need)
    wavefront_kernel[perms.shape[0], threads, 0, need](*args)
    return out.copy_to_host()


