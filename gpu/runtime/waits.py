"""The host's wait for the GPU, answering Ctrl-C. A CUDA synchronisation holds Python's signal
handlers until the work ends: a chunk of 132 searches of pla85900 was two iterations of about 1.6 s
on an H100, a PPP 3000-3000 tabu iteration over a minute. `wait_for` polls an event instead, so a Ctrl-C raises
KeyboardInterrupt within a poll; the kernel is then left running, and lsbench.interrupts tells the
command to end the process at once (freeing device memory would wait for the kernel)."""
import time

from numba import config, cuda

from lsbench import interrupts

SPIN_S = 0.005  # polled back to back this long (a short launch returns at once), then every POLL_S
POLL_S = 0.0002


def wait_for(stream=0, event=None):
    """Returns when the work queued so far on `stream` (or before `event`, already recorded) has
    ended, as stream.synchronize() would."""
    if config.ENABLE_CUDASIM:  # (the simulator runs each launch to its end)
        return
    if event is None:
        event = cuda.event(timing=False)
        event.record(stream)
    start = time.perf_counter()
    try:
        while not event.query():
            if time.perf_counter() - start > SPIN_S:
                time.sleep(POLL_S)
    except KeyboardInterrupt:
        interrupts.left_running("a GPU kernel")
        raise
