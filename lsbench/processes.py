"""Child processes stopped cleanly: a run whose parent is stopped (a time limit's SIGTERM raised as
an exception, its own timeout, Ctrl-C) gets SIGTERM first, which mpiexec and mpirun pass on to their
ranks, and SIGKILL only after a grace period. subprocess.run kills at once, and an MPI job's ranks
then run on, orphaned, holding their GPUs."""
import subprocess

GRACE_S = 10  # for mpirun to end its ranks


def run_to_end(command, timeout=None, grace_s=GRACE_S, **popen_args):
    """subprocess.run(command, capture_output=True, text=True, timeout=timeout, **popen_args), but an
    exception while it waits (TimeoutExpired, a signal handler's) ends the child with SIGTERM, then
    SIGKILL after grace_s, before it is raised again."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          **popen_args) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except BaseException:
            process.terminate()
            try:
                process.communicate(timeout=grace_s)
            except BaseException:  # past the grace, or a second stop: no unbounded wait on exit
                process.kill()
            raise
    return subprocess.CompletedProcess(command, process.returncode, out, err)
