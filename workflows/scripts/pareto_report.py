"""The Pareto part of a report (PLS groups): reference fronts, quality indicators, time profile and
plots. Indicators come from lsbench.indicators (moocore); each instance's reference front is the
non-dominated union of every PLS run of the experiment on it, written beside the report as
`reference-front-<instance>.csv`, and every run's values go to `indicators.csv`, so anyone can
recompute them with moocore from the written files."""
import json
from pathlib import Path

import numpy as np
import pandas as pd

from lsbench.indicators import score_fronts, write_front_csv
from lsbench.files import write_text_atomic
from png import save_png

OBJECTIVES = ("makespan", "tardiness", "late_jobs")


def fronts_of(runs):
    return [np.array(json.loads(f), dtype=np.int64) for f in runs["front"]]


def full_fronts(df):
    """The runs with a front that ran their group's iterations: a sampled run's front (report.py:
    extrapolate_samples) is where it stopped, not a search's answer."""
    full = df[df["sampled"] == 0] if "sampled" in df else df
    return full[full["front"].notna()]


def indicator_table(df, files):
    """Per-run indicators of every full PLS run (one reference front per instance, over all groups),
    written to files/indicators.csv; returns the table."""
    pareto = full_fronts(df)
    rows = []
    for inst, runs in pareto.groupby("instance", sort=False):
        fronts = fronts_of(runs)
        ref, ideal, nadir, _point, values = score_fronts(fronts)
        write_front_csv(files / f"reference-front-{inst}.csv", ref, OBJECTIVES)
        for (_, run), front, value in zip(runs.iterrows(), fronts, values):
            rows.append({"group": run["group"], "instance": inst, "backend": run["backend"], "seed": run["seed"],
                         # the record within the runs folder (group/instance/file): the same wherever it was read
                         "front_size": len(front), "record": "/".join(Path(run["record"]).parts[-3:]), **value,
                         "ideal": json.dumps(ideal.tolist()), "nadir": json.dumps(nadir.tolist())})
    table = pd.DataFrame(rows)
    if len(table):
        write_text_atomic(files / "indicators.csv", table.to_csv(index=False))
    return table


def indicator_rows(table, group):
    """Median over seeds per (instance, backend)."""
    t = table[table["group"] == group] if len(table) else table
    rows = []
    for (inst, backend), sub in (t.groupby(["instance", "backend"], sort=False) if len(t) else []):
        rows.append({"instance": inst, "backend": backend, "runs": len(sub),
                     "front": f"{sub['front_size'].median():.0f}",
                     "hv": f"{sub['hypervolume'].median():.4f}", "eps": f"{sub['epsilon_additive'].median():.4f}",
                     "igd": f"{sub['igd_plus'].median():.4f}"})
    return rows


def profile_rows(df, group, paper=None):
    """Table 5's split: evaluation, archiving and the rest of the search, as shares of the wall time;
    `paper(instance, backend)` gives the paper's three shares beside the row of ours that ran as
    the paper's did."""
    sub = df[(df["group"] == group) & df["pareto_time_split"].notna()]
    rows = []
    for (inst, backend), runs in sub.groupby(["instance", "backend"], sort=False):
        shares = []
        for split, wall in zip(runs["pareto_time_split"], runs.get("run_wall_s", runs["wall_s"])):  # (not extrapolated)
            s = json.loads(split)
            wall = max(wall, s["evaluation_s"] + s["archiving_s"], 1e-12)
            shares.append([s["evaluation_s"] / wall, s["archiving_s"] / wall])
        ev, ar = np.median(np.array(shares), axis=0) * 100
        rows.append({"instance": inst, "backend": backend, "evaluation": f"{ev:.1f}", "archiving": f"{ar:.1f}",
                     "rest": f"{max(0.0, 100 - ev - ar):.1f}", "paper": paper(inst, backend) if paper else None})
    return rows


def plots(df, group, instance, files, plt_module):
    """Front projections and the EAF of the seeds' fronts (full runs), archive size over iterations
    (every run); returns [(file name, caption)]."""
    import moocore
    plt = plt_module
    every = df[(df["group"] == group) & (df["instance"] == instance) & df["front"].notna()]
    runs = full_fronts(every)
    if runs.empty:
        return []
    out = []
    fronts = fronts_of(runs)
    pts = np.concatenate(fronts)
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    sc = ax.scatter(pts[:, 0], pts[:, 1], c=pts[:, 2], cmap="viridis", s=12)
    fig.colorbar(sc, ax=ax, label="late jobs")
    ax.set_xlabel("makespan")
    ax.set_ylabel("total tardiness")
    ax.set_title(f"{instance}: fronts of {len(runs)} runs (makespan vs tardiness)", fontsize=9)
    out.append(_save(plt, fig, files / f"{group}-{instance}-fronts.png",
                     f"{instance}: every run's front projected on makespan and tardiness, coloured by late jobs"))
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    for (_, run) in every.iterrows():
        steps = np.array(json.loads(run["archive_sizes"]))
        ax.step(steps[:, 0], steps[:, 1], where="post", lw=0.8, label=f"{run['backend']} s{run['seed']}")
    ax.set_xlabel("iteration")
    ax.set_ylabel("archive size")
    ax.set_title(f"{instance}: archive size", fontsize=9)
    if len(every) <= 8:
        ax.legend(fontsize=6)
    out.append(_save(plt, fig, files / f"{group}-{instance}-archive.png",
                     f"{instance}: archive size over iterations (restarts drop it to one)"))
    first = runs[runs["backend"] == runs["backend"].value_counts().idxmax()]  # the backend of most seeds: the EAF's sets
    if len(first) >= 2:
        sets, points = [], []
        for k, front in enumerate(fronts_of(first)):
            proj = np.unique(front[:, :2], axis=0).astype(float)
            proj = proj[moocore.is_nondominated(proj)]
            points.append(proj)
            sets += [k + 1] * len(proj)
        eaf = moocore.eaf(np.concatenate(points), np.array(sets))
        fig, ax = plt.subplots(figsize=(5.2, 3.2))
        for level in sorted(set(np.round(eaf[:, 2], 6))):
            surf = eaf[np.isclose(eaf[:, 2], level)]
            surf = surf[np.argsort(surf[:, 0])]
            ax.step(surf[:, 0], surf[:, 1], where="post", label=f"attained by {level:.0f}% of runs")
        ax.set_xlabel("makespan")
        ax.set_ylabel("total tardiness")
        ax.set_title(f"{instance}: empirical attainment ({len(first)} seeds, {first['backend'].iloc[0]})", fontsize=9)
        ax.legend(fontsize=6)
        out.append(_save(plt, fig, files / f"{group}-{instance}-eaf.png",
                         f"{instance}: empirical attainment surfaces (moocore.eaf) of the seeds' fronts, "
                         "makespan vs tardiness"))
    return out


def _save(plt, fig, path, caption):
    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)
    return path.name, caption
