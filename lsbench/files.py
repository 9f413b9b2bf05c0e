"""Files written whole: a temp file beside the target, then a rename; outputs proven writable
before any work; JSON read back with one line naming what is wrong."""
import fcntl
import json
import os
import stat
import tempfile
from pathlib import Path

import numpy as np

from .errors import LsbenchError


def write_atomic(path, record):
    """A run record as JSON, never partial (write_text_atomic)."""
    write_text_atomic(path, json.dumps(record, indent=1, default=_json_default) + "\n")


def write_text_atomic(path, text):
    """Write to a temp file beside `path`, then rename: never a partial file. The file gets the
    permissions of an ordinary new file (the umask), not mkstemp's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    refuse_unless_ordinary(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~current_umask())
        refuse_unless_ordinary(path)  # again: something may have been put there meanwhile
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def refuse_unless_ordinary(path, what="output"):
    """An output path that exists must be a regular file: a rename would replace a device node, a
    FIFO, a socket or a symbolic link (with whatever it pointed to left unwritten)."""
    if not str(path).strip():
        raise LsbenchError(f"{what}: an empty path")
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as e:
        raise LsbenchError(f"{what} {path}: cannot be checked ({e.strerror})")
    for test, kind in KINDS:
        if test(mode):
            raise LsbenchError(f"{what} {path}: exists and is {kind}, not a regular file; nothing was replaced")


def _head(path, size=4096):
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError:
        return b""


def _json_head(path):
    """The file as JSON where it starts like a JSON object or list (a large file of anything else,
    a user's data say, is not read whole just to be refused)."""
    if _head(path, 64).lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _first_line(path):
    """The file's first line, from its first 4 KB only."""
    try:
        return _head(path).split(b"\n", 1)[0].decode("utf-8").strip()
    except UnicodeDecodeError:
        return None


EXPORT_HEADER = "group,problem,instance,algorithm,backend,seed,iteration,evaluations,seconds,objective,bks"
# what an existing output must be for lsbench to replace it: a file of the same kind that lsbench wrote
OUTPUT_KINDS = {
    "run record": lambda p: isinstance(r := _json_head(p), dict) and {"run_spec", "best_objective", "problem"} <= set(r),
    "multistart summary": lambda p: isinstance(r := _json_head(p), dict) and {"completed", "best_seed", "run"} <= set(r),
    "indicators table": lambda p: isinstance(r := _json_head(p), list) and all(
        isinstance(row, dict) and "hypervolume" in row for row in r),
    "trajectory table": lambda p: _first_line(p) == EXPORT_HEADER,
}


def refuse_unless_replaceable(path, kind, what="--out"):
    """An existing output is replaced only when it is a `kind` that lsbench wrote (a record by a
    record, a summary by a summary): a text file, an instance, another command's table is refused
    before any work, so that nothing of the user's is overwritten."""
    if kind is None or not os.path.isfile(path) or os.path.getsize(path) == 0:
        return
    if not OUTPUT_KINDS[kind](path):
        article = "an" if kind[0] in "aeiou" else "a"
        raise LsbenchError(f"{what} {path}: exists and is not {article} {kind} that lsbench wrote; nothing was run or "
                           "replaced (remove it, or choose another path)")


def refuse_unless_regular_input(path, what):
    """An input must be a regular file: a FIFO, a device or a socket would block the read, or never
    end it; one error line naming it instead (a missing or unreadable file is left to the reader)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = next((k for test, k in KINDS if test(mode)), "not a regular file")
        raise LsbenchError(f"{path}: cannot read {what}: it is {kind}, not a regular file")


def current_umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_HELD = {}  # output path -> the open lock file that keeps other lsbench processes off it


def reserve(path, flag="--out", kind="run record"):
    """Before any work: the output is a regular file or new, its folder exists and takes a file
    (permissions alone do not say it: root ignores them, read-only mounts do not), and no other
    lsbench process is writing it (a lock beside it, released by `release` or the process's end)."""
    path = Path(path)
    check_writable(path, flag, kind)
    key = str(path.resolve())
    if key in _HELD or launcher_rank() != 0:  # the ranks of one MPI job share its output; rank 0 writes
        return
    lock = os.open(path.parent / f".{path.name}.lock", os.O_RDWR | os.O_CREAT, 0o666 & ~current_umask())
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        raise LsbenchError(f"{flag} {path}: another lsbench process is writing it now; nothing was run")
    _HELD[key] = lock


def check_writable(path, flag="--out", kind=None):
    """The output is a regular file or new (where `kind` is named, an existing one must be that
    kind of lsbench file), and its folder exists (made here) and takes a file."""
    path = Path(path)
    refuse_unless_ordinary(path, flag)
    refuse_unless_replaceable(path, kind, flag)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise LsbenchError(f"{flag} {path}: cannot write there ({e.strerror}); nothing was run")


def launcher_rank():
    """This process's rank as its MPI launcher (Open MPI, MPICH, PMIx, srun) set it; 0 outside MPI."""
    for name in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def launcher_size():
    """The ranks of this process's MPI launch (Open MPI, MPICH/Hydra, an srun step); 1 outside one."""
    for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 1


def release(path):
    """The lock `reserve` took: its file removed, then let go."""
    lock = _HELD.pop(str(Path(path).resolve()), None)
    if lock is not None:
        try:
            os.unlink(Path(path).parent / f".{Path(path).name}.lock")
        except OSError:
            pass
        os.close(lock)


def write_or_keep(path, record):
    """write_atomic, and where that fails at the end of a run, the record goes to a fallback file
    named in the error line instead of being lost."""
    try:
        write_atomic(path, record)
    except OSError as e:
        fallback = Path(tempfile.gettempdir()) / f"lsbench-record-{os.getpid()}-{Path(path).name}"
        write_atomic(fallback, record)
        raise LsbenchError(f"--out {path}: cannot write the record ({e.strerror}); it was saved to {fallback}")


def _json_default(x):
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x)}")


def read_json(path, what):
    """A JSON file, or one line naming the file and why it is not `what`."""
    refuse_unless_regular_input(path, what)
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise LsbenchError(f"{path}: cannot read {what} ({e.strerror})")
    except json.JSONDecodeError as e:
        raise LsbenchError(f"{path}: not a JSON {what} ({e.msg} at line {e.lineno})")
