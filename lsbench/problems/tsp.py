"""Travelling salesman (TSPLIB symmetric files, and Janiak et al.'s random asymmetric instances).

A solution is the tour as a permutation of the cities. Neighbourhoods: swap (exchange the cities
at positions i < j) and 2-opt (reverse positions i..j), both O(1) per move; 2-opt on asymmetric
distances uses per-iteration prefix sums of the forward and backward path lengths.
"""
import math
import os

import numpy as np
from numba import float64, int64, njit, prange
from numba.experimental import jitclass

from .. import rng
from ..rounded import rn_add, rn_div, rn_mul, rn_sqrt
from ..errors import InstanceFormatError, LsbenchError
from ..neighborhoods import index_to_pair, pair_count, pair_row_starts
from .base import serial_and_parallel, Neighbourhood, Problem, check_permutation, read_text, sha256_of
from .permutation import PositionSwapMoves

DENSE_UP_TO = 20000  # cities of a dense int32 matrix (1.6 GB); beyond, coordinate instances compute distances


# ---------------------------------------------------------------------------------------------
# TSPLIB reader
# ---------------------------------------------------------------------------------------------
def _geo_radians(x):
    deg = np.trunc(x)
    return 3.141592 * (deg + 5.0 * (x - deg) / 3.0) / 180.0


DISTANCE_LIMIT = 1 << 31  # distances are stored in 32 bits (the GPU reads them so too)


COORDINATE_BOUND = 2.0 ** 31  # |x|, |y| below this: every squared difference is exact enough and finite
GEO_BOUNDS = (("latitude", 90.0), ("longitude", 180.0))  # TSPLIB's DDD.MM degrees


def check_coordinate_range(kind, xy, path, ids):
    """Coordinates a distance can be computed from: below 2^31 in magnitude (beyond, squares lose the
    integer part or overflow to inf), and for GEO a latitude within +-90 and a longitude within +-180
    degrees; otherwise one error naming the first node outside (its id in the file, `ids`)."""
    bounds = GEO_BOUNDS if kind == "GEO" else (("coordinate", COORDINATE_BOUND), ("coordinate", COORDINATE_BOUND))
    for axis, (what, bound) in enumerate(bounds):
        outside = np.flatnonzero(np.abs(xy[:, axis]) > bound if kind == "GEO" else np.abs(xy[:, axis]) >= bound)
        if outside.size:
            node, value = int(ids[outside[0]]), xy[outside[0], axis]
            limit = f"+-{bound:g}" if kind == "GEO" else "+-2^31"
            raise InstanceFormatError(path, f"NODE_COORD_SECTION: node {node}: {what} {value:g} is beyond {limit}")


def coords_to_matrix(kind, xy, path, ids):
    """TSPLIB distance functions (Reinelt, TSPLIB95 section 2), row by row, from coordinates within
    range (`ids`: the nodes' ids, for the error line)."""
    n = xy.shape[0]
    if not np.isfinite(xy).all():
        raise InstanceFormatError(path, "NODE_COORD_SECTION: non-finite coordinate")
    check_coordinate_range(kind, xy, path, ids)
    x, y = np.ascontiguousarray(xy[:, 0]), np.ascontiguousarray(xy[:, 1])
    if kind in COORDINATE_RULES and n > DENSE_UP_TO:
        d = CoordinateDistances(COORDINATE_RULES[kind], x, y)
        check_distances(np.array([d.longest_bound()]), path)
        return d
    d = np.empty((n, n), dtype=np.int32)
    if kind in COORDINATE_RULES:
        check_distances(np.array([coordinate_matrix(COORDINATE_RULES[kind], x, y, d)]), path)
        return d
    if kind != "GEO":
        raise InstanceFormatError(path, f"EDGE_WEIGHT_TYPE {kind} is not supported "
                                        "(EUC_2D, CEIL_2D, ATT, GEO, EXPLICIT are)")
    lat, lon = _geo_radians(x), _geo_radians(y)
    for i in range(n):
        q1 = np.cos(lon[i] - lon)
        q2 = np.cos(lat[i] - lat)
        q3 = np.cos(lat[i] + lat)
        row = (6378.388 * np.arccos(np.clip(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1, 1)) + 1.0).astype(np.int64)
        row[i] = 0
        check_distances(row, path)
        d[i] = row
    return d


def check_distances(values, path):
    """Distances fit the 32-bit matrix, or the instance is refused (never a wrap-around)."""
    if values.size and (values.min() < 0 or values.max() >= DISTANCE_LIMIT):
        bad = values.min() if values.min() < 0 else values.max()
        raise InstanceFormatError(path, f"distance {bad} outside 0..2^31-1 (lsbench keeps distances in 32 bits)")


def explicit_to_matrix(fmt, values, n, path):
    d = np.zeros((n, n), dtype=np.int64)
    counts = {"FULL_MATRIX": n * n, "UPPER_ROW": n * (n - 1) // 2, "LOWER_ROW": n * (n - 1) // 2,
              "UPPER_DIAG_ROW": n * (n + 1) // 2, "LOWER_DIAG_ROW": n * (n + 1) // 2}
    if fmt not in counts:
        raise InstanceFormatError(path, f"EDGE_WEIGHT_FORMAT {fmt} is not supported")
    if values.size != counts[fmt]:
        raise InstanceFormatError(path, f"EDGE_WEIGHT_SECTION: {fmt} of dimension {n} needs "
                                        f"{counts[fmt]} numbers, found {values.size}")
    check_distances(values, path)
    if fmt == "FULL_MATRIX":
        d = values.reshape(n, n)
    else:
        k = 0
        for i in range(n):
            if fmt == "UPPER_ROW":
                js = range(i + 1, n)
            elif fmt == "LOWER_ROW":
                js = range(0, i)
            elif fmt == "UPPER_DIAG_ROW":
                js = range(i, n)
            else:
                js = range(0, i + 1)
            for j in js:
                d[i, j] = d[j, i] = values[k]
                k += 1
    return d.astype(np.int32)


def read_tsplib(path):
    """Parse a TSPLIB .tsp file into (name, distance matrix, edge weight type, coordinates or None)."""
    lines = read_text(path).splitlines()
    spec = {}
    section = None
    data = {"NODE_COORD_SECTION": [], "EDGE_WEIGHT_SECTION": []}
    for line in lines:
        s = line.strip()
        if not s or s == "EOF":
            if s == "EOF":
                break
            continue
        head = s.split(":")[0].strip().upper() if ":" in s else s.split()[0].upper()
        if head in ("NODE_COORD_SECTION", "EDGE_WEIGHT_SECTION", "DISPLAY_DATA_SECTION",
                    "TOUR_SECTION", "DEMAND_SECTION", "FIXED_EDGES_SECTION"):
            section = head
            continue
        if ":" in s and not s[0].isdigit() and not s[0] in "-+.":
            key, _, val = s.partition(":")
            spec[key.strip().upper()] = val.strip()
            section = None
            continue
        if section in data:
            data[section].extend(s.split())
    try:
        n = int(spec["DIMENSION"])
    except (KeyError, ValueError):
        raise InstanceFormatError(path, "missing or non-integer DIMENSION")
    if n < 5:
        raise InstanceFormatError(path, f"DIMENSION {n}: lsbench needs at least 5 cities")
    kind = spec.get("EDGE_WEIGHT_TYPE", "").upper()
    if spec.get("TYPE", "TSP").upper() not in ("TSP", "ATSP"):
        raise InstanceFormatError(path, f"TYPE {spec['TYPE']} is not supported (lsbench reads TSP and ATSP files)")
    if kind not in (*COORDINATE_RULES, "GEO", "EXPLICIT"):
        raise InstanceFormatError(path, f"EDGE_WEIGHT_TYPE {kind or '(none)'} is not supported "
                                        "(EUC_2D, CEIL_2D, ATT, GEO, EXPLICIT are)")
    if n > DENSE_UP_TO and kind not in COORDINATE_RULES:
        raise InstanceFormatError(path, f"DIMENSION {n}: {kind or 'EXPLICIT'} distances beyond {DENSE_UP_TO:,} cities "
                                        "would need a dense matrix of more than 1.6 GB (EUC_2D, CEIL_2D and ATT "
                                        "instances of any size are computed from their coordinates)")
    try:
        if kind == "EXPLICIT":
            floats = np.array([float(t) for t in data["EDGE_WEIGHT_SECTION"]], dtype=np.float64)
            if not np.isfinite(floats).all() or (np.abs(floats) >= DISTANCE_LIMIT).any():
                raise InstanceFormatError(path, "EDGE_WEIGHT_SECTION: a weight is non-finite or beyond 32 bits")
            fractional = floats[floats != np.floor(floats)]
            if fractional.size:  # truncated, they would change the instance silently
                raise InstanceFormatError(path, f"EDGE_WEIGHT_SECTION: weight {fractional[0]:g} is not an integer "
                                                "(lsbench's TSP tours are integer sums)")
            values = floats.astype(np.int64)
            d = explicit_to_matrix(spec.get("EDGE_WEIGHT_FORMAT", "").upper(), values, n, path)
        else:
            nums = np.array([float(t) for t in data["NODE_COORD_SECTION"]], dtype=np.float64)
            if nums.size != 3 * n:
                raise InstanceFormatError(path, f"NODE_COORD_SECTION: expected {n} lines 'id x y', "
                                                f"found {nums.size} numbers")
            ids = nums.reshape(n, 3)[:, 0]
            if not np.array_equal(np.sort(ids), np.arange(1, n + 1)):
                seen = np.unique(ids, return_counts=True)
                twice = seen[0][seen[1] > 1]
                raise InstanceFormatError(path, f"NODE_COORD_SECTION: node {int(twice[0])} appears twice" if twice.size
                                          else "NODE_COORD_SECTION: node ids are not 1..DIMENSION")
            d = coords_to_matrix(kind, nums.reshape(n, 3)[:, 1:], path, ids)
    except ValueError as e:
        raise InstanceFormatError(path, f"non-numeric value in data section ({e})")
    xy = None if kind == "EXPLICIT" else nums.reshape(n, 3)[:, 1:]
    return spec.get("NAME", os.path.basename(path).rsplit(".", 1)[0]), d, kind, xy


# ---------------------------------------------------------------------------------------------
# Distances from coordinates, one definition for the matrix and the GPU's on-chip tours
# ---------------------------------------------------------------------------------------------
ROUNDED, CEILING, PSEUDO_EUCLIDEAN = 0, 1, 2  # EUC_2D, CEIL_2D, ATT
COORDINATE_RULES = {"EUC_2D": ROUNDED, "CEIL_2D": CEILING, "ATT": PSEUDO_EUCLIDEAN}


@njit(cache=True)
def coordinate_distance(rule, xa, ya, xb, yb):
    """TSPLIB's distance in its own double arithmetic (TSPLIB95 2.1-2.2, each operation rounded on
    its own: lsbench.rounded): ROUNDED nint(r), CEILING ceil(r), PSEUDO_EUCLIDEAN the least integer
    not below r / sqrt(10) as TSPLIB rounds it; r the Euclidean distance."""
    dx = xa - xb
    dy = ya - yb
    s = rn_add(rn_mul(dx, dx), rn_mul(dy, dy))
    if rule == PSEUDO_EUCLIDEAN:
        r = rn_sqrt(rn_div(s, 10.0))
        t = np.int64(math.floor(rn_add(r, 0.5)))
        return t + 1 if t < r else t
    r = rn_sqrt(s)
    if rule == ROUNDED:
        return np.int64(math.floor(rn_add(r, 0.5)))
    return np.int64(math.ceil(r))


@jitclass([("rule", int64), ("x", float64[::1]), ("y", float64[::1])])
class CoordinateDistances:
    """The distances of an instance too large for a dense matrix, computed from its coordinates on
    each read: compiled code reads d[a, b] from it as from the matrix (coordinate_distance)."""

    def __init__(self, rule, x, y):
        self.rule = rule
        self.x = x
        self.y = y

    def __getitem__(self, ab):
        a, b = ab
        return coordinate_distance(self.rule, self.x[a], self.y[a], self.x[b], self.y[b])

    def longest_bound(self):
        """The distance across the coordinates' bounding box: no pair is farther."""
        return coordinate_distance(self.rule, self.x.min(), self.y.min(), self.x.max(), self.y.max()) + 1


@njit(cache=True)
def coordinate_matrix(rule, x, y, d):
    """d[a, b] = coordinate_distance for every pair; the largest."""
    n = x.shape[0]
    longest = np.int64(0)
    for a in range(n):
        for b in range(n):
            v = coordinate_distance(rule, x[a], y[a], x[b], y[b]) if a != b else np.int64(0)
            d[a, b] = min(v, DISTANCE_LIMIT - 1)
            longest = max(longest, v)
    return longest


# ---------------------------------------------------------------------------------------------
# Objective and neighbourhoods
# ---------------------------------------------------------------------------------------------
@njit(cache=True)
def tour_length(d, t):
    n = t.shape[0]
    s = 0
    for k in range(n):
        s += d[t[k], t[(k + 1) % n]]
    return s


@njit(cache=True, inline="always")
def city_after_swap(t, q, i, j):
    if q == i:
        return t[j]
    if q == j:
        return t[i]
    return t[q]


@njit(cache=True)
def city_swap_delta(d, t, i, j):
    """Exact delta of exchanging the cities at positions i and j: edges touching them only."""
    n = t.shape[0]
    i = np.int64(i)  # prange indices are unsigned; mixed with signed ints they would become floats
    j = np.int64(j)
    e0 = (i - 1 + n) % n
    e1 = i
    e2 = (j - 1 + n) % n
    e3 = j
    delta = 0
    for which in range(4):
        e = e0 if which == 0 else (e1 if which == 1 else (e2 if which == 2 else e3))
        dup = False
        for prev in range(which):
            ep = e0 if prev == 0 else (e1 if prev == 1 else e2)
            if ep == e:
                dup = True
        if not dup:
            f = (e + 1) % n
            delta += d[city_after_swap(t, e, i, j), city_after_swap(t, f, i, j)] - d[t[e], t[f]]
    return delta


def _swap_deltas(d, t, lo, hi, out):
    """Row i's deltas: four removed and four added edges when i and j are not neighbours on the
    cycle (row i's half read once), city_swap_delta's general rule for the neighbours."""
    n = t.shape[0]
    for i in prange(lo, hi):
        i = np.int64(i)
        base = i * (2 * n - i - 1) // 2 - i - 1
        a = t[(i - 1 + n) % n]
        ti = t[i]
        b = t[i + 1]
        around_i = d[a, ti] + d[ti, b]
        for j in range(i + 1, n):
            if j == i + 1 or (i == 0 and j == n - 1):
                out[base + j] = city_swap_delta(d, t, i, j)
            else:
                c = t[j - 1]
                tj = t[j]
                e = t[(j + 1) % n]
                out[base + j] = (d[a, tj] + d[tj, b] + d[c, ti] + d[ti, e]) - around_i - d[c, tj] - d[tj, e]


swap_deltas, swap_deltas_parallel = serial_and_parallel(_swap_deltas)


@njit(cache=True)
def tour_edges(d, t):
    """edge[k] = d(t[k], t[k+1 mod n]): the tour's own edges, read coalesced by GPU threads."""
    n = t.shape[0]
    e = np.empty(n, dtype=np.int64)
    for k in range(n):
        e[k] = d[t[k], t[(k + 1) % n]]
    return e


@njit(cache=True)
def path_prefix(d, t):
    """fwd[k] = sum of d(t[q], t[q+1]) for q < k, bwd[k] likewise for d(t[q+1], t[q])."""
    n = t.shape[0]
    fwd = np.zeros(n, dtype=np.int64)
    bwd = np.zeros(n, dtype=np.int64)
    for k in range(n - 1):
        fwd[k + 1] = fwd[k] + d[t[k], t[k + 1]]
        bwd[k + 1] = bwd[k] + d[t[k + 1], t[k]]
    return fwd, bwd


@njit(cache=True, inline="always")
def two_opt_delta(d, t, fwd, bwd, i, j):
    """Delta of reversing positions i..j (i < j), exact for asymmetric distances."""
    n = t.shape[0]
    if i == 0 and j == n - 1:  # reversing the whole cycle: only the direction changes
        return (bwd[n - 1] + d[t[0], t[n - 1]]) - (fwd[n - 1] + d[t[n - 1], t[0]])
    prev = t[(i - 1 + n) % n]
    nxt = t[(j + 1) % n]
    return (d[prev, t[j]] + d[t[i], nxt] - d[prev, t[i]] - d[t[j], nxt]
            + (bwd[j] - bwd[i]) - (fwd[j] - fwd[i]))


def _two_opt_deltas(d, t, fwd, bwd, lo, hi, out):
    n = t.shape[0]
    for i in prange(lo, hi):
        base = i * (2 * n - i - 1) // 2 - i - 1
        for j in range(i + 1, n):
            out[base + j] = two_opt_delta(d, t, fwd, bwd, i, j)


two_opt_deltas, two_opt_deltas_parallel = serial_and_parallel(_two_opt_deltas)


@njit(cache=True)
def reverse_segment(t, i, j):
    while i < j:
        t[i], t[j] = t[j], t[i]
        i += 1
        j -= 1


@njit(cache=True)
def two_opt_tabu_flags(t, expiry, it, flags):
    """Reversal (i, j) is tabu if it adds back an edge removed less than tenure iterations ago."""
    n = t.shape[0]
    k = 0
    for i in range(n - 1):
        prev = t[(i - 1 + n) % n]
        for j in range(i + 1, n):
            nxt = t[(j + 1) % n]
            flags[k] = expiry[prev, t[j]] >= it or expiry[t[i], nxt] >= it
            k += 1


@njit(cache=True)
def two_opt_tabu_record(t, i, j, expiry, until):
    n = t.shape[0]
    prev = t[(i - 1 + n) % n]
    nxt = t[(j + 1) % n]
    expiry[prev, t[i]] = until
    expiry[t[j], nxt] = until


class _TspNeighbourhood(Neighbourhood):
    rows_alone = True  # (evaluate is evaluate_rows over every row)

    def __init__(self, problem):
        super().__init__(problem)
        self.n = problem.n
        self.size = pair_count(self.n)

    def tabu_memory(self):
        return np.full((self.n, self.n), -1, dtype=np.int64)

    def default_tenure(self, n):
        return 7, 7  # Janiak et al.

    def row_starts(self):
        return pair_row_starts(self.n)

    def evaluate(self, solution, state, out, parallel=False):
        self.evaluate_rows(solution, 0, self.n - 1, out, parallel)


class TspSwap(PositionSwapMoves, _TspNeighbourhood):
    name = "swap"

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        (swap_deltas_parallel if parallel else swap_deltas)(self.problem.d, solution, lo, hi, out)


class TspTwoOpt(_TspNeighbourhood):
    name = "2opt"

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        fwd, bwd = path_prefix(self.problem.d, solution)
        (two_opt_deltas_parallel if parallel else two_opt_deltas)(self.problem.d, solution, fwd, bwd, lo, hi, out)

    def perform(self, solution, move):
        i, j = index_to_pair(move, self.n)
        reverse_segment(solution, i, j)

    def tabu_flags(self, solution, memory, it, flags):
        two_opt_tabu_flags(solution, memory, it, flags)

    def tabu_record(self, solution_before, move, memory, until):
        i, j = index_to_pair(move, self.n)
        two_opt_tabu_record(solution_before, i, j, memory, until)


class TSP(Problem):
    kind = "tsp"
    objective_floor = 0  # a sum of non-negative terms (checked at load)
    neighbourhoods = {"swap": TspSwap, "2opt": TspTwoOpt}
    default_neighbourhood = "2opt"

    def __init__(self, d, name="tsp", source=None, sha256=None, weight_type="EXPLICIT", generator=None,
                 coordinates=None):
        super().__init__(name, source, sha256)
        self.coordinates = coordinates  # the file's (x, y) per city, None for explicit weights
        self.dense = isinstance(d, np.ndarray)  # else CoordinateDistances (beyond DENSE_UP_TO cities)
        self.d = np.ascontiguousarray(d, dtype=np.int32) if self.dense else d
        self.n = self.d.shape[0] if self.dense else len(coordinates)
        self.size = self.n
        self.weight_type = weight_type
        self.generator = generator
        self.symmetric = bool(np.array_equal(self.d, self.d.T)) if self.dense else True

    def __getstate__(self):  # (a CoordinateDistances travels as its fields)
        state = dict(self.__dict__)
        if not self.dense:
            state["d"] = (self.d.rule, self.d.x, self.d.y)
        return state

    def __setstate__(self, state):
        if not state["dense"]:
            state["d"] = CoordinateDistances(*state["d"])
        self.__dict__.update(state)

    def matrix(self, what):
        """The dense distance matrix, for code that copies it (`what` reads it); one error line
        where the instance has none."""
        if not self.dense:
            raise LsbenchError(f"{self.name}: {what} reads a dense distance matrix, and {self.n:,} cities have none "
                               f"({self.n ** 2 * 4 / 2 ** 30:.1f} GiB; lsbench keeps one up to {DENSE_UP_TO:,} "
                               "cities): run 2-opt hc or tabu on cpu, cpu-parallel or gpu-resident")
        return self.d

    @classmethod
    def from_file(cls, path, name=None):
        fname, d, kind, xy = read_tsplib(path)
        return cls(d, name or os.path.basename(path).rsplit(".", 1)[0], source=str(path),
                   sha256=sha256_of(path), weight_type=kind, coordinates=xy)

    @classmethod
    def random_asymmetric(cls, name, n, seed):
        """Janiak et al.: d_ij uniform in [1, 1000] for i != j, from lsbench's portable RNG."""
        st = rng.new_state(seed)
        d = np.zeros((n, n), dtype=np.int32)
        for i in range(n):
            for j in range(n):
                if i != j:
                    d[i, j] = 1 + rng.below(st, 1000)
        return cls(d, name, generator=f"uniform[1,1000] asymmetric(n={n}, seed={seed})")

    def objective(self, solution):
        return int(tour_length(self.d, np.asarray(solution, dtype=np.int64)))

    def exact_objective(self, solution):
        t = np.asarray(solution, dtype=np.int64)
        if not self.dense:  # each edge below 2^31 (checked at load): a sum of n of them fits 64 bits
            return int(tour_length(self.d, t))
        return sum(int(v) for v in self.d[t, np.roll(t, -1)])

    def random_solution(self, rng_state):
        return rng.permutation(rng_state, self.n)

    def check_solution(self, solution):
        check_permutation(solution, self.n)

    def describe(self):
        return {"n (cities)": self.n, "edge weight type": self.weight_type,
                "symmetric": self.symmetric, "d[0, 1:10]": [int(self.d[0, b]) for b in range(1, min(10, self.n))],
                "generator": self.generator or "file"}
