"""Bounded property fuzzing of the two text parsers a user feeds directly.

- The element/source spec grammar (click-elements/core/spec.hh, bound as
  `tracelab_engine.parse_spec`, `check_element`, `parse_rate`, `parse_time`):
  any text either parses or raises `SpecError`; never another exception,
  never a crash of the process. What parses is written back by
  `format_spec` and reads back the same (an independent round trip).
- The workload-model loader (`tracelab_models.workload.load` and
  `validate`, model JSON + JSON Schema): any file either loads or raises
  `ProfileError` (unreadable, not JSON) or `ValueError` (breaks the schema).

Hypothesis runs derandomized (a fixed seed derived from each test) with a
bounded number of examples and no example database, so every run feeds the
same inputs and takes the same time. The Rust decoder and readers are fuzzed
by cargo-fuzz (analyzer/fuzz, the `fuzz` suite of scripts/run-tests.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is installed by scripts/setup.sh --test")
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

engine = pytest.importorskip("tracelab_engine", reason="the engine module is built by scripts/setup.sh")
from tracelab.replay.config import format_spec  # noqa: E402
from tracelab_models import workload  # noqa: E402
from tracelab_models.profile import ProfileError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = 200

FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Text shaped like the grammar (names, `(`, `=`, `,`, quotes, units, nested
# calls) reaches far deeper into the parser than uniform unicode does.
GRAMMAR_ATOMS = [
    "fifo",
    "efd",
    "sift",
    "pcap",
    "poisson",
    "capacity",
    "th",
    "p",
    "size",
    "rate",
    "path",
    "(",
    ")",
    "=",
    ",",
    " ",
    "'",
    '"',
    "10G",
    "2.5G",
    "50us",
    "1.3s",
    "30KB",
    "64KiB",
    "0",
    "-1",
    "1e308",
    "nan",
    "inf",
    "18446744073709551616",
    "bpareto(1.1, 40, 1500)",
    "k",
    "M",
    "\t",
    "\x00",
    "é",
]
grammar_text = st.lists(st.sampled_from(GRAMMAR_ATOMS) | st.text(max_size=4), max_size=24).map("".join)
spec_text = grammar_text | st.text(max_size=64)

ELEMENTS = [name for name, _ in engine.known_elements()]
# Every parameter any element documents (`key=` in its one-line help).
KEYS = sorted({m[1] for _, usage in engine.known_elements() for m in re.finditer(r"(\w+)=", usage)})
VALUES = [
    "0",
    "1",
    "-1",
    "2",
    "0.5",
    "1e9",
    "nan",
    "inf",
    "300",
    "1500",
    "99999999999999999999",
    "10G",
    "50us",
    "30KB",
    "packets",
    "bytes",
    "fifo",
    "las",
    "never",
    "50us/100us",
    "",
    "x",
]


def _spec_of(name: str, pairs: list[tuple[str, str]]) -> str:
    return name + ("(" + ", ".join(f"{k}={v}" for k, v in pairs) + ")" if pairs else "")


element_spec = st.builds(
    _spec_of,
    st.sampled_from(ELEMENTS),
    st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES) | st.text(max_size=6)), max_size=4),
)


@FUZZ
@given(spec_text)
@example("fifo(capacity=30")
@example("efd(th='unterminated")
@example("(" * 10_000)
@example("a(" + "b=(" * 5_000)
def test_parse_spec_parses_or_raises_spec_error(text):
    try:
        name, params = engine.parse_spec(text)
    except engine.SpecError as e:
        assert str(e), "a SpecError says what is wrong"
        return
    assert isinstance(name, str) and name
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in params)
    if not any("'" in v and '"' in v for _, v in params):
        assert engine.parse_spec(format_spec(name, params)) == (name, params)


@FUZZ
@given(element_spec | spec_text)
@example("sift(p=2)")
@example("fifo(capacity=0)")
@example("efd(th=-1)")
def test_check_element_accepts_or_raises_spec_error(text):
    try:
        engine.check_element(text)
    except engine.SpecError as e:
        assert str(e)


@FUZZ
@given(grammar_text)
@example("18446744073709551616G")
@example("1e400s")
@example("-5us")
def test_rate_and_time_parse_or_raise_spec_error(text):
    for parse in (engine.parse_rate, engine.parse_time):
        try:
            value = parse(text)
        except engine.SpecError:
            continue
        assert isinstance(value, int) and value >= 0


def _numbers(obj):
    """The example model's baseline renders numbers as strings; give them back."""
    if isinstance(obj, dict):
        return {k: _numbers(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_numbers(v) for v in obj]
    if isinstance(obj, str):
        try:
            return float(obj) if any(c in obj for c in ".eE") else int(obj)
        except ValueError:
            return obj
    return obj


VALID_MODEL = _numbers(json.loads((ROOT / "tests" / "baselines" / "example" / "model.json").read_text()))


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            yield from _paths(v, (*prefix, i))


MODEL_PATHS = [p for p in _paths(VALID_MODEL) if p]
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _mutated(path, value, delete):
    model = json.loads(json.dumps(VALID_MODEL))
    parent = model
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return model


def test_the_unmutated_model_is_valid():
    workload.validate(VALID_MODEL)


@FUZZ
@given(st.sampled_from(MODEL_PATHS), json_value, st.booleans())
def test_model_validate_accepts_or_raises_value_error(path, value, delete):
    model = _mutated(path, value, delete)
    try:
        workload.validate(model, "fuzzed.model.json")
    except ValueError as e:
        assert str(e).startswith("fuzzed.model.json: invalid workload model at ")


model_bytes = (
    st.binary(max_size=256)
    | grammar_text.map(str.encode)
    | st.builds(lambda v: json.dumps(v).encode(), json_value)
    | st.builds(
        lambda p, v, d: json.dumps(_mutated(p, v, d)).encode()[:4096],
        st.sampled_from(MODEL_PATHS),
        json_value,
        st.booleans(),
    )
)


@FUZZ
@given(model_bytes)
@example(b"[" * 100_000)
@example(b'{"schema": "\xff"}')
@example(b"")
def test_model_load_loads_or_raises_documented_errors(tmp_path, data):
    path = tmp_path / "fuzzed.model.json"
    path.write_bytes(data)
    try:
        model = workload.load(path)
    except (ProfileError, ValueError) as e:
        assert str(path) in str(e), "the error names the file"
        return
    assert isinstance(model, dict)
