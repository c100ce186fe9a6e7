"""The element-spec grammar from Python: `tracelab_engine.parse_spec` is the
parser of click-elements/core/spec.hh, so it accepts and rejects the cases
of spec_cases.tsv exactly as the core's own test (and the ns-3 adapters)
do; `config.format_spec` writes back what it reads, and
`resolve_pcap_path` rewrites only the path of a pcap source."""

from __future__ import annotations

from pathlib import Path

import pytest
import tracelab_engine as engine
from tracelab.replay.config import ConfigError, format_spec, resolve_pcap_path

CASES = Path(__file__).resolve().parents[2] / "click-elements" / "tests" / "spec_cases.tsv"


def _cases(kind: str) -> list[list[str]]:
    rows = [line.split("\t") for line in CASES.read_text().splitlines() if line and not line.startswith("#")]
    assert {r[0] for r in rows} == {"ok", "bad"}
    return [r[1:] for r in rows if r[0] == kind]


@pytest.mark.parametrize("case", _cases("ok"), ids=lambda c: c[0])
def test_accepted_like_the_core(case):
    text, name, *pairs = case
    assert engine.parse_spec(text) == (name, [tuple(p.split("=", 1)) for p in pairs])


@pytest.mark.parametrize("case", _cases("bad"), ids=lambda c: c[0])
def test_rejected_like_the_core(case):
    text, column, message = case
    with pytest.raises(engine.SpecError) as e:
        engine.parse_spec(text)
    assert f"at column {column}: {message}" in str(e.value)


@pytest.mark.parametrize("case", _cases("ok"), ids=lambda c: c[0])
def test_format_spec_reads_back_the_same(case):
    name, params = engine.parse_spec(case[0])
    assert engine.parse_spec(format_spec(name, params)) == (name, params)


def test_format_spec_quotes_only_when_needed():
    params = [("a", "x y"), ("b", "f(1, 2)"), ("c", "1,2"), ("d", "it's"), ("e", "'q'"), ("f", ""), ("g", "(")]
    text = format_spec("n", params)
    assert text == "n(a=x y, b=f(1, 2), c='1,2', d=it's, e=\"'q'\", f='', g='(')"
    assert engine.parse_spec(text) == ("n", params)
    with pytest.raises(ConfigError, match="both quote"):
        format_spec("n", [("a", "'\"")])


def test_resolve_pcap_path_rewrites_the_path_only():
    base = Path("/data/run")
    assert resolve_pcap_path("pcap(path=t.pcap, filter='ip')", base) == "pcap(path=/data/run/t.pcap, filter=ip)"
    assert (
        resolve_pcap_path("pcap(filter='tcp', path='a,b.pcap')", base) == "pcap(filter=tcp, path='/data/run/a,b.pcap')"
    )
    assert resolve_pcap_path('pcap(path="/abs/x.pcap")', base) == "pcap(path=/abs/x.pcap)"
    # Not a pcap with a path, or not parseable yet: left for the engine.
    for spec in ("poisson(load=0.5)", "pcap", "{source}(path=x.pcap)", "pcap(path=x.pcap"):
        assert resolve_pcap_path(spec, base) == spec
