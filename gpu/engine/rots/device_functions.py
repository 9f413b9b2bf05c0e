"""The resident Ro-TS engine's own device functions, one factory per role (gpu/engine/rots/kernel.py puts
them together with the problem's adapter, gpu/adapters/qap_rots.py): the tenure draws and the moves' keys.
Each factory takes the kernel's constants (gpu/engine/rots/constants.py) and returns inline device
functions specialised to them.
"""
from types import SimpleNamespace

import numpy as np
from numba import cuda

from lsbench import rng

from . import plan as rots_plan
from ...device import mix64, unit_interval
from ...runtime.lanes import SHUFFLE, U64, device

GOLDEN = rng.GOLDEN


def tenure_draws(k):
    """draw_tenures(ten, state, ...): the next move's two tenures, from the stream's next two words."""
    DIVIDE = k.divide
    if SHUFFLE:
        from ...runtime.intrinsics import mul_hi_u64
    else:
        mul_hi_u64 = _mul_hi_halves

    @device
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

    @device
    def draw_tenures(ten, state, tenure_min, span, magic, tenure_cube):
        ten[0] = np.int32(draw_tenure(mix64(state + GOLDEN), tenure_min, span, magic, tenure_cube))
        ten[1] = np.int32(draw_tenure(mix64(state + GOLDEN + GOLDEN), tenure_min, span, magic, tenure_cube))

    return draw_tenures


def move_keys(k):
    """Where a move lives (owner_slot), the moves touching the last swap (touching), and a move's key: class (0 aspirated, 1 allowed, 2 tabu), then delta, then (i, j) as
    i 2^J_BITS + j, which orders moves as their index, in one int64 -- one comparison orders moves
    exactly as the CPU's rule (lowest index on ties), and the winner's i and j come from its key."""
    N, CHUNKS, CLUSTER, CHUNKS_PER_BLOCK = k.n, k.chunks, k.cluster, k.chunks_per_block
    MOVES_PER_THREAD, OWNER_THREADS, Q32 = k.moves_per_thread, k.owner_threads, np.uint32(k.moves_per_thread)
    INDEX_BITS, J_BITS, DELTA_BITS, BIAS = k.index_bits, np.int64(k.index_bits // 2), k.delta_bits, k.bias
    chunks_before = device(rots_plan.chunks_before)

    @device
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

    @device
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

    if DELTA_BITS == 32 and SHUFFLE:
        @device
        def biased(d):
            """d + 2^31 for a 32-bit d: its sign bit flipped, one instruction instead of a 64-bit add."""
            return np.int64(np.uint32(d) ^ np.uint32(0x80000000))
    else:
        @device
        def biased(d):
            return np.int64(d) + BIAS

    if k.narrow:
        @device
        def class_delta(d, age, thr, it_asp, it):
            """As below, in one 32-bit word: class << 30 | d + 2^29 (|d| < 2^29: plan's bound), so
            that the O(1) pass compares and keeps one word a move."""
            # class 1 adds 2^30 once, class 2 twice (a tabu move is held: age >= it >= it_asp):
            # two selects and one three-input add instead of building the class and shifting it
            held = np.uint32((1 << 30) + BIAS) if (age >= it_asp) & (d >= thr) else np.uint32(BIAS)
            tabu = np.uint32(1 << 30) if (age >= it) & (d >= thr) else np.uint32(0)
            return np.uint32(np.uint32(d) + held + tabu)
    else:
        @device
        def class_delta(d, age, thr, it_asp, it):
            """Taillard's rule as one number, without branches: class 0 aspiration (old enough, or a
            new best), 1 allowed, 2 tabu (a tabu move is never old enough: it_asp <= it), then the
            delta. thr, it_asp and it come clamped to the width of d and age, so the comparisons
            stay narrow."""
            held = np.int64(age >= it_asp and d >= thr)
            cls = held + (held & np.int64(age >= it))
            return (cls << np.int64(DELTA_BITS)) | biased(d)

    @device
    def key_of(cd, i, j):
        """A move's key: its class and delta, then (i, j), which orders moves as their index."""
        return (np.int64(cd) << np.int64(INDEX_BITS)) | (np.int64(i) << J_BITS) | np.int64(j)

    return SimpleNamespace(owner_slot=owner_slot, touching=touching, class_delta=class_delta, key_of=key_of)


@cuda.jit(device=True, inline=True)
def _mul_hi_halves(a, b):
    """The high 64 bits of a b from 32-bit halves (the simulator's mul_hi_u64)."""
    low = np.uint64(0xFFFFFFFF)
    a0, a1, b0, b1 = a & low, a >> np.uint64(32), b & low, b >> np.uint64(32)
    cross = ((a0 * b0) >> np.uint64(32)) + ((a1 * b0) & low) + a0 * b1
    return a1 * b1 + ((a1 * b0) >> np.uint64(32)) + (cross >> np.uint64(32))
