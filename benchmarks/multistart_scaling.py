"""Multistart over MPI ranks, one GPU per rank: aggregate throughput vs number of GPUs, one run.

    python benchmarks/multistart_scaling.py [--gpus 1,2] [--searches-per-gpu 2] [--iterations 300]

For G GPUs: `mpirun -n G lsbench multistart --searches G*S --backend gpu ...`; the aggregate
iterations/s is the summary's (all searches' iterations over the union of the timed search
intervals, so start-up and JIT warm-up are left out). Scaling efficiency = aggregate(G) / (G *
aggregate(1)). Checks that every rank ran on its own GPU.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import write_result
from cow_table import ROOT, mpirun


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", default="1,2")
    ap.add_argument("--searches-per-gpu", type=int, default=2)
    ap.add_argument("--ranks-per-gpu", type=int, default=1, help="MPI ranks sharing each GPU")
    ap.add_argument("--instance", default="1001-1017")
    ap.add_argument("--neighbourhood", default="hamming2")
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = []
    for g in [int(x) for x in args.gpus.split(",")]:
        out = Path(tempfile.mkdtemp()) / "ms"
        cmd = [*mpirun(), "-n", str(g * args.ranks_per_gpu), sys.executable, "-m", "lsbench", "multistart", "--searches",
               str(g * args.searches_per_gpu), "--instance", args.instance, "--neighbourhood", args.neighbourhood,
               "--algorithm", "tabu", "--via", "mpi", "--backend", "gpu", "--param", "reduce=device", "--iterations",
               str(args.iterations), "--out-dir", str(out)]
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(map(str, range(g)))}  # exactly G GPUs
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
        s = json.loads((out / "summary.json").read_text())
        gpus_used = sorted({(p["host"], p.get("gpu")) for p in s["placements"].values()}, key=str)
        rows.append({"gpus": g, "ranks": g * args.ranks_per_gpu, "searches": s["searches"], "completed": s["completed"],
                     "aggregate_iterations_per_s": s["aggregate_iterations_per_s"], "wall_s": s["wall_s"],
                     "busiest_placement_s": s["busiest_placement_s"], "gpus_used": gpus_used,
                     "search_iterations_per_s": s["search_iterations_per_s"], "command": " ".join(cmd)})
        print(json.dumps(rows[-1]), flush=True)
    base = rows[0]["aggregate_iterations_per_s"] / rows[0]["gpus"]
    for row in rows:
        row["efficiency"] = round(row["aggregate_iterations_per_s"] / (row["gpus"] * base), 4)
    path = write_result("multistart_scaling", {"instance": args.instance, "neighbourhood": args.neighbourhood,
                                               "iterations": args.iterations, "rows": rows}, args.out)
    print(f"\nmultistart, tabu {args.neighbourhood} on {args.instance}, gpu/device -> {path}")
    print(f"{'GPUs':>5} {'searches':>8} {'agg it/s':>10} {'efficiency':>10} gpus used")
    for row in rows:
        print(f"{row['gpus']:>5} {row['searches']:>8} {row['aggregate_iterations_per_s']:>10.1f} "
              f"{row['efficiency']:>10.3f} {row['gpus_used']}")


if __name__ == "__main__":
    sys.exit(main())
