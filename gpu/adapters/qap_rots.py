"""The QAP swap adapter of the resident Ro-TS engine (gpu/engine/rots/): what the engine needs of the
problem, as factories of the kernel's constants (gpu/engine/rots/constants.py) returning inline device
functions: a move's tabu attribute (tabu), its full O(n) cost split over a lane group (costs, with the
byte matrices' dp4a sums and row sums), applying a swap to the on-chip state (swaps) and a search's
start from its permutation (start). The engine supplies the search around them (keys, block minimum,
tenures, the queue, clusters); kernel_for(shape, adapter) takes the adapter's module path
(gpu/engine/rots/host.py: ADAPTERS).
"""
from types import SimpleNamespace

import numpy as np
from numba import cuda

from ..runtime.lanes import FULL, SHUFFLE, U64, device


def tabu(k):
    """tabu_age: a move's tabu attribute, the older expiry of the two assignments it makes."""
    N = k.n

    @device
    def tabu_age(ex, p, i, j):
        """Move (i, j)'s tabu age: the older expiry of its two assignments."""
        e1 = ex[U64(i * N + p[U64(j)])]  # (unsigned indices: no negative-index wraparound code)
        e2 = ex[U64(j * N + p[U64(i)])]
        return e1 if e1 < e2 else e2

    return SimpleNamespace(tabu_age=tabu_age)


def costs(k):
    """swap_cost: a move's full O(n) cost, its sum split over a lane group (MATA); row_sums: the
    byte matrices' row sums S_i that the dp4a sums leave out."""
    N, THREADS, LANES, GENERAL, DIAG, DP4A, ROW_SUMS = k.n, k.threads, k.lanes, k.general, k.diagonal, k.dp4a, k.row_sums
    ROW_STRIDE, ROW_WORDS, DELTA_NP = k.row_stride, k.row_words, k.delta_np
    if SHUFFLE:
        from ..runtime.intrinsics import dp4a

    @device
    def term(A, AT, bp, bpt, xo, yo, k):
        """The k-th term of the O(n) cost of swapping x and y (rows xo = x N, yo = y N), in the
        permuted frame bp[i, k] = B[p_i, p_k] (bpt: its transpose, general instances only)."""
        xk = xo + k
        yk = yo + k
        t = DELTA_NP((A[xk] - A[yk]) * (bp[yk] - bp[xk]))
        if GENERAL:
            t = DELTA_NP(t + (AT[xk] - AT[yk]) * (bpt[yk] - bpt[xk]))
        return t

    lane_sum = (_unrolled_packed_lane_sum(-(-N // 4), LANES, ROW_SUMS, k.sum_chains) if DP4A
                else _unrolled_lane_sum(N, LANES, DELTA_NP, term))

    @device
    def swap_cost(Af, AT, bp, bpt, Aw, bpw, srow, ADIAG, BDIAG, p, x, y, g):
        """The full O(n) cost of swapping x and y, its sum split over a group's G lanes (MATA),
        in the group's lane g = 0. Every lane of the warp must call it (shuffles), with some x != y
        (a group without a move computes one and drops it: no branch around the sum, whose join
        kept the whole cost in 64-bit arithmetic). Also returns, on byte matrices, the row sum
        S_y = sum_k A_yk bp_yk: there the lanes sum the cross products and S_y, and S_x comes from
        srow, which the swaps keep up to date for every row but the two swapped (whose next
        recomputations store them): three dp4a a word instead of four. Else S_y is 0."""
        xo = U64(x * ROW_STRIDE)
        yo = U64(y * ROW_STRIDE)
        sy = DELTA_NP(0)
        if ROW_SUMS:
            acc, sy = lane_sum(Aw, bpw, U64(x * ROW_WORDS), U64(y * ROW_WORDS), g)
        elif DP4A:
            acc = lane_sum(Aw, bpw, U64(x * ROW_WORDS), U64(y * ROW_WORDS), g)
        else:
            acc = lane_sum(Af, AT, bp, bpt, xo, yo, g)
        if LANES > 1:
            off = LANES // 2
            while off > 0:
                acc = DELTA_NP(acc + cuda.shfl_down_sync(FULL, acc, off))
                if ROW_SUMS:
                    sy = DELTA_NP(sy + cuda.shfl_down_sync(FULL, sy, off))
                off //= 2
        if ROW_SUMS:  # modulo 2^32, exact where the move costs fit in 32 bits (plan)
            acc = DELTA_NP(np.uint32(acc) - srow[U64(x)])
        d = DELTA_NP(acc - term(Af, AT, bp, bpt, xo, yo, U64(x)) - term(Af, AT, bp, bpt, xo, yo, U64(y)))
        if DIAG:
            d = DELTA_NP(d + (ADIAG[x] - ADIAG[y]) * (BDIAG[p[y]] - BDIAG[p[x]]))
        if GENERAL:
            d = DELTA_NP(d + (Af[U64(x * ROW_STRIDE + y)] - Af[U64(y * ROW_STRIDE + x)]) * (bp[U64(y * ROW_STRIDE + x)] - bp[U64(x * ROW_STRIDE + y)]))
        return d, sy

    @device
    def row_sums(Aw, bpw, srow, tid):
        """S_i = sum_k A_ik bp_ik for every row i from the tables (byte matrices: a dp4a a word),
        modulo 2^32: a start, or a chunk's state back from global memory."""
        if ROW_SUMS:
            for i in range(tid, N, THREADS):
                acc = np.uint32(0)
                for m in range(ROW_WORDS):
                    acc = dp4a(Aw[U64(i * ROW_WORDS + m)], bpw[U64(i * ROW_WORDS + m)], acc)
                srow[i] = acc

    return SimpleNamespace(swap_cost=swap_cost, row_sums=row_sums)


def update_vectors(k):
    """The last swap's update vectors (u, w; v, z on general instances): read, written, zeroed
    (no swap) and built for a chunk's pending swap."""
    N, THREADS, GENERAL, ROW_STRIDE, PACKED, DELTA_NP = k.n, k.threads, k.general, k.row_stride, k.packed, k.delta_np

    @device
    def update_at(u, w, q):
        """The last swap's update values (u_q, w_q)."""
        if PACKED:
            x = u[q]
            return np.int32(x), np.int32(x >> np.int64(32))
        return u[q], w[q]

    @device
    def set_update(u, w, q, uq, wq):
        if PACKED:
            u[q] = (np.int64(wq) << np.int64(32)) | np.int64(np.uint32(uq))
        else:
            u[q] = uq
            w[q] = wq

    @device
    def no_swap(u, v, tid):
        """No swap to fold into the delta table: zero update vectors (every delta stays as it is; packed,
        w_q is zeroed too), and (r, s) = (-1, -1), which no move touches; returns (r, s)."""
        for q in range(tid, N, THREADS):
            u[q] = 0
            if GENERAL:
                v[q] = 0
        return np.int32(-1), np.int32(-1)

    @device
    def pending_updates(Af, AT, bp, bpt, u, w, v, z, r, s, tid):
        """A chunk's pending swap (r, s), bp already swapped: its update vectors."""
        for q in range(tid, N, THREADS):
            rq = U64(r * ROW_STRIDE + q)
            sq = U64(s * ROW_STRIDE + q)
            set_update(u, w, q, DELTA_NP(Af[rq] - Af[sq]), DELTA_NP(bp[sq] - bp[rq]))
            if GENERAL:
                v[q] = AT[rq] - AT[sq]
                z[q] = bpt[sq] - bpt[rq]

    return SimpleNamespace(update_at=update_at, set_update=set_update, no_swap=no_swap, pending_updates=pending_updates)


def swaps(k):
    """The swap in the permuted frame: its update vectors, its own entries, its rows and columns."""
    N, THREADS, GENERAL, ROW_STRIDE, ROW_SUMS = k.n, k.threads, k.general, k.row_stride, k.row_sums
    DELTA_NP, COLUMN0, COLUMN_THREADS, CORNER = k.delta_np, k.column0, k.column_threads, k.corner
    vectors = update_vectors(k)
    set_update = vectors.set_update

    @device
    def swap_corners(m, rr, ss, rs, sr):
        """Swapping r and s in the permuted frame: the 2 x 2 block where rows and columns r, s meet."""
        t = m[rr]
        m[rr] = m[ss]
        m[ss] = t
        t = m[rs]
        m[rs] = m[sr]
        m[sr] = t

    @device
    def swap_own(p, ex, bp, bpt, BEST_SOL, ten, r, s, it32, record, sid):
        """The swap's own entries: p_r and p_s trade places, each leaves a tabu expiry (the next
        move's tenures), bp's corners swap; `record`: a new best's two entries go to BEST_SOL."""
        pr = p[r]
        ps = p[s]
        ex[U64(r * N + pr)] = it32 + ten[0]
        ex[U64(s * N + ps)] = it32 + ten[1]
        p[r] = ps
        p[s] = pr
        rr, ss, rs, sr = U64(r * ROW_STRIDE + r), U64(s * ROW_STRIDE + s), U64(r * ROW_STRIDE + s), U64(s * ROW_STRIDE + r)
        swap_corners(bp, rr, ss, rs, sr)
        if GENERAL:
            swap_corners(bpt, rr, ss, rs, sr)
        if record:
            BEST_SOL[sid, r] = ps
            BEST_SOL[sid, s] = pr

    @device
    def swap_row_entries(m, rq, sq):
        """Swapping r and s in the permuted frame at q (not r, s), rows' half: rows r, s exchange
        their q-th entries. Returns new m[s, q] - new m[r, q] (an update vector)."""
        orq = m[rq]
        osq = m[sq]
        m[rq] = osq
        m[sq] = orq
        return orq - osq

    @device
    def swap_columns_at(bp, bpt, q, r, s):
        """The columns' half: row q (not r, s) exchanges its r-th and s-th entries (bp, and bpt on
        general instances)."""
        qr, qs = U64(q * ROW_STRIDE + r), U64(q * ROW_STRIDE + s)
        t = bp[qr]
        bp[qr] = bp[qs]
        bp[qs] = t
        if GENERAL:
            t = bpt[qr]
            bpt[qr] = bpt[qs]
            bpt[qs] = t

    @device
    def apply_swap(frame, updates, ex, BEST_SOL, ten, r, s, it32, record, sid, tid):
        """Swap r and s: bp's rows and columns r, s, the update vectors, p, the tabu list; `record`:
        a new best, written to BEST_SOL as it goes. frame: (Af, AT, bp, bpt, Aw, bpw, srow, ADIAG,
        BDIAG, p); updates: (u, w, v, z)."""
        Af, AT, bp, bpt, _aw, _bw, srow, _ad, _bd, p = frame
        u, w, v, z = updates
        q = np.int32(tid)
        if tid == (CORNER if CORNER >= 0 else np.int32(r % THREADS)):  # (disjoint from the rows' entries)
            swap_own(p, ex, bp, bpt, BEST_SOL, ten, r, s, it32, record, sid)
        while q < N:  # (32-bit: a range's 64-bit trip count cost every warp a dozen instructions)
            if q != r and q != s:
                rq, sq = U64(r * ROW_STRIDE + q), U64(s * ROW_STRIDE + q)
                uq = DELTA_NP(Af[rq] - Af[sq])
                wq = DELTA_NP(swap_row_entries(bp, rq, sq))  # old bp_rq - bp_sq
                set_update(u, w, q, uq, wq)
                if ROW_SUMS:  # bp_qr and bp_qs trade places: S_q changes by -u_q w_q (S_r and
                    srow[q] = np.uint32(srow[q] - np.uint32(uq * wq))  # S_s: the next recomputations)
                if GENERAL:
                    z[q] = swap_row_entries(bpt, rq, sq)
                    v[q] = AT[rq] - AT[sq]
                if not COLUMN_THREADS:
                    swap_columns_at(bp, bpt, q, r, s)
                if record:
                    BEST_SOL[sid, q] = p[q]
            q = np.int32(q + THREADS)
        if COLUMN_THREADS:  # the columns' entries by the block's last warps, beside the rows'
            q = np.int32(tid - COLUMN0)
            if q >= 0 and q < N and q != r and q != s:
                swap_columns_at(bp, bpt, q, r, s)

    return SimpleNamespace(update_at=vectors.update_at, no_swap=vectors.no_swap, pending_updates=vectors.pending_updates,
                           apply_swap=apply_swap)


def start(k, cost, tabu):
    """start_state: a search's start from its permutation alone."""
    N, N_SQUARED, THREADS, LANES, GENERAL, ROW_STRIDE, ROW_SUMS = k.n, k.n_squared, k.threads, k.lanes, k.general, k.row_stride, k.row_sums
    FROUNDS, FRESH_LANE_GROUPS, MOVES_PER_THREAD = k.fresh_rounds, k.fresh_lane_groups, k.moves_per_thread
    CHUNKS_PER_BLOCK, CHUNKS, OWNER_THREADS = k.chunks_per_block, k.chunks, k.owner_threads
    PADDED_SIZE, REDUCTION_SLOTS = k.padded_size, k.reduction_slots
    swap_cost, row_sums, tabu_age = cost.swap_cost, cost.row_sums, tabu.tabu_age

    @device
    def start_state(frame, BG, ROWCHUNK, dl, old, ex, rkey, tid, rank, it0):
        """A search's start from its permutation p alone (a new cas generation copies up only its
        ants): the permuted matrix bp[i, k] = B[p_i, p_k], Taillard's initial tabu list (rots_expiry:
        ex[q] = -q, shifted to iteration it0 for a restart), every move's full cost and tabu age;
        returns the permutation's cost. frame: (Af, AT, bp, bpt, Aw, bpw, srow, ADIAG, BDIAG, p)."""
        Af, AT, bp, bpt, Aw, bpw, srow, ADIAG, BDIAG, p = frame
        cuda.syncthreads()  # p
        for q in range(tid, N_SQUARED, THREADS):
            pi = p[q // N]
            pk = p[q % N]
            bq = U64(q // N * ROW_STRIDE + q % N)
            bp[bq] = BG[U64(pi * N + pk)]
            if GENERAL:
                bpt[bq] = BG[U64(pk * N + pi)]
            ex[q] = it0 - q
        cuda.syncthreads()
        if ROW_SUMS:
            row_sums(Aw, bpw, srow, tid)
            cuda.syncthreads()
        for rnd in range(FROUNDS):  # the block's slots l: the (l mod Q)-th move of its (l div Q)-th chunk
            item = rnd * FRESH_LANE_GROUPS + tid // LANES
            local = item // MOVES_PER_THREAD
            c = rank * CHUNKS_PER_BLOCK + local
            valid = local < CHUNKS_PER_BLOCK and c < CHUNKS
            x = np.int32(ROWCHUNK[c] >> 16) if valid else np.int32(0)
            y = np.int32((ROWCHUNK[c] & 0xFFFF) + item % MOVES_PER_THREAD) if valid else np.int32(1)
            if y >= N:  # (a chunk's slots past its row's end: read as move (0, 1), never stored)
                valid = False
                x = np.int32(0)
                y = np.int32(1)
            d, _sy = swap_cost(Af, AT, bp, bpt, Aw, bpw, srow, ADIAG, BDIAG, p, x, y, U64(tid % LANES))
            if valid and tid % LANES == 0:  # the block's own move
                sl = U64(item % MOVES_PER_THREAD * OWNER_THREADS + local)
                dl[sl] = d
                old[sl] = tabu_age(ex, p, x, y)
        # the cost: sum A o bp over the block, halved in the symmetric form (where it counts each pair twice)
        part = np.int64(0)
        for q in range(tid, PADDED_SIZE, THREADS):  # (Af's row padding is zero)
            part += np.int64(Af[q]) * np.int64(bp[q])
        if SHUFFLE:
            off = 16
            while off > 0:
                part += cuda.shfl_down_sync(FULL, part, off)
                off //= 2
            if tid % 32 == 0:
                rkey[tid // 32] = part
        else:
            rkey[tid] = part
        cuda.syncthreads()
        total = np.int64(0)
        for q in range(REDUCTION_SLOTS):
            total += rkey[q]
        cuda.syncthreads()  # rkey is the argmin's scratch next
        return total if GENERAL else total // 2

    return start_state


def _unrolled_lane_sum(N, G, DTN, term):
    """One lane's share of an O(n) recomputation, terms k = g, g + G, ... < N written out one by one:
    Numba's range loops do not unroll, and written out each load is a register plus a constant
    offset instead of a fresh 64-bit index computation (half the instructions of the hot loop)."""
    lines = ["def lane_sum(Af, AT, bp, bpt, xo, yo, g):", "    acc = DTN(0)"]
    for m in range((N + G - 1) // G):
        step = f"    acc = DTN(acc + term(Af, AT, bp, bpt, xo, yo, g + U({m * G})))"
        lines.append(step if (m + 1) * G <= N else f"    if g < U({N - m * G}):\n    " + step)
    lines.append("    return acc")
    scope = {"DTN": DTN, "U": np.uint64, "term": term}
    exec(compile("\n".join(lines), f"<lane_sum N={N} G={G}>", "exec"), scope)
    return device(scope["lane_sum"])


def _unrolled_packed_lane_sum(words, G, row_sums, chains=1):
    """One lane's share of the cross products of an O(n) recomputation on byte matrices, four-word
    quads m = g, g + G, ... of rows x and y (16-byte aligned rows: plan) written out one by one, each
    row's quad in one 128-bit load, then the last `words` % 4 words (the row's last n bytes; its
    padding is zero and adds nothing, so it is not read) one load each: term k = (A_xk - A_yk)(bp_yk
    - bp_xk) = A_xk bp_yk + A_yk bp_xk - A_xk bp_xk - A_yk bp_yk, four terms per dp4a in independent
    sums (modulo 2^32: exact where the move costs fit in 32 bits, which plan checks). `chains`: each
    sum kept in that many partial sums, quad by quad in turn, so that a lane's dependent dp4a chains
    are that many times shorter (where registers allow). `row_sums`: all but the row sum S_x (kept
    by the kernel), returning the share less S_x and S_y's share; else all four, returning the share."""
    from ..runtime.intrinsics import dp4a, load_quad
    quads, tail = divmod(words, 4)
    sums = ["p1", "p2", "n2"] + ([] if row_sums else ["n1"])
    lines = ["def lane_sum(Aw, bpw, xw, yw, g):"] + [f"    {name}{c} = np.uint32(0)" for name in sums for c in range(chains)]

    def products(c, k=None):
        """The dp4a of word k of the loaded quads (k None: of single words) into chain c."""
        ax, ay, bx, by = (v if k is None else f"{v}[{k}]" for v in ("ax", "ay", "bx", "by"))
        body = [f"p1{c} = dp4a({ax}, {by}, p1{c})", f"p2{c} = dp4a({ay}, {bx}, p2{c})", f"n2{c} = dp4a({ay}, {by}, n2{c})"]
        return body + ([] if row_sums else [f"n1{c} = dp4a({ax}, {bx}, n1{c})"])

    for m in range((quads + G - 1) // G):
        pad = "    " if (m + 1) * G <= quads else "        "
        if pad != "    ":
            lines.append(f"    if g < U({quads - m * G}):")
        body = [f"w = (g + U({m * G})) * U(4)", "ax = load_quad(Aw, xw + w)", "ay = load_quad(Aw, yw + w)",
                "bx = load_quad(bpw, xw + w)", "by = load_quad(bpw, yw + w)"]
        for k in range(4):
            body += products(m % chains, k)
        lines += [pad + line for line in body]
    if tail:  # the last quad's used words, by the lane whose turn it is
        lines.append(f"    if g == U({quads % G}):")
        for k in range(tail):
            w = quads * 4 + k
            lines += ["        " + line for line in [f"ax = Aw[xw + U({w})]", f"ay = Aw[yw + U({w})]",
                                                     f"bx = bpw[xw + U({w})]", f"by = bpw[yw + U({w})]"]
                      + products((quads // G) % chains)]
    total = {name: " + ".join(f"{name}{c}" for c in range(chains)) for name in sums}
    lines.append(f"    return np.int32(np.uint32({total['p1']} + {total['p2']}) - np.uint32({total['n2']})), np.int32({total['n2']})"
                 if row_sums else
                 f"    return np.int32(np.uint32({total['p1']} + {total['p2']}) - np.uint32({total['n1']} + {total['n2']}))")
    scope = {"np": np, "U": np.uint64, "dp4a": dp4a, "load_quad": load_quad}
    exec(compile("\n".join(lines), f"<packed lane_sum words={words} G={G} chains={chains}>", "exec"), scope)
    return device(scope["lane_sum"])
