"""A portable random generator (SplitMix64) shared by CPU searches and GPU kernels (gpu/device.py
compiles these same functions for the device).

Searches draw every random number from this generator, never from NumPy's, so that the fused CPU
loop, the Python loop over any backend and the device-resident GPU search produce the same stream
for the same seed. The state is a one-element uint64 array so njit and CUDA code can update it.
"""
import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's increment
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def new_state(seed):
    """A generator state for `seed` (any non-negative integer)."""
    mixed = (int(seed) * 0x9E3779B97F4A7C15 + 0x1234567) % (1 << 64)
    return np.array([mixed], dtype=np.uint64)


@njit(cache=True, inline="always")
def mix64(z):
    """SplitMix64's finaliser: a bijective hash of a 64-bit word (also the counter-based RNG)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def next_u64(state):
    state[0] += GOLDEN
    return mix64(state[0])


@njit(cache=True, inline="always")
def tie_rank(k, key):
    """Pseudo-random rank of move k under an iteration's key: breaks ties between equal moves
    the same way on every backend."""
    return mix64(np.uint64(k) ^ key)


@njit(cache=True)
def below(state, k):
    """Uniform integer in [0, k)."""
    return np.int64((next_u64(state) >> np.uint64(11)) % np.uint64(k))


@njit(cache=True)
def between(state, lo, hi):
    """Uniform integer in [lo, hi] (both included)."""
    return lo + below(state, hi - lo + 1)


@njit(cache=True, inline="always")
def unit_interval(word):
    """The float in [0, 1) made of a 64-bit word's top 53 bits (every uniform draw, CPU and GPU)."""
    return np.float64(word >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def uniform(state):
    """Uniform float in [0, 1) with 53 random bits."""
    return unit_interval(next_u64(state))


@njit(cache=True)
def permutation(state, n):
    """A uniformly random permutation of 0..n-1 (Fisher-Yates)."""
    p = np.empty(n, dtype=np.int64)
    fill_permutation(state, p)
    return p


@njit(cache=True)
def fill_permutation(state, p):
    """permutation(state, len(p)) written into p (a GPU thread's way: it may not allocate)."""
    n = p.shape[0]
    for i in range(n):
        p[i] = i
    for i in range(n - 1, 0, -1):
        j = below(state, i + 1)
        t = p[i]
        p[i] = p[j]
        p[j] = t


@njit(cache=True)
def bits(state, n):
    """A random 0/1 vector of length n."""
    v = np.empty(n, dtype=np.int8)
    fill_bits(state, v)
    return v


@njit(cache=True)
def fill_bits(state, v):
    """bits(state, len(v)) written into v (a GPU thread's way: it may not allocate)."""
    for i in range(v.shape[0]):
        v[i] = next_u64(state) >> np.uint64(63)
