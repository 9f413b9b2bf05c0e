"""A tabu search spread over the whole GPU for large neighbourhoods (`--backend gpu-resident
--algorithm tabu` on TSP swap / 2-opt and PPP Hamming-1/2/3): one cooperative grid, not the Dask
`grid` backend.

One search over the whole GPU, one cooperative kernel per chunk of iterations, nothing copied
between iterations. Each iteration has two grid-wide phases:
- evaluate: every thread takes a grid-stride share of the moves, evaluates each on the spot
  (the device functions of the `gpu` backend) with the search's tabu test, aspiration and tie
  rank, keeps its best (class, delta, rank, move); each block reduces its threads' bests in
  shared memory and writes one winner (stage one); grid barrier;
- apply: every block reduces all the winners itself (stage two: no block waits for another to
  publish the move), the grid writes the moved solution and its incremental structures into
  the other half of double buffers (TSP: tour, path prefixes forward and backward and tour edges,
  each O(1) per position from the old ones; PPP: the bit vector, while Y = AV and its histogram
  are updated in place, one row per thread), one thread writes the tabu record; grid barrier.
The fitness array never exists, let alone travels to the host. Tie ranks and tenures come from
the search's SplitMix64 stream: one search gives exactly the trajectory of `lsbench run
--algorithm tabu --backend cpu` with the same seed. Under the simulator (one block per grid) the
block plays several `virtual` blocks in turn, so the two-stage reduction is still exercised.
"""

import numpy as np
from numba import config, cuda, int64, uint64

from lsbench import rng
from lsbench.errors import LsbenchError
from lsbench.params import Param
from lsbench.search.common import start_solution

from . import device as dv
from . import device_name, require
from .chunks import (IMPROVEMENT_CAP, MAX_THREADS, NO_ASPIRATION, STATE_FIELDS, WholeGpuEngine, load_state,
                     run_chunks, save_state)
from .kernels import block_min, key_less

SIM = config.ENABLE_CUDASIM
TSP_SWAP, TSP_TWO_OPT = 0, 1


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
def flip_indices(idx, n, k):
    """PPP Hamming-k move idx as the bits it flips (k1, k2, k3), -1 for the ones it has not."""
    if k == 1:
        return idx, -1, -1
    if k == 2:
        k1, k2 = dv.index_to_pair(idx, n)
        return k1, k2, -1
    return dv.index_to_triple(idx, n)


@cuda.jit(device=True, inline=True)
def next_tenure(state, tenure_min, tenure_max):
    """(state, tenure): rng.between(state, tenure_min, tenure_max) when they differ."""
    if tenure_max == tenure_min:
        return state, int64(tenure_min)
    state += dv.GOLDEN
    return state, tenure_min + int64((dv.mix64(state) >> uint64(11)) % uint64(tenure_max - tenure_min + 1))


@cuda.jit(device=True, inline=True)
def reversed_source(k, i, j, two_opt):
    """Position of the old tour that position k of the new one comes from."""
    if two_opt:
        return i + j - k if i <= k <= j else k
    return j if k == i else (i if k == j else k)


@cuda.jit
def tsp_tabu_kernel(D, TOUR, FWD, BWD, EDGE, EXP, WC, WD, WR, WI, STATE, RNG, BEST_SOL, IMP_IT, IMP_OBJ,
                    two_opt, V, tenure_min, tenure_max, use_aspiration, target, it0, n_iter):
    red_c = cuda.shared.array(MAX_THREADS, int64)
    red_d = cuda.shared.array(MAX_THREADS, int64)
    red_r = cuda.shared.array(MAX_THREADS, uint64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    grid = cuda.cg.this_grid()
    tid = cuda.threadIdx.x
    T = cuda.blockDim.x
    b = cuda.blockIdx.x
    G = cuda.gridDim.x
    n = TOUR.shape[1]
    size = n * (n - 1) // 2
    state, current, best = load_state(STATE, RNG)
    n_imp = 0
    it = it0
    for step in range(n_iter):
        it += 1
        old = (it - 1) % 2  # iteration it reads half (it - 1) % 2 and writes half it % 2
        t = TOUR[old]
        fwd = FWD[old]
        bwd = BWD[old]
        edge = EDGE[old]
        if two_opt and fwd[n - 1] + edge[n - 1] != current:  # all blocks read the same: all stop
            if b == 0 and tid == 0:
                STATE[4] = it
            break
        state += dv.GOLDEN
        tie_key = dv.mix64(state)
        asp = best if use_aspiration else NO_ASPIRATION
        # -- evaluate: a grid-stride share of the moves per thread, stage one per block
        for v in range(b, V, G):
            bc = int64(3)
            bd = int64(0)
            br = uint64(0)
            bi = int64(-1)
            for idx in range(v * T + tid, size, V * T):
                i, j = dv.index_to_pair(idx, n)
                if two_opt:
                    d = int64(dv.tsp_two_opt_delta(D, t, fwd, bwd, edge, i, j))
                    tabu = EXP[t[(i - 1 + n) % n], t[j]] >= it or EXP[t[i], t[(j + 1) % n]] >= it
                else:
                    d = int64(dv.tsp_swap_delta(D, t, i, j))
                    tabu = EXP[t[j], t[i]] >= it
                c = tabu_class(tabu, current, d, asp)
                r = dv.tie_rank(idx, tie_key)
                if bi < 0 or key_less(c, d, r, idx, bc, bd, br, bi):
                    bc, bd, br, bi = c, d, r, int64(idx)
            publish(red_c, red_d, red_r, red_i, WC, WD, WR, WI, v, tid, T, bc, bd, br, bi)
        grid.sync()
        # -- apply: every block takes the grid's winner and writes its share of the new buffers
        move, delta = grid_winner(red_c, red_d, red_r, red_i, WC, WD, WR, WI, V, tid, T)
        i, j = dv.index_to_pair(move, n)
        state, tenure = next_tenure(state, tenure_min, tenure_max)
        new = it % 2
        current += delta
        improved = current < best
        if two_opt:
            pi = t[(i - 1 + n) % n]
            f_i = int64(0) if i == 0 else fwd[i - 1] + D[pi, t[j]]  # the new prefixes at i and j
            b_i = int64(0) if i == 0 else bwd[i - 1] + D[t[j], pi]
            f_j = f_i + bwd[j] - bwd[i]
            b_j = b_i + fwd[j] - fwd[i]
        for k in range(b * T + tid, n, G * T):
            src = reversed_source(k, i, j, two_opt)
            TOUR[new, k] = t[src]
            if improved:
                BEST_SOL[k] = t[src]
            if two_opt:
                if k < i:
                    FWD[new, k] = fwd[k]
                    BWD[new, k] = bwd[k]
                elif k <= j:
                    FWD[new, k] = f_i + bwd[j] - bwd[src]
                    BWD[new, k] = b_i + fwd[j] - fwd[src]
                else:
                    FWD[new, k] = f_j + D[t[i], t[j + 1]] + fwd[k] - fwd[j + 1]
                    BWD[new, k] = b_j + D[t[j + 1], t[i]] + bwd[k] - bwd[j + 1]
                EDGE[new, k] = D[t[src], t[reversed_source((k + 1) % n, i, j, two_opt)]]
        if b == 0 and tid == 0:
            until = it + tenure
            if two_opt:  # lsbench.problems.tsp.two_opt_tabu_record
                EXP[t[(i - 1 + n) % n], t[i]] = until
                EXP[t[j], t[(j + 1) % n]] = until
            else:  # lsbench.problems.permutation.position_swap_tabu_record
                EXP[t[i], t[j]] = until
            if improved:
                IMP_IT[n_imp] = it
                IMP_OBJ[n_imp] = current
        if improved:
            best = current
            n_imp += 1
        grid.sync()
        if best <= target:
            break
    if b == 0 and tid == 0:
        save_state(STATE, RNG, it, current, best, n_imp, state)


@cuda.jit
def ppp_tabu_kernel(A, TH, X, Y, HIST, SCRATCH, EXP, WC, WD, WR, WI, STATE, RNG, BEST_SOL, IMP_IT, IMP_OBJ,
                    k, V, tenure_min, tenure_max, use_aspiration, target, it0, n_iter):
    red_c = cuda.shared.array(MAX_THREADS, int64)
    red_d = cuda.shared.array(MAX_THREADS, int64)
    red_r = cuda.shared.array(MAX_THREADS, uint64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    grid = cuda.cg.this_grid()
    tid = cuda.threadIdx.x
    T = cuda.blockDim.x
    b = cuda.blockIdx.x
    G = cuda.gridDim.x
    m = Y.shape[0]
    n = X.shape[1]
    n1 = TH.shape[0]
    size = n if k == 1 else (n * (n - 1) // 2 if k == 2 else n * (n - 1) * (n - 2) // 6)
    scratch = SCRATCH[b * T + tid]  # this thread's zeroed histogram of changes
    state, current, best = load_state(STATE, RNG)
    n_imp = 0
    it = it0
    for step in range(n_iter):
        it += 1
        old = (it - 1) % 2
        x = X[old]
        state += dv.GOLDEN
        tie_key = dv.mix64(state)
        asp = best if use_aspiration else NO_ASPIRATION
        for v in range(b, V, G):
            bc = int64(3)
            bd = int64(0)
            br = uint64(0)
            bi = int64(-1)
            for idx in range(v * T + tid, size, V * T):
                k1, k2, k3 = flip_indices(idx, n, k)
                d = int64(dv.ppp_flip_delta(A, x, Y, HIST, TH, k1, k2, k3, scratch))
                tabu = EXP[k1] >= it or (k2 >= 0 and EXP[k2] >= it) or (k3 >= 0 and EXP[k3] >= it)
                c = tabu_class(tabu, current, d, asp)
                r = dv.tie_rank(idx, tie_key)
                if bi < 0 or key_less(c, d, r, idx, bc, bd, br, bi):
                    bc, bd, br, bi = c, d, r, int64(idx)
            publish(red_c, red_d, red_r, red_i, WC, WD, WR, WI, v, tid, T, bc, bd, br, bi)
        grid.sync()
        move, delta = grid_winner(red_c, red_d, red_r, red_i, WC, WD, WR, WI, V, tid, T)
        k1, k2, k3 = flip_indices(move, n, k)
        state, tenure = next_tenure(state, tenure_min, tenure_max)
        new = it % 2
        current += delta
        improved = current < best
        c1, c2, c3 = dv.flip_signs(x, k1, k2, k3)
        for j in range(b * T + tid, m, G * T):  # Y and its histogram in place: row j is this thread's
            was = Y[j]
            now = dv.row_after_flip(A, Y, j, k1, k2, k3, c1, c2, c3)
            if now != was:
                if 0 <= was < n1:
                    cuda.atomic.add(HIST, was, -1)
                if 0 <= now < n1:
                    cuda.atomic.add(HIST, now, 1)
                Y[j] = now
        for q in range(b * T + tid, n, G * T):
            bit = 1 - x[q] if q == k1 or q == k2 or q == k3 else x[q]
            X[new, q] = bit
            if improved:
                BEST_SOL[q] = bit
        if b == 0 and tid == 0:
            until = it + tenure  # lsbench.problems.ppp.PppHamming.tabu_record
            EXP[k1] = until
            if k2 >= 0:
                EXP[k2] = until
            if k3 >= 0:
                EXP[k3] = until
            if improved:
                IMP_IT[n_imp] = it
                IMP_OBJ[n_imp] = current
        if improved:
            best = current
            n_imp += 1
        grid.sync()
        if best <= target:
            break
    if b == 0 and tid == 0:
        save_state(STATE, RNG, it, current, best, n_imp, state)


class WholeGpuTabu:
    """Tabu search over a large neighbourhood (TSP swap / 2-opt, PPP Hamming-k) as one cooperative
    kernel over the whole GPU; `run` returns what `lsbench.search.tabu.TabuSearch.run` returns on
    the CPU with the same seed. `blocks`: blocks of the reduction (default: as many as are resident
    at once, no more than the moves need); the simulator runs them in turn in its one block."""

    def __init__(self, problem, nb, prm, threads=None, blocks=None):
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
        if blocks is not None and int(blocks) < 1:
            raise LsbenchError(f"--param blocks: must be at least 1, got {blocks}")
        self.want_blocks = None if blocks is None else int(blocks)
        from .evaluator import narrow
        if problem.kind == "tsp":
            self.data = (cuda.to_device(narrow(problem.d, 4)),)
        else:
            self.data = (cuda.to_device(narrow(problem.a, 3)), cuda.to_device(problem.target_hist))
        self.shape = None
        self.kernel_s = 0.0

    def _kernel(self):
        return tsp_tabu_kernel if self.problem.kind == "tsp" else ppp_tabu_kernel

    def _grid(self, args):
        """(real blocks, virtual blocks): a cooperative launch needs every block resident at once."""
        T = self.threads
        need = max(1, -(-self.nb.size // T))
        if SIM:
            return 1, self.want_blocks or 2
        compiled = self._kernel()._compile_for_args(*args(1, 1))
        fit = compiled.max_cooperative_grid_blocks(T, 0)
        if fit < 1:
            raise LsbenchError(f"--param block: {T} threads per block of the {self.problem.kind} kernel do not fit "
                               "an SM; try 256")
        v = self.want_blocks or min(fit, need)
        return min(v, fit), v

    def _buffers(self, sol, blocks, virtual):
        """Device state of one search from start solution `sol`: (arrays, kernel argument builder)."""
        pr, n = self.problem, self.problem.size
        winners = (cuda.device_array(virtual, np.int64), cuda.device_array(virtual, np.int64),
                   cuda.device_array(virtual, np.uint64), cuda.device_array(virtual, np.int64))
        if pr.kind == "tsp":
            from lsbench.problems.tsp import path_prefix, tour_edges
            tour = np.zeros((2, n), np.int32)
            tour[0] = sol
            fwd, bwd, edge = (np.zeros((2, n), np.int64) for _ in range(3))
            fwd[0], bwd[0] = path_prefix(pr.d, sol)
            edge[0] = tour_edges(pr.d, sol)
            arrays = tuple(cuda.to_device(x) for x in (tour, fwd, bwd, edge)) + \
                (cuda.to_device(self.nb.tabu_memory()),) + winners
            mode = TSP_TWO_OPT if self.nb.name == "2opt" else TSP_SWAP
        else:
            x = np.zeros((2, n), np.int64)
            x[0] = sol
            y, hist = self.nb.state(sol)
            scratch = cuda.to_device(np.zeros((blocks * self.threads, pr.target_hist.shape[0]), np.int32))
            arrays = (cuda.to_device(x), cuda.to_device(y), cuda.to_device(hist), scratch,
                      cuda.to_device(self.nb.tabu_memory())) + winners
            mode = self.nb.k
        return arrays, mode

    def _template(self, blocks, virtual):
        sol = (np.arange(self.problem.size) if self.problem.kind == "tsp" else
               np.zeros(self.problem.size, np.int64))
        arrays, mode = self._buffers(sol, blocks, virtual)
        small = (cuda.device_array(STATE_FIELDS, np.int64), cuda.device_array(1, np.uint64),
                 cuda.device_array(self.problem.size, np.int64), cuda.device_array(IMPROVEMENT_CAP, np.int64),
                 cuda.device_array(IMPROVEMENT_CAP, np.int64))
        return (*self.data, *arrays, *small, np.int64(mode), np.int64(virtual), np.int64(0), np.int64(0),
                np.int64(0), np.int64(0), np.int64(0), np.int64(1))

    def run(self, seed, stop, progress=None, chunk=None):
        from lsbench.search.tabu import TabuSearch
        pr, nb, prm = self.problem, self.nb, self.prm
        state = rng.new_state(seed)
        sol = start_solution(pr, state, TabuSearch())
        current = pr.objective(sol)
        if self.shape is None:
            blocks, virtual = self._grid(self._template)
            self.shape = {"blocks": blocks, "threads": self.threads, "reduction_blocks": virtual}
        blocks, virtual = self.shape["blocks"], self.shape["reduction_blocks"]
        arrays, mode = self._buffers(sol, blocks, virtual)
        STATE = cuda.to_device(np.array([0, current, current, 0, 0], dtype=np.int64))
        RNG = cuda.to_device(state)
        BEST_SOL = cuda.to_device(np.asarray(sol, np.int64))
        IMP_IT = cuda.device_array(IMPROVEMENT_CAP, np.int64)
        IMP_OBJ = cuda.device_array(IMPROVEMENT_CAP, np.int64)
        kernel = self._kernel()[blocks, self.threads]

        def launch(it, n_iter, target):
            kernel(*self.data, *arrays, STATE, RNG, BEST_SOL, IMP_IT, IMP_OBJ, np.int64(mode), np.int64(virtual),
                   np.int64(prm["tenure_min"]), np.int64(prm["tenure_max"]), np.int64(1 if prm["aspiration"] else 0),
                   target, np.int64(it), np.int64(n_iter))

        result, self.kernel_s = run_chunks(launch, STATE, IMP_IT, IMP_OBJ, BEST_SOL, stop, nb.size, current, prm,
                                           progress, chunk, f"gpu-resident {nb.name}@{pr.kind}")
        return result

    def describe(self):
        return {"backend": "gpu-resident", "device": device_name(),
                "model": f"one {self.nb.name} tabu search over the whole GPU (cooperative kernel, grid-wide "
                         "two-stage reduction)", **(self.shape or {})}


class WholeGpuTabuEngine(WholeGpuEngine):
    problems = ("tsp", "ppp")
    parameters = (
        Param("block", int, "threads per block (default 1024, fewer where the kernel needs it)", low=32, high=1024),
        Param("blocks", int, "blocks of the cooperative grid (default: as many as fit at once)", low=1),
    )

    def build(self, problem, neighbourhood, prm, params):
        return WholeGpuTabu(problem, neighbourhood, prm, threads=params.get("block"), blocks=params.get("blocks"))

