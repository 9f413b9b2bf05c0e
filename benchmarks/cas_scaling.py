"""cas on gpu-resident: aggregate local-search iterations/s as the colony grows (K ants = K searches
a generation), to show where the colony's shape has a throughput cliff.

    python benchmarks/cas_scaling.py [--instance tai100a] [--ants 33,66,132,264,528,1056,2112] [--seconds 3]

Each row is `lsbench run --algorithm cas --backend gpu-resident --param ants=K` with an iteration
budget sized from an untimed probe run to about --seconds (whole generations: K ants x
ls_iterations each); the rate is the run record's iterations / wall_s (the search loop, after
warm-up and compile). Rows interleaved repeat by repeat, medians of --repeats; K = one ant per SM
is the reference.
"""
import argparse
import statistics
import sys

from common import gpu_info, run_main, write_result

from lsbench.runner import run_one


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="tai100a")
    ap.add_argument("--ants", default="33,66,132,200,264,528,1056,2112")
    ap.add_argument("--seconds", type=float, default=3.0, help="about this long a timed run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data-dir")
    ap.add_argument("--out")
    args = ap.parse_args()
    gpu = gpu_info()
    sms = (gpu or {}).get("multiprocessors", 1)  # the simulator reports none
    rows = []
    try:
        sizes = [int(x) for x in args.ants.split(",")]
    except ValueError:
        ap.error(f"--ants {args.ants!r}: expected comma-separated whole numbers")
    if min(sizes) < 1:
        ap.error(f"--ants {args.ants!r}: a colony has at least one ant")
    for k in sizes:
        probe = run_one("qap", args.instance, algorithm="cas", backend="gpu-resident", seed=1, seconds=1.0,
                        algorithm_params={"ants": k}, data=args.data_dir)
        per_generation = k * probe["params"]["ls_iterations"]
        generations = max(2, round(args.seconds * probe["iterations_per_s"] / per_generation))
        rows.append({"ants": k, "ants_per_sm": round(k / sms, 2), "iterations": generations * per_generation,
                     "generations": generations, "shape": probe["backend_info"], "repeats": []})
    for _ in range(args.repeats):  # interleaved: the probes above warmed the clocks
        for row in rows:
            rec = run_one("qap", args.instance, algorithm="cas", backend="gpu-resident", seed=1,
                          iterations=row["iterations"], algorithm_params={"ants": row["ants"]}, data=args.data_dir)
            row["repeats"].append(rec["iterations_per_s"])
    reference = None
    for row in rows:
        row["it_per_s"] = statistics.median(row["repeats"])
        if row["ants"] == sms:
            reference = row["it_per_s"]
    for row in rows:
        row["vs_one_per_sm"] = row["it_per_s"] / reference if reference else None
    out = {"instance": args.instance, "gpu": gpu, "seconds": args.seconds, "rows": rows}
    path = write_result("cas_scaling", out, args.out)
    print(f"\ncas on gpu-resident, {args.instance}, local-search it/s by colony size -> {path}")
    print(f"{'ants':>6} {'per SM':>7} {'it/s':>14} {'vs K=' + str(sms):>9}  threads per ant")
    for row in rows:
        ratio = f"{row['vs_one_per_sm']:.2f}" if row["vs_one_per_sm"] else "-"
        print(f"{row['ants']:>6} {row['ants_per_sm']:>7} {row['it_per_s']:>14,.0f} {ratio:>9}  "
              f"{row['shape'].get('threads_per_block')}")


if __name__ == "__main__":
    sys.exit(run_main(main))
