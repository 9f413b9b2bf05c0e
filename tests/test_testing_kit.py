"""lsbench.testing.check_problem, the kit a plug-in author calls: it passes on lsbench's own problems
and on the walk-through's toy problem (cpu, cpu-parallel and gpu-resident under the simulator), and
fails, naming the check, on a wrong delta, a wrong device move and a malformed file read silently."""
import numpy as np
import pytest
from numba import cuda

import toy_problem
from lsbench.testing import check_problem


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy problem registered as a plug-in would be, and one instance file of it."""
    from lsbench.gpu.adapters import ADAPTERS
    from lsbench.problems import PROBLEMS
    monkeypatch.setitem(PROBLEMS.paths, "toy", "toy_problem:WeightedPositions")
    monkeypatch.setitem(ADAPTERS, ("toy", "swap"), "toy_problem:ToySwapAdapter")
    path = tmp_path / "w9.txt"
    path.write_text("9\n5 1 7 3 9 2 8 4 6\n")
    return path


def test_the_kit_passes_on_the_toy_problem_on_every_backend(toy, tmp_path):
    check_problem("toy", [toy], malformed={"short.txt": "3\n1 2\n", "binary.txt": b"\xff\xfe\x00"},
                  gpu=True, out_dir=tmp_path)


@pytest.mark.parametrize("kind, instance", [("qap", "rnd-qap-8-1"), ("pfsp", "rnd-pfsp-7x3-1"), ("tsp", "rnd-atsp-9-4"),
                                            ("ppp", "9-8"), ("weierstrass", "weierstrass-2")])
def test_the_kit_passes_on_lsbenchs_own_problems(kind, instance, tmp_path):
    check_problem(kind, [instance], gpu=False, out_dir=tmp_path, iterations=10, moves=10)


def test_the_kit_fails_on_a_wrong_delta(toy, tmp_path, monkeypatch):
    right = toy_problem.PositionSwap.evaluate

    def off_by_one(self, solution, state, out, parallel=False):
        right(self, solution, state, out, parallel)
        out[self.size - 1] += 1
    monkeypatch.setattr(toy_problem.PositionSwap, "evaluate", off_by_one)
    with pytest.raises(AssertionError, match=r"toy swap: move 35 at step \d+: delta .*from scratch differs by"):
        check_problem("toy", [toy], gpu=False, out_dir=tmp_path, moves=40)


@cuda.jit(device=True)
def swap_nothing(data, SOL, MEM, s, sh, move, tid, T):
    """A device move that forgets to move: the engine finds its state off the objective at once."""
    cuda.syncthreads()


class ForgetfulToyAdapter(toy_problem.ToySwapAdapter):
    """The toy's adapter with a device move that does not move (a type of its own: the engine
    compiles a kernel once per adapter type)."""

    def device_functions(self):
        load, scan, record, _apply, draw = super().device_functions()
        return load, scan, record, swap_nothing, draw


def test_the_kit_fails_on_a_wrong_device_move(toy, tmp_path, monkeypatch):
    from lsbench.gpu.adapters import ADAPTERS
    monkeypatch.setitem(ADAPTERS, ("toy", "swap"), f"{__name__}:ForgetfulToyAdapter")
    with pytest.raises(AssertionError, match=r"toy .*w9\.txt: hc on gpu-resident: .*state disagrees with its "
                                             r"tracked objective"):
        check_problem("toy", [toy], gpu=True, out_dir=tmp_path)


def test_the_kit_fails_on_a_malformed_file_read_without_an_error(toy, tmp_path, monkeypatch):
    with pytest.raises(AssertionError, match=r"toy: malformed file extra.txt was read without an error"):
        check_problem("toy", [], malformed={"extra.txt": "2\n1 2\n"}, out_dir=tmp_path)
    monkeypatch.setattr(toy_problem, "read_numbers", lambda path: np.array([]) + int("x"))
    with pytest.raises(AssertionError, match=r"toy: malformed file bad.txt: ValueError instead of one error line"):
        check_problem("toy", [], malformed={"bad.txt": "3\n1 2 3\n"}, out_dir=tmp_path)
