"""The lanes of a warp talking to each other: shuffles and warp barriers on the device; under the
simulator, which has no warp shuffles, a block barrier and a shared-memory buffer of XBUF rows stand
in for them (so there every thread of the block must make the same calls). Also the inline device
function decorator and unsigned indices the kernels share."""
import numpy as np
from numba import config, cuda, int32, uint32

from .chunks import MAX_THREADS

SIM = config.ENABLE_CUDASIM
SHUFFLE = not SIM  # warp shuffles: on the device, not in the simulator
FULL = 0xFFFFFFFF
U64 = np.uint64  # unsigned indices: no negative-index wraparound code
XBUF = MAX_THREADS if SIM else 1  # lane exchange buffer (simulator only)


def device(function):
    """An inline device function."""
    return cuda.jit(device=True, inline=True)(function)


@cuda.jit(device=True, inline=True)
def from_left(u, xbuf, tid, lane):
    """Lane l receives lane l-1's u (lane 0 receives 0). Under the simulator a block barrier and
    shared memory stand in for the shuffle, so there every thread of the block must call it (and
    from_left2) the same number of times."""
    if SIM:
        cuda.syncthreads()
        xbuf[tid, 0] = u
        cuda.syncthreads()
        return int32(xbuf[tid - 1, 0]) if lane > 0 else int32(0)
    u = cuda.shfl_up_sync(FULL, u, 1)
    return u if lane > 0 else int32(0)


@cuda.jit(device=True, inline=True)
def from_left2(u, v, xbuf, tid, lane):
    """from_left for two values."""
    if SIM:
        cuda.syncthreads()
        xbuf[tid, 0] = u
        xbuf[tid, 1] = v
        cuda.syncthreads()
        if lane == 0:
            return int32(0), int32(0)
        return int32(xbuf[tid - 1, 0]), int32(xbuf[tid - 1, 1])
    u = cuda.shfl_up_sync(FULL, u, 1)
    v = cuda.shfl_up_sync(FULL, v, 1)
    if lane == 0:
        return int32(0), int32(0)
    return u, v


@cuda.jit(device=True, inline=True)
def in_window(d, length):
    """0 <= d < length, as one unsigned 32-bit compare on the device."""
    if SIM:
        return 0 <= d < length
    return uint32(d) < uint32(length)


@cuda.jit(device=True, inline=True)
def warp_sync():
    """Lanes' shared-memory writes visible to the warp (the whole block under the simulator)."""
    if SIM:
        cuda.syncthreads()
    else:
        cuda.syncwarp(FULL)
