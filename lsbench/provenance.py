"""Where and with what a result was made: the host and the versions (with the commit) that every
run record and benchmark result carries."""
import os
import platform
import subprocess
from pathlib import Path

import numpy as np

from . import __version__


def host_info():
    info = {"hostname": platform.node(), "machine": platform.machine(), "system": platform.system(),
            "processor": _cpu_model() or platform.processor(), "cpu_count": usable_cores()}
    return info


def usable_cores():
    """The cores this process may run on (a run pinned with taskset to 16 of 32 cores had 16)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


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
