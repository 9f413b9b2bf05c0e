import os
import sys
from pathlib import Path

# GPU kernels are tested in Numba's CUDA simulator (CI has no GPU); it must be chosen before numba
# is imported. LSBENCH_TEST_REAL_GPU=1 runs the same tests on a real device instead.
if os.environ.get("LSBENCH_TEST_REAL_GPU") != "1":
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    # the simulator runs each GPU thread as a Python thread and a block barrier waits for all of
    # them: switching threads every 0.1 ms instead of every 5 ms makes barrier-heavy kernels ~6x faster
    sys.setswitchinterval(1e-4)

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("LSBENCH_TEST_DATA", ROOT.parent / "shared" / "instances"))


@pytest.fixture(scope="session")
def shared():
    """The real QAPLIB/TSPLIB/Taillard files beside the checkout (CI has them)."""
    if not (SHARED / "qaplib").is_dir():
        pytest.fail(f"real instance files not found at {SHARED}; set LSBENCH_TEST_DATA")
    return SHARED


@pytest.fixture(autouse=True)
def data_dir_env(monkeypatch):
    monkeypatch.setenv("LSBENCH_DATA", str(SHARED))
