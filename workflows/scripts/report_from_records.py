"""Report run records made on another host (e.g. the GPU machine via run_plan.py), and render the
committed example reports in reports/ again from their records with the current report code
(regenerate_reports.py makes new records and archives).

    python workflows/scripts/report_from_records.py CONFIG RUNS_DIR OUT_DIR [quick]
    python workflows/scripts/report_from_records.py --examples

The GPU line of a report names the device the records were made on, not this host's; its first
screen says the scale, the records' commit and GPU, and the report code it was rendered by.
"""
import json
import sys
import tarfile
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsbench.workflow import aggregate_records  # noqa: E402
from plan_left import left  # noqa: E402
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
    write_report(out / "runs.parquet", out / "report.html", cfg, gpu)
    print(f"{len(records)} records -> {out / 'report.html'}")


def extract(archive_path, into):
    """A records archive's files and folders into `into`, refusing any that would land outside it
    (tarfile's "data" filter, which Python before 3.11.4 lacks)."""
    with tarfile.open(archive_path) as archive:
        members = archive.getmembers()
        for m in members:
            if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in Path(m.name).parts:
                raise ValueError(f"{archive_path}: {m.name!r} is not a plain file or folder inside the archive")
        archive.extractall(into, members=members)


def extract_reports(reports, into, leave_out=None):
    """Every archive reports/NAME/records.tgz (but leave_out's) unpacked into into/NAME; {NAME: its folder}."""
    folders = {}
    for archive_path in sorted(Path(reports).glob("*/records.tgz")):
        name = archive_path.parent.name
        if name != leave_out:
            extract(archive_path, Path(into) / name)
            folders[name] = Path(into) / name
    return folders


def regenerate_examples():
    """Every report in reports/ again from its records.tgz with the current code, at the scale its
    plan.json says the records were planned at."""
    for archive_path in sorted((ROOT / "reports").glob("*/records.tgz")):
        folder = archive_path.parent
        with tempfile.TemporaryDirectory() as tmp:
            extract(archive_path, tmp)
            plan = json.loads((Path(tmp) / "plan.json").read_text())
            for old in (folder / "report_files").glob("*"):
                old.unlink()
            report(ROOT / plan["config"], Path(tmp) / "runs", folder, plan["scale"], plan)


if __name__ == "__main__":
    if sys.argv[1:] == ["--examples"]:
        regenerate_examples()
    else:
        report(*sys.argv[1:5])
