"""Before/after A/B of whole source trees on one host: the GPU figures a refactoring must keep.

    python benchmarks/research/ab_trees.py TREE [TREE ...] [--cases CASE,...] [--passes 2] [--repeats 3] [--budget-s S] [--out DIR]

Each TREE is a checkout (e.g. `git archive COMMIT | tar -x -C DIR`). The trees are measured in turn,
TREE1 TREE2 ... TREE1 TREE2 ... (`--passes` times), each pass a fresh process run inside the tree
(PYTHONPATH=TREE) through `lsbench.runner.run_one`, whose signature both trees share: every case
once untimed (JIT and kernel compilation for that shape), then `--repeats` timed runs. Cases:
the resident engines (`RESIDENT`: Ro-TS on tai100a, 1 and 132 searches; PFSP tabu search over the
whole GPU and 1,056 at once; PPP tabu; TSP 2-opt hill climbing and tabu search, pr2392 and
three instances below 2,000 cities; the iterated greedy; aggregate it/s over 2 s); cas + TS on gpu-resident,
tai60b, seconds to the best known value (Tsutsui & Fujimoto's Table 6 target; median of seeds 1-5),
and milliseconds a generation over 100 generations of seed 1 on tai40a (40 ants, one block each)
and tai60b (240 ants; time to target hides a per-generation cost in the few generations it takes);
iteration-level tabu search on `gpu` with the device-side reduction, rl5915 2-opt and ta111
insertion (it/s); and, not by default, `rots-cpu`: Ro-TS on the `cpu` backend (one core), tai100a,
30,000 iterations (it/s; no GPU needed). One figure per tree and case: the median of all its timed
runs. Each tree's own lsbench is imported, also where another checkout is installed in editable mode.
`--budget-s`: a pass starts only where the time left holds the longest pass so far, a pass that
runs past it is dropped whole, and the passes done are written (on the device machine, set it below
the call's limit: a call cut off returns nothing).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
import time

# the resident engines: (problem, instance, algorithm, neighbourhood, searches), aggregate it/s
RESIDENT = {"rots-1": ("qap", "tai100a", "rots", None, 1),
            "rots-132": ("qap", "tai100a", "rots", None, 132),
            "pfsp-tabu-1": ("pfsp", "ta111", "tabu", "insertion", 1),
            "pfsp-tabu-1056": ("pfsp", "ta001", "tabu", "insertion", 1056),
            "ppp-tabu-132": ("ppp", "101-117", "tabu", "hamming2", 132),
            "tsp-hc-1056": ("tsp", "pr2392", "hc", "2opt", 1056),
            "tsp-tabu-1056": ("tsp", "pr2392", "tabu", "2opt", 1056),
            "ig-1056": ("pfsp", "ta051", "ig", None, 1056),
            **{f"tsp-{a}-{name}-1056": ("tsp", name, a, "2opt", 1056)  # below 2,000 cities (issue 86, item 3)
               for name in ("eil101", "kroA200", "pr1002") for a in ("hc", "tabu")}}
CASES = (*RESIDENT, "cas-tai60b", "cas-tai40a-generation", "cas-tai60b-generation", "rl5915-2opt", "ta111-insertion")
HIGHER_IS_BETTER = {"cas-tai60b": False, "cas-tai40a-generation": False,
                    "cas-tai60b-generation": False, "rl5915-2opt": True, "ta111-insertion": True, "rots-cpu": True,
                    **{name: True for name in RESIDENT}}


def own_tree_first():
    """Import lsbench from the tree this process runs in (cwd), not from an editable install's
    finder, which would otherwise take every tree to the installed checkout."""
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, os.getcwd())
    import lsbench
    if not os.path.abspath(lsbench.__file__).startswith(os.getcwd() + os.sep):
        sys.exit(f"ab_trees: lsbench came from {lsbench.__file__}, not from the tree {os.getcwd()}")


def measure(repeats, cases):
    """Runs inside one tree: {case: [figure per timed run]}."""
    own_tree_first()
    from lsbench import instances
    from lsbench.runner import run_one

    def cas(seeds):
        tai60b = instances.bks_of(instances.load("tai60b"))
        times = [run_one("qap", "tai60b", "cas", "gpu-resident", seed=s, seconds=5.0, target=tai60b)["wall_s"]
                 for s in seeds]
        return statistics.median(times)

    def cas_generation(instance, generations):
        from lsbench.engines.cas import CunningAntSystem
        prm = CunningAntSystem().params(instances.load(instance))
        iterations = generations * prm["ants"] * prm["ls_iterations"]  # (the first: the initial colony's searches)
        rec = run_one("qap", instance, "cas", "gpu-resident", seed=1, iterations=iterations)
        return 1000 * rec["wall_s"] / (rec["iterations"] / (prm["ants"] * prm["ls_iterations"]))  # (those run)

    def iteration(problem, instance, nb, iterations):
        return run_one(problem, instance, "tabu", "gpu", nb, seed=1, iterations=iterations,
                       backend_params={"reduce": "device"})["iterations_per_s"]
    def resident(problem, instance, algorithm, nb, k, seconds):
        rec = run_one(problem, instance, algorithm, "gpu-resident", nb, seed=1, seconds=seconds, searches=k)
        return rec.get("aggregate_iterations_per_s") or rec["iterations_per_s"]

    def cpu_rots(iterations):
        return run_one("qap", "tai100a", "rots", "cpu", seed=1, iterations=iterations)["iterations_per_s"]
    jobs = {"cas-tai60b": (lambda: cas([1]), lambda: cas([1, 2, 3, 4, 5])),
            "cas-tai40a-generation": (lambda: cas_generation("tai40a", 3), lambda: cas_generation("tai40a", 100)),
            "cas-tai60b-generation": (lambda: cas_generation("tai60b", 3), lambda: cas_generation("tai60b", 100)),
            "rl5915-2opt": (lambda: iteration("tsp", "rl5915", "2opt", 5), lambda: iteration("tsp", "rl5915",
                                                                                              "2opt", 100)),
            "ta111-insertion": (lambda: iteration("pfsp", "ta111", "insertion", 3),
                                lambda: iteration("pfsp", "ta111", "insertion", 40)),
            "rots-cpu": (lambda: cpu_rots(200), lambda: cpu_rots(30000)),
            **{name: (lambda c=case: resident(*c, 0.3), lambda c=case: resident(*c, 2.0))
               for name, case in RESIDENT.items()}}
    out = {}
    for case in cases:
        warm, timed = jobs[case]
        warm()
        out[case] = [timed() for _ in range(repeats)]
    return out


def measure_tree(name, cases, repeats, timeout):
    """One pass in one tree: a fresh process inside it, {case: [figure per timed run]}; None past
    `timeout` seconds."""
    tree = os.path.abspath(name)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tree, os.environ.get("PYTHONPATH", "")])}
    try:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure", "--repeats", str(repeats),
                            "--cases", ",".join(cases)],
                           cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    line = next((s for s in r.stdout.splitlines() if s.startswith("AB-RESULT ")), None)
    if line is None:
        sys.exit(f"{tree}: no result\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    return json.loads(line[len("AB-RESULT "):])


def run_passes(trees, cases, passes, repeats, budget_s=None):
    """Every tree in turn, `passes` times: ({tree: {case: [values]}}, passes done). A pass starts
    only where the budget left holds the longest pass so far, and one that runs past the budget is
    dropped whole (a machine's time limit then keeps the passes done instead of losing them all);
    each tree's figures are printed as they come."""
    figures = {tree: {case: [] for case in cases} for tree in trees}
    started, longest, done = time.monotonic(), 0.0, 0
    for _ in range(passes):
        left = budget_s - (time.monotonic() - started) if budget_s else None
        if done and left is not None and left < longest:
            print(f"ab_trees: {left:.0f} s of --budget-s left, a pass took {longest:.0f} s: "
                  f"{done} of {passes} passes", flush=True)
            break
        pass_started, this_pass = time.monotonic(), []
        for name in trees:
            timeout = 900 if left is None else max(1.0, budget_s - (time.monotonic() - started))
            measured = measure_tree(name, cases, repeats, timeout)
            if measured is None:
                break
            this_pass.append((name, measured))
            print(f"pass {done + 1} {name}: {json.dumps(measured)}", flush=True)
        if len(this_pass) < len(trees):
            if not done:
                sys.exit(f"ab_trees: error: the first pass ran past --budget-s {budget_s:g}")
            print(f"ab_trees: pass {done + 1} ran past --budget-s, dropped: {done} of {passes} passes", flush=True)
            break
        for name, measured in this_pass:
            for case, values in measured.items():
                figures[name][case] += values
        longest, done = max(longest, time.monotonic() - pass_started), done + 1
    return figures, done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="*")
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(HIGHER_IS_BETTER)}")
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget-s", type=float, help="seconds for every pass: start none the budget left may not "
                                                   "finish (the longest so far), keep those done")
    ap.add_argument("--out")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    cases = args.cases.split(",")
    if not set(cases) <= set(HIGHER_IS_BETTER):
        ap.error(f"--cases: unknown {sorted(set(cases) - set(HIGHER_IS_BETTER))}; known: {', '.join(HIGHER_IS_BETTER)}")
    if args.budget_s is not None and args.budget_s <= 0:
        ap.error("--budget-s: must be above 0")
    for name in ("passes", "repeats"):
        if getattr(args, name) < 1:
            ap.error(f"--{name}: must be at least 1, got {getattr(args, name)}")
    if not args.trees and not args.measure:
        ap.error("name at least one TREE to measure")
    if args.measure:
        print("AB-RESULT " + json.dumps(measure(args.repeats, cases)), flush=True)
        return 0
    figures, done = run_passes(args.trees, cases, args.passes, args.repeats, args.budget_s)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
    from common import write_result
    rows = [{"tree": tree, "case": case, "median": statistics.median(v), "values": v}
            for tree, cases in figures.items() for case, v in cases.items()]
    path = write_result("ab_trees", {"trees": args.trees, "cases": cases, "passes": done,
                                     "repeats": args.repeats, "rows": rows}, args.out)
    base = args.trees[0]
    print(f"median of {done} x {args.repeats} runs per tree -> {path}")
    print("| case | " + " | ".join(args.trees) + " | change |")
    for case in cases:
        meds = [statistics.median(figures[t][case]) for t in args.trees]
        change = meds[-1] / meds[0] if HIGHER_IS_BETTER[case] else meds[0] / meds[-1]
        print(f"| {case} | " + " | ".join(f"{m:,.4g}" for m in meds) + f" | {change - 1:+.1%} (after vs {base}) |")


if __name__ == "__main__":
    sys.exit(main())
