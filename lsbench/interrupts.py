"""Ctrl-C (SIGINT) answered wherever it lands. Python raises KeyboardInterrupt at the main thread's
next bytecode, but one raised in a callback from compiled code (LLVM's, while Numba compiles) is
printed and dropped, and one still pending when a compiled function returns becomes a SystemError.
`answering_ctrl_c()` (around a CLI command) raises it again every AGAIN_S until the command has it
(`taken()`), and `interrupted()` tells such a SystemError from others. Work that a Ctrl-C left running
where the process cannot stop it (a GPU kernel: gpu/runtime/waits.py) is `left_running`; the
command then ends the process without its exit-time clean-up (`end_now_if_left_running`), which
would wait for it."""
import os
import signal
import sys
import threading
from contextlib import contextmanager

AGAIN_S = 0.5  # a dropped Ctrl-C is raised again after this long


class _State:
    pending = threading.Event()  # Ctrl-C came
    taken = threading.Event()  # the command has it (or ended): stop raising it again
    running = None  # what a Ctrl-C left running, if anything


def left_running(what):
    """A Ctrl-C interrupted the wait for `what`, which runs on."""
    _State.running = what


def end_now_if_left_running(code):
    """Ends the process with `code` at once where a Ctrl-C left work running (the message is out)."""
    if _State.running:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def interrupted():
    """Ctrl-C came during this command."""
    return _State.pending.is_set()


def taken():
    """The command has the Ctrl-C (its handler runs): it is not raised again."""
    _State.taken.set()


def _on_sigint(signum, frame):
    if not _State.pending.is_set():
        _State.pending.set()
        threading.Thread(target=_raise_again, args=(_State.taken,), daemon=True, name="lsbench-ctrl-c").start()
    raise KeyboardInterrupt


def _raise_again(taken):
    main = threading.main_thread().ident
    while not taken.wait(AGAIN_S):  # (this command's event: the next command has its own)
        signal.pthread_kill(main, signal.SIGINT)  # (a wait in the main thread wakes, _on_sigint runs there)


@contextmanager
def answering_ctrl_c():
    """Within: Ctrl-C raises KeyboardInterrupt, again each AGAIN_S until the block ends. Only where
    SIGINT has Python's own handler, in the main thread (a job started with SIGINT ignored keeps
    ignoring it)."""
    own = threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
    _State.pending, _State.taken, _State.running = threading.Event(), threading.Event(), None
    if own:
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        _State.taken.set()
        if own:
            signal.signal(signal.SIGINT, signal.default_int_handler)
