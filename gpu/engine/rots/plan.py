"""The shape of the device-resident Ro-TS kernel for one QAP instance and GPU (gpu/engine/rots/kernel.py).

`plan` decides, before anything is compiled: threads per block, blocks per search (a cluster),
lanes per O(n) recomputation, the integer widths (bytes and dp4a where the matrices fit, a
32-bit delta table and a one-word class and delta where the move-cost bound allows), which
per-search tables live in shared memory and where, and the dynamic shared memory the block needs.
"""
import numpy as np
from numba import config

from lsbench.errors import LsbenchError

from ...runtime.lanes import SHUFFLE
from ...runtime.launch import shared_bytes_per_block

ON_CHIP = ("delta", "matrix", "tabu_age", "flows", "tabu")  # per-block tables, most used first


def byte_matrices(problem):
    """Whether the symmetric form (the problem's form_a, form_b: lsbench.problems.qap.symmetric_form)
    holds bytes (0..255) only: a move's O(n) sum then takes four terms an instruction (dp4a), which
    changes which shapes run fastest (rots_engine.CLUSTER_SHAPES)."""
    A, B = problem.form_a, problem.form_b
    return not problem.general and min(int(A.min()), int(B.min())) >= 0 and max(int(A.max()), int(B.max())) < 1 << 8


def chunks_before(x, q):
    """Row chunks (runs of at most q moves along a row of the upper triangle, each row cut from its
    start) in rows of lengths 1 .. x: the sum of ceil(L / q), for x = a q + b in closed form q a (a +
    1) / 2 + b (a + 1). 32-bit unsigned, the same on the host and in the kernel (which finds a move's
    chunk from it: rows 0 .. i - 1 hold chunks_before(n - 1) - chunks_before(n - 1 - i))."""
    x, q, one = np.uint32(x), np.uint32(q), np.uint32(1)
    a = np.uint32(x // q)
    return np.uint32(np.uint32(q * np.uint32(np.uint32(a * np.uint32(a + one)) // np.uint32(2)))
                     + np.uint32(np.uint32(x % q) * np.uint32(a + one)))


def row_chunks(n, q):
    """The upper triangle's row chunks of at most q moves (one thread's moves in the kernel)."""
    return int(chunks_before(n - 1, q))


def row_chunk_table(n, per_thread):
    """The row chunks in order, chunk c = (i << 16) | j0: moves (i, j0), (i, j0 + 1), ... up to
    per_thread of them within row i (the kernel's owners take them in this order)."""
    return np.array([(i << 16) | j0 for i in range(n - 1) for j0 in range(i + 1, n, per_thread)], dtype=np.int32)


def chunk_length(n, owners, cluster=1):
    """Moves per row chunk: the fewest whose chunks fit the cluster's owning threads; odd, so that
    a warp's threads, Q moves apart, meet no bank conflicts (2: two-way, kept). Every row needs a
    chunk of its own, so n - 1 rows need that many owners over the cluster's blocks."""
    rows_a_block = -(-(n - 1) // cluster)
    if rows_a_block > owners:
        raise LsbenchError(f"--param block: {owners} move-owning threads a block cannot hold the {n - 1} rows of "
                           f"moves of an instance of size {n} (a row's moves need a thread of their own; with "
                           f"{cluster} block(s) a search, at least {rows_a_block} owning threads a block)")
    q = 1
    while -(-row_chunks(n, q) // cluster) > owners:
        q += 1
    return q | 1 if q > 2 else q


def recomputing_warps(n, threads, items, group, cluster=1):
    """The default split: whole warps that only recompute one round of the block's moves touching
    the last swap, where the block's row chunks still fit the other threads at the length every
    thread would need (tai100a, 1024 threads: 224 of them, 750 chunks of 7 moves on the other 800;
    a cluster of 16 blocks of 256: 32, 158 chunks of 2 a block on the other 224), else 0 (every
    thread does both). The warps that recompute, the slowest of an iteration, then own no moves."""
    need = -(-items * group // 32) * 32
    if need >= threads or -(-row_chunks(n, chunk_length(n, threads, cluster)) // cluster) > threads - need:
        return 0
    return need


def keeps_row_sums(n, split, cluster):
    """Whether a byte-matrix kernel keeps the row sums S_i = sum_k A_ik bp_ik, so that an O(n)
    recomputation needs three dp4a a word instead of four: where every thread also recomputes
    (split 0: with recomputing-only warps the sums' upkeep costs more than it saves), and, on a cluster, where every
    block recomputes moves touching each of the two swapped rows (those recomputations store the
    rows' new sums in each block's own table): n - 2 >= the cluster's blocks."""
    return split == 0 and (cluster == 1 or n - 2 >= cluster)


def lanes_per_sum(steps, dp4a):
    """Lanes per O(n) recomputation outside a cluster: the fewest whose share of the sum's steps
    stays under a limit. With 132 searches on an H200 (a block of 1024 threads each), tai100a (25
    dp4a words) runs faster on one lane than on two, tai256c (64 words) and
    tai150b (150 terms, no dp4a) fastest on four: shuffling partial sums costs more than a longer
    sum up to about 25 words or 64 terms."""
    limit = 25 if dp4a else 64
    group = 1
    while group < 32 and group * limit < steps:
        group *= 2
    return group


def plan(problem, threads=None, group=None, shared_limit=None, global_only=(), cluster=1, split=None, queued=False,
         subchunk=None):
    """Kernel shape for an instance: integer widths (checked bounds), which per-search tables live
    in the block's dynamic shared memory (the rest in global memory), threads per block, lanes per
    O(n) recomputation and blocks per search (a cluster: the moves split between its blocks).
    `split`: the block's first `split` threads only recompute, the others only update in O(1)
    (separate warps, as MATA: the two phases overlap); 0: every thread does both; None: where the
    row chunks allow (recomputing_warps). `global_only`
    keeps tables off chip (tests reach those paths). `queued`: a persistent grid whose blocks take
    (search, sub-chunk of `subchunk` iterations) items from a queue (more searches than blocks)."""
    n = problem.n
    if cluster not in (1, 2, 4, 8, 16):
        raise LsbenchError(f"--param cluster: blocks per search must be 1, 2, 4, 8 or 16, got {cluster}")
    if cluster > 1 and not SHUFFLE:
        raise LsbenchError("--param cluster: thread block clusters run on the GPU only, not in the simulator")
    if queued and cluster > 1:
        raise LsbenchError("--param cluster: a search spans one block when searches queue for blocks (persistent)")
    subchunk = subchunk or (2 if config.ENABLE_CUDASIM else 128)
    A, B, general = problem.form_a, problem.form_b, problem.general
    largest = max(int(np.abs(A).max()), int(np.abs(B).max()))
    if largest >= 1 << 31:
        raise LsbenchError(f"instance {problem.name}: flows/distances exceed 32 bits")
    moves = n * (n - 1) // 2
    index_bits = 2 * max(1, (n - 1).bit_length())  # a move (i, j) in a key: i, then j (the index order)
    bound = problem.swap_delta_bound()
    wide = bound >= (1 << 31) - 1
    narrow = bound < 1 << 29  # a move's class and biased delta fit one 32-bit word
    if wide and bound >= 1 << (60 - index_bits):  # a key holds class, delta and move index in 63 bits
        raise LsbenchError(f"instance {problem.name}: move costs may exceed 2^{60 - index_bits}, beyond "
                           "gpu-resident's key range (use --backend cpu)")
    if threads is None:
        threads = max(32, 32 * -(-(n - 1) // 32)) if config.ENABLE_CUDASIM else (512 if moves > 2048 else 256)  # (a row a thread at least)
    if threads % 32 or not 32 <= threads <= 1024:
        raise LsbenchError(f"--param block: threads per search must be a multiple of 32 in 32..1024, got {threads}")
    items = -(-(2 * n - 3) // cluster)  # O(n) recomputations per block and iteration
    auto_split = split is None
    split = split or 0
    if split % 32 or not 0 <= split < threads:
        raise LsbenchError(f"--param split: recomputing threads must be a multiple of 32 below {threads}, got {split}")
    workers = split or threads  # threads that recompute
    owners = threads - split  # threads that own moves
    small = byte_matrices(problem)
    if auto_split:  # recomputing-only warps, one round at the lanes a sum needs alone
        lanes = group or lanes_per_sum(-(-n // 4) if small else n, small)
        split = recomputing_warps(n, threads, items, lanes, cluster)
        workers, owners = split or threads, threads - split
        if cluster > 1 and split:  # (one block: the lanes follow from dp4a, below)
            group = lanes
    if group is None and cluster > 1:  # a cluster: as many lanes as one round of the block's share allows
        group = 1
        while group < 32 and 2 * group * items <= workers:
            group *= 2
    if group is not None and group not in (1, 2, 4, 8, 16, 32):
        raise LsbenchError(f"--param group: lanes per recomputation must be a power of two up to 32, got {group}")
    # bytes (0..255) where the symmetric form allows: a move's O(n) sum then takes four terms an
    # instruction (dp4a, below); the simulator's NumPy scalars do not widen before arithmetic: it
    # keeps everything 64-bit
    data_bits = 64 if config.ENABLE_CUDASIM else (8 if small else 16 if largest < 1 << 15 else 32)
    # the flow and permuted-distance matrices' rows: whole 32-bit words, bytes in whole 16-byte quads
    # (dp4a's sums load a quad of each row at once)
    stride = -(-n // 16) * 16 if data_bits == 8 else -(-n // 4) * 4
    delta_bytes = 8 if wide else 4
    static = n * (12 + (4 if general else 2) * delta_bytes) + (threads if config.ENABLE_CUDASIM else 32) * 8
    static += 2 * 8 * cluster * (threads // 32)  # a cluster's keys
    static += 4 * n if data_bits == 8 and keeps_row_sums(n, split, cluster) else 0  # the row sums (kernel's srow)
    budget = (shared_limit or shared_bytes_per_block()) - static - 1024  # the system keeps 1 KB a block
    # an owning thread's moves: a run of Q along one row (a row chunk), so that its O(1) pass needs no
    # row wrap; the fewest Q whose chunks fit the cluster's owning threads
    per_thread = chunk_length(n, owners, cluster)
    chunks = row_chunks(n, per_thread)
    slots = per_thread * owners  # per-move tables (see slot in the kernel)
    budget -= (4 if general else 2) * per_thread * delta_bytes  # the update vectors' tails (kernel)
    sizes = {"delta": (slots, delta_bytes), "matrix": (n * stride, data_bits // 8), "tabu_age": (slots, 4),
             "flows": (n * stride, data_bits // 8), "tabu": (n * n, 4)}
    shared, layout, used = {}, {}, 0
    for name in ON_CHIP:
        count, item = sizes[name]
        size = -(-count * item // 16) * 16  # each table starts 16-byte aligned
        shared[name] = name not in global_only and used + size <= budget
        if shared[name]:
            layout[name] = used // item  # element offset in a view of its type
            used += size
    if cluster > 1 and not (shared["delta"] and shared["tabu_age"]):
        raise LsbenchError(f"instance {problem.name}: a cluster search needs its move tables in shared memory, "
                           f"which do not fit in {budget} bytes (use --param cluster=1)")
    diagonal = bool(np.diagonal(problem.a).any() and np.diagonal(problem.b).any())
    # dp4a reads four bytes of a row from shared memory at once: both matrices on chip, on a device
    dp4a = data_bits == 8 and shared["matrix"] and shared["flows"]
    if group is None:  # lanes per O(n) sum, by its instructions: words of four bytes (dp4a), else terms
        group = lanes_per_sum(-(-n // 4) if dp4a else n, dp4a)
    if not SHUFFLE:
        group = 1
    return {"n": n, "queued": bool(queued), "subchunk": subchunk, "stride": stride, "dp4a": dp4a, "row_sums": dp4a and keeps_row_sums(n, split, cluster), "moves": moves, "per_thread": per_thread, "chunks": chunks, "chunks_per_block": -(-chunks // cluster), "cluster": cluster, "split": split, "slots": slots, "index_bits": index_bits, "wide": wide, "narrow": narrow, "threads": threads,
            "group": group, "general": general, "diagonal": diagonal, "data_bits": data_bits, "shared": shared, "layout": layout,
            "dynamic_shared_bytes": used}
