"""The device side of lsbench/rounded.py: float64 operations each rounded on its own. NVVM fuses a
multiply and an add by default and a kernel built with fastmath may approximate; libdevice's _rn
functions keep each rounding. The simulator computes in Python floats, already rounded op by op.

DEVICE_OPS names them as lsbench.rounded does, for gpu.device.twin(cpu_function, **DEVICE_OPS).
"""
import math

from numba import config

if config.ENABLE_CUDASIM:
    def mul_rn(x, y):
        return x * y

    def add_rn(x, y):
        return x + y

    def div_rn(x, y):
        return x / y

    def sqrt_rn(x):
        return math.sqrt(x)
else:
    from numba.cuda.libdevice import dadd_rn as add_rn, ddiv_rn as div_rn, dmul_rn as mul_rn, dsqrt_rn as sqrt_rn

DEVICE_OPS = {"rn_mul": mul_rn, "rn_add": add_rn, "rn_div": div_rn, "rn_sqrt": sqrt_rn}
