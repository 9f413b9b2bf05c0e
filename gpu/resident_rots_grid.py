"""One QAP robust tabu search spread over several SMs (`--backend gpu-resident --algorithm rots
--param blocks=G`): the latency a user with one long run feels.

One block per SM cannot go below a few microseconds per iteration on tai100a: the O(n)
recomputations and the O(1) updates are bound by the SM's shared-memory bandwidth. Here G blocks
(one per SM, one cooperative kernel per chunk of iterations) share the neighbourhood: block b owns
the moves b, b + G, b + 2G, ... (its slice of the delta table and of the moves' older tabu
expiries), and every block keeps its own copy of the permutation, the permuted distances
bp[i, k] = B[p_i, p_k], the flows and the tabu matrix in shared memory. Per iteration:
- each block recomputes in O(n) the moves it owns that touch the last swap (a warp per move,
  lanes splitting the sum, shuffle reduction; MATA), updates its other moves in O(1), keys all of
  them under Taillard's rule and reduces them to one (key, move) winner;
- one grid barrier; every block reduces the G winners itself and applies the same swap to its
  own copies (tenures from the search's stream, identical tabu writes), so one barrier per
  iteration suffices; the winners alternate between two buffers by iteration parity.
Instances in symmetric form (one of the two matrices symmetric) with a zero diagonal in one of
them, as all of Taillard's; one search gives exactly the trajectory of `--backend cpu`.
"""
import numpy as np
from numba import config, cuda, int32, int64

from lsbench import rng
from lsbench.errors import LsbenchError
from lsbench.problems.qap import all_deltas, permuted_distances
from lsbench.search.tabu import rots_expiry

from .resident import (CLASS, FULL, IMPROVEMENT_CAP, MAX_KEY, STATIC_SHARED_CAP, _mix, _tenure, allow_dynamic_shared,
                       classify, lex_less, shared_bytes_per_block, symmetric_form, warp_argmin)
from .resident_grid import STATE_FIELDS, run_chunks

SIM = config.ENABLE_CUDASIM  # no shuffles: one thread per recomputation, tree reductions
RK = 1024 if SIM else 32
NO_MOVE_KEY = 2 * CLASS - (CLASS >> 1)  # a winner at or above this: every move is tabu, no swap
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def layout(n, blocks):
    """(64-bit words, 32-bit words) of one block's dynamic shared memory: tabu matrix, update
    vectors u, w and the owned moves' deltas and ages; permutation, bp, flows, owned move pairs."""
    slots = -(-(n * (n - 1) // 2) // blocks)
    return n * n + 2 * n + 2 * slots, n + 2 * n * n + slots


@cuda.jit(device=True, inline=True)
def touching(item, r, s, n):
    """The item-th move touching the last swap (r, s) as (x, y): (x, r) for x != r, then (x, s)
    for x != r, s (as gpu.resident's kernel)."""
    if item < n - 1:
        return (item if item < r else item + 1), r
    x = item - (n - 1)
    lo = min(r, s)
    hi = max(r, s)
    if x >= lo:
        x += 1
    if x >= hi:
        x += 1
    return x, s


@cuda.jit
def rots_grid_kernel(A, PAIRS, P, BP, EX, DELTA, OLD, PEND, STATE, RNG, BEST_SOL, IMP_IT, IMP_OBJ, WKEY, WIDX,
                     n, tenure_min, tenure_max, aspiration, target, it0, n_iter):
    sh64 = cuda.shared.array(0, int64)
    sh32 = cuda.shared.array(0, int32)
    rkey = cuda.shared.array(RK, int64)
    ridx = cuda.shared.array(RK, int64)
    grid = cuda.cg.this_grid()
    tid = cuda.threadIdx.x
    T = cuda.blockDim.x
    b = cuda.blockIdx.x
    G = cuda.gridDim.x
    lane = tid % 32
    warp = tid // 32
    W = T // 32
    nn = n * n
    M = n * (n - 1) // 2
    items = 2 * n - 3
    slots = (M + G - 1) // G
    mine = (M - b + G - 1) // G  # moves b, b + G, ... < M
    ex = sh64[0:nn]
    u = sh64[nn:nn + n]
    w = sh64[nn + n:nn + 2 * n]
    dl = sh64[nn + 2 * n:nn + 2 * n + slots]
    old = sh64[nn + 2 * n + slots:nn + 2 * n + 2 * slots]
    o32 = 2 * (nn + 2 * n + 2 * slots)
    p = sh32[o32:o32 + n]
    bp = sh32[o32 + n:o32 + n + nn]
    af = sh32[o32 + n + nn:o32 + n + 2 * nn]
    prs = sh32[o32 + n + 2 * nn:o32 + n + 2 * nn + slots]
    for q in range(tid, n, T):
        p[q] = P[q]
    for q in range(tid, nn, T):
        bp[q] = BP[q]
        af[q] = A[q]
        ex[q] = EX[q]
    for q in range(tid, mine, T):
        dl[q] = DELTA[b + G * q]
        old[q] = OLD[b + G * q]
        prs[q] = PAIRS[b + G * q]
    current = STATE[1]
    best = STATE[2]
    state = RNG[0]
    pend = PEND[0]
    moved = pend >= 0
    r = pend >> 16
    s = pend & 0xFFFF
    cuda.syncthreads()
    for q in range(tid, n if moved else 0, T):  # the pending swap's update vectors (bp is swapped)
        u[q] = af[r * n + q] - af[s * n + q]
        w[q] = bp[s * n + q] - bp[r * n + q]
    cuda.syncthreads()
    n_imp = 0
    done = 0
    it = it0
    for step in range(n_iter):
        it = it0 + step + 1
        thr = best - current
        it_asp = it - aspiration
        kb = MAX_KEY
        ib = int64(M)
        # -- the moves of this block touching the last swap: O(n) each, a warp splitting the sum
        if moved:
            first = tid if SIM else warp
            every = T if SIM else W
            for item in range(first, items, every):
                x, y = touching(item, r, s, n)
                i = min(x, y)
                j = max(x, y)
                idx = i * (2 * n - i - 1) // 2 + j - i - 1
                if idx % G == b:  # uniform over the warp
                    acc = int64(0)
                    for k in range(0 if SIM else lane, n, 1 if SIM else 32):
                        if k != x and k != y:
                            acc += (af[x * n + k] - af[y * n + k]) * int64(bp[y * n + k] - bp[x * n + k])
                    if not SIM:
                        off = 16
                        while off > 0:
                            acc += cuda.shfl_down_sync(FULL, acc, off)
                            off //= 2
                    if SIM or lane == 0:
                        q = idx // G
                        dl[q] = acc
                        e1 = ex[i * n + p[j]]
                        e2 = ex[j * n + p[i]]
                        age = min(e1, e2)
                        old[q] = age
                        key = classify(acc, age, thr, it_asp, it)
                        if lex_less(key, idx, kb, ib):
                            kb = key
                            ib = int64(idx)
        # -- every other move of this block: O(1) update (Taillard), then its key
        for q in range(tid, mine, T):
            pk = prs[q]
            i = pk >> 16
            j = pk & 0xFFFF
            if not (moved and (i == r or i == s or j == r or j == s)):
                d = dl[q]
                if moved:
                    d += (u[i] - u[j]) * (w[i] - w[j])
                    dl[q] = d
                key = classify(d, old[q], thr, it_asp, it)
                idx = int64(b + G * q)
                if lex_less(key, idx, kb, ib):
                    kb = key
                    ib = idx
        # -- the block's winner, the grid barrier, every block takes the grid's winner
        par = it % 2
        if SIM:
            rkey[tid] = kb
            ridx[tid] = ib
            cuda.syncthreads()
            if tid == 0:
                for t in range(1, T):
                    if lex_less(rkey[t], ridx[t], rkey[0], ridx[0]):
                        rkey[0] = rkey[t]
                        ridx[0] = ridx[t]
                WKEY[par, b] = rkey[0]
                WIDX[par, b] = ridx[0]
                cuda.threadfence()
        else:
            kb, ib = warp_argmin(kb, ib)
            if lane == 0:
                rkey[warp] = kb
                ridx[warp] = ib
            cuda.syncthreads()
            if warp == 0:
                kb = rkey[lane] if lane < W else MAX_KEY
                ib = ridx[lane] if lane < W else int64(M)
                kb, ib = warp_argmin(kb, ib)
                if lane == 0:
                    WKEY[par, b] = kb
                    WIDX[par, b] = ib
                    cuda.threadfence()
        grid.sync()
        if tid == 0:  # G is small (one block per SM): one thread reads the winners
            kb = WKEY[par, 0]
            ib = WIDX[par, 0]
            for g in range(1, G):
                if lex_less(WKEY[par, g], WIDX[par, g], kb, ib):
                    kb = WKEY[par, g]
                    ib = WIDX[par, g]
            rkey[0] = kb
            ridx[0] = ib
        cuda.syncthreads()
        kb = rkey[0]
        ib = ridx[0]
        done += 1
        moved = kb < NO_MOVE_KEY  # else every move is tabu: Taillard keeps the solution
        stop = False
        if moved:
            pk = PAIRS[ib]
            r = pk >> 16
            s = pk & 0xFFFF
            cls = (kb + (CLASS >> 1)) >> 60
            current += kb - (cls << 60)
            improved = current < best
            if improved:
                best = current
            s1 = state + GOLDEN  # the tenures of r and s: the next two words of the stream
            state = s1 + GOLDEN
            for q in range(tid, n, T):
                if q == r:
                    pr = p[r]
                    ps = p[s]
                    ex[r * n + pr] = it + _tenure(_mix(s1), tenure_min, tenure_max, 0)
                    ex[s * n + ps] = it + _tenure(_mix(state), tenure_min, tenure_max, 0)
                    p[r] = ps
                    p[s] = pr
                    t0 = bp[r * n + r]
                    bp[r * n + r] = bp[s * n + s]
                    bp[s * n + s] = t0
                    t0 = bp[r * n + s]
                    bp[r * n + s] = bp[s * n + r]
                    bp[s * n + r] = t0
                    if improved and b == 0:
                        BEST_SOL[r] = ps
                        BEST_SOL[s] = pr
                elif q != s:
                    orq = bp[r * n + q]
                    osq = bp[s * n + q]
                    bp[r * n + q] = osq
                    bp[s * n + q] = orq
                    t0 = bp[q * n + r]
                    bp[q * n + r] = bp[q * n + s]
                    bp[q * n + s] = t0
                    w[q] = orq - osq
                    u[q] = af[r * n + q] - af[s * n + q]
                    if improved and b == 0:
                        BEST_SOL[q] = p[q]
            if improved:
                if b == 0 and tid == 0:
                    IMP_IT[n_imp] = it
                    IMP_OBJ[n_imp] = current
                n_imp += 1
                stop = current <= target
        cuda.syncthreads()
        if stop:
            break
    # -- the state goes back to global memory for the next chunk (the last swap's update pending)
    for q in range(tid, mine, T):
        DELTA[b + G * q] = dl[q]
        OLD[b + G * q] = old[q]
    if b == 0:
        for q in range(tid, n, T):
            P[q] = p[q]
        for q in range(tid, nn, T):
            BP[q] = bp[q]
            EX[q] = ex[q]
        if tid == 0:
            PEND[0] = (r << 16) | s if moved else -1
            STATE[0] = it0 + done
            STATE[1] = current
            STATE[2] = best
            STATE[3] = n_imp
            RNG[0] = state


class ResidentRotsGrid:
    """One Ro-TS search as a cooperative kernel over `blocks` SMs; `run` returns what the CPU
    search returns with the same seed."""

    def __init__(self, problem, prm, blocks, threads=None):
        import gpu
        if not gpu.available():
            raise LsbenchError("--backend gpu-resident: no usable CUDA GPU on this host (set NUMBA_ENABLE_CUDASIM=1 "
                               "to run the kernels in Numba's simulator)")
        A, B, general = symmetric_form(problem.a, problem.b)
        if general or (np.diagonal(problem.a).any() and np.diagonal(problem.b).any()):
            raise LsbenchError(f"--param blocks: one search over several SMs needs a symmetric matrix and a zero "
                               f"diagonal (Taillard's instances); {problem.name} has not (run it with blocks=1)")
        if max(int(np.abs(A).max()), int(np.abs(B).max())) >= 1 << 31:
            raise LsbenchError(f"instance {problem.name}: flows/distances exceed 32 bits")
        self.problem, self.prm = problem, prm
        self.blocks = int(blocks)
        self.threads = int(threads) if threads else (32 if SIM else 1024)
        if self.blocks < 1 or (SIM and self.blocks != 1):
            raise LsbenchError(f"--param blocks: at least 1 (1 under the simulator), got {blocks}")
        if self.threads % 32 or not 32 <= self.threads <= 1024:
            raise LsbenchError(f"--param block: threads per block must be a multiple of 32 in 32..1024, "
                               f"got {self.threads}")
        n = problem.n
        w64, w32 = layout(n, self.blocks)
        self.shared = 8 * w64 + 4 * w32
        if self.shared > shared_bytes_per_block():
            raise LsbenchError(f"--param blocks: {problem.name} needs {self.shared} bytes of shared memory per block "
                               f"with {self.blocks} blocks, more than this GPU's {shared_bytes_per_block()}")
        self.B = np.asarray(B, dtype=np.int32)
        self.A = cuda.to_device(np.asarray(A, dtype=np.int32).ravel())
        i, j = np.triu_indices(n, 1)
        self.pair_i, self.pair_j = i, j
        self.pairs = cuda.to_device(((i << 16) | j).astype(np.int32))
        self.kernel_s = 0.0
        self._ready = False

    def run(self, seed, stop, progress=None, chunk=None):
        pr, n, prm = self.problem, self.problem.n, self.prm
        st = rng.new_state(seed)  # exactly the CPU search's start: permutation, then the tenure stream
        sol = pr.random_solution(st)
        current = pr.objective(sol)
        bp, bpt = permuted_distances(pr.b, sol)
        delta = np.empty(n * (n - 1) // 2, dtype=np.int64)
        all_deltas(pr.a, pr.at, bp, bpt, 0, n - 1, delta)
        ex = rots_expiry(n)
        old = np.minimum(ex[self.pair_i, sol[self.pair_j]], ex[self.pair_j, sol[self.pair_i]])
        P = cuda.to_device(sol.astype(np.int32))
        BP = cuda.to_device(self.B[sol][:, sol].ravel())
        EX = cuda.to_device(ex.ravel())
        DELTA = cuda.to_device(delta)
        OLD = cuda.to_device(old.astype(np.int64))
        PEND = cuda.to_device(np.array([-1], dtype=np.int64))
        STATE = cuda.to_device(np.array([0, current, current, 0, 0], dtype=np.int64))
        RNG = cuda.to_device(st)
        BEST_SOL = cuda.to_device(sol.astype(np.int64))
        IMP_IT = cuda.device_array(IMPROVEMENT_CAP, np.int64)
        IMP_OBJ = cuda.device_array(IMPROVEMENT_CAP, np.int64)
        WKEY = cuda.device_array((2, self.blocks), np.int64)
        WIDX = cuda.device_array((2, self.blocks), np.int64)

        def launch(it, n_iter, target):
            args = (self.A, self.pairs, P, BP, EX, DELTA, OLD, PEND, STATE, RNG, BEST_SOL, IMP_IT, IMP_OBJ, WKEY, WIDX,
                    np.int64(n), np.int64(prm["tenure_min"]), np.int64(prm["tenure_max"]), np.int64(prm["aspiration"]),
                    target, np.int64(it), np.int64(n_iter))
            if not self._ready:
                self._prepare(args)
            rots_grid_kernel[self.blocks, self.threads, 0, self.shared](*args)

        it, points, self.kernel_s = run_chunks(launch, STATE, IMP_IT, IMP_OBJ, stop, n * (n - 1) // 2, current,
                                               progress, chunk, "gpu-resident Ro-TS over several SMs")
        st_h = STATE.copy_to_host()
        return {"best_objective": int(st_h[2]), "best_solution": BEST_SOL.copy_to_host(), "iterations": it,
                "evaluations": it * (n * (n - 1) // 2), "trajectory": points, "params": dict(prm),
                "final_objective": int(st_h[1])}

    def _prepare(self, args):
        """Opt in to the shared memory and check that every block can be resident at once."""
        if not SIM:
            compiled = rots_grid_kernel._compile_for_args(*args)
            if self.shared > STATIC_SHARED_CAP:
                allow_dynamic_shared(compiled, self.shared)
            fit = compiled.max_cooperative_grid_blocks(self.threads, self.shared)
            if fit < self.blocks:
                raise LsbenchError(f"--param blocks: at most {fit} blocks of {self.threads} threads can run at once "
                                   f"on this GPU, asked for {self.blocks}")
        self._ready = True

    def describe(self):
        dev = cuda.get_current_device()
        name = getattr(dev, "name", "CUDA simulator")
        return {"backend": "gpu-resident", "device": name.decode() if isinstance(name, bytes) else str(name),
                "model": "one Ro-TS search over several SMs (cooperative kernel)", "blocks": self.blocks,
                "threads_per_block": self.threads, "dynamic_shared_bytes": self.shared}
