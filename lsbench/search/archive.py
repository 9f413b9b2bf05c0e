"""The Pareto archive of PLS: mutually non-dominated objective vectors (all minimised), each with
its solution, in a fixed order that every backend keeps the same.

Insertion rule (Paquete et al.; Luong et al.'s "archiving in a general way", each candidate
compared with every member): a candidate enters unless a member weakly dominates it (<= in every
objective, so of two equal vectors the one that came first stays); the members it strictly
dominates leave. One neighbourhood's candidates are inserted as if one by one, in move order:
the host does exactly that (`insert_batch`), the GPU computes the same outcome in parallel
(lsbench.gpu.iteration.archive). The outcome is a change: which old positions left and which moves entered
(in move order, with their vectors); members that stay keep their order and entrants are appended.
"""
import numpy as np
from numba import njit

ACCEPT = {"non-dominated": 0, "dominating": 1}


WIDTH = 3  # objectives per vector (the three-objective flow shop)


@njit(cache=True, inline="always")
def weakly_dominates(a0, a1, a2, b0, b1, b2):
    """a is no worse than b in every objective (minimisation). Scalars, so that the GPU filter
    (lsbench.gpu.iteration.archive) compiles this very source for registers and shared memory."""
    return a0 <= b0 and a1 <= b1 and a2 <= b2


@njit(cache=True, inline="always")
def dominates(a0, a1, a2, b0, b1, b2):
    """a is no worse than b everywhere and better somewhere (Pareto dominance)."""
    return a0 <= b0 and a1 <= b1 and a2 <= b2 and (a0 < b0 or a1 < b1 or a2 < b2)


@njit(cache=True)
def insert_batch(members, vectors, accept, current):
    """Insert the rows of `vectors` (one per move, in move order) into the archive `members`.

    accept=0 (non-dominated): every row is a candidate; accept=1 (dominating): only rows that
    dominate `current`. Returns (left, entered): a mask over the old members, and the move
    indices that are members at the end, in move order."""
    count = members.shape[0]
    size = vectors.shape[0]
    pool = np.empty((count + size, WIDTH), dtype=np.int64)  # old members, then entrants
    origin = np.empty(count + size, dtype=np.int64)
    alive = np.zeros(count + size, dtype=np.bool_)
    pool[:count] = members
    origin[:count] = -1
    alive[:count] = True
    used = count
    for t in range(size):
        v0, v1, v2 = vectors[t, 0], vectors[t, 1], vectors[t, 2]
        if accept == 1 and not dominates(v0, v1, v2, current[0], current[1], current[2]):
            continue
        rejected = False
        for q in range(used):
            if alive[q] and weakly_dominates(pool[q, 0], pool[q, 1], pool[q, 2], v0, v1, v2):
                rejected = True
                break
        if rejected:
            continue
        for q in range(used):
            if alive[q] and dominates(v0, v1, v2, pool[q, 0], pool[q, 1], pool[q, 2]):
                alive[q] = False
        pool[used] = vectors[t]
        origin[used] = t
        alive[used] = True
        used += 1
    left = ~alive[:count]
    entered = np.empty(used - count, dtype=np.int64)
    e = 0
    for q in range(count, used):
        if alive[q]:
            entered[e] = origin[q]
            e += 1
    return left, entered[:e]


class ParetoArchive:
    """Vectors (an int64 array, one row per member), solutions and visited flags, in archive order."""

    def __init__(self):
        self.vectors = np.empty((0, WIDTH), dtype=np.int64)
        self.solutions = []
        self.visited = []

    def __len__(self):
        return len(self.solutions)

    def start(self, solution, vector):
        """A new archive holding one (unvisited) solution."""
        self.vectors = np.asarray(vector, dtype=np.int64).reshape(1, -1).copy()
        self.solutions = [solution.copy()]
        self.visited = [False]

    def apply(self, left, entered, vectors, make_solution):
        """Drop the members `left` marks; append the entrants (their vectors, and make_solution(move))."""
        keep = np.flatnonzero(~np.asarray(left, dtype=bool))
        self.solutions = [self.solutions[q] for q in keep] + [make_solution(int(m)) for m in entered]
        self.visited = [self.visited[q] for q in keep] + [False] * len(entered)
        self.vectors = np.concatenate([self.vectors[keep], np.asarray(vectors, dtype=np.int64).reshape(-1, WIDTH)])

    def unvisited(self):
        return [q for q, seen in enumerate(self.visited) if not seen]

    def merge(self, other):
        """Insert another archive's members (a finished restart's) in their order."""
        left, entered = insert_batch(self.vectors, other.vectors, ACCEPT["non-dominated"], other.vectors[0])
        self.apply(left, entered, other.vectors[entered], lambda q: other.solutions[q])
