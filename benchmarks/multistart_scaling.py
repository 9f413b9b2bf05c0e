"""Multistart over MPI ranks, one GPU per rank: aggregate throughput vs number of GPUs, one run.

    python benchmarks/multistart_scaling.py [--gpus 1,2,4] [--instance tai100a] [--algorithm rots]
        [--backend gpu-resident] [--searches-per-gpu 132] [--iterations 3000000] [--repeats 3]

For G GPUs: `mpirun -n G lsbench multistart --via mpi --searches G*S --searches-per-gpu S ...`,
each row seeing exactly G GPUs (CUDA_VISIBLE_DEVICES: the first G of those it names, where set). Rows are interleaved: repeat 1 runs every
G, then repeat 2, so a drift of clocks or host load falls on all G alike. The aggregate
iterations/s is the summary's (all searches' iterations over the union of the timed search
intervals: start-up, JIT and warm-up are left out; the ranks start their timed searches together
after a barrier), beside each rank's own rate and the start skew. Scaling efficiency =
aggregate(G) / (G * aggregate(1) of the same repeat). Checks that every rank ran on its own GPU.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from common import run_main, write_result
from cow_table import ROOT, mpirun

from lsbench.processes import run_to_end


def one(g, args, every=0):
    out = Path(tempfile.mkdtemp()) / "ms"
    cmd = [*mpirun(), "-n", str(g), sys.executable, "-m", "lsbench", "multistart", "--via", "mpi",
           "--searches", str(g * args.searches_per_gpu),
           "--instance", args.instance, "--algorithm", args.algorithm, "--backend", args.backend,
           "--iterations", str(args.iterations), "--seed", str(args.seed), "--out-dir", str(out)]
    if every:  # live islands: each rank's share in one run, elites round the ring
        cmd += ["--exchange-every", str(every)]
    elif args.backend == "gpu-resident":  # one run of S searches per rank
        cmd += ["--searches-per-gpu", str(args.searches_per_gpu)]
    if args.neighbourhood:
        cmd += ["--neighbourhood", args.neighbourhood]
    for p in args.param:
        cmd += ["--param", p]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")  # a caller's choice of GPUs is kept: its first G
    gpus = visible.split(",")[:g] if visible else [str(k) for k in range(g)]
    if len(gpus) < g:
        raise SystemExit(f"G = {g}: CUDA_VISIBLE_DEVICES={visible} names only {len(gpus)} GPUs")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(gpus)}  # exactly G GPUs
    r = run_to_end(cmd, cwd=ROOT, env=env, timeout=args.timeout)  # (a stop ends mpirun and its ranks)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stdout[-1500:]}\n{r.stderr[-3000:]}")
    s = json.loads((out / "summary.json").read_text())
    gpus_used = sorted({(p["host"], p.get("rank"), p.get("gpu")) for p in s["placements"].values()}, key=str)
    if args.backend.startswith("gpu") and len({(h, gpu) for h, _rank, gpu in gpus_used}) != g:
        raise SystemExit(f"G = {g}: the ranks did not run on {g} distinct GPUs: {gpus_used}")
    return {"gpus": g, "islands": bool(every), "searches": s["searches"], "completed": s["completed"],
            "aggregate_iterations_per_s": s["aggregate_iterations_per_s"],
            "rank_iterations_per_s": s["placement_iterations_per_s"], "start_skew_s": s["start_skew_s"],
            "timed_union_s": s["timed_union_s"], "wall_s": s["wall_s"], "gpus_used": gpus_used,
            "best_objective": s["best_objective"], "island_exchanges": s.get("islands"), "command": " ".join(cmd)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", default="1,2")
    ap.add_argument("--instance", default="tai100a")
    ap.add_argument("--algorithm", default="rots")
    ap.add_argument("--backend", default="gpu-resident")
    ap.add_argument("--neighbourhood")
    ap.add_argument("--param", action="append", default=[], help="NAME=VALUE, passed to every run")
    ap.add_argument("--searches-per-gpu", type=int, default=132)
    ap.add_argument("--iterations", type=int, default=3000000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--islands", type=int, default=0, metavar="E",
                    help="also the largest G as live islands exchanging every E iterations, in each repeat")
    ap.add_argument("--timeout", type=int, default=300, help="seconds one mpirun may take")
    ap.add_argument("--out")
    args = ap.parse_args()
    gpus = [int(x) for x in args.gpus.split(",")]
    if gpus[0] != 1:
        raise SystemExit("--gpus: the first count must be 1 (the efficiency's base)")
    rows = []
    cases = [(g, 0) for g in gpus] + ([(gpus[-1], args.islands)] if args.islands else [])
    for repeat in range(args.repeats):
        base = None
        for g, every in cases:
            row = one(g, args, every) | {"repeat": repeat}
            base = base or row["aggregate_iterations_per_s"]
            row["efficiency"] = round(row["aggregate_iterations_per_s"] / (g * base), 4)
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "command"}), flush=True)
    def label(g, every):
        return f"{g} islands" if every else str(g)
    medians = {label(g, e): statistics.median(r["aggregate_iterations_per_s"] for r in rows
                                              if (r["gpus"], r["islands"]) == (g, bool(e))) for g, e in cases}
    path = write_result("multistart_scaling", {
        "instance": args.instance, "algorithm": args.algorithm, "backend": args.backend,
        "searches_per_gpu": args.searches_per_gpu, "iterations": args.iterations, "repeats": args.repeats,
        "islands_exchange_every": args.islands,
        "rows": rows, "median_aggregate_iterations_per_s": medians}, args.out)
    print(f"\nmultistart, {args.algorithm} on {args.instance}, {args.backend}, {args.searches_per_gpu} searches a GPU, "
          f"{args.iterations:,} iterations a search -> {path}")
    print("| GPUs | aggregate M it/s (repeats) | x G = 1 of its repeat | per-rank M it/s (min-max) | start skew s (max) |")
    print("|---|---|---|---|---|")
    for g, every in cases:
        rs = [r for r in rows if (r["gpus"], r["islands"]) == (g, bool(every))]
        aggregates = ", ".join(f"{r['aggregate_iterations_per_s'] / 1e6:.1f}" for r in rs)
        speedups = ", ".join(f"{r['efficiency'] * g:.3f}" for r in rs)
        per_rank = [v for r in rs for v in r["rank_iterations_per_s"].values()]
        skew = max(r["start_skew_s"] or 0 for r in rs)
        print(f"| {label(g, every)} | {aggregates} | {speedups} | {min(per_rank) / 1e6:.2f}-{max(per_rank) / 1e6:.2f} | {skew:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
