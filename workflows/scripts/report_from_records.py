"""Report run records made on another host (e.g. the GPU machine via run_plan.py), and render the
example reports in reports/ again with the current report code (regenerate_reports.py makes new
records and archives).

    python workflows/scripts/report_from_records.py CONFIG RUNS_DIR OUT_DIR [quick]
    python workflows/scripts/report_from_records.py --examples

The GPU line of a report names the device the records were made on, not this host's; its first
screen says the scale, the records' commit and GPU, the report code it was rendered by, and the
command that makes its records again. Beside the page, render.json keeps what the page needs of
the records (the plan, its counts, the GPU), so that --examples renders each example from its
runs.parquet and render.json alone: the records archives are not in the tree (reports/records.csv).
"""
import json
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsbench.workflow import aggregate_records  # noqa: E402
from plan_left import left  # noqa: E402
from records_archive import extract, remake_command  # noqa: E402
from report import write_report  # noqa: E402


def report(config, runs_dir, out_dir, scale="paper", plan=None):
    cfg = yaml.safe_load(open(config))
    cfg["scale"] = scale  # as the runs were planned (run_plan.py --scale)
    cfg["plan"] = plan  # regenerate_reports.py's plan.json, for the first screen
    records = sorted(Path(runs_dir).glob("*/*/*.json"))  # GROUP/INSTANCE/BACKEND-sSEED.json (not a multistart's searches)
    seeds = (plan or {}).get("seeds")  # (a --seeds override of every group, as the runs were planned)
    planned = left({**cfg, "groups": [{**g, "seeds": seeds} for g in cfg["groups"]]} if seeds else cfg, runs_dir)
    cfg["planned"] = planned  # (plan_left.left: held, planned, beyond, replanned, ...)
    read = [json.loads(p.read_text()) for p in records]
    devices = {r.get("backend_info", {}).get("device") for r in read} - {None}
    hosts = {r["host"]["hostname"] for r in read}
    gpu = {"available": bool(devices), "name": ", ".join(sorted(devices)) + f" (records made on {', '.join(sorted(hosts))})"}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    aggregate_records(records, out / "runs.parquet", root=runs_dir)
    if plan is not None:  # an example report: the command that makes its records again, and render.json
        cfg["remake"] = remake_command(Path(config).stem, plan, cfg)
        write_render_file(out / "render.json", plan, planned, gpu)
    write_report(out / "runs.parquet", out / "report.html", cfg, gpu)
    print(f"{len(records)} records -> {out / 'report.html'}")


def write_render_file(path, plan, planned, gpu):
    """What the page needs of the records: the plan, plan_left's counts (`earlier` as a list: its keys
    are tuples), the GPU line. A temp file, then renamed."""
    counts = {**planned, "earlier": [[list(cell), diffs] for cell, diffs in planned.get("earlier", {}).items()]}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"plan": plan, "planned": counts, "gpu": gpu}, indent=1, default=str) + "\n")
    tmp.replace(path)


def render_example(folder):
    """reports/NAME again from its runs.parquet and render.json, with the current report code."""
    saved = json.loads((folder / "render.json").read_text())
    plan = saved["plan"]
    cfg = yaml.safe_load((ROOT / plan["config"]).read_text())
    planned = {**saved["planned"], "earlier": {tuple(cell): diffs for cell, diffs in saved["planned"]["earlier"]}}
    cfg.update(scale=plan["scale"], plan=plan, planned=planned, remake=remake_command(folder.name, plan, cfg))
    for old in (folder / "report_files").glob("*"):
        old.unlink()
    write_report(folder / "runs.parquet", folder / "report.html", cfg, saved["gpu"])
    print(f"-> {folder / 'report.html'}")


def regenerate_examples():
    """Every report in reports/ again with the current report code: from its records archive where
    this host has one (reports/NAME/records.tgz, as regenerate_reports.py or a device call left it),
    else from its runs.parquet and render.json."""
    for folder in sorted(p.parent for p in (ROOT / "reports").glob("*/report.html")):
        if (folder / "records.tgz").exists():
            with tempfile.TemporaryDirectory() as tmp:
                extract(folder / "records.tgz", tmp)
                plan = json.loads((Path(tmp) / "plan.json").read_text())
                for old in (folder / "report_files").glob("*"):
                    old.unlink()
                report(ROOT / plan["config"], Path(tmp) / "runs", folder, plan["scale"], plan)
        else:
            render_example(folder)


if __name__ == "__main__":
    if sys.argv[1:] == ["--examples"]:
        regenerate_examples()
    else:
        report(*sys.argv[1:5])
