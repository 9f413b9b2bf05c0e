"""`lsbench export`: an experiment's runs (its runs.parquet) for other tools.

- `csv`: one row per improvement of every run (group, instance, backend, seed, iteration,
  evaluations, seconds, objective, best known value), for any spreadsheet.
- `iohanalyzer`: the IOHprofiler format IOHanalyzer and iohinspector read: per (instance, backend)
  a JSON description and a space-separated `.dat` of the runs' improvements, `evaluations` counted
  as neighbourhood moves evaluated (iteration x moves + 1, the start being evaluation 1), `raw_y`
  the objective (minimised). Instances are IOH "functions", backends "algorithms", seeds "runs".
"""
import json
import re
from pathlib import Path

from .errors import LsbenchError
from .files import EXPORT_HEADER, check_writable, write_text_atomic

FORMATS = ("iohanalyzer", "csv")


def load_table(source):
    """The Parquet table of an experiment (a file, or results/<experiment>/ holding runs.parquet)."""
    try:
        import pandas as pd
    except ImportError:
        raise LsbenchError("lsbench export needs pandas and pyarrow (pip install -e '.[workflow]')") from None
    path = Path(source)
    if path.is_dir():
        path = path / "runs.parquet"
    if not path.is_file():
        raise LsbenchError(f"lsbench export: {path} not found (give runs.parquet or its experiment folder)")
    try:
        df = pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 (pyarrow's errors for a file that is not Parquet vary by version)
        raise LsbenchError(f"lsbench export: {path} is not a Parquet table ({type(e).__name__}: "
                           f"{str(e).splitlines()[0] if str(e) else ''})") from None
    if "trajectory" not in df.columns:
        raise LsbenchError(f"lsbench export: {path} has no trajectories (made by an older lsbench: rerun the "
                           "workflow's aggregate step)")
    return df


def points(row):
    """(iteration, evaluations, seconds, objective) of one run's trajectory."""
    moves = int(row.neighbourhood_size or 1)
    return [(int(it), int(it) * moves + 1, float(seconds), objective)
            for it, seconds, objective in json.loads(row.trajectory)]


def improvements(df):
    """(run row, iteration, evaluations, seconds, objective) for every trajectory point."""
    for row in df.itertuples():
        for point in points(row):
            yield (row, *point)


def export(source, fmt, out):
    if fmt not in FORMATS:
        raise LsbenchError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    # before the table is read: a .csv is one file, iohanalyzer's output a folder with one file a run
    target = Path(out) if fmt == "csv" else Path(out) / ".lsbench-export-check"
    check_writable(target, kind="trajectory table" if fmt == "csv" else None)
    df = load_table(source)
    return (export_csv if fmt == "csv" else export_iohanalyzer)(df, Path(out))


def export_csv(df, out):
    import csv
    import io
    if out.is_dir():
        raise LsbenchError(f"--out {out}: is a directory (give a .csv file)")
    text = io.StringIO(newline="")
    w = csv.writer(text)
    w.writerow(EXPORT_HEADER.split(","))
    for row, it, evals, seconds, objective in improvements(df):
        w.writerow([row.group, row.problem, row.instance, row.algorithm, row.backend, row.seed, it, evals,
                    seconds, objective, "" if row.bks != row.bks or row.bks is None else row.bks])
    write_text_atomic(out, text.getvalue())
    return out


def export_iohanalyzer(df, out):
    if out.exists() and not out.is_dir():
        raise LsbenchError(f"--out {out}: exists and is not a directory")
    functions = {name: k for k, name in enumerate(sorted(df["instance"].unique()), 1)}
    written = []
    for (instance, backend), runs in df.groupby(["instance", "backend"], sort=True):
        fid, safe = functions[instance], re.sub(r"[^A-Za-z0-9_.-]", "_", f"{instance}-{backend}")
        folder = out / safe
        folder.mkdir(parents=True, exist_ok=True)
        dimension = int(runs["solution_size"].iloc[0]) if "solution_size" in runs else 1
        dat = f"data_f{fid}_{safe}/IOHprofiler_f{fid}_DIM{dimension}.dat"
        (folder / dat).parent.mkdir(parents=True, exist_ok=True)
        lines, described = ["evaluations raw_y"], []
        for row in runs.sort_values("seed").itertuples():  # one IOH run per seed, in seed order
            run = [(evals, objective) for _, evals, _, objective in points(row)]
            lines += [f"{evals} {objective}" for evals, objective in run]
            last = int(row.evaluations) + 1
            described.append({"instance": 1, "evals": last,
                              "best": {"evals": run[-1][0], "y": float(row.best_objective), "x": []}})
        write_text_atomic(folder / dat, "\n".join(lines) + "\n")
        meta = {"version": "0.3.3", "suite": f"lsbench {runs['problem'].iloc[0]}", "function_id": fid,
                "function_name": instance, "maximization": False,
                "algorithm": {"name": backend, "info": f"{runs['algorithm'].iloc[0]} on {runs['backend_kind'].iloc[0]}"},
                "attributes": ["evaluations", "raw_y"],
                "scenarios": [{"dimension": dimension, "path": dat, "runs": described}]}
        write_text_atomic(folder / f"IOHprofiler_f{fid}_{safe}.json", json.dumps(meta, indent=1))
        written.append(folder)
    return out
