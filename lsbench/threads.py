"""How many cores Numba's parallel code uses: one helper for evaluators, engines and searches."""
from contextlib import contextmanager

import numba

from .errors import LsbenchError

def use_threads(threads):
    """Numba's parallel code on `threads` cores (None: all of them)."""
    if threads:
        if threads > numba.config.NUMBA_NUM_THREADS:
            raise LsbenchError(f"--threads {threads}: this host runs at most {numba.config.NUMBA_NUM_THREADS} "
                               "Numba threads")
        numba.set_num_threads(int(threads))


@contextmanager
def one_thread():
    """Numba's parallel code on this thread alone for the block (the count is per thread)."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)
