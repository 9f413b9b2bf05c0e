"""Are the `gpu` backend's defaults its fastest configuration? One case per problem, the default
run beside every explicit setting of the knobs that matter (reduce, fuse), on one host.

    python benchmarks/gpu_defaults.py [--repeats 3]

Cases: TSP pr2392 2-opt tabu search (2.86 M moves, issue 22's case), PFSP ta111 insertion tabu
(makespan), QAP tai100a tabu (4,950 moves). Each row: median wall seconds of the timed run
(`run_one`, warm-up first) over interleaved repeats, and its ratio to the fastest row of the case.
"""
import argparse
import statistics
import sys

from common import write_result

from lsbench.runner import run_one

CASES = {
    "pr2392 2opt tabu": dict(problem="tsp", instance="pr2392", algorithm="tabu", neighbourhood="2opt", iterations=60),
    "ta111 insertion tabu": dict(problem="pfsp", instance="ta111", algorithm="tabu", neighbourhood="insertion",
                                 iterations=60),
    "tai100a swap tabu": dict(problem="qap", instance="tai100a", algorithm="tabu", neighbourhood=None, iterations=2000),
}
SETTINGS = {"default": {}, "reduce=host": {"reduce": "host"}, "reduce=device": {"reduce": "device"},
            "reduce=device fuse=0": {"reduce": "device", "fuse": 0}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = []
    for case, c in CASES.items():
        times = {k: [] for k in SETTINGS}
        info = {}
        for _ in range(args.repeats):
            for name, params in SETTINGS.items():
                rec = run_one(c["problem"], c["instance"], c["algorithm"], "gpu", c["neighbourhood"], 3, c["iterations"],
                              backend_params=params, warmup=3)
                times[name].append(rec["wall_s"])
                info[name] = {"reduce": rec["backend_info"]["reduce"], "fused": rec["backend_info"]["fused_selection"],
                              "trajectory": [(i, o) for i, _t, o in rec["trajectory"]]}
        best = min(statistics.median(v) for v in times.values())
        same = all(i["trajectory"] == info["default"]["trajectory"] for i in info.values())
        for name, v in times.items():
            med = statistics.median(v)
            rows.append({"case": case, "setting": name, "seconds": med, "repeats": v, "x_fastest": med / best,
                         "reduce": info[name]["reduce"], "fused": info[name]["fused"], "same_trajectory": same})
            print(f"{case} {name}: {med:.4f} s ({med / best:.2f}x the fastest)", flush=True)
    path = write_result("gpu_defaults", {"rows": rows}, args.out)
    print("\n| case | setting | s | x fastest | reduce | fused |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['setting']} | {r['seconds']:.4f} | {r['x_fastest']:.2f} | {r['reduce']} | {r['fused']} |")
    print(f"-> {path}")
    return 0 if all(r["x_fastest"] <= 1.2 for r in rows if r["setting"] == "default") else 1


if __name__ == "__main__":
    sys.exit(main())
