"""The front door's conveniences: "did you mean" for commands, options and
element names in every command, shell completion, and progress bars that
appear on a terminal only."""

from __future__ import annotations

import gzip
import shutil
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


# --- shell completion ------------------------------------------------------------------


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory):
    r = run_tracelab("completion", "bash")
    assert r.returncode == 0, r.stderr
    path = tmp_path_factory.mktemp("completion") / "tracelab.bash"
    path.write_text(r.stdout)
    return path


def complete(script: Path, *words: str) -> list[str]:
    """What bash's completion offers for the command line `words` (the last one
    is the word being completed), through the generated script."""
    quoted = " ".join(f"'{w}'" for w in words)
    probe = (
        f"source '{script}'; complete -p tracelab; COMP_WORDS=({quoted}); "
        'COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _tracelab; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    r = subprocess.run(["bash", "--norc", "-c", probe], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    registered, *offered = r.stdout.splitlines()
    assert registered == "complete -o default -F _tracelab tracelab"
    return [w for w in offered if w]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize(
    "words, expect",
    [
        (("tracelab", "pro"), ["profile"]),
        (("tracelab", "model", "d"), ["derive"]),
        (("tracelab", "model", "derive", "x.log", "--se"), ["--seed"]),
        (("tracelab", "fidelity", "--lo"), ["--local"]),
        (("tracelab", "profile", "--no"), ["--no-progress"]),
        (("tracelab", "profile", "--wo"), ["--workers"]),
        (("tracelab", "--de"), ["--debug"]),
        (("tracelab", "completion", "fi"), ["fish"]),
    ],
)
def test_bash_completes_commands_and_options(bash_script, words, expect):
    assert complete(bash_script, *words) == expect


def test_bash_completes_every_listed_command(bash_script):
    offered = complete(bash_script, "tracelab", "")
    listed = run_tracelab("--help").stdout
    assert offered and all(f"  {name}  " in listed for name in offered)
    assert {"model", "fidelity", "completion"} <= set(offered)


def test_zsh_and_fish_scripts(tmp_path):
    zsh = run_tracelab("completion", "zsh").stdout
    assert zsh.startswith("#compdef tracelab\n") and "bashcompinit" in zsh and "--max-fit-samples" in zsh
    fish = run_tracelab("completion", "fish").stdout
    assert "complete -c tracelab -n __fish_use_subcommand -a 'profile roles model" in fish
    assert "complete -c tracelab -n '__fish_seen_subcommand_from model; and __fish_seen_subcommand_from derive'" in fish
    (tmp_path / "tracelab.zsh").write_text(zsh)
    (tmp_path / "tracelab.fish").write_text(fish)
    if shutil.which("zsh"):  # registered with zsh's completion system, through bashcompinit
        probe = "autoload -U compinit; compinit -u -D; source tracelab.zsh; print -r -- ${_comps[tracelab]}"
        r = subprocess.run(["zsh", "-f", "-c", probe], capture_output=True, text=True, cwd=tmp_path)
        assert r.stdout.strip() == "_bash_complete -o default -F _tracelab", r.stderr
    if shutil.which("fish"):  # fish completes from the script
        cases = {
            "tracelab mod": "model",
            "tracelab model der": "derive",
            "tracelab model derive x --se": "--seed",
            "tracelab fidelity --lo": "--local",
        }
        for line, expect in cases.items():
            probe = f"source tracelab.fish; complete -C '{line}'"
            r = subprocess.run(["fish", "--no-config", "-c", probe], capture_output=True, text=True, cwd=tmp_path)
            assert expect in r.stdout.split(), (line, r.stdout, r.stderr)


def test_help_imports_neither_completion_nor_progress_nor_readers():
    probe = "import sys; from tracelab.cli import main; main(['--help']); print(sorted(sys.modules))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    loaded = r.stdout.strip().splitlines()[-1]
    for module in ("tracelab.completion", "rich", "parsezeeklogs", "tracelab_models"):
        assert f"'{module}'" not in loaded, module


# --- progress bars ---------------------------------------------------------------------

WIKIPEDIA_CONN = ROOT / "datasets/public/zeek-baselines/wikipedia/baseline/opt.basic/conn.log"


def stderr_on_a_terminal(*args: str, cwd: Path) -> tuple[int, str]:
    """Runs `tracelab ARGS` with stderr on a pseudo-terminal; what it drew there."""
    import os
    import pty
    import threading

    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain():
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the other end closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    proc = subprocess.run([sys.executable, "-m", "tracelab.cli", *args], cwd=cwd, stderr=slave,
                          stdout=subprocess.PIPE, env=env)  # fmt: skip
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode(errors="replace")


def test_model_derive_draws_a_bar_on_a_terminal_only(tmp_path):
    args = ("model", "derive", str(WIKIPEDIA_CONN), "--local", "141.142.0.0/16", "-o", str(tmp_path / "m.json"))
    code, drawn = stderr_on_a_terminal(*args, cwd=tmp_path)
    assert code == 0 and "model derive:" in drawn, drawn
    code, drawn = stderr_on_a_terminal(*args, "-q", cwd=tmp_path)
    assert code == 0 and drawn == ""
    r = run_tracelab(*args, cwd=tmp_path)  # stderr captured: not a terminal
    assert r.returncode == 0 and r.stderr == ""


def test_fidelity_draws_a_bar_on_a_terminal_only(tmp_path):
    log = tmp_path / "conn.log.gz"
    log.write_bytes(gzip.compress((ROOT / "tests/baselines/tcpmix/profile/conn.log").read_bytes()))
    args = ("fidelity", str(log), "--local", "10.0.0.0/8", "-o", "fid")
    code, drawn = stderr_on_a_terminal(*args, cwd=tmp_path)
    assert code in (0, 1) and "fidelity:" in drawn and "synth" in drawn, drawn
    r = run_tracelab(*args, cwd=tmp_path)
    assert r.returncode in (0, 1) and r.stderr == ""
    assert r.stdout.splitlines()[0].split()[:3] == ["marginal", "original", "synthetic"]


def test_synth_and_replay_draw_a_bar_on_a_terminal_only(tmp_path):
    pytest.importorskip("tracelab_engine")
    log = tmp_path / "conn.log"
    log.write_bytes((ROOT / "tests/baselines/tcpmix/profile/conn.log").read_bytes())
    assert (
        run_tracelab("model", "derive", str(log), "--local", "10.0.0.0/8", "-o", "m.json", cwd=tmp_path).returncode == 0
    )
    commands = {
        "synth:": ("synth", "m.json", "-o", "s.pcap", "--seed", "1", "--duration", "2s"),
        "replay run:": ("replay", "run", "--pcap", str(PCAP), "--element", "efd()", "-o", "r"),
    }
    for title, args in commands.items():
        code, drawn = stderr_on_a_terminal(*args, cwd=tmp_path)
        assert code == 0 and title in drawn, drawn
        r = run_tracelab(*args, cwd=tmp_path)
        assert r.returncode == 0 and r.stderr == "", r.stderr
