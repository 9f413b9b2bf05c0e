"""Iterated greedy for the flow-shop makespan on the GPU (`--algorithm ig --backend gpu-resident`):
one warp per search, one search per block, K searches in one launch per chunk of iterations.

The algorithm is lsbench.engines.iterated_greedy's, step for step, so the same seed gives the same
search as the CPU build. What the warp shares: each best insertion (Taillard's acceleration)
rebuilds the heads E and tails Q of the partial sequence in shared memory in one sweep of the
(position x machine) grid by anti-diagonals, lane j owning machine j for the heads and machine
m-1-j for the tails (values passed lane to lane with warp shuffles; shared memory under the
simulator); then each lane rates the places p = lane, lane + 32, ... and the warp takes the lowest
makespan, lowest place among equals (two redux instructions; a shared-memory tree under the
simulator). Every lane keeps the search's SplitMix64 state and draws the same numbers, so random
choices need no broadcast. The processing times stay in global memory (read through L1).
"""
import time

import numpy as np
from numba import config, cuda, int32, int64, uint32, uint64

from lsbench.errors import LsbenchError
from lsbench.engines.iterated_greedy import (BEST, CHUNK_CAP, CUR, EVALS, IT, NIMP, READY, IteratedGreedyEngine)

from .. import device as dv
from .. import device_name, require
from ..runtime.intrinsics import warp_min_u32
from ..runtime.launch import allow_dynamic_shared, within_a_block
from ..runtime.waits import wait_for
from ..runtime.lanes import XBUF, from_left2, warp_sync

SIM = config.ENABLE_CUDASIM
WARP = 32
NO_PLACE = 0x7FFFFFFF  # a lane without a place brings this makespan (real ones are below 2^31 - 1)


@cuda.jit(device=True, inline=True)
def draw_below(state, k):
    """rng.below on a register state: (new state, uniform integer in [0, k))."""
    state += dv.GOLDEN
    return state, int32((dv.mix64(state) >> uint64(11)) % uint64(k))


@cuda.jit(device=True, inline=True)
def warp_first_min(c, p, red, lane):
    """(c, p) of the lane with the lowest c, the lowest p among equals, in every lane."""
    if SIM:
        red[lane] = (int64(c) << 20) | int64(p)
        warp_sync()
        step = WARP // 2
        while step > 0:
            if lane < step:
                red[lane] = min(red[lane], red[lane + step])
            warp_sync()
            step //= 2
        key = red[0]
        warp_sync()
        return int32(key >> 20), int32(key & 0xFFFFF)
    cmin = warp_min_u32(uint32(c))
    pmin = warp_min_u32(uint32(p) if uint32(c) == cmin else uint32(0xFFFFFFFF))
    return int32(cmin), int32(pmin)


@cuda.jit(device=True, inline=True)
def best_place(PT, seq, length, job, E, Q, red, xbuf, tid, lane, m):
    """lsbench.problems.pfsp.best_insertion by one warp: (place, makespan) in every lane."""
    if lane < m:
        E[lane] = 0
        Q[length * m + m - 1 - lane] = 0
    own_e = int32(0)
    own_q = int32(0)
    mq = m - 1 - lane
    for s in range(length + m - 1):
        left_e, left_q = from_left2(own_e, own_q, xbuf, tid, lane)
        k = s - lane
        if lane < m and 0 <= k < length:
            own_e = int32(max(own_e, left_e) + PT[seq[k] * m + lane])
            E[(k + 1) * m + lane] = own_e
            kq = length - 1 - k
            own_q = int32(max(own_q, left_q) + PT[seq[kq] * m + mq])
            Q[kq * m + mq] = own_q
    warp_sync()
    best_c = int32(NO_PLACE)
    best_p = int32(0)
    for p in range(lane, length + 1, WARP):
        f = int32(0)
        c = int32(0)
        for j in range(m):
            f = int32(max(f, E[p * m + j]) + PT[job * m + j])
            c = max(c, int32(f + Q[p * m + j]))
        if c < best_c:
            best_c, best_p = c, int32(p)
    c, p = warp_first_min(best_c, best_p, red, lane)
    return p, c


@cuda.jit(device=True, inline=True)
def insert_job(seq, tmp, length, p, job, lane):
    """pfsp.insert_at by one warp."""
    for t in range(p + lane, length, WARP):
        tmp[t] = seq[t]
    warp_sync()
    for t in range(p + 1 + lane, length + 1, WARP):
        seq[t] = tmp[t - 1]
    if lane == 0:
        seq[p] = job
    warp_sync()


@cuda.jit(device=True, inline=True)
def remove_job(seq, tmp, length, i, lane):
    """pfsp.remove_at by one warp; returns the job."""
    for t in range(i + lane, length, WARP):
        tmp[t] = seq[t]
    warp_sync()
    for t in range(i + lane, length - 1, WARP):
        seq[t] = tmp[t + 1]
    job = tmp[i]
    warp_sync()
    return job


@cuda.jit(device=True, inline=True)
def local_search(PT, seq, cur, state, E, Q, order, tmp, slot, red, xbuf, tid, lane, n, m):
    """iterated_greedy.local_search_steps, whole, by one warp: (makespan, places evaluated, stream state)."""
    evals = int64(0)
    improve = True
    while improve:
        improve = False
        for t in range(lane, n, WARP):
            order[t] = t
        warp_sync()
        for t in range(n - 1, 0, -1):  # every lane draws; lane 0 swaps
            state, j = draw_below(state, t + 1)
            if lane == 0:
                o = order[t]
                order[t] = order[j]
                order[j] = o
        warp_sync()
        for t in range(n):
            job = order[t]
            for u in range(lane, n, WARP):
                if seq[u] == job:
                    slot[0] = u
            warp_sync()
            i = slot[0]
            remove_job(seq, tmp, n, i, lane)
            p, c = best_place(PT, seq, n - 1, job, E, Q, red, xbuf, tid, lane, m)
            evals += n
            if c < cur:
                insert_job(seq, tmp, n - 1, p, job, lane)
                cur = c
                improve = True
            else:
                insert_job(seq, tmp, n - 1, i, job, lane)
    return cur, evals, state


@cuda.jit
def ig_kernel(PT, THR, SEQ, BEST_SEQ, ST, RNG, IMP_IT, IMP_OBJ, n, m, d, n_iter, target):
    """Block b runs search b's next n_iter iterations (the start's local search first, if not done)."""
    sh = cuda.shared.array(0, int32)
    red = cuda.shared.array(WARP if SIM else 1, int64)
    xbuf = cuda.shared.array((XBUF, 2), int32)
    b = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    lane = tid
    rows = (n + 1) * m
    seq = sh[0:n]
    work = sh[n:2 * n]
    order = sh[2 * n:3 * n]
    tmp = sh[3 * n:4 * n]
    removed = sh[4 * n:4 * n + d]
    slot = sh[4 * n + d:4 * n + d + 1]
    E = sh[4 * n + d + 1:4 * n + d + 1 + rows]
    Q = sh[4 * n + d + 1 + rows:4 * n + d + 1 + 2 * rows]
    for t in range(lane, n, WARP):
        seq[t] = SEQ[b, t]
    warp_sync()
    state = RNG[b]
    it = ST[b, IT]
    cur = int32(ST[b, CUR])
    best = int32(ST[b, BEST])
    evals = ST[b, EVALS]
    n_imp = 0
    if ST[b, READY] == 0:
        cur, ev, state = local_search(PT, seq, cur, state, E, Q, order, tmp, slot, red, xbuf, tid, lane, n, m)
        evals += ev
        if cur < best:
            best = cur
            for t in range(lane, n, WARP):
                BEST_SEQ[b, t] = seq[t]
    for _ in range(n_iter):
        if best <= target:
            break
        it += 1
        for t in range(lane, n, WARP):
            work[t] = seq[t]
        warp_sync()
        length = n
        for r in range(d):
            state, i = draw_below(state, length)
            job = remove_job(work, tmp, length, i, lane)
            if lane == 0:
                removed[r] = job
            length -= 1
        warp_sync()
        c = int32(0)
        for r in range(d):
            job = removed[r]
            p, c = best_place(PT, work, length, job, E, Q, red, xbuf, tid, lane, m)
            evals += length + 1
            insert_job(work, tmp, length, p, job, lane)
            length += 1
        c, ev, state = local_search(PT, work, c, state, E, Q, order, tmp, slot, red, xbuf, tid, lane, n, m)
        evals += ev
        delta = int64(c) - int64(cur)
        accept = delta <= 0
        if not accept:
            state += dv.GOLDEN
            draw = int64(dv.mix64(state) >> uint64(11))
            accept = delta < THR.shape[0] and draw < THR[delta]
        if accept:
            for t in range(lane, n, WARP):
                seq[t] = work[t]
            cur = c
            if c < best:
                best = c
                for t in range(lane, n, WARP):
                    BEST_SEQ[b, t] = work[t]
                if lane == 0:
                    IMP_IT[n_imp, b] = it
                    IMP_OBJ[n_imp, b] = c
                n_imp += 1
        warp_sync()
    for t in range(lane, n, WARP):
        SEQ[b, t] = seq[t]
    if lane == 0:
        ST[b, IT] = it
        ST[b, CUR] = cur
        ST[b, BEST] = best
        ST[b, EVALS] = evals
        ST[b, NIMP] = n_imp
        ST[b, READY] = 1
        RNG[b] = state


def shared_words(n, m, d):
    """Dynamic shared memory (32-bit words) of one search: four sequences, the removed jobs, a slot,
    the heads and the tails."""
    return 4 * n + d + 1 + 2 * (n + 1) * m


class DeviceIteratedGreedyEngine(IteratedGreedyEngine):
    """K iterated greedy searches on the GPU, one warp each; the same searches as on the CPU."""

    name = "gpu-resident"
    parallel = False

    def __init__(self, problem, neighbourhood, search, params, threads=None):
        require("gpu-resident")
        super().__init__(problem, neighbourhood, search, params, threads)
        pr = problem
        if pr.m > WARP:
            raise LsbenchError(f"--backend gpu-resident: the iterated greedy gives each machine a warp lane, at most "
                               f"{WARP} machines; {pr.name} has {pr.m}")
        if int(pr.pt.sum()) >= NO_PLACE or pr.n >= 1 << 20:
            raise LsbenchError(f"--backend gpu-resident: {pr.name}'s total processing time must stay below 2^31 - 1 "
                               "(32-bit heads and tails) and its jobs below 2^20")
        self.need = within_a_block(shared_words(pr.n, pr.m, self.prm["destruction"]) * 4,
                                   f"--backend gpu-resident: {pr.name} ({pr.n} jobs x {pr.m} machines), a search")
        self.PT = cuda.to_device(np.ascontiguousarray(pr.pt, dtype=np.int32).ravel())
        self.THR = cuda.to_device(self.prm["thresholds"])
        self.kernel_s = 0.0
        self.compiled = None

    def upload(self, seqs, states, sts):
        K = len(sts)
        self.SEQ = cuda.to_device(seqs.astype(np.int32))
        self.BEST_SEQ = cuda.to_device(seqs.astype(np.int32))
        self.ST = cuda.to_device(sts)
        self.RNG = cuda.to_device(states)
        self.IMP_IT = cuda.device_array((CHUNK_CAP, K), np.int64)
        self.IMP_OBJ = cuda.device_array((CHUNK_CAP, K), np.int64)
        self.kernel_s = 0.0

    def chunk(self, n_iter, target):
        pr, K = self.problem, self.ST.shape[0]
        args = (self.PT, self.THR, self.SEQ, self.BEST_SEQ, self.ST, self.RNG, self.IMP_IT, self.IMP_OBJ,
                np.int64(pr.n), np.int64(pr.m), np.int64(self.prm["destruction"]), np.int64(n_iter), np.int64(target))
        if self.compiled is None and not SIM:
            self.compiled = ig_kernel._compile_for_args(*args)
            allow_dynamic_shared(self.compiled, self.need)
        t0 = time.perf_counter()
        ig_kernel[K, WARP, 0, self.need](*args)
        wait_for()
        sts = self.ST.copy_to_host()
        rows = int(sts[:, NIMP].max())
        imp_it = self.IMP_IT[:max(rows, 1)].copy_to_host()
        imp_obj = self.IMP_OBJ[:max(rows, 1)].copy_to_host()
        self.kernel_s += time.perf_counter() - t0
        return sts, imp_it, imp_obj

    def download(self):
        return self.BEST_SEQ.copy_to_host(), self.SEQ.copy_to_host()

    def resume(self, seqs, sts):
        self.SEQ.copy_to_device(np.ascontiguousarray(seqs, dtype=np.int32))
        self.ST.copy_to_device(sts)

    def describe(self):
        return {"backend": self.name, "device": device_name(), "searches": self.count, "restarts": self.restarts,
                "model": "one warp per iterated greedy search, one search per block",
                "threads": WARP, "dynamic_shared_bytes": self.need, "kernel_s": round(self.kernel_s, 6)}
