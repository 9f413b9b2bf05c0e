"""Iterated greedy for the permutation flow shop makespan (Ruiz & Stützle, EJOR 177, 2007): IG_RS_LS.

Start: NEH (jobs by non-increasing total processing time, each inserted at its best place), then
the local search. Each iteration takes d random jobs out of the current sequence (destruction),
puts them back one by one at their best places (construction, Taillard's acceleration:
lsbench.problems.pfsp.best_insertion), runs the local search (every job, in a fresh random order
each pass, removed and re-inserted at its best place while that lowers the makespan; passes repeat
while one improves) and accepts the result if it is not worse, else with probability exp(-delta/T),
T = Tp * sum(p) / (n m 10) (their constant temperature; Tp = 0.4, d = 4 are their tuned values).
Places tie to the lowest position; the acceptance compares a 53-bit draw of the search's
SplitMix64 stream with floor(exp(-delta/T) 2^53) from one table (`acceptance_table`), so the CPU
build and the GPU kernel (gpu/engine/iterated_greedy.py, one warp per search) give the same searches for
the same seeds. K searches run side by side: on one core, on all cores, or on the GPU; the run's
clock and target are theirs together (a time-to-target run ends at the first search that hits).
"""
import math
import time

import numba
import numpy as np
from numba import njit, prange

from .. import rng
from ..errors import LsbenchError
from ..interfaces import Engine, SearchResult, Stop
from ..params import Param, Rule
from ..problems.base import serial_and_parallel
from ..problems.pfsp import best_insertion, insert_at, remove_at
from ..threads import use_threads
from ..search.chunk_loop import NO_TARGET, ChunkedSearches, ChunkRead, run_chunks
from ..search.common import ChunkLength, ImprovementLog
from ..search.restarts import EliteRestarts

# per-search state words
IT, CUR, BEST, EVALS, NIMP, READY = range(6)
STATE_WORDS = 6
CHUNK_CAP = 4096  # iterations per chunk: the improvement buffers' rows


@njit(cache=True)
def neh(pt):
    """NEH's sequence and makespan: jobs by non-increasing total time (ties: lower job first), each
    inserted at its best place."""
    n, m = pt.shape
    order = np.argsort(-pt.sum(axis=1), kind="mergesort")
    seq = np.empty(n, dtype=np.int64)
    e = np.empty((n + 1, m), dtype=np.int64)
    q = np.empty((n + 1, m), dtype=np.int64)
    seq[0] = order[0]
    c = np.int64(pt[order[0]].sum())
    for r in range(1, n):
        p, c = best_insertion(pt, seq, r, order[r], e, q)
        insert_at(seq, r, p, order[r])
    return seq, c


def acceptance_table(pt, tp):
    """thr[delta] = floor(exp(-delta / T) 2^53) for delta >= 1 until it reaches 0 (thr[0] unused):
    a worse sequence is accepted when a 53-bit draw is below thr[delta]."""
    n, m = pt.shape
    temperature = tp * float(pt.sum()) / (n * m * 10)
    thr = [0]
    while temperature > 0 and len(thr) < 1 << 20:
        v = int(math.floor(math.exp(-len(thr) / temperature) * 2.0 ** 53))
        if v == 0:
            break
        thr.append(v)
    return np.array(thr + [0], dtype=np.int64), temperature


@njit(cache=True)
def local_search(pt, seq, cur, state, e, q, order):
    """Ruiz & Stützle's iterative improvement by insertion; returns (makespan, places evaluated)."""
    n = seq.shape[0]
    evals = 0
    improve = True
    while improve:
        improve = False
        for t in range(n):
            order[t] = t
        for t in range(n - 1, 0, -1):  # rng.permutation's draws
            j = rng.below(state, t + 1)
            order[t], order[j] = order[j], order[t]
        for t in range(n):
            job = order[t]
            i = 0
            while seq[i] != job:
                i += 1
            remove_at(seq, n, i)
            p, c = best_insertion(pt, seq, n - 1, job, e, q)
            evals += n
            if c < cur:
                insert_at(seq, n - 1, p, job)
                cur = c
                improve = True
            else:
                insert_at(seq, n - 1, i, job)
    return cur, evals


@njit(cache=True)
def ig_iterations(pt, thr, d, seq, best_seq, st, state, n_iter, target, imp_it, imp_obj):
    """One search's next `n_iter` iterations (the start's local search first, if not done), from
    and into its sequence, best, state words `st` and stream; improvements of the best go to
    imp_it/imp_obj rows st[NIMP] on (st[NIMP] restarts at 0 each call)."""
    n, m = pt.shape
    e = np.empty((n + 1, m), dtype=np.int64)
    q = np.empty((n + 1, m), dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    work = np.empty(n, dtype=np.int64)
    removed = np.empty(d, dtype=np.int64)
    st[NIMP] = 0
    if st[READY] == 0:
        cur, ev = local_search(pt, seq, st[CUR], state, e, q, order)
        st[CUR], st[EVALS], st[READY] = cur, st[EVALS] + ev, 1
        if cur < st[BEST]:
            st[BEST] = cur
            best_seq[:] = seq
    for _ in range(n_iter):
        if st[BEST] <= target:
            break
        st[IT] += 1
        work[:] = seq
        length = n
        for r in range(d):
            removed[r] = remove_at(work, length, rng.below(state, length))
            length -= 1
        c = np.int64(0)
        for r in range(d):
            p, c = best_insertion(pt, work, length, removed[r], e, q)
            st[EVALS] += length + 1
            insert_at(work, length, p, removed[r])
            length += 1
        c, ev = local_search(pt, work, c, state, e, q, order)
        st[EVALS] += ev
        delta = c - st[CUR]
        accept = delta <= 0
        if not accept:
            draw = np.int64(rng.next_u64(state) >> np.uint64(11))
            accept = delta < thr.shape[0] and draw < thr[delta]
        if accept:
            seq[:] = work
            st[CUR] = c
            if c < st[BEST]:
                st[BEST] = c
                best_seq[:] = work
                imp_it[st[NIMP]] = st[IT]
                imp_obj[st[NIMP]] = c
                st[NIMP] += 1


def _ig_batch(pt, thr, d, seqs, best_seqs, sts, states, n_iter, target, imp_it, imp_obj):
    """ig_iterations for every search (rows); imp_it/imp_obj are [row, search]."""
    for k in prange(seqs.shape[0]):
        ig_iterations(pt, thr, d, seqs[k], best_seqs[k], sts[k], states[k:k + 1], n_iter, target,
                      imp_it[:, k], imp_obj[:, k])


ig_batch, ig_batch_parallel = serial_and_parallel(_ig_batch)


class IteratedGreedy:
    """IG_RS_LS's parameters; an engine (IteratedGreedyEngine and its GPU twin) runs the searches."""

    name = "ig"
    problems = ("pfsp",)
    rules = (
        Rule(lambda v, run: v.get("objective", "makespan") != "makespan",
             "--algorithm ig: the iterated greedy minimises the makespan, not {objective}"),
        Rule(lambda v, run: run.neighbourhood != "insertion",
             "--neighbourhood: the iterated greedy re-inserts jobs (insertion)"),
        Rule(lambda v, run: run.stop.evaluations is not None, "--evaluations: the iterated greedy stops on "
             "--iterations, --seconds or --target (its evaluations per iteration vary)"),
    )
    parameters = (
        Param("destruction", int, "d: jobs taken out and re-inserted each iteration", default=4, low=1),
        Param("temperature", float, "Tp: the acceptance temperature is Tp * sum(p) / (n m 10)", default=0.4,
              low=0.0),
        Param("restart", int, "a search whose best has not improved for this many iterations continues from one "
              "of the elite (0: never; then the searches are independent)", default=0, low=0),
        Param("elite", int, "restart: the number of best distinct sequences of all searches it draws from",
              default=4, low=1),
    )

    def __init__(self, destruction=4, temperature=0.4, restart=0, elite=4):
        self.destruction, self.temperature = int(destruction), float(temperature)
        self.restart, self.elite = int(restart), int(elite)

    def params(self, problem):
        if self.destruction >= problem.n:
            raise LsbenchError(f"--param destruction: must be below the number of jobs ({problem.n}), "
                               f"got {self.destruction}")
        thr, temperature = acceptance_table(problem.pt, self.temperature)
        return {"destruction": self.destruction, "temperature": self.temperature, "T": round(temperature, 6),
                "restart": self.restart, "elite": self.elite, "thresholds": thr}


class IteratedGreedyChunks(ChunkedSearches):
    """Iterated greedy's side of the host loop (lsbench/search/chunk_loop.py): a chunk is the
    engine's `chunk` (compiled on the CPU, a kernel on the GPU); at a boundary the stagnant searches
    restart from the elite while none has reached the target."""

    def __init__(self, engine, policy, sts):
        self.engine, self.policy, self.sts = engine, policy, sts

    def run_chunk(self, first, n_iter, target, finished):
        self.sts, self.imp_it, self.imp_obj = self.engine.chunk(n_iter, target)
        return ChunkRead(self.sts[:, BEST].copy(), self.sts[:, IT].copy(), self.sts[:, NIMP].copy())

    def improvement_rows(self, rows):
        return self.imp_it[:rows], self.imp_obj[:rows]

    def improved(self, searches, iterations):
        if self.policy:
            self.policy.improved(searches, iterations)

    def after_chunk(self, it, best, finished, reached):
        if self.policy and not reached and self.policy.stagnant(it, finished).size:
            self.engine._restart(self.policy, it, self.sts, finished)
        return False


class IteratedGreedyEngine(Engine):
    """K iterated greedy searches side by side, in chunks of iterations between clock checks; a
    subclass runs the chunks (here: compiled, on one core or all cores; gpu/engine/iterated_greedy.py)."""

    name = "cpu"
    problems = ("pfsp",)
    several_searches = True
    parallel = False

    def __init__(self, problem, neighbourhood, search, params, threads=None):
        self.problem, self.prm = problem, search.params(problem)
        if self.parallel:
            use_threads(threads)
        self.count = 0
        self.restarts = 0

    # the chunk runner: overridden on the GPU
    def upload(self, seqs, states, sts):
        self.seqs, self.best_seqs, self.states, self.sts = seqs, seqs.copy(), states, sts

    def chunk(self, n_iter, target):
        """Runs n_iter iterations of every search; returns (state words, imp_it, imp_obj)."""
        rows = max(1, n_iter)
        imp_it = np.zeros((rows, len(self.sts)), dtype=np.int64)
        imp_obj = np.zeros((rows, len(self.sts)), dtype=np.int64)
        batch = ig_batch_parallel if self.parallel else ig_batch
        batch(self.problem.pt, self.prm["thresholds"], self.prm["destruction"], self.seqs, self.best_seqs, self.sts,
              self.states, n_iter, target, imp_it, imp_obj)
        return self.sts, imp_it, imp_obj

    def download(self):
        """(best sequences, current sequences) of every search."""
        return self.best_seqs, self.seqs

    def run(self, seeds, stop, progress=None):
        pr, K = self.problem, len(seeds)
        self.count = K
        start, cost = neh(pr.pt)
        sts = np.zeros((K, STATE_WORDS), dtype=np.int64)
        sts[:, CUR] = sts[:, BEST] = cost
        self.upload(np.tile(start, (K, 1)), np.array([rng.new_state(s)[0] for s in seeds], dtype=np.uint64), sts)
        target = np.int64(stop.target) if stop.target is not None else NO_TARGET
        started = time.perf_counter()
        sts = self.chunk(0, target)[0].copy()  # the start's local search, whatever the budget: iteration 0
        log = ImprovementLog([cost] * K)
        gained = np.flatnonzero(sts[:, BEST] < cost)
        log.add(gained, np.zeros(gained.size, dtype=np.int64), sts[gained, BEST], time.perf_counter() - started)
        policy = EliteRestarts(pr.n, K, self.prm["restart"], self.prm["elite"], 0.0, seeds[0]) \
            if self.prm["restart"] else None
        # with restarts, fixed chunks: the restarts fall on the same iterations in every run
        chunks = ChunkLength(policy.check_every(CHUNK_CAP), CHUNK_CAP, grow=False) if policy else \
            ChunkLength(1, CHUNK_CAP)
        self.restarts = 0
        searches = IteratedGreedyChunks(self, policy, sts)
        out = run_chunks(searches, stop, 1, sts[:, BEST], chunks, stop.target, progress, joint=True, log=log,
                         started=started)
        sts = searches.sts
        best_seqs, seqs = self.download()
        trajectories = out.log.trajectories()
        prm = {k: v for k, v in self.prm.items() if k != "thresholds"}
        return [SearchResult(int(sts[k, BEST]), best_seqs[k].astype(np.int64), int(sts[k, IT]), int(sts[k, EVALS]),
                             trajectories[k], dict(prm), int(sts[k, CUR]), seed) for k, seed in enumerate(seeds)]

    def _restart(self, policy, it, sts, finished):
        """The stagnant searches continue from elite sequences (lsbench.search.restarts), each
        keeping its own best."""
        best_seqs, seqs = self.download()
        starts = policy.restarts(it, sts[:, BEST], best_seqs, finished)
        for q, start in starts:
            seqs[q] = start
            sts[q, CUR] = self.problem.objective(start)
        self.restarts += len(starts)
        self.resume(seqs, sts)

    def resume(self, seqs, sts):
        """Continue from these current sequences and state words (the CPU's are the arrays themselves)."""
        self.seqs, self.sts = seqs, sts

    def warm_up(self, seeds, iterations):
        """Compiles the chunk code: two untimed iterations of the searches' shape."""
        self.run(seeds, Stop(iterations=2))

    def describe(self):
        return {"backend": self.name, "threads": numba.get_num_threads() if self.parallel else 1,
                "searches": self.count, "restarts": self.restarts}


class ParallelIteratedGreedyEngine(IteratedGreedyEngine):
    """The K searches over all cores (one search per core at a time), the same results."""

    name = "cpu-parallel"
    parallel = True
