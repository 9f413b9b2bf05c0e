"""An experiment's report, from its Parquet table alone (results/<experiment>/runs.parquet):
a summary and the hardware, per group our table, ours beside the paper's, the gap to the best known
value, notes where a ratio needs explaining, and plots (convergence, time to target, speed-up
against size) as PNG files beside the page. Rendered from workflows/templates/report.html.j2;
the page opens from disk with no network.

    python workflows/scripts/report.py CONFIG RUNS_PARQUET OUT_HTML [--gpu "NAME"]
"""
import argparse
import datetime
import hashlib
import html
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pareto_report  # noqa: E402
from png import save_png  # noqa: E402

from lsbench.registry import GPU_BACKENDS  # noqa: E402
from lsbench.workflow import backend_entry, expand_group  # noqa: E402

TEMPLATES = ROOT / "workflows" / "templates"
PARALLEL = {"cpu-parallel", "cow", "grid"}
# the code a report is rendered by: a committed example report that names another fingerprint is stale
REPORT_CODE = ("workflows/scripts/report.py", "workflows/scripts/pareto_report.py",
               "workflows/templates/report.html.j2", "lsbench/workflow.py")


def report_code_fingerprint():
    digest = hashlib.sha256()
    for name in REPORT_CODE:
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def provenance(df, config, gpu):
    """What a reader needs on the first screen: the scale, the commit(s) and GPU(s) the records were
    made with, and the code and date the page was rendered with."""
    commits = sorted({c for c in df.get("lsbench_commit", pd.Series(dtype=object)).dropna()}) if len(df) else []
    devices = sorted({d for d in df["device"].dropna()}) if "device" in df and len(df) else []
    plan = config.get("plan") or {}  # regenerate_reports.py's plan.json: when, and how much of the plan ran
    failed = f", {plan['runs_failed']} failed" if plan.get("runs_failed") else ""  # (named in the plan's log)
    budget = f" within a budget of {plan['budget_s']:g} s" if plan.get("budget_s") else ""
    counts = config.get("planned") or {"held": plan.get("runs_done"), "planned": None}  # (plan_left.left's)
    held, planned, beyond, replanned = (counts.get(k, 0) for k in ("held", "planned", "beyond", "replanned"))
    taken = plan.get("taken") or {}  # records of the same runs in other reports, not run again
    where = ", ".join(f"{name} ({count})" for name, count in sorted(taken.items())) if len(taken) > 1 else "".join(taken)
    taken = f" ({sum(taken.values())} of them the records of the same runs in {where})" if taken else ""
    ran = "" if held is None else (f"{held} of the plan's {planned} runs" if planned else f"{held} runs") + \
        taken + (f" and {beyond} beyond it" if beyond else "") + (f"{budget} ({failed[2:]})" if failed else budget) + \
        (f", and {replanned} record{'s' * (replanned != 1)} of an earlier plan "
         "(another sample, stop, parameter or multistart)" if replanned else "")
    return {"scale": config.get("scale", "paper"), "records_commits": ", ".join(commits) or "unknown",
            "gpu": ", ".join(devices) or gpu["name"], "fingerprint": report_code_fingerprint(),
            "rendered": datetime.date.today().isoformat(), "records_date": plan.get("date"), "plan": ran,
            "remake": config.get("remake")}


# -- numbers for reading ---------------------------------------------------------------------------
def fmt_int(x):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{int(round(x)):,}"


def fmt_num(x, digits=3):
    """Times and rates with `digits` significant digits, integers above that as integers."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if abs(x) >= 10 ** digits:
        return fmt_int(x)
    return f"{x:.{digits}g}"


def fmt_ratio(x):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{fmt_num(x)}\u00d7"


def fmt_gap(x):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


# -- tables ----------------------------------------------------------------------------------------
def extrapolate_samples(df, config):
    """Runs of a backend entry with a `sample` that stopped before the group's iterations: their
    wall time becomes time per iteration x the group's iterations; `sampled` keeps the iterations
    they ran (0: a full run) and `run_wall_s` the time the run took (a time split's shares are of that)."""
    df = df.assign(sampled=0, run_wall_s=df["wall_s"])
    for g in config.get("groups", []):
        g = expand_group(g, config.get("scale", "paper"))
        for b in map(backend_entry, g["backends"]):
            if not b["sample"]:  # (a sample needs a group that stops by iterations: sampled_group)
                continue
            rows = (df["group"] == g["name"]) & (df["backend"] == b["name"]) & (df["iterations"] < g["iterations"])
            if rows.any():
                df.loc[rows, "wall_s"] = df.loc[rows, "wall_s"] / df.loc[rows, "iterations"] * g["iterations"]
                df.loc[rows, "sampled"] = df.loc[rows, "iterations"]
    return df


def summarise(df):
    """Per (group, instance, backend): medians, speed-up against `cpu` on the same instance, quality."""
    df = df.assign(bks=pd.to_numeric(df["bks"], errors="coerce"),
                   gap_percent=pd.to_numeric(df["gap_percent"], errors="coerce"),
                   sampled=df["sampled"] if "sampled" in df else 0,  # (extrapolate_samples sets it)
                   front_size=[len(json.loads(f)) if isinstance(f, str) else np.nan
                               for f in df.get("front", pd.Series(None, index=df.index))],
                   largest_archive=[max(size for _it, size in json.loads(a)) if isinstance(a, str) else np.nan
                                    for a in df.get("archive_sizes", pd.Series(None, index=df.index))],
                   restarts_done=pd.to_numeric(df.get("restarts_done", pd.Series(None, index=df.index)),
                                               errors="coerce"),
                   aggregate_iterations_per_s=pd.to_numeric(df.get("aggregate_iterations_per_s", pd.Series(
                       None, index=df.index)), errors="coerce"),
                   stopped_by_time=df.get("stopped_by_time", pd.Series(False, index=df.index)).fillna(False).astype(bool))
    # (a sample's run the clock stopped has an extrapolated time: an estimate of its work's)
    df["stopped_by_time"] &= df["sampled"] == 0
    keys = ["group", "instance", "backend"]
    out = df.groupby(keys, sort=False).agg(
        runs=("seed", "count"), kind=("backend_kind", "first"), moves=("neighbourhood_size", "first"),
        wall_s=("wall_s", "median"), wall_min=("wall_s", "min"), wall_max=("wall_s", "max"),
        it_per_s=("iterations_per_s", "median"), together=("aggregate_iterations_per_s", "median"),
        best=("best_objective", "min"),
        median_objective=("best_objective", "median"), gap=("gap_percent", "median"),
        gap_min=("gap_percent", "min"), bks=("bks", "first"), serial=("serial_note", "first"),
        sampled=("sampled", "max"), front_size=("front_size", "median"),
        largest_archive=("largest_archive", "median"), restarts_done=("restarts_done", "median"),
        timed_out=("stopped_by_time", "sum")).reset_index()
    # runs the clock stopped took at least their limit: once they are half, the median time is a bound
    out["time_is_bound"] = out["timed_out"] * 2 >= out["runs"]
    hit = df.assign(hit=df["bks"].notna() & (df["best_objective"] <= df["bks"]))
    out["at_bks_percent"] = hit.groupby(keys, sort=False)["hit"].mean().values * 100
    cpu = out[out["backend"] == "cpu"].set_index(["group", "instance"])
    ratios = [speedup(cpu.loc[(r.group, r.instance)] if (r.group, r.instance) in cpu.index else None, r)
              for r in out.itertuples()]
    out["speedup_vs_cpu"] = [exact for exact, _ in ratios]
    out["speedup_at_least"] = [bound for _, bound in ratios]
    return out


def speedup(cpu, r):
    """(one core's median time / the row's, NaN) where both medians are times of work done; (NaN,
    that ratio) where only one core's is its time limit (it is then a lower bound); (NaN, NaN) where
    the row's own median is a time limit (a run cut by the clock did no fixed work to compare)."""
    if cpu is None or not r.wall_s or r.time_is_bound:
        return np.nan, np.nan
    ratio = cpu.wall_s / r.wall_s
    return (np.nan, ratio) if cpu.time_is_bound else (ratio, np.nan)


def fmt_speedup(r):
    """A summary row's speed-up: the ratio, "\u2265 ratio" where it is a bound, or nothing."""
    return f"\u2265 {fmt_ratio(r.speedup_at_least)}" if r.speedup_at_least == r.speedup_at_least \
        else fmt_ratio(r.speedup_vs_cpu)


def timed(wall_s, sampled):
    """A median time; an extrapolated one marked with the iterations it was measured on."""
    return fmt_num(wall_s) + (f" (est. from {fmt_int(sampled)} it.)" if sampled else "")


def hardware(df, gpu):
    """One readable row per host the records came from."""
    rows = []
    for host, sub in df.groupby("host", sort=True):
        versions = json.loads(sub["versions"].iloc[0]) if "versions" in sub else {}
        devices = sorted({d for d in sub["device"].dropna()}) if "device" in sub else []
        rows.append({"host": host, "cpu": sub["cpu_model"].iloc[0] if "cpu_model" in sub else "",
                     "cores": fmt_int(sub["cpu_count"].iloc[0]) if "cpu_count" in sub else "",
                     "gpu": ", ".join(devices) or gpu["name"],
                     "versions": ", ".join(f"{k} {v}" for k, v in versions.items() if k != "lsbench_tree_changed")})
    return rows


def headlines(summary, df):
    """Two or three sentences: the largest speed-up against one core, quality, what ran."""
    out = [f"{len(df)} runs: {df['instance'].nunique()} instances, {df['backend'].nunique()} backends, "
           f"{df.groupby(['group', 'instance', 'backend'])['seed'].nunique().max()} seeds at most per cell."]
    exact = summary[summary["backend"] != "cpu"].dropna(subset=["speedup_vs_cpu"])
    bounds = summary[summary["backend"] != "cpu"].dropna(subset=["speedup_at_least"])
    if not exact.empty or not bounds.empty:
        column = "speedup_vs_cpu" if not exact.empty else "speedup_at_least"  # a measured ratio before a bound
        fast = exact if not exact.empty else bounds
        top = fast.loc[fast[column].idxmax()]
        ratio = top[column]
        cpu = summary[(summary["group"] == top.group) & (summary["instance"] == top.instance)
                      & (summary["backend"] == "cpu")].iloc[0]
        estimated = [f"{name}'s from its first {fmt_int(r.sampled)} iterations" for name, r in
                     ((top.backend, top), ("one core", cpu)) if r.sampled]
        against = (f"{fmt_num(top.wall_s * ratio)} s" if column == "speedup_vs_cpu" else
                   f"one core's time limit of {fmt_num(cpu.wall_s)} s, which it did not finish within")
        out.append(f"Fastest against one core: {top.backend} on {top.instance} ({top.group}), "
                   f"{'' if column == 'speedup_vs_cpu' else 'at least '}{fmt_ratio(ratio)} ({fmt_num(top.wall_s)} s "
                   f"against {against}" + (f"; estimated times: {' and '.join(estimated)}" if estimated else "") + ").")
    full = summary[summary["sampled"] == 0]  # a sampled run stopped early: its gap says nothing of the search's
    gaps = full.dropna(subset=["gap"])
    if not gaps.empty:
        cells = "every cell" if len(full) == len(summary) else "every cell of full runs (sampled runs left out)"
        out.append(f"Median gap to the best known value: {fmt_gap(gaps['gap'].median())}% over {cells}; "
                   f"{fmt_num(full['at_bks_percent'].mean(), 2)}% of those runs reached it.")
    return out


def notes(summary, algorithm=None):
    """Where a ratio needs explaining (a group's rows; `algorithm` is the group's)."""
    out = []
    one_at_a_time = {}  # random sampling's GPU rows slower than one core: one note a backend
    for r in summary.itertuples():
        if r.sampled:
            out.append(f"{r.group}, {r.instance}: {r.backend}'s times are estimates, not full runs: each run's time "
                       f"per iteration over its first {fmt_int(r.sampled)} iterations, times the group's iterations.")
        if algorithm == "sample":  # (no neighbourhood: the launch-per-iteration reasons below do not apply)
            if r.kind in GPU_BACKENDS and r.speedup_vs_cpu < 1:
                one_at_a_time.setdefault((r.group, r.backend), []).append(r.speedup_vs_cpu)
            continue
        if r.kind in PARALLEL and isinstance(r.serial, str):  # the record says it ran on one core, and why
            out.append(f"{r.group}, {r.instance}: {r.backend} ran on one core ({fmt_ratio(r.speedup_vs_cpu)} the "
                       f"one-core run): {r.serial}.")
        elif r.kind in PARALLEL and r.speedup_vs_cpu == r.speedup_vs_cpu and r.speedup_vs_cpu < 1:
            out.append(f"{r.group}, {r.instance}: {r.backend} is {fmt_ratio(r.speedup_vs_cpu)} one core; "
                       f"{fmt_int(r.moves)} moves an iteration are little work to share, and starting and joining "
                       "the threads, ranks or workers each iteration, or other processes on the same cores, cost "
                       "more than the share saves (see the range of times).")
        elif r.kind in GPU_BACKENDS and r.speedup_vs_cpu == r.speedup_vs_cpu and r.speedup_vs_cpu < 1:
            out.append(f"{r.group}, {r.instance}: {r.backend} is {fmt_ratio(r.speedup_vs_cpu)} one core: "
                       f"{fmt_int(r.moves)} moves an iteration cannot pay a kernel launch and a copy each "
                       "(docs/backends.md: gpu-resident keeps the whole search on the GPU).")
    for r in summary.itertuples():  # a run of several searches: the table's rate is its best search's
        together = getattr(r, "together", np.nan)
        if together == together and together != r.it_per_s:
            out.append(f"{r.group}, {r.instance}: {r.backend} runs several searches at once; its rate is its best "
                       f"search's, all of them together {fmt_num(together)} it/s (median over runs).")
    for (group, backend), ratios in one_at_a_time.items():
        out.append(f"{group}: {backend} is {fmt_num(min(ratios))}-{fmt_ratio(max(ratios))} one core on {len(ratios)} "
                   "instance(s): a run evaluates one permutation at a time on one block of one SM (the makespan's "
                   "cells in their dependency order: by one thread, or by p threads over the anti-diagonals behind a "
                   "barrier), so the rest of the GPU stays idle.")
    return out


def earlier_plan_notes(group, earlier):
    """A note a cell whose records an earlier plan made (plan_left.left's `earlier`): how many, and
    the first field they ran otherwise, so that its row is not read as the config's."""
    out = []
    for (name, instance, backend), differences in earlier.items():
        if name == group:
            field, had, want = differences[0]
            out.append(f"{name}, {instance}: {len(differences)} of {backend}'s records are of an earlier plan "
                       f"({field} {had!r}, the config asks {want!r}); --drop-replanned runs them again.")
    return out


def group_rows(group, summary, gpu):
    """Our table: every planned backend, a reason where none ran."""
    rows = []
    s = summary[summary["group"] == group["name"]]
    for inst in group["instances"]:
        for b in map(backend_entry, group["backends"]):
            row = s[(s["instance"] == str(inst)) & (s["backend"] == b["name"])]
            if row.empty:
                why = gpu["name"] if b["backend"] in GPU_BACKENDS and not gpu["available"] else "not run"
                rows.append({"instance": inst, "backend": b["name"], "missing": why})
                continue
            r = row.iloc[0]
            early = f" (after {fmt_int(r.sampled)} it.)" if r.sampled else ""  # a sampled run's best is no final one
            rows.append({"instance": inst, "backend": b["name"], "runs": int(r.runs),
                         "wall": timed(r.wall_s, r.sampled),
                         "spread": f"{fmt_num(r.wall_min)}-{fmt_num(r.wall_max)}", "rate": fmt_num(r.it_per_s),
                         "speedup": fmt_speedup(r),
                         "best": (fmt_int(r.best) if float(r.best).is_integer() else fmt_num(r.best, 6)) + early,
                         "gap": fmt_gap(r.gap) + (early if fmt_gap(r.gap) else ""), "at_bks": "" if pd.isna(r.bks) else f"{r.at_bks_percent:.0f}"})
    return rows


def gap_rows(group, summary):
    """Gap to the best known value per instance and backend: median over seeds (best seed)."""
    s = summary[(summary["group"] == group["name"]) & summary["bks"].notna()]
    backends = list(dict.fromkeys(s["backend"]))
    rows = []
    for inst in map(str, group["instances"]):
        cells = s[s["instance"] == inst].set_index("backend")
        if cells.empty:
            continue
        rows.append({"instance": inst, "bks": fmt_int(cells["bks"].iloc[0]),
                     "gaps": [f"{fmt_gap(cells.loc[b, 'gap'])} ({fmt_gap(cells.loc[b, 'gap_min'])})"
                              + (f" after {fmt_int(cells.loc[b, 'sampled'])} it." if cells.loc[b, "sampled"] else "")
                              if b in cells.index else "" for b in backends]})
    return backends, rows


def target_of(group, instance):
    """The group's target for an instance as a number: a number, or bks / bks+P% resolved as
    `lsbench run --target` resolves it; else the best known value; None if there is neither."""
    from lsbench import instances
    from lsbench.errors import LsbenchError
    from lsbench.spec import target_value
    target = group.get("target")
    try:
        if target is not None:
            return float(target_value(target, instance, group["problem"], group.get("params") or {}))
        entry = instances.manifest().get(instance)
        return None if entry is None or entry.bks_value() is None else float(entry.bks_value())
    except LsbenchError:
        return None


def best_so_far(runs):
    """Each run's (seconds, objective) at each improvement of its best: a multistart's over all its
    searches (run_trajectory, from its first timed start), else its record's trajectory."""
    whole = runs["run_trajectory"] if "run_trajectory" in runs else [None] * len(runs)
    return [json.loads(w) if isinstance(w, str) else [(p[1], p[2]) for p in json.loads(t)]
            for t, w in zip(runs["trajectory"], whole)]


def first_time_at(progress, target):
    """The wall time of a run's first improvement at or under the target (best_so_far), or None."""
    return next((seconds for seconds, obj in progress if obj <= target), None)


def median_time_to_target(times, walls):
    """The median over every run of its time to the target, a run that never reached it counted as
    never (the time-to-target ECDF's half-way point): a time, or "> W" once half the runs or more
    did not reach it, W the longest of those runs' times (none of them reached it in W)."""
    never = [w for t, w in zip(times, walls) if t is None]
    ordered = sorted([t for t in times if t is not None]) + [math.inf] * len(never)
    n = len(ordered)
    middle = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return fmt_num(float(middle)) if middle < math.inf else f"> {fmt_num(max(never))}"


def time_to_target_rows(group, df):
    """Per instance and backend: runs that reached the target, median time to it over every run,
    median final gap -- the time-to-target table (Tsutsui's and the iterated tabu's question)."""
    sub = df[df["group"] == group["name"]]
    rows = []
    for inst in map(str, group["instances"]):
        target = target_of(group, inst)
        if target is None:
            continue
        for backend, runs in sub[sub["instance"] == inst].groupby("backend", sort=False):
            times = [first_time_at(progress, target) for progress in best_so_far(runs)]
            gaps = pd.to_numeric(runs["gap_percent"], errors="coerce").dropna()
            rows.append({"instance": inst, "target": fmt_int(target), "backend": backend,
                         "reached": f"{sum(t is not None for t in times)}/{len(runs)}",
                         "median_s": median_time_to_target(times, list(runs["wall_s"])),
                         "gap": fmt_gap(float(gaps.median())) if len(gaps) else ""})
    return rows


def published_table(group):
    """The paper's rows for this group (workflows/published/*.csv, table filter applied)."""
    spec = group.get("published")
    if not spec:
        return None
    pub = pd.read_csv(ROOT / spec["file"], dtype={"table": str})
    return pub[pub["table"] == str(spec["table"])] if "table" in spec else pub


def paper_profile(group):
    """The paper's time split for (instance, backend) (the `published.profile` entry: the columns of
    the evaluation, archiving and rest shares, the rows it keeps, e.g. one variant, and the backend
    of ours that ran as the paper's did), or None."""
    spec = (group.get("published") or {}).get("profile")
    pub = published_table(group)
    if not spec or pub is None:
        return None
    for column, value in (spec.get("where") or {}).items():
        pub = pub[pub[column].astype(str) == str(value)]

    def shares(instance, backend):
        row = pub[pub["instance"].astype(str) == instance]
        return None if row.empty or backend != spec["backend"] else [f"{float(row[spec[k]].iloc[0]):.1f}" for k in ("evaluation", "archiving", "rest")]
    return shares


def compare_rows(group, summary):
    """Ours beside the paper's, column by column: our base time (one core, or the backend the
    compare entry names as `base`), our fastest GPU path (or fastest backend) and speed-up, then the
    paper's CPU time, GPU time, speed-up and hardware; `span`: the paper's rows an instance's first
    row covers with our cells (0 on the others)."""
    spec = (group.get("published") or {}).get("compare")
    pub = published_table(group)
    if not spec or pub is None:
        return []
    base = spec.get("base", "cpu")
    s = summary[summary["group"] == group["name"]]
    rows = []
    for inst in group["instances"]:
        ours = s[s["instance"] == str(inst)]
        cpu = ours[ours["backend"] == base]["wall_s"]
        cpu_sampled = ours[ours["backend"] == base]["sampled"]
        others = ours[ours["backend"] != base]
        gpus = others[others["kind"].isin(GPU_BACKENDS)]
        fastest = (gpus if not gpus.empty else others).sort_values("wall_s").head(1)
        match = _paper_rows(spec, pub, str(inst))
        # a Pareto search's front is the same on every backend, over full runs: a sampled run stopped early
        full = ours[ours["sampled"] == 0]
        front = full["front_size"].dropna()
        for k, paper in enumerate(match or [{}]):  # our cells once an instance, over its paper rows
            rows.append({"instance": inst, "span": 0 if k else len(match or [{}]),
                         "front": fmt_num(front.median()) if len(front) else "",
                         "largest_archive": fmt_num(full["largest_archive"].median()) if len(front) else "",
                         "restarts": fmt_num(full["restarts_done"].median()) if len(front) else "",
                         "cpu": timed(cpu.iloc[0], cpu_sampled.iloc[0]) if len(cpu) else "",
                         "fastest": "" if fastest.empty else f"{fmt_num(fastest['wall_s'].iloc[0])} "
                                                             f"({fastest['backend'].iloc[0]})",
                         "speedup": "" if fastest.empty or not len(cpu) else
                         fmt_ratio(cpu.iloc[0] / fastest["wall_s"].iloc[0]), **paper})
    return rows


def _paper_rows(spec, pub, instance):
    """The paper's rows for one of our instances, as {paper_cpu, paper_gpu, paper_speedup, hardware}."""
    if spec.get("match", "instance") == "instance":
        sub = pub[pub["instance"].astype(str) == instance]
    else:
        m = re.fullmatch(spec["match"], instance)
        if not m:
            return []
        sub = pub
        for key, value in m.groupdict().items():
            sub = sub[sub[key].astype(str) == value]
    if sub.empty:
        return []
    if "long" in spec:  # one row per hardware (Janiak): CPU and GPU rows side by side
        long = spec["long"]
        by = {str(r[long["by"]]): r for _, r in sub.iterrows()}
        cpu, gpu = by.get(long["cpu"]), by.get(long["gpu"])
        cpu_s = None if cpu is None else float(cpu[long["value"]])
        gpu_s = None if gpu is None else float(gpu[long["value"]])
        return [{"paper_cpu": fmt_num(cpu_s), "paper_gpu": fmt_num(gpu_s),
                 "paper_speedup": fmt_ratio(cpu_s / gpu_s) if cpu_s and gpu_s else "",
                 "hardware": f"{long['cpu']} / {long['gpu']}"}]
    rows = []
    for _, r in sub.iterrows():
        cpu_s = float(r[spec["cpu_s"]]) if spec.get("cpu_s") and pd.notna(r[spec["cpu_s"]]) else None
        gpu_s = float(r[spec["gpu_s"]]) if spec.get("gpu_s") and pd.notna(r[spec["gpu_s"]]) else None
        speedup = float(r[spec["speedup"]]) if spec.get("speedup") else (cpu_s / gpu_s if cpu_s and gpu_s else None)
        hw = r[spec["hardware"]] if spec.get("hardware") in r else spec.get("hardware", "")
        if spec.get("variant"):
            hw = f"{hw}, {r[spec['variant']]}"
        front = r[spec["front"]] if spec.get("front") and pd.notna(r[spec["front"]]) else None
        rows.append({"paper_cpu": fmt_num(cpu_s), "paper_gpu": fmt_num(gpu_s), "paper_speedup": fmt_ratio(speedup),
                     "hardware": hw, "paper_front": fmt_num(front)})
    return rows


# -- plots -------------------------------------------------------------------------------------------
def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _finish(plt, fig, ax, path):
    """Legend where there are lines, then the PNG. Fixed margins that fit the labels of a 5.2 x 3.2
    inch plot: tight_layout drew every figure twice (half of a report's time)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    fig.subplots_adjust(left=0.14, right=0.97, bottom=0.15, top=0.9)
    save_png(fig, path)
    plt.close(fig)



def best_over_time(runs):
    """(60 times on a log grid, each run's best at those times) up to the longest run's end: the
    time it ran, not a sampled run's extrapolated time (it did not go on)."""
    curves = [np.array(progress, dtype=float) for progress in best_so_far(runs)]
    ends = [max(c[-1, 0], w) for c, w in zip(curves, runs.get("run_wall_s", runs["wall_s"]))]
    grid = np.geomspace(max(1e-5, min(c[0, 0] for c in curves) or 1e-5), max(ends) or 1e-3, 60)
    values = np.array([[c[np.searchsorted(c[:, 0], t, side="right") - 1, 1] if t >= c[0, 0] else c[0, 1]
                        for t in grid] for c in curves])
    return grid, values


def convergence_plot(df, group, instance, path):
    """Best objective (gap to the best known value where there is one, on a symmetric log axis where
    the gaps span more than a decade) against wall time, log time axis, one line per backend: the
    median over seeds, the band from best to worst seed."""
    plt = _plt()
    sub = df[(df["group"] == group) & (df["instance"] == instance)]
    bks = sub["bks"].dropna()
    bks = float(bks.iloc[0]) if len(bks) else None
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    lowest, highest = np.inf, -np.inf
    for backend, runs in sub.groupby("backend", sort=False):
        grid, values = best_over_time(runs)
        if bks:
            values = 100.0 * (values - bks) / abs(bks)
        lowest, highest = min(lowest, np.nanmin(values)), max(highest, np.nanmax(values))
        ax.plot(grid, np.median(values, axis=0), label=backend)
        ax.fill_between(grid, values.min(axis=0), values.max(axis=0), alpha=0.2)
    ax.set_xscale("log")
    if bks and highest > 10 * max(lowest, 0.01):  # gaps over decades: a decade a step, so 0.2 % and 0.3 % stand apart
        ax.set_yscale("symlog", linthresh=0.01)
        if lowest >= 0.0:  # (no run below the best known: no negative half; the decade under the lowest gap, or 0)
            ax.set_ylim(bottom=0.0 if lowest < 0.01 else 10.0 ** np.floor(np.log10(lowest)))
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel("gap to best known (%)" if bks else "best objective")
    ax.set_title(f"{instance}: convergence", fontsize=9)
    _finish(plt, fig, ax, path)


def ecdf_lines(runs, target):
    """{backend: (times, fractions)}: the fraction of its runs at the target by each time (a run
    that never reached it stays out of the numerator), every line from 0 at the first hit of any
    backend to the longest run's end, so that a backend that reached it late or never is seen to."""
    hits = {backend: sorted(max(t, 1e-6) for t in (first_time_at(p, target) for p in best_so_far(own))
                            if t is not None) for backend, own in runs.groupby("backend", sort=False)}
    found = [t for times in hits.values() for t in times]
    left = min(found) if found else max(float(runs["wall_s"].min()) / 10, 1e-6)
    right = max(found + [float(runs["wall_s"].max())])
    lines = {}
    for backend, times in hits.items():
        reached = list(np.arange(len(times) + 1) / int((runs["backend"] == backend).sum()))
        lines[backend] = ([left, *times, right], [*reached, reached[-1]])
    return lines


def ecdf_plot(df, group, instance, target, path):
    """ecdf_lines as steps, on a log time axis."""
    plt = _plt()
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    sub = df[(df["group"] == group) & (df["instance"] == instance)]
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    lines = ecdf_lines(sub, target)
    for backend, (times, fractions) in lines.items():
        ax.step(times, fractions, where="post", label=backend)
    ax.set_xscale("log")
    # plain seconds, at 1-2-5 steps over two decades or less (there every minor tick was labelled, overlapping)
    span = max(times[-1] for times, _ in lines.values()) / min(times[0] for times, _ in lines.values())
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if span <= 100 else (1.0,)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_num(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel("runs at target")
    ax.set_title(f"{instance}: time to {fmt_num(target, 9)}", fontsize=9)
    _finish(plt, fig, ax, path)


def gap_plot(df, group, instance, path):
    """Each run's final gap to the best known value, one column of points per backend, its median
    marked: the distribution behind the gap table's median."""
    plt = _plt()
    sub = df[(df["group"] == group) & (df["instance"] == instance)]
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    names = []
    for k, (backend, runs) in enumerate(sub.groupby("backend", sort=False)):
        gaps = pd.to_numeric(runs["gap_percent"], errors="coerce").dropna().to_numpy()
        sampled = int(runs["sampled"].max()) if "sampled" in runs else 0  # (stopped early: not a final gap)
        names.append(f"{backend}\n(after {sampled:,} it.)" if sampled else backend)
        ax.plot(np.full(len(gaps), k), gaps, "o", alpha=0.6)
        if len(gaps):
            ax.plot([k - 0.25, k + 0.25], [np.median(gaps)] * 2, color="black", lw=1.5)
    ax.set_xticks(range(len(names)), names, fontsize=7)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel("final gap to best known (%)")
    ax.set_title(f"{instance}: final gap of each run (bar: median)", fontsize=9)
    _finish(plt, fig, ax, path)


def speedup_plot(summary, group, path):
    """Speed-up against one core against the neighbourhood's size, one line per backend."""
    plt = _plt()
    s = summary[(summary["group"] == group) & (summary["backend"] != "cpu")].dropna(subset=["speedup_vs_cpu"])
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    for backend, sub in s.groupby("backend", sort=False):
        sub = sub.sort_values("moves")
        ax.plot(sub["moves"], sub["speedup_vs_cpu"], marker="o", label=backend)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("moves per iteration")
    ax.set_ylabel("speed-up against one core")
    ax.set_title(f"{group}: speed-up against size", fontsize=9)
    _finish(plt, fig, ax, path)


# -- the page ----------------------------------------------------------------------------------------
def write_report(table, out, config, gpu):
    """Render the report of `config` from the Parquet `table` into `out` (HTML), its plots in
    `<out stem>_files/` beside it; both written to temp names first, then renamed."""
    import jinja2
    df = pd.read_parquet(table)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=jinja2.select_autoescape())
    out = Path(out)
    if df.empty:  # e.g. only GPU rows, on a host without a GPU: the page says so
        page = env.get_template("report.html.j2").render(
            title=config.get("title", config["experiment"]), hardware=[], gpu=gpu, groups=[], escape=html.escape,
            headlines=[f"No run records: nothing in this experiment ran here (GPU: {gpu['name']})."],
            provenance=provenance(df, config, gpu))
        return _write_page(out, page)
    df = extrapolate_samples(df, config)
    summary = summarise(df)
    files = out.parent / f"{out.stem}_files"
    files.mkdir(parents=True, exist_ok=True)
    groups = []
    indicator_table = pareto_report.indicator_table(df, files) if "front" in df and df["front"].notna().any() else []
    for g in config.get("groups", []):
        g = expand_group(g, config.get("scale", "paper"))
        ran = set(df.loc[df["group"] == g["name"], "instance"])
        plots = []
        for inst in [i for i in map(str, g["instances"]) if i in ran]:
            name = f"{g['name']}-{inst}-convergence.png"
            convergence_plot(df, g["name"], inst, files / name)
            plots.append((name, f"{inst}: best objective against wall time, median and range over seeds"))
            target = target_of(g, inst)
            if target is not None:
                name = f"{g['name']}-{inst}-ecdf.png"
                ecdf_plot(df, g["name"], inst, target, files / name)
                plots.append((name, f"{inst}: fraction of runs at {'the target' if g.get('target') else 'the best known value'} "
                                    "against wall time"))
                name = f"{g['name']}-{inst}-gaps.png"
                gap_plot(df, g["name"], inst, files / name)
                plots.append((name, f"{inst}: each run's final gap to the best known value, by backend"))
        for inst in [i for i in map(str, g["instances"]) if i in ran] if g["algorithm"] == "pls" else []:
            plots += pareto_report.plots(df, g["name"], inst, files, _plt())
        if ran and summary[(summary["group"] == g["name"]) & (summary["backend"] != "cpu")]["speedup_vs_cpu"].notna().any():
            name = f"{g['name']}-speedup.png"
            speedup_plot(summary, g["name"], files / name)
            plots.append((name, "speed-up against one core, by neighbourhood size"))
        pub = published_table(g)
        compare = (g.get("published") or {}).get("compare") or {}
        groups.append({"name": g["name"], "algorithm": g["algorithm"], "problem": g["problem"],
                       "rows": group_rows(g, summary, gpu), "compare": compare_rows(g, summary),
                       "front": "front" in compare,
                       "paper_columns": compare.get("columns", ["paper CPU (s)", "paper GPU (s)"]),  # (Bożejko's: 1 GPU thread, p)
                       "base": compare.get("base", "cpu"),
                       "gaps": gap_rows(g, summary),
                       "time_to_target": time_to_target_rows(g, df) if g.get("target") is not None else [],
                       "published": None if pub is None else  # (a table's empty columns left out)
                       pub.dropna(axis=1, how="all").to_html(index=False, na_rep="", border=0),
                       "caption": (g.get("published") or {}).get("caption", ""),
                       "plots": [(f"{files.name}/{n}", c) for n, c in plots],
                       "indicators": pareto_report.indicator_rows(indicator_table, g["name"]) if len(indicator_table) else [],
                       "profile": pareto_report.profile_rows(df, g["name"], paper_profile(g))
                       if "pareto_time_split" in df else [],
                       "files": files.name,
                       "notes": notes(summary[summary["group"] == g["name"]], g["algorithm"])
                       + earlier_plan_notes(g["name"], (config.get("planned") or {}).get("earlier", {}))})
    page = env.get_template("report.html.j2").render(
        title=config.get("title", config["experiment"]), headlines=headlines(summary, df),
        hardware=hardware(df, gpu), gpu=gpu, groups=groups, escape=html.escape,
        provenance=provenance(df, config, gpu))
    return _write_page(out, page)


def _write_page(out, page):
    tmp = out.with_suffix(".tmp")
    tmp.write_text(page)
    tmp.replace(out)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("table")
    ap.add_argument("out")
    ap.add_argument("--gpu", help="the GPU the records were made on (default: the table's devices)")
    args = ap.parse_args()
    config = yaml.safe_load(open(args.config))
    devices = sorted(set(pd.read_parquet(args.table)["device"].dropna()))
    name = args.gpu or ", ".join(devices) or "no GPU on this host"
    write_report(args.table, args.out, config, {"available": bool(devices or args.gpu), "name": name})
    print(f"-> {args.out}")


if __name__ == "__main__":
    sys.exit(main())
