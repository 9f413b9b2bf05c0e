import os
import re
import sys
from pathlib import Path


def _device_tier():
    """`pytest -m device` (the real-GPU tier) was asked for on the command line."""
    marks = [a for i, a in enumerate(sys.argv[1:], 1) if sys.argv[i - 1] == "-m"]
    marks += [a[2:] for a in sys.argv if a.startswith("-m") and len(a) > 2]
    return any("device" in m and "not device" not in m for m in marks)


# GPU kernels are tested in Numba's CUDA simulator (CI has no GPU); it must be chosen before numba
# is imported. The device tier, or LSBENCH_TEST_REAL_GPU=1, runs them on a real device instead.
REAL_GPU = os.environ.get("LSBENCH_TEST_REAL_GPU") == "1" or _device_tier()
if REAL_GPU:
    os.environ["LSBENCH_TEST_REAL_GPU"] = "1"  # the tests' own checks read it
else:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import simulator_safety  # noqa: F401  (before numba is imported)

import pytest


def _user_data_dir():
    import platformdirs
    return Path(platformdirs.user_data_dir("lsbench")) / "instances"


ROOT = Path(__file__).resolve().parent.parent
# The data directory the tests read instances from: $LSBENCH_TEST_DATA (e.g. a mirror laid out like
# it, as .ci/run passes), else the user's data folder that `lsbench instances fetch` fills.
DATA = Path(os.environ.get("LSBENCH_TEST_DATA") or _user_data_dir())
# The manifest instances the tests name; fetched on demand where missing and a network is there.
TEST_INSTANCES = ("tai12a", "tai25a", "tai25b", "tai30a", "tai40a", "tai80a", "tai100a", "tai100b", "tai150b",
                  "tai256c", "nug12", "nug20", "eil51", "burma14", "bays29", "berlin52", "kroA100", "eil101",
                  "pcb442", "gr96", "fri26", "ulysses16", "pr2392", "020_10_01")
MISSING_INSTANCE = re.compile(r"instance (\S+): (\S+) not found in the data directory")


def _fetch_missing_instances():
    """Fetch the tests' instances that the data directory lacks, once, in the controlling process;
    a host without a network (or with a read-only data directory) keeps what it has, and a test
    that needs a missing instance is skipped (pytest_runtest_makereport)."""
    from lsbench import instances
    missing = [n for n in TEST_INSTANCES if not instances.local_path(instances.manifest()[n], DATA).exists()]
    if not missing or not _network_reaches(instances.manifest()[missing[0]].source_url):
        return
    for name in missing:
        try:
            instances.fetch(name, data=DATA)
        except Exception as e:  # noqa: BLE001 (a failed download only means that test is skipped)
            print(f"conftest: {name} not fetched ({e})", file=sys.stderr)
            return


def _network_reaches(url, timeout=5):
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True
    except OSError:
        return False


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controller, not each pytest-xdist worker
        _fetch_missing_instances()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that failed only because an instance file is not in the data directory is skipped,
    with one line saying which and how to get it."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None:
        found = MISSING_INSTANCE.search(str(call.excinfo.value)) or MISSING_INSTANCE.search(report.longreprtext)
        if found and not Path(found.group(2)).exists():
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0,
                               f"Skipped: instance {found.group(1)} is not in the data directory {DATA} "
                               f"(set LSBENCH_TEST_DATA, or run `lsbench instances fetch {found.group(1)}`)")


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


@pytest.hookimpl(tryfirst=True)  # before the -m selection reads the markers
def pytest_collection_modifyitems(config, items):
    """A test marked `long` belongs to the system tier (the fast tier stays within minutes), and
    runs first: pytest-xdist hands the tests out in this order, so the longest start at once on
    every process and the short ones fill the end."""
    for item in items:
        if item.get_closest_marker("long"):
            item.add_marker(pytest.mark.system)
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def need_instances(*names):
    """Skip the calling test unless every named manifest instance (and its reference solution where
    the manifest has one) is in the data directory."""
    from lsbench import instances
    for name in names:
        entry = instances.manifest()[name]
        paths = [instances.local_path(entry, DATA)] + ([instances.reference_path(entry, DATA)] if entry.reference_url else [])
        for path in paths:
            if not path.exists():
                pytest.skip(f"instance {name}: {path} is not in the data directory (set LSBENCH_TEST_DATA)")


@pytest.fixture(autouse=True)
def real_gpu_for_device_tests(request):
    if request.node.get_closest_marker("device"):
        from numba import cuda
        if not REAL_GPU or not cuda.is_available():
            pytest.skip("needs a real GPU (pytest -m device on a host with one)")


@pytest.fixture
def data():
    """The data directory with every file of the manifest in it (the tests that check them all)."""
    from lsbench import instances
    absent = [e.name for e in instances.entries() if not instances.local_path(e, DATA).exists()]
    if absent:
        pytest.skip(f"{len(absent)} manifest instances (e.g. {absent[0]}) are not in the data directory {DATA} "
                    "(set LSBENCH_TEST_DATA to a full mirror)")
    return DATA


@pytest.fixture(autouse=True)
def data_dir_env(monkeypatch):
    monkeypatch.setenv("LSBENCH_DATA", str(DATA))
