"""What the device-resident local searches (gpu/engine/local_search.py, gpu/engine/whole_gpu_tabu.py,
gpu/engine/resident_pfsp.py) share: each search's state on the device (STATE at a chunk's start and end:
iterations done, current, best, improvements this chunk; the stream state in RNG; WORK/WRNG
between lockstep steps), the queue of (search, sub-chunk) items, and their side of the host loop
(lsbench/search/chunk_loop.py): chunks of iterations and the improvements they found, read back
between chunks (the searches never leave the device)."""

import numpy as np
from numba import config, cuda, int64

from lsbench.errors import LsbenchError
from lsbench.interfaces import WARMUP_SECONDS, Engine, SearchResult
from lsbench.interfaces import Stop
from lsbench.search.chunk_loop import ChunkedSearches, ChunkRead, run_chunks
from lsbench.search.common import ChunkLength

from .waits import wait_for

SIM = config.ENABLE_CUDASIM
IMPROVEMENT_CAP = 1 << 12  # improvements recorded per chunk (chunks are no longer than this)
LONGEST_CHUNK = 1 << 16  # record_rows: the most iterations of a Ro-TS chunk
RECORD_BYTES = 1 << 27  # record_rows: the improvement records' device memory (two int64 a search and row)
FIRST_CHUNK_MOVES = 50_000_000_000  # first_chunk: moves of all searches in a first chunk, at most (about 50 ms)
MAX_THREADS = 1024
NO_ASPIRATION = -(np.int64(1) << np.int64(62))
WAIT_SPINS = 1 << 28  # queue shape: a bound on a block's wait for a ready item (minutes)
RING_TAG_LIMIT = 1 << 31  # the ring's tags are 31 bits: at this count of sub-chunks they start afresh

if SIM:
    @cuda.jit(device=True, inline=True)
    def backoff():
        """A spinning wait's pause: none in the simulator, which has no nanosleep."""
        pass
else:
    @cuda.jit(device=True, inline=True)
    def backoff():
        """A spinning wait's pause, so that the waiting block leaves its SM's issue slots to others."""
        cuda.nanosleep(256)


def rows_within_budget(searches):
    """Rows of improvement records (an iteration and an objective, two int64, a search and row) that
    RECORD_BYTES holds for K searches."""
    return RECORD_BYTES // (16 * max(1, int(searches)))


def record_rows(searches):
    """Rows of K searches' improvement records, and so the most iterations a chunk may take (an
    improvement at most every iteration): IMPROVEMENT_CAP, or up to LONGEST_CHUNK (a power of two)
    while the records stay within RECORD_BYTES, so that ChunkLength's 20 ms, not the records, bound
    a chunk of fast iterations (fewer launches and host round trips for up to 66 searches)."""
    rows = rows_within_budget(searches)
    return max(IMPROVEMENT_CAP, min(LONGEST_CHUNK, 1 << (rows.bit_length() - 1)))


@cuda.jit(device=True, inline=True)
def read_search(STATE, RNG, WORK, WRNG, s, step):
    """(iterations done, current, best, improvements this chunk, stream state) of search s before
    lockstep step `step`: STATE at a chunk's start, then the double buffer WORK that step - 1
    wrote (every block of a search reads it while one block writes the other half)."""
    if step == 0:  # a chunk's improvements count from 0
        return STATE[s, 0], STATE[s, 1], STATE[s, 2], int64(0), RNG[s]
    p = step % 2
    return WORK[s, p, 0], WORK[s, p, 1], WORK[s, p, 2], WORK[s, p, 3], WRNG[s, p]


@cuda.jit(device=True, inline=True)
def write_search(WORK, WRNG, s, step, its, current, best, n_imp, state):
    p = (step + 1) % 2
    WORK[s, p, 0] = its
    WORK[s, p, 1] = current
    WORK[s, p, 2] = best
    WORK[s, p, 3] = n_imp
    WRNG[s, p] = state


@cuda.jit(device=True, inline=True)
def save_search(STATE, RNG, s, its, current, best, n_imp, state):
    STATE[s, 0] = its
    STATE[s, 1] = current
    STATE[s, 2] = best
    STATE[s, 3] = n_imp
    RNG[s] = state


@cuda.jit(device=True, inline=True)
def take_item(QUEUE, RING, job, tid, item0, seq0, searches, subchunks):
    """Queue mode: the block's next (search, sub-chunk) item, from the launch's `subchunks` of
    `searches` searches. Pop j < K is search j's first sub-chunk; pop j >= K takes RING[j - K], the
    (j - K)-th search whose sub-chunk ended: a block never waits for one given search. Returns
    False past the last item (or when a wait ran out: QUEUE[1] = 1 tells the host); else job[1]
    holds the item, item_of reads it. QUEUE = [items taken, a wait ran out, items handed on];
    ItemQueue keeps the counts, and the launch's item0, seq0 (the tag its ring entries carry
    above) and push0 (for pass_on), across launches."""
    if tid == 0:
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
    return job[0] < searches * subchunks


@cuda.jit(device=True, inline=True)
def item_of(job, seq0):
    """(search, sub-chunk) of the item take_item put in job."""
    return job[1] & 0xFFFFFFFF, (job[1] >> 32) - seq0


@cuda.jit(device=True, inline=True)
def pass_on(QUEUE, RING, tid, sid, sub, subchunks, seq0, push0):
    """The end of search sid's sub-chunk `sub`: its next one goes to the ring, ready for any block."""
    cuda.threadfence()  # release: this item's state before the search's next item starts
    cuda.syncthreads()
    if tid == 0 and sub + 1 < subchunks:
        cuda.atomic.exch(RING, cuda.atomic.add(QUEUE, 2, 1) - push0, (seq0 + sub + 1) << 32 | sid)


class ItemQueue:
    """The host's side of the queue: the counts in QUEUE go on across launches, and the ring's
    entries carry a launch's tag, so that neither is cleared between chunks (a copy each costs
    about 0.1 ms, a tenth of a short chunk). The ring grows to a launch's items where needed, and
    starts afresh before its 31-bit tags run out."""

    def __init__(self, QUEUE, ring_items=1, stream=0):
        self.QUEUE, self.stream = QUEUE, stream
        self.RING = cuda.to_device(np.zeros(max(1, ring_items), np.int64))
        self.taken = self.pushed = self.subchunks_done = 0

    def launch(self, searches, subchunks, blocks):
        """(item0, seq0, push0) of a launch of `subchunks` sub-chunks of K searches on `blocks`
        persistent blocks; the counts then move past it (every block takes one pop past the last)."""
        handed_on = searches * (subchunks - 1)  # every item but a search's last hands on its next
        if handed_on > self.RING.size:
            self.RING = cuda.to_device(np.zeros(handed_on, np.int64))
            self.subchunks_done = 0
        elif self.subchunks_done + subchunks >= RING_TAG_LIMIT:
            self.RING.copy_to_device(np.zeros(self.RING.size, np.int64), stream=self.stream)
            self.subchunks_done = 0
        counts = np.int64(self.taken), np.int64(self.subchunks_done), np.int64(self.pushed)
        self.taken += searches * subchunks + blocks
        self.pushed += handed_on
        self.subchunks_done += subchunks
        return counts


@cuda.jit(device=True, inline=True)
def start_item(STATE, RNG, s, sub):
    """(iterations done, current, best, improvements this launch, stream state) of search s at
    the start of its sub-chunk `sub` (a launch's sub-chunks count improvements together)."""
    return STATE[s, 0], STATE[s, 1], STATE[s, 2], STATE[s, 3] if sub > 0 else int64(0), RNG[s]


@cuda.jit(device=True, inline=True)
def end_lockstep(STATE, RNG, WORK, WRNG, b, G, K, V, tid, n_iter):
    """Lockstep: each search's state after the chunk's last step, from WORK back to STATE."""
    for u in range(b, K * V, G):
        if u % V == 0 and tid == 0 and n_iter > 0:
            its, current, best, n_imp, state = read_search(STATE, RNG, WORK, WRNG, u // V, n_iter)
            save_search(STATE, RNG, u // V, its, current, best, n_imp, state)


@cuda.jit
def fill_kernel(a, value):
    for q in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        a[q] = value


def free_device_bytes():
    """Bytes free on the current GPU; None in the simulator, whose arrays are host memory."""
    if SIM:
        return None
    free, _total = cuda.current_context().get_memory_info()
    return free


def never_tabu(shape):
    """Tabu expiries of K searches, every one -1 (nothing forbidden), filled on the device: K
    n x n matrices need not exist on the host. Refuses, in one line, K matrices the GPU cannot hold."""
    need = 8 * int(np.prod(shape))
    free = free_device_bytes()
    if free is not None and need > 0.9 * free:
        raise LsbenchError(f"--searches {shape[0]}: the searches' tabu memories need {need / 2**30:.1f} GiB of GPU "
                           f"memory, {free / 2**30:.1f} GiB are free")
    exp = cuda.device_array(shape, np.int64)
    flat = exp.reshape(exp.size)
    fill_kernel[min(1024, -(-flat.size // 256)), 256](flat, np.int64(-1))
    return exp


def tabu_starts(problem, seeds):
    """(start solutions, stream states, start objectives) of K tabu searches, each exactly the CPU
    search's with its seed."""
    from lsbench import rng
    from lsbench.search.common import start_solution
    from lsbench.search.tabu import TabuSearch
    states, sols = [], []
    for seed in seeds:
        st = rng.new_state(seed)
        sols.append(start_solution(problem, st, TabuSearch()))
        states.append(st[0])
    return sols, np.array(states, dtype=np.uint64), np.array([problem.objective(s) for s in sols], dtype=np.int64)


def chunk_launcher(kernel, args, dev, sols, states, starts, blocks, queued):
    """Uploads K searches' starts into their state (`dev`: STATE, RNG, BEST_SOL, QUEUE) and returns
    launch(n_iter, target) for run_searches. `args` end in (sub-chunk, tenure_min, tenure_max,
    aspiration, target, iterations, item0, seq0, push0). A queue's sub-chunks are sized for at least
    8 items a block a chunk, so that its last round is short; its ring is args' RING."""
    K = len(sols)
    dev["STATE"].copy_to_device(np.stack([np.zeros(K, np.int64), starts, starts, np.zeros(K, np.int64)], axis=1))
    dev["RNG"].copy_to_device(states)
    dev["BEST_SOL"].copy_to_device(np.array(sols).astype(dev["BEST_SOL"].dtype))
    dev["QUEUE"].copy_to_device(np.zeros(3, np.int64))
    queue = ItemQueue(dev["QUEUE"])
    ring_at = next(i for i, a in enumerate(args) if a is dev["RING"])
    item = int(args[-9])

    def launch(n_iter, target):
        if queued:
            subchunk = max(1, min(item, n_iter // -(-8 * blocks // K)))
            args[-9] = np.int64(subchunk)
            args[-3:] = queue.launch(K, -(-n_iter // subchunk), blocks)
            args[ring_at] = queue.RING
        args[-5], args[-4] = target, np.int64(n_iter)
        kernel(*args)
    return launch


class StateSearches(ChunkedSearches):
    """The local search engines' side of the host loop: a chunk is `launch(n_iter, target)`, and
    STATE (iterations done, current, best, improvements this chunk), ERR and, where kept, FLAGS
    (ended by itself) come back after it."""

    def __init__(self, launch, dev, starts, what):
        self.launch, self.dev, self.what = launch, dev, what
        self.state = np.stack([np.zeros_like(starts), starts, starts, np.zeros_like(starts)], axis=1)

    def run_chunk(self, first, n_iter, target, finished):
        self.launch(n_iter, target)
        wait_for()
        st = self.state = self.dev["STATE"].copy_to_host()
        err = self.dev["ERR"].copy_to_host()
        if self.dev["QUEUE"].copy_to_host()[1]:
            raise LsbenchError(f"{self.what}: a block waited too long for a ready queue item (internal error)")
        if err[1]:
            raise LsbenchError(f"{self.what}: search {int(err[1]) - 1}'s incremental state disagrees with its tracked "
                               f"objective at iteration {int(err[0])} (internal error)")
        ended = self.dev["FLAGS"].copy_to_host()[:, 1] != 0 if "FLAGS" in self.dev else None
        return ChunkRead(st[:, 2], st[:, 0], st[:, 3], ended)

    def improvement_rows(self, rows):
        return self.dev["IMP_IT"][:rows].copy_to_host(), self.dev["IMP_OBJ"][:rows].copy_to_host()


def first_chunk(searches, moves):
    """A run's first chunk: 16 iterations, fewer where K searches' neighbourhoods are so large that
    16 would outlast a short run (pla85900's 3.7 G moves an iteration: one), since a chunk's length
    is only known to be right after one has run."""
    return max(1, min(16, FIRST_CHUNK_MOVES // (searches * moves)))


def run_searches(launch, dev, stop, moves, starts, seeds, prm, progress=None, chunk=None, what="gpu-resident"):
    """K device-resident searches of the STATE layout in one kernel, on the host loop
    (lsbench/search/chunk_loop.py): chunks of `launch(n_iter, target)`, each as long as the budget allows and
    doubling while a chunk takes under 20 ms. Returns ([SearchResult] as the CPU search returns
    them, one per seed, seconds in kernels)."""
    searches = StateSearches(launch, dev, starts, what)
    chunks = ChunkLength(chunk or (2 if SIM else first_chunk(len(seeds), moves)), IMPROVEMENT_CAP, grow=not SIM)
    out = run_chunks(searches, stop, moves, starts, chunks, stop.target, progress)
    st = searches.state
    best_sol = dev["BEST_SOL"].copy_to_host().astype(np.int64)
    trajectories = out.log.trajectories()
    results = [SearchResult(int(st[q, 2]), best_sol[q], int(st[q, 0]), int(st[q, 0]) * moves, trajectories[q],
                            dict(prm), int(st[q, 1]), seed=seed) for q, seed in enumerate(seeds)]
    return results, out.kernel_s


class ResidentEngine(Engine):
    """The registry's engine over a search object (self.search) that runs K device-resident
    searches at once: its run(seeds, stop, progress) returns a SearchResult per seed, sets kernel_s
    and describes its shape."""

    name = "gpu-resident"
    several_searches = True

    def warm_up(self, seeds, iterations):
        """Compiles the kernel and sizes the grid for K = len(seeds) searches: two untimed
        iterations, whatever `iterations` says, or one where it outlasts WARMUP_SECONDS (an
        iteration of 132 PPP 3000-3000 searches takes tens of seconds)."""
        self.search.run(list(seeds), Stop(iterations=2, seconds=WARMUP_SECONDS))

    def run(self, seeds, stop, progress=None):
        return self.search.run(list(seeds), stop, progress)

    def describe(self):
        return {**self.search.describe(), "kernel_s": round(self.search.kernel_s, 6)}
