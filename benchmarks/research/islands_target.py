"""One GPU, independent searches and live islands side by side, on the same seeds: each variant is
`mpirun -n RANKS lsbench multistart --backend gpu-resident --algorithm rots --searches K --seconds CAP
--target bks+P%` as it asks, the variants of run k one after another on seed block k (paired), run
after run. Variants (--variants, comma-separated):
  one-gpu      one rank, K / R searches at once (the G = 1 row)
  independent  R ranks, K / R searches at once each, no exchange
  copy:E       R ranks as live islands, the 4 best passed every E iterations, restarting searches as sent
  cross:E      the same, each arrival crossed with the best of the search it restarts
and any of them with params of its own after a +, e.g. one-gpu+perturb=0.5+restart=1000000 (over
the --param's of every run).
Per variant: runs at the target, the median time to it (a run that missed it counts as never),
the median gap at the end; each run's pool bests are kept for pool_resample.py. Each rank takes
its own GPU (its local rank); --share-gpu puts them all on GPU 0. SIGTERM (a call's time limit)
ends the run in progress (its mpirun and ranks) and writes the result file of the runs every variant finished.

    python benchmarks/research/islands_target.py --instance tai100a --ranks 2 --searches 264 --percent 0 --cap 30 \\
        --runs 3 --variants one-gpu,independent,copy:500000 --param pools=33 --param restart=100000
"""
import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, the table scripts
from common import run_main, write_result
from cow_table import ROOT, mpirun

from lsbench import instances
from lsbench.errors import LsbenchError
from lsbench.files import write_atomic
from lsbench.params import split_pairs
from lsbench.search.restarts import EliteRestarts
from lsbench.processes import Stopped, raise_stopped, run_to_end



def pool_bests(searches_dir):
    """Every pool's best objective in one run: its searches' records, grouped as the engine grouped
    them (each batch of searches one engine run, its pools over the batch's seeds in order)."""
    records = sorted((json.loads(p.read_text()) for p in Path(searches_dir).glob("seed-*.json")),
                     key=lambda r: r["seed"])
    if not records or any("batch" not in r or "pools" not in r["backend_info"].get("restart", {}) for r in records):
        raise LsbenchError(f"{Path(searches_dir).name}: not a run of resident Ro-TS searches with restart pools")
    batches = {}
    for r in records:
        batches.setdefault(r["batch"]["first_seed"], []).append(r)
    bests = []
    for batch in batches.values():
        pools = batch[0]["backend_info"]["restart"]["pools"]
        pool_of = EliteRestarts(1, len(batch), 1, 1, 0.0, 0, pools=pools).pool_of
        for g in range(pool_of.max() + 1):
            bests.append(min(r["best_objective"] for r, k in zip(batch, pool_of) if k == g))
    return bests, records[0]["bks"]

def variant_args(variant, args):
    """(ranks, lsbench multistart arguments, the variant's own KEY=VALUE params) of a variant name;
    LsbenchError for an unknown one."""
    start, *own = variant.split("+")
    if not all(key and value for key, _, value in (p.partition("=") for p in own)):
        raise LsbenchError(f"--variants: START+KEY=VALUE+..., got {variant!r}")
    return (*start_args(start, args), own)


def start_args(variant, args):
    """(ranks, lsbench multistart arguments) of a variant's start (one-gpu, independent, copy:E, cross:E)."""
    share = args.searches // args.ranks
    if variant == "one-gpu":
        return 1, ["--searches", str(share), "--searches-per-gpu", str(share)]
    if variant == "independent":
        return args.ranks, ["--searches", str(args.searches), "--searches-per-gpu", str(share)]
    start, _, every = variant.partition(":")
    if start in ("copy", "cross") and every.isdigit() and int(every) > 0:
        return args.ranks, ["--searches", str(args.searches), "--exchange-every", every, "--migrant-start", start]
    raise LsbenchError(f"--variants: one-gpu, independent, copy:E or cross:E (E > 0 iterations), got {variant!r}")


def one(args, variant, seed):
    ranks, extra, own = variant_args(variant, args)
    out = Path(tempfile.mkdtemp()) / "ms"
    cmd = [*mpirun(), "-n", str(ranks), sys.executable, "-m", "lsbench", "multistart", "--via", "mpi", "--seed",
           str(seed), "--instance", args.instance, "--algorithm", "rots", "--backend", "gpu-resident",
           "--seconds", str(args.cap), "--target", f"bks+{args.percent}%", "--out-dir", str(out), *extra]
    for key, value in {**split_pairs(args.param), **split_pairs(own)}.items():  # (the variant's own over the run's)
        cmd += ["--param", f"{key}={value}"]
    env = {**os.environ, **({"CUDA_VISIBLE_DEVICES": "0"} if args.share_gpu else {})}
    r = run_to_end(cmd, cwd=ROOT, env=env, timeout=args.cap * 2 + 300)  # (a stop ends mpirun and its ranks)
    if r.returncode != 0:
        raise SystemExit(f"{variant} seed {seed} failed: {r.stdout[-1500:]} {r.stderr[-1500:]}")
    s = json.loads((out / "summary.json").read_text())
    try:  # each pool's best, for pool_resample.py (runs with restart pools only)
        pools, bks = pool_bests(out)
    except LsbenchError:
        pools, bks = None, None
    return {"variant": variant, "seed": seed, "first_time_to_target_s": s.get("first_time_to_target_s"),
            "best_objective": s["best_objective"], "gap_percent_of_best": s["gap_percent_of_best"],
            "aggregate_iterations_per_s": s["aggregate_iterations_per_s"], "runs": s["runs"],
            "timed_union_s": s["timed_union_s"], "islands": s.get("islands"), "pool_bests": pools, "bks": bks}


def read_result(path):
    """An islands_target.py result file (or its partial file): {"instance", "rows": {variant: [run]}, ...}."""
    try:
        result = json.loads(Path(path).read_text())
        if not isinstance(result.get("rows"), dict) or "instance" not in result:
            raise KeyError("rows, instance")
    except (OSError, ValueError, KeyError, AttributeError) as e:
        raise LsbenchError(f"{path}: not an islands_target.py result file ({e})") from None
    return result


def median_time(times):
    """The median of the runs' times to the target, a miss (None) counted as never (None past half),
    as the report's table takes it (report.median_time_to_target, which needs pandas: not on the device)."""
    middle = statistics.median([float("inf") if t is None else t for t in times])
    return None if middle == float("inf") else middle


def paired_runs(args, variants):
    """({variant: [row]}, None, or a line saying where SIGTERM stopped them): every variant of run k on
    seed block k, run after run. After each run a partial file holds what is done (what a killed call
    leaves); on SIGTERM the run in progress is dropped (run_to_end ends its mpirun and ranks) and the runs
    that every variant finished are kept, so that a call's time limit loses one run, not the file."""
    rows = {v: [] for v in variants}
    previous = signal.signal(signal.SIGTERM, raise_stopped)
    try:
        for k in range(args.runs):
            seed = args.first_seed + k * args.searches  # (every variant of run k on the same seeds)
            for v in variants:
                row = one(args, v, seed)
                rows[v].append(row)
                print(f"{v} seed {seed}: time to target {row['first_time_to_target_s']} s, best "
                      f"{row['best_objective']} ({row['gap_percent_of_best']:.3f} %)", flush=True)
                partial = Path(args.out or ".") / "islands_target-partial.json"
                write_atomic(partial, {"instance": args.instance, "params": args.param, "rows": rows})
    except Stopped:
        done = min(len(rs) for rs in rows.values())
        stopped = f"stopped by SIGTERM after {done} of {args.runs} runs"
        print(stopped, file=sys.stderr, flush=True)
        if done == 0:
            raise LsbenchError(f"{stopped}: nothing to write") from None
        return {v: rs[:done] for v, rs in rows.items()}, stopped
    finally:
        signal.signal(signal.SIGTERM, previous)
    return rows, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="tai50a")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--searches", type=int, default=264, help="K over all ranks (K / ranks on one GPU)")
    ap.add_argument("--variants", default="one-gpu,independent,copy:500000")
    ap.add_argument("--percent", type=float, default=0.0)
    ap.add_argument("--cap", type=float, default=30.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--param", action="append", default=[], help="a rots or gpu-resident --param of every run")
    ap.add_argument("--share-gpu", action="store_true", help="every rank on GPU 0 (a one-GPU host)")
    ap.add_argument("--out")
    args = ap.parse_args()
    variants = args.variants.split(",")
    if args.ranks < 1 or args.searches < args.ranks or args.searches % args.ranks or args.runs < 1 or args.cap <= 0:
        raise LsbenchError("--ranks, --searches, --runs, --cap: at least one rank, searches a multiple of the ranks, "
                           "at least one run and a cap above 0")
    for v in variants:
        variant_args(v, args)  # (every name checked before the first run)
    instances.load(args.instance)  # (an unknown or missing instance: one line, before any run)
    rows, stopped = paired_runs(args, variants)
    times = {v: [r["first_time_to_target_s"] for r in rs] for v, rs in rows.items()}
    summary = {v: {"reached": sum(t is not None for t in times[v]), "median_time_s": median_time(times[v]),
                   "median_gap_percent": statistics.median(r["gap_percent_of_best"] for r in rs)}
               for v, rs in rows.items()}
    path = write_result("islands_target", {"instance": args.instance, "ranks": args.ranks, "searches": args.searches,
                                            "target_percent": args.percent, "cap_s": args.cap, "params": args.param,
                                            "share_gpu": args.share_gpu, "rows": rows, "summary": summary,
                                            **({"stopped": stopped} if stopped else {})}, args.out)
    runs = len(rows[variants[0]])
    print(f"\n| {args.instance}, {args.searches} searches over {args.ranks} ranks | reached | median time to "
          f"bks+{args.percent:g}% (s) | median gap (%) |\n|---|---|---|---|")
    for v, s in summary.items():
        time = "> cap" if s["median_time_s"] is None else f"{s['median_time_s']:.2f}"
        print(f"| {v} | {s['reached']}/{runs} | {time} | {s['median_gap_percent']:.3f} |")
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
