"""Quality indicators of Pareto fronts, computed by moocore (not by hand).

An experiment's reference front for an instance is the non-dominated union of every run's front
(written as a CSV file beside the report). Objectives are normalised by that reference front:
its ideal point maps to 0 and its nadir point to 1 in each objective (an objective the reference
front does not spread maps by a range of 1). Then, per run:
- hypervolume of the normalised front, reference point 1.1 in every objective unless one is
  given (in raw objective values; it must bound every point of every front, else one error line);
- additive epsilon and IGD+ of the normalised front against the normalised reference front.
"""
from pathlib import Path

import numpy as np

from .errors import LsbenchError
from .files import write_text_atomic
from .record import Record

REFERENCE_POINT = 1.1  # in normalised objectives


def _moocore():
    try:
        import moocore
    except ImportError:
        raise LsbenchError("quality indicators need moocore (pip install -e '.[workflow]')") from None
    return moocore


def front_of(record):
    """A record's front as an int64 array (one row per point), or a clear error."""
    if "front" not in record:
        raise LsbenchError(f"record of {record.get('instance')} seed {record.get('seed')} has no Pareto front "
                           "(run --algorithm pls)")
    return np.array([p["objectives"] for p in record["front"]], dtype=np.int64)


def reference_front(fronts):
    """The non-dominated union of the fronts, each vector once, sorted."""
    points = np.unique(np.concatenate(fronts), axis=0)
    return points[_moocore().is_nondominated(points)]


def bounds(reference):
    """(ideal, nadir) of the reference front; nadir - ideal is at least 1 in every objective."""
    ideal = reference.min(axis=0).astype(float)
    nadir = reference.max(axis=0).astype(float)
    return ideal, np.maximum(nadir, ideal + 1)


def normalise(points, ideal, nadir):
    return (np.asarray(points, dtype=float) - ideal) / (nadir - ideal)


def reference_point(ideal, nadir, raw=None, fronts=()):
    """The hypervolume's reference point in normalised objectives, checked to bound every front."""
    if raw is None:
        return np.full(ideal.shape[0], REFERENCE_POINT)
    raw = np.asarray(raw, dtype=float)
    if raw.shape != ideal.shape or not np.isfinite(raw).all():
        raise LsbenchError(f"--reference-point: need {ideal.shape[0]} finite values, got {raw.tolist()}")
    for front in fronts:
        beyond = front[(front >= raw).any(axis=1)]
        if len(beyond):
            raise LsbenchError(f"--reference-point {raw.tolist()} does not bound the front: point "
                               f"{beyond[0].tolist()} is not below it in every objective")
    return normalise(raw, ideal, nadir)


def indicators(front, reference, ideal, nadir, ref_point):
    """Hypervolume, additive epsilon and IGD+ of one front (raw objective values)."""
    moocore = _moocore()
    f, r = normalise(front, ideal, nadir), normalise(reference, ideal, nadir)
    return {"hypervolume": float(moocore.hypervolume(f, ref=ref_point)),
            "epsilon_additive": float(moocore.epsilon_additive(f, ref=r)),
            "igd_plus": float(moocore.igd_plus(f, ref=r))}


def score_fronts(fronts, raw_point=None):
    """The fronts of one instance against their reference front (the non-dominated union):
    returns (reference front, ideal, nadir, reference point in objective values, [indicators])."""
    ref = reference_front(fronts)
    ideal, nadir = bounds(ref)
    point = reference_point(ideal, nadir, raw_point, fronts)
    values = [indicators(front, ref, ideal, nadir, point) for front in fronts]
    return ref, ideal, nadir, ideal + point * (nadir - ideal), values


def evaluate_records(paths, reference_file=None, raw_point=None):
    """Indicators of every record's front, grouped by instance; writes each instance's reference
    front (`reference_file` formats the path with {instance}). Returns a list of rows."""
    by_instance = {}
    for path in paths:
        rec = Record.read(path)
        by_instance.setdefault(rec["instance"], []).append((path, rec, front_of(rec)))
    rows = []
    for instance, runs in sorted(by_instance.items()):
        ref, ideal, nadir, point, values = score_fronts([f for _p, _r, f in runs], raw_point)
        if reference_file:
            write_front_csv(Path(str(reference_file).format(instance=instance)), ref, runs[0][1]["objective_names"])
        for (path, rec, front), value in zip(runs, values):
            rows.append({"record": str(path), "instance": instance, "algorithm": rec["algorithm"],
                         "backend": rec["backend"], "seed": rec["seed"], "accept": rec["params"].get("accept"),
                         "front_size": len(front), "ideal": ideal.tolist(), "nadir": nadir.tolist(),
                         "reference_point": point.tolist(), **value})
    return rows


def write_front_csv(path, points, names):
    lines = [",".join(names)] + [",".join(str(int(v)) for v in p) for p in points]
    write_text_atomic(path, "\n".join(lines) + "\n")
