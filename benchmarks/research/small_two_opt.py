"""Where does 2-opt's speed go below about 2,000 cities (issue 86, item 3: every instance at 0.5x or more
of pr2392's moves/s at the same K)?

    python research/small_two_opt.py [--reference pr2392] [--instances eil101,kroA200,pr1002]
        [--algorithms hc,tabu] [--rows 1,2,4|auto] [--threads 128] [--searches 1056] [--seconds 0.5] [--repeats 3]
        [--check 8] [--matrix-adapter] [--diagonal-loop]
        (device_run.sh 'small2opt ARGS')

Side by side, rows interleaved repeat by repeat, K searches of each algorithm on:
- the resident engine's coordinate 2-opt adapter (gpu/adapters/tsp_two_opt.py) with lanes of each
  `--rows` rows: a warp's work item is 32 x rows rows of the move triangle, so below 32 x rows + 1
  cities one warp of the block scans all of it;
- the same, its last rows x threads, with the exact path reading the tour and the float64 coordinates
  from global memory (as before whole-number coordinates took it from the on-chip X, Y);
- with `--matrix-adapter`, the distance-matrix adapter (gpu/adapters/tsp_two_opt_matrix.py, GEO's and
  explicit weights') at each `--threads`: one move a thread, its four distances read, no estimate and no exact path;
- with `--diagonal-loop`, the adapter at the last rows and threads with the diagonal block's items
  on a loop of their own that masks their non-moves (research: not yet the default);
- tabu search only, where the engine runs it (below 500,000 moves, `own_kernel_faster`): the matrix
  kernel of gpu/engine/whole_gpu_tabu.py.
Moves/s are every search's iterations x n(n-1)/2 over the seconds in kernels; each row's ratio is to
the reference instance's (measured first) best row of the same algorithm. Search K // 2 of each row
is first checked against the CPU search with its seed. The answer goes to docs/notes/one-engine.md.
"""
import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import run_main, write_atomic, write_result  # noqa: E402
from gpu_resident_grid import same  # noqa: E402
from lsbench import instances as registry  # noqa: E402
from lsbench.interfaces import Stop  # noqa: E402
from lsbench.registry import get_evaluator  # noqa: E402
from lsbench.search.hill_climbing import HillClimbing  # noqa: E402
from lsbench.search.tabu import TabuSearch  # noqa: E402


def engines_for(p, nb, algorithm, rows, threads, matrix_adapter, diagonal_loop=False):
    """{label: engine} of one instance and algorithm: the adapter at each rows x threads, and for
    tabu search the matrix kernel."""
    from lsbench.gpu.adapters.tsp_two_opt import adapter
    from lsbench.gpu.adapters.tsp_two_opt_matrix import TspTwoOptMatrixAdapter
    from lsbench.gpu.engine.local_search import ONCHIP_FROM_MOVES, ResidentLocalSearch
    from lsbench.gpu.engine.whole_gpu_tabu import WholeGpuTabu
    prm = TabuSearch().params(nb) if algorithm == "tabu" else {"restarts": True}
    own = adapter(p, nb)  # the adapter's own choices: rows_for, whole_coordinates
    engines = {f"adapter rows {r or f'auto ({own.rows})'} threads {t}": ResidentLocalSearch(
        p, nb, adapter(p, nb, rows=r), algorithm, prm, threads=t) for r in rows for t in threads}
    if own.whole:  # the exact path as before whole coordinates took it from the views
        engines[f"adapter rows {rows[-1] or 'auto'} threads {threads[-1]} exact path global"] = ResidentLocalSearch(
            p, nb, adapter(p, nb, rows=rows[-1], whole=False), algorithm, prm, threads=threads[-1])
    if diagonal_loop:  # the diagonal block's items on a masking loop of their own (make_scan's diagonal_loop)
        engines[f"adapter rows {rows[-1] or 'auto'} threads {threads[-1]} diagonal loop"] = ResidentLocalSearch(
            p, nb, adapter(p, nb, rows=rows[-1], diagonal_loop=True), algorithm, prm, threads=threads[-1])
    for t in threads if matrix_adapter else ():
        engines[f"matrix adapter threads {t}"] = ResidentLocalSearch(p, nb, TspTwoOptMatrixAdapter(p, nb), algorithm,
                                                                     prm, threads=t)
    if algorithm == "tabu" and nb.size < ONCHIP_FROM_MOVES:  # (where the engine runs it: K n x n expiries)
        engines["matrix kernel"] = WholeGpuTabu(p, nb, prm)
    return engines


def followed_cpu(p, nb, algorithm, engine, seeds, check):
    """Whether search len(seeds) // 2 followed the CPU search with its seed for `check` iterations."""
    res = engine.run(seeds, Stop(iterations=check))[len(seeds) // 2]
    search = TabuSearch() if algorithm == "tabu" else HillClimbing()
    cpu = search.run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=check), seeds[len(seeds) // 2])
    return same(cpu, res)


def measure(p, nb, algorithm, engines, args):
    """Rows of one instance and algorithm: each engine's moves/s (median of the repeats, interleaved)."""
    seeds = list(range(args.seed, args.seed + args.searches))
    checked = {label: followed_cpu(p, nb, algorithm, e, seeds, args.check) for label, e in engines.items()}
    rates = {label: [] for label in engines}
    for _ in range(args.repeats):
        for label, engine in engines.items():
            res = engine.run(seeds, Stop(seconds=args.seconds))
            rates[label].append(sum(r.iterations for r in res) * nb.size / engine.kernel_s)
    return [{"instance": p.name, "n": p.n, "algorithm": algorithm, "kernel": label, "searches": args.searches,
             "moves_per_s": statistics.median(rates[label]), "repeats": rates[label],
             "same_trajectory_as_cpu": checked[label], "shape": engines[label].shape} for label in engines]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", default="pr2392", help="measured first: each row's ratio is to its best")
    ap.add_argument("--instances", default="eil101,kroA200,pr1002")
    ap.add_argument("--algorithms", default="hc,tabu")
    ap.add_argument("--rows", default="1,2,4", help="rows a lane evaluates together (the adapter's ROWS; auto: "
                    "the adapter's own choice, rows_for)")
    ap.add_argument("--matrix-adapter", action="store_true", help="the distance-matrix adapter too")
    ap.add_argument("--diagonal-loop", action="store_true", help="the adapter (last rows and threads) with the "
                    "diagonal block's items on a masking loop of their own too")
    ap.add_argument("--threads", default="128", help="threads a block of the adapter's kernel")
    ap.add_argument("--searches", type=int, default=1056)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", type=int, default=8, help="iterations of the trajectory check")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    rows_of = [None if r == "auto" else int(r) for r in args.rows.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    rows = []
    for name in [args.reference] + args.instances.split(","):
        p = registry.load(name, "tsp")
        nb = p.neighbourhood("2opt")
        for algorithm in args.algorithms.split(","):
            measured = measure(p, nb, algorithm, engines_for(p, nb, algorithm, rows_of, threads,
                                                                args.matrix_adapter, args.diagonal_loop), args)
            best = max(x["moves_per_s"] for x in rows + measured
                       if x["instance"] == (rows + measured)[0]["instance"] and x["algorithm"] == algorithm)
            for r in measured:
                r["vs_reference_best"] = r["moves_per_s"] / best
                print(f"| {r['instance']} | {r['algorithm']} | {r['kernel']} | {r['moves_per_s'] / 1e9:,.3f} G moves/s "
                      f"| {r['vs_reference_best']:.3f}x {args.reference} | {r['same_trajectory_as_cpu']} |", flush=True)
            rows += measured
        write_atomic(Path(args.out or "results") / "small_two_opt-partial.json", {"rows": rows})  # (a cut call's)
    print(f"-> {write_result('small_two_opt', {'reference': args.reference, 'rows': rows}, args.out)}")
    return 0 if all(r["same_trajectory_as_cpu"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(run_main(main))
