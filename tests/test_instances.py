"""Real instance files: parsing, best-known values, Taillard generation, manifest checksums."""
import re

import numpy as np
import pytest

from lsbench import instances as registry
from lsbench.errors import LsbenchError
from lsbench.problems.pfsp import PFSP
from lsbench.problems.qap import QAP
from lsbench.problems.tsp import TSP
from lsbench.problems.base import sha256_of
from lsbench.problems.pfsp import taillard_times
from lsbench.problems.qap import read_sln

from conftest import DATA, need_instances


def test_taillard_generator_reproduces_all_120_files(data):
    """`instances fetch` generates ta001..ta120; each equals Taillard's published file (the
    manifest's sha256 is that file's) and the times read back are the generator's."""
    rows = [e for e in registry.entries("pfsp") if e.generated]
    assert len(rows) == 120
    for e in rows:
        n, m = (int(v) for v in e.size.split("x"))
        generated, _ = taillard_times(n, m, registry.taillard_seed(e))
        from_file = PFSP.from_file(str(registry.local_path(e, data)))
        assert np.array_equal(generated, from_file.times_machine_major()), e.name
        assert e.sha256 == sha256_of(registry.local_path(e, data))


def test_liefooghes_due_date_files_read_as_taillards_instances_with_their_due_dates(data):
    """The 12 flow-shop files with due dates (ParadisEO's benchs): each holds Taillard's times for
    its time seed and size (020_10_01 is ta011), and the three objectives use the file's due dates."""
    rows = [e for e in registry.entries("pfsp") if not e.generated]
    assert len(rows) == 12 and {e.size for e in rows} >= {"20x10", "20x20", "50x10", "50x20", "100x10", "100x20",
                                                          "200x10"}
    for e in rows:
        p = PFSP.from_file(str(registry.local_path(e, data)), objective="three")
        seed = int(p.generator.rsplit(" ", 1)[1].rstrip(")"))
        assert np.array_equal(taillard_times(p.n, p.m, seed)[0], p.times_machine_major()), e.name
        lines = registry.local_path(e, data).read_text().split("\n")
        assert p.due[0] == int(lines[4]) and p.due[-1] == int(lines[3 + 3 * (p.n - 1) + 1]), e.name
        seq = np.arange(p.n)
        cmax, _flow, tard, late = p._exact_schedule(seq)
        assert p.objective(seq) == cmax + tard + late and late >= 1
    ta011 = registry.load("ta011")
    lief = registry.load("020_10_01", data=data)
    assert np.array_equal(ta011.pt, lief.pt) and not np.array_equal(ta011.due, lief.due)


def test_qaplib_solutions_reproduce_best_known_values(data):
    """The fetched .sln reference solutions reproduce the manifest's best known values."""
    checked = 0
    for e in registry.entries("qap"):
        if not e.reference_url or e.reference_note == "unverified":
            continue
        p = QAP.from_file(str(registry.local_path(e, data)))
        value, perm = read_sln(str(registry.reference_path(e, data)))
        if e.reference_note.startswith("inverse"):
            perm = np.argsort(perm)
        older = "older value" in e.reference_note  # a newer best known value replaced the file's (bks_source)
        assert p.objective(perm) == value and (value > e.bks_value() if older else value == e.bks_value()), e.name
        checked += 1
    assert checked > 100


def test_best_known_values_are_the_newest_with_their_sources():
    """bks-updates.csv's values (../shared/instances) are in the manifest, each with its source."""
    tai = registry.manifest()["tai100a"]
    assert tai.bks_value() == 21044752 and "Misevi" in tai.bks_source and "older value 21052466" in tai.reference_note
    assert registry.manifest()["ta081"].bks_value() == 6134 and "2025" in registry.manifest()["ta081"].bks_source
    assert registry.manifest()["ta101"].bks_value() == 11158 and "P3D-DFS" in registry.manifest()["ta101"].bks_source
    assert all(e.bks_source for e in registry.entries())


@pytest.mark.parametrize("name", ["eil51", "berlin52", "kroA100", "eil101", "pcb442", "gr96", "fri26",
                                  "ulysses16", "pr2392"])
def test_tsplib_optimal_tours(name):
    need_instances(name)
    e = registry.manifest()[name]
    p = TSP.from_file(str(registry.local_path(e, DATA)))
    toks = registry.reference_path(e, DATA).read_text().split("TOUR_SECTION")[1].split()
    tour = []
    for t in toks:
        if t in ("-1", "EOF"):
            break
        tour.append(int(t) - 1)
    assert p.objective(np.array(tour)) == e.bks_value()


def test_manifest_checksums_match_the_files(data):
    for e in registry.entries():
        if e.generated:
            continue
        assert sha256_of(registry.local_path(e, data)) == e.sha256, e.name


def test_load_by_name_and_generated_families():
    need_instances("tai12a")
    assert registry.load("tai12a").n == 12
    assert registry.load("ta001").objective(np.arange(20)) > 0
    assert registry.load("73-73").m == 73
    assert registry.load("weierstrass-10").d == 10
    p = registry.load("rnd-pfsp-10x5-3")
    assert (p.m, p.n) == (5, 10) and 1 <= p.pt.min() and p.pt.max() <= 100
    t = registry.load("rnd-atsp-20-3")
    assert t.n == 20 and not t.symmetric and t.d.max() <= 1000


def test_fetch_from_mirror_checks_sha256(tmp_path):
    need_instances("tai12a", "nug12", "ta005")
    path = registry.fetch("tai12a", data=tmp_path, mirror=str(DATA))
    assert sha256_of(path) == registry.manifest()["tai12a"].sha256
    bad = tmp_path / "badmirror" / "qaplib"
    bad.mkdir(parents=True)
    (bad / "nug12.dat").write_text((DATA / "qaplib" / "nug12.dat").read_text().replace("1", "2", 1))
    with pytest.raises(LsbenchError, match="sha256 mismatch"):
        registry.fetch("nug12", data=tmp_path / "d", mirror=str(tmp_path / "badmirror"))
    assert not (tmp_path / "d" / "qaplib" / "nug12.dat").exists()
    generated = registry.fetch("ta005", data=tmp_path)
    assert sha256_of(generated) == sha256_of(DATA / "taillard_pfsp" / "ta005.txt")


@pytest.mark.parametrize("content,message", [
    ("12\n1 2 3", "expected 2 matrices"),
    ("3\n" + "1 " * 17 + "x", "non-numeric"),
    ("", "empty file"),
])
def test_malformed_qap_files(tmp_path, content, message):
    f = tmp_path / "bad.dat"
    f.write_text(content)
    with pytest.raises(LsbenchError, match=message):
        QAP.from_file(str(f))


def test_malformed_tsp_and_pfsp_files(tmp_path):
    f = tmp_path / "bad.tsp"
    f.write_text("NAME: x\nDIMENSION: 6\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 1\nEOF\n")
    with pytest.raises(LsbenchError, match="NODE_COORD_SECTION"):
        TSP.from_file(str(f))
    g = tmp_path / "bad.txt"
    g.write_text("5 2\n1 2 3 4 5\n1 2 3")
    with pytest.raises(LsbenchError, match=re.escape("expected 2x5 = 10")):
        PFSP.from_file(str(g))
    g.write_text("2\n2\n7\n0\n10\n1 2\n2\n9\n3 4\n")  # Liefooghe's layout, job indices 0, 2
    with pytest.raises(LsbenchError, match=re.escape("bad.txt: Liefooghe's format: the jobs' indices must be 0 .. n-1")):
        PFSP.from_file(str(g))
    g.write_text("2\n2\n7\n0\n10\n1 2\n1\n9\n3 4\n")
    p = PFSP.from_file(str(g), objective="three")
    assert p.due.tolist() == [10, 9] and p.pt.tolist() == [[1, 2], [3, 4]]
