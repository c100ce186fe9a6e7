"""Errors end as one line and an exit status of their kind (tracelab.errors),
never a traceback unless --debug asks for one."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from support import run_tracelab as tracelab
from tracelab.errors import INPUT, INTERNAL, OUTPUT, USAGE, CommandError, classify, output_paths

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "datasets" / "real" / "zeek-bro.org.pcap"


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("p")
    r = tracelab("profile", str(TRACE), "--local", "192.150.0.0/16", "-o", "p", "--quiet", "--no-progress", cwd=out)
    assert r.returncode == 0, r.stderr
    return out / "p"


def unwritable(tmp_path: Path) -> Path:
    """An output path whose parent is a regular file: no one can create it."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    return blocker / "out"


@pytest.mark.parametrize(
    "command",
    [
        lambda p, out: ["model", "derive", str(p), "-o", str(out)],
        lambda p, out: ["replay", "run", "--pcap", str(TRACE), "-o", str(out), "-q"],
        lambda p, out: ["demo", "--trace", str(TRACE), "-o", str(out)],
    ],
    ids=["model-derive", "replay-run", "demo"],
)
def test_an_unwritable_output_is_one_line_and_status_4(command, profile, tmp_path):
    out = unwritable(tmp_path)
    r = tracelab(*command(profile, out), cwd=tmp_path)
    assert "Traceback" not in r.stderr
    assert r.returncode == OUTPUT, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("tracelab: error: cannot write ") and str(out) in last


def test_debug_adds_the_traceback(profile, tmp_path):
    out = unwritable(tmp_path)
    r = tracelab("--debug", "model", "derive", str(profile), "-o", str(out), cwd=tmp_path)
    assert r.returncode == OUTPUT and "Traceback (most recent call last)" in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("tracelab: error:")


def test_classify_by_kind(tmp_path):
    missing = OSError(errno.ENOENT, "No such file or directory", str(tmp_path / "in.pcap"))
    assert classify(missing, [tmp_path / "out"])[0] == INPUT
    inside = OSError(errno.ENOENT, "No such file or directory", str(tmp_path / "out" / "a" / "m.json"))
    assert classify(inside, [tmp_path / "out"]) == (
        OUTPUT,
        f"cannot write output: No such file or directory ({tmp_path / 'out' / 'a' / 'm.json'})",
    )
    assert classify(OSError(errno.ENOSPC, "No space left on device", "/x"))[0] == OUTPUT

    class ProfileError(Exception):  # a part's error class, known by name
        pass

    class ConfigError(ValueError):
        pass

    assert classify(ProfileError("p/connections.parquet: not found")) == (INPUT, "p/connections.parquet: not found")
    assert classify(ConfigError("sweep.yaml: line 3\n  a: [\n    ^"))[1] == "sweep.yaml: line 3 a: [ ^"
    assert classify(ConfigError("x"))[0] == USAGE
    status, message = classify(KeyError("boom"))
    assert status == INTERNAL and message.startswith("internal error: KeyError: 'boom'") and "--debug" in message
    assert classify(CommandError(USAGE, "bad")) == (USAGE, "bad")


def test_the_c45_predictor_errors_by_kind(monkeypatch):
    """The one C4.5 predictor is the analyzer: not built is a usage error (as
    a part that is not built), a refused tree an input error."""
    from tracelab_models import c45

    monkeypatch.setattr(c45, "analyzer_binary", lambda: None)
    doc = {"classes": ["client", "server"], "tree": {}}
    with pytest.raises(c45.PredictorMissing) as missing:
        c45.predict_c45(doc, [[1.0, 2.0]])
    assert classify(missing.value) == (USAGE, str(missing.value)) and "make build" in str(missing.value)
    assert classify(c45.PredictorError("tree.json: no root"))[0] == INPUT


def test_output_paths_of_a_command_line():
    argv = ["run", "--pcap", "a.pcap", "-o", "out", "--out-pcap=x.pcap", "--truth", "t.parquet"]
    assert output_paths(argv) == [Path("out"), Path("x.pcap"), Path("t.parquet")]
