"""Run records: one JSON per run, re-checked from scratch and written atomically."""
import hashlib
import json
import math
import os
import platform
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from . import __version__
from .errors import LsbenchError

FLOAT_RTOL = 1e-9  # float objectives: recomputation must agree to this relative tolerance
REQUIRED = ("problem", "instance", "instance_sha256", "algorithm", "backend", "seed", "params", "host",
            "versions", "iterations", "evaluations", "wall_s", "best_objective", "best_solution",
            "trajectory", "bks", "gap_percent")


def host_info():
    info = {"hostname": platform.node(), "machine": platform.machine(), "system": platform.system(),
            "processor": _cpu_model() or platform.processor(), "cpu_count": os.cpu_count()}
    return info


def _cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def versions():
    import numba
    out = {"lsbench": __version__, "python": platform.python_version(), "numpy": np.__version__,
           "numba": numba.__version__}
    if os.environ.get("LSBENCH_COMMIT"):  # a copied tree (a device run) names its commit explicitly
        out["lsbench_commit"] = os.environ["LSBENCH_COMMIT"]
        return out
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, timeout=5).stdout.strip()
        if commit:
            out["lsbench_commit"] = commit
            changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                     text=True, cwd=Path(__file__).parent, timeout=5).stdout.strip()
            out["lsbench_tree_changed"] = bool(changed)  # the code run is not exactly that commit
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def gap_percent(best, bks):
    if bks is None:
        return None
    if bks == 0:
        return 0.0 if best == 0 else None
    return round(100.0 * (best - bks) / abs(bks), 6)


def instance_digest(prob):
    """The instance's sha256, or for a generated one the digest of its generator description
    (stable, checkable)."""
    if prob.sha256:
        return prob.sha256
    return "generated:" + hashlib.sha256(repr(sorted(prob.describe().items())).encode()).hexdigest()


def recheck(problem, solution, reported):
    """Validate the solution and recompute its objective from scratch, in Python integers for
    integer problems (independent of the compiled code); return the recomputed value."""
    problem.check_solution(solution)
    value = problem.exact_objective(solution)
    if problem.integer:
        if int(value) != int(reported):
            raise LsbenchError(f"internal check failed: reported objective {reported} but the solution "
                               f"evaluates to {value}; no record written")
        return int(value)
    if not math.isclose(value, reported, rel_tol=FLOAT_RTOL, abs_tol=1e-12):
        raise LsbenchError(f"internal check failed: reported objective {reported} but the solution "
                           f"evaluates to {value}; no record written")
    return float(value)


def recheck_front(problem, front):
    """A Pareto front as written in a record: every point a valid solution whose objective vector,
    recomputed from scratch in Python integers, is the one reported; no point dominating another,
    no two equal. Returns [{"solution": [...], "objectives": [...]}]."""
    points = []
    for solution, reported in front:
        solution = problem.solution_from_list(solution)
        problem.check_solution(solution)
        vector = problem.exact_vector(solution)
        if [int(v) for v in reported] != vector:
            raise LsbenchError(f"internal check failed: a front point reported {list(reported)} but its solution "
                               f"evaluates to {vector}; no record written")
        points.append({"solution": problem.solution_to_list(solution), "objectives": vector})
    vectors = np.array([p["objectives"] for p in points], dtype=object).reshape(len(points), -1)
    for q, b in enumerate(vectors):  # one row at a time against all: O(F^2) comparisons, vectorised
        weakly = (vectors <= b).all(axis=1)
        weakly[q] = False
        if weakly.any():
            a = vectors[np.flatnonzero(weakly)[0]].tolist()
            raise LsbenchError(f"internal check failed: front point {a} {'equals' if a == b.tolist() else 'dominates'} "
                               f"{b.tolist()}; no record written")
    return points


def write_atomic(path, record):
    """A run record as JSON, never partial (write_text_atomic)."""
    write_text_atomic(path, json.dumps(record, indent=1, default=_json_default) + "\n")


def write_text_atomic(path, text):
    """Write to a temp file beside `path`, then rename: never a partial file. The file gets the
    permissions of an ordinary new file (the umask), not mkstemp's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def current_umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def reserve(path):
    """Make the record's folder and prove a file can be written there, before any search runs
    (permissions alone do not say it: root ignores them, read-only mounts do not)."""
    path = Path(path)
    try:
        if path.is_dir():
            raise IsADirectoryError(21, "is a directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise LsbenchError(f"--out {path}: cannot write there ({e.strerror}); nothing was run")


def write_or_keep(path, record):
    """write_atomic, and where that fails at the end of a run, the record goes to a fallback file
    named in the error line instead of being lost."""
    try:
        write_atomic(path, record)
    except OSError as e:
        fallback = Path(tempfile.gettempdir()) / f"lsbench-record-{os.getpid()}-{Path(path).name}"
        write_atomic(fallback, record)
        raise LsbenchError(f"--out {path}: cannot write the record ({e.strerror}); it was saved to {fallback}")


def _json_default(x):
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x)}")


def read_record(path):
    try:
        with open(path) as f:
            rec = json.load(f)
    except OSError as e:
        raise LsbenchError(f"{path}: cannot read run record ({e.strerror})")
    except json.JSONDecodeError as e:
        raise LsbenchError(f"{path}: not a JSON run record ({e.msg} at line {e.lineno})")
    missing = [k for k in REQUIRED if k not in rec]
    if missing:
        raise LsbenchError(f"{path}: run record lacks field(s) {', '.join(missing)}")
    return rec
