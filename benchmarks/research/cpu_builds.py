"""Is `cpu` (one core) running the fastest one-core code? Each neighbourhood has two builds of one
source (lsbench/problems/base.py: serial_and_parallel); `cpu` keeps the one it times faster on one
thread at bind (lsbench/backends/cpu.py). This times one whole-neighbourhood evaluation of a random
solution by the serial build and by the parallel build on one thread, rows interleaved repeat by
repeat, after warm-up, checks that both give the same deltas, and names the build `cpu` chose.

    python benchmarks/research/cpu_builds.py [--repeats 7] [--cases NAME,...]

A ratio above 1 means the parallel build on one thread is the faster; `cpu` should have chosen it
wherever the ratio is clearly above 1 or below 1 (near 1 either is as fast).
"""
import argparse
import statistics
import sys
from pathlib import Path
import time

import numba
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, the table scripts
from common import run_main, write_result

from lsbench import instances, rng
from lsbench.backends.cpu import CpuEvaluator

CASES = {  # name: (instance, problem, neighbourhood, problem parameters)
    "tai100a swap": ("tai100a", "qap", None, {}),
    "eil101 2opt": ("eil101", "tsp", "2opt", {}),
    "pr2392 2opt": ("pr2392", "tsp", "2opt", {}),
    "101-117 hamming2": ("101-117", "ppp", "hamming2", {}),
    "ta051 insertion makespan": ("ta051", "pfsp", "insertion", {}),
    "050_10_01 insertion three": ("050_10_01", "pfsp", "insertion", {"objective": "three"}),
    "200_10_01 insertion three": ("200_10_01", "pfsp", "insertion", {"objective": "three"}),
    "ta111 insertion three": ("ta111", "pfsp", "insertion", {"objective": "three"}),
    "weierstrass-2 crowns": ("weierstrass-2", "weierstrass", "crowns", {"neighbours": 10000}),
}


def evaluation_seconds(nb, solution, parallel, out):
    """Seconds of one evaluation by the serial (parallel False) or the parallel build."""
    state = nb.state(solution, parallel)
    t = time.perf_counter()
    nb.evaluate(solution, state, out, parallel)
    return time.perf_counter() - t


def measure(name, repeats):
    instance, problem, neighbourhood, params = CASES[name]
    pr = instances.load(instance, problem, None, params)
    nb = pr.neighbourhood(neighbourhood)
    solution = pr.random_solution(rng.new_state(0))
    outs = {build: np.empty(nb.out_shape(), nb.delta_dtype()) for build in ("serial", "parallel")}
    numba.set_num_threads(1)
    times = {"serial": [], "parallel": []}
    for k in range(repeats + 1):  # the first round compiles and warms up, untimed
        for build in times:
            s = evaluation_seconds(nb, solution, build == "parallel", outs[build])
            if k:
                times[build].append(s)
    same = bool(np.array_equal(outs["serial"], outs["parallel"]))
    chosen = CpuEvaluator().bind(pr, nb)
    cpu_build = "parallel" if chosen.parallel else "serial"
    serial, parallel = statistics.median(times["serial"]), statistics.median(times["parallel"])
    return {"case": name, "moves": int(nb.size), "serial_s": serial, "parallel_one_thread_s": parallel,
            "serial_over_parallel": serial / parallel, "repeats": times, "same_deltas": same,
            "cpu_build": cpu_build}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = []
    for name in args.cases.split(","):
        rows.append(measure(name, args.repeats))
        r = rows[-1]
        print(f"{name}: serial {r['serial_s'] * 1e3:.3f} ms, parallel build on one thread "
              f"{r['parallel_one_thread_s'] * 1e3:.3f} ms ({r['serial_over_parallel']:.2f}x)", flush=True)
    path = write_result("cpu_builds", {"rows": rows}, args.out)
    print("\n| case | moves | serial (ms) | parallel build, 1 thread (ms) | serial / parallel | same deltas | `cpu` runs |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['moves']:,} | {r['serial_s'] * 1e3:.3f} | {r['parallel_one_thread_s'] * 1e3:.3f} | "
              f"{r['serial_over_parallel']:.2f} | {r['same_deltas']} | {r['cpu_build']} |")
    print(f"-> {path}")
    return 0 if all(r["same_deltas"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(run_main(main))
