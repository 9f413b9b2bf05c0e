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
from ..interfaces import WARMUP_SECONDS, Engine, SearchResult, Stop
from ..params import Param, Rule
from ..problems.base import serial_and_parallel
from ..problems.pfsp import best_insertion, insert_at, remove_at, schedule_objectives
from ..threads import use_threads
from ..search.chunk_loop import NO_TARGET, ChunkedSearches, ChunkRead, run_chunks
from ..search.common import ChunkLength, ImprovementLog
from ..search.restarts import EliteRestarts

# per-search state words (the GPU kernel's too)
IT, CUR, BEST, EVALS, NIMP, READY = range(6)
# and where the CPU's calls of a chunk leave a search: iterations of the chunk left, phase, and its
# local search's next job in the pass, whether the pass improved, makespan
LEFT, PHASE, LS_T, LS_IMPROVED, LS_CUR = range(6, 11)
STATE_WORDS = 11
BETWEEN, START_SEARCH, ITERATION_SEARCH = range(3)  # phases: between iterations, in a local search
CHUNK_CAP = 4096  # iterations per chunk: the improvement buffers' rows
SLICE_CELLS = 100_000_000  # schedule cells (jobs x machines) a core evaluates in one call: Ctrl-C and the
# time budget are answered between calls (rnd-pfsp-5000x500-1: a local search pass is 1.25e10)


@njit(cache=True)
def neh_steps(pt, order, seq, first, last, e, q):
    """Jobs order[first:last] inserted at their best places in seq[:first]; the makespan after."""
    c = np.int64(0)
    for r in range(first, last):
        p, c = best_insertion(pt, seq, r, order[r], e, q)
        insert_at(seq, r, p, order[r])
    return c


def neh(pt, deadline=None):
    """NEH's sequence and makespan: jobs by non-increasing total time (ties: lower job first), each
    inserted at its best place (in calls of about SLICE_CELLS schedule cells). Past `deadline`
    (time.perf_counter()) the jobs left go at the end. Returns (sequence, makespan, cut short)."""
    n, m = pt.shape
    order = np.argsort(-pt.sum(axis=1), kind="mergesort")
    seq = np.empty(n, dtype=np.int64)
    e = np.empty((n + 1, m), dtype=np.int64)
    q = np.empty((n + 1, m), dtype=np.int64)
    seq[0] = order[0]
    c, r = np.int64(pt[order[0]].sum()), 1
    while r < n:
        if deadline is not None and time.perf_counter() >= deadline:
            seq[r:] = order[r:]
            return seq, int(schedule_objectives(pt, np.zeros(n, dtype=np.int64), seq)[0]), True
        last, cells = r, 0
        while last < n and cells < SLICE_CELLS:  # (inserting job r evaluates r + 1 places of m cells)
            cells += (last + 1) * m
            last += 1
        c = neh_steps(pt, order, seq, r, last, e, q)
        r = last
    return seq, int(c), False


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
def local_search_steps(pt, seq, st, state, e, q, order, budget):
    """Ruiz & Stützle's iterative improvement by insertion on `seq`, from where the search's state
    words st[LS_*] left it, until it ends (True) or has evaluated `budget` schedule cells (False):
    every job, in a fresh random order each pass, removed and re-inserted at its best place while
    that lowers the makespan; passes repeat while one improves. Returns (cells, ended)."""
    n, m = pt.shape
    used = 0
    while True:
        if st[LS_T] == n:  # a pass ends (or the first begins)
            if st[LS_IMPROVED] == 0:
                return used, True
            st[LS_IMPROVED], st[LS_T] = 0, 0
            for t in range(n):
                order[t] = t
            for t in range(n - 1, 0, -1):  # rng.permutation's draws
                j = rng.below(state, t + 1)
                order[t], order[j] = order[j], order[t]
        if used >= budget:
            return used, False
        job = order[st[LS_T]]
        i = 0
        while seq[i] != job:
            i += 1
        remove_at(seq, n, i)
        p, c = best_insertion(pt, seq, n - 1, job, e, q)
        st[EVALS] += n
        used += n * m
        if c < st[LS_CUR]:
            insert_at(seq, n - 1, p, job)
            st[LS_CUR], st[LS_IMPROVED] = c, 1
        else:
            insert_at(seq, n - 1, i, job)
        st[LS_T] += 1


@njit(cache=True)
def begin_local_search(st, cur, phase, n):
    """The search's state words at the start of a local search from makespan `cur`."""
    st[PHASE], st[LS_T], st[LS_IMPROVED], st[LS_CUR] = phase, n, 1, cur


@njit(cache=True)
def ig_steps(pt, thr, d, seq, best_seq, work, order, st, state, target, imp_it, imp_obj, budget):
    """One search's iterations left in the chunk (st[LEFT]; the start's local search first, if not
    done), from where its last call left it, until they are done or it has evaluated about `budget`
    schedule cells; from and into its sequence, best, working sequence, local-search order, state
    words and stream; improvements of the best go to imp_it/imp_obj rows st[NIMP] on."""
    n, m = pt.shape
    e = np.empty((n + 1, m), dtype=np.int64)
    q = np.empty((n + 1, m), dtype=np.int64)
    removed = np.empty(d, dtype=np.int64)
    used = 0
    if st[READY] == 0:
        if st[PHASE] == BETWEEN:
            begin_local_search(st, st[CUR], START_SEARCH, n)
        cells, ended = local_search_steps(pt, seq, st, state, e, q, order, budget)
        used += cells
        if not ended:
            return
        st[CUR], st[READY], st[PHASE] = st[LS_CUR], 1, BETWEEN
        if st[CUR] < st[BEST]:
            st[BEST] = st[CUR]
            best_seq[:] = seq
    while st[LEFT] > 0:
        if st[PHASE] == BETWEEN:
            if st[BEST] <= target:
                st[LEFT] = 0
                return
            if used >= budget:
                return
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
            used += d * n * m
            begin_local_search(st, c, ITERATION_SEARCH, n)
        cells, ended = local_search_steps(pt, work, st, state, e, q, order, budget - used)
        used += cells
        if not ended:
            return
        accept_or_not(thr, seq, best_seq, work, st, state, imp_it, imp_obj)


@njit(cache=True)
def accept_or_not(thr, seq, best_seq, work, st, state, imp_it, imp_obj):
    """An iteration's end: its sequence replaces the current one if not worse, else with
    probability exp(-delta/T) (a 53-bit draw below thr[delta]); a new best is recorded."""
    c = st[LS_CUR]
    st[PHASE] = BETWEEN
    st[LEFT] -= 1
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


def _ig_batch(pt, thr, d, searches, target, imp_it, imp_obj, budget):
    """ig_steps for every search (rows of `searches`: sequences, bests, working sequences, orders,
    state words, streams); imp_it/imp_obj are [row, search]."""
    seqs, best_seqs, works, orders, sts, states = searches
    for k in prange(seqs.shape[0]):
        ig_steps(pt, thr, d, seqs[k], best_seqs[k], works[k], orders[k], sts[k], states[k:k + 1], target,
                 imp_it[:, k], imp_obj[:, k], budget)


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
        self.deadline, self.start_cut = None, False

    # the chunk runner: overridden on the GPU
    def upload(self, seqs, states, sts):
        self.seqs, self.best_seqs, self.states, self.sts = seqs, seqs.copy(), states, sts
        self.works, self.orders = np.empty_like(seqs), np.empty_like(seqs)

    def chunk(self, n_iter, target):
        """Runs n_iter iterations of every search, in calls of about SLICE_CELLS schedule cells a
        core; returns (state words, imp_it, imp_obj). At the deadline a chunk stops: its iterations
        do not count (the searches are as before it), and a start's local search keeps what it
        reached."""
        rows, pt = max(1, n_iter), self.problem.pt
        imp_it = np.zeros((rows, len(self.sts)), dtype=np.int64)
        imp_obj = np.zeros((rows, len(self.sts)), dtype=np.int64)
        batch = ig_batch_parallel if self.parallel else ig_batch
        budget = max(1, SLICE_CELLS * (numba.get_num_threads() if self.parallel else 1) // len(self.sts))
        searches = (self.seqs, self.best_seqs, self.works, self.orders, self.sts, self.states)
        before = [a.copy() for a in searches] if self.deadline is not None else None
        self.sts[:, NIMP], self.sts[:, LEFT] = 0, n_iter
        while ((self.sts[:, READY] == 0) | (self.sts[:, LEFT] > 0)).any():
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                self._stop_at_deadline(searches, before)
                break
            batch(pt, self.prm["thresholds"], self.prm["destruction"], searches, target, imp_it, imp_obj, budget)
        return self.sts, imp_it, imp_obj

    def _stop_at_deadline(self, searches, before):
        """The chunk's iterations undone; a start's local search cut where it is (its sequence is
        that makespan's)."""
        if (self.sts[:, READY] == 0).any():  # the start's local searches
            self.start_cut = True
            cut = self.sts[:, PHASE] == START_SEARCH
            self.sts[cut, CUR] = self.sts[cut, LS_CUR]
            better = self.sts[:, CUR] < self.sts[:, BEST]
            self.best_seqs[better] = self.seqs[better]
            self.sts[better, BEST] = self.sts[better, CUR]
        else:
            for now, then in zip(searches, before):
                now[:] = then
            self.sts[:, NIMP] = 0
        self.sts[:, LEFT], self.sts[:, PHASE] = 0, BETWEEN

    def download(self):
        """(best sequences, current sequences) of every search."""
        return self.best_seqs, self.seqs

    def run(self, seeds, stop, progress=None):
        pr, K = self.problem, len(seeds)
        self.count = K
        started = time.perf_counter()
        self.deadline = None if stop.seconds is None else started + stop.seconds
        start, cost, self.start_cut = neh(pr.pt, self.deadline)
        sts = np.zeros((K, STATE_WORDS), dtype=np.int64)
        sts[:, CUR] = sts[:, BEST] = cost
        self.upload(np.tile(start, (K, 1)), np.array([rng.new_state(s)[0] for s in seeds], dtype=np.uint64), sts)
        target = np.int64(stop.target) if stop.target is not None else NO_TARGET
        sts = self.chunk(0, target)[0].copy()  # the start's local search (iteration 0), until the deadline
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
        if self.start_cut:
            prm["first_searches_cut"] = True
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
        """Compiles the chunk code: two untimed iterations of the searches' shape (WARMUP_SECONDS at most)."""
        self.run(seeds, Stop(iterations=2, seconds=WARMUP_SECONDS))

    def describe(self):
        return {"backend": self.name, "threads": numba.get_num_threads() if self.parallel else 1,
                "searches": self.count, "restarts": self.restarts}


class ParallelIteratedGreedyEngine(IteratedGreedyEngine):
    """The K searches over all cores (one search per core at a time), the same results."""

    name = "cpu-parallel"
    parallel = True
