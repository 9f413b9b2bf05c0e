"""Run parameters, declared once by the class that reads them.

Each problem, neighbourhood, search algorithm, evaluator and engine lists its `--param` keys as
`parameters = (Param(...), ...)`: name, type, default, allowed range or choices, help. The CLI's
help, `lsbench describe`, the workflow's validation and the error line for a bad value all come
from these declarations (lsbench/spec.py resolves a run's parameters against them).
"""
import math
import re
from dataclasses import dataclass
from fractions import Fraction

from .errors import LsbenchError

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1  # integer parameters are compiled code's int64

TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Param:
    """One `--param KEY=VALUE`. `kind`: int, float, str, bool or "ints" (comma-separated integers).
    `default` None means the owner computes it (from the instance size, say); `help` says how.
    `low`/`high` bound numbers (inclusive unless `open_low`/`open_high`); `choices` lists values;
    `pattern` is a regular expression a text value must match."""

    name: str
    kind: object
    help: str
    default: object = None
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    choices: tuple = ()
    pattern: str = ""  # text values must match this regular expression in full
    pattern_help: str = ""  # ... described so

    def convert(self, value, owner):
        """The typed, checked value; a bad one raises one line naming the key and the owner."""
        shown = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else value
        where = f"--param {self.name}={shown}"
        try:
            typed = self._typed(value)
        except (TypeError, ValueError):
            raise LsbenchError(f"{where}: {self.expects()} ({owner})") from None
        for v in typed if self.kind == "ints" else (typed,):
            if isinstance(v, float) and not math.isfinite(v):
                raise LsbenchError(f"{where}: must be a finite number ({owner})")
            if self.pattern and not re.fullmatch(self.pattern, v):
                raise LsbenchError(f"{where}: must be {self.pattern_help or 'like ' + self.pattern} ({owner})")
            if self.choices and v not in self.choices:
                raise LsbenchError(f"{where}: must be one of {', '.join(map(str, self.choices))} ({owner})")
            if self.low is not None and (v < self.low or (self.open_low and v == self.low)):
                raise LsbenchError(f"{where}: must be {'>' if self.open_low else '>='} {_num(self.low)} ({owner})")
            if self.high is not None and (v > self.high or (self.open_high and v == self.high)):
                raise LsbenchError(f"{where}: must be {'<' if self.open_high else '<='} {_num(self.high)} ({owner})")
            if isinstance(v, int) and not isinstance(v, bool) and not INT64_MIN <= v <= INT64_MAX:
                raise LsbenchError(f"{where}: past the 64-bit integers the search computes in ({owner})")
        return typed

    def _typed(self, value):
        if self.kind == "ints":
            parts = value.split(",") if isinstance(value, str) else list(value)
            return tuple(_integer(p) for p in parts)
        if self.kind is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, int) and value in (0, 1):
                return bool(value)
            if isinstance(value, str) and value.lower() in TRUE + FALSE:
                return value.lower() in TRUE
            raise ValueError(value)
        if self.kind is int:
            return _integer(value)
        if self.kind is float:
            if isinstance(value, bool):
                raise TypeError(value)
            return float(value)
        if not isinstance(value, str):
            value = str(value)
        return value

    def expects(self):
        return {int: "expected an integer", float: "expected a number", bool: "expected true or false",
                "ints": "expected comma-separated integers"}.get(self.kind, "expected text")

    def describe(self):
        """One help line: name, type, range, default, help."""
        kind = {int: "int", float: "float", bool: "bool", str: "text", "ints": "ints"}[self.kind]
        bounds = []
        if self.choices:
            bounds.append("|".join(map(str, self.choices)))
        if self.low is not None:
            bounds.append(f"{'>' if self.open_low else '>='} {_num(self.low)}")
        if self.high is not None:
            bounds.append(f"{'<' if self.open_high else '<='} {_num(self.high)}")
        default = "" if self.default is None else f"; default {self.default}"
        return f"{self.name} ({kind}{', ' + ', '.join(bounds) if bounds else ''}{default}): {self.help}"


@dataclass(frozen=True)
class Rule:
    """A combination of values its owner refuses: `refuses(values, run)` is true for it, where
    `values` holds every parameter of the run (defaults filled in) and `run` its names (problem,
    neighbourhood, algorithm, backend) and stop. `message` is the error line, formatted with the
    values. Owners list theirs as `rules = (Rule(...), ...)`; build_spec checks them all before
    anything is loaded, so a workflow with such a combination fails when it is planned."""

    refuses: object
    message: str


def check_rules(owners, values, run):
    """Raise the first declared rule that refuses this run: `owners` [(owner label, rules)]."""
    for owner, rules in owners:
        for rule in rules:
            if rule.refuses(values, run):
                raise LsbenchError(f"{rule.message.format(**values)} ({owner})")


def _integer(value):
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(value)
        return int(value)
    return int(value)


def _num(x):
    return int(x) if float(x).is_integer() else x


SIZE_PATTERN = r"\d+|(\d+\.?\d*|\.\d+)n(\^2)?"
SIZE_HELP = "an integer, or a multiple of the instance size n or of n^2 (20, 0.1n, 8n^2)"


def size_param(name, help, default):
    """A count that may be given relative to the instance size: `--param tenure_min=0.1n` means
    the same search on every instance of a group, where a fixed 10 would not."""
    return Param(name, str, f"{help}; default {default} ({SIZE_HELP})", pattern=SIZE_PATTERN, pattern_help=SIZE_HELP)


def in_size_units(value, n):
    """The integer a size_param value stands for on an instance of size n, rounded down (exact
    decimals: 0.9n on n = 12 is 10, as 9 * 12 // 10)."""
    text = str(value)
    if re.fullmatch(r"\d+", text):
        return int(text)
    scale = Fraction(text.split("n")[0])
    return math.floor(scale * (n * n if text.endswith("^2") else n))


def split_pairs(pairs):
    """`--param KEY=VALUE` strings -> {key: raw string}; a key given twice is refused (which one
    was meant is not for lsbench to guess)."""
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise LsbenchError(f"--param {pair!r}: expected KEY=VALUE")
        key = key.strip()
        if key in out:
            raise LsbenchError(f"--param {key}: given twice ({out[key]} and {value.strip()}); give it once")
        out[key] = value.strip()
    return out


def resolve(declared_by, given):
    """Split `given` {key: value} among the owners that declare the keys, typed and checked.

    `declared_by`: [(role, owner label, parameters)] in priority order. Returns {role: {key:
    value}}; a key no owner declares raises one line listing the keys that apply."""
    out = {role: {} for role, _, _ in declared_by}
    for key, value in given.items():
        for role, owner, params in declared_by:
            match = next((p for p in params if p.name == key), None)
            if match is not None:
                out[role][key] = match.convert(value, owner)
                break
        else:
            known = sorted({p.name for _, _, params in declared_by for p in params})
            owners = " / ".join(owner for _, owner, _ in declared_by)
            raise LsbenchError(f"--param {key}: not a parameter of {owners} "
                               f"(known: {', '.join(known) if known else 'none'})")
    return out


def with_defaults(parameters, given):
    """`given` {key: value} over the declared defaults: the one place an owner reads them."""
    return {**{p.name: p.default for p in parameters if p.default is not None}, **given}
