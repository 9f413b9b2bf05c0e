"""Max-Cut: split a weighted graph's vertices in two sides so that the edges across weigh most.

lsbench minimises, so the objective is minus the cut. A solution is a 0/1 side per vertex. The
one-flip neighbourhood moves one vertex to the other side; the incremental state is the gain
vector (each flip's delta), kept in O(degree) per applied move. Instances: the rudy format of the
G-set graphs, `n m` then m lines `i j w` (vertices 1..n).
"""
import os
from pathlib import Path

import numpy as np
from numba import njit

from lsbench import rng
from lsbench.errors import InstanceFormatError, LsbenchError
from lsbench.problems.base import Neighbourhood, Problem, check_bound, read_numbers, sha256_of


@njit(cache=True)
def cut_weight(indptr, indices, weights, side):
    """The weight of the edges across (each edge counted once, from its lower end)."""
    total = 0
    for v in range(side.shape[0]):
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if u > v and side[u] != side[v]:
                total += weights[e]
    return total


@njit(cache=True)
def flip_deltas(indptr, indices, weights, side, lo, hi, out):
    """out[v] for v in lo..hi-1: the objective's change (minus the cut's) when v changes side."""
    for v in range(lo, hi):
        d = 0
        for e in range(indptr[v], indptr[v + 1]):
            d += weights[e] if side[indices[e]] == side[v] else -weights[e]
        out[v] = -d


@njit(cache=True)
def flip(indptr, indices, weights, side, gains, v):
    """v changes side; each neighbour's gain and v's own follow in O(degree(v))."""
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        gains[u] += 2 * weights[e] if side[u] == side[v] else -2 * weights[e]
    gains[v] = -gains[v]
    side[v] = 1 - side[v]


class OneFlip(Neighbourhood):
    """Move one vertex to the other side: n moves; tabu attribute: the vertex."""

    name = "flip"

    def __init__(self, problem):
        super().__init__(problem)
        self.size = problem.n

    def state(self, solution, parallel=False):
        gains = np.empty(self.size, dtype=np.int64)
        p = self.problem
        flip_deltas(p.indptr, p.indices, p.weights, solution, 0, self.size, gains)
        return (gains,)

    def evaluate(self, solution, state, out, parallel=False):
        out[:] = state[0]

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        p = self.problem
        flip_deltas(p.indptr, p.indices, p.weights, solution, lo, hi, out)

    def perform(self, solution, move):
        solution[move] = 1 - solution[move]

    def apply(self, solution, state, move, parallel=False):
        p = self.problem
        flip(p.indptr, p.indices, p.weights, solution, state[0], int(move))

    def default_tenure(self, n):
        return max(1, n // 100), max(2, n // 50)

    def tabu_memory(self):
        return np.full(self.size, -1, dtype=np.int64)

    def tabu_flags(self, solution, memory, it, flags):
        flags[:] = memory >= it

    def tabu_record(self, solution_before, move, memory, until):
        memory[move] = until


def gset_manifest():
    """The G-set graphs lsbench can fetch and name (entry point lsbench.instances): names, sources,
    sha256 and best-known values (minus Benlic & Hao's best cuts)."""
    return Path(__file__).resolve().parent / "gset.csv"


class MaxCut(Problem):
    kind = "maxcut"
    instance_folder, instance_extension = "gset", ".txt"  # where `lsbench instances fetch` puts a graph
    neighbourhoods = {"flip": OneFlip}
    default_neighbourhood = "flip"

    def __init__(self, n, edges, name="maxcut", source=None, sha256=None):
        super().__init__(name, source, sha256)
        self.n = self.size = n
        i, j, w = edges[:, 0], edges[:, 1], edges[:, 2]
        ends, others, weights = np.concatenate([i, j]), np.concatenate([j, i]), np.concatenate([w, w])
        order = np.argsort(ends, kind="stable")
        self.indices, self.weights = others[order].astype(np.int64), weights[order].astype(np.int64)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(ends, minlength=n))]).astype(np.int64)
        self.m = edges.shape[0]

    @classmethod
    def from_file(cls, path, name=None, **params):
        nums = read_numbers(path)
        if nums.size < 2 or nums[0] < 2 or nums[1] < 1:
            raise InstanceFormatError(path, "expected 'n m' (n >= 2 vertices, m >= 1 edges), then m lines 'i j w'")
        n, m = int(nums[0]), int(nums[1])
        if nums.size != 2 + 3 * m:
            raise InstanceFormatError(path, f"expected {m} edge lines 'i j w', found {(nums.size - 2) / 3:g}")
        edges = nums[2:].reshape(m, 3)
        bad = np.flatnonzero((edges[:, 0] < 1) | (edges[:, 0] > n) | (edges[:, 1] < 1) | (edges[:, 1] > n)
                             | (edges[:, 0] == edges[:, 1]))
        if bad.size:
            raise InstanceFormatError(path, f"edge line {bad[0] + 1}: vertices must be two different ones of 1..{n}")
        check_bound(int(np.abs(edges[:, 2]).sum()), path, "the total edge weight")
        edges = edges - np.array([1, 1, 0])
        return cls(n, edges, name or os.path.basename(path).rsplit(".", 1)[0], str(path), sha256_of(path))

    def objective(self, solution):
        return -int(cut_weight(self.indptr, self.indices, self.weights, np.asarray(solution, dtype=np.int64)))

    def exact_objective(self, solution):
        side = [int(s) for s in solution]
        return -sum(int(w) for v in range(self.n) for u, w in zip(self.indices[self.indptr[v]:self.indptr[v + 1]],
                                                                   self.weights[self.indptr[v]:self.indptr[v + 1]])
                    if u > v and side[u] != side[v])

    def random_solution(self, rng_state):
        return rng.bits(rng_state, self.n).astype(np.int64)

    def check_solution(self, solution):
        s = np.asarray(solution)
        if s.shape != (self.n,) or not np.isin(s, (0, 1)).all():
            raise LsbenchError(f"solution: expected a 0/1 side for each of the {self.n} vertices")

    def describe(self):
        return {"n": self.n, "edges": self.m, "total weight": int(self.weights.sum()) // 2}
