"""Makes Numba's CUDA simulator safe and quicker for the tests; imported by conftest.py, and
preloaded into Dask worker processes that run simulated kernels (DASK_DISTRIBUTED__WORKER__PRELOAD).

The simulator runs each GPU thread as a Python thread and a block barrier waits for all of them:
switching threads every 0.1 ms instead of every 5 ms makes barrier-heavy kernels ~6x faster.
"""
import sys
import threading
import traceback

sys.setswitchinterval(1e-4)


def _safe_static_shared_arrays():
    """The simulator finds a block's static shared array by the line that declares it, with an
    unlocked check-then-insert: two threads preempted in between get private arrays, and the
    kernel reads garbage. Same lookup, under a lock (dynamic shared memory is unaffected)."""
    import numpy as np
    from numba.core import types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support
    lock = threading.Lock()
    unsafe = kernelapi.FakeCUDAShared.array

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:
            return unsafe(self, shape, dtype, alignment)
        caller = tuple(traceback.extract_stack(sys._getframe(1), limit=1)[0][0:2])
        with lock:
            res = self._allocations.get(caller)
            if res is None:
                np_dtype = numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else dtype
                res = self._allocations[caller] = np.empty(shape, np_dtype)
        return res

    kernelapi.FakeCUDAShared.array = array


_safe_static_shared_arrays()

if __name__ == "__main__":  # `python tests/simulator_safety.py ARGS`: `python -m lsbench ARGS`, made safe
    import runpy
    sys.argv = ["lsbench", *sys.argv[1:]]
    runpy.run_module("lsbench", run_name="__main__", alter_sys=True)
