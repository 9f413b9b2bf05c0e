"""Incremental move costs equal full re-evaluation, for every problem and neighbourhood;
serial and all-cores builds give identical move costs."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsbench import rng
from lsbench.problems.pfsp import PFSP
from lsbench.problems.ppp import PPP
from lsbench.problems.qap import QAP
from lsbench.problems.tsp import TSP
from lsbench.problems.weierstrass import Weierstrass


def random_qap(seed, n, symmetric):
    """Diagonals included; `symmetric`: which matrices are symmetric ("a", "b", "both", "none"; True
    is "both"), so that every form of the move costs runs: the general one, and the symmetric form
    built from a symmetric a (b + b^T) or from a symmetric b (a + a^T)."""
    g = np.random.default_rng(seed)
    a = g.integers(0, 50, (n, n))
    b = g.integers(0, 50, (n, n))
    which = {True: "both", False: "none"}.get(symmetric, symmetric)
    if which in ("a", "both"):
        a = a + a.T
    if which in ("b", "both"):
        b = b + b.T
    return QAP(a, b)


QAP_SYMMETRY = st.sampled_from(["none", "a", "b", "both"])


def random_tsp(seed, n, symmetric):
    g = np.random.default_rng(seed)
    d = g.integers(1, 1000, (n, n))
    if symmetric:
        d = d + d.T
    np.fill_diagonal(d, 0)
    return TSP(d)


def full_deltas(problem, nb, solution):
    cur = problem.objective(solution)
    out = []
    for k in range(nb.size):
        s = solution.copy()
        nb.perform(s, k)
        out.append(problem.objective(s) - cur)
    return np.array(out)


def incremental(nb, solution, parallel):
    out = np.empty(nb.size, dtype=nb.delta_dtype())
    nb.evaluate(solution, nb.state(solution, parallel), out, parallel)
    return out


def check_integer(problem, nb_name, seed):
    nb = problem.neighbourhood(nb_name)
    sol = problem.random_solution(rng.new_state(seed))
    inc = incremental(nb, sol, False)
    assert np.array_equal(inc, full_deltas(problem, nb, sol))
    assert np.array_equal(inc, incremental(nb, sol, True))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(4, 14), QAP_SYMMETRY)
def test_qap_swap(seed, n, symmetric):
    check_integer(random_qap(seed, n, symmetric), "swap", seed)


@pytest.mark.long
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(4, 12), QAP_SYMMETRY)
def test_qap_delta_table_updates_match_recomputation(seed, n, symmetric):
    """Taillard's O(1) update after a sequence of swaps equals the table recomputed from scratch."""
    p = random_qap(seed, n, symmetric)
    nb = p.neighbourhood("swap")
    sol = p.random_solution(rng.new_state(seed))
    state = nb.state(sol)
    st_rng = rng.new_state(seed + 1)
    for _ in range(8):
        nb.apply(sol, state, rng.below(st_rng, nb.size), parallel=bool(seed % 2))
        assert np.array_equal(state[0], nb.state(sol)[0])


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10**6), st.integers(3, 12), st.integers(1, 5),
       st.sampled_from(["makespan", "flowtime", "three"]), st.sampled_from(["insertion", "swap"]))
@pytest.mark.long
def test_pfsp(seed, n, m, objective, nb_name):
    p = PFSP.random("r", n, m, seed, objective=objective, weights=(3, 1, 7) if objective == "three" else (1, 1, 1))
    check_integer(p, nb_name, seed)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(5, 14), st.booleans(), st.sampled_from(["swap", "2opt"]))
def test_tsp(seed, n, symmetric, nb_name):
    check_integer(random_tsp(seed, n, symmetric), nb_name, seed)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10**6), st.integers(3, 15), st.integers(3, 13),
       st.sampled_from(["hamming1", "hamming2", "hamming3"]))
@pytest.mark.long
def test_ppp(seed, m, n, nb_name):
    p = PPP.pointcheval(m, n, seed)
    check_integer(p, nb_name, seed)
    nb = p.neighbourhood(nb_name)
    sol = p.random_solution(rng.new_state(seed))
    state = nb.state(sol)
    nb.apply(sol, state, seed % nb.size)  # Y and its histogram follow the flips
    fresh = nb.state(sol)
    assert np.array_equal(state[0], fresh[0]) and np.array_equal(state[1], fresh[1])


def test_ppp_secret_has_fitness_zero_and_others_do_not():
    p = PPP.pointcheval(101, 117, 3)
    assert p.objective(p.secret) == 0
    assert p.objective(1 - p.secret) > 0


@pytest.mark.parametrize("precision,rtol", [(64, 1e-12), (32, 1e-5)])
def test_weierstrass_crowns(precision, rtol):
    p = Weierstrass(4, neighbours=64, precision=precision)
    nb = p.neighbourhood()
    sol = p.random_solution(rng.new_state(7))
    inc = incremental(nb, sol, False)
    np.testing.assert_allclose(inc, full_deltas(p, nb, sol), rtol=rtol, atol=rtol)
    assert np.array_equal(inc, incremental(nb, sol, True))
    # neighbour t lies in crown t: distance within [t R/K, (t+1) R/K] (before clipping)
    from lsbench.problems.weierstrass import neighbour, solution_key
    x = np.zeros(4, dtype=p.dtype)
    y = np.empty_like(x)
    for t in (0, 17, 63):
        neighbour(x, solution_key(x, p.seed), t, 64, 0.25, y)
        r = np.linalg.norm(y.astype(np.float64))
        assert t * 0.25 / 64 - 1e-6 <= r <= (t + 1) * 0.25 / 64 + 1e-6


SLICE_CASES = [
    (lambda: random_qap(5, 13, False), "swap"),
    (lambda: PFSP.random("r", 11, 4, 5), "insertion"),
    (lambda: PFSP.random("r", 11, 4, 5, objective="three", weights=(3, 1, 7)), "swap"),
    (lambda: random_tsp(5, 12, False), "swap"),
    (lambda: random_tsp(5, 12, True), "2opt"),
    (lambda: PPP.pointcheval(9, 13, 5), "hamming1"),
    (lambda: PPP.pointcheval(9, 13, 5), "hamming2"),
    (lambda: PPP.pointcheval(9, 13, 5), "hamming3"),
    (lambda: Weierstrass(3, neighbours=50), "crowns"),
]


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
@pytest.mark.parametrize("make,nb_name", SLICE_CASES)
def test_row_slices_from_the_solution_alone_cover_the_neighbourhood_exactly(make, nb_name, parts):
    """What COW and grid workers compute: each slice of rows, from the solution only, gives the
    same deltas as the local evaluator, and the slices tile the moves with balanced counts."""
    from lsbench.neighborhoods import split_rows
    p = make()
    nb = p.neighbourhood(nb_name)
    sol = p.random_solution(rng.new_state(11))
    starts = nb.row_starts()
    assert starts[0] == 0 and starts[-1] == nb.size and all(np.diff(starts) >= 0)
    bounds = split_rows(starts, parts)
    assert bounds[0] == 0 and bounds[-1] == len(starts) - 1 and all(np.diff(bounds) >= 0)
    counts = [starts[bounds[q + 1]] - starts[bounds[q]] for q in range(parts)]
    widest_row = max(np.diff(starts))
    assert max(counts) - min(counts) <= 2 * widest_row
    whole = incremental(nb, sol, False)
    assembled = np.full(nb.size, -12345, dtype=nb.delta_dtype())
    for q in range(parts):
        part = np.full(nb.size, -12345, dtype=nb.delta_dtype())
        nb.evaluate_rows(sol, bounds[q], bounds[q + 1], part, parallel=bool(q % 2))
        lo, hi = starts[bounds[q]], starts[bounds[q + 1]]
        assembled[lo:hi] = part[lo:hi]
    assert np.array_equal(assembled, whole)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 8), st.booleans())
def test_qap_swap_delta_bound_holds_for_every_swap(seed, n, symmetric):
    """The bound that picks 32-bit move costs on the GPU must cover every swap of every
    permutation (here: signed flows, diagonals, asymmetric or symmetric)."""
    g = np.random.default_rng(seed)
    a = g.integers(-50, 60, (n, n))
    if symmetric:
        a = a + a.T
    p = QAP(a, g.integers(-9, 90, (n, n)))
    bound = p.swap_delta_bound()
    worst = 0
    for _ in range(3):
        sol = g.permutation(n)
        cost = p.objective(sol)
        for r in range(n):
            for s in range(r + 1, n):
                sol[r], sol[s] = sol[s], sol[r]
                worst = max(worst, abs(p.objective(sol) - cost))
                sol[r], sol[s] = sol[s], sol[r]
    assert worst <= bound
    assert bound <= 4 * n * int(np.abs(p.a).max()) * int(np.abs(p.b).max()) * 2  # and not absurdly loose


@pytest.mark.parametrize("symmetric, general", [("none", True), ("a", False), ("b", False), ("both", False)])
def test_qap_takes_the_symmetric_form_where_one_matrix_is_symmetric(symmetric, general):
    """The CPU's delta table runs on one symmetric matrix where the instance has one (one product a
    term), and its moves cost what the general form's do, diagonals included."""
    p = random_qap(11, 9, symmetric)
    assert p.general is general
    if not general:
        assert np.array_equal(p.form_b, p.form_b.T)
    check_integer(p, "swap", 11)
