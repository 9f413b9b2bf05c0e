"""Ranks sharing one GPU, each running batches of resident Ro-TS searches: `mpirun -n R lsbench
multistart --backend gpu-resident --algorithm rots --searches K --searches-per-gpu B` for R = 1
and 2 on the same GPU (the driver time-slices the two ranks' kernels); with --exchange-every E also
2 ranks as live islands (each rank's K/2 searches in one run, elites passed every E iterations),
with the time each exchange held the GPU's host loop beside the chunks' time. Interleaved
repeats, one run.

    python benchmarks/multistart_sharing.py [--instance tai100a] [--searches 264] [--per-gpu 132]
        [--exchange-every 2000]

Aggregate iterations/s is the summary's: every search's iterations over the time some timed search
ran on some rank (the union of the runs' timed intervals; start-up, JIT and warm-up left out). The code path is right if two ranks sharing the GPU
give at least 0.9x the one-rank aggregate (the kernels of two processes time-share the device).
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from common import write_result
from cow_table import ROOT, mpirun

from lsbench.processes import run_to_end


ROWS = {"1 rank": (1, {}, False), "2 ranks": (2, {}, False), "2 ranks, islands": (2, {}, True)}


def one(row, args):
    ranks, env, islands = ROWS[row]
    out = Path(tempfile.mkdtemp()) / "ms"
    cmd = [*mpirun(), "-n", str(ranks), sys.executable, "-m", "lsbench", "multistart", "--via", "mpi",
           "--searches", str(args.searches), "--instance", args.instance,
           "--algorithm", "rots", "--backend", "gpu-resident", "--iterations", str(args.iterations),
           "--out-dir", str(out)]
    cmd += ["--exchange-every", str(args.exchange_every)] if islands else ["--searches-per-gpu", str(args.per_gpu)]
    r = run_to_end(cmd, cwd=ROOT, env={**os.environ, "CUDA_VISIBLE_DEVICES": "0", **env},
                   timeout=500)  # (a stop ends mpirun and its ranks)
    if r.returncode != 0:
        raise SystemExit(f"{row} failed: {r.stdout[-2000:]} {r.stderr[-1500:]}")
    s = json.loads((out / "summary.json").read_text())
    recs = [json.loads(p.read_text()) for p in sorted(out.glob("seed-*.json"))]
    runs = {(json.dumps(r["placement"], sort_keys=True), (r.get("batch") or {}).get("first_seed")): r["backend_info"]
            for r in recs}
    chunks = [{"chunks": b["chunks"], "mean_chunk_s": b["kernel_s"] / max(1, b["chunks"]), "max_chunk_s": b["max_chunk_s"],
               "islands": b.get("islands")} for b in runs.values()]
    return s["aggregate_iterations_per_s"], s, chunks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="tai100a")
    ap.add_argument("--searches", type=int, default=264)
    ap.add_argument("--per-gpu", type=int, default=132)
    ap.add_argument("--iterations", type=int, default=100000)
    ap.add_argument("--exchange-every", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--rows", help="row names separated by | (default: all)")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = [r for r in ROWS if (args.exchange_every or not ROWS[r][2])
            and (not args.rows or r in args.rows.split("|"))]
    rates = {r: [] for r in rows}
    details = {r: [] for r in rows}
    one("1 rank", args)  # clocks up
    for _ in range(args.repeats):
        for row in rows:
            rate, summary, chunks = one(row, args)
            rates[row].append(rate)
            details[row].append({"summary_islands": summary.get("islands"), "runs": chunks})
            print(f"{row}: {rate:,.0f} it/s", flush=True)
            for run in chunks:
                print("   ", json.dumps(run), flush=True)
    med = {r: statistics.median(v) for r, v in rates.items()}
    path = write_result("multistart_sharing", {
        "instance": args.instance, "searches": args.searches, "searches_per_gpu": args.per_gpu,
        "iterations": args.iterations, "exchange_every": args.exchange_every,
        "aggregate_iterations_per_s": rates, "median": med,
        "over_one_rank": {r: v / med["1 rank"] for r, v in med.items()} if "1 rank" in med else None, "runs": details}, args.out)
    print(f"\n| ranks on one GPU | aggregate it/s (median of {args.repeats}) | x one rank |\n|---|---|---|")
    for r, v in med.items():
        print(f"| {r} | {v:,.0f} | {v / med.get('1 rank', v):.3f} |")
    if args.exchange_every:
        isl = [run["islands"] | {"mean_chunk_s": run["mean_chunk_s"], "max_chunk_s": run["max_chunk_s"]}
               for d in details["2 ranks, islands"] for run in d["runs"]]
        print("\n| island | exchanges | sent | received | restarted | max exchange ms | mean chunk ms | max chunk ms |")
        print("|---|---|---|---|---|---|---|---|")
        for i in isl:
            print(f"| {i['position']} | {i['exchange_calls']} | {i['sent']} | {i['received']} | {i['replaced']} | "
                  f"{1e3 * i['max_exchange_host_s']:.3f} | {1e3 * i['mean_chunk_s']:.2f} | {1e3 * i['max_chunk_s']:.2f} |")
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
