"""Side-by-side A/B of gpu-resident Ro-TS kernels from several source trees, in one process.

    python benchmarks/research/ab_resident.py TREE[:OPTION=INT,...] [TREE ...] [--instance tai100a]
        [--searches 1,132] [--iterations 20000] [--rounds 5] [--out DIR]

Each TREE is a checkout (for instance `git archive COMMIT | tar -x -C DIR`), with ResidentRots
options after a colon where wanted (`.:split=224,threads=1024`: one tree, two shapes); its `gpu` package is
imported under its own name, so that every tree's kernels are compiled once and then timed in
turn, round after round: host and clock drift fall on every tree alike. One figure per tree and K:
the median over rounds of K x iterations / the search loop's seconds (chunks, copies and launches
included, the set-up of K starts not). After the rounds, every tree's first and last search of each
K are checked against the CPU search of the same seed (`--check-iterations`): a faster kernel that
no longer follows the CPU shows here, not only in the tests.
"""
import argparse
import importlib.util
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, the table scripts
from common import write_result
from gpu_resident import cpu_search, same_run

from lsbench import instances as registry
from lsbench.interfaces import Stop
from lsbench.search.tabu import RobustTabuSearch


def load_tree(path, tag):
    """The tree's resident Ro-TS host module (gpu/engine/rots/host.py; gpu/rots_engine.py or
    gpu/resident.py in older trees), its package imported as gpu_<tag>."""
    name = f"gpu_{tag}"
    spec = importlib.util.spec_from_file_location(name, os.path.join(path, "gpu", "__init__.py"),
                                                  submodule_search_locations=[os.path.join(path, "gpu")])
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    module = next(m for m, file in (("engine.rots.host", "engine/rots/host.py"), ("rots_engine", "rots_engine.py"),
                                    ("resident", "resident.py")) if os.path.exists(os.path.join(path, "gpu", file)))
    return importlib.import_module(f"{name}.{module}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--instance", default="tai100a")
    ap.add_argument("--searches", default="1,132")
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--chunk", type=int, help="first chunk's iterations (default: the engine's, which grows)")
    ap.add_argument("--check-iterations", type=int, default=2000, help="iterations of the trajectory check (0: none)")
    ap.add_argument("--data-dir")
    ap.add_argument("--out")
    args = ap.parse_args()
    p = registry.load(args.instance, None, args.data_dir)
    prm = RobustTabuSearch().params(p)
    ks = [int(k) for k in args.searches.split(",")]
    engines = {}
    for t, tree in enumerate(args.trees):
        path, _, opts = tree.partition(":")
        options = {key: int(value) for key, value in (o.split("=") for o in opts.split(",") if o)}
        resident = load_tree(path, t)
        for k in ks:
            eng = resident.ResidentRots(p, prm, **options)
            eng.run(list(range(1, k + 1)), Stop(iterations=2))  # the shape for K searches, compiled
            engines[tree, k] = eng
    rates = {key: [] for key in engines}
    for _ in range(args.rounds):
        for k in ks:
            for tree in args.trees:
                eng = engines[tree, k]
                res = eng.run(list(range(1, k + 1)), Stop(iterations=args.iterations), chunk=args.chunk)
                rates[tree, k].append(sum(getattr(r, "iterations", None) or r["iterations"] for r in res)
                                      / eng.loop_s)
    same = {}
    if args.check_iterations:
        stop = Stop(iterations=args.check_iterations)
        cpu = {seed: cpu_search(p, seed, args.check_iterations)[0] for seed in sorted({1, *ks})}
        for (tree, k), eng in engines.items():
            res = eng.run(list(range(1, k + 1)), stop)
            same[tree, k] = same_run(cpu[1], res[0]) and same_run(cpu[k], res[-1])
    rows = [{"tree": tree, "searches": k, "median_it_per_s": statistics.median(rates[tree, k]),
             "it_per_s": rates[tree, k], "same_trajectory": same.get((tree, k)), "shape": engines[tree, k].describe()}
            for tree, k in engines]
    path = write_result("ab_resident", {"instance": args.instance, "iterations": args.iterations, "chunk": args.chunk, "rows": rows},
                        args.out)
    print(f"{args.instance}, median of {args.rounds} rounds (it/s, all searches) -> {path}")
    for k in ks:
        base = statistics.median(rates[args.trees[0], k])
        for tree in args.trees:
            m = statistics.median(rates[tree, k])
            print(f"K={k:4d} {tree:>24s}: {m:14,.0f}  {m / base:6.3f}x  "
                  f"(spread {min(rates[tree, k]) / m:.3f}-{max(rates[tree, k]) / m:.3f})"
                  f"{'' if (tree, k) not in same else f', same trajectory as the CPU: {same[tree, k]}'}")


if __name__ == "__main__":
    sys.exit(main())
