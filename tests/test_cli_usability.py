"""The front door's conveniences: "did you mean" for commands, options and
element names in every command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import run_tracelab

ROOT = Path(__file__).resolve().parents[1]
PCAP = ROOT / "datasets/real/pcapplusplus-example.pcap"


# --- did you mean ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, hint",
    [
        (["model", "derive", "x", "--seeed", "3", "-o", "y"], "did you mean `--seed`?"),
        (["model", "dervie", "x"], "did you mean `derive`?"),
        (["fidelity", "x.pcap", "--lcoal", "10.0.0.0/8", "-o", "y"], "did you mean `--local`?"),
        (["synth", "m.json", "--sed", "1", "-o", "y"], "did you mean `--seed`?"),
        (["roles", "trian"], "did you mean `train`?"),
        (["profle"], "did you mean `profile`?"),
    ],
)
def test_mistyped_commands_and_options_get_a_suggestion(args, hint):
    r = run_tracelab(*args)
    assert r.returncode == 2 and hint in r.stderr, r.stderr


def test_unrelated_option_gets_no_suggestion():
    r = run_tracelab("model", "derive", "x", "--zzzzzz", "-o", "y")
    assert r.returncode == 2 and "unrecognized arguments" in r.stderr and "did you mean" not in r.stderr


@pytest.mark.parametrize(
    "spec, hint",
    [
        ("efdd(capacity=300)", "unknown element 'efdd'"),
        ("efd(capasity=300)", "unknown parameter 'capasity'"),
    ],
)
def test_mistyped_element_names_and_parameters_get_a_suggestion(tmp_path, spec, hint):
    pytest.importorskip("tracelab_engine")
    r = run_tracelab("replay", "run", "--pcap", str(PCAP), "--element", spec, "-o", str(tmp_path / "r"))
    want = "did you mean `efd`?" if "efdd" in spec else "did you mean `capacity`?"
    assert r.returncode == 2 and hint in r.stderr and r.stderr.strip().endswith(want), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_the_engines_error_is_what_the_suggestion_reads():
    """The hint parses the engine's message; this pins the message's form."""
    engine = pytest.importorskip("tracelab_engine")
    with pytest.raises(engine.SpecError, match=r"unknown element 'efdd' in 'efdd\(\)' \(known: fifo, efd, "):
        engine.check_element("efdd()")


def test_help_imports_no_reader():
    probe = "import sys; from tracelab.cli import main; main(['--help']); print(sorted(sys.modules))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    loaded = r.stdout.strip().splitlines()[-1]
    for module in ("rich", "parsezeeklogs", "tracelab_models"):
        assert f"'{module}'" not in loaded, module
