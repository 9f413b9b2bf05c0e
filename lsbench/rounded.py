"""Floating-point operations each rounded on its own (IEEE round-to-nearest), for results that a
GPU must reproduce bit for bit: CPU code that calls these (rather than writing x * y + z) compiles
on the device, through gpu/runtime/rounded.py, to operations that NVVM never fuses into a
multiply-add or approximates."""
import math

from numba import njit


@njit(cache=True, inline="always")
def rn_mul(x, y):
    return x * y


@njit(cache=True, inline="always")
def rn_add(x, y):
    return x + y


@njit(cache=True, inline="always")
def rn_div(x, y):
    return x / y


@njit(cache=True, inline="always")
def rn_sqrt(x):
    return math.sqrt(x)
