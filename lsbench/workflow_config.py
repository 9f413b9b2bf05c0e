"""A workflow config's schema (JSON Schema, checked with `jsonschema`, as Snakemake's `validate`
does) and the checks a schema cannot state: names unique in their list. Every refusal is one line
naming the key, before any run is planned."""
import math

from .errors import LsbenchError

NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"  # a path component: experiment, group and backend names
SAMPLE = r"^[0-9]*\.?[0-9]+s$"
TARGET = r"^bks(\+[0-9]*\.?[0-9]+%)?$"
POSITIVE = {"type": "integer", "minimum": 1}
MOST_RUNS = 100_000  # seeds or replicas a group may count: each is a planned run (a Snakemake job) or more
COUNT = {"type": "integer", "minimum": 1, "maximum": MOST_RUNS}
SEEDS = {"oneOf": [COUNT, {"type": "array", "minItems": 1, "uniqueItems": True,
                              "items": {"type": "integer", "minimum": 0}}]}
SCALAR = {"type": ["string", "number", "boolean", "null"]}
PARAMS = {"type": "object", "additionalProperties": {"oneOf": [SCALAR, {"type": "array", "items": SCALAR}]}}
BACKEND = {"oneOf": [
    {"type": "string", "pattern": NAME},
    {"type": "object", "required": ["name", "backend"], "additionalProperties": False,
     "properties": {"name": {"type": "string", "pattern": NAME}, "backend": {"type": "string"}, "params": PARAMS,
                    "ranks": POSITIVE, "searches": POSITIVE, "seeds": POSITIVE, "multistart": {"type": "object"},
                    "sample": {"oneOf": [POSITIVE, {"type": "string", "pattern": SAMPLE}]}}}]}
# what a group's run settings may be, at either scale (`quick` overrides them for --config scale=quick)
SETTINGS = {
    "instances": {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"type": "string", "minLength": 1}},
    "backends": {"type": "array", "minItems": 1, "items": BACKEND},
    "seeds": SEEDS,
    "iterations": POSITIVE,
    "evaluations": POSITIVE,
    "seconds": {"type": "number", "exclusiveMinimum": 0},
    "target": {"oneOf": [{"type": "number"}, {"type": "string", "pattern": TARGET}]},  # --target's
    "params": PARAMS,
    "replicas": COUNT,
}
GROUP = {"type": "object", "required": ["name", "problem", "instances", "algorithm", "backends"],
         "additionalProperties": False,
         "properties": {**SETTINGS, "name": {"type": "string", "pattern": NAME}, "problem": {"type": "string"},
                        "algorithm": {"type": "string"}, "neighbourhood": {"type": "string"},
                        "published": {"type": "object", "required": ["file"],
                                      "properties": {"file": {"type": "string", "minLength": 1}}},
                        "quick": {"type": "object", "additionalProperties": False, "properties": SETTINGS}}}
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object", "required": ["experiment", "groups"], "additionalProperties": False,
    "properties": {
        "experiment": {"type": "string", "pattern": NAME},
        "title": {"type": "string"},
        "scale": {"enum": ["paper", "quick"]},
        "groups": {"type": "array", "minItems": 1, "items": GROUP},
        "grid_params": PARAMS,  # where grid runs find Dask (the SLURM profile)
        "shared_cores": {"type": "boolean"},
        "mpi_launcher": {"type": "string", "minLength": 1},
        # set by the report tools (workflows/scripts/report_from_records.py), not by a user
        "plan": {}, "planned": {}, "remake": {},
    },
}


FORMS = {NAME: "a name of letters, digits, '_', '.' and '-' (it names files)",
         SAMPLE: "a number of iterations or of seconds ('5s')", TARGET: "a number, bks or bks+P%"}


def where(path, config):
    """A key's place: group tiny: backends[0].name (a group by its name where it has one)."""
    path = list(path)
    text = ""
    if len(path) >= 2 and path[0] == "groups":
        name = config["groups"][path[1]].get("name") if isinstance(config["groups"][path[1]], dict) else None
        text = f"group {name}: " if isinstance(name, str) else f"groups[{path[1]}]: "
        path = path[2:]
    rest = ""
    for part in path:
        rest += f"[{part}]" if isinstance(part, int) else (f".{part}" if rest else str(part))
    return (text + rest).rstrip(": ") or "the config"


def short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def closest(error):
    """For a value of none of a key's forms, the complaint of the form of its own type."""
    while error.context:
        fitting = [e for e in error.context if not (e.validator == "type" and not e.relative_path)]
        error = sorted(fitting or error.context, key=lambda e: -len(e.relative_path))[0]
    return error


def message(error, config):
    """One line for a schema error, naming the key."""
    error = closest(error)
    place = where(error.absolute_path, config)
    place = "" if place == "the config" else place + ": "
    if error.validator == "additionalProperties":
        unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"{place}unknown key(s) {', '.join(map(repr, unknown))}"
    if error.validator == "required":
        return f"{place}{error.message.replace(' is a required property', '')} is missing"
    if error.validator == "pattern":
        return f"{place}{short(error.instance)} is not {FORMS.get(error.validator_value, error.validator_value)}"
    if error.validator == "minItems":
        return f"{place}empty, give at least one"
    if error.validator == "uniqueItems":
        return f"{place}an entry is repeated"
    if error.validator == "type":
        return f"{place}{short(error.instance)} is not of type {error.validator_value!r}"
    return f"{place}{error.message}"


YAML_BOOLEANS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def command_line_booleans(config):
    """The config with a boolean key's text read as YAML reads it: Snakemake's `--config` (and a
    profile's `config:` list) turns only 'True' and 'False' into booleans, so `shared_cores=true`
    arrives as the text 'true' (and 'false' would be a true value)."""
    flags = [key for key, rule in SCHEMA["properties"].items() if rule.get("type") == "boolean"]
    return {**config, **{key: YAML_BOOLEANS[config[key].lower()] for key in flags
                         if isinstance(config.get(key), str) and config[key].lower() in YAML_BOOLEANS}}


def check_config(config):
    """Refuses, in one line, a config the schema does not describe or whose names repeat."""
    import jsonschema
    if not isinstance(config, dict):
        raise LsbenchError(f"workflow config: a mapping of keys, got {type(config).__name__}")
    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(config),
                    key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path],
                                   e.validator != "additionalProperties"))  # (a typo before what it leaves missing)
    if errors:
        raise LsbenchError(f"workflow config: {message(errors[0], config)}")
    for path, values in names(config):
        seen = set()
        for value in values:
            if value in seen:
                raise LsbenchError(f"workflow config: {path}: {value!r} is named twice")
            seen.add(value)
    for g, group in enumerate(config["groups"]):
        for key in ("seconds", "target"):
            if isinstance(group.get(key), float) and not math.isfinite(group[key]):
                raise LsbenchError(f"workflow config: {where(['groups', g, key], config)}: {group[key]!r} is not a "
                                   "finite number")


def names(config):
    """(place, the names listed there) of every list whose entries must differ by name."""
    yield "groups", [g["name"] for g in config["groups"]]
    for group in config["groups"]:
        for scale, settings in (("", group), ("quick.", group.get("quick") or {})):
            if "backends" in settings:
                yield (f"group {group['name']}: {scale}backends",
                       [b if isinstance(b, str) else b["name"] for b in settings["backends"]])


def check_files(config, root):
    """Files a config names (a group's published table), found under the workflow's folder `root`."""
    for g, group in enumerate(config.get("groups", [])):
        file = (group.get("published") or {}).get("file")
        if file is not None and not (root / file).is_file():
            raise LsbenchError(f"workflow config: {where(['groups', g, 'published', 'file'], config)}: {file} is not a "
                               f"file under {root}")
