"""The TSP 2-opt adapter of the resident local search engine (gpu/engine/local_search.py) for
instances given by coordinates (EUC_2D, CEIL_2D, ATT, whole or fractional): distances computed, not
read, so the scan is compute-bound. (GEO and explicit weights: gpu/adapters/tsp_two_opt_matrix.py;
`adapter` picks.)

Per search, by tour position k: X[k], Y[k], the city's coordinates in float32 (shifted to the
instance's corner, for the estimates), and EF[k], the exact length of edge k -> k+1 times `scale`
(float32; exact enough to give the length back wherever the instance's longest edge allows, so
the exact path reads a move's two removed edges and computes only the two it adds). Where 12 n bytes fit a block's shared memory they are on chip ("chip" layout), else in
global memory, one row a search ("global": L1/L2 serve the column walk). The tour itself (city ids)
and the float64 coordinates by city stay in global memory, read by the exact path, the tabu test,
the record and the moves.

The scan (O'Neil & Burtscher's compute-bound idea, with TSPLIB's rounding kept exact):
- Every move's delta is first *estimated* in float32 without rounding (sqrt of squared distances);
  an estimate within `margin` of the thread's best so far is recomputed *exactly*
  (`lsbench.problems.tsp.coordinate_distance`, the CPU matrix's own source, each float64 operation
  rounded as on the CPU) and only exact values are compared, so the chosen move is the CPU's.
  `margin` bounds the estimate's error: TSPLIB's rounding of the two added edges plus float32
  error (set by the host from the instance's extent).
- A lane evaluates R consecutive rows i against one column j at a time: the distances from the
  R + 1 cities at positions i-1 .. i+R-1 to city j serve two moves each (move (i, j) adds edges
  (i-1, j) and (i, j+1)), so a move costs (R+1)/R square roots, not two.
- A warp's 32 lanes take 32 R consecutive rows and walk the same column together (broadcast
  loads); its work items are (row block, column block) pairs of a triangle, dealt round the warps.
  One loop serves every item, so the exact path is compiled once (a kernel too large for the
  instruction cache measured a third of its stalls waiting for instructions).
- The threshold is the block's best so far, not the lane's own: a thread that finds a better exact
  delta lowers one shared slot (an atomic min), and every lane reads it back at each item, after
  each of its exact looks and every 16 columns. A lane alone sees a few hundred moves on a small
  instance, and its running minimum kept most of its columns on the exact path (eil101: two thirds
  of a warp's columns); a move whose estimate passes the block's best by more than the margin
  cannot be the block's choice, so the chosen move is unchanged.

Tabu attribute: gpu/adapters/two_opt_edges.py.
"""
import math

import numpy as np
from numba import config, cuda, float32, float64, int32, int64, uint32, uint64

from lsbench.errors import LsbenchError
from lsbench.problems.tsp import COORDINATE_RULES, PSEUDO_EUCLIDEAN, ROUNDED, coordinate_distance, pair_count

from .. import device as dv
from ..runtime.rounded import DEVICE_OPS
from .tsp_two_opt_matrix import TspTwoOptMatrixAdapter
from .two_opt_edges import record, tabu_lists, two_opt_is_tabu, wrap

WARP = 32
ROWS = 4  # rows a lane evaluates together: (ROWS + 1) / ROWS square roots a move (4 measured fastest)
ITEMS_A_BLOCK = 8  # work items of the triangle below which lanes take one row (rows_for)
ONE_ROW_REGISTERS = 64  # a thread's registers at most where lanes take one row (TspTwoOptAdapter.registers)
NO_BEST = np.int64(1) << np.int64(61)
NO_LIMIT = np.float32(-3.4e38)  # a row's threshold where its column is no move: below any estimate, even
# after limit()'s 3e38 (no best yet) is added to it (finite: the scan is compiled with fastmath)
BYTES_PER_CITY = 12  # X, Y, EF
SIM_SHARED_LIMIT = 232_448  # an H100's or H200's opt-in shared memory a block
exact_distance = dv.twin(coordinate_distance, **DEVICE_OPS)


@cuda.jit(device=True, inline=True)
def exact_edge(data, SOL, s, a, b):
    """The exact length of the edge between tour positions a and b of search s."""
    FX, FY, rule = data[2], data[3], data[4]
    ca = SOL[s, a]
    cb = SOL[s, b]
    return exact_distance(rule, FX[ca], FY[ca], FX[cb], FY[cb])


@cuda.jit(device=True, inline=True)
def limit(bd, margin, scale):
    """The largest scaled estimate whose exact delta can still be at most the thread's best."""
    if bd >= NO_BEST:
        return float32(3.0e38)
    return float32((bd + margin) * scale)


def make_views(on_chip):
    """views(sh, MEM, s, n) -> X, Y, EF of search s: in shared memory, or its row of MEM[3]."""
    if on_chip:
        @cuda.jit(device=True, inline=True)
        def views(sh, MEM, s, n):
            return sh[0:n], sh[n:2 * n], sh[2 * n:3 * n]
    else:
        @cuda.jit(device=True, inline=True)
        def views(sh, MEM, s, n):
            G = MEM[3]
            return G[s, 0:n], G[s, n:2 * n], G[s, 2 * n:3 * n]
    return views


def make_moves(views, stored_exact, whole):
    """load, consider and apply over a layout's views; `stored_exact`: EF holds every edge exactly
    enough to give back its exact length (see `stored_lengths_exact`), so a move's two removed edges
    are read, not computed; `whole`: X and Y hold the coordinates exactly (see `whole_coordinates`),
    so a move's two added edges are computed from them, not from the tour and FX, FY in global
    memory (an exact look then waits on no dependent global loads)."""

    @cuda.jit(device=True, inline=True)
    def added_edge(data, SOL, X, Y, s, a, b):
        if whole:  # the same differences as the CPU's: whole numbers, exact in float32 and float64
            return exact_distance(data[4], float64(X[a]), float64(Y[a]), float64(X[b]), float64(Y[b]))
        return exact_edge(data, SOL, s, a, b)

    @cuda.jit(device=True, inline=True)
    def removed_edge(data, SOL, EF, s, a, b):
        if stored_exact:
            return int64(math.floor(float64(EF[a]) / data[5] + 0.5))
        return exact_edge(data, SOL, s, a, b)

    @cuda.jit(device=True)
    def load(data, SOL, MEM, s, sh, tid, T):
        """The search's tour into X, Y, EF; returns this thread's share of the tour's length."""
        EX, EY, scale = data[0], data[1], data[5]
        n = SOL.shape[1]
        X, Y, EF = views(sh, MEM, s, n)
        for k in range(tid, n, T):
            c = SOL[s, k]
            X[k] = EX[c]
            Y[k] = EY[c]
        part = int64(0)
        for k in range(tid, n, T):
            e = exact_edge(data, SOL, s, k, wrap(k + 1, n))
            EF[k] = float32(e * scale)
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
        X, Y, EF = views(sh, MEM, s, n)
        h = wrap(i - 1, n)
        nx = wrap(j + 1, n)
        d = int64(0)
        if i != 0 or j != n - 1:  # reversing the whole tour changes nothing
            d = (added_edge(data, SOL, X, Y, s, h, j) + added_edge(data, SOL, X, Y, s, i, nx)
                 - removed_edge(data, SOL, EF, s, h, i) - removed_edge(data, SOL, EF, s, j, nx))
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
        if use_tabu and not current + d < asp and two_opt_is_tabu(MEM, SOL, s, h, i, j, nx, it):
            return bd, br, bk
        return d, r, k

    @cuda.jit(device=True)
    def apply(data, SOL, MEM, s, sh, move, tid, T):
        """Reverses positions i..j of the tour and of X, Y, the edges inside, and the two new edges."""
        scale = data[5]
        n = SOL.shape[1]
        X, Y, EF = views(sh, MEM, s, n)
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
        cuda.syncthreads()
        if tid == 0:
            h = wrap(i - 1, n)
            EF[h] = float32(added_edge(data, SOL, X, Y, s, h, i) * scale)
            EF[j] = float32(added_edge(data, SOL, X, Y, s, j, wrap(j + 1, n)) * scale)
        cuda.syncthreads()

    return load, consider, apply


def make_scan(views, consider, rows, diagonal_loop=False):
    """The scan for lanes of `rows` rows (a compile-time constant). `diagonal_loop` (research, not
    yet measured: small_two_opt.py --diagonal-loop): the diagonal block's items on a loop of their
    own that masks its non-moves, the others on one without the test, for any rows a lane."""
    span = WARP * rows
    scan_item = make_scan_item(views, consider, rows, rows == 1)  # lanes of one row mask (see there)
    diagonal_item = make_scan_item(views, consider, rows, True) if diagonal_loop else scan_item
    other_item = make_scan_item(views, consider, rows, False) if diagonal_loop else scan_item

    @cuda.jit(device=True)
    def scan(data, SOL, MEM, s, sh, rule_tabu, use_tabu, it, current, asp, key, tid, T):
        """This thread's best (delta, rank, move) over its lanes' items; move -1 if it saw none."""
        n = SOL.shape[1]
        lane = tid % WARP
        blocks = (n + span - 1) // span
        block_best = cuda.shared.array(1, int64)  # the least exact delta any thread has found (see above)
        if tid == 0:
            block_best[0] = NO_BEST
        cuda.syncthreads()
        best = (int64(NO_BEST), uint64(0), int64(-1))
        for u in range(tid // WARP, blocks * (blocks + 1) // 2, T // WARP):
            g, c1 = dv.index_to_pair(u, blocks + 1)
            if not diagonal_loop:  # (one call site: the default kernel keeps one copy of the loop)
                best = scan_item(data, SOL, MEM, s, sh, rule_tabu, use_tabu, it, current, asp, key, g, c1 - 1, lane,
                                 best, block_best)
            elif g == c1 - 1:
                best = diagonal_item(data, SOL, MEM, s, sh, rule_tabu, use_tabu, it, current, asp, key, g, c1 - 1,
                                     lane, best, block_best)
            else:
                best = other_item(data, SOL, MEM, s, sh, rule_tabu, use_tabu, it, current, asp, key, g, c1 - 1,
                                  lane, best, block_best)
        return best

    return scan


def make_scan_item(views, consider, rows, mask_rows):
    """scan_item for lanes of `rows` rows; `mask_rows`: test each column for the diagonal's
    non-moves (below)."""
    span = WARP * rows
    points = rows + 1  # the cities at positions i-1 .. i+rows-1 of a lane's rows

    @cuda.jit(device=True, inline=True)
    def block_limit(block_best, bd, margin, scale):
        """limit() of the better of the thread's best and the block's, bd first lowering the block's."""
        return limit(min(bd, cuda.atomic.min(block_best, 0, bd)), margin, scale)

    @cuda.jit(device=True, fastmath=True)
    def scan_item(data, SOL, MEM, s, sh, rule_tabu, use_tabu, it, current, asp, key, g, c, lane, best,
                  block_best):
        """Rows g*span + lane*rows ... (+rows) against columns c*span ... (+span), g <= c: a distance
        computed once serves two moves. On the diagonal block (g == c) a row i meets columns j <= i,
        which are no move (j = i - 1 estimates -2 x edge i-1, below any threshold near a local
        optimum), so a lane's estimate there may send its warp down the exact path, which then skips
        such rows. With `mask_rows` (by default lanes of one row: small instances, where the diagonal
        is a large share of the triangle) a row's threshold is NO_LIMIT from the column where j <= i
        on; by default lanes of ROWS rows do not pay that test on every column (one H100,
        ab_trees.py, K = 1,056: it gave eil101 1.15-1.20x and took pr2392 to 0.89-0.93x)."""
        scale, margin = data[5], data[6]
        n = SOL.shape[1]
        X, Y, EF = views(sh, MEM, s, n)
        bd, br, bk = best
        rx = cuda.local.array(points, float32)
        ry = cuda.local.array(points, float32)
        base = cuda.local.array(rows, float32)
        lim = cuda.local.array(rows, float32)
        dnext = cuda.local.array(points, float32)
        i0 = g * span + lane * rows
        own_end = int32(i0 + rows) if g == c else int32(0)  # columns below it reach the lane's own rows
        for r in range(points):
            p = int32(i0 - 1 + r) % int32(n)
            rx[r] = X[p]
            ry[r] = Y[p]
        top = min(c * span + span, n) - 1
        thr = block_limit(block_best, bd, margin, scale)
        xj = X[wrap(top + 1, n)]
        yj = Y[wrap(top + 1, n)]
        for r in range(rows):
            base[r] = EF[int32(i0 - 1 + r) % int32(n)]
            lim[r] = thr + base[r]
            dx = rx[r + 1] - xj
            dy = ry[r + 1] - yj
            dnext[r + 1] = math.sqrt(dx * dx + dy * dy)
        for j in range(int32(top), int32(c * span - 1), int32(-1)):
            if j & 15 == 0:  # (the same column across the warp: no divergence)
                thr = block_limit(block_best, bd, margin, scale)
                for r in range(rows):
                    lim[r] = thr + base[r]
            if mask_rows and j < own_end:  # (the diagonal block: rows i >= j see no move from here on)
                for r in range(rows):
                    if j <= i0 + r:
                        base[r] = NO_LIMIT
                        lim[r] = NO_LIMIT
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
                thr = block_limit(block_best, bd, margin, scale)
                for r in range(rows):
                    lim[r] = thr + base[r]
        return bd, br, bk

    return scan_item


def make_adapter(rows, on_chip, stored_exact, whole, diagonal_loop=False):
    """The adapter's device functions for lanes of `rows` rows, the layout, whether EF's lengths
    are exact enough to read the removed edges from, whether X, Y are the exact coordinates, and
    whether the diagonal's items take a loop of their own (make_scan)."""
    views = make_views(on_chip)
    load, consider, apply = make_moves(views, stored_exact, whole)
    return load, make_scan(views, consider, rows, diagonal_loop), record, apply, dv.fill_permutation


def rows_for(n):
    """ROWS where the triangle's items of 32 x ROWS rows number ITEMS_A_BLOCK or more (two for each
    warp of a 128-thread block: above 384 cities), else lanes of one row, so that a small instance's
    triangle is shared among the warps, not scanned by one of them. Measured (one H200, f9d97f6,
    research/small_two_opt.py, K = 1,056, 128 threads): one row against four gives eil101 hc 1.86x and
    tabu 1.44x, kroA200 1.16x and 1.36x, but pr1002 0.41x and 0.45x."""
    blocks = -(-n // (WARP * ROWS))
    return ROWS if blocks * (blocks + 1) // 2 >= ITEMS_A_BLOCK else 1


def layout_for(n, shared_limit):
    """"chip" where a search's X, Y, EF fit a block's shared memory (`shared_limit` bytes) beside the
    engine's reduction at up to 512 threads (gpu/engine/local_search.py), else "global"."""
    return "chip" if BYTES_PER_CITY * n + 32 * 512 + 64 <= shared_limit else "global"


def shared_limit():
    """A block's shared memory on this GPU (the simulator: an H200's)."""
    return SIM_SHARED_LIMIT if config.ENABLE_CUDASIM else cuda.get_current_device().MAX_SHARED_MEMORY_PER_BLOCK_OPTIN


def stored_lengths_exact(extent, scale):
    """Whether EF (an exact length times `scale`, rounded to float32) gives every edge's exact length
    back: its longest (the extent's diagonal, TSPLIB's rounding, times scale at most) below 2^24
    is a whole number in float32 where scale is 1, and within far less than scale / 2 of the
    length times scale otherwise."""
    return math.hypot(*extent) + 2 * scale < 2.0 ** 24


def whole_coordinates(xy, corner):
    """Whether the float32 coordinates shifted to `corner` are the instance's exactly, with the
    differences the CPU computes: whole numbers below 2^24 from the corner."""
    return bool(np.all(xy == np.floor(xy)) and np.all(xy - corner < 2.0 ** 24))


def estimate_margin(rule, extent, scale):
    """How far an estimated delta may lie from the exact one, in distance units: TSPLIB's rounding
    of the two added edges (1/2 each for nint, 1 for ceilings), plus the float32 error of the four
    estimated or stored lengths: the coordinates' rounding (2^-24 of the extent each) and the
    arithmetic's (a few ulps of a length no longer than the extent's diagonal), with room to spare."""
    rounding = 0.5 if rule == ROUNDED else 1.0
    diagonal = math.hypot(*extent)
    return 2 * rounding + (16 * max(extent) * 2.0 ** -24 + 8 * diagonal * 2.0 ** -19) / scale + 0.01


class TspTwoOptAdapter:
    """Host side: the coordinates on the device (float32 for the estimates, float64 for the exact
    path), the estimate's scale and margin, the layout, and the per-search tabu lists (and rows of
    X, Y, EF in the global layout)."""

    neighbourhood = "2opt"

    def __init__(self, problem, nb, rows=None, layout=None, whole=None, diagonal_loop=False):
        if nb.name != "2opt" or problem.weight_type not in COORDINATE_RULES or problem.coordinates is None:
            raise LsbenchError(f"{problem.name}: the coordinate 2-opt adapter needs EUC_2D, CEIL_2D or ATT "
                               f"coordinates, not {problem.weight_type}")
        rule = COORDINATE_RULES[problem.weight_type]
        self.n = problem.n
        self.layout = layout or layout_for(self.n, shared_limit())
        self.rows = int(rows or rows_for(self.n))
        xy = np.asarray(problem.coordinates, np.float64)
        corner = xy.min(axis=0)
        extent = tuple(xy.max(axis=0) - corner)
        scale = math.sqrt(10.0) if rule == PSEUDO_EUCLIDEAN else 1.0  # file units a unit of distance
        self.stored_exact = stored_lengths_exact(extent, scale)
        self.whole = whole_coordinates(xy, corner) if whole is None else bool(whole)
        self.diagonal_loop = bool(diagonal_loop)
        self.compile_key = (self.rows, self.layout, self.stored_exact, self.whole, self.diagonal_loop)
        # lanes of one row need fewer registers: a cap of 64 (not the engine's 96) lets 8 blocks of 128
        # threads share an SM (one H100, ab_trees.py, K = 1,056: eil101 hc 1.21x, tabu 1.18x, kroA200 hc
        # 1.08x; it took pr2392's tabu search to 0.4x, so lanes of ROWS rows keep the engine's cap)
        self.registers = ONE_ROW_REGISTERS if self.rows == 1 else None
        self.moves = pair_count(self.n)
        margin = estimate_margin(rule, extent, scale)
        shifted = (xy - corner).astype(np.float32)
        self.data = (cuda.to_device(np.ascontiguousarray(shifted[:, 0])), cuda.to_device(np.ascontiguousarray(shifted[:, 1])),
                     cuda.to_device(np.ascontiguousarray(xy[:, 0])), cuda.to_device(np.ascontiguousarray(xy[:, 1])),
                     np.int64(rule), np.float64(scale), np.float64(margin))
        self.shared_bytes = BYTES_PER_CITY * self.n if self.layout == "chip" else 0

    def memory(self, K, tenure_max):
        """K tabu lists; in the global layout K rows of X, Y, EF."""
        rows = (K, 3 * self.n) if self.layout == "global" else (1, 1)
        return (*tabu_lists(K, tenure_max), cuda.device_array(rows, np.float32))

    def device_functions(self):
        return make_adapter(self.rows, self.layout == "chip", self.stored_exact, self.whole, self.diagonal_loop)


def adapter(problem, nb, rows=None, layout=None, whole=None, diagonal_loop=False):
    """The 2-opt adapter for this instance: computed distances where it has coordinates (on chip or in
    global memory by size), the distance matrix otherwise (GEO, explicit weights)."""
    if problem.weight_type in COORDINATE_RULES and getattr(problem, "coordinates", None) is not None:
        return TspTwoOptAdapter(problem, nb, rows=rows, layout=layout, whole=whole, diagonal_loop=diagonal_loop)
    return TspTwoOptMatrixAdapter(problem, nb)
