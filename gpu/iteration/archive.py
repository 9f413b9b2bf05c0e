"""PLS's archive in GPU memory (`--param archive=device`): the parallel non-dominated filter that
Luong, Melab and Talbi name as their next step ("SIMD parallel archiving on GPU").

The neighbourhood's objective vectors stay on the device. Per iteration, four launches and no
host wait until the last:
1. `candidates_kernel`: one thread per move. A move is a candidate if the acceptance rule takes
   it and no archive member weakly dominates it (the archive streamed through shared memory);
   then, within the block (consecutive moves), a candidate beaten by another candidate drops out.
   "q beats p": q dominates p, or q equals p and comes first (lower move index). The relation is
   transitive, so filtering block by block and then among the block survivors is exact.
2. `scan_kernel` (one block): each block's survivor count -> its offset, in block order.
3. `scatter_kernel`: each block writes its survivors' move indices at its offset, in move order.
4. `merge_kernel` (one block): survivors beaten by another survivor drop out (all pairs, through
   shared memory); members strictly dominated by a survivor leave; the archive is rewritten as
   the members that stay, in order, then the entrants, in move order -- exactly what inserting the
   candidates one by one in move order gives (lsbench.search.archive.insert_batch). The change
   (positions that left, moves that entered, their vectors) is written to mapped host memory, the
   one thing the host reads.
"""
import numpy as np
from numba import config, cuda

from lsbench.search import archive as host_archive

from ..device import twin
from ..runtime.waits import wait_for

THREADS = 32 if config.ENABLE_CUDASIM else 256  # threads per block (the simulator runs each as a Python thread)
MERGE_THREADS = 32 if config.ENABLE_CUDASIM else 1024

dominates = twin(host_archive.dominates)
weakly_dominates = twin(host_archive.weakly_dominates)


@cuda.jit(device=True, inline=True)
def beats(q0, q1, q2, q, p0, p1, p2, p):
    """Candidate q (move q) removes candidate p: it dominates it, or equals it and comes first."""
    return dominates(q0, q1, q2, p0, p1, p2) or (q0 == p0 and q1 == p1 and q2 == p2 and q < p)


@cuda.jit
def candidates_kernel(vectors, size, c0, c1, c2, accept, members, count, flags, block_counts):
    sh = cuda.shared.array((THREADS, 3), np.int64)
    sh_ok = cuda.shared.array(THREADS, np.int32)
    sh_count = cuda.shared.array(1, np.int32)
    tid = cuda.threadIdx.x
    t = cuda.blockIdx.x * THREADS + tid
    v0 = v1 = v2 = np.int64(0)
    ok = False
    if t < size:
        v0, v1, v2 = vectors[t, 0], vectors[t, 1], vectors[t, 2]
        ok = accept == 0 or dominates(v0, v1, v2, c0, c1, c2)
    if tid == 0:
        sh_count[0] = 0
    for start in range(0, count, THREADS):  # the archive, one tile at a time
        a = start + tid
        if a < count:
            sh[tid, 0], sh[tid, 1], sh[tid, 2] = members[a, 0], members[a, 1], members[a, 2]
        cuda.syncthreads()
        if ok:
            for q in range(min(THREADS, count - start)):
                if weakly_dominates(sh[q, 0], sh[q, 1], sh[q, 2], v0, v1, v2):
                    ok = False
                    break
        cuda.syncthreads()
    sh[tid, 0], sh[tid, 1], sh[tid, 2] = v0, v1, v2
    sh_ok[tid] = 1 if ok else 0
    cuda.syncthreads()
    if ok:
        for q in range(THREADS):
            if sh_ok[q] == 1 and q != tid and beats(sh[q, 0], sh[q, 1], sh[q, 2], q, v0, v1, v2, tid):
                ok = False
                break
    if t < size:
        flags[t] = 1 if ok else 0
    if ok:
        cuda.atomic.add(sh_count, 0, 1)
    cuda.syncthreads()
    if tid == 0:
        block_counts[cuda.blockIdx.x] = sh_count[0]


@cuda.jit(device=True, inline=True)
def block_exclusive_scan(values, tid, width):
    """In-place exclusive prefix sum of values[0:width] (shared memory, Hillis-Steele); returns the
    total. Every thread of the block calls it."""
    cuda.syncthreads()
    mine = values[tid] if tid < width else 0
    step = 1
    while step < width:
        add = values[tid - step] if tid < width and tid >= step else 0
        cuda.syncthreads()
        if tid < width:
            values[tid] += add
        cuda.syncthreads()
        step *= 2
    total = values[width - 1]
    cuda.syncthreads()
    if tid < width:
        values[tid] -= mine
    cuda.syncthreads()
    return total


@cuda.jit
def scan_kernel(block_counts, blocks, offsets):
    """offsets[b] = survivors of blocks before b; offsets[blocks] = all of them."""
    sh = cuda.shared.array(MERGE_THREADS, np.int64)
    tid = cuda.threadIdx.x
    base = np.int64(0)
    for start in range(0, blocks, MERGE_THREADS):
        width = min(MERGE_THREADS, blocks - start)
        if tid < width:
            sh[tid] = block_counts[start + tid]
        total = block_exclusive_scan(sh, tid, width)
        if tid < width:
            offsets[start + tid] = base + sh[tid]
        base += total
        cuda.syncthreads()
    if tid == 0:
        offsets[blocks] = base


@cuda.jit
def scatter_kernel(flags, size, offsets, survivors):
    sh = cuda.shared.array(THREADS, np.int64)
    tid = cuda.threadIdx.x
    t = cuda.blockIdx.x * THREADS + tid
    keep = t < size and flags[t] == 1
    sh[tid] = 1 if keep else 0
    block_exclusive_scan(sh, tid, THREADS)
    if keep:
        survivors[offsets[cuda.blockIdx.x] + sh[tid]] = t


@cuda.jit
def merge_kernel(vectors, survivors, offsets, blocks, members, count, out_members, message, cap, size):
    """One block. message: [left count, entrant count, left positions (cap), entrant moves (size),
    entrant vectors (3 size)]."""
    sh = cuda.shared.array((MERGE_THREADS, 3), np.int64)
    scan = cuda.shared.array(MERGE_THREADS, np.int64)
    tid = cuda.threadIdx.x
    total = offsets[blocks]
    moves_at = 2 + cap
    vectors_at = 2 + cap + size
    # members that stay, in order; a member leaves if a survivor strictly dominates it
    kept = np.int64(0)
    for start in range(0, count, MERGE_THREADS):
        a = start + tid
        stays = a < count
        if stays:
            m0, m1, m2 = members[a, 0], members[a, 1], members[a, 2]
            for s in range(total):
                u = survivors[s]
                if dominates(vectors[u, 0], vectors[u, 1], vectors[u, 2], m0, m1, m2):
                    stays = False
                    break
        width = min(MERGE_THREADS, count - start)
        scan[tid] = 1 if stays else 0
        n_kept = block_exclusive_scan(scan, tid, width)
        if a < count:
            if stays:
                dst = kept + scan[tid]
                out_members[dst, 0], out_members[dst, 1], out_members[dst, 2] = m0, m1, m2
            else:
                message[2 + (start - kept) + (tid - scan[tid])] = a
        kept += n_kept
        cuda.syncthreads()
    # survivors that no other survivor beats enter, in move order
    entered = np.int64(0)
    for start in range(0, total, MERGE_THREADS):
        p = start + tid
        enters = p < total
        u = survivors[p] if enters else 0
        p0 = p1 = p2 = np.int64(0)
        if enters:
            p0, p1, p2 = vectors[u, 0], vectors[u, 1], vectors[u, 2]
        for tile in range(0, total, MERGE_THREADS):
            q = tile + tid
            if q < total:
                w = survivors[q]
                sh[tid, 0], sh[tid, 1], sh[tid, 2] = vectors[w, 0], vectors[w, 1], vectors[w, 2]
            cuda.syncthreads()
            if enters:
                for r in range(min(MERGE_THREADS, total - tile)):
                    if tile + r != p and beats(sh[r, 0], sh[r, 1], sh[r, 2], tile + r, p0, p1, p2, p):
                        enters = False
                        break
            cuda.syncthreads()
        width = min(MERGE_THREADS, total - start)
        scan[tid] = 1 if enters else 0
        n_in = block_exclusive_scan(scan, tid, width)
        if enters:
            e = entered + scan[tid]
            dst = kept + e
            out_members[dst, 0], out_members[dst, 1], out_members[dst, 2] = p0, p1, p2
            message[moves_at + e] = u
            message[vectors_at + 3 * e] = p0
            message[vectors_at + 3 * e + 1] = p1
            message[vectors_at + 3 * e + 2] = p2
        entered += n_in
        cuda.syncthreads()
    if tid == 0:
        message[0] = count - kept
        message[1] = entered


class DeviceArchive:
    """The archive's vectors in device memory, double-buffered, and the launches of one update.
    Survivor ranks compare in survivor order, which is move order, so ties resolve as on the host."""

    def __init__(self, size):
        self.size = size
        self.blocks = -(-size // THREADS)
        self.flags = cuda.device_array(size, np.int32)
        self.block_counts = cuda.device_array(self.blocks, np.int64)
        self.offsets = cuda.device_array(self.blocks + 1, np.int64)
        self.survivors = cuda.device_array(size, np.int64)
        self.cap = 0
        self.count = 0

    def start(self, vectors):
        vectors = np.ascontiguousarray(vectors, dtype=np.int64)
        self._ensure(vectors.shape[0])
        self.members[:vectors.shape[0]].copy_to_device(vectors)
        self.count = vectors.shape[0]

    def _ensure(self, count):
        """Room for every member plus a whole neighbourhood of entrants."""
        if count + self.size > self.cap:
            old = self.members[:self.count].copy_to_host() if self.cap else None
            self.cap = 2 * (count + self.size)
            self.members = cuda.device_array((self.cap, 3), np.int64)
            self.spare = cuda.device_array((self.cap, 3), np.int64)
            self.message = cuda.mapped_array(2 + self.cap + 4 * self.size, np.int64)
            if old is not None:
                self.members[:old.shape[0]].copy_to_device(old)

    def update(self, vectors_d, accept, current):
        """Insert the neighbourhood's vectors (device, [size, 3]); returns (left mask, entrant moves,
        entrant vectors) as lsbench.search.archive.insert_batch would."""
        self._ensure(self.count)
        c0, c1, c2 = (int(v) for v in current)
        candidates_kernel[self.blocks, THREADS](vectors_d, self.size, c0, c1, c2, accept, self.members, self.count,
                                                self.flags, self.block_counts)
        scan_kernel[1, MERGE_THREADS](self.block_counts, self.blocks, self.offsets)
        scatter_kernel[self.blocks, THREADS](self.flags, self.size, self.offsets, self.survivors)
        merge_kernel[1, MERGE_THREADS](vectors_d, self.survivors, self.offsets, self.blocks, self.members, self.count,
                                       self.spare, self.message, self.cap, self.size)
        wait_for()
        msg = self.message
        n_left, n_in = int(msg[0]), int(msg[1])
        left = np.zeros(self.count, dtype=bool)
        left[msg[2:2 + n_left]] = True
        at = 2 + self.cap
        entered = np.array(msg[at:at + n_in])
        at += self.size
        vectors = np.array(msg[at:at + 3 * n_in]).reshape(n_in, 3)
        self.members, self.spare = self.spare, self.members
        self.count = self.count - n_left + n_in
        return left, entered, vectors
