"""cAS + tabu search with each generation's local searches on the GPU (one block per ant,
`--backend gpu-resident`) vs the same colony on all CPU cores (`cpu-parallel`), one host, one run:
time to reach Tsutsui & Fujimoto's acceptable error (their Table 6: 1% above the best known value
on class (i), the best known value on class (iv)), median of R runs (seeds 1..R), beside their
GTX 480 times (TS with MATA). A run that misses the target within its cap counts as the cap and is
marked; the median is then a lower bound.

    python benchmarks/cas_gpu.py [--instances tai40a,tai50b] [--runs 10] [--cpu-runs 3] [--cap 20]
"""
import argparse
import math
import statistics
import sys

from common import run_main, write_result

from lsbench import instances as registry
from lsbench.errors import LsbenchError
from lsbench.runner import run_one

# instance: (acceptable error %, GTX 480 T_avg seconds, i7 965 T_avg seconds), TS with MATA
TABLE6 = {"tai40a": (1.0, 0.1, 2.0), "tai50a": (1.0, 0.4, 9.9), "tai60a": (1.0, 1.0, 23.3),
          "tai80a": (1.0, 3.2, 56.7), "tai100a": (1.0, 7.1, 108.6), "tai50b": (0.0, 0.3, 6.3),
          "tai60b": (0.0, 0.5, 15.7), "tai80b": (0.0, 8.1, 138.7), "tai100b": (0.0, 16.2, 373.0),
          "tai150b": (0.2, 138.6, 1815.1)}


def time_to_target(instance, backend, target, seeds, cap, backend_params=None):
    runs = []
    for seed in seeds:
        rec = run_one("qap", instance, algorithm="cas", backend=backend, seed=seed, seconds=cap, target=target,
                      backend_params=backend_params)
        runs.append({"seed": seed, "best": rec["best_objective"], "reached": rec["best_objective"] <= target,
                     "seconds": rec["wall_s"], "generations": rec["params"]["generations"]})
    times = [r["seconds"] if r["reached"] else cap for r in runs]
    return {"runs": runs, "median_s": statistics.median(times),
            "all_reached": all(r["reached"] for r in runs)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", default="tai40a,tai50a,tai60a,tai80a,tai100a,tai50b,tai60b,tai80b,tai100b")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cpu-runs", type=int, default=3, help="runs of the cpu-parallel colony (0: none)")
    ap.add_argument("--cap", type=float, default=20.0, help="seconds per run at most")
    ap.add_argument("--block", type=int, help="threads per ant's search on the GPU (default: the engine's choice)")
    ap.add_argument("--out")
    args = ap.parse_args()
    unknown = [inst for inst in args.instances.split(",") if inst not in TABLE6]
    if unknown:
        raise LsbenchError(f"--instances: {', '.join(unknown)} not in Tsutsui & Fujimoto's Table 6 "
                           f"(known: {', '.join(TABLE6)})")
    rows = []
    for inst in args.instances.split(","):
        err, gtx480, i7 = TABLE6[inst]
        bks = registry.bks_of(registry.load(inst, "qap"))
        target = int(math.floor(bks * (1 + err / 100)))
        row = {"instance": inst, "bks": bks, "acceptable_error_percent": err, "target": target,
               "paper_gtx480_s": gtx480, "paper_i7_965_s": i7}
        row["gpu"] = time_to_target(inst, "gpu-resident", target, range(1, args.runs + 1), args.cap,
                                    {"block": args.block} if args.block else None)
        row["gpu"]["threads_per_ant"] = args.block or "auto"
        if args.cpu_runs:
            row["cpu_parallel"] = time_to_target(inst, "cpu-parallel", target, range(1, args.cpu_runs + 1), args.cap)
        row["gpu_vs_paper_gpu"] = gtx480 / row["gpu"]["median_s"]
        rows.append(row)
        print(_line(row), flush=True)
    path = write_result("cas_gpu", {"cap_s": args.cap, "block": args.block or "auto", "rows": rows}, args.out)
    print(f"\n{'instance':9} {'target':>10} {'GPU med s':>10} {'all?':>5} {'CPU16 med s':>11} {'GTX480 s':>9} "
          f"{'paper/ours':>10}")
    for r in rows:
        print(_line(r))
    print(f"-> {path}")


def _line(r):
    cpu = r.get("cpu_parallel")
    return (f"{r['instance']:9} {r['target']:10d} {r['gpu']['median_s']:10.3f} {str(r['gpu']['all_reached']):>5} "
            f"{(cpu['median_s'] if cpu else float('nan')):11.3f} {r['paper_gtx480_s']:9.1f} "
            f"{r['gpu_vs_paper_gpu']:10.2f}")


if __name__ == "__main__":
    sys.exit(run_main(main))
