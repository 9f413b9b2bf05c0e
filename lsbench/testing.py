"""The kit a problem's author runs in their own tests: one call proves the problem right the way
lsbench's tests prove its own.

    from lsbench.testing import check_problem
    check_problem("myproblem", instances=["tests/data/small.txt"], malformed={"empty.txt": ""})

`check_problem` raises AssertionError naming the first check that fails:
- every move's delta (`evaluate`) equals the objective of the neighbour recomputed from scratch,
  on random solutions, and again after moves made with `apply` (the incremental state kept in step);
- `cpu` and `cpu-parallel` follow the same trajectory (hill climbing and, where the neighbourhood
  has tabu memory, tabu search), and where a device adapter is registered, so do `gpu` (the
  iteration level, from the adapter's move cost) and `gpu-resident` (on the GPU, or under Numba's
  CUDA simulator with NUMBA_ENABLE_CUDASIM=1);
- each record written verifies (`lsbench verify`, from scratch);
- each malformed file ({name: content}) is refused with one error naming that file.
"""
from pathlib import Path

import numpy as np

from . import rng
from .errors import InstanceFormatError, LsbenchError


def check_problem(problem, instances, malformed=None, moves=40, iterations=25, seed=1, gpu=None, out_dir=None):
    """`problem`: its kind (the `--problem` name) or its class; `instances`: names or file paths;
    `gpu`: also compare gpu and gpu-resident (default: where the problem has a device adapter and
    numba can run CUDA, on a GPU or the simulator)."""
    from .instances import load
    kind = problem if isinstance(problem, str) else problem.kind
    for spec in instances:
        prob = load(str(spec), kind)
        for name in prob.neighbourhoods:
            check_deltas(prob, prob.neighbourhood(name), moves, seed)
        check_trajectories(kind, str(spec), iterations, seed, gpu, out_dir)
    for name, content in (malformed or {}).items():
        check_malformed(kind, name, content, out_dir)


def check_deltas(prob, nb, moves, seed):
    """Each delta equals the neighbour's objective minus the solution's, recomputed from scratch, on
    a random solution and after `moves` moves made with apply."""
    state_rng = rng.new_state(seed)
    solution = prob.random_solution(state_rng)
    state = nb.state(solution)
    out = np.zeros(nb.out_shape(), dtype=nb.delta_dtype())
    picks = np.random.default_rng(seed)
    for step in range(moves):
        nb.evaluate(solution, state, out)
        base = prob.objective(solution)
        for move in picks.choice(nb.size, size=min(nb.size, 8), replace=False):
            neighbour = solution.copy()
            nb.perform(neighbour, int(move))
            expected = prob.objective(neighbour) - base
            got = out.reshape(nb.size, -1)[int(move), 0] if out.ndim > 1 else out[int(move)]
            if not np.isclose(got, expected, rtol=1e-9, atol=1e-9):
                raise AssertionError(f"{prob.kind} {nb.name}: move {int(move)} at step {step}: delta {got}, but the "
                                     f"neighbour's objective from scratch differs by {expected}")
        nb.apply(solution, state, int(picks.integers(nb.size)))


def check_trajectories(kind, spec, iterations, seed, gpu, out_dir):
    """cpu, cpu-parallel (and gpu-resident) give the same trajectory and best; each record verifies."""
    from .gpu.adapters import has_adapter
    from .record import Record
    from .registry import backends_of
    from .runner import run_one
    for algorithm in ("hc", "tabu"):
        backends = [b for b in ("cpu", "cpu-parallel") if b in backends_of(algorithm, kind)]
        if gpu if gpu is not None else (has_adapter(kind) and _cuda_runs()):
            backends += [b for b in ("gpu", "gpu-resident") if b in backends_of(algorithm, kind)]
        reference = None
        for backend in backends:
            try:
                rec = run_one(kind, spec, algorithm=algorithm, backend=backend, seed=seed, iterations=iterations,
                              threads=2 if backend == "cpu-parallel" else None)
            except LsbenchError as e:
                if algorithm == "tabu" and "tabu search is not defined" in str(e):
                    break
                raise AssertionError(f"{kind} {spec}: {algorithm} on {backend}: {e}") from None
            got = ([(it, obj) for it, _seconds, obj in rec["trajectory"]], rec["best_objective"], rec["best_solution"])
            if reference is None:
                reference = (backend, got)
            elif got != reference[1]:
                raise AssertionError(f"{kind} {spec}: {algorithm} on {backend} leaves {reference[0]}'s trajectory "
                                     f"(seed {seed}, {iterations} iterations)")
            path = Path(out_dir or _tmp()) / f"{kind}-{algorithm}-{backend}.json"
            Record(rec).write(path)
            Record.read(path).verify()


def check_malformed(kind, name, content, out_dir):
    """The file is refused with one error that names it (InstanceFormatError, or another LsbenchError)."""
    from .instances import load
    path = Path(out_dir or _tmp()) / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    try:
        load(str(path), kind)
    except (InstanceFormatError, LsbenchError) as e:
        if name not in str(e) or "\n" in str(e).strip():
            raise AssertionError(f"{kind}: malformed file {name}: the error does not name it in one line: {e}")
        return
    except Exception as e:  # a traceback where a user would need one line
        raise AssertionError(f"{kind}: malformed file {name}: {type(e).__name__} instead of one error line: {e}")
    raise AssertionError(f"{kind}: malformed file {name} was read without an error")


def _cuda_runs():
    try:
        from numba import cuda
        return cuda.is_available()
    except Exception:  # no toolkit, no driver: no device runs
        return False


def _tmp():
    import tempfile
    return tempfile.mkdtemp(prefix="lsbench-check-")
