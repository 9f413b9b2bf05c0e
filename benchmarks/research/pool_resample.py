"""What more GPUs of independent pools would give, from one GPU's records: the resident Ro-TS's
searches form pools (lineages sharing an elite, `--param pools`), independent of each other; this
takes every pool's best from a report's runs of one backend and draws the best of m pools at random,
many times over, for each m (33 pools a GPU: m = 66 is two GPUs of the same method, 132 four). A
resampling estimate from the records, not a measurement, and never below the records' best pool:
a gap that no pool of many reached asks for deeper pools, not more of them.

    python benchmarks/research/pool_resample.py reports/islands --group tai100a-gap-at-30s --backend gpus-1 \\
        --pools 33,66,132 --gap 0.15

or from the pool bests an islands_target.py result file keeps for each run of one variant:

    python benchmarks/research/pool_resample.py results/islands_target-h200-X.json --variant one-gpu+pools=8 --pools 8,16
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, the table scripts
from common import report_searches, run_main
from islands_target import pool_bests, read_result

from lsbench.errors import LsbenchError
from lsbench.files import write_atomic


def resample(bests, bks, sizes, draws, gap, seed=1):
    """For each m (at most half the pools): the median gap (%) of the best of m pools drawn without
    replacement, and the share of draws at or under `gap`."""
    values = (np.asarray(bests, dtype=float) / bks - 1) * 100
    rng = np.random.default_rng(seed)
    out = {}
    for m in sizes:
        if 2 * m > len(values):  # (such draws mostly share the records' best pools: they say what was recorded)
            raise LsbenchError(f"--pools {m}: at most half the records' {len(values)} pools; record more runs")
        best = np.array([values[rng.choice(len(values), m, replace=False)].min() for _ in range(draws)])
        out[m] = {"median_gap_percent": float(np.median(best)), "share_at_gap": float(np.mean(best <= gap))}
    return out


def report_pool_bests(report, group, backend):
    """[(pool bests, bks)] of every run of `backend` in `group` of a report's records archive."""
    with report_searches(report, group, [backend]) as runs:
        return [pool_bests(d) for d in runs[backend]]


def target_pool_bests(path, variant):
    """[(pool bests, bks)] of every run of `variant` in an islands_target.py result file."""
    rows = read_result(path)["rows"]
    runs = [(r["pool_bests"], r["bks"]) for r in rows.get(variant, []) if r.get("pool_bests")]
    if not runs:
        raise LsbenchError(f"{path}: no runs of variant {variant!r} with pool bests (has {', '.join(rows)})")
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source", help="a report folder with records.tgz (reports/NAME), or an islands_target.py "
                    "result file")
    ap.add_argument("--group", help="the report's group")
    ap.add_argument("--backend", help="the report's backend")
    ap.add_argument("--variant", help="the islands_target.py variant")
    ap.add_argument("--pools", default="33,66,132", help="the m's: pools a draw takes")
    ap.add_argument("--draws", type=int, default=4000)
    ap.add_argument("--gap", type=float, default=0.15, help="the gap (%%) whose share of draws is given")
    ap.add_argument("--out")
    args = ap.parse_args()
    sizes = [int(m) for m in args.pools.split(",") if m.strip().isdigit() and int(m) > 0]
    if not sizes or len(sizes) != len(args.pools.split(",")) or args.draws < 1:
        raise LsbenchError(f"--pools {args.pools!r}, --draws {args.draws}: positive counts")
    source = Path(args.source)
    if source.is_file():
        per_run, what = target_pool_bests(source, args.variant), args.variant
    else:
        per_run, what = report_pool_bests(source, args.group, args.backend), f"{args.group}, {args.backend}"
    bests = [b for run, _ in per_run for b in run]
    bks = per_run[0][1]
    result = {"source": str(source), "group": args.group, "backend": args.backend, "variant": args.variant,
              "runs": len(per_run), "pools": len(bests), "bks": bks, "best_pool_gap_percent": (min(bests) / bks - 1) * 100,
              "resampled": resample(bests, bks, sizes, args.draws, args.gap), "draws": args.draws, "gap": args.gap}
    print(f"{what}: {len(bests)} pools from {len(per_run)} runs, the best "
          f"{result['best_pool_gap_percent']:.3f} % over {bks}\n\n| best of m pools | median gap (%) | "
          f"draws at or under {args.gap:g} % |\n|---|---|---|")
    for m, r in result["resampled"].items():
        print(f"| {m} | {r['median_gap_percent']:.3f} | {r['share_at_gap']:.2f} |")
    if args.out:
        write_atomic(Path(args.out), result)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
