"""The shape of the resident Ro-TS kernel's launch for K searches: a thread block cluster a search,
one block a search, two blocks an SM, waves, or a queue of (search, sub-chunk) items for a
persistent grid, and a queued chunk's length; each choice the fastest measured
(benchmarks/research/ab_resident.py, benchmarks/gpu_resident.py). ResidentRots._configure (gpu/engine/rots/host.py)
applies them."""
from lsbench.errors import LsbenchError

from ...runtime.chunks import IMPROVEMENT_CAP, rows_within_budget
from ...runtime.launch import register_cap
from .plan import byte_matrices, plan

UNEVEN = "uneven"  # ResidentRots(persistent=UNEVEN): see uneven_grid
# Past one search per SM, K searches run in waves of the blocks that run at once where the waves
# are this full on average, else they queue for a persistent grid of those blocks (spread).
FULL_WAVES = 0.9
# A large instance's queue items, in iterations (an item moves its search's state, some 90 KB on
# tai100a, through global memory), and the least items a queued chunk holds a search: longer items
# and chunks mean fewer state moves, launches and host round trips, shorter ones idle blocks less
# at a chunk's end; these were the fastest measured (benchmarks/research/ab_resident.py).
LARGE_QUEUE_SUBCHUNK = 512
QUEUE_ITEMS_A_CHUNK = 48
# Two blocks an SM from this many searches an SM: below it their queue holds more blocks than
# searches, and the searches' items land on its blocks at random, so that about sms (1 - K/(2 sms))^2
# SMs hold no running search (a sixth of them at 1.2 searches an SM).
TWO_PER_SM_FROM = 1.5
# Two blocks an SM gain less over one the larger the instance, while the queue of one 1024-thread
# block an SM leaves few SMs idle: from n = LARGER_N two blocks an SM start at this many searches an SM.
TWO_PER_SM_FROM_LARGER = 1.75
LARGER_N = 100


def blocks_per_sm(searches, sms, large, fits_twice, n=0):
    """Blocks an SM of the automatic shape for K searches: a small instance four; a large one two
    (512 threads each) from TWO_PER_SM_FROM searches an SM (TWO_PER_SM_FROM_LARGER from n =
    LARGER_N) where two fit with every table on chip, else one (1024 threads)."""
    if not large:
        return 4
    two_from = TWO_PER_SM_FROM_LARGER if n >= LARGER_N else TWO_PER_SM_FROM
    return 2 if fits_twice and searches >= two_from * sms else 1


# A large instance's searches on thread block clusters where all of them run at once, fastest
# first as measured: (threads a block, blocks a search), for byte matrices (dp4a sums) and for
# wider ones; wider matrices take a term an instruction, so more blocks a search pay.
CLUSTER_SHAPES = {True: ((192, 16), (384, 4), (512, 2)),
                  False: ((192, 16), (256, 8), (384, 4), (512, 2))}
# Wider matrices that stay in global memory (tai256c) run so much faster on 8-block clusters than on
# fewer blocks a search that up to this many waves of such clusters beat one wave of the others.
OFF_CHIP_WAVES = 4


def cluster_shape(searches, at_once, byte_data=True, off_chip=False):
    """(threads, blocks a search) of the fastest CLUSTER_SHAPES entry (bytes or wider matrices)
    whose K clusters run at once (`at_once(blocks)`: clusters of that size the GPU runs together;
    `off_chip`: 8-block clusters in up to OFF_CHIP_WAVES waves), or None: more searches than any
    cluster shape fits wait for a second wave, which halves their it/s."""
    for threads, blocks in CLUSTER_SHAPES[byte_data]:
        if searches <= at_once(blocks) * (OFF_CHIP_WAVES if off_chip and blocks == 8 else 1):
            return threads, blocks
    return None


def auto_cluster_shape(problem, searches, at_once, group=None, global_only=(), split=None):
    """cluster_shape for this instance (byte or wider matrices; off chip: its matrices outside the
    8-block cluster's shared memory), or None where that shape's move tables do not fit on chip
    (a very large instance: one block a search keeps them in global memory)."""
    plans = {}

    def tables(threads, blocks):
        """The shape's on-chip tables (planned once), or None where its move tables do not fit."""
        if (threads, blocks) not in plans:
            try:
                plans[threads, blocks] = plan(problem, threads, group, None, global_only, blocks, split)["shared"]
            except LsbenchError:
                plans[threads, blocks] = None
        return plans[threads, blocks]

    byte_data = byte_matrices(problem)
    eight = None if byte_data else tables(256, 8)
    shape = cluster_shape(searches, at_once, byte_data, off_chip=eight is not None and not eight["matrix"])
    return shape if shape and tables(*shape) is not None else None


def spread(searches, sms, per_sm, large):
    """(waves, persistent blocks) for K searches on `sms` SMs holding `per_sm` blocks each. Up to
    one search per SM (a large instance) or per_sm blocks an SM (a small one), one block each.
    Beyond, a large instance runs waves where they are at least FULL_WAVES full (one wave where K
    nearly fills per_sm blocks an SM), else the K searches queue for a persistent grid of per_sm
    blocks an SM, which keeps every SM busy (one block a search would leave some SMs one search
    short).
    A small instance queues beyond four blocks an SM."""
    slots = sms * per_sm
    if searches <= (sms if large else slots):
        return False, 0
    if large:
        rounds = -(-searches // slots)
        if searches / (rounds * slots) >= FULL_WAVES:
            return rounds > 1, 0
    return False, slots


def queue_chunk(searches, blocks, subchunk):
    """Iterations of a queued chunk: at least QUEUE_ITEMS_A_CHUNK items a search (fewer where K
    searches' improvement records would pass RECORD_BYTES) and IMPROVEMENT_CAP iterations, and of up
    to a quarter more items a search (within the records), the number that leaves the fewest of the
    last round's blocks idle where the searches outnumber the blocks (a launch ends with its last
    item: 166 searches of 48 items on 132 blocks take 61 rounds with 84 of their 8,052 item slots
    idle; of 58 items, 73 rounds with 8 idle)."""
    records = rows_within_budget(searches) // subchunk  # items a search the records hold
    least = max(-(-IMPROVEMENT_CAP // subchunk), min(QUEUE_ITEMS_A_CHUNK, records))
    most = max(least, min(least + least // 4, records))

    def idle(items):
        work = searches * items
        return -work % blocks / (work - work % blocks + blocks) if searches > blocks else 0.0
    return min(range(least, most + 1), key=lambda items: (idle(items), items)) * subchunk


def uneven_grid(searches, sms):
    """Persistent blocks for K searches that all run the same number of iterations (a cas
    generation), or 0 for one block each. Blocks of a large instance fill an SM's issue slots, so
    an SM holding j of them takes about j times as long, and the launch ends with the busiest SM:
    where K is not near a whole multiple of the SMs (200 ants on 132 SMs leave a round of idle SMs)
    one block per SM taking the searches'
    sub-chunks from a queue keeps every SM busy to the end, at the cost of the queue's state round
    trips through global memory. From TWO_PER_SM_FROM ants an SM the queue, as the searches',
    takes two 512-thread blocks an SM where both fit (_configure)."""
    if searches <= sms:
        return 0
    busy = searches / (sms * -(-searches // sms))  # the share of the busiest SM's time the others are busy
    return 0 if busy >= 0.95 else sms


def blocks_an_sm(dev, per_sm, large):
    """(threads, registers a thread, shared memory a block) for `per_sm` blocks on one SM: the SM's
    registers and shared memory split between them (the system keeps 1 KB a block)."""
    threads = 1024 // per_sm if large else 256
    return (threads, register_cap(threads, per_sm),
            int(dev.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR) // per_sm - 2048)
