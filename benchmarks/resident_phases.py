"""Where a gpu-resident Ro-TS iteration spends its time: kernels with phases left out (profiling
only; those variants are not Ro-TS). Iterations/s for one search and for one block per SM.

    python benchmarks/resident_phases.py [--instance tai100a] [--threads 512]
"""
import argparse
import sys
import time

import numpy as np
from common import write_result
from numba import cuda

from gpu import resident
from lsbench import instances as registry
from lsbench.search.common import Stop
from lsbench.search.tabu import RobustTabuSearch

VARIANTS = [("select", "update", "recompute"), ("select",), ("update",), ("recompute",), ("select", "update"),
            ()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="tai100a")
    ap.add_argument("--threads", type=int, default=512)
    ap.add_argument("--iterations", type=int, default=4000)
    ap.add_argument("--data-dir")
    ap.add_argument("--out")
    args = ap.parse_args()
    p = registry.load(args.instance, None, args.data_dir)
    prm = RobustTabuSearch().params(p)
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    rows = []
    for phases in VARIANTS:
        eng = resident.ResidentRots(p, prm, threads=args.threads)
        sh = eng.shape
        eng.kernel = resident.kernel_for(p.n, sh["threads"], sh["wide"], sh["delta_in_shared"], phases)
        eng.run([1], Stop(iterations=2))
        for k in (1, sms):
            eng.run(list(range(1, k + 1)), Stop(iterations=args.iterations), chunk=args.iterations)
            rate = k * args.iterations / eng.loop_s
            rows.append({"phases": list(phases), "searches": k, "aggregate_it_per_s": rate,
                         "us_per_iteration": 1e6 * eng.loop_s / args.iterations})
            print(f"{'+'.join(phases) or 'loop only':28} searches {k:4}: {rate:12,.0f} it/s, "
                  f"{1e6 * eng.loop_s / args.iterations:8.2f} us per iteration", flush=True)
    write_result("resident_phases", {"instance": args.instance, "threads": args.threads, "rows": rows}, args.out)


if __name__ == "__main__":
    sys.exit(main())
