"""One package, one version: `pip install .` at the root builds a wheel with
the `tracelab` command, the replay engine's module and the Rust analyzer, and
a fresh virtualenv with only that wheel (and its PyPI dependencies, at the
versions of requirements.lock) profiles and replays a bundled trace. The
toolkit has one version, analyzer/Cargo.toml's, which every part prints.

The wheel test costs a wheel build: the engine's objects are kept in
build/wheel/ and the analyzer's in analyzer/target (both shared with
`make build`), so after `make build` cargo has nothing to do (0.6 s) and the
time goes to pip: the build environment, the engine's first compile into
build/wheel/, installing the dependencies into the fresh venv (about 1 min,
from pip's cache after the first run). Measured 6 min 45 s on 2 busy cores
when the analyzer had changed since its last build (a fat-LTO relink)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "datasets" / "real" / "zeek-wikipedia.pcap"


def cargo_version() -> str:
    return tomllib.loads((ROOT / "analyzer" / "Cargo.toml").read_text())["workspace"]["package"]["version"]


def pyproject(path: Path) -> dict:
    return tomllib.loads(path.read_text())


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def test_the_wheel_reads_the_version_cargo_toml_holds():
    """The root pyproject's version regex finds the analyzer workspace's
    version, and nothing else claims a version of its own."""
    root = pyproject(ROOT / "pyproject.toml")
    assert root["project"]["dynamic"] == ["version"] and "version" not in root["project"]
    regex = root["tool"]["scikit-build"]["metadata"]["version"]["regex"]
    assert re.search(regex, (ROOT / "analyzer" / "Cargo.toml").read_text())["value"] == cargo_version()
    replay = pyproject(ROOT / "replay" / "pyproject.toml")
    assert "version" not in replay["project"] and replay["project"]["dynamic"] == ["version"]
    analyzer = (ROOT / "analyzer" / "crates" / "tracelab-analyzer" / "Cargo.toml").read_text()
    assert re.search(r"^version\.workspace = true$", analyzer, re.M)


def test_tracelab_and_the_analyzer_print_the_same_version():
    from tracelab import __version__
    from tracelab.parts import analyzer_binary

    assert __version__ == cargo_version()
    out = subprocess.run([sys.executable, "-m", "tracelab.cli", "--version"], capture_output=True, text=True)
    assert out.stdout.strip() == f"tracelab {cargo_version()}"
    binary = analyzer_binary()
    if binary is None:
        pytest.skip("the analyzer is not built (make build)")
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"tracelab-analyzer {cargo_version()}"


def test_the_wheel_depends_on_every_dependency_of_the_parts():
    root = requirement_names(pyproject(ROOT / "pyproject.toml")["project"]["dependencies"])
    parts: set[str] = set()
    for part in ("replay", "models"):
        parts |= requirement_names(pyproject(ROOT / part / "pyproject.toml")["project"]["dependencies"])
    missing = parts - {"tracelab-models"} - root
    assert not missing, f"pyproject.toml lacks {sorted(missing)}"


def run_ok(cmd: list[str], **kw) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def test_pip_install_dot_gives_a_working_tracelab(tmp_path):
    wheels = tmp_path / "wheels"
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    run_ok([str(bin_dir / "pip"), "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)])
    (wheel,) = wheels.glob("tracelab-*.whl")
    assert wheel.name.startswith(f"tracelab-{cargo_version()}-")
    run_ok([str(bin_dir / "pip"), "install", "-q", "-c", str(ROOT / "requirements.lock"), str(wheel)])

    # As a user runs it: the venv not activated (not on PATH), outside the
    # checkout, no hint where the analyzer is.
    env = {k: v for k, v in os.environ.items() if k not in ("TRACELAB_ANALYZER", "PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"
    work = tmp_path / "work"
    work.mkdir()

    def tracelab(*args: str) -> str:
        return run_ok([str(bin_dir / "tracelab"), *args], cwd=work, env=env)

    version = cargo_version()
    assert tracelab("--version").strip() == f"tracelab {version}"
    assert run_ok([str(bin_dir / "tracelab-analyzer"), "--version"], env=env).strip() == f"tracelab-analyzer {version}"
    # The package imported is the wheel's, not the checkout's.
    where = run_ok([str(bin_dir / "python"), "-c", "import tracelab; print(tracelab.__file__)"], cwd=work, env=env)
    assert Path(where.strip()).is_relative_to(env_dir)

    tracelab("profile", str(TRACE), "-o", "profile", "--no-progress")
    summary = json.loads((work / "profile" / "summary.json").read_text())
    # Oracle: tshark reads 136 frames in this trace, 126 of them TCP or UDP
    # (`tshark -r zeek-wikipedia.pcap -Y "tcp or udp" | wc -l`).
    assert (summary["packets"]["read"], summary["packets"]["decoded"]) == (136, 126)
    assert summary["tool"] == {"name": "tracelab-analyzer", "version": version}
    for name in summary["outputs"]:
        assert (work / "profile" / name).is_file(), name

    tracelab("replay", "run", "--pcap", str(TRACE), "--element", "efd(capacity=300,th=30000)", "-o", "replay")
    # The engine module (C++) replayed every decoded packet through the element.
    (replayed,) = json.loads((work / "replay" / "metrics.json").read_text())["classes"]
    assert (replayed["offered"], replayed["delivered"]) == (126, 126)


# ------------------------------------------------------------ the Docker image


def locked(path: Path) -> dict[str, str]:
    """name -> version of a requirements file's `name==version` lines."""
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==([^\s\\]+)", path.read_text(), re.M)
    return {name.lower().replace("_", "-"): version for name, version in pins}


def runtime_closure() -> set[str]:
    """The wheel's dependencies and theirs, as installed in this venv (which
    requirements.lock pins), markers evaluated for this Python."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    todo = list(requirement_names(pyproject(ROOT / "pyproject.toml")["project"]["dependencies"]))
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for spec in requires(name) or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name.lower().replace("_", "-"))
    return seen


def test_the_image_installs_the_locked_runtime_packages_by_hash():
    image = locked(ROOT / "docker" / "runtime.lock")
    development = locked(ROOT / "requirements.lock")
    assert set(image) == runtime_closure()
    assert {name: development[name] for name in image} == image
    for path in (ROOT / "docker" / "runtime.lock", ROOT / "docker" / "build.lock"):
        entries = re.findall(r"^[A-Za-z0-9_.-]+==\S+ \\\n    --hash=sha256:[0-9a-f]{64}$", path.read_text(), re.M)
        assert len(entries) == len(locked(path)), f"{path.name}: an entry without its sha256"
    build = locked(ROOT / "docker" / "build.lock")
    for requirement in pyproject(ROOT / "pyproject.toml")["build-system"]["requires"]:
        assert requirement_names([requirement]) <= set(build), requirement


def test_the_dockerfile_pins_its_bases_and_runs_unprivileged():
    dockerfile = (ROOT / "Dockerfile").read_text()
    bases = re.findall(r"^FROM (\S+)", dockerfile, re.M)
    assert len(bases) == 2 and all(re.fullmatch(r"[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}", b) for b in bases), bases
    runtime = dockerfile.rsplit("\nFROM ", 1)[1]
    assert re.search(r"^USER 10001:10001$", runtime, re.M)
    assert "--require-hashes" in dockerfile and "--no-build-isolation" in dockerfile
    # The dependency layers come before the source.
    assert dockerfile.index("docker/runtime.lock") < dockerfile.index("COPY . .")
