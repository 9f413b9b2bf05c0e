"""Max-Cut resident tabu search on G-set graphs, on one GPU: moves/s and the best cut at 10 s and
60 s of K searches, beside the best-known cuts (the plug-in's manifest: Benlic & Hao 2013).

    python examples/maxcut/benchmark.py [--graphs G22,G43,G55,G70] [--searches 528] [--seconds 60]
                                        [--marks 10,60] [--out DIR]

One run a graph (`--algorithm tabu --backend gpu-resident`, seeds 1..K); the best cut at each mark
is read from every search's recorded trajectory (its improvements with their wall times), so one
60 s run gives both figures. moves/s = all searches' iterations x n (the one-flip neighbourhood)
over the seconds in kernels. Every best cut is re-checked from scratch by lsbench's record.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from common import write_result  # noqa: E402  (the repository's result files: <benchmark>-<gpu>-<commit>.json)

from lsbench.instances import manifest  # noqa: E402
from lsbench.runner import run_one  # noqa: E402


def best_by(record, seconds):
    """The least objective (minus the best cut) any search had reached by `seconds` of wall time."""
    return min(obj for search in record["searches"] for _it, t, obj in search["trajectory"] if t <= seconds)


def measure(graph, searches, seconds, marks, data):
    rec = run_one("maxcut", graph, algorithm="tabu", backend="gpu-resident", seed=1, seconds=seconds,
                  searches=searches, data=data)
    bks = manifest()[graph].bks_value()
    n = rec["neighbourhood_size"]
    kernel_s = rec["backend_info"]["kernel_s"]
    row = {"graph": graph, "n": n, "searches": searches, "seconds": rec["wall_s"], "kernel_s": kernel_s,
           "iterations": rec["aggregate_iterations"], "moves_per_s": rec["aggregate_iterations"] * n / kernel_s,
           "best_known_cut": -bks, "device": rec["backend_info"].get("device"), "model": rec["backend_info"].get("model")}
    for mark in marks:
        cut = -best_by(rec, mark)
        row[f"cut_at_{mark:g}s"] = cut
        row[f"gap_at_{mark:g}s_percent"] = 100.0 * (-bks - cut) / -bks
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="G22,G43,G55,G70", type=lambda v: v.split(","))
    ap.add_argument("--searches", type=int, default=528)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--marks", default="10,60", type=lambda v: [float(x) for x in v.split(",")])
    ap.add_argument("--data-dir")
    ap.add_argument("--out", help="default: benchmarks/results/")
    args = ap.parse_args()
    rows = []
    run_one("maxcut", args.graphs[0], algorithm="tabu", backend="gpu-resident", seed=1, iterations=50, searches=2,
            data=args.data_dir)  # the JIT compile, outside every timed run
    for graph in args.graphs:
        rows.append(measure(graph, args.searches, args.seconds, args.marks, args.data_dir))
        r = rows[-1]
        print(f"{graph:>4} n {r['n']:>6} {r['moves_per_s'] / 1e9:7.2f} G moves/s   " +
              "   ".join(f"cut at {m:g} s {r[f'cut_at_{m:g}s']:,} (gap {r[f'gap_at_{m:g}s_percent']:.2f}%)"
                         for m in args.marks) + f"   best known {r['best_known_cut']:,}", flush=True)
    print(f"-> {write_result('maxcut_gset', {'rows': rows}, args.out)}")


if __name__ == "__main__":
    main()
