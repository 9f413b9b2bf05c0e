"""What is left of each example report's plan, and about how long it would run: for every planned
run without a record, the median time (warm-up included) of the records of its cell (group,
instance, backend), or where its cell has none, of the records of the same run but its seed in any
report's archive, summed apart for the GPU rows and the CPU rows; a run found nowhere cannot be
estimated and is counted; a run sampled in seconds counts its seconds. A record of another plan
(the config changed since) counts as missing. A missing run that another report holds itself (the same spec and seed:
EvoCOP Table 5 profiles Tables 3 and 4's runs) is counted apart: `regenerate_reports.py
--continue` takes its record instead of running it. For sizing a machine session's calls.

    python workflows/scripts/plan_left.py [NAME ...]     (default: every report in reports/)
"""
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsbench.errors import LsbenchError  # noqa: E402
from lsbench.registry import GPU_BACKENDS  # noqa: E402
from lsbench.workflow import plan_runs  # noqa: E402
from records_archive import extract_reports  # noqa: E402
from run_plan import plan_of, run_key, spec_difference  # noqa: E402


class RecordTimes:
    """Records' times (warm-up included) by cell (group, instance, backend) and by run_key without
    the seed, and the runs they hold (regenerate_reports.py --continue takes those from another
    report instead of running them)."""

    def __init__(self, runs_dirs=()):
        self.cells, self.seconds, self.runs = defaultdict(list), defaultdict(list), set()
        self.specs = {}  # what each record says of its plan (run_plan.plan_of), by its path in its runs folder
        for runs_dir in runs_dirs:
            for path in Path(runs_dir).glob("*/*/*.json"):
                record = json.loads(path.read_text())
                took = record["wall_s"] + (record.get("warmup_s") or 0)
                self.specs[path.relative_to(runs_dir)] = plan_of(record)
                self.cells[cell(path)].append(took)
                self.seconds[run_key(record["run_spec"], with_seed=False)].append(took)
                self.runs.add(run_key(record["run_spec"]))

    @classmethod
    def union(cls, parts):
        whole = cls()
        for part in parts:
            for key, times in part.seconds.items():
                whole.seconds[key] += times
            whole.runs |= part.runs
        return whole


def cell(path):
    """(group, instance, backend) of a record's path GROUP/INSTANCE/BACKEND-sSEED.json."""
    return path.parent.parent.name, path.parent.name, path.stem.rsplit("-s", 1)[0]


def left(config, runs_dir, elsewhere=None):
    """{planned, held, missing, replanned, elsewhere, gpu_s, cpu_s, unknown, beyond} of a config's
    plan (its `scale`, as the config stands now) against the records in runs_dir
    (GROUP/INSTANCE/BACKEND-sSEED.json; `replanned`: the missing runs whose record is of another
    plan, a changed config's); `elsewhere` (RecordTimes) holds some missing runs
    themselves (counted, not timed) and estimates the cells without records; `beyond` counts the
    records of runs the plan no longer has (they stay in a report); `earlier`: {(group, instance,
    backend): [(field, the record's value, the plan's)]} of the replanned records, for the report."""
    records = sorted(Path(runs_dir).glob("*/*/*.json"))
    own, elsewhere = RecordTimes([runs_dir]), elsewhere or RecordTimes()
    same_run = RecordTimes.union([own, elsewhere]).seconds
    out = {"planned": 0, "held": 0, "missing": 0, "replanned": 0, "elsewhere": 0, "gpu_s": 0.0, "cpu_s": 0.0,
           "unknown": 0}
    planned, earlier = set(), defaultdict(list)
    for r in plan_runs(config, gpu_available=True):
        relative = Path(r["path"].split("/runs/", 1)[1])
        planned.add(relative)
        out["planned"] += 1
        if relative in own.specs:
            difference = spec_difference(r, own.specs[relative])
            if difference is None:
                out["held"] += 1
                continue
            out["replanned"] += 1  # a record of another plan: --drop-replanned runs it again
            earlier[cell(relative)].append(difference)
        out["missing"] += 1
        if not r["multistart"] and run_key(r["spec"].as_record()) in elsewhere.runs:
            out["elsewhere"] += 1
            continue
        side = "gpu_s" if r["spec"].backend in GPU_BACKENDS else "cpu_s"
        if r["spec"].stop.seconds is not None:  # a sample in seconds: at most that (an iteration past it aside)
            out[side] += r["spec"].stop.seconds
            continue
        times = own.cells.get(cell(relative)) or same_run.get(run_key(r["spec"].as_record(), with_seed=False))
        if not times:
            out["unknown"] += 1
        else:
            out[side] += statistics.median(times)
    out["beyond"] = sum(p.relative_to(runs_dir) not in planned for p in records)
    out["earlier"] = dict(earlier)
    return out


def main(names):
    names = names or sorted(p.parent.name for p in (ROOT / "reports").glob("*/records.tgz"))
    missing = [n for n in names if not (ROOT / "workflows" / "config" / f"{n}.yaml").exists()]
    if missing:
        print(f"lsbench: error: no config workflows/config/{missing[0]}.yaml", file=sys.stderr)
        return 2
    print("| report | planned | held | left | of those, a record of another plan | of those, held by another report "
          "| GPU rows (min) | CPU rows (min) | left without an estimate |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folders = extract_reports(ROOT / "reports", tmp)
        scales = {name: json.loads((folder / "plan.json").read_text())["scale"] for name, folder in folders.items()}
        times = {name: RecordTimes([folder / "runs"]) for name, folder in folders.items()}  # (each record read once)
        for name in names:
            config = yaml.safe_load((ROOT / "workflows" / "config" / f"{name}.yaml").read_text())
            elsewhere = RecordTimes.union(t for other, t in times.items() if other != name)
            try:
                n = left({**config, "scale": scales.get(name, "paper")}, Path(tmp) / name / "runs", elsewhere)
            except LsbenchError as e:
                print(f"lsbench: error: {e}", file=sys.stderr)
                return 2
            print(f"| {name} | {n['planned']} | {n['held']} | {n['missing']} | {n['replanned']} | {n['elsewhere']} | "
                  f"{n['gpu_s'] / 60:.1f} | {n['cpu_s'] / 60:.1f} | {n['unknown']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
