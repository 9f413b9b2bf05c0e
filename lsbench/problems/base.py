"""What every problem and neighbourhood provides to the searches and the evaluators.

A problem owns its read-only data and the full objective (from scratch). A neighbourhood owns the
move numbering, the incremental move costs (CPU, njit, serial and all-cores variants made from one
source), how a move changes a solution, and the move attributes that tabu memory records.
Moves are rated by their *delta*: objective after the move minus objective now.
"""
import hashlib

import numpy as np

from ..errors import InstanceFormatError, LsbenchError
from ..files import refuse_unless_regular_input


def sha256_of(path):
    h = hashlib.sha256()
    refuse_unless_regular_input(path, "instance file")
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


INT_LIMIT = 1 << 62  # objectives and move costs are summed in int64: instances that could reach this are refused


def read_text(path):
    """A text instance file, or one error line naming the file (unreadable, not text, a FIFO)."""
    refuse_unless_regular_input(path, "instance file")
    try:
        raw = open(path, "rb").read()
    except OSError as e:
        raise LsbenchError(f"{path}: cannot read instance file ({e.strerror})")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InstanceFormatError(path, f"not a text file (byte 0x{raw[e.start]:02x} at offset {e.start})")


def read_numbers(path, dtype=np.int64):
    """All whitespace-separated numbers of a file, with a clear error for anything else."""
    tokens = read_text(path).split()
    try:
        if dtype == np.int64:
            values = [int(t) for t in tokens]
            big = next((v for v in values if not -INT_LIMIT < v < INT_LIMIT), None)
            if big is not None:
                raise InstanceFormatError(path, f"value {big} is beyond the 64-bit range lsbench computes in")
            return np.array(values, dtype=np.int64)
        values = np.array([float(t) for t in tokens], dtype=np.float64)
        if not np.isfinite(values).all():
            raise InstanceFormatError(path, f"non-finite value {values[~np.isfinite(values)][0]}")
        return values
    except ValueError:
        bad = next(t for t in tokens if not _is_number(t, dtype))
        line = next(k for k, text in enumerate(read_text(path).splitlines(), 1) if bad in text.split())
        raise InstanceFormatError(path, f"line {line}: non-numeric value {bad!r}")


def check_bound(bound, where, what):
    """Refuse, at load, an instance whose objective could leave the int64 range (never a wrap)."""
    if bound >= INT_LIMIT:
        raise LsbenchError(f"{where}: {what} may reach {bound:.4g}, beyond the 64-bit integer range lsbench "
                           "computes in (2^62); instance refused")


def _is_number(token, dtype):
    try:
        int(token) if dtype == np.int64 else float(token)
        return True
    except ValueError:
        return False


def serial_and_parallel(fn):
    """Two builds of one neighbourhood kernel: one core, and all cores (prange over its outer loop).

    Only the serial build is cached: Numba's on-disk cache keys on the Python function, so two
    cached builds of the same source could load each other's code.
    """
    from numba import njit
    return njit(cache=True)(fn), njit(parallel=True)(fn)


class Problem:
    """Base of all problems. Subclasses set `kind`, `neighbourhoods` and the data attributes."""

    kind = ""
    integer = True  # integer objective: backends must agree exactly
    neighbourhoods = {}  # name -> Neighbourhood subclass
    default_neighbourhood = ""
    objective_floor = None  # a bound no solution's objective goes below (0 where it is a sum of non-negative terms)
    parameters = ()  # lsbench.params.Param: the --param keys its loaders take

    def __init__(self, name, source=None, sha256=None):
        self.name = name
        self.source = source
        self.sha256 = sha256

    # Subclasses define: objective(solution) from scratch, random_solution(rng_state),
    # check_solution(solution) (raises LsbenchError), describe() (dict for `instances show`).

    def exact_objective(self, solution):
        """The objective in Python integers, independent of the compiled code (`lsbench verify`
        and every record's re-check use it); float problems return `objective`."""
        return self.objective(solution)

    # -- shared -------------------------------------------------------------------------------
    def neighbourhood(self, name=None):
        name = name or self.default_neighbourhood
        if name not in self.neighbourhoods:
            raise LsbenchError(
                f"--neighbourhood: unknown neighbourhood {name!r} for {self.kind} "
                f"(known: {', '.join(sorted(self.neighbourhoods))})")
        return self.neighbourhoods[name](self)

    def solution_to_list(self, solution):
        return np.asarray(solution).tolist()

    def solution_from_list(self, values):
        return np.asarray(values, dtype=np.int64)


def check_permutation(solution, n, what="solution"):
    s = np.asarray(solution)
    if s.ndim != 1 or s.shape[0] != n:
        raise LsbenchError(f"{what}: expected a permutation of length {n}, got shape {s.shape}")
    if not np.array_equal(np.sort(s), np.arange(n)):
        raise LsbenchError(f"{what}: not a permutation of 0..{n - 1}")


class Neighbourhood:
    """A neighbourhood bound to one problem instance.

    `state(solution)` builds the incremental structures (a tuple of arrays) for a solution;
    `evaluate(solution, state, out, parallel)` writes every move's delta into `out`;
    `apply(solution, state, move, parallel)` performs a move in place and keeps `state` in sync.
    Tabu memory is an expiry array over move attributes: `tabu_flags` marks the moves whose
    attributes are still tabu at iteration `it`, `tabu_record` stores the attributes a performed
    move forbids.
    """

    name = ""
    parameters = ()
    # evaluate(...) is evaluate_rows over every row, from the solution alone: an evaluator may
    # evaluate it in row slices (cpu: a long evaluation then answers Ctrl-C between slices)
    rows_alone = False

    def __init__(self, problem):
        self.problem = problem
        self.size = 0

    def state(self, solution, parallel=False):
        return ()

    def apply(self, solution, state, move, parallel=False):
        """Default for neighbourhoods without incremental structures: just perform the move."""
        self.perform(solution, move)

    def delta_dtype(self):
        return np.int64 if self.problem.integer else np.float64

    def out_shape(self):
        """The shape of the array an evaluator fills: one delta per move."""
        return (self.size,)

    # -- slices for remote workers (COW, grid): moves grouped in rows, each row a kernel's outer loop
    def row_starts(self):
        """First move index of every row, then the size. Default: one move per row."""
        return list(range(self.size + 1))

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        """Deltas of the moves of rows lo..hi-1, from the solution alone (what a remote worker can
        compute), written at their move indices in the full-size `out`. Default: everything."""
        self.evaluate(solution, self.state(solution, parallel), out, parallel)

    def tabu_memory(self):
        raise LsbenchError(f"tabu search is not defined for the {self.name} neighbourhood")


class ObjectiveVectors(Neighbourhood):
    """A neighbourhood whose moves are rated by the objective vector of the neighbour (absolute
    values, one row per move) instead of a delta: what Pareto searches evaluate. Every evaluator
    fills out_shape() through the same row slices as for deltas (`vector_rows` of the inner
    neighbourhood), so cpu, cpu-parallel, cow and grid need nothing else."""

    def __init__(self, inner):
        if not hasattr(inner, "vector_rows") or not hasattr(inner.problem, "vector_names"):
            raise LsbenchError(f"the {inner.name} neighbourhood of {inner.problem.kind} has no objective vectors")
        super().__init__(inner.problem)
        self.inner, self.name, self.size, self.rows = inner, inner.name, inner.size, inner.rows
        self.width = len(inner.problem.vector_names)
        self.rows_alone = True  # (evaluate is vector_rows over every row)

    def out_shape(self):
        return (self.size, self.width)

    def delta_dtype(self):
        return np.int64

    def row_starts(self):
        return self.inner.row_starts()

    def evaluate(self, solution, state, out, parallel=False):
        self.inner.vector_rows(solution, 0, self.rows, out, parallel)

    def evaluate_rows(self, solution, lo, hi, out, parallel=False):
        self.inner.vector_rows(solution, lo, hi, out, parallel)

    def perform(self, solution, move):
        self.inner.perform(solution, move)
