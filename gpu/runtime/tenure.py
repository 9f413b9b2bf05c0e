"""Tenure draws on the device: the twin of lsbench.rng.between for a search's next tabu tenure, so
that every resident engine draws the CPU search's tenures."""
from numba import cuda, int64, uint64

from .. import device as dv


@cuda.jit(device=True, inline=True)
def next_tenure(state, tenure_min, tenure_max):
    """(state, tenure): rng.between(state, tenure_min, tenure_max) when they differ."""
    if tenure_max == tenure_min:
        return state, int64(tenure_min)
    state += dv.GOLDEN
    return state, tenure_min + int64((dv.mix64(state) >> uint64(11)) % uint64(tenure_max - tenure_min + 1))
