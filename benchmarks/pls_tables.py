"""Luong, Melab and Talbi's Tables 2-5 (EvoCOP 2011) on this host: the three-objective flow shop,
tabu search on the weighted sum and PLS-1 with dominating or non-dominated neighbours, our one-core
CPU code against the iteration-level GPU with the archive on the host or on the device.

    python benchmarks/pls_tables.py [--instances 020_10_01,ta101] [--repeats 3] [--seed 5]

The instances are Liefooghe's due-date files of the paper's sizes (the paper's instances: Taillard's
times, Liefooghe's due dates) and, where no such file exists (200-20, and 500-20 beyond the paper),
Taillard's ta101 and ta111 with due dates by lsbench's rule.

Every row runs `lsbench.runner.run_one`, the path a user's `lsbench run` takes, with a warm-up
(JIT compile) first; times are medians of repeats of the timed search (`wall_s`), the sides
interleaved within each repeat. The same seed and iteration budget on every side gives the same
archive at every iteration (checked: same front), so the time ratio is the speed-up. The paper
ran 10,000 iterations; we run fewer (the CPU side of 500-20 takes seconds an iteration) and
report seconds per iteration beside the ratio.
"""
import argparse
import statistics
import sys

from common import write_result

from lsbench.runner import run_one

INSTANCES = {"020_10_01": "20-10", "020_20_01": "20-20", "050_10_01": "50-10", "050_20_01": "50-20",
             "100_10_01": "100-10", "100_20_01": "100-20", "200_10_01": "200-10", "ta101": "200-20", "ta111": "500-20"}
ITERATIONS = {20: 300, 50: 120, 100: 60, 200: 16, 500: 4}
# GTX 480 speed-ups over one Core i7 core (the paper's best GPU column, texture memory)
PUBLISHED = {"tabu": {"20-10": 0.6, "20-20": 0.7, "50-10": 3.8, "50-20": 4.1, "100-10": 12.6, "100-20": 12.9,
                      "200-10": 15.4, "200-20": 16.0},
             "dominating": {"20-10": 0.6, "20-20": 0.6, "50-10": 3.8, "50-20": 4.2, "100-10": 12.0,
                            "100-20": 13.1, "200-10": 15.1, "200-20": 15.7},
             "non-dominated": {"20-10": 0.7, "20-20": 0.7, "50-10": 2.5, "50-20": 3.0, "100-10": 5.1,
                               "100-20": 5.3, "200-10": 6.4, "200-20": 7.1}}
SIDES = {"cpu": ("cpu", {}), "gpu, archive on host": ("gpu", {"archive": "host"}),
         "gpu, archive on device": ("gpu", {"archive": "device"})}
TABU_SIDES = {"cpu": ("cpu", {}), "gpu": ("gpu", {})}


def one(instance, algorithm, accept, backend, backend_params, iterations, seed):
    params = {"accept": accept, **backend_params} if algorithm == "pls" else {}
    rec = run_one("pfsp", instance, algorithm, backend, "insertion", seed, iterations,
                  problem_params={"objective": "three"}, algorithm_params=params, warmup=2)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", default=",".join(INSTANCES))
    ap.add_argument("--cases", default="tabu,dominating,non-dominated")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--iterations", type=int, help="every instance's budget (default: by size, ITERATIONS)")
    ap.add_argument("--out")
    args = ap.parse_args()
    names = args.instances.split(",")
    one(names[-1], "pls", "dominating", "gpu", {"archive": "device"}, args.iterations or 30, args.seed)  # clocks up, kernels compiled
    rows = []
    for name in names:
        n = int(INSTANCES[name].split("-")[0])
        iterations = args.iterations or ITERATIONS[n]
        for case in args.cases.split(","):
            algorithm, accept = ("tabu", None) if case == "tabu" else ("pls", case)
            sides = TABU_SIDES if case == "tabu" else SIDES
            seconds = {side: [] for side in sides}
            recs = {}
            for _ in range(args.repeats):
                for side, (backend, bp) in sides.items():
                    rec = one(name, algorithm, accept, backend, bp, iterations, args.seed)
                    seconds[side].append(rec["wall_s"])
                    recs[side] = rec
            cpu = statistics.median(seconds["cpu"])
            row = {"instance": name, "size": INSTANCES[name], "case": case, "iterations": iterations,
                   "published_gtx480_speedup": PUBLISHED[case].get(INSTANCES[name]), "sides": {}}
            for side, rec in recs.items():
                med = statistics.median(seconds[side])
                row["sides"][side] = {"seconds": med, "repeats": seconds[side], "seconds_per_iteration": med / iterations,
                                      "speedup_vs_cpu": cpu / med, "best": rec["best_objective"],
                                      "time_split": rec.get("pareto_time_split"),
                                      "backend_time_split": rec["backend_info"].get("time_split")}
            if case != "tabu":
                fronts = [[p["objectives"] for p in rec["front"]] for rec in recs.values()]
                sizes = [rec["archive_sizes"] for rec in recs.values()]
                row["front_size"] = len(fronts[0])
                row["same_front_and_archive_sizes"] = all(f == fronts[0] for f in fronts) and \
                    all(s == sizes[0] for s in sizes)
                row["largest_archive"] = max(size for _it, size in sizes[0])
            else:
                trajs = [[(i, o) for i, _t, o in rec["trajectory"]] for rec in recs.values()]
                row["same_trajectory"] = all(t == trajs[0] for t in trajs)
            rows.append(row)
            print(f"{name} {case}: " + ", ".join(f"{s} {v['seconds']:.3f}s x{v['speedup_vs_cpu']:.1f}"
                                                 for s, v in row["sides"].items()), flush=True)
    path = write_result("pls_tables", {"seed": args.seed, "rows": rows}, args.out)
    print("\n| instance | case | iterations | cpu s/it | gpu host x | gpu device x | paper GTX 480 x | front | same |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["sides"]
        host = s.get("gpu, archive on host", s.get("gpu"))
        dev = s.get("gpu, archive on device")
        print(f"| {r['size']} | {r['case']} | {r['iterations']} | {s['cpu']['seconds_per_iteration']:.4f} | "
              f"{host['speedup_vs_cpu']:.1f} | {dev['speedup_vs_cpu'] if dev else float('nan'):.1f} | "
              f"{r['published_gtx480_speedup']} | {r.get('front_size', '-')} | "
              f"{r.get('same_front_and_archive_sizes', r.get('same_trajectory'))} |")
    print(f"-> {path}")
    return 0 if all(r.get("same_front_and_archive_sizes", r.get("same_trajectory")) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
