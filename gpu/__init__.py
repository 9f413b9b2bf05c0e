"""Numba-CUDA evaluators (iteration level), solution-level makespan, and device-resident searches.

Installed as `lsbench.gpu`. Importing it never requires a GPU; `available()` says whether one is
usable and `require(backend)` fails with one clear error line where none is. Under
NUMBA_ENABLE_CUDASIM=1 the kernels run in Numba's CUDA simulator (tests on machines without a GPU).
"""
from lsbench.errors import LsbenchError


def device_name():
    """The current CUDA device's name (\"CUDA simulator\" under the simulator), for run records."""
    from numba import cuda
    name = getattr(cuda.get_current_device(), "name", "CUDA simulator")
    return name.decode() if isinstance(name, bytes) else str(name)


def available():
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:
        return False


def require(backend):
    """One error line, before any work, where `backend` needs a GPU this host lacks."""
    if not available():
        raise LsbenchError(f"--backend {backend}: no CUDA GPU on this host (numba.cuda.is_available() is "
                           "False; set NUMBA_ENABLE_CUDASIM=1 to run the kernels in Numba's simulator)")
