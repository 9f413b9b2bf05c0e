"""Permutation flow shop: n jobs through m machines in the same order; minimise a schedule cost.

Objectives: makespan (Cmax), total flow time (sum of completion times), and the three-objective
variant of Luong et al. (EvoCOP 2011): (Cmax, total tardiness, number of late jobs), aggregated
for single-objective searches by integer weights. Neighbourhoods: insertion (remove the job at
position i, reinsert it so that it ends at position k) with Taillard's heads/tails acceleration
for Cmax (all n-1 insertions of one job in O(nm)), and swap of two positions.
Processing times are stored job-major, pt[job, machine].
"""
import os

import numpy as np
from numba import njit, prange

from .. import rng
from ..errors import InstanceFormatError, LsbenchError
from ..params import Param
from ..neighborhoods import index_to_insertion, insertion_count, pair_count
from .permutation import PositionSwapMoves
from .base import serial_and_parallel, Neighbourhood, Problem, check_bound, check_permutation, read_numbers, sha256_of

MAKESPAN, FLOWTIME, THREE = 0, 1, 2
OBJECTIVES = {"makespan": MAKESPAN, "flowtime": FLOWTIME, "three": THREE}


# ---------------------------------------------------------------------------------------------
# Taillard's generator (E. Taillard, "Benchmarks for basic scheduling problems", EJOR 1993)
# ---------------------------------------------------------------------------------------------
def taillard_unif(seed, low, high):
    """One draw of Taillard's portable Lehmer generator; returns (value, new seed)."""
    m, a, b, c = 2147483647, 16807, 127773, 2836
    k = seed // b
    seed = a * (seed % b) - k * c
    if seed < 0:
        seed += m
    return low + int((seed / m) * (high - low + 1)), seed


def taillard_times(n, m, time_seed):
    """Processing times [machine, job], drawn machine by machine, p = U[1, 99]."""
    out = np.empty((m, n), dtype=np.int64)
    seed = time_seed
    for i in range(m):
        for j in range(n):
            out[i, j], seed = taillard_unif(seed, 1, 99)
    return out, seed


def due_dates(pt, seed):
    """Due dates for the three-objective variant: d_j = P_j + floor(u_j (LB - P_j)).

    P_j is job j's total processing time, LB the largest machine load (a makespan lower bound)
    and u_j continues Taillard's stream after the processing times. Liefooghe's original due-date
    files are not distributed with Taillard's benchmark; this rule is lsbench's and is stated
    in every run record through the instance name and generator.
    """
    total = pt.sum(axis=1)
    lb = int(pt.sum(axis=0).max())
    d = np.empty(pt.shape[0], dtype=np.int64)
    for j in range(pt.shape[0]):
        u, seed = taillard_unif(seed, 0, 999999)
        d[j] = total[j] + (u * (lb - total[j])) // 1000000
    return d


# ---------------------------------------------------------------------------------------------
# Objective evaluation (solution level, CPU)
# ---------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _score(objective, cmax, flow, tard, late, w):
    if objective == MAKESPAN:
        return cmax
    if objective == FLOWTIME:
        return flow
    return w[0] * cmax + w[1] * tard + w[2] * late


def append_job(pt, due, c, job, flow, tard, late):
    """Append `job` to a schedule whose last job ends at c[machine]: c moves on, and the flow
    time, tardiness and late-job count take in the new job's completion. Plain Python, compiled
    here for the CPU and in gpu/iteration/kernels.py for the GPU: one definition of the schedule."""
    m = pt.shape[1]
    c[0] += pt[job, 0]
    for j in range(1, m):
        c[j] = max(c[j], c[j - 1]) + pt[job, j]
    flow += c[m - 1]
    if c[m - 1] > due[job]:
        tard += c[m - 1] - due[job]
        late += 1
    return flow, tard, late


_append_job = njit(cache=True, inline="always")(append_job)


@njit(cache=True)
def schedule_objectives(pt, due, seq):
    """(Cmax, total flow time, total tardiness, late jobs) of a complete sequence."""
    c = np.zeros(pt.shape[1], dtype=np.int64)
    flow = 0
    tard = 0
    late = 0
    for k in range(seq.shape[0]):
        flow, tard, late = _append_job(pt, due, c, seq[k], flow, tard, late)
    return c[-1], flow, tard, late


@njit(cache=True)
def sequence_score(pt, due, seq, objective, w):
    cmax, flow, tard, late = schedule_objectives(pt, due, seq)
    return _score(objective, cmax, flow, tard, late, w)


@njit(cache=True, inline="always")
def _continue_schedule(pt, due, seq, start, c, flow, tard, late):
    """(Cmax, flow time, tardiness, late jobs) after finishing the schedule of seq[start:] from
    machine completion times c (copied)."""
    cc = c.copy()
    for k in range(start, seq.shape[0]):
        flow, tard, late = _append_job(pt, due, cc, seq[k], flow, tard, late)
    return cc[-1], flow, tard, late


@njit(cache=True, inline="always")
def _store_move(out, idx, cmax, flow, tard, late, objective, w, current):
    """A move's rating: its delta (out of width 1) or its objective vector (makespan, tardiness,
    late jobs; out of width 3, for Pareto searches)."""
    if out.shape[1] == 3:
        out[idx, 0] = cmax
        out[idx, 1] = tard
        out[idx, 2] = late
    else:
        out[idx, 0] = _score(objective, cmax, flow, tard, late, w) - current


@njit(cache=True)
def fill_heads_and_tails(pt, seq, length, e, q):
    """e[k, j]: completion of the first k jobs of seq[:length] on machine j (row 0 = zeros);
    q[k, j]: time from the start of job seq[k] on machine j to the end (row `length` = zeros);
    into buffers of at least length + 1 rows."""
    m = pt.shape[1]
    for j in range(m):
        e[0, j] = 0
        q[length, j] = 0
    for k in range(length):
        job = seq[k]
        e[k + 1, 0] = e[k, 0] + pt[job, 0]
        for j in range(1, m):
            e[k + 1, j] = max(e[k + 1, j - 1], e[k, j]) + pt[job, j]
    for k in range(length - 1, -1, -1):
        job = seq[k]
        q[k, m - 1] = q[k + 1, m - 1] + pt[job, m - 1]
        for j in range(m - 2, -1, -1):
            q[k, j] = max(q[k, j + 1], q[k + 1, j]) + pt[job, j]


@njit(cache=True)
def heads_and_tails(pt, seq):
    """fill_heads_and_tails of the whole sequence, in new tables."""
    L = seq.shape[0]
    e = np.empty((L + 1, pt.shape[1]), dtype=np.int64)
    q = np.empty((L + 1, pt.shape[1]), dtype=np.int64)
    fill_heads_and_tails(pt, seq, L, e, q)
    return e, q


@njit(cache=True)
def best_insertion(pt, seq, length, job, e, q):
    """(position, makespan) of the best place for `job` in the partial sequence seq[:length], the
    first (lowest) position among equals: Taillard's acceleration, heads e and tails q of
    seq[:length] (buffers of at least length + 1 rows) then all length + 1 places in O(length m).
    NEH and the iterated greedy insert with it; gpu/engine/iterated_greedy.py does the same per warp."""
    m = pt.shape[1]
    fill_heads_and_tails(pt, seq, length, e, q)
    best_c = np.int64(-1)
    best_p = 0
    for p in range(length + 1):
        f = np.int64(0)
        c = np.int64(0)
        for j in range(m):
            f = max(f, e[p, j]) + pt[job, j]
            c = max(c, f + q[p, j])
        if best_c < 0 or c < best_c:
            best_c, best_p = c, p
    return best_p, best_c


@njit(cache=True)
def insert_at(seq, length, p, job):
    """Put `job` at position p of seq[:length] (the jobs from p on move one place right)."""
    for t in range(length, p, -1):
        seq[t] = seq[t - 1]
    seq[p] = job


@njit(cache=True)
def remove_at(seq, length, i):
    """Take the job at position i out of seq[:length] (the jobs after it move one place left)."""
    job = seq[i]
    for t in range(i, length - 1):
        seq[t] = seq[t + 1]
    return job


# ---------------------------------------------------------------------------------------------
# Insertion neighbourhood
# ---------------------------------------------------------------------------------------------
ROW_CELLS = 50_000_000  # schedule cells a row of moves evaluated from scratch takes at most (about 0.1 s)


def row_blocks(n, m):
    """Rows each position's moves are split into where every move is scheduled from scratch (n m
    cells, n moves a position), so that a row takes at most about ROW_CELLS cells: Ctrl-C is
    answered between rows (rnd-pfsp-5000x500-1: 1.25e10 cells a position)."""
    return max(1, min(n, -(-n * n * m // ROW_CELLS)))


@njit(cache=True)
def block_of(b, blocks, lo, hi):
    """Block b of `blocks` about equal parts of [lo, hi)."""
    return lo + b * (hi - lo) // blocks, lo + (b + 1) * (hi - lo) // blocks


def _insertion_values(pt, due, seq, objective, w, current, lo, hi, out, blocks):
    """Delta (or objective vector, see _store_move) of the insertion moves (i -> k) of rows
    lo <= r < hi, row r being block r % blocks of the places k of position i = r // blocks
    (i-major like index_to_insertion), for the flow time and three-objective costs (the makespan
    alone has _insertion_makespan_deltas)."""
    n = seq.shape[0]
    m = pt.shape[1]
    for r in prange(lo, hi):
        i = r // blocks
        k_lo, k_hi = block_of(r % blocks, blocks, 0, n)
        job = seq[i]
        part = np.empty(n - 1, dtype=np.int64)
        for t in range(n - 1):
            part[t] = seq[t] if t < i else seq[t + 1]
        e, _q = heads_and_tails(pt, part)
        # prefix flow time, tardiness and late jobs of the first k jobs of part
        pflow = np.zeros(n, dtype=np.int64)
        ptard = np.zeros(n, dtype=np.int64)
        plate = np.zeros(n, dtype=np.int64)
        for t in range(n - 1):
            ct = e[t + 1, m - 1]
            jt = part[t]
            pflow[t + 1] = pflow[t] + ct
            ptard[t + 1] = ptard[t] + max(0, ct - due[jt])
            plate[t + 1] = plate[t] + (1 if ct > due[jt] else 0)
        for k in range(k_lo, k_hi):
            if k == i:
                continue
            idx = i * (n - 1) + (k if k < i else k - 1)
            cstart = e[k].copy()
            cstart[0] += pt[job, 0]
            for j in range(1, m):
                cstart[j] = max(cstart[j], cstart[j - 1]) + pt[job, j]
            cx = cstart[m - 1]
            fl = pflow[k] + cx
            ta = ptard[k] + max(0, cx - due[job])
            la = plate[k] + (1 if cx > due[job] else 0)
            cmax, fl, ta, la = _continue_schedule(pt, due, part, k, cstart, fl, ta, la)
            _store_move(out, idx, cmax, fl, ta, la, objective, w, current)


def _insertion_makespan_deltas(pt, due, seq, objective, w, current, lo, hi, out):
    """Makespan deltas of every insertion move (i -> k), lo <= i < hi, by Taillard's acceleration
    with the current sequence's heads e and tails q shared by every removed position i: without
    seq[i], the heads before position i and the tails after it are unchanged, so only the heads
    after i (moves to the right) and the tails before i (moves to the left) are rebuilt, each fused
    with the evaluation of the insertions it serves. O(n m) per i, no tables per i. The GPU fast
    path (gpu/engine/resident_pfsp.py) runs the same two sweeps."""
    n = seq.shape[0]
    m = pt.shape[1]
    e, q = heads_and_tails(pt, seq)
    for i in prange(lo, hi):
        x = seq[i]
        h = e[i].copy()  # heads of the first k jobs without x, k = i, i+1, ...
        for k in range(i + 1, n):  # x goes after seq[k]: heads grow by seq[k], tails are q[k + 1]
            job = seq[k]
            h[0] += pt[job, 0]
            for j in range(1, m):
                h[j] = max(h[j], h[j - 1]) + pt[job, j]
            f = h[0] + pt[x, 0]
            cmax = f + q[k + 1, 0]
            for j in range(1, m):
                f = max(f, h[j]) + pt[x, j]
                cmax = max(cmax, f + q[k + 1, j])
            out[i * (n - 1) + k - 1] = cmax - current
        t = q[i + 1].copy()  # tails from position k on without x, k = i, i-1, ...
        for k in range(i - 1, -1, -1):  # x goes before seq[k]: tails grow by seq[k], heads are e[k]
            job = seq[k]
            t[m - 1] += pt[job, m - 1]
            for j in range(m - 2, -1, -1):
                t[j] = max(t[j], t[j + 1]) + pt[job, j]
            g = t[m - 1] + pt[x, m - 1]
            cmax = g + e[k, m - 1]
            for j in range(m - 2, -1, -1):
                g = max(g, t[j]) + pt[x, j]
                cmax = max(cmax, g + e[k, j])
            out[i * (n - 1) + k] = cmax - current


insertion_values, insertion_values_parallel = serial_and_parallel(_insertion_values)
insertion_makespan_deltas, insertion_makespan_deltas_parallel = serial_and_parallel(_insertion_makespan_deltas)


@njit(cache=True)
def perform_insertion(seq, i, k):
    job = seq[i]
    if i < k:
        for t in range(i, k):
            seq[t] = seq[t + 1]
    else:
        for t in range(i, k, -1):
            seq[t] = seq[t - 1]
    seq[k] = job


@njit(cache=True)
def insertion_tabu_flags(seq, expiry, it, flags):
    """Move (i -> k) is tabu if job x = seq[i] would end up before a job it may not precede, or
    after a job that may not precede it, among the jobs it jumps over (expiry[a, b] >= it forbids
    a before b). One running OR per direction: O(n^2) for the whole neighbourhood."""
    n = seq.shape[0]
    for i in range(n):
        x = seq[i]
        tabu = False
        for k in range(i - 1, -1, -1):  # x jumps before seq[k]
            tabu = tabu or expiry[x, seq[k]] >= it
            flags[i * (n - 1) + k] = tabu
        tabu = False
        for k in range(i + 1, n):  # x jumps after seq[k]
            tabu = tabu or expiry[seq[k], x] >= it
            flags[i * (n - 1) + k - 1] = tabu


@njit(cache=True)
def insertion_tabu_record(seq, i, k, expiry, until):
    """After x = seq[i] moves to k: x may not go back before (k > i) or after (k < i) any job it
    jumped over, for the tenure."""
    x = seq[i]
    if k > i:
        for t in range(i + 1, k + 1):
            expiry[x, seq[t]] = until
    else:
        for t in range(k, i):
            expiry[seq[t], x] = until


class _PfspNeighbourhood(Neighbourhood):
    rows_alone = True  # (evaluate is evaluate_rows over every row)

    def __init__(self, problem):
        super().__init__(problem)
        self.n = problem.n

    def evaluate(self, solution, state, out, parallel=False):
        self.evaluate_rows(solution, 0, self.rows, out, parallel)

    def tabu_memory(self):
        return np.full((self.n, self.n), -1, dtype=np.int64)

    def default_tenure(self, n):
        return 10, 10  # Janiak et al.

    def _current(self, solution):
        return self.problem.objective(solution)

    def _values(self, fn, solution, lo, hi, out):
        """Run a *_values kernel over rows lo..hi (blocks of a position's moves): deltas into an out
        of width 1, objective vectors into width 3."""
        pr = self.problem
        current = self._current(solution) if out.shape[1] == 1 else 0
        fn(pr.pt, pr.due, solution, pr.objective_code, pr.weights, current, lo, hi, out, self.blocks)


class PfspInsertion(_PfspNeighbourhood):
    name = "insertion"

    def __init__(self, problem):
        super().__init__(problem)
        self.size = insertion_count(self.n)
        # a row: a position's moves (Taillard's acceleration: O(n m) for them all), else blocks of them
        self.blocks = 1 if problem.objective_code == MAKESPAN else row_blocks(self.n, problem.m)
        self.rows = self.n * self.blocks

    def row_starts(self):
        n, blocks = self.n, self.blocks
        places = np.arange(blocks) * n // blocks  # each block's first place k
        starts = [i * (n - 1) + int(k if k <= i else k - 1) for i in range(n) for k in places]
        return starts + [self.size]

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        pr = self.problem
        if pr.objective_code == MAKESPAN:
            fn = insertion_makespan_deltas_parallel if parallel else insertion_makespan_deltas
            fn(pr.pt, pr.due, solution, pr.objective_code, pr.weights, self._current(solution), lo, hi, out)
        else:
            self._values(insertion_values_parallel if parallel else insertion_values, solution, lo, hi,
                         out.reshape(-1, 1))

    def vector_rows(self, solution, lo, hi, out, parallel=False):
        self._values(insertion_values_parallel if parallel else insertion_values, solution, lo, hi, out)

    def perform(self, solution, move):
        i, k = index_to_insertion(move, self.n)
        perform_insertion(solution, i, k)

    def tabu_flags(self, solution, memory, it, flags):
        insertion_tabu_flags(solution, memory, it, flags)

    def tabu_record(self, solution_before, move, memory, until):
        i, k = index_to_insertion(move, self.n)
        insertion_tabu_record(solution_before, i, k, memory, until)


def _swap_values(pt, due, seq, objective, w, current, lo, hi, out, blocks):
    """Delta (or objective vector, see _store_move) of the swaps (i, j) of rows lo <= r < hi, row r
    being block r % blocks of the partners j > i of i = r // blocks."""
    n = seq.shape[0]
    m = pt.shape[1]
    e, _q = heads_and_tails(pt, seq)
    for r in prange(lo, hi):
        i = r // blocks
        j_lo, j_hi = block_of(r % blocks, blocks, i + 1, n)
        trial = seq.copy()
        # prefix objectives of the unchanged first i jobs
        fl = 0
        ta = 0
        la = 0
        for t in range(i):
            ct = e[t + 1, m - 1]
            fl += ct
            ta += max(0, ct - due[seq[t]])
            la += 1 if ct > due[seq[t]] else 0
        base = i * (2 * n - i - 1) // 2 - i - 1
        for j in range(j_lo, j_hi):
            trial[i] = seq[j]
            trial[j] = seq[i]
            cmax, fl2, ta2, la2 = _continue_schedule(pt, due, trial, i, e[i], fl, ta, la)
            _store_move(out, base + j, cmax, fl2, ta2, la2, objective, w, current)
            trial[j] = seq[j]
        trial[i] = seq[i]


swap_values, swap_values_parallel = serial_and_parallel(_swap_values)


class PfspSwap(PositionSwapMoves, _PfspNeighbourhood):
    name = "swap"

    def __init__(self, problem):
        super().__init__(problem)
        self.size = pair_count(self.n)
        self.blocks = row_blocks(self.n, problem.m)  # (every swap is scheduled from position i on)
        self.rows = (self.n - 1) * self.blocks

    def row_starts(self):
        n, blocks = self.n, self.blocks
        starts = [i * (2 * n - i - 1) // 2 + (i + 1 + b * (n - i - 1) // blocks) - i - 1
                  for i in range(n - 1) for b in range(blocks)]
        return starts + [self.size]

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        self._values(swap_values_parallel if parallel else swap_values, solution, lo, hi, out.reshape(-1, 1))

    def vector_rows(self, solution, lo, hi, out, parallel=False):
        self._values(swap_values_parallel if parallel else swap_values, solution, lo, hi, out)


class PFSP(Problem):
    kind = "pfsp"
    objective_floor = 0  # a sum of non-negative terms (checked at load)
    vector_names = ("makespan", "tardiness", "late_jobs")  # the objective vector of Pareto searches
    neighbourhoods = {"insertion": PfspInsertion, "swap": PfspSwap}
    default_neighbourhood = "insertion"
    parameters = (
        Param("objective", str, "makespan, total flow time, or the weighted sum of makespan, total "
              "tardiness and late jobs (three)", default="makespan", choices=tuple(OBJECTIVES)),
        Param("weights", "ints", "the three objectives' weights for objective=three", default="1,1,1", low=0),
    )

    def __init__(self, times_machine_major, name="pfsp", source=None, sha256=None, due=None,
                 objective="makespan", weights=(1, 1, 1), generator=None):
        super().__init__(name, source, sha256)
        pm = np.asarray(times_machine_major, dtype=np.int64)
        self.m, self.n = pm.shape
        self.size = self.n
        self.pt = np.ascontiguousarray(pm.T)
        if objective not in OBJECTIVES:
            raise LsbenchError(f"--param objective: unknown PFSP objective {objective!r} "
                               f"(known: {', '.join(OBJECTIVES)})")
        self.objective_name = objective
        self.objective_code = OBJECTIVES[objective]
        self.weights = np.asarray(weights, dtype=np.int64)
        if self.weights.shape != (3,) or (self.weights < 0).any():
            raise LsbenchError("--param weights: need three non-negative integers, e.g. 1,1,1")
        if objective != "three" and self.weights.tolist() != [1, 1, 1]:
            raise LsbenchError(f"--param weights: they weigh the objectives of objective=three; with objective="
                               f"{objective} they would be ignored")
        # contiguous: a file's due dates are a column, whose strided view compiles a slower specialisation
        self.due = np.ascontiguousarray(due, dtype=np.int64) if due is not None else \
            np.full(self.n, np.iinfo(np.int64).max // 4, dtype=np.int64)
        self.generator = generator
        total = int(self.pt.astype(object).sum())  # the makespan's bound; flow time and tardiness n times it
        check_bound(total * (self.n + 1) * (int(self.weights.astype(object).sum()) + 1) + self.n * int(self.weights[2]),
                    source or name, "the objective (sum of processing times x (n + 1) x (sum of weights + 1))")

    @classmethod
    def from_file(cls, path, name=None, **kw):
        """Taillard's format (`n m`, then m rows of n processing times, one row a machine) or
        Liefooghe's due-date format (n, m, Taillard's time seed, then for each job its index, its
        due date and its m processing times), told apart by how many numbers the file holds."""
        nums = read_numbers(path)
        if nums.size < 2:
            raise InstanceFormatError(path, "expected 'n m' then m rows of n processing times")
        n, m = int(nums[0]), int(nums[1])
        if n < 2 or m < 1:
            raise InstanceFormatError(path, f"bad sizes n={n}, m={m}")
        due, generator = None, None
        if nums.size == 3 + n * (m + 2):
            jobs = nums[3:].reshape(n, m + 2)
            if (jobs[:, 0] != np.arange(n)).any():
                raise InstanceFormatError(path, "Liefooghe's format: the jobs' indices must be 0 .. n-1 in order")
            due, times = jobs[:, 1], np.ascontiguousarray(jobs[:, 2:].T)
            if (due < 0).any():
                raise InstanceFormatError(path, "negative due date")
            generator = f"due dates from the file (Liefooghe's format, time seed {int(nums[2])})"
        elif nums.size == 2 + n * m:
            times = nums[2:].reshape(m, n)
        else:
            raise InstanceFormatError(path, f"expected {m}x{n} = {n * m} processing times (Taillard's format) or "
                                            f"{n} jobs of index, due date and {m} times (Liefooghe's), "
                                            f"found {nums.size - 2} numbers after 'n m'")
        if (times < 0).any():
            raise InstanceFormatError(path, "negative processing time")
        return cls(times, name or os.path.basename(path).rsplit(".", 1)[0], source=str(path),
                   sha256=sha256_of(path), due=due, generator=generator, **kw)

    @classmethod
    def taillard(cls, name, n, m, time_seed, **kw):
        times, seed = taillard_times(n, m, time_seed)
        due = due_dates(np.ascontiguousarray(times.T), seed)
        return cls(times, name, due=due, generator=f"taillard(n={n}, m={m}, time_seed={time_seed})", **kw)

    @classmethod
    def random(cls, name, n, m, seed, **kw):
        """Janiak et al.'s random instances: p uniform in [1, 100], from lsbench's portable RNG."""
        st = rng.new_state(seed)
        times = np.array([[1 + rng.below(st, 100) for _ in range(n)] for _ in range(m)], dtype=np.int64)
        due = due_dates(np.ascontiguousarray(times.T), seed % 2147483646 + 1)
        return cls(times, name, due=due, generator=f"uniform[1,100](n={n}, m={m}, seed={seed})", **kw)

    def times_machine_major(self):
        return self.pt.T

    def objective(self, solution):
        return int(sequence_score(self.pt, self.due, np.asarray(solution, dtype=np.int64),
                                  self.objective_code, self.weights))

    def _exact_schedule(self, solution):
        """(Cmax, flow time, tardiness, late jobs) in Python integers, independent of compiled code."""
        c = [0] * self.m
        flow = tard = late = 0
        pt, due = self.pt.astype(object), self.due.astype(object)
        for job in np.asarray(solution, dtype=np.int64):
            flow, tard, late = append_job(pt, due, c, int(job), flow, tard, late)
        return c[-1], flow, tard, late

    def exact_objective(self, solution):
        cmax, flow, tard, late = self._exact_schedule(solution)
        w = [int(v) for v in self.weights]
        return {MAKESPAN: cmax, FLOWTIME: flow}.get(self.objective_code, w[0] * cmax + w[1] * tard + w[2] * late)

    def objective_vector(self, solution):
        """(makespan, total tardiness, late jobs): what Pareto searches minimise (VECTOR_NAMES)."""
        cmax, _flow, tard, late = schedule_objectives(self.pt, self.due, np.asarray(solution, dtype=np.int64))
        return np.array([cmax, tard, late], dtype=np.int64)

    def exact_vector(self, solution):
        """objective_vector in Python integers (re-checks of Pareto fronts)."""
        cmax, _flow, tard, late = self._exact_schedule(solution)
        return [cmax, tard, late]

    def objectives(self, solution):
        cmax, flow, tard, late = schedule_objectives(self.pt, self.due, np.asarray(solution, dtype=np.int64))
        return {"makespan": int(cmax), "flowtime": int(flow), "tardiness": int(tard), "late_jobs": int(late)}

    def random_solution(self, rng_state):
        return rng.permutation(rng_state, self.n)

    def check_solution(self, solution):
        check_permutation(solution, self.n)

    def describe(self):
        return {"n (jobs)": self.n, "m (machines)": self.m,
                "machine 1 first times": self.pt[:12, 0].tolist(),
                "generator": self.generator or "file"}
