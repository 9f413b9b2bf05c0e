"""Instance registry: names -> problems, the manifest, the data directory, downloads.

Named instances come from three places:
- `instances/manifest.csv`: QAPLIB and TSPLIB files (downloaded into the data directory and
  checked against their sha256) and Taillard's ta001..ta120 (generated here, bit-exactly);
- name patterns for generated families: PPP `M-N` or `M-N-sSEED` (Pointcheval's construction),
  `weierstrass-D`, Janiak et al.'s random `rnd-pfsp-NxM-SEED` and `rnd-atsp-N-SEED`,
  and uniform QAP `rnd-qap-N-SEED`;
- a path to an instance file, read by the problem's parser (`--problem` says which).
The data directory is `--data-dir`, else $LSBENCH_DATA, else the user's data folder
(platformdirs: ~/.local/share/lsbench/instances on Linux).
"""
import csv
import hashlib
import os
import re
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .errors import LsbenchError
from .problems import PROBLEMS
from .problems.base import sha256_of
from .files import check_writable, current_umask
from . import plugins

PROJECT_ROOT = Path(__file__).resolve().parent.parent
_INSTALLED_MANIFEST = Path(__file__).resolve().parent / "data" / "manifest.csv"  # pip install . puts it here
MANIFEST = _INSTALLED_MANIFEST if _INSTALLED_MANIFEST.exists() else PROJECT_ROOT / "instances" / "manifest.csv"
FOLDERS = {"qap": "qaplib", "tsp": "tsplib", "pfsp": "taillard_pfsp"}
DUE_DATE_FOLDER = "liefooghe_pfsp"  # flow-shop files with due dates (Liefooghe's format)
EXTENSIONS = {"qap": ".dat", "tsp": ".tsp", "pfsp": ".txt"}
GENERATED_PATTERNS = {
    "ppp": re.compile(r"(?:ppp-)?(\d+)-(\d+)(?:-s(\d+))?"),
    "weierstrass": re.compile(r"weierstrass-(\d+)"),
    "pfsp": re.compile(r"rnd-pfsp-(\d+)x(\d+)-(\d+)"),
    "tsp": re.compile(r"rnd-atsp-(\d+)-(\d+)"),
    "qap": re.compile(r"rnd-qap-(\d+)-(\d+)"),
}
SEED_MAX = (1 << 64) - 1  # lsbench's generator takes 64-bit seeds: a larger one would alias a smaller
# each family's sizes (named as in its pattern, in order; the seed last), their ranges, and what the
# instance holds in memory (bytes): the generators draw one number at a time, so the ranges also
# keep generation within seconds
GENERATED_SIZES = {
    "ppp": (("m", 1, 10_000), ("n", 1, 10_000)),
    "weierstrass": (("d", 1, 100_000),),
    "pfsp": (("n", 2, 5_000), ("m", 1, 500)),
    "tsp": (("n", 3, 1_000),),
    "qap": (("n", 2, 1_000),),
}
GENERATED_MEMORY = {"ppp": lambda m, n: 8 * m * n, "weierstrass": lambda d: 8 * d, "pfsp": lambda n, m: 8 * n * m,
                    "tsp": lambda n: 4 * n * n, "qap": lambda n: 16 * n * n}
GENERATED_MEMORY_LIMIT = 1 << 27  # 128 MiB


def check_generated(spec, kind):
    """A generated family's name within its declared sizes, seed and memory, before anything is
    allocated; one line naming the limit otherwise."""
    groups = GENERATED_PATTERNS[kind].fullmatch(spec).groups()
    sizes = [int(v) for v in groups[:len(GENERATED_SIZES[kind])]]
    for (name, low, high), value in zip(GENERATED_SIZES[kind], sizes):
        if not low <= value <= high:
            raise LsbenchError(f"--instance {spec}: {name} = {value} is outside the generated {kind} family's "
                               f"range [{low}, {high}]")
    memory = GENERATED_MEMORY[kind](*sizes)
    if memory > GENERATED_MEMORY_LIMIT:
        raise LsbenchError(f"--instance {spec}: the instance would take {memory / 2**20:.0f} MiB, past the generated "
                           f"families' limit of {GENERATED_MEMORY_LIMIT >> 20} MiB")
    seed = groups[len(sizes)] if len(groups) > len(sizes) else None
    if seed is not None and int(seed) > SEED_MAX:
        raise LsbenchError(f"--instance {spec}: the family seed {seed} is past 2^64 - 1 (it would alias a smaller "
                           "seed's instance)")


@dataclass
class Entry:
    problem: str
    name: str
    size: str
    bks: str
    optimal: str
    source_url: str
    sha256: str
    reference_url: str = ""  # a reference solution (QAPLIB .sln, TSPLIB .opt.tour), fetched beside it
    reference_sha256: str = ""
    reference_note: str = ""
    bks_source: str = ""  # where the best-known value comes from (paper or site, year)

    @property
    def generated(self):
        return self.source_url.startswith("generator:")

    def bks_value(self):
        return None if self.bks in ("", "unknown") else int(self.bks)


def data_dir(option=None):
    """--data-dir, else $LSBENCH_DATA, else the user's data folder (the same from any directory)."""
    if option or os.environ.get("LSBENCH_DATA"):
        return Path(option or os.environ["LSBENCH_DATA"])
    import platformdirs
    return Path(platformdirs.user_data_dir("lsbench")) / "instances"


_manifest_cache = None


def own_manifest():
    """lsbench's instance manifest (its `lsbench.instances` entry point)."""
    return MANIFEST


def manifest():
    """{name: Entry} of every installed package's instance manifest (entry points
    `lsbench.instances`, lsbench's own first); a name listed twice keeps the first, with a warning."""
    global _manifest_cache
    if _manifest_cache is None:
        table = {}
        for owner, value in plugins.registered("lsbench.instances").items():
            path = plugins.load(value, "instance manifest")()
            try:
                with open(path, newline="", encoding="utf-8") as f:
                    rows = [Entry(**row) for row in csv.DictReader(f)]
            except (OSError, TypeError, ValueError) as e:
                raise LsbenchError(f"instance manifest {owner} ({path}) cannot be read: {e}") from None
            for entry in rows:
                if entry.name in table:
                    print(f"lsbench: warning: instance manifest {owner} lists {entry.name!r}, which another "
                          "manifest already lists: left out", file=sys.stderr)
                    continue
                table[entry.name] = entry
        _manifest_cache = table
    return _manifest_cache


def entries(problem=None):
    if problem is not None and problem not in PROBLEMS:
        raise LsbenchError(f"--problem: unknown problem {problem!r} (known: {', '.join(PROBLEMS)})")
    return [e for e in manifest().values() if problem is None or e.problem == problem]


def local_path(entry, data=None):
    extension = EXTENSIONS.get(entry.problem) or getattr(PROBLEMS[entry.problem], "instance_extension", ".txt")
    return data_dir(data) / folder_of(entry) / (entry.name + extension)


def folder_of(entry):
    """The data directory's folder of an instance: its problem's (a plug-in problem's
    `instance_folder`, else its name), Liefooghe's for flow-shop files."""
    if entry.problem == "pfsp" and not entry.generated:
        return DUE_DATE_FOLDER
    return FOLDERS.get(entry.problem) or getattr(PROBLEMS[entry.problem], "instance_folder", entry.problem)


def taillard_seed(entry):
    return int(re.search(r"time_seed=(\d+)", entry.source_url).group(1))


def taillard_text(problem):
    """Taillard's file layout: 'n m', then one line of n times per machine."""
    rows = [" ".join(str(v) for v in row) for row in problem.times_machine_major()]
    return f"{problem.n} {problem.m}\n" + "\n".join(rows) + "\n"


def kind_of(spec, problem=None):
    """The problem kind of an instance name, generated-family name or file path (`problem` given
    for a path), before anything is loaded: a run's parameters are checked against it first."""
    if problem is not None and problem not in PROBLEMS:
        raise LsbenchError(f"--problem: unknown problem {problem!r} (known: {', '.join(PROBLEMS)})")
    entry = manifest().get(spec)
    if entry is not None:
        if problem is not None and problem != entry.problem:
            raise LsbenchError(f"--instance {spec} is a {entry.problem} instance, not {problem}")
        return entry.problem
    for kind, pattern in GENERATED_PATTERNS.items():
        if pattern.fullmatch(spec) and problem in (None, kind):
            check_generated(spec, kind)
            return kind
    if os.path.exists(spec):
        if problem is None:
            raise LsbenchError(f"--instance {spec}: a file path needs --problem (one of {', '.join(PROBLEMS)})")
        return problem
    raise LsbenchError(f"--instance: unknown instance {spec!r} (not in instances/manifest.csv, not a "
                       "generated family name, not an existing file)")


def load(spec, problem=None, data=None, params=None):
    """A Problem from a known name, a generated-family name or a file path."""
    params = dict(params or {})
    kind = kind_of(spec, problem)
    cls = PROBLEMS[kind]
    entry = manifest().get(spec)
    if entry is not None:
        if kind == "pfsp" and entry.generated:
            n, m = (int(v) for v in entry.size.split("x"))
            return cls.taillard(entry.name, n, m, taillard_seed(entry), **params)
        path = local_path(entry, data)
        if not path.exists():
            raise LsbenchError(f"instance {spec}: {path} not found in the data directory; "
                               f"run `lsbench instances fetch {spec}` or set --data-dir/LSBENCH_DATA")
        return cls.from_file(str(path), name=entry.name, **params)
    generated = _generated(spec, problem, params)
    if generated is not None:
        return generated
    if not hasattr(cls, "from_file"):
        raise LsbenchError(f"--instance {spec}: {kind} instances are generated, not read from files")
    return cls.from_file(spec, **params)


def _generated(spec, problem, params):
    for kind, pattern in GENERATED_PATTERNS.items():
        mt = pattern.fullmatch(spec)
        if not mt or (problem is not None and problem != kind):
            continue
        cls = PROBLEMS[kind]
        if kind == "ppp":
            return cls.from_name(spec)
        if kind == "weierstrass":
            return cls.from_name(spec, **params)
        if kind == "pfsp":
            return cls.random(spec, int(mt.group(1)), int(mt.group(2)), int(mt.group(3)), **params)
        if kind == "qap":
            return cls.random(spec, int(mt.group(1)), int(mt.group(2)))
        return cls.random_asymmetric(spec, int(mt.group(1)), int(mt.group(2)))
    return None


def bks_of(problem):
    entry = manifest().get(problem.name)
    if entry is None:
        return 0 if problem.kind == "ppp" else None  # a PPP instance is solved at fitness 0
    if problem.kind == "pfsp" and getattr(problem, "objective_name", "makespan") != "makespan":
        return None
    return entry.bks_value()


def fetch(name, data=None, mirror=None):
    """Download one manifest instance, and its reference solution where the manifest has one, into
    the data directory, each checked against its sha256.

    `mirror` (or $LSBENCH_MIRROR) replaces the public source by a local folder laid out like the
    data directory, or a base URL; the checksum is checked the same way. Writes a temp file and
    renames it, so a failed download leaves nothing behind. Returns the instance's path.
    """
    entry = manifest().get(name)
    if entry is None:
        raise LsbenchError(f"instances fetch: unknown instance {name!r}")
    target = local_path(entry, data)
    check_writable(target, "instances fetch: the data directory's")  # before any download
    if entry.generated:
        cls = PROBLEMS[entry.problem]
        n, m = (int(v) for v in entry.size.split("x"))
        text = taillard_text(cls.taillard(entry.name, n, m, taillard_seed(entry))).encode()
        return _store(text, target, entry.sha256, name)
    _download(entry, target, entry.source_url, entry.sha256, mirror)
    if entry.reference_url:
        _download(entry, reference_path(entry, data), entry.reference_url, entry.reference_sha256, mirror)
    return target


def reference_path(entry, data=None):
    """Where a fetched reference solution lies: qaplib/NAME.sln, tsplib/NAME.opt.tour."""
    suffix = ".sln" if entry.problem == "qap" else ".opt.tour"
    return data_dir(data) / folder_of(entry) / (entry.name + suffix)


def _download(entry, target, url, sha256, mirror):
    if target.exists() and sha256_of(target) == sha256:
        return target
    mirror = mirror or os.environ.get("LSBENCH_MIRROR")
    if mirror and "://" not in mirror:
        src = Path(mirror) / folder_of(entry) / target.name
        if not src.exists():
            raise LsbenchError(f"instances fetch {entry.name}: {src} not found in mirror {mirror}")
        payload = src.read_bytes()
    else:
        url = (mirror.rstrip("/") + f"/{folder_of(entry)}/{target.name}") if mirror else url
        try:
            with urllib.request.urlopen(url, timeout=60) as r:
                payload = r.read()
        except OSError as e:
            raise LsbenchError(f"instances fetch {entry.name}: download of {url} failed ({e})")
    return _store(payload, target, sha256, entry.name)


def _store(payload, target, sha256, name):
    digest = hashlib.sha256(payload).hexdigest()
    if digest != sha256:
        raise LsbenchError(f"instances fetch {name}: sha256 mismatch for {target.name} (got {digest}, manifest "
                           f"says {sha256}); nothing written")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".fetch-")
    with os.fdopen(fd, "wb") as f:
        f.write(payload)
    os.chmod(tmp, 0o666 & ~current_umask())
    os.replace(tmp, target)
    return target
