"""Thread control (Luong et al., section 5): pick the launch configuration by timing, and survive
launches that fail for lack of resources.

The kernels are grid-stride loops, so any (block, grid) computes the same result; only the speed
differs. During the first iterations the tuner tries each candidate `waves` times ("waves" of
trial launches), then keeps the fastest. A launch that raises (too many registers or shared memory
for the block size, an invalid configuration) marks its candidate failed and is retried with the
best configuration found so far (or the next untried one), so the search never stops for it.
"""
import time

import numpy as np

from numba import config, cuda
from numba.cuda.cudadrv.devicearray import is_cuda_ndarray

from lsbench.errors import LsbenchError

from .waits import wait_for

# the simulator runs each thread as a Python thread: small blocks keep the tests fast there
DEFAULT_BLOCKS = (32, 64, 128) if config.ENABLE_CUDASIM else (64, 128, 256, 512, 1024)
DEFAULT_MOVES_PER_THREAD = (1, 4, 16)


STATIC_SHARED_CAP = 48 * 1024  # above this a kernel must opt in to more dynamic shared memory
SIM_SHARED_BYTES = 64 * 1024  # what the simulator pretends a block may have


def shared_bytes_per_block():
    """The most shared memory one block may opt in to on this device (227 KB on an H100)."""
    if config.ENABLE_CUDASIM:
        return SIM_SHARED_BYTES
    dev = cuda.get_current_device()
    try:
        return int(dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
    except (AttributeError, KeyError):
        return STATIC_SHARED_CAP


def within_a_block(need, what):
    """`need` bytes of shared memory a block, refused in one line naming `what` where this GPU's
    block cannot hold them."""
    if need > shared_bytes_per_block():
        raise LsbenchError(f"{what} needs {need:,} bytes of shared memory a block, more than this GPU's "
                           f"{shared_bytes_per_block():,}")
    return need


class LaunchFailure(RuntimeError):
    """Every launch configuration failed."""


class ThreadControl:
    def __init__(self, size, blocks=DEFAULT_BLOCKS, moves_per_thread=DEFAULT_MOVES_PER_THREAD, waves=2,
                 fixed=None, max_threads=None, launch_hook=None):
        self.size = max(1, int(size))
        if fixed is not None:
            self.candidates = [tuple(fixed)]
        else:
            self.candidates = [(b, m) for b in blocks for m in moves_per_thread
                               if m == 1 or b * m <= 4 * self.size]
        self.max_threads = max_threads
        self.waves = waves if fixed is None else 0
        self.times = {c: [] for c in self.candidates}
        self.failed = set()
        self.best = None if fixed is None else tuple(fixed)
        self.launch_hook = launch_hook  # tests: called before each launch, may raise
        self.history = []  # (block, moves per thread, seconds or 'failed')

    def grid(self, config):
        block, mpt = config
        blocks = max(1, -(-self.size // (block * mpt)))
        if self.max_threads:
            blocks = min(blocks, max(1, self.max_threads // block))
        return blocks, block

    def _next(self):
        if self.best is not None and (self.waves == 0 or self._tuned()):
            return self.best
        for c in self.candidates:
            if c not in self.failed and len(self.times[c]) < self.waves:
                return c
        return self._settle()

    def _tuned(self):
        return all(c in self.failed or len(self.times[c]) >= self.waves for c in self.candidates)

    def _settle(self):
        ok = {c: min(t) for c, t in self.times.items() if t and c not in self.failed}
        if not ok:
            raise LaunchFailure("no launch configuration could run this kernel")
        self.best = min(ok, key=ok.get)
        return self.best

    def launch(self, kernel, *args):
        """Launch `kernel[grid, block](*args)` with the current configuration; returns seconds."""
        while True:
            config = self._next()
            grid, block = self.grid(config)
            try:
                if self.launch_hook:
                    self.launch_hook(config)
                t = time.perf_counter()
                kernel[grid, block](*args)
                wait_for()
                dt = time.perf_counter() - t
            except Exception as e:  # CudaAPIError, resource errors, invalid configurations
                self.failed.add(config)
                self.history.append((config[0], config[1], f"failed: {type(e).__name__}"))
                if self.best == config:
                    self.best = None
                if all(c in self.failed for c in self.candidates):
                    raise LaunchFailure(f"every launch configuration failed; last error: {e}") from e
                continue
            if self.waves and not self._tuned():
                self.times[config].append(dt)
                self.history.append((config[0], config[1], dt))
                if self._tuned():
                    self._settle()
            return dt

    def describe(self):
        return {"chosen": None if self.best is None else {"block": self.best[0], "moves_per_thread": self.best[1]},
                "tried": len(self.history), "failed": [list(c) for c in sorted(self.failed)]}


def register_cap(threads, blocks_per_sm=1):
    """The most registers a thread (a multiple of 8, at most 255) with which `blocks_per_sm` blocks
    of `threads` fit one SM. Each of its four schedulers holds 16,384 registers for its share of
    the warps, and a block's warps go round the four, so a block of W warps needs ceil(W / 4) warps'
    registers on the busiest one: 65,536 / threads is too many where W is no multiple of 4 (320
    threads: 200 registers, where 168 fit)."""
    warps = -(-threads // 32)
    per_scheduler = blocks_per_sm * -(-warps // 4)
    return min(255, 16384 // (32 * per_scheduler) // 8 * 8)


@cuda.jit
def _cluster_probe():
    """Nothing: its launch configuration is what clusters_at_once asks the driver about."""


_clusters_at_once = {}


def clusters_at_once(size):
    """How many thread block clusters of `size` blocks, one block an SM, the current GPU runs at once.
    A cluster's blocks share one GPC, and GPCs hold unequal numbers of SMs, so this can fall short of
    SMs / size: an H200's 132 SMs run 7 clusters of 16, not 8, and an 8th search then waits for a
    second wave. Asked of the driver, for a probe
    kernel whose shared memory leaves room for one block an SM (the cluster shapes' own bound)."""
    dev = cuda.get_current_device()
    key = (dev.id, size)
    if key not in _clusters_at_once:
        from cuda.core import Device, LaunchConfig
        compiled = _cluster_probe.compile(())  # (compiled once: later calls return the same kernel)
        allow_cluster(compiled, size)
        shared = int(dev.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR) // 2 + 1024  # two blocks would not fit
        allow_dynamic_shared(compiled, shared)
        config_ = LaunchConfig(grid=1, block=32, shmem_size=shared, cluster=size)
        occupancy = compiled._codelibrary.get_cufunc().kernel.occupancy
        _clusters_at_once[key] = int(occupancy.max_active_clusters(config_, stream=Device(dev.id).default_stream))
    return _clusters_at_once[key]


def _set_kernel_attribute(compiled, name, value):
    """A CUfunction attribute (CU_FUNC_ATTRIBUTE_<name>) of a compiled Numba kernel, which Numba's
    launch options do not reach."""
    from numba.cuda.cudadrv.driver import binding, driver
    func = compiled._codelibrary.get_cufunc()
    attr = getattr(binding.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{name}")
    driver.cuKernelSetAttribute(attr, value, func.handle, func.device.id)


def allow_cluster(compiled, size):
    """Opts a compiled kernel in to clusters of `size` blocks: more than 8 (16, an H100's
    non-portable size) needs the kernel's own attribute."""
    if size > 8:
        _set_kernel_attribute(compiled, "NON_PORTABLE_CLUSTER_SIZE_ALLOWED", 1)


def allow_dynamic_shared(compiled, need):
    """Numba-CUDA has no launch option for more than 48 KB of shared memory per block
    (NVIDIA/numba-cuda#94): set the compiled kernel's own dynamic limit to `need` bytes. Done for
    every kernel with dynamic shared memory, as static and dynamic together above 48 KB need it."""
    if need > 0:
        _set_kernel_attribute(compiled, "MAX_DYNAMIC_SHARED_SIZE_BYTES", need)


def held_arrays(arg):
    """A kernel argument whose launch parameters can be kept: a device array, or a tuple of them or
    of such tuples (a kernel's bundle of arrays, an adapter's memory in it); None for anything else."""
    if is_cuda_ndarray(arg):
        return arg
    if isinstance(arg, tuple) and arg and all(held_arrays(a) is not None for a in arg):
        return arg
    return None


def same_arrays(a, b):
    """Whether two held_arrays results are the very same arrays."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_arrays(x, y) for x, y in zip(a, b))
    return a is b


class PreparedLauncher:
    """Launches one Numba kernel, compiled for the first call's argument types, through cuda.core,
    converting each device array's (or tuple of them) launch parameters once for as long as the same arrays come back
    (a cas colony's buffers, every generation): Numba's dispatcher re-checks and re-converts every
    argument on every launch, a large share of a millisecond-long generation. Opts the kernel in to
    the dynamic shared memory a launch asks for. `cluster` > 1: consecutive blockIdx.x form a thread
    block cluster (Hopper; rank = blockIdx.x % cluster). Under the simulator: the dispatcher."""

    def __init__(self, dispatcher, cluster=1):
        self.dispatcher, self.cluster, self.compiled = dispatcher, cluster, None
        self.shared_allowed = 0
        self._arrays, self._params, self._configs = None, None, {}

    def compiled_for(self, args):
        if self.compiled is None:
            self.compiled = self.dispatcher._compile_for_args(*args)
            allow_cluster(self.compiled, self.cluster)
        return self.compiled

    def __call__(self, blocks, threads, shared_bytes, args, stream=0):
        if config.ENABLE_CUDASIM:
            self.dispatcher[blocks, threads, stream, shared_bytes](*args)
            return
        from cuda.core import LaunchConfig, launch
        from numba.cuda.cudadrv import driver
        compiled = self.compiled_for(args)
        if shared_bytes > self.shared_allowed:
            allow_dynamic_shared(compiled, shared_bytes)
            self.shared_allowed = shared_bytes
        stream = driver._to_core_stream(stream)
        arrays = tuple(held_arrays(a) for a in args)
        if self._arrays is None or any(not same_arrays(a, b) for a, b in zip(arrays, self._arrays)):
            self._arrays = arrays
            self._params = []
            for ty, val, dev in zip(compiled.argument_types, args, arrays):
                held = []
                if dev is not None:
                    compiled._prepare_args(ty, val, stream, [], held)
                self._params.append(held)
        retr, params = [], []
        for ty, val, dev, held in zip(compiled.argument_types, args, arrays, self._params):
            if dev is not None:
                params.extend(held)
            else:
                compiled._prepare_args(ty, val, stream, retr, params)
        key = (blocks, threads, shared_bytes)
        if key not in self._configs:
            cluster = {"cluster": self.cluster} if self.cluster > 1 else {}
            self._configs[key] = LaunchConfig(grid=blocks // self.cluster, block=threads, shmem_size=shared_bytes,
                                              **cluster)
        launch(stream, self._configs[key], compiled._codelibrary.get_cufunc().kernel, *params)
        for write_back in retr:
            write_back()


def copy_down(host, device, nbytes, stream=0):
    """The first `nbytes` of a device array into a host array (pinned: asynchronous on `stream`).
    Numba's copy_to_host re-checks and re-views both arrays on every call (0.1-0.4 ms of Python),
    a tenth of a restart run's 4,096-iteration chunk; this is one driver call. Under the simulator:
    Numba's copy."""
    if config.ENABLE_CUDASIM:
        host.reshape(-1).view(np.uint8)[:nbytes] = device.copy_to_host().reshape(-1).view(np.uint8)[:nbytes]
        return
    from numba.cuda.cudadrv import driver
    driver.device_to_host(host, device, nbytes, stream=stream)


def copy_up(device, host, nbytes, stream=0):
    """The first `nbytes` of a host array into a device array (copy_down's way back)."""
    if config.ENABLE_CUDASIM:
        whole = device.copy_to_host()
        whole.reshape(-1).view(np.uint8)[:nbytes] = host.reshape(-1).view(np.uint8)[:nbytes]
        device.copy_to_device(whole)
        return
    from numba.cuda.cudadrv import driver
    driver.host_to_device(device, host, nbytes, stream=stream)


def narrow(values, terms):
    """`values` as int32 when a sum of `terms` of them cannot overflow it (half the bytes per
    gathered read); compiled device code widens to 64 bits before adding, the simulator's NumPy
    scalars would not, so it keeps int64."""
    if values.dtype.kind == "i" and not config.ENABLE_CUDASIM and terms * int(np.abs(values).max()) < (1 << 31):
        return values.astype(np.int32)
    return values
