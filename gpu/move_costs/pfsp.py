"""Flow-shop costs on the device: a job appended to a partial schedule (the CPU's definition)."""
from numba import cuda

from lsbench.problems import pfsp

MAX_MACHINES = 64  # a thread's completion-time row (flow time, three objectives) holds this many machines
append_job = cuda.jit(device=True, inline=True)(pfsp.append_job)  # the CPU's definition, for the GPU
