"""The flow-shop insertion adapter of the resident local search engine (gpu/engine/local_search.py):
hill climbing (and tabu search) moving one job to another position, under any of the problem's
objectives (makespan, total flow time, the weighted three), each move's schedule built in O(nm) by
`append_job`, the CPU's own definition.

Tabu attribute (lsbench.problems.pfsp.insertion_tabu_*): expiry[a, b] per search forbids job a
before job b; a move is tabu when the moved job would pass a job it may not.
"""
import numpy as np
from numba import config, cuda, int64

from lsbench.neighborhoods import insertion_count
from lsbench.problems import pfsp

from .. import device as dv
from ..move_costs.pfsp import LOCAL_MACHINES, append_job
from .numbered_moves import expiry_matrices, make_scan

score = dv.twin(pfsp._score)
record_insertion = dv.twin(pfsp.insertion_tabu_record)
perform_insertion = dv.twin(pfsp.perform_insertion)


@cuda.jit(device=True, inline=True)
def job_at(seq, i, k, t):
    """The job at position t once the job at position i has moved to position k."""
    if t == k:
        return seq[i]
    if i < k and i <= t < k:
        return seq[t + 1]
    if k < i and k < t <= i:
        return seq[t - 1]
    return seq[t]


@cuda.jit(device=True)
def sequence_score(data, seq, i, k):
    """The objective of seq after moving position i to k (i == k: seq itself)."""
    PT, DUE, W, objective, ROWS = data
    if PT.shape[1] <= LOCAL_MACHINES:
        c = cuda.local.array(LOCAL_MACHINES, int64)
    else:
        c = ROWS[cuda.grid(1)]  # (one a resident thread)
    for j in range(PT.shape[1]):
        c[j] = 0
    flow = int64(0)
    tard = int64(0)
    late = int64(0)
    for t in range(seq.shape[0]):
        flow, tard, late = append_job(PT, DUE, c, job_at(seq, i, k, t), flow, tard, late)
    return score(objective, c[PT.shape[1] - 1], flow, tard, late, W)


@cuda.jit(device=True)
def load(data, SOL, MEM, s, sh, tid, T):
    """The sequence's objective, from thread 0 (the others add nothing)."""
    return sequence_score(data, SOL[s], 0, 0) if tid == 0 else int64(0)


@cuda.jit(device=True)
def moves(data, SOL):
    n = SOL.shape[1]
    return n * (n - 1)


@cuda.jit(device=True)
def move_delta(data, SOL, MEM, s, sh, k, current, work):
    i, to = dv.index_to_insertion(k, SOL.shape[1])
    return sequence_score(data, SOL[s], i, to) - current


@cuda.jit(device=True)
def is_tabu(data, SOL, MEM, s, k, it):
    """lsbench.problems.pfsp.insertion_tabu_flags for one move."""
    i, to = dv.index_to_insertion(k, SOL.shape[1])
    x = SOL[s, i]
    for t in range(to, i):  # x jumps before the jobs at to .. i-1
        if MEM[s, x, SOL[s, t]] >= it:
            return True
    for t in range(i + 1, to + 1):  # x jumps after the jobs at i+1 .. to
        if MEM[s, SOL[s, t], x] >= it:
            return True
    return False


@cuda.jit(device=True)
def record(data, SOL, MEM, s, move, it, until):
    i, to = dv.index_to_insertion(move, SOL.shape[1])
    record_insertion(SOL[s], i, to, MEM[s], until)


@cuda.jit(device=True)
def apply(data, SOL, MEM, s, sh, move, tid, T):
    if tid == 0:
        i, to = dv.index_to_insertion(move, SOL.shape[1])
        perform_insertion(SOL[s], i, to)
    cuda.syncthreads()


def resident_threads():
    """Threads the GPU runs at once (a persistent grid has no more)."""
    if config.ENABLE_CUDASIM:
        return 1 << 12
    dev = cuda.get_current_device()
    return dev.MULTIPROCESSOR_COUNT * dev.MAX_THREADS_PER_MULTIPROCESSOR


class PfspInsertionAdapter:
    """Host side: processing times, due dates and weights on the device (beyond LOCAL_MACHINES
    machines, a row of completion times for every thread the GPU runs at once), an n x n expiry
    matrix a search."""

    compile_key = None
    shared_bytes = 0

    def __init__(self, problem, nb):
        self.n = problem.n
        self.moves = insertion_count(self.n)
        # due dates read from Liefooghe's files are a column of the file's rows: not contiguous
        self.data = (cuda.to_device(problem.pt), cuda.to_device(np.ascontiguousarray(problem.due)),
                     cuda.to_device(problem.weights), np.int64(problem.objective_code),
                     cuda.device_array((resident_threads(), problem.m) if problem.m > LOCAL_MACHINES else (1, 1),
                                       np.int64))

    def memory(self, K, tenure_max):
        return expiry_matrices(K, self.n)

    def device_functions(self):
        return load, make_scan(moves, move_delta, is_tabu), record, apply, dv.fill_permutation
