"""Numba-CUDA evaluators (iteration level), solution-level makespan, and device-resident searches.

Importing this package never requires a GPU; `gpu.available()` says whether one is usable, and the
`gpu` backend fails with one clear error line where none is. Under NUMBA_ENABLE_CUDASIM=1 the
kernels run in Numba's CUDA simulator (tests on machines without a GPU).
"""


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
