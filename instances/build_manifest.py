"""Rebuild instances/manifest.csv from a local copy of the public instance files.

Usage: python instances/build_manifest.py ../shared/instances
QAPLIB and TSPLIB rows take their sha256 from the files (copies of the public repositories named
in source_url, pinned to a commit); Taillard rows are generated from the time seeds and their
sha256 is that of the generated file text, which equals Taillard's published files. A reference
solution (QAPLIB .sln, TSPLIB .opt.tour) gets its own URL and sha256; `reference_note` says how a
QAPLIB permutation reads (`facility->location`, `inverse`, or `unverified`: it does not reproduce
the value). Liefooghe's flow-shop files with due dates come from the ParadisEO repository.
`bks_source` says where each best-known value comes from; the newer values of
bks-updates.csv replace the files' older ones, with their sources.
"""
import csv
import hashlib
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsbench.instances import MANIFEST, taillard_text  # noqa: E402
from lsbench.problems.base import sha256_of  # noqa: E402
from lsbench.problems.pfsp import PFSP  # noqa: E402

QAPLIB = "https://raw.githubusercontent.com/0816keisuke/qaplib/03ccda9f1d8bcc421e3a7eff936861fc73085594/instance/{0}/{0}.txt"
TSPLIB = "https://raw.githubusercontent.com/pdrozdowski/TSPLib.Net/bf092e820c8d081a8eb3301b7d26b249d2f5e9d7/TSPLIB95/tsp/{0}.tsp"
QAPLIB_SLN = "https://raw.githubusercontent.com/0816keisuke/qaplib/03ccda9f1d8bcc421e3a7eff936861fc73085594/instance/{0}/solution.txt"
LIEFOOGHE = "https://raw.githubusercontent.com/nojhan/paradiseo/3259d1b452e4d6625300bea694e933cf12bfffd4/moeo/tutorial/examples/flowshop/benchs/{0}.txt"
TSPLIB_TOUR = "https://raw.githubusercontent.com/pdrozdowski/TSPLib.Net/bf092e820c8d081a8eb3301b7d26b249d2f5e9d7/TSPLIB95/tsp/{0}.opt.tour"
NOTES = {"p[i]=location of facility i": "facility->location", "inverse": "inverse", "unverified": "unverified"}
SOURCES = {"qap": "QAPLIB's .sln files (0816keisuke/qaplib copy), not checked against newer literature",
           "tsp": "TSPLIB95 bestSolutions.txt (proven optimal)",
           "pfsp": "Taillard upper bounds as listed in a public flow-shop branch-and-bound code "
                   "(optimal for ta001-ta050)",
           "pfsp-due": "Liefooghe's due-date file (ParadisEO): multi-objective, no single best-known value"}


def updates(src):
    """{name: (new value, source)} from bks-updates.csv; 'as taNNN' sources spelled out."""
    rows = list(csv.DictReader(open(src / "bks-updates.csv", encoding="utf-8")))
    by_name = {r["name"]: r for r in rows}
    out = {}
    for r in rows:
        source = r["source"]
        ref = re.match(r"as (ta\d{3})(.*)", source)
        if ref:
            source = by_name[ref.group(1)]["source"] + ref.group(2)
        if source == "unchanged":
            continue
        out[r["name"]] = (r["new_bks"], source)
    return out


def main(src):
    src = Path(src)
    rows = []
    for r in csv.DictReader(open(src / "qaplib" / "bks.csv")):
        f = src / "qaplib" / f"{r['name']}.dat"
        sln = src / "qaplib" / f"{r['name']}.sln"
        ref = [QAPLIB_SLN.format(r["name"]), sha256_of(sln), NOTES[r["sln_convention"]]] if sln.exists() else ["", "", ""]
        rows.append(["qap", r["name"], r["n"], r["bks"], "unknown", QAPLIB.format(r["name"]), sha256_of(f), *ref])
    best = dict(re.findall(r"(\S+)\s*:\s*(\d+)", (src / "tsplib" / "bestSolutions.txt").read_text()))
    for f in sorted((src / "tsplib").glob("*.tsp")):
        name = f.stem
        dim = int(re.search(r"DIMENSION\s*:\s*(\d+)", f.read_text()).group(1))
        if name not in best:
            continue
        tour = src / "tsplib" / f"{name}.opt.tour"
        ref = [TSPLIB_TOUR.format(name), sha256_of(tour), "optimal tour"] if tour.exists() else ["", "", ""]
        rows.append(["tsp", name, str(dim), best[name], "yes", TSPLIB.format(name), sha256_of(f), *ref])
    bks = {r["name"]: r["best_known_makespan"] for r in csv.DictReader(open(src / "taillard_pfsp" / "bks.csv"))}
    for r in csv.DictReader(open(src / "taillard_pfsp" / "seeds.csv")):
        n, m, seed = int(r["n"]), int(r["m"]), int(r["time_seed"])
        text = taillard_text(PFSP.taillard(r["name"], n, m, seed))
        digest = hashlib.sha256(text.encode()).hexdigest()
        assert digest == sha256_of(src / "taillard_pfsp" / f"{r['name']}.txt"), r["name"]
        optimal = "yes" if int(r["name"][2:]) <= 50 else "unknown"
        rows.append(["pfsp", r["name"], f"{n}x{m}", bks.get(r["name"], "unknown"), optimal,
                     f"generator:taillard1993 time_seed={seed}", digest, "", "", ""])
    for f in sorted((src / "liefooghe_pfsp").glob("*.txt")):
        p = PFSP.from_file(str(f))
        rows.append(["pfsp", f.stem, f"{p.n}x{p.m}", "unknown", "unknown", LIEFOOGHE.format(f.stem), sha256_of(f),
                     "", "", "", SOURCES["pfsp-due"]])
    newer = updates(src)
    for row in rows:
        if len(row) == 11:  # its source already given
            continue
        value, source = newer.get(row[1], (row[3], SOURCES[row[0]]))
        if value != row[3] and row[9]:  # the reference solution is the older, worse one
            row[9] = f"{row[9]} (reproduces the older value {row[3]})"
        row[3] = value
        row.append(source)
    with open(MANIFEST, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["problem", "name", "size", "bks", "optimal", "source_url", "sha256", "reference_url",
                    "reference_sha256", "reference_note", "bks_source"])
        w.writerows(rows)
    print(f"{len(rows)} instances -> {MANIFEST}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/instances")
