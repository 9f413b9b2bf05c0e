"""Tabu searches over large neighbourhoods resident on the GPU (`--backend gpu-resident
--algorithm tabu` on TSP swap / 2-opt and PPP Hamming-1/2/3): one cooperative kernel a chunk of
iterations, nothing copied between iterations; not the Dask `grid` backend.

K searches (one, by default, spread over the whole GPU) share the grid in one of two shapes
(WholeGpuTabu.shape_for):
- lockstep: each search has V blocks (virtual blocks under the simulator, whose one block plays
  them in turn); each iteration has two grid-wide phases:
  - evaluate: every thread takes a strided share of its search's moves, evaluates each on the
    spot (the device functions of the `gpu` backend) with the search's tabu test, aspiration and
    tie rank, keeps its best (class, delta, rank, move); each block reduces its threads' bests in
    shared memory and writes one winner (stage one); grid barrier;
  - apply: every block of a search reduces the search's V winners itself (stage two: no block
    waits for another to publish the move) and writes its share of the moved solution and its
    incremental structures into the other half of double buffers (TSP: tour, path prefixes
    forward and backward and tour edges, each O(1) per position from the old ones; PPP: the bit
    vector, while Y = AV and its histogram are updated in place, one row per thread); one thread
    writes the tabu record and the search's state (iteration, current, best, stream) into the
    other half of WORK; grid barrier;
- queue: past the resident blocks, a persistent grid whose blocks each take a search's next
  sub-chunk of iterations from a queue and run it alone (block barriers only), the search's state
  in global memory between items.
The fitness array never exists, let alone travels to the host. Tie ranks and tenures come from
each search's SplitMix64 stream: search q gives exactly the trajectory of `lsbench run
--algorithm tabu --backend cpu` with seed q.
"""

import numpy as np
from numba import config, cuda, int64, uint64

from lsbench.errors import LsbenchError

from .. import device as dv
from .. import device_name, require
from ..runtime.chunks import (IMPROVEMENT_CAP, MAX_THREADS, NO_ASPIRATION, chunk_launcher, end_lockstep,
                              item_of, never_tabu, pass_on, read_search, run_searches, save_search, start_item,
                              tabu_starts, take_item, write_search)
from ..adapters.ppp_flip import flip_indices
from ..runtime.block_reduce import block_min, key_less
from ..runtime.launch import narrow
from ..runtime.tenure import next_tenure

SIM = config.ENABLE_CUDASIM
TSP_SWAP, TSP_TWO_OPT = 0, 1
QUEUE_ITEM = 64  # queue shape: iterations of a search per item, at most


@cuda.jit(device=True, inline=True)
def tabu_class(tabu, current, d, asp):
    """Class 1: tabu and not aspired (it does not beat the best); 0 otherwise."""
    return int64(1) if tabu and not current + d < asp else int64(0)


@cuda.jit(device=True)
def grid_winner(red_c, red_d, red_r, red_i, WC, WD, WR, WI, V, tid, T):
    """Stage two, run by every block after the grid barrier: the best of the V block winners."""
    bc = int64(3)
    bd = int64(0)
    br = uint64(0)
    bi = int64(-1)
    for g in range(tid, V, T):
        if WI[g] >= 0 and (bi < 0 or key_less(WC[g], WD[g], WR[g], WI[g], bc, bd, br, bi)):
            bc, bd, br, bi = WC[g], WD[g], WR[g], WI[g]
    block_min(red_c, red_d, red_r, red_i, tid, T, bc, bd, br, bi)
    return red_i[0], red_d[0]


@cuda.jit(device=True, inline=True)
def publish(red_c, red_d, red_r, red_i, WC, WD, WR, WI, v, tid, T, bc, bd, br, bi):
    """Stage one: the block's best of virtual block v into the winners."""
    block_min(red_c, red_d, red_r, red_i, tid, T, bc, bd, br, bi)
    if tid == 0:
        WC[v] = red_c[0]
        WD[v] = red_d[0]
        WR[v] = red_r[0]
        WI[v] = red_i[0]
        cuda.threadfence()
    cuda.syncthreads()


@cuda.jit(device=True, inline=True)
def reversed_source(k, i, j, two_opt):
    """Position of the old tour that position k of the new one comes from."""
    if two_opt:
        return i + j - k if i <= k <= j else k
    return j if k == i else (i if k == j else k)


@cuda.jit(device=True, inline=True)
def step_done(IMP_IT, IMP_OBJ, s, it, current, n_imp, best, writer):
    """(iterations done, current, improvements, best) after iteration `it`; the writer records an
    improvement of the best."""
    if current < best:
        if writer:
            IMP_IT[n_imp, s] = it
            IMP_OBJ[n_imp, s] = current
        return it, current, n_imp + 1, current
    return it, current, n_imp, best


@cuda.jit(device=True, inline=True)
def kept(bc, bd, br, bi, tabu, current, d, asp, idx, tie_key):
    """A thread's best (class, delta, rank, move) once move idx (delta d) is seen."""
    c = tabu_class(tabu, current, d, asp)
    r = dv.tie_rank(idx, tie_key)
    if bi < 0 or key_less(c, d, r, idx, bc, bd, br, bi):
        return c, d, r, int64(idx)
    return bc, bd, br, bi


# The problems' parts of the kernel, each over the problem's tuple of device arrays (`data`) and
# `mode` (TSP: 2-opt or swap; PPP: k); make_tabu_kernel puts them into one search loop.

@cuda.jit(device=True, inline=True)
def tsp_searches(data):
    return data[1].shape[0]


@cuda.jit(device=True, inline=True)
def tsp_consistent(data, s, it, current, mode):
    """The tracked objective against the tour's own prefixes (2-opt keeps them incrementally)."""
    D, TOUR, FWD, BWD, EDGE, EXP = data
    n = FWD.shape[2]
    old = (it - 1) % 2
    return mode != TSP_TWO_OPT or FWD[s, old, n - 1] + EDGE[s, old, n - 1] == current


@cuda.jit(device=True, inline=True)
def tsp_thread_best(data, s, it, current, asp, tie_key, first, stride, mode):
    """This thread's best (class, delta, rank, move) of moves first, first + stride, ..."""
    D, TOUR, FWD, BWD, EDGE, EXP = data
    n = TOUR.shape[2]
    old = (it - 1) % 2
    t = TOUR[s, old]
    fwd = FWD[s, old]
    bwd = BWD[s, old]
    edge = EDGE[s, old]
    exp = EXP[s]
    bc = int64(3)
    bd = int64(0)
    br = uint64(0)
    bi = int64(-1)
    for idx in range(first, n * (n - 1) // 2, stride):
        i, j = dv.index_to_pair(idx, n)
        if mode == TSP_TWO_OPT:
            d = int64(dv.tsp_two_opt_delta(D, t, fwd, bwd, edge, i, j))
            tabu = exp[t[(i - 1 + n) % n], t[j]] >= it or exp[t[i], t[(j + 1) % n]] >= it
        else:
            d = int64(dv.tsp_swap_delta(D, t, i, j))
            tabu = exp[t[j], t[i]] >= it
        bc, bd, br, bi = kept(bc, bd, br, bi, tabu, current, d, asp, idx, tie_key)
    return bc, bd, br, bi


@cuda.jit(device=True, inline=True)
def tsp_apply(data, BEST_SOL, s, it, move, improved, first, stride, mode):
    """Positions first, first + stride, ... of the tour after `move`, and its path prefixes and
    edges (2-opt), O(1) each from the old ones, into the other half of the double buffers."""
    D, TOUR, FWD, BWD, EDGE, EXP = data
    two_opt = mode == TSP_TWO_OPT
    n = TOUR.shape[2]
    i, j = dv.index_to_pair(move, n)
    old = (it - 1) % 2
    new = it % 2
    t = TOUR[s, old]
    fwd = FWD[s, old]
    bwd = BWD[s, old]
    f_i = b_i = f_j = b_j = int64(0)
    if two_opt:
        pi = t[(i - 1 + n) % n]
        f_i = int64(0) if i == 0 else fwd[i - 1] + D[pi, t[j]]  # the new prefixes at i and j
        b_i = int64(0) if i == 0 else bwd[i - 1] + D[t[j], pi]
        f_j = f_i + bwd[j] - bwd[i]
        b_j = b_i + fwd[j] - fwd[i]
    for k in range(first, n, stride):
        src = reversed_source(k, i, j, two_opt)
        TOUR[s, new, k] = t[src]
        if improved:
            BEST_SOL[s, k] = t[src]
        if two_opt:
            if k < i:
                FWD[s, new, k] = fwd[k]
                BWD[s, new, k] = bwd[k]
            elif k <= j:
                FWD[s, new, k] = f_i + bwd[j] - bwd[src]
                BWD[s, new, k] = b_i + fwd[j] - fwd[src]
            else:
                FWD[s, new, k] = f_j + D[t[i], t[j + 1]] + fwd[k] - fwd[j + 1]
                BWD[s, new, k] = b_j + D[t[j + 1], t[i]] + bwd[k] - bwd[j + 1]
            EDGE[s, new, k] = D[t[src], t[reversed_source((k + 1) % n, i, j, two_opt)]]


@cuda.jit(device=True, inline=True)
def tsp_record(data, s, it, move, mode, until):
    D, TOUR, FWD, BWD, EDGE, EXP = data
    n = TOUR.shape[2]
    i, j = dv.index_to_pair(move, n)
    t = TOUR[s, (it - 1) % 2]
    if mode == TSP_TWO_OPT:  # lsbench.problems.tsp.two_opt_tabu_record
        EXP[s, t[(i - 1 + n) % n], t[i]] = until
        EXP[s, t[j], t[(j + 1) % n]] = until
    else:  # lsbench.problems.permutation.position_swap_tabu_record
        EXP[s, t[i], t[j]] = until


@cuda.jit(device=True, inline=True)
def ppp_searches(data):
    return data[2].shape[0]


@cuda.jit(device=True, inline=True)
def ppp_size(data, k):
    n = data[2].shape[2]
    return n if k == 1 else (n * (n - 1) // 2 if k == 2 else n * (n - 1) * (n - 2) // 6)


@cuda.jit(device=True, inline=True)
def ppp_consistent(data, s, it, current, k):
    return True


@cuda.jit(device=True, inline=True)
def ppp_thread_best(data, s, it, current, asp, tie_key, first, stride, k):
    A, TH, X, Y, HIST, SCRATCH, EXP = data
    n = X.shape[2]
    x = X[s, (it - 1) % 2]
    y = Y[s]
    hist = HIST[s]
    exp = EXP[s]
    scratch = SCRATCH[cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x]  # this thread's zeroed histogram
    bc = int64(3)
    bd = int64(0)
    br = uint64(0)
    bi = int64(-1)
    for idx in range(first, ppp_size(data, k), stride):
        k1, k2, k3 = flip_indices(idx, n, k)
        d = int64(dv.ppp_flip_delta(A, x, y, hist, TH, k1, k2, k3, scratch))
        tabu = exp[k1] >= it or (k2 >= 0 and exp[k2] >= it) or (k3 >= 0 and exp[k3] >= it)
        bc, bd, br, bi = kept(bc, bd, br, bi, tabu, current, d, asp, idx, tie_key)
    return bc, bd, br, bi


@cuda.jit(device=True, inline=True)
def ppp_apply(data, BEST_SOL, s, it, move, improved, first, stride, k):
    """Rows first, first + stride, ... of Y and its histogram in place; the bits into the other half."""
    A, TH, X, Y, HIST, SCRATCH, EXP = data
    m = Y.shape[1]
    n = X.shape[2]
    n1 = TH.shape[0]
    k1, k2, k3 = flip_indices(move, n, k)
    x = X[s, (it - 1) % 2]
    y = Y[s]
    c1, c2, c3 = dv.flip_signs(x, k1, k2, k3)
    for j in range(first, m, stride):
        was = y[j]
        now = dv.row_after_flip(A, y, j, k1, k2, k3, c1, c2, c3)
        if now != was:
            if 0 <= was < n1:
                cuda.atomic.add(HIST, (s, was), -1)
            if 0 <= now < n1:
                cuda.atomic.add(HIST, (s, now), 1)
            y[j] = now
    for q in range(first, n, stride):
        bit = 1 - x[q] if q == k1 or q == k2 or q == k3 else x[q]
        X[s, it % 2, q] = bit
        if improved:
            BEST_SOL[s, q] = bit


@cuda.jit(device=True, inline=True)
def ppp_record(data, s, it, move, k, until):
    EXP = data[6]
    k1, k2, k3 = flip_indices(move, data[2].shape[2], k)
    EXP[s, k1] = until  # lsbench.problems.ppp.PppHamming.tabu_record
    if k2 >= 0:
        EXP[s, k2] = until
    if k3 >= 0:
        EXP[s, k3] = until


def make_tabu_kernel(searches_of, consistent, thread_best, apply_move, record):
    """The search loop of K tabu searches (see the module docstring) over one problem's parts."""

    @cuda.jit
    def tabu_kernel(data, winners, searches, QUEUE, RING, mode, V, subchunk, tenure_min, tenure_max, use_aspiration,
                    target, n_iter, item0, seq0, push0):
        WC, WD, WR, WI = winners
        STATE, RNG, WORK, WRNG, BEST_SOL, IMP_IT, IMP_OBJ, ERR = searches
        red_c = cuda.shared.array(MAX_THREADS, int64)
        red_d = cuda.shared.array(MAX_THREADS, int64)
        red_r = cuda.shared.array(MAX_THREADS, uint64)
        red_i = cuda.shared.array(MAX_THREADS, int64)
        job = cuda.shared.array(2, int64)
        grid = cuda.cg.this_grid()
        tid = cuda.threadIdx.x
        T = cuda.blockDim.x
        b = cuda.blockIdx.x
        G = cuda.gridDim.x
        K = searches_of(data)
        if subchunk == 0:  # lockstep: item u = (search u // V, its virtual block u % V), a grid barrier per phase
            for step in range(n_iter):
                for u in range(b, K * V, G):
                    s = u // V
                    v = u % V
                    its, current, best, n_imp, state = read_search(STATE, RNG, WORK, WRNG, s, step)
                    if best <= target:
                        continue
                    it = its + 1
                    if v == 0 and tid == 0 and not consistent(data, s, it, current, mode):
                        ERR[0] = it
                        ERR[1] = s + 1
                    bc, bd, br, bi = thread_best(data, s, it, current, best if use_aspiration else NO_ASPIRATION,
                                                 dv.mix64(state + dv.GOLDEN), v * T + tid, V * T, mode)
                    publish(red_c, red_d, red_r, red_i, WC, WD, WR, WI, u, tid, T, bc, bd, br, bi)
                grid.sync()
                for u in range(b, K * V, G):
                    s = u // V
                    v = u % V
                    its, current, best, n_imp, state = read_search(STATE, RNG, WORK, WRNG, s, step)
                    if best > target:
                        it = its + 1
                        move, delta = grid_winner(red_c, red_d, red_r, red_i, WC[s * V:s * V + V],
                                                  WD[s * V:s * V + V], WR[s * V:s * V + V], WI[s * V:s * V + V], V,
                                                  tid, T)
                        state, tenure = next_tenure(state + dv.GOLDEN, tenure_min, tenure_max)
                        apply_move(data, BEST_SOL, s, it, move, current + delta < best, v * T + tid, V * T, mode)
                        if v == 0 and tid == 0:
                            record(data, s, it, move, mode, it + tenure)
                        its, current, n_imp, best = step_done(IMP_IT, IMP_OBJ, s, it, current + delta, n_imp, best,
                                                              v == 0 and tid == 0)
                    if v == 0 and tid == 0:
                        write_search(WORK, WRNG, s, step, its, current, best, n_imp, state)
                    cuda.syncthreads()  # the winner is read from shared memory before the next item's reduction
                grid.sync()
            end_lockstep(STATE, RNG, WORK, WRNG, b, G, K, V, tid, n_iter)
            return
        subchunks = (n_iter + subchunk - 1) // subchunk
        # queue: one block runs a search's sub-chunk, the state in global memory between items
        while take_item(QUEUE, RING, job, tid, item0, seq0, K, subchunks):
            s, sub = item_of(job, seq0)
            its, current, best, n_imp, state = start_item(STATE, RNG, s, sub)
            for step in range(min(subchunk, n_iter - sub * subchunk)):
                if best <= target:
                    break
                it = its + 1
                if tid == 0 and not consistent(data, s, it, current, mode):
                    ERR[0] = it
                    ERR[1] = s + 1
                state += dv.GOLDEN
                bc, bd, br, bi = thread_best(data, s, it, current, best if use_aspiration else NO_ASPIRATION,
                                             dv.mix64(state), tid, T, mode)
                block_min(red_c, red_d, red_r, red_i, tid, T, bc, bd, br, bi)  # ends with a block barrier
                move = red_i[0]
                delta = red_d[0]
                state, tenure = next_tenure(state, tenure_min, tenure_max)
                apply_move(data, BEST_SOL, s, it, move, current + delta < best, tid, T, mode)
                if tid == 0:
                    record(data, s, it, move, mode, it + tenure)
                its, current, n_imp, best = step_done(IMP_IT, IMP_OBJ, s, it, current + delta, n_imp, best, tid == 0)
                cuda.syncthreads()
            if tid == 0:
                save_search(STATE, RNG, s, its, current, best, n_imp, state)
            pass_on(QUEUE, RING, tid, s, sub, subchunks, seq0, push0)
    return tabu_kernel


tsp_tabu_kernel = make_tabu_kernel(tsp_searches, tsp_consistent, tsp_thread_best, tsp_apply, tsp_record)
ppp_tabu_kernel = make_tabu_kernel(ppp_searches, ppp_consistent, ppp_thread_best, ppp_apply, ppp_record)


class WholeGpuTabu:
    """K tabu searches over a large neighbourhood (TSP swap / 2-opt, PPP Hamming-k) as one
    cooperative kernel; `run` returns, per seed, what `lsbench.search.tabu.TabuSearch.run` returns
    on the CPU with that seed. The shape comes from `shape_for` (see its docstring); `blocks`:
    blocks of each search's reduction (virtual blocks: the simulator plays them in turn in its
    one block); `persistent`: blocks of a queue grid (forces the queue; tests)."""

    def __init__(self, problem, nb, prm, threads=None, blocks=None, persistent=None):
        require("gpu-resident")
        key = f"{nb.name}@{problem.kind}"
        if key not in ("swap@tsp", "2opt@tsp", "hamming1@ppp", "hamming2@ppp", "hamming3@ppp"):
            raise LsbenchError(f"--backend gpu-resident --algorithm tabu: runs TSP swap/2opt, PPP hamming1-3 and "
                               f"PFSP insertion, not {nb.name} on {problem.kind}")
        self.problem, self.nb, self.prm = problem, nb, prm
        self.threads = int(threads) if threads else (32 if SIM else 256)
        if self.threads < 32 or self.threads > MAX_THREADS or self.threads & (self.threads - 1):
            raise LsbenchError(f"--param block: threads per block must be a power of two in [32, {MAX_THREADS}], "
                               f"got {self.threads}")
        for name, value in (("blocks", blocks), ("persistent", persistent)):
            if value is not None and int(value) < 1:
                raise LsbenchError(f"--param {name}: must be at least 1, got {value}")
        self.want_blocks = None if blocks is None else int(blocks)
        self.want_persistent = None if persistent is None else int(persistent)
        if problem.kind == "tsp":
            self.data = (cuda.to_device(narrow(problem.matrix("the tabu matrix kernel"), 4)),)
        else:
            self.data = (cuda.to_device(narrow(problem.a, 3)), cuda.to_device(problem.target_hist))
        self.shape = None
        self._fit = None
        self._state = None  # (K, device buffers of K searches)
        self.kernel_s = 0.0

    def _kernel(self):
        return tsp_tabu_kernel if self.problem.kind == "tsp" else ppp_tabu_kernel

    def fit(self):
        """Blocks of this kernel resident at once (a cooperative launch needs them all)."""
        if self._fit is None:
            if SIM:
                self._fit = 1
            else:
                args, _dev = self._args(self._buffers([self._dummy()], 1), 1, 1, 0)
                compiled = self._kernel()._compile_for_args(*args)
                self._fit = compiled.max_cooperative_grid_blocks(self.threads, 0)
                if self._fit < 1:
                    raise LsbenchError(f"--param block: {self.threads} threads per block of the {self.problem.kind} "
                                       "kernel do not fit an SM; try 256")
        return self._fit

    def shape_for(self, K):
        """The grid for K searches. While each search can have two or more of the resident blocks
        (no more than its moves need), lockstep: V blocks each, a grid barrier per phase. Else a
        queue: a persistent grid of up to every resident block, each block taking a search's next
        sub-chunk of iterations and running it alone, the search's state in global memory between
        items: no barrier across the grid (faster than the lockstep with one block a search), and K one past a multiple of the
        grid does not cost a wave."""
        T = self.threads
        need = max(1, -(-self.nb.size // T))
        fit = self.fit()
        V = self.want_blocks or (2 if SIM else max(1, min(need, fit // K)))
        if self.want_persistent is not None or (not SIM and self.want_blocks is None and V == 1):
            blocks = self.want_persistent or min(K, fit)
            if not SIM and blocks > fit:
                raise LsbenchError(f"--param persistent={blocks}: more blocks than the {fit} this GPU runs at once")
            return {"searches": K, "mode": "queue", "blocks": blocks, "threads": T, "reduction_blocks": 1,
                    "persistent_blocks": blocks, "iterations_per_queue_item": 2 if SIM else QUEUE_ITEM}
        blocks = 1 if SIM else K * V
        if blocks > fit:
            raise LsbenchError(f"--param blocks={V}: {K} searches x {V} blocks exceed the {fit} blocks this GPU "
                               "runs at once")
        return {"searches": K, "mode": "lockstep", "blocks": blocks, "threads": T, "reduction_blocks": V,
                "persistent_blocks": 0, "iterations_per_queue_item": None}

    def _dummy(self):
        return (np.arange(self.problem.size) if self.problem.kind == "tsp" else np.zeros(self.problem.size, np.int64))

    def _buffers(self, sols, blocks):
        """Device state of K searches from start solutions `sols`."""
        pr, n, K = self.problem, self.problem.size, len(sols)
        if pr.kind == "tsp":
            from lsbench.problems.tsp import path_prefix, tour_edges
            tour = np.zeros((K, 2, n), np.int32)
            fwd, bwd, edge = (np.zeros((K, 2, n), np.int64) for _ in range(3))
            for q, sol in enumerate(sols):
                tour[q, 0] = sol
                fwd[q, 0], bwd[q, 0] = path_prefix(pr.d, sol)
                edge[q, 0] = tour_edges(pr.d, sol)
            arrays = tuple(cuda.to_device(x) for x in (tour, fwd, bwd, edge)) + (self._tabu_memory(K),)
            mode = TSP_TWO_OPT if self.nb.name == "2opt" else TSP_SWAP
        else:
            x = np.zeros((K, 2, n), np.int64)
            y = np.zeros((K, pr.m), np.int64)
            hist = np.zeros((K, pr.target_hist.shape[0]), np.int64)
            for q, sol in enumerate(sols):
                x[q, 0] = sol
                yq, hq = self.nb.state(sol)
                y[q], hist[q] = yq, hq
            scratch = np.zeros((blocks * self.threads, pr.target_hist.shape[0]), np.int32)
            arrays = tuple(cuda.to_device(a) for a in (x, y, hist, scratch)) + (self._tabu_memory(K),)
            mode = self.nb.k
        return arrays, mode

    def _tabu_memory(self, K):
        """K copies of the neighbourhood's empty tabu memory (every expiry -1), filled on the device:
        K n x n TSP matrices need not exist on the host."""
        empty = self.nb.tabu_memory()
        if (empty != -1).any():
            raise LsbenchError(f"{self.nb.name}: an empty tabu memory is all -1 (internal error)")
        return never_tabu((K, *empty.shape))

    def _args(self, state, K, V, subchunk):
        """(kernel arguments, {name: the per-search arrays the host reads and writes})."""
        arrays, mode = state
        n = self.problem.size
        winners = (cuda.device_array(K * V, np.int64), cuda.device_array(K * V, np.int64),
                   cuda.device_array(K * V, np.uint64), cuda.device_array(K * V, np.int64))
        named = {"STATE": cuda.device_array((K, 4), np.int64), "RNG": cuda.device_array(K, np.uint64),
                 "WORK": cuda.device_array((K, 2, 4), np.int64), "WRNG": cuda.device_array((K, 2), np.uint64),
                 "BEST_SOL": cuda.device_array((K, n), np.int64),
                 "IMP_IT": cuda.device_array((IMPROVEMENT_CAP, K), np.int64),
                 "IMP_OBJ": cuda.device_array((IMPROVEMENT_CAP, K), np.int64),
                 "ERR": cuda.to_device(np.zeros(2, np.int64)), "QUEUE": cuda.device_array(3, np.int64),
                 "RING": cuda.device_array(1, np.int64)}
        prm = self.prm
        scalars = (mode, V, subchunk, prm["tenure_min"], prm["tenure_max"], 1 if prm["aspiration"] else 0, 0, 1,
                   0, 0, 0)
        searches = tuple(named[k] for k in ("STATE", "RNG", "WORK", "WRNG", "BEST_SOL", "IMP_IT", "IMP_OBJ", "ERR"))
        return [(*self.data, *arrays), winners, searches, named["QUEUE"], named["RING"],
                *(np.int64(x) for x in scalars)], named

    def run(self, seeds, stop, progress=None, chunk=None):
        """K = len(seeds) searches, each the CPU search with its seed."""
        pr, nb, prm = self.problem, self.nb, self.prm
        sols, states, starts = tabu_starts(pr, seeds)
        if self.shape is None or self.shape["searches"] != len(seeds):
            self.shape = self.shape_for(len(seeds))
        V, blocks = self.shape["reduction_blocks"], self.shape["blocks"]
        subchunk = self.shape["iterations_per_queue_item"] or 0
        args, dev = self._args(self._buffers(sols, blocks), len(seeds), V, subchunk)
        launch = chunk_launcher(self._kernel()[blocks, self.threads], args, dev, sols, states, starts, blocks,
                                subchunk > 0)
        results, self.kernel_s = run_searches(launch, dev, stop, nb.size, starts, seeds, prm, progress, chunk,
                                              f"gpu-resident {nb.name}@{pr.kind}")
        return results

    def describe(self):
        shape = self.shape or {}
        K = shape.get("searches", 1)
        if shape.get("mode") == "queue":
            how = (f"{K} {self.nb.name} tabu searches on a persistent grid of {shape['blocks']} blocks taking "
                   f"sub-chunks of up to {shape['iterations_per_queue_item']} iterations from a queue")
        elif K > 1:
            how = (f"{K} {self.nb.name} tabu searches in lockstep over the GPU, {shape['reduction_blocks']} blocks "
                   "each (cooperative kernel, two-stage reduction per search)")
        else:
            how = f"one {self.nb.name} tabu search over the whole GPU (cooperative kernel, grid-wide two-stage reduction)"
        return {"backend": "gpu-resident", "device": device_name(), "model": how, **shape}
