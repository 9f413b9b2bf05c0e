"""Solution level (Bożejko et al., Table 1): one permutation's makespan with p threads vs 1 thread.

    python benchmarks/research/gpu_makespan.py

Each block evaluates one permutation `repeats` times inside the kernel, so the time per
evaluation is kernel time / repeats (launch overhead amortised); one block only, as in the paper
(the parallelism is inside one evaluation). Median of 5 launches after a warm-up; every result is
checked against the CPU makespan and flow time.
"""
import statistics
import sys
from pathlib import Path
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, the table scripts
from common import write_result
from numba import cuda

from lsbench.gpu.solution.makespan import makespan_flowtime
from lsbench import instances as registry
from lsbench import rng
from lsbench.problems.pfsp import schedule_objectives

GROUPS = ["ta001", "ta011", "ta021", "ta031", "ta041", "ta051", "ta061", "ta071", "ta081", "ta091", "ta101",
          "ta111"]


def main():
    rows = []
    for name in GROUPS:
        p = registry.load(name)
        perm = rng.permutation(rng.new_state(1), p.n)
        want = tuple(int(v) for v in schedule_objectives(p.pt, p.due, perm)[:2])
        repeats = max(10, 200000 // (p.n * p.m))
        times = {}
        for threads in sorted({1, 2, 4, 8, p.m // 2 or 1, p.m, 32}):
            got = makespan_flowtime(p.pt, perm, threads, repeats=1)
            assert tuple(got[0]) == want, (name, threads)
            ts = []
            for _ in range(5):
                t = time.perf_counter()
                makespan_flowtime(p.pt, perm, threads, repeats=repeats)
                cuda.synchronize()
                ts.append(time.perf_counter() - t)
            times[threads] = statistics.median(ts) / repeats
        rows.append({"instance": name, "n": p.n, "m": p.m, "seconds_per_evaluation": times,
                     "speedup_vs_1_thread": {k: times[1] / v for k, v in times.items()}})
        print(f"{name} {p.n}x{p.m}: " + " ".join(f"p={k}:{times[1] / v:.2f}x" for k, v in times.items()), flush=True)
    path = write_result("gpu_makespan", {"rows": rows})
    print(f"-> {path}")


if __name__ == "__main__":
    sys.exit(main())
