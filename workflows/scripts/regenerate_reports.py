"""Regenerate example reports in reports/ from new runs on this host (the GPU machine):

    python workflows/scripts/regenerate_reports.py [--scale paper] [--budget-s 1500] [--seeds N]
        [--archive-only] [--continue] [--mpi-launcher 'mpirun --allow-run-as-root'] NAME [NAME ...]

For each NAME, the runs of workflows/config/NAME.yaml (run_plan.py's order: seed by seed, every
cell side by side, no run started once the budget is spent), then reports/NAME/records.tgz (the
records and plan.json: config, scale, budget, commit, date) and the report rendered from them.
Every file is written beside its place first and renamed, so a failed run leaves the old report.
`report_from_records.py --examples` renders the same archives again with later report code.
`--archive-only` writes reports/NAME/records.tgz and renders nothing (a GPU machine without the
report's libraries: render there later with --examples). `--continue` starts from the records in
reports/NAME/records.tgz (same scale and seeds) and runs only the plan's runs they lack, so a
paper-scale plan longer than one machine session grows call by call (the report's first screen
lists every commit its records were made at); it also takes, instead of running them, the runs
that another report in reports/ holds (the same spec and seed: EvoCOP Table 5 profiles Tables 3
and 4's runs), and plan.json and the first screen say how many from which.
"""
import argparse
import datetime
import json
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from lsbench.errors import LsbenchError  # noqa: E402
from lsbench.provenance import versions  # noqa: E402
from records_archive import archive, extract, extract_reports, record_in_manifest, remake_command  # noqa: E402
from run_plan import (drop_replanned, planned_runs, restore_unreplaced, run_all, saving_despite_sigterm,  # noqa: E402
                      stop_plan_on_sigterm, take_same_runs)


def regenerate(name, scale, budget_s, seeds, reports=ROOT / "reports", render=True, launcher=None, resume=False,
               drop=False):
    config_path = ROOT / "workflows" / "config" / f"{name}.yaml"
    config = yaml.safe_load(config_path.read_text())
    commit = versions().get("lsbench_commit", "unknown")
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "results" / config["experiment"] / "runs"
        before = continued(reports / name / "records.tgz", runs, scale, seeds) if resume else {}
        taken = dict(before.get("taken", {}))
        every_row = planned_runs(config, scale, seeds, gpu_rows=True)  # (taking a GPU row's record needs no GPU)
        dropped = drop_replanned(every_row, tmp) if drop else {}
        if resume:
            others = {other: folder / "runs" for other, folder in
                      extract_reports(reports, Path(tmp) / "others", leave_out=name).items()}
            for source, count in take_same_runs(every_row, tmp, others).items():
                taken[source] = taken.get(source, 0) + count
        done, failed, left = run_all(config, scale, seeds, budget_s, tmp, launcher)
        with saving_despite_sigterm():  # the runs are done: a time limit's SIGTERM now must not cut their archive
            if drop:
                kept = restore_unreplaced(dropped, tmp)
                print(f"reports/{name}: {len(dropped) - kept} of the {len(dropped)} records of an earlier plan "
                      f"run again (the others kept until they are)")
            if not done or not runs.exists():
                raise LsbenchError(f"{name}: no run finished; reports/{name} left as it was")
            if before and None not in (budget_s, before.get("budget_s")):
                budget_s += before["budget_s"]  # the budget of every call the records took
            plan = {"config": f"workflows/config/{name}.yaml", "scale": scale, "budget_s": budget_s, "seeds": seeds,
                    "runs_done": done, "runs_failed": failed, "runs_not_started": left, "lsbench_commit": commit,
                    "date": datetime.date.today().isoformat(), "calls": before.get("calls", 1) + 1 if before else 1,
                    "taken": taken}
            save(runs, plan, reports / name, Path(tmp) / "report" if render else None)
    gpu_rows = len(every_row) - len(planned_runs(config, scale, seeds))
    print(f"reports/{name}: {done} runs ({failed} failed, {left} not started), scale {scale}"
          + (f"; its {gpu_rows} GPU rows not planned here: no GPU on this host" if gpu_rows else ""))
    return failed


def save(runs, plan, folder, staged=None):
    """The records and plan.json into folder/records.tgz; with `staged` (a scratch folder), the report
    rendered from them too, and folder replaced by it whole."""
    if staged is None:
        folder.mkdir(parents=True, exist_ok=True)
        archive(runs, plan, folder / "records.tgz")
    else:
        from report_from_records import report  # (pandas, matplotlib, jinja2: not on every GPU machine)
        report(ROOT / plan["config"], runs, staged, plan["scale"], plan)
        archive(runs, plan, staged / "records.tgz")
        replace_folder(staged, folder)
    config = yaml.safe_load((ROOT / plan["config"]).read_text())
    record_in_manifest(folder.parent, folder.name, folder / "records.tgz", remake_command(folder.name, plan, config))


def continued(archive_path, runs, scale, seeds):
    """The earlier calls' records (archive_path) unpacked into `runs`; their plan.json. Records of
    another scale or seed count are refused: one report, one plan."""
    if not archive_path.exists():
        raise LsbenchError(f"{archive_path}: no records to continue from")
    held = runs.parent / "continued"
    extract(archive_path, held)
    plan = json.loads((held / "plan.json").read_text())
    for field, now in (("scale", scale), ("seeds", seeds)):
        if plan.get(field) != now:
            raise LsbenchError(f"{archive_path}: its records have {field} {plan.get(field)}, this call "
                               f"{now}; run without --continue to start afresh")
    (held / "runs").replace(runs)
    return plan


def replace_folder(staged, out):
    """out's files replaced by staged's: copied beside it first, then two renames."""
    new, old = out.with_name(out.name + ".new"), out.with_name(out.name + ".old")
    shutil.rmtree(new, ignore_errors=True)
    shutil.copytree(staged, new)
    if out.exists():
        out.replace(old)
    new.replace(out)
    shutil.rmtree(old, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="+", help="configs in workflows/config/ (luong_qap, tsutsui_cas, ...)")
    ap.add_argument("--scale", default="paper", choices=["paper", "quick"])
    ap.add_argument("--budget-s", type=float, help="per report: start no run after this many seconds")
    ap.add_argument("--seeds", type=int, help="override every group's number of seeds")
    ap.add_argument("--archive-only", action="store_true", help="write records.tgz, render no report")
    ap.add_argument("--continue", dest="resume", action="store_true",
                    help="start from reports/NAME/records.tgz (same scale and seeds): run only the runs it lacks")
    ap.add_argument("--drop-replanned", action="store_true",
                    help="with --continue: drop the records the config now plans otherwise (another sample, "
                         "iterations or parameters), and run those again")
    ap.add_argument("--mpi-launcher", help="MPI rows start as LAUNCHER -n RANKS ... (e.g. 'mpirun --allow-run-as-root')")
    args = ap.parse_args()
    missing = [n for n in args.names if not (ROOT / "workflows" / "config" / f"{n}.yaml").exists()]
    if missing:
        print(f"lsbench: error: no config workflows/config/{missing[0]}.yaml", file=sys.stderr)
        return 2
    if args.drop_replanned and not args.resume:
        print("lsbench: error: --drop-replanned: only with --continue", file=sys.stderr)
        return 2
    stop_plan_on_sigterm()  # a machine's time limit ends the plan, and what it ran is still archived
    failed = 0
    for name in args.names:
        try:
            failed += regenerate(name, args.scale, args.budget_s, args.seeds, render=not args.archive_only,
                                 launcher=args.mpi_launcher, resume=args.resume, drop=args.drop_replanned)
        except LsbenchError as e:
            print(f"lsbench: error: {e}", file=sys.stderr)
            return 2
        except yaml.YAMLError as e:
            print(f"lsbench: error: workflows/config/{name}.yaml: {str(e).splitlines()[0]}", file=sys.stderr)
            return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
