"""Run configurations: from command-line options or a YAML/JSON file to the
dict that `tracelab_engine.run` takes.

A configuration file holds the engine's keys (see `tracelab_engine.config_keys`):

    sources: ["pcap(path=in.pcap, load=0.9)"]
    nodes:   [{element: "efd(capacity=300, th=30000)", rate: 10G, prop_delay: 0s}]
    classes: [{name: sensing, budget: 50us}]
    until:   2s

Relative `path=` values inside pcap sources are resolved against the
directory of the configuration file.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import tracelab_engine as engine


class ConfigError(ValueError):
    """A configuration problem, with the file or option it came from."""


def load_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read ({e.strerror})") from e
    # yaml is imported here, not at the top: most runs have no config file,
    # and replay's start-up should not pay for it (scripts/bench.py, issue 19).
    import yaml

    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {e}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of configuration keys at the top level")
    base = path.resolve().parent
    data["sources"] = [resolve_pcap_path(s, base) for s in data.get("sources", [])]
    return data


def resolve_pcap_path(spec: str, base: Path) -> str:
    """`pcap(path=x.pcap, ...)` with x relative to `base` -> an absolute path.

    The spec is read by the engine's own parser (`tracelab_engine.parse_spec`)
    and written again by `format_spec`. A spec that does not parse (say, a
    `{placeholder}` where the grammar wants a name) is left as it is: the
    engine reports it when the run is built."""
    try:
        name, params = engine.parse_spec(spec)
    except engine.SpecError:
        return spec
    if name != "pcap" or not any(key == "path" for key, _ in params):
        return spec

    def absolute(value: str) -> str:
        p = Path(value)
        return str(p if p.is_absolute() else base / p)

    return format_spec(name, [(key, absolute(value) if key == "path" else value) for key, value in params])


def format_spec(name: str, params: list[tuple[str, str]]) -> str:
    """`name(key=value, ...)` that `parse_spec` reads back as `(name, params)`:
    a value is written bare when the grammar gives it back unchanged, else
    quoted (there are no escapes: a value holding both quotes cannot be
    written)."""
    if not params:
        return name
    return name + "(" + ", ".join(f"{key}={_spec_value(value)}" for key, value in params) + ")"


def _spec_value(value: str) -> str:
    # A bare value runs to the first ',' or ')' outside parentheses, blanks
    # around it removed; one starting with a quote is a quoted value.
    if value and value == value.strip(" \t\n") and value[0] not in "'\"":
        depth = 0
        for c in value:
            if c in ",)" and depth == 0:
                break
            depth += {"(": 1, ")": -1}.get(c, 0)
        else:
            if depth == 0:
                return value
    for quote in "'\"":
        if quote not in value:
            return f"{quote}{value}{quote}"
    raise ConfigError(f"spec value {value!r}: holds both quote characters, which the grammar cannot write")


def pcap_source(path: str, *, speed: float | None, rate: str | None, load: float | None, class_rule: str | None) -> str:
    """The source spec of a recorded pcap with its timing and class options."""
    if "'" in path:
        raise ConfigError(f"pcap path {path!r}: a single quote cannot be passed to the engine")
    parts = [f"path='{path}'"]
    if speed is not None:
        parts.append(f"speed={speed}")
    if rate is not None:
        parts.append(f"rate={rate}")
    if load is not None:
        parts.append(f"load={load}")
    if class_rule:
        if "'" in class_rule:
            raise ConfigError("--class-rule: single quotes are not allowed inside the rule")
        parts.append(f"classes='{class_rule}'")
    return "pcap(" + ", ".join(parts) + ")"


def parse_class(text: str) -> dict[str, Any]:
    """`NAME[:BUDGET][,qtl=T][,mtq=T]`, e.g. `sensing:50us` or `g0:10ms,qtl=10ms`."""
    head, *options = text.split(",")
    name, _, budget = head.partition(":")
    if not name:
        raise ConfigError(f"--class {text!r}: expected NAME[:BUDGET][,qtl=T][,mtq=T]")
    cls: dict[str, Any] = {"name": name}
    if budget:
        cls["budget"] = budget
    for opt in options:
        key, _, value = opt.partition("=")
        if key not in ("qtl", "mtq") or not value:
            raise ConfigError(f"--class {text!r}: unknown option {opt!r} (qtl=T, mtq=T)")
        cls[key] = value
    return cls


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _fill(text: str, point: dict[str, str]) -> str:
    """`text` with every `{name}` placeholder replaced by point[name]."""
    return _PLACEHOLDER.sub(lambda m: point[m.group(1)], text)


def expand_grid(config: dict[str, Any], grid: dict[str, list[str]]) -> list[tuple[dict[str, str], dict[str, Any]]]:
    """Every combination of the grid values, substituted for `{name}` in the
    configuration's strings. Unknown or unused placeholders are errors."""
    names = list(grid)
    text = json.dumps(config)
    used = set(_PLACEHOLDER.findall(text))
    if missing := used - set(names):
        raise ConfigError(f"placeholders without values: {', '.join(sorted(missing))} (give --grid NAME=V1,V2,...)")
    if unused := set(names) - used:
        raise ConfigError(f"--grid names not used in the configuration: {', '.join(sorted(unused))}")
    runs = []
    for values in itertools.product(*(grid[n] for n in names)):
        point = dict(zip(names, values, strict=True))
        runs.append((point, json.loads(_fill(text, point))))
    return runs
