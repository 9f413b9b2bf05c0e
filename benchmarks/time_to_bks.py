"""Time to the best-known value: K gpu-resident Ro-TS searches (or one cas colony), each run
capped, several runs.

    python benchmarks/time_to_bks.py --instances tai40a,tai50a --runs 5 --cap 30 [--restart 4000 ...]
    python benchmarks/time_to_bks.py --algorithm cas --instances tai150b --runs 5 --cap 30

Each run is `lsbench run --algorithm rots --backend gpu-resident --searches K --target bks
--seconds CAP` with the given restart settings (iterated parallel tabu; restart=0: independent
Ro-TS searches), seeds 1, 1 + K, 1 + 2K, ...; its record is re-checked as every run's is. Per run:
reached or not, the time of the first trajectory point at or under the best-known value (the
search loop's clock, after warm-up and compile), the gap at the end and when the run first held
its final best (how long it then went on without a better one). Per instance: runs that
reached it, the median time over those, the median final gap.
"""
import argparse
import statistics
import sys
from pathlib import Path

from common import gpu_info, run_main, write_result

from lsbench.errors import LsbenchError
from lsbench.params import split_pairs
from lsbench.files import write_atomic
from lsbench.runner import run_one


def first_hit(record, target):
    """The earliest time any search of the run reached the target, or None."""
    times = [t for entry in record.get("searches", [record]) for _i, t, obj in entry["trajectory"] if obj <= target]
    return min(times) if times else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", default="tai40a,tai50a,tai60a")
    ap.add_argument("--algorithm", default="rots", choices=["rots", "cas"],
                    help="rots: K searches with the restart settings; cas: one colony a run, its own defaults")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cap", type=float, default=30.0, help="seconds a run")
    ap.add_argument("--searches", type=int, default=0, help="K (0: one per SM)")
    # rots' restart settings; left out, the engine's declared defaults (lsbench describe) hold
    ap.add_argument("--restart", type=int, help="rots: stagnation limit")
    ap.add_argument("--elite", type=int, help="rots")
    ap.add_argument("--perturb", type=float, help="rots")
    ap.add_argument("--param", action="append", metavar="KEY=VALUE",
                    help="an algorithm or backend parameter for every run (e.g. ants=132 for cas); repeatable")
    ap.add_argument("--first-seed", type=int, default=1, help="run r takes seeds FIRST + r K .. (more runs: start past the last)")
    ap.add_argument("--data-dir")
    ap.add_argument("--out")
    args = ap.parse_args()
    gpu = gpu_info()
    cas = args.algorithm == "cas"
    restart_args = {"restart": args.restart, "elite": args.elite, "perturb": args.perturb}
    if cas and (args.searches or any(v is not None for v in restart_args.values())):
        ap.error("--searches, --restart, --elite and --perturb are rots' settings; cas runs one colony")
    k = 1 if cas else args.searches or (gpu or {}).get("multiprocessors")
    if not k:
        ap.error(f"no GPU found ({(gpu or {}).get('unavailable', 'none visible')}): give --searches K")
    params = {} if cas else {key: v for key, v in restart_args.items() if v is not None}
    try:
        pairs = split_pairs(args.param or [])
    except LsbenchError as e:
        ap.error(str(e))
    twice = sorted(set(params) & set(pairs))
    if twice:
        ap.error(f"--param {twice[0]}: given as --{twice[0]} too; give it once")
    params.update(pairs)
    rows = []
    for name in args.instances.split(","):
        runs = []
        for r in range(args.runs):
            rec = run_one("qap", name, algorithm=args.algorithm, backend="gpu-resident", seed=args.first_seed + r * k,
                          seconds=args.cap, target="bks", searches=k, backend_params=params, data=args.data_dir)
            hit = first_hit(rec, rec["bks"])
            found = first_hit(rec, rec["best_objective"])  # when the run's final best first came (stalled after?)
            runs.append({"seed": rec["seed"], "reached": hit is not None, "seconds_to_bks": hit,
                         "seconds_to_best": found,
                         "wall_s": rec["wall_s"], "best": rec["best_objective"], "gap_percent": rec["gap_percent"],
                         "aggregate_iterations_per_s": rec.get("aggregate_iterations_per_s"),
                         "restarts": rec["backend_info"].get("restarts"),
                         "renewals": rec["backend_info"].get("renewals"),
                         "iterations": rec["iterations"]})
            print(f"{name} run {r}: {'reached' if hit is not None else 'not reached'}"
                  f"{f' in {hit:.3f} s' if hit is not None else ''}, gap {rec['gap_percent']:.3f}% "
                  f"{f'(first at {found:.1f} s)' if found is not None else ''}, "
                  f"{rec['backend_info'].get('restarts')} restarts, {rec['backend_info'].get('renewals')} renewals", flush=True)
            partial = Path(args.out or ".") / "time_to_bks-partial.json"  # what a killed run leaves
            write_atomic(partial, {"searches": k, "params": params, "instance": name, "runs": runs})
        times = [x["seconds_to_bks"] for x in runs if x["reached"]]
        rows.append({"instance": name, "bks": rec["bks"], "runs": runs, "reached": len(times),
                     "median_seconds_to_bks": statistics.median(times) if times else None,
                     "median_final_gap_percent": statistics.median(x["gap_percent"] for x in runs)})
    out = {"algorithm": args.algorithm, "searches": k, "cap_s": args.cap, "params": params, "gpu": gpu,
           "instances": rows}
    path = write_result("time_to_bks", out, args.out)
    print(f"\n{'one cas colony' if cas else f'K = {k} Ro-TS searches'}, params {params}, cap {args.cap} s -> {path}")
    print(f"{'instance':10} {'reached':>8} {'median s':>9} {'median gap %':>13}")
    for row in rows:
        med = row["median_seconds_to_bks"]
        print(f"{row['instance']:10} {row['reached']:>4}/{args.runs:<3} {med if med is None else round(med, 3)!s:>9} "
              f"{row['median_final_gap_percent']:13.3f}")


if __name__ == "__main__":
    sys.exit(run_main(main))
