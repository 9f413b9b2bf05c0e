"""Time to a target with islands on and off: `mpirun -n R lsbench multistart --backend gpu-resident
--algorithm rots --searches K --seconds CAP --target bks+P%` with `--exchange-every E` (live islands,
each rank's K/R searches one island) and without (independent searches), interleaved, each run on
its own block of seeds. The run's time to target is the summary's first_time_to_target_s: the first
search of any rank at the target, from the first timed start.

    python benchmarks/islands_target.py [--instance tai50a] [--ranks 2] [--searches 264] [--runs 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import write_result
from cow_table import ROOT, mpirun


def one(args, seed, every):
    out = Path(tempfile.mkdtemp()) / "ms"
    cmd = [*mpirun(), "-n", str(args.ranks), sys.executable, "-m", "lsbench", "multistart", "--via", "mpi",
           "--searches", str(args.searches), "--seed", str(seed), "--instance", args.instance, "--algorithm", "rots",
           "--backend", "gpu-resident", "--seconds", str(args.cap), "--target", f"bks+{args.percent}%",
           "--out-dir", str(out)]
    if every:
        cmd += ["--exchange-every", str(every)]
    else:
        cmd += ["--searches-per-gpu", str(args.searches // args.ranks)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "CUDA_VISIBLE_DEVICES": "0"},
                       timeout=args.cap + 300)
    if r.returncode != 0:
        raise SystemExit(f"seed {seed} every {every} failed: {r.stdout[-1500:]} {r.stderr[-1500:]}")
    s = json.loads((out / "summary.json").read_text())
    return {"seed": seed, "exchange_every": every, "first_time_to_target_s": s.get("first_time_to_target_s"),
            "best_objective": s["best_objective"], "gap_percent_of_best": s["gap_percent_of_best"],
            "aggregate_iterations_per_s": s["aggregate_iterations_per_s"], "islands": s.get("islands")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="tai50a")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--searches", type=int, default=264)
    ap.add_argument("--every", type=int, default=5000)
    ap.add_argument("--percent", type=float, default=0.2)
    ap.add_argument("--cap", type=float, default=30.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = {"islands": [], "independent": []}
    for k in range(args.runs):
        seed = 1 + k * args.searches
        for name, every in (("islands", args.every), ("independent", 0)):
            row = one(args, seed, every)
            rows[name].append(row)
            print(f"{name} seed {seed}: time to target {row['first_time_to_target_s']} s, best {row['best_objective']} "
                  f"({row['gap_percent_of_best']:.3f} %)", flush=True)

    def median_time(rs):  # a run that missed the target counts as the cap
        return statistics.median([r["first_time_to_target_s"] if r["first_time_to_target_s"] is not None
                                  else args.cap for r in rs])
    summary = {name: {"reached": sum(r["first_time_to_target_s"] is not None for r in rs),
                      "median_time_s": median_time(rs)} for name, rs in rows.items()}
    path = write_result("islands_target", {"instance": args.instance, "ranks": args.ranks, "searches": args.searches,
                                            "exchange_every": args.every, "target_percent": args.percent,
                                            "cap_s": args.cap, "rows": rows, "summary": summary}, args.out)
    print(f"\n| {args.ranks} ranks on one GPU, {args.searches} searches | reached | median time to "
          f"bks+{args.percent}% (s; a miss counts {args.cap:g}) |\n|---|---|---|")
    for name, v in summary.items():
        print(f"| {name} | {v['reached']}/{args.runs} | {v['median_time_s']:.2f} |")
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
