"""An example report's records archive (reports/NAME/records.tgz: the run records and plan.json) and
the manifest that names each archive (reports/records.csv). The archives stay out of the tree (git
ignores them): the manifest gives each one's sha256, size, the last commit whose tree held it, and
the one command that makes it again on a GPU machine. A report renders from its runs.parquet and
render.json alone (report_from_records.py --examples)."""
import csv
import hashlib
import io
import json
import tarfile
from pathlib import Path

MANIFEST_FIELDS = ["report", "sha256", "bytes", "in_git_at", "command"]


def archive(runs, plan, path):
    """records.tgz: runs/... and plan.json, written to a temp name, then renamed."""
    tmp = path.with_name(path.name + ".tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        tar.add(runs, arcname="runs")
        data = json.dumps(plan, indent=1).encode()
        info = tarfile.TarInfo("plan.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    tmp.replace(path)


def extract(archive_path, into):
    """A records archive's files and folders into `into`, refusing any that would land outside it
    (tarfile's "data" filter, which Python before 3.11.4 lacks)."""
    with tarfile.open(archive_path) as tar:
        members = tar.getmembers()
        for m in members:
            if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in Path(m.name).parts:
                raise ValueError(f"{archive_path}: {m.name!r} is not a plain file or folder inside the archive")
        tar.extractall(into, members=members)


def extract_reports(reports, into, leave_out=None):
    """Every archive reports/NAME/records.tgz on this host (but leave_out's) unpacked into into/NAME;
    {NAME: its folder}."""
    folders = {}
    for archive_path in sorted(Path(reports).glob("*/records.tgz")):
        name = archive_path.parent.name
        if name != leave_out:
            extract(archive_path, Path(into) / name)
            folders[name] = Path(into) / name
    return folders


def remake_command(name, plan, config):
    """The one command that makes report NAME's records again (on a GPU machine, at the plan's scale,
    seeds and total budget; MPI rows through mpirun)."""
    mpi = any((b.get("multistart") or {}).get("ranks", 1) > 1
              for g in config.get("groups", []) for b in g.get("backends", []) if isinstance(b, dict))
    parts = ["python workflows/scripts/regenerate_reports.py", f"--scale {plan.get('scale', 'paper')}"]
    if plan.get("budget_s") is not None:
        parts.append(f"--budget-s {plan['budget_s']:g}")
    if plan.get("seeds") is not None:
        parts.append(f"--seeds {plan['seeds']}")
    if mpi:
        parts.append("--mpi-launcher mpirun")
    return " ".join(parts + [name])


def read_manifest(reports):
    path = Path(reports) / "records.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        return {row["report"]: row for row in csv.DictReader(f)}


def record_in_manifest(reports, name, archive_path, command):
    """reports/records.csv's row of NAME: the archive's sha256 and size, and its command (a temp
    file, then renamed). An archive made here is in no commit's tree: in_git_at is left empty."""
    rows = read_manifest(reports)
    digest = hashlib.sha256(Path(archive_path).read_bytes()).hexdigest()
    rows[name] = {"report": name, "sha256": digest, "bytes": Path(archive_path).stat().st_size, "in_git_at": "",
                  "command": command}
    path = Path(reports) / "records.csv"
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, MANIFEST_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows[k] for k in sorted(rows))
    tmp.replace(path)
