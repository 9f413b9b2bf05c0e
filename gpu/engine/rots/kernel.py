"""The device-resident robust tabu search kernel for QAP (`--backend gpu-resident`), per shape.

One thread block per search, the whole Ro-TS loop on the GPU (Tsutsui & Fujimoto's MATA design):
- the cost in symmetric form where one matrix is symmetric (one product per term), seen through
  the permuted matrix bp[i, k] = B[p_i, p_k], which a swap updates in O(n);
- on chip (dynamic shared memory, as much as fits): the delta table (32-bit where the instance's
  swap_delta_bound allows), bp, each move's older tabu expiry, the flows (bp and the flows as bytes
  where they fit, rows padded to whole words, byte rows to 16-byte quads) and the tabu matrix; the
  rest in global memory;
- one pass per iteration: each owning thread updates its run of moves along one row (a row chunk), disjoint from the last
  swap, in O(1) and keys them under Taillard's rule (tabu, aspiration by improvement and by age),
  class and delta in one 32-bit word where the bound allows; lane groups recompute the 2n-3 moves
  touching it in O(n) (four terms per dp4a on bytes, warp shuffles on the device, one thread each
  under the simulator); a key is one int64 (class, delta, i, j), so the block-level minimum (two
  redux instructions a warp) is exactly the CPU's rule, lowest index on ties; two barriers per
  iteration, the swap between them (its rows by the first n threads, its columns by the block's
  last warps, its own entries by a free warp's first thread), and the step loop's clock and
  aspiration horizon in 32 bits;
- on a Hopper GPU one search may span a thread block cluster (`cluster`): each block owns a share
  of the moves, recomputed moves go to their owner's shared memory and the warps' keys to every
  block (distributed shared memory, st.async, gpu/runtime/cluster.py), each block waiting on its own
  mbarrier for exactly the bytes it expects;
- the tenures come from the search's SplitMix64 stream, as in the CPU search.
K searches (seeds s..s+K-1) run as K blocks, or (QUEUED, more searches than fit at once) on a
persistent grid whose blocks take (search, sub-chunk) items from a queue: each search's first, then
the searches whose last item has ended, in the order they ended (RING), so that a block never
waits for one given search; the state goes through global memory between items; the host launches chunks
of iterations and reads back only the best values, improvements and, at the end, the best
solutions. A search starts (or, FRESH = 2, restarts keeping its best) from START. One search gives exactly
the trajectory of `lsbench run --algorithm rots --backend cpu` with the same seed.
The shape comes from gpu/engine/rots/plan.py; the host side is gpu/engine/rots/host.py.
"""
import importlib

import numpy as np
from numba import cuda, int32, int64, uint32


from . import device_functions as rots_device, steps as rots_steps
from ...runtime.chunks import pass_on, take_item
from .constants import KernelConstants
from .plan import SHUFFLE

NO_BEST = np.int64(np.iinfo(np.int64).max)

_kernels = {}


def kernel_for(shape, adapter):
    """The compiled kernel for one shape and a problem's device adapter (its module's path); the
    shape's max_registers caps registers per thread so that more blocks (searches) fit on an SM."""
    key = KernelConstants.of(shape, adapter)
    if key not in _kernels:
        _kernels[key] = _make_kernel(key)
    return _kernels[key]


def _make_kernel(k):
    """The kernel for constants k: the engine's device functions and steps around the adapter's."""
    problem = importlib.import_module(k.adapter)
    draw_tenures = rots_device.tenure_draws(k)
    keys, tabu, cost, swap = rots_device.move_keys(k), problem.tabu(k), problem.costs(k), problem.swaps(k)
    exchange = rots_steps.exchanges(k, draw_tenures)
    parts = {"draw_tenures": draw_tenures, "swap": swap, "exchange": exchange,
             "tables": rots_steps.tables(k, exchange, swap, cost),
             "moves": rots_steps.move_pass(k, keys, tabu, cost, swap, exchange),
             "items": rots_steps.work_items(k), "taking": rots_steps.taking(k, swap),
             "starting": rots_steps.starting(k, problem.start(k, cost, tabu))}
    return _kernel(k, **parts)


def _kernel(k, draw_tenures, swap, exchange, tables, moves, items, taking, starting):
    N, THREADS, CLUSTER, QUEUED, SUBCHUNK, GENERAL, DP4A, ROW_SUMS = k.n, k.threads, k.cluster, k.queued, k.subchunk, k.general, k.dp4a, k.row_sums
    PADDED_SIZE, UPDATE_LENGTH, ROW_WORDS, ITEMS, FLOWS_SHARED = k.padded_size, k.update_length, k.row_words, k.items, k.flows_shared
    MATRIX_OFFSET, FLOWS_OFFSET, DELTA_TYPE, DELTA_NP, BPT, PACKED = k.matrix_offset, k.flows_offset, k.delta_type, k.delta_np, k.data_type, k.packed
    DMIN = np.int64(-(1 << 63)) if k.wide else np.int64(-(1 << 31))
    KEY_SLOTS, WARPS, NO_KEY, XKEYS = k.key_slots, k.warps, k.no_key, k.cluster_keys
    ALLOWED, no_swap, take_move, begin = k.allowed, swap.no_swap, taking.take_move, starting.begin
    init_exchange, cluster_barrier, block_min = exchange.init_exchange, exchange.cluster_barrier, exchange.block_min
    load_tables, resume, store_item, item_at, item_tables = tables.load_tables, tables.resume, tables.store_item, items.item_at, items.item_tables
    own_moves, recompute_touching, update_owned = moves.own_moves, moves.recompute_touching, moves.update_owned

    @(cuda.jit(max_registers=k.max_registers) if k.max_registers and SHUFFLE else cuda.jit)  # (the simulator takes no cap)
    def rots_kernel(instance, searches_state, run):
        """instance: the flows and distances (host.RotsEngine); searches_state: the searches' device
        state (host.SearchBuffers.state_args); run: this launch's scalars (host.launch_chunk)."""
        A, AT, BG, ADIAG, BDIAG, ROWCHUNK = instance
        (P, DELTA, BPG, BPTG, OLDG, EX, PEND, STATE, CUR, BEST, BEST_SOL, IMP_IT, IMP_OBJ, NIMP, DONE, ACTIVE, START,
         FRESH, QUEUE, RING) = searches_state
        (tenure_span, tenure_magic, tenure_min, aspiration, target, chunk_it0, chunk_iters, tenure_cube, fresh_all,
         item0, seq0, push0) = run
        tid = cuda.threadIdx.x
        lane = tid % 32
        warp = tid // 32
        p = cuda.shared.array(N, int32)
        # the last swap's update vectors (rows of A, rows of bp), and MOVES_PER_THREAD past the end: a chunk's slots
        # past its row's end go on to j = N, N + 1, ... (read, never used)
        u = cuda.shared.array(UPDATE_LENGTH, int64 if PACKED else DELTA_TYPE)  # PACKED: u and w, one word
        w = cuda.shared.array(1 if PACKED else UPDATE_LENGTH, DELTA_TYPE)
        v = cuda.shared.array(UPDATE_LENGTH if GENERAL else 1, DELTA_TYPE)  # general instances: the column parts
        z = cuda.shared.array(UPDATE_LENGTH if GENERAL else 1, DELTA_TYPE)
        rkey = cuda.shared.array(KEY_SLOTS, int64)
        srow = cuda.shared.array(N if ROW_SUMS else 1, uint32)  # byte matrices: the row sums S_i (swap_cost)
        xkey = cuda.shared.array(XKEYS, int64)  # a cluster: every warp's key, by parity
        bars = cuda.shared.array(2 if CLUSTER > 1 else 1, int64)  # a cluster: the exchange's mbarriers, by parity
        ten = cuda.shared.array(2, int32)
        dyn_d = cuda.shared.array(0, DELTA_TYPE)  # the dynamic shared memory, seen through each table's type
        dyn_b = cuda.shared.array(0, BPT)
        dyn_i = cuda.shared.array(0, int32)
        Af = dyn_b[FLOWS_OFFSET:FLOWS_OFFSET + PADDED_SIZE] if FLOWS_SHARED else A
        for q in range(tid, PADDED_SIZE if FLOWS_SHARED else 0, THREADS):
            Af[q] = A[q]
        if DP4A:  # the flows and bp as 32-bit words (their byte offsets are multiples of 16: quads)
            dyn_w = cuda.shared.array(0, uint32, alignment=16)  # (quads: 128-bit loads)
            Aw = dyn_w[FLOWS_OFFSET // 4:FLOWS_OFFSET // 4 + N * ROW_WORDS]
            bpw = dyn_w[MATRIX_OFFSET // 4:MATRIX_OFFSET // 4 + N * ROW_WORDS]
        for q in range(WARPS + tid, KEY_SLOTS if SHUFFLE else 0, THREADS):  # (block_min's lanes past the last warp)
            rkey[q] = NO_KEY
        job = cuda.shared.array(2, int64)  # QUEUED: the block's pop (past the last: none, or a wait ran out), its item
        searches = ACTIVE.shape[0]
        subchunks = (chunk_iters + SUBCHUNK - 1) // SUBCHUNK if QUEUED else 1
        while True:  # work items: one per block (a search's chunk), or (QUEUED) taken from the queue
            if QUEUED and not take_item(QUEUE, RING, job, tid, item0, seq0, searches, subchunks):
                break
            sid, sub, blk, rank = item_at(job, seq0)
            it0 = chunk_it0 + sub * SUBCHUNK
            n_iter = min(SUBCHUNK, chunk_iters - sub * SUBCHUNK) if QUEUED else chunk_iters
            fresh = max(FRESH[sid], fresh_all) if sub == 0 else 0  # 1: a start; 2: a restart, which keeps its best
            if ACTIVE[sid] == 0:  # this search reached its target (or its cas colony did) earlier
                fresh = -1
            # a restart keeps the search's best: read by every thread (of every block of the cluster)
            # here, before the barriers of the start, as thread 0 of block 0 may lower it after them
            prior = BEST[sid] if fresh == 2 else NO_BEST
            if fresh >= 0:
                dl, bp, old, bpt, ex = item_tables((dyn_d, dyn_b, dyn_i), (DELTA, BPG, BPTG, OLDG, EX), blk)
                if not DP4A:
                    Aw = Af
                    bpw = bp
                src = START if fresh else P  # a start, or the state of the search's last chunk
                for q in range(tid, N, THREADS):
                    p[q] = src[sid, q]
                load_tables(dl, bp, old, ex, DELTA, BPG, OLDG, EX, blk, 0 if fresh else 1, tid)
                current = np.int64(0)
                init_exchange(bars, tid)
                cluster_barrier()  # every block of the cluster has started: its shared memory may be written
                frame = (Af, AT, bp, bpt, Aw, bpw, srow, ADIAG, BDIAG, p)  # the permuted frame, as the steps read it
                updates = (u, w, v, z)
                current, best = begin(fresh, prior, frame, (BG, ROWCHUNK, dl, old, ex, rkey), (sid, rank, tid, np.int32(it0)),
                                      (CUR, FRESH, BEST, BEST_SOL))
                first_item, first_warp_item, i0, j0, count, local = own_moves(ROWCHUNK, tid, warp, rank)
                state, moved, r, s, dlast, nimp, done = resume(STATE, PEND, NIMP, DONE, frame, updates, sid, sub, fresh, tid)
                stop = False
                # 32-bit step bookkeeping on every warp's path: the clock it32 and it_asp (see ASPIRE_FLOOR)
                it32 = np.int32(it0)
                it_end = np.int32(it0 + n_iter)
                it_asp = np.int32(max(it0 - aspiration, ASPIRE_FLOOR))
                while it32 < it_end:
                    step = np.int32(it32 - np.int32(it0))  # (a cluster's mbarrier phases count from the item's start)
                    it32 = np.int32(it32 + 1)
                    it_asp = np.int32(it_asp + 1)
                    thr = DELTA_NP(max(best - current, DMIN))  # d < thr: a new best (aspiration)
                    if CLUSTER == 1 and tid == THREADS - 1:  # the next move's two tenures (read after the barrier;
                        draw_tenures(ten, state, tenure_min, tenure_span, tenure_magic, tenure_cube)  # a cluster: block_min)
                    kb = recompute_touching(frame, (dl, old, ex), bars, (r, s, dlast), (thr, it_asp, it32, step), first_item,
                                            first_warp_item if moved else np.int32(ITEMS), tid)
                    kb, touched = update_owned(kb, dl, old, u, w, v, z, i0, j0, count, local, r, s, thr, it_asp, it32)
                    kb = block_min(kb, rkey, xkey, bars, touched, step, rank, tid, lane, warp, ten, state, tenure_min, tenure_span,
                                   tenure_magic, tenure_cube)
                    moved = kb < ALLOWED  # else every move is tabu: Taillard keeps the solution
                    if moved:
                        r, s, dlast, current, best, state, nimp, stop = take_move(
                            kb, frame, updates, ex, BEST_SOL, ten, (IMP_IT, IMP_OBJ), (sid, rank, tid, it32),
                            (current, best, state, nimp, dlast, target, stop))
                    else:
                        r, s = no_swap(u, v, tid)
                    cuda.syncthreads()
                    if stop:
                        if QUEUED and tid == 0:  # the search's later items of this launch return at once
                            ACTIVE[sid] = 0
                        break
                store_item((p, dl, bp, old, ex), (P, DELTA, BPG, OLDG, EX, PEND, CUR, BEST, STATE, NIMP, DONE),
                           (sid, blk, rank, tid), (moved, dlast, r, s, current, best, state, nimp, done + (it32 - np.int32(it0))))
            if not QUEUED:
                break
            pass_on(QUEUE, RING, tid, sid, sub, subchunks, seq0, push0)
    return rots_kernel


REBASE_AT = 1 << 30
REBASE_BY = 1 << 29
EXPIRED = -(1 << 30)
# The kernel's step clock it32 stays below 2^31 (the host rebases it under 2^30 before a chunk), and
# it_asp = it - aspiration is clamped once at ASPIRE_FLOOR: the ages are never below EXPIRED, so that a
# horizon under it, where it stays through any chunk (fewer than 2^29 iterations), aspirates nothing,
# clamped or not.
ASPIRE_FLOOR = EXPIRED - (1 << 29)


@cuda.jit
def rebase_kernel(expiries, by):
    """Moves the searches' clock back by `by` iterations in a table of expiries (one row per
    block): every expiry shifts with it, those long past are clamped to EXPIRED, which stays older
    than any aspiration horizon -- the same moves are tabu, allowed or aspirated as before, and
    the 32-bit expiries never overflow."""
    row = cuda.blockIdx.x
    for k in range(cuda.threadIdx.x, expiries.shape[1], cuda.blockDim.x):
        expiries[row, k] = max(expiries[row, k] - by, EXPIRED)
