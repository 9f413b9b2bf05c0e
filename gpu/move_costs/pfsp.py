"""Flow-shop costs on the device: a job appended to a partial schedule (the CPU's definition)."""
from numba import config, cuda

from lsbench.problems import pfsp

# a thread's row of completion times (moves scheduled from scratch) in local memory up to this many
# machines, beyond in its own row of a global array (few under the simulator, so tests reach both)
LOCAL_MACHINES = 4 if config.ENABLE_CUDASIM else 64
append_job = cuda.jit(device=True, inline=True)(pfsp.append_job)  # the CPU's definition, for the GPU
