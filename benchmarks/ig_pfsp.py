"""Iterated greedy on Taillard's 50x20 flow shops: K GPU searches against 16 CPU cores, same cap.

    python benchmarks/ig_pfsp.py --instances ta051,ta055,ta060 --runs 5 --cap 30 [--searches K] [--probe]

Each run is `lsbench run --algorithm ig --problem pfsp --seconds CAP`, once on gpu-resident with K
searches (`--restart`, `--elite`) and once on cpu-parallel with one search per core (`--threads` =
the host's cores; `--cpu-restart`, 0 by default: Ruiz & Stützle's IG, independent searches), the
two interleaved run by run; seeds 1, 1 + K, ... Every record is re-checked as every run's is. Per
run: the best makespan's gap to the best-known value at 1, 5, 10 s and at the cap (from the
trajectory: the run's best at that time), and aggregate iterations per second. `--probe`: only
aggregate it/s for a few K (10 s runs), to choose K.
"""
import argparse
import os
import statistics
import sys
from pathlib import Path

from common import gpu_info, write_result

from lsbench.files import write_atomic
from lsbench.runner import run_one

MARKS = (1.0, 5.0, 10.0)


def best_by(record, seconds):
    """The run's best makespan at `seconds` (any of its searches), from the trajectories."""
    values = [obj for entry in record.get("searches", [record]) for _i, t, obj in entry["trajectory"] if t <= seconds]
    return min(values) if values else None


def one_run(name, backend, seed, searches, cap, threads, params):
    rec = run_one("pfsp", name, algorithm="ig", backend=backend, seed=seed, seconds=cap, searches=searches,
                  threads=threads, algorithm_params=params)
    bks = rec["bks"]
    gaps = {f"{t:g}s": round(100.0 * (best_by(rec, t) - bks) / bks, 4) if best_by(rec, t) else None
            for t in MARKS + (cap,)}
    return {"backend": backend, "seed": seed, "searches": searches, "best": rec["best_objective"],
            "gap_percent": rec["gap_percent"], "gap_at": gaps, "wall_s": rec["wall_s"],
            "aggregate_iterations_per_s": rec.get("aggregate_iterations_per_s", rec["iterations_per_s"]),
            "backend_info": rec["backend_info"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", default="ta051,ta055,ta060")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cap", type=float, default=30.0, help="seconds a run")
    ap.add_argument("--searches", type=int, default=0, help="K GPU searches (0: 8 per SM)")
    ap.add_argument("--probe", default="", help="comma-separated K: aggregate it/s only")
    ap.add_argument("--probe-cpu", type=int, default=1, help="with --probe: also the CPU row (0: not)")
    ap.add_argument("--restart", type=int, default=0, help="ig's restart (both backends)")
    ap.add_argument("--elite", type=int, default=4)
    ap.add_argument("--cpu-restart", type=int, default=0, help="the CPU's restart (0: Ruiz & Stützle's independent IG)")
    ap.add_argument("--out")
    args = ap.parse_args()
    gpu = gpu_info()
    cores = len(os.sched_getaffinity(0))  # the cores this process may use (a lane of a shared host)
    params = {"restart": args.restart, "elite": args.elite}
    cpu_params = {"restart": args.cpu_restart, "elite": args.elite}
    if args.probe:
        rows = []
        for k in map(int, args.probe.split(",")):
            rows.append(one_run(args.instances.split(",")[0], "gpu-resident", 1, k, args.cap, None, params))
            print(f"K={k} {params}: {rows[-1]['aggregate_iterations_per_s']:.0f} it/s, gap {rows[-1]['gap_percent']:.3f}% "
                  f"(at 1/5/10 s: {list(rows[-1]['gap_at'].values())[:3]})", flush=True)
        if args.probe_cpu:
            rows.append(one_run(args.instances.split(",")[0], "cpu-parallel", 1, cores, args.cap, cores, params))
            print(f"cpu-parallel x{cores}: {rows[-1]['aggregate_iterations_per_s']:.0f} it/s, "
                  f"gap {rows[-1]['gap_percent']:.3f}%")
        print("->", write_result("ig_pfsp_probe", {"cap_s": args.cap, "params": params, "rows": rows}, args.out))
        return
    k = args.searches or 8 * gpu["multiprocessors"]
    rows = []
    for name in args.instances.split(","):
        runs = []
        for r in range(args.runs):
            for backend, searches, threads, prm in (("gpu-resident", k, None, params),
                                                    ("cpu-parallel", cores, cores, cpu_params)):
                runs.append(one_run(name, backend, 1 + r * k, searches, args.cap, threads, prm))
                x = runs[-1]
                print(f"{name} run {r} {backend} x{searches}: gap {x['gap_percent']:.3f}% (at 1/5/10 s: "
                      f"{list(x['gap_at'].values())[:3]}), {x['aggregate_iterations_per_s']:.0f} it/s", flush=True)
                write_atomic(Path(args.out or ".") / "ig_pfsp-partial.json", {"instance": name, "runs": runs})
        row = {"instance": name, "runs": runs}
        for backend in ("gpu-resident", "cpu-parallel"):
            mine = [x for x in runs if x["backend"] == backend]
            row[backend] = {"median_gap_percent": statistics.median(x["gap_percent"] for x in mine),
                            "median_gap_at": {t: statistics.median(x["gap_at"][t] for x in mine)
                                              for t in mine[0]["gap_at"]},
                            "median_iterations_per_s": statistics.median(x["aggregate_iterations_per_s"]
                                                                         for x in mine)}
        rows.append(row)
    path = write_result("ig_pfsp", {"cap_s": args.cap, "params": params, "cpu_params": cpu_params, "gpu_searches": k, "cpu_searches": cores,
                                    "instances": rows}, args.out)
    print(f"\nIG {params} (CPU {cpu_params}), cap {args.cap} s, {args.runs} runs: gpu-resident x{k} vs cpu-parallel x{cores} -> {path}")
    print(f"{'instance':9} {'GPU gap %':>10} {'CPU gap %':>10} {'GPU it/s':>10} {'CPU it/s':>10}")
    for row in rows:
        g, c = row["gpu-resident"], row["cpu-parallel"]
        print(f"{row['instance']:9} {g['median_gap_percent']:10.3f} {c['median_gap_percent']:10.3f} "
              f"{g['median_iterations_per_s']:10.0f} {c['median_iterations_per_s']:10.0f}")


if __name__ == "__main__":
    sys.exit(main())
