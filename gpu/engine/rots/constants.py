"""The compile-time constants of the resident Ro-TS kernel (gpu/engine/rots/kernel.py), derived once from
its shape (gpu/engine/rots/plan.py). Each factory of gpu/engine/rots/device_functions.py, gpu/engine/rots/steps.py and the
adapter (gpu/adapters/qap_rots.py) reads the
ones it needs into locals, which Numba freezes into the device code as constants.
"""
from dataclasses import dataclass

import numpy as np
from numba import int16, int32, int64, uint8

from .plan import ON_CHIP, SHUFFLE


@dataclass(frozen=True)
class KernelConstants:
    adapter: str  # the problem's device adapter: a module of factories (gpu/adapters/qap_rots.py)
    n: int
    threads: int
    lanes: int  # lanes per O(n) recomputation (MATA's group)
    max_registers: object  # None: no cap
    general: bool  # asymmetric form: the transposes too
    diagonal: bool
    delta_shared: bool
    matrix_shared: bool
    age_shared: bool
    flows_shared: bool
    tabu_shared: bool
    delta_offset: int
    matrix_offset: int
    age_offset: int
    flows_offset: int
    tabu_offset: int
    queued: bool  # a persistent grid: blocks take (search, sub-chunk) items from a queue
    subchunk: int  # QUEUED: iterations per item
    row_stride: int  # row stride of the flows and permuted distances (bp, bpt, Af, AT)
    dp4a: bool  # 8-bit matrices on chip: four terms of a sum per dp4a
    sum_chains: int  # each dp4a sum in that many partial sums (a lane's dependent chains shorter)
    row_sums: bool  # dp4a sums without the row sum S_x, which the swaps keep
    cluster: int  # blocks per search
    split: int  # threads 0 .. split - 1 recompute only, the others update only (0: all do both)
    moves_per_thread: int  # an owner's row chunk: up to this many moves (i, j0), (i, j0 + 1), ...
    chunks: int
    chunks_per_block: int
    slots: int
    wide: bool  # 64-bit move costs
    narrow: bool  # a move's class and biased delta in one 32-bit word
    index_bits: int  # a move (i, j) in a key: i, then j
    data_bits: int
    divide: bool  # tenures drawn with the division routine (a register cap of 64 or less)

    @classmethod
    def of(cls, shape, adapter):
        regs = shape.get("max_registers")
        offsets = {name: shape["layout"].get(name, 0) for name in ON_CHIP}
        shared = shape["shared"]
        return cls(adapter=adapter, n=shape["n"], threads=shape["threads"], lanes=shape["group"], max_registers=regs,
                   general=shape["general"], diagonal=shape["diagonal"], delta_shared=shared["delta"],
                   matrix_shared=shared["matrix"], age_shared=shared["tabu_age"], flows_shared=shared["flows"],
                   tabu_shared=shared["tabu"], delta_offset=offsets["delta"], matrix_offset=offsets["matrix"],
                   age_offset=offsets["tabu_age"], flows_offset=offsets["flows"], tabu_offset=offsets["tabu"],
                   queued=shape["queued"], subchunk=shape["subchunk"], row_stride=shape["stride"],
                   dp4a=shape["dp4a"], sum_chains=2 if (regs or 255) >= 128 else 1, row_sums=shape["row_sums"],
                   cluster=shape["cluster"], split=shape["split"], moves_per_thread=shape["per_thread"],
                   chunks=shape["chunks"], chunks_per_block=shape["chunks_per_block"], slots=shape["slots"],
                   wide=shape["wide"], narrow=shape["narrow"], index_bits=shape["index_bits"],
                   data_bits=shape["data_bits"],
                   # the division-free draw where registers are plentiful (a cluster, or 256 threads: up
                   # to 255 a thread); a shape capped at 64 keeps the division routine, whose call stays
                   # out of its hot loop's register allocation (inline there it ran slower)
                   divide=regs is not None and regs <= 64 and shape["cluster"] == 1)

    # -- derived sizes --------------------------------------------------------------------------------
    @property
    def n_squared(self):
        return self.n * self.n

    @property
    def padded_size(self):
        return self.n * self.row_stride

    @property
    def row_words(self):  # 32-bit words a row
        return self.row_stride // 4

    @property
    def warps(self):
        return self.threads // 32

    @property
    def items(self):  # moves touching the last swap: recomputed in O(n)
        return 2 * self.n - 3

    @property
    def recomputing_threads(self):
        return self.split or self.threads

    @property
    def owner_threads(self):  # move-owning threads, from thread `split` on
        return self.threads - self.split

    @property
    def round_items(self):  # recomputations a round of the cluster's lane groups
        return self.recomputing_threads // self.lanes * self.cluster

    @property
    def fresh_lane_groups(self):  # a fresh start: every move's O(n) cost, all lane groups
        return self.threads // self.lanes

    @property
    def fresh_rounds(self):
        return -(-self.chunks_per_block * self.moves_per_thread // self.fresh_lane_groups)

    @property
    def update_length(self):  # the update vectors' length (shared array sizes must be single constants)
        return self.n + self.moves_per_thread

    @property
    def reduction_slots(self):
        return self.warps if SHUFFLE else self.threads

    @property
    def key_slots(self):  # rkey's size: a warp's 32 lanes read it in block_min
        return 32 if SHUFFLE else self.threads

    @property
    def half_span(self):  # the simulator's tree minimum: half the next power of two
        return (1 << (self.threads - 1).bit_length()) // 2

    @property
    def cluster_keys(self):  # a cluster's keys of every warp, two iterations
        return 2 * self.cluster * self.warps if self.cluster > 1 else 1

    @property
    def move_bytes(self):  # a recomputed move sent to its owner: delta and age
        return (8 if self.wide else 4) + 4

    @property
    def delta_type(self):
        return int64 if self.wide else int32

    @property
    def delta_np(self):
        return np.int64 if self.wide else np.int32

    @property
    def data_type(self):
        return {8: uint8, 16: int16, 32: int32, 64: int64}[self.data_bits]

    @property
    def packed(self):  # 32-bit update vectors u, w in one 64-bit word a facility (w high)
        return not self.wide and not self.general

    # -- a move's key: class (0 aspirated, 1 allowed, 2 tabu), delta, then (i, j) as i 2^J_BITS + j -------
    @property
    def delta_bits(self):  # delta bits, biased to be non-negative; 2 class bits above
        return 61 - self.index_bits if self.wide else (30 if self.narrow else 32)

    @property
    def bias(self):
        return np.int64(1) << np.int64(self.delta_bits - 1)

    @property
    def no_class_delta(self):  # no move (a class above tabu)
        return np.uint32(3 << self.delta_bits) if self.narrow else np.int64(3) << np.int64(self.delta_bits)

    @property
    def no_key(self):
        return self.no_class_delta << np.int64(self.index_bits)

    @property
    def allowed(self):  # keys below: aspirated or allowed
        return (np.int64(2) << np.int64(self.delta_bits)) << np.int64(self.index_bits)

    # -- who applies which part of a swap ------------------------------------------------------------
    @property
    def column0(self):  # a swap's columns by the block's last whole warps (where it holds both)
        return self.threads - 32 * -(-self.n // 32)

    @property
    def column_threads(self):
        return self.column0 >= self.n

    @property
    def corner(self):
        """The thread that swaps the swap's own entries: the first of a warp that swaps no row or
        column entry, where the block has one, else -1 (the thread of row r)."""
        free0 = 32 * -(-self.n // 32)
        return free0 if free0 + 32 <= (self.column0 if self.column_threads else self.threads) else -1
