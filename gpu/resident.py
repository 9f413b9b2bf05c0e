"""Device-resident robust tabu search for QAP (`--backend gpu-resident`): the fast path.

One thread block per search, the whole Ro-TS loop on the GPU (Tsutsui & Fujimoto's MATA design):
- the delta table in shared memory (32-bit where the instance's bound allows, checked), the
  permutation and the update vectors too; flows, distances and the tabu (expiry) matrix in global
  memory, read through the L1 cache;
- selection: each thread scans a strided share of the moves under Taillard's rule (tabu,
  aspiration by improvement and by age), then a block-level lexicographic argmin of
  (class + delta, move index) -- exactly the CPU's rule, lowest index on ties;
- O(1) updates of the moves disjoint from the last swap by all threads, and the 2n-3 O(n)
  recomputations of the moves touching it by whole warps, lanes splitting the sum (warp shuffles
  on the device, a shared-memory reduction under the simulator);
- thread 0 draws the tenures from the search's SplitMix64 stream, as the CPU search does.
K searches (seeds s..s+K-1) run as K blocks; the host launches chunks of iterations and reads back
only the best values, improvements and, at the end, the best solutions. One search gives exactly
the trajectory of `lsbench run --algorithm rots --backend cpu` with the same seed.
"""
import math
import time

import numpy as np
from numba import config, cuda, int32, int64

from lsbench import rng
from lsbench.errors import LsbenchError
from lsbench.search.common import Stop, Trajectory

from . import device as dv

SHUFFLE = not config.ENABLE_CUDASIM  # the simulator has no warp shuffles
CLASS = np.int64(1) << np.int64(60)
MAX_KEY = np.int64(3) * CLASS
SHARED_DELTA_BYTES = 40 * 1024  # static shared memory is capped at 48 KB per block
IMPROVEMENT_CAP = 1 << 12  # improvements recorded per chunk (chunks are no longer than this)

_kernels = {}


def plan(problem, threads=None, delta_in_shared=None):
    """Kernel shape for an instance: delta width (checked bound), where the table lives, threads."""
    n = problem.n
    bound = 4 * n * int(np.abs(problem.a).max()) * int(np.abs(problem.b).max())
    if bound >= 1 << 59:
        raise LsbenchError(f"instance {problem.name}: move costs may exceed 2^59, beyond Ro-TS's key range")
    wide = bound >= (1 << 31) - 1
    moves = n * (n - 1) // 2
    shared = moves * (8 if wide else 4) <= SHARED_DELTA_BYTES
    if delta_in_shared is not None:  # tests force the global-memory table on small instances
        shared = shared and bool(delta_in_shared)
    if threads is None:
        threads = 32 if config.ENABLE_CUDASIM else (512 if moves > 2048 else 256)
    if threads % 32 or not 32 <= threads <= 1024:
        raise LsbenchError(f"--param block: threads per search must be a multiple of 32 in 32..1024, got {threads}")
    return {"n": n, "moves": moves, "wide": wide, "delta_in_shared": shared, "threads": threads}


def kernel_for(n, threads, wide, delta_in_shared, phases=("select", "update", "recompute"), max_registers=None):
    """The compiled kernel for one shape. `phases` drops parts of the iteration for profiling only
    (benchmarks/resident_phases.py): without them the search is not Ro-TS any more.
    `max_registers` caps registers per thread so that more blocks (searches) fit on an SM."""
    key = (n, threads, wide, delta_in_shared, tuple(phases), max_registers)
    if key not in _kernels:
        _kernels[key] = _make_kernel(n, threads, wide, delta_in_shared, tuple(phases), max_registers)
    return _kernels[key]


def _make_kernel(N, T, WIDE, DELTA_SHARED, PHASES, MAX_REGISTERS=None):
    DO_SELECT = "select" in PHASES
    DO_UPDATE = "update" in PHASES
    DO_RECOMPUTE = "recompute" in PHASES
    M = N * (N - 1) // 2
    W = T // 32  # warps per block
    ITEMS = 2 * N - 3  # moves touching the last swap: recomputed in O(n)
    ROUNDS = (ITEMS + W - 1) // W
    DT = int64 if WIDE else int32
    DTN = np.int64 if WIDE else np.int32
    MS = M if DELTA_SHARED else 1

    @cuda.jit(device=True, inline=True)
    def lex_less(k1, i1, k2, i2):
        return k1 < k2 or (k1 == k2 and i1 < i2)

    @cuda.jit(device=True, inline=True)
    def warp_argmin(kb, ib):
        """Lexicographic (key, index) minimum over a warp, in lane 0 (device only: shuffles)."""
        off = 16
        while off > 0:
            k2 = cuda.shfl_down_sync(0xFFFFFFFF, kb, off)
            i2 = cuda.shfl_down_sync(0xFFFFFFFF, ib, off)
            if lex_less(k2, i2, kb, ib):
                kb = k2
                ib = i2
            off //= 2
        return kb, ib

    @cuda.jit(device=True, inline=True)
    def touching(item, r, s):
        """The item-th move touching the last swap (r, s): (x, r) for x != r, then (x, s) for
        x != r, s. Returns x and which of r (0) or s (1) is the other facility."""
        if item < N - 1:
            return (item if item < r else item + 1), 0
        x = item - (N - 1)
        lo = r if r < s else s
        hi = s if r < s else r
        if x >= lo:
            x += 1
        if x >= hi:
            x += 1
        return x, 1

    @cuda.jit(device=True, inline=True)
    def recompute(a, at, b, bt, p, ya, yat, yb, ybt, x, y, c, first, stride):
        """Part (k = first, first + stride, ...) of the O(n) cost of swapping x and y (symmetric in
        x, y); the k-free terms go to the part with first = 0. Row y of a, at and of b, bt seen
        through the permutation are staged in shared memory (ya[c], ...); the rest is read along
        rows, so the lanes of a warp read neighbouring words."""
        px = p[x]
        py = p[y]
        acc = DTN(0)
        for k in range(first, N, stride):
            if k != x and k != y:
                pk = p[k]
                acc += (at[x, k] - yat[c, k]) * (ybt[c, k] - bt[px, pk]) + (a[x, k] - ya[c, k]) * (yb[c, k] - b[px, pk])
        if first == 0:
            acc += (a[x, x] - a[y, y]) * (b[py, py] - b[px, px]) + (a[x, y] - a[y, x]) * (b[py, px] - b[px, py])
        return acc

    @(cuda.jit(max_registers=MAX_REGISTERS) if MAX_REGISTERS else cuda.jit)
    def rots_kernel(a, at, b, bt, mi, mj, P, DELTA, EXP, EXPT, STATE, CUR, BEST, BEST_SOL, IMP_IT, IMP_OBJ, NIMP, DONE,
                    ACTIVE, tenure_min, tenure_max, aspiration, target, it0, n_iter, tenure_cube):
        sid = cuda.blockIdx.x
        if ACTIVE[sid] == 0:  # this search reached its target in an earlier chunk
            return
        tid = cuda.threadIdx.x
        lane = tid % 32
        warp = tid // 32
        p = cuda.shared.array(N, int32)
        u = cuda.shared.array(N, DT)
        v = cuda.shared.array(N, DT)
        w = cuda.shared.array(N, DT)
        z = cuda.shared.array(N, DT)
        ya = cuda.shared.array((2, N), DT)  # rows r, s of a, at and of b, bt through the permutation
        yat = cuda.shared.array((2, N), DT)
        yb = cuda.shared.array((2, N), DT)
        ybt = cuda.shared.array((2, N), DT)
        rkey = cuda.shared.array(T, int64)
        ridx = cuda.shared.array(T, int32)
        scal = cuda.shared.array(8, int64)  # current, best, k, improved, stop, n_imp, done
        dsh = cuda.shared.array(MS, DT)
        dl = dsh if DELTA_SHARED else DELTA[sid]
        ex = EXP[sid]
        ext = EXPT[sid]  # its transpose: the selection reads both along rows
        for q in range(tid, N, T):
            p[q] = P[sid, q]
        if DELTA_SHARED:
            for q in range(tid, M, T):
                dl[q] = DELTA[sid, q]
        if tid == 0:
            scal[0] = CUR[sid]
            scal[1] = BEST[sid]
            scal[4] = 0
            scal[5] = 0
            scal[6] = 0
        state = STATE[sid]
        cuda.syncthreads()
        for step in range(n_iter):
            it = it0 + step + 1
            current = scal[0]
            best = scal[1]
            # -- selection: Taillard's rule, lexicographic (class + delta, index) minimum
            kb = MAX_KEY
            ib = np.int32(M)
            if not DO_SELECT:  # profiling: a fixed pseudo-random move, no scan
                kb = np.int64(0)
                ib = np.int32((it * 7919) % M)
            for k in range(tid, M if DO_SELECT else 0, T):
                i = mi[k]
                j = mj[k]
                d = np.int64(dl[k])
                e1 = ex[i, p[j]]
                e2 = ext[p[i], j]
                oldest = e1 if e1 < e2 else e2
                if oldest < it - aspiration or current + d < best:
                    key = d
                elif oldest < it:
                    key = d + CLASS
                else:
                    key = d + 2 * CLASS
                if key < kb:
                    kb = key
                    ib = k
            if SHUFFLE:
                kb, ib = warp_argmin(kb, ib)
                if lane == 0:
                    rkey[warp] = kb
                    ridx[warp] = ib
                cuda.syncthreads()
                if warp == 0:
                    kb = rkey[lane] if lane < W else MAX_KEY
                    ib = ridx[lane] if lane < W else np.int32(M)
                    kb, ib = warp_argmin(kb, ib)
            else:
                rkey[tid] = kb
                ridx[tid] = ib
                cuda.syncthreads()
                half = T // 2
                while half > 0:
                    if tid < half and lex_less(rkey[tid + half], ridx[tid + half], rkey[tid], ridx[tid]):
                        rkey[tid] = rkey[tid + half]
                        ridx[tid] = ridx[tid + half]
                    cuda.syncthreads()
                    half //= 2
                kb = rkey[0]
                ib = ridx[0]
            # -- thread 0: tabu record (tenures from the search's stream), objective, the swap
            if tid == 0:
                scal[6] += 1
                scal[3] = 0
                if kb >= 2 * CLASS - (CLASS >> 1):  # every move tabu: Taillard's loop keeps the solution
                    scal[2] = -1
                else:
                    scal[2] = ib
                    r = mi[ib]
                    s = mj[ib]
                    state += np.uint64(0x9E3779B97F4A7C15)
                    t1 = _tenure(_mix(state), tenure_min, tenure_max, tenure_cube)
                    state += np.uint64(0x9E3779B97F4A7C15)
                    t2 = _tenure(_mix(state), tenure_min, tenure_max, tenure_cube)
                    ex[r, p[r]] = it + t1
                    ext[p[r], r] = it + t1
                    ex[s, p[s]] = it + t2
                    ext[p[s], s] = it + t2
                    current += np.int64(dl[ib])
                    pr = p[r]
                    p[r] = p[s]
                    p[s] = pr
                    scal[0] = current
                    if current < best:
                        scal[1] = current
                        scal[3] = 1
                        m = scal[5]
                        IMP_IT[m, sid] = it
                        IMP_OBJ[m, sid] = current
                        scal[5] = m + 1
                        if current <= target:
                            scal[4] = 1
            cuda.syncthreads()
            kk = scal[2]
            if kk >= 0:
                r = mi[kk]
                s = mj[kk]
                pr = p[r]
                ps = p[s]
                for q in range(tid, N, T):
                    pq = p[q]
                    u[q] = a[r, q] - a[s, q]
                    v[q] = at[r, q] - at[s, q]
                    w[q] = b[ps, pq] - b[pr, pq]
                    z[q] = bt[ps, pq] - bt[pr, pq]
                    ya[0, q] = a[r, q]
                    ya[1, q] = a[s, q]
                    yat[0, q] = at[r, q]
                    yat[1, q] = at[s, q]
                    yb[0, q] = b[pr, pq]
                    yb[1, q] = b[ps, pq]
                    ybt[0, q] = bt[pr, pq]
                    ybt[1, q] = bt[ps, pq]
                    if scal[3] == 1:
                        BEST_SOL[sid, q] = pq
                cuda.syncthreads()
                # O(1) updates of the moves disjoint from (r, s)
                for k in range(tid, M if DO_UPDATE else 0, T):
                    i = mi[k]
                    j = mj[k]
                    if i != r and i != s and j != r and j != s:
                        dl[k] += (u[i] - u[j]) * (w[i] - w[j]) + (v[i] - v[j]) * (z[i] - z[j])
                # O(n) recomputations of the 2n-3 moves touching r or s: on the device one warp each,
                # lanes splitting the sum (MATA); under the simulator one thread each
                if SHUFFLE:
                    for rnd in range(ROUNDS if DO_RECOMPUTE else 0):
                        item = rnd * W + warp
                        if item < ITEMS:  # uniform within the warp
                            x, c = touching(item, r, s)
                            y = r if c == 0 else s
                            acc = recompute(a, at, b, bt, p, ya, yat, yb, ybt, x, y, c, lane, 32)
                            off = 16
                            while off > 0:
                                acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, off)
                                off //= 2
                            if lane == 0:
                                i = x if x < y else y
                                j = y if x < y else x
                                dl[i * (2 * N - i - 1) // 2 + j - i - 1] = acc
                else:
                    for item in range(tid, ITEMS, T):
                        x, c = touching(item, r, s)
                        y = r if c == 0 else s
                        i = x if x < y else y
                        j = y if x < y else x
                        dl[i * (2 * N - i - 1) // 2 + j - i - 1] = recompute(a, at, b, bt, p, ya, yat, yb, ybt,
                                                                             x, y, c, 0, 1)
            cuda.syncthreads()
            if scal[4] == 1:
                break
        # -- the state goes back to global memory for the next chunk
        for q in range(tid, N, T):
            P[sid, q] = p[q]
        if DELTA_SHARED:
            for q in range(tid, M, T):
                DELTA[sid, q] = dl[q]
        if tid == 0:
            CUR[sid] = scal[0]
            BEST[sid] = scal[1]
            STATE[sid] = state
            NIMP[sid] = scal[5]
            DONE[sid] = scal[6]

    return rots_kernel


@cuda.jit(device=True, inline=True)
def _tenure(word, tenure_min, tenure_max, tenure_cube):
    """lsbench.search.tabu.draw_tenure from one stream word: uniform in [min, max], or
    floor(T u^3) with u in [0, 1) from 53 bits when tenure_cube = T > 0."""
    bits = word >> np.uint64(11)
    if tenure_cube > 0:
        u = np.float64(bits) * (1.0 / 9007199254740992.0)
        return np.int64(tenure_cube * u * u * u)
    return tenure_min + np.int64(bits % np.uint64(tenure_max - tenure_min + 1))


@cuda.jit
def start_kernel(a, b, P, DELTA, EXP, EXPT):
    """Block q: search q's start state on the device -- the full O(n) cost of every swap of its
    permutation, and Taillard's initial tabu list (rots_expiry) with its transpose -- so a new
    batch of searches (a cas generation) copies up only its permutations."""
    sid = cuda.blockIdx.x
    n = P.shape[1]
    p = P[sid]
    for k in range(cuda.threadIdx.x, DELTA.shape[1], cuda.blockDim.x):
        r, s = dv.index_to_pair(k, n)
        DELTA[sid, k] = dv.qap_swap_delta(a, b, p, r, s)
    for k in range(cuda.threadIdx.x, n * n, cuda.blockDim.x):
        i = k // n
        j = k % n
        EXP[sid, i, j] = -(n * i + j)
        EXPT[sid, j, i] = -(n * i + j)


@cuda.jit(device=True, inline=True)
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class ResidentRots:
    """Runs K Ro-TS searches on the GPU, one block each; `run` returns one result per search in the
    format of the CPU searches (best, best solution, trajectory, iterations, ...)."""

    def __init__(self, problem, prm, threads=None, delta_in_shared=None, max_registers=None):
        import gpu
        if not gpu.available():
            raise LsbenchError("--backend gpu-resident: no usable CUDA GPU on this host (set NUMBA_ENABLE_CUDASIM=1 "
                               "to run the kernels in Numba's simulator)")
        self.problem, self.prm = problem, prm
        self.shape = plan(problem, threads, delta_in_shared)
        n = problem.n
        dt = np.int64 if self.shape["wide"] else np.int32
        largest = max(int(np.abs(problem.a).max()), int(np.abs(problem.b).max()))
        if largest >= 1 << 31:
            raise LsbenchError(f"instance {problem.name}: flows/distances exceed 32 bits")
        # narrow storage keeps more of the instance in L1; compiled code widens before arithmetic,
        # the simulator's NumPy scalars would not, so it keeps the delta width
        data = np.int16 if largest < 1 << 15 and not config.ENABLE_CUDASIM else dt
        self.shape["data_bits"] = np.dtype(data).itemsize * 8
        self.a = cuda.to_device(problem.a.astype(data))
        self.at = cuda.to_device(np.ascontiguousarray(problem.a.T).astype(data))
        self.b = cuda.to_device(problem.b.astype(data))
        self.bt = cuda.to_device(np.ascontiguousarray(problem.b.T).astype(data))
        i, j = np.triu_indices(n, 1)  # row-major upper triangle: the pair numbering of neighborhoods.py
        self.mi = cuda.to_device(i.astype(np.int32))
        self.mj = cuda.to_device(j.astype(np.int32))
        self.shape["max_registers"] = max_registers
        self.kernel = kernel_for(n, self.shape["threads"], self.shape["wide"], self.shape["delta_in_shared"],
                                 max_registers=max_registers)
        self.delta_dtype = dt

    def run(self, seeds, stop, progress=None, chunk=None):
        """K = len(seeds) Ro-TS searches, each exactly the CPU search with its seed."""
        pr = self.problem
        states, sols = [], []
        for seed in seeds:  # exactly the CPU search's start: permutation, then tenures from that stream
            st = rng.new_state(seed)
            sols.append(pr.random_solution(st))
            states.append(st[0])
        prm = self.prm
        return self._search(sols, states, stop, prm["tenure_min"], prm["tenure_max"], prm["aspiration"], 0,
                            progress, chunk)

    def local_search_batch(self, a, at, b, sols, seeds, costs, iterations, tenure, use_tabu):
        """lsbench.search.cas.local_search_batch on the GPU, one block per ant: Ro-TS from each of
        `sols` with stream state seeds[q], tenure floor(tenure u^3), no aspiration by age, for
        `iterations`; each ant becomes its best solution, `costs` their costs."""
        if not use_tabu:
            raise LsbenchError("--backend gpu-resident: cas runs its tabu local search on the GPU (ls=tabu), not 2opt")
        from lsbench.search.cas import NO_AGE_ASPIRATION
        res = self._search(list(sols), [np.uint64(q) for q in seeds], Stop(iterations=iterations), 0, 0,
                           int(NO_AGE_ASPIRATION), int(tenure))
        for q, r in enumerate(res):
            sols[q] = r["best_solution"]
            costs[q] = r["best_objective"]

    def _search(self, sols, states, stop, tenure_min, tenure_max, aspiration, tenure_cube, progress=None,
                chunk=None):
        pr, n = self.problem, self.problem.n
        nb = pr.neighbourhood("swap")
        K = len(sols)
        curs = [pr.objective(sol) for sol in sols]
        P = cuda.to_device(np.array(sols, dtype=np.int32))
        DELTA = cuda.device_array((K, n * (n - 1) // 2), dtype=self.delta_dtype)
        EXP = cuda.device_array((K, n, n), dtype=np.int32)
        EXPT = cuda.device_array((K, n, n), dtype=np.int32)
        start_kernel[K, self.shape["threads"]](self.a, self.b, P, DELTA, EXP, EXPT)
        STATE = cuda.to_device(np.array(states, dtype=np.uint64))
        CUR = cuda.to_device(np.array(curs, dtype=np.int64))
        BEST = cuda.to_device(np.array(curs, dtype=np.int64))
        BEST_SOL = cuda.to_device(np.array(sols, dtype=np.int32))
        IMP_IT = cuda.device_array((IMPROVEMENT_CAP, K), dtype=np.int64)  # [m, search]: read back by rows
        IMP_OBJ = cuda.device_array((IMPROVEMENT_CAP, K), dtype=np.int64)
        NIMP = cuda.device_array(K, dtype=np.int64)
        DONE = cuda.device_array(K, dtype=np.int64)
        ACTIVE = cuda.to_device(np.ones(K, dtype=np.int32))
        target = np.int64(stop.target) if stop.target is not None else np.int64(-(1 << 62))
        trajs = [Trajectory() for _ in sols]
        for t, c in zip(trajs, curs):
            t.improved(0, int(c))
        its = np.zeros(K, dtype=np.int64)
        best = np.array(curs, dtype=np.int64)
        finished = np.zeros(K, dtype=bool)
        step = chunk or (4 if config.ENABLE_CUDASIM else 256)
        t_start = time.perf_counter()
        it = 0
        kernel_s = 0.0
        while not stop.reached(it, it * nb.size, time.perf_counter() - t_start, int(best.max())):
            n_iter = min(step, IMPROVEMENT_CAP)
            budget = stop.iteration_budget(it)
            if budget is not None:
                n_iter = min(n_iter, budget)
            if stop.evaluations is not None:
                n_iter = min(n_iter, max(1, -(-(stop.evaluations - it * nb.size) // nb.size)))
            t0 = time.perf_counter()
            self.kernel[K, self.shape["threads"]](
                self.a, self.at, self.b, self.bt, self.mi, self.mj, P, DELTA, EXP, EXPT, STATE, CUR, BEST, BEST_SOL,
                IMP_IT, IMP_OBJ, NIMP, DONE, ACTIVE, tenure_min, tenure_max, aspiration, target, it, n_iter,
                tenure_cube)
            nimp, done, best = NIMP.copy_to_host(), DONE.copy_to_host(), BEST.copy_to_host()
            t1 = time.perf_counter()
            kernel_s += t1 - t0
            if nimp.any():
                rows = int(nimp.max())
                imp_it, imp_obj = IMP_IT[:rows].copy_to_host(), IMP_OBJ[:rows].copy_to_host()
                for q in np.flatnonzero(nimp):
                    for m in range(nimp[q]):  # stamped at the end of their chunk, as the fused CPU loop
                        trajs[q].improved(int(imp_it[m, q]), int(imp_obj[m, q]), seconds=t1 - t_start)
            its += np.where(finished, 0, done)
            if (best <= target).any() and not finished[best <= target].all():
                finished |= best <= target
                ACTIVE.copy_to_device(np.where(finished, 0, 1).astype(np.int32))
            it += n_iter
            if finished.all():
                break
            if t1 - t0 < 0.02 and not config.ENABLE_CUDASIM:
                step = min(step * 2, IMPROVEMENT_CAP)
            if progress:
                progress.tick(it, int(best.min()))
        best_sol, cur = BEST_SOL.copy_to_host().astype(np.int64), CUR.copy_to_host()
        self.kernel_s = kernel_s
        self.loop_s = time.perf_counter() - t_start  # the search loop, without the one-off set-up
        prm = {"tenure_min": tenure_min, "tenure_max": tenure_max, "aspiration": aspiration}
        if tenure_cube:
            prm["tenure_cube"] = tenure_cube
        return [{"best_objective": int(best[q]), "best_solution": best_sol[q], "iterations": int(its[q]),
                 "evaluations": int(its[q]) * nb.size, "trajectory": trajs[q].points, "params": prm,
                 "final_objective": int(cur[q])} for q in range(K)]

    def describe(self):
        dev = cuda.get_current_device()
        name = getattr(dev, "name", "CUDA simulator")
        return {"backend": "gpu-resident", "device": name.decode() if isinstance(name, bytes) else str(name),
                "threads_per_search": self.shape["threads"], "delta_bits": 64 if self.shape["wide"] else 32,
                "data_bits": self.shape["data_bits"], "max_registers": self.shape["max_registers"],
                "delta_in_shared_memory": self.shape["delta_in_shared"]}


class ResidentLocalSearch:
    """`--algorithm cas --backend gpu-resident`: each generation's tabu local searches run on the
    GPU at once, one thread block per ant (`ResidentRots.local_search_batch`); the colony's
    construction and pheromone update stay on the host. Same results as cas on `cpu`."""
    name = "gpu-resident"
    parallel = False
    fused = False

    def __init__(self, block=None):
        self.threads = None if block is None else int(block)

    def bind(self, problem, nb):
        if problem.kind != "qap":
            raise LsbenchError("--backend gpu-resident: cas runs on QAP only")
        self.engine = ResidentRots(problem, {}, threads=self.threads)
        self.local_search_batch = self.engine.local_search_batch
        return self

    def describe(self):
        return {**self.engine.describe(), "model": "cas colony on the host, one block per ant's tabu search"}
