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


def _quicker_device_calls():
    """A device function's call in the simulator swaps the fake cuda module into its module's
    globals and back, through a lock, a context manager and an import, on every call (about half of a
    resident kernel's simulated time). Here the first call of a launch swaps them (same swap, same
    reference count) and they stay swapped until the launch returns (one launch at a time, as the
    simulator itself requires). It reads numba-cuda 0.30's private names: without them (another
    version) the simulator keeps its own way, slower."""
    from numba import cuda
    from numba.cuda.simulator import kernel, kernelapi
    private = ("_globals_locks", "_swap_refcount", "_swap_orig", "_locks_register_lock")
    if not all(hasattr(kernelapi, name) for name in private) or not hasattr(kernel, "_kernel_context"):
        return
    launch = kernel.FakeCUDAKernel.__call__
    locks, refcount, originals = kernelapi._globals_locks, kernelapi._swap_refcount, kernelapi._swap_orig
    register = kernelapi._locks_register_lock
    swapped = {}  # id -> globals of the modules swapped during this launch

    def release():
        for gid, globs in list(swapped.items()):
            with locks[gid]:
                refcount[gid] -= 1
                if refcount[gid] == 0:
                    globs.update(originals.pop(gid))
                    del refcount[gid]
            del swapped[gid]

    def call(self, *args):
        fake = kernel._kernel_context
        if fake is None:  # a launch (or a device function called outside one: the simulator's own way)
            try:
                return launch(self, *args)
            finally:
                if not self._device:
                    release()
        globs = self.fn.__globals__
        gid = id(globs)
        if gid not in swapped:
            with register:
                lock = locks[gid]
            with lock:
                if gid not in swapped:
                    if refcount[gid] == 0:
                        orig = originals[gid] = {k: v for k, v in globs.items() if v is cuda}
                        for k in orig:
                            globs[k] = fake
                    refcount[gid] += 1
                    swapped[gid] = globs
        return self.fn(*args)

    kernel.FakeCUDAKernel.__call__ = call


def _quicker_array_indexing():
    """A kernel's array index in the simulator goes through three Python calls; the same result
    (a scalar, or a sub-array wrapped as the simulator wraps it) in one."""
    import numpy as np
    from numba.cuda.simulator.cudadrv import devicearray as fake
    within, outer = fake.FakeWithinKernelCUDAArray, fake.FakeCUDAArray

    def getitem(self, idx):
        item = self._item
        ret = item._ary[idx]
        if type(ret) is np.ndarray or type(ret) is np.void:
            return within(outer(ret, stream=item.stream))
        return ret

    def setitem(self, idx, val):
        self._item._ary[idx] = val

    within.__getitem__, within.__setitem__ = getitem, setitem


_safe_static_shared_arrays()
_quicker_device_calls()
_quicker_array_indexing()

if __name__ == "__main__":  # `python tests/simulator_safety.py ARGS`: `python -m lsbench ARGS`, made safe
    import runpy
    sys.argv = ["lsbench", *sys.argv[1:]]
    runpy.run_module("lsbench", run_name="__main__", alter_sys=True)
