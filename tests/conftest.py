import os
import subprocess
import sys
import tempfile
from pathlib import Path

# GPU kernels are tested in Numba's CUDA simulator (CI has no GPU); it must be chosen before numba
# is imported. LSBENCH_TEST_REAL_GPU=1 runs the same tests on a real device instead.
if os.environ.get("LSBENCH_TEST_REAL_GPU") != "1":
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import simulator_safety  # noqa: F401  (before numba is imported)

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The tests run on the data directory the documented command produces (`lsbench instances fetch`),
# with the real files beside the checkout as a faster mirror of the public sources.
MIRROR = Path(os.environ.get("LSBENCH_TEST_DATA", ROOT.parent / "shared" / "instances"))
SHARED = Path(tempfile.gettempdir()) / f"lsbench-test-data-{os.getuid()}"


def _fetch_everything():
    """Every manifest instance and reference solution into SHARED (checked files are kept)."""
    if not (MIRROR / "qaplib").is_dir():
        return f"real instance files not found at {MIRROR}; set LSBENCH_TEST_DATA"
    r = subprocess.run([sys.executable, "-m", "lsbench", "instances", "fetch", "--mirror", str(MIRROR), "--data-dir",
                        str(SHARED)], capture_output=True, text=True, cwd=ROOT, timeout=900)
    return None if r.returncode == 0 else f"lsbench instances fetch --mirror {MIRROR} failed: {r.stderr[-2000:]}"


FETCH_PROBLEM = _fetch_everything()


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject's addopts): one test process per core this process may use (its CPU
    affinity and a cgroup v2 quota), at most 8; pytest-xdist would count the host's cores, which in
    a container limited by a quota are not ours."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return max(1, min(cores, 8))


def pytest_collection_modifyitems(config, items):
    """The tests marked `long` first, the others after them in their order: pytest-xdist hands the
    tests out in this order, so the longest start at once on every process and the short ones fill
    the end, rather than one long test started last keeping the suite waiting while the other
    processes sit idle."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture(scope="session")
def shared():
    """The data directory `lsbench instances fetch` made (QAPLIB, TSPLIB, Taillard, references)."""
    if FETCH_PROBLEM:
        pytest.fail(FETCH_PROBLEM)
    return SHARED


@pytest.fixture(autouse=True)
def data_dir_env(monkeypatch):
    monkeypatch.setenv("LSBENCH_DATA", str(SHARED))
