"""The `tracelab` front door: it lists only subcommands that work, each has
--help with an example, and the demo runs the whole path with the numbers
flowing from one stage to the next."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TRACELAB = [sys.executable, "-m", "tracelab.cli"]
COMMANDS = ("profile", "roles", "model", "replay", "synth", "fidelity", "query", "report", "demo")


def run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACELAB, *args], capture_output=True, text=True, cwd=ROOT, **kw)


def listed_commands(env=None) -> list[str]:
    out = run("--help", env=env).stdout
    block = out.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def test_help_lists_the_built_parts():
    names = listed_commands()
    # The analyzer, models and engine are built by scripts/setup.sh before the tests.
    for expected in COMMANDS:
        assert expected in names


def test_help_imports_no_heavy_package():
    """`tracelab --help` stays fast (docs: under 0.3 s) by importing none of
    the parts' heavy dependencies; measured by what it imports, not by time."""
    probe = "import sys; from tracelab.cli import main; main(['--help']); print(sorted(sys.modules))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    loaded = r.stdout.strip().splitlines()[-1]
    for heavy in (
        "numpy",
        "scipy",
        "pyarrow",
        "sklearn",
        "matplotlib",
        "tracelab_engine",
        "tracelab_models",
        "duckdb",
        "dask",
        "distributed",
    ):
        assert f"'{heavy}'" not in loaded, f"tracelab --help imports {heavy}"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_listed_subcommand_has_help_with_an_example(command):
    if command not in listed_commands():
        pytest.skip(f"{command} is not built here")
    r = run(command, "--help")
    assert r.returncode == 0, r.stderr
    assert "example" in r.stdout.lower()


def test_unknown_and_unavailable_commands_say_why():
    r = run("frobnicate")
    assert r.returncode == 2 and "unknown command" in r.stderr and "did you mean" not in r.stderr
    r = run("profle", "x.pcap")
    assert r.returncode == 2 and "unknown command `profle`; did you mean `profile`?" in r.stderr
    env = dict(os.environ, TRACELAB_ANALYZER="/nonexistent/tracelab-analyzer")
    r = run("profile", "x.pcap", env=env)
    assert r.returncode == 2 and "not available" in r.stderr
    assert "profile" not in listed_commands(env) and "roles" in listed_commands(env)


def test_demo_runs_the_whole_path(tmp_path):
    out = tmp_path / "demo"
    r = run("demo", "-o", str(out))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    summary = json.loads((out / "profile" / "summary.json").read_text())
    # The bundled trace: 4,631 packets (MANIFEST, tshark), all decoded.
    assert summary["packets"]["read"] == 4631
    assert summary["packets"]["decoded"] == 4631
    model = json.loads((out / "trace.model.json").read_text())
    assert model["provenance"]["source_trace"].endswith("pcapplusplus-example.pcap")
    replays = sorted((out / "replay").glob("*/metrics.json"))
    assert [p.parent.name for p in replays] == ["chutq", "efd", "qtl"]
    assert (out / "report" / "index.html").stat().st_size > 1000
    assert (out / "trex" / "stl_demo.py").exists()
    for p in replays:
        m = json.loads(p.read_text())
        text = json.dumps(m)
        # Every packet of the trace was offered to the element.
        assert '"offered": 4631' in text, p
