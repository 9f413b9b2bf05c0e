"""Weierstrass function (Luong et al.): W(x) = sum_i sum_{k=1..K} b^(-k h) sin(b^k x_i), x in [-1,1]^d.

h = 0.25, K = 100 terms, b = 2 by default. Neighbourhood: `count` points in concentric crowns
around x (Luong et al., section 4.5): neighbour t lies at a distance drawn in
[t R / count, (t+1) R / count] with R = 1/d, in a random direction, clipped to the domain. The
random numbers come from a counter-based hash of (instance seed, the bits of x, t, component), so
any backend generates neighbour t independently and identically; the same x always has the same
neighbours, which also rules out cycles of length > 1 (tabu memory is not needed).
Precision: float64 (default) or float32 (`precision=32`); CPU and GPU agree to a relative
tolerance (sin differs by a few ulps between libm and CUDA).
"""
import math
import re

import numpy as np
from numba import njit, prange

from .. import rng
from ..errors import LsbenchError
from ..params import Param
from .base import serial_and_parallel, Neighbourhood, Problem

from ..rng import mix64, unit_interval

_G = rng.GOLDEN
MOST_SINES = 20_000_000  # d x terms of one point: W(x) takes about a second on a core (5.2 s for 10^8)


@njit(cache=True)
def _hash_words(words, seed):
    h = mix64(np.uint64(seed) + _G)
    for i in range(words.shape[0]):
        h = mix64(h ^ (words[i] + _G))
    return h


def solution_key(x, seed):
    """Hash of the exact bits of x and the instance seed (computed on the host, passed to kernels)."""
    words = x.view(np.uint64 if x.dtype == np.float64 else np.uint32).astype(np.uint64)
    return np.uint64(_hash_words(words, np.uint64(seed)))


@njit(cache=True, inline="always")
def unit_random(key, t, c):
    """Uniform in [0, 1) from (key, neighbour t, component c)."""
    return unit_interval(mix64(key ^ mix64(np.uint64(t) * _G + np.uint64(c) + np.uint64(1))))


@njit(cache=True)
def weierstrass_sum(x, d, b, h, terms):
    """W over the first d coordinates of x, accumulated in x's precision (float32 or float64);
    GPU kernels compile this same function (gpu/device.py)."""
    one = x[0] * 0 + 1
    total = x[0] * 0
    for i in range(d):
        bk = one
        s = x[0] * 0
        for k in range(1, terms + 1):
            bk = bk * b
            s += bk ** (-h) * math.sin(bk * x[i])
        total += s
    return total


@njit(cache=True)
def weierstrass(x, b, h, terms):
    return weierstrass_sum(x, x.shape[0], b, h, terms)


@njit(cache=True)
def neighbour(x, key, t, count, radius, out):
    """Neighbour t: a point of crown t, clipped to [-1, 1]^d (into out[:d])."""
    d = x.shape[0]
    norm = 0.0
    for c in range(d):
        g = 2.0 * unit_random(key, t, c) - 1.0
        out[c] = g
        norm += g * g
    norm = math.sqrt(norm)
    if norm == 0.0:
        norm = 1.0
    r = radius * (t + unit_random(key, t, d)) / count
    for c in range(d):
        v = x[c] + r * out[c] / norm
        out[c] = min(1.0, max(-1.0, v))


def _crown_deltas(x, key, count, radius, b, h, terms, current, lo, hi, out):
    d = x.shape[0]
    for t in prange(lo, hi):
        y = np.empty(d, dtype=x.dtype)
        neighbour(x, key, t, count, radius, y)
        out[t] = weierstrass(y, b, h, terms) - current


crown_deltas, crown_deltas_parallel = serial_and_parallel(_crown_deltas)


class Crowns(Neighbourhood):
    name = "crowns"
    rows_alone = True  # a row is one neighbour

    def __init__(self, problem):
        super().__init__(problem)
        self.size = problem.neighbours
        self.radius = 1.0 / problem.d
        self._current = (None, None)  # (solution key, W there): the row slices of one evaluation share it

    def evaluate(self, solution, state, out, parallel=False):
        self.evaluate_rows(solution, 0, self.size, out, parallel)

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        pr = self.problem
        key = solution_key(solution, pr.seed)
        if self._current[0] != key:
            self._current = (key, pr.objective_raw(solution))
        fn = crown_deltas_parallel if parallel else crown_deltas
        fn(solution, key, self.size, self.radius, pr.b_value(), pr.h_value(), pr.terms, self._current[1], lo, hi,
           out)

    def perform(self, solution, move):
        key = solution_key(solution, self.problem.seed)
        y = np.empty_like(solution)
        neighbour(solution, key, move, self.size, self.radius, y)
        solution[:] = y

    def delta_dtype(self):
        return self.problem.dtype

    def default_tenure(self, n):
        return 0, 0

    def tabu_memory(self):
        return np.zeros(1, dtype=np.int64)

    def tabu_flags(self, solution, memory, it, flags):
        flags[:] = False

    def tabu_record(self, solution_before, move, memory, until):
        return None


class Weierstrass(Problem):
    kind = "weierstrass"
    integer = False
    neighbourhoods = {"crowns": Crowns}
    default_neighbourhood = "crowns"
    parameters = (
        Param("precision", int, "float bits of the search (32 or 64)", default=64, choices=(32, 64)),
        Param("neighbours", int, "neighbours per iteration (points in the crowns; each delta is held, so at most "
              "2^24)", default=10000, low=1, high=1 << 24),
        Param("b", float, "the function's base b", default=2.0, low=1, open_low=True),
        Param("h", float, "the function's exponent h", default=0.25, low=0, high=1, open_low=True, open_high=True),
        Param("terms", int, "terms K of the inner sum (at most where b^(K-1) pi overflows the floats)", default=100,
              low=1, high=100_000),
    )

    def __init__(self, d, b=2.0, h=0.25, terms=100, neighbours=10000, precision=64, seed=1, name=None):
        super().__init__(name or f"weierstrass-{d}")
        if d < 1:
            raise LsbenchError(f"weierstrass: dimension must be >= 1, got {d}")
        if precision not in (32, 64):
            raise LsbenchError(f"--param precision: 32 or 64, got {precision}")
        if neighbours < 1:
            raise LsbenchError(f"--param neighbours: must be >= 1, got {neighbours}")
        self.d = self.size = int(d)
        self.b, self.h, self.terms = float(b), float(h), int(terms)
        self.neighbours = int(neighbours)
        self.precision = int(precision)
        self.dtype = np.float64 if precision == 64 else np.float32
        self.seed = int(seed)
        most = self.most_terms()
        if self.terms > most:
            raise LsbenchError(f"--param terms={self.terms}: b^k pi overflows float{precision} past k = {most - 1} "
                               f"(b = {self.b:g}): at most {most} terms")
        if self.d * self.terms > MOST_SINES:
            raise LsbenchError(f"--param terms={self.terms}: a point of {self.d} dimensions takes {self.d * self.terms:,} "
                               f"sines, at most {MOST_SINES:,} (about a second on a core: Ctrl-C is answered between "
                               f"points); at most {MOST_SINES // self.d} terms here")

    def most_terms(self):
        """The terms K whose largest frequency b^(K-1) pi stays finite in the search's floats."""
        return 1 + int(math.log(float(np.finfo(self.dtype).max) / math.pi) / math.log(self.b))

    @classmethod
    def from_name(cls, name, **kw):
        mt = re.fullmatch(r"weierstrass-(\d+)", name)
        return cls(int(mt.group(1)), name=name, **kw) if mt else None

    def b_value(self):
        return self.dtype(self.b)

    def h_value(self):
        return self.dtype(self.h)

    def objective_raw(self, x):
        return weierstrass(np.asarray(x, dtype=self.dtype), self.b_value(), self.h_value(), self.terms)

    def objective(self, solution):
        return float(self.objective_raw(solution))

    def random_solution(self, rng_state):
        return np.array([2.0 * rng.uniform(rng_state) - 1.0 for _ in range(self.d)], dtype=self.dtype)

    def check_solution(self, solution):
        s = np.asarray(solution, dtype=np.float64)
        if s.shape != (self.d,) or not np.all(np.abs(s) <= 1.0):
            raise LsbenchError(f"solution: expected {self.d} reals in [-1, 1]")

    def solution_from_list(self, values):
        return np.asarray(values, dtype=self.dtype)

    def describe(self):
        return {"d": self.d, "b": self.b, "h": self.h, "terms": self.terms,
                "neighbours": self.neighbours, "precision": self.precision}
