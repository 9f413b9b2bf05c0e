"""Neighbourhood-evaluation kernels (one thread per move, grid-stride), tabu tests and the
two-stage device-side reduction. Move parameters come either from the shared index functions
(neighbourhood generated on the GPU) or from a host-built table `params` (generated on the CPU)."""
import functools

import numpy as np
from numba import config, cuda

from .. import device as dv
from ..move_costs.pfsp import LOCAL_MACHINES, append_job
from ..runtime.block_reduce import block_min, key_less

MAX_DIMENSION = 64  # per-thread neighbour for Weierstrass
# threads of the reduction kernels (a power of two); small under the simulator, which runs every
# thread of a block as a Python thread
REDUCE_BLOCK = 32 if config.ENABLE_CUDASIM else 256


# ------------------------------------------------------------------ move parameters
@cuda.jit(device=True, inline=True)
def pair_of(idx, n, params, use_params):
    if use_params:
        return params[idx, 0], params[idx, 1]
    return dv.index_to_pair(idx, n)


@cuda.jit
def qap_swap_kernel(a, b, p, params, use_params, out):
    n = p.shape[0]
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for idx in range(start, out.shape[0], stride):
        r, s = pair_of(idx, n, params, use_params)
        out[idx] = dv.qap_swap_delta(a, b, p, r, s)


@cuda.jit
def tsp_swap_kernel(d, t, params, use_params, out):
    n = t.shape[0]
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for idx in range(start, out.shape[0], stride):
        i, j = pair_of(idx, n, params, use_params)
        out[idx] = dv.tsp_swap_delta(d, t, i, j)


@cuda.jit
def tsp_two_opt_kernel(d, t, fwd, bwd, edge, params, use_params, out):
    n = t.shape[0]
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for idx in range(start, out.shape[0], stride):
        i, j = pair_of(idx, n, params, use_params)
        out[idx] = dv.tsp_two_opt_delta(d, t, fwd, bwd, edge, i, j)


# A flow shop's insertion moves are evaluated in groups of removed positions i0 <= i < i0 + count
# (`group`), whose Taillard tables fit the evaluator's scratch: `tables` = (heads, tails, prefix flow
# time, tardiness, late jobs), laid out [k, machine, i - i0] (one group on every instance of up to ~10^9
# table entries; rnd-pfsp-5000x500-1 takes 48). `sched` = (pt, due, seq, rows): a thread schedules in a
# local row of completion times up to LOCAL_MACHINES machines, in its own row of `rows` (global memory,
# one a thread of the grid) beyond (gpu/move_costs/pfsp.py); `costs` = (objective, w0, w1, w2, current
# objective).


@cuda.jit
def pfsp_heads_tails_kernel(pt, due, seq, tables, objective, group):
    """(More than WAVE machines.) Taillard's acceleration for the sequence without position i, for
    the group's removed positions: thread t < count computes the heads of i = i0 + t (and, for the
    slower objectives, prefix flow time, tardiness and late jobs of the first k jobs), thread
    count + t its tails. Rows k < i of the heads equal the full sequence's, but each thread
    recomputes them: fewer branches, same memory traffic."""
    heads, tails, pflow, ptard, plate = tables
    i0, count = group
    t = cuda.grid(1)
    n = seq.shape[0]
    m = pt.shape[1]
    if t >= 2 * count:
        return
    if t < count:
        col = t
        i = i0 + col
        for j in range(m):
            heads[0, j, col] = 0
        pflow[0, col] = 0
        ptard[0, col] = 0
        plate[0, col] = 0
        fl = 0
        ta = 0
        la = 0
        for k in range(n - 1):
            job = seq[k] if k < i else seq[k + 1]
            prev = heads[k, 0, col] + pt[job, 0]
            heads[k + 1, 0, col] = prev
            for j in range(1, m):
                prev = max(prev, heads[k, j, col]) + pt[job, j]
                heads[k + 1, j, col] = prev
            if objective != 0:
                fl += prev
                ta += max(0, prev - due[job])
                la += 1 if prev > due[job] else 0
                pflow[k + 1, col] = fl
                ptard[k + 1, col] = ta
                plate[k + 1, col] = la
    else:
        col = t - count
        i = i0 + col
        for j in range(m):
            tails[n - 1, j, col] = 0
        for k in range(n - 2, -1, -1):
            job = seq[k] if k < i else seq[k + 1]
            nxt = tails[k + 1, m - 1, col] + pt[job, m - 1]
            tails[k, m - 1, col] = nxt
            for j in range(m - 2, -1, -1):
                nxt = max(nxt, tails[k + 1, j, col]) + pt[job, j]
                tails[k, j, col] = nxt


# threads of the wavefront heads/tails kernel: one warp, one lane per machine (fewer in the
# simulator, which runs every thread of a block as a Python thread)
WAVE = 4 if config.ENABLE_CUDASIM else 32


@cuda.jit
def pfsp_heads_tails_wave_kernel(pt, due, seq, tables, objective, group):
    """As pfsp_heads_tails_kernel, but block b < count computes the heads of the sequence without
    position i0 + b, block count + b its tails, with lane j owning machine j and sweeping the
    anti-diagonals of the (position x machine) grid (Bożejko et al.'s wavefront): n + m - 1 steps
    instead of n m. C[k][j] needs C[k][j-1] (lane j-1, previous step) and C[k-1][j] (own value,
    previous step)."""
    heads, tails, pflow, ptard, plate = tables
    i0, count = group
    last = cuda.shared.array(WAVE, np.int64)
    b = cuda.blockIdx.x
    j = cuda.threadIdx.x
    n = seq.shape[0]
    m = pt.shape[1]
    tails_side = b >= count
    col = b - count if tails_side else b
    i = i0 + col
    own = np.int64(0)
    last[j] = 0
    if not tails_side:
        if j < m:
            heads[0, j, col] = 0
        if j == 0:
            pflow[0, col] = 0
            ptard[0, col] = 0
            plate[0, col] = 0
    elif j < m:
        tails[n - 1, j, col] = 0
    fl = np.int64(0)
    ta = np.int64(0)
    la = np.int64(0)
    cuda.syncthreads()
    for d in range(n - 1 + m - 1):
        if tails_side:
            mj = m - 1 - j          # tails run from the last machine and the last position
            k = n - 2 - (d - j)
        else:
            mj = j
            k = d - j               # heads: position k (0-based in the partial sequence)
        active = j < m and 0 <= d - j < n - 1
        left = last[j - 1] if j > 0 else 0
        cuda.syncthreads()
        if active:
            job = seq[k] if k < i else seq[k + 1]
            own = max(own, left) + pt[job, mj]
            if tails_side:
                tails[k, mj, col] = own
            else:
                heads[k + 1, mj, col] = own
                if objective != 0 and j == m - 1:
                    fl += own
                    ta += max(0, own - due[job])
                    la += 1 if own > due[job] else 0
                    pflow[k + 1, col] = fl
                    ptard[k + 1, col] = ta
                    plate[k + 1, col] = la
        last[j] = own
        cuda.syncthreads()


@cuda.jit(device=True, inline=True)
def insertion_of_item(t, n, i0, count):
    """Work item t of the group i0 <= i < i0 + count -> (move index, i, k, column of i in the
    tables). Consecutive items remove consecutive positions i, so the threads of a warp read
    neighbouring words of the [position, machine, removed job] tables."""
    col = t % count
    i = i0 + col
    kk = t // count
    k = kk + 1 if kk >= i else kk
    return i * (n - 1) + kk, i, k, col


@cuda.jit(device=True, inline=True)
def insertion_move(t, n, group, params, use_params):
    """Work item t of a group -> (move index, i, k, column): from the host's move table (in move
    order: the group's moves are rows i0 (n - 1) on), or mapped on the device."""
    i0, count = group
    if use_params:
        g = i0 * (n - 1) + t
        i = params[g, 0]
        return g, i, params[g, 1], i - i0
    return insertion_of_item(t, n, i0, count)


@cuda.jit(device=True, inline=True)
def pfsp_insertion_delta(sched, tables, costs, i, k, col):
    """Cost change of moving the job at position i to position k (Taillard's heads and tails)."""
    pt, _due, seq, _rows = sched
    heads, tails, _pflow, _ptard, _plate = tables
    objective, w0, w1, w2, current = costs
    m = pt.shape[1]
    x = seq[i]
    if objective == 0:  # Taillard: O(m) from heads and tails
        f = heads[k, 0, col] + pt[x, 0]
        cmax = f + tails[k, 0, col]
        for j in range(1, m):
            f = max(f, heads[k, j, col]) + pt[x, j]
            cmax = max(cmax, f + tails[k, j, col])
        return cmax - current
    cmax, flow, tard, late = pfsp_insertion_schedule(sched, tables, i, k, col)
    value = flow if objective == 1 else w0 * cmax + w1 * tard + w2 * late
    return value - current


@cuda.jit(device=True, inline=True)
def pfsp_insertion_schedule(sched, tables, i, k, col):
    """(Cmax, flow time, tardiness, late jobs) after moving the job at position i to position k:
    the prefix tables give the first k jobs, the rest is scheduled job by job."""
    pt, due, seq, rows = sched
    heads, _tails, pflow, ptard, plate = tables
    n = seq.shape[0]
    m = pt.shape[1]
    x = seq[i]
    if m <= LOCAL_MACHINES:
        c = cuda.local.array(LOCAL_MACHINES, np.int64)
    else:
        c = rows[cuda.grid(1)]  # (one a thread of the grid)
    for j in range(m):
        c[j] = heads[k, j, col]
    flow = pflow[k, col]
    tard = ptard[k, col]
    late = plate[k, col]
    for v in range(k, n):  # virtual sequence: x at k, then the rest of seq without i
        if v == k:
            job = x
        else:
            u = v - 1
            job = seq[u] if u < i else seq[u + 1]
        flow, tard, late = append_job(pt, due, c, job, flow, tard, late)
    return c[m - 1], flow, tard, late


@cuda.jit
def pfsp_insertion_vector_kernel(sched, tables, group, params, use_params, out):
    """Objective vectors (makespan, tardiness, late jobs) of the group's insertion moves, out[move, 3]."""
    n = sched[2].shape[0]
    for t in range(cuda.grid(1), group[1] * (n - 1), cuda.gridsize(1)):
        idx, i, k, col = insertion_move(t, n, group, params, use_params)
        cmax, _flow, tard, late = pfsp_insertion_schedule(sched, tables, i, k, col)
        out[idx, 0] = cmax
        out[idx, 1] = tard
        out[idx, 2] = late


@cuda.jit
def pfsp_insertion_kernel(sched, tables, costs, group, params, use_params, out):
    """Cost changes of the group's insertion moves."""
    n = sched[2].shape[0]
    for t in range(cuda.grid(1), group[1] * (n - 1), cuda.gridsize(1)):
        idx, i, k, col = insertion_move(t, n, group, params, use_params)
        out[idx] = pfsp_insertion_delta(sched, tables, costs, i, k, col)


@cuda.jit(device=True, inline=True)
def pfsp_swap_schedule(sched, heads0, prefix, i, j2):
    """(Cmax, flow time, tardiness, late jobs) after swapping positions i < j2. heads0: heads of
    the current sequence; prefix[q] = (flow, tardiness, late) of its first q jobs."""
    pt, due, seq, rows = sched
    n = seq.shape[0]
    m = pt.shape[1]
    if m <= LOCAL_MACHINES:
        c = cuda.local.array(LOCAL_MACHINES, np.int64)
    else:
        c = rows[cuda.grid(1)]  # (one a thread of the grid)
    for j in range(m):
        c[j] = heads0[i, j]
    flow = prefix[i, 0]
    tard = prefix[i, 1]
    late = prefix[i, 2]
    for v in range(i, n):
        job = seq[j2] if v == i else (seq[i] if v == j2 else seq[v])
        flow, tard, late = append_job(pt, due, c, job, flow, tard, late)
    return c[m - 1], flow, tard, late


@cuda.jit
def pfsp_swap_kernel(sched, heads0, prefix, costs, params, use_params, out):
    """Deltas of every swap."""
    objective, w0, w1, w2, current = costs
    n = sched[2].shape[0]
    for idx in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        i, j2 = pair_of(idx, n, params, use_params)
        cmax, flow, tard, late = pfsp_swap_schedule(sched, heads0, prefix, i, j2)
        if objective == 0:
            value = cmax
        elif objective == 1:
            value = flow
        else:
            value = w0 * cmax + w1 * tard + w2 * late
        out[idx] = value - current


@cuda.jit
def pfsp_swap_vector_kernel(sched, heads0, prefix, params, use_params, out):
    """Objective vectors (makespan, tardiness, late jobs) of every swap, out[move, 3]."""
    n = sched[2].shape[0]
    for idx in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        i, j2 = pair_of(idx, n, params, use_params)
        cmax, _flow, tard, late = pfsp_swap_schedule(sched, heads0, prefix, i, j2)
        out[idx, 0] = cmax
        out[idx, 1] = tard
        out[idx, 2] = late


@cuda.jit
def ppp_hamming_kernel(a, x, y, hist, target_hist, k, params, use_params, scratch, out):
    """Grid-stride over moves; each thread owns one zeroed row of `scratch` (one per thread)."""
    n = x.shape[0]
    tid = cuda.grid(1)
    stride = cuda.gridsize(1)
    row = scratch[tid]
    for idx in range(tid, out.shape[0], stride):
        if k == 1:
            k1 = params[idx, 0] if use_params else idx
            k2 = -1
            k3 = -1
        elif k == 2:
            k1, k2 = pair_of(idx, n, params, use_params)
            k3 = -1
        else:
            if use_params:
                k1 = params[idx, 0]
                k2 = params[idx, 1]
                k3 = params[idx, 2]
            else:
                k1, k2, k3 = dv.index_to_triple(idx, n)
        out[idx] = dv.ppp_flip_delta(a, x, y, hist, target_hist, k1, k2, k3, row)


def make_weierstrass_kernel(dtype):
    """One kernel per precision: the neighbour is built in the solution's precision, as on the CPU."""
    @cuda.jit
    def kernel(x, key, count, radius, b, h, terms, current, out):
        y = cuda.local.array(MAX_DIMENSION, dtype)
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for t in range(start, out.shape[0], stride):
            out[t] = dv.weierstrass_neighbour_value(x, key, t, count, radius, b, h, terms, y) - current
    return kernel


# ------------------------------------------------------------------ tabu tests on the device
@cuda.jit
def tabu_flags_kernel(kind, sol, expiry, it, n, flags):
    """kind 1: facility-location (QAP swap); 2: ordered pairs, position swap (TSP/PFSP swap);
    3: 2-opt edges; 4: insertion (every jumped job); 5: bits (Hamming-k, k = flags' size)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for idx in range(start, flags.shape[0], stride):
        tabu = False
        if kind == 1:
            r, s = dv.index_to_pair(idx, n)
            tabu = expiry[r, sol[s]] >= it and expiry[s, sol[r]] >= it
        elif kind == 2:
            i, j = dv.index_to_pair(idx, n)
            tabu = expiry[sol[j], sol[i]] >= it
        elif kind == 3:
            i, j = dv.index_to_pair(idx, n)
            prev = sol[(i - 1 + n) % n]
            nxt = sol[(j + 1) % n]
            tabu = expiry[prev, sol[j]] >= it or expiry[sol[i], nxt] >= it
        elif kind == 4:
            i, k = dv.index_to_insertion(idx, n)
            x = sol[i]
            if k < i:
                for q in range(k, i):
                    tabu = tabu or expiry[x, sol[q]] >= it
            else:
                for q in range(i + 1, k + 1):
                    tabu = tabu or expiry[sol[q], x] >= it
        elif kind == 5:
            size = flags.shape[0]
            if size == n:
                tabu = expiry[0, idx] >= it
            elif size == n * (n - 1) // 2:
                i, j = dv.index_to_pair(idx, n)
                tabu = expiry[0, i] >= it or expiry[0, j] >= it
            else:
                i, j, q = dv.index_to_triple(idx, n)
                tabu = expiry[0, i] >= it or expiry[0, j] >= it or expiry[0, q] >= it
        flags[idx] = tabu


# ------------------------------------------------------------------ two-stage reduction
@cuda.jit(device=True, inline=True)
def move_key(mode, idx, d, flags, current, best, tie_key, sol, expiry, it, aspiration, n):
    """(class, delta, rank) of move idx with delta d. mode 0: tabu search (class 1 = tabu and not
    aspired, rank = seeded hash); mode 1: Ro-TS (0 aspired, 1 authorised, 2 excluded; rank = index);
    mode 2: plain argmin (hill climbing; rank = index)."""
    if mode == 0:
        cls = 1 if (flags[idx] and not current + d < best) else 0
        return cls, d, dv.tie_rank(idx, tie_key)
    if mode == 1:
        i, j = dv.index_to_pair(idx, n)
        oldest = min(expiry[i, sol[j]], expiry[j, sol[i]])
        if oldest < it - aspiration or current + d < best:
            cls = 0
        elif oldest < it:
            cls = 1
        else:
            cls = 2
        return cls, d, np.uint64(idx)
    return 0, d, np.uint64(idx)


# fused evaluation + selection (reduce=device): move functions for make_select_kernel
@cuda.jit(device=True, inline=True)
def qap_swap_move(data, t, n):
    a, b, p = data
    r, s = dv.index_to_pair(t, n)
    return t, dv.qap_swap_delta(a, b, p, r, s)


@cuda.jit(device=True, inline=True)
def tsp_swap_move(data, t, n):
    d, tour = data
    i, j = dv.index_to_pair(t, n)
    return t, dv.tsp_swap_delta(d, tour, i, j)


@cuda.jit(device=True, inline=True)
def tsp_two_opt_move(data, t, n):
    d, tour, fwd, bwd, edge = data
    i, j = dv.index_to_pair(t, n)
    return t, dv.tsp_two_opt_delta(d, tour, fwd, bwd, edge, i, j)


@cuda.jit(device=True, inline=True)
def pfsp_insertion_move(data, t, n):
    """(One group of every removed position: the tables hold them all.)"""
    pt, due, seq, rows, heads, tails, pflow, ptard, plate, objective, w0, w1, w2, current = data
    idx, i, k, col = insertion_of_item(t, n, 0, n)
    return idx, pfsp_insertion_delta((pt, due, seq, rows), (heads, tails, pflow, ptard, plate),
                                     (objective, w0, w1, w2, current), i, k, col)


FUSED_MOVES = {"swap@qap": qap_swap_move, "swap@tsp": tsp_swap_move, "2opt@tsp": tsp_two_opt_move,
               "insertion@pfsp": pfsp_insertion_move}


@cuda.jit(device=True, inline=True)
def stored_delta(data, t, n):
    """Move t's delta from the fitness array an evaluation kernel wrote."""
    return t, data[0][t]


@functools.lru_cache(maxsize=None)
def make_select_kernel(move_delta, delta_dtype):
    """The device-side selection in one launch. Each block reduces a grid-stride share of the moves
    in shared memory (a tree: the simulator has no warp shuffles) to one (class, delta, rank, index)
    winner; the last block to finish (a ticket counter after a memory fence) reduces the blocks'
    winners into `result` = (class, index, delta) and resets the counter for the next call.
    `move_delta(data, t, n) -> (move index, delta)` either reads the fitness array (`stored_delta`)
    or evaluates move t on the spot (fused: no fitness array written and read back); t is the
    thread's work item, which may visit the moves in another order than their index for coalesced
    reads -- ties still go to the lowest index."""
    zero = np.zeros(1, delta_dtype)[0]

    @cuda.jit
    def select(mode, data, size, flags, current, best, tie_key, sol, expiry, it, aspiration, n, winners, result):
        """winners: each block's best (class, delta, rank, index arrays) and the ticket that finds the last block."""
        bc, bd, br, bi, ticket = winners
        sc = cuda.shared.array(REDUCE_BLOCK, np.int64)
        sd = cuda.shared.array(REDUCE_BLOCK, delta_dtype)
        sr = cuda.shared.array(REDUCE_BLOCK, np.uint64)
        si = cuda.shared.array(REDUCE_BLOCK, np.int64)
        last = cuda.shared.array(1, np.int32)
        tid = cuda.threadIdx.x
        c_best = np.int64(3)
        d_best = zero
        r_best = np.uint64(0)
        i_best = np.int64(-1)
        for t in range(cuda.grid(1), size, cuda.gridsize(1)):
            idx, d = move_delta(data, t, n)
            c, d, r = move_key(mode, idx, d, flags, current, best, tie_key, sol, expiry, it, aspiration, n)
            if i_best < 0 or key_less(c, d, r, idx, c_best, d_best, r_best, i_best):
                c_best, d_best, r_best, i_best = c, d, r, idx
        block_min(sc, sd, sr, si, tid, REDUCE_BLOCK, c_best, d_best, r_best, i_best)
        if tid == 0:
            b = cuda.blockIdx.x
            bc[b] = sc[0]
            bd[b] = sd[0]
            br[b] = sr[0]
            bi[b] = si[0]
            cuda.threadfence()  # the winner is visible to every block before the ticket is
            last[0] = 1 if cuda.atomic.add(ticket, 0, 1) == cuda.gridDim.x - 1 else 0
        cuda.syncthreads()
        if last[0] == 1:
            c_best = np.int64(3)
            d_best = zero
            r_best = np.uint64(0)
            i_best = np.int64(-1)
            for b in range(tid, cuda.gridDim.x, REDUCE_BLOCK):
                if bi[b] >= 0 and (i_best < 0 or key_less(bc[b], bd[b], br[b], bi[b], c_best, d_best, r_best,
                                                           i_best)):
                    c_best, d_best, r_best, i_best = bc[b], bd[b], br[b], bi[b]
            block_min(sc, sd, sr, si, tid, REDUCE_BLOCK, c_best, d_best, r_best, i_best)
            if tid == 0:
                result[0] = sc[0]
                result[1] = si[0]
                result[2] = sd[0]
                ticket[0] = 0

    return select


