"""The median time to the target over every paired seed recorded: runs of islands_target.py result
files and of a report's multistart cells, each under a variant name, pooled where two variants ran
the same seed block, so that medians of 5 runs from several calls become one of all of them.
A report's backend takes a variant's name with --report-backend BACKEND=VARIANT (the report's
one-GPU and islands rows beside islands_target.py's one-gpu and copy:E). A run that missed the
target counts as never (islands_target.median_time's rule); only seeds every variant ran count.

    python benchmarks/research/paired_target.py results/islands_target-h200-36f7769.json --instance tai50a \\
        --report reports/islands --group tai50a-time-to-bks \\
        --report-backend gpus-1=one-gpu --report-backend islands-2=copy:500000 --variants one-gpu,copy:500000
"""
import argparse
import json
import re
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, the table scripts
from common import run_main
from islands_target import median_time, read_result

from lsbench.errors import LsbenchError


def target_runs(path, instance):
    """{(source, seed): {variant: first time to the target or None}} of an islands_target.py file."""
    result = read_result(path)
    runs = {}
    if result["instance"] == instance:
        for variant, own in result["rows"].items():
            for r in own:
                runs.setdefault((str(path), r["seed"]), {})[variant] = r["first_time_to_target_s"]
    return runs


def report_runs(report, group, names):
    """The same of a report's records archive: each run of a backend in `names` ({backend: variant})
    in `group`, keyed by the seed in its file name; a run under a copy:E or cross:E name only where it
    exchanged so (a report may still hold records of an earlier plan's interval)."""
    archive = Path(report) / "records.tgz"
    if not archive.is_file():
        raise LsbenchError(f"{archive}: no records archive")
    runs = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            found = re.fullmatch(rf"runs/{re.escape(group)}/[^/]+/(.+)-s(\d+)\.json", member.name)
            if found and found.group(1) in names:
                record = json.load(tar.extractfile(member))
                if not exchanged_as(record, names[found.group(1)]):
                    continue
                first = record.get("multistart", {}).get("first_time_to_target_s")
                runs.setdefault((str(report), int(found.group(2))), {})[names[found.group(1)]] = first
    return runs


def exchanged_as(record, variant):
    """Whether a report's run exchanged as islands_target.py's variant name says (copy:E, cross:E);
    any run for the other names."""
    named = re.fullmatch(r"(copy|cross):(\d+)", variant)
    islands = record.get("islands") or {}
    return not named or (islands.get("migrant_start"), islands.get("exchange_every")) == (named[1], int(named[2]))


def pooled(runs, variants):
    """{variant: (the runs' times, median time)} over the seed blocks where every variant ran."""
    paired = [times for times in runs.values() if all(v in times for v in variants)]
    return {v: ([times[v] for times in paired], median_time(times[v] for times in paired) if paired else None)
            for v in variants}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="*", help="islands_target.py result files")
    ap.add_argument("--instance", required=True)
    ap.add_argument("--variants", required=True, help="comma-separated; the first is the base of the ratios")
    ap.add_argument("--report", help="a report folder with records.tgz")
    ap.add_argument("--group", help="the report's group")
    ap.add_argument("--report-backend", action="append", default=[], help="BACKEND=VARIANT")
    args = ap.parse_args()
    variants = args.variants.split(",")
    names = dict(pair.partition("=")[::2] for pair in args.report_backend)
    if len(variants) < 2 or not all(variants) or not all(names) or not all(names.values()):
        raise LsbenchError("--variants: two or more names; --report-backend: BACKEND=VARIANT")
    if args.report and not (args.group and names):
        raise LsbenchError("--report: needs --group and at least one --report-backend")
    runs = {}
    for path in args.results:
        runs.update(target_runs(path, args.instance))
    if args.report:
        runs.update(report_runs(args.report, args.group, names))
    result = pooled(runs, variants)
    count = len(result[variants[0]][0])
    if not count:
        raise LsbenchError(f"no seed block of {args.instance} ran every one of {', '.join(variants)}")
    base = result[variants[0]][1]
    print(f"| {args.instance}, {count} paired seed blocks | reached | median time to the target (s) | "
          f"x {variants[0]} |\n|---|---|---|---|")
    for v, (times, middle) in result.items():
        ratio = f"{middle / base:.2f}" if middle is not None and base else "-"
        print(f"| {v} | {sum(t is not None for t in times)}/{count} | "
              f"{'never' if middle is None else f'{middle:.2f}'} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
