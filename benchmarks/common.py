"""Benchmark plumbing: machine description, medians of repeats, JSON output."""
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
if "LSBENCH_SOURCE_LOG" not in os.environ:  # lsbench processes this benchmark starts list the modules they ran
    os.environ["LSBENCH_SOURCE_LOG"] = str(Path(tempfile.mkdtemp(prefix="lsbench-sources-")) / "loaded.txt")

from lsbench import loaded_source_files  # noqa: E402
from lsbench.files import write_atomic  # noqa: E402
from lsbench.provenance import host_info, versions  # noqa: E402


def multiprocessors():
    """The current device's SMs (the simulator's device has no count: it runs blocks one after another)."""
    from numba import cuda
    return int(getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1))


def gpu_info():
    try:
        from numba import cuda
        if not cuda.is_available():
            return None
        dev = cuda.get_current_device()
        return {"name": dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name),
                "compute_capability": list(dev.compute_capability), "multiprocessors": multiprocessors()}
    except Exception as e:  # no driver, no toolkit: the benchmark says so instead of failing
        return {"unavailable": str(e).splitlines()[0]}


def run_main(main):
    """Runs a benchmark's main: bad input (lsbench's own errors: an unknown parameter, no GPU, a
    missing instance) ends in one line and exit 2, as the CLI's do, not a traceback."""
    from lsbench.errors import LsbenchError
    try:
        return main()
    except LsbenchError as e:
        print(f"{Path(sys.argv[0]).name}: error: {e}", file=sys.stderr)
        return 2


def median_of(fn, repeats):
    values = []
    for _ in range(repeats):
        values.append(fn())
    return statistics.median(values), values


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def source_files_run():
    """This process's lsbench modules and those its lsbench child processes logged (MPI ranks,
    `lsbench run` subprocesses), sorted."""
    log = Path(os.environ["LSBENCH_SOURCE_LOG"])
    children = set(log.read_text().split()) if log.exists() else set()
    return sorted(loaded_source_files() | children)


def write_result(name, payload, out_dir=None, gpu_tag=None):
    """`<benchmark>-<gpu>-<commit>.json` (docs/performance.md's rule): the commit recorded is
    $LSBENCH_COMMIT where the tree is a copy whose git metadata may lag, else git's HEAD.
    `gpu_tag`: the GPU that was measured, where the file is written on another host."""
    out_dir = Path(out_dir or os.environ.get("OUT") or Path(__file__).parent / "results")
    gpu = gpu_info()
    record = {"benchmark": name, "command": " ".join([sys.executable] + sys.argv),
              "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host": host_info(), "versions": versions(),
              "gpu": gpu, "python_implementation": platform.python_implementation(),
              "source_files": source_files_run(), **payload,
              "device_gpu": gpu}  # (a payload's own "gpu", its GPU rows, replaces the one above)
    gpu_tag = gpu_tag or ((gpu or {}).get("name", "cpu").lower().replace("nvidia", "").strip().split()[0]
                          if gpu and "name" in gpu else "cpu")
    # the file name in letters, digits, '.', '_' and '-' alone (a '+' kept a device run's files from coming back)
    commit = re.sub(r"[^A-Za-z0-9._-]", "-", str(record["versions"].get("lsbench_commit", "unknown")))
    path = out_dir / f"{name}-{gpu_tag}-{commit}.json"
    for k in range(2, 100):  # a second run of the same commit keeps the first
        if not path.exists():
            break
        path = out_dir / f"{name}-{gpu_tag}-{commit}-{k}.json"
    write_atomic(path, record)
    return path


@contextmanager
def report_searches(report, group, backends):
    """{backend: the searches folders of its every run in `group`} of a report's records archive
    (reports/NAME/records.tgz), unpacked once into a temporary folder that lasts the with-block."""
    from lsbench.errors import LsbenchError
    archive = Path(report) / "records.tgz"
    if not archive.is_file():
        raise LsbenchError(f"{archive}: no records archive")
    if not group or not backends or not all(backends):
        raise LsbenchError(f"{report}: a report's runs need --group and --backend")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "workflows" / "scripts"))
    from records_archive import extract
    with tempfile.TemporaryDirectory() as tmp:
        extract(archive, tmp)
        found = {backend: sorted((Path(tmp) / "runs" / group).glob(f"*/{backend}-s*-searches")) for backend in backends}
        for backend, runs in found.items():
            if not runs:
                raise LsbenchError(f"{archive}: no runs of {backend} in group {group} with their searches")
        yield found
