"""How far a report's best solutions lie from the instance's best-known solution (QAPLIB .sln), and
from each other: for each run of each backend in a group, the best search's gap and the number of
positions where its permutation differs from the reference (n - 1 is what a random permutation
averages) and the median over the other runs' bests of the same backend. Where the best runs lie no
nearer the reference than the others (no fitness-distance correlation), the deep solutions share no
assignments for a crossover or path relinking to keep. One instance a call (a group of several is
refused).

    python benchmarks/research/best_distances.py reports/islands --group tai100a-gap-at-30s --backends gpus-1,islands-2
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, the table scripts
from common import report_searches, run_main

from lsbench import instances
from lsbench.errors import LsbenchError
from lsbench.files import write_atomic
from lsbench.problems.qap import read_sln


def reference_solution(problem, entry, data=None):
    """The instance's reference permutation in this problem's convention: the .sln's, or its inverse
    where the file lists locations by facility the other way (QAPLIB's tai80a); an error where
    neither costs the file's value."""
    path = instances.reference_path(entry, data)
    if not path.is_file():
        raise LsbenchError(f"{path}: no reference solution (lsbench instances fetch {entry.name})")
    value, perm = read_sln(path)
    for candidate in (perm, np.argsort(perm)):
        if problem.exact_objective(candidate) == value:
            return value, candidate
    raise LsbenchError(f"{path}: its permutation does not cost its value {value}, nor does its inverse")


def run_best(searches_dir):
    """(the run's name, the best search's objective, its permutation, the best-known value it was
    run against) from one run's search records."""
    records = [json.loads(p.read_text()) for p in Path(searches_dir).glob("seed-*.json")]
    if not records:
        raise LsbenchError(f"{Path(searches_dir).name}: no search records")
    best = min(records, key=lambda r: r["best_objective"])
    return (Path(searches_dir).name.removesuffix("-searches"), int(best["best_objective"]),
            np.asarray(best["best_solution"]), best["bks"])


def distance_rows(bests, reference):
    """Per run of `bests` (run_best's): its gap, the positions where its best differs from the
    reference, and the median of those where it differs from the other runs' bests."""
    rows = []
    for i, (name, objective, perm, bks) in enumerate(bests):
        others = [int((perm != other).sum()) for j, (_, _, other, _) in enumerate(bests) if j != i]
        rows.append({"run": name, "objective": objective, "gap_percent": (objective / bks - 1) * 100,
                     "differs_from_reference": int((perm != reference).sum()),
                     "median_differs_from_other_runs": statistics.median(others) if others else None})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report", help="a report folder with records.tgz (reports/NAME)")
    ap.add_argument("--group", required=True)
    ap.add_argument("--backends", required=True, help="comma-separated backends of the group")
    ap.add_argument("--data-dir")
    ap.add_argument("--out")
    args = ap.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    if not backends:
        raise LsbenchError(f"--backends {args.backends!r}: at least one backend of the group")
    with report_searches(args.report, args.group, backends) as found:  # the archive unpacked once
        bests = {backend: [run_best(d) for d in runs] for backend, runs in found.items()}
        on = {d.parent.name for runs in found.values() for d in runs}
    if len(on) != 1:
        raise LsbenchError(f"--group {args.group}: its runs are on {', '.join(sorted(on))}; one instance a call")
    instance = on.pop()
    entry = instances.manifest().get(instance)
    if entry is None or entry.problem != "qap":
        raise LsbenchError(f"{instance}: not a QAPLIB instance of the manifest")
    problem = instances.load(instance, None, args.data_dir)
    value, reference = reference_solution(problem, entry, args.data_dir)
    result = {"report": args.report, "group": args.group, "instance": instance, "n": int(problem.n),
              "reference_objective": value,
              "backends": {backend: distance_rows(runs, reference) for backend, runs in bests.items()}}
    print(f"{instance} (n = {problem.n}): positions where each run's best differs from the reference solution "
          f"({value}) and from the other runs' bests\n\n| run | gap to the best known (%) | from the reference | "
          f"median from the other runs |\n|---|---|---|---|")
    for rows in result["backends"].values():
        for r in rows:
            print(f"| {r['run']} | {r['gap_percent']:.3f} | {r['differs_from_reference']} | "
                  f"{r['median_differs_from_other_runs']} |")
    if args.out:
        write_atomic(Path(args.out), result)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
