"""Permuted perceptron problem (Pointcheval's identification scheme).

Given an epsilon-matrix A (m x n, entries +-1) and a multiset S of m non-negative integers, find an
epsilon-vector V with {(AV)_j} = S. Instances are made by Pointcheval's construction from a seed:
random A and V, then rows of A negated where (AV)_j < 0; S is the multiset of AV.
Solutions are bit vectors x (V = 2x - 1). Fitness (Knudsen & Meier, used by Luong et al.):
    f(V) = 30 * sum_j (|Y_j| - Y_j) + sum_{v>=0} |H_Y(v) - H_S(v)|,   Y = AV,
zero exactly at a solution. Neighbourhoods: Hamming distance 1, 2 and 3 (flip 1, 2 or 3 bits),
evaluated incrementally from Y in O(m) per move.
"""
import re

import numpy as np
from numba import njit, prange

from .. import rng
from ..errors import LsbenchError
from ..neighborhoods import hamming_count, index_to_pair, index_to_triple, pair_row_starts, triple_row_starts
from .base import serial_and_parallel, Neighbourhood, Problem

PENALTY = 30


@njit(cache=True)
def ppp_fitness_from_y(y, target_hist):
    n1 = target_hist.shape[0]
    hist = np.zeros(n1, dtype=np.int64)
    f = 0
    for j in range(y.shape[0]):
        v = y[j]
        if v < 0:
            f += PENALTY * (-2 * v)
        elif v < n1:
            hist[v] += 1
    for v in range(n1):
        f += abs(hist[v] - target_hist[v])
    return f


@njit(cache=True)
def product(a, x):
    m, n = a.shape
    y = np.zeros(m, dtype=np.int64)
    for j in range(m):
        s = 0
        for i in range(n):
            s += a[j, i] * (2 * x[i] - 1)
        y[j] = s
    return y


@njit(cache=True, inline="always")
def flip_signs(x, k1, k2, k3):
    """What flipping bits k1, k2, k3 (-1: no bit) adds to a row per unit of its entry: -2 (2 x_k - 1)."""
    c1 = -2 * (2 * x[k1] - 1)
    c2 = 0 if k2 < 0 else -2 * (2 * x[k2] - 1)
    c3 = 0 if k3 < 0 else -2 * (2 * x[k3] - 1)
    return c1, c2, c3


@njit(cache=True, inline="always")
def row_after_flip(a, y, j, k1, k2, k3, c1, c2, c3):
    """Row j of Y = A V after the flip (GPU kernels use this definition too, gpu/device.py)."""
    new = y[j] + c1 * a[j, k1]
    if k2 >= 0:
        new += c2 * a[j, k2]
    if k3 >= 0:
        new += c3 * a[j, k3]
    return new


@njit(cache=True, inline="always")
def flip_delta(a, x, y, hist, target_hist, k1, k2, k3, scratch, touched):
    """Fitness change of flipping bits k1 and, when >= 0, k2 and k3. O(m) with scratch counts."""
    m = y.shape[0]
    n1 = target_hist.shape[0]
    c1, c2, c3 = flip_signs(x, k1, k2, k3)
    delta = 0
    nt = 0
    for j in range(m):
        old = y[j]
        new = row_after_flip(a, y, j, k1, k2, k3, c1, c2, c3)
        if new == old:
            continue
        if old < 0:
            delta -= PENALTY * (-2 * old)
        elif old < n1:
            if scratch[old] == 0:
                touched[nt] = old
                nt += 1
            scratch[old] -= 1
        if new < 0:
            delta += PENALTY * (-2 * new)
        elif new < n1:
            if scratch[new] == 0:
                touched[nt] = new
                nt += 1
            scratch[new] += 1
    for t in range(nt):
        v = touched[t]
        delta += abs(hist[v] + scratch[v] - target_hist[v]) - abs(hist[v] - target_hist[v])
        scratch[v] = 0
    return delta


def _hamming_deltas(a, x, y, hist, target_hist, k, lo, hi, out):
    """Deltas of the moves whose first flipped bit i is in lo..hi-1."""
    n = x.shape[0]
    m = y.shape[0]
    n1 = target_hist.shape[0]
    if k == 1:
        for i in prange(lo, hi):
            scratch = np.zeros(n1, dtype=np.int64)
            touched = np.empty(2 * m, dtype=np.int64)
            out[i] = flip_delta(a, x, y, hist, target_hist, i, -1, -1, scratch, touched)
    elif k == 2:
        for i in prange(lo, hi):
            scratch = np.zeros(n1, dtype=np.int64)
            touched = np.empty(2 * m, dtype=np.int64)
            base = i * (2 * n - i - 1) // 2 - i - 1
            for j in range(i + 1, n):
                out[base + j] = flip_delta(a, x, y, hist, target_hist, i, j, -1, scratch, touched)
    else:
        for i in prange(lo, hi):
            scratch = np.zeros(n1, dtype=np.int64)
            touched = np.empty(2 * m, dtype=np.int64)
            # rank of the first triple starting with i: C(n,3) - C(n-i,3)
            r = (n * (n - 1) * (n - 2) - (n - i) * (n - i - 1) * (n - i - 2)) // 6
            for j in range(i + 1, n - 1):
                for l in range(j + 1, n):
                    out[r] = flip_delta(a, x, y, hist, target_hist, i, j, l, scratch, touched)
                    r += 1


hamming_deltas, hamming_deltas_parallel = serial_and_parallel(_hamming_deltas)


@njit(cache=True)
def flip_bits(a, x, y, hist, k1, k2, k3):
    """Flip up to three bits of x and update Y = AV and its histogram of non-negative values."""
    n1 = hist.shape[0]
    for j in range(y.shape[0]):
        old = y[j]
        new = old
        for kk in (k1, k2, k3):
            if kk >= 0:
                new += -2 * (2 * x[kk] - 1) * a[j, kk]
        if old >= 0 and old < n1:
            hist[old] -= 1
        if new >= 0 and new < n1:
            hist[new] += 1
        y[j] = new
    for kk in (k1, k2, k3):
        if kk >= 0:
            x[kk] = 1 - x[kk]


@njit(cache=True)
def histogram(y, n1):
    h = np.zeros(n1, dtype=np.int64)
    for v in y:
        if 0 <= v < n1:
            h[v] += 1
    return h


@njit(cache=True)
def bits_tabu_flags(k, n, expiry, it, flags):
    """A move is tabu if any bit it flips was flipped less than tenure iterations ago."""
    if k == 1:
        for i in range(n):
            flags[i] = expiry[i] >= it
    elif k == 2:
        for idx in range(flags.shape[0]):
            i, j = index_to_pair(idx, n)
            flags[idx] = expiry[i] >= it or expiry[j] >= it
    else:
        for idx in range(flags.shape[0]):
            i, j, l = index_to_triple(idx, n)
            flags[idx] = expiry[i] >= it or expiry[j] >= it or expiry[l] >= it


class PppHamming(Neighbourhood):
    k = 1

    def __init__(self, problem):
        super().__init__(problem)
        self.n = problem.n
        self.size = hamming_count(self.n, self.k)
        self.name = f"hamming{self.k}"

    def bits_of(self, move):
        if self.k == 1:
            return move, -1, -1
        if self.k == 2:
            i, j = index_to_pair(move, self.n)
            return i, j, -1
        return index_to_triple(move, self.n)

    def state(self, solution, parallel=False):
        y = product(self.problem.a, solution)
        return (y, histogram(y, self.problem.target_hist.shape[0]))

    def evaluate(self, solution, state, out, parallel=False):
        y, hist = state
        fn = hamming_deltas_parallel if parallel else hamming_deltas
        fn(self.problem.a, solution, y, hist, self.problem.target_hist, self.k, 0, self.rows(), out)

    def rows(self):
        return (self.n, self.n - 1, self.n - 2)[self.k - 1]

    def row_starts(self):
        if self.k == 1:
            return list(range(self.n + 1))
        return pair_row_starts(self.n) if self.k == 2 else triple_row_starts(self.n)

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        y, hist = self.state(solution, parallel)
        fn = hamming_deltas_parallel if parallel else hamming_deltas
        fn(self.problem.a, solution, y, hist, self.problem.target_hist, self.k, lo, hi, out)

    def perform(self, solution, move):
        for b in self.bits_of(move):
            if b >= 0:
                solution[b] = 1 - solution[b]

    def apply(self, solution, state, move, parallel=False):
        y, hist = state
        k1, k2, k3 = self.bits_of(move)
        flip_bits(self.problem.a, solution, y, hist, k1, k2, k3)

    def default_tenure(self, n):
        return max(1, n // 10), max(1, n // 10)

    def tabu_memory(self):
        return np.full(self.n, -1, dtype=np.int64)

    def tabu_flags(self, solution, memory, it, flags):
        bits_tabu_flags(self.k, self.n, memory, it, flags)

    def tabu_record(self, solution_before, move, memory, until):
        for b in self.bits_of(move):
            if b >= 0:
                memory[b] = until


class PppHamming1(PppHamming):
    k = 1


class PppHamming2(PppHamming):
    k = 2


class PppHamming3(PppHamming):
    k = 3


class PPP(Problem):
    kind = "ppp"
    objective_floor = 0  # a sum of non-negative terms (checked at load)
    neighbourhoods = {"hamming1": PppHamming1, "hamming2": PppHamming2, "hamming3": PppHamming3}
    default_neighbourhood = "hamming1"

    def __init__(self, a, s_values, name="ppp", generator=None, secret=None):
        super().__init__(name)
        self.a = np.ascontiguousarray(a, dtype=np.int64)
        self.m, self.n = self.a.shape
        self.size = self.n
        self.s_values = np.sort(np.asarray(s_values, dtype=np.int64))
        self.target_hist = histogram(self.s_values, self.n + 1)
        self.generator = generator
        self.secret = secret

    @classmethod
    def pointcheval(cls, m, n, seed=1, name=None):
        if m < 1 or n < 1:
            raise LsbenchError(f"PPP instance {m}-{n}: m and n must be positive")
        st = rng.new_state(seed)
        a = 2 * rng.bits(st, m * n).astype(np.int64).reshape(m, n) - 1
        secret = rng.bits(st, n).astype(np.int64)
        y = product(a, secret)
        a[y < 0] *= -1
        y = product(a, secret)
        return cls(a, y, name or f"{m}-{n}", generator=f"pointcheval(m={m}, n={n}, seed={seed})",
                   secret=secret)

    @classmethod
    def from_name(cls, name):
        """'73-73' (seed 1) or '73-73-s5' (seed 5)."""
        mt = re.fullmatch(r"(?:ppp-)?(\d+)-(\d+)(?:-s(\d+))?", name)
        if not mt:
            return None
        return cls.pointcheval(int(mt.group(1)), int(mt.group(2)), int(mt.group(3) or 1), name=name)

    def objective(self, solution):
        return int(ppp_fitness_from_y(product(self.a, np.asarray(solution, dtype=np.int64)), self.target_hist))

    def exact_objective(self, solution):
        v = 2 * np.asarray(solution, dtype=object) - 1
        y = [int(row.astype(object) @ v) for row in self.a]
        n1 = self.target_hist.shape[0]
        hist = [0] * n1
        f = 0
        for value in y:
            if value < 0:
                f += PENALTY * (-2 * value)
            elif value < n1:
                hist[value] += 1
        return f + sum(abs(h - int(t)) for h, t in zip(hist, self.target_hist))

    def random_solution(self, rng_state):
        return rng.bits(rng_state, self.n).astype(np.int64)

    def check_solution(self, solution):
        s = np.asarray(solution)
        if s.shape != (self.n,) or not np.isin(s, (0, 1)).all():
            raise LsbenchError(f"solution: expected a 0/1 vector of length {self.n}")

    def describe(self):
        return {"m": self.m, "n": self.n, "generator": self.generator,
                "A first row": self.a[0, :16].tolist(), "S (first values)": self.s_values[:16].tolist()}
