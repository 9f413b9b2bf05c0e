"""Where the time of one device-side selection goes (host side): cProfile of repeated
`select` calls after warm-up, for small and large cases, printed as the top functions.

    python benchmarks/select_overhead.py [--cases tsp:eil101:2opt,pfsp:ta111:insertion] [--calls 200]
"""
import argparse
import cProfile
import pstats
import time

from lsbench import instances as registry
from lsbench import rng
from lsbench.registry import get_evaluator
from lsbench.search.tabu import MODE_ARGMIN


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="tsp:eil101:2opt,tsp:rl5915:2opt,pfsp:ta001:insertion,pfsp:ta111:insertion")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    for case in args.cases.split(","):
        kind, inst, nb_name = case.split(":")
        p = registry.load(inst, kind)
        nb = p.neighbourhood(nb_name)
        ev = get_evaluator("gpu", reduce="device").bind(p, nb)
        ev.reset(p.random_solution(rng.new_state(1)))
        for _ in range(5):
            ev.select(MODE_ARGMIN, 1, 0, 0)
        t = time.perf_counter()
        for _ in range(args.calls):
            ev.select(MODE_ARGMIN, 1, 0, 0)
        per_call = (time.perf_counter() - t) / args.calls
        print(f"\n== {case}: {per_call * 1e3:.3f} ms per select ({args.calls} calls)", flush=True)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.calls):
            ev.select(MODE_ARGMIN, 1, 0, 0)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
