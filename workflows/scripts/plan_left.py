"""What is left of each example report's plan, and about how long it would run: for every planned
run without a record, the median time (warm-up included) of the records of its cell (group,
instance, backend), or where its cell has none, of the records of the same run but its seed in any
report's archive (Table 5's PLS runs are Tables 3 and 4's), summed apart for the GPU rows and the
CPU rows; a run found nowhere cannot be estimated and is counted. For sizing a machine session's calls.

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


def run_key(run_spec):
    """A run's spec as its record holds it, but its seed: such runs take about the same time."""
    return json.dumps({k: v for k, v in json.loads(json.dumps(run_spec)).items() if k != "seed"}, sort_keys=True)


def seconds_by_run(runs_dirs):
    """The records' times (warm-up included) under runs_dirs, by run_key."""
    seconds = defaultdict(list)
    for runs_dir in runs_dirs:
        for path in Path(runs_dir).glob("*/*/*.json"):
            record = json.loads(path.read_text())
            seconds[run_key(record["run_spec"])].append(record["wall_s"] + (record.get("warmup_s") or 0))
    return seconds


def left(config, runs_dir, elsewhere=None):
    """{planned, held, missing, gpu_s, cpu_s, unknown, beyond} of a config's plan (its `scale`, as
    the config stands now) against the records in runs_dir (GROUP/INSTANCE/BACKEND-sSEED.json);
    a cell without records is estimated from `elsewhere` (seconds_by_run of other archives);
    `beyond` counts the records of runs the plan no longer has (they stay in a report)."""
    seconds = defaultdict(list)
    records = sorted(Path(runs_dir).glob("*/*/*.json"))
    for path in records:
        record = json.loads(path.read_text())
        seconds[(path.parent.parent.name, path.parent.name, path.stem.rsplit("-s", 1)[0])].append(
            record["wall_s"] + (record.get("warmup_s") or 0))
    same_run = seconds_by_run([runs_dir])
    for key, times in (elsewhere or {}).items():
        same_run[key] += times
    out = {"planned": 0, "held": 0, "missing": 0, "gpu_s": 0.0, "cpu_s": 0.0, "unknown": 0}
    planned = set()
    for r in plan_runs(config, gpu_available=True):
        relative = Path(r["path"].split("/runs/", 1)[1])
        planned.add(relative)
        out["planned"] += 1
        if (Path(runs_dir) / relative).exists():
            out["held"] += 1
            continue
        out["missing"] += 1
        cell = seconds.get((relative.parent.parent.name, relative.parent.name, relative.stem.rsplit("-s", 1)[0])) \
            or same_run.get(run_key(r["spec"].as_record()))
        if not cell:
            out["unknown"] += 1
        else:
            out["gpu_s" if r["spec"].backend in GPU_BACKENDS else "cpu_s"] += statistics.median(cell)
    out["beyond"] = sum(p.relative_to(runs_dir) not in planned for p in records)
    return out


def main(names):
    from report_from_records import extract  # (which imports this module)
    names = names or sorted(p.parent.name for p in (ROOT / "reports").glob("*/records.tgz"))
    missing = [n for n in names if not (ROOT / "workflows" / "config" / f"{n}.yaml").exists()]
    if missing:
        print(f"lsbench: error: no config workflows/config/{missing[0]}.yaml", file=sys.stderr)
        return 2
    print("| report | planned | held | left | GPU rows (min) | CPU rows (min) | left without an estimate |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        scales = {}
        for archive in sorted((ROOT / "reports").glob("*/records.tgz")):
            extract(archive, Path(tmp) / archive.parent.name)
            scales[archive.parent.name] = json.loads((Path(tmp) / archive.parent.name / "plan.json").read_text())["scale"]
        for name in names:
            config = yaml.safe_load((ROOT / "workflows" / "config" / f"{name}.yaml").read_text())
            elsewhere = seconds_by_run(Path(tmp) / other / "runs" for other in scales if other != name)
            try:
                n = left({**config, "scale": scales.get(name, "paper")}, Path(tmp) / name / "runs", elsewhere)
            except LsbenchError as e:
                print(f"lsbench: error: {e}", file=sys.stderr)
                return 2
            print(f"| {name} | {n['planned']} | {n['held']} | {n['missing']} | {n['gpu_s'] / 60:.1f} | "
                  f"{n['cpu_s'] / 60:.1f} | {n['unknown']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
