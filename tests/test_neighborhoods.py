"""Move index mappings are bijections between move numbers and move parameters."""
from hypothesis import given, settings
from hypothesis import strategies as st

from lsbench import neighborhoods as nbh


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 400), st.data())
def test_pair_mapping_roundtrip(n, data):
    k = data.draw(st.integers(0, nbh.pair_count(n) - 1))
    i, j = nbh.index_to_pair(k, n)
    assert 0 <= i < j < n
    assert nbh.pair_to_index(i, j, n) == k


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60_000), st.data())
def test_pair_mapping_large_n_float_rounding(n, data):
    # the square-root formula must stay exact near row boundaries for big neighbourhoods
    i = data.draw(st.integers(0, n - 2))
    for j in (i + 1, n - 1):
        assert nbh.index_to_pair(nbh.pair_to_index(i, j, n), n) == (i, j)


def test_pair_mapping_is_a_bijection_exhaustive():
    for n in range(2, 40):
        seen = [nbh.index_to_pair(k, n) for k in range(nbh.pair_count(n))]
        assert len(set(seen)) == len(seen) == n * (n - 1) // 2
        assert all(0 <= i < j < n for i, j in seen)


def test_insertion_mapping_is_a_bijection():
    for n in range(2, 30):
        seen = [nbh.index_to_insertion(k, n) for k in range(nbh.insertion_count(n))]
        assert len(set(seen)) == len(seen) == n * (n - 1)
        assert all(i != k and 0 <= i < n and 0 <= k < n for i, k in seen)
        assert all(nbh.insertion_to_index(i, k, n) == idx for idx, (i, k) in enumerate(seen))


def test_triple_mapping_is_a_bijection():
    for n in range(3, 25):
        seen = [nbh.index_to_triple(k, n) for k in range(nbh.triple_count(n))]
        assert len(set(seen)) == len(seen) == n * (n - 1) * (n - 2) // 6
        assert all(0 <= i < j < k < n for i, j, k in seen)
        assert all(nbh.triple_to_index(i, j, k, n) == idx for idx, (i, j, k) in enumerate(seen))


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 2000), st.data())
def test_triple_mapping_roundtrip(n, data):
    idx = data.draw(st.integers(0, nbh.triple_count(n) - 1))
    i, j, k = nbh.index_to_triple(idx, n)
    assert 0 <= i < j < k < n
    assert nbh.triple_to_index(i, j, k, n) == idx


def test_pfsp_moves_scheduled_from_scratch_split_into_rows_that_each_write_their_own_moves(monkeypatch):
    """Flow time, three objectives and swaps schedule every move from scratch (n m cells): a
    position's moves split into blocks of rows (rnd-pfsp-5000x500-1: one position took 9 s, past
    Ctrl-C). Any split gives the deltas and vectors of one block, and row r writes exactly the moves
    row_starts gives it."""
    import numpy as np

    from lsbench.instances import load
    from lsbench.problems import pfsp
    from lsbench.problems.base import ObjectiveVectors
    for objective, name in [("flowtime", "insertion"), ("three", "insertion"), ("three", "swap"),
                            ("makespan", "swap"), ("makespan", "insertion")]:
        whole = None
        for cells in (pfsp.ROW_CELLS, 150, 1):  # 1, 5 and 13 blocks (13 jobs x 4 machines)
            monkeypatch.setattr(pfsp, "ROW_CELLS", cells)
            p = load("rnd-pfsp-13x4-2", "pfsp", params={"objective": objective})
            nb = p.neighbourhood(name)
            nb = ObjectiveVectors(nb) if objective == "three" else nb
            sol = p.random_solution(np.array([7], dtype=np.uint64))
            out = np.zeros(nb.out_shape(), dtype=nb.delta_dtype())
            nb.evaluate(sol, nb.state(sol), out)
            whole = out if whole is None else whole
            assert np.array_equal(out, whole), (objective, name, cells)
            starts = nb.row_starts()
            assert len(starts) == nb.rows + 1 and starts[0] == 0 and starts[-1] == nb.size
            for r in range(nb.rows):
                alone = np.full(nb.out_shape(), -99, dtype=nb.delta_dtype())
                nb.evaluate_rows(sol, r, r + 1, alone)
                written = np.flatnonzero((alone != -99).reshape(nb.size, -1).any(axis=1))
                assert list(written) == list(range(starts[r], starts[r + 1])), (objective, name, cells, r)
        blocks = (nb.inner if objective == "three" else nb).blocks
        assert blocks == (1 if (objective, name) == ("makespan", "insertion") else 13)
