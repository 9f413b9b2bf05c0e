"""Quadratic assignment (Koopmans-Beckmann): cost(p) = sum_ij a_ij * b_{p(i) p(j)}.

p[i] is the location of facility i. Swap neighbourhood: exchange the locations of facilities
r < s, numbered by the triangular pair index. Move costs are kept in a delta table: O(n) each from
scratch, and Taillard's O(1) update for moves disjoint from the last performed swap.
"""
import numpy as np
from numba import njit, prange

from ..errors import InstanceFormatError
from .. import rng
from ..neighborhoods import index_to_pair, pair_count, pair_row_starts
from .base import serial_and_parallel, Neighbourhood, Problem, check_bound, check_permutation, read_numbers, sha256_of


@njit(cache=True)
def qap_cost(a, b, p):
    n = p.shape[0]
    c = 0
    for i in range(n):
        pi = p[i]
        for j in range(n):
            c += a[i, j] * b[pi, p[j]]
    return c


@njit(cache=True)
def qap_costs(a, b, sols):
    """The cost of each row of `sols` (a batch of starts)."""
    out = np.empty(sols.shape[0], dtype=np.int64)
    for k in range(sols.shape[0]):
        out[k] = qap_cost(a, b, sols[k])
    return out


@njit(cache=True)
def symmetric_form(a, b):
    """(A, B, general) with the same move costs, written with one symmetric matrix: when a is
    symmetric the cost is sum a_ij (b_pipj + b_pjpi) / 2, so B = b + b^T and A = a (and the other
    way round); a move then costs one product per k instead of two, on the CPU (swap_delta) as in
    the GPU's resident kernel. `general`: neither is symmetric, (a, b) as they are."""
    if np.array_equal(a, a.T):
        return a, b + b.T, False
    if np.array_equal(b, b.T):
        return a + a.T, b, False
    return a, b, True


@njit(cache=True, inline="always")
def swap_delta(a, at, bp, bpt, i, j, general):
    """Cost change of swapping the locations of facilities i and j: O(n).

    bp[k, l] = b[p[k], p[l]] is the distance matrix seen through the current permutation and
    bpt its transpose, at the transpose of a: every operand is a contiguous row, so the k-loop
    is branch-free and vectorises. The k = i and k = j terms are taken out after the loop.
    Not `general`: (a, b) is a symmetric form (symmetric_form; bp symmetric, at and bpt unused),
    whose k-th term (one product) equals the general form's two.
    """
    i = np.int64(i)  # prange indices are unsigned; keep index arithmetic signed
    j = np.int64(j)
    s = 0
    if general:
        d = (a[i, i] - a[j, j]) * (bp[j, j] - bp[i, i]) + (a[i, j] - a[j, i]) * (bp[j, i] - bp[i, j])
        for k in range(at.shape[0]):
            s += (at[i, k] - at[j, k]) * (bpt[j, k] - bpt[i, k]) + (a[i, k] - a[j, k]) * (bp[j, k] - bp[i, k])
        s -= (at[i, i] - at[j, i]) * (bpt[j, i] - bpt[i, i]) + (a[i, i] - a[j, i]) * (bp[j, i] - bp[i, i])
        s -= (at[i, j] - at[j, j]) * (bpt[j, j] - bpt[i, j]) + (a[i, j] - a[j, j]) * (bp[j, j] - bp[i, j])
        return d + s
    for k in range(a.shape[0]):
        s += (a[i, k] - a[j, k]) * (bp[j, k] - bp[i, k])
    s -= (a[i, i] - a[j, i]) * (bp[j, i] - bp[i, i])
    s -= (a[i, j] - a[j, j]) * (bp[j, j] - bp[i, j])
    # the diagonal term, halved: one of the two diagonals is doubled (a + a^T or b + b^T), so one
    # difference is even and halving it is exact (no doubled product to overflow)
    dx = a[i, i] - a[j, j]
    dy = bp[j, j] - bp[i, i]
    return s + (dx * (dy >> 1) if dy & 1 == 0 else (dx >> 1) * dy)


@njit(cache=True)
def permuted_distances(b, p, general=True):
    """bp[k, l] = b[p[k], p[l]] and its transpose (contiguous copies); not `general` (a symmetric
    form, bp symmetric): bp twice, one array."""
    bp = np.ascontiguousarray(b[p][:, p])
    return bp, (np.ascontiguousarray(bp.T) if general else bp)


def _all_deltas(a, at, bp, bpt, lo, hi, out, general=True):
    """Deltas of the swaps (r, s) with lo <= r < hi, from scratch (O(n) each)."""
    n = a.shape[0]
    for r in prange(lo, hi):
        base = r * (2 * n - r - 1) // 2 - r - 1
        for s in range(r + 1, n):
            out[base + s] = swap_delta(a, at, bp, bpt, r, s, general)


def _swap_and_update(a, at, bp, bpt, p, delta, r, s, general=True):
    """Perform swap (r, s) on p and bring bp, bpt and the delta table up to date.

    Taillard's O(1) update, factored: with u = a[r,:]-a[s,:], v = a[:,r]-a[:,s],
    w = bp[s,:]-bp[r,:], z = bp[:,s]-bp[:,r] (after the swap), the delta of a disjoint swap
    (i, j) grows by (u_i-u_j)(w_i-w_j) + (v_i-v_j)(z_i-z_j): contiguous, vectorisable rows; in a
    symmetric form (not `general`: bpt is bp) v = u or z = w folds into one product,
    (u_i-u_j)(w_i-w_j), half the work of the general update. Moves touching r or s are recomputed in O(n).
    """
    n = p.shape[0]
    t = p[r]
    p[r] = p[s]
    p[s] = t
    for k in range(n):  # swap rows and columns r, s of the permuted distances
        t = bp[r, k]
        bp[r, k] = bp[s, k]
        bp[s, k] = t
        if general:
            t = bpt[r, k]
            bpt[r, k] = bpt[s, k]
            bpt[s, k] = t
    for k in range(n):
        t = bp[k, r]
        bp[k, r] = bp[k, s]
        bp[k, s] = t
        if general:
            t = bpt[k, r]
            bpt[k, r] = bpt[k, s]
            bpt[k, s] = t
    u = np.empty(n, dtype=np.int64)
    v = np.empty(n, dtype=np.int64)
    w = np.empty(n, dtype=np.int64)
    z = np.empty(n, dtype=np.int64)
    for k in range(n):
        u[k] = a[r, k] - a[s, k]
        w[k] = bp[s, k] - bp[r, k]
        if general:
            v[k] = at[r, k] - at[s, k]
            z[k] = bpt[s, k] - bpt[r, k]
    for i in prange(n - 1):
        base = i * (2 * n - i - 1) // 2 - i - 1
        if i == r or i == s:
            for j in range(i + 1, n):
                delta[base + j] = swap_delta(a, at, bp, bpt, i, j, general)
        else:
            ui = u[i]
            wi = w[i]
            if general:
                vi = v[i]
                zi = z[i]
                for j in range(i + 1, n):
                    delta[base + j] += (ui - u[j]) * (wi - w[j]) + (vi - v[j]) * (zi - z[j])
            else:
                for j in range(i + 1, n):
                    delta[base + j] += (ui - u[j]) * (wi - w[j])
            if r > i:
                delta[base + r] = swap_delta(a, at, bp, bpt, i, r, general)
            if s > i:
                delta[base + s] = swap_delta(a, at, bp, bpt, i, s, general)


all_deltas, all_deltas_parallel = serial_and_parallel(_all_deltas)
swap_and_update, swap_and_update_parallel = serial_and_parallel(_swap_and_update)


@njit(cache=True)
def facility_swap_tabu_flags(p, expiry, it, flags):
    """Swap (r, s) is tabu when both facilities would return to locations still forbidden."""
    n = p.shape[0]
    k = 0
    for r in range(n - 1):
        for s in range(r + 1, n):
            flags[k] = expiry[r, p[s]] >= it and expiry[s, p[r]] >= it
            k += 1


@njit(cache=True)
def facility_swap_tabu_record(p_before, r, s, expiry, until):
    """After swap (r, s): facility r may not go back to its old location, nor s to its."""
    expiry[r, p_before[r]] = until
    expiry[s, p_before[s]] = until


class QapSwap(Neighbourhood):
    name = "swap"

    def __init__(self, problem):
        super().__init__(problem)
        self.n = problem.n
        self.size = pair_count(problem.n)

    def state(self, solution, parallel=False):
        """(delta table, the form's b permuted by the solution, its transpose: the same array in a
        symmetric form)."""
        pr = self.problem
        bp, bpt = permuted_distances(pr.form_b, solution, pr.general)
        delta = np.empty(self.size, dtype=np.int64)
        (all_deltas_parallel if parallel else all_deltas)(pr.form_a, pr.form_at, bp, bpt, 0, self.n - 1, delta,
                                                          pr.general)
        return (delta, bp, bpt)

    def default_tenure(self, n):
        return 9 * n // 10, 11 * n // 10  # Taillard's range, drawn per move

    def row_starts(self):
        return pair_row_starts(self.n)

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        pr = self.problem
        bp, bpt = permuted_distances(pr.form_b, solution, pr.general)
        (all_deltas_parallel if parallel else all_deltas)(pr.form_a, pr.form_at, bp, bpt, lo, hi, out, pr.general)

    def perform(self, solution, move):
        r, s = index_to_pair(move, self.n)
        solution[r], solution[s] = solution[s], solution[r]

    def evaluate(self, solution, state, out, parallel=False):
        """The delta table is already up to date: O(|N|) copy."""
        out[:] = state[0]

    def apply(self, solution, state, move, parallel=False):
        r, s = index_to_pair(move, self.n)
        fn = swap_and_update_parallel if parallel else swap_and_update
        pr = self.problem
        fn(pr.form_a, pr.form_at, state[1], state[2], solution, state[0], r, s, pr.general)

    def tabu_memory(self):
        return np.full((self.n, self.n), -1, dtype=np.int64)

    def tabu_flags(self, solution, memory, it, flags):
        facility_swap_tabu_flags(solution, memory, it, flags)

    def tabu_record(self, solution_before, move, memory, until):
        r, s = index_to_pair(move, self.n)
        facility_swap_tabu_record(solution_before, r, s, memory, until)


class QAP(Problem):
    kind = "qap"
    neighbourhoods = {"swap": QapSwap}
    default_neighbourhood = "swap"

    def __init__(self, a, b, name="qap", source=None, sha256=None):
        super().__init__(name, source, sha256)
        self.a = np.ascontiguousarray(a, dtype=np.int64)
        self.b = np.ascontiguousarray(b, dtype=np.int64)
        self.at = np.ascontiguousarray(self.a.T)
        # the move costs' form on the CPU: one symmetric matrix where the instance has one
        # (symmetric_form); the delta table's permuted matrix is then form_b's
        self.form_a, self.form_b, self.general = symmetric_form(self.a, self.b)
        self.form_at = np.ascontiguousarray(self.form_a.T)
        self.n = self.a.shape[0]
        self.size = self.n
        abs_a, abs_b = np.abs(self.a).astype(object), np.abs(self.b).astype(object)
        check_bound(int(abs_a.sum()) * int(abs_b.max()), source or name, "the cost (sum |a| x max |b|)")

    @classmethod
    def from_file(cls, path, name=None):
        """QAPLIB .dat: n, then A (flows) and B (distances), n*n numbers each."""
        nums = read_numbers(path)
        if nums.size == 0:
            raise InstanceFormatError(path, "empty file, expected n then two n x n matrices")
        n = int(nums[0])
        if n < 2:
            raise InstanceFormatError(path, f"size n={n} must be at least 2")
        if nums.size != 1 + 2 * n * n:
            raise InstanceFormatError(
                path, f"expected 2 matrices of {n}x{n} = {2 * n * n} numbers after n, found {nums.size - 1}")
        a = nums[1:1 + n * n].reshape(n, n)
        b = nums[1 + n * n:].reshape(n, n)
        import os
        return cls(a, b, name or os.path.basename(path).rsplit(".", 1)[0], source=str(path),
                   sha256=sha256_of(path))

    @classmethod
    def random(cls, name, n, seed):
        """A uniform instance in the style of Taillard's tai*a: flows and distances in [0, 99],
        zero diagonals, from lsbench's portable RNG (built in, no download needed)."""
        st = rng.new_state(seed)
        a = np.array([[0 if i == j else rng.below(st, 100) for j in range(n)] for i in range(n)])
        b = np.array([[0 if i == j else rng.below(st, 100) for j in range(n)] for i in range(n)])
        return cls(a, b, name, source=None, sha256=None)

    def objective(self, solution):
        return int(qap_cost(self.a, self.b, np.asarray(solution, dtype=np.int64)))

    def exact_objective(self, solution):
        p = np.asarray(solution, dtype=np.int64)
        return int((self.a.astype(object) * self.b[np.ix_(p, p)].astype(object)).sum())

    def swap_delta_bound(self):
        """An upper bound on |cost change| of any swap, tight enough to pick narrow integer types:
        a swap of r and s changes only terms in rows and columns r, s, each by at most |a_ij| times
        the spread of b (and the same with the roles of a and b exchanged)."""
        def one_side(w, v):
            touch = np.abs(w).sum(0) + np.abs(w).sum(1)  # |w| in row i plus column i
            top = np.sort(touch)[-2:]
            return int(top.sum()) * int(v.max() - v.min())
        return min(one_side(self.a, self.b), one_side(self.b, self.a))

    def random_solution(self, rng_state):
        return rng.permutation(rng_state, self.n)

    def check_solution(self, solution):
        check_permutation(solution, self.n)

    def describe(self):
        return {"n": self.n, "flows (A) first row": self.a[0, :12].tolist(),
                "distances (B) first row": self.b[0, :12].tolist()}


def read_sln(path):
    """QAPLIB .sln: n, objective value, then a 1-based permutation. Returns (value, 0-based perm)."""
    nums = read_numbers(path)
    if nums.size < 2:
        raise InstanceFormatError(path, "expected n, the objective value and a permutation")
    n = int(nums[0])
    if nums.size != 2 + n:
        raise InstanceFormatError(path, f"expected {n} permutation entries, found {nums.size - 2}")
    perm = nums[2:] - 1
    check_permutation(perm, n, what=str(path))
    return int(nums[1]), perm
