"""The resident Ro-TS kernel's steps (gpu/engine/rots/kernel.py runs them in order, taking its work items
from the queue every resident engine shares, gpu/runtime/chunks.py), one factory per role: the
block's work item and its tables' views, a search's tables in and out of global memory, its start,
the moves' pass (the O(n) recomputations of the moves touching the last swap and every other
move's O(1) update), the block's (or cluster's) minimum key, and taking the winning move. Each factory takes the kernel's constants
(gpu/engine/rots/constants.py) and the device functions it uses: the engine's
(gpu/engine/rots/device_functions.py) and the adapter's (gpu/adapters/qap_rots.py).
"""
from types import SimpleNamespace

import numpy as np
from numba import cuda

from lsbench import rng

from ...runtime.chunks import item_of
from ...runtime.lanes import U64, device
from .plan import SHUFFLE


def tables(k, exchange, swap, cost):
    """load_tables: a chunk after the first takes its on-chip tables back from global memory;
    resume: its step state; store_item: the state goes back to global memory for the next chunk
    (the last swap's update pending); the cluster's blocks hold the same permutation, each its own
    copy of the tables."""
    N, N_SQUARED, THREADS, SLOTS, PADDED_SIZE, ROW_SUMS = k.n, k.n_squared, k.threads, k.slots, k.padded_size, k.row_sums
    DELTA_SHARED, MATRIX_SHARED, AGE_SHARED, TABU_SHARED = k.delta_shared, k.matrix_shared, k.age_shared, k.tabu_shared
    NO_MOVE = -1  # PEND: no swap waiting to be folded into the delta table
    DELTA_NP = k.delta_np
    cluster_barrier, pending_updates, no_swap, row_sums = exchange.cluster_barrier, swap.pending_updates, swap.no_swap, cost.row_sums

    @device
    def load_tables(dl, bp, old, ex, DELTA, BPG, OLDG, EX, blk, kept, tid):
        for q in range(tid, SLOTS if DELTA_SHARED and kept else 0, THREADS):
            dl[q] = DELTA[blk, q]
        for q in range(tid, PADDED_SIZE if MATRIX_SHARED and kept else 0, THREADS):
            bp[q] = BPG[blk, q]
        for q in range(tid, SLOTS if AGE_SHARED and kept else 0, THREADS):
            old[q] = OLDG[blk, q]
        for q in range(tid, N_SQUARED if TABU_SHARED and kept else 0, THREADS):
            ex[q] = EX[blk, q]

    @device
    def resume(STATE, PEND, NIMP, DONE, frame, updates, sid, sub, fresh, tid):
        """The item's step state: the search's stream, its pending swap (whose delta-table update is
        still to come: its update vectors), improvements and iterations so far, and the row sums.
        frame: (Af, AT, bp, bpt, Aw, bpw, srow, ADIAG, BDIAG, p); updates: (u, w, v, z)."""
        Af, AT, bp, bpt, Aw, bpw, srow, _ad, _bd, _p = frame
        u, w, v, z = updates
        state = STATE[sid, 0]
        pend = NO_MOVE if fresh else PEND[sid]  # (the swap's delta << 32 | r << 16 | s)
        moved = pend != NO_MOVE
        r = np.int32((pend >> 16) & 0xFFFF)  # 32-bit facility numbers: narrow comparisons in the hot loop
        s = np.int32(pend & 0xFFFF)
        dlast = DELTA_NP(pend >> 32) if moved and ROW_SUMS else DELTA_NP(0)  # the last swap's delta
        nimp = NIMP[sid] if sub > 0 else 0  # QUEUED: a launch's sub-chunks count together
        done = DONE[sid] if sub > 0 else 0
        cuda.syncthreads()
        if moved:
            pending_updates(Af, AT, bp, bpt, u, w, v, z, r, s, tid)
        else:
            r, s = no_swap(u, v, tid)
        # (bp is as after the pending swap; a start's sums are computed again here: skipping them
        # kept `fresh` live and added two spills to the 512-thread loop's SASS)
        row_sums(Aw, bpw, srow, tid)
        cuda.syncthreads()
        return state, moved, r, s, dlast, nimp, done

    @device
    def store_item(tables, saved, where, step):
        """tables: (p, dl, bp, old, ex), on chip; saved: (P, DELTA, BPG, OLDG, EX, PEND, CUR, BEST,
        STATE, NIMP, DONE), their global copies; where: (sid, blk, rank, tid); step: (moved, dlast,
        r, s, current, best, state, nimp, done)."""
        p, dl, bp, old, ex = tables
        P, DELTA, BPG, OLDG, EX, PEND, CUR, BEST, STATE, NIMP, DONE = saved
        sid, blk, rank, tid = where
        moved, dlast, r, s, current, best, state, nimp, done = step
        cluster_barrier()  # no block leaves while another may still write its shared memory
        lead = rank == 0
        for q in range(tid, N if lead else 0, THREADS):
            P[sid, q] = p[q]
        for q in range(tid, SLOTS if DELTA_SHARED else 0, THREADS):
            DELTA[blk, q] = dl[q]
        for q in range(tid, PADDED_SIZE if MATRIX_SHARED else 0, THREADS):
            BPG[blk, q] = bp[q]
        for q in range(tid, SLOTS if AGE_SHARED else 0, THREADS):
            OLDG[blk, q] = old[q]
        for q in range(tid, N_SQUARED if TABU_SHARED else 0, THREADS):
            EX[blk, q] = ex[q]
        if tid == 0 and lead:
            PEND[sid] = ((np.int64(dlast) << 32) if ROW_SUMS else 0) | (r << 16) | s if moved else NO_MOVE
            CUR[sid] = current
            BEST[sid] = best
            STATE[sid, 0] = state
            NIMP[sid] = nimp
            DONE[sid] = done

    return SimpleNamespace(load_tables=load_tables, resume=resume, store_item=store_item)


def work_items(k):
    """item_at: the block's work item (a search's chunk, or a queue item); item_tables: its
    tables, on chip where the shape put them, else the block's rows of their global copies."""
    QUEUED, CLUSTER, SLOTS, PADDED_SIZE, N_SQUARED = k.queued, k.cluster, k.slots, k.padded_size, k.n_squared
    DELTA_SHARED, MATRIX_SHARED, AGE_SHARED, TABU_SHARED = k.delta_shared, k.matrix_shared, k.age_shared, k.tabu_shared
    DELTA_OFFSET, MATRIX_OFFSET, AGE_OFFSET, TABU_OFFSET = k.delta_offset, k.matrix_offset, k.age_offset, k.tabu_offset

    @device
    def item_at(job, seq0):
        """(sid, sub, blk, rank) of the block's work item: QUEUED, the one take_item put in job;
        else this block's: block `rank` of search `sid`'s cluster, its one chunk."""
        if QUEUED:
            sid, sub = item_of(job, seq0)
            return sid, sub, sid, np.int32(0)
        blk = cuda.blockIdx.x
        return blk // CLUSTER, 0, blk, np.int32(blk % CLUSTER)

    @device
    def item_tables(dynamic, saved, blk):
        """(dl, bp, old, bpt, ex): the delta table, the permuted matrix (every block of a cluster keeps
        its own copy), each move's older tabu expiry, bp's transpose (general instances) and
        ex[i * N + l], the iteration until which facility i may not return to location l.
        dynamic: (dyn_d, dyn_b, dyn_i), the dynamic shared memory as each table's type; saved:
        (DELTA, BPG, BPTG, OLDG, EX)."""
        dyn_d, dyn_b, dyn_i = dynamic
        DELTA, BPG, BPTG, OLDG, EX = saved
        dl = dyn_d[DELTA_OFFSET:DELTA_OFFSET + SLOTS] if DELTA_SHARED else DELTA[blk]
        bp = dyn_b[MATRIX_OFFSET:MATRIX_OFFSET + PADDED_SIZE] if MATRIX_SHARED else BPG[blk]
        old = dyn_i[AGE_OFFSET:AGE_OFFSET + SLOTS] if AGE_SHARED else OLDG[blk]
        ex = dyn_i[TABU_OFFSET:TABU_OFFSET + N_SQUARED] if TABU_SHARED else EX[blk]
        return dl, bp, old, BPTG[blk], ex

    return SimpleNamespace(item_at=item_at, item_tables=item_tables)


def starting(k, start_state):
    """begin: the item's current and best objectives, a start (fresh) building its state first."""
    N, THREADS = k.n, k.threads

    @device
    def begin(fresh, prior, frame, start, where, saved):
        """fresh: 0 a later chunk, 1 a start, 2 a restart that keeps its best `prior`; start: (BG,
        ROWCHUNK, dl, old, ex, rkey), start_state's tables; where: (sid, rank, tid, it0); saved:
        (CUR, FRESH, BEST, BEST_SOL). Returns (current, best)."""
        BG, ROWCHUNK, dl, old, ex, rkey = start
        sid, rank, tid, it0 = where
        CUR, FRESH, BEST, BEST_SOL = saved
        if fresh:  # the first chunk builds its start state from the permutation alone (a cas ant: gpu/engine/ants.py)
            current = start_state(frame, BG, ROWCHUNK, dl, old, ex, rkey, tid, rank, it0)
            if tid == 0 and rank == 0:
                CUR[sid] = current
                FRESH[sid] = 0
                if current < prior:
                    BEST[sid] = current
            p = frame[9]
            for q in range(tid, N if rank == 0 and current < prior else 0, THREADS):
                BEST_SOL[sid, q] = p[q]
            best = min(current, prior)
        else:
            current = CUR[sid]
            best = BEST[sid]
        return current, best

    return SimpleNamespace(begin=begin)


def taking(k, swap):
    """take_move: the iteration's winner from the block's minimum key, and the swap."""
    ROW_SUMS, DELTA_NP, BIAS, INDEX_BITS = k.row_sums, k.delta_np, k.bias, k.index_bits
    J_BITS, JMASK = np.int64(k.index_bits // 2), np.int64((1 << (k.index_bits // 2)) - 1)
    DMASK, GOLDEN = np.int64((1 << k.delta_bits) - 1), rng.GOLDEN
    apply_swap = swap.apply_swap

    @device
    def take_move(kb, frame, updates, ex, BEST_SOL, ten, improvements, where, search):
        """Moves to the winner of key kb (not every move tabu), recording a new best.
        improvements: (IMP_IT, IMP_OBJ); where: (sid, rank, tid, it32); search: (current, best,
        state, nimp, dlast, target, stop). Returns (r, s, dlast, current, best, state, nimp, stop),
        stop once the target is reached."""
        IMP_IT, IMP_OBJ = improvements
        sid, rank, tid, it32 = where
        current, best, state, nimp, dlast, target, stop = search
        r = np.int32((kb >> J_BITS) & JMASK)
        s = np.int32(kb & JMASK)
        if ROW_SUMS:  # (elsewhere not kept: a register held across the loop measured slower)
            dlast = DELTA_NP(((kb >> np.int64(INDEX_BITS)) & DMASK) - BIAS)  # the winner's delta, from its key
            current += dlast
        else:
            current += ((kb >> np.int64(INDEX_BITS)) & DMASK) - BIAS
        improved = current < best
        if improved:
            best = current
        state += GOLDEN + GOLDEN  # the tenures of r and s took the stream's next two words
        apply_swap(frame, updates, ex, BEST_SOL, ten, r, s, it32, improved and rank == 0, sid, tid)
        if improved:
            if tid == 0 and rank == 0:
                IMP_IT[nimp, sid] = it32
                IMP_OBJ[nimp, sid] = current
            nimp += 1
            stop = current <= target
        return r, s, dlast, current, best, state, nimp, stop

    return SimpleNamespace(take_move=take_move)


def exchanges(k, draw_tenures):
    """The block's minimum key (block_min) and, on a cluster, how its blocks write each other's
    shared memory (put), wait for each other (cluster_barrier) and set up their exchange."""
    THREADS, WARPS, CLUSTER, MOVE_BYTES, HALF_SPAN, NO_KEY = k.threads, k.warps, k.cluster, k.move_bytes, k.half_span, k.no_key
    KEY_ROUNDS, KEYS_LEFT = divmod(CLUSTER * WARPS, 32)  # a cluster's keys: whole rounds of a warp, the rest
    if SHUFFLE:
        from ...runtime.intrinsics import warp_min_u32

    @device
    def warp_min(kb):
        """The smallest key (non-negative int64) over a warp, in every lane (device only): the
        smallest high word, then the smallest low word among the lanes that hold it -- two redux
        instructions instead of five rounds of two 32-bit shuffles."""
        hi = np.uint32(kb >> np.int64(32))
        top = warp_min_u32(hi)
        low = warp_min_u32(np.uint32(kb) if hi == top else np.uint32(0xFFFFFFFF))
        return (np.int64(top) << np.int64(32)) | np.int64(low)

    if CLUSTER == 1:
        @device
        def put(arr, i, owner, value, bars, phase):
            arr[i] = value

        @device
        def cluster_barrier():
            pass

        @device
        def init_exchange(bars, tid):
            pass

        cluster_min = None
    else:
        from ...runtime.cluster import (cluster_store_async, cluster_store_async_generic, cluster_sync, mbarrier_arrive_expect,
                                        mbarrier_done, mbarrier_init, mbarrier_init_fence)
        from ...runtime.intrinsics import warp_sum

        @device
        def put(arr, i, owner, value, bars, phase):
            """arr[i] = value in the search's block `owner` (distributed shared memory), its bytes
            counted on that block's mbarrier of this iteration's parity."""
            cluster_store_async_generic(arr, i, owner, value, bars, phase)

        @device
        def cluster_barrier():
            cluster_sync()

        @device
        def init_exchange(bars, tid):
            """The exchange's two mbarriers (cluster_min): one arrival per warp and iteration."""
            if tid == 0:
                mbarrier_init(bars, 0, WARPS)
                mbarrier_init(bars, 1, WARPS)
                mbarrier_init_fence()

        @device
        def cluster_min(xkey, bars, kb, touched, step, rank, warp, lane, ten, state, tenure_min, span, magic,
                        tenure_cube):
            """The smallest key over the cluster, in every lane. Every warp sends its key to every
            block (pushing measured faster than pulling); each block waits on its own mbarrier of
            this iteration's parity for the keys and for the recomputed moves it owns (`touched`
            by this thread: their delta and age came from other blocks' lane groups), one arrival
            per warp, instead of a cluster barrier. xkey and the mbarriers have two halves, as a
            block one iteration ahead sends to the other one. The last warp's first lane draws the
            next move's tenures between its key's send and its arrival (which releases them to the
            thread that applies the swap): the draw overlaps the exchange instead of delaying a key."""
            kb = warp_min(kb)
            phase = step & 1
            half = phase * CLUSTER * WARPS
            expected = warp_sum(touched) * MOVE_BYTES + (CLUSTER * WARPS * 8 if warp == 0 else 0)
            if lane < CLUSTER:  # (bytes may come in before their block's arrivals expect them: the
                cluster_store_async(xkey, half + rank * WARPS + warp, lane, kb, bars, phase)  # phase waits for both)
            if lane == 0:
                if warp == WARPS - 1:
                    draw_tenures(ten, state, tenure_min, span, magic, tenure_cube)
                mbarrier_arrive_expect(bars, phase, expected)
            while mbarrier_done(bars, phase, (step >> 1) & 1) == 0:
                pass
            kb = NO_KEY
            # whole rounds of 32 keys unguarded, so that their loads issue together (guarded, each load
            # waited for the last one's compare); then the rest, if any. Constant: unrolled, unsigned
            # indices (no wraparound code)
            for e in range(KEY_ROUNDS):
                kb = min(kb, xkey[U64(half + lane + e * 32)])
            if KEYS_LEFT and lane < KEYS_LEFT:
                kb = min(kb, xkey[U64(half + lane + KEY_ROUNDS * 32)])
            return warp_min(kb)

    @device
    def block_min(kb, rkey, xkey, bars, touched, step, rank, tid, lane, warp, ten, state, tenure_min, span, magic,
                  tenure_cube):
        """The smallest key over the search's block(s): every warp ends with the winner."""
        if CLUSTER > 1:
            kb = cluster_min(xkey, bars, kb, touched, step, rank, warp, lane, ten, state, tenure_min, span, magic,
                             tenure_cube)
        elif SHUFFLE:
            kb = warp_min(kb)
            if lane == 0:
                rkey[warp] = kb
            cuda.syncthreads()
            # rkey's 32 slots, those past the last warp NO_KEY since the kernel's start: no branch on the
            # lane here (one made the device's compiler guard each redux with a divergence check)
            kb = warp_min(rkey[lane])
        else:
            rkey[tid] = kb
            cuda.syncthreads()
            half = HALF_SPAN  # (a power of two: any block size, 96 threads too)
            while half > 0:
                if tid < half and tid + half < THREADS:
                    rkey[tid] = min(rkey[tid], rkey[tid + half])
                cuda.syncthreads()
                half //= 2
            kb = rkey[0]
        return kb

    return SimpleNamespace(put=put, cluster_barrier=cluster_barrier, init_exchange=init_exchange, block_min=block_min)


def move_pass(k, keys, tabu, cost, swap, exchange):
    """own_moves: a thread's recomputations and row chunk; recompute_touching: the 2n-3 moves
    touching the last swap, O(n) each; update_owned: every other move of the thread's chunk, O(1)."""
    N, LANES, CLUSTER, SPLIT, ITEMS, ROUND_ITEMS = k.n, k.lanes, k.cluster, k.split, k.items, k.round_items
    RECOMPUTING_THREADS, CHUNKS_PER_BLOCK, CHUNKS, ROW_SUMS = k.recomputing_threads, k.chunks_per_block, k.chunks, k.row_sums
    MOVES_PER_THREAD, OWNER_THREADS, GENERAL, DELTA_NP = k.moves_per_thread, k.owner_threads, k.general, k.delta_np
    NO_KEY, NO_CD = k.no_key, k.no_class_delta
    touching, tabu_age, owner_slot, class_delta, key_of = keys.touching, tabu.tabu_age, keys.owner_slot, keys.class_delta, keys.key_of
    swap_cost, update_at, put = cost.swap_cost, swap.update_at, exchange.put

    @device
    def own_moves(ROWCHUNK, tid, warp, rank):
        """This thread's first recomputation and its warp's (ITEMS: none, as a warp of owners only),
        and its row chunk: moves (i0, j0) .. (i0, j0 + count - 1), at slots `local` + q OWNER_THREADS."""
        first_item = np.int32((tid // LANES) * CLUSTER + rank)
        first_warp_item = np.int32((warp * 32 // LANES) * CLUSTER + rank) if warp * 32 < RECOMPUTING_THREADS else np.int32(ITEMS)
        local = tid - SPLIT
        c = rank * CHUNKS_PER_BLOCK + local
        owns = tid >= SPLIT and local < CHUNKS_PER_BLOCK and c < CHUNKS
        i0 = np.int32(ROWCHUNK[c] >> 16) if owns else np.int32(0)
        j0 = np.int32(ROWCHUNK[c] & 0xFFFF) if owns else np.int32(1)
        count = np.int32(min(MOVES_PER_THREAD, N - j0)) if owns else np.int32(0)
        return first_item, first_warp_item, i0, j0, count, np.uint32(max(local, 0))

    @device
    def recompute_touching(frame, tables, bars, last, clock, item, warp_item, tid):
        """The 2n-3 moves touching the last swap: O(n) each, LANES lanes splitting the sum (MATA).
        item: the cluster's lane groups, blocks interleaved; rounds while the warp's first item is a
        move (uniform), in 32-bit counters (a range's 64-bit trip count cost every warp a dozen
        instructions an iteration). Returns the lowest key of this thread's moves. frame: (Af, AT,
        bp, bpt, Aw, bpw, srow, ADIAG, BDIAG, p); tables: (dl, old, ex); last: the last swap (r, s,
        dlast); clock: (thr, it_asp, it32, step)."""
        Af, AT, bp, bpt, Aw, bpw, srow, ADIAG, BDIAG, p = frame
        dl, old, ex = tables
        r, s, dlast = last
        thr, it_asp, it32, step = clock
        kb = NO_KEY
        while warp_item < ITEMS:
            x = r
            y = s
            if item < ITEMS:
                x, y = touching(item, r, s)
            d, sy = swap_cost(Af, AT, bp, bpt, Aw, bpw, srow, ADIAG, BDIAG, p, x, y, U64(tid % LANES))
            if ROW_SUMS:  # the swap back, (s, r), undoes the last one: minus its delta (srow holds no
                d = -dlast if x == s else d  # S_s yet, which this lane's sum needed)
            if item < ITEMS and tid % LANES == 0:
                if ROW_SUMS:  # the swapped rows' sums, for later recomputations (every lane of a row
                    srow[U64(y)] = np.uint32(sy)  # stores the same value; no lane reads it now)
                i = x if x < y else y
                j = y if x < y else x
                age = tabu_age(ex, p, i, j)
                owner, sl = owner_slot(i, j)  # both go to the block that owns the move
                put(dl, sl, owner, d, bars, step & 1)
                put(old, sl, owner, age, bars, step & 1)
                kb = min(kb, key_of(class_delta(d, age, thr, it_asp, it32), i, j))
            item = np.int32(item + ROUND_ITEMS)
            warp_item = np.int32(warp_item + ROUND_ITEMS)
        return kb

    @device
    def update_owned(kb, dl, old, u, w, v, z, i0, j0, count, local, r, s, thr, it_asp, it32):
        """Every other move: O(1) update (Taillard), then its class and delta; the thread keeps its
        lowest (class, delta), the first on ties (its moves come in index order), and builds one key
        from it. Its moves run along one row (a row chunk): row i0's update values stay in
        registers, and the q-th move's loads sit at constant offsets. Returns the lower of kb and
        that key, and how many of its moves the lane groups recomputed (a cluster counts them)."""
        touched = np.int32(0)
        if count > 0:  # (recomputing-only warps, SPLIT a multiple of 32, own no chunk: they skip the pass)
            ui, wi = update_at(u, w, U64(i0))
            vi = v[U64(i0)] if GENERAL else ui
            zi = z[U64(i0)] if GENERAL else wi
            # Branch-free: a move touching the last swap (recomputed above, by another thread) is read
            # but neither stored nor keyed here; after no swap, zero update vectors keep every delta.
            row_hit = (i0 == r) | (i0 == s)  # row i0 touches the last swap: every move of the chunk
            rq = np.uint32(r - j0)  # the chunk's move (i0, r), if any, is its rq-th
            sq = np.uint32(s - j0)
            if CLUSTER > 1:
                touched = count if row_hit else np.int32(rq < np.uint32(count)) + np.int32(sq < np.uint32(count))
            cd_best = NO_CD
            bq = np.int32(0)
            for q in range(MOVES_PER_THREAD):  # a constant trip count: unrolled (moves past `count` are read, never used)
                ju = U64(j0 + q)
                uj, wj = update_at(u, w, ju)
                if GENERAL:
                    upd = (ui - uj) * (wi - wj) + (vi - v[ju]) * (zi - z[ju])
                else:
                    upd = (ui - uj) * (wi - wj)
                sl = U64(local + np.uint32(q * OWNER_THREADS))
                d = DELTA_NP(dl[sl] + DELTA_NP(upd))
                # (a 32-bit mask of the moves to skip measured more instructions: ptxas tests its bits in 64 bits)
                touch = row_hit | (rq == np.uint32(q)) | (sq == np.uint32(q)) | (np.int32(q) >= count)
                if not touch:
                    dl[sl] = d
                cd = class_delta(d, old[sl], thr, it_asp, it32)
                if cd < cd_best and not touch:
                    cd_best = cd
                    bq = np.int32(q)
            kb = min(kb, key_of(cd_best, i0, j0 + bq))
        return kb, touched

    return SimpleNamespace(own_moves=own_moves, recompute_touching=recompute_touching, update_owned=update_owned)
