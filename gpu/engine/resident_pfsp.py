"""Device-resident PFSP insertion tabu search (`--backend gpu-resident --algorithm tabu`, makespan).

One search spread over the whole GPU, every iteration on the device, one cooperative kernel per
chunk of iterations (a grid-wide barrier per iteration, no launch or copy in between):
- every block keeps the sequence, its processing times in sequence order and the heads E and
  tails Q of the current sequence in shared memory, and rebuilds E and Q each iteration: one warp
  each, lane j owning machine j and sweeping the (position x machine) grid by anti-diagonals
  (values passed lane to lane with warp shuffles; through shared memory under the simulator);
- removed position i is served by a pair of warps: without seq[i], the heads before i and the
  tails after it are E's and Q's, so one warp rebuilds the heads after i and evaluates the moves
  to the right in the same sweep, the other rebuilds the tails before i for the moves to the
  left (Taillard's acceleration, exactly lsbench.problems.pfsp._insertion_makespan_deltas);
- tabu: a move is tabu if the job would jump a forbidden neighbour, so per i only the nearest
  forbidden position on each side matters; idle warps find them while the heads are rebuilt;
- selection: each warp keeps its best (class, makespan, tie rank), the block reduces its warps,
  the grid barrier, then every block reduces the blocks' winners itself and applies the same
  move to its own copy (the tabu records are written by every block, identical values), so one
  barrier per iteration suffices; block winners alternate between two buffers by iteration.
The tie ranks and tenures come from the search's SplitMix64 stream: one search gives exactly the
trajectory of `lsbench run --algorithm tabu --backend cpu` with the same seed.
"""
import numpy as np
from numba import config, cuda, int32, int64, uint32, uint64

from lsbench.errors import LsbenchError
from lsbench.problems.pfsp import MAKESPAN

from .. import device as dv
from .. import device_name, require
from ..runtime.chunks import (IMPROVEMENT_CAP, MAX_THREADS, NO_ASPIRATION, chunk_launcher, item_of, never_tabu,
                              pass_on, run_searches, save_search, start_item, tabu_starts, take_item)
from ..runtime.block_reduce import block_min, key_less
from ..runtime.lanes import XBUF, from_left, from_left2, in_window, warp_sync
from ..runtime.launch import allow_dynamic_shared, within_a_block

SIM = config.ENABLE_CUDASIM  # the simulator has no warp shuffles: lanes talk through shared memory
FULL = 0xFFFFFFFF
WARP = 32
QUEUE_ITEM = 64  # K > 1: iterations of a search per queue item, at most


@cuda.jit(device=True, inline=True)
def position_of(slot, pairs, grid, block):
    """Removed position served by a block's pair slot (round-major: the first round covers the
    positions 0 .. grid*pairs-1, so the work is even across blocks)."""
    return (slot // pairs) * grid * pairs + block * pairs + slot % pairs


@cuda.jit(device=True, inline=True)
def nearest_tabu_jumps(EXP, seq, kmin, kmax, sq, n, it, slots, pairs, GS, bs, warp, lane, W):
    """Phase 1, the scouting warps (all but the first two, where the block has more): per removed
    position i of this block's slots, the nearest position each side that x = seq[i] may not jump."""
    scouts = W - 2 if W > 2 else W
    if W == 2 or warp >= 2:
        sw = warp - 2 if W > 2 else warp
        for s in range(slots):
            i = position_of(s, pairs, GS, bs)
            if i < n:
                x = seq[i]
                for q in range(sw * WARP + lane, n, scouts * WARP):
                    if q < i and EXP[sq, x * n + seq[q]] >= it:
                        cuda.atomic.max(kmax, s, q)
                    if q > i and EXP[sq, seq[q] * n + x] >= it:
                        cuda.atomic.min(kmin, s, q)


@cuda.jit(device=True, inline=True)
def heads_and_tails(sh, E, Q, xbuf, n, m, nm, tid, lane, warp, jj):
    """Phase 1, warps 0 and 1: the heads E and tails Q of the sequence, lane j owning machine j and
    sweeping the (position x machine) grid by anti-diagonals."""
    if SIM or warp < 2:
        heads = warp == 0
        mj = jj if heads else m - 1 - jj  # tails run from the last machine
        own = int32(0)
        if lane < m:
            if heads:
                E[mj] = 0
            else:
                Q[nm + mj] = 0
        # lane's row at step s: position s - lane (heads) or n - 1 - (s - lane) (tails), read at
        # sh[pr], written at sh[pw]: E[row + 1, j] or Q[row, j]; both step by dr (a base added in
        # the loop was recomputed there every step) and index unsigned (no negative-index wrap)
        dr = int32(m if heads else -m)
        pr = int32((-lane if heads else n - 1 + lane) * m + mj)
        pw = int32(pr + (nm + m if heads else 2 * nm + m))
        rows = int32(n if warp < 2 and lane < m else 0)
        for s in range(int32(n + m - 1)):
            left = from_left(own, xbuf, tid, lane)
            if in_window(s - lane, rows):
                own = int32(max(own, left) + sh[uint32(pr)])
                sh[uint32(pw)] = own
            pr = int32(pr + dr)
            pw = int32(pw + dr)


@cuda.jit(device=True, inline=True)
def best_insertion(sh, ps, E, Q, cm, kmin, kmax, xbuf, dims, place, me, jj, asp, tie_key):
    """Phase 2: pair p of warps serves removed positions i; warp 2p the moves right of i, warp 2p+1
    those left of it, each sweep rebuilding the heads (tails) it needs. dims: (n, m, nm, rounds,
    pairs); place: the search's blocks GS and this block's rank bs; me: (tid, lane, warp). Returns
    this thread's best (class, makespan, tie rank, move)."""
    n, m, nm, rounds, pairs = dims
    GS, bs = place
    tid, lane, warp = me
    bc = int64(3)
    bd = int64(0)
    br = uint64(0)
    bi = int64(-1)
    right = warp % 2 == 0
    mj = jj if right else m - 1 - jj
    cmw = cm[warp * n:(warp + 1) * n]
    for rd in range(rounds):
        s = rd * pairs + warp // 2
        i = position_of(s, pairs, GS, bs)
        live = i < n
        R = (n - 1 - i if right else i) if live else 0
        steps = n + m - 2 if SIM else R + m - 1
        for r in range(lane, R, WARP):
            cmw[r] = 0
        warp_sync()
        # row k = k0 + dk r of lane's sweep: ps[k, mj] at sh[pk], the fixed other side at sh[po]
        # (indexed unsigned where in the window: no negative-index wrap in the sweep)
        k0 = i + 1 if right else i - 1
        dk = 1 if right else -1
        pk = int32((k0 - dk * lane) * m + mj)
        po = int32(pk + (2 * nm + 2 * m if right else nm))  # Q[k + 1, j] or E[k, j]
        dpk = int32(dk * m)
        rows = int32(R if lane < m else 0)
        if live:
            px = ps[i * m + mj]
            hq = E[i * m + mj] if right else Q[(i + 1) * m + mj]
        else:
            px = int32(0)
            hq = int32(0)
        f = int32(0)
        for st in range(int32(steps)):
            hq_in, f_in = from_left2(hq, f, xbuf, tid, lane)
            if in_window(st - lane, rows):
                hq = int32(max(hq_in, hq) + sh[uint32(pk)])
                f = int32(max(f_in, hq) + px)
                cuda.atomic.max(cmw, uint32(st - lane), int32(f + sh[uint32(po)]))  # makespan: max over machines
            pk = int32(pk + dpk)
            po = int32(po + dpk)
        warp_sync()
        if live:
            lim = kmin[s] if right else kmax[s]
            for r in range(lane, R, WARP):
                k = k0 + dk * r
                run = cmw[r]
                idx = i * (n - 1) + (k - 1 if right else k)
                tabu = k >= lim if right else k <= lim
                cls = int64(1 if tabu and not run < asp else 0)
                rank = dv.tie_rank(idx, tie_key)
                if bi < 0 or key_less(cls, run, rank, idx, bc, bd, br, bi):
                    bc, bd, br, bi = cls, int64(run), rank, int64(idx)
    return bc, bd, br, bi


@cuda.jit(device=True, inline=True)
def search_winner(grid, red, winners, me, best, it, b, w0, GS, queued):
    """Selection: the block's best (red: the reduction's arrays), the grid barrier, then every block
    takes the search's best from its blocks' winners (WKEY, WRANK, WIDX). me: (tid, T); best: this
    thread's (class, makespan, rank, move). Returns (move, makespan)."""
    red_c, red_d, red_r, red_i = red
    WKEY, WRANK, WIDX = winners
    tid, T = me
    bc, bd, br, bi = best
    block_min(red_c, red_d, red_r, red_i, tid, T, bc, bd, br, bi)
    par = it % 2
    if tid == 0:
        WKEY[par, b] = (red_c[0] << 32) + red_d[0]
        WRANK[par, b] = red_r[0]
        WIDX[par, b] = red_i[0]
        cuda.threadfence()
    if queued:
        cuda.syncthreads()
    else:
        grid.sync()
    bc = int64(3)
    bi = int64(-1)
    for g in range(w0 + tid, w0 + GS, T):
        c = WKEY[par, g] >> 32
        d = WKEY[par, g] & 0xFFFFFFFF
        if WIDX[par, g] >= 0 and (bi < 0 or key_less(c, d, WRANK[par, g], WIDX[par, g], bc, bd, br, bi)):
            bc, bd, br, bi = c, d, WRANK[par, g], WIDX[par, g]
    block_min(red_c, red_d, red_r, red_i, tid, T, bc, bd, br, bi)
    return red_i[0], red_d[0]


@cuda.jit(device=True, inline=True)
def apply_insertion(EXP, seq, ps, E, moved, sq, n, m, i, k, until, tid, T):
    """Job seq[i] moves to position k: its tabu records, the sequence and its processing-time rows."""
    x = seq[i]
    if k > i:  # x may not go back before the jobs it jumped (lsbench.problems.pfsp.insertion_tabu_record)
        for t in range(i + 1 + tid, k + 1, T):
            EXP[sq, x * n + seq[t]] = until
    else:
        for t in range(k + tid, i, T):
            EXP[sq, seq[t] * n + x] = until
    lo = min(i, k)
    hi = max(i, k)
    for t in range(lo + tid, hi + 1, T):
        moved[t] = x if t == k else (seq[t + 1] if i < k else seq[t - 1])
    cuda.syncthreads()
    for t in range(lo + tid, hi + 1, T):
        seq[t] = moved[t]
    cuda.syncthreads()
    for row in range(lo + tid, hi + 1, T):  # ps rows move with their jobs; E is free scratch
        src = i if row == k else (row + 1 if i < k else row - 1)
        for j in range(m):
            E[row * m + j] = ps[src * m + j]
    cuda.syncthreads()
    for row in range(lo + tid, hi + 1, T):
        for j in range(m):
            ps[row * m + j] = E[row * m + j]


def make_pfsp_tabu_kernel(QUEUED):
    """The PFSP tabu kernel, lockstep (QUEUED False: K searches of GS blocks each, one a cooperative
    grid) or on the queue; a compile-time constant, so that the lockstep kernel carries no queue code
    (with it, one search on ta111 ran 6 % slower, the same instructions scheduled worse)."""

    @cuda.jit
    def pfsp_tabu_kernel(PT, searches, winners, QUEUE, RING, sizes, subchunk, tenure_min, tenure_max, use_aspiration,
                         target, n_iter, item0, seq0, push0):
        """searches: the searches' arrays (SEQ, EXP, STATE, RNG, BEST_SOL, IMP_IT, IMP_OBJ, ERR); winners:
        each block's best move (WKEY, WRANK, WIDX); sizes: (n, m, rounds)."""
        SEQ, EXP, STATE, RNG, BEST_SOL, IMP_IT, IMP_OBJ, ERR = searches
        n, m, rounds = sizes
        sh = cuda.shared.array(0, int32)
        red_c = cuda.shared.array(MAX_THREADS, int64)  # block reduction of (class, makespan, rank, move)
        red_d = cuda.shared.array(MAX_THREADS, int64)
        red_r = cuda.shared.array(MAX_THREADS, uint64)
        red_i = cuda.shared.array(MAX_THREADS, int64)
        xbuf = cuda.shared.array((XBUF, 2), int32)
        grid = cuda.cg.this_grid()
        tid = cuda.threadIdx.x
        T = cuda.blockDim.x
        lane = int32(tid % WARP)
        warp = int32(tid // WARP)
        W = T // WARP
        pairs = W // 2
        b = cuda.blockIdx.x
        G = cuda.gridDim.x
        slots = pairs * rounds
        nm = n * m
        ps = sh[0:nm]                            # processing times in sequence order, [position, machine]
        E = sh[nm:nm + nm + m]                   # E[k, j]: the first k jobs done on machine j
        Q = sh[2 * nm + m:3 * nm + 2 * m]        # Q[k, j]: from the start of job k on machine j to the end
        seq = sh[3 * nm + 2 * m:3 * nm + 2 * m + n]
        kmin = sh[3 * nm + 2 * m + n:3 * nm + 2 * m + n + slots]  # nearest tabu position right of i (n: none)
        kmax = sh[3 * nm + 2 * m + n + slots:3 * nm + 2 * m + n + 2 * slots]  # ... left of i (-1: none)
        moved = sh[3 * nm + 2 * m + n + 2 * slots:3 * nm + 2 * m + 2 * n + 2 * slots]  # the sequence being shifted
        cm = sh[3 * nm + 2 * m + 2 * n + 2 * slots:3 * nm + 2 * m + (2 + W) * n + 2 * slots]  # per warp: makespans
        jj = min(lane, m - 1)                    # lanes beyond the last machine compute along, harmlessly
        job = cuda.shared.array(2, int64)
        K = SEQ.shape[0]
        queued = QUEUED  # blocks take (search, sub-chunk) items from a queue, one block a search
        subchunks = (n_iter + subchunk - 1) // subchunk if queued else 1
        GS = 1 if queued else G // K  # the blocks of one search (lockstep: the grid is K GS blocks) ...
        bs = 0 if queued else b % GS  # ... this block's rank among them ...
        w0 = b - bs  # ... and their winners, WKEY[par, w0:w0 + GS]
        apart = queued or K == 1  # a search may leave the step loop early; else it must keep the grid barrier
        while True:
            sq = int64(b // GS)  # lockstep: this block's search
            sub = int64(0)
            if queued:
                if not take_item(QUEUE, RING, job, tid, item0, seq0, K, subchunks):
                    return
                sq, sub = item_of(job, seq0)
            steps = min(subchunk, n_iter - sub * subchunk) if queued else n_iter
            # -- `steps` iterations of search sq: its sequence into shared memory, its state back to STATE
            for t in range(tid, n, T):
                seq[t] = SEQ[sq, t]
            cuda.syncthreads()
            for t in range(tid, nm, T):
                ps[t] = PT[seq[t // m] * m + t % m]
            it, current, best, n_imp, state = start_item(STATE, RNG, sq, sub)
            for step in range(steps):
                if best <= target:  # every block of the search sees the same: all stop together
                    if apart:
                        break
                    grid.sync()  # lockstep: a finished search's blocks still meet every barrier
                    continue
                it += 1
                state += dv.GOLDEN
                tie_key = dv.mix64(state)
                asp = best if use_aspiration else NO_ASPIRATION
                for s in range(tid, slots, T):
                    kmin[s] = n
                    kmax[s] = -1
                cuda.syncthreads()
                nearest_tabu_jumps(EXP, seq, kmin, kmax, sq, n, it, slots, pairs, GS, bs, warp, lane, W)
                heads_and_tails(sh, E, Q, xbuf, n, m, nm, tid, lane, warp, jj)
                cuda.syncthreads()
                if E[nm + m - 1] != current:  # every block sees the same tables: all stop together
                    if bs == 0 and tid == 0:
                        ERR[0] = it
                        ERR[1] = sq + 1
                    if apart:
                        break
                    grid.sync()
                    continue
                best_here = best_insertion(sh, ps, E, Q, cm, kmin, kmax, xbuf, (n, m, nm, rounds, pairs), (GS, bs),
                                           (tid, lane, warp), jj, asp, tie_key)
                move, cmax = search_winner(grid, (red_c, red_d, red_r, red_i), winners, (tid, T), best_here, it, b, w0,
                                           GS, queued)
                i, k = dv.index_to_insertion(move, n)
                tenure = int64(tenure_min)
                if tenure_max != tenure_min:
                    state += dv.GOLDEN
                    tenure = tenure_min + int64((dv.mix64(state) >> uint64(11)) % uint64(tenure_max - tenure_min + 1))
                apply_insertion(EXP, seq, ps, E, moved, sq, n, m, i, k, it + tenure, tid, T)
                current = cmax
                if current < best:
                    best = current
                    if bs == 0:
                        for q in range(tid, n, T):
                            BEST_SOL[sq, q] = seq[q]
                        if tid == 0:
                            IMP_IT[n_imp, sq] = it
                            IMP_OBJ[n_imp, sq] = best
                    n_imp += 1
            if bs == 0:
                for q in range(tid, n, T):
                    SEQ[sq, q] = seq[q]
                if tid == 0:
                    save_search(STATE, RNG, sq, it, current, best, n_imp, state)
            if not queued:
                return
            pass_on(QUEUE, RING, tid, sq, sub, subchunks, seq0, push0)

    return pfsp_tabu_kernel


PFSP_TABU_KERNELS = {queued: make_pfsp_tabu_kernel(queued) for queued in (False, True)}


def shared_words(n, m, rounds, pairs):
    """Dynamic shared memory (32-bit words) of one block: ps, E, Q, the sequence, tabu bounds, the
    shifted part of the sequence and each warp's makespans."""
    return 3 * n * m + 2 * m + (2 + 2 * pairs) * n + 2 * pairs * rounds


class ResidentPfspTabu:
    """PFSP insertion tabu searches (makespan): one search as one cooperative kernel over the whole
    GPU, K > 1 searches on a persistent grid whose blocks take (search, sub-chunk) items from a
    queue, one block a search (the sequence reloaded into shared memory per item); `run` returns,
    per seed, the result of `lsbench.search.tabu.TabuSearch.run` on the CPU with that seed.
    `persistent`: blocks of the queue grid (default: as many as run at once, no more than K)."""

    def __init__(self, problem, prm, threads=None, persistent=None, blocks=None):
        require("gpu-resident")
        reason = refusal(problem)
        if reason:
            raise LsbenchError(reason)
        for name, value in (("persistent", persistent), ("blocks", blocks)):
            if value is not None and int(value) < 1:
                raise LsbenchError(f"--param {name}: must be at least 1, got {value}")
        if SIM and blocks is not None and int(blocks) > 1:
            raise LsbenchError("--param blocks: the simulator runs one block a search in lockstep (its blocks "
                               "run one after another)")
        self.problem, self.prm = problem, prm
        self.threads = int(threads) if threads else (64 if SIM else 256)
        if self.threads < 2 * WARP or self.threads > MAX_THREADS or self.threads & (self.threads - 1):
            raise LsbenchError(f"--param block: threads per block must be a power of two in [64, {MAX_THREADS}], "
                               f"got {self.threads}")
        self.pairs = self.threads // WARP // 2
        self.want_persistent = None if persistent is None else int(persistent)
        self.want_blocks = None if blocks is None else int(blocks)
        self.pt = cuda.to_device(np.ascontiguousarray(problem.pt, dtype=np.int32).ravel())
        self.shape = None  # blocks, rounds, shared memory: sized for K on the first run with K searches
        self.kernel_s = 0.0

    def _fits(self, blocks, rounds, K, queued=False):
        """(blocks of `rounds` rounds resident at once, shared bytes per block) of the lockstep or
        the queued kernel."""
        n, m = self.problem.n, self.problem.m
        need = within_a_block(shared_words(n, m, rounds, self.pairs) * 4,
                              f"--backend gpu-resident: {self.problem.name} ({n} jobs x {m} machines)")
        compiled = PFSP_TABU_KERNELS[queued]._compile_for_args(*self._args(self._arrays(K, blocks), rounds, 0))
        allow_dynamic_shared(compiled, need)
        fit = compiled.max_cooperative_grid_blocks(self.threads, need)
        if fit < 1:
            raise LsbenchError(f"--param block: {self.threads} threads per block of the PFSP kernel do not fit an SM "
                               "(registers or shared memory); try 256")
        return fit, need

    def shape_for(self, K):
        """One search: enough pairs of warps for every removed position in one round, capped by how
        many blocks can be resident at once (a cooperative launch needs them all). K > 1 searches:
        lockstep, while each can have two or more of the resident blocks (its removed positions in
        fewer rounds); else a persistent grid of up to every resident block takes the searches'
        sub-chunks from a queue, one block a search covering every position in rounds."""
        n, m = self.problem.n, self.problem.m
        rounds_one = -(-n // self.pairs)
        if K == 1 and self.want_persistent is None and self.want_blocks is None:
            if SIM:
                blocks, rounds, need = 1, n, shared_words(n, m, n, self.pairs) * 4
            else:
                blocks = rounds_one
                while True:
                    rounds = -(-n // (blocks * self.pairs))
                    fit, need = self._fits(blocks, rounds, K)
                    if fit >= blocks:
                        break
                    blocks = fit
            return {"searches": 1, "mode": "lockstep", "blocks": blocks, "blocks_per_search": blocks,
                    "threads": self.threads, "rounds": rounds, "dynamic_shared_bytes": need, "persistent_blocks": 0,
                    "iterations_per_queue_item": None}
        if SIM:
            fit, need = self.want_persistent or 2, shared_words(n, m, rounds_one, self.pairs) * 4
        else:
            fit, need = self._fits(1, rounds_one, K)
        per = self.want_blocks or (0 if SIM else min(rounds_one, fit // K))
        if self.want_persistent is None and (self.want_blocks or per >= 2):
            rounds = -(-n // (per * self.pairs))
            if SIM:  # one block a search, the blocks one after another: every search alone
                need = shared_words(n, m, rounds, self.pairs) * 4
            else:
                fit, need = self._fits(K * per, rounds, K)
                if K * per > fit:
                    raise LsbenchError(f"--param blocks={per}: {K} searches x {per} blocks exceed the {fit} blocks "
                                       "this GPU runs at once")
            return {"searches": K, "mode": "lockstep", "blocks": K * per, "blocks_per_search": per,
                    "threads": self.threads, "rounds": rounds, "dynamic_shared_bytes": need, "persistent_blocks": 0,
                    "iterations_per_queue_item": None}
        if not SIM:
            fit, need = self._fits(1, rounds_one, K, queued=True)
        blocks = min(self.want_persistent or fit, K, fit) if not SIM else fit
        return {"searches": K, "mode": "queue", "blocks": blocks, "blocks_per_search": 1, "threads": self.threads,
                "rounds": rounds_one, "dynamic_shared_bytes": need, "persistent_blocks": blocks,
                "iterations_per_queue_item": 2 if SIM else QUEUE_ITEM}

    def _arrays(self, K, blocks):
        n = self.problem.n
        return {"SEQ": cuda.device_array((K, n), np.int32), "EXP": never_tabu((K, n * n)),
                "WKEY": cuda.device_array((2, blocks), np.int64), "WRANK": cuda.device_array((2, blocks), np.uint64),
                "WIDX": cuda.device_array((2, blocks), np.int64), "STATE": cuda.device_array((K, 4), np.int64),
                "RNG": cuda.device_array(K, np.uint64), "BEST_SOL": cuda.device_array((K, n), np.int32),
                "IMP_IT": cuda.device_array((IMPROVEMENT_CAP, K), np.int64),
                "IMP_OBJ": cuda.device_array((IMPROVEMENT_CAP, K), np.int64),
                "ERR": cuda.to_device(np.zeros(2, np.int64)), "QUEUE": cuda.device_array(3, np.int64),
                "RING": cuda.device_array(1, np.int64)}

    def _args(self, dev, rounds, subchunk):
        prm = self.prm
        scalars = (subchunk, prm["tenure_min"], prm["tenure_max"], 1 if prm["aspiration"] else 0, 0, 1, 0, 0, 0)
        searches = tuple(dev[k] for k in ("SEQ", "EXP", "STATE", "RNG", "BEST_SOL", "IMP_IT", "IMP_OBJ", "ERR"))
        sizes = tuple(np.int64(x) for x in (self.problem.n, self.problem.m, rounds))
        return [self.pt, searches, (dev["WKEY"], dev["WRANK"], dev["WIDX"]), dev["QUEUE"], dev["RING"], sizes,
                *(np.int64(x) for x in scalars)]

    def run(self, seeds, stop, progress=None, chunk=None):
        """K = len(seeds) tabu searches, each with the CPU search's start solution and stream."""
        pr, prm = self.problem, self.prm
        sols, states, starts = tabu_starts(pr, seeds)
        if self.shape is None or self.shape["searches"] != len(seeds):
            self.shape = self.shape_for(len(seeds))
        blocks, rounds, need = self.shape["blocks"], self.shape["rounds"], self.shape["dynamic_shared_bytes"]
        subchunk = self.shape["iterations_per_queue_item"] or 0
        dev = self._arrays(len(seeds), blocks)
        dev["SEQ"].copy_to_device(np.array(sols, dtype=np.int32))
        kernel = PFSP_TABU_KERNELS[subchunk > 0]
        launch = chunk_launcher(kernel[blocks, self.threads, 0, need], self._args(dev, rounds, subchunk), dev,
                                sols, states, starts, blocks, subchunk > 0)
        results, self.kernel_s = run_searches(launch, dev, stop, pr.neighbourhood("insertion").size, starts, seeds,
                                              prm, progress, chunk, "gpu-resident PFSP")
        return results

    def describe(self):
        shape = self.shape or {}
        if shape.get("mode") == "queue":
            how = (f"{shape['searches']} PFSP insertion tabu searches on a persistent grid of {shape['blocks']} "
                   f"blocks taking sub-chunks of up to {shape['iterations_per_queue_item']} iterations from a queue")
        elif shape.get("searches", 1) > 1:
            how = (f"{shape['searches']} PFSP insertion tabu searches in lockstep, {shape['blocks_per_search']} blocks "
                   "each (cooperative kernel)")
        else:
            how = "one PFSP insertion tabu search over the whole GPU (cooperative kernel)"
        return {"backend": "gpu-resident", "device": device_name(), "model": how, **shape}


def refusal(problem):
    """Why the fast path cannot run this flow shop (one line), or None."""
    if problem.objective_code != MAKESPAN:
        return (f"--backend gpu-resident: the PFSP fast path minimises the makespan (Taillard's acceleration), "
                f"not {problem.objective_name}")
    if problem.m > WARP:
        return (f"--backend gpu-resident: the PFSP fast path gives each machine a warp lane, at most {WARP} "
                f"machines; {problem.name} has {problem.m}")
    if int(problem.pt.sum()) >= 1 << 31:
        return f"--backend gpu-resident: {problem.name}'s total processing time exceeds 2^31 (32-bit heads and tails)"
    return None
