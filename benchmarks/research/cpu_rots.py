"""CPU robust tabu search throughput on QAP: one core, and all cores (independent searches).

    python benchmarks/research/cpu_rots.py --instance tai100a --iterations 20000 --repeats 5

One core: the fused compiled Ro-TS of the `cpu` backend, median of repeats after a warm-up run
(JIT compile excluded). All cores: one independent search per core in separate processes, started
together; aggregate iterations/s = sum over searches of iterations / their wall time.
"""
import argparse
import multiprocessing as mp
import os
import sys
from pathlib import Path
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, the table scripts
from common import median_of, write_result

from lsbench import instances as registry
from lsbench.registry import get_evaluator
from lsbench.interfaces import Stop
from lsbench.search.tabu import RobustTabuSearch


def one_search(instance, iterations, seed, data=None):
    p = registry.load(instance, data=data)
    nb = p.neighbourhood()
    ev = get_evaluator("cpu").bind(p, nb)
    RobustTabuSearch().run(p, nb, ev, Stop(iterations=200), seed)  # warm-up / compile
    t = time.perf_counter()
    r = RobustTabuSearch().run(p, nb, ev, Stop(iterations=iterations), seed)
    dt = time.perf_counter() - t
    return {"seed": seed, "iterations": r.iterations, "seconds": dt, "best": r.best_objective}


def _worker(args):
    os.environ["NUMBA_NUM_THREADS"] = "1"
    return one_search(*args)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="tai100a")
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--data-dir")
    args = ap.parse_args()

    runs = []
    med, _ = median_of(lambda: runs.append(one_search(args.instance, args.iterations, len(runs) + 1, args.data_dir))
                       or runs[-1]["iterations"] / runs[-1]["seconds"], args.repeats)
    with mp.get_context("spawn").Pool(args.cores) as pool:
        t = time.perf_counter()
        par = pool.map(_worker, [(args.instance, args.iterations, 100 + c, args.data_dir) for c in range(args.cores)])
        wall = time.perf_counter() - t
    aggregate = sum(r["iterations"] / r["seconds"] for r in par)
    path = write_result("cpu_rots", {
        "instance": args.instance, "iterations_per_run": args.iterations, "repeats": args.repeats,
        "one_core": {"median_iterations_per_s": med, "runs": runs},
        "all_cores": {"cores": args.cores, "aggregate_iterations_per_s": aggregate, "wall_s_incl_startup": wall,
                      "runs": par},
    })
    print(f"{'instance':10} {'one core it/s':>14} {'all cores it/s':>15} {'cores':>6}")
    print(f"{args.instance:10} {med:14.0f} {aggregate:15.0f} {args.cores:6d}")
    print(f"-> {path}")


if __name__ == "__main__":
    sys.exit(main())
