"""Child processes stopped cleanly: a run whose parent is stopped (a time limit's SIGTERM raised as
an exception, its own timeout, Ctrl-C) ends with its whole process group, SIGTERM first, which
mpiexec and mpirun also pass on to their ranks, and SIGKILL after a grace period. subprocess.run
kills only its child, and an MPI job's ranks (or a shell's children) then run on, orphaned, holding
their GPUs."""
import os
import signal
import subprocess

GRACE_S = 10  # for mpirun to end its ranks


class Stopped(BaseException):
    """SIGTERM (a machine's time limit) raised where the process is (raise_stopped as its handler):
    the work in progress is dropped, what is done is kept. A BaseException, so that no `except
    Exception` on the way swallows it."""


def raise_stopped(signum, frame):
    raise Stopped()


def run_to_end(command, timeout=None, grace_s=GRACE_S, **popen_args):
    """subprocess.run(command, capture_output=True, text=True, timeout=timeout, **popen_args), the
    child in a process group of its own; an exception while it waits (TimeoutExpired, a signal
    handler's) sends that group SIGTERM, then SIGKILL after grace_s, before it is raised again."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True, **popen_args) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except BaseException:
            signal_group(process, signal.SIGTERM)
            try:
                process.communicate(timeout=grace_s)
            except BaseException:  # past the grace, or a second stop: no unbounded wait on exit
                pass
            signal_group(process, signal.SIGKILL)  # (what is left of the group: a rank that ignored SIGTERM)
            raise
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def signal_group(process, signum):
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:  # the group has ended
        pass
