"""How often does the 2-opt adapter's scan leave its float32 estimates for the exact path? (issue 86,
item 3; docs/notes/one-engine.md). CPU only: no GPU, no timing.

    python research/two_opt_hits.py [--instances eil101,kroA200,fl417,pr1002,pr2392] [--rows 4,1]
        [--warps 4] [--iterations 2000] [--seed 3] [--out DIR]

The scan of gpu/adapters/tsp_two_opt.py, replayed in NumPy on one tour: a block's warps take the
triangle's (row block, column block) items in turn, each lane `rows` rows against one column at a
time, the warps interleaved column by column. A move goes down the exact path where its estimate
is within the margin (estimate_margin) of the threshold; the threshold is either the lane's own best
exact delta so far (the adapter before the block's best) or the better of it and the block's (one
shared slot), read back as the adapter does: at each item, after the lane's exact looks, and at
every column j with j % 16 == 0. The tour: the CPU tabu search's best after `--iterations` iterations from `--seed`.
Printed and written: exact looks per move, the share of warp columns where any lane looks (a
divergent branch the whole warp waits for), and the share where the warp enters that branch as the
kernel does: lanes of several rows also for the diagonal block's non-moves (row i at column j <= i;
j = i - 1 estimates -2 x edge i-1), which lanes of one row mask (docs/notes/one-engine.md).
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import run_main, write_result  # noqa: E402
from lsbench import instances as registry  # noqa: E402
from lsbench.interfaces import Stop  # noqa: E402
from lsbench.neighborhoods import index_to_pair  # noqa: E402
from lsbench.problems.tsp import COORDINATE_RULES  # noqa: E402
from lsbench.registry import get_evaluator  # noqa: E402
from lsbench.search.tabu import TabuSearch  # noqa: E402

WARP = 32


def warp_columns(n, rows, warps):
    """Per warp, its (row block, column, first of its item) steps in the order it walks them (the
    adapter's scan)."""
    span = WARP * rows
    blocks = (n + span - 1) // span
    walks = []
    for w in range(warps):
        steps = []
        for u in range(w, blocks * (blocks + 1) // 2, warps):
            g, c1 = index_to_pair(u, blocks + 1)
            top = min(c1 * span, n) - 1
            steps += [(g, j, j == top) for j in range(top, (c1 - 1) * span - 1, -1)]
        walks.append(steps)
    return walks


def exact_looks(p, tour, rows, warps, block_best):
    """(moves, exact looks, warp columns, warp columns with a look, warp columns that enter the
    kernel's exact path: with a look, or for lanes of several rows a non-move's estimate within the
    threshold) of one scan of `tour`."""
    from lsbench.gpu.adapters.tsp_two_opt import estimate_margin
    n = p.n
    xy = np.asarray(p.coordinates, np.float64)
    corner = xy.min(axis=0)
    margin = estimate_margin(COORDINATE_RULES[p.weight_type], tuple(xy.max(axis=0) - corner), 1.0)
    X, Y = xy[tour, 0] - corner[0], xy[tour, 1] - corner[1]
    D = p.matrix("the scan's replay")
    edge = np.array([D[tour[k], tour[(k + 1) % n]] for k in range(n)], np.float64)
    offsets = np.arange(WARP)[:, None] * rows + np.arange(rows)[None, :]
    best = np.full((warps, WARP), np.inf)
    threshold = np.full((warps, WARP), np.inf)
    shared = np.inf
    counts = np.zeros(5, np.int64)
    walks = warp_columns(n, rows, warps)
    for k in range(max(len(w) for w in walks)):
        for w, steps in enumerate(walks):
            if k >= len(steps):
                continue
            g, j, first = steps[k]
            if block_best and (first or j % 16 == 0):
                threshold[w] = np.minimum(best[w], shared)
            i = g * WARP * rows + offsets
            valid = (i < n) & (j > i)
            i = i % n  # (the kernel reads a lane's points modulo n)
            h, nx = (i - 1) % n, (j + 1) % n
            estimate = np.hypot(X[h] - X[j], Y[h] - Y[j]) + np.hypot(X[i] - X[nx], Y[i] - Y[nx]) - edge[h] - edge[j]
            exact = D[tour[h], tour[j]] + D[tour[i], tour[nx]] - edge[h] - edge[j]
            exact = np.where((i == 0) & (j == n - 1), 0.0, exact)  # (reversing the whole tour changes nothing)
            within = estimate <= threshold[w][:, None] + margin
            look = valid & within
            enter = look if rows == 1 else within  # lanes of several rows keep the diagonal's non-moves
            best[w] = np.minimum(best[w], np.where(look, exact, np.inf).min(axis=1))
            shared = min(shared, best[w].min())
            looked = look.any(axis=1)
            threshold[w] = np.where(looked, np.minimum(best[w], shared) if block_best else best[w], threshold[w])
            if block_best and enter.any():  # (the kernel: the warp's lanes read the block's best back)
                threshold[w] = np.minimum(best[w], shared)
            counts += (valid.sum(), look.sum(), 1, look.any(), enter.any())
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", default="eil101,kroA200,fl417,pr1002,pr2392")
    ap.add_argument("--rows", default="4,1")
    ap.add_argument("--warps", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    out = []
    for name in args.instances.split(","):
        p = registry.load(name, "tsp")
        nb = p.neighbourhood("2opt")
        tour = np.asarray(TabuSearch().run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=args.iterations),
                                           args.seed).best_solution)
        for rows in (int(r) for r in args.rows.split(",")):
            for threshold in ("lane", "block"):
                moves, looks, columns, columns_looking, columns_entering = (
                    int(c) for c in exact_looks(p, tour, rows, args.warps, threshold == "block"))
                out.append({"instance": p.name, "n": p.n, "rows": rows, "warps": args.warps, "threshold": threshold,
                            "moves": moves, "exact_looks_per_move": looks / moves,
                            "warp_columns_looking": columns_looking / columns,
                            "warp_columns_entering": columns_entering / columns})
                print(f"| {p.name} | {p.n} | rows {rows} | {threshold}'s best | {looks / moves:.4f} | "
                      f"{columns_looking / columns:.3f} | {columns_entering / columns:.3f} |", flush=True)
    print(f"-> {write_result('two_opt_hits', {'rows': out, 'iterations': args.iterations}, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
