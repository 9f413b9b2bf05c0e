"""The TSP 2-opt adapter of the resident local search engine (gpu/engine/local_search.py): the
tour's cities as coordinates on chip, distances computed, not read, so the scan is compute-bound.

On chip, for the block's search: X[k], Y[k], the coordinates of the city at tour position k (whole
numbers, exact in float32: `lsbench.problems.tsp.integer_coordinates`), EF[k], the length of edge
k -> k+1 times `scale`, and EX[k], its exact length (float32, exact below 2^24). The tour itself
(city ids) stays in global memory, read only by the tabu test, the record and the moves.

The scan (O'Neil & Burtscher's compute-bound idea, with TSPLIB's rounding kept exact):
- Every move's delta is first *estimated* in float32 without rounding (sqrt of squared distances);
  an estimate within `margin` of the thread's best so far is recomputed *exactly*
  (`integer_distance`, the CPU's own source) and only exact values are compared, so the chosen move
  is the CPU's. `margin` bounds the estimate's error: TSPLIB's rounding of the two added edges plus
  float32 error (set by the host from the longest edge).
- A lane evaluates R consecutive rows i against one column j at a time: the distances from the
  R + 1 cities at positions i-1 .. i+R-1 to city j serve two moves each (move (i, j) adds edges
  (i-1, j) and (i, j+1)), so a move costs (R+1)/R square roots, not two.
- A warp's 32 lanes take 32 R consecutive rows and walk the same column together (broadcast shared
  loads); its work items are (row block, column block) pairs of a triangle, dealt round the warps.
  One loop serves every item, so the exact path is compiled once (a kernel too large for the
  instruction cache measured a third of its stalls waiting for instructions).

Tabu attribute (as `two_opt_tabu_record`): the two removed edges, as directed city pairs, each with
its expiry, in a per-search list of 2 (tenure_max + 1) entries in global memory: an expiry matrix
that stores only the entries that can still be live, so the same moves are tabu as on the CPU.
"""
import math

import numpy as np
from numba import cuda, float32, int32, int64, uint32, uint64

from lsbench.errors import LsbenchError
from lsbench.problems.tsp import integer_coordinates, integer_distance, pair_count

from .. import device as dv

WARP = 32
ROWS = 4  # rows a lane evaluates together: (ROWS + 1) / ROWS square roots a move (4 measured fastest)
NO_BEST = np.int64(1) << np.int64(61)
FLOAT_EXACT = 1 << 24  # edge lengths below this are exact in float32 (kept on chip so)
exact_distance = dv.twin(integer_distance)


@cuda.jit(device=True, inline=True)
def tabu_list_has(TA, TB, TU, s, a, b, it):
    """Whether edge a -> b was removed and its tabu expiry has not passed."""
    for q in range(TA.shape[1]):
        if TA[s, q] == a and TB[s, q] == b and TU[s, q] >= it:
            return True
    return False


@cuda.jit(device=True, inline=True)
def tabu_list_put(TA, TB, TU, s, a, b, until, it):
    """expiry[a, b] = until: the pair's entry if it has one, else a slot whose expiry has passed."""
    free = -1
    for q in range(TA.shape[1]):
        if TA[s, q] == a and TB[s, q] == b:
            TU[s, q] = until
            return
        if free < 0 and TU[s, q] < it:
            free = q
    TA[s, free] = a
    TB[s, free] = b
    TU[s, free] = until


@cuda.jit(device=True, inline=True)
def wrap(p, n):
    """p mod n for -n <= p < 2n, without a 64-bit division."""
    if p < 0:
        return p + n
    if p >= n:
        return p - n
    return p


@cuda.jit(device=True, inline=True)
def shared_views(sh, n):
    """X, Y: coordinates by tour position; EF: edge k -> k+1 times scale; EX: its exact length."""
    return sh[0:n], sh[n:2 * n], sh[2 * n:3 * n], sh[3 * n:4 * n]


@cuda.jit(device=True, inline=True)
def exact_edge(X, Y, rule, q2, a, b):
    return exact_distance(rule, q2, int64(X[a]), int64(Y[a]), int64(X[b]), int64(Y[b]))


@cuda.jit(device=True)
def load(data, SOL, MEM, s, sh, tid, T):
    """The search's tour into X, Y, EF, EX; returns this thread's share of the tour's length."""
    FX, FY, rule, q2, scale = data[0], data[1], data[2], data[3], data[4]
    n = SOL.shape[1]
    X, Y, EF, EX = shared_views(sh, n)
    for k in range(tid, n, T):
        c = SOL[s, k]
        X[k] = FX[c]
        Y[k] = FY[c]
    cuda.syncthreads()
    part = int64(0)
    for k in range(tid, n, T):
        e = exact_edge(X, Y, rule, q2, k, wrap(k + 1, n))
        EF[k] = float32(e * scale)
        EX[k] = float32(e)
        part += e
    cuda.syncthreads()
    return part


@cuda.jit(device=True)
def consider(data, SOL, MEM, s, sh, rule_tabu, use_tabu, it, current, asp, key, i, j, bd, br, bk):
    """The thread's best (delta, rank, move) once move (i, j) is looked at exactly
    (lsbench.problems.tsp.two_opt_delta for symmetric distances): hill climbing keeps the least
    delta, lowest move first; tabu search the least admissible delta, ties by rank
    (lsbench.search.tabu.select_admissible)."""
    n = SOL.shape[1]
    X, Y, EF, EX = shared_views(sh, n)
    h = wrap(i - 1, n)
    nx = wrap(j + 1, n)
    d = int64(0)
    if i != 0 or j != n - 1:  # reversing the whole tour changes nothing
        d = (exact_edge(X, Y, data[2], data[3], h, j) + exact_edge(X, Y, data[2], data[3], i, nx)
             - int64(EX[h]) - int64(EX[j]))
    k = int64(i * (2 * n - i - 1) // 2 + j - i - 1)
    if not rule_tabu:
        if d < bd or (d == bd and k < bk):
            return d, br, k
        return bd, br, bk
    if d > bd:
        return bd, br, bk
    r = dv.tie_rank(k, key)
    if d == bd and r >= br:
        return bd, br, bk
    if use_tabu and not current + d < asp:
        TA, TB, TU = MEM
        if (tabu_list_has(TA, TB, TU, s, SOL[s, h], SOL[s, j], it)
                or tabu_list_has(TA, TB, TU, s, SOL[s, i], SOL[s, nx], it)):
            return bd, br, bk
    return d, r, k


@cuda.jit(device=True, inline=True)
def limit(bd, margin, scale):
    """The largest scaled estimate whose exact delta can still be at most the thread's best."""
    if bd >= NO_BEST:
        return float32(3.0e38)
    return float32((bd + margin) * scale)


@cuda.jit(device=True)
def record(data, SOL, MEM, s, move, it, until):
    """lsbench.problems.tsp.two_opt_tabu_record: the removed edges (i-1, i) and (j, j+1)."""
    n = SOL.shape[1]
    TA, TB, TU = MEM
    i, j = dv.index_to_pair(move, n)
    tabu_list_put(TA, TB, TU, s, SOL[s, wrap(i - 1, n)], SOL[s, i], until, it)
    tabu_list_put(TA, TB, TU, s, SOL[s, j], SOL[s, wrap(j + 1, n)], until, it)


@cuda.jit(device=True)
def apply(data, SOL, MEM, s, sh, move, tid, T):
    """Reverses positions i..j of the tour and of X, Y, the edges inside, and the two new edges."""
    rule, q2, scale = data[2], data[3], data[4]
    n = SOL.shape[1]
    X, Y, EF, EX = shared_views(sh, n)
    i, j = dv.index_to_pair(move, n)
    for k in range(tid, (j - i + 1) // 2, T):
        a = i + k
        b = j - k
        SOL[s, a], SOL[s, b] = SOL[s, b], SOL[s, a]
        X[a], X[b] = X[b], X[a]
        Y[a], Y[b] = Y[b], Y[a]
    for k in range(tid, (j - i) // 2, T):
        a = i + k
        b = j - 1 - k
        EF[a], EF[b] = EF[b], EF[a]
        EX[a], EX[b] = EX[b], EX[a]
    cuda.syncthreads()
    if tid == 0:
        h = wrap(i - 1, n)
        e = exact_edge(X, Y, rule, q2, h, i)
        EF[h] = float32(e * scale)
        EX[h] = float32(e)
        e = exact_edge(X, Y, rule, q2, j, wrap(j + 1, n))
        EF[j] = float32(e * scale)
        EX[j] = float32(e)
    cuda.syncthreads()


def make_adapter(rows=ROWS):
    """The adapter's device functions: this module's load, record and apply, and the scan for lanes
    of `rows` rows (a compile-time constant)."""
    span = WARP * rows
    points = rows + 1  # the cities at positions i-1 .. i+rows-1 of a lane's rows

    @cuda.jit(device=True, fastmath=True)
    def scan_item(data, SOL, MEM, s, sh, rule_tabu, use_tabu, it, current, asp, key, g, c, lane, best):
        """Rows g*span + lane*rows ... (+rows) against columns c*span ... (+span), g <= c: a distance
        computed once serves two moves; on the diagonal block (g == c) the estimates of j <= i are
        other moves' and are dropped where they pass the threshold."""
        margin, scale = data[5], data[4]
        n = SOL.shape[1]
        X, Y, EF, EX = shared_views(sh, n)
        bd, br, bk = best
        rx = cuda.local.array(points, float32)
        ry = cuda.local.array(points, float32)
        base = cuda.local.array(rows, float32)
        lim = cuda.local.array(rows, float32)
        dnext = cuda.local.array(points, float32)
        i0 = g * span + lane * rows
        for r in range(points):
            p = int32(i0 - 1 + r) % int32(n)
            rx[r] = X[p]
            ry[r] = Y[p]
        top = min(c * span + span, n) - 1
        thr = limit(bd, margin, scale)
        xj = X[wrap(top + 1, n)]
        yj = Y[wrap(top + 1, n)]
        for r in range(rows):
            base[r] = EF[int32(i0 - 1 + r) % int32(n)]
            lim[r] = thr + base[r]
            dx = rx[r + 1] - xj
            dy = ry[r + 1] - yj
            dnext[r + 1] = math.sqrt(dx * dx + dy * dy)
        for j in range(int32(top), int32(c * span - 1), int32(-1)):
            ju = uint32(j)  # unsigned: no negative-index wrap-around test on the hot loads
            xj = X[ju]
            yj = Y[ju]
            ej = EF[ju]
            hit = False
            for r in range(rows):
                dx = rx[r] - xj
                dy = ry[r] - yj
                dr = math.sqrt(dx * dx + dy * dy)
                if dr + dnext[r + 1] - ej <= lim[r]:
                    hit = True
                dnext[r] = dr
            dx = rx[rows] - xj
            dy = ry[rows] - yj
            dnext[rows] = math.sqrt(dx * dx + dy * dy)
            if hit:  # rare: this column's candidates exactly
                xr = X[wrap(j + 1, n)]
                yr = Y[wrap(j + 1, n)]
                for r in range(rows):
                    dx = rx[r + 1] - xr
                    dy = ry[r + 1] - yr
                    if j > i0 + r and dnext[r] + math.sqrt(dx * dx + dy * dy) - ej <= lim[r]:
                        bd, br, bk = consider(data, SOL, MEM, s, sh, rule_tabu, use_tabu, it, current, asp, key,
                                              int64(i0 + r), int64(j), bd, br, bk)
                thr = limit(bd, margin, scale)
                for r in range(rows):
                    lim[r] = thr + base[r]
        return bd, br, bk

    @cuda.jit(device=True)
    def scan(data, SOL, MEM, s, sh, rule_tabu, use_tabu, it, current, asp, key, tid, T):
        """This thread's best (delta, rank, move) over its lanes' items; move -1 if it saw none."""
        n = SOL.shape[1]
        lane = tid % WARP
        blocks = (n + span - 1) // span
        best = (int64(NO_BEST), uint64(0), int64(-1))
        for u in range(tid // WARP, blocks * (blocks + 1) // 2, T // WARP):
            g, c1 = dv.index_to_pair(u, blocks + 1)
            best = scan_item(data, SOL, MEM, s, sh, rule_tabu, use_tabu, it, current, asp, key, g, c1 - 1, lane,
                             best)
        return best

    return load, scan, record, apply, dv.fill_permutation


class TspTwoOptAdapter:
    """Host side: the instance's integer coordinates on the device, the estimate's scale and margin,
    and the per-search tabu lists. Raises LsbenchError where the instance has no exact integer
    coordinate form (explicit weights, GEO, or coordinates TSPLIB's double arithmetic rounds apart
    from exact arithmetic): the matrix kernel runs those."""

    neighbourhood = "2opt"
    def __init__(self, problem, nb, rows=None):
        form = integer_coordinates(problem.coordinates, problem.weight_type, problem.d) \
            if getattr(problem, "coordinates", None) is not None else None
        if form is None or nb.name != "2opt" or problem.d.max() >= FLOAT_EXACT:
            raise LsbenchError(f"{problem.name}: the on-chip 2-opt adapter needs integer coordinates (EUC_2D, CEIL_2D "
                               "or ATT, their exact distances TSPLIB's, the longest below 2^24)")
        rule, q, ix, iy = form
        self.rows = self.compile_key = int(rows or ROWS)
        self.n = problem.n
        self.moves = pair_count(self.n)
        # estimates are sqrt(dx^2 + dy^2) in file units times q (times sqrt(10) for ATT); each of the
        # two estimated edges is within TSPLIB's rounding (1/2 or 1) plus float32 error of the exact one
        scale = float(q) * (math.sqrt(10.0) if rule == 2 else 1.0)
        longest = float(problem.d.max())
        rounding = 0.5 if rule == 0 else 1.0
        margin = 2 * rounding + longest * 2.0 ** -16 + 0.01
        self.data = (cuda.to_device(ix.astype(np.float32)), cuda.to_device(iy.astype(np.float32)),
                     np.int64(rule), np.int64(q * q), np.float64(scale), np.float64(margin))
        self.shared_bytes = 4 * 4 * self.n

    def memory(self, K, tenure_max):
        """K empty tabu lists (every expiry -1): room for every entry that can be live at once."""
        size = 2 * (int(tenure_max) + 1)
        return (cuda.to_device(np.full((K, size), -1, np.int32)), cuda.to_device(np.full((K, size), -1, np.int32)),
                cuda.to_device(np.full((K, size), -1, np.int64)))

    def device_functions(self):
        return make_adapter(self.rows)
