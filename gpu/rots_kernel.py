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
  block (distributed shared memory, st.async, gpu/cluster.py), each block waiting on its own
  mbarrier for exactly the bytes it expects;
- the tenures come from the search's SplitMix64 stream, as in the CPU search.
K searches (seeds s..s+K-1) run as K blocks, or (QUEUED, more searches than fit at once) on a
persistent grid whose blocks take (search, sub-chunk) items from a queue: each search's first, then
the searches whose last item has ended, in the order they ended (RING), so that a block never
waits for one given search; the state goes through global memory between items; the host launches chunks
of iterations and reads back only the best values, improvements and, at the end, the best
solutions. A search starts (or, FRESH = 2, restarts keeping its best) from START. One search gives exactly
the trajectory of `lsbench run --algorithm rots --backend cpu` with the same seed.
The shape comes from gpu/rots_plan.py; the host side is gpu/rots_engine.py.
"""
import numpy as np
from numba import cuda, int16, int32, int64, uint8, uint32

from lsbench import rng

from .chunks import WAIT_SPINS, backoff
from .device import mix64, unit_interval
from . import rots_plan
from .rots_plan import ON_CHIP, SHUFFLE

FULL = 0xFFFFFFFF
NO_MOVE = -1  # PEND: no swap waiting to be folded into the delta table
NO_BEST = np.int64(np.iinfo(np.int64).max)

_kernels = {}


def kernel_for(shape):
    """The compiled kernel for one shape; its max_registers caps registers per thread so that more
    blocks (searches) fit on an SM."""
    key = (shape["n"], shape["queued"], shape["subchunk"], shape["dp4a"], shape["cluster"], shape["split"], shape["index_bits"], shape["threads"], shape["group"], shape["wide"], shape["narrow"], shape["general"], shape["diagonal"],
           shape["data_bits"], tuple(sorted(shape["layout"].items())), shape.get("max_registers"))
    if key not in _kernels:
        _kernels[key] = _make_kernel(shape)
    return _kernels[key]


def _make_kernel(shape):
    N, THREADS, LANES = shape["n"], shape["threads"], shape["group"]
    MAX_REGISTERS = shape.get("max_registers")
    GENERAL, DIAG = shape["general"], shape["diagonal"]
    IN_SHARED = shape["shared"]
    DELTA_SHARED, MATRIX_SHARED, AGE_SHARED, FLOWS_SHARED = IN_SHARED["delta"], IN_SHARED["matrix"], IN_SHARED["tabu_age"], IN_SHARED["flows"]
    OFFSETS = {name: shape["layout"].get(name, 0) for name in ON_CHIP}
    DELTA_OFFSET, MATRIX_OFFSET, AGE_OFFSET, FLOWS_OFFSET = OFFSETS["delta"], OFFSETS["matrix"], OFFSETS["tabu_age"], OFFSETS["flows"]
    TABU_SHARED, TABU_OFFSET = IN_SHARED["tabu"], OFFSETS["tabu"]
    QUEUED = shape["queued"]  # a persistent grid: blocks take (search, sub-chunk) items from a queue
    SUBCHUNK = shape["subchunk"]  # QUEUED: iterations per item
    N_SQUARED = N * N
    ROW_STRIDE = shape["stride"]  # row stride of the flows and permuted distances (bp, bpt, Af, AT)
    PADDED_SIZE = N * ROW_STRIDE
    ROW_WORDS = ROW_STRIDE // 4  # 32-bit words a row
    DP4A = shape["dp4a"]  # 8-bit matrices on chip: four terms of a sum per dp4a
    # each dp4a sum in two partial sums where registers allow (a lane's dependent chains half as long)
    SUM_CHAINS = 2 if (MAX_REGISTERS or 255) >= 128 else 1
    ROW_SUMS = shape["row_sums"]  # dp4a sums without the row sum S_x, which the swaps keep (plan.keeps_row_sums)
    CLUSTER = shape["cluster"]  # block b of a search owns row chunks b CHUNKS_PER_BLOCK .. + CHUNKS_PER_BLOCK - 1
    WARPS = THREADS // 32  # warps per block
    ITEMS = 2 * N - 3  # moves touching the last swap: recomputed in O(n)
    SPLIT = shape["split"]  # threads 0 .. SPLIT - 1 recompute only, the others update only (0: all do both)
    RECOMPUTING_THREADS = SPLIT or THREADS  # recomputing threads
    OWNER_THREADS = THREADS - SPLIT  # move-owning threads, from O0
    LANE_GROUPS = RECOMPUTING_THREADS // LANES  # lane groups per block, one recomputation each
    ROUND_ITEMS = LANE_GROUPS * CLUSTER  # recomputations a round of the cluster's lane groups
    FRESH_LANE_GROUPS = THREADS // LANES  # a fresh start: every move's O(n) cost, all lane groups
    # owner o owns row chunk b CHUNKS_PER_BLOCK + o: up to MOVES_PER_THREAD moves (i, j0), (i, j0 + 1), ...
    # of one row (plan.row_chunks), so that its O(1) pass keeps one row's update values and needs no wrap
    MOVES_PER_THREAD = shape["per_thread"]
    CHUNKS = shape["chunks"]
    CHUNKS_PER_BLOCK = shape["chunks_per_block"]
    Q32 = np.uint32(MOVES_PER_THREAD)
    FROUNDS = (CHUNKS_PER_BLOCK * MOVES_PER_THREAD + FRESH_LANE_GROUPS - 1) // FRESH_LANE_GROUPS
    SLOTS = shape["slots"]
    UPDATE_LENGTH = N + MOVES_PER_THREAD  # the update vectors' length (shared array sizes must be single constants)
    REDUCTION_SLOTS = WARPS if SHUFFLE else THREADS
    HALF_SPAN = (1 << (THREADS - 1).bit_length()) // 2  # the simulator's tree minimum: half the next power of two
    XKEYS = 2 * CLUSTER * WARPS if CLUSTER > 1 else 1  # a cluster's keys of every warp, two iterations
    KEY_ROUNDS, KEYS_LEFT = divmod(CLUSTER * WARPS, 32)  # a cluster's keys: whole rounds of a warp, the rest
    N_FOURS = N - N % 4  # a cas ant's roulette: four locations a step, then the rest
    MOVE_BYTES = (8 if shape["wide"] else 4) + 4  # a recomputed move sent to its owner: delta and age
    DELTA_TYPE = int64 if shape["wide"] else int32
    DELTA_NP = np.int64 if shape["wide"] else np.int32
    # a move's key: class (0 aspirated, 1 allowed, 2 tabu), then delta, then the move (i, j) as
    # i 2^J_BITS + j, which orders moves as their index, in one int64 -- one comparison orders moves
    # exactly as the CPU's rule (lowest index on ties), and the winner's i and j come from its key
    INDEX_BITS = shape["index_bits"]
    J_BITS = np.int64(INDEX_BITS // 2)
    JMASK = np.int64((1 << (INDEX_BITS // 2)) - 1)
    # delta bits, biased to be non-negative; 2 class bits above (narrow: the two in one 32-bit word)
    NARROW = shape["narrow"]
    DELTA_BITS = 61 - INDEX_BITS if shape["wide"] else (30 if NARROW else 32)
    BIAS = np.int64(1) << np.int64(DELTA_BITS - 1)
    NO_CD = np.uint32(3 << DELTA_BITS) if NARROW else np.int64(3) << np.int64(DELTA_BITS)  # no move (a class above tabu)
    NO_KEY = NO_CD << np.int64(INDEX_BITS)
    ALLOWED = (np.int64(2) << np.int64(DELTA_BITS)) << np.int64(INDEX_BITS)  # keys below: aspirated or allowed
    DMASK = np.int64((1 << DELTA_BITS) - 1)
    DMIN = np.int64(-(1 << 63)) if shape["wide"] else np.int64(-(1 << 31))
    BPT = {8: uint8, 16: int16, 32: int32, 64: int64}[shape["data_bits"]]
    U64 = np.uint64  # unsigned indices: no negative-index wraparound code
    # 32-bit update vectors u, w packed in one 64-bit word a facility (w high): one shared-memory
    # load a move in the O(1) pass instead of two
    PACKED = not shape["wide"] and not GENERAL
    GOLDEN = rng.GOLDEN
    # a swap's rows r, s by threads 0 .. N - 1, their columns by the block's last whole warps (where
    # the block holds both): the serial tail that every warp waits for is half as long
    COLUMN0 = THREADS - 32 * -(-N // 32)
    COLUMN_THREADS = COLUMN0 >= N
    # the swap's own entries (p, the tabu list, bp's 2 x 2 corners) by the first thread of a warp that
    # swaps no row or column entry, where the block has one (else by the thread of row r), so that no
    # row warp runs both paths
    FREE0 = 32 * -(-N // 32)
    CORNER = FREE0 if FREE0 + 32 <= (COLUMN0 if COLUMN_THREADS else THREADS) else -1

    if SHUFFLE:
        from .intrinsics import dp4a, mul_hi_u64, warp_min_u32
    else:
        mul_hi_u64 = _mul_hi_halves

    # the division-free draw where registers are plentiful (a cluster, or 256 threads: up to 255 a
    # thread); a shape capped at 64 keeps the division routine, whose call stays out of its hot
    # loop's register allocation (inline there it ran slower)
    DIVIDE = MAX_REGISTERS is not None and MAX_REGISTERS <= 64 and CLUSTER == 1

    @cuda.jit(device=True, inline=True)
    def draw_tenure(word, tenure_min, span, magic, tenure_cube):
        """lsbench.search.tabu.draw_tenure from one stream word: uniform in [min, max], or floor(T
        u^3) with u in [0, 1) from 53 bits when tenure_cube = T > 0. span = max - min + 1 and
        magic = floor((2^64 - 1) / span) are kernel arguments (the constant bank, no registers).
        Unless DIVIDE, bits mod span without the division routine (about 65 instructions on the
        drawing warp's path): the high word of bits magic is floor(bits / span) or one less, as
        bits < 2^53, so one correction makes the remainder exact."""
        if tenure_cube > 0:
            u = unit_interval(word)
            return np.int64(tenure_cube * u * u * u)
        bits = word >> np.uint64(11)
        if DIVIDE:
            return tenure_min + np.int64(bits % span)
        rem = bits - mul_hi_u64(bits, magic) * span
        return tenure_min + np.int64(rem - span if rem >= span else rem)

    @cuda.jit(device=True, inline=True)
    def draw_tenures(ten, state, tenure_min, span, magic, tenure_cube):
        """The next move's two tenures, from the stream's next two words."""
        ten[0] = np.int32(draw_tenure(mix64(state + GOLDEN), tenure_min, span, magic, tenure_cube))
        ten[1] = np.int32(draw_tenure(mix64(state + GOLDEN + GOLDEN), tenure_min, span, magic, tenure_cube))

    @cuda.jit(device=True, inline=True)
    def warp_min(kb):
        """The smallest key (non-negative int64) over a warp, in every lane (device only): the
        smallest high word, then the smallest low word among the lanes that hold it -- two redux
        instructions instead of five rounds of two 32-bit shuffles."""
        hi = np.uint32(kb >> np.int64(32))
        top = warp_min_u32(hi)
        low = warp_min_u32(np.uint32(kb) if hi == top else np.uint32(0xFFFFFFFF))
        return (np.int64(top) << np.int64(32)) | np.int64(low)

    chunks_before = cuda.jit(device=True, inline=True)(rots_plan.chunks_before)

    @cuda.jit(device=True, inline=True)
    def owner_slot(i, j):
        """The block of the cluster that owns move (i, j) (i < j), and where its delta and tabu age
        live there: the move is the q-th of row chunk c, owned by thread c - b CHUNKS_PER_BLOCK, at
        slot q T + that thread, so that the q-th moves of a warp's threads are neighbours (no bank
        conflicts, coalesced in global memory). 32-bit unsigned throughout (each step truncated, so
        that the compiler keeps 32-bit divisions by constants: this sits on a recomputing lane's
        critical path)."""
        ui = np.uint32(i)
        off = np.uint32(np.uint32(j) - ui - np.uint32(1))
        c = np.uint32(np.uint32(np.uint32(CHUNKS) - chunks_before(np.uint32(np.uint32(N - 1) - ui), Q32)) + np.uint32(off // np.uint32(MOVES_PER_THREAD)))
        q = np.uint32(off % np.uint32(MOVES_PER_THREAD))
        owner = np.int32(np.uint32(c // np.uint32(CHUNKS_PER_BLOCK))) if CLUSTER > 1 else np.int32(0)
        local = np.uint32(c % np.uint32(CHUNKS_PER_BLOCK)) if CLUSTER > 1 else c
        return owner, U64(np.uint32(np.uint32(q * np.uint32(OWNER_THREADS)) + local))

    if CLUSTER == 1:
        @cuda.jit(device=True, inline=True)
        def put(arr, i, owner, value, bars, phase):
            arr[i] = value

        @cuda.jit(device=True, inline=True)
        def cluster_barrier():
            pass

        @cuda.jit(device=True, inline=True)
        def init_exchange(bars, tid):
            pass

        cluster_min = None
    else:
        from .cluster import (cluster_store_async, cluster_store_async_generic, cluster_sync, mbarrier_arrive_expect,
                              mbarrier_done, mbarrier_init, mbarrier_init_fence)
        from .intrinsics import warp_sum

        @cuda.jit(device=True, inline=True)
        def put(arr, i, owner, value, bars, phase):
            """arr[i] = value in the search's block `owner` (distributed shared memory), its bytes
            counted on that block's mbarrier of this iteration's parity."""
            cluster_store_async_generic(arr, i, owner, value, bars, phase)

        @cuda.jit(device=True, inline=True)
        def cluster_barrier():
            cluster_sync()

        @cuda.jit(device=True, inline=True)
        def init_exchange(bars, tid):
            """The exchange's two mbarriers (cluster_min): one arrival per warp and iteration."""
            if tid == 0:
                mbarrier_init(bars, 0, WARPS)
                mbarrier_init(bars, 1, WARPS)
                mbarrier_init_fence()

        @cuda.jit(device=True, inline=True)
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

    @cuda.jit(device=True, inline=True)
    def touching(item, r, s):
        """The item-th move touching the last swap (r, s) as (x, y), y in {r, s}: (x, r) for
        x != r, then (x, s) for x != r, s. 32-bit throughout (item, r and s are int32; each step
        truncated, so that the compares and adds on a recomputing lane's path stay 32-bit)."""
        if item < np.int32(N - 1):
            return np.int32(item + np.int32(item >= r)), r
        x = np.int32(item - np.int32(N - 1))
        lo = r if r < s else s
        hi = s if r < s else r
        x = np.int32(x + np.int32(x >= lo))
        return np.int32(x + np.int32(x >= hi)), s

    @cuda.jit(device=True, inline=True)
    def term(A, AT, bp, bpt, xo, yo, k):
        """The k-th term of the O(n) cost of swapping x and y (rows xo = x N, yo = y N), in the
        permuted frame bp[i, k] = B[p_i, p_k] (bpt: its transpose, general instances only)."""
        xk = xo + k
        yk = yo + k
        t = DELTA_NP((A[xk] - A[yk]) * (bp[yk] - bp[xk]))
        if GENERAL:
            t = DELTA_NP(t + (AT[xk] - AT[yk]) * (bpt[yk] - bpt[xk]))
        return t

    lane_sum = _unrolled_packed_lane_sum(-(-N // 4), LANES, ROW_SUMS, SUM_CHAINS) if DP4A else _unrolled_lane_sum(N, LANES, GENERAL, DELTA_NP, term)

    @cuda.jit(device=True, inline=True)
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

    @cuda.jit(device=True, inline=True)
    def tabu_age(ex, p, i, j):
        """Move (i, j)'s tabu age: the older expiry of its two assignments."""
        e1 = ex[U64(i * N + p[U64(j)])]  # (unsigned indices: no negative-index wraparound code)
        e2 = ex[U64(j * N + p[U64(i)])]
        return e1 if e1 < e2 else e2

    @cuda.jit(device=True, inline=True)
    def update_at(u, w, q):
        """The last swap's update values (u_q, w_q)."""
        if PACKED:
            x = u[q]
            return np.int32(x), np.int32(x >> np.int64(32))
        return u[q], w[q]

    @cuda.jit(device=True, inline=True)
    def set_update(u, w, q, uq, wq):
        if PACKED:
            u[q] = (np.int64(wq) << np.int64(32)) | np.int64(np.uint32(uq))
        else:
            u[q] = uq
            w[q] = wq

    @cuda.jit(device=True, inline=True)
    def no_swap(u, v, tid):
        """No swap to fold into the delta table: zero update vectors (every delta stays as it is; packed,
        w_q is zeroed too),
        and (r, s) = (-1, -1), which no move touches; returns (r, s)."""
        for q in range(tid, N, THREADS):
            u[q] = 0
            if GENERAL:
                v[q] = 0
        return np.int32(-1), np.int32(-1)

    @cuda.jit(device=True, inline=True)
    def swap_corners(m, rr, ss, rs, sr):
        """Swapping r and s in the permuted frame: the 2 x 2 block where rows and columns r, s meet."""
        t = m[rr]
        m[rr] = m[ss]
        m[ss] = t
        t = m[rs]
        m[rs] = m[sr]
        m[sr] = t

    @cuda.jit(device=True, inline=True)
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

    @cuda.jit(device=True, inline=True)
    def swap_row_entries(m, rq, sq):
        """Swapping r and s in the permuted frame at q (not r, s), rows' half: rows r, s exchange
        their q-th entries. Returns new m[s, q] - new m[r, q] (an update vector)."""
        orq = m[rq]
        osq = m[sq]
        m[rq] = osq
        m[sq] = orq
        return orq - osq

    @cuda.jit(device=True, inline=True)
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

    if DELTA_BITS == 32 and SHUFFLE:
        @cuda.jit(device=True, inline=True)
        def biased(d):
            """d + 2^31 for a 32-bit d: its sign bit flipped, one instruction instead of a 64-bit add."""
            return np.int64(np.uint32(d) ^ np.uint32(0x80000000))
    else:
        @cuda.jit(device=True, inline=True)
        def biased(d):
            return np.int64(d) + BIAS

    if NARROW:
        @cuda.jit(device=True, inline=True)
        def class_delta(d, age, thr, it_asp, it):
            """As below, in one 32-bit word: class << 30 | d + 2^29 (|d| < 2^29: plan's bound), so
            that the O(1) pass compares and keeps one word a move."""
            # class 1 adds 2^30 once, class 2 twice (a tabu move is held: age >= it >= it_asp):
            # two selects and one three-input add instead of building the class and shifting it
            held = np.uint32((1 << 30) + BIAS) if (age >= it_asp) & (d >= thr) else np.uint32(BIAS)
            tabu = np.uint32(1 << 30) if (age >= it) & (d >= thr) else np.uint32(0)
            return np.uint32(np.uint32(d) + held + tabu)
    else:
        @cuda.jit(device=True, inline=True)
        def class_delta(d, age, thr, it_asp, it):
            """Taillard's rule as one number, without branches: class 0 aspiration (old enough, or a
            new best), 1 allowed, 2 tabu (a tabu move is never old enough: it_asp <= it), then the
            delta. thr, it_asp and it come clamped to the width of d and age, so the comparisons
            stay narrow."""
            held = np.int64(age >= it_asp and d >= thr)
            cls = held + (held & np.int64(age >= it))
            return (cls << np.int64(DELTA_BITS)) | biased(d)

    @cuda.jit(device=True, inline=True)
    def key_of(cd, i, j):
        """A move's key: its class and delta, then (i, j), which orders moves as their index."""
        return (np.int64(cd) << np.int64(INDEX_BITS)) | (np.int64(i) << J_BITS) | np.int64(j)

    @cuda.jit(device=True, inline=True)
    def row_sums(Aw, bpw, srow, tid):
        """S_i = sum_k A_ik bp_ik for every row i from the tables (byte matrices: a dp4a a word),
        modulo 2^32: a start, or a chunk's state back from global memory."""
        if ROW_SUMS:
            for i in range(tid, N, THREADS):
                acc = np.uint32(0)
                for m in range(ROW_WORDS):
                    acc = dp4a(Aw[U64(i * ROW_WORDS + m)], bpw[U64(i * ROW_WORDS + m)], acc)
                srow[i] = acc

    @cuda.jit(device=True, inline=True)
    def start_state(Af, AT, BG, ADIAG, BDIAG, ROWCHUNK, p, dl, bp, bpt, Aw, bpw, srow, old, ex, rkey, tid, rank, it0):
        """A search's start from its permutation p alone (a new cas generation copies up only its
        ants): the permuted matrix bp[i, k] = B[p_i, p_k], Taillard's initial tabu list (rots_expiry:
        ex[q] = -q, shifted to iteration it0 for a restart), every move's full cost and tabu age;
        returns the permutation's cost."""
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

    @cuda.jit(device=True, inline=True)
    def roulette(x, tau, f, loc, last, chosen):
        """One location of the CPU's roulette pass, branch-free: a free one (f = 1) takes tau off x
        and is the last free one so far, the first that drives x below 0 is chosen."""
        x -= tau * np.float64(f)
        last = np.int32(loc) if f else last
        chosen = np.int32(loc) if f and x < 0 and chosen < 0 else chosen
        return x, last, chosen

    @cuda.jit(device=True)
    def construct_ant(p, free, todo, TAU, gamma, seed):
        """lsbench.engines.cas.construct on the device, word by word from the same stream, so that the
        ant is the CPU's: facilities leave the donor p with probability gamma, then in random order
        each takes a free location with probability proportional to tau -- the float64 sums in the
        CPU's order, branch-free (a taken location adds tau * 0.0, which leaves a sum unchanged), so
        that the pheromone loads of a pass are all in flight at once."""
        cs = seed
        m = 0
        for q in range(N):
            free[q] = 0
        for i in range(N):
            cs += GOLDEN
            if unit_interval(mix64(cs)) < gamma:
                free[p[i]] = 1
                todo[m] = i
                m += 1
        for t in range(m - 1, 0, -1):
            cs += GOLDEN
            u = np.int64((mix64(cs) >> np.uint64(11)) % np.uint64(t + 1))
            x = todo[t]
            todo[t] = todo[u]
            todo[u] = x
        for t in range(m):
            row = U64(todo[t] * N)
            total = 0.0
            for b in range(0, N_FOURS, 4):  # four locations a step: their loads issue together
                t0, t1, t2, t3 = TAU[row + U64(b)], TAU[row + U64(b + 1)], TAU[row + U64(b + 2)], TAU[row + U64(b + 3)]
                total += t0 * np.float64(free[b])
                total += t1 * np.float64(free[b + 1])
                total += t2 * np.float64(free[b + 2])
                total += t3 * np.float64(free[b + 3])
            for loc in range(N_FOURS, N):
                total += TAU[row + U64(loc)] * np.float64(free[loc])
            cs += GOLDEN
            x = unit_interval(mix64(cs)) * total
            chosen = np.int32(-1)
            last = np.int32(-1)
            for b in range(0, N_FOURS, 4):
                t0, t1, t2, t3 = TAU[row + U64(b)], TAU[row + U64(b + 1)], TAU[row + U64(b + 2)], TAU[row + U64(b + 3)]
                x, last, chosen = roulette(x, t0, free[b], b, last, chosen)
                x, last, chosen = roulette(x, t1, free[b + 1], b + 1, last, chosen)
                x, last, chosen = roulette(x, t2, free[b + 2], b + 2, last, chosen)
                x, last, chosen = roulette(x, t3, free[b + 3], b + 3, last, chosen)
            for loc in range(N_FOURS, N):
                x, last, chosen = roulette(x, TAU[row + U64(loc)], free[loc], loc, last, chosen)
            chosen = chosen if chosen >= 0 else last
            p[todo[t]] = chosen
            free[chosen] = 0

    @(cuda.jit(max_registers=MAX_REGISTERS) if MAX_REGISTERS and SHUFFLE else cuda.jit)  # (the simulator takes no cap)
    def rots_kernel(A, AT, BG, ADIAG, BDIAG, ROWCHUNK, P, DELTA, BPG, BPTG, OLDG, EX, PEND, STATE, CUR, BEST,
                    BEST_SOL, IMP_IT, IMP_OBJ, NIMP, DONE, ACTIVE, START, FRESH, QUEUE, RING, tenure_span, tenure_magic,
                    tenure_min, aspiration, target, chunk_it0, chunk_iters, tenure_cube, fresh_all, item0, seq0, push0, TAU, gamma):
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
        rkey = cuda.shared.array(REDUCTION_SLOTS, int64)
        srow = cuda.shared.array(N if ROW_SUMS else 1, uint32)  # byte matrices: the row sums S_i (swap_cost)
        free = cuda.shared.array(N, int32)  # a cas ant's construction: free locations, facilities to place
        todo = cuda.shared.array(N, int32)
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
        job = cuda.shared.array(2, int64)  # QUEUED: the block's pop (past the last: none, or a wait ran out), its item
        searches = ACTIVE.shape[0]
        subchunks = (chunk_iters + SUBCHUNK - 1) // SUBCHUNK if QUEUED else 1
        while True:  # work items: one per block (a search's chunk), or (QUEUED) taken from the queue
            if QUEUED:  # pop j < K is search j's first sub-chunk; pop j >= K takes RING[j - K], the (j - K)-th
                if tid == 0:  # search whose sub-chunk ended: a block never waits for one given search
                    pop = cuda.atomic.add(QUEUE, 0, 1) - item0
                    entry = seq0 << 32 | pop  # (an entry of this launch is tagged above seq0)
                    spins = 0
                    while pop >= searches and pop < searches * subchunks and entry >> 32 <= seq0:
                        entry = cuda.atomic.add(RING, pop - searches, 0)
                        if entry >> 32 <= seq0:
                            backoff()
                            spins += 1
                            if spins > WAIT_SPINS:  # a bound on every wait: the host reports QUEUE[1]
                                QUEUE[1] = 1
                                pop = searches * subchunks
                    job[0] = pop
                    job[1] = entry
                cuda.threadfence()  # acquire: the state that the search's last item wrote, on any SM
                cuda.syncthreads()
                if job[0] >= searches * subchunks:
                    break
                sid = job[1] & 0xFFFFFFFF
                sub = (job[1] >> 32) - seq0
                blk = sid
                rank = np.int32(0)
            else:
                blk = cuda.blockIdx.x  # block `rank` of search `sid`'s cluster
                sid = blk // CLUSTER
                rank = np.int32(blk % CLUSTER)
                sub = 0
            it0 = chunk_it0 + sub * SUBCHUNK
            n_iter = min(SUBCHUNK, chunk_iters - sub * SUBCHUNK) if QUEUED else chunk_iters
            fresh = max(FRESH[sid], fresh_all) if sub == 0 else 0  # 1: a start; 2: a restart, which keeps its best
            if ACTIVE[sid] == 0:  # this search reached its target (or its cas colony did) earlier
                fresh = -1
            # a restart keeps the search's best: read by every thread (of every block of the cluster)
            # here, before the barriers of the start, as thread 0 of block 0 may lower it after them
            prior = BEST[sid] if fresh == 2 else NO_BEST
            if fresh >= 0:
                dl = dyn_d[DELTA_OFFSET:DELTA_OFFSET + SLOTS] if DELTA_SHARED else DELTA[blk]
                bp = dyn_b[MATRIX_OFFSET:MATRIX_OFFSET + PADDED_SIZE] if MATRIX_SHARED else BPG[blk]  # every block of a cluster keeps its own copy
                old = dyn_i[AGE_OFFSET:AGE_OFFSET + SLOTS] if AGE_SHARED else OLDG[blk]  # per move: the older of its two tabu expiries
                if not DP4A:
                    Aw = Af
                    bpw = bp
                bpt = BPTG[blk]
                # ex[i * N + l]: the iteration until which facility i may not return to location l
                ex = dyn_i[TABU_OFFSET:TABU_OFFSET + N_SQUARED] if TABU_SHARED else EX[blk]
                src = START if fresh else P  # a start, or the state of the search's last chunk
                for q in range(tid, N, THREADS):
                    p[q] = src[sid, q]
                kept = 0 if fresh else 1  # a chunk after the first: the state comes back from global memory
                for q in range(tid, SLOTS if DELTA_SHARED and kept else 0, THREADS):
                    dl[q] = DELTA[blk, q]
                for q in range(tid, PADDED_SIZE if MATRIX_SHARED and kept else 0, THREADS):
                    bp[q] = BPG[blk, q]
                for q in range(tid, SLOTS if AGE_SHARED and kept else 0, THREADS):
                    old[q] = OLDG[blk, q]
                for q in range(tid, N_SQUARED if TABU_SHARED and kept else 0, THREADS):
                    ex[q] = EX[blk, q]
                current = np.int64(0)
                init_exchange(bars, tid)
                cluster_barrier()  # every block of the cluster has started: its shared memory may be written
                if fresh:  # the first chunk builds its start state from the permutation alone
                    if gamma > 0:  # a cas generation: the ant is built here from its donor p (the blocks of a
                        cuda.syncthreads()  # cluster build the same one)
                        if tid == 0:
                            construct_ant(p, free, todo, TAU, gamma, STATE[sid, 1])
                    current = start_state(Af, AT, BG, ADIAG, BDIAG, ROWCHUNK, p, dl, bp, bpt, Aw, bpw, srow, old, ex, rkey, tid,
                                          rank, np.int32(it0))
                    if tid == 0 and rank == 0:
                        CUR[sid] = current
                        FRESH[sid] = 0
                        if current < prior:
                            BEST[sid] = current
                    for q in range(tid, N if rank == 0 and current < prior else 0, THREADS):
                        BEST_SOL[sid, q] = p[q]
                    best = min(current, prior)
                else:
                    current = CUR[sid]
                    best = BEST[sid]
                # this thread's first recomputation, and its warp's (ITEMS: none, as a warp of owners only)
                first_item = np.int32((tid // LANES) * CLUSTER + rank)
                first_warp_item = np.int32((warp * 32 // LANES) * CLUSTER + rank) if warp * 32 < RECOMPUTING_THREADS else np.int32(ITEMS)
                local = tid - SPLIT  # this thread's row chunk: moves (i0, j0) .. (i0, j0 + count - 1)
                c = rank * CHUNKS_PER_BLOCK + local
                owns = tid >= SPLIT and local < CHUNKS_PER_BLOCK and c < CHUNKS
                i0 = np.int32(ROWCHUNK[c] >> 16) if owns else np.int32(0)
                j0 = np.int32(ROWCHUNK[c] & 0xFFFF) if owns else np.int32(1)
                count = np.int32(min(MOVES_PER_THREAD, N - j0)) if owns else np.int32(0)
                local = np.uint32(max(local, 0))
                state = STATE[sid, 0]
                pend = NO_MOVE if fresh else PEND[sid]  # (the swap's delta << 32 | r << 16 | s)
                moved = pend != NO_MOVE  # a swap whose delta-table update is still to come
                r = np.int32((pend >> 16) & 0xFFFF)  # 32-bit facility numbers: narrow comparisons in the hot loop
                s = np.int32(pend & 0xFFFF)
                dlast = DELTA_NP(pend >> 32) if moved and ROW_SUMS else DELTA_NP(0)  # the last swap's delta
                nimp = NIMP[sid] if sub > 0 else 0  # QUEUED: a launch's sub-chunks count together
                done = DONE[sid] if sub > 0 else 0
                stop = False
                cuda.syncthreads()
                if moved:
                    for q in range(tid, N, THREADS):  # the pending swap's update vectors (bp is swapped)
                        rq = U64(r * ROW_STRIDE + q)
                        sq = U64(s * ROW_STRIDE + q)
                        set_update(u, w, q, DELTA_NP(Af[rq] - Af[sq]), DELTA_NP(bp[sq] - bp[rq]))
                        if GENERAL:
                            v[q] = AT[rq] - AT[sq]
                            z[q] = bpt[sq] - bpt[rq]
                else:
                    r, s = no_swap(u, v, tid)
                # (bp is as after the pending swap; a start's sums are computed again here: skipping them
                # kept `fresh` live and added two spills to the 512-thread loop's SASS)
                row_sums(Aw, bpw, srow, tid)
                cuda.syncthreads()
                # 32-bit step bookkeeping on every warp's path: the clock it32 (below 2^31: the host
                # rebases it under 2^30 before a chunk), and it_asp = it - aspiration, clamped once at
                # ASPIRE_FLOOR: the ages are never below EXPIRED, so that a horizon under it, where it
                # stays through any chunk (fewer than 2^29 iterations), aspirates nothing, clamped or not
                it32 = np.int32(it0)
                it_end = np.int32(it0 + n_iter)
                it_asp = np.int32(max(it0 - aspiration, ASPIRE_FLOOR))
                while it32 < it_end:
                    step = np.int32(it32 - np.int32(it0))  # (a cluster's mbarrier phases count from the item's start)
                    it32 = np.int32(it32 + 1)
                    it_asp = np.int32(it_asp + 1)
                    thr = DELTA_NP(max(best - current, DMIN))  # d < thr: a new best (aspiration)
                    kb = NO_KEY
                    if CLUSTER == 1 and tid == THREADS - 1:  # the next move's two tenures (read after the barrier;
                        draw_tenures(ten, state, tenure_min, tenure_span, tenure_magic, tenure_cube)  # a cluster: cluster_min)
                    # -- the 2n-3 moves touching the last swap: O(n) each, LANES lanes splitting the sum (MATA)
                    # item: the cluster's lane groups, blocks interleaved; rounds while the warp's first
                    # item is a move (uniform), in 32-bit counters (a range's 64-bit trip count cost
                    # every warp a dozen instructions an iteration)
                    item = first_item
                    warp_item = first_warp_item if moved else np.int32(ITEMS)
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
                    # -- every other move: O(1) update (Taillard), then its class and delta; the thread keeps
                    # its lowest (class, delta), the first on ties (its moves come in index order), and builds
                    # one key from it. Its moves run along one row (a row chunk): row i0's update values stay
                    # in registers, and the q-th move's loads sit at constant offsets
                    touched = np.int32(0)  # this thread's moves recomputed by the lane groups (a cluster counts them)
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
                    # -- block argmin: every warp ends with the winner
                    if CLUSTER > 1:
                        kb = cluster_min(xkey, bars, kb, touched, step, rank, warp, lane, ten, state, tenure_min,
                                         tenure_span, tenure_magic, tenure_cube)
                    elif SHUFFLE:
                        kb = warp_min(kb)
                        if lane == 0:
                            rkey[warp] = kb
                        cuda.syncthreads()
                        kb = warp_min(rkey[lane] if lane < WARPS else NO_KEY)
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
                    moved = kb < ALLOWED  # else every move is tabu: Taillard keeps the solution
                    if moved:
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
                        # -- apply the swap: bp's rows and columns r, s, the update vectors, p, the tabu list
                        q = np.int32(tid)
                        if tid == (CORNER if CORNER >= 0 else np.int32(r % THREADS)):  # (disjoint from the rows' entries)
                            swap_own(p, ex, bp, bpt, BEST_SOL, ten, r, s, it32, improved and rank == 0, sid)
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
                                if improved and rank == 0:
                                    BEST_SOL[sid, q] = p[q]
                            q = np.int32(q + THREADS)
                        if COLUMN_THREADS:  # the columns' entries by the block's last warps, beside the rows'
                            q = np.int32(tid - COLUMN0)
                            if q >= 0 and q < N and q != r and q != s:
                                swap_columns_at(bp, bpt, q, r, s)
                        if improved:
                            if tid == 0 and rank == 0:
                                IMP_IT[nimp, sid] = it32
                                IMP_OBJ[nimp, sid] = current
                            nimp += 1
                            stop = current <= target
                    else:
                        r, s = no_swap(u, v, tid)
                    cuda.syncthreads()
                    if stop:
                        if QUEUED and tid == 0:  # the search's later items of this launch return at once
                            ACTIVE[sid] = 0
                        break
                # -- the state goes back to global memory for the next chunk (the last swap's update pending);
                # the cluster's blocks hold the same permutation, each its own copy of the tables
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
                    DONE[sid] = done + (it32 - np.int32(it0))

            if not QUEUED:
                break
            cuda.threadfence()  # release: this item's state before the search's next item starts
            cuda.syncthreads()
            if tid == 0 and sub + 1 < subchunks:  # the search's next sub-chunk is ready: to the ring
                cuda.atomic.exch(RING, cuda.atomic.add(QUEUE, 2, 1) - push0, (seq0 + sub + 1) << 32 | sid)
    return rots_kernel


def _unrolled_lane_sum(N, G, GENERAL, DTN, term):
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
    return cuda.jit(device=True, inline=True)(scope["lane_sum"])


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
    from .intrinsics import dp4a, load_quad
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
    return cuda.jit(device=True, inline=True)(scope["lane_sum"])


@cuda.jit(device=True, inline=True)
def _mul_hi_halves(a, b):
    """The high 64 bits of a b from 32-bit halves (the simulator's mul_hi_u64)."""
    low = np.uint64(0xFFFFFFFF)
    a0, a1, b0, b1 = a & low, a >> np.uint64(32), b & low, b >> np.uint64(32)
    cross = ((a0 * b0) >> np.uint64(32)) + ((a1 * b0) & low) + a0 * b1
    return a1 * b1 + ((a1 * b0) >> np.uint64(32)) + (cross >> np.uint64(32))


REBASE_AT = 1 << 30
REBASE_BY = 1 << 29
EXPIRED = -(1 << 30)
ASPIRE_FLOOR = EXPIRED - (1 << 29)  # an aspiration horizon below every age for a whole chunk (the kernel's it_asp)


@cuda.jit
def rebase_kernel(expiries, by):
    """Moves the searches' clock back by `by` iterations in a table of expiries (one row per
    block): every expiry shifts with it, those long past are clamped to EXPIRED, which stays older
    than any aspiration horizon -- the same moves are tabu, allowed or aspirated as before, and
    the 32-bit expiries never overflow."""
    row = cuda.blockIdx.x
    for k in range(cuda.threadIdx.x, expiries.shape[1], cuda.blockDim.x):
        expiries[row, k] = max(expiries[row, k] - by, EXPIRED)
