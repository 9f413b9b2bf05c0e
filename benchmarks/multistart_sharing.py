"""Ranks sharing one GPU, each running batches of resident Ro-TS searches: `mpirun -n R lsbench
multistart --backend gpu-resident --algorithm rots --searches K --searches-per-gpu B` for R = 1
and 2 on the same GPU, interleaved repeats, one run.

    python benchmarks/multistart_sharing.py [--instance tai100a] [--searches 264] [--per-gpu 132]

Aggregate iterations/s is the summary's: every search's iterations over the time some timed search
ran on some rank (the union of the runs' timed intervals; start-up, JIT and warm-up left out). The code path is right if two ranks sharing the GPU
give at least 0.9x the one-rank aggregate (the kernels of two processes time-share the device).
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


def one(ranks, args):
    out = Path(tempfile.mkdtemp()) / "ms"
    cmd = [*mpirun(), "-n", str(ranks), sys.executable, "-m", "lsbench", "multistart", "--via", "mpi",
           "--searches", str(args.searches), "--searches-per-gpu", str(args.per_gpu), "--instance", args.instance,
           "--algorithm", "rots", "--backend", "gpu-resident", "--iterations", str(args.iterations),
           "--out-dir", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "CUDA_VISIBLE_DEVICES": "0"},
                       timeout=500)
    if r.returncode != 0:
        raise SystemExit(f"ranks={ranks} failed: {r.stderr[-2000:]}")
    s = json.loads((out / "summary.json").read_text())
    return s["aggregate_iterations_per_s"], s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="tai100a")
    ap.add_argument("--searches", type=int, default=264)
    ap.add_argument("--per-gpu", type=int, default=132)
    ap.add_argument("--iterations", type=int, default=100000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    rates = {1: [], 2: []}
    summaries = {}
    one(1, args)  # clocks up
    for _ in range(args.repeats):
        for ranks in (1, 2):
            rate, summaries[ranks] = one(ranks, args)
            rates[ranks].append(rate)
            print(f"ranks={ranks}: {rate:,.0f} it/s", flush=True)
    med = {r: statistics.median(v) for r, v in rates.items()}
    ratio = med[2] / med[1]
    placements = {str(k): v for k, v in summaries[2]["placements"].items()}
    path = write_result("multistart_sharing", {
        "instance": args.instance, "searches": args.searches, "searches_per_gpu": args.per_gpu,
        "iterations": args.iterations, "aggregate_iterations_per_s": {str(k): v for k, v in rates.items()},
        "median": {str(k): v for k, v in med.items()}, "two_ranks_over_one": ratio,
        "two_rank_placements": placements}, args.out)
    print(f"\n| ranks on one GPU | aggregate it/s (median of {args.repeats}) |\n|---|---|")
    for r, v in med.items():
        print(f"| {r} | {v:,.0f} |")
    print(f"two ranks / one rank = {ratio:.3f}\n-> {path}")
    return 0 if ratio >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
